//! Issue 34's memory must-show, measured: the 4K edge pipeline (gaussian → sobel → magnitude →
//! threshold over virtual images) fused, on 2 threads, takes at most 1 MB of peak resident memory
//! above its input and output images. The baseline is the resident set once the context, the module
//! and the two images exist (pixels written); the peak is the kernel's high-water mark (`VmHWM`,
//! reset through `/proc/self/clear_refs` after the baseline) over verification and 10 frames, both
//! threads sharing every frame. Alone
//! in its test binary, so no other test's allocations count. Unfused, the same graph takes the four
//! intermediates (41.5 MB): printed for comparison, and asserted above 30 MB so the measure is
//! known to see them.

use vx::*;
use vx_tests::{build_module, plugin_dir};

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number of kB")
}

/// Peak resident kB above the resident set when called, over `run`.
fn peak_above_baseline(run: impl FnOnce()) -> i64 {
    let base = status_kb("VmRSS:");
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the high-water mark");
    run();
    status_kb("VmHWM:") as i64 - base as i64
}

fn edge_graph(ctx: &Context, a: &Image, out: &Image, fusion: bool) -> Graph {
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    let g = Graph::new(ctx).unwrap();
    g.set_fusion(Some(fusion)).unwrap();
    let v = || Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let (blur, gx, gy, mag) = (v(), v(), v(), v());
    g.add_node(&k("gaussian3x3"), [a, &blur]).unwrap();
    g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap();
    g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
    let level = Scalar::new(ctx, ScalarValue::Uint8(100)).unwrap();
    g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&level), Reference::from(out)]).unwrap();
    g
}

#[test]
fn the_fused_4k_edge_pipeline_takes_at_most_1_mb_above_its_images() {
    let (w, h) = (3840u32, 2160u32);
    // Both threads share every run (no cost model): every thread's line buffers are in use.
    let policy = TilingPolicy { split_by_cost: false, ..TilingPolicy::default() };
    let ctx = Context::builder().threads(2).tiling_policy(policy).build().unwrap();
    ctx.add_module_dir(plugin_dir("fusion-memory", &[("vx_filters", &build_module("vx-filters", &[]))]));
    ctx.load_module("vx_filters").unwrap();
    let a = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..w * h).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    a.copy_from(Rect::full(w, h), 0, &px).unwrap();
    drop(px);
    let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    out.copy_from(Rect::full(w, h), 0, &vec![0u8; (w * h) as usize]).unwrap();
    // Warm up what the first run of a context starts once (the crew's threads, the module's
    // first calls) on small images, so the freed memory of a 4K graph is not in the baseline.
    let (sa, sout) =
        (Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap(), Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap());
    edge_graph(&ctx, &sa, &sout, true).process().unwrap();

    let mut fused_report = String::new();
    let fused_kb = peak_above_baseline(|| {
        let g = edge_graph(&ctx, &a, &out, true);
        for _ in 0..10 {
            g.process().unwrap();
        }
        let r = g.fusion_report().unwrap();
        assert_eq!(r.groups.len(), 1, "{r}");
        fused_report = r.to_string();
    });
    let unfused_kb = peak_above_baseline(|| {
        let g = edge_graph(&ctx, &a, &out, false);
        for _ in 0..10 {
            g.process().unwrap();
        }
    });
    println!(
        "4K edge pipeline, 2 threads: peak above the images {fused_kb} kB fused, {unfused_kb} kB unfused\n{fused_report}"
    );
    assert!(unfused_kb > 30_000, "the measure must see the unfused intermediates: {unfused_kb} kB");
    assert!(fused_kb <= 1024, "fused: {fused_kb} kB above the images (at most 1 MB)\n{fused_report}");
}
