//! The `vx` command, run as a user runs it: `inspect` on the vx_filters module (text and JSON),
//! `run` of the sample graph file on the astronaut photo compared pixel for pixel with the same
//! graph built through the library, `watch` for a second, and the exit codes scripts rely on.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vx::*;
use vx_tests::{build_module, plugin_dir, workspace_root};

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
    assert!(s.contains("kernels: 10"), "{s}");
    // Names and elements come from the kernel functions' arguments; the summary from the doc comment.
    assert!(s.contains("filters.threshold  [tiling kernel"), "{s}");
    assert!(s.contains("Binary threshold: 255 above `level`"), "{s}");
    assert!(s.contains("1  level  input   scalar  U8      required"), "{s}");
    assert!(s.contains("2  gy         output  image   S16     required"), "{s}");
    assert!(s.contains("neighborhood (-1, 1, -1, 1), border Self"), "{s}");
    assert!(s.contains("alias hint: parameters 0 and 1 (dense)"), "{s}");

    // By path, as JSON.
    let lib = dir.join("libvx_filters.so");
    let out = vx(&["inspect", lib.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["module"], "vx_filters");
    assert_eq!(v["abi_version"], MODULE_ABI_VERSION);
    let kernels = v["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 10);
    let sobel = kernels.iter().find(|k| k["name"] == "filters.sobel3x3").unwrap();
    assert_eq!(sobel["kind"], "tiling");
    assert_eq!(sobel["tiling"]["neighborhood"], serde_json::json!([-1, 1, -1, 1]));
    let names: Vec<&str> =
        sobel["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["[a, b, c]", "gx", "gy"]);
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
    let out_png = std::env::temp_dir().join(format!("vx-cli-edges-{}.png", std::process::id()));
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
    // The time table lists every node by name and kernel.
    for line in ["gaussian   filters.gaussian3x3", "threshold  filters.threshold", "graph"] {
        assert!(s.contains(line), "{line} missing in:\n{s}");
    }
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
    let out_png = std::env::temp_dir().join(format!("vx-cli-watch-{}.png", std::process::id()));
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
    let frames: u64 = s.split_whitespace().next().unwrap().parse().unwrap();
    assert!(frames >= 1 && s.contains(" 0 errors"), "{s}");
    assert!(out_png.exists());
    std::fs::remove_file(&out_png).ok();
}

fn write(name: &str, body: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("vx-cli-{}-{name}.toml", std::process::id()));
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
