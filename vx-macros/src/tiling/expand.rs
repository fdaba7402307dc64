//! Code generation for `#[tiling_kernel]`: the original function, a unit type per function
//! implementing the SDK's `TilingFunction` (typed views built from the tile descriptors) — the SDK's
//! generic `tiling_trampoline` is the `extern "C"` glue, panics caught inside —, the validator (a
//! `ValidateFunction`), the registration function and its inventory record. No `extern "C"` and no
//! `unsafe` in the output.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ItemFn, Path};

use crate::internals::ast::{Arg, Flavor, params};
use crate::internals::expand::{add_parameters, bindings, enumeration, kernel_name, signature};
use crate::tiling::attr::{Attrs, Border, Flexible};

/// A unit type implementing the SDK's `TilingFunction` for `target`; its `tiling_trampoline` is the
/// `extern "C"` function the host calls (the glue is written once, in the SDK).
fn trampoline(ty: &syn::Ident, target: &Path, bind: &[TokenStream], call: &[TokenStream]) -> TokenStream {
    quote! {
        struct #ty;
        impl __vx::module_api::TilingFunction for #ty {
            fn call(args: &mut __vx::TileArgs<'_>) -> ::core::result::Result<(), __vx::TileError> {
                #(#bind)*
                __vx::macro_support::IntoTileResult::into_tile_result(#target(#(#call),*))
            }
        }
    }
}

pub(crate) fn tiling_kernel(f: &ItemFn, attrs: &Attrs, args: &[Arg]) -> TokenStream {
    let ident = &f.sig.ident;
    let name = kernel_name(f, attrs.name.as_ref());
    let enumeration = enumeration(attrs.enumeration.as_ref());
    let (bind, call) = bindings(Flavor::Tiling, args);
    let this: Path = ident.clone().into();
    let (fast_fn, flex_fn) = match &attrs.flexible {
        None => (Some(this), None),
        Some(Flexible::This) => (None, Some(this)),
        Some(Flexible::Path(p)) => (Some(this), Some(p.clone())),
    };
    let fast_tramp = fast_fn.as_ref().map(|t| trampoline(&format_ident!("__VxFast"), t, &bind, &call));
    let flex_tramp = flex_fn.as_ref().map(|t| trampoline(&format_ident!("__VxFlexible"), t, &bind, &call));
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

    let n = params(args).len() as u32;
    let sig = signature(args);
    let add_params = add_parameters(args);
    let mut attributes = Vec::new();
    if let Some((w, h)) = attrs.block {
        attributes.push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::OutputTileBlockSize(#w, #h))?;));
    }
    if let Some([l, r, t, b]) = attrs.nbhd {
        attributes
            .push(quote!(api.set_attribute(k, __vx::module_abi::KernelAttr::InputNeighborhood(#l, #r, #t, #b))?;));
    }
    if let Some((border, _)) = &attrs.border {
        let code = if *border == Border::SelfBorder { quote!(SELF) } else { quote!(UNDEFINED) };
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
    quote! {
        #f

        const _: () = {
            use ::vx_plugin_abi as __vx;
            #fast_tramp
            #flex_tramp
            const __VX_SIG: &[__vx::macro_support::ParamSig] = &[#(#sig),*];
            struct __VxValidate;
            impl __vx::module_api::ValidateFunction for __VxValidate {
                fn validate(v: &__vx::module_abi::Validator) -> ::core::result::Result<(), __vx::module_abi::AbiError> {
                    __vx::macro_support::validate_signature(v, __VX_SIG, #same_size)
                }
            }
            fn __vx_register(api: &__vx::module_abi::Host) -> ::core::result::Result<(), __vx::module_abi::AbiError> {
                let k = api.add_kernel(&__vx::module_abi::KernelDesc::tiling(
                    #name, #enumeration, #n,
                    __vx::module_api::validate_trampoline::<__VxValidate>,
                    #fast_opt, #flex_opt,
                ))?;
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
