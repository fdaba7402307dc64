//! The C API tested from C: each program in `tests/c/` is compiled against the crate's headers
//! with `-std=c99 -Wall -Wextra -Werror -pedantic`, linked to the `libopenvx.so` this build
//! produced, and run (under AddressSanitizer when `VX_CAPI_ASAN=1`, as `.ci/run` does). Also
//! here: the generated Rust files are up to date with the headers, the headers match the
//! Khronos values, layouts and signatures (`tests/c/header_pins.c`), and the library exports
//! every function the headers declare.

use std::path::{Path, PathBuf};

use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding a `libopenvx.so` of the current sources: built once per test process
/// with the cargo that runs the tests, into a target directory of its own (`target/test-capi`:
/// the outer build holds its own directory's lock while tests run, and `cargo test` does not
/// produce the crate's cdylib).
fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = crate_dir().parent().expect("the workspace").to_path_buf();
            let target = root.join("target").join("test-capi");
            let o = Command::new(env!("CARGO"))
                .current_dir(&root)
                .args(["build", "--quiet", "-p", "vx-rs-capi", "--lib", "--target-dir"])
                .arg(&target)
                .env_remove("RUSTFLAGS")
                .output()
                .expect("run cargo");
            assert!(o.status.success(), "building libopenvx.so failed:\n{}", String::from_utf8_lossy(&o.stderr));
            target.join("debug")
        })
        .clone()
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_owned())
}

fn asan() -> bool {
    std::env::var("VX_CAPI_ASAN").is_ok_and(|v| v == "1")
}

/// Compile `tests/c/<name>.c` into `out` and return the program's path.
fn compile(name: &str, out: &Path) -> PathBuf {
    let src = crate_dir().join("tests/c").join(format!("{name}.c"));
    let exe = out.join(name);
    let lib = lib_dir();
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-D_POSIX_C_SOURCE=200809L"])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lopenvx", "-lpthread"]);
    if asan() {
        cmd.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
    }
    let o = cmd.output().expect("run the C compiler");
    assert!(o.status.success(), "compiling {}:\n{}", src.display(), String::from_utf8_lossy(&o.stderr));
    exe
}

fn run_c(name: &str) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let exe = compile(name, dir.path());
    // cargo puts its own target directory on LD_LIBRARY_PATH, which would win over the rpath.
    let o = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .output()
        .expect("run the C test");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name} failed ({}):\n{out}\n{err}", o.status);
    assert!(out.contains(&format!("{name}: ok")), "{name} did not finish:\n{out}\n{err}");
}

#[test]
fn references() {
    run_c("references");
}

#[test]
fn user_kernel() {
    run_c("user_kernel");
}

/// Regenerate with `script` and compare with the committed `file`.
fn up_to_date(script: &str, args: &[&str], file: &str) {
    let dir = crate_dir();
    let o =
        Command::new("python3").arg(dir.join(script)).args(args.iter().map(|a| dir.join(a))).output().expect("python3");
    assert!(o.status.success(), "{script}: {}", String::from_utf8_lossy(&o.stderr));
    let committed = std::fs::read_to_string(dir.join(file)).expect("the generated file");
    assert!(
        committed == String::from_utf8_lossy(&o.stdout),
        "{file} is out of date with the headers: run `python3 vx-capi/{script} {}` > vx-capi/{file}",
        args.iter().map(|a| format!("vx-capi/{a}")).collect::<Vec<_>>().join(" ")
    );
}

#[test]
fn generated_constants_match_the_headers() {
    up_to_date("api/gen_consts.py", &["include"], "src/sys/consts.rs");
}

#[test]
fn generated_stubs_match_the_headers() {
    up_to_date("api/gen_unimplemented.py", &["include", "src"], "src/unimplemented.rs");
}

/// Every function the headers declare is exported by the library.
#[test]
fn every_declared_function_is_exported() {
    let o = Command::new("nm").args(["-D", "--defined-only"]).arg(lib_dir().join("libopenvx.so")).output().expect("nm");
    let syms = String::from_utf8_lossy(&o.stdout);
    let exported: std::collections::HashSet<&str> = syms.lines().filter_map(|l| l.split_whitespace().nth(2)).collect();
    let mut declared = Vec::new();
    for h in std::fs::read_dir(crate_dir().join("include/VX")).expect("headers") {
        let text = std::fs::read_to_string(h.expect("entry").path()).expect("header");
        for part in text.split("VX_API_CALL").skip(1) {
            let name: String = part.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name.starts_with("vx") {
                declared.push(name);
            }
        }
    }
    assert!(declared.len() > 250, "found only {} prototypes", declared.len());
    let missing: Vec<_> = declared.iter().filter(|n| !exported.contains(n.as_str())).collect();
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
}

/// The headers agree with the Khronos headers: every value, type, struct layout and function
/// signature (`tests/c/header_pins.c`, generated from the Khronos headers by `pin_values.py`),
/// and they compile as strict C89/C99/C11 and C++98/11/17.
#[test]
fn headers_match_khronos() {
    let o = Command::new("sh").arg(crate_dir().join("tests/c/header_pins.sh")).output().expect("sh");
    assert!(o.status.success(), "header pins failed:\n{}", String::from_utf8_lossy(&o.stderr));
}

/// `api/functions.txt` lists the headers' functions as they are now.
#[test]
fn function_list_is_up_to_date() {
    let o = Command::new("python3")
        .arg(crate_dir().join("api/list_functions.py"))
        .arg("--check")
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
}

/// The Rust `#[repr(C)]` structs of `sys` have the layout the C compiler gives the headers'.
#[test]
fn struct_layouts_match_the_headers() {
    use openvx::sys::*;
    use std::mem::{offset_of, size_of};
    let rust: Vec<(&str, usize)> = vec![
        ("sizeof(vx_rectangle_t)", size_of::<vx_rectangle_t>()),
        ("offsetof(vx_rectangle_t, end_y)", offset_of!(vx_rectangle_t, end_y)),
        ("sizeof(vx_imagepatch_addressing_t)", size_of::<vx_imagepatch_addressing_t>()),
        ("offsetof(vx_imagepatch_addressing_t, stride_y)", offset_of!(vx_imagepatch_addressing_t, stride_y)),
        ("offsetof(vx_imagepatch_addressing_t, step_y)", offset_of!(vx_imagepatch_addressing_t, step_y)),
        ("offsetof(vx_imagepatch_addressing_t, stride_x_bits)", offset_of!(vx_imagepatch_addressing_t, stride_x_bits)),
        ("sizeof(vx_pixel_value_t)", size_of::<vx_pixel_value_t>()),
        ("sizeof(vx_border_t)", size_of::<vx_border_t>()),
        ("offsetof(vx_border_t, constant_value)", offset_of!(vx_border_t, constant_value)),
        ("sizeof(vx_perf_t)", size_of::<vx_perf_t>()),
        ("offsetof(vx_perf_t, max)", offset_of!(vx_perf_t, max)),
        ("sizeof(vx_kernel_info_t)", size_of::<vx_kernel_info_t>()),
        ("offsetof(vx_kernel_info_t, name)", offset_of!(vx_kernel_info_t, name)),
        ("sizeof(vx_bool)", size_of::<vx_bool>()),
        ("sizeof(vx_enum)", size_of::<vx_enum>()),
        ("sizeof(vx_size)", size_of::<vx_size>()),
        ("sizeof(vx_map_id)", size_of::<vx_map_id>()),
        ("sizeof(vx_df_image)", size_of::<vx_df_image>()),
    ];
    let dir = tempfile::tempdir().expect("scratch");
    let src = dir.path().join("layout.c");
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <VX/vx.h>\nint main(void) {\n");
    for (expr, _) in &rust {
        c.push_str(&format!("    printf(\"%zu\\n\", (size_t){expr});\n"));
    }
    c.push_str("    return 0;\n}\n");
    std::fs::write(&src, c).expect("write");
    let exe = dir.path().join("layout");
    let o = Command::new(cc())
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = Command::new(&exe).output().expect("run");
    let values: Vec<usize> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.parse().expect("a number")).collect();
    for ((expr, r), c) in rust.iter().zip(values) {
        assert_eq!(*r, c, "{expr}: Rust {r}, C {c}");
    }
}
