//! What both kernel attributes share (serde_derive's `internals/` idea): the error collector
//! ([`ctxt`]), the signature model with its classification ([`ast`]) and the expansion pieces built
//! from it ([`expand`]: parameter bindings, the signature constant, `add_parameter` calls, name and
//! enumeration), where the function sits in its file ([`placement`]), whether a cdylib crate
//! has its `vx_module!` ([`module_entry`]), whether a kernel name and `vx_module!` are the crate's
//! only ones ([`unique`]), all over the source-file helpers of `source`, and the entry-point
//! wrapper with its fallback ([`run`]).

pub(crate) mod ast;
pub(crate) mod ctxt;
pub(crate) mod expand;
pub(crate) mod module_entry;
pub(crate) mod placement;
mod source;
pub(crate) mod unique;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use ctxt::Ctxt;

/// Run an attribute macro on `f`: `model` collects every error into the context (and returns the
/// model when the attribute parsed at all); with no error, `expand` emits the code. On errors the
/// fallback keeps the function (so its body is still checked and no "unused" noise follows; with a
/// refused pixel type, see [`ast::fallback_fn`]) and reports every error at once.
pub(crate) fn run<M>(
    f: &ItemFn,
    model: impl FnOnce(&Ctxt) -> syn::Result<M>,
    expand: impl FnOnce(&M) -> TokenStream,
) -> TokenStream {
    let cx = Ctxt::new();
    let m = model(&cx);
    let mut errors = cx.check().err();
    if let Err(e) = &m {
        match &mut errors {
            Some(all) => all.combine(e.clone()),
            None => errors = Some(e.clone()),
        }
    }
    match (errors, m) {
        (None, Ok(m)) => expand(&m),
        (Some(e), _) | (None, Err(e)) => {
            let err = e.to_compile_error();
            let f = ast::fallback_fn(f);
            quote!(#[allow(dead_code)] #f #err)
        }
    }
}
