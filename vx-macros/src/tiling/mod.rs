//! `#[tiling_kernel(...)]`: entry → model ([`attr`] and the shared signature model) → validate
//! ([`valid`]) → expand ([`expand`]).

pub(crate) mod attr;
pub(crate) mod expand;
pub(crate) mod valid;

use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::internals::ast::{self, Flavor};

/// Expand `#[tiling_kernel(args)]` on `f` (or the fallback with every error).
pub(crate) fn tiling_kernel(args: TokenStream, f: ItemFn) -> TokenStream {
    crate::internals::run(
        &f,
        |cx| {
            let attrs = attr::Attrs::parse(cx, args);
            let flavor = if ast::is_row_form(&f) { Flavor::Rows } else { Flavor::Tiling };
            let fn_args = ast::args(cx, flavor, &f, None, &[]);
            let attrs = attrs?;
            valid::check(cx, &f, &attrs, &fn_args);
            Ok((attrs, fn_args))
        },
        |(attrs, fn_args)| expand::tiling_kernel(&f, attrs, fn_args),
    )
}
