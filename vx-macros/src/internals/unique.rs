//! Once per crate: a kernel name, and `vx_module!`. The host refuses a module with two kernels of
//! one name at publish, and two `vx_module!`s are two definitions of the module's exported symbols
//! (a linker clash, after `cargo check` passed). An attribute sees only its own item, so both
//! checks read the crate's module tree from its root file ([`CrateSource`], cached per process)
//! and report the second occurrence in source order, naming the first.
//!
//! Which occurrence is the one being expanded: the one in this file with this function's name (or
//! the `vx_module!` in this file); when a file holds two (`mod a { fn k }`, `mod b { fn k }`), the
//! file is read again with a mark put at the span's line and column. An occurrence under
//! `#[cfg…]` may not be compiled, so it is never taken as the first. Best effort: no root file, an
//! unreadable file or an occurrence the reading does not find means no finding; each kernel's
//! crate-root macro (see `expand::unique_name_check`) still makes a duplicate name a compile error.

use std::path::{Path, PathBuf};

use proc_macro2::Span;

use super::ctxt::Ctxt;
use super::source::{CrateSource, crate_root, same_file, text_with_mark};

/// The mark put before the occurrence being expanded.
const MARK: &str = "__vx_self_";

/// The crate's reading: from its root file, or from `here` alone when the root is unknown.
fn crate_source(here: &Path) -> (PathBuf, bool) {
    match crate_root() {
        Some(root) => (root, true),
        None => (here.to_path_buf(), false),
    }
}

/// `crate::a::b::item`.
fn item_path(module: &[String], item: &str) -> String {
    ["crate"].into_iter().chain(module.iter().map(String::as_str)).chain([item]).collect::<Vec<_>>().join("::")
}

/// "this file", or `file` (relative to the current directory, as rustc shows paths).
fn which_file(file: &Path, here: &Path) -> String {
    if same_file(file, here) {
        return "this file".to_string();
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    file.strip_prefix(&cwd).unwrap_or(file).display().to_string()
}

/// The kernel named `full` that `f` defines is not the crate's first of that name: report it at
/// `at` (the `name = "…"` literal, or the function's name for a default name).
pub(crate) fn check_kernel(cx: &Ctxt, f: &syn::ItemFn, full: &str, default_name: bool, at: Span) {
    if !proc_macro::is_available() {
        return;
    }
    let ident = &f.sig.ident;
    let span = ident.span().unwrap();
    let Some(here) = span.local_file() else { return };
    let (root, follow) = crate_source(&here);
    let source = CrateSource::cached(&root, follow);
    let crate_name = std::env::var("CARGO_CRATE_NAME").unwrap_or_default();
    let name_of = |k: &super::source::KernelSite| k.name.clone().unwrap_or_else(|| format!("{crate_name}.{}", k.ident));
    let same: Vec<usize> = (0..source.kernels.len()).filter(|&i| name_of(&source.kernels[i]) == full).collect();
    if same.len() < 2 {
        return;
    }
    let this = |k: &super::source::KernelSite| *ident == k.ident && same_file(&k.file, &here);
    let me = match same.iter().filter(|&&i| this(&source.kernels[i])).collect::<Vec<_>>()[..] {
        [] => return,
        [&i] => i,
        _ => {
            // Twins in one file: read it again with this one marked (the order is unchanged).
            let name = ident.to_string();
            let Some(text) = text_with_mark(&here, span.line(), span.column(), &name, MARK) else { return };
            let marked = CrateSource::read(&root, follow, Some((&here, text, MARK)));
            match marked.kernels.iter().position(|k| k.marked) {
                Some(i) if marked.kernels.len() == source.kernels.len() => i,
                _ => return,
            }
        }
    };
    let Some(&first) = same.iter().find(|&&i| i < me && !source.kernels[i].cfg) else { return };
    let first = &source.kernels[first];
    let (default, fix) = match default_name {
        true => (" (the default, `<crate>.<function>`)", "give one of them `name = \"…\"`"),
        false => ("", "give this one another `name = \"…\"`"),
    };
    cx.syn_error_at(
        at,
        format!(
            "kernel name `{full}`{default} is taken by `{}` ({}): a module's kernels have one name each — {fix}",
            item_path(&first.module, &first.ident),
            which_file(&first.file, &here),
        ),
    );
}

/// The `vx_module!` being expanded (`first_token`: its first argument) is not the crate's first.
pub(crate) fn check_module(cx: &Ctxt, first_token: &proc_macro2::TokenTree) {
    if !proc_macro::is_available() {
        return;
    }
    let span = first_token.span().unwrap();
    let Some(here) = span.local_file() else { return };
    let (root, follow) = crate_source(&here);
    let source = CrateSource::cached(&root, follow);
    if source.modules.len() < 2 {
        return;
    }
    let mine: Vec<usize> = (0..source.modules.len()).filter(|&i| same_file(&source.modules[i].file, &here)).collect();
    let me = match mine[..] {
        [] => return,
        [i] => i,
        _ => {
            let token = first_token.to_string();
            let Some(text) = text_with_mark(&here, span.line(), span.column(), &token, &format!("{MARK} ")) else {
                return;
            };
            let marked = CrateSource::read(&root, follow, Some((&here, text, MARK)));
            match marked.modules.iter().position(|m| m.marked) {
                Some(i) if marked.modules.len() == source.modules.len() => i,
                _ => return,
            }
        }
    };
    let Some(first) = source.modules[..me].iter().find(|m| !m.cfg) else { return };
    let place = match &first.module[..] {
        [] => "at the crate root".to_string(),
        m => format!("in `{}`", m.join("::")),
    };
    cx.syn_error_at(
        Span::call_site(),
        format!(
            "`vx_module!` is already invoked in this crate: `vx_module!({})` {place} ({}); a crate is one kernel \
             module with one entry point — remove this invocation",
            first.args,
            which_file(&first.file, &here),
        ),
    );
}
