//! The layer test: vx-rs's `crate::…` paths point down the layers, never up, and the only import
//! cycle between files is inside `graph/` (graph, node, verify, execute and tiling work on one
//! another's state). ARCHITECTURE.md draws the layers; this test keeps the drawing true.
//!
//! Layers, bottom to top (a file may import its own folder and any lower layer):
//! `error` < `support` < `shared` < `data` < `kernel` < `module` < `context` < `graph`, `watcher`
//! < `lib.rs`. Test code (from a file's first `#[cfg(test)]` on) may use the public API and is
//! not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("support", 1),
    ("shared", 2),
    ("data", 3),
    ("kernel", 4),
    ("module", 5),
    ("context", 6),
    ("graph", 7),
    ("watcher", 7),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `graph/verify/mod.rs` → `["graph", "verify"]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("under src");
    let mut segs: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let last = segs.pop().expect("file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        segs.push(stem.to_owned());
    }
    segs
}

/// The code of a file without comments and without its test modules.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).expect("read");
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Every `crate::a::b::…` path in `code`, as segments (a `{` or an item name ends it).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `my_crate::`
        }
        let mut segs = Vec::new();
        let mut s = rest;
        loop {
            let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
            if end == 0 {
                break;
            }
            segs.push(s[..end].to_owned());
            if s[end..].starts_with("::") {
                s = &s[end + 2..];
            } else {
                break;
            }
        }
        out.push(segs);
    }
    out
}

fn layer(top: &str) -> Option<u32> {
    LAYERS.iter().find(|(n, _)| *n == top).map(|(_, l)| *l)
}

/// The file (as a module path) a `crate::` path lands in: its longest prefix that is a module.
fn target_module(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p)).unwrap_or_default()
}

#[test]
fn imports_point_down_the_layers() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let mut violations = Vec::new();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for f in &files {
        let from = module_of(f);
        let Some(top) = from.first() else { continue }; // lib.rs: the top, may import anything
        let Some(from_layer) = layer(top) else {
            violations.push(format!("{}: top-level module '{top}' has no layer; add it to LAYERS", f.display()));
            continue;
        };
        for path in crate_paths(&code(f)) {
            let Some(first) = path.first() else {
                violations
                    .push(format!("{}: `crate::{{…}}` imports from the crate root; name the module", f.display()));
                continue;
            };
            let Some(to_layer) = layer(first) else {
                violations.push(format!(
                    "{}: `crate::{}` is a crate-root re-export; import it from its defining module",
                    f.display(),
                    path.join("::")
                ));
                continue;
            };
            if first != top && to_layer >= from_layer {
                violations.push(format!(
                    "{}: imports `crate::{}`, which is not below '{top}' (layer {from_layer} → {to_layer})",
                    f.display(),
                    path.join("::")
                ));
            }
            let to = target_module(&path, &modules);
            if to != from {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    assert!(violations.is_empty(), "layer violations:\n{}", violations.join("\n"));

    // File-level cycles: allowed only inside graph/.
    for cycle in cycles(&edges) {
        assert!(
            cycle.iter().all(|m| m.first().map(String::as_str) == Some("graph")),
            "an import cycle outside graph/: {}",
            cycle.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" → ")
        );
    }
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct T<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on: BTreeSet<Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit(t: &mut T<'_>, v: &Vec<String>) {
        let i = t.index.len();
        t.index.insert(v.clone(), i);
        t.low.insert(v.clone(), i);
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        for w in t.edges.get(v).into_iter().flatten() {
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[v].min(t.low[w]);
                t.low.insert(v.clone(), l);
            } else if t.on.contains(w) {
                let l = t.low[v].min(t.index[w]);
                t.low.insert(v.clone(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = t.stack.pop().expect("on stack");
                t.on.remove(&w);
                let done = &w == v;
                scc.push(w);
                if done {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    let nodes: Vec<Vec<String>> = edges.keys().cloned().collect();
    for v in &nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn the_path_reader_sees_grouped_and_nested_paths() {
    let paths =
        crate_paths("use crate::kernel::signature::{A, B};\nlet x = crate::graph::tiling::run(y); my_crate::no;");
    assert_eq!(paths, vec![vec!["kernel", "signature"], vec!["graph", "tiling", "run"]]);
}

/// Crate-wide items (`pub(crate)`, in code outside tests) at most: pinned at the count after the
/// compiler-driven narrowing of 2026-11-26 (each `pub(crate)` tried as `pub(super)`, kept wide
/// only where a sibling folder uses it), so it only goes down. New items are `pub(super)` unless
/// another folder needs them (issue 28: "`pub(super)` by default").
const MOST_CRATE_WIDE: usize = 429;

#[test]
fn crate_wide_items_do_not_creep_back() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let count: usize = files.iter().map(|f| code(f).matches("pub(crate)").count()).sum();
    println!("pub(crate) in vx-core's code: {count}");
    assert!(
        count <= MOST_CRATE_WIDE,
        "{count} `pub(crate)` in vx-core's code (at most {MOST_CRATE_WIDE}): make new items `pub(super)` unless \
         a sibling folder needs them"
    );
}
