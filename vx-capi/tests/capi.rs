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
    run_c_with(name, &[]);
}

fn run_c_with(name: &str, env: &[(&str, &Path)]) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let exe = compile(name, dir.path());
    // cargo puts its own target directory on LD_LIBRARY_PATH, which would win over the rpath.
    let o = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .envs(env.iter().copied())
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

#[test]
fn objects() {
    run_c("objects");
}

#[test]
fn delay() {
    run_c("delay");
}

#[test]
fn formats() {
    run_c("formats");
}

/// Compile `tests/c/cmodule.c` as the OpenVX C module `lib<name>.so` in `dir` (undefined `vx*`
/// symbols: the host's, resolved when it is loaded).
fn c_module(name: &str, dir: &Path, defines: &[&str]) {
    let o = Command::new(cc())
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-shared", "-fPIC"])
        .args(defines)
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("tests/c/cmodule.c"))
        .arg("-o")
        .arg(dir.join(format!("lib{name}.so")))
        .output()
        .expect("cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// An OpenVX C module reloaded again and again (a new build each time, computing `-v + n` for
/// version `n`) through the Rust API while another thread processes a graph of its kernel
/// without pause: every frame succeeds, every result is some version's, and the versions seen
/// only move forward.
#[test]
fn c_module_reloads_under_load() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use vx::*;
    unsafe extern "C" {
        fn vxCreateContext() -> openvx::sys::vx_context;
        fn vxLoadKernels(c: openvx::sys::vx_context, name: *const std::ffi::c_char) -> i32;
        fn vxReleaseContext(c: *mut openvx::sys::vx_context) -> i32;
    }
    let dir = vx_tests::plugin_dir("capi-reload", &[]);
    c_module("vxrs_cmod", &dir, &["-DOFFSET=0"]);
    // SAFETY: the C API's own constructor; checked below.
    let mut c = unsafe { vxCreateContext() };
    let ctx = openvx::__context_of(c).expect("a context");
    ctx.add_module_dir(&dir);
    // SAFETY: a live context and a NUL-terminated name.
    assert_eq!(unsafe { vxLoadKernels(c, c"vxrs_cmod".as_ptr()) }, 0);
    let k = ctx.kernel_by_name("org.vxrs.test.cmod.negate").expect("the C kernel");
    let g = Graph::new(&ctx).expect("graph");
    let input = Scalar::new(&ctx, ScalarValue::Int32(1000)).expect("in");
    let output = Scalar::new(&ctx, ScalarValue::Int32(0)).expect("out");
    g.add_node(&k, [Reference::from(&input), Reference::from(&output)]).expect("node");
    drop(k);
    const VERSIONS: i32 = 25;
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (g, output, stop) = (g.clone(), output.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let (mut frames, mut last) = (0u64, 0i32);
            while !stop.load(Ordering::Acquire) {
                g.process().expect("every frame runs");
                let v: i32 = output.get().expect("value");
                let version = v + 1000;
                assert!((0..VERSIONS).contains(&version), "a version's result: {v}");
                assert!(version >= last, "versions only move forward: {last} then {version}");
                last = version;
                frames += 1;
            }
            (frames, last)
        })
    };
    for n in 1..VERSIONS {
        // A new build at the same path, then a reload (each version from its own private copy).
        c_module("vxrs_cmod", &dir, &[&format!("-DOFFSET={n}")]);
        let report = ctx.reload_module("vxrs_cmod").expect("reload");
        assert_eq!(report.replaced, vec!["org.vxrs.test.cmod.negate".to_owned()]);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    stop.store(true, Ordering::Release);
    let (frames, last) = worker.join().expect("the worker");
    assert_eq!(last, VERSIONS - 1, "the last version serves at the end");
    assert!(frames > VERSIONS as u64, "frames ran throughout: {frames}");
    drop((g, input, output, ctx));
    // SAFETY: the context made above.
    assert_eq!(unsafe { vxReleaseContext(&mut c) }, 0);
}

#[test]
fn modules() {
    let filters = vx_tests::build_module("vx-filters", &[]);
    let dir = vx_tests::plugin_dir("capi-modules", &[("vx_filters", &filters)]);
    c_module("vxrs_cmod", &dir, &[]);
    c_module("vxrs_cmod_bad", &dir, &["-DFAIL_PUBLISH"]);
    c_module("vxrs_cmod_nested", &dir, &["-DLOAD_IN_PUBLISH"]);
    run_c_with("modules", &[("VX_MODULE_PATH", &dir)]);
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

/// The C example (`examples/c/edges.c`, the demo's edge pipeline through the C API, loading the
/// Rust `vx_filters` module with `vxLoadKernels`) writes exactly what the same graph built with
/// the Rust API writes, on a synthetic picture of odd size.
#[test]
fn edge_example_matches_the_rust_pipeline() {
    use vx::*;
    let lib = vx_tests::build_module("vx-filters", &[]);
    let modules = vx_tests::plugin_dir("capi-edges", &[("vx_filters", &lib)]);
    let dir = tempfile::tempdir().expect("scratch");
    let (w, h) = (97u32, 61u32);
    let pixels: Vec<u8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if (x / 9 + y / 7) % 2 == 0 { 40 + (x * 3 % 50) as u8 } else { 200 - (y * 5 % 60) as u8 }
        })
        .collect();
    let input = dir.path().join("in.pgm");
    let mut pgm = format!("P5\n{w} {h}\n255\n").into_bytes();
    pgm.extend_from_slice(&pixels);
    std::fs::write(&input, pgm).expect("write the input");

    // The C example.
    let src = crate_dir().parent().expect("workspace").join("examples/c/edges.c");
    let exe = dir.path().join("edges");
    let lib_dir = lib_dir();
    let o = Command::new(cc())
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib_dir)
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-lopenvx")
        .output()
        .expect("cc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let output = dir.path().join("out.pgm");
    let o = Command::new(&exe)
        .arg(&input)
        .arg(&output)
        .arg("60")
        .env_remove("LD_LIBRARY_PATH")
        .env("VX_MODULE_PATH", &modules)
        .output()
        .expect("run the example");
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read(&output).expect("the output");
    let header = format!("P5\n{w} {h}\n255\n");
    assert!(written.starts_with(header.as_bytes()), "a PGM of the input's size");
    let c_edges = &written[header.len()..];

    // The same graph from Rust.
    let ctx = Context::builder().threads(2).build().expect("context");
    ctx.add_module_dir(&modules);
    ctx.load_module("vx_filters").expect("load vx_filters");
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).expect("kernel");
    let g = Graph::new(&ctx).expect("graph");
    let src = Image::new(&ctx, w, h, ImageFormat::U8).expect("src");
    src.copy_from(Rect::full(w, h), 0, &pixels).expect("copy");
    let v = || Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).expect("virtual");
    let (blurred, gx, gy, mag) = (v(), v(), v(), v());
    let level = Scalar::new(&ctx, ScalarValue::Uint8(60)).expect("scalar");
    let edges = Image::new(&ctx, w, h, ImageFormat::U8).expect("edges");
    g.add_node(&k("gaussian3x3"), [&src, &blurred]).expect("node");
    g.add_node(&k("sobel3x3"), [&blurred, &gx, &gy]).expect("node");
    g.add_node(&k("magnitude"), [&gx, &gy, &mag]).expect("node");
    g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&level), Reference::from(&edges)])
        .expect("node");
    g.process().expect("process");
    let rust_edges = edges.to_vec::<u8>().expect("read");
    assert_eq!(c_edges.len(), rust_edges.len());
    let differ = c_edges.iter().zip(&rust_edges).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "pixels where the C example and the Rust graph differ");
    assert!(rust_edges.contains(&255) && rust_edges.contains(&0), "the picture has edges and flat parts");
}

/// The book's C API chapter lists exactly the functions that are not implemented
/// (`openvx::NOT_IMPLEMENTED`), by header. `VX_CAPI_BLESS=1` rewrites the list.
#[test]
fn book_lists_what_is_not_implemented() {
    let path = crate_dir().parent().expect("workspace").join("docs/book/src/c-api.md");
    let text = std::fs::read_to_string(&path).expect("the chapter");
    let (begin, end) = ("<!-- not-implemented: begin -->\n", "<!-- not-implemented: end -->");
    let (head, rest) = text.split_once(begin).expect("the begin marker");
    let (_, tail) = rest.split_once(end).expect("the end marker");
    let mut list = String::new();
    let mut headers: Vec<&str> = openvx::NOT_IMPLEMENTED.iter().map(|(h, _)| *h).collect();
    headers.dedup();
    for h in headers {
        let names: Vec<String> =
            openvx::NOT_IMPLEMENTED.iter().filter(|(hh, _)| *hh == h).map(|(_, n)| format!("`{n}`")).collect();
        list.push_str(&format!("- `{h}` ({}): {}\n", names.len(), names.join(", ")));
    }
    let want = format!("{head}{begin}{list}{end}{tail}");
    if std::env::var("VX_CAPI_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("rewrite the chapter");
    }
    assert!(
        want == text,
        "docs/book/src/c-api.md's not-implemented list is out of date: run VX_CAPI_BLESS=1 cargo test -p vx-rs-capi --test capi book"
    );
}

/// The OpenVX mapping's C API column agrees with the library: a row that says `yes` names only
/// implemented functions, a row that says `not yet` or `partly` names at least one that is not.
#[test]
fn mapping_c_column_agrees_with_the_library() {
    let path = crate_dir().parent().expect("workspace").join("docs/book/src/openvx-mapping.md");
    let text = std::fs::read_to_string(path).expect("the mapping");
    let missing: std::collections::HashSet<&str> = openvx::NOT_IMPLEMENTED.iter().map(|(_, n)| *n).collect();
    let mut rows = 0;
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (first, c) = (cells[1], cells[2]);
        let names: Vec<&str> = first
            .split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|s| s.split(|ch: char| !ch.is_alphanumeric() && ch != '_').next())
            .filter(|n| n.starts_with("vx") && n.chars().nth(2).is_some_and(char::is_uppercase) && !n.ends_with('X'))
            .collect();
        let unimplemented = names.iter().filter(|n| missing.contains(*n)).count();
        match c {
            "yes" => assert_eq!(unimplemented, 0, "{first}: says yes, but some are not implemented"),
            "not yet" => assert!(unimplemented > 0, "{first}: says not yet, but all are implemented"),
            c if c.starts_with("partly") => assert!(unimplemented > 0, "{first}: says partly"),
            _ => {}
        }
        rows += 1;
    }
    assert!(rows > 50, "found {rows} rows");
}
