//! Tiled 3×3 Gaussian through a one-node graph versus the same arithmetic as a plain nested loop
//! over the whole image, on a 3840×2160 U8 image (16 MB of traffic per frame: DRAM-bound) and on a
//! 1280×720 one (3.7 MB per frame, largely cache-resident), at 1 and 2 threads. Both share the row function
//! (`gaussian_row`), so the ratio measures the runtime: tiling, scheduling and parallelism. A last row,
//! the plain loop split by hand over two scoped threads, shows what two threads can reach on the
//! machine at all.
//!
//! Run: `cargo bench -p vx-rs --bench tiling_gaussian`
//!
//! Throughput, not single-frame latency: each round times `FRAMES` consecutive frames per variant, as
//! a service processing a stream would (on this VM an idle vCPU halts, and a single frame after an
//! idle spell mostly measures its wake-up). Rounds interleave the three variants so machine noise hits
//! them alike; the table reports median times per frame and the median of the per-round ratios (each
//! round's plain time over its tiled time).

#[path = "../tests/common/spec_kernels.rs"]
mod spec_kernels;

use std::time::{Duration, Instant};

use spec_kernels::{gaussian_kernel, gaussian_row};
use vx::*;

const ROUNDS: usize = 30;
const FRAMES: u32 = 5;

/// The hand-written baseline: every interior pixel, row by row, one thread.
fn plain_loop(src: &[u8], dst: &mut [u8], w: usize, h: usize) {
    for y in 1..h - 1 {
        let (a, b, c) = (&src[(y - 1) * w..y * w], &src[y * w..(y + 1) * w], &src[(y + 1) * w..(y + 2) * w]);
        gaussian_row(a, b, c, &mut dst[y * w + 1..(y + 1) * w - 1]);
    }
}

/// The hand-written parallel reference: the plain loop over two halves of the rows on two scoped
/// threads (what the runtime's 2-thread figure can at best reach on this machine).
fn plain_loop_2threads(src: &[u8], dst: &mut [u8], w: usize, h: usize) {
    let mid = h / 2;
    let (top, bottom) = dst.split_at_mut(mid * w);
    std::thread::scope(|s| {
        s.spawn(|| {
            for y in 1..mid {
                let (a, b, c) = (&src[(y - 1) * w..y * w], &src[y * w..(y + 1) * w], &src[(y + 1) * w..(y + 2) * w]);
                gaussian_row(a, b, c, &mut top[y * w + 1..(y + 1) * w - 1]);
            }
        });
        for y in mid..h - 1 {
            let (a, b, c) = (&src[(y - 1) * w..y * w], &src[y * w..(y + 1) * w], &src[(y + 1) * w..(y + 2) * w]);
            let r = (y - mid) * w;
            gaussian_row(a, b, c, &mut bottom[r + 1..r + w - 1]);
        }
    });
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    for (w, h) in [(3840, 2160), (1280, 720), (640, 480)] {
        bench(w, h);
    }
}

#[allow(non_snake_case)]
fn bench(W: u32, H: u32) {
    let pixels: Vec<u8> = (0..W as usize * H as usize).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();

    let mut graphs = Vec::new();
    for threads in [1, 2] {
        let ctx = Context::builder().threads(threads).build().expect("context");
        let k = gaussian_kernel(&ctx, "bench.gaussian3x3", false);
        let src = Image::new(&ctx, W, H, ImageFormat::U8).expect("image");
        src.copy_from(Rect::full(W, H), 0, &pixels).expect("copy");
        let dst = Image::new(&ctx, W, H, ImageFormat::U8).expect("image");
        let g = Graph::new(&ctx).expect("graph");
        g.add_node(&k, [&src, &dst]).expect("node");
        g.verify().expect("verify");
        g.process().expect("warm-up");
        graphs.push((threads, g, dst));
    }
    let mut plain_out = vec![0u8; pixels.len()];
    plain_loop(&pixels, &mut plain_out, W as usize, H as usize);

    // Same output, or the comparison means nothing.
    for (threads, _, dst) in &graphs {
        let out = dst.to_vec::<u8>().expect("read");
        for y in 1..H as usize - 1 {
            let r = y * W as usize + 1..(y + 1) * W as usize - 1;
            assert_eq!(out[r.clone()], plain_out[r], "tiled output differs at {threads} threads, row {y}");
        }
    }

    let (mut t_plain, mut t1, mut t2, mut t_hand) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..FRAMES {
            plain_loop(std::hint::black_box(&pixels), &mut plain_out, W as usize, H as usize);
        }
        t_plain.push(t.elapsed() / FRAMES);
        let t = Instant::now();
        for _ in 0..FRAMES {
            plain_loop_2threads(std::hint::black_box(&pixels), &mut plain_out, W as usize, H as usize);
        }
        t_hand.push(t.elapsed() / FRAMES);
        for (threads, g, _) in &graphs {
            let t = Instant::now();
            for _ in 0..FRAMES {
                g.process().expect("process");
            }
            if *threads == 1 { &mut t1 } else { &mut t2 }.push(t.elapsed() / FRAMES);
        }
    }
    let ratio = |t: &[Duration]| {
        let mut r: Vec<f64> = t_plain.iter().zip(t).map(|(p, t)| p.as_secs_f64() / t.as_secs_f64()).collect();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    };
    let (r1, r2, rh) = (ratio(&t1), ratio(&t2), ratio(&t_hand));
    let (p, a, b, hand) = (median(t_plain), median(t1), median(t2), median(t_hand));
    let mpix = |d: Duration| (W as f64 * H as f64) / d.as_secs_f64() / 1e6;
    println!("3x3 Gaussian on {W}x{H} U8, median of {ROUNDS} interleaved rounds of {FRAMES} frames per variant");
    println!("{:<28} {:>10} {:>12} {:>14}", "variant", "ms/frame", "Mpixel/s", "vs plain loop");
    println!("{:<28} {:>10.2} {:>12.0} {:>13.2}x", "plain nested loop, 1 thread", p.as_secs_f64() * 1e3, mpix(p), 1.0);
    println!("{:<28} {:>10.2} {:>12.0} {:>13.2}x", "tiled graph, 1 thread", a.as_secs_f64() * 1e3, mpix(a), r1);
    println!("{:<28} {:>10.2} {:>12.0} {:>13.2}x", "tiled graph, 2 threads", b.as_secs_f64() * 1e3, mpix(b), r2);
    println!(
        "{:<28} {:>10.2} {:>12.0} {:>13.2}x",
        "reference: plain, 2 threads",
        hand.as_secs_f64() * 1e3,
        mpix(hand),
        rh
    );
    println!("targets: >= 0.95x at 1 thread, >= 1.80x at 2 threads\n");
}
