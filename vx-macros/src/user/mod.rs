//! `#[user_kernel(...)]`: a non-tiling kernel. The function's signature is its parameter list —
//! `&ImageIn<T>` (input image, mapped whole), `&mut ImageOut<T>` (output image), scalars by value —
//! plus `&mut L` for typed local data when `local = L` is given: a boxed `L::default()` behind the
//! node's local-data pointer, created at init (then the kernel's `init = path`, if any, runs on it)
//! and dropped at deinit (after `deinit = path`). `validate = path` replaces the generated validator.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::{FnArg, GenericArgument, ItemFn, LitInt, LitStr, Path, PathArguments, Token, Type, TypePath, TypeReference};

use crate::ctxt::Ctxt;

#[derive(Default)]
struct Attrs {
    name: Option<LitStr>,
    enumeration: Option<LitInt>,
    validate: Option<Path>,
    init: Option<Path>,
    deinit: Option<Path>,
    local: Option<Type>,
    any_size: bool,
}

const KEYS: &str = "name, enumeration, validate, init, deinit, local, any_size";

fn parse_attrs(cx: &Ctxt, args: TokenStream) -> syn::Result<Attrs> {
    let mut a = Attrs::default();
    let mut seen: Vec<String> = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if seen.contains(&key) {
            cx.error_spanned_by(&meta.path, format!("duplicate key `{key}`"));
        }
        seen.push(key.clone());
        match key.as_str() {
            "name" => a.name = Some(meta.value()?.parse()?),
            "enumeration" => a.enumeration = Some(meta.value()?.parse()?),
            "validate" => a.validate = Some(meta.value()?.parse()?),
            "init" => a.init = Some(meta.value()?.parse()?),
            "deinit" => a.deinit = Some(meta.value()?.parse()?),
            "local" => a.local = Some(meta.value()?.parse()?),
            "any_size" => a.any_size = true,
            _ => {
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown key `{}`; expected one of: {KEYS}", meta.path.to_token_stream()),
                );
                if meta.input.peek(Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, args)?;
    for (key, path) in [("init", &a.init), ("deinit", &a.deinit)] {
        if let (Some(p), None) = (path, &a.local) {
            cx.error_spanned_by(p, format!("`{key}` runs on the kernel's local data: declare it with `local = Type`"));
        }
    }
    Ok(a)
}

enum Arg {
    Input(Type),
    Output(Type),
    Scalar(Type),
    Local,
}

const SCALARS: [&str; 11] = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool"];

fn generic_of<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(TypePath { qself: None, path }) = ty else { return None };
    let seg = path.segments.last()?;
    if seg.ident != name {
        return None;
    }
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => {
            a.args.iter().find_map(|g| if let GenericArgument::Type(t) = g { Some(t) } else { None })
        }
        _ => None,
    }
}

fn classify(cx: &Ctxt, f: &ItemFn, local: Option<&Type>) -> Vec<Arg> {
    let same = |a: &Type, b: &Type| a.to_token_stream().to_string() == b.to_token_stream().to_string();
    let mut out = Vec::new();
    for input in &f.sig.inputs {
        let FnArg::Typed(pt) = input else {
            cx.error_spanned_by(input, "a kernel function cannot take `self`");
            continue;
        };
        let ty = &*pt.ty;
        let arg = match ty {
            Type::Reference(TypeReference { mutability: None, elem, .. }) => {
                generic_of(elem, "ImageIn").map(|t| Arg::Input(t.clone()))
            }
            Type::Reference(TypeReference { mutability: Some(_), elem, .. }) => {
                if local.is_some_and(|l| same(l, elem)) {
                    Some(Arg::Local)
                } else {
                    generic_of(elem, "ImageOut").map(|t| Arg::Output(t.clone()))
                }
            }
            Type::Path(TypePath { qself: None, path })
                if path.get_ident().is_some_and(|i| SCALARS.contains(&i.to_string().as_str())) =>
            {
                Some(Arg::Scalar(ty.clone()))
            }
            _ => None,
        };
        match arg {
            Some(a) => out.push(a),
            None => cx.error_spanned_by(
                ty,
                "unsupported parameter type: expected `&ImageIn<T>` (input image), `&mut ImageOut<T>` (output image), a scalar \
                 (u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, bool), or `&mut L` for the `local = L` state",
            ),
        }
    }
    if local.is_some() && !out.iter().any(|a| matches!(a, Arg::Local)) {
        cx.error_spanned_by(&f.sig.ident, "`local = Type` is declared, so the function takes `&mut Type`");
    }
    out
}

fn expand(f: &ItemFn, a: &Attrs, args: &[Arg]) -> TokenStream {
    let ident = &f.sig.ident;
    let name = match &a.name {
        Some(n) => quote!(#n),
        None => quote!(::core::concat!(::core::env!("CARGO_CRATE_NAME"), ".", ::core::stringify!(#ident))),
    };
    let enumeration = a.enumeration.as_ref().map_or(quote!(0), |e| quote!(#e));
    let (mut bind, mut call, mut sig, mut add) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut index = 0u32;
    for arg in args {
        let v = format_ident!("__p{}", index);
        let (dir, ty) = match arg {
            Arg::Input(t) => {
                bind.push(quote!(let #v = __vx::ImageIn::<#t>::map(p, #index)?;));
                call.push(quote!(&#v));
                sig.push(quote!(__vx::macro_support::ParamSig::InputImage { format: <#t as __vx::TilePixel>::FORMAT.fourcc(), optional: false }));
                (quote!(INPUT), quote!(IMAGE))
            }
            Arg::Output(t) => {
                bind.push(quote!(let mut #v = __vx::ImageOut::<#t>::map(p, #index)?;));
                call.push(quote!(&mut #v));
                sig.push(quote!(__vx::macro_support::ParamSig::OutputImage { format: <#t as __vx::TilePixel>::FORMAT.fourcc(), optional: false }));
                (quote!(OUTPUT), quote!(IMAGE))
            }
            Arg::Scalar(t) => {
                bind.push(quote!(let #v: #t = __vx::macro_support::read_scalar::<#t>(p, #index)?;));
                call.push(quote!(#v));
                sig.push(quote!(__vx::macro_support::ParamSig::InputScalar { type_code: <#t as __vx::TileScalar>::TYPE_CODE, optional: false }));
                (quote!(INPUT), quote!(SCALAR))
            }
            Arg::Local => {
                let l = a.local.as_ref().expect("checked");
                bind.push(quote! {
                    // SAFETY: taken once for this process call.
                    let __local = unsafe { __vx::macro_support::local::<#l>(p)? };
                });
                call.push(quote!(__local));
                continue;
            }
        };
        add.push(quote!(api.add_parameter(k, #index, __vx::module_abi::direction::#dir, __vx::module_abi::data_type::#ty, __vx::module_abi::param_state::REQUIRED)?;));
        index += 1;
    }
    let n = index;
    let same_size = !a.any_size;
    let validate_body = match &a.validate {
        Some(p) => quote!(#p(v)),
        None => quote!(__vx::macro_support::validate_signature(v, __VX_SIG, #same_size)),
    };
    let (lifecycle_fns, lifecycle) = match &a.local {
        None => (quote!(), quote!(::core::option::Option::None, ::core::option::Option::None)),
        Some(l) => {
            let user = |p: &Option<Path>| match p {
                Some(p) => {
                    quote!(::core::option::Option::Some(#p as fn(&mut #l) -> ::core::result::Result<(), __vx::module_abi::AbiError>))
                }
                None => quote!(::core::option::Option::None),
            };
            let (ui, ud) = (user(&a.init), user(&a.deinit));
            (
                quote! {
                    extern "C" fn __vx_init(l: &__vx::module_abi::Lifecycle) -> __vx::module_abi::AbiResult<()> {
                        __vx::macro_support::init_local::<#l>(l, #ui)
                    }
                    extern "C" fn __vx_deinit(l: &__vx::module_abi::Lifecycle) -> __vx::module_abi::AbiResult<()> {
                        __vx::macro_support::deinit_local::<#l>(l, #ud)
                    }
                },
                quote!(::core::option::Option::Some(__vx_init), ::core::option::Option::Some(__vx_deinit)),
            )
        }
    };
    quote! {
        #f

        const _: () = {
            use ::vx_plugin_abi as __vx;
            #[allow(dead_code)]
            const __VX_SIG: &[__vx::macro_support::ParamSig] = &[#(#sig),*];
            extern "C" fn __vx_validate(v: &__vx::module_abi::Validator) -> __vx::module_abi::AbiResult<()> {
                __vx::module_abi::guard("validate", || #validate_body)
            }
            extern "C" fn __vx_process(p: &__vx::module_abi::Processor) -> __vx::module_abi::AbiResult<()> {
                __vx::module_abi::guard("process", || {
                    #(#bind)*
                    __vx::macro_support::IntoAbiResult::into_abi_result(#ident(#(#call),*))
                })
            }
            #lifecycle_fns
            fn __vx_register(api: &__vx::module_abi::HostApi<'_>) -> ::core::result::Result<(), __vx::module_abi::AbiError> {
                let desc = __vx::module_abi::KernelDesc::user(#name, #enumeration, #n, __vx_validate, __vx_process)
                    .with_lifecycle(#lifecycle);
                let k = api.add_kernel(&desc)?;
                #(#add)*
                api.finalize(k)
            }
            __vx::kernel_record::inventory::submit! {
                __vx::KernelRecord { name: #name, register: __vx_register }
            }
        };
    }
}

pub(crate) fn user_kernel(args: TokenStream, f: ItemFn) -> TokenStream {
    let cx = Ctxt::new();
    let attrs = parse_attrs(&cx, args);
    let local = attrs.as_ref().ok().and_then(|a| a.local.clone());
    let fn_args = classify(&cx, &f, local.as_ref());
    let mut errors = cx.check().err();
    if let Err(e) = &attrs {
        match &mut errors {
            Some(all) => all.combine(e.clone()),
            None => errors = Some(e.clone()),
        }
    }
    match (errors, attrs) {
        (None, Ok(attrs)) => expand(&f, &attrs, &fn_args),
        (Some(e), _) | (None, Err(e)) => {
            let err = e.to_compile_error();
            quote!(#[allow(dead_code)] #f #err)
        }
    }
}
