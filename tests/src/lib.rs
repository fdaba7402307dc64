//! Helpers of the workspace-level tests: building the kernel modules under `plugins/` for real and
//! laying them out in plugin directories.
//!
//! Modules are built with the same `cargo` that runs the tests, into their own target directory
//! (`target/test-modules`) so the outer build is never blocked; each feature variant is built once
//! per test process and copied out under a name of its own.

pub mod kinds;
pub mod random_graphs;
pub mod versions;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The target modules are built for under a sanitizer (the host's; the loader is Linux-only).
const HOST_TRIPLE: &str =
    if cfg!(target_arch = "aarch64") { "aarch64-unknown-linux-gnu" } else { "x86_64-unknown-linux-gnu" };

static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

/// Build `package` (a cdylib under `plugins/`) with `features` and return the path of a private
/// copy of the resulting library.
pub fn build_module(package: &str, features: &[&str]) -> PathBuf {
    build_module_profile(package, features, false)
}

/// Build `plugins/vx-testmod` with `features`, declaring the module name `name` (a module is loaded
/// by its declared name, so each test that needs a module of its own builds one under that name).
pub fn testmod(name: &str, features: &[&str]) -> PathBuf {
    testmod_profile(name, features, false)
}

/// Like [`testmod`], optionally with `--release`.
pub fn testmod_profile(name: &str, features: &[&str], release: bool) -> PathBuf {
    build(&[("VX_TESTMOD_NAME", name)], "vx-testmod", features, release)
}

/// Like [`build_module`], optionally with `--release` (for benchmarks).
pub fn build_module_profile(package: &str, features: &[&str], release: bool) -> PathBuf {
    build(&[], package, features, release)
}

fn build(env: &[(&str, &str)], package: &str, features: &[&str], release: bool) -> PathBuf {
    let tag: String = env.iter().map(|(_, v)| format!("-{v}")).collect();
    let key = format!("{package}{tag}[{}]{}", features.join(","), if release { "release" } else { "" });
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    let built = built.get_or_insert_with(HashMap::new);
    if let Some(p) = built.get(&key) {
        return p.clone();
    }
    let (out, out_dir, target) = cargo_build(env, package, features, release);
    assert!(out.status.success(), "building {key} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let lib =
        out_dir.join(if release { "release" } else { "debug" }).join(format!("lib{}.so", package.replace('-', "_")));
    let store = target.join("variants");
    std::fs::create_dir_all(&store).expect("variants dir");
    // One file per key (the profile included: a debug and a release build of one package are two
    // variants), written whole under another name and renamed into place, so a test copying a
    // variant it was handed never reads one being rewritten (by this process or another).
    let name = format!(
        "{}{tag}-{}{}.so",
        package,
        if features.is_empty() { "default".into() } else { features.join("+") },
        if release { "-release" } else { "" }
    );
    let copy = store.join(&name);
    let partial = store.join(format!(".{name}.{}.partial", std::process::id()));
    std::fs::copy(&lib, &partial).unwrap_or_else(|e| panic!("copy {} -> {}: {e}", lib.display(), partial.display()));
    std::fs::rename(&partial, &copy)
        .unwrap_or_else(|e| panic!("rename {} -> {}: {e}", partial.display(), copy.display()));
    built.insert(key, copy.clone());
    copy
}

/// Run `cargo build` of `package` into the modules' target directory: the output, the directory
/// the library lands in, and the target directory.
fn cargo_build(
    env: &[(&str, &str)],
    package: &str,
    features: &[&str],
    release: bool,
) -> (std::process::Output, PathBuf, PathBuf) {
    let root = workspace_root();
    // Under a sanitizer (RUSTFLAGS=-Zsanitizer=address, as the tests were built), modules are built
    // with the same flags so they link against the runtime the test binary exports, and for an
    // explicit target so the flags do not reach proc-macros (which must build for the host).
    // One target directory per sanitizer (address and thread builds must not mix); under
    // ThreadSanitizer the standard library is rebuilt instrumented (`CARGO_UNSTABLE_BUILD_STD`,
    // inherited from the outer cargo as set by `.ci/run`).
    let rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    let sanitizer = rustflags.split_whitespace().find_map(|f| f.strip_prefix("-Zsanitizer=")).map(str::to_owned);
    let sanitized = sanitizer.is_some();
    let target = root.join("target").join(match &sanitizer {
        Some(s) => format!("test-modules-{s}"),
        None => "test-modules".to_owned(),
    });
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(&root).args(["build", "--quiet", "-p", package, "--target-dir"]).arg(&target);
    let mut out_dir = target.clone();
    if sanitized {
        cmd.args(["--target", HOST_TRIPLE]);
        out_dir = out_dir.join(HOST_TRIPLE);
    }
    cmd.env_remove("VX_TESTMOD_NAME").envs(env.iter().copied());
    if release {
        cmd.arg("--release");
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run cargo to build {package}: {e}"));
    (out, out_dir, target)
}

/// Build `package` with `features`, which must fail to compile: its compiler messages.
pub fn build_failure(package: &str, features: &[&str]) -> String {
    let (out, _, _) = cargo_build(&[], package, features, false);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{package} with {features:?} compiled:\n{stderr}");
    stderr
}

/// A fresh temporary plugin directory holding `lib<name>.so` copies of the given libraries (a new
/// directory per call: tests running at once never share one). The directory is made exclusively
/// under a random name, mode 0700 (another local user can neither predict nor plant it); it stays
/// until the process is gone, then a later test process sweeps it.
pub fn plugin_dir(tag: &str, modules: &[(&str, &Path)]) -> PathBuf {
    let dir = scratch_dir(&format!("plugins-{tag}"));
    for (name, lib) in modules {
        std::fs::copy(lib, dir.join(format!("lib{name}.so"))).expect("copy module");
    }
    dir
}

/// A new private directory for a test's files in the temp directory, `vx-rs-test-<pid>-<tag>-`
/// and a random suffix: made exclusively (never an existing path, never through a planted link),
/// mode 0700, so another local user can neither predict it nor write into it. It stays after the
/// call; the first call of a later test process removes those whose process is gone.
pub fn scratch_dir(tag: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(sweep_dead_scratch_dirs);
    tempfile::Builder::new()
        .prefix(&format!("vx-rs-test-{}-{tag}-", std::process::id()))
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .expect("a private temp directory")
        .keep()
}

/// True when the process still maps a file whose path contains `needle` (reads /proc/self/maps).
pub fn is_mapped(needle: &str) -> bool {
    std::fs::read_to_string("/proc/self/maps").map(|m| m.contains(needle)).unwrap_or(false)
}

/// Remove the scratch directories that test processes which are gone left behind (only this
/// user's: another's cannot be removed from the sticky temp directory, and is left alone).
fn sweep_dead_scratch_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("vx-rs-test-")) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Run `tests` (exact names in the calling test binary) again in a child process at every SIMD level
/// this CPU runs, forced with `VX_FILTERS_SIMD` (vx_filters reads it once per process), and assert
/// each child passed them all. Returns at once in a child (the variable is set): the parent runs the
/// levels.
pub fn at_every_forced_simd_level(tests: &[&str]) {
    if std::env::var_os("VX_FILTERS_SIMD").is_some() {
        return;
    }
    let mut levels = vec!["scalar"];
    #[cfg(target_arch = "x86_64")]
    {
        levels.push("sse2");
        if std::is_x86_feature_detected!("avx2") {
            levels.push("avx2");
        }
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
            levels.push("avx512");
        }
    }
    let exe = std::env::current_exe().expect("the test binary");
    for level in levels {
        let out = std::process::Command::new(&exe)
            .arg("--exact")
            .args(tests)
            .args(["--test-threads", "1"])
            .env("VX_FILTERS_SIMD", level)
            .output()
            .expect("run the test binary");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("{} passed", tests.len())),
            "VX_FILTERS_SIMD={level}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
