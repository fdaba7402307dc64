//! Edge detection on a real picture with kernels loaded from the `vx_filters` module:
//! `photo → Gaussian 3×3 → Sobel 3×3 (gx, gy) → magnitude → threshold → edges.png`, with a time table
//! (a row per node, and one row for a fused group, whose nodes run as one).
//!
//! ```text
//! cargo build --release -p vx-filters && cargo run --release -p vx-examples --bin pipeline -- [INPUT] [OUTPUT] [THRESHOLD]
//! ```
//!
//! INPUT defaults to the checked-in `examples/data/astronaut.jpg` (NASA, public domain), OUTPUT to
//! `edges.png` next to the executable, THRESHOLD to 100. Modules are searched in `VX_MODULE_PATH` and
//! the executable's directory (where cargo puts `libvx_filters.so`).

use std::path::PathBuf;

use vx::*;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let input = args
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/astronaut.jpg"));
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(|p| p.to_path_buf())).unwrap_or_default();
    let output = args.get(2).map(PathBuf::from).unwrap_or_else(|| exe_dir.join("edges.png"));
    let level: u8 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100);

    let photo = match image::open(&input) {
        Ok(p) => p.to_luma8(),
        Err(e) => {
            eprintln!("cannot read {}: {e}", input.display());
            std::process::exit(2);
        }
    };
    let (w, h) = photo.dimensions();

    let ctx = Context::builder().threads(2).build()?;
    if let Err(e) = ctx.load_module("vx_filters") {
        eprintln!("{e}\n\nBuild the module first: cargo build --release -p vx-filters");
        std::process::exit(2);
    }
    // What loaded: a debug build's kernels run many times slower, which the times below would show.
    if let Some(m) = ctx.module_info("vx_filters") {
        println!("module {} {} from {} ({})", m.name, m.version, m.file.display(), m.build);
        if m.build == ModuleBuild::Debug {
            eprintln!(
                "warning: {} is a debug build: the times are of unoptimized code (cargo build --release)",
                m.name
            );
        }
    }
    let k = |name: &str| ctx.kernel_by_name(&format!("filters.{name}"));

    let graph = Graph::with_name(&ctx, "edges")?;
    let src = Image::new(&ctx, w, h, ImageFormat::U8)?;
    src.copy_from(Rect::full(w, h), 0, photo.as_raw())?;
    let blurred = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let (gx, gy) = (
        Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?,
        Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?,
    );
    let magnitude = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let threshold = Scalar::new(&ctx, ScalarValue::Uint8(level))?;
    let edges = Image::new(&ctx, w, h, ImageFormat::U8)?;
    graph.add_node(&k("gaussian3x3")?, [&src, &blurred])?.set_name("gaussian")?;
    graph.add_node(&k("sobel3x3")?, [&blurred, &gx, &gy])?.set_name("sobel")?;
    graph.add_node(&k("magnitude")?, [&gx, &gy, &magnitude])?.set_name("magnitude")?;
    graph
        .add_node(
            &k("threshold")?,
            [Reference::from(&magnitude), Reference::from(&threshold), Reference::from(&edges)],
        )?
        .set_name("threshold")?;
    graph.verify()?;

    const FRAMES: u32 = 50;
    for _ in 0..FRAMES {
        graph.process()?;
    }

    let out = edges.to_vec::<u8>()?;
    image::GrayImage::from_raw(w, h, out.clone())
        .expect("buffer of w*h pixels")
        .save(&output)
        .map_err(|e| Error::new(ErrorKind::Failure, format!("cannot write {}: {e}", output.display())))?;

    println!("{} ({w}x{h}) -> {}  [threshold {level}, {FRAMES} frames]", input.display(), output.display());
    // One row per unit that runs: the four nodes fuse into one group, which is one row.
    print!("\n{}", graph.perf_table()?);
    let on = out.iter().filter(|&&p| p == 255).count();
    println!("\nedge pixels: {on} of {} ({:.1} %)", out.len(), 100.0 * on as f64 / out.len() as f64);
    Ok(())
}
