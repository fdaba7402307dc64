//! The point operations' row functions, each at a given [`Level`]: the hand-written x86-64 loop of
//! that level (`x86.rs`) for the leading whole registers, then the portable loop (compiled for the
//! same level by `multiversion!`) for the rest — the whole row at `Portable` and off x86-64. `nt`:
//! non-temporal stores for the output (x86-64 levels; ignored by the portable loops).

use crate::simd::{Level, dispatch, multiversion};

/// Gradient magnitude of one pixel: `sqrt(x² + y²)` rounded half up, saturated to u8.
#[inline(always)]
pub(crate) fn mag(x: i16, y: i16) -> u8 {
    let (x, y) = (x as f32, y as f32);
    // Round half up, saturating (`as` saturates). No ties occur below 255.5 (sqrt of an integer
    // below 65281 is never within f32 rounding of k + 0.5), so this equals `round`, and unlike
    // `f32::round` it vectorizes on baseline x86-64. The squares and their sum are exact in f32
    // whenever the result does not saturate.
    ((x * x + y * y).sqrt() + 0.5) as u8
}

multiversion! {
    fn threshold_portable(src: &[u8], level: u8, dst: &mut [u8]) {
        for (o, &p) in dst.iter_mut().zip(src) {
            *o = if p > level { 255 } else { 0 };
        }
    }
}

multiversion! {
    fn range_portable(src: &[u8], lower: u8, upper: u8, dst: &mut [u8]) {
        for (o, &p) in dst.iter_mut().zip(src) {
            *o = if lower <= p && p <= upper { 255 } else { 0 };
        }
    }
}

multiversion! {
    fn not_portable(src: &[u8], dst: &mut [u8]) {
        for (o, &p) in dst.iter_mut().zip(src) {
            *o = !p;
        }
    }
}

multiversion! {
    fn not_in_place_portable(row: &mut [u8]) {
        for p in row {
            *p = !*p;
        }
    }
}

multiversion! {
    fn posterize_portable(src: &[u8], dst: &mut [u8]) {
        for (o, &p) in dst.iter_mut().zip(src) {
            *o = (p & 0xF0) | (p >> 4);
        }
    }
}

multiversion! {
    fn truncate_portable(row: &mut [u8], level: u8) {
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

multiversion! {
    fn add_portable(a: &[u8], b: &[u8], o: &mut [i16]) {
        for ((o, &x), &z) in o.iter_mut().zip(a).zip(b) {
            *o = x as i16 + z as i16;
        }
    }
}

multiversion! {
    fn subtract_portable(a: &[u8], b: &[u8], o: &mut [i16]) {
        for ((o, &x), &z) in o.iter_mut().zip(a).zip(b) {
            *o = x as i16 - z as i16;
        }
    }
}

multiversion! {
    fn magnitude_portable(gx: &[i16], gy: &[i16], o: &mut [u8]) {
        for ((o, &x), &z) in o.iter_mut().zip(gx).zip(gy) {
            *o = mag(x, z);
        }
    }
}

/// Binary threshold: 255 where `src > level`, else 0, over `min(src, dst)` pixels.
pub(crate) fn threshold(l: Level, src: &[u8], level: u8, dst: &mut [u8], nt: bool) {
    let n = src.len().min(dst.len());
    let done = dispatch!(l, threshold(&src[..n], level, &mut dst[..n], nt));
    if done < n {
        threshold_portable::at(l, &src[done..n], level, &mut dst[done..n]);
    }
}

/// Range threshold: 255 where `lower <= src <= upper`, else 0.
pub(crate) fn threshold_range(l: Level, src: &[u8], lower: u8, upper: u8, dst: &mut [u8], nt: bool) {
    let n = src.len().min(dst.len());
    let done = dispatch!(l, threshold_range(&src[..n], lower, upper, &mut dst[..n], nt));
    if done < n {
        range_portable::at(l, &src[done..n], lower, upper, &mut dst[done..n]);
    }
}

/// Bitwise NOT from `src` to `dst`.
pub(crate) fn not(l: Level, src: &[u8], dst: &mut [u8], nt: bool) {
    let n = src.len().min(dst.len());
    let done = dispatch!(l, not(&src[..n], &mut dst[..n], nt));
    if done < n {
        not_portable::at(l, &src[done..n], &mut dst[done..n]);
    }
}

/// Bitwise NOT in place.
pub(crate) fn not_in_place(l: Level, row: &mut [u8]) {
    let n = row.len();
    let done = dispatch!(l, not_in_place(row));
    if done < n {
        not_in_place_portable::at(l, &mut row[done..]);
    }
}

/// Posterize `(p & 0xF0) | (p >> 4)`.
pub(crate) fn posterize(l: Level, src: &[u8], dst: &mut [u8], nt: bool) {
    let n = src.len().min(dst.len());
    let done = dispatch!(l, posterize(&src[..n], &mut dst[..n], nt));
    if done < n {
        posterize_portable::at(l, &src[done..n], &mut dst[done..n]);
    }
}

/// Truncate in place: pixels above `level` become `level`; only the chunks (one register, or 32
/// pixels in the portable loop) holding a pixel above `level` are written.
pub(crate) fn truncate(l: Level, row: &mut [u8], level: u8) {
    let n = row.len();
    let done = dispatch!(l, truncate(row, level));
    if done < n {
        truncate_portable::at(l, &mut row[done..], level);
    }
}

/// `a + b` to S16 (never saturates).
pub(crate) fn add(l: Level, a: &[u8], b: &[u8], o: &mut [i16], nt: bool) {
    let n = a.len().min(b.len()).min(o.len());
    let done = dispatch!(l, add(&a[..n], &b[..n], &mut o[..n], nt));
    if done < n {
        add_portable::at(l, &a[done..n], &b[done..n], &mut o[done..n]);
    }
}

/// `a - b` to S16 (never saturates).
pub(crate) fn subtract(l: Level, a: &[u8], b: &[u8], o: &mut [i16], nt: bool) {
    let n = a.len().min(b.len()).min(o.len());
    let done = dispatch!(l, subtract(&a[..n], &b[..n], &mut o[..n], nt));
    if done < n {
        subtract_portable::at(l, &a[done..n], &b[done..n], &mut o[done..n]);
    }
}

/// Gradient magnitude, as [`mag`] per pixel.
pub(crate) fn magnitude(l: Level, gx: &[i16], gy: &[i16], o: &mut [u8], nt: bool) {
    let n = gx.len().min(gy.len()).min(o.len());
    let done = dispatch!(l, magnitude(&gx[..n], &gy[..n], &mut o[..n], nt));
    if done < n {
        magnitude_portable::at(l, &gx[done..n], &gy[done..n], &mut o[done..n]);
    }
}
