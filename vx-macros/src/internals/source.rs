//! Reading the crate's own source files from a macro (leaf helpers of [`super::placement`],
//! [`super::module_entry`] and [`super::unique`]): a file's stamp for their caches, a file parsed,
//! whether an item carries one of the kernel attributes, the crate's root file, and the crate's
//! module tree read from it ([`CrateSource`]: every kernel and every `vx_module!` in source order).
//!
//! An item sees only itself; these readings let a macro see its neighbours. Best effort: anything
//! unreadable means no finding, and the callers stay silent then.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A file's size and modification time (`None`: unreadable): a cached reading of the file is
/// fresh while its stamp is unchanged.
pub(super) type Stamp = Option<(u64, Option<SystemTime>)>;

pub(super) fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path).ok().map(|m| (m.len(), m.modified().ok()))
}

/// The file parsed (`None`: unreadable or not Rust that parses).
pub(super) fn parse(path: &Path) -> Option<syn::File> {
    syn::parse_file(&std::fs::read_to_string(path).ok()?).ok()
}

/// True when `attrs` hold `#[tiling_kernel]`, `#[user_kernel]` or `#[target_kernel]` (any path).
pub(super) fn has_kernel_attr(attrs: &[syn::Attribute]) -> bool {
    kernel_attr(attrs).is_some()
}

fn kernel_attr(attrs: &[syn::Attribute]) -> Option<&syn::Attribute> {
    attrs.iter().find(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "tiling_kernel" | "user_kernel" | "target_kernel"))
    })
}

/// `name = "…"` among a kernel attribute's arguments (top level only: `alias(…)` and the like
/// hold no name).
fn name_key(attr: &syn::Attribute) -> Option<String> {
    let syn::Meta::List(list) = &attr.meta else { return None };
    let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    tokens.windows(3).find_map(|w| match w {
        [TokenTree::Ident(k), TokenTree::Punct(eq), TokenTree::Literal(l)] if k == "name" && eq.as_char() == '=' => {
            syn::parse2::<syn::LitStr>(TokenTree::Literal(l.clone()).into()).ok().map(|s| s.value())
        }
        _ => None,
    })
}

fn has_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr"))
}

/// The root file of the crate being compiled: rustc's one input file, from its command line (the
/// macro runs inside rustc). `None` elsewhere (rust-analyzer runs macros in a server of its own).
pub(super) fn crate_root() -> Option<PathBuf> {
    let mut inputs = std::env::args_os().skip(1).filter_map(|a| {
        let a = PathBuf::from(a);
        let is_input = a.extension().is_some_and(|e| e == "rs") && !a.to_string_lossy().starts_with('-');
        is_input.then_some(a)
    });
    let root = inputs.next()?;
    if inputs.next().is_some() || !root.is_file() {
        return None;
    }
    Some(std::env::current_dir().ok()?.join(root))
}

/// `path`'s text with `insert` put before the token that starts at `line` / `column` (one-based,
/// columns in characters, as `proc_macro::Span` counts them) — when the text there is `token`.
pub(super) fn text_with_mark(path: &Path, line: usize, column: usize, token: &str, insert: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line_start: usize = text.split_inclusive('\n').take(line.checked_sub(1)?).map(str::len).sum();
    let at = line_start + text[line_start..].char_indices().nth(column.checked_sub(1)?)?.0;
    text[at..].starts_with(token).then(|| format!("{}{insert}{}", &text[..at], &text[at..]))
}

/// A function with a kernel attribute, met in the crate's source.
pub(super) struct KernelSite {
    pub(super) file: PathBuf,
    /// Its module's path from the crate root (`a::b`; empty at the root).
    pub(super) module: Vec<String>,
    pub(super) ident: String,
    /// Its attribute's `name = "…"`, when given.
    pub(super) name: Option<String>,
    /// It, or a module around it, carries `#[cfg…]`: it may not be compiled at all.
    pub(super) cfg: bool,
    /// Its name starts with the mark of [`CrateSource::read`].
    pub(super) marked: bool,
}

/// A `vx_module!` invocation met in the crate's source.
pub(super) struct EntrySite {
    pub(super) file: PathBuf,
    pub(super) module: Vec<String>,
    /// Its arguments as written.
    pub(super) args: String,
    pub(super) cfg: bool,
    /// Its arguments start with the mark.
    pub(super) marked: bool,
}

/// The crate's module tree as read from a root file.
pub(super) struct CrateSource {
    /// The files read, with their stamps.
    pub(super) stamps: Vec<(PathBuf, Stamp)>,
    /// False when a file could not be read or parsed, or an `include!` brings in code this
    /// reading cannot see: an absence proves nothing then.
    pub(super) complete: bool,
    /// A module entry point: `vx_module!`, a `macro_rules!` of the crate that names it, or a
    /// hand-written `#[export_root_module]`.
    pub(super) entry: bool,
    pub(super) kernels: Vec<KernelSite>,
    pub(super) modules: Vec<EntrySite>,
}

type Cache = HashMap<(PathBuf, bool), Arc<CrateSource>>;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

impl CrateSource {
    /// The crate read from `root`, following `mod name;` into other files when `follow_mods`
    /// (`root` is the crate's root file), cached per process while no file read changed.
    pub(super) fn cached(root: &Path, follow_mods: bool) -> Arc<CrateSource> {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let cache = cache.get_or_insert_with(HashMap::new);
        let key = (root.to_path_buf(), follow_mods);
        if let Some(found) = cache.get(&key)
            && found.stamps.iter().all(|(p, s)| stamp(p) == *s)
        {
            return found.clone();
        }
        let found = Arc::new(CrateSource::read(root, follow_mods, None));
        cache.insert(key, found.clone());
        found
    }

    /// The crate read from `root`; `marked`: one file's text to read instead of the file (with a
    /// mark put in by [`text_with_mark`]).
    pub(super) fn read(root: &Path, follow_mods: bool, marked: Option<(&Path, String, &str)>) -> CrateSource {
        let mut walk = Tree {
            source: CrateSource {
                stamps: Vec::new(),
                complete: true,
                entry: false,
                kernels: Vec::new(),
                modules: Vec::new(),
            },
            files: Vec::new(),
            follow_mods,
            marked: marked.map(|(p, text, mark)| (p.to_path_buf(), text, mark.to_string())),
            dir: PathBuf::new(),
            file: PathBuf::new(),
            module: Vec::new(),
            cfg: 0,
        };
        walk.read(root.to_path_buf(), root.parent().map(Path::to_path_buf).unwrap_or_default());
        walk.source.stamps = walk.files.iter().map(|p| (p.clone(), stamp(p))).collect();
        walk.source
    }
}

/// True when `tokens` (a macro's body) name `ident` anywhere.
pub(super) fn mentions(tokens: TokenStream, ident: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == ident,
        TokenTree::Group(g) => mentions(g.stream(), ident),
        _ => false,
    })
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

struct Tree {
    source: CrateSource,
    files: Vec<PathBuf>,
    follow_mods: bool,
    /// (file, its text to read instead, the mark).
    marked: Option<(PathBuf, String, String)>,
    /// Where `mod name;` inside the current module finds its file.
    dir: PathBuf,
    file: PathBuf,
    module: Vec<String>,
    /// How many of the items around the current one carry `#[cfg…]`.
    cfg: usize,
}

impl Tree {
    fn read(&mut self, file: PathBuf, dir: PathBuf) {
        if self.files.contains(&file) {
            return;
        }
        self.files.push(file.clone());
        let parsed = match &self.marked {
            Some((p, text, _)) if same_file(p, &file) => syn::parse_file(text).ok(),
            _ => parse(&file),
        };
        let Some(parsed) = parsed else {
            self.source.complete = false;
            return;
        };
        let (outer_dir, outer_file) = (std::mem::replace(&mut self.dir, dir), std::mem::replace(&mut self.file, file));
        self.visit_file(&parsed);
        self.dir = outer_dir;
        self.file = outer_file;
    }

    fn mark(&self) -> Option<&str> {
        self.marked.as_ref().map(|(_, _, m)| m.as_str())
    }
}

impl<'ast> Visit<'ast> for Tree {
    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        let Some(name) = m.mac.path.segments.last().map(|s| s.ident.to_string()) else { return };
        match name.as_str() {
            "vx_module" => {
                self.source.entry = true;
                let first = m.mac.tokens.clone().into_iter().next();
                let marked = matches!((first, self.mark()), (Some(TokenTree::Ident(i)), Some(mark)) if i == mark);
                self.source.modules.push(EntrySite {
                    file: self.file.clone(),
                    module: self.module.clone(),
                    args: m.mac.tokens.to_string(),
                    cfg: self.cfg > 0 || has_cfg(&m.attrs),
                    marked,
                });
            }
            // A macro of the crate's own that wraps `vx_module!` (its body names it).
            "macro_rules" if mentions(m.mac.tokens.clone(), "vx_module") => self.source.entry = true,
            // Code this walk cannot see (generated files): it may hold the entry point.
            "include" => self.source.complete = false,
            _ => {}
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "export_root_module")) {
            self.source.entry = true;
        }
        if let Some(attr) = kernel_attr(&f.attrs) {
            let ident = f.sig.ident.to_string();
            let marked = self.mark().is_some_and(|m| ident.starts_with(m));
            self.source.kernels.push(KernelSite {
                file: self.file.clone(),
                module: self.module.clone(),
                ident,
                name: name_key(attr),
                cfg: self.cfg > 0 || has_cfg(&f.attrs),
                marked,
            });
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
        let cfg = has_cfg(&m.attrs);
        self.cfg += usize::from(cfg);
        self.module.push(name.clone());
        match (&m.content, path_attr) {
            (Some(_), _) => {
                let inner = self.dir.join(&name);
                let outer = std::mem::replace(&mut self.dir, inner);
                syn::visit::visit_item_mod(self, m);
                self.dir = outer;
            }
            (None, _) if !self.follow_mods => {}
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
        self.module.pop();
        self.cfg -= usize::from(cfg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_crate(files: &[(&str, &str)]) -> PathBuf {
        let dir = tempfile::Builder::new().prefix("vx-macros-source-").tempdir().unwrap().keep();
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_tree_lists_kernels_and_entries_in_source_order_across_files() {
        let dir = temp_crate(&[
            (
                "src/lib.rs",
                "#[tiling_kernel(block = 16x1, name = \"m.first\")] fn a() {}\nmod more;\n\
                 #[cfg(test)] mod tests { #[user_kernel] fn t() {} }\nvx_plugin_abi::vx_module!(name = \"m\");",
            ),
            ("src/more.rs", "mod deeper;\n#[vx_plugin_abi::user_kernel(alias(0, 1, dense))] fn b() {}"),
            ("src/more/deeper.rs", "#[target_kernel(target = \"dsp\")] fn c() {}\nvx_module!(name = \"again\");"),
        ]);
        let src = CrateSource::read(&dir.join("src/lib.rs"), true, None);
        assert!(src.complete && src.entry);
        let kernels: Vec<(String, Option<&str>, bool)> =
            src.kernels.iter().map(|k| (k.module.join("::") + "::" + &k.ident, k.name.as_deref(), k.cfg)).collect();
        assert_eq!(
            kernels,
            [
                ("::a".to_string(), Some("m.first"), false),
                ("more::deeper::c".to_string(), None, false),
                ("more::b".to_string(), None, false),
                ("tests::t".to_string(), None, true),
            ]
        );
        assert!(src.kernels[1].file.ends_with("src/more/deeper.rs"));
        let entries: Vec<(String, &str)> = src.modules.iter().map(|e| (e.module.join("::"), e.args.as_str())).collect();
        assert_eq!(entries, [("more::deeper".to_string(), "name = \"again\""), (String::new(), "name = \"m\"")]);

        // Not following `mod name;`: the one file.
        let one = CrateSource::read(&dir.join("src/lib.rs"), false, None);
        assert_eq!(one.kernels.len(), 2);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_mark_finds_the_one_item_among_twins() {
        let text = "mod a {\n    #[tiling_kernel] fn k() {}\n}\nmod b {\n    #[tiling_kernel] fn k() {}\n}\n";
        let dir = temp_crate(&[("lib.rs", text)]);
        let file = dir.join("lib.rs");
        // Line 5, column 22: the second `k`.
        assert_eq!(text_with_mark(&file, 5, 22, "k", "__vx_self"), None, "not the token there");
        let marked = text_with_mark(&file, 5, 25, "k", "__vx_self").expect("`k` is there");
        let src = CrateSource::read(&file, true, Some((&file, marked, "__vx_self")));
        let flags: Vec<(String, bool)> = src.kernels.iter().map(|k| (k.module.join("::"), k.marked)).collect();
        assert_eq!(flags, [("a".to_string(), false), ("b".to_string(), true)]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_unreadable_file_or_an_include_makes_the_reading_incomplete() {
        let dir = temp_crate(&[
            ("a.rs", "mod gone;\nfn f() {}"),
            ("b.rs", "include!(concat!(env!(\"OUT_DIR\"), \"/k.rs\"));"),
        ]);
        assert!(!CrateSource::read(&dir.join("a.rs"), true, None).complete);
        assert!(!CrateSource::read(&dir.join("b.rs"), true, None).complete);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
