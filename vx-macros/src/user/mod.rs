//! `#[user_kernel(...)]`: a non-tiling kernel. The function's signature is its parameter list, in
//! the shared model (`internals::ast`) — `&ImageIn<T>` (input image, mapped whole), `&mut
//! ImageOut<T>` (output image), scalars by value, `Option<…>` of those for optional parameters —
//! plus `&mut L` for typed local data when `local = L` is given: a boxed `L::default()` behind the
//! node's local-data pointer, created at init (then the kernel's `init = path`, if any, runs on it)
//! and dropped at deinit (after `deinit = path`). `validate = path` replaces the generated validator.
//! `valid_rect = path` (a `module_api::ValidRectFn`) gives every output image, pyramid and object
//! array that valid-rectangle function, after the validator ran (`VX_VALID_RECT_CALLBACK`).
//! `scratch(name = count, ..)` / `persistent(name = count, ..)` request kernel memory: the argument
//! `name: &mut [T]` receives a block of `count` elements (a `usize` expression, or a function of
//! the node's `Lifecycle`), allocated in init in request order and freed at deinit.
//!
//! `control = path` adds a control callback (`fn(&Controller) -> Result<(), AbiError>`, or with
//! `local = L` `fn(&Controller, &mut L) -> ...`); `target = "name"` registers the kernel on that
//! target only (a target kernel: its init / deinit are the target's create / delete).
//! `#[target_kernel]` is the same attribute with `target` required and `create` / `delete` as the
//! names of `init` / `deinit`.
//!
//! The output implements the SDK's `ValidateFunction` and `ProcessFunction` (or `StateHooks` and
//! `StatefulProcess` with `local = L`) on a unit type; the SDK's generic trampolines are the
//! `extern "C"` glue. No `extern "C"` and no `unsafe` in the output.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, LitInt, LitStr, Path, Token, Type};

use crate::internals::ast::{self, Arg, Flavor, MemRequest, Region, params};
use crate::internals::ctxt::Ctxt;
use crate::internals::expand::{
    add_parameters, bindings, describe_kernel, enumeration, kernel_name, labels, region, signature, unique_name_check,
};

#[derive(Default)]
struct Attrs {
    name: Option<LitStr>,
    enumeration: Option<LitInt>,
    validate: Option<Path>,
    /// `valid_rect = path`: every output image, pyramid or object array gets this valid-rectangle
    /// function (`VX_VALID_RECT_CALLBACK`).
    valid_rect: Option<Path>,
    init: Option<Path>,
    deinit: Option<Path>,
    local: Option<Type>,
    any_size: bool,
    memory: Vec<MemRequest>,
    /// `target = "name"`: the kernel is implemented on that target only (a target kernel).
    target: Option<LitStr>,
    /// `control = path`: the control callback (`Node::send_command`).
    control: Option<Path>,
    /// The keys init and deinit were given with (`init`/`create`, `deinit`/`delete`).
    lifecycle_keys: (String, String),
}

const KEYS: &str = "name, enumeration, validate, valid_rect, init (create), deinit (delete), local, any_size, scratch, persistent, target, control";

/// Which attribute: `#[user_kernel]` or `#[target_kernel]` (target required; `create` / `delete`
/// are its names for init / deinit).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    User,
    Target,
}

fn parse_attrs(cx: &Ctxt, args: TokenStream, entry: Entry, f: &ItemFn) -> syn::Result<Attrs> {
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
            "valid_rect" => a.valid_rect = Some(meta.value()?.parse()?),
            "init" | "create" => {
                a.init = Some(meta.value()?.parse()?);
                a.lifecycle_keys.0 = key.clone();
            }
            "deinit" | "delete" => {
                a.deinit = Some(meta.value()?.parse()?);
                a.lifecycle_keys.1 = key.clone();
            }
            "target" => {
                let t: LitStr = meta.value()?.parse()?;
                if t.value().is_empty() {
                    cx.error_spanned_by(&t, "a target name cannot be empty");
                }
                a.target = Some(t);
            }
            "control" => a.control = Some(meta.value()?.parse()?),
            "local" => a.local = Some(meta.value()?.parse()?),
            "any_size" => a.any_size = true,
            "scratch" | "persistent" => {
                let region = if key == "scratch" { Region::Scratch } else { Region::Persistent };
                meta.parse_nested_meta(|m| {
                    let Some(name) = m.path.get_ident().cloned() else {
                        return Err(m.error("expected `name = count` (the argument `name: &mut [T]` gets the block)"));
                    };
                    let count: syn::Expr = m.value()?.parse()?;
                    if a.memory.iter().any(|r| r.name == name) {
                        cx.error_spanned_by(&name, format!("memory request `{name}` is declared twice"));
                    } else {
                        a.memory.push(MemRequest { region, name, count });
                    }
                    Ok(())
                })?;
            }
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
    let span = args.clone();
    syn::parse::Parser::parse2(parser, args)?;
    crate::internals::expand::check_name(cx, f, a.name.as_ref());
    if entry == Entry::Target && a.target.is_none() {
        cx.error_spanned_by(span, "a target kernel names its target: `target = \"name\"`");
    }
    for (key, path) in [(&a.lifecycle_keys.0, &a.init), (&a.lifecycle_keys.1, &a.deinit)] {
        if let (Some(p), None) = (path, &a.local) {
            cx.error_spanned_by(p, format!("`{key}` runs on the kernel's local data: declare it with `local = Type`"));
        }
    }
    Ok(a)
}

fn expand(f: &ItemFn, a: &Attrs, args: &[Arg]) -> TokenStream {
    let ident = &f.sig.ident;
    let name = kernel_name(f, a.name.as_ref());
    let unique = unique_name_check(f, a.name.as_ref());
    let enumeration = enumeration(a.enumeration.as_ref());
    let (bind, call) = bindings(Flavor::User, args);
    let n = params(args).len() as u32;
    let sig = signature(args);
    let labels = labels(args);
    let add = add_parameters(args);
    let summary = describe_kernel(f);
    let same_size = !a.any_size;
    let exemplar_checks = if a.validate.is_none() { output_exemplar_checks(args) } else { Vec::new() };
    let validate_call = match &a.validate {
        Some(p) => quote!(#p(v)),
        None => quote!(__vx::macro_support::validate_signature(v, __VX_SIG, __VX_LABELS, #same_size)),
    };
    let validate_body = match &a.valid_rect {
        None => validate_call,
        Some(f) => {
            let outputs = valid_rect_outputs(args);
            quote! {
                #validate_call?;
                let f: __vx::module_api::ValidRectFn = #f;
                #(v.set_output_valid_rect(#outputs, f)?;)*
                ::core::result::Result::Ok(())
            }
        }
    };
    let result = quote!(::core::result::Result<(), __vx::module_abi::AbiError>);
    let call_kernel = quote! {
        #(#bind)*
        __vx::macro_support::IntoAbiResult::into_abi_result(#ident(#(#call),*))
    };
    let stateful = a.local.is_some() || !a.memory.is_empty();
    let (control_impl, control) = match (&a.control, stateful) {
        (None, _) => (TokenStream::new(), quote!(::core::option::Option::None)),
        (Some(c), true) => {
            let state = a.local.as_ref().map_or_else(|| quote!(()), |l| quote!(#l));
            let call = if a.local.is_some() { quote!(#c(c, state)) } else { quote!(#c(c)) };
            (
                quote! {
                    impl __vx::module_api::StatefulControl for __VxKernel {
                        #[allow(unused_variables)]
                        fn control(c: &__vx::module_abi::Controller, state: &mut #state) -> #result { #call }
                    }
                },
                quote!(::core::option::Option::Some(__vx::module_api::stateful_control_trampoline::<__VxKernel>)),
            )
        }
        (Some(c), false) => (
            quote! {
                impl __vx::module_api::ControlFunction for __VxKernel {
                    fn control(c: &__vx::module_abi::Controller) -> #result { #c(c) }
                }
            },
            quote!(::core::option::Option::Some(__vx::module_api::control_trampoline::<__VxKernel>)),
        ),
    };
    let (process_impl, process, lifecycle) = if !stateful {
        (
            quote! {
                impl __vx::module_api::ProcessFunction for __VxKernel {
                    fn process(p: &__vx::module_abi::Processor) -> #result { #call_kernel }
                }
            },
            quote!(__vx::module_api::process_trampoline::<__VxKernel>),
            (quote!(::core::option::Option::None), quote!(::core::option::Option::None)),
        )
    } else {
        let state = a.local.as_ref().map_or_else(|| quote!(()), |l| quote!(#l));
        let local = if a.local.is_some() { quote!(__local) } else { quote!(_) };
        let hook = |name: &str, p: &Option<Path>| {
            let name = syn::Ident::new(name, proc_macro2::Span::call_site());
            p.as_ref().map(|p| quote!(fn #name(state: &mut #state) -> #result { #p(state) }))
        };
        let (init, deinit) = (hook("init", &a.init), hook("deinit", &a.deinit));
        let memory = memory_hooks(a, args);
        (
            quote! {
                impl __vx::module_api::StateHooks for __VxKernel {
                    type State = #state;
                    #memory
                    #init
                    #deinit
                }
                impl __vx::module_api::StatefulProcess for __VxKernel {
                    fn process(p: &__vx::module_abi::Processor, #local: &mut #state) -> #result { #call_kernel }
                }
            },
            quote!(__vx::module_api::stateful_process_trampoline::<__VxKernel>),
            (
                quote!(::core::option::Option::Some(__vx::module_api::init_trampoline::<__VxKernel>)),
                quote!(::core::option::Option::Some(__vx::module_api::deinit_trampoline::<__VxKernel>)),
            ),
        )
    };
    let (init, deinit) = lifecycle;
    let describe = match &a.target {
        Some(t) => quote! {
            let targets = [__vx::module_abi::TargetDesc {
                target: __vx::abi_stable::std_types::RStr::from_str(#t),
                process: #process,
                create: #init,
                delete: #deinit,
                control: #control,
            }];
            let desc = __vx::module_abi::KernelDesc::target_only(
                #name, #enumeration, #n,
                __vx::module_api::validate_trampoline::<__VxKernel>,
                &targets,
            );
        },
        None => quote! {
            let desc = __vx::module_abi::KernelDesc::user(
                #name, #enumeration, #n,
                __vx::module_api::validate_trampoline::<__VxKernel>,
                #process,
            )
            .with_lifecycle(#init, #deinit)
            .with_control(#control);
        },
    };
    quote! {
        #f

        const _: () = {
            use ::vx_plugin_abi as __vx;
            #unique
            #(#exemplar_checks)*
            #[allow(dead_code)]
            const __VX_SIG: &[__vx::macro_support::ParamSig] = &[#(#sig),*];
            #[allow(dead_code)]
            const __VX_LABELS: &[__vx::macro_support::ParamLabel] = &[#(#labels),*];
            struct __VxKernel;
            impl __vx::module_api::ValidateFunction for __VxKernel {
                fn validate(v: &__vx::module_abi::Validator) -> #result { #validate_body }
            }
            #process_impl
            #control_impl
            fn __vx_register(api: &__vx::module_abi::Host) -> #result {
                #describe
                let k = api.add_kernel(&desc)?;
                #summary
                #(#add)*
                api.finalize(k)
            }
            __vx::kernel_record::inventory::submit! {
                __vx::KernelRecord { name: #name, register: __vx_register }
            }
        };
    }
}

/// `StateHooks::allocate` / `release` for the memory requests: allocated in request order (so
/// the `nth` block of a region is the `nth` request of it), persistent blocks freed at deinit.
fn memory_hooks(a: &Attrs, args: &[Arg]) -> TokenStream {
    if a.memory.is_empty() {
        return TokenStream::new();
    }
    let result = quote!(::core::result::Result<(), __vx::module_abi::AbiError>);
    let mut alloc = Vec::new();
    let mut free = Vec::new();
    for (k, req) in a.memory.iter().enumerate() {
        // Every request names an argument (checked in the model).
        let Some(m) = args.iter().find_map(|x| match x {
            Arg::Memory(m) if m.request == k => Some(m),
            _ => None,
        }) else {
            continue;
        };
        let (elem, count, reg, nth) = (&m.elem, &req.count, region(m.region), m.nth);
        alloc.push(quote! {
            l.alloc::<#elem>(#reg, __vx::macro_support::MemCount::count(&(#count), l)?)?;
        });
        if m.region == Region::Persistent {
            free.push(quote!(l.free(__vx::memory::MemBlock::<#elem>::nth(#reg, #nth))?;));
        }
    }
    quote! {
        fn allocate(l: &__vx::module_abi::Lifecycle) -> #result {
            #(#alloc)*
            ::core::result::Result::Ok(())
        }
        fn release(l: &__vx::module_abi::Lifecycle) -> #result {
            #(#free)*
            ::core::result::Result::Ok(())
        }
    }
}

/// The generated validator gives an output view the meta of the first input of the same view; an
/// output without one needs `validate = path`, unless its view makes its meta alone
/// (`ViewKind::OUTPUT_META_WITHOUT_EXEMPLAR`, a scalar: its type is its meta). The view's trait
/// knows, so the check is a `const` assertion in the output, at the parameter's type.
fn output_exemplar_checks(args: &[Arg]) -> Vec<TokenStream> {
    let ps = params(args);
    let mut out = Vec::new();
    for p in &ps {
        let ast::ParamKind::Object { ty, output: true } = &p.kind else { continue };
        let Some(name) = p.kind.view_name() else { continue };
        let has_input = ps.iter().any(|q| {
            matches!(q.kind, ast::ParamKind::Object { output: false, .. }) && q.kind.view_name() == Some(name.clone())
        });
        if !has_input {
            let msg = format!(
                "the generated validator gives an output `{name}` the meta data of an input `{name}`, and the kernel takes none: give it a validator (`validate = path`)"
            );
            out.push(quote_spanned! {ty.span()=>
                const _: () = ::core::assert!(<#ty as __vx::views::ViewKind>::OUTPUT_META_WITHOUT_EXEMPLAR, #msg);
            });
        }
    }
    out
}

/// The outputs that have valid rectangles (images, pyramids, object arrays), by index.
fn valid_rect_outputs(args: &[Arg]) -> Vec<u32> {
    let has_rects = |k: &ast::ParamKind| match k {
        ast::ParamKind::Output(_) => true,
        ast::ParamKind::Object { output: true, .. } => {
            matches!(k.view_name().as_deref(), Some("Image" | "Pyramid" | "ObjectArray"))
        }
        _ => false,
    };
    params(args).iter().enumerate().filter(|(_, p)| has_rects(&p.kind)).map(|(i, _)| i as u32).collect()
}

/// Expand `#[user_kernel(args)]` or `#[target_kernel(args)]` on `f` (or the fallback with every
/// error).
pub(crate) fn user_kernel(args: TokenStream, f: ItemFn, entry: Entry) -> TokenStream {
    crate::internals::run(
        &f,
        |cx| {
            let attrs = parse_attrs(cx, args, entry, &f);
            let (local, memory) = match &attrs {
                Ok(a) => (a.local.as_ref(), &a.memory[..]),
                Err(_) => (None, &[][..]),
            };
            let fn_args = ast::args(cx, Flavor::User, &f, local, memory);
            if let Ok(Attrs { valid_rect: Some(p), .. }) = &attrs
                && valid_rect_outputs(&fn_args).is_empty()
            {
                cx.error_spanned_by(
                    p,
                    "`valid_rect` gives output images their valid rectangles, and the kernel has no output \
                     image, pyramid or object array (`&mut ImageOut<T>`, `&mut Image<T>`, `&mut Pyramid<T>`, `&mut ObjectArray<V>`)",
                );
            }
            Ok((attrs?, fn_args))
        },
        |(attrs, fn_args)| expand(&f, attrs, fn_args),
    )
}
