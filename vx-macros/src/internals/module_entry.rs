//! Does the crate being compiled export a module entry point? A cdylib whose kernels are never
//! published by a `vx_module!` builds fine and is refused by the host at load ("no vx-rs root
//! descriptor"); the kernel macros say so at compile time instead.
//!
//! When the crate being compiled is the library target of a package whose `[lib] crate-type` has
//! `cdylib` (`CARGO_MANIFEST_DIR/Cargo.toml`, parsed as TOML: a `[lib]` table, an inline table or
//! dotted `lib.` keys), its module tree is read from the library's
//! root file through `mod name;` declarations (`name.rs`, `name/mod.rs`, `#[path]`) and searched
//! for a `vx_module!` invocation (or a `macro_rules!` of the crate that names it, or a hand-written
//! `#[export_root_module]`) by `source::CrateSource`; an `include!` of generated code makes the
//! search inconclusive. Without one, the crate's first kernel in source order that no `#[cfg…]`
//! may leave out — one error per crate, not one per kernel — reports it.
//! The finding is cached per process, refreshed when a file's size or modification time changes.
//!
//! Best effort like [`super::placement`]: anything unreadable means no finding.

use std::path::PathBuf;

use super::ctxt::Ctxt;
use super::source::{CrateSource, same_file};

/// Report a cdylib crate without `vx_module!` at its first kernel.
pub(crate) fn check(cx: &Ctxt, f: &syn::ItemFn) {
    let Some(lib) = cdylib_being_compiled() else { return };
    if !proc_macro::is_available() {
        return;
    }
    let ident = &f.sig.ident;
    let Some(here) = ident.span().unwrap().local_file() else { return };
    let source = CrateSource::cached(&lib.root, true);
    if source.entry || !source.complete {
        return;
    }
    // The first kernel that is surely compiled (one under `#[cfg…]` may not be), else the first.
    let Some(first) = source.kernels.iter().find(|k| !k.cfg).or(source.kernels.first()) else { return };
    if *ident == first.ident && same_file(&first.file, &here) {
        cx.error_spanned_by(
            ident,
            format!(
                "this crate builds a kernel module (`crate-type = [\"cdylib\"]`) but has no `vx_module!`: \
                 without the entry point the host refuses the library and none of its kernels load — add \
                 `vx_plugin_abi::vx_module!(name = \"{}\");` to {}",
                lib.name, lib.root_shown
            ),
        );
    }
}

struct Lib {
    name: String,
    root: PathBuf,
    root_shown: String,
}

/// The library being compiled, when cargo compiles a package's cdylib library target.
fn cdylib_being_compiled() -> Option<Lib> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let crate_name = std::env::var("CARGO_CRATE_NAME").ok()?;
    let lib = lib_section(&std::fs::read_to_string(dir.join("Cargo.toml")).ok()?)?;
    if !lib.cdylib {
        return None;
    }
    let name = match lib.name {
        Some(n) => n,
        None => std::env::var("CARGO_PKG_NAME").ok()?.replace('-', "_"),
    };
    if name != crate_name {
        return None; // an example, a test or a binary of the package
    }
    let root_shown = lib.path.unwrap_or_else(|| "src/lib.rs".to_string());
    Some(Lib { name, root: dir.join(&root_shown), root_shown })
}

/// What the manifest's `[lib]` says, in whatever TOML form it is written (a table, an inline
/// table, dotted keys).
#[derive(Debug, PartialEq, Eq)]
struct LibSection {
    /// `crate-type` holds `"cdylib"`.
    cdylib: bool,
    name: Option<String>,
    path: Option<String>,
}

/// The manifest's `[lib]` (`None`: no such table, or the manifest is not TOML that parses).
fn lib_section(manifest: &str) -> Option<LibSection> {
    let manifest: toml::Table = manifest.parse().ok()?;
    let lib = manifest.get("lib")?.as_table()?;
    let text = |key: &str| lib.get(key).and_then(toml::Value::as_str).map(str::to_string);
    // `crate_type` is cargo's older spelling, still accepted.
    let types = lib.get("crate-type").or_else(|| lib.get("crate_type")).and_then(toml::Value::as_array);
    Some(LibSection {
        cdylib: types.is_some_and(|t| t.iter().any(|t| t.as_str() == Some("cdylib"))),
        name: text("name"),
        path: text("path"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(manifest: &str) -> Option<LibSection> {
        lib_section(manifest)
    }

    fn cdylib(name: Option<&str>, path: Option<&str>) -> Option<LibSection> {
        Some(LibSection { cdylib: true, name: name.map(str::to_string), path: path.map(str::to_string) })
    }

    #[test]
    fn the_lib_table_is_read_with_arrays_over_lines_comments_and_either_quote() {
        let manifest = r#"
[package]
name = "x"
crate-type = ["rlib"]   # not the lib table

[lib]
name = 'my_kernels'
crate-type = [
    "rlib",   # both
    "cdylib",
]
path = "src/kernels.rs"

[dependencies]
path = "nope"
"#;
        assert_eq!(lib(manifest), cdylib(Some("my_kernels"), Some("src/kernels.rs")));
    }

    #[test]
    fn dotted_keys_and_an_inline_table_are_the_lib_table_too() {
        // The hand scan of `[lib]` lines missed both forms.
        let dotted = "[package]\nname = \"x\"\n\nlib.crate-type = [\"cdylib\"]\nlib.name = \"k\"\n";
        assert_eq!(lib(dotted), None, "dotted under [package] is package.lib, not the lib table");
        let dotted = "lib.crate-type = [\"cdylib\"]\nlib.name = \"k\"\n\n[package]\nname = \"x\"\n";
        assert_eq!(lib(dotted), cdylib(Some("k"), None));
        let inline = "lib = { crate-type = [\"cdylib\", \"rlib\"], path = \"src/m.rs\" }\n[package]\nname = \"x\"\n";
        assert_eq!(lib(inline), cdylib(None, Some("src/m.rs")));
        let underscore = "[lib]\ncrate_type = [\"cdylib\"]\n";
        assert_eq!(lib(underscore), cdylib(None, None));
    }

    #[test]
    fn a_lib_that_is_no_cdylib_or_no_lib_table_is_no_module() {
        let not_cdylib = |m: &str| lib(m).is_none_or(|l| !l.cdylib);
        assert!(not_cdylib("[package]\nname = \"x\"\n"), "no [lib]");
        assert!(not_cdylib("[lib]\nname = \"x\"\n"), "no crate-type: an rlib");
        assert!(not_cdylib("[lib]\ncrate-type = [\"rlib\", \"staticlib\"]\n"));
        assert!(not_cdylib("lib = { crate-type = [\"dylib\"] }\n"), "dylib is not cdylib");
        assert!(not_cdylib("[lib]\ncrate-type = \"cdylib\"\n"), "not an array: cargo refuses it");
        assert!(not_cdylib("[package]\ncrate-type = [\"cdylib\"]\n"), "not in the lib table");
        assert!(not_cdylib("# crate-type = [\"cdylib\"]\n[lib]\n"), "a comment");
        assert_eq!(lib("[lib\ncrate-type = [\"cdylib\"]\n"), None, "not TOML");
    }

    #[test]
    fn a_macro_that_wraps_vx_module_counts_as_the_entry() {
        let body: proc_macro2::TokenStream = "() => { ::vx_plugin_abi::vx_module!(name = \"m\"); }".parse().unwrap();
        assert!(super::super::source::mentions(body, "vx_module"));
        let other: proc_macro2::TokenStream = "() => { fn vx_module_root() {} }".parse().unwrap();
        assert!(!super::super::source::mentions(other, "vx_module"));
    }
}
