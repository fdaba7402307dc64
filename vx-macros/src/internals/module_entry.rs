//! Does the crate being compiled export a module entry point? A cdylib whose kernels are never
//! published by a `vx_module!` builds fine and is refused by the host at load ("no vx-rs root
//! descriptor"); the kernel macros say so at compile time instead.
//!
//! When the crate being compiled is the library target of a package whose `[lib] crate-type` has
//! `cdylib` (`CARGO_MANIFEST_DIR/Cargo.toml`, parsed as TOML: a `[lib]` table, an inline table or
//! dotted `lib.` keys), its module tree is read from the library's
//! root file through `mod name;` declarations (`name.rs`, `name/mod.rs`, `#[path]`) and searched
//! for a `vx_module!` invocation (or a `macro_rules!` of the crate that names it, or a hand-written
//! `#[export_root_module]`); an `include!` of generated code makes the search inconclusive. Without one, the
//! crate's first kernel in source order — one error per crate, not one per kernel — reports it.
//! The finding is cached per process, refreshed when a file's size or modification time changes.
//!
//! Best effort like [`super::placement`]: anything unreadable means no finding.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use syn::visit::Visit;

use super::ctxt::Ctxt;
use super::source::{Stamp, has_kernel_attr, parse, stamp};

/// The files read for a crate (with their size and modification time), and its first kernel
/// (file, function name) when the crate has no entry point.
struct Finding {
    stamps: Vec<(PathBuf, Stamp)>,
    missing_entry_at: Option<(PathBuf, String)>,
}

static CACHE: Mutex<Option<HashMap<PathBuf, Finding>>> = Mutex::new(None);

/// Report a cdylib crate without `vx_module!` at its first kernel.
pub(crate) fn check(cx: &Ctxt, f: &syn::ItemFn) {
    let Some(lib) = cdylib_being_compiled() else { return };
    if !proc_macro::is_available() {
        return;
    }
    let ident = &f.sig.ident;
    let Some(here) = ident.span().unwrap().local_file() else { return };
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    let fresh = cache.get(&lib.root).is_some_and(|f| f.stamps.iter().all(|(p, s)| stamp(p) == *s));
    if !fresh {
        cache.insert(lib.root.clone(), read_crate(&lib.root));
    }
    let Some((file, first)) = &cache[&lib.root].missing_entry_at else { return };
    if *ident == first && same_file(file, &here) {
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

/// True when `tokens` (a macro's body) name `vx_module` anywhere.
fn mentions_vx_module(tokens: proc_macro2::TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == "vx_module",
        proc_macro2::TokenTree::Group(g) => mentions_vx_module(g.stream()),
        _ => false,
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
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

/// Read the module tree from `root`: the files read, and the first kernel if no entry point.
fn read_crate(root: &Path) -> Finding {
    let mut walk = Tree {
        files: Vec::new(),
        complete: true,
        entry: false,
        first_kernel: None,
        dir: PathBuf::new(),
        file: PathBuf::new(),
    };
    walk.read(root.to_path_buf(), root.parent().map(Path::to_path_buf).unwrap_or_default());
    let stamps = walk.files.iter().map(|p| (p.clone(), stamp(p))).collect();
    let missing_entry_at = if walk.entry || !walk.complete { None } else { walk.first_kernel };
    Finding { stamps, missing_entry_at }
}

struct Tree {
    files: Vec<PathBuf>,
    /// False when a file could not be read or parsed: the search proves nothing then.
    complete: bool,
    entry: bool,
    first_kernel: Option<(PathBuf, String)>,
    /// Where `mod name;` inside the current module finds its file.
    dir: PathBuf,
    file: PathBuf,
}

impl Tree {
    fn read(&mut self, file: PathBuf, dir: PathBuf) {
        if self.files.contains(&file) {
            return;
        }
        self.files.push(file.clone());
        let Some(parsed) = parse(&file) else {
            self.complete = false;
            return;
        };
        let (outer_dir, outer_file) = (std::mem::replace(&mut self.dir, dir), std::mem::replace(&mut self.file, file));
        self.visit_file(&parsed);
        self.dir = outer_dir;
        self.file = outer_file;
    }
}

impl<'ast> Visit<'ast> for Tree {
    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        let Some(name) = m.mac.path.segments.last().map(|s| s.ident.to_string()) else { return };
        match name.as_str() {
            "vx_module" => self.entry = true,
            // A macro of the crate's own that wraps `vx_module!` (its body names it).
            "macro_rules" if mentions_vx_module(m.mac.tokens.clone()) => self.entry = true,
            // Code this walk cannot see (generated files): it may hold the entry point.
            "include" => self.complete = false,
            _ => {}
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "export_root_module")) {
            self.entry = true;
        }
        if self.first_kernel.is_none() && has_kernel_attr(&f.attrs) {
            self.first_kernel = Some((self.file.clone(), f.sig.ident.to_string()));
        }
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        let path_attr = m.attrs.iter().find_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        match (&m.content, path_attr) {
            (Some(_), _) => {
                let inner = self.dir.join(&name);
                let outer = std::mem::replace(&mut self.dir, inner);
                syn::visit::visit_item_mod(self, m);
                self.dir = outer;
            }
            (None, Some(p)) => {
                let file = self.file.parent().unwrap_or(Path::new("")).join(p);
                let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
                self.read(file, dir);
            }
            (None, None) => {
                let flat = self.dir.join(format!("{name}.rs"));
                let file = if flat.exists() { flat } else { self.dir.join(&name).join("mod.rs") };
                let dir = self.dir.join(&name);
                self.read(file, dir);
            }
        }
    }
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
        assert!(mentions_vx_module(body));
        let other: proc_macro2::TokenStream = "() => { fn vx_module_root() {} }".parse().unwrap();
        assert!(!mentions_vx_module(other));
    }
}
