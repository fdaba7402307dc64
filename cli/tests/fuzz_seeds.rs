//! The fuzz targets' seed corpus and every saved crash (`fuzz/seeds/`, `fuzz/regressions/`) run
//! through the same entry points as `cargo fuzz` (`vx_cli::fuzz`), in the ordinary test suite: no
//! input may panic, and the well-formed seeds give what `vx run` gives them.

use std::path::PathBuf;

use vx_tests::workspace_root;

fn files(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir: PathBuf = workspace_root().join("fuzz").join(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn graph_file_seeds_and_regressions() {
    let ctx = vx_cli::fuzz::context();
    let seeds = files("seeds/graph_file");
    assert!(seeds.len() >= 5, "the seed corpus is in the repository");
    for (name, data) in seeds.iter().chain(&files("regressions/graph_file")) {
        let r = vx_cli::fuzz::graph_file(&ctx, data);
        match name.as_str() {
            "copy.toml" | "read.toml" | "targets.toml" => assert!(r.is_ok(), "{name}: {r:?}"),
            "huge.toml" => assert!(r.as_ref().is_err_and(|e| e.contains("image 'big'")), "{name}: {r:?}"),
            "edges.toml" => assert!(r.as_ref().is_err_and(|e| e.contains("filters.")), "{name}: {r:?}"),
            _ => {}
        }
    }
    assert_eq!(ctx.buffer_bytes().current, 0, "every graph is gone with its buffers");
}

#[test]
fn image_file_seeds_and_regressions() {
    let ctx = vx_cli::fuzz::context();
    let seeds = files("seeds/image_file");
    assert!(seeds.len() >= 5, "the seed corpus is in the repository");
    let mut decoded = 0;
    for (name, data) in seeds.iter().chain(&files("regressions/image_file")) {
        let r = vx_cli::fuzz::image_file(&ctx, data);
        if r.is_ok() {
            decoded += 1;
        }
        if name.starts_with("huge") {
            assert!(r.is_err(), "{name}: a header claiming gigabytes over a few bytes of pixels is refused");
        }
    }
    assert!(decoded >= 8, "most seeds are well-formed files ({decoded} decoded)");
}

#[test]
fn module_elf_seeds_and_regressions() {
    let seeds = files("seeds/module_elf");
    assert!(seeds.len() >= 3, "the seed corpus is in the repository");
    for (name, data) in seeds.iter().chain(&files("regressions/module_elf")) {
        let r = vx::__check_elf_bytes(data);
        match name.as_str() {
            "tiny.so" => assert_eq!(r, Ok(()), "{name}: a complete shared library"),
            "junk" => assert_eq!(r, Err("not an ELF file".to_owned()), "{name}"),
            "header_only" | "truncated" => assert!(r.is_err(), "{name}: {r:?}"),
            _ => {}
        }
    }
}
