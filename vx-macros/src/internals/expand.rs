//! Expansion pieces both kernel attributes use, built from the shared model: how each parameter is
//! bound for the call (required or optional, per flavor), the parameter signature the generated
//! validator checks, the `add_parameter` calls of registration, and the kernel's name and
//! enumeration. Generated code names the SDK as `__vx` (`use ::vx_plugin_abi as __vx;`).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::{ItemFn, LitInt, LitStr};

use crate::internals::ast::{Arg, Extra, Flavor, InPlaceHalf, Param, ParamKind, Region, params};

/// The kernel's name: the given one, or `crate_name.function_name`.
pub(crate) fn kernel_name(f: &ItemFn, name: Option<&LitStr>) -> TokenStream {
    let ident = &f.sig.ident;
    match name {
        Some(n) => quote!(#n),
        None => quote!(::core::concat!(::core::env!("CARGO_CRATE_NAME"), ".", ::core::stringify!(#ident))),
    }
}

/// A crate-root macro named after the kernel's name: a second kernel of the same name in the crate
/// (which the host would refuse at publish) is a compile error — "the name
/// `__vx_kernel_name__…` is defined multiple times" — pointing at the second kernel's name, found
/// by `cargo check` too (exported macros share the crate root's namespace, whatever module defines
/// them). Names are escaped to identifier characters (`.` → `_2e_`).
pub(crate) fn unique_name_check(f: &ItemFn, name: Option<&LitStr>) -> TokenStream {
    let escape = |s: &str| {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c.to_string() } else { format!("_{:x}_", c as u32) })
            .collect::<String>()
    };
    let (full, span) = match name {
        Some(n) => (n.value(), n.span()),
        // `<crate>.<function>`, as `kernel_name` makes it (cargo sets CARGO_CRATE_NAME for rustc).
        None => {
            (format!("{}.{}", std::env::var("CARGO_CRATE_NAME").unwrap_or_default(), f.sig.ident), f.sig.ident.span())
        }
    };
    let id = syn::Ident::new(&format!("__vx_kernel_name__{}", escape(&full)), span);
    quote::quote_spanned! {span=>
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #id { () => {}; }
    }
}

/// Refuse `name = ""` (the host would refuse it at load time; the macro says so at compile time).
pub(crate) fn check_name(cx: &super::ctxt::Ctxt, name: Option<&LitStr>) {
    if let Some(n) = name
        && n.value().trim().is_empty()
    {
        cx.error_spanned_by(
            n,
            "the kernel name is empty: give one such as `name = \"module.kernel\"`, or leave the key out for `<crate>.<function>`",
        );
    }
}

/// `api.describe_kernel(k, "…")?;` with the first paragraph of the function's doc comment
/// (nothing without one).
pub(crate) fn describe_kernel(f: &ItemFn) -> TokenStream {
    let mut text = String::new();
    for a in &f.attrs {
        if let syn::Meta::NameValue(nv) = &a.meta
            && nv.path.is_ident("doc")
            && let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value
        {
            text.push_str(&s.value());
            text.push('\n');
        }
    }
    // The first paragraph, its lines joined.
    let summary: Vec<&str> =
        text.lines().map(str::trim).skip_while(|l| l.is_empty()).take_while(|l| !l.is_empty()).collect();
    if summary.is_empty() {
        return TokenStream::new();
    }
    let summary = summary.join(" ");
    quote!(api.describe_kernel(k, #summary)?;)
}

/// The kernel's enumeration: the given one, or 0 (the host allocates one).
pub(crate) fn enumeration(e: Option<&LitInt>) -> TokenStream {
    e.map_or(quote!(0), |e| quote!(#e))
}

/// Bindings (statements) and call arguments that adapt the SDK's view of a call to the user's
/// signature. Tiling: from `args: &mut TileArgs`; user: from `p: &Processor` (and `__local`, the
/// state the trampoline passes).
pub(crate) fn bindings(flavor: Flavor, args: &[Arg]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let (mut bind, mut call, mut late) = (Vec::new(), Vec::new(), Vec::new());
    let mut index = 0u32;
    for a in args {
        match a {
            Arg::Param(p) if p.in_place == Some(InPlaceHalf::Second) => index += 1,
            Arg::Param(p) if p.in_place == Some(InPlaceHalf::First) => {
                let (v, i, t) = (
                    format_ident!("__p{}", index),
                    index,
                    match &p.kind {
                        ParamKind::Input(t) | ParamKind::Output(t) | ParamKind::Scalar(t) => t,
                        ParamKind::Object { ty, .. } => ty,
                    },
                );
                bind.push(quote!(let mut #v = args.in_place::<#t>(#i as usize, #i as usize + 1)?;));
                call.push(quote!(&mut #v));
                index += 1;
            }
            Arg::Param(p) => {
                let v = format_ident!("__p{}", index);
                let i = index;
                let get = match (flavor, &p.kind) {
                    (Flavor::Tiling | Flavor::Rows, ParamKind::Input(t)) => quote!(args.input::<#t>(#i as usize)?),
                    (Flavor::Tiling | Flavor::Rows, ParamKind::Output(t)) => quote!(args.output::<#t>(#i as usize)?),
                    (Flavor::Tiling | Flavor::Rows, ParamKind::Scalar(t)) => quote!(args.scalar::<#t>(#i as usize)?),
                    (Flavor::User, ParamKind::Input(t)) => quote!(__vx::ImageIn::<#t>::map(p, #i)?),
                    (Flavor::User, ParamKind::Output(t)) => quote!(__vx::ImageOut::<#t>::map(p, #i)?),
                    (Flavor::User, ParamKind::Scalar(t)) => quote!(__vx::macro_support::read_scalar::<#t>(p, #i)?),
                    (_, ParamKind::Object { ty, output }) => quote!(
                        <#ty as __vx::views::ParamView>::map(p, __vx::ParamPath::param(#i), #output)?
                    ),
                };
                let present = match flavor {
                    Flavor::Tiling | Flavor::Rows => quote!(args.is_present(#i as usize)),
                    Flavor::User => quote!(p.is_present(#i)),
                };
                let value = if p.optional {
                    quote!(if #present { ::core::option::Option::Some(#get) } else { ::core::option::Option::None })
                } else {
                    get
                };
                bind.push(quote!(#[allow(unused_mut)] let mut #v = #value;));
                call.push(match (&p.kind, p.optional) {
                    (ParamKind::Input(_) | ParamKind::Object { output: false, .. }, false) => quote!(&#v),
                    (ParamKind::Output(_) | ParamKind::Object { output: true, .. }, false) => quote!(&mut #v),
                    (ParamKind::Input(_) | ParamKind::Object { output: false, .. }, true) => quote!(#v.as_ref()),
                    (ParamKind::Output(_) | ParamKind::Object { output: true, .. }, true) => quote!(#v.as_mut()),
                    (ParamKind::Scalar(_), _) => quote!(#v),
                });
                index += 1;
            }
            Arg::Extra(Extra::TileMemory) => {
                // Last: it borrows `args` mutably.
                late.push(quote!(let __mem = args.tile_memory();));
                call.push(quote!(__mem));
            }
            Arg::Extra(Extra::Context) => {
                bind.push(quote!(let __ctx = args.context();));
                call.push(quote!(__ctx));
            }
            Arg::Extra(Extra::Local) => call.push(quote!(__local)),
            Arg::Memory(m) => {
                let v = format_ident!("__m{}", m.request);
                let (nth, elem) = (m.nth, &m.elem);
                let region = region(m.region);
                bind.push(quote!(let #v = p.block(__vx::memory::MemBlock::<#elem>::nth(#region, #nth))?;));
                call.push(quote!(#v));
            }
        }
    }
    bind.extend(late);
    (bind, call)
}

/// The SDK's `MemRegion` for `r`.
pub(crate) fn region(r: Region) -> TokenStream {
    match r {
        Region::Persistent => quote!(__vx::memory::MemRegion::Persistent),
        Region::Scratch => quote!(__vx::memory::MemRegion::Scratch),
    }
}

/// The `ParamSig` entries the generated validator checks, one per parameter.
pub(crate) fn signature(args: &[Arg]) -> Vec<TokenStream> {
    params(args)
        .into_iter()
        .map(|Param { kind, optional, .. }| match kind {
            ParamKind::Input(t) => quote!(__vx::macro_support::ParamSig::InputImage { format: <#t as __vx::TilePixel>::FORMAT.fourcc(), optional: #optional }),
            ParamKind::Output(t) => quote!(__vx::macro_support::ParamSig::OutputImage { format: <#t as __vx::TilePixel>::FORMAT.fourcc(), optional: #optional }),
            ParamKind::Scalar(t) => quote!(__vx::macro_support::ParamSig::InputScalar { type_code: <#t as __vx::TileScalar>::TYPE_CODE, optional: #optional }),
            ParamKind::Object { ty, output } => quote!(__vx::macro_support::ParamSig::object::<#ty>(#output, #optional)),
        })
        .collect()
}

/// `api.add_parameter(k, index, direction, type, state)?;` for every parameter, with wire codes.
pub(crate) fn add_parameters(args: &[Arg]) -> Vec<TokenStream> {
    params(args)
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let i = i as u32;
            let (dir, ty) = match &p.kind {
                ParamKind::Input(_) => (quote!(INPUT), quote!(__vx::wire::data_type::IMAGE)),
                ParamKind::Output(_) => (quote!(OUTPUT), quote!(__vx::wire::data_type::IMAGE)),
                ParamKind::Scalar(_) => (quote!(INPUT), quote!(__vx::wire::data_type::SCALAR)),
                ParamKind::Object { ty, output } => (
                    if *output { quote!(OUTPUT) } else { quote!(INPUT) },
                    quote!(<#ty as __vx::views::ViewKind>::DATA_TYPE),
                ),
            };
            let state = if p.optional { quote!(OPTIONAL) } else { quote!(REQUIRED) };
            let name = &p.name;
            let element = match &p.kind {
                ParamKind::Input(t) | ParamKind::Output(t) => {
                    quote!(&::std::string::ToString::to_string(&<#t as __vx::TilePixel>::FORMAT))
                }
                ParamKind::Scalar(t) => quote!(&__vx::wire::scalar_type::name(<#t as __vx::TileScalar>::TYPE_CODE)),
                ParamKind::Object { ty, .. } => {
                    let text = ty.to_token_stream().to_string().replace(' ', "");
                    quote!(#text)
                }
            };
            quote! {
                api.add_parameter(k, #i, __vx::wire::direction::#dir, #ty, __vx::wire::param_state::#state)?;
                api.describe_parameter(k, #i, #name, #element)?;
            }
        })
        .collect()
}
