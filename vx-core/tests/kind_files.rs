//! How many source files name each data-object kind (issue 28: "each data-object type named in at
//! most 6 source files of vx-core, vx-macros and vx-plugin-abi, tests aside"). Adding a kind should
//! touch its own files and the list, not every layer; this test keeps it so. A file *names* a kind
//! when its code (comments, string literals and test code from the first `#[cfg(test)]` removed)
//! has the kind's type name as a whole word.
//!
//! Every kind is held to 6 files, except the two the specs themselves single out. An image is what a
//! tiling kernel tiles (`graph/tiling/mod.rs`), what a pyramid holds (`data/pyramid.rs`,
//! `views/pyramid.rs`, and the module ABI's paths to a level, `module/host/objects.rs`), what the
//! aliasing extension aliases (`graph/verify/aliasing.rs`) and what the kernel contexts' shortcuts
//! return (`kernel/contexts.rs`); its own files are four on the host (`data/image/`: handle,
//! `ObjectKind`, handles over application memory, `image` crate interop) and one in the SDK
//! (`views/image.rs`), plus the list. A scalar is the tiling kernels' other parameter kind (the
//! tiling runtime, and `TileParamKind::Scalar` in the ABI's `tile.rs`), the host's scalar
//! read/write functions (`module/host/processor.rs`), the kernel contexts' `scalar` shortcut, and
//! the homonym `ArrayItemType::Scalar` (`data/items.rs`); its own files are `data/scalar.rs`,
//! `views/scalar.rs` and the list. Per-kind rules (which kinds a tiling kernel takes, a
//! validator's flat `ParamMeta`) are in the kinds' files. Their ceilings are pinned at today's
//! counts so they only go down. The kinds come from the list itself (`for_each_kind!`),
//! so a new kind is checked the day it is declared.

use std::path::{Path, PathBuf};

/// Each kind's ceiling where it is not 6 (see the module doc).
const CEILINGS: &[(&str, usize)] = &[("Image", 12), ("Scalar", 8)];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read a source folder") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "tests") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") && p.file_name().is_some_and(|n| n != "tests.rs") {
            out.push(p);
        }
    }
}

/// `src` without comments, string and char literals, and everything from the first `#[cfg(test)]`.
fn code(src: &str) -> String {
    let src = &src[..src.find("#[cfg(test)]").unwrap_or(src.len())];
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            i = src[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if b[i..].starts_with(b"/*") {
            i = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = src[i..].chars().next().expect("a char");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn names_word(code: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The kinds' type names, read from the list in `vx-plugin-abi/src/kinds/mod.rs`.
fn kinds(root: &Path) -> Vec<String> {
    let list = std::fs::read_to_string(root.join("vx-plugin-abi/src/kinds/mod.rs")).expect("the list");
    let kinds: Vec<String> = list
        .lines()
        .filter(|l| l.contains("{ code:") && l.contains("module:"))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|v| v.starts_with(|c: char| c.is_ascii_uppercase()) && v.chars().all(char::is_alphanumeric))
        .map(str::to_owned)
        .collect();
    assert!(kinds.len() >= 14, "the list of kinds was not found: {kinds:?}");
    kinds
}

#[test]
fn each_kind_is_named_in_few_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf();
    let mut files = Vec::new();
    for dir in ["vx-core/src", "vx-macros/src", "vx-plugin-abi/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    let sources: Vec<(PathBuf, String)> =
        files.into_iter().map(|p| (p.clone(), code(&std::fs::read_to_string(&p).expect("read")))).collect();
    let mut over = Vec::new();
    for kind in kinds(&root) {
        let naming: Vec<String> = sources
            .iter()
            .filter(|(_, c)| names_word(c, &kind))
            .map(|(p, _)| p.strip_prefix(&root).unwrap_or(p).display().to_string())
            .collect();
        let ceiling = CEILINGS.iter().find(|(k, _)| *k == kind).map_or(6, |&(_, n)| n);
        println!("{kind}: {} files", naming.len());
        if naming.len() > ceiling {
            over.push(format!("{kind} is named in {} files (at most {ceiling}): {naming:#?}", naming.len()));
        }
    }
    assert!(over.is_empty(), "{}", over.join("\n"));
}

#[test]
fn the_reader_skips_comments_strings_and_tests() {
    let c = code("let a = Image; // Scalar\n/* Array */ let s = \"Matrix\";\n#[cfg(test)]\nmod t { Lut }");
    assert!(names_word(&c, "Image"));
    for hidden in ["Scalar", "Array", "Matrix", "Lut"] {
        assert!(!names_word(&c, hidden), "{hidden} should be hidden in {c:?}");
    }
    assert!(!names_word("RawImage ImageFormat", "Image"));
}
