//! The README's demo (`pipeline`), run as a user runs it: the edge image it writes, and its time
//! table, where the four fused nodes are one row (they run as one and share one time).

use std::process::Command;

use vx_tests::{build_module, plugin_dir, scratch_dir, workspace_root};

#[test]
fn the_demo_writes_edges_and_shows_the_fused_group_as_one_row() {
    let modules = plugin_dir("demo", &[("vx_filters", &build_module("vx-filters", &[]))]);
    let out_png = scratch_dir("demo").join("edges.png");
    let input = workspace_root().join("examples/data/astronaut.jpg");
    let out = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args([input.to_str().unwrap(), out_png.to_str().unwrap(), "100"])
        .env("VX_MODULE_PATH", &modules)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));

    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains(" µs")).collect();
    assert_eq!(rows.len(), 2, "one row for the fused group and one for the graph:\n{stdout}");
    assert!(rows[0].starts_with("fused: gaussian + sobel + magnitude + threshold  4 kernels  "), "{stdout}");
    assert!(rows[1].starts_with("graph "), "{stdout}");
    let header = stdout.lines().find(|l| l.starts_with("node")).expect("a header");
    assert!(header.split_whitespace().eq(["node", "kernel", "avg", "min", "max"]), "{header}");

    // The edges: the photo's size, some edges but mostly not.
    let edges = image::open(&out_png).unwrap().to_luma8();
    let photo = image::open(&input).unwrap();
    assert_eq!(edges.dimensions(), (photo.width(), photo.height()));
    let on = edges.pixels().filter(|p| p.0[0] == 255).count();
    assert!(stdout.contains(&format!("edge pixels: {on} of {}", edges.len())), "{stdout}");
    assert!(on > 1000 && on < edges.len() / 2, "{on} edge pixels");
    assert!(edges.pixels().all(|p| p.0[0] == 0 || p.0[0] == 255), "edges are 0 or 255");
}
