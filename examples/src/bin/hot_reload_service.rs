//! A long-running service that keeps processing frames while its kernel module is rebuilt.
//!
//! It loads the `vx_sample` module, builds `frame → sample.posterize → sample.threshold → mask`,
//! processes a moving test pattern a few dozen times per second and prints, once per second, the
//! frame count, the module's state and a checksum of the output. A watcher on the module's directory
//! reloads the module whenever its file is rebuilt; the graph picks up the new code at its next frame.
//!
//! ```text
//! cargo build -p vx-sample
//! cargo run -p vx-examples --bin hot_reload_service -- [MODULE_DIR] [SECONDS]
//! # meanwhile, in another terminal: change LEVELS in plugins/vx-sample/src/lib.rs, then
//! cargo build -p vx-sample
//! ```
//!
//! `MODULE_DIR` defaults to the directory of this executable (where cargo also puts
//! `libvx_sample.so`); `SECONDS` defaults to 30.

use std::time::{Duration, Instant};

use vx::*;

const W: u32 = 320;
const H: u32 = 240;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.to_path_buf())))
        .expect("a module directory");
    let seconds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(30);

    let ctx = Context::builder().threads(2).build()?;
    ctx.add_module_dir(&dir);
    if let Err(e) = ctx.load_module("vx_sample") {
        eprintln!("{e}\n\nBuild the module first: cargo build -p vx-sample");
        std::process::exit(2);
    }
    let options = WatchOptions { load_new: false, ..WatchOptions::default() };
    let _watcher = ModuleWatcher::start(&ctx, &dir, options, |e| match &e.result {
        Ok(()) => println!(">> module '{}' reloaded", e.module),
        Err(err) => println!(">> module '{}' not reloaded (the running version keeps serving): {err}", e.module),
    })?;

    let graph = Graph::with_name(&ctx, "service")?;
    let frame = Image::new(&ctx, W, H, ImageFormat::U8)?;
    let posterized = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let level = Scalar::new(&ctx, ScalarValue::Uint8(100))?;
    let mask = Image::new(&ctx, W, H, ImageFormat::U8)?;
    graph.add_node(&ctx.kernel_by_name("sample.posterize")?, [&frame, &posterized])?;
    graph.add_node(
        &ctx.kernel_by_name("sample.threshold")?,
        [Reference::from(&posterized), Reference::from(&level), Reference::from(&mask)],
    )?;
    println!("serving {W}x{H} frames from module dir {} for {seconds} s", dir.display());

    let start = Instant::now();
    let mut pixels = vec![0u8; (W * H) as usize];
    let (mut frames, mut last_report) = (0u64, Instant::now());
    while start.elapsed() < Duration::from_secs(seconds) {
        let t = frames as u32;
        for (i, p) in pixels.iter_mut().enumerate() {
            let (x, y) = (i as u32 % W, i as u32 / W);
            *p = (x + y + t) as u8;
        }
        frame.copy_from(Rect::full(W, H), 0, &pixels)?;
        graph.process()?;
        frames += 1;
        if last_report.elapsed() >= Duration::from_secs(1) {
            let out = mask.to_vec::<u8>()?;
            let checksum = out.iter().fold(0u32, |h, &p| h.rotate_left(5) ^ p as u32);
            let state = ctx.module_state("vx_sample").map(|s| s.to_string()).unwrap_or_default();
            println!(
                "t={:>3}s frames={frames:>5} node rebinds={} module: {state}; mask checksum {checksum:08x}",
                start.elapsed().as_secs(),
                graph.reloads()?
            );
            last_report = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
