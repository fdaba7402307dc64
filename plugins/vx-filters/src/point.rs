//! Point operations: gradient magnitude, add, subtract, posterize, threshold (binary and range),
//! NOT, truncate. Each is a flexible-only kernel of 1×1 blocks, so the runtime hands it full-width
//! bands of rows and it runs one row function (`rows.rs`, SIMD at the dispatched level) over the
//! whole band when the images' rows are adjacent in memory (`Tile::as_slice`: no row padding), else
//! one per row.

use vx_plugin_abi::{InPlace, InPlaceRow, Status, Tile, TileError, TileMut, TilePixel, tiling_kernel};

use crate::rows;
use crate::simd::{level, stream_stores};

fn missing() -> TileError {
    TileError::new(Status::Failure, "row slices are not available")
}

/// `f` over the tile: once over all of it when both images' rows are adjacent, else row by row.
fn unary<I: TilePixel, O: TilePixel>(
    input: &Tile<I>,
    out: &mut TileMut<O>,
    mut f: impl FnMut(&[I], &mut [O]),
) -> Result<(), TileError> {
    if let (Some(src), Some(dst)) = (input.as_slice(), out.as_mut_slice()) {
        f(src, dst);
        return Ok(());
    }
    for y in 0..out.height() {
        let src = input.row(y as i32).ok_or_else(missing)?;
        f(src, out.row_mut(y).ok_or_else(missing)?);
    }
    Ok(())
}

/// [`unary`] with two inputs.
fn binary<A: TilePixel, B: TilePixel, O: TilePixel>(
    a: &Tile<A>,
    b: &Tile<B>,
    out: &mut TileMut<O>,
    mut f: impl FnMut(&[A], &[B], &mut [O]),
) -> Result<(), TileError> {
    if let (Some(ra), Some(rb), Some(dst)) = (a.as_slice(), b.as_slice(), out.as_mut_slice()) {
        f(ra, rb, dst);
        return Ok(());
    }
    for y in 0..out.height() {
        let (ra, rb) = (a.row(y as i32).ok_or_else(missing)?, b.row(y as i32).ok_or_else(missing)?);
        f(ra, rb, out.row_mut(y).ok_or_else(missing)?);
    }
    Ok(())
}

/// Whether a node whose images take `bytes_per_pixel` bytes per pixel over `out`'s image writes
/// `out` with non-temporal stores (see [`stream_stores`]): by the bytes one thread of the run
/// touches (`run_threads`: each writes its own bands). Measured on the AMD VM of `stream_stores`
/// (two vCPUs, usually on two dies of the host): a 4K point operation shared by two threads ran in
/// 190–270 µs with plain stores and 360–420 µs streaming (`VX_BENCH_ONLY=split` of the showcase
/// bench, `VX_FILTERS_NT=always` against the default, alternating), while alone it still gains
/// from streaming. Never into a fused group's line buffer: its rows are read back at once, from
/// the cache.
fn nt<O: TilePixel>(out: &TileMut<'_, O>, bytes_per_pixel: usize) -> bool {
    streams_output(out.is_line_buffer(), out.image_width(), out.image_height(), bytes_per_pixel, out.run_threads())
}

/// [`nt`]'s rule from the view's facts (an in-place view gives the same ones).
fn streams_output(line_buffer: bool, width: u32, height: u32, bytes_per_pixel: usize, threads: u32) -> bool {
    !line_buffer && stream_stores(per_thread_bytes(width, height, bytes_per_pixel, threads))
}

/// The bytes of a node's images that one of the run's `threads` threads touches.
pub(crate) fn per_thread_bytes(width: u32, height: u32, bytes_per_pixel: usize, threads: u32) -> usize {
    width as usize * height as usize * bytes_per_pixel / threads.max(1) as usize
}

/// Gradient magnitude `sqrt(gx² + gy²)`, rounded and saturated to U8 (OpenCV: `magnitude` on
/// float, then `round` and saturate).
#[tiling_kernel(name = "filters.magnitude", flexible)]
fn magnitude(gx: &Tile<i16>, gy: &Tile<i16>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let (l, nt) = (level(), nt(out, 5));
    binary(gx, gy, out, |a, b, o| rows::magnitude(l, a, b, o, nt))
}

/// `a + b` to S16 (OpenCV: `add(a, b, dtype = CV_16S)`).
#[tiling_kernel(name = "filters.add", flexible)]
fn add(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) -> Result<(), TileError> {
    let (l, nt) = (level(), nt(out, 4));
    binary(a, b, out, |a, b, o| rows::add(l, a, b, o, nt))
}

/// `a - b` to S16 (OpenCV: `subtract(a, b, dtype = CV_16S)`).
#[tiling_kernel(name = "filters.subtract", flexible)]
fn subtract(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) -> Result<(), TileError> {
    let (l, nt) = (level(), nt(out, 4));
    binary(a, b, out, |a, b, o| rows::subtract(l, a, b, o, nt))
}

/// Posterize `(p & 0xF0) | (p >> 4)` (OpenCV: `LUT`).
#[tiling_kernel(name = "filters.posterize", flexible)]
fn posterize(input: &Tile<u8>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let (l, nt) = (level(), nt(out, 2));
    unary(input, out, |i, o| rows::posterize(l, i, o, nt))
}

/// Binary threshold (OpenVX `VX_THRESHOLD_TYPE_BINARY`): 255 where `input > level`, else 0
/// (OpenCV: `threshold(THRESH_BINARY, maxval 255)`). Every pixel is rewritten, and the output is a
/// new image: no alias hint.
#[tiling_kernel(name = "filters.threshold", flexible)]
fn threshold(input: &Tile<u8>, level: u8, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let (l, nt) = (crate::simd::level(), nt(out, 2));
    unary(input, out, |i, o| rows::threshold(l, i, level, o, nt))
}

/// Range threshold (OpenVX `VX_THRESHOLD_TYPE_RANGE`): 255 where `lower <= input <= upper`, else
/// 0 (OpenCV: `inRange(input, lower, upper)`); `lower > upper` gives all 0.
#[tiling_kernel(name = "filters.threshold_range", flexible)]
fn threshold_range(input: &Tile<u8>, lower: u8, upper: u8, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let (l, nt) = (level(), nt(out, 2));
    unary(input, out, |i, o| rows::threshold_range(l, i, lower, upper, o, nt))
}

/// Bitwise NOT (OpenCV: `bitwise_not`). Dense: every pixel is rewritten, in place when the
/// runtime aliases input and output (the memory saving is the gain), from input to output when not
/// (then with streaming stores by the size rule of `stream_stores`; in place, a line is read before
/// it is written, so they would gain nothing).
#[tiling_kernel(name = "filters.not", flexible, alias(0, 1, dense))]
fn not(io: &mut InPlace<u8>) {
    let nt = streams_output(io.is_line_buffer(), io.image_width(), io.image_height(), 2, io.run_threads());
    let l = level();
    match io.as_slices() {
        Some(InPlaceRow::Same(all)) => return rows::not_in_place(l, all),
        Some(InPlaceRow::Apart(src, dst)) => return rows::not(l, src, dst, nt),
        None => {}
    }
    for y in 0..io.height() {
        match io.rows(y) {
            Some(InPlaceRow::Same(row)) => rows::not_in_place(l, row),
            Some(InPlaceRow::Apart(src, dst)) => rows::not(l, src, dst, nt),
            None => {}
        }
    }
}

/// Truncate: pixels above `level` become `level`, the rest stay (OpenCV: `threshold(THRESH_TRUNC)`).
/// Sparse: when the runtime aliases input and output, only the chunks (one SIMD register) holding
/// a pixel above `level` are written; otherwise the input row is copied first (the copy aliasing
/// saves).
#[tiling_kernel(name = "filters.truncate", flexible, alias(0, 1, sparse))]
fn truncate(io: &mut InPlace<u8>, level: u8) {
    let l = crate::simd::level();
    for y in 0..io.height() {
        if let Some(row) = io.row_mut(y) {
            rows::truncate(l, row, level);
        }
    }
}
