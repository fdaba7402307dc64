//! Reloading modules: swap to a new build in place, graphs pick up the new code at their next
//! process, a failed reload leaves the old version serving, plugin directories load what they can,
//! and a graph keeps processing while the module is reloaded 200 times.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vx_core::*;
use vx_tests::{build_module, plugin_dir, testmod};

fn install(dir: &Path, name: &str, lib: &Path) {
    // Write next to it and rename: the loader never sees a half-written file.
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::copy(lib, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join(format!("lib{name}.so"))).unwrap();
}

fn invert_graph(ctx: &Context, pixels: &[u8]) -> (Graph, Image) {
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    let g = Graph::new(ctx).unwrap();
    let w = pixels.len() as u32;
    let src = Image::new(ctx, w, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(w, 1), 0, pixels).unwrap();
    let dst = Image::new(ctx, w, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    (g, dst)
}

#[test]
fn reload_swaps_kernels_and_graphs_pick_up_the_new_code() {
    let (v1, v2) = (testmod("testmod_reload", &[]), testmod("testmod_reload", &["v2"]));
    let dir = plugin_dir("reload", &[("testmod_reload", &v1)]);
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_reload").unwrap();
    let (g, dst) = invert_graph(&ctx, &[0, 100]);
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155]);

    install(&dir, "testmod_reload", &v2);
    ctx.reload_module("testmod_reload").unwrap();
    assert_eq!(ctx.module_state("testmod_reload"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    assert_eq!((ctx.unique_kernel_count(), ctx.module_count()), (4, 1), "swapped, not added");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 156], "version 2 inverts and adds one");
    assert_eq!(g.reloads().unwrap(), 1);
    // The old version was used only by the node, which now runs the new one: it is gone.
    assert_eq!(ctx.module_history("testmod_reload"), [("1.0.0".to_string(), ModuleState::Unloaded)]);

    // A reload that fails keeps the running version.
    install(&dir, "testmod_reload", &testmod("testmod_reload", &["publish-fails"]));
    let e = ctx.reload_module("testmod_reload").unwrap_err();
    assert!(
        e.message().starts_with("reloading module 'testmod_reload' failed, the loaded version keeps serving"),
        "{e}"
    );
    assert_eq!(ctx.module_state("testmod_reload"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 156]);
    assert_eq!(ctx.unique_kernel_count(), 4);

    ctx.unload_module("testmod_reload").unwrap();
    assert!(ctx.kernel_by_name("testmod.invert").is_err());
    g.process().unwrap(); // still the v2 node, still mapped
    drop(g);
    assert_eq!(ctx.module_state("testmod_reload"), Some(ModuleState::Unloaded));
}

#[test]
fn a_plugin_directory_loads_what_it_can() {
    let dir = plugin_dir(
        "dirload",
        &[("testmod_dir", &testmod("testmod_dir", &[])), ("noentry_dir", &build_module("vx-noentry", &[]))],
    );
    std::fs::write(dir.join("libjunk_dir.so"), b"not a library").unwrap();
    std::fs::write(dir.join("README.txt"), b"ignored").unwrap();
    let ctx = Context::new().unwrap();
    let results = ctx.load_module_dir(&dir).unwrap();
    let summary: Vec<(&str, Option<ErrorKind>)> =
        results.iter().map(|(n, r)| (n.as_str(), r.as_ref().err().map(|e| e.kind()))).collect();
    assert_eq!(
        summary,
        [
            ("junk_dir", Some(ErrorKind::InvalidModule)),
            ("noentry_dir", Some(ErrorKind::InvalidModule)),
            ("testmod_dir", None)
        ]
    );
    assert_eq!(ctx.module_count(), 1);
    assert!(ctx.kernel_by_name("testmod.invert").is_ok());
    assert_eq!(ctx.load_module_dir("/nonexistent/plugins").unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn reload_under_load() {
    const RELOADS: usize = 200;
    let (v1, v2) = (testmod("testmod_load", &[]), testmod("testmod_load", &["v2"]));
    let dir = plugin_dir("underload", &[("testmod_load", &v1)]);
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_load").unwrap();
    let pixels: Vec<u8> = (0..=255).collect();
    let (g, dst) = invert_graph(&ctx, &pixels);
    let want_v1: Vec<u8> = pixels.iter().map(|p| 255 - p).collect();
    let want_v2: Vec<u8> = pixels.iter().map(|p| (255 - p).wrapping_add(1)).collect();

    let stop = Arc::new(AtomicBool::new(false));
    let pauses = Arc::new(Mutex::new(Vec::new()));
    /// Stops the worker however the reloading side leaves (a failed assertion must not hang).
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let (frames, mismatches) = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let (mut frames, mut bad, mut reloads) = (0usize, 0usize, 0u64);
            while !stop.load(Ordering::Acquire) {
                let t = Instant::now();
                g.process().unwrap();
                let dt = t.elapsed();
                let r = g.reloads().unwrap();
                if r != reloads {
                    pauses.lock().unwrap().push(dt);
                    reloads = r;
                }
                let out = dst.to_vec::<u8>().unwrap();
                if out != want_v1 && out != want_v2 {
                    bad += 1;
                }
                frames += 1;
            }
            (frames, bad)
        });
        let _stop = StopOnDrop(&stop);
        for i in 0..RELOADS {
            install(&dir, "testmod_load", if i % 2 == 0 { &v2 } else { &v1 });
            ctx.reload_module("testmod_load").unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20));
        drop(_stop);
        worker.join().unwrap()
    });
    assert_eq!(mismatches, 0, "every output is exactly one version's");
    assert!(frames > RELOADS / 2, "the graph kept processing ({frames} frames)");

    let mut p = pauses.lock().unwrap().clone();
    p.sort();
    let median = p.get(p.len() / 2).copied().unwrap_or_default();
    let max = p.last().copied().unwrap_or_default();
    eprintln!(
        "reload under load: {RELOADS} reloads, {frames} frames, {} frames rebound; reload pause median {median:?}, max {max:?}",
        p.len()
    );

    // At the end at most two shadow copies are mapped (the loaded one and, perhaps, the one the last
    // frame still used), or every extra one is a zombie the loader named.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut mapped: Vec<&str> =
        maps.lines().filter_map(|l| l.split_whitespace().nth(5)).filter(|p| p.contains("libtestmod_load.")).collect();
    mapped.sort();
    mapped.dedup();
    let zombies: Vec<(String, ModuleState)> = ctx
        .module_history("testmod_load")
        .into_iter()
        .filter(|(_, s)| matches!(s, ModuleState::Zombie { .. }))
        .collect();
    assert!(
        mapped.len() <= 2 + zombies.len(),
        "{} shadow copies mapped: {mapped:?}; zombies: {zombies:?}",
        mapped.len()
    );
    for (v, z) in &zombies {
        eprintln!("zombie version {v}: {z}");
    }
}
