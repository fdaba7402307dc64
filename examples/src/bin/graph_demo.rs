//! The vx-rs demo: a user-kernel graph on a synthetic image.
//!
//! Registers three user kernels (a 3×3 box blur, a horizontal gradient, a threshold), builds
//! `source → blur → gradient → threshold → edges` with virtual intermediates, verifies it, processes
//! it a few times, and prints a per-node time table, the resource report, and an ASCII preview.
//!
//! Run with `cargo run -p vx-examples --bin graph_demo --release`.

use std::time::Duration;

use vx::*;

const W: u32 = 640;
const H: u32 = 480;

fn image_kernel(
    ctx: &Context,
    name: &str,
    out_format: ImageFormat,
    process: impl Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync + 'static,
) -> Result<Kernel> {
    let k = ctx
        .user_kernel(name, ctx.allocate_user_kernel_id()?, 2)
        .validate(move |v, metas| {
            let input = v.image(0)?;
            metas.get(1)?.set_image(out_format, input.width(), input.height())?;
            Ok(())
        })
        .process(process)
        .add()?;
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required)?;
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required)?;
    k.finalize()?;
    Ok(k)
}

fn box3x3(p: &mut ProcessContext<'_>) -> Result<()> {
    let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
    let (w, h) = (i.width() as usize, i.height());
    for y in 0..h {
        let rows = [i.row(y.saturating_sub(1)), i.row(y), i.row((y + 1).min(h - 1))];
        let out = o.row_mut(y);
        for x in 0..w {
            let (l, r) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let sum: u32 = rows.iter().map(|row| row[l] as u32 + row[x] as u32 + row[r] as u32).sum();
            out[x] = (sum / 9) as u8;
        }
    }
    Ok(())
}

fn gradient_x(p: &mut ProcessContext<'_>) -> Result<()> {
    let (i, mut o) = p.map_pair::<u8, i16>(0, 1)?;
    let w = i.width() as usize;
    for y in 0..i.height() {
        let (row, out) = (i.row(y), o.row_mut(y));
        for x in 0..w {
            out[x] = row[(x + 1).min(w - 1)] as i16 - row[x.saturating_sub(1)] as i16;
        }
    }
    Ok(())
}

fn threshold(p: &mut ProcessContext<'_>) -> Result<()> {
    let (i, mut o) = p.map_pair::<i16, u8>(0, 1)?;
    for y in 0..i.height() {
        for (o, g) in o.row_mut(y).iter_mut().zip(i.row(y)) {
            *o = if g.unsigned_abs() > 24 { 255 } else { 0 };
        }
    }
    Ok(())
}

fn fmt_us(d: Duration) -> String {
    format!("{:>9.1} µs", d.as_secs_f64() * 1e6)
}

fn main() -> Result<()> {
    let ctx = Context::builder().threads(2).build()?;
    let blur = image_kernel(&ctx, "demo.box3x3", ImageFormat::U8, box3x3)?;
    let grad = image_kernel(&ctx, "demo.gradient_x", ImageFormat::S16, gradient_x)?;
    let thresh = image_kernel(&ctx, "demo.threshold", ImageFormat::U8, threshold)?;

    // A synthetic picture: concentric rings.
    let source = Image::new(&ctx, W, H, ImageFormat::U8)?;
    source.set_name("source");
    let pixels: Vec<u8> = (0..H)
        .flat_map(|y| (0..W).map(move |x| (x, y)))
        .map(|(x, y)| {
            let (dx, dy) = (x as f32 - W as f32 / 2.0, y as f32 - H as f32 / 2.0);
            if (((dx * dx + dy * dy).sqrt() / 40.0) as u32).is_multiple_of(2) { 200 } else { 40 }
        })
        .collect();
    source.copy_from(Rect::full(W, H), 0, &pixels)?;

    let graph = Graph::with_name(&ctx, "edges")?;
    let blurred = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let gradient = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual)?;
    let edges = Image::new(&ctx, W, H, ImageFormat::U8)?;
    graph.add_node(&blur, [&source, &blurred])?.set_name("blur")?;
    graph.add_node(&grad, [&blurred, &gradient])?.set_name("gradient")?;
    graph.add_node(&thresh, [&gradient, &edges])?.set_name("threshold")?;

    graph.verify()?;
    println!(
        "verified graph '{}': {} nodes; gradient is {} {}x{}",
        graph.name(),
        graph.num_nodes()?,
        gradient.format(),
        gradient.width(),
        gradient.height()
    );
    const FRAMES: u32 = 20;
    for _ in 0..FRAMES {
        graph.process()?;
    }

    println!("\n{:<12} {:<18} {:>12} {:>12} {:>12}", "node", "kernel", "avg", "min", "max");
    for (node, kernel, perf) in graph.node_perf()? {
        println!("{node:<12} {kernel:<18} {} {} {}", fmt_us(perf.avg()), fmt_us(perf.min), fmt_us(perf.max));
    }
    let gp = graph.perf()?;
    println!(
        "{:<12} {:<18} {} {} {}   ({} frames of {W}x{H})",
        "graph",
        "",
        fmt_us(gp.avg()),
        fmt_us(gp.min),
        fmt_us(gp.max),
        gp.num
    );

    println!("\nresources:\n{}", ctx.resource_report());

    let out = edges.to_vec::<u8>()?;
    let on = out.iter().filter(|&&p| p == 255).count();
    println!("edge pixels: {on} of {} ({:.1} %)", out.len(), 100.0 * on as f64 / out.len() as f64);
    println!("preview (every 8th column, 24th row; # = edge):");
    for y in (0..H).step_by(24) {
        let line: String =
            (0..W).step_by(8).map(|x| if out[(y * W + x) as usize] == 255 { '#' } else { '.' }).collect();
        println!("  {line}");
    }
    Ok(())
}
