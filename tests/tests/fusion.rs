//! Fusion (issue 34) with the real `vx_filters` module: graphs of its kernels joined by virtual
//! images, run fused and unfused on the same random inputs, give the same pixels at every size
//! (1×1 up, widths around the SIMD widths, heights around the rows per step); the fused images take
//! no buffer; the report names the groups and why a node was left out; a graph fused once keeps
//! its result across runs and a change of its scalar.

use vx::*;
use vx_tests::{build_module, plugin_dir};

const SIZES: [(u32, u32); 14] = [
    (1, 1),
    (2, 1),
    (1, 3),
    (3, 2),
    (5, 7),
    (17, 5),
    (16, 16),
    (31, 33),
    (33, 17),
    (64, 3),
    (100, 61),
    (129, 70),
    (640, 48),
    (320, 240),
];

fn ctx(fusion: bool) -> Context {
    ctx_threads(fusion, 1)
}

/// A context of `threads` threads; with 2, every group that can split does (no cost model), so the
/// bands, their overlap rows and the per-thread rings are exercised.
fn ctx_threads(fusion: bool, threads: usize) -> Context {
    ctx_rows(fusion, threads, 0, 0)
}

/// [`ctx_threads`] with `rows` rows per step and `band` rows per band (0: the rules).
fn ctx_rows(fusion: bool, threads: usize, rows: u32, band: u32) -> Context {
    let policy =
        TilingPolicy { split_by_cost: false, fusion_rows: rows, fusion_band_rows: band, ..TilingPolicy::default() };
    let ctx = Context::builder().threads(threads).tiling_policy(policy).fusion(fusion).build().unwrap();
    ctx.add_module_dir(plugin_dir("fusion", &[("vx_filters", &build_module("vx-filters", &[]))]));
    ctx.load_module("vx_filters").unwrap();
    ctx
}

fn random_image(ctx: &Context, w: u32, h: u32, seed: u64) -> Image {
    let px = vx_tests::random_graphs::rng::pixels(seed, 0xf05e, (w * h) as usize);
    let img = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    img.copy_from(Rect::full(w, h), 0, &px).unwrap();
    img
}

/// The graphs: which one, built in `ctx` on input `a`; returns the graph, its real outputs, the
/// threshold level and the nodes.
fn build(ctx: &Context, which: usize, a: &Image, level: u8) -> (Graph, Vec<Image>, Scalar, Vec<Node>) {
    let (w, h) = (a.width(), a.height());
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    let g = Graph::new(ctx).unwrap();
    let virt = |f| Image::new_virtual(&g, w, h, f).unwrap();
    let real = |f| Image::new(ctx, w, h, f).unwrap();
    let lv = Scalar::new(ctx, ScalarValue::Uint8(level)).unwrap();
    let mut nodes = Vec::new();
    let outs = match which {
        // The edge pipeline: gaussian → sobel → magnitude → threshold.
        0 => {
            let (blur, gx, gy, mag) =
                (virt(ImageFormat::U8), virt(ImageFormat::S16), virt(ImageFormat::S16), virt(ImageFormat::U8));
            let out = real(ImageFormat::U8);
            nodes.push(g.add_node(&k("gaussian3x3"), [a, &blur]).unwrap());
            nodes.push(g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap());
            nodes.push(g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap());
            nodes.push(
                g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&lv), Reference::from(&out)])
                    .unwrap(),
            );
            vec![out]
        }
        // Three 3×3 filters in a row, then a point op reading two of them (fan-out and fan-in).
        1 => {
            let (b1, b2, b3) = (virt(ImageFormat::U8), virt(ImageFormat::U8), virt(ImageFormat::U8));
            let (sum, post) = (real(ImageFormat::S16), real(ImageFormat::U8));
            nodes.push(g.add_node(&k("box3x3"), [a, &b1]).unwrap());
            nodes.push(g.add_node(&k("gaussian3x3"), [&b1, &b2]).unwrap());
            nodes.push(g.add_node(&k("box3x3"), [&b2, &b3]).unwrap());
            nodes.push(g.add_node(&k("add"), [&b1, &b3, &sum]).unwrap());
            nodes.push(g.add_node(&k("posterize"), [&b3, &post]).unwrap());
            vec![post].into_iter().chain(std::iter::once(sum)).collect()
        }
        // A point op first, then a 3×3 filter reading it (its rows ahead of the filter's), and an
        // intermediate also read by the application (real): materialized, not fused.
        _ => {
            let (t, s) = (virt(ImageFormat::U8), real(ImageFormat::U8));
            let (out, gx, gy) = (real(ImageFormat::U8), virt(ImageFormat::S16), virt(ImageFormat::S16));
            nodes.push(
                g.add_node(&k("threshold"), [Reference::from(a), Reference::from(&lv), Reference::from(&t)]).unwrap(),
            );
            nodes.push(g.add_node(&k("gaussian3x3"), [&t, &s]).unwrap());
            nodes.push(g.add_node(&k("sobel3x3"), [&s, &gx, &gy]).unwrap());
            nodes.push(g.add_node(&k("magnitude"), [&gx, &gy, &out]).unwrap());
            vec![s, out]
        }
    };
    (g, outs, lv, nodes)
}

fn pixels(img: &Image) -> Vec<u8> {
    let (w, h) = (img.width(), img.height());
    let bpp = if img.format() == ImageFormat::S16 { 2 } else { 1 };
    let mut out = vec![0u8; (w * h) as usize * bpp];
    if bpp == 2 {
        out = img.to_vec::<i16>().unwrap().iter().flat_map(|v| v.to_ne_bytes()).collect();
    } else {
        img.copy_to(Rect::full(w, h), 0, &mut out).unwrap();
    }
    out
}

#[test]
fn fusion_gives_the_unfused_pixels_at_every_size() {
    same_pixels(1, 0, 0);
}

#[test]
fn fusion_on_two_threads_gives_the_unfused_pixels_at_every_size() {
    same_pixels(2, 0, 0);
}

/// Rows per step and per band other than the rules': 1 (a call per row), 2, 3 and 5 (steps that
/// do not divide the bands), bands of 7 and 16 rows (overlap rows a large share of each band).
#[test]
fn fusion_gives_the_unfused_pixels_at_every_step_and_band_height() {
    for (threads, rows, band) in [(1, 1, 0), (1, 3, 0), (2, 2, 7), (2, 5, 16), (2, 1, 16), (2, 3, 7)] {
        same_pixels(threads, rows, band);
    }
}

fn same_pixels(threads: usize, rows: u32, band: u32) {
    let (fused_ctx, plain_ctx) = (ctx_rows(true, threads, rows, band), ctx(false));
    for which in 0..3 {
        for (i, &(w, h)) in SIZES.iter().enumerate() {
            let seed = (which * 100 + i) as u64;
            let (fa, pa) = (random_image(&fused_ctx, w, h, seed), random_image(&plain_ctx, w, h, seed));
            let (fg, fouts, flv, _) = build(&fused_ctx, which, &fa, 90);
            let (pg, pouts, plv, _) = build(&plain_ctx, which, &pa, 90);
            for round in 0..2 {
                if round == 1 {
                    flv.set_value(ScalarValue::Uint8(160)).unwrap();
                    plv.set_value(ScalarValue::Uint8(160)).unwrap();
                }
                fg.process().unwrap_or_else(|e| {
                    panic!("graph {which} {w}x{h} fused ({threads}t, {rows} rows, bands {band}): {e}")
                });
                pg.process().unwrap_or_else(|e| panic!("graph {which} {w}x{h} unfused: {e}"));
                for (o, (f, p)) in fouts.iter().zip(&pouts).enumerate() {
                    assert!(
                        pixels(f) == pixels(p),
                        "graph {which} {w}x{h} ({threads}t, {rows} rows/step, bands {band}) round {round}: output {o} differs"
                    );
                }
            }
            let report = fg.fusion_report().unwrap();
            assert!(report.enabled);
            // Graph 2's real intermediate splits it in two groups.
            let groups = if which == 2 { 2 } else { 1 };
            assert_eq!(report.groups.len(), groups, "graph {which} {w}x{h}: {report}");
            assert!(report.unfused.is_empty(), "graph {which} {w}x{h}: {report}");
            if rows > 0 {
                assert!(report.groups.iter().all(|g| g.rows_per_step == rows.min(h)), "{report:?}");
            }
            if threads > 1 && h >= 64 {
                assert!(report.groups.iter().all(|g| g.threads == threads), "graph {which} {w}x{h}: {report:?}");
            }
            assert!(!pg.fusion_report().unwrap().enabled);
        }
    }
}

#[test]
fn the_edge_pipelines_fused_images_take_no_buffer_and_the_report_says_so() {
    let ctx = ctx(true);
    let (w, h) = (640, 480);
    let a = random_image(&ctx, w, h, 7);
    let before = ctx.buffer_bytes().current;
    let (g, _, _, _) = build(&ctx, 0, &a, 100);
    g.verify().unwrap();
    let report = g.fusion_report().unwrap();
    let group = &report.groups[0];
    assert_eq!(group.nodes.len(), 4, "{report}");
    assert_eq!(group.fused_images.len(), 4, "{report}");
    assert!(report.unfused.is_empty(), "{report}");
    // The output image (640×480 U8) and the line buffers; no 640×480 intermediate.
    let grown = ctx.buffer_bytes().current - before;
    assert!(grown < (w * h) as usize + 256 * 1024, "{grown} bytes for the graph: {report}");
    assert_eq!(grown, (w * h) as usize + group.line_buffer_bytes_per_thread, "{report}");
    let plan = g.memory_plan().unwrap();
    assert_eq!(plan.excluded.len(), 4, "{plan:?}");
    // Off for this graph: every node unfused, with the reason; on again: one group.
    g.set_fusion(Some(false)).unwrap();
    g.process().unwrap();
    let report = g.fusion_report().unwrap();
    assert!(report.groups.is_empty() && report.unfused.len() == 4, "{report}");
    assert!(report.unfused.iter().all(|u| u.reason == FusionRefusal::FusionOff), "{report}");
    g.set_fusion(None).unwrap();
    g.process().unwrap();
    assert_eq!(g.fusion_report().unwrap().groups.len(), 1);
}

/// The time table (`Graph::perf_table`): a fused group is one row naming its members in the order
/// they run (whatever order the application created them in), timed once per run; unfused, a row
/// per node; a removed node leaves its row.
#[test]
fn the_time_table_shows_a_fused_group_as_one_row_in_run_order() {
    let ctx = ctx(true);
    let (w, h) = (64, 48);
    let a = random_image(&ctx, w, h, 11);
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    let g = Graph::new(&ctx).unwrap();
    let virt = |f| Image::new_virtual(&g, w, h, f).unwrap();
    let (b, gx, gy, m) = (virt(ImageFormat::U8), virt(ImageFormat::S16), virt(ImageFormat::S16), virt(ImageFormat::U8));
    let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    let lv = Scalar::new(&ctx, ScalarValue::Uint8(90)).unwrap();
    // Created consumer first: creation order is the reverse of run order.
    let t = g.add_node(&k("threshold"), [Reference::from(&m), Reference::from(&lv), Reference::from(&out)]).unwrap();
    t.set_name("t").unwrap();
    g.add_node(&k("magnitude"), [&gx, &gy, &m]).unwrap().set_name("m").unwrap();
    g.add_node(&k("sobel3x3"), [&b, &gx, &gy]).unwrap().set_name("s").unwrap();
    g.add_node(&k("gaussian3x3"), [&a, &b]).unwrap().set_name("g").unwrap();

    // Before any run: a row per node, nothing timed.
    let table = g.perf_table().unwrap();
    assert_eq!(table.rows.len(), 4, "{table}");
    assert!(table.rows.iter().all(|r| !r.is_fused() && r.perf.num == 0), "{table}");

    for _ in 0..3 {
        g.process().unwrap();
    }
    let report = g.fusion_report().unwrap();
    assert_eq!(report.groups.len(), 1, "{report}");
    let table = g.perf_table().unwrap();
    assert_eq!(table.rows.len(), 1, "{table}");
    let row = &table.rows[0];
    assert_eq!(row.nodes, ["g", "s", "m", "t"], "run order: {table}");
    assert_eq!(row.nodes, report.groups[0].nodes, "the fusion report's order");
    assert_eq!(row.kernels, ["filters.gaussian3x3", "filters.sobel3x3", "filters.magnitude", "filters.threshold"]);
    assert_eq!((row.label(), row.kernel_label()), ("fused: g + s + m + t".to_owned(), "4 kernels".to_owned()));
    assert_eq!(row.perf.num, 3, "the group is timed once per run: {table}");
    assert!(table.graph.num == 3 && row.perf.sum <= table.graph.sum, "{table}");
    let shown = table.to_string();
    assert_eq!(shown.lines().count(), 3, "header, the group, the graph:\n{shown}");
    assert!(shown.lines().nth(1).unwrap().starts_with("fused: g + s + m + t  4 kernels  "), "{shown}");

    // Unfused: a row per node, in creation order, each timed on its own.
    g.set_fusion(Some(false)).unwrap();
    g.process().unwrap();
    let table = g.perf_table().unwrap();
    let names: Vec<&str> = table.rows.iter().map(|r| r.nodes[0].as_str()).collect();
    assert_eq!(names, ["t", "m", "s", "g"], "{table}");
    assert!(table.rows.iter().all(|r| !r.is_fused() && r.perf.num == 4), "the same stats go on: {table}");

    // A removed node has no row.
    g.remove_node(&t).unwrap();
    let table = g.perf_table().unwrap();
    assert_eq!(table.rows.len(), 3, "{table}");
    assert!(table.rows.iter().all(|r| r.nodes != ["t"]), "{table}");
}

#[test]
fn a_node_that_cannot_fuse_ends_the_group_with_its_reason() {
    let ctx = ctx(true);
    let (w, h) = (64, 32);
    let a = random_image(&ctx, w, h, 3);
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    let g = Graph::new(&ctx).unwrap();
    let virt = || Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap();
    let (b1, b2, b3) = (virt(), virt(), virt());
    let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    g.add_node(&k("gaussian3x3"), [&a, &b1]).unwrap();
    let boxed = g.add_node(&k("box3x3"), [&b1, &b2]).unwrap();
    // A callback on the third: it stays out, with its reason.
    let cb = g.add_node(&k("box3x3"), [&b2, &b3]).unwrap();
    cb.set_callback(Some(|_: &NodeCompletion<'_>| NodeAction::Continue)).unwrap();
    g.add_node(&k("gaussian3x3"), [&b3, &out]).unwrap();
    g.process().unwrap();
    let report = g.fusion_report().unwrap();
    assert_eq!(report.groups.len(), 1, "{report}");
    assert_eq!(report.groups[0].nodes.len(), 2, "{report}");
    let reasons: Vec<FusionRefusal> = report.unfused.iter().map(|u| u.reason).collect();
    assert_eq!(reasons, [FusionRefusal::HasCallback, FusionRefusal::NothingToFuseWith], "{report}");
    let _ = boxed;
}

/// A module reload while a fused graph exists: the nodes are rebound to the new versions (same
/// shape: moved in place), the group stays, and the next runs call the new code — the same pixels.
#[test]
fn a_reload_keeps_the_group_and_its_pixels() {
    let (fused_ctx, plain_ctx) = (ctx(true), ctx(false));
    let (w, h) = (200, 150);
    let (fa, pa) = (random_image(&fused_ctx, w, h, 11), random_image(&plain_ctx, w, h, 11));
    let (fg, fouts, _, _) = build(&fused_ctx, 0, &fa, 70);
    let (pg, pouts, _, _) = build(&plain_ctx, 0, &pa, 70);
    pg.process().unwrap();
    for round in 0..3 {
        if round > 0 {
            fused_ctx.reload_module("vx_filters").unwrap();
        }
        fg.process().unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(pixels(&fouts[0]) == pixels(&pouts[0]), "round {round}: the fused output differs");
        let report = fg.fusion_report().unwrap();
        assert_eq!(report.groups.len(), 1, "round {round}: {report}");
        assert_eq!(report.groups[0].nodes.len(), 4, "round {round}: {report}");
    }
}

/// The edge pipeline on `a` into `out`, its nodes on `targets[i]` (`None`: the host); returns the
/// graph and its first and last nodes.
fn edge_on(ctx: &Context, a: &Image, out: &Image, level: u8, targets: [Option<&str>; 4]) -> (Graph, Node, Node) {
    let (w, h) = (a.width(), a.height());
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    let g = Graph::new(ctx).unwrap();
    let virt = |f| Image::new_virtual(&g, w, h, f).unwrap();
    let (blur, gx, gy, mag) =
        (virt(ImageFormat::U8), virt(ImageFormat::S16), virt(ImageFormat::S16), virt(ImageFormat::U8));
    let lv = Scalar::new(ctx, ScalarValue::Uint8(level)).unwrap();
    let nodes = [
        g.add_node(&k("gaussian3x3"), [a, &blur]).unwrap(),
        g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap(),
        g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap(),
        g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&lv), Reference::from(out)]).unwrap(),
    ];
    for (n, t) in nodes.iter().zip(targets) {
        if let Some(t) = t {
            n.set_target(t).unwrap();
        }
    }
    let [first, _, _, last] = nodes;
    (g, first, last)
}

/// The edge pipeline's output for input `seed`, unfused and sequential: the reference.
fn edge_unfused(plain: &Context, w: u32, h: u32, seed: u64) -> Vec<u8> {
    let a = random_image(plain, w, h, seed);
    let out = Image::new(plain, w, h, ImageFormat::U8).unwrap();
    let (g, _, _) = edge_on(plain, &a, &out, 80, [None; 4]);
    g.process().unwrap();
    pixels(&out)
}

/// A pipelined graph (queue mode, depth 3) fuses as a sequential one: the group is one job of the
/// coordinator, its line buffers serve every frame (the fused images get no per-frame copy: the
/// graph grows by the line buffers alone), and every frame's output is the unfused one, in order.
#[test]
fn a_pipelined_graph_fuses_and_streams_the_unfused_pixels() {
    let plain = ctx(false);
    for threads in [1, 2] {
        let fused = ctx_threads(true, threads);
        for (w, h) in [(64, 3), (129, 70), (320, 240)] {
            let frames = 9usize;
            let ins: Vec<Image> = (0..3).map(|i| random_image(&fused, w, h, 500 + i)).collect();
            let outs: Vec<Image> = (0..3)
                .map(|_| {
                    let o = Image::new(&fused, w, h, ImageFormat::U8).unwrap();
                    o.copy_from(Rect::full(w, h), 0, &vec![0u8; (w * h) as usize]).unwrap();
                    o
                })
                .collect();
            let (g, first, last) = edge_on(&fused, &ins[0], &outs[0], 80, [None; 4]);
            let p_in = g.add_parameter(&first, 0).unwrap();
            let p_out = g.add_parameter(&last, 2).unwrap();
            g.set_schedule_config(
                ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()),
            )
            .unwrap();
            let before = fused.buffer_bytes().current;
            g.verify().unwrap();
            let report = g.fusion_report().unwrap();
            assert_eq!(report.groups.len(), 1, "{w}x{h} {threads}t: {report}");
            assert_eq!(report.groups[0].nodes.len(), 4, "{w}x{h} {threads}t: {report}");
            let grown = fused.buffer_bytes().current - before;
            if threads == 1 {
                assert_eq!(grown, report.groups[0].line_buffer_bytes_per_thread, "{w}x{h}: {report}");
            }
            let lb = report.groups[0].line_buffer_bytes_per_thread;
            assert!(grown <= (threads + 1) * lb, "{w}x{h} {threads}t: {grown} bytes, a fused image copied per frame?");
            let (mut free_in, mut free_out) = (ins.clone(), outs.clone());
            let (mut next, mut got) = (0usize, 0usize);
            while got < frames {
                while next < frames && !free_in.is_empty() && !free_out.is_empty() {
                    let i = free_in.remove(0);
                    let px = vx_tests::random_graphs::rng::pixels(900 + next as u64, 0xf05e, (w * h) as usize);
                    i.copy_from(Rect::full(w, h), 0, &px).unwrap();
                    g.enqueue(p_in, &i).unwrap();
                    g.enqueue(p_out, free_out.remove(0)).unwrap();
                    next += 1;
                }
                let done = g.dequeue(p_out).unwrap();
                done.result.clone().unwrap_or_else(|e| panic!("{w}x{h} {threads}t frame {}: {e}", done.frame));
                assert_eq!(done.frame, got as u64, "frames come back in order");
                let out = done.reference.as_image().unwrap().clone();
                let want = edge_unfused(&plain, w, h, 900 + got as u64);
                assert!(pixels(&out) == want, "{w}x{h} {threads}t frame {got}: the fused output differs");
                got += 1;
                free_out.push(out);
                free_in.push(g.dequeue(p_in).unwrap().reference.as_image().unwrap().clone());
            }
            g.wait().unwrap();
        }
    }
}

/// Groups form per target: a group runs as one job on its nodes' target. Nodes on two targets
/// make two groups (the images between them stay real buffers), and a node whose only fusable
/// neighbour is on another target is reported so.
#[test]
fn groups_form_per_target_and_give_the_unfused_pixels() {
    let plain = ctx(false);
    let fused = Context::builder().threads(2).target(TargetConfig::new("dsp")).fusion(true).build().unwrap();
    fused.add_module_dir(plugin_dir("fusion", &[("vx_filters", &build_module("vx-filters", &[]))]));
    fused.load_module("vx_filters").unwrap();
    let (w, h) = (200, 120);
    let dsp = Some("dsp");
    let cases: [([Option<&str>; 4], &[usize]); 3] =
        [([dsp; 4], &[4]), ([dsp, dsp, None, None], &[2, 2]), ([dsp, None, dsp, dsp], &[2])];
    let dsp_jobs = || fused.targets().iter().find(|t| t.config.name == "dsp").map_or(0, |t| t.jobs_run);
    for (targets, sizes) in cases {
        let a = random_image(&fused, w, h, 21);
        let out = Image::new(&fused, w, h, ImageFormat::U8).unwrap();
        let (g, _, _) = edge_on(&fused, &a, &out, 80, targets);
        g.verify().unwrap();
        let before = dsp_jobs();
        g.process().unwrap_or_else(|e| panic!("{targets:?}: {e}"));
        // One job per unit on the dsp: a group is one job there, a lone node one.
        let units_on_dsp = match targets {
            [Some(_), Some(_), Some(_), Some(_)] => 1,
            [Some(_), Some(_), None, None] => 1,
            _ => 2,
        };
        assert_eq!(dsp_jobs() - before, units_on_dsp, "{targets:?}: jobs on the dsp");
        assert!(pixels(&out) == edge_unfused(&plain, w, h, 21), "{targets:?}: the fused output differs");
        let report = g.fusion_report().unwrap();
        let got: Vec<usize> = report.groups.iter().map(|g| g.nodes.len()).collect();
        assert_eq!(got, sizes, "{targets:?}: {report}");
        let across: Vec<&str> = report
            .unfused
            .iter()
            .filter(|u| u.reason == FusionRefusal::AcrossTargets)
            .map(|u| u.node.as_str())
            .collect();
        // The gaussian on the dsp, the sobel on the host: neither has a fusable neighbour on its own target.
        assert_eq!(
            across.len(),
            if targets[1].is_none() && targets[0].is_some() { 2 } else { 0 },
            "{targets:?}: {report}"
        );
        assert_eq!(report.unfused.len(), across.len(), "{targets:?}: {report}");
    }
    // Pipelined, the whole group on the dsp: one job per frame there, every frame the unfused one.
    let ins: Vec<Image> = (0..2).map(|i| random_image(&fused, w, h, 40 + i)).collect();
    let outs: Vec<Image> = (0..2).map(|_| Image::new(&fused, w, h, ImageFormat::U8).unwrap()).collect();
    let (g, first, last) = edge_on(&fused, &ins[0], &outs[0], 80, [dsp; 4]);
    let (p_in, p_out) = (g.add_parameter(&first, 0).unwrap(), g.add_parameter(&last, 2).unwrap());
    g.set_schedule_config(ScheduleConfig::queue_auto().depth(2).queue(p_in, ins.clone()).queue(p_out, outs.clone()))
        .unwrap();
    g.verify().unwrap();
    assert_eq!(g.fusion_report().unwrap().groups.len(), 1, "{}", g.fusion_report().unwrap());
    let before = dsp_jobs();
    for (i, o) in ins.iter().zip(&outs) {
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    }
    for f in 0..2u64 {
        let done = g.dequeue(p_out).unwrap();
        done.result.clone().unwrap();
        let out = done.reference.as_image().unwrap().clone();
        assert!(pixels(&out) == edge_unfused(&plain, w, h, 40 + f), "pipelined on the dsp, frame {f}");
        g.dequeue(p_in).unwrap();
    }
    g.wait().unwrap();
    assert_eq!(dsp_jobs() - before, 2, "pipelined on the dsp: one job per frame");
}

/// An image between members that must keep its buffer (real, or virtual and read outside the
/// group) is *materialized*: the members around it still fuse, its writer writes it whole, its
/// readers read its rows as they are written. Variants: (0) box → gaussian → real b2, add(b1, b2);
/// (1) the same plus box(b2) → b3 and add(b3, b1): b2's writer then computes rows beyond its band
/// for the box's window, so with two threads the group is refused (its nodes split on their own);
/// (2) b2 virtual, also read by a node with a callback. Variants 3 and 4 are 0 and 1 with B's
/// border `Undefined`: b2's edge is never written (a real image: it keeps its zeros in both modes,
/// so every output is still defined), and C (tile descriptors) and D (a row entry) read those rows.
#[test]
fn a_materialized_image_between_members_keeps_its_buffer_and_the_pixels() {
    for threads in [1, 2] {
        let (fused_ctx, plain_ctx) = (ctx_threads(true, threads), ctx(false));
        for (variant, undefined) in [(0, false), (1, false), (2, false), (0, true), (1, true)] {
            for (i, &(w, h)) in [(64, 3), (33, 17), (129, 70), (320, 240)].iter().enumerate() {
                let seed = 700 + i as u64;
                let run = |c: &Context| {
                    let a = random_image(c, w, h, seed);
                    let k = |n: &str| c.kernel_by_name(&format!("filters.{n}")).unwrap();
                    let g = Graph::new(c).unwrap();
                    let b1 = Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap();
                    let b2 = if variant == 2 {
                        Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap()
                    } else {
                        Image::new(c, w, h, ImageFormat::U8).unwrap()
                    };
                    let sum = Image::new(c, w, h, ImageFormat::S16).unwrap();
                    g.add_node(&k("box3x3"), [&a, &b1]).unwrap().set_name("A").unwrap();
                    let b = g.add_node(&k("gaussian3x3"), [&b1, &b2]).unwrap();
                    b.set_name("B").unwrap();
                    if undefined {
                        b.set_border(BorderMode::Undefined).unwrap();
                    }
                    g.add_node(&k("add"), [&b1, &b2, &sum]).unwrap().set_name("C").unwrap();
                    let mut outs = vec![sum];
                    if variant == 1 {
                        let b3 = Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap();
                        let sum2 = Image::new(c, w, h, ImageFormat::S16).unwrap();
                        g.add_node(&k("box3x3"), [&b2, &b3]).unwrap().set_name("D").unwrap();
                        g.add_node(&k("add"), [&b3, &b1, &sum2]).unwrap().set_name("E").unwrap();
                        outs.push(sum2);
                    }
                    if variant == 2 {
                        let f = Image::new(c, w, h, ImageFormat::U8).unwrap();
                        let n = g.add_node(&k("box3x3"), [&b2, &f]).unwrap();
                        n.set_name("F").unwrap();
                        n.set_callback(Some(|_: &NodeCompletion<'_>| NodeAction::Continue)).unwrap();
                        outs.push(f);
                    } else {
                        outs.push(b2);
                    }
                    // Each round a new input, outputs compared after each: a row of b2 read before
                    // its writer wrote it this run would hold zeros (round 0) or round 0's pixels.
                    let mut seen = Vec::new();
                    for round in 0..2u64 {
                        let px = vx_tests::random_graphs::rng::pixels(seed + 1000 * round, 0xf05e, (w * h) as usize);
                        a.copy_from(Rect::full(w, h), 0, &px).unwrap();
                        g.process()
                            .unwrap_or_else(|e| panic!("variant {variant} {w}x{h} {threads}t round {round}: {e}"));
                        seen.push(outs.iter().map(pixels).collect::<Vec<_>>());
                    }
                    (seen, g.fusion_report().unwrap())
                };
                let (got, report) = run(&fused_ctx);
                let (want, _) = run(&plain_ctx);
                let what = format!("variant {variant} {w}x{h} {threads}t, B's border undefined: {undefined}");
                for (round, (gr, pr)) in got.iter().zip(&want).enumerate() {
                    for (o, (g, p)) in gr.iter().zip(pr).enumerate() {
                        assert!(g == p, "{what} round {round}: output {o} differs\n{report}");
                    }
                }
                let refused = variant == 1 && threads == 2 && h > 16;
                if refused {
                    assert!(report.groups.is_empty(), "{what}: {report}");
                    assert!(
                        report.unfused.iter().all(|u| u.reason == FusionRefusal::MaterializedInsideGroup),
                        "{what}: {report}"
                    );
                } else {
                    assert_eq!(report.groups.len(), 1, "{what}: {report}");
                    let nodes = if variant == 1 { 5 } else { 3 };
                    assert_eq!(report.groups[0].nodes.len(), nodes, "{what}: {report}");
                    assert_eq!(report.groups[0].materialized_images.len(), 1, "{what}: {report}");
                    assert!(!report.groups[0].fused_images.is_empty(), "{what}: {report}");
                }
            }
        }
    }
}

/// Two groups each convex, yet each needing the other: g0 writes half of an image g1 reads, g1
/// the other half g0 reads (ROIs of one parent). Contracted, they would form a cycle, and running
/// either first would read the other's output before it is written: the later one is refused
/// (`GroupCycle`), the result is the unfused one. (Found by the random graph test, seed 24985.)
#[test]
fn groups_that_would_need_each_other_are_not_both_formed() {
    let (fused_ctx, plain_ctx) = (ctx(true), ctx(false));
    let (w, h) = (40, 24);
    let run = |c: &Context| {
        let k = |n: &str| c.kernel_by_name(&format!("filters.{n}")).unwrap();
        let (a, b) = (random_image(c, w, h, 31), random_image(c, w, h, 32));
        let g = Graph::new(c).unwrap();
        let parent = Image::new(c, 2 * w, h, ImageFormat::U8).unwrap();
        let (r1, r2) = (parent.roi(Rect::new(0, 0, w, h)).unwrap(), parent.roi(Rect::new(w, 0, 2 * w, h)).unwrap());
        let (v1, v2) = (
            Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap(),
            Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap(),
        );
        let (s0, s1) = (Image::new(c, w, h, ImageFormat::S16).unwrap(), Image::new(c, w, h, ImageFormat::S16).unwrap());
        g.add_node(&k("posterize"), [&a, &v1]).unwrap();
        g.add_node(&k("box3x3"), [&v1, &r1]).unwrap();
        g.add_node(&k("add"), [&v1, &r2, &s0]).unwrap();
        g.add_node(&k("posterize"), [&b, &v2]).unwrap();
        g.add_node(&k("box3x3"), [&v2, &r2]).unwrap();
        g.add_node(&k("add"), [&v2, &r1, &s1]).unwrap();
        g.process().unwrap();
        ([pixels(&s0), pixels(&s1), pixels(&parent)], g.fusion_report().unwrap())
    };
    let (got, report) = run(&fused_ctx);
    let (want, _) = run(&plain_ctx);
    assert!(got == want, "the fused outputs differ\n{report}");
    assert_eq!(report.groups.len(), 1, "{report}");
    let cycle: Vec<&str> =
        report.unfused.iter().filter(|u| u.reason == FusionRefusal::GroupCycle).map(|u| u.node.as_str()).collect();
    assert_eq!(cycle.len(), 3, "{report}");
}

/// Members that leave pixels unprocessed (node border `Undefined`: the image's edge) fuse, and give
/// the unfused valid regions and the unfused pixels wherever they are defined: at least 3 pixels
/// from the edge (no path of these graphs holds more than three 3×3 nodes; nearer the edge a pixel
/// may depend on one nobody wrote, undefined in both modes — the random graph test models which
/// exactly). Each graph with each node in turn `Undefined`, then all of them, on one and two
/// threads (bands of 16 rows).
#[test]
fn members_with_undefined_borders_fuse_and_give_the_unfused_defined_pixels() {
    const MARGIN: u32 = 3;
    for threads in [1, 2] {
        let (fused_ctx, plain_ctx) = (ctx_rows(true, threads, 0, 16), ctx(false));
        for which in 0..3 {
            for (i, &(w, h)) in SIZES.iter().enumerate() {
                for undefined in 0..5 {
                    let seed = (which * 1000 + i * 10 + undefined) as u64;
                    let (fa, pa) = (random_image(&fused_ctx, w, h, seed), random_image(&plain_ctx, w, h, seed));
                    let (fg, fouts, _, fnodes) = build(&fused_ctx, which, &fa, 90);
                    let (pg, pouts, _, pnodes) = build(&plain_ctx, which, &pa, 90);
                    for nodes in [&fnodes, &pnodes] {
                        for (n, node) in nodes.iter().enumerate() {
                            if undefined == 4 || n == undefined {
                                node.set_border(BorderMode::Undefined).unwrap();
                            }
                        }
                    }
                    let what = format!("graph {which} {w}x{h} ({threads}t), undefined {undefined}");
                    fg.process().unwrap_or_else(|e| panic!("{what} fused: {e}"));
                    pg.process().unwrap_or_else(|e| panic!("{what} unfused: {e}"));
                    let report = fg.fusion_report().unwrap();
                    assert!(report.unfused.is_empty(), "{what}: {report}");
                    assert_eq!(report.groups.len(), if which == 2 { 2 } else { 1 }, "{what}: {report}");
                    // Graph 2's real `s` is written by the gaussian from a point op's output:
                    // defined wherever the gaussian computes, and its unprocessed edge keeps its
                    // zeros in both modes. Equal whole.
                    if which == 2 {
                        assert!(pixels(&fouts[0]) == pixels(&pouts[0]), "{what}: output 0 differs");
                    }
                    for (o, (f, p)) in fouts.iter().zip(&pouts).enumerate() {
                        assert_eq!(f.valid_region(), p.valid_region(), "{what}: output {o}'s valid region");
                        let bpp = if p.format() == ImageFormat::S16 { 2 } else { 1 };
                        let (fp, pp) = (pixels(f), pixels(p));
                        for y in MARGIN..h.saturating_sub(MARGIN) {
                            let at = (y * w) as usize * bpp;
                            let row = at + MARGIN as usize * bpp..at + w.saturating_sub(MARGIN) as usize * bpp;
                            if row.start < row.end {
                                assert!(fp[row.clone()] == pp[row], "{what}: output {o} row {y} differs");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Outputs `f` and `p` equal wherever both modes define them: whole, or (`margin` > 0, some
/// node's border `Undefined`) from `margin` pixels inside the edges, with equal valid regions.
fn same_defined(f: &Image, p: &Image, margin: u32, what: &str) {
    let (w, h) = (p.width(), p.height());
    assert_eq!(f.valid_region(), p.valid_region(), "{what}: valid region");
    let bpp = if p.format() == ImageFormat::S16 { 2 } else { 1 };
    let (fp, pp) = (pixels(f), pixels(p));
    if margin == 0 {
        assert!(fp == pp, "{what}: differs");
        return;
    }
    for y in margin..h.saturating_sub(margin) {
        let at = (y * w) as usize * bpp;
        let row = at + margin as usize * bpp..at + w.saturating_sub(margin) as usize * bpp;
        if row.start < row.end {
            assert!(fp[row.clone()] == pp[row], "{what}: row {y} differs");
        }
    }
}

#[test]
fn groups_formed_again_by_each_frames_verification_give_the_unfused_pixels() {
    // A loop that hands each frame a new input (and every other frame new outputs) and verifies:
    // the `fusion` pass forms the same groups again and takes the last verification's as they are
    // (their rings hold the last frame's rows). Every frame must still be the unfused one; with a
    // node's border `Undefined`, wherever it is defined (a reader of rows its writer never
    // processes reads what the last frame left there, as any second run of a group does).
    for threads in [1, 2] {
        let (fused_ctx, plain_ctx) = (ctx_rows(true, threads, 0, 16), ctx(false));
        for which in 0..3 {
            for undefined in [false, true] {
                for &(w, h) in &SIZES[SIZES.len() - 4..] {
                    let what = format!("graph {which} {w}x{h} ({threads}t), undefined {undefined}");
                    let (fa, pa) = (random_image(&fused_ctx, w, h, 1), random_image(&plain_ctx, w, h, 1));
                    let (fg, mut fouts, _, fnodes) = build(&fused_ctx, which, &fa, 90);
                    let (pg, mut pouts, _, pnodes) = build(&plain_ctx, which, &pa, 90);
                    if undefined {
                        fnodes[1].set_border(BorderMode::Undefined).unwrap();
                        pnodes[1].set_border(BorderMode::Undefined).unwrap();
                    }
                    // Outputs swapped with spare images every other frame: the output, and each
                    // (node, parameter) holding it.
                    let swapped: &[(usize, &[(usize, u32)])] = match which {
                        0 => &[(0, &[(3, 2)])],
                        1 => &[(0, &[(4, 1)]), (1, &[(3, 2)])],
                        // `s` is written by the gaussian and read by sobel (between two groups).
                        _ => &[(1, &[(3, 2)]), (0, &[(1, 1), (2, 0)])],
                    };
                    let spare = |ctx: &Context, like: &Image| Image::new(ctx, w, h, like.format()).unwrap();
                    let mut fspare: Vec<Image> = fouts.iter().map(|o| spare(&fused_ctx, o)).collect();
                    let mut pspare: Vec<Image> = pouts.iter().map(|o| spare(&plain_ctx, o)).collect();
                    for frame in 0..6u64 {
                        let seed = 100 + frame;
                        let (fi, pi) = (random_image(&fused_ctx, w, h, seed), random_image(&plain_ctx, w, h, seed));
                        fnodes[0].set_parameter(0, Reference::from(&fi)).unwrap();
                        pnodes[0].set_parameter(0, Reference::from(&pi)).unwrap();
                        if frame % 2 == 1 {
                            for &(o, holders) in swapped {
                                std::mem::swap(&mut fouts[o], &mut fspare[o]);
                                std::mem::swap(&mut pouts[o], &mut pspare[o]);
                                for &(node, index) in holders {
                                    fnodes[node].set_parameter(index, Reference::from(&fouts[o])).unwrap();
                                    pnodes[node].set_parameter(index, Reference::from(&pouts[o])).unwrap();
                                }
                            }
                        }
                        fg.verify().unwrap_or_else(|e| panic!("{what} frame {frame}: {e}"));
                        fg.process().unwrap_or_else(|e| panic!("{what} frame {frame}: {e}"));
                        pg.process().unwrap_or_else(|e| panic!("{what} frame {frame}: {e}"));
                        let report = fg.fusion_report().unwrap();
                        assert!(report.unfused.is_empty(), "{what} frame {frame}: {report}");
                        let margin = if undefined { 3 } else { 0 };
                        for (o, (f, p)) in fouts.iter().zip(&pouts).enumerate() {
                            same_defined(f, p, margin, &format!("{what} frame {frame}: output {o}"));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_group_formed_again_is_taken_as_it_was_and_one_that_changed_is_built_anew() {
    // Observed through the context's buffer bytes: a group built anew allocates its rings while the
    // last one still exists (its peak rises by their bytes), one taken as it was allocates nothing.
    let ctx = ctx_rows(true, 2, 0, 16);
    let (w, h) = (640, 480);
    let a = random_image(&ctx, w, h, 1);
    let (g, outs, _, nodes) = build(&ctx, 0, &a, 90);
    let images: Vec<Image> = (0..4).map(|s| random_image(&ctx, w, h, 10 + s)).collect();
    let spare = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    spare.copy_from(Rect::full(w, h), 0, &vec![0u8; (w * h) as usize]).unwrap();
    g.verify().unwrap();
    g.process().unwrap();
    let line_buffers = g.fusion_report().unwrap().groups[0].line_buffer_bytes_per_thread;
    assert!(line_buffers > 0);
    let peak = || ctx.resource_stat("max_buffer_bytes").expect("a buffer-bytes statistic").peak;
    let before = peak();
    for (f, img) in images.iter().cycle().take(8).enumerate() {
        nodes[0].set_parameter(0, Reference::from(img)).unwrap();
        nodes[3].set_parameter(2, Reference::from(if f % 2 == 0 { &spare } else { &outs[0] })).unwrap();
        g.verify().unwrap();
        g.process().unwrap();
    }
    assert_eq!(peak(), before, "a re-verification that changed nothing of the group built it anew");
    // A border changed: the group is built anew.
    nodes[1].set_border(BorderMode::Undefined).unwrap();
    g.verify().unwrap();
    assert!(peak() >= before + line_buffers, "a changed group was not built anew: {} → {}", before, peak());
}
