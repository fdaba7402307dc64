//! How verify and process cost grows with the size of a graph (issue 35):
//! `cargo bench -p vx-tests --bench verify_scaling` (a table, not criterion).
//!
//! Two shapes of N `filters.not` nodes over 64×16 U8 images, one thread:
//! - **chain**: input → not → v1 → not → v2 … → output, the intermediates virtual;
//! - **wide**: N nodes all reading one input, each writing an output of its own;
//! - **fan**: one node writing a virtual image that the other N − 1 read, each into an output of its
//!   own (every reader's in-place hint asks who else reads that image).
//!
//! Columns: building the graph (`add_node` × N), its first verify (both the median over
//! `20000 / N` fresh graphs, 3 to 9, one at a time: each is built after the one before was dropped,
//! so every N is measured alike, on memory the allocator already has), verify again (the median of
//! `VX_BENCH_VERIFIES` explicit verifies, 3 by default), process per frame (median of
//! frames), the `reload_module` call itself (it moves an idle graph's nodes whose kernels changed in
//! code alone), the first process after it (the module's kernels change version: nodes still to
//! move move, rebound nodes re-verify; median of `VX_BENCH_RELOADS` reloads, 5 by default) and what it costs
//! beyond a frame (`-frame`), and the first process after
//! `Node::set_parameter` of the first node's input to another image of the same meta — each also in
//! µs per node. `VX_BENCH_MAX_N=4000` stops at that N; `VX_BENCH_SHAPE=chain`
//! runs one shape, `VX_BENCH_N=8000` one size; `VX_BENCH_PASSES=1` adds a line per row with the
//! fresh verifies' time pass by pass, in µs per node.

use std::time::{Duration, Instant};

use vx::*;
use vx_tests::{build_module_profile, plugin_dir};

const SIZES: [usize; 7] = [10, 100, 1_000, 2_000, 4_000, 8_000, 16_000];
const W: u32 = 64;
const H: u32 = 16;

fn image(ctx: &Context) -> Image {
    let i = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    i.copy_from(Rect::full(W, H), 0, &vec![7u8; (W * H) as usize]).unwrap();
    i
}

struct Built {
    graph: Graph,
    first: Node,
    spare: Image,
    build: Duration,
}

fn chain(ctx: &Context, not: &Kernel, n: usize) -> Built {
    let t0 = Instant::now();
    let graph = Graph::new(ctx).unwrap();
    let input = image(ctx);
    let mut prev = input.clone();
    let mut first = None;
    for i in 0..n {
        let next =
            if i + 1 == n { image(ctx) } else { Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual).unwrap() };
        let node = graph.add_node(not, [&prev, &next]).unwrap();
        first.get_or_insert(node);
        prev = next;
    }
    Built { graph, first: first.unwrap(), spare: image(ctx), build: t0.elapsed() }
}

fn wide(ctx: &Context, not: &Kernel, n: usize) -> Built {
    let t0 = Instant::now();
    let graph = Graph::new(ctx).unwrap();
    let input = image(ctx);
    let mut first = None;
    for _ in 0..n {
        let node = graph.add_node(not, [&input, &image(ctx)]).unwrap();
        first.get_or_insert(node);
    }
    Built { graph, first: first.unwrap(), spare: image(ctx), build: t0.elapsed() }
}

/// One node writes a virtual image that the other N − 1 all read (each into an output of its own):
/// every reader's in-place hint asks "who else reads this", the question a scan made quadratic.
fn fan(ctx: &Context, not: &Kernel, n: usize) -> Built {
    let t0 = Instant::now();
    let graph = Graph::new(ctx).unwrap();
    let shared = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual).unwrap();
    let first = graph.add_node(not, [&image(ctx), &shared]).unwrap();
    for _ in 1..n {
        graph.add_node(not, [&shared, &image(ctx)]).unwrap();
    }
    Built { graph, first, spare: image(ctx), build: t0.elapsed() }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn per_node(d: Duration, n: usize) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6 / n as f64)
}

fn main() {
    let max_n: usize = std::env::var("VX_BENCH_MAX_N").ok().and_then(|v| v.parse().ok()).unwrap_or(16_000);
    eprintln!("building vx_filters (release)…");
    let filters = build_module_profile("vx-filters", &[], true);
    let dir = plugin_dir("verify-scaling", &[("vx_filters", &filters)]);
    let ctx = Context::builder().threads(1).max_nodes(1 << 20).max_data_objects(1 << 20).build().unwrap();
    ctx.add_module_dir(dir.clone());
    ctx.load_module("vx_filters").unwrap();

    println!("verify scaling: N filters.not nodes over {W}x{H} U8 images, 1 thread; ms, and µs per node");
    println!(
        "{:<6} {:>6} {:>9} {:>9} {:>8} {:>9} {:>8} {:>9} {:>8} {:>9} {:>8} {:>10} {:>8} {:>10} {:>8}",
        "shape",
        "N",
        "build",
        "/node",
        "verify",
        "/node",
        "again",
        "/node",
        "process",
        "/node",
        "reload",
        "reload+1",
        "-frame",
        "setpar+1",
        "/node"
    );
    let verifies: usize = std::env::var("VX_BENCH_VERIFIES").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    // Warm up (the process's first graph pays one-time costs: code paged in, pools made).
    {
        let not = ctx.kernel_by_name("filters.not").unwrap();
        let b = chain(&ctx, &not, 100);
        b.graph.verify().unwrap();
        b.graph.process().unwrap();
    }
    let reloads: usize = std::env::var("VX_BENCH_RELOADS").ok().and_then(|v| v.parse().ok()).unwrap_or(5).max(1);
    let passes = std::env::var_os("VX_BENCH_PASSES").is_some();
    let shapes = std::env::var("VX_BENCH_SHAPE").unwrap_or_else(|_| "chain,wide,fan".into());
    for shape in ["chain", "wide", "fan"].into_iter().filter(|s| shapes.split(',').any(|x| x == *s)) {
        let only: Option<usize> = std::env::var("VX_BENCH_N").ok().and_then(|v| v.parse().ok());
        for &n in SIZES.iter().filter(|&&n| n <= max_n && only.is_none_or(|o| o == n)) {
            // Build and verify fresh graphs (several when small: the median), keep the last.
            let not = ctx.kernel_by_name("filters.not").unwrap();
            let fresh = (20_000 / n).clamp(3, 9);
            let (mut builds, mut verifies_first, mut last) = (Vec::new(), Vec::new(), None);
            vx::__verify_pass_times(passes);
            for _ in 0..fresh {
                drop(last.take());
                let b = match shape {
                    "chain" => chain(&ctx, &not, n),
                    "wide" => wide(&ctx, &not, n),
                    _ => fan(&ctx, &not, n),
                };
                let t = Instant::now();
                b.graph.verify().unwrap();
                verifies_first.push(t.elapsed());
                builds.push(b.build);
                last = Some(b);
            }
            drop(not);
            let pass_times = vx::__verify_pass_times(false);
            let mut b = last.unwrap();
            b.build = median(builds);
            let verify = median(verifies_first);
            // Again (an explicit verify re-verifies the whole graph): the median of a few.
            let again = median(
                (0..verifies)
                    .map(|_| {
                        let t = Instant::now();
                        b.graph.verify().unwrap();
                        t.elapsed()
                    })
                    .collect(),
            );
            let frames = (200_000 / n).clamp(3, 50);
            let process = median(
                (0..frames)
                    .map(|_| {
                        let t = Instant::now();
                        b.graph.process().unwrap();
                        t.elapsed()
                    })
                    .collect(),
            );
            let (mut reload_calls, mut after_reloads) = (Vec::new(), Vec::new());
            for _ in 0..reloads {
                let t = Instant::now();
                ctx.reload_module("vx_filters").unwrap();
                reload_calls.push(t.elapsed());
                let t = Instant::now();
                b.graph.process().unwrap();
                after_reloads.push(t.elapsed());
            }
            let (reload, after_reload) = (median(reload_calls), median(after_reloads));
            b.first.set_parameter(0, Reference::from(&b.spare)).unwrap();
            let t = Instant::now();
            b.graph.process().unwrap();
            let after_set = t.elapsed();
            println!(
                "{:<6} {:>6} {:>9} {:>9} {:>8} {:>9} {:>8} {:>9} {:>8} {:>9} {:>8} {:>10} {:>8} {:>10} {:>8}",
                shape,
                n,
                ms(b.build),
                per_node(b.build, n),
                ms(verify),
                per_node(verify, n),
                ms(again),
                per_node(again, n),
                ms(process),
                per_node(process, n),
                ms(reload),
                ms(after_reload),
                ms(after_reload.saturating_sub(process)),
                ms(after_set),
                per_node(after_set, n),
            );
            if passes {
                // The fresh verifies' time by pass, µs per node (node passes are part of `nodes`).
                let line: Vec<String> = pass_times
                    .iter()
                    .map(|(name, d)| format!("{name} {:.2}", d.as_secs_f64() * 1e6 / (fresh * n) as f64))
                    .collect();
                println!("    passes, µs/node: {}", line.join(", "));
            }
        }
    }
}
