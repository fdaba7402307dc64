//! The showcase benchmark: `cargo bench -p vx-tests --bench showcase` (a table, not criterion).
//!
//! - every vx_filters kernel through a one-node graph on 3840×2160 at 1 and 2 threads, next to
//!   OpenCV's equivalent call on the same images (driven by `benches/opencv_bench.py`; skipped with a
//!   note if Python/OpenCV are missing), ratio = OpenCV time / vx time (> 1: vx is faster);
//! - the 4-node edge pipeline end to end;
//! - framework overhead: a one-node graph on 64×64, graph process time minus the node's own time;
//! - module call overhead: the same kernel in-process versus loaded from a module;
//! - load + publish of the vx_filters module, and unload.
//!
//! Timings are medians of interleaved rounds of a few frames; the machine is shared and noisy.

#[allow(dead_code)]
mod spec_kernels {
    include!("../../plugins/vx-spec-kernels/src/kernels.rs");
}

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use vx_core::*;
use vx_tests::{build_module_profile, plugin_dir, workspace_root};

const W: u32 = 3840;
const H: u32 = 2160;
const ROUNDS: usize = 15;
const FRAMES: u32 = 3;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_graph(g: &Graph) -> Duration {
    g.process().expect("warm-up");
    let mut v = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for _ in 0..FRAMES {
            g.process().expect("process");
        }
        v.push(t.elapsed() / FRAMES);
    }
    median(v)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn pixels(seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..W as usize * H as usize)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Smooth structure plus noise, like a picture.
            let (px, py) = ((i % W as usize) as f32, (i / W as usize) as f32);
            let base = 128.0 + 90.0 * (px / 37.0).sin() * (py / 23.0).cos();
            (base as i32 + ((x >> 59) as i32 - 16)).clamp(0, 255) as u8
        })
        .collect()
}

fn opencv(a: &Path, b: &Path, threads: usize) -> Option<String> {
    let script = workspace_root().join("tests/benches/opencv_bench.py");
    let out = Command::new("python3")
        .arg(script)
        .args([a.as_os_str(), b.as_os_str()])
        .args([W.to_string(), H.to_string(), threads.to_string(), (ROUNDS * 2).to_string()])
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn json_seconds(json: &str, key: &str) -> Option<Duration> {
    let at = json.find(&format!("\"{key}\": "))? + key.len() + 4;
    let end = json[at..].find([',', '}'])? + at;
    json[at..end].trim().parse::<f64>().ok().map(Duration::from_secs_f64)
}

struct Setup {
    ctx: Context,
    a: Image,
    b: Image,
}

fn setup(threads: usize, dir: &Path, a_px: &[u8], b_px: &[u8]) -> Setup {
    let ctx = Context::builder().threads(threads).build().unwrap();
    ctx.add_module_dir(dir);
    ctx.load_module("vx_filters").unwrap();
    let a = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    a.copy_from(Rect::full(W, H), 0, a_px).unwrap();
    let b = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    b.copy_from(Rect::full(W, H), 0, b_px).unwrap();
    Setup { ctx, a, b }
}

/// A one-node graph of filter `name` over the setup's images.
fn filter_graph(s: &Setup, name: &str) -> Graph {
    let ctx = &s.ctx;
    let img = |f| Image::new(ctx, W, H, f).unwrap();
    let k = ctx.kernel_by_name(&format!("filters.{name}")).unwrap();
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
        _ => vec![(&s.a).into(), (&img(ImageFormat::U8)).into()],
    };
    g.add_node(&k, params).unwrap();
    g.verify().unwrap();
    g
}

fn main() {
    eprintln!("building the modules (release)…");
    let filters = build_module_profile("vx-filters", &[], true);
    let spec = build_module_profile("vx-spec-kernels", &[], true);
    let dir = plugin_dir("showcase-bench", &[("vx_filters", &filters), ("vx_spec_kernels", &spec)]);
    let (a_px, b_px) = (pixels(1), pixels(2));
    let tmp = std::env::temp_dir();
    let (a_raw, b_raw) = (tmp.join("vx-bench-a.u8"), tmp.join("vx-bench-b.u8"));
    std::fs::write(&a_raw, &a_px).unwrap();
    std::fs::write(&b_raw, &b_px).unwrap();

    let names = ["gaussian3x3", "box3x3", "sobel3x3", "magnitude", "add", "subtract", "posterize", "threshold", "not"];
    let setups = [setup(1, &dir, &a_px, &b_px), setup(2, &dir, &a_px, &b_px)];
    let cv = [opencv(&a_raw, &b_raw, 1), opencv(&a_raw, &b_raw, 2)];
    let cv_version = cv[0]
        .as_deref()
        .and_then(|j| j.split("\"opencv_version\": \"").nth(1))
        .and_then(|s| s.split('"').next())
        .unwrap_or("n/a");
    println!(
        "vx_filters vs OpenCV {cv_version} on {W}x{H} U8 (median ms/frame; ratio = OpenCV / vx, > 1 means vx is faster)"
    );
    println!(
        "{:<12} {:>9} {:>9} {:>7}   {:>9} {:>9} {:>7}",
        "kernel", "vx 1t", "cv 1t", "ratio", "vx 2t", "cv 2t", "ratio"
    );
    for name in names {
        let vx: Vec<Duration> = setups.iter().map(|s| time_graph(&filter_graph(s, name))).collect();
        let cell = |i: usize| match cv[i].as_deref().and_then(|j| json_seconds(j, name)) {
            Some(c) => format!("{:>9.2} {:>6.2}x", ms(c), c.as_secs_f64() / vx[i].as_secs_f64()),
            None => format!("{:>9} {:>7}", "n/a", "-"),
        };
        println!("{name:<12} {:>9.2} {}   {:>9.2} {}", ms(vx[0]), cell(0), ms(vx[1]), cell(1));
    }
    if cv[0].is_none() {
        println!("(OpenCV columns skipped: `python3 tests/benches/opencv_bench.py` needs opencv-python-headless)");
    }

    // The 4-node pipeline end to end.
    for s in &setups {
        let ctx = &s.ctx;
        let g = Graph::new(ctx).unwrap();
        let v = |f| Image::new_virtual(&g, 0, 0, f).unwrap();
        let (blur, gx, gy, mag) =
            (v(ImageFormat::Virtual), v(ImageFormat::Virtual), v(ImageFormat::Virtual), v(ImageFormat::Virtual));
        let out = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
        let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
        g.add_node(&k("gaussian3x3"), [&s.a, &blur]).unwrap();
        g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap();
        g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
        let level = Scalar::new(ctx, ScalarValue::Uint8(100)).unwrap();
        g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&level), Reference::from(&out)]).unwrap();
        println!(
            "pipeline (gaussian → sobel → magnitude → threshold), {} thread(s): {:.2} ms/frame",
            ctx.threads(),
            ms(time_graph(&g))
        );
    }

    // Framework overhead: a one-node graph on 64×64, process time minus the node's own time.
    {
        let ctx = &setups[1].ctx;
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
            let a = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
            a.copy_from(Rect::full(W, H), 0, &a_px).unwrap();
            let o = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
            let g = Graph::new(ctx).unwrap();
            g.add_node(&ctx.kernel_by_name("spec.gaussian3x3").unwrap(), [&a, &o]).unwrap();
            time_graph(&g)
        };
        let (mut ins, mut mods) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            ins.push(time(&in_process));
            mods.push(time(&from_module));
        }
        let (i, m) = (median(ins), median(mods));
        println!(
            "module call overhead (spec.gaussian3x3, {W}x{H}, 1 thread): in-process {:.2} ms, module {:.2} ms, {:+.1} %",
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
        println!(
            "vx_filters (9 kernels): load + publish {:.2} ms, unload {:.2} ms (medians of 20)",
            ms(median(loads)),
            ms(median(unloads))
        );
    }
}
