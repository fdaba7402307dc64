//! Code generation for `#[tiling_kernel]`: the original function, a unit type per function
//! implementing the SDK's `TilingFunction` (typed views built from the tile descriptors) — the SDK's
//! generic `tiling_trampoline` is the `extern "C"` glue, panics caught inside —, a row kernel's row
//! entry (a `RowFunction`, for fused execution), the validator (a `ValidateFunction`), the
//! registration function (which declares what the kernel offers fusion) and its inventory record. No `extern "C"` and no
//! `unsafe` in the output.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ItemFn, Path};

use crate::internals::ast::{Arg, Flavor, ParamKind, is_row_form, params};
use crate::internals::expand::{
    add_parameters, bindings, describe_kernel, enumeration, kernel_name, labels, signature, unique_name_check,
};
use crate::tiling::attr::{Attrs, Border, Flexible};

/// A unit type implementing the SDK's `TilingFunction` for `target`; its `tiling_trampoline` is the
/// `extern "C"` function the host calls (the glue is written once, in the SDK).
/// `target` is the function or, for `flexible = path`, the path coerced to the annotated
/// function's pointer type (see [`as_signature_of`]).
fn trampoline(ty: &syn::Ident, target: &TokenStream, bind: &[TokenStream], call: &[TokenStream]) -> TokenStream {
    quote! {
        struct #ty;
        impl __vx::module_api::TilingFunction for #ty {
            fn call(args: &mut __vx::TileArgs<'_>) -> ::core::result::Result<(), __vx::TileError> {
                #(#bind)*
                let __target = #target;
                __vx::macro_support::IntoTileResult::into_tile_result(__target(#(#call),*))
            }
        }
    }
}

/// `flexible = path`: the path as a pointer with the annotated function's arguments, spanned at the
/// path — a function with another signature is one "mismatched types" error there, naming both
/// signatures, instead of an argument-count error inside the expansion. (The optimizer calls a
/// function pointer assigned from a known function directly.)
fn as_signature_of(f: &ItemFn, path: &Path) -> TokenStream {
    let tys = f.sig.inputs.iter().filter_map(|a| match a {
        syn::FnArg::Typed(pt) => Some(&pt.ty),
        syn::FnArg::Receiver(_) => None,
    });
    let span = syn::spanned::Spanned::span(path);
    // The return type may differ (each is converted with `IntoTileResult`): inferred.
    quote::quote_spanned! {span=> { let __flexible: fn(#(#tys),*) -> _ = #path; __flexible } }
}

/// A row kernel's SDK fill rule (`BorderFill::Reflect101` unless `border` names another), the same
/// for its flexible function and its row entry.
fn row_fill(attrs: &Attrs) -> TokenStream {
    match &attrs.border {
        Some((Border::Fill(fill, _), _)) => fill.clone(),
        _ => quote!(__vx::BorderFill::Reflect101),
    }
}

/// A row kernel's flexible function (it serves every tile): the SDK's `Tile::for_rows` hands the
/// input's neighborhood rows, border-extended by the rule, to the row function, with the matching
/// span of every output row.
fn row_trampoline(target: &Path, attrs: &Attrs, args: &[Arg]) -> TokenStream {
    let (bind, _) = bindings(Flavor::Rows, args);
    let fill = row_fill(attrs);
    let [_, _, t, b] = attrs.nbhd.unwrap_or([0; 4]);
    let height = (b - t + 1) as usize;
    let (mut rows_of, mut n, mut outs, mut call) = (None, None, Vec::new(), Vec::new());
    for (i, p) in params(args).into_iter().enumerate() {
        let v = format_ident!("__p{}", i);
        match (&p.kind, &p.rows) {
            (ParamKind::Input(_), Some(count)) => {
                rows_of = Some(v);
                n = Some(count.clone());
                call.push(quote!(__rows));
            }
            (ParamKind::Output(_), _) => {
                let o = format_ident!("__o{}", i);
                outs.push(quote! {
                    let #o = match __vx::macro_support::row_span(&mut #v, __y, __x, __n) {
                        ::core::result::Result::Ok(o) => o,
                        ::core::result::Result::Err(e) => { __res = ::core::result::Result::Err(e); return; }
                    };
                });
                call.push(quote!(#o));
            }
            _ => call.push(quote!(#v)),
        }
    }
    let (Some(rows_of), Some(n)) = (rows_of, n) else { return quote!() };
    quote! {
        const _: () = ::core::assert!((#n) == #height, "Rows<T, N>: N must be the neighborhood's height");
        struct __VxFlexible;
        impl __vx::module_api::TilingFunction for __VxFlexible {
            fn call(args: &mut __vx::TileArgs<'_>) -> ::core::result::Result<(), __vx::TileError> {
                #(#bind)*
                let mut __res: ::core::result::Result<(), __vx::TileError> = ::core::result::Result::Ok(());
                #rows_of.for_rows::<{ #n }>(#fill, |__y, __x, __n, __rows| {
                    if __res.is_err() {
                        return;
                    }
                    #(#outs)*
                    __res = __vx::macro_support::IntoTileResult::into_tile_result(#target(#(#call),*));
                })?;
                __res
            }
        }
    }
}

/// A row kernel's row entry (fused execution): a unit type implementing the SDK's `RowFunction`,
/// whose `row_trampoline` the registration declares. The input's rows come from the host's row
/// table through `RowTable::for_rows` — the very code `Tile::for_rows` runs in the flexible
/// function above, so both fill the border alike — and every output's span from its row sink.
fn row_entry(target: &Path, attrs: &Attrs, args: &[Arg]) -> TokenStream {
    let fill = row_fill(attrs);
    let [l, r, t, b] = attrs.nbhd.unwrap_or([0; 4]);
    let (mut bind, mut outs, mut call, mut rows) = (Vec::new(), Vec::new(), Vec::new(), None);
    for (i, p) in params(args).into_iter().enumerate() {
        let v = format_ident!("__p{}", i);
        match (&p.kind, &p.rows) {
            (ParamKind::Input(ty), Some(n)) => {
                bind.push(quote!(let #v = args.input::<#ty>(#i)?;));
                rows = Some((v, n.clone()));
                call.push(quote!(__rows));
            }
            (ParamKind::Output(ty), _) => {
                bind.push(quote!(let mut #v = args.output::<#ty>(#i)?;));
                let o = format_ident!("__o{}", i);
                outs.push(quote! {
                    let #o = match #v.span(__y, __region.x0 + __x, __n) {
                        ::core::result::Result::Ok(o) => o,
                        ::core::result::Result::Err(e) => { __res = ::core::result::Result::Err(e); return; }
                    };
                });
                call.push(quote!(#o));
            }
            (ParamKind::ByValue(ty), _) => {
                bind.push(quote!(let #v = args.scalar::<#ty>(#i)?;));
                call.push(quote!(#v));
            }
            // Nothing else is a row kernel's parameter (the model refused it).
            _ => return quote!(),
        }
    }
    let Some((rows_of, n)) = rows else { return quote!() };
    quote! {
        struct __VxRows;
        impl __vx::module_api::RowFunction for __VxRows {
            fn call(args: &__vx::RowArgs<'_>) -> ::core::result::Result<(), __vx::TileError> {
                let __region = args.region();
                #(#bind)*
                let mut __res: ::core::result::Result<(), __vx::TileError> = ::core::result::Result::Ok(());
                #rows_of.for_rows::<{ #n }>(
                    __region,
                    __vx::Neighborhood::new(#l, #r, #t, #b),
                    #fill,
                    |__y, __x, __n, __rows| {
                        if __res.is_err() {
                            return;
                        }
                        #(#outs)*
                        __res = __vx::macro_support::IntoTileResult::into_tile_result(#target(#(#call),*));
                    },
                )?;
                __res
            }
        }
    }
}

/// The registration's `declare_fusion` call: a row kernel's row entry with its rule and `N`; any
/// other kernel only that its views are bounded (they are the SDK's); nothing for `fusion = false`.
fn declare_fusion(attrs: &Attrs, args: &[Arg], row_form: bool) -> TokenStream {
    if attrs.no_fusion {
        return quote!();
    }
    let rows_n = params(args).iter().find_map(|p| p.rows.clone());
    match (&attrs.border, rows_n) {
        (Some((Border::Fill(_, code), _)), Some(n)) if row_form => {
            let code = format_ident!("{}", code);
            quote!(api.declare_fusion(k, &__vx::module_abi::FusionDesc::rows(
                __vx::module_api::row_trampoline::<__VxRows>, __vx::wire::row_fill::#code, (#n) as u32,
            ))?;)
        }
        _ => quote!(api.declare_fusion(k, &__vx::module_abi::FusionDesc::bounded())?;),
    }
}

pub(crate) fn tiling_kernel(f: &ItemFn, attrs: &Attrs, args: &[Arg]) -> TokenStream {
    let ident = &f.sig.ident;
    let name = kernel_name(f, attrs.name.as_ref());
    let unique = unique_name_check(f, attrs.name.as_ref());
    let enumeration = enumeration(attrs.enumeration.as_ref());
    let (bind, call) = bindings(Flavor::Tiling, args);
    let this: Path = ident.clone().into();
    let row_form = is_row_form(f);
    let (fast_fn, flex_fn) = match &attrs.flexible {
        _ if row_form => (None, Some(this)),
        None => (Some(this), None),
        Some(Flexible::This) => (None, Some(this)),
        Some(Flexible::Path(p)) => (Some(this), Some(p.clone())),
    };
    let fast_tramp = fast_fn.as_ref().map(|t| trampoline(&format_ident!("__VxFast"), &quote!(#t), &bind, &call));
    let flex_tramp = match (&flex_fn, &attrs.flexible) {
        (Some(t), _) if row_form => {
            let entry = if attrs.no_fusion { quote!() } else { row_entry(t, attrs, args) };
            let flexible = row_trampoline(t, attrs, args);
            Some(quote!(#flexible #entry))
        }
        (Some(_), Some(Flexible::Path(p))) => {
            Some(trampoline(&format_ident!("__VxFlexible"), &as_signature_of(f, p), &bind, &call))
        }
        (Some(t), _) => Some(trampoline(&format_ident!("__VxFlexible"), &quote!(#t), &bind, &call)),
        (None, _) => None,
    };
    let fast_opt = if fast_fn.is_some() {
        quote!(::core::option::Option::Some(__vx::module_api::tiling_trampoline::<__VxFast>))
    } else {
        quote!(::core::option::Option::None)
    };
    let flex_opt = if flex_fn.is_some() {
        quote!(::core::option::Option::Some(__vx::module_api::tiling_trampoline::<__VxFlexible>))
    } else {
        quote!(::core::option::Option::None)
    };

    let fusion = declare_fusion(attrs, args, row_form);
    let n = params(args).len() as u32;
    let sig = signature(args);
    let labels = labels(args);
    let add_params = add_parameters(args);
    let summary = describe_kernel(f);
    let mut attributes = Vec::new();
    if let Some((w, h)) = attrs.block {
        attributes.push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::OutputTileBlockSize(#w, #h))?;));
    }
    if let Some([l, r, t, b]) = attrs.nbhd {
        attributes
            .push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::InputNeighborhood(#l, #r, #t, #b))?;));
    }
    if let Some((border, _)) = &attrs.border {
        // A rule the SDK applies is, to the runtime, a kernel that handles its own border.
        let code = if matches!(border, Border::Undefined) { quote!(UNDEFINED) } else { quote!(SELF) };
        attributes
            .push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::Border(__vx::wire::border::#code))?;));
    }
    if let Some(m) = attrs.tile_memory {
        attributes.push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::TileMemorySize(#m))?;));
    }
    for a in &attrs.aliases {
        let (x, y) = (a.a, a.b);
        let kind = if a.sparse { quote!(SPARSE) } else { quote!(DENSE) };
        attributes.push(quote!(api.alias_hint(k, #x, #y, __vx::wire::alias_kind::#kind)?;));
    }
    let same_size = !attrs.any_size;
    // The generated validator is `validate_signature(__VX_SIG, __VX_LABELS, same_size)`: what it
    // accepts is a pure function of the signature's tokens and of the SDK that interprets them, so
    // their hash names it across reloads (the labels only word its messages).
    let validator_key = crate::internals::expand::declaration_key(&[
        quote!(#(#sig),*).to_string(),
        same_size.to_string(),
        "validate_signature".to_owned(),
    ]);
    let validator_key = proc_macro2::Literal::u64_suffixed(validator_key);
    quote! {
        #f

        const _: () = {
            use ::vx_plugin_abi as __vx;
            #unique
            #fast_tramp
            #flex_tramp
            const __VX_SIG: &[__vx::macro_support::ParamSig] = &[#(#sig),*];
            const __VX_LABELS: &[__vx::macro_support::ParamLabel] = &[#(#labels),*];
            struct __VxValidate;
            impl __vx::module_api::ValidateFunction for __VxValidate {
                fn validate(v: &__vx::module_abi::Validator) -> ::core::result::Result<(), __vx::module_abi::AbiError> {
                    __vx::macro_support::validate_signature(v, __VX_SIG, __VX_LABELS, #same_size)
                }
            }
            fn __vx_register(api: &__vx::module_abi::Host) -> ::core::result::Result<(), __vx::module_abi::AbiError> {
                let k = api.add_kernel(&__vx::module_abi::KernelDesc::tiling(
                    #name, #enumeration, #n,
                    __vx::module_api::validate_trampoline::<__VxValidate>,
                    #fast_opt, #flex_opt,
                ).with_validator_key(#validator_key))?;
                #summary
                #(#add_params)*
                #(#attributes)*
                #fusion
                api.finalize(k)
            }
            __vx::kernel_record::inventory::submit! {
                __vx::KernelRecord { name: #name, register: __vx_register }
            }
        };
    }
}
