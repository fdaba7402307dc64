//! Point operations: gradient magnitude, add, subtract, posterize, threshold, NOT.

use vx_plugin_abi::{InPlace, InPlaceRow, Status, Tile, TileError, TileMut, TilePixel, tiling_kernel};

use crate::avx2::leading;
use crate::simd::multiversion;

multiversion! {
    /// One row of gradient magnitudes.
    fn magnitude_row(a: &[i16], b: &[i16], o: &mut [u8]) {
        for ((o, &x), &z) in o.iter_mut().zip(a).zip(b) {
            *o = mag(x, z);
        }
    }
}

fn io<'a, 'o, A: TilePixel, O: TilePixel>(
    a: &Tile<'a, A>,
    out: &'o mut TileMut<'_, O>,
    y: u32,
) -> Result<(&'a [A], &'o mut [O]), TileError> {
    let missing = || TileError::new(Status::Failure, "row slices are not available");
    Ok((a.row(y as i32).ok_or_else(missing)?, out.row_mut(y).ok_or_else(missing)?))
}

/// Gradient magnitude `sqrt(gx² + gy²)`, rounded and saturated to U8 (OpenCV: `magnitude` on
/// float, then `round` and saturate).
#[tiling_kernel(name = "filters.magnitude", block = 16x1, flexible = magnitude_flexible)]
fn magnitude(gx: &Tile<i16>, gy: &Tile<i16>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    for y in 0..out.height() {
        let b = gy.row(y as i32).ok_or_else(|| TileError::new(Status::Failure, "no rows"))?;
        let (a, o) = io(gx, out, y)?;
        let done = leading!(magnitude_row(a, b, o));
        if done < o.len() {
            magnitude_row(&a[done..], &b[done..], &mut o[done..]);
        }
    }
    Ok(())
}

#[inline(always)]
fn mag(x: i16, y: i16) -> u8 {
    let (x, y) = (x as f32, y as f32);
    // Round half up, saturating (`as` saturates). No ties occur (sqrt of an integer is never k + 0.5),
    // so this equals `round`, and unlike `f32::round` it vectorizes on baseline x86-64.
    ((x * x + y * y).sqrt() + 0.5) as u8
}

fn magnitude_flexible(gx: &Tile<i16>, gy: &Tile<i16>, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, mag(gx.pixel(x, y, 0, 0), gy.pixel(x, y, 0, 0)));
        }
    }
}

/// `a + b` to S16 (OpenCV: `add(a, b, dtype = CV_16S)`).
#[tiling_kernel(name = "filters.add", block = 16x1, flexible = add_flexible)]
fn add(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) -> Result<(), TileError> {
    for y in 0..out.height() {
        let rb = b.row(y as i32).ok_or_else(|| TileError::new(Status::Failure, "no rows"))?;
        let (ra, o) = io(a, out, y)?;
        for ((o, &x), &z) in o.iter_mut().zip(ra).zip(rb) {
            *o = (x as i16).saturating_add(z as i16);
        }
    }
    Ok(())
}

fn add_flexible(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, (a.pixel(x, y, 0, 0) as i16).saturating_add(b.pixel(x, y, 0, 0) as i16));
        }
    }
}

/// `a - b` to S16 (OpenCV: `subtract(a, b, dtype = CV_16S)`).
#[tiling_kernel(name = "filters.subtract", block = 16x1, flexible = subtract_flexible)]
fn subtract(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) -> Result<(), TileError> {
    for y in 0..out.height() {
        let rb = b.row(y as i32).ok_or_else(|| TileError::new(Status::Failure, "no rows"))?;
        let (ra, o) = io(a, out, y)?;
        for ((o, &x), &z) in o.iter_mut().zip(ra).zip(rb) {
            *o = (x as i16).saturating_sub(z as i16);
        }
    }
    Ok(())
}

fn subtract_flexible(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, (a.pixel(x, y, 0, 0) as i16).saturating_sub(b.pixel(x, y, 0, 0) as i16));
        }
    }
}

/// Posterize `(p & 0xF0) | (p >> 4)` (OpenCV: `LUT`).
#[tiling_kernel(name = "filters.posterize", block = 16x1, flexible = posterize_flexible)]
fn posterize(input: &Tile<u8>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    for y in 0..out.height() {
        let (src, o) = io(input, out, y)?;
        for (o, &p) in o.iter_mut().zip(src) {
            *o = (p & 0xF0) | (p >> 4);
        }
    }
    Ok(())
}

fn posterize_flexible(input: &Tile<u8>, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            let p = input.pixel(x, y, 0, 0);
            out.set(x, y, (p & 0xF0) | (p >> 4));
        }
    }
}

/// Binary threshold: 255 above `level`, else 0 (OpenCV: `threshold(THRESH_BINARY, maxval 255)`).
/// Every pixel is rewritten, and the output is a new image: no alias hint.
#[tiling_kernel(name = "filters.threshold", block = 16x1, flexible = threshold_flexible)]
fn threshold(input: &Tile<u8>, level: u8, out: &mut TileMut<u8>) -> Result<(), TileError> {
    for y in 0..out.height() {
        let (src, o) = io(input, out, y)?;
        for (o, &p) in o.iter_mut().zip(src) {
            *o = if p > level { 255 } else { 0 };
        }
    }
    Ok(())
}

fn threshold_flexible(input: &Tile<u8>, level: u8, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, if input.pixel(x, y, 0, 0) > level { 255 } else { 0 });
        }
    }
}

/// Bitwise NOT (OpenCV: `bitwise_not`). Dense: every pixel is rewritten, in place when the
/// runtime aliases input and output (the memory saving is the gain), from input to output when not.
#[tiling_kernel(name = "filters.not", flexible, alias(0, 1, dense))]
fn not(io: &mut InPlace<u8>) {
    for y in 0..io.height() {
        match io.rows(y) {
            Some(InPlaceRow::Same(row)) => not_in_place(row),
            Some(InPlaceRow::Apart(src, dst)) => not_row(src, dst),
            None => {}
        }
    }
}

multiversion! {
    fn not_row(src: &[u8], dst: &mut [u8]) {
        for (o, &p) in dst.iter_mut().zip(src) {
            *o = !p;
        }
    }
}

multiversion! {
    fn not_in_place(row: &mut [u8]) {
        for p in row {
            *p = !*p;
        }
    }
}

/// Truncate: pixels above `level` become `level`, the rest stay (OpenCV: `threshold(THRESH_TRUNC)`).
/// Sparse: when the runtime aliases input and output, only the 32-pixel chunks holding a pixel
/// above `level` are written; otherwise the input row is copied first (the copy aliasing saves).
#[tiling_kernel(name = "filters.truncate", flexible, alias(0, 1, sparse))]
fn truncate(io: &mut InPlace<u8>, level: u8) {
    for y in 0..io.height() {
        if let Some(row) = io.row_mut(y) {
            truncate_row(row, level);
        }
    }
}

multiversion! {
    fn truncate_row(row: &mut [u8], level: u8) {
        for chunk in row.chunks_mut(32) {
            // A max over the chunk (vectorized) decides whether it is written at all.
            if chunk.iter().fold(0u8, |m, &p| m.max(p)) > level {
                for p in chunk {
                    *p = (*p).min(level);
                }
            }
        }
    }
}
