//! The `vx` command, run as a user runs it: `inspect` on the vx_filters module (text and JSON),
//! `run` of the sample graph file on the astronaut photo compared pixel for pixel with the same
//! graph built through the library, `watch` for a second, and the exit codes scripts rely on.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vx::*;
use vx_tests::{build_module, plugin_dir, scratch_dir, workspace_root};

fn filters_dir() -> PathBuf {
    plugin_dir("cli-filters", &[("vx_filters", &build_module("vx-filters", &[]))])
}

fn vx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vx")).args(args).output().expect("vx runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn inspect_describes_every_kernel_in_text_and_json() {
    let dir = filters_dir();
    let out = vx(&["--module-dir", dir.to_str().unwrap(), "inspect", "vx_filters"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.starts_with(&format!("Module vx_filters 0.1.0 (module ABI {MODULE_ABI_VERSION})")), "{s}");
    assert!(s.contains("kernels: 11"), "{s}");
    // Names and elements come from the kernel functions' arguments; the summary from the doc comment.
    assert!(s.contains("filters.threshold  [tiling kernel"), "{s}");
    assert!(s.contains("Binary threshold (OpenVX `VX_THRESHOLD_TYPE_BINARY`): 255 where `input > level`"), "{s}");
    assert!(s.contains("1  level  input   scalar  U8      required"), "{s}");
    assert!(s.contains("2  gy     output  image   S16     required"), "{s}");
    assert!(s.contains("neighborhood (-1, 1, -1, 1), tile memory 0 bytes"), "{s}");
    assert!(
        s.contains(
            "  border: Reflect101 (row kernel: the SDK extends the image edge by this rule; nodes may set: undefined)"
        ),
        "{s}"
    );
    assert!(s.contains("alias hint: parameters 0 and 1 (dense)"), "{s}");
    // What each kernel offers fused execution: the row kernels a row entry, the others tile views.
    assert!(s.contains("fusion: row entry (Reflect101, 3 rows)"), "{s}");
    assert!(s.contains("fusion: tile views"), "{s}");

    // By path, as JSON.
    let lib = dir.join("libvx_filters.so");
    let out = vx(&["inspect", lib.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["module"], "vx_filters");
    assert_eq!(v["abi_version"], MODULE_ABI_VERSION);
    let kernels = v["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 11);
    let sobel = kernels.iter().find(|k| k["name"] == "filters.sobel3x3").unwrap();
    assert_eq!(sobel["kind"], "tiling");
    assert_eq!(sobel["tiling"]["neighborhood"], serde_json::json!([-1, 1, -1, 1]));
    assert_eq!(sobel["tiling"]["fusion"], "row entry (Reflect101, 3 rows)");
    let names: Vec<&str> =
        sobel["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    // A row kernel's `[a, b, c]: Rows<u8, 3>` is its `input`, not the pattern's text.
    assert_eq!(names, ["input", "gx", "gy"]);
    assert_eq!(sobel["parameters"][1]["direction"], "output");
    assert_eq!(sobel["parameters"][1]["element"], "S16");
    let truncate = kernels.iter().find(|k| k["name"] == "filters.truncate").unwrap();
    assert_eq!(truncate["alias_hints"], serde_json::json!([{"a": 0, "b": 1, "kind": "sparse"}]));
}

/// The sample graph through the library: photo → gaussian → sobel → magnitude → threshold.
fn edges_by_library(dir: &Path, photo: &image::GrayImage, level: u8) -> Vec<u8> {
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(dir);
    ctx.load_module("vx_filters").unwrap();
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    let src = Image::from_image(&ctx, photo).unwrap();
    let v = || Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual).unwrap();
    let (blurred, gx, gy, mag) = (v(), v(), v(), v());
    let threshold = Scalar::new(&ctx, ScalarValue::Uint8(level)).unwrap();
    let edges = Image::new(&ctx, photo.width(), photo.height(), ImageFormat::U8).unwrap();
    graph.add_node(&k("gaussian3x3"), [&src, &blurred]).unwrap();
    graph.add_node(&k("sobel3x3"), [&blurred, &gx, &gy]).unwrap();
    graph.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
    graph
        .add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&threshold), Reference::from(&edges)])
        .unwrap();
    graph.process().unwrap();
    edges.to_vec::<u8>().unwrap()
}

#[test]
fn run_of_the_sample_graph_matches_the_library() {
    let dir = filters_dir();
    let graph = workspace_root().join("examples/graphs/edges.toml");
    let out_png = tmp("edges.png");
    let out = vx(&[
        "-M",
        dir.to_str().unwrap(),
        "run",
        graph.to_str().unwrap(),
        "--frames",
        "2",
        "--set",
        "threshold=80",
        "--set",
        &format!("output={}", out_png.display()),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    // The time table: the four fused nodes run as one, so they are one row naming them all,
    // and no node has a row of its own that would repeat the group's time.
    let rows: Vec<&str> = s.lines().filter(|l| l.contains(" µs")).collect();
    assert_eq!(rows.len(), 2, "one row for the group and one for the graph:\n{s}");
    assert!(
        rows[0].starts_with("fused: gaussian + sobel + magnitude + threshold  4 kernels  "),
        "the group's row:\n{s}"
    );
    assert!(rows[1].starts_with("graph "), "the graph's row:\n{s}");
    // The file asks for fusion: the four nodes run as one group, whose report follows the table.
    assert!(s.contains("fusion: 1 group(s)") && s.contains("gaussian -> sobel"), "no fused group in:\n{s}");
    let written = image::open(&out_png).unwrap().to_luma8();
    std::fs::remove_file(&out_png).ok();
    let photo = image::open(workspace_root().join("examples/data/astronaut.jpg")).unwrap().to_luma8();
    assert_eq!(written.dimensions(), photo.dimensions());
    let expect = edges_by_library(&dir, &photo, 80);
    assert_eq!(written.as_raw(), &expect, "vx run and the library disagree");
    // The threshold took effect (not all black, not all white).
    let on = expect.iter().filter(|&&p| p == 255).count();
    assert!(on > 1000 && on < expect.len() / 2, "{on} edge pixels");
}

#[test]
fn watch_serves_frames_and_stops() {
    let dir = filters_dir();
    let graph = workspace_root().join("examples/graphs/edges.toml");
    let out_png = tmp("watch.png");
    let out = vx(&[
        "watch",
        dir.to_str().unwrap(),
        graph.to_str().unwrap(),
        "--seconds",
        "1",
        "--set",
        &format!("output={}", out_png.display()),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let frames = watch_frames(&s);
    // The default rate is 30 frames per second: about 30 frames in a second, not thousands.
    assert!((5..=35).contains(&frames) && s.contains(" 0 errors"), "{s}");
    assert!(text(&out.stderr).contains("at 30 frames/s"), "{}", text(&out.stderr));
    assert!(out_png.exists());
    std::fs::remove_file(&out_png).ok();
}

/// The frame count of `vx watch`'s summary line (`N frames, E errors in S s (R frames/s)`).
fn watch_frames(stdout: &str) -> u64 {
    let line = stdout.lines().find(|l| l.contains(" frames, ")).unwrap_or_else(|| panic!("no summary in {stdout}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

fn write(name: &str, body: &str) -> PathBuf {
    let p = tmp(&format!("{name}.toml"));
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn exit_codes_say_what_went_wrong() {
    let dir = filters_dir();
    let d = dir.to_str().unwrap();
    let code = |o: &Output| o.status.code().unwrap();

    // 3: no such module.
    let o = vx(&["-M", d, "inspect", "no_such_module"]);
    assert_eq!(code(&o), 3);
    assert!(text(&o.stderr).contains("no_such_module"), "{}", text(&o.stderr));

    // 2: unreadable or malformed graph file, an unknown key, a bad --set, an undefined variable.
    assert_eq!(code(&vx(&["run", "/nonexistent/graph.toml"])), 2);
    // A graph file that never ends: refused at the bound, not read into memory.
    let o = vx(&["run", "/dev/zero"]);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains("larger than"), "{}", text(&o.stderr));
    let bad = write("malformed", "name = \n");
    assert_eq!(code(&vx(&["-M", d, "run", bad.to_str().unwrap()])), 2);
    let unknown = write("unknown", "nodez = []\n");
    let o = vx(&["-M", d, "run", unknown.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains("nodez"), "{}", text(&o.stderr));
    let o = vx(&["run", unknown.to_str().unwrap(), "--set", "novalue"]);
    assert_eq!(code(&o), 2);
    let undefined = write("undefined", "[scalars.s]\ntype = \"U8\"\nvalue = \"${nope}\"\n");
    let o = vx(&["run", undefined.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains("unknown variable `nope`"), "{}", text(&o.stderr));

    // 2: thread counts past the ceiling or past TOML's integers (issue 33: no abort, no panic).
    for (tag, threads) in [("threads_huge", "1000000000000"), ("threads_u64", "18446744073709551615")] {
        let f = write(tag, &format!("threads = {threads}\n[images.a]\nwidth = 8\nheight = 8\nformat = \"U8\"\n"));
        let o = vx(&["run", f.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{tag}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("thread") || text(&o.stderr).contains("MAX_THREADS"), "{}", text(&o.stderr));
        std::fs::remove_file(f).ok();
    }
    let o = vx(&["run", "--threads", "1000000000000", unknown.to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", text(&o.stderr));

    // 4: a kernel that does not exist, a graph that does not verify.
    let no_kernel = write(
        "nokernel",
        "modules = [\"vx_filters\"]\n[images.a]\nwidth = 8\nheight = 8\nformat = \"U8\"\n[[nodes]]\nkernel = \"filters.nope\"\nparams = [\"a\"]\n",
    );
    let o = vx(&["-M", d, "run", no_kernel.to_str().unwrap()]);
    assert_eq!(code(&o), 4, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("filters.nope"), "{}", text(&o.stderr));
    let wrong_format = write(
        "wrongformat",
        "modules = [\"vx_filters\"]\n[images.a]\nwidth = 8\nheight = 8\nformat = \"S16\"\n[images.b]\nvirtual = true\n\
         [[nodes]]\nkernel = \"filters.gaussian3x3\"\nparams = [\"a\", \"b\"]\n",
    );
    let o = vx(&["-M", d, "run", wrong_format.to_str().unwrap()]);
    assert_eq!(code(&o), 4, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("S16"), "{}", text(&o.stderr));
    for p in [bad, unknown, undefined, no_kernel, wrong_format] {
        std::fs::remove_file(p).ok();
    }
}

/// A plugin directory with vx_filters and vx_testmod built with its `target-kernel` feature.
fn all_modules_dir() -> PathBuf {
    plugin_dir(
        "cli-all",
        &[
            ("vx_filters", &build_module("vx-filters", &[])),
            ("vx_testmod", &vx_tests::testmod("vx_testmod", &["target-kernel"])),
        ],
    )
}

/// `name` in this test process's private scratch directory (see [`scratch_dir`]).
fn tmp(name: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| scratch_dir("cli")).join(name)
}

/// Every bad key of every table, every bad value and every bad argument is refused with exit code
/// 2 and a message naming it (and, for keys, the valid ones) — before any module is loaded (each
/// file asks for a module that does not exist: loading it first would give exit code 3) or any
/// image read.
#[test]
fn every_bad_key_value_and_argument_is_refused_before_any_work() {
    const HEAD: &str = "modules = [\"no_such_module_anywhere\"]\n";
    const IMG: &str = "[images.a]\nwidth = 8\nheight = 8\nformat = \"U8\"\n";
    let node = |extra: &str| format!("{IMG}[[nodes]]\nname = \"n\"\nkernel = \"k.k\"\nparams = [\"a\"]\n{extra}");
    let cases: Vec<(&str, String, Vec<&str>, Vec<&str>)> = vec![
        // Unknown keys, each table: named, with the valid keys.
        (
            "top",
            format!("nodez = []\n{IMG}"),
            vec![],
            vec!["unknown key `nodez` in the top level", "valid keys: name, modules, frames"],
        ),
        (
            "image",
            "[images.a]\nwidht = 8\nheight = 8\nformat = \"U8\"\n".into(),
            vec![],
            vec!["unknown key `widht` in [images.a]", "width, height"],
        ),
        (
            "scalar",
            "[scalars.s]\ntype = \"U8\"\nvaule = 1\n".into(),
            vec![],
            vec!["unknown key `vaule` in [scalars.s]", "valid keys: type, value"],
        ),
        (
            "node",
            node("kernal = \"x\"\n"),
            vec![],
            vec!["unknown key `kernal` in [[nodes]] #0 (n)", "valid keys: name, kernel, params, border, target"],
        ),
        (
            "target",
            "[targets.dsp]\nthread = 2\n".into(),
            vec![],
            vec!["unknown key `thread` in [targets.dsp]", "valid keys: threads, cores, queue_depth"],
        ),
        ("vars_kind", "[vars]\nx = [1]\n".into(), vec![], vec!["[vars] x", "expected a string, number or boolean"]),
        ("name_kind", "name = 5\n".into(), vec![], vec!["top-level key `name`: expected a string"]),
        ("nodes_kind", "[nodes]\nkernel = \"k\"\n".into(), vec![], vec!["`nodes` must be an array of tables"]),
        // Variables.
        (
            "set_unused",
            "[vars]\nw = 8\n[images.a]\nwidth = \"${w}\"\nheight = 8\nformat = \"U8\"\n".into(),
            vec!["--set", "typo=1"],
            vec!["--set typo", "uses no variable `typo`", "it uses: w"],
        ),
        ("set_none", IMG.into(), vec!["--set", "x=1"], vec!["--set x", "it uses none"]),
        (
            "undefined",
            "[scalars.s]\ntype = \"U8\"\nvalue = \"${nope}\"\n".into(),
            vec![],
            vec!["unknown variable `nope`"],
        ),
        ("unclosed", "name = \"${oops\"\n".into(), vec![], vec!["unclosed `${`"]),
        (
            "width_var",
            "[vars]\nw = \"abc\"\n[images.a]\nwidth = \"${w}\"\nheight = 8\nformat = \"U8\"\n".into(),
            vec![],
            vec!["[images.a] width", "\"abc\" (written \"${w}\")"],
        ),
        (
            "width_set",
            "[images.a]\nwidth = \"${w}\"\nheight = 8\nformat = \"U8\"\n".into(),
            vec!["--set", "w=0"],
            vec!["[images.a] width", "from 1 to 4294967295", "\"0\""],
        ),
        // Values.
        (
            "frames0",
            format!("frames = 0\n{IMG}"),
            vec![],
            vec!["top-level key `frames`: expected a whole number from 1"],
        ),
        (
            "threads0",
            format!("threads = 0\n{IMG}"),
            vec![],
            vec!["top-level key `threads`: expected a whole number from 1 to"],
        ),
        (
            "format",
            "[images.a]\nwidth = 8\nheight = 8\nformat = \"U9\"\n".into(),
            vec![],
            vec!["unknown format `U9`", "U8, U16"],
        ),
        ("no_format", "[images.a]\nwidth = 8\nheight = 8\n".into(), vec![], vec!["[images.a]", "`format` is required"]),
        ("no_size", "[images.a]\nformat = \"U8\"\n".into(), vec![], vec!["[images.a]", "width` and `height`"]),
        (
            "virtual_write",
            "[images.a]\nvirtual = true\nwrite = \"a.png\"\n".into(),
            vec![],
            vec!["[images.a]", "a virtual image has no write"],
        ),
        ("virtual_kind", "[images.a]\nvirtual = \"yes\"\n".into(), vec![], vec!["[images.a] virtual", "true or false"]),
        (
            "like_ghost",
            "[images.a]\nlike = \"ghost\"\nformat = \"U8\"\n".into(),
            vec![],
            vec!["[images.a] like", "`ghost` names no image"],
        ),
        (
            "like_loop",
            "[images.a]\nlike = \"b\"\nformat = \"U8\"\n[images.b]\nlike = \"a\"\nformat = \"U8\"\n".into(),
            vec![],
            vec!["like", "loop"],
        ),
        (
            "encoding",
            format!("{IMG}write = \"a.bmp\"\n"),
            vec![],
            vec!["[images.a] write", "cannot tell how to encode", "write_format"],
        ),
        (
            "write_format",
            format!("{IMG}write = \"a.png\"\nwrite_format = \"gif\"\n"),
            vec![],
            vec!["[images.a] write_format", "unknown encoding `gif`"],
        ),
        (
            "jpeg_u16",
            "[images.a]\nwidth = 8\nheight = 8\nformat = \"U16\"\nwrite = \"a.jpg\"\n".into(),
            vec![],
            vec!["JPEG holds U8 and RGB", "U16"],
        ),
        (
            "s16_out",
            "[images.a]\nwidth = 8\nheight = 8\nformat = \"S16\"\nwrite = \"a.png\"\n".into(),
            vec![],
            vec!["S16 images cannot be written"],
        ),
        (
            "scalar_type",
            "[scalars.s]\ntype = \"U7\"\nvalue = 1\n".into(),
            vec![],
            vec!["[scalars.s]", "unknown scalar type `U7`"],
        ),
        (
            "scalar_value",
            "[scalars.s]\ntype = \"U8\"\nvalue = 300\n".into(),
            vec![],
            vec!["[scalars.s] value", "`300` is not a U8"],
        ),
        (
            "param",
            node("").replace("[\"a\"]", "[\"a\", \"nope\"]"),
            vec![],
            vec!["params[1]", "`nope` names no image or scalar", "they are: a"],
        ),
        ("border", node("border = \"mirror\"\n"), vec![], vec!["border", "unknown border `mirror`"]),
        ("node_target", node("target = \"dsp\"\n"), vec![], vec!["target", "no target `dsp`", "targets: host, any"]),
        (
            "no_kernel",
            format!("{IMG}[[nodes]]\nparams = [\"a\"]\n"),
            vec![],
            vec!["[[nodes]] #0", "`kernel` is required"],
        ),
        (
            "dup_node",
            format!("{}[[nodes]]\nname = \"n\"\nkernel = \"k.k\"\nparams = [\"a\"]\n", node("")),
            vec![],
            vec!["two nodes are named `n`"],
        ),
        ("target_threads", "[targets.dsp]\nthreads = 0\n".into(), vec![], vec!["[targets.dsp] threads", "from 1 to"]),
        ("target_host", "[targets.host]\n".into(), vec![], vec!["[targets.host]", "neither `host` nor `any`"]),
        (
            "read_missing",
            "[images.a]\nread = \"/nonexistent/photo.png\"\n".into(),
            vec![],
            vec!["image 'a'", "cannot read /nonexistent/photo.png"],
        ),
        // Arguments.
        ("frames_arg", IMG.into(), vec!["--frames", "0"], vec!["--frames", "must be at least 1"]),
        ("threads_arg", IMG.into(), vec!["--threads", "0"], vec!["--threads"]),
        ("target_arg", IMG.into(), vec!["--target", "dsp:threads=0"], vec!["--target", "threads"]),
        ("target_key", IMG.into(), vec!["--target", "dsp:cpu=1"], vec!["--target", "unknown key `cpu`"]),
        ("target_name", IMG.into(), vec!["--target", "ANY"], vec!["--target", "neither `host` nor `any`"]),
        (
            "target_twice",
            IMG.into(),
            vec!["--target", "dsp", "--target", "DSP:threads=2"],
            vec!["--target DSP", "named twice"],
        ),
        (
            "place_node",
            node(""),
            vec!["--place", "ghost=host"],
            vec!["--place ghost=host", "no node named `ghost`", "named nodes: n"],
        ),
        ("place_target", node(""), vec!["--place", "n=dsp"], vec!["--place n=dsp", "no target `dsp`"]),
        ("set_form", IMG.into(), vec!["--set", "novalue"], vec!["--set", "KEY=VALUE"]),
    ];
    let mut failures = Vec::new();
    for (tag, body, args, words) in &cases {
        let f = write(&format!("bad-{tag}"), &format!("{HEAD}{body}"));
        let mut all = vec!["run", f.to_str().unwrap()];
        all.extend(args);
        let o = vx(&all);
        let err = text(&o.stderr);
        if o.status.code() != Some(2) || !words.iter().all(|w| err.contains(w)) {
            failures.push(format!("{tag}: exit {:?}, expected 2 and {words:?} in:\n{err}", o.status.code()));
        }
        std::fs::remove_file(f).ok();
    }
    // watch: its own arguments, and a directory that is not one.
    let f = write("bad-watch", &format!("{HEAD}{IMG}"));
    let g = f.to_str().unwrap();
    let dir = tmp("");
    let d = dir.to_str().unwrap();
    for (args, words) in [
        (vec!["watch", d, g, "--fps", "0"], vec!["--fps", "0.01 to 10000"]),
        (vec!["watch", d, g, "--fps", "fast"], vec!["--fps"]),
        (vec!["watch", d, g, "--seconds", "0"], vec!["--seconds"]),
        (vec!["watch", "/nonexistent/plugins", g], vec!["cannot watch /nonexistent/plugins", "not a directory"]),
        (vec!["--log", "vx=[", "run", g], vec!["--log", "not a tracing filter"]),
    ] {
        let o = vx(&args);
        let err = text(&o.stderr);
        if o.status.code() != Some(2) || !words.iter().all(|w| err.contains(w)) {
            failures.push(format!("{args:?}: exit {:?}, expected 2 and {words:?} in:\n{err}", o.status.code()));
        }
    }
    std::fs::remove_file(f).ok();
    assert!(
        failures.is_empty(),
        "{} of the bad inputs were not refused as they should:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Outputs that cannot be written: an unwritable place is refused before any work (exit 2), a
/// full disk when writing (exit 1); both name the path. No temporary file is left behind, a
/// symbolic link is never written through, standard output to a full disk is an error too.
#[test]
fn outputs_to_a_full_disk_or_an_unwritable_path_fail_with_the_path() {
    let dir = filters_dir();
    let d = dir.to_str().unwrap();
    let sizes = workspace_root().join("examples/graphs/sizes.toml");
    let g = sizes.to_str().unwrap();
    let code = |o: &Output| o.status.code().unwrap();

    // A full disk: the frames run, the write fails, the path and the reason are named.
    let o = vx(&["-M", d, "run", g, "--set", "out=/dev/full"]);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cannot write /dev/full: No space left on device"), "{}", text(&o.stderr));
    // Watch writes the same way.
    let o = vx(&["watch", d, g, "--seconds", "0.2", "--set", "out=/dev/full"]);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cannot write /dev/full"), "{}", text(&o.stderr));

    // Unwritable places, refused before any module is loaded (no -M: vx_filters is not found, which
    // would be exit code 3).
    let file_as_dir = tmp("plain-file");
    std::fs::write(&file_as_dir, b"x").unwrap();
    let under_file = file_as_dir.join("out.png");
    let link = tmp("link.png");
    let target = tmp("link-target.png");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dir_out = tmp("");
    for (path, why) in [
        ("/proc/vx-out.png".to_owned(), ""),
        ("/nonexistent/dir/out.png".to_owned(), "No such file or directory"),
        (under_file.display().to_string(), "Not a directory"),
        (link.display().to_string(), "symbolic link"),
        (dir_out.display().to_string(), "it is a directory"),
    ] {
        let o = vx(&["run", g, "--set", &format!("out={path}")]);
        let err = text(&o.stderr);
        assert_eq!(code(&o), 2, "{path}: {err}");
        assert!(err.contains(&format!("image 'white': cannot write {path}")) && err.contains(why), "{path}: {err}");
    }
    assert!(!target.exists(), "nothing written through the link");
    std::fs::remove_file(&link).ok();
    std::fs::remove_file(&file_as_dir).ok();

    // A successful write replaces the file and leaves no temporary file beside it.
    let out_dir = tmp("outdir");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("white.png");
    std::fs::write(&out, b"old contents").unwrap();
    let o = vx(&["-M", d, "run", g, "--set", &format!("out={}", out.display())]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let img = image::open(&out).unwrap().to_luma8();
    assert_eq!(img.dimensions(), (96, 64));
    assert!(img.pixels().all(|p| p.0[0] == 255));
    let names: Vec<_> = std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["white.png"], "only the output");
    std::fs::remove_dir_all(&out_dir).ok();

    // Standard output to a full disk: an error (exit 1), not a panic.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o =
        Command::new(env!("CARGO_BIN_EXE_vx")).args(["-M", d, "inspect", "vx_filters"]).stdout(full).output().unwrap();
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cannot write to standard output"), "{}", text(&o.stderr));
}

/// A target kernel from a module runs from `vx run` on a target the file declares; the command
/// line declares and places as well.
#[test]
fn a_target_kernel_runs_on_a_declared_target() {
    let dir = all_modules_dir();
    let d = dir.to_str().unwrap();
    let graph = workspace_root().join("examples/graphs/targets.toml");
    let g = graph.to_str().unwrap();
    let out = tmp("targets.png");
    let o = vx(&["-M", d, "run", g, "--frames", "3", "--set", &format!("output={}", out.display())]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("invert  testmod.invert  host"), "{s}");
    assert!(s.contains("gain    testmod.gain    tm_dsp"), "{s}");
    let photo = image::open(workspace_root().join("examples/data/astronaut.jpg")).unwrap().to_luma8();
    let written = image::open(&out).unwrap().to_luma8();
    assert_eq!(written.dimensions(), photo.dimensions());
    assert!(written.pixels().zip(photo.pixels()).all(|(w, p)| w.0[0] == 255 - p.0[0]), "out = 255 - photo");

    // The command line: the target redeclared, the host kernel placed on it too.
    let o = vx(&[
        "-M",
        d,
        "run",
        g,
        "--target",
        "tm_dsp:threads=2:queue_depth=4",
        "--place",
        "invert=tm_dsp",
        "--set",
        &format!("output={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("invert  testmod.invert  tm_dsp"), "{}", text(&o.stdout));
    let again = image::open(&out).unwrap().to_luma8();
    assert_eq!(again, written);

    // A target kernel has no host implementation: placing it there fails at verify (exit 4).
    let o = vx(&["-M", d, "run", g, "--place", "gain=host", "--set", &format!("output={}", out.display())]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no implementation on target 'host'"), "{}", text(&o.stderr));
    std::fs::remove_file(&out).ok();
}

/// A child `vx` whose standard error is read up to the line containing `ready`.
struct Child {
    child: std::process::Child,
    stderr: std::io::BufReader<std::process::ChildStderr>,
    seen: String,
}

fn spawn(args: &[&str], ready: &str) -> Child {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_vx"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains(ready) {
        let n = stderr.read_line(&mut seen).unwrap();
        assert!(n > 0, "vx ended before `{ready}`:\n{seen}");
    }
    Child { child, stderr, seen }
}

impl Child {
    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the pid of a child this test spawned and has not waited for.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }
    /// Exit code, standard output, standard error.
    fn finish(mut self) -> (Option<i32>, String, String) {
        use std::io::Read;
        let status = self.child.wait().unwrap();
        let mut out = String::new();
        self.child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        self.stderr.read_to_string(&mut self.seen).unwrap();
        (status.code(), out, self.seen)
    }
}

/// SIGINT / SIGTERM: the frame in hand finishes, the outputs are written, the summary printed,
/// exit code 0 — for `run` of many frames and for `watch`; a second signal exits at once with 130.
#[test]
fn signals_stop_run_and_watch_cleanly_and_a_second_one_exits_130() {
    let dir = filters_dir();
    let d = dir.to_str().unwrap();
    let sizes = workspace_root().join("examples/graphs/sizes.toml");
    let g = sizes.to_str().unwrap();
    let white = |p: &Path| {
        let img = image::open(p).unwrap().to_luma8();
        img.dimensions() == (96, 64) && img.pixels().all(|p| p.0[0] == 255)
    };

    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let out = tmp(&format!("run-{name}.png"));
        let o = format!("out={}", out.display());
        let c = spawn(&["-M", d, "run", g, "--frames", "1000000000", "--set", &o], "vx: running");
        std::thread::sleep(std::time::Duration::from_millis(200));
        c.signal(sig);
        let (code, stdout, stderr) = c.finish();
        assert_eq!(code, Some(0), "run, {name}: {stderr}");
        assert!(stderr.contains(&format!("vx: {name}: stopped after frame")), "{stderr}");
        assert!(
            stdout.contains(&format!("frame(s) of graph 'sizes' (stopped by {name}; 1000000000 asked)")),
            "{stdout}"
        );
        assert!(stdout.contains("not    filters.not"), "the time table: {stdout}");
        assert!(white(&out), "run, {name}: the output written");
        std::fs::remove_file(&out).ok();

        let out = tmp(&format!("watch-{name}.png"));
        let o = format!("out={}", out.display());
        let c = spawn(&["watch", d, g, "--fps", "20", "--set", &o], "vx: serving");
        std::thread::sleep(std::time::Duration::from_millis(300));
        c.signal(sig);
        let (code, stdout, stderr) = c.finish();
        assert_eq!(code, Some(0), "watch, {name}: {stderr}");
        assert!(stdout.contains(&format!("(stopped by {name})")) && stdout.contains(" 0 errors"), "{stdout}");
        assert!(watch_frames(&stdout) >= 1);
        assert!(white(&out), "watch, {name}: the output written");
        std::fs::remove_file(&out).ok();
    }

    // A second signal (of either kind; two of one kind may merge while pending) ends it at once.
    for cmd in ["run", "watch"] {
        let out = tmp(&format!("twice-{cmd}.png"));
        let o = format!("out={}", out.display());
        let c = match cmd {
            "run" => spawn(&["-M", d, "run", g, "--frames", "1000000000", "--set", &o], "vx: running"),
            _ => spawn(&["watch", d, g, "--set", &o], "vx: serving"),
        };
        c.signal(libc::SIGINT);
        c.signal(libc::SIGTERM);
        let (code, _, stderr) = c.finish();
        assert_eq!(code, Some(130), "{cmd}: {stderr}");
        std::fs::remove_file(&out).ok();
    }
}

/// `vx inspect DIR`, `vx inspect` (the search path), `vx inspect MODULE KERNEL`, text and JSON.
#[test]
fn inspect_lists_directories_and_details_kernels() {
    let dir = all_modules_dir();
    std::fs::write(dir.join("libjunk.so"), b"not a module").unwrap();
    let d = dir.to_str().unwrap();

    let o = vx(&["inspect", d]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.starts_with(&format!("{d}: 3 module(s)")), "{s}");
    assert!(
        s.contains(&format!(
            "vx_filters  0.1.0     ABI {MODULE_ABI_VERSION}  11 kernel(s): filters.add, filters.box3x3"
        )),
        "{s}"
    );
    assert!(s.contains("vx_testmod  1.0.0     ABI") && s.contains("testmod.gain"), "{s}");
    assert!(s.contains("junk        not loadable: "), "{s}");

    let o = vx(&["inspect", d, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let modules = v["modules"].as_array().unwrap();
    assert_eq!(
        modules.iter().map(|m| m["name"].as_str().unwrap()).collect::<Vec<_>>(),
        ["junk", "vx_filters", "vx_testmod"]
    );
    assert!(modules[0]["error"].is_string() && modules[0]["version"].is_null());
    assert_eq!(modules[1]["version"], "0.1.0");
    assert_eq!(modules[1]["abi_version"], MODULE_ABI_VERSION);
    assert_eq!(modules[1]["kernels"].as_array().unwrap().len(), 11);

    // No argument: every directory of the search path (-M first).
    let o = vx(&["-M", d, "inspect", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let first = &v["search_path"][0];
    assert_eq!(first["directory"], d);
    assert_eq!(first["modules"].as_array().unwrap().len(), 3);
    let o = vx(&["-M", d, "inspect"]);
    assert!(text(&o.stdout).starts_with(&format!("{d}: 3 module(s)")), "{}", text(&o.stdout));

    // One kernel in detail.
    let o = vx(&["-M", d, "inspect", "vx_filters", "filters.sobel3x3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    for line in [
        "Kernel filters.sobel3x3  [tiling kernel",
        "module: vx_filters 0.1.0",
        "index  name          direction  type     element  state",
        "1      gx            output     image    S16      required",
        "output block: 1x1",
        "input neighborhood: left -1, right 1, top -1, bottom 1",
        "border: Reflect101 (row kernel: the SDK extends the image edge by this rule; nodes may set: undefined)",
        "alias hints: none",
        "targets: host (its own process function: any target)",
        "valid rectangle: what its tiles cover",
    ] {
        assert!(s.contains(line), "{line} missing in:\n{s}");
    }
    let o = vx(&["-M", d, "inspect", "vx_testmod", "testmod.gain", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["module"], "vx_testmod");
    let k = &v["kernel"];
    assert_eq!(k["targets"], serde_json::json!(["tm_dsp"]));
    assert_eq!(k["runs_anywhere"], false);
    assert_eq!(k["parameters"][1]["direction"], "output");
    assert_eq!(k["parameters"][0]["state"], "required");
    assert!(k["valid_rect"].as_str().unwrap().contains("whole output"));
    let o = vx(&["-M", d, "inspect", "vx_filters", "filters.truncate"]);
    assert!(text(&o.stdout).contains("alias hint: parameters 0 and 1 (sparse)"), "{}", text(&o.stdout));

    // A kernel the module does not have: refused with its kernels.
    let o = vx(&["-M", d, "inspect", "vx_filters", "filters.nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no kernel 'filters.nope' (its kernels: filters.add"), "{}", text(&o.stderr));
    // A path that is neither a directory nor a module file.
    let o = vx(&["inspect", "/nonexistent/plugins/"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no such file or directory"), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("lib<name>.so"), "{}", text(&o.stderr));
}

/// docs/book/src/graph-file.md shows the example files byte for byte, and every example file is run.
#[test]
fn the_graph_file_docs_show_the_example_files_and_each_runs() {
    let root = workspace_root();
    let doc = std::fs::read_to_string(root.join("docs/book/src/graph-file.md")).unwrap();
    let mut shown = Vec::new();
    let mut rest = doc.as_str();
    while let Some(i) = rest.find("<!-- examples/graphs/") {
        let after = &rest[i + 5..];
        let name = &after[..after.find(" -->").unwrap()];
        let block = &after[after.find("```toml\n").unwrap() + 8..];
        let body = &block[..block.find("```\n").unwrap()];
        let file = std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(body, file, "docs/book/src/graph-file.md shows {name} as it is");
        shown.push(name.to_owned());
        rest = &block[body.len()..];
    }
    let mut files: Vec<String> = std::fs::read_dir(root.join("examples/graphs"))
        .unwrap()
        .map(|e| format!("examples/graphs/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    files.sort();
    shown.sort();
    assert_eq!(shown, files, "every example file is in the doc");

    let dir = all_modules_dir();
    let d = dir.to_str().unwrap();
    let out = tmp("doc-example.png");
    for f in &files {
        let o = vx(&[
            "-M",
            d,
            "run",
            root.join(f).to_str().unwrap(),
            "--set",
            &format!("{}={}", out_var(f), out.display()),
        ]);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", text(&o.stderr));
        assert!(image::open(&out).is_ok(), "{f} wrote its output");
        std::fs::remove_file(&out).ok();
    }
    // Sizes from variables: `width = "${w}"`.
    let o = vx(&[
        "-M",
        d,
        "run",
        root.join("examples/graphs/sizes.toml").to_str().unwrap(),
        "--set",
        "w=40",
        "--set",
        "h=30",
        "--set",
        "frames=2",
        "--set",
        &format!("out={}", out.display()),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("2 frame(s) of graph 'sizes'"), "{}", text(&o.stdout));
    assert_eq!(image::open(&out).unwrap().to_luma8().dimensions(), (40, 30));
    std::fs::remove_file(&out).ok();
}

/// The variable each example file writes its output to.
fn out_var(file: &str) -> &'static str {
    if file.ends_with("sizes.toml") { "out" } else { "output" }
}

/// A graph whose only kernel (`spec.posterize`: 4×1 blocks, no flexible function) leaves the last
/// columns of a 10-wide output unwritten: `vx run` says so by default — vx-core's warning at verify
/// and its own, naming the output, its file and the valid rectangle — without colour codes when
/// standard error is no terminal; `--log off` silences vx-core's, not vx's.
#[test]
fn an_output_with_unwritten_pixels_is_warned_about() {
    let dir = plugin_dir("cli-spec", &[("vx_spec_kernels", &build_module("vx-spec-kernels", &[]))]);
    let d = dir.to_str().unwrap();
    let g = write(
        "partial",
        "modules = [\"vx_spec_kernels\"]\n[vars]\nw = 10\nout = \"p.png\"\n\
         [images.src]\nwidth = \"${w}\"\nheight = 2\nformat = \"U8\"\n\
         [images.edges]\nlike = \"src\"\nformat = \"U8\"\nwrite = \"${out}\"\n\
         [[nodes]]\nname = \"post\"\nkernel = \"spec.posterize\"\nparams = [\"src\", \"edges\"]\n",
    );
    let out = tmp("partial.png");
    let set = format!("out={}", out.display());
    let o = vx(&["-M", d, "run", g.to_str().unwrap(), "--set", &set]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("tiling kernel 'spec.posterize' has no flexible function"), "{err}");
    assert!(
        err.contains(&format!(
            "vx: warning: output 'edges' ({}): only 8x2 of 10x2 pixels are valid (x 0..8, y 0..2); the rest was not \
             written by any node",
            out.display()
        )),
        "{err}"
    );
    assert!(!err.contains('\x1b'), "no colour codes when standard error is not a terminal: {err:?}");
    assert!(out.exists());

    // --log off: vx-core's warning is gone, vx's own stays.
    let o = vx(&["--log", "off", "-M", d, "run", g.to_str().unwrap(), "--set", &set]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("has no flexible function"), "{err}");
    assert!(err.contains("vx: warning: output 'edges'"), "{err}");

    // Blocks that divide the image: no warning.
    let o = vx(&["-M", d, "run", g.to_str().unwrap(), "--set", &set, "--set", "w=12"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The one warning left is the test module's build (a debug build, timed).
    let err: String = err.lines().filter(|l| !l.contains("is a debug build")).collect::<Vec<_>>().join("\n");
    assert!(!err.contains("warning") && !err.contains("WARN"), "{err}");
    std::fs::remove_file(&out).ok();
    std::fs::remove_file(&g).ok();
}

impl Child {
    /// Read standard error up to a line containing `s`.
    fn wait_for(&mut self, s: &str) {
        use std::io::BufRead;
        while !self.seen.contains(s) {
            let n = self.stderr.read_line(&mut self.seen).unwrap();
            assert!(n > 0, "vx ended before `{s}`:\n{}", self.seen);
        }
    }
}

/// Put `lib` in place of `dir/lib<name>.so` the way a build does: written beside it, renamed over it.
fn replace_module(dir: &Path, name: &str, lib: &Path) {
    let incoming = dir.join("incoming.tmp");
    std::fs::copy(lib, &incoming).unwrap();
    std::fs::rename(&incoming, dir.join(format!("lib{name}.so"))).unwrap();
}

/// `vx watch`: a new version that renames a kernel the graph uses is refused, and vx says what the
/// user can do; with `--force-reload` it is swapped in and vx names the nodes that keep the old code.
#[test]
fn watch_refuses_a_reload_that_drops_a_used_kernel_unless_forced() {
    let (v1, renamed) = (vx_tests::testmod("vx_testmod", &[]), vx_tests::testmod("vx_testmod", &["rename-invert"]));
    let g = write(
        "reload",
        "name = \"reload\"\nmodules = [\"vx_testmod\"]\n[vars]\nout = \"r.png\"\n\
         [images.a]\nwidth = 16\nheight = 8\nformat = \"U8\"\n\
         [images.b]\nlike = \"a\"\nformat = \"U8\"\nwrite = \"${out}\"\n\
         [[nodes]]\nname = \"inv\"\nkernel = \"testmod.invert\"\nparams = [\"a\", \"b\"]\n",
    );
    for force in [false, true] {
        let dir = plugin_dir("cli-reload", &[("vx_testmod", &v1)]);
        let out = tmp(&format!("reload-{force}.png"));
        let set = format!("out={}", out.display());
        let mut args = vec!["watch", dir.to_str().unwrap(), g.to_str().unwrap(), "--fps", "20", "--seconds", "30"];
        args.extend(["--set", &set]);
        if force {
            args.push("--force-reload");
        }
        let mut c = spawn(&args, "vx: serving");
        replace_module(&dir, "vx_testmod", &renamed);
        if force {
            c.wait_for("keep the old code");
        } else {
            c.wait_for("--force-reload");
        }
        // The first frame after the reload is written while serving, not only at the end.
        c.wait_for("(the first after the reload): b -> ");
        assert!(image::open(&out).is_ok(), "the output is written while serving");
        c.signal(libc::SIGINT);
        let (code, stdout, stderr) = c.finish();
        assert_eq!(code, Some(0), "force {force}: {stderr}");
        assert!(stdout.contains(" 0 errors"), "{stdout}");
        if force {
            assert!(stderr.contains("module 'vx_testmod' reloaded (forced"), "{stderr}");
            assert!(stderr.contains("node 'inv' of graph 'reload' (testmod.invert)"), "{stderr}");
            assert!(stderr.contains("(testmod.invert)"), "{stderr}");
        } else {
            assert!(stderr.contains("module 'vx_testmod' not reloaded"), "{stderr}");
            assert!(stderr.contains("testmod.invert"), "{stderr}");
            // Two builds of one version are told apart as builds, and the Rust API is not named.
            assert!(stderr.contains("the new build (version 1.0.0, as the loaded one)"), "{stderr}");
            assert!(stderr.contains("the loaded build keeps serving"), "{stderr}");
            assert!(!stderr.contains("ReloadOptions"), "{stderr}");
            assert!(stderr.contains("or force the reload (--force-reload), which leaves them"), "{stderr}");
            assert!(
                stderr.contains(
                    "restart `vx watch` to rebuild the graph with the new version, or run with --force-reload"
                ),
                "{stderr}"
            );
        }
        // The frames went on: the output is the inverted zeros.
        let img = image::open(&out).unwrap().to_luma8();
        assert!(img.pixels().all(|p| p.0[0] == 255));
        std::fs::remove_file(&out).ok();
        std::fs::remove_dir_all(&dir).ok();
    }
    std::fs::remove_file(&g).ok();
}

/// The mode of a file as `ls -l` shows its permission bits.
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Outputs: a replaced file keeps its permission bits; a file the user may not write is refused
/// before any work (exit 2, the path named); standard output (`-`, `/dev/stdout`) takes an image
/// (vx's report then goes to standard error); a file system that takes no new file says so.
#[test]
fn outputs_keep_modes_refuse_read_only_files_and_go_to_stdout() {
    use std::os::unix::fs::PermissionsExt;
    let dir = filters_dir();
    let d = dir.to_str().unwrap();
    let sizes = workspace_root().join("examples/graphs/sizes.toml");
    let g = sizes.to_str().unwrap();

    // 0640 stays 0640.
    let out_dir = tmp("modes");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("white.png");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = vx(&["-M", d, "run", g, "--set", &format!("out={}", out.display())]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(mode(&out), 0o640);
    assert!(image::open(&out).is_ok());

    // Read-only for the user (as root, whom no mode stops, the run drops to nobody): refused.
    let ro_dir = tmp("ro");
    // The scratch directory is the test process's own (0700): `nobody` may pass through it (to
    // reach `ro`), not list or write it.
    std::fs::set_permissions(tmp(""), std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::create_dir_all(&ro_dir).unwrap();
    std::fs::set_permissions(&ro_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let ro = ro_dir.join("white.png");
    std::fs::write(&ro, b"keep me").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vx"));
    cmd.args(["run", g, "--set", &format!("out={}", ro.display())]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let o = cmd.output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot write {}", ro.display())) && err.contains("no write permission"), "{err}");
    assert_eq!(std::fs::read(&ro).unwrap(), b"keep me");
    std::fs::remove_dir_all(&ro_dir).ok();

    // Standard output: the PNG on stdout, the report on stderr.
    for path in ["/dev/stdout", "-"] {
        let o = vx(&["-M", d, "run", g, "--set", &format!("out={path}")]);
        assert_eq!(o.status.code(), Some(0), "{path}: {}", text(&o.stderr));
        assert!(o.stdout.starts_with(b"\x89PNG"), "{path}: {:?}", &o.stdout[..o.stdout.len().min(16)]);
        let img = image::load_from_memory(&o.stdout).unwrap().to_luma8();
        assert_eq!(img.dimensions(), (96, 64));
        assert!(text(&o.stderr).contains("frame(s) of graph 'sizes'"), "{}", text(&o.stderr));
    }

    // A file of /proc: not "No such file or directory" alone, but what is wrong.
    let o = vx(&["run", g, "--set", "out=/proc/version"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write /proc/version"), "{err}");
    assert!(err.contains("/proc takes no new files") || err.contains("no write permission"), "{err}");
    std::fs::remove_dir_all(&out_dir).ok();
}

/// Two images that write one file under two spellings (`o.png` and `./o.png`, or through a link to
/// the directory) are refused before any work.
#[test]
fn two_spellings_of_one_output_file_are_refused() {
    let work = tmp("samefile");
    std::fs::create_dir_all(&work).unwrap();
    let link = tmp("samefile-link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&work, &link).unwrap();
    let g = work.join("g.toml");
    std::fs::write(
        &g,
        "modules = [\"no_such_module_anywhere\"]\n[vars]\na = \"a.png\"\nb = \"b.png\"\n\
         [images.one]\nwidth = 8\nheight = 8\nformat = \"U8\"\nwrite = \"${a}\"\n\
         [images.two]\nwidth = 8\nheight = 8\nformat = \"U8\"\nwrite = \"${b}\"\n",
    )
    .unwrap();
    let same_twice = format!("b={}/o.png", link.display());
    for (a, b) in [("a=o.png", "b=./o.png"), ("a=o.png", same_twice.as_str())] {
        let o = Command::new(env!("CARGO_BIN_EXE_vx"))
            .current_dir(&work)
            .args(["run", "g.toml", "--set", a, "--set", b])
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a} {b}: {err}");
        assert!(err.contains("[images.one] and [images.two] write the same file"), "{a} {b}: {err}");
    }
    std::fs::remove_file(&link).ok();
    std::fs::remove_dir_all(&work).ok();
}

/// `vx inspect FILE|MODULE|DIR NAME` takes a kernel's unique short name (`gaussian3x3` for
/// `filters.gaussian3x3`) and lists the candidates when a short name fits several kernels.
#[test]
fn inspect_takes_a_unique_short_kernel_name() {
    let lib = build_module("vx-filters", &[]);
    let dir = plugin_dir(
        "cli-short-names",
        &[("vx_filters", &lib), ("vx_spec_kernels", &build_module("vx-spec-kernels", &[]))],
    );
    let d = dir.to_str().unwrap();
    let file = dir.join("libvx_filters.so");
    for args in [
        vec!["inspect", file.to_str().unwrap(), "gaussian3x3"],
        vec!["-M", d, "inspect", "vx_filters", "gaussian3x3"],
        vec!["inspect", d, "filters.gaussian3x3"],
        vec!["inspect", d, "sobel3x3"],
    ] {
        let o = vx(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        let s = text(&o.stdout);
        let want =
            if args.last() == Some(&"sobel3x3") { "Kernel filters.sobel3x3" } else { "Kernel filters.gaussian3x3" };
        assert!(s.starts_with(want), "{args:?}:\n{s}");
    }
    // Two modules of the directory have a `gaussian3x3`: both are named, none is picked.
    let o = vx(&["inspect", d, "gaussian3x3"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let e = text(&o.stderr);
    assert!(
        e.contains("kernel name 'gaussian3x3' is ambiguous in")
            && e.contains("filters.gaussian3x3 (vx_filters) or spec.gaussian3x3 (vx_spec_kernels)")
            && e.contains("give the full name"),
        "{e}"
    );
    // A short name is a whole segment after a dot: `ussian3x3` is no kernel's.
    let o = vx(&["inspect", file.to_str().unwrap(), "ussian3x3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("has no kernel 'ussian3x3' (its kernels: filters.add"), "{}", text(&o.stderr));
}

/// `vx inspect`: a directory and a kernel (searched among its modules), a target kernel called one,
/// shared libraries that are no kernel module; a module path that names no file.
#[test]
fn inspect_finds_kernels_in_directories_and_names_kinds() {
    let dir = all_modules_dir();
    std::fs::copy(build_module("vx-noentry", &[]), dir.join("libvx_noentry.so")).unwrap();
    let d = dir.to_str().unwrap();

    let o = vx(&["inspect", d, "testmod.gain"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("Kernel testmod.gain  [target kernel"), "{s}");
    assert!(s.contains("module: vx_testmod 1.0.0"), "{s}");
    assert!(s.contains("tiling: none (a target kernel)"), "{s}");
    let o = vx(&["inspect", d, "filters.sobel3x3", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["module"], "vx_filters");
    let o = vx(&["inspect", d, "filters.nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains(&format!("no module of {d} has a kernel 'filters.nope'")), "{}", text(&o.stderr));

    // The module listing: the target kernel's kind.
    let o = vx(&["-M", d, "inspect", "vx_testmod"]);
    assert!(text(&o.stdout).contains("testmod.gain  [target kernel"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("testmod.invert  [tiling kernel"), "{}", text(&o.stdout));

    // A library without a module entry point: "not a kernel module" in a directory's listing,
    // left out of the search path's.
    let o = vx(&["inspect", d]);
    assert!(text(&o.stdout).contains("vx_noentry  not a kernel module"), "{}", text(&o.stdout));
    let o = vx(&["-M", d, "inspect"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("vx_noentry") && !text(&o.stdout).contains("vx_macros"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).starts_with(&format!("{d}: 2 module(s)")), "{}", text(&o.stdout));

    // A module path that names no file.
    let g = write("nofile", "modules = [\"./nosuch/libx.so\"]\n");
    let o = vx(&["run", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no file") && text(&o.stderr).contains("nosuch/libx.so"), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("in one of"), "{}", text(&o.stderr));
    std::fs::remove_file(&g).ok();
}

/// What a newcomer meets in the first hour, each message finishing its sentence: a kernel-name typo
/// gets the nearest name and the loaded ones; a module not found, the search-path flags; a debug
/// build, a warning where it is timed or served; a module shadowed by another of its name later in
/// the search path, a warning naming both; the border a kernel declares and what a node may set.
#[test]
fn first_hour_messages_say_what_to_do() {
    let dir = filters_dir();
    let d = dir.to_str().unwrap();
    let edges = std::fs::read_to_string(workspace_root().join("examples/graphs/edges.toml")).unwrap();
    let with_input = |body: String, name: &str| {
        let photo = workspace_root().join("examples/data/astronaut.jpg");
        let body = body.replace("../data/astronaut.jpg", photo.to_str().unwrap());
        write(name, &body.replace("\"edges.png\"", &format!("{:?}", tmp(&format!("{name}.png")).display().to_string())))
    };

    // A typo in a kernel name: the nearest name, and the kernels there are.
    let g = with_input(edges.replace("filters.gaussian3x3", "filters.gausian3x3"), "typo");
    let o = vx(&["-M", d, "run", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(e.contains("no kernel named 'filters.gausian3x3'; did you mean 'filters.gaussian3x3'?"), "{e}");
    assert!(e.contains("(the context's kernels: filters.add, "), "{e}");

    // A module not found: where vx looked, and how to tell it where to look.
    let o = vx(&["inspect", "vx_nowhere"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(e.contains("module 'vx_nowhere' not found: no libvx_nowhere.so in the search path ("), "{e}");
    assert!(e.contains("give its directory with -M DIR (or in VX_MODULE_PATH"), "{e}");

    // A debug build (the test modules are): named with its file, and a warning where it is timed.
    let g = with_input(edges.clone(), "debug");
    let o = vx(&["-M", d, "run", g.to_str().unwrap(), "--frames", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(e.contains(&format!("vx: module vx_filters 0.1.0 from {d}/libvx_filters.so (debug build)")), "{e}");
    assert!(e.contains("vx: warning: module 'vx_filters' is a debug build: the times are of unoptimized code"), "{e}");
    assert_eq!(e.matches("is a debug build").count(), 1, "one warning: {e}");
    let o = vx(&["-M", d, "inspect", "vx_filters"]);
    assert!(
        text(&o.stdout).contains("  build: debug (unoptimized: its kernels run many times slower"),
        "{}",
        text(&o.stdout)
    );

    // The same module in two directories of the search path: the first loads, the other is named.
    let other = plugin_dir("cli-shadow", &[("vx_filters", &build_module("vx-filters", &[]))]);
    let o = vx(&["-M", d, "-M", other.to_str().unwrap(), "run", g.to_str().unwrap(), "--frames", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!(
            "module 'vx_filters': loading {d}/libvx_filters.so, the first of the search path; it shadows {}/libvx_filters.so",
            other.display()
        )),
        "{e}"
    );
    assert_eq!(e.matches("it shadows").count(), 1, "said once, at the load: {e}");

    // Borders: what a kernel declares and what a node may set, in one vocabulary.
    let o = vx(&["-M", d, "inspect", "vx_filters", "gaussian3x3"]);
    let s = text(&o.stdout);
    assert!(
        s.contains(
            "    border: Reflect101 (row kernel: the SDK extends the image edge by this rule; nodes may set: undefined)"
        ),
        "{s}"
    );
    let o = vx(&["-M", d, "inspect", "vx_filters", "threshold"]);
    let s = text(&o.stdout);
    assert!(
        s.contains("    border: Undefined (the image edge is left unwritten; nodes may set: self, if the kernel"),
        "{s}"
    );
    let node_border = |b: &str| {
        edges.replace(
            "params = [\"photo\", \"blurred\"]",
            &format!("params = [\"photo\", \"blurred\"]\nborder = \"{b}\""),
        )
    };
    let g = with_input(node_border("replicate"), "border-replicate");
    let o = vx(&["-M", d, "run", g.to_str().unwrap(), "--frames", "1"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(
        e.contains("node border Replicate refused: the kernel is a row kernel whose edge rule, Reflect101, is declared in its source"),
        "{e}"
    );
    assert!(e.contains("a tiling node's border is Undefined (the image edge is left unwritten"), "{e}");
    let g = with_input(node_border("reflect101"), "border-reflect");
    let o = vx(&["-M", d, "run", g.to_str().unwrap(), "--frames", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("`reflect101` is a row kernel's edge rule, declared in the kernel's source"),
        "{}",
        text(&o.stderr)
    );
    for ok in ["undefined", "self"] {
        let g = with_input(node_border(ok), &format!("border-{ok}"));
        let o = vx(&["-M", d, "run", g.to_str().unwrap(), "--frames", "1"]);
        assert_eq!(o.status.code(), Some(0), "border = {ok}: {}", text(&o.stderr));
    }
}

/// `vx watch --write-every N` writes the outputs while serving, each file whole (renamed into place).
#[test]
fn watch_writes_every_n_frames_while_serving() {
    let dir = filters_dir();
    let graph = workspace_root().join("examples/graphs/edges.toml");
    let out_png = tmp("watch-every.png");
    let set = format!("output={}", out_png.display());
    let args = [
        "watch",
        dir.to_str().unwrap(),
        graph.to_str().unwrap(),
        "--fps",
        "50",
        "--write-every",
        "5",
        "--seconds",
        "60",
        "--set",
        &set,
    ];
    let mut c = spawn(&args, "vx: serving");
    c.wait_for("(--write-every): edges -> ");
    assert!(image::open(&out_png).is_ok(), "written while serving");
    c.signal(libc::SIGINT);
    let (code, _, stderr) = c.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("vx: frame 5 (--write-every): edges -> "), "{stderr}");
    std::fs::remove_file(&out_png).ok();
}

/// Help texts say each default once, and `vx new` does not list `-M` (it loads no module).
#[test]
fn help_texts_are_tidy() {
    let h = text(&vx(&["watch", "--help"]).stdout);
    assert!(h.contains("[default: 30]") && !h.contains("(default: 30)"), "{h}");
    assert!(h.contains("--write-every <N>"), "{h}");
    let h = text(&vx(&["new", "--help"]).stdout);
    assert!(!h.contains("--module-dir"), "{h}");
    let o = vx(&["-M", "/tmp", "new", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("`vx new` loads no module"), "{}", text(&o.stderr));
    // -M after the command's name, as the book writes it.
    let dir = filters_dir();
    let o = vx(&["inspect", "-M", dir.to_str().unwrap(), "vx_filters"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}
