//! # vx-macros — `#[tiling_kernel]`, `#[user_kernel]` and `vx_module!`
//!
//! Procedural macros that turn annotated Rust functions into registered kernels, and a crate into
//! a kernel module. Layout (after thiserror-impl): `lib.rs` entry points → `attr.rs` / `ast.rs`
//! build a model → `valid.rs` checks it → `expand.rs` emits code; every error is collected
//! (`ctxt.rs`, serde's `Ctxt`) and reported at once, each pointing at its token.
//!
//! Use them through `vx_plugin_abi` (the kernel SDK), which re-exports them.

mod ctxt;
mod module;

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
