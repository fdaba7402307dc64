//! `vx_module!`: the one invocation a module crate needs. It exports the versioned root descriptor
//! (the abi_stable `LibHeader` static, generated here through `vx_plugin_abi`'s re-export so module
//! crates need no direct abi_stable dependency) whose `publish` registers every kernel record of the
//! crate and whose `unpublish` removes them. Once per crate: a second invocation is refused where
//! it is written, naming the first (`internals::unique`).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Token};

use crate::internals::ctxt::Ctxt;

/// `name = "...", version = "..."` (version defaults to the crate's).
pub(crate) struct ModuleArgs {
    name: Option<Expr>,
    version: Option<Expr>,
}

struct KeyValue {
    key: Ident,
    value: Expr,
}

impl Parse for KeyValue {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        Ok(KeyValue { key, value: input.parse()? })
    }
}

impl Parse for ModuleArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let cx = Ctxt::new();
        if let Some((first, _)) = input.cursor().token_tree() {
            crate::internals::unique::check_module(&cx, &first);
        }
        let mut args = ModuleArgs { name: None, version: None };
        for kv in Punctuated::<KeyValue, Token![,]>::parse_terminated(input)? {
            let slot = match kv.key.to_string().as_str() {
                "name" => &mut args.name,
                "version" => &mut args.version,
                other => {
                    cx.error_spanned_by(&kv.key, format!("unknown key `{other}`; expected `name` or `version`"));
                    continue;
                }
            };
            if slot.is_some() {
                cx.error_spanned_by(&kv.key, format!("duplicate key `{}`", kv.key));
            }
            *slot = Some(kv.value);
        }
        match &args.name {
            None => cx.error_spanned_by(Ident::new("vx_module", Span::call_site()), "`name = \"...\"` is required"),
            Some(Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) if s.value().trim().is_empty() => cx
                .error_spanned_by(
                    s,
                    "the module name is empty: it names the library file (`name = \"filters\"` for libfilters.so)",
                ),
            Some(_) => {}
        }
        cx.check()?;
        Ok(args)
    }
}

pub(crate) fn expand(args: ModuleArgs) -> TokenStream {
    let name = args.name.expect("checked in parse");
    let version = args.version.map(|v| quote!(#v)).unwrap_or_else(|| quote!(::core::env!("CARGO_PKG_VERSION")));
    let export_name = Ident::new(&abi_stable_shared::mangled_root_module_loader_name(), Span::call_site());
    quote! {
        // The backstop of `internals::unique::check_module` (a second `vx_module!` in the crate,
        // when the crate's source could not be read): "the name … is defined multiple times" at
        // `cargo check` rather than a symbol clash at link time.
        #[doc(hidden)]
        #[macro_export]
        macro_rules! __vx_module_is_invoked_once_per_crate { () => {}; }
        const _: () = {
            use ::vx_plugin_abi::abi_stable::library as __lib;
            use ::vx_plugin_abi::module_abi as __abi;

            // A static descriptor: nothing is allocated (or leaked) per load.
            const __VX_ROOT: &::vx_plugin_abi::abi_stable::prefix_type::WithMetadata<__abi::VxModule> =
                &::vx_plugin_abi::abi_stable::prefix_type::WithMetadata::new(__abi::VxModule {
                    abi_version: __abi::ABI_VERSION as _,
                    name: ::vx_plugin_abi::abi_stable::std_types::RStr::from_str(#name),
                    version: ::vx_plugin_abi::abi_stable::std_types::RStr::from_str(#version),
                    publish: ::vx_plugin_abi::kernel_record::publish_records,
                    unpublish: ::vx_plugin_abi::kernel_record::unpublish_records,
                });
            fn __vx_module_root() -> __abi::VxModuleRef {
                ::vx_plugin_abi::module_api::install_panic_hook();
                __abi::VxModuleRef(__VX_ROOT.static_as_prefix())
            }

            #[unsafe(export_name = "vx_rs_module_abi_version")]
            pub static __VX_MODULE_ABI_VERSION: u32 = __abi::ABI_VERSION;

            // How the module was built (`BUILD_DEBUG_SYMBOL`): the host warns of a debug build.
            #[unsafe(export_name = "vx_rs_module_debug_assertions")]
            pub static __VX_MODULE_DEBUG_ASSERTIONS: u8 = ::core::cfg!(debug_assertions) as u8;

            #[unsafe(no_mangle)]
            pub static #export_name: __lib::LibHeader = {
                pub extern "C" fn __vx_erased_root() -> __lib::RootModuleResult {
                    __lib::__call_root_module_loader(__vx_module_root)
                }
                // SAFETY: the constructor returns the root module of type VxModuleRef, erased by
                // abi_stable's own loader helper, exactly as `#[export_root_module]` generates it.
                unsafe { __lib::LibHeader::from_constructor::<__abi::VxModuleRef>(__vx_erased_root, __lib::CheckTypeLayout::Yes) }
            };
        };
    }
}
