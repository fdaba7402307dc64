//! The row entries of `vx_filters`' row kernels (issue 34 step 2, `docs/design/fusion.md` §6.1),
//! loaded for real and called through the module ABI (`Kernel::__call_rows`): on a random image
//! whose rows are held in a shuffled row table — each call's table holding only the rows its
//! windows reach —, every output pixel equals the same node run unfused through a graph, at every
//! SIMD level; a row missing from the table is an error, not a read of something else.

use std::ffi::c_void;

use vx::*;
use vx_plugin_abi::module_abi::{RowSinkDesc, RowSourceDesc};
use vx_plugin_abi::{RowArgs, RowRegion, TileParam, TileParamKind};
use vx_tests::{build_module, plugin_dir};

/// 1×1, one row, one column, and widths around 16, 32 and 1024 (the SIMD widths and a row chunk).
const SIZES: [(u32, u32); 12] =
    [(1, 1), (23, 1), (1, 19), (2, 2), (15, 5), (16, 4), (17, 6), (31, 3), (32, 7), (33, 5), (1023, 3), (1025, 4)];

fn ctx() -> Context {
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.add_module_dir(plugin_dir("fusion_rows", &[("vx_filters", &build_module("vx-filters", &[]))]));
    ctx.load_module("vx_filters").unwrap();
    ctx
}

/// xorshift64*: the test's own random numbers (no dependency), seeded per size.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// An image's rows, each in its own slot of one buffer, slots in a shuffled order.
struct Shuffled {
    width: usize,
    buffer: Vec<u8>,
    /// Image row `y` is at `buffer[slot[y] * pitch ..]`.
    slot: Vec<usize>,
    pitch: usize,
}

impl Shuffled {
    fn new(pixels: &[u8], width: usize, height: usize, rng: &mut Rng) -> Shuffled {
        let pitch = width + 7;
        let mut slot: Vec<usize> = (0..height).collect();
        for i in (1..height).rev() {
            slot.swap(i, rng.below(i + 1));
        }
        let mut buffer = vec![0xA5u8; pitch * height];
        for (y, &s) in slot.iter().enumerate() {
            buffer[s * pitch..s * pitch + width].copy_from_slice(&pixels[y * width..(y + 1) * width]);
        }
        Shuffled { width, buffer, slot, pitch }
    }

    /// The table of image rows `first .. first + len` (null outside the image and for `hole`).
    fn table(&self, first: i64, len: usize, hole: Option<i64>) -> Vec<*const u8> {
        (first..first + len as i64)
            .map(|y| match usize::try_from(y).ok().filter(|&y| y < self.slot.len()) {
                Some(_) if Some(y) == hole => std::ptr::null(),
                Some(y) => self.buffer[self.slot[y] * self.pitch..][..self.width].as_ptr(),
                None => std::ptr::null(),
            })
            .collect()
    }
}

/// What a kernel's outputs hold: `u8` or `i16` planes, whole images.
enum Plane {
    U8(Vec<u8>),
    S16(Vec<i16>),
}

impl Plane {
    fn new(format: ImageFormat, n: usize) -> Plane {
        // A sentinel: columns a call does not cover must keep it.
        if format == ImageFormat::U8 { Plane::U8(vec![0x5A; n]) } else { Plane::S16(vec![0x5A5A; n]) }
    }
    fn row_ptrs(&mut self, width: usize, rows: std::ops::Range<usize>) -> Vec<*mut u8> {
        match self {
            Plane::U8(v) => rows.map(|y| v[y * width..].as_mut_ptr()).collect(),
            Plane::S16(v) => rows.map(|y| v[y * width..].as_mut_ptr().cast::<u8>()).collect(),
        }
    }
    fn as_i32(&self) -> Vec<i32> {
        match self {
            Plane::U8(v) => v.iter().map(|&p| p as i32).collect(),
            Plane::S16(v) => v.iter().map(|&p| p as i32).collect(),
        }
    }
}

/// Run `kernel`'s row entry over rows `y0 .. y0 + count`, columns `x0 .. x1` of `input`, writing
/// into `outputs`; the table holds only rows `y0 - 1 .. y0 + count + 1` (minus `hole`).
fn call_rows(
    kernel: &Kernel,
    input: &Shuffled,
    outputs: &mut [(ImageFormat, Plane)],
    region: RowRegion,
    hole: Option<i64>,
) -> Result<(), vx_plugin_abi::TileError> {
    let width = region.image_width as usize;
    let first = region.y0 as i64 - 1;
    let table = input.table(first, region.count as usize + 2, hole);
    let source = RowSourceDesc {
        first_row: first,
        rows: table.as_ptr(),
        len: table.len() as u32,
        format: ImageFormat::U8.fourcc(),
    };
    let rows = region.y0 as usize..(region.y0 + region.count) as usize;
    let sink_rows: Vec<Vec<*mut u8>> = outputs.iter_mut().map(|(_, p)| p.row_ptrs(width, rows.clone())).collect();
    let sinks: Vec<RowSinkDesc> = outputs
        .iter()
        .zip(&sink_rows)
        .map(|((f, _), r)| RowSinkDesc { rows: r.as_ptr(), format: f.fourcc() })
        .collect();
    let mut params = vec![TileParam {
        kind: TileParamKind::InputRows,
        type_code: ImageFormat::U8.fourcc(),
        ptr: &source as *const RowSourceDesc as *mut c_void,
    }];
    for ((f, _), s) in outputs.iter().zip(&sinks) {
        params.push(TileParam {
            kind: TileParamKind::OutputRows,
            type_code: f.fourcc(),
            ptr: s as *const RowSinkDesc as *mut c_void,
        });
    }
    // SAFETY: the input entry points to `source`, whose table holds null or a row of `width` u8
    // pixels of `input.buffer`, which nobody writes during the call; each output entry points to a
    // sink of `region.count` rows of `width` pixels of its format (aligned: rows of a Vec of that
    // pixel type), rows of distinct planes, none overlapping another or the input; all outlive the
    // call.
    let args = unsafe { RowArgs::new(&params, region) };
    kernel.__call_rows(&args)
}

/// The node run unfused through a graph: its outputs, whole images.
fn unfused(ctx: &Context, kernel: &Kernel, pixels: &[u8], w: u32, h: u32, formats: &[ImageFormat]) -> Vec<Vec<i32>> {
    let input = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    input.copy_from(Rect::full(w, h), 0, pixels).unwrap();
    let outs: Vec<Image> = formats.iter().map(|&f| Image::new(ctx, w, h, f).unwrap()).collect();
    let g = Graph::new(ctx).unwrap();
    let refs: Vec<Reference> = std::iter::once(&input).chain(&outs).map(Reference::from).collect();
    g.add_node(kernel, refs).unwrap();
    g.process().unwrap();
    outs.iter()
        .zip(formats)
        .map(|(o, f)| match *f {
            ImageFormat::U8 => o.to_vec::<u8>().unwrap().into_iter().map(i32::from).collect(),
            _ => o.to_vec::<i16>().unwrap().into_iter().map(i32::from).collect(),
        })
        .collect()
}

fn check_kernel(ctx: &Context, name: &str, formats: &[ImageFormat]) {
    let kernel = ctx.kernel_by_name(name).unwrap();
    assert_eq!(
        kernel.fusion_support(),
        Some(FusionSupport { fill: Some(RowFill::Reflect101), rows_n: 3, bounded: true }),
        "{name}"
    );
    for (seed, (w, h)) in SIZES.into_iter().enumerate() {
        let (wu, hu) = (w as usize, h as usize);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (seed as u64 + 1));
        let pixels: Vec<u8> = (0..wu * hu).map(|_| rng.next() as u8).collect();
        let expected = unfused(ctx, &kernel, &pixels, w, h, formats);
        let input = Shuffled::new(&pixels, wu, hu, &mut rng);
        let planes = || -> Vec<(ImageFormat, Plane)> { formats.iter().map(|&f| (f, Plane::new(f, wu * hu))).collect() };
        let region = |y0, count, x0, x1| RowRegion { y0, count, x0, x1, image_width: w, image_height: h };

        // Bands of random heights, full width: every pixel.
        let mut outputs = planes();
        let mut y0 = 0;
        while y0 < h {
            let count = (1 + rng.below(4) as u32).min(h - y0);
            call_rows(&kernel, &input, &mut outputs, region(y0, count, 0, w), None)
                .unwrap_or_else(|e| panic!("{name} {w}x{h} rows {y0}+{count}: {e}"));
            y0 += count;
        }
        for ((_, got), want) in outputs.iter().zip(&expected) {
            assert_eq!(&got.as_i32(), want, "{name} {w}x{h}: row entry vs unfused node");
        }

        // One call over the whole image, then a column range: only its columns are written.
        let mut outputs = planes();
        call_rows(&kernel, &input, &mut outputs, region(0, h, 0, w), None).unwrap();
        for ((_, got), want) in outputs.iter().zip(&expected) {
            assert_eq!(&got.as_i32(), want, "{name} {w}x{h}: one call");
        }
        let (x0, x1) = (w / 3, (2 * w / 3 + 1).min(w));
        let mut outputs = planes();
        call_rows(&kernel, &input, &mut outputs, region(0, h, x0, x1), None).unwrap();
        for ((f, got), want) in outputs.iter().zip(&expected) {
            let (sentinel, got) = (Plane::new(*f, 1).as_i32()[0], got.as_i32());
            for y in 0..hu {
                for x in 0..wu {
                    let i = y * wu + x;
                    let want = if (x0 as usize..x1 as usize).contains(&x) { want[i] } else { sentinel };
                    assert_eq!(got[i], want, "{name} {w}x{h} columns {x0}..{x1}: pixel ({x}, {y})");
                }
            }
        }

        // A window row missing from the table: the call fails, saying which row.
        if h >= 2 {
            let mut outputs = planes();
            let e = call_rows(&kernel, &input, &mut outputs, region(0, h, 0, w), Some(1)).unwrap_err();
            assert!(e.message.contains("image row 1 is not in the row table"), "{name} {w}x{h}: {e}");
        }
    }
}

#[test]
fn row_entries_equal_the_unfused_nodes() {
    let ctx = ctx();
    check_kernel(&ctx, "filters.gaussian3x3", &[ImageFormat::U8]);
    check_kernel(&ctx, "filters.box3x3", &[ImageFormat::U8]);
    check_kernel(&ctx, "filters.sobel3x3", &[ImageFormat::S16, ImageFormat::S16]);
}

/// What the other kernels declare: views bounded, no row entry (`__call_rows` refuses).
#[test]
fn kernels_without_rows_declare_bounded_views() {
    let ctx = ctx();
    for name in ["filters.magnitude", "filters.add", "filters.not", "filters.threshold"] {
        let k = ctx.kernel_by_name(name).unwrap();
        assert_eq!(k.fusion_support(), Some(FusionSupport { fill: None, rows_n: 0, bounded: true }), "{name}");
        let region = RowRegion { y0: 0, count: 0, x0: 0, x1: 0, image_width: 1, image_height: 1 };
        // SAFETY: no parameters: nothing is read.
        let args = unsafe { RowArgs::new(&[], region) };
        assert!(k.__call_rows(&args).unwrap_err().message.contains("no row entry"), "{name}");
    }
}

/// The row-entry test again at every SIMD level this CPU runs, forced with `VX_FILTERS_SIMD` (the
/// module reads it once per process: each level in a child process running this binary).
#[test]
fn row_entries_hold_at_every_forced_simd_level() {
    vx_tests::at_every_forced_simd_level(&["row_entries_equal_the_unfused_nodes"]);
}
