//! # vx-macros — `#[tiling_kernel]`, `#[user_kernel]` and `vx_module!`
//!
//! Procedural macros that turn annotated Rust functions into registered kernels, and a crate into
//! a kernel module. Layout (after thiserror-impl and serde_derive): `lib.rs` entry points →
//! `tiling/` and `user/` (each: attribute model → checks → expansion) over one shared model in
//! `internals/` (the signature model `ast.rs`, the expansion pieces `expand.rs`, serde's `Ctxt`, and
//! `run`, the entry wrapper with its fallback); `module.rs` for `vx_module!`. Every error is
//! collected and reported at once, each pointing at its token.
//!
//! Use them through `vx_plugin_abi` (the kernel SDK), which re-exports them.

mod internals;
mod module;
mod tiling;
mod user;

use proc_macro::TokenStream;

/// Export this crate as a kernel module: `vx_module!(name = "vx_filters");` (optionally
/// `version = "1.2.0"`; default: the crate's version). Its `publish` registers every kernel the
/// crate defines with `#[tiling_kernel]` / `#[user_kernel]`; its `unpublish` removes them.
#[proc_macro]
pub fn vx_module(input: TokenStream) -> TokenStream {
    match syn::parse::<module::ModuleArgs>(input) {
        Ok(args) => module::expand(args).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turn a function into a tiling kernel (see the crate docs of `vx_plugin_abi` and the README's
/// "Write a kernel"). Grammar: `name = "..."`, `enumeration = N`, `block = WxH`,
/// `nbhd = (left, right, top, bottom)`, `border = Undefined | Self_`, `alias(a, b, dense | sparse)`
/// (repeatable; required for an `&mut InPlace<T>` argument, which stands for parameters `i` (input)
/// and `i + 1` (output) and reads and writes them in place when the runtime aliases them),
/// `tile_memory = N` (bytes per tile block), `flexible = path` (pair the annotated fast
/// function with a flexible one) or `flexible` (the annotated function is flexible-only), `any_size`
/// (images need not share a size).
#[proc_macro_attribute]
pub fn tiling_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => tiling::tiling_kernel(args.into(), f).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turn a function into a user (non-tiling) kernel. Its signature is the parameter list:
/// `&ImageIn<T>` (input image), `&mut ImageOut<T>` (output image), scalars by value, `Option<…>` of
/// those (optional parameters), and `&mut L` for typed local data. Keys: `name = "..."`, `enumeration = N`, `validate = path`
/// (`fn(&Validator) -> Result<(), AbiError>`, replaces the generated validator), `local = L`
/// (`L: Default`, created at init and dropped at deinit), `init = path` / `deinit = path`
/// (`fn(&mut L) -> Result<(), AbiError>`), `any_size`, `scratch(name = count, ..)` /
/// `persistent(name = count, ..)` (kernel memory: the argument `name: &mut [T]`), `control = path`,
/// `target = "name"` (see [`macro@target_kernel`]).
#[proc_macro_attribute]
pub fn user_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => user::user_kernel(args.into(), f, user::Entry::User).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Turn a function into a target kernel (TIOVX `tivxAddTargetKernelByName`): a user kernel
/// implemented on one target. Keys as `#[user_kernel]`, plus `target = "name"` (required),
/// `create = path` / `delete = path` (the target's init / deinit, on the node's target, over
/// `local = L`), `control = path` (`fn(&Controller, &mut L) -> Result<(), AbiError>` with `local`,
/// else `fn(&Controller) -> ...`; commands sent with `Node::send_command`, serialized with process).
#[proc_macro_attribute]
pub fn target_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => user::user_kernel(args.into(), f, user::Entry::Target).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
