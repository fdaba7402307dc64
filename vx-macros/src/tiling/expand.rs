//! Code generation for `#[tiling_kernel]`: the original function, the `extern "C"` trampolines
//! (panics caught inside, typed views built from the tile descriptors), the validator, the
//! registration function and its inventory record.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ItemFn, Path};

use crate::ast::{Arg, ParamKind};
use crate::attr::{Attrs, Border, Flexible};

/// Bindings and call arguments that adapt a `TileArgs` to the user's signature.
fn adapter(args: &[Arg]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let (mut bind, mut call) = (Vec::new(), Vec::new());
    let mut index = 0u32;
    let mut late = Vec::new();
    for a in args {
        match a {
            Arg::Param(p) => {
                let v = format_ident!("__p{}", index);
                let i = index as usize;
                let get = match &p.kind {
                    ParamKind::Input(t) => quote!(args.input::<#t>(#i)?),
                    ParamKind::Output(t) => quote!(args.output::<#t>(#i)?),
                    ParamKind::Scalar(t) => quote!(args.scalar::<#t>(#i)?),
                };
                let value = if p.optional {
                    quote!(if args.is_present(#i) { ::core::option::Option::Some(#get) } else { ::core::option::Option::None })
                } else {
                    get
                };
                bind.push(quote!(#[allow(unused_mut)] let mut #v = #value;));
                call.push(match (&p.kind, p.optional) {
                    (ParamKind::Input(_), false) => quote!(&#v),
                    (ParamKind::Output(_), false) => quote!(&mut #v),
                    (ParamKind::Input(_), true) => quote!(#v.as_ref()),
                    (ParamKind::Output(_), true) => quote!(#v.as_mut()),
                    (ParamKind::Scalar(_), _) => quote!(#v),
                });
                index += 1;
            }
            Arg::TileMemory => {
                late.push(quote!(let __mem = args.tile_memory();));
                call.push(quote!(__mem));
            }
            Arg::Context => {
                bind.push(quote!(let __ctx = args.context();));
                call.push(quote!(__ctx));
            }
        }
    }
    bind.extend(late);
    (bind, call)
}

fn trampoline(
    name: &syn::Ident,
    call_name: &syn::Ident,
    target: &Path,
    bind: &[TokenStream],
    call: &[TokenStream],
) -> TokenStream {
    quote! {
        fn #call_name(args: &mut __vx::TileArgs<'_>) -> ::core::result::Result<(), __vx::TileError> {
            #(#bind)*
            __vx::macro_support::IntoTileResult::into_tile_result(#target(#(#call),*))
        }
        extern "C" fn #name(
            p: *const __vx::TileParam,
            n: u32,
            m: *mut u8,
            s: usize,
        ) -> __vx::module_abi::AbiResult<()> {
            // SAFETY: the arguments are forwarded unchanged from the host's call of this
            // `vx_tiling_kernel_f`, which upholds `TileArgs::new`'s contract.
            unsafe { __vx::module_abi::run_tiling(p, n, m, s, #call_name) }
        }
    }
}

pub(crate) fn tiling_kernel(f: &ItemFn, attrs: &Attrs, args: &[Arg]) -> TokenStream {
    let ident = &f.sig.ident;
    let name = match &attrs.name {
        Some(n) => quote!(#n),
        None => quote!(::core::concat!(::core::env!("CARGO_CRATE_NAME"), ".", ::core::stringify!(#ident))),
    };
    let enumeration = match &attrs.enumeration {
        Some(e) => quote!(#e),
        None => quote!(0),
    };
    let (bind, call) = adapter(args);
    let this: Path = ident.clone().into();
    let (fast_fn, flex_fn) = match &attrs.flexible {
        None => (Some(this), None),
        Some(Flexible::This) => (None, Some(this)),
        Some(Flexible::Path(p)) => (Some(this), Some(p.clone())),
    };
    let fast_tramp = fast_fn
        .as_ref()
        .map(|t| trampoline(&format_ident!("__vx_fast"), &format_ident!("__vx_call_fast"), t, &bind, &call));
    let flex_tramp = flex_fn
        .as_ref()
        .map(|t| trampoline(&format_ident!("__vx_flexible"), &format_ident!("__vx_call_flexible"), t, &bind, &call));
    let fast_opt = if fast_fn.is_some() {
        quote!(::core::option::Option::Some(__vx_fast))
    } else {
        quote!(::core::option::Option::None)
    };
    let flex_opt = if flex_fn.is_some() {
        quote!(::core::option::Option::Some(__vx_flexible))
    } else {
        quote!(::core::option::Option::None)
    };

    let params = crate::ast::params(args);
    let n = params.len() as u32;
    let sig = params.iter().map(|p| {
        let optional = p.optional;
        match &p.kind {
            ParamKind::Input(t) => quote!(__vx::macro_support::ParamSig::InputImage { format: <#t as __vx::TilePixel>::FORMAT.fourcc(), optional: #optional }),
            ParamKind::Output(t) => quote!(__vx::macro_support::ParamSig::OutputImage { format: <#t as __vx::TilePixel>::FORMAT.fourcc(), optional: #optional }),
            ParamKind::Scalar(t) => quote!(__vx::macro_support::ParamSig::InputScalar { type_code: <#t as __vx::TileScalar>::TYPE_CODE, optional: #optional }),
        }
    });
    let add_params = params.iter().enumerate().map(|(i, p)| {
        let i = i as u32;
        let (dir, ty) = match &p.kind {
            ParamKind::Input(_) => (quote!(INPUT), quote!(IMAGE)),
            ParamKind::Output(_) => (quote!(OUTPUT), quote!(IMAGE)),
            ParamKind::Scalar(_) => (quote!(INPUT), quote!(SCALAR)),
        };
        let state = if p.optional { quote!(OPTIONAL) } else { quote!(REQUIRED) };
        quote!(api.add_parameter(k, #i, __vx::module_abi::direction::#dir, __vx::module_abi::data_type::#ty, __vx::module_abi::param_state::#state)?;)
    });
    let mut attributes = Vec::new();
    if let Some((w, h)) = attrs.block {
        attributes.push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::OutputTileBlockSize(#w, #h))?;));
    }
    if let Some([l, r, t, b]) = attrs.nbhd {
        attributes
            .push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::InputNeighborhood(#l, #r, #t, #b))?;));
    }
    if let Some((border, _)) = &attrs.border {
        let code = if *border == Border::SelfBorder { 1u32 } else { 0u32 };
        attributes.push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::Border(#code))?;));
    }
    if let Some(m) = attrs.tile_memory {
        attributes.push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::TileMemorySize(#m))?;));
    }
    for a in &attrs.aliases {
        let (x, y, sparse) = (a.a, a.b, a.sparse);
        attributes.push(quote!(api.alias_hint(k, #x, #y, #sparse)?;));
    }
    let same_size = !attrs.any_size;
    quote! {
        #f

        const _: () = {
            use ::vx_plugin_abi as __vx;
            #fast_tramp
            #flex_tramp
            const __VX_SIG: &[__vx::macro_support::ParamSig] = &[#(#sig),*];
            extern "C" fn __vx_validate(v: &__vx::module_abi::Validator) -> __vx::module_abi::AbiResult<()> {
                __vx::module_abi::guard("validate", || __vx::macro_support::validate_signature(v, __VX_SIG, #same_size))
            }
            fn __vx_register(api: &__vx::module_abi::HostApi<'_>) -> ::core::result::Result<(), __vx::module_abi::AbiError> {
                let k = api.add_kernel(&__vx::module_abi::KernelDesc::tiling(#name, #enumeration, #n, __vx_validate, #fast_opt, #flex_opt))?;
                #(#add_params)*
                #(#attributes)*
                api.finalize(k)
            }
            __vx::kernel_record::inventory::submit! {
                __vx::KernelRecord { name: #name, register: __vx_register }
            }
        };
    }
}
