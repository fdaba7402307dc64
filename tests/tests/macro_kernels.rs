//! Kernels written with `#[tiling_kernel]`, compiled into this test binary and published in-process
//! (`Context::publish_in_process`, through the same host interface a module uses): the spec's
//! example kernels give the OpenCV golden outputs of the tiling tests; scalars, optional parameters,
//! tile memory and the tile context reach the function; typed kernel memory requests
//! (`scratch(..)`, `persistent(..)`) are allocated in init, reached in process and freed at deinit;
//! pattern arguments get the names `input` / `output`, the generated validator names parameters and
//! views, kernels publish in name order, and a stray `Tile::pixel` names the kernel's line and
//! `nbhd`.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use vx::*;

use vx_plugin_abi::module_abi::{AbiError, Controller, Lifecycle};
use vx_plugin_abi::{
    ImageIn, ImageOut, InPlace, InPlaceRow, Rows, Tile, TileContext, TileMut, target_kernel, tiling_kernel, user_kernel,
};
use vx_tests::workspace_root;

// The spec's example kernels: the very source of the `vx-spec-kernels` module, compiled in here.
#[allow(dead_code)]
mod spec_kernels {
    include!("../../plugins/vx-spec-kernels/src/kernels.rs");
}

/// A flexible-only kernel with a scalar, an optional scalar, tile memory and the tile context.
#[tiling_kernel(name = "macro.threshold", flexible, tile_memory = 2, alias(0, 3, sparse))]
fn threshold(input: &Tile<u8>, level: u8, high: Option<u8>, out: &mut TileMut<u8>, mem: &mut [u8], ctx: TileContext) {
    assert_eq!(mem.len(), 2 * (out.width() * out.height()) as usize, "tile memory = 2 bytes x blocks (1x1)");
    assert!(!ctx.is_parameter_aliased(0, 3));
    let on = high.unwrap_or(255);
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, if input.pixel(x, y, 0, 0) > level { on } else { 0 });
        }
    }
}

/// Writes at every pixel of its tile how many threads shared the run the tile was in
/// (`TileMut::run_threads`), plus its input's pixel (0 in the test): what a kernel choosing its
/// stores by the bytes one thread writes sees.
#[tiling_kernel(name = "macro.run_threads", flexible)]
fn run_threads(input: &Tile<u8>, out: &mut TileMut<u8>) {
    let n = out.run_threads().min(255) as u8;
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, n.wrapping_add(input.pixel(x, y, 0, 0)));
        }
    }
}

/// The same through an in-place view (`InPlace::run_threads`).
#[tiling_kernel(name = "macro.run_threads_in_place", flexible, alias(0, 1, dense))]
fn run_threads_in_place(io: &mut InPlace<u8>) {
    let n = io.run_threads().min(255) as u8;
    for y in 0..io.height() {
        match io.rows(y) {
            Some(InPlaceRow::Same(row)) => row.iter_mut().for_each(|p| *p = p.wrapping_add(n)),
            Some(InPlaceRow::Apart(src, dst)) => dst.iter_mut().zip(src).for_each(|(d, s)| *d = s.wrapping_add(n)),
            None => {}
        }
    }
}

/// Weight of input row `i`, column `j` of a row kernel's lopsided 4×2 neighborhood: all different,
/// so a row or column served from the wrong place changes the sum.
fn weight(i: usize, j: usize) -> u16 {
    1 + j as u16 + 4 * i as u16
}

/// `Σ weight(i, j) · rows[i][x + j]` over a neighborhood of 2 left, 1 right, 1 up (asymmetric on
/// purpose), written once as a row function.
fn weighted_row(rows: [&[u8]; 2], scale: u8, out: &mut [u16]) {
    for (x, o) in out.iter_mut().enumerate() {
        let mut sum = 0u16;
        for (i, row) in rows.iter().enumerate() {
            for j in 0..4 {
                sum += weight(i, j) * row[x + j] as u16;
            }
        }
        *o = sum + scale as u16;
    }
}

/// A row kernel with the replicate rule.
#[tiling_kernel(name = "macro.rows_replicate", nbhd = (-2, 1, -1, 0), border = Replicate)]
fn rows_replicate(rows: Rows<u8, 2>, scale: u8, out: &mut [u16]) {
    weighted_row(rows, scale, out)
}

/// The same with a constant rule.
#[tiling_kernel(name = "macro.rows_constant", nbhd = (-2, 1, -1, 0), border = Constant(7))]
fn rows_constant(rows: Rows<u8, 2>, scale: u8, out: &mut [u16]) {
    weighted_row(rows, scale, out)
}

/// The same with `fusion = false`: it declares nothing for fused execution.
#[tiling_kernel(name = "macro.rows_unfused", nbhd = (-2, 1, -1, 0), border = Replicate, fusion = false)]
fn rows_unfused(rows: Rows<u8, 2>, scale: u8, out: &mut [u16]) {
    weighted_row(rows, scale, out)
}

/// The row kernel of issue 58: its input is a pattern, so it is registered as `input`.
#[tiling_kernel(name = "macro.box3x3", nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn box3x3([a, b, c]: Rows<u8, 3>, out: &mut [u8]) {
    for (x, o) in out.iter_mut().enumerate() {
        let sum: u16 = [a, b, c].iter().map(|r| r[x..x + 3].iter().map(|&p| p as u16).sum::<u16>()).sum();
        *o = (sum / 9) as u8;
    }
}

/// Patterns among the inputs and the outputs: `input1`, `input2`, `out`, `output`.
#[tiling_kernel(name = "macro.patterns", nbhd = (0, 0, -1, 0), border = Replicate)]
fn patterns([above, here]: Rows<u8, 2>, _: u8, out: &mut [u8], _: &mut [u8]) {
    for (x, o) in out.iter_mut().enumerate() {
        *o = above[x].max(here[x]);
    }
}

/// Reads two rows down, one more than its neighborhood declares: `Tile::pixel` panics at the read.
#[tiling_kernel(name = "macro.reads_too_far", nbhd = (-1, 1, -1, 1), border = Undefined)]
fn reads_too_far(input: &Tile<u8>, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, input.pixel(x, y, 0, 2));
        }
    }
}

static INITS: AtomicU32 = AtomicU32::new(0);
static DROPS: AtomicU32 = AtomicU32::new(0);
static FRAMES: AtomicU32 = AtomicU32::new(0);

/// Typed local data of `macro.scale`: created at init, dropped at deinit.
#[derive(Default)]
struct Counter {
    frames: u32,
}

impl Drop for Counter {
    fn drop(&mut self) {
        DROPS.fetch_add(1, SeqCst);
    }
}

fn counter_init(c: &mut Counter) -> Result<(), AbiError> {
    INITS.fetch_add(1, SeqCst);
    c.frames = 1000;
    Ok(())
}

/// A user kernel: images mapped whole, a scalar by value, and typed local data.
#[user_kernel(name = "macro.scale", local = Counter, init = counter_init)]
fn scale(input: &ImageIn<u8>, factor: u8, output: &mut ImageOut<u8>, state: &mut Counter) {
    state.frames += 1;
    FRAMES.store(state.frames, SeqCst);
    for y in 0..input.height() {
        for (o, i) in output.row_mut(y).iter_mut().zip(input.row(y)) {
            *o = i.saturating_mul(factor);
        }
    }
}

/// The input's width, read in init: the scratch row's length.
fn input_width(l: &Lifecycle) -> Result<usize, AbiError> {
    Ok(l.param(0)?.width as usize)
}

/// Kernel memory from the macro: a persistent frame counter (zeroed at init) and two scratch
/// blocks, one sized by the input's width (a function of the node), one by a constant. Each output
/// pixel is the input plus the frame number, built in the scratch row first.
#[user_kernel(name = "macro.frames", persistent(frames = 1), scratch(row = input_width, pad = 2 * 8))]
fn frames(input: &ImageIn<u8>, output: &mut ImageOut<u8>, frames: &mut [u32], row: &mut [u16], pad: &mut [u8]) {
    assert_eq!((frames.len(), row.len(), pad.len()), (1, input.width() as usize, 16));
    frames[0] += 1;
    for y in 0..input.height() {
        for (r, &i) in row.iter_mut().zip(input.row(y)) {
            *r = i as u16 + frames[0] as u16;
        }
        for (o, &r) in output.row_mut(y).iter_mut().zip(row.iter()) {
            *o = r.min(255) as u8;
        }
    }
}

/// Typed local data and kernel memory together: the state counts frames, the persistent block
/// keeps the last input's first pixel.
#[derive(Default)]
struct Seen {
    frames: u32,
}

#[user_kernel(name = "macro.frames_kept", local = Seen, persistent(last = 1))]
fn frames_kept(input: &ImageIn<u8>, output: &mut ImageOut<u8>, last: &mut [u8], state: &mut Seen) {
    state.frames += 1;
    assert!(state.frames <= 3);
    for y in 0..input.height() {
        for (o, &i) in output.row_mut(y).iter_mut().zip(input.row(y)) {
            *o = last[0].wrapping_add(i);
        }
    }
    last[0] = input.row(0)[0];
}

/// A target kernel's state: made by create on the target, changed by control.
#[derive(Default)]
struct MacroGain {
    gain: u8,
    created_on: String,
}

fn gain_create(g: &mut MacroGain) -> Result<(), AbiError> {
    g.gain = 1;
    g.created_on = std::thread::current().name().unwrap_or("").to_owned();
    Ok(())
}

fn gain_control(c: &Controller, g: &mut MacroGain) -> Result<(), AbiError> {
    match c.command() {
        0 if g.created_on.ends_with("mdsp-0") => Ok(()),
        0 => Err(AbiError::new(vx_plugin_abi::Status::Failure, format!("created on '{}'", g.created_on))),
        n => {
            g.gain = n as u8;
            Ok(())
        }
    }
}

/// A target kernel from the macro: implemented on target `mdsp` only, with create and control.
#[target_kernel(name = "macro.gain", target = "mdsp", local = MacroGain, create = gain_create, control = gain_control)]
fn gain(input: &ImageIn<u8>, output: &mut ImageOut<u8>, g: &mut MacroGain) {
    for y in 0..input.height() {
        for (o, &i) in output.row_mut(y).iter_mut().zip(input.row(y)) {
            *o = i.saturating_mul(g.gain);
        }
    }
}

/// A user kernel with optional parameters (the shared signature model): a second input image and
/// an offset, each used only when the node sets it.
#[user_kernel(name = "macro.blend")]
fn blend(a: &ImageIn<u8>, b: Option<&ImageIn<u8>>, offset: Option<u8>, out: &mut ImageOut<u8>) {
    for y in 0..a.height() {
        let other = b.map(|b| b.row(y));
        for (x, (o, &p)) in out.row_mut(y).iter_mut().zip(a.row(y)).enumerate() {
            let mixed = match other {
                Some(r) => ((p as u16 + r[x] as u16) / 2) as u8,
                None => p,
            };
            *o = mixed.saturating_add(offset.unwrap_or(0));
        }
    }
}

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(workspace_root().join("vx-core/tests/golden").join(name)).unwrap()
}

fn u8_image(ctx: &Context, w: u32, h: u32, px: &[u8]) -> Image {
    let img = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    img.copy_from(Rect::full(w, h), 0, px).unwrap();
    img
}

#[test]
fn macro_kernels_publish_in_process_and_match_the_goldens() {
    let ctx = Context::builder().threads(2).build().unwrap();
    let names = ctx.publish_in_process().unwrap();
    assert_eq!(
        names,
        [
            "macro.blend",
            "macro.box3x3",
            "macro.frames",
            "macro.frames_kept",
            "macro.gain",
            "macro.patterns",
            "macro.reads_too_far",
            "macro.rows_constant",
            "macro.rows_replicate",
            "macro.rows_unfused",
            "macro.run_threads",
            "macro.run_threads_in_place",
            "macro.scale",
            "macro.threshold",
            "spec.add",
            "spec.gaussian3x3",
            "spec.posterize"
        ]
    );
    // Published in name order (whatever order the linker left the records in), each taking the
    // next id of a fresh context's pool: the same enumerations in every build.
    let enumerations: Vec<i32> = names.iter().map(|n| ctx.kernel_by_name(n).unwrap().enumeration()).collect();
    assert!(enumerations.windows(2).all(|w| w[1] == w[0] + 1), "{enumerations:x?}");
    check_spec_kernels(&ctx);
}

#[test]
fn pattern_arguments_are_registered_as_input_and_output() {
    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let names = |k: &str| ctx.kernel_by_name(k).unwrap().docs().param_names;
    let some = |n: &[&str]| n.iter().map(|n| Some(n.to_string())).collect::<Vec<_>>();
    assert_eq!(names("macro.box3x3"), some(&["input", "out"]));
    assert_eq!(names("macro.patterns"), some(&["input1", "input2", "out", "output"]));
    assert_eq!(names("macro.run_threads_in_place"), some(&["io (in)", "io (out)"]));
}

#[test]
fn a_wrong_format_names_the_parameter_and_the_kernels_view() {
    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let s16 = Image::new(&ctx, 8, 4, ImageFormat::S16).unwrap();
    let out = Image::new(&ctx, 8, 4, ImageFormat::U8).unwrap();
    g.add_node(&ctx.kernel_by_name("macro.box3x3").unwrap(), [&s16, &out]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat, "{e}");
    assert!(
        e.to_string().contains(
            "(kernel 'macro.box3x3'): parameter 0 (`input`) must be a U8 image (the kernel takes `Rows<u8, 3>`), \
             found S16"
        ),
        "{e}"
    );
}

/// Every `vx::module` event a subscriber gets, as `field=value` pairs.
#[derive(Clone, Default)]
struct ModuleEvents(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ModuleEvents {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={value:?} ", field.name()));
            }
        }
        if event.metadata().target() == "vx::module" {
            let mut f = Fields(String::new());
            event.record(&mut f);
            self.0.lock().unwrap().push(f.0);
        }
    }
}

#[test]
fn a_read_past_the_neighborhood_names_the_kernels_line_and_nbhd_once() {
    use tracing_subscriber::layer::SubscriberExt;
    vx_plugin_abi::expect_panics("reads 2 rows below the tile");
    let events = ModuleEvents::default();
    let _subscriber = tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    // One thread: the tiles, and so the panic's event, are on this thread's subscriber.
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.publish_in_process().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let input = u8_image(&ctx, 16, 8, &[7; 16 * 8]);
    let out = Image::new(&ctx, 16, 8, ImageFormat::U8).unwrap();
    g.add_node(&ctx.kernel_by_name("macro.reads_too_far").unwrap(), [&input, &out]).unwrap();
    let e = g.process().unwrap_err().to_string();

    // The line of the read in this file (`Tile::pixel` is `#[track_caller]`), and the kernel.
    let line = include_str!("macro_kernels.rs")
        .lines()
        .position(|l| l.contains("input.pixel(x, y, 0, 2)") && !l.contains("contains"))
        .unwrap()
        + 1;
    let at = format!("(at {}:{line}:", file!());
    assert!(e.contains(&at), "{at} in {e}");
    assert!(e.contains("kernel 'macro.reads_too_far'"), "{e}");
    assert!(e.contains("reads 2 rows below the tile"), "{e}");
    let nbhd = "the kernel declares `nbhd = (-1, 1, -1, 1)` (left, right, top, bottom); read within it or declare a \
                larger one";
    assert!(e.contains(nbhd), "{e}");
    // Once: neither the message nor its place repeated in the error.
    assert_eq!(e.matches("nbhd = ").count(), 1, "{e}");
    assert_eq!(e.matches(&format!("{}:{line}:", file!())).count(), 1, "{e}");
    // The panic's log line is marked an echo of that error (an `error` field), which `vx` leaves
    // out: the panic is reported once.
    let events = events.0.lock().unwrap();
    let echoes: Vec<&String> = events.iter().filter(|ev| ev.contains("reads 2 rows below")).collect();
    assert!(!echoes.is_empty() && echoes.iter().all(|ev| ev.contains("error=")), "{events:?}");
}

/// Run the spec kernels published in `ctx` on every golden input and compare.
pub fn check_spec_kernels(ctx: &Context) {
    let add = ctx.kernel_by_name("spec.add").unwrap();
    assert_eq!(add.attributes().block_size, TileBlockSize { width: 16, height: 16 });
    assert_eq!(
        ctx.kernel_by_name("spec.gaussian3x3").unwrap().attributes().neighborhood,
        Neighborhood::new(-1, 1, -1, 1)
    );

    for (w, h) in [(37u32, 23u32), (64, 48), (14, 6), (12, 6), (5, 3), (1, 1)] {
        let n = (w * h) as usize;
        let a = u8_image(ctx, w, h, &golden(&format!("input_a_{w}x{h}.u8")));
        let b = u8_image(ctx, w, h, &golden(&format!("input_b_{w}x{h}.u8")));
        let blur = u8_image(ctx, w, h, &vec![0xAB; n]);
        let post = u8_image(ctx, w, h, &vec![0xAB; n]);
        let sum = Image::new(ctx, w, h, ImageFormat::S16).unwrap();
        let g = Graph::new(ctx).unwrap();
        g.add_node(&ctx.kernel_by_name("spec.gaussian3x3").unwrap(), [&a, &blur]).unwrap();
        g.add_node(&add, [&a, &b, &sum]).unwrap();
        g.add_node(&ctx.kernel_by_name("spec.posterize").unwrap(), [&a, &post]).unwrap();
        g.process().unwrap_or_else(|e| panic!("{w}x{h}: {e}"));

        let (want, got) = (golden(&format!("gaussian_{w}x{h}.u8")), blur.to_vec::<u8>().unwrap());
        for y in 0..h {
            for x in 0..w {
                let i = (y * w + x) as usize;
                let interior = x >= 1 && y >= 1 && x + 1 < w && y + 1 < h;
                assert_eq!(got[i], if interior { want[i] } else { 0xAB }, "gaussian {w}x{h} ({x},{y})");
            }
        }
        let want: Vec<i16> =
            golden(&format!("add_{w}x{h}.s16")).chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect();
        assert_eq!(sum.to_vec::<i16>().unwrap(), want, "add {w}x{h}");
        let (want, got) = (golden(&format!("posterize_{w}x{h}.u8")), post.to_vec::<u8>().unwrap());
        for (i, (g, w_)) in got.iter().zip(&want).enumerate() {
            let x = i as u32 % w;
            assert_eq!(*g, if x < w / 4 * 4 { *w_ } else { 0xAB }, "posterize {w}x{h} at {i}");
        }
    }
}

#[test]
fn macro_validators_check_formats_and_sizes() {
    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let thr = ctx.kernel_by_name("macro.threshold").unwrap();
    assert_eq!(thr.alias_hints(), [AliasHint { a: 0, b: 3, kind: AliasKind::Sparse }]);
    let g = Graph::new(&ctx).unwrap();
    // 4 wide: posterize is fast-only with a 4x1 block.
    let a = u8_image(&ctx, 4, 1, &[10, 100, 200, 30]);
    let level = Scalar::new(&ctx, ScalarValue::Uint8(50)).unwrap();
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let out = Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
    g.add_node(&thr, [Some(Reference::from(&a)), Some(Reference::from(&level)), None, Some(Reference::from(&v))])
        .unwrap();
    g.add_node(&ctx.kernel_by_name("spec.posterize").unwrap(), [&v, &out]).unwrap();
    g.process().unwrap();
    assert_eq!(
        (v.format(), v.width(), v.height()),
        (ImageFormat::U8, 4, 1),
        "the generated validator set the output meta"
    );
    assert_eq!(out.to_vec::<u8>().unwrap(), [0, 0xFF, 0xFF, 0]);

    // Wrong input format: the generated validator names the parameter and both formats.
    let g = Graph::new(&ctx).unwrap();
    let s16 = Image::new(&ctx, 4, 1, ImageFormat::S16).unwrap();
    g.add_node(&ctx.kernel_by_name("spec.posterize").unwrap(), [&s16, &out]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert!(
        e.message().contains("parameter 0 (`input`) must be a U8 image (the kernel takes `&Tile<u8>`), found S16"),
        "{e}"
    );

    // Inputs of different sizes.
    let g = Graph::new(&ctx).unwrap();
    let small = u8_image(&ctx, 2, 1, &[1, 2]);
    let sum = Image::new(&ctx, 4, 1, ImageFormat::S16).unwrap();
    g.add_node(&ctx.kernel_by_name("spec.add").unwrap(), [&a, &small, &sum]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidDimension, "{e}");
}

#[test]
fn the_spec_kernels_module_gives_the_same_outputs() {
    let lib = vx_tests::build_module("vx-spec-kernels", &[]);
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(vx_tests::plugin_dir("spec-module", &[("vx_spec_kernels", &lib)]));
    ctx.load_module("vx_spec_kernels").unwrap();
    assert_eq!(ctx.module_kernels("vx_spec_kernels"), ["spec.add", "spec.gaussian3x3", "spec.posterize"]);
    check_spec_kernels(&ctx);
    ctx.unload_module("vx_spec_kernels").unwrap();
    assert!(ctx.kernel_by_name("spec.add").is_err(), "unpublish removed the records' kernels");
}

#[test]
fn a_user_kernel_with_typed_local_data() {
    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let k = ctx.kernel_by_name("macro.scale").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let a = u8_image(&ctx, 3, 2, &[1, 2, 3, 100, 5, 6]);
    let factor = Scalar::new(&ctx, ScalarValue::Uint8(3)).unwrap();
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    g.add_node(&k, [Reference::from(&a), Reference::from(&factor), Reference::from(&v)]).unwrap();
    let out = Image::new(&ctx, 3, 2, ImageFormat::U8).unwrap();
    g.add_node(&k, [Reference::from(&v), Reference::from(&factor), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [9, 18, 27, 255, 45, 54]);
    assert_eq!(INITS.load(SeqCst), 2, "one state per node");
    g.process().unwrap();
    assert_eq!(FRAMES.load(SeqCst), 1002, "the state lives across frames, starting from init's 1000");
    // Re-verification: deinit drops the states, init makes new ones.
    g.verify().unwrap();
    assert_eq!((INITS.load(SeqCst), DROPS.load(SeqCst)), (4, 2));
    drop(g);
    assert_eq!(DROPS.load(SeqCst), 4, "releasing the graph dropped the last states");
    // The generated validator checks the scalar's type.
    let g = Graph::new(&ctx).unwrap();
    let wrong = Scalar::new(&ctx, ScalarValue::Int32(3)).unwrap();
    g.add_node(&k, [Reference::from(&a), Reference::from(&wrong), Reference::from(&out)]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType);
    // Types by name, not by code ("type 0x3, found 0x6").
    assert!(
        e.message().contains(
            "parameter 1 (`factor`) must be a scalar of type U8 (the kernel takes `u8`), found a scalar of type I32"
        ),
        "{e}"
    );
}

#[test]
fn a_user_kernel_with_optional_parameters_runs_with_and_without_them() {
    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let k = ctx.kernel_by_name("macro.blend").unwrap();
    let states: Vec<ParamState> = (0..4).map(|i| k.parameter(i).unwrap().state).collect();
    assert_eq!(states, [ParamState::Required, ParamState::Optional, ParamState::Optional, ParamState::Required]);
    let a = u8_image(&ctx, 3, 1, &[10, 20, 250]);
    let b = u8_image(&ctx, 3, 1, &[30, 40, 50]);
    let offset = Scalar::new(&ctx, ScalarValue::Uint8(10)).unwrap();
    let out = Image::new(&ctx, 3, 1, ImageFormat::U8).unwrap();
    let g = Graph::new(&ctx).unwrap();
    let node = g.add_node(&k, [Some(Reference::from(&a)), None, None, Some(Reference::from(&out))]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [10, 20, 250], "neither optional parameter set");
    node.set_parameter(1, Reference::from(&b)).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [20, 30, 150], "second image set: the mean");
    node.set_parameter(2, Reference::from(&offset)).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [30, 40, 160], "offset set too");
    node.set_parameter(1, None).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [20, 30, 255], "image cleared, offset kept (saturating)");
}

/// Row kernels (`Rows<T, N>` input, border rule declared): every pixel, edges included, equals an
/// independent per-pixel model of the neighborhood sum under the rule, on sizes smaller than the
/// neighborhood, ragged, wider than the SDK's 256-column chunk, and large enough for parallel tiles.
#[test]
fn row_kernels_see_their_border_rule_at_every_edge() {
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.publish_in_process().unwrap();
    let k = ctx.kernel_by_name("macro.rows_replicate").unwrap();
    let attrs = k.attributes();
    assert_eq!(attrs.neighborhood, Neighborhood::new(-2, 1, -1, 0));
    assert_eq!(attrs.border, BorderMode::Self_, "to the runtime, a row kernel handles its own border");
    for (w, h) in [(1u32, 1u32), (2, 3), (5, 4), (37, 23), (600, 9), (1100, 700)] {
        let px: Vec<u8> = (0..w * h).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let input = u8_image(&ctx, w, h, &px);
        for (name, constant) in [("macro.rows_replicate", None), ("macro.rows_constant", Some(7u8))] {
            let out = Image::new(&ctx, w, h, ImageFormat::U16).unwrap();
            let g = Graph::new(&ctx).unwrap();
            let scale = Scalar::new(&ctx, ScalarValue::Uint8(3)).unwrap();
            g.add_node(
                &ctx.kernel_by_name(name).unwrap(),
                [Reference::from(&input), Reference::from(&scale), Reference::from(&out)],
            )
            .unwrap();
            g.process().unwrap_or_else(|e| panic!("{name} {w}x{h}: {e}"));
            let got = out.to_vec::<u16>().unwrap();
            let src = |x: i64, y: i64| -> u16 {
                let inside = (0..w as i64).contains(&x) && (0..h as i64).contains(&y);
                match constant {
                    Some(c) if !inside => c as u16,
                    _ => px[(y.clamp(0, h as i64 - 1) * w as i64 + x.clamp(0, w as i64 - 1)) as usize] as u16,
                }
            };
            for y in 0..h as i64 {
                for x in 0..w as i64 {
                    let mut want = 3u16;
                    for i in 0..2 {
                        for j in 0..4 {
                            want += weight(i, j) * src(x - 2 + j as i64, y - 1 + i as i64);
                        }
                    }
                    assert_eq!(got[(y * w as i64 + x) as usize], want, "{name} {w}x{h} at ({x}, {y})");
                }
            }
        }
    }
}

#[test]
fn a_user_kernel_gets_its_typed_memory_requests() {
    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let k = ctx.kernel_by_name("macro.frames").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let a = u8_image(&ctx, 5, 2, &[0, 1, 2, 3, 254, 10, 11, 12, 13, 14]);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let out = Image::new(&ctx, 5, 2, ImageFormat::U8).unwrap();
    g.add_node(&k, [Reference::from(&a), Reference::from(&v)]).unwrap();
    g.add_node(&k, [Reference::from(&v), Reference::from(&out)]).unwrap();
    for frame in 1..=3u8 {
        g.process().unwrap();
        // Each node adds its own frame count (persistent per node): input + 2 * frame.
        let want: Vec<u8> = [0u8, 1, 2, 3, 254, 10, 11, 12, 13, 14]
            .iter()
            .map(|&p| (p as u16 + 2 * frame as u16).min(255) as u8)
            .collect();
        assert_eq!(out.to_vec::<u8>().unwrap(), want, "frame {frame}");
    }
    let use_ = g.kernel_memory().unwrap();
    for n in &use_.nodes {
        // One u32 counter; a row of 5 u16 then 16 bytes, each block aligned in the node's layout.
        assert_eq!(n.persistent_bytes, 4, "{n:?}");
        assert!(n.scratch_bytes >= 10 + 16, "{n:?}");
    }
    assert_eq!(use_.scratch_arena_bytes, use_.nodes[0].scratch_bytes, "both nodes share one arena size");
    assert_eq!(ctx.resource_stat("max_persistent_bytes").unwrap().used, 8);
    // Re-verification: deinit freed the counters, init made zeroed ones.
    g.verify().unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap()[0], 2);
    drop(g);
    assert_eq!(ctx.resource_stat("max_persistent_bytes").unwrap().used, 0);
    assert!(ctx.memory_leaks().is_empty(), "the generated deinit freed every block: {:?}", ctx.memory_leaks());

    let kept = ctx.kernel_by_name("macro.frames_kept").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let out = Image::new(&ctx, 5, 2, ImageFormat::U8).unwrap();
    g.add_node(&kept, [Reference::from(&a), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [0, 1, 2, 3, 254, 10, 11, 12, 13, 14]);
    a.copy_from(Rect::full(5, 2), 0, &[7u8, 1, 2, 3, 4, 5, 6, 7, 8, 9]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [7, 1, 2, 3, 4, 5, 6, 7, 8, 9], "last frame's first pixel was 0");
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [14, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    drop(g);
    assert!(ctx.memory_leaks().is_empty());
    assert_eq!(ctx.resource_stat("max_persistent_bytes").unwrap().used, 0);
}

#[test]
fn a_target_kernel_from_the_macro_runs_on_its_target_and_takes_commands() {
    let ctx = Context::builder().target(TargetConfig::new("mdsp")).build().unwrap();
    ctx.publish_in_process().unwrap();
    let k = ctx.kernel_by_name("macro.gain").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let a = u8_image(&ctx, 3, 1, &[1, 2, 100]);
    let out = Image::new(&ctx, 3, 1, ImageFormat::U8).unwrap();
    let n = g.add_node(&k, [&a, &out]).unwrap();
    g.process().unwrap();
    assert_eq!(n.target().unwrap(), "mdsp");
    assert_eq!(out.to_vec::<u8>().unwrap(), [1, 2, 100]);
    n.send_command(0, &[], std::time::Duration::from_secs(10)).expect("create ran on the target");
    n.send_command(3, &[], std::time::Duration::from_secs(10)).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [3, 6, 255]);
    // The host target has no implementation of it.
    assert_eq!(n.set_target(HOST_TARGET).unwrap_err().kind(), ErrorKind::NotSupported);
}

/// The row entries `#[tiling_kernel]` generates for in-process row kernels (a scalar parameter, a
/// lopsided neighborhood, the replicate and constant rules), called with the whole image in a row
/// table (rows in reverse order in memory), equal the nodes run unfused; `fusion = false` declares
/// nothing, a tile kernel only bounded views.
#[test]
fn row_entries_of_in_process_row_kernels_equal_their_nodes() {
    use std::ffi::c_void;
    use vx_plugin_abi::module_abi::{RowSinkDesc, RowSourceDesc};
    use vx_plugin_abi::{RowArgs, RowRegion, TileParam, TileParamKind};

    let ctx = Context::new().unwrap();
    ctx.publish_in_process().unwrap();
    let support = |name: &str| ctx.kernel_by_name(name).unwrap().fusion_support();
    let rows = |fill| Some(FusionSupport { fill: Some(fill), rows_n: 2, bounded: true });
    assert_eq!(support("macro.rows_replicate"), rows(RowFill::Replicate));
    assert_eq!(support("macro.rows_constant"), rows(RowFill::Constant));
    assert_eq!(support("macro.rows_unfused"), None);
    assert_eq!(support("macro.threshold"), Some(FusionSupport { fill: None, rows_n: 0, bounded: true }));
    for (w, h) in [(1u32, 1u32), (7, 1), (1, 6), (37, 5)] {
        let px: Vec<u8> = (0..w * h).map(|i| (i.wrapping_mul(2654435761) >> 11) as u8).collect();
        let reversed: Vec<u8> = px.chunks(w as usize).rev().flatten().copied().collect();
        let table: Vec<*const u8> =
            (0..h as usize).map(|y| reversed[(h as usize - 1 - y) * w as usize..].as_ptr()).collect();
        for name in ["macro.rows_replicate", "macro.rows_constant"] {
            let k = ctx.kernel_by_name(name).unwrap();
            let out = Image::new(&ctx, w, h, ImageFormat::U16).unwrap();
            let g = Graph::new(&ctx).unwrap();
            let scale = Scalar::new(&ctx, ScalarValue::Uint8(3)).unwrap();
            let input = u8_image(&ctx, w, h, &px);
            g.add_node(&k, [Reference::from(&input), Reference::from(&scale), Reference::from(&out)]).unwrap();
            g.process().unwrap();

            let mut got = vec![0u16; (w * h) as usize];
            let sink_rows: Vec<*mut u8> =
                (0..h as usize).map(|y| got[y * w as usize..].as_mut_ptr().cast::<u8>()).collect();
            let source = RowSourceDesc { first_row: 0, rows: table.as_ptr(), len: h, format: ImageFormat::U8.fourcc() };
            let sink = RowSinkDesc { rows: sink_rows.as_ptr(), format: ImageFormat::U16.fourcc() };
            let scale = 3u8;
            let params = [
                TileParam {
                    kind: TileParamKind::InputRows,
                    type_code: ImageFormat::U8.fourcc(),
                    ptr: &source as *const RowSourceDesc as *mut c_void,
                },
                TileParam {
                    kind: TileParamKind::Scalar,
                    type_code: vx_plugin_abi::wire::scalar_type::UINT8,
                    ptr: &scale as *const u8 as *mut c_void,
                },
                TileParam {
                    kind: TileParamKind::OutputRows,
                    type_code: ImageFormat::U16.fourcc(),
                    ptr: &sink as *const RowSinkDesc as *mut c_void,
                },
            ];
            let region = RowRegion { y0: 0, count: h, x0: 0, x1: w, image_width: w, image_height: h };
            // SAFETY: the table holds every image row (`w` u8 pixels of `reversed`, not written);
            // the sink `h` rows of `w` u16 pixels of `got`, nothing else's; the scalar is a u8; all
            // outlive the call.
            let args = unsafe { RowArgs::new(&params, region) };
            k.__call_rows(&args).unwrap_or_else(|e| panic!("{name} {w}x{h}: {e}"));
            assert_eq!(got, out.to_vec::<u16>().unwrap(), "{name} {w}x{h}: row entry vs unfused node");
        }
    }
}

/// A kernel learns from its tile descriptors how many threads share the run (the flags' bits 8–15,
/// `TILE_RUN_THREADS_SHIFT`): the crew's threads when the run's tiles are shared, 1 when the
/// calling thread runs them alone, one node or a fused group alike.
#[test]
fn a_kernel_sees_how_many_threads_share_its_run() {
    let (w, h) = (512u32, 512u32);
    let always = TilingPolicy { split_by_cost: false, min_parallel_pixels: 0, ..TilingPolicy::default() };
    let never = TilingPolicy { min_parallel_pixels: usize::MAX, ..TilingPolicy::default() };
    for (threads, policy, fusion, want) in [
        (2, always, false, 2u8),
        (3, always, false, 3),
        (2, never, false, 1),
        (1, always, false, 1),
        (2, always, true, 2),
        (2, never, true, 1),
    ] {
        let ctx = Context::builder().threads(threads).tiling_policy(policy).fusion(fusion).build().unwrap();
        ctx.publish_in_process().unwrap();
        let k = ctx.kernel_by_name("macro.run_threads").unwrap();
        let g = Graph::new(&ctx).unwrap();
        let input = u8_image(&ctx, w, h, &vec![0; (w * h) as usize]);
        let mid = Image::new_virtual(&g, w, h, ImageFormat::U8).unwrap();
        let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        // Two nodes, so that with fusion on they run as one fused group (the first writes a line
        // buffer): the output's pixels are the second's count plus the first's.
        g.add_node(&k, [&input, &mid]).unwrap();
        g.add_node(&k, [&mid, &out]).unwrap();
        g.process().unwrap();
        assert_eq!(g.fusion_report().unwrap().groups.len(), usize::from(fusion), "{threads} threads, fusion {fusion}");
        let px = out.to_vec::<u8>().unwrap();
        assert!(
            px.iter().all(|&p| p == 2 * want),
            "{threads} threads, {policy:?}, fusion {fusion}: want {} everywhere, found {:?}",
            2 * want,
            px.iter().copied().collect::<std::collections::BTreeSet<u8>>()
        );
    }
    // Through an in-place view (not fused: a dense in-place kernel is no fusion member).
    for (policy, want) in [(always, 2u8), (never, 1)] {
        let ctx = Context::builder().threads(2).tiling_policy(policy).build().unwrap();
        ctx.publish_in_process().unwrap();
        let g = Graph::new(&ctx).unwrap();
        let input = u8_image(&ctx, w, h, &vec![0; (w * h) as usize]);
        let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        g.add_node(&ctx.kernel_by_name("macro.run_threads_in_place").unwrap(), [&input, &out]).unwrap();
        g.process().unwrap();
        assert!(out.to_vec::<u8>().unwrap().iter().all(|&p| p == want), "in place, {policy:?}");
    }
    // Two nodes in one parallel level: the crew runs the level, each node's tiles on the thread
    // that took the node — alone, and told so.
    let ctx = Context::builder().threads(2).tiling_policy(always).fusion(false).build().unwrap();
    ctx.publish_in_process().unwrap();
    let k = ctx.kernel_by_name("macro.run_threads").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let input = u8_image(&ctx, w, h, &vec![0; (w * h) as usize]);
    let outs = [(); 2].map(|()| Image::new(&ctx, w, h, ImageFormat::U8).unwrap());
    for out in &outs {
        g.add_node(&k, [&input, out]).unwrap();
    }
    g.process().unwrap();
    for out in &outs {
        assert!(out.to_vec::<u8>().unwrap().iter().all(|&p| p == 1), "a node of a parallel level");
    }
}
