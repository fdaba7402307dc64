//! Fused against unfused on short chains of vx_filters kernels (issue 34): what fusing costs or
//! saves per kind of member — point operations (descriptors into line buffers), 3×3 row kernels
//! (row entries with tables of row pointers) — at each size, one thread, outputs preallocated,
//! fused and unfused graphs timed in interleaved rounds. Prints µs per frame (best of the rounds,
//! the machine is shared) and unfused / fused (above 1: fusing pays).
//!
//!   cargo bench -p vx-tests --bench fusion_pairs
//!   VX_BENCH_SIZES=640x480 cargo bench -p vx-tests --bench fusion_pairs

use std::time::Instant;

use vx::*;
use vx_tests::{build_module_profile, plugin_dir};

const CHAINS: [&[&str]; 5] = [
    &["gaussian3x3", "posterize"],
    &["posterize", "gaussian3x3"],
    &["posterize", "posterize"],
    &["gaussian3x3", "box3x3"],
    &["box3x3", "box3x3", "box3x3"],
];

fn sizes() -> Vec<(u32, u32)> {
    let spec = std::env::var("VX_BENCH_SIZES").unwrap_or_else(|_| "640x480,1920x1080,3840x2160".into());
    spec.split(',')
        .filter_map(|s| {
            let (w, h) = s.split_once('x')?;
            Some((w.parse().ok()?, h.parse().ok()?))
        })
        .collect()
}

/// `chain` over a `w`×`h` input, virtual images between its nodes, a real output.
fn graph(ctx: &Context, chain: &[&str], w: u32, h: u32) -> Graph {
    let a = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..w as u64 * h as u64).map(|i| ((i * 7919) % 251) as u8).collect();
    a.copy_from(Rect::full(w, h), 0, &px).unwrap();
    let g = Graph::new(ctx).unwrap();
    let mut prev = a;
    for (i, k) in chain.iter().enumerate() {
        let out = if i + 1 == chain.len() {
            Image::new(ctx, w, h, ImageFormat::U8).unwrap()
        } else {
            Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap()
        };
        g.add_node(&ctx.kernel_by_name(&format!("filters.{k}")).unwrap(), [&prev, &out]).unwrap();
        prev = out;
    }
    g.process().unwrap();
    g
}

fn main() {
    let dir = plugin_dir("fusion-pairs", &[("vx_filters", &build_module_profile("vx-filters", &[], true))]);
    let ctx = |fusion: bool| {
        let c = Context::builder().threads(1).fusion(fusion).build().unwrap();
        c.add_module_dir(&dir);
        c.load_module("vx_filters").unwrap();
        c
    };
    let (plain, fused) = (ctx(false), ctx(true));
    println!("{:<12} {:<36} {:>12} {:>12} {:>16}", "size", "chain", "unfused µs", "fused µs", "unfused / fused");
    for (w, h) in sizes() {
        for chain in CHAINS {
            let (p, f) = (graph(&plain, chain, w, h), graph(&fused, chain, w, h));
            assert_eq!(f.fusion_report().unwrap().groups.len(), 1, "{}", f.fusion_report().unwrap());
            let frames = (4_000_000 / (w as usize * h as usize)).clamp(2, 200);
            let (mut bp, mut bf) = (f64::MAX, f64::MAX);
            let time = |g: &Graph| {
                let t = Instant::now();
                for _ in 0..frames {
                    g.process().unwrap();
                }
                t.elapsed().as_secs_f64() * 1e6 / frames as f64
            };
            for _ in 0..15 {
                bp = bp.min(time(&p));
                bf = bf.min(time(&f));
            }
            println!(
                "{:<12} {:<36} {:>12.1} {:>12.1} {:>15.2}×",
                format!("{w}x{h}"),
                chain.join(" → "),
                bp,
                bf,
                bp / bf
            );
        }
    }
}
