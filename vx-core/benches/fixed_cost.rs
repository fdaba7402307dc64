//! The runtime's fixed cost per `process` (issue 29 item 2): one-node graphs whose kernels do
//! (almost) nothing, so what is timed is the framework — locking the graph, the schedule walk, the
//! node's bookkeeping, the tiling plan — not pixels. Side by side in one run, rounds interleaved:
//!
//! - `user, 1×1`: an in-process user kernel whose process function returns at once;
//! - `tiling, 4×1`: a tiling kernel (posterize, 4×1 blocks) over one block;
//! - `tiling, 640×480`: the same over VGA, next to the same arithmetic as a plain loop over the
//!   buffers (`plain`), so `tiling − plain` is the runtime's share at VGA;
//! - at 1 and 2 threads (the 2-thread context may split the VGA node: the cost model decides;
//!   `never split` and `always split` rows show what either fixed choice costs).
//!
//! Run: `cargo bench -p vx-rs --bench fixed_cost` (`VX_BENCH_ROUNDS`, default 15; `VX_BENCH_ONLY=4×1` runs the rows whose name contains it). Prints ns per
//! `process`: min / median / max over rounds, each round the mean of a batch of calls.

#[path = "../tests/common/spec_kernels.rs"]
mod spec_kernels;

use std::hint::black_box;
use std::time::Instant;

use spec_kernels::posterize_kernel;
use vx::*;

fn noop_kernel(ctx: &Context) -> Kernel {
    let k = ctx
        .user_kernel("bench.noop", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_from_reference(&Reference::from(i))?;
            Ok(())
        })
        .process(|_| Ok(()))
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

fn one_node(ctx: &Context, k: &Kernel, w: u32, h: u32) -> Graph {
    let src = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    let dst = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    let g = Graph::new(ctx).unwrap();
    g.add_node(k, [&src, &dst]).unwrap();
    g.verify().unwrap();
    g.process().unwrap();
    g
}

fn posterize_plain(src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
        let v = u32::from_ne_bytes([s[0], s[1], s[2], s[3]]);
        let p = (v & 0xF0F0_F0F0) | ((v >> 4) & 0x0F0F_0F0F);
        d.copy_from_slice(&p.to_ne_bytes());
    }
}

/// Mean ns per call of `f` over a batch sized to take about 2 ms.
fn batch(f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let once = t.elapsed().as_nanos().max(1) as f64;
    let n = ((2e6 / once) as u32).clamp(3, 200_000);
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

/// A row of the table: its name, the call timed, the per-round times.
type Row = (String, Box<dyn FnMut()>, Vec<f64>);

fn main() {
    let rounds: usize = std::env::var("VX_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let mut rows: Vec<Row> = Vec::new();
    let mut contexts = Vec::new();
    for threads in [1usize, 2] {
        let ctx = Context::builder().threads(threads).build().unwrap();
        let noop = noop_kernel(&ctx);
        let post = posterize_kernel(&ctx);
        let g = one_node(&ctx, &noop, 1, 1);
        rows.push((format!("user, 1×1, {threads}t"), Box::new(move || g.process().unwrap()), vec![]));
        let g = one_node(&ctx, &post, 4, 1);
        rows.push((format!("tiling, 4×1, {threads}t"), Box::new(move || g.process().unwrap()), vec![]));
        let g = one_node(&ctx, &post, 640, 480);
        rows.push((format!("tiling, 640×480, {threads}t"), Box::new(move || g.process().unwrap()), vec![]));
        contexts.push(ctx);
    }
    let ctx = Context::builder()
        .threads(2)
        .tiling_policy(TilingPolicy { min_parallel_pixels: usize::MAX, ..Default::default() })
        .build()
        .unwrap();
    let post = posterize_kernel(&ctx);
    let g = one_node(&ctx, &post, 640, 480);
    rows.push(("tiling, 640×480, 2t never split".into(), Box::new(move || g.process().unwrap()), vec![]));
    let ctx = Context::builder()
        .threads(2)
        .tiling_policy(TilingPolicy { min_parallel_pixels: 0, split_by_cost: false, ..Default::default() })
        .build()
        .unwrap();
    let post = posterize_kernel(&ctx);
    let g = one_node(&ctx, &post, 640, 480);
    rows.push(("tiling, 640×480, 2t always split".into(), Box::new(move || g.process().unwrap()), vec![]));
    let src: Vec<u8> = (0..640 * 480).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut dst = vec![0u8; 640 * 480];
    rows.push((
        "plain loop, 640×480".into(),
        Box::new(move || posterize_plain(black_box(&src), black_box(&mut dst))),
        vec![],
    ));
    // `VX_BENCH_ONLY=4×1` keeps the rows whose name contains it (for profiling one).
    if let Ok(only) = std::env::var("VX_BENCH_ONLY") {
        rows.retain(|(name, _, _)| name.contains(&only));
    }
    for _ in 0..rounds {
        for (_, f, times) in rows.iter_mut() {
            times.push(batch(f.as_mut()));
        }
    }
    println!("| one-node graph | ns per process: min | median | max |");
    println!("|---|---|---|---|");
    for (name, _, mut t) in rows {
        t.sort_by(f64::total_cmp);
        println!("| {name} | {:.0} | {:.0} | {:.0} |", t[0], t[t.len() / 2], t[t.len() - 1]);
    }
}
