//! The showcase benchmark: `cargo bench -p vx-tests --bench showcase` (a table, not criterion).
//!
//! - every vx_filters kernel through a one-node graph at 640×480, 1920×1080 and 3840×2160, at 1 and
//!   2 threads, next to OpenCV's equivalent call on the same images (driven by
//!   `benches/opencv_bench.py`, outputs preallocated on both sides; skipped with a note if
//!   Python/OpenCV are missing), ratio = OpenCV time / vx time (> 1: vx is faster);
//! - a floor row: a copy of the input to the output (vx: a one-node graph of a copy kernel; OpenCV
//!   side: `np.copyto`), the memory-bandwidth limit of a one-in-one-out filter;
//! - the 4-node edge pipeline end to end, against the same four OpenCV calls;
//! - framework overhead: a one-node graph on 64×64, graph process time minus the node's own time;
//! - module call overhead: the same kernel in-process versus loaded from a module;
//! - load + publish of the vx_filters module, and unload;
//! - buffer aliasing (an in-place chain, aliasing on and off) and the memory plan (the pipeline's
//!   intermediates and the context's peak bytes, plan on and off).
//!
//! Timings are medians of rounds of about 4 Mpixel of frames, the 1- and 2-thread graphs' rounds
//! interleaved (each round after one untimed frame, so both sides are timed in steady state); the machine is shared and noisy, so compare ratios. `VX_BENCH_SIZES=640x480,1920x1080` limits the sizes;
//! `VX_BENCH_ONLY=memory` (or `aliasing`, `pipelining`, `reverify`, `stages`, `split`) runs that
//! section alone.
//!
//! Re-verification per frame (`reverify`): the pipelining section's three stages as a plain graph
//! of a 2-thread context, fusion on and off, whose input and output are replaced every frame by
//! `Node::set_parameter` (four of each in turn), then `Graph::verify` (every node's passes, and the
//! fusion pass forming its group again) and `process`; the median µs of each step over the frames.
//!
//! Pipelining: a three-stage graph (gaussian3x3 → box3x3 → not) with each stage on a target of its
//! own (one thread each; the context computes with one thread, so a stage never forks), streamed
//! through graph-parameter queues at pipeline depth 1 and 3 in interleaved rounds, against the same
//! three stages as a plain `process` loop of a 2-thread context (no targets, fusion on as by default:
//! one fused group, its bands split by the cost model); frames per second, the ratios, and the
//! outputs compared frame by frame. `bound` is the most depth 3 can reach with its stages as they
//! cost now on this machine: each stage runs on its target's one thread, so a frame takes at least
//! the slowest stage's CPU time and the stages' CPU times share the cores; the stage CPU times are
//! the target threads' (`/proc/self/task/*/schedstat`) per frame while depth 3 streams, a stage
//! working beside the others on what another core wrote (with the hand-off work done on the target
//! threads; a running thread's last tick may be missing from its figure, which matters only for
//! the "all threads" figures). `bound / plain` is therefore the ceiling
//! of `3 / plain` here (1.2–1.9 on the 2-core machine of `docs/design/pipeline-handoff.md`; the
//! line under it counts every thread's CPU time). Under each size: each stage's mean run alone
//! (depth 1) and beside the others (depth 3), the share of the cores the stages keep busy at
//! depth 3 (low: hand-offs; high with slower stages: the stages share the memory system), and depth
//! 3 with the targets pinned to cores (a: 0, b and c: 1).
//!
//! Stages (`VX_BENCH_ONLY=stages`, not in the full run): where a pipelined frame's time goes. The
//! same three stages, fusion off, one thread per context: as a plain `process` loop, as a
//! `process` loop with each stage on a target of its own (so each node is a hand-off to a parked
//! thread and back), and streamed at depth 1 and 3; per line the time per frame and each stage's
//! mean run. Frame time above the stages' sum is hand-offs; a stage slower than in the plain loop
//! reads data another core wrote (or shares the memory system).
//!
//! Split (`VX_BENCH_ONLY=split`, not in the full run): the tiling cost model of a 2-thread context
//! against always sharing and never sharing (and a 1-thread context) on one-node graphs, in bursts
//! of frames after an idle gap in which the helper parks (`VX_SPLIT_BURSTS`, `VX_SPLIT_FRAMES`,
//! `VX_SPLIT_GAP_US`), with the crew's counts and one burst of the model frame by frame.

#[path = "common/filters.rs"]
mod filters;

#[allow(dead_code)]
mod spec_kernels {
    include!("../../plugins/vx-spec-kernels/src/kernels.rs");
}

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use filters::*;
use vx::*;
use vx_tests::{build_module_profile, plugin_dir, workspace_root};

const ROUNDS: usize = 21;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median time per frame of each graph; each round runs about 4 Mpixel of frames (as the OpenCV
/// side does), the graphs' rounds interleaved so that both see the same machine.
fn time_graphs(gs: &[Graph], w: u32, h: u32) -> Vec<Duration> {
    let frames = (4_000_000 / (w * h)).max(1);
    for g in gs {
        for _ in 0..3 {
            g.process().expect("warm-up");
        }
    }
    let mut v = vec![Vec::with_capacity(ROUNDS); gs.len()];
    for _ in 0..ROUNDS {
        for (g, v) in gs.iter().zip(&mut v) {
            // One untimed frame first: the other graph's round let this context's crew park, and
            // the OpenCV side times its calls back to back with a hot pool. Both sides are
            // measured in steady state.
            g.process().expect("warm frame");
            let t = Instant::now();
            for _ in 0..frames {
                g.process().expect("process");
            }
            v.push(t.elapsed() / frames);
        }
    }
    v.into_iter().map(median).collect()
}

fn time_graph(g: &Graph, w: u32, h: u32) -> Duration {
    time_graphs(std::slice::from_ref(g), w, h)[0]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn opencv(a: &Path, b: &Path, w: u32, h: u32, threads: usize) -> Option<String> {
    let script = workspace_root().join("tests/benches/opencv_bench.py");
    let out = Command::new("python3")
        .arg(script)
        .args([a.as_os_str(), b.as_os_str()])
        .args([w.to_string(), h.to_string(), threads.to_string(), ROUNDS.to_string()])
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn json_seconds(json: &str, key: &str) -> Option<Duration> {
    let at = json.find(&format!("\"{key}\": "))? + key.len() + 4;
    let end = json[at..].find([',', '}'])? + at;
    json[at..end].trim().parse::<f64>().ok().map(Duration::from_secs_f64)
}

/// Buffer aliasing measured: the chain `a → NOT → v0 → truncate → v1 → NOT → v2 → NOT → out` (three
/// in-place hints legal) with aliasing on and off, at 1080p and 4K, 2 threads: buffer bytes after verify,
/// and the truncate node's own time (sparse: aliased, it reads the frame and writes the few
/// 32-pixel chunks above the level; not aliased, it copies the frame first).
fn aliasing(dir: &Path) {
    println!("\nbuffer aliasing: a → not → v0 → truncate(240) → v1 → not → v2 → not → out, 2 threads");
    println!(
        "{:<10} {:>10} {:>10} {:>14} {:>14} {:>7}",
        "size", "MB on", "MB off", "truncate on", "truncate off", "ratio"
    );
    for (w, h) in [(1920u32, 1080u32), (3840, 2160)] {
        let px = pixels(3, w, h);
        let mut graphs = Vec::new();
        let mut mbytes = Vec::new();
        let mut keep = Vec::new();
        for on in [true, false] {
            let ctx = Context::builder().threads(2).aliasing(on).build().unwrap();
            ctx.add_module_dir(dir);
            ctx.load_module("vx_filters").unwrap();
            let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
            let a = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
            a.copy_from(Rect::full(w, h), 0, &px).unwrap();
            let g = Graph::new(&ctx).unwrap();
            let v = |_| Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
            let (v0, v1, v2) = (v(0), v(1), v(2));
            let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
            let level = Scalar::new(&ctx, ScalarValue::Uint8(240)).unwrap();
            g.add_node(&k("not"), [&a, &v0]).unwrap();
            g.add_node(&k("truncate"), [Reference::from(&v0), Reference::from(&v1), Reference::from(&level)]).unwrap();
            g.add_node(&k("not"), [&v1, &v2]).unwrap();
            g.add_node(&k("not"), [&v2, &out]).unwrap();
            g.verify().unwrap();
            mbytes.push(ctx.buffer_bytes().current as f64 / 1e6);
            graphs.push(g);
            keep.push((ctx, a, out));
        }
        let truncate_time = |g: &Graph| {
            let p = g.node_perf().unwrap();
            p.iter().find(|(_, k, _)| k == "filters.truncate").map(|x| x.2.avg()).unwrap_or_default()
        };
        time_graphs(&graphs, w, h);
        let (t_on, t_off) = (truncate_time(&graphs[0]), truncate_time(&graphs[1]));
        println!(
            "{:<10} {:>10.1} {:>10.1} {:>11.3} ms {:>11.3} ms {:>6.2}x",
            format!("{w}x{h}"),
            mbytes[0],
            mbytes[1],
            ms(t_on),
            ms(t_off),
            t_off.as_secs_f64() / t_on.as_secs_f64()
        );
    }
}

/// The memory plan measured: the 4-node edge pipeline (four virtual intermediates: blurred U8, gx
/// and gy S16, magnitude U8) with the plan on and off, at 1080p and 4K, 2 threads — peak buffer
/// bytes of the whole context (inputs and output included) after a few frames, the intermediates'
/// bytes, the plan's lower bound for this schedule, and the frame time of both.
fn memory_plan(dir: &Path) {
    println!("\nmemory plan: gaussian → sobel → magnitude → threshold over virtual images, 2 threads");
    println!(
        "{:<10} {:>10} {:>10} {:>12} {:>12} {:>11} {:>10} {:>10}",
        "size", "peak on", "peak off", "interm. on", "interm. off", "lower bnd", "ms on", "ms off"
    );
    for (w, h) in [(1920u32, 1080u32), (3840, 2160)] {
        let (a_px, b_px) = (pixels(1, w, h), pixels(2, w, h));
        let mut graphs = Vec::new();
        let mut keep = Vec::new();
        for on in [true, false] {
            let ctx = Context::builder().threads(2).memory_plan(on).build().unwrap();
            ctx.add_module_dir(dir);
            ctx.load_module("vx_filters").unwrap();
            let s = inputs(&ctx, w, h, &a_px, &b_px);
            graphs.push(pipeline_graph(&ctx, &s));
            keep.push((ctx, s));
        }
        let t = time_graphs(&graphs, w, h);
        let plan = graphs[0].memory_plan().unwrap();
        let peak = |i: usize| keep[i].0.buffer_bytes().peak as f64 / 1e6;
        println!(
            "{:<10} {:>7.1} MB {:>7.1} MB {:>9.1} MB {:>9.1} MB {:>8.1} MB {:>10.3} {:>10.3}",
            format!("{w}x{h}"),
            peak(0),
            peak(1),
            plan.arena_bytes as f64 / 1e6,
            plan.unplanned_bytes as f64 / 1e6,
            plan.lower_bound_bytes as f64 / 1e6,
            ms(t[0]),
            ms(t[1])
        );
    }
}

/// A pipelined three-stage graph at `depth`: its input and output graph parameters, and the
/// references each may be enqueued (`refs` each; input `k` holds pixels of seed `k`).
struct Pipelined {
    g: Graph,
    nodes: [Node; 3],
    ins: Vec<Image>,
    outs: Vec<Image>,
}

/// `refs` inputs (input `k` holds pixels of seed `10 + k`) and `refs` outputs of `w`×`h`.
fn frame_images(ctx: &Context, w: u32, h: u32, refs: usize) -> (Vec<Image>, Vec<Image>) {
    let img = || Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    let ins = (0..refs)
        .map(|k| {
            let i = img();
            i.copy_from(Rect::full(w, h), 0, &pixels(10 + k as u64, w, h)).unwrap();
            i
        })
        .collect();
    (ins, (0..refs).map(|_| img()).collect())
}

/// gaussian3x3 → box3x3 → not from `input` to `output` over two virtual images of `g`.
fn three_stages(ctx: &Context, g: &Graph, input: &Image, output: &Image) -> [Node; 3] {
    let v = || Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap();
    let (v1, v2) = (v(), v());
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    [
        g.add_node(&k("gaussian3x3"), [input, &v1]).unwrap(),
        g.add_node(&k("box3x3"), [&v1, &v2]).unwrap(),
        g.add_node(&k("not"), [&v2, output]).unwrap(),
    ]
}

fn pipelined(ctx: &Context, w: u32, h: u32, depth: usize, refs: usize) -> Pipelined {
    let g = Graph::new(ctx).unwrap();
    let (ins, outs) = frame_images(ctx, w, h, refs);
    let nodes = three_stages(ctx, &g, &ins[0], &outs[0]);
    for (n, t) in nodes.iter().zip(["a", "b", "c"]) {
        n.set_target(t).unwrap();
    }
    let (p_in, p_out) = (g.add_parameter(&nodes[0], 0).unwrap(), g.add_parameter(&nodes[2], 1).unwrap());
    assert_eq!((p_in, p_out), (0, 1));
    g.set_schedule_config(ScheduleConfig::queue_auto().depth(depth).queue(0, ins.clone()).queue(1, outs.clone()))
        .unwrap();
    g.verify().unwrap();
    Pipelined { g, nodes, ins, outs }
}

/// The same three stages as a sequential graph of a 2-thread context, no targets: what a plain
/// `process` loop does with the machine; `frames` frames (frame `f` reads input `f % refs` and
/// writes output `f % refs`), the elapsed time and the CPU time of every thread of the process
/// meanwhile.
fn plain_loop(ctx: &Context, w: u32, h: u32, refs: usize, frames: usize) -> (Duration, Duration) {
    let g = Graph::new(ctx).unwrap();
    let (ins, outs) = frame_images(ctx, w, h, refs);
    let [first, _, last] = three_stages(ctx, &g, &ins[0], &outs[0]);
    g.verify().unwrap();
    let cpu = thread_cpu();
    let t0 = Instant::now();
    for f in 0..frames {
        first.set_parameter(0, Reference::from(&ins[f % refs])).unwrap();
        last.set_parameter(1, Reference::from(&outs[f % refs])).unwrap();
        g.process().unwrap();
    }
    let took = t0.elapsed();
    (took, cpu_since(&cpu, &thread_cpu()).values().sum())
}

/// Stream `frames` frames (frame `f` reads input `f % refs`); the elapsed time and, when `check`,
/// a hash of each frame's whole output in frame order.
fn stream(p: &Pipelined, frames: usize, check: bool) -> (Duration, Vec<u64>) {
    let refs = p.ins.len();
    let mut sums = Vec::with_capacity(frames);
    let t0 = Instant::now();
    let mut next = 0;
    while next < frames.min(refs) {
        p.g.enqueue(0, &p.ins[next]).unwrap();
        p.g.enqueue(1, &p.outs[next]).unwrap();
        next += 1;
    }
    for _ in 0..frames {
        let out = p.g.dequeue(1).unwrap();
        out.result.unwrap();
        let input = p.g.dequeue(0).unwrap();
        if check {
            let px = out.reference.as_image().unwrap().to_vec::<u8>().unwrap();
            sums.push(px.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3)));
        }
        if next < frames {
            p.g.enqueue(0, input.reference).unwrap();
            p.g.enqueue(1, out.reference).unwrap();
            next += 1;
        }
    }
    p.g.wait().unwrap();
    (t0.elapsed(), sums)
}

fn pipelining(dir: &Path) {
    const FRAMES: usize = 24;
    let ctx = Context::builder()
        .threads(1)
        .target(TargetConfig::new("a"))
        .target(TargetConfig::new("b"))
        .target(TargetConfig::new("c"))
        .build()
        .unwrap();
    ctx.add_module_dir(dir);
    ctx.load_module("vx_filters").unwrap();
    println!(
        "\npipelining: gaussian3x3 → box3x3 → not, one stage per target (1 thread each), {FRAMES} frames per round, median of {ROUNDS}"
    );
    println!(
        "{:<12} {:>12} {:>12} {:>9} {:>15} {:>11} {:>12} {:>13}  outputs",
        "size", "depth 1 fps", "depth 3 fps", "3 / 1", "plain 2t fps", "3 / plain", "bound fps", "bound / plain"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The same targets pinned: a to core 0, b and c to core 1 (the stages' times split about
    // evenly so: a is the slowest), which takes the scheduler's placement out of the picture.
    let pinned_ctx = (cores >= 2).then(|| {
        let ctx = Context::builder()
            .threads(1)
            .target(TargetConfig::new("a").pin_to_cores(&[0]))
            .target(TargetConfig::new("b").pin_to_cores(&[1]))
            .target(TargetConfig::new("c").pin_to_cores(&[1]))
            .build()
            .unwrap();
        ctx.add_module_dir(dir);
        ctx.load_module("vx_filters").unwrap();
        ctx
    });
    let plain_ctx = Context::builder().threads(2).build().unwrap();
    plain_ctx.add_module_dir(dir);
    plain_ctx.load_module("vx_filters").unwrap();
    for (w, h) in sizes() {
        let (d1, d3) = (pipelined(&ctx, w, h, 1, 4), pipelined(&ctx, w, h, 3, 4));
        let (_, first1) = stream(&d1, FRAMES, true);
        let (_, first3) = stream(&d3, FRAMES, true);
        let same = first1 == first3;
        let pinned = pinned_ctx.as_ref().map(|c| pipelined(c, w, h, 3, 4));
        let (mut t1, mut t3, mut tp, mut tpin) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // CPU time by thread while depth 3 streams, and in all while the plain loop runs.
        let (mut cpu3, mut cpu_plain) = (std::collections::BTreeMap::<String, Duration>::new(), Duration::ZERO);
        for _ in 0..ROUNDS {
            t1.push(stream(&d1, FRAMES, false).0);
            let before = thread_cpu();
            t3.push(stream(&d3, FRAMES, false).0);
            for (k, v) in cpu_since(&before, &thread_cpu()) {
                *cpu3.entry(k).or_insert(Duration::ZERO) += v;
            }
            let (took, cpu) = plain_loop(&plain_ctx, w, h, 4, FRAMES);
            tp.push(took);
            cpu_plain += cpu;
            if let Some(p) = &pinned {
                tpin.push(stream(p, FRAMES, false).0);
            }
        }
        let fps = |d: Duration| FRAMES as f64 / d.as_secs_f64();
        let (f1, f3, fp) = (fps(median(t1)), fps(median(t3)), fps(median(tp)));
        // The most depth 3 can reach with its stages as they cost now: each stage runs on one
        // thread (its target's), so a frame takes at least the slowest stage's CPU time, and the
        // stages' CPU times share `cores` cores. Stage CPU: the target threads' CPU time per frame
        // while depth 3 streamed (the work of a stage beside the others, reading what another
        // core wrote, and the hand-off work done on those threads; the coordinator's comes on
        // top). A hand-off design that costs the target threads no more than this one cannot
        // exceed it; one that takes the other threads' time to nothing could reach it.
        let per_frame = |d: Duration| d.as_secs_f64() / (ROUNDS * FRAMES) as f64;
        // Target threads are named `vx-ctx<id>-<target>-<i>` (cut to 15 bytes by Linux: the
        // target's name survives while the id has under 7 digits; the pinned context's threads
        // of the same names sleep through the window).
        let stage_cpu: Vec<f64> = ["a", "b", "c"]
            .iter()
            .map(|t| {
                let of_target = |k: &&String| k.starts_with("vx-ctx") && k.split('-').nth(2) == Some(*t);
                per_frame(cpu3.iter().filter(|(k, _)| of_target(k)).map(|(_, v)| *v).sum())
            })
            .collect();

        let all_cpu3 = per_frame(cpu3.values().sum());
        // The coordinator (`vx-graph<id>-pipeline`, cut to 15 bytes) and everything else (the
        // application's thread enqueueing and dequeueing).
        let coordinator = per_frame(cpu3.iter().filter(|(k, _)| k.starts_with("vx-graph")).map(|(_, v)| *v).sum());
        let bound = if stage_cpu.contains(&0.0) {
            println!("(no CPU time found for a target thread: no bound; thread names seen: {:?})", cpu3.keys());
            f64::NAN
        } else {
            1.0 / stage_cpu.iter().copied().fold(stage_cpu.iter().sum::<f64>() / cores as f64, f64::max)
        };
        println!(
            "{:<12} {:>12.1} {:>12.1} {:>8.2}x {:>15.1} {:>10.2}x {:>12.1} {:>12.2}x  {}",
            format!("{w}x{h}"),
            f1,
            f3,
            f3 / f1,
            fp,
            f3 / fp,
            bound,
            bound / fp,
            if same { "identical frame by frame" } else { "DIFFER" }
        );
        // With every thread's CPU time counted, the most this implementation's depth 3 can reach
        // on these cores.
        println!(
            "{:<12} CPU µs per frame: depth 3 stages {:.0} / {:.0} / {:.0}, coordinator {:.0}, the rest {:.0}, all threads {:.0} (at most {:.2}x plain on {cores} cores); plain loop all threads {:.0}",
            "",
            stage_cpu[0] * 1e6,
            stage_cpu[1] * 1e6,
            stage_cpu[2] * 1e6,
            coordinator * 1e6,
            (all_cpu3 - coordinator - stage_cpu.iter().sum::<f64>()) * 1e6,
            all_cpu3 * 1e6,
            cores as f64 / all_cpu3 / fp,
            per_frame(cpu_plain) * 1e6
        );
        assert!(same, "depth 3 changed the outputs");
        // Where depth 3's time goes: each stage's mean run (over every frame streamed) alone at
        // depth 1 and beside the others at depth 3, and how busy the stages keep the cores at
        // depth 3 (the stages' summed means per frame over the frame time times the cores). A
        // stage slower at depth 3 shares the machine (memory, caches, a core); cores left idle
        // are the hand-offs' and the scheduler's.
        let (m1, m3) = (stage_means(&d1.nodes), stage_means(&d3.nodes));
        println!(
            "{:<12} stage mean µs: depth 1 {:.0} / {:.0} / {:.0}, depth 3 {:.0} / {:.0} / {:.0}; depth 3 keeps {:.0} % of {cores} cores busy",
            "",
            m1[0],
            m1[1],
            m1[2],
            m3[0],
            m3[1],
            m3[2],
            m3.iter().sum::<f64>() * 1e-6 * f3 / cores as f64 * 100.0
        );
        if let Some(p) = &pinned {
            let fpin = fps(median(tpin));
            let m = stage_means(&p.nodes);
            println!(
                "{:<12} pinned (a: core 0, b and c: core 1): depth 3 {fpin:.1} fps, {:.2}x plain; stage mean µs {:.0} / {:.0} / {:.0}",
                "",
                fpin / fp,
                m[0],
                m[1],
                m[2]
            );
        }
    }
}

fn reverify(dir: &Path) {
    const FRAMES: usize = 200;
    println!(
        "\nre-verification per frame: gaussian3x3 → box3x3 → not, a 2-thread context, input and output replaced by \
         set_parameter every frame, then Graph::verify and process; median µs over {FRAMES} frames"
    );
    println!("{:<12} {:>7} {:>14} {:>10} {:>11}", "size", "fusion", "set_parameter", "verify", "process");
    for fusion in [true, false] {
        let ctx = Context::builder().threads(2).fusion(fusion).build().unwrap();
        ctx.add_module_dir(dir);
        ctx.load_module("vx_filters").unwrap();
        for (w, h) in sizes() {
            let g = Graph::new(&ctx).unwrap();
            let (ins, outs) = frame_images(&ctx, w, h, 4);
            let [first, _, last] = three_stages(&ctx, &g, &ins[0], &outs[0]);
            g.verify().unwrap();
            g.process().unwrap();
            let (mut set, mut verify, mut process) = (Vec::new(), Vec::new(), Vec::new());
            for f in 0..FRAMES {
                let t0 = Instant::now();
                first.set_parameter(0, Reference::from(&ins[f % 4])).unwrap();
                last.set_parameter(1, Reference::from(&outs[f % 4])).unwrap();
                let t1 = Instant::now();
                g.verify().unwrap();
                let t2 = Instant::now();
                g.process().unwrap();
                set.push(t1 - t0);
                verify.push(t2 - t1);
                process.push(t2.elapsed());
            }
            let us = |v: Vec<Duration>| median(v).as_secs_f64() * 1e6;
            println!(
                "{:<12} {:>7} {:>14.1} {:>10.1} {:>11.1}",
                format!("{w}x{h}"),
                if fusion { "on" } else { "off" },
                us(set),
                us(verify),
                us(process)
            );
            // Where verify's time goes: the passes that take a tenth of it or more, µs per frame,
            // from more frames timed pass by pass (apart: the timing adds a lock and a clock read
            // per pass).
            vx::__verify_pass_times(true);
            for f in 0..FRAMES {
                first.set_parameter(0, Reference::from(&ins[f % 4])).unwrap();
                last.set_parameter(1, Reference::from(&outs[f % 4])).unwrap();
                g.verify().unwrap();
                g.process().unwrap();
            }
            let passes = vx::__verify_pass_times(false);
            let total: Duration = passes.iter().filter(|(p, _)| !p.starts_with("nodes/")).map(|(_, d)| *d).sum();
            let big: Vec<String> = passes
                .iter()
                .filter(|(_, d)| *d * 10 >= total)
                .map(|(p, d)| format!("{p} {:.1}", d.as_secs_f64() * 1e6 / FRAMES as f64))
                .collect();
            println!("{:<12} verify's passes (µs per frame): {}", "", big.join(", "));
        }
    }
}

/// CPU time of each thread of this process so far, by thread name (Linux: `/proc/self/task/*/comm`
/// and the first field of `schedstat`, ns on a CPU; empty elsewhere). Threads of one name add up.
fn thread_cpu() -> std::collections::BTreeMap<String, Duration> {
    let mut by_name = std::collections::BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return by_name };
    for task in tasks.flatten() {
        let read = |f: &str| std::fs::read_to_string(task.path().join(f)).ok();
        let (Some(name), Some(stat)) = (read("comm"), read("schedstat")) else { continue };
        let Some(ns) = stat.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) else { continue };
        *by_name.entry(name.trim().to_owned()).or_insert(Duration::ZERO) += Duration::from_nanos(ns);
    }
    by_name
}

/// What each thread of `after` ran since `before` (threads new since then: all of their time).
fn cpu_since(
    before: &std::collections::BTreeMap<String, Duration>,
    after: &std::collections::BTreeMap<String, Duration>,
) -> std::collections::BTreeMap<String, Duration> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v.saturating_sub(before.get(k).copied().unwrap_or(Duration::ZERO))))
        .filter(|(_, v)| !v.is_zero())
        .collect()
}

/// Each node's mean run (µs) over the frames it ran.
fn stage_means(nodes: &[Node]) -> Vec<f64> {
    nodes
        .iter()
        .map(|n| {
            let q = n.perf().unwrap();
            q.sum.as_secs_f64() / q.num.max(1) as f64 * 1e6
        })
        .collect()
}

fn stages(dir: &Path) {
    const FRAMES: usize = 200;
    let mk = |targets: bool| {
        let mut b = Context::builder().threads(1).fusion(false);
        if targets {
            b = b.target(TargetConfig::new("a")).target(TargetConfig::new("b")).target(TargetConfig::new("c"));
        }
        let ctx = b.build().unwrap();
        ctx.add_module_dir(dir);
        ctx.load_module("vx_filters").unwrap();
        ctx
    };
    let (plain, tctx) = (mk(false), mk(true));
    for (w, h) in sizes() {
        for (label, ctx, on_targets) in [("plain", &plain, false), ("targets", &tctx, true)] {
            let g = Graph::new(ctx).unwrap();
            let (ins, outs) = frame_images(ctx, w, h, 4);
            let nodes = three_stages(ctx, &g, &ins[0], &outs[0]);
            if on_targets {
                for (n, t) in nodes.iter().zip(["a", "b", "c"]) {
                    n.set_target(t).unwrap();
                }
            }
            g.verify().unwrap();
            let t0 = Instant::now();
            for _ in 0..FRAMES {
                g.process().unwrap();
            }
            let per = t0.elapsed().as_secs_f64() * 1e6 / FRAMES as f64;
            let m = stage_means(&nodes);
            println!("{w}x{h} {label:<8} frame {per:.0} µs; stage mean µs {:.0} / {:.0} / {:.0}", m[0], m[1], m[2]);
        }
        // The pipelined graph places its stages on the targets itself.
        for depth in [1, 3] {
            let p = pipelined(&tctx, w, h, depth, 4);
            let (t, _) = stream(&p, FRAMES, false);
            let m = stage_means(&p.nodes);
            println!(
                "{w}x{h} depth {depth} frame {:.0} µs; stage mean µs {:.0} / {:.0} / {:.0}",
                t.as_secs_f64() * 1e6 / FRAMES as f64,
                m[0],
                m[1],
                m[2]
            );
        }
    }
}

/// The split cost model against always sharing and never sharing, in bursts of frames after an idle
/// gap (the helper parks in it), as a benchmark's rounds or a bursty stream see it.
fn split(dir: &Path) {
    let mk = |p: TilingPolicy, t: usize| {
        let ctx = Context::builder().threads(t).tiling_policy(p).build().unwrap();
        ctx.add_module_dir(dir);
        ctx.load_module("vx_filters").unwrap();
        ctx
    };
    let var = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (bursts, frames, gap) =
        (var("VX_SPLIT_BURSTS", 300), var("VX_SPLIT_FRAMES", 12) as u32, var("VX_SPLIT_GAP_US", 300));
    let policies = [
        ("model", TilingPolicy::default(), 2),
        ("always", TilingPolicy { split_by_cost: false, ..TilingPolicy::default() }, 2),
        ("never", TilingPolicy { min_parallel_pixels: usize::MAX, ..TilingPolicy::default() }, 2),
        ("1 thread", TilingPolicy::default(), 1),
    ];
    let ctxs: Vec<(&str, Context)> = policies.into_iter().map(|(n, p, t)| (n, mk(p, t))).collect();
    println!(
        "\nsplit: one-node graphs, {bursts} bursts of an untimed frame and {frames} timed ones, {gap} µs idle between \
         bursts (the policies' bursts interleaved); µs per timed frame, and the crew's counts (Context::crew_stats)"
    );
    for kernel in ["not", "threshold", "gaussian3x3"] {
        for (w, h) in sizes() {
            let px = pixels(3, w, h);
            let graphs: Vec<(&str, &Context, Inputs, Graph)> = ctxs
                .iter()
                .map(|(n, c)| {
                    let s = inputs(c, w, h, &px, &px);
                    let g = filter_graph(c, &s, kernel);
                    (*n, c, s, g)
                })
                .collect();
            let mut t: Vec<Vec<Duration>> = vec![Vec::new(); graphs.len()];
            for (_, c, _, _) in &graphs {
                let _ = c.reset_crew_stats();
            }
            for _ in 0..bursts {
                for (i, (_, _, _, g)) in graphs.iter().enumerate() {
                    g.process().unwrap();
                    let t0 = Instant::now();
                    for _ in 0..frames {
                        g.process().unwrap();
                    }
                    t[i].push(t0.elapsed() / frames);
                    std::thread::sleep(Duration::from_micros(gap));
                }
            }
            for (i, (n, c, _, _)) in graphs.iter().enumerate() {
                t[i].sort();
                let us = |d: Duration| d.as_secs_f64() * 1e6;
                let (v, s) = (&t[i], c.crew_stats());
                println!(
                    "{kernel:<12} {:<10} {n:<9} median {:>7.1} (p25 {:>7.1}, p75 {:>7.1}); jobs {}, warm {}, wake-ups {} \
                     ({:.1} µs each), late {}",
                    format!("{w}x{h}"),
                    us(v[v.len() / 2]),
                    us(v[v.len() / 4]),
                    us(v[v.len() * 3 / 4]),
                    s.jobs,
                    s.warm_jobs,
                    s.wakeups,
                    us(s.wakeup_time) / s.wakeups.max(1) as f64,
                    s.late_arrivals
                );
            }
            // One burst of the model, frame by frame: A alone, K shared with a wake-up sent, C
            // shared while the helper was still parked, W shared while it spun; µs.
            let (_, c, _, g) = &graphs[0];
            std::thread::sleep(Duration::from_micros(gap));
            let mut line = String::new();
            for _ in 0..=frames {
                c.reset_crew_stats();
                let t0 = Instant::now();
                g.process().unwrap();
                let took = t0.elapsed().as_secs_f64() * 1e6;
                let s = c.crew_stats();
                let kind = match (s.jobs, s.warm_jobs, s.wakeups) {
                    (0, _, _) => 'A',
                    (_, 0, 0) => 'C',
                    (_, 0, _) => 'K',
                    _ => 'W',
                };
                line += &format!(" {kind}{took:.1}");
            }
            println!("{:<23} one burst of the model:{line}", "");
        }
    }
}

fn main() {
    eprintln!("building the modules (release)…");
    let filters = build_module_profile("vx-filters", &[], true);
    let spec = build_module_profile("vx-spec-kernels", &[], true);
    let dir = plugin_dir("showcase-bench", &[("vx_filters", &filters), ("vx_spec_kernels", &spec)]);
    match std::env::var("VX_BENCH_ONLY").as_deref() {
        Ok("memory") => return memory_plan(&dir),
        Ok("aliasing") => return aliasing(&dir),
        Ok("pipelining") => return pipelining(&dir),
        Ok("reverify") => return reverify(&dir),
        Ok("stages") => return stages(&dir),
        Ok("split") => return split(&dir),
        _ => {}
    }
    let ctxs = [context(1, &dir), context(2, &dir)];
    let dir_in = input_dir();
    let (a_raw, b_raw) = (dir_in.join("a.u8"), dir_in.join("b.u8"));
    let mut cv_version = "n/a".to_string();
    let mut summary = Vec::new();
    for (w, h) in sizes() {
        let (a_px, b_px) = (pixels(1, w, h), pixels(2, w, h));
        std::fs::write(&a_raw, &a_px).unwrap();
        std::fs::write(&b_raw, &b_px).unwrap();
        let ins: Vec<Inputs> = ctxs.iter().map(|c| inputs(c, w, h, &a_px, &b_px)).collect();
        let cv: Vec<Option<String>> = [1, 2].iter().map(|&t| opencv(&a_raw, &b_raw, w, h, t)).collect();
        if let Some(v) = cv[0].as_deref().and_then(|j| j.split("\"opencv_version\": \"").nth(1)) {
            cv_version = v.split('"').next().unwrap_or("n/a").to_string();
        }
        println!("\n{w}x{h} U8 — median ms/frame; ratio = OpenCV {cv_version} / vx (> 1: vx is faster)");
        println!(
            "{:<15} {:>9} {:>9} {:>7}   {:>9} {:>9} {:>7}",
            "kernel", "vx 1t", "cv 1t", "ratio", "vx 2t", "cv 2t", "ratio"
        );
        for name in KERNELS {
            if name == "threshold_range" && ctxs[0].kernel_by_name("filters.threshold_range").is_err() {
                println!("{name:<15} (not in this build of vx_filters)");
                continue;
            }
            let graphs: Vec<Graph> = ctxs
                .iter()
                .zip(&ins)
                .map(|(c, s)| if name == "pipeline" { pipeline_graph(c, s) } else { filter_graph(c, s, name) })
                .collect();
            let vx = time_graphs(&graphs, w, h);
            let mut ratios = [None, None];
            let mut cell = |i: usize| match cv[i].as_deref().and_then(|j| json_seconds(j, name)) {
                Some(c) => {
                    let r = c.as_secs_f64() / vx[i].as_secs_f64();
                    ratios[i] = Some(r);
                    format!("{:>9.3} {:>6.2}x", ms(c), r)
                }
                None => format!("{:>9} {:>7}", "n/a", "-"),
            };
            let (c0, c1) = (cell(0), cell(1));
            let label = if name == "copy" { "copy (floor)" } else { name };
            println!("{label:<15} {:>9.3} {c0}   {:>9.3} {c1}", ms(vx[0]), ms(vx[1]));
            summary.push((w, h, name, ratios));
        }
        if cv[0].is_none() {
            println!("(OpenCV columns skipped: `python3 tests/benches/opencv_bench.py` needs opencv-python-headless)");
        }
    }
    println!("\nratio table (OpenCV / vx), 3x3 filters and the pipeline:");
    println!(
        "{:<10} {:>7} {:>12} {:>8} {:>9} {:>9}",
        "size", "threads", "gaussian3x3", "box3x3", "sobel3x3", "pipeline"
    );
    for t in 0..2 {
        for (w, h) in sizes() {
            let r = |n: &str| {
                summary
                    .iter()
                    .find(|(sw, sh, sn, _)| (*sw, *sh, *sn) == (w, h, n))
                    .and_then(|s| s.3[t])
                    .map_or("-".to_string(), |r| format!("{r:.2}x"))
            };
            println!(
                "{:<10} {:>7} {:>12} {:>8} {:>9} {:>9}",
                format!("{w}x{h}"),
                t + 1,
                r("gaussian3x3"),
                r("box3x3"),
                r("sobel3x3"),
                r("pipeline")
            );
        }
    }
    aliasing(&dir);
    memory_plan(&dir);
    pipelining(&dir);
    reverify(&dir);
    let setups = &ctxs;
    let (w, h) = (3840u32, 2160u32);
    let a_px = pixels(1, w, h);

    // Framework overhead: a one-node graph on 64×64, process time minus the node's own time.
    {
        let ctx = &setups[1];
        let g = Graph::new(ctx).unwrap();
        let (a, o) =
            (Image::new(ctx, 64, 64, ImageFormat::U8).unwrap(), Image::new(ctx, 64, 64, ImageFormat::U8).unwrap());
        g.add_node(&ctx.kernel_by_name("filters.not").unwrap(), [&a, &o]).unwrap();
        g.process().unwrap();
        const N: u32 = 20_000;
        let t = Instant::now();
        for _ in 0..N {
            g.process().unwrap();
        }
        let per = t.elapsed() / N;
        let node = g.node_perf().unwrap()[0].2.avg();
        println!(
            "framework overhead, one node on 64x64: process {:.2} µs - node {:.2} µs = {:.2} µs per node",
            per.as_secs_f64() * 1e6,
            node.as_secs_f64() * 1e6,
            (per.saturating_sub(node)).as_secs_f64() * 1e6
        );
    }

    // Module call overhead: the same Gaussian compiled in versus loaded from a module.
    {
        let in_process = Context::builder().threads(1).build().unwrap();
        in_process.publish_in_process().unwrap();
        let from_module = Context::builder().threads(1).build().unwrap();
        from_module.add_module_dir(&dir);
        from_module.load_module("vx_spec_kernels").unwrap();
        let time = |ctx: &Context| {
            let a = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
            a.copy_from(Rect::full(w, h), 0, &a_px).unwrap();
            let o = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
            let g = Graph::new(ctx).unwrap();
            g.add_node(&ctx.kernel_by_name("spec.gaussian3x3").unwrap(), [&a, &o]).unwrap();
            time_graph(&g, w, h)
        };
        let (mut ins, mut mods) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            ins.push(time(&in_process));
            mods.push(time(&from_module));
        }
        let (i, m) = (median(ins), median(mods));
        println!(
            "module call overhead (spec.gaussian3x3, {w}x{h}, 1 thread): in-process {:.2} ms, module {:.2} ms, {:+.1} %",
            ms(i),
            ms(m),
            (m.as_secs_f64() / i.as_secs_f64() - 1.0) * 100.0
        );
    }

    // Load + publish, and unload.
    {
        let ctx = Context::new().unwrap();
        ctx.add_module_dir(&dir);
        let (mut loads, mut unloads) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            let t = Instant::now();
            ctx.load_module("vx_filters").unwrap();
            loads.push(t.elapsed());
            let t = Instant::now();
            ctx.unload_module("vx_filters").unwrap();
            unloads.push(t.elapsed());
        }
        ctx.load_module("vx_filters").unwrap();
        let kernels = ctx.module_kernels("vx_filters").len();
        println!(
            "vx_filters ({kernels} kernels): load + publish {:.2} ms, unload {:.2} ms (medians of 20)",
            ms(median(loads)),
            ms(median(unloads))
        );
    }
}
