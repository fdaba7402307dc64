//! What the filter benchmarks share (`showcase.rs`, `performance.rs`): the input pictures, a
//! context with vx_filters loaded, one-node graphs of each vx_filters kernel with their outputs
//! preallocated, the 4-node edge pipeline, the copy kernel of the floor row, the sizes.

use std::path::Path;

use vx::*;
use vx_plugin_abi::{Status, Tile, TileError, TileMut, tiling_kernel};

/// What the benches time, in table order: every vx_filters kernel with an OpenCV equivalent, the
/// copy floor and the 4-node edge pipeline.
pub(crate) const KERNELS: [&str; 12] = [
    "copy",
    "gaussian3x3",
    "box3x3",
    "sobel3x3",
    "magnitude",
    "add",
    "subtract",
    "posterize",
    "threshold",
    "threshold_range",
    "not",
    "pipeline",
];

/// The sizes measured unless `VX_BENCH_SIZES` says otherwise.
pub(crate) const SIZES: [(u32, u32); 3] = [(640, 480), (1920, 1080), (3840, 2160)];

/// The floor row's kernel: the input copied to the output, tile by tile, through the runtime.
#[tiling_kernel(name = "bench.copy", flexible)]
pub(crate) fn copy(input: &Tile<u8>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    // One copy when the rows are adjacent in memory (no row padding: the images here), as a copy
    // kernel written for speed does; else row by row.
    if let (Some(src), Some(dst)) = (input.as_slice(), out.as_mut_slice()) {
        dst.copy_from_slice(src);
        return Ok(());
    }
    for y in 0..out.height() {
        let src = input.row(y as i32).ok_or_else(|| TileError::new(Status::Failure, "no input row"))?;
        let dst = out.row_mut(y).ok_or_else(|| TileError::new(Status::Failure, "no output row"))?;
        dst.copy_from_slice(&src[..dst.len()]);
    }
    Ok(())
}

/// A picture-like U8 image of `w`×`h` (smooth structure plus noise), from `seed`.
pub(crate) fn pixels(seed: u64, w: u32, h: u32) -> Vec<u8> {
    let mut x = seed;
    (0..w as usize * h as usize)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Smooth structure plus noise, like a picture.
            let (px, py) = ((i % w as usize) as f32, (i / w as usize) as f32);
            let base = 128.0 + 90.0 * (px / 37.0).sin() * (py / 23.0).cos();
            (base as i32 + ((x >> 59) as i32 - 16)).clamp(0, 255) as u8
        })
        .collect()
}

/// A context of `threads` threads with vx_filters loaded and the bench's own kernels published.
/// `VX_FUSION_ROWS` and `VX_FUSION_BAND_ROWS` set the fused groups' rows per step and per band
/// (`TilingPolicy::fusion_rows`, `fusion_band_rows`; unset: the rules), for sweeps;
/// `VX_SPLIT_ALWAYS=1` shares every splittable run with the helpers (no cost model), to compare.
pub(crate) fn context(threads: usize, dir: &Path) -> Context {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    let policy = vx::TilingPolicy {
        fusion_rows: env("VX_FUSION_ROWS"),
        fusion_band_rows: env("VX_FUSION_BAND_ROWS"),
        split_by_cost: env("VX_SPLIT_ALWAYS") != 1,
        ..Default::default()
    };
    let ctx = Context::builder().threads(threads).tiling_policy(policy).build().unwrap();
    ctx.add_module_dir(dir);
    ctx.load_module("vx_filters").unwrap();
    ctx.publish_in_process().unwrap();
    ctx
}

/// The two input images of a size, in one context.
pub(crate) struct Inputs {
    pub(crate) a: Image,
    pub(crate) b: Image,
    pub(crate) w: u32,
    pub(crate) h: u32,
}

/// [`Inputs`] filled with `a_px` and `b_px`.
pub(crate) fn inputs(ctx: &Context, w: u32, h: u32, a_px: &[u8], b_px: &[u8]) -> Inputs {
    let a = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    a.copy_from(Rect::full(w, h), 0, a_px).unwrap();
    let b = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    b.copy_from(Rect::full(w, h), 0, b_px).unwrap();
    Inputs { a, b, w, h }
}

/// A one-node graph of kernel `name` (`copy` is the bench's floor kernel) over the inputs; outputs
/// allocated at verify, before timing.
pub(crate) fn filter_graph(ctx: &Context, s: &Inputs, name: &str) -> Graph {
    let (w, h) = (s.w, s.h);
    let img = |f| Image::new(ctx, w, h, f).unwrap();
    let kname = if name == "copy" { "bench.copy".to_string() } else { format!("filters.{name}") };
    let k = ctx.kernel_by_name(&kname).unwrap();
    let g = Graph::new(ctx).unwrap();
    let params: Vec<Reference> = match name {
        "sobel3x3" => vec![(&s.a).into(), (&img(ImageFormat::S16)).into(), (&img(ImageFormat::S16)).into()],
        "magnitude" => {
            // Gradients computed once, outside the timed graph.
            let (gx, gy) = (img(ImageFormat::S16), img(ImageFormat::S16));
            let pre = Graph::new(ctx).unwrap();
            pre.add_node(&ctx.kernel_by_name("filters.sobel3x3").unwrap(), [&s.a, &gx, &gy]).unwrap();
            pre.process().unwrap();
            vec![(&gx).into(), (&gy).into(), (&img(ImageFormat::U8)).into()]
        }
        "add" | "subtract" => vec![(&s.a).into(), (&s.b).into(), (&img(ImageFormat::S16)).into()],
        "threshold" => vec![
            (&s.a).into(),
            Scalar::new(ctx, ScalarValue::Uint8(100)).unwrap().into(),
            (&img(ImageFormat::U8)).into(),
        ],
        "threshold_range" => vec![
            (&s.a).into(),
            Scalar::new(ctx, ScalarValue::Uint8(100)).unwrap().into(),
            Scalar::new(ctx, ScalarValue::Uint8(180)).unwrap().into(),
            (&img(ImageFormat::U8)).into(),
        ],
        _ => vec![(&s.a).into(), (&img(ImageFormat::U8)).into()],
    };
    g.add_node(&k, params).unwrap();
    g.verify().unwrap();
    g
}

/// The 4-node edge pipeline (gaussian → sobel → magnitude → threshold) over virtual intermediates.
#[allow(dead_code)] // the performance bench builds it with its output (`pipeline_graph_out`)
pub(crate) fn pipeline_graph(ctx: &Context, s: &Inputs) -> Graph {
    pipeline_graph_out(ctx, s).0
}

/// [`pipeline_graph`] and its output image (U8, `s.w`×`s.h`: 255 where the gradient magnitude of
/// the blurred input is above 100, else 0).
pub(crate) fn pipeline_graph_out(ctx: &Context, s: &Inputs) -> (Graph, Image) {
    let g = Graph::new(ctx).unwrap();
    let v = |f| Image::new_virtual(&g, 0, 0, f).unwrap();
    let (blur, gx, gy, mag) =
        (v(ImageFormat::Virtual), v(ImageFormat::Virtual), v(ImageFormat::Virtual), v(ImageFormat::Virtual));
    let out = Image::new(ctx, s.w, s.h, ImageFormat::U8).unwrap();
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    g.add_node(&k("gaussian3x3"), [&s.a, &blur]).unwrap();
    g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap();
    g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
    let level = Scalar::new(ctx, ScalarValue::Uint8(100)).unwrap();
    g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&level), Reference::from(&out)]).unwrap();
    g.verify().unwrap();
    (g, out)
}

/// `VX_BENCH_SIZES=640x480,1920x1080`, or [`SIZES`].
pub(crate) fn sizes() -> Vec<(u32, u32)> {
    match std::env::var("VX_BENCH_SIZES") {
        Ok(v) => v
            .split(',')
            .filter_map(|s| s.split_once('x'))
            .filter_map(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

/// Where the benches write the input pictures for the OpenCV side: under the workspace's own
/// `target/` (the user's; not a predictable path in a shared temporary directory).
pub(crate) fn input_dir() -> std::path::PathBuf {
    let d = vx_tests::workspace_root().join("target/bench-inputs");
    std::fs::create_dir_all(&d).expect("target/bench-inputs");
    d
}
