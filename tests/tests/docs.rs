//! The documents a newcomer reads stay short and true: README.md and ARCHITECTURE.md within their
//! word budgets, every path the README, ARCHITECTURE.md, the book and the design notes name exists,
//! every book chapter is in the book's summary and compiled as doctests (`vx-core/src/lib.rs`,
//! module `book`), every design note says its date, status and code; and the first kernel's
//! walk-through (`plugins/vx-hello`, which the book includes) is built, loaded and run as the book's
//! application does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vx::*;
use vx_tests::{build_module, plugin_dir, workspace_root};

/// Every file and directory of the repository (relative, `/`-separated), build output excluded.
fn repo_paths() -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == "target" || name == ".git" {
                continue;
            }
            let p = e.path();
            out.insert(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            }
        }
    }
    let root = workspace_root();
    let mut out = BTreeSet::new();
    walk(&root, &root, &mut out);
    out
}

/// The documents checked: the README, ARCHITECTURE.md, the book's chapters and the design notes.
fn documents() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in ["docs/book/src", "docs/design"] {
        let mut md: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        md.sort();
        docs.extend(md);
    }
    docs
}

/// Names of files that the documented commands write (not in the repository), or that a text
/// names as an example: `vx new`'s crate, the demo's and `vx run`'s outputs, cargo-mutants' report.
const WRITTEN_BY_COMMANDS: &[&str] = &[
    "graph.toml",
    "data/input.png",
    "edges.png",
    "out.png",
    "o.png",
    "./o.png",
    "src/lib.rs",
    "src/tests.rs",
    ".cargo/config.toml",
    "mutants.out/",
    "caught.txt",
    "missed.txt",
    "timeout.txt",
    "unviable.txt",
    "outcomes.json",
    "log/",
    "diff/",
    "app/",
];

/// What a backticked span names, if it looks like a path of this repository: `a/b.rs`,
/// `a/b/`, `file.rs` (a `::item` or `:line` suffix dropped).
fn path_in(span: &str) -> Option<&str> {
    let span = span.split("::").next().unwrap();
    let span = match span.rsplit_once(':') {
        Some((p, line)) if line.chars().all(|c| c.is_ascii_digit()) => p,
        _ => span,
    };
    let plain = span.chars().all(|c| c.is_ascii_alphanumeric() || "._/-+".contains(c));
    let skip = ["/", "~", "-", "../", "target/", "http", "$"];
    if !plain || span.is_empty() || skip.iter().any(|s| span.starts_with(s)) || span.ends_with('.') {
        return None;
    }
    // `.png` is an extension, not a file; `VX/vx.h` a header of the OpenVX headers' tree.
    if (span.starts_with('.') && !span.contains('/')) || span.ends_with(".h") {
        return None;
    }
    let exts = [".rs", ".md", ".toml", ".sh", ".py", ".json", ".png", ".jpg", ".txt"];
    let has_ext = exts.iter().any(|x| span.ends_with(x));
    (span.contains('/') || has_ext).then_some(span)
}

/// A path named in a document exists: from the repository root when it starts with one of the
/// root's entries, else as the tail of some file or directory.
fn exists(path: &str, paths: &BTreeSet<String>, top: &BTreeSet<&str>) -> bool {
    let p = path.trim_end_matches('/');
    if top.contains(p.split('/').next().unwrap()) {
        return paths.contains(p);
    }
    paths.iter().any(|q| q == p || q.ends_with(&format!("/{p}")))
}

/// Backticked spans of `text`, outside fenced code blocks, with their line numbers.
fn backticked(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let Some(span) = parts.next() {
            out.push((i + 1, span));
            parts.next();
        }
    }
    out
}

/// Markdown link targets `](target)` of `text` that point into the repository.
fn links(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                out.push((i + 1, target));
            }
        }
    }
    out
}

#[test]
fn every_path_the_documents_name_exists() {
    let root = workspace_root();
    let paths = repo_paths();
    let top: BTreeSet<&str> = paths.iter().filter(|p| !p.contains('/')).map(String::as_str).collect();
    let mut missing = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(&root).unwrap().display().to_string();
        for (line, span) in backticked(&text) {
            if let Some(p) = path_in(span)
                && !WRITTEN_BY_COMMANDS.contains(&p)
                && !exists(p, &paths, &top)
            {
                missing.push(format!("{name}:{line}: `{span}`"));
            }
        }
        let dir = doc.parent().unwrap();
        for (line, target) in links(&text) {
            if !dir.join(target).exists() {
                missing.push(format!("{name}:{line}: link ({target})"));
            }
        }
    }
    assert!(missing.is_empty(), "paths named that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_readme_and_the_architecture_stay_within_their_budgets() {
    let root = workspace_root();
    for (file, words) in [("README.md", 1200), ("ARCHITECTURE.md", 2500)] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let n = text.split_whitespace().count();
        assert!(n <= words, "{file} has {n} words, over its {words}");
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with('|') {
                for cell in line.split('|') {
                    let len = cell.trim().chars().count();
                    assert!(len <= 300, "{file}:{}: a table cell of {len} characters, over 300", i + 1);
                }
            }
        }
    }
}

/// Every chapter is in SUMMARY.md and every chapter SUMMARY.md names exists; every chapter is
/// compiled as doctests by `vx-core/src/lib.rs`; a `rust,ignore` block only includes a file that
/// exists (and is compiled as the source it is).
#[test]
fn every_chapter_is_in_the_summary_and_compiled() {
    let root = workspace_root();
    let src = root.join("docs/book/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, t)| t.to_owned()).collect();
    let harness = std::fs::read_to_string(root.join("vx-core/src/lib.rs")).unwrap();
    let mut chapters = BTreeSet::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "SUMMARY.md" {
            chapters.insert(name);
        }
    }
    for c in &chapters {
        assert!(listed.contains(c), "docs/book/src/{c} is not in SUMMARY.md");
        let include = format!("#[doc = include_str!(\"../../docs/book/src/{c}\")]");
        assert!(harness.contains(&include), "docs/book/src/{c} is not compiled: add `{include}` to vx-core/src/lib.rs");
        let text = std::fs::read_to_string(src.join(c)).unwrap();
        let mut lines = text.lines().enumerate();
        while let Some((i, line)) = lines.next() {
            let Some(info) = line.trim_start().strip_prefix("```") else { continue };
            let body: Vec<&str> =
                lines.by_ref().map(|(_, l)| l).take_while(|l| !l.trim_start().starts_with("```")).collect();
            let includes = body.iter().any(|l| l.contains("{{#include"));
            let rust = info.split(',').next() == Some("rust");
            if rust && info.contains("ignore") {
                assert!(
                    !body.is_empty() && body.iter().all(|l| l.trim().starts_with("{{#include ")),
                    "docs/book/src/{c}:{}: a `rust,ignore` block may only include a compiled file",
                    i + 1
                );
            } else {
                assert!(!includes, "docs/book/src/{c}:{}: an include in a block that is compiled", i + 1);
            }
            for l in body.iter().filter(|l| l.contains("{{#include")) {
                let path = l.trim().trim_start_matches("{{#include").trim_end_matches("}}").trim();
                let path = path.split(':').next().unwrap();
                assert!(src.join(path).is_file(), "docs/book/src/{c}:{}: includes {path}, which does not exist", i + 1);
            }
        }
    }
    for l in &listed {
        assert!(chapters.contains(l), "SUMMARY.md names {l}, which does not exist");
    }
}

/// Each design note starts with its date, its status and the code it describes.
#[test]
fn every_design_note_says_its_date_status_and_code() {
    let dir = workspace_root().join("docs/design");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let head: String = text.lines().take(8).collect::<Vec<_>>().join("\n");
        let name = e.file_name().to_string_lossy().into_owned();
        let date = head.find("Date: ").map(|at| &head[at + 6..]);
        assert!(
            date.is_some_and(|d| d.len() >= 10
                && d.as_bytes()[..10].iter().enumerate().all(|(i, b)| if i == 4 || i == 7 {
                    *b == b'-'
                } else {
                    b.is_ascii_digit()
                })),
            "docs/design/{name} does not start with `Date: YYYY-MM-DD`"
        );
        assert!(
            ["Status: implemented", "Status: partly", "Status: not built"].iter().any(|s| head.contains(s)),
            "docs/design/{name} does not say its status (implemented, partly, not built)"
        );
        assert!(head.contains("Code: "), "docs/design/{name} does not name its code");
    }
}

/// The first kernel's walk-through: `plugins/vx-hello`, built, loaded and run as the book's
/// application does.
#[test]
fn the_first_kernel_walkthrough_runs() {
    let lib = build_module("vx-hello", &[]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(plugin_dir("hello", &[("vx_hello", &lib)]));
    ctx.load_module("vx_hello").unwrap();
    let brighten = ctx.kernel_by_name("hello.brighten").unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let input = Image::new(&ctx, 20, 1, ImageFormat::U8).unwrap();
    input.copy_from(Rect::full(20, 1), 0, &[100u8; 20]).unwrap();
    let amount = Scalar::new(&ctx, ScalarValue::Uint8(50)).unwrap();
    let output = Image::new(&ctx, 20, 1, ImageFormat::U8).unwrap();
    graph.add_node(&brighten, [Reference::from(&input), Reference::from(&amount), Reference::from(&output)]).unwrap();
    graph.process().unwrap();
    assert_eq!(output.to_vec::<u8>().unwrap(), [150u8; 20]);
}

/// The path checker itself: what counts as a path, and a path that is not there.
#[test]
fn the_path_check_tells_paths_from_code_and_finds_a_missing_one() {
    assert_eq!(path_in("vx-core/src/lib.rs"), Some("vx-core/src/lib.rs"));
    assert_eq!(path_in("vx-plugin-abi/src/kinds/mod.rs::for_each_kind!"), Some("vx-plugin-abi/src/kinds/mod.rs"));
    assert_eq!(path_in("vx-plugin-abi/src/tile.rs:504"), Some("vx-plugin-abi/src/tile.rs"));
    assert_eq!(path_in("graph/tiling/split.rs"), Some("graph/tiling/split.rs"));
    assert_eq!(path_in("crew.rs"), Some("crew.rs"));
    for code in ["vx::Error", "Graph::process", "lib<name>.so", "/proc/self/maps", "a = b", "target/release/edges.png"]
    {
        assert_eq!(path_in(code), None, "{code}");
    }
    let paths = repo_paths();
    let top: BTreeSet<&str> = paths.iter().filter(|p| !p.contains('/')).map(String::as_str).collect();
    assert!(exists("vx-core/tests/layers.rs", &paths, &top));
    assert!(exists("graph/tiling/split.rs", &paths, &top));
    assert!(exists("docs/book/", &paths, &top));
    // From the root, a top-level folder is not a tail: `tests/layers.rs` is not `vx-core/tests/layers.rs`.
    assert!(!exists("tests/layers.rs", &paths, &top));
    assert!(!exists("graph/tiling/nope.rs", &paths, &top));
}
