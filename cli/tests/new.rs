//! `vx new` as a user runs it: the files it writes, what it refuses (exit code 2 with the reason,
//! nothing written), and that what it makes builds and runs: a crate's `cargo test` (its row
//! kernel's test included), and a `--app` workspace's `cargo test`, `cargo build` and
//! `cargo run -p app`, with the runtime compiled once. The made crates build in debug into one
//! target directory of their own ([`build_dir`]), kept between runs; `.ci/newcomer` walks the same
//! path outside the repository with each crate's own `target/` and a fresh lockfile.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

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

/// The target directory of the crates these tests make and build: shared by the tests and kept
/// between runs, so the runtime compiles once.
fn build_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vx-new-build")
}

/// `cargo ARGS` in `dir` into [`build_dir`], which must succeed; prints how long it took. One at a
/// time: cargo locks the target directory while it compiles but not while it runs tests, doctests
/// included, which another build into it could then pull libraries from under.
fn cargo(dir: &Path, args: &[&str]) -> Output {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let t0 = Instant::now();
    let o = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", build_dir())
        .output()
        .expect("cargo runs");
    eprintln!("   ({:.1} s: cargo {} in {})", t0.elapsed().as_secs_f64(), args.join(" "), dir.display());
    assert!(o.status.success(), "cargo {} in {} failed:\n{}", args.join(" "), dir.display(), stderr(&o));
    o
}

/// A `cargo test` run's output says each of `tests` passed.
fn assert_passed(o: &Output, tests: &[&str]) {
    let out = String::from_utf8_lossy(&o.stdout);
    for t in tests {
        assert!(out.contains(&format!("test tests::{t} ... ok")), "{t} did not pass:\n{out}");
    }
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

#[test]
fn vx_new_makes_a_crate_whose_tests_pass_the_row_kernels_included() {
    let d = scratch("built");
    let o = vx(&d, &["new", "built-mod", "--target", "dsp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = d.join("built-mod");
    let cargo_toml = std::fs::read_to_string(m.join("Cargo.toml")).unwrap();
    assert!(cargo_toml.contains("\n[patch.crates-io]\n"), "the SDK from this checkout:\n{cargo_toml}");
    let o = cargo(&m, &["test"]);
    assert_passed(
        &o,
        &[
            "brighten_saturates_on_blocks_and_at_the_right_edge",
            "sharpen_matches_the_reference_up_to_the_replicated_edge",
            "invert_maps_p_to_255_minus_p",
            "a_wrong_input_format_is_refused_at_verify",
            "gain_runs_on_its_target_and_takes_commands",
        ],
    );
}

#[test]
fn vx_new_app_makes_a_workspace_that_tests_builds_and_runs_its_app_with_one_runtime_build() {
    let d = scratch("app");
    let o = vx(&d, &["new", "ws-mod", "--app"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("cargo run -p app") && out.contains("Created the cargo workspace"), "{out}");
    let ws = d.join("ws-mod");
    for f in [
        "Cargo.toml",
        "src/lib.rs",
        "src/tests.rs",
        "graph.toml",
        "data/input.png",
        "app/Cargo.toml",
        "app/src/main.rs",
    ] {
        assert!(ws.join(f).is_file(), "{f} written");
    }
    let root = std::fs::read_to_string(ws.join("Cargo.toml")).unwrap();
    assert!(root.contains("\n[workspace]\nmembers = [\".\", \"app\"]"), "{root}");
    assert_eq!(root.matches("\n[patch.crates-io]\n").count(), 1, "one patch, at the root:\n{root}");
    assert!(!std::fs::read_to_string(ws.join("app/Cargo.toml")).unwrap().contains("\n[patch"));
    let readme = std::fs::read_to_string(ws.join("README.md")).unwrap();
    for c in ["cargo test", "cargo build", "cargo run -p app"] {
        assert!(readme.contains(c), "README names `{c}`:\n{readme}");
    }
    // Refused as a plain crate is: the directory exists now.
    let again = vx(&d, &["new", "ws-mod", "--app"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));

    let o = cargo(&ws, &["test"]);
    assert_passed(&o, &["sharpen_matches_the_reference_up_to_the_replicated_edge", "invert_maps_p_to_255_minus_p"]);
    // The runtime built for the module's tests serves the application: neither step compiles it.
    for step in [&["build"][..], &["run", "-p", "app"][..]] {
        let o = cargo(&ws, step);
        assert!(
            !stderr(&o).contains("Compiling vx-rs "),
            "`cargo {}` compiled the runtime again:\n{}",
            step.join(" "),
            stderr(&o)
        );
        if step[0] == "run" {
            let said = String::from_utf8_lossy(&o.stdout);
            assert!(said.contains("out-app.png") && said.contains("sharpen"), "{said}");
        }
    }
    let modules = build_dir().join("debug");
    assert!(modules.join("libws_mod.so").is_file() && modules.join("app").is_file());
    // The application ran the graph of graph.toml: its picture is `vx run`'s, pixel for pixel.
    let o = Command::new(env!("CARGO_BIN_EXE_vx"))
        .args(["run", "--quiet", "-M"])
        .arg(&modules)
        .arg("graph.toml")
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let app = image::open(ws.join("out-app.png")).expect("the app wrote a PNG").to_luma8();
    let run = image::open(ws.join("out.png")).expect("vx run wrote a PNG").to_luma8();
    let input = image::open(ws.join("data/input.png")).unwrap().to_luma8();
    assert_eq!(app.dimensions(), (64, 48));
    assert!(app == run, "the app and `vx run graph.toml` differ");
    assert!(app != input);
}

#[test]
fn vx_new_app_refuses_a_place_a_workspace_claims_and_the_name_of_its_app() {
    let d = scratch("app-refused");
    std::fs::write(d.join("Cargo.toml"), "[workspace]\nmembers = [\"crates/*\"]\n").unwrap();
    let o = vx(&d, &["new", "crates/km", "--app"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("would be a member of the cargo workspace"), "{}", stderr(&o));
    assert!(!d.join("crates").exists(), "nothing written, not even the parent made for it");
    // Outside the members: a workspace of its own.
    let o = vx(&d, &["new", "alone", "--app"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("a workspace of its own"));
    let o = vx(&d, &["new", "app", "--app"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the name of the application crate"), "{}", stderr(&o));
    assert!(!d.join("app").exists());
}
