//! `vx new` as a user runs it: the files it writes, and what it refuses (exit code 2 with the
//! reason, nothing written). Building and running the made crate is `.ci/newcomer`'s job (it needs
//! a full build of the SDK outside this workspace).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn vx(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vx")).args(args).current_dir(dir).output().expect("vx runs")
}

/// A fresh directory of this test's own under the target directory.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vx-new-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn vx_new_writes_a_module_crate_with_tests_a_graph_and_a_readme() {
    let d = scratch("ok");
    let o = vx(&d, &["new", "my-mod", "--target", "dsp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("cargo test") && out.contains("vx inspect target/debug/libmy_mod.so"), "{out}");
    let m = d.join("my-mod");
    for f in ["Cargo.toml", "src/lib.rs", "src/tests.rs", "graph.toml", "README.md", ".gitignore", "data/input.png"] {
        assert!(m.join(f).is_file(), "{f} written");
    }
    let lib = std::fs::read_to_string(m.join("src/lib.rs")).unwrap();
    assert!(lib.contains("vx_module!(name = \"my_mod\")"), "{lib}");
    assert!(lib.contains("#[tiling_kernel(name = \"my_mod.brighten\""));
    assert!(lib.contains("#[user_kernel(name = \"my_mod.invert\")]"));
    assert!(lib.contains("#[target_kernel(name = \"my_mod.gain\", target = \"dsp\""));
    let cargo = std::fs::read_to_string(m.join("Cargo.toml")).unwrap();
    assert!(cargo.contains("vx-plugin-abi = \"0.1\"") && cargo.contains("vx-rs = \"0.1\""), "{cargo}");
    // Made inside this workspace's target directory: it stands alone.
    assert!(cargo.contains("\n[workspace]\n"), "{cargo}");
    assert!(out.contains("stands alone"), "{out}");
    let readme = std::fs::read_to_string(m.join("README.md")).unwrap();
    assert!(readme.contains("cargo test") && readme.contains("cargo build") && readme.contains("vx run"));

    // Without --target: no target kernel.
    let o = vx(&d, &["new", "plain", "--registry"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!std::fs::read_to_string(d.join("plain/src/lib.rs")).unwrap().contains("target_kernel"));
    let cargo = std::fs::read_to_string(d.join("plain/Cargo.toml")).unwrap();
    assert!(cargo.contains("# [patch.crates-io]") && !cargo.contains("\n[patch.crates-io]"), "{cargo}");
}

#[test]
fn vx_new_refuses_an_existing_path_and_writes_nothing() {
    let d = scratch("exists");
    std::fs::create_dir(d.join("taken")).unwrap();
    std::fs::write(d.join("taken/keep.txt"), "mine").unwrap();
    let o = vx(&d, &["new", "taken"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`taken` already exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(d.join("taken")).unwrap().count(), 1, "nothing added");
    // A dangling symlink is a path that exists too: never followed.
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("link")).unwrap();
    let o = vx(&d, &["new", "link"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert!(!d.join("elsewhere").exists(), "nothing written through the symlink");
}

#[test]
fn vx_new_refuses_invalid_names_with_the_reason() {
    let d = scratch("names");
    for (name, why) in [
        ("2fast", "must start with an ASCII letter"),
        ("my.mod", "`.` is not allowed"),
        ("fn", "Rust keyword"),
        ("std", "standard crate"),
        ("vx-rs", "SDK's own crates"),
        ("vx", "SDK's own crates"),
    ] {
        let o = vx(&d, &["new", name]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let e = stderr(&o);
        assert!(e.contains(&format!("invalid crate name `{name}`")) && e.contains(why), "{name}: {e}");
        assert!(!d.join(name).exists(), "{name}: nothing created");
    }
    let o = vx(&d, &["new", "ok", "--target", "any"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid target name `any`"), "{}", stderr(&o));
    let o = vx(&d, &["new", "ok", "--sdk-path", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not a vx-rs checkout"), "{}", stderr(&o));
    assert!(!d.join("ok").exists());
}

#[test]
fn vx_new_in_a_workspace_that_globs_it_makes_a_member_and_says_where_the_patch_goes() {
    let d = scratch("member");
    std::fs::write(d.join("Cargo.toml"), "[workspace]\nmembers = [\"crates/*\"]\n").unwrap();
    let o = vx(&d, &["new", "crates/km"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("is a member of the cargo workspace") && out.contains("[patch.crates-io]"), "{out}");
    let cargo = std::fs::read_to_string(d.join("crates/km/Cargo.toml")).unwrap();
    assert!(!cargo.contains("\n[workspace]") && !cargo.contains("\n[patch.crates-io]"), "{cargo}");
    // The outer workspace still resolves its members (no second workspace root inside it).
    let meta = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(&d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&meta.stderr);
    assert!(!err.contains("multiple workspace roots"), "{err}");
}

#[test]
fn vx_new_with_a_full_stdout_fails_cleanly() {
    let d = scratch("full");
    let o = Command::new(env!("CARGO_BIN_EXE_vx"))
        .args(["new", "quiet"])
        .current_dir(&d)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write to standard output"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}
