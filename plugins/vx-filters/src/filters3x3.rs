//! 3×3 neighborhood filters: Gaussian, box, Sobel.

use vx_plugin_abi::{Rows, tiling_kernel};

use crate::avx2::leading;
use crate::avx512::widest;
use crate::simd::{Level, level, multiversion};

/// Output columns per pass of the portable row functions (the edge columns and rows' ragged ends
/// when the AVX2 loops ran; everything on other CPUs): the column sums of a chunk in a stack
/// buffer small enough that clearing it per call costs nothing.
const CHUNK: usize = 64;

/// The portable separable 3×3 row loop shared by the Gaussian and the box: vertical sums
/// `a + k·b + c` of a chunk into a stack buffer, then `finish(left, middle, right)` of three sums.
#[inline(always)]
fn separable(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8], k: u16, finish: impl Fn(u16, u16, u16) -> u8) {
    let mut v = [0u16; CHUNK + 2];
    for (i, o) in o.chunks_mut(CHUNK).enumerate() {
        let (m, x0) = (o.len(), i * CHUNK);
        let (a, b, c, v) = (&a[x0..x0 + m + 2], &b[x0..x0 + m + 2], &c[x0..x0 + m + 2], &mut v[..m + 2]);
        for (((v, &a), &b), &c) in v.iter_mut().zip(a).zip(b).zip(c) {
            *v = a as u16 + k * b as u16 + c as u16;
        }
        let (l, mid, r) = (&v[..m], &v[1..m + 1], &v[2..m + 2]);
        for (((o, &l), &mid), &r) in o.iter_mut().zip(l).zip(mid).zip(r) {
            *o = finish(l, mid, r);
        }
    }
}

multiversion! {
    /// One output row of the Gaussian from three input rows extending one pixel left and right:
    /// vertical `1 2 1`, then horizontal `1 2 1`, rounded.
    fn gaussian_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) {
        separable(a, b, c, o, 2, |l, mid, r| ((l + 2 * mid + r + 8) >> 4) as u8)
    }
}

multiversion! {
    /// One output row of the box mean: vertical sums, then horizontal sums of three.
    fn box_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) {
        separable(a, b, c, o, 1, |l, mid, r| div9_rounded(l + mid + r))
    }
}

multiversion! {
    /// One output row of both Sobel derivatives, sharing one vertical pass: `s = a + 2b + c`
    /// (smoothing for `gx`) and `d = c - a` (derivative for `gy`), then `gx = s[x+2] - s[x]`,
    /// `gy = d[x] + 2 d[x+1] + d[x+2]`.
    fn sobel_row(a: &[u8], b: &[u8], c: &[u8], ox: &mut [i16], oy: &mut [i16]) {
        let mut s = [0i16; CHUNK + 2];
        let mut d = [0i16; CHUNK + 2];
        for (k, (ox, oy)) in ox.chunks_mut(CHUNK).zip(oy.chunks_mut(CHUNK)).enumerate() {
            let (m, x0) = (ox.len(), k * CHUNK);
            let (a, b, c) = (&a[x0..x0 + m + 2], &b[x0..x0 + m + 2], &c[x0..x0 + m + 2]);
            let (s, d) = (&mut s[..m + 2], &mut d[..m + 2]);
            for ((((s, d), &a), &b), &c) in s.iter_mut().zip(d.iter_mut()).zip(a).zip(b).zip(c) {
                *s = a as i16 + 2 * b as i16 + c as i16;
                *d = c as i16 - a as i16;
            }
            for ((o, &l), &r) in ox.iter_mut().zip(&s[..m]).zip(&s[2..m + 2]) {
                *o = r - l;
            }
            let (l, mid, r) = (&d[..m], &d[1..m + 1], &d[2..m + 2]);
            for (((o, &l), &mid), &r) in oy[..m].iter_mut().zip(l).zip(mid).zip(r) {
                *o = l + 2 * mid + r;
            }
        }
    }
}

/// Gaussian 3×3 (1 2 1 / 2 4 2 / 1 2 1) / 16, rounded: OpenCV's `GaussianBlur(ksize = 3, sigma = 0)`.
/// A row kernel: the SDK hands it the three input rows of each output row, straight from the image
/// inside it and extended by OpenCV's default border (reflect-101) at its edges, so the same
/// vectorized row code runs everywhere.
#[tiling_kernel(name = "filters.gaussian3x3", nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn gaussian([a, b, c]: Rows<u8, 3>, out: &mut [u8]) {
    gaussian_at(level(), a, b, c, out)
}

/// One Gaussian output row at level `l`: the AVX-512 loop for the leading blocks (AVX-512), the
/// AVX2 loop for the next (AVX2 and above), the portable row function (compiled for `l`) for the
/// rest.
pub(crate) fn gaussian_at(l: Level, a: &[u8], b: &[u8], c: &[u8], out: &mut [u8]) {
    let wide = widest!(l, gaussian_row(a, b, c, out));
    let done = wide + leading!(l, gaussian_row(&a[wide..], &b[wide..], &c[wide..], &mut out[wide..]));
    if done < out.len() {
        gaussian_row::at(l, &a[done..], &b[done..], &c[done..], &mut out[done..])
    }
}

/// Box 3×3 mean, rounded: OpenCV's `blur(ksize = (3, 3))`.
#[tiling_kernel(name = "filters.box3x3", nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn box3x3([a, b, c]: Rows<u8, 3>, out: &mut [u8]) {
    box_at(level(), a, b, c, out)
}

/// One box output row at level `l` (as [`gaussian_at`]).
pub(crate) fn box_at(l: Level, a: &[u8], b: &[u8], c: &[u8], out: &mut [u8]) {
    let wide = widest!(l, box_row(a, b, c, out));
    let done = wide + leading!(l, box_row(&a[wide..], &b[wide..], &c[wide..], &mut out[wide..]));
    if done < out.len() {
        box_row::at(l, &a[done..], &b[done..], &c[done..], &mut out[done..])
    }
}

/// `round(sum / 9)` for a sum of nine u8 values, as a 16-bit multiply-high (vectorizes to
/// `pmulhuw`; exact for every possible sum, see the test).
#[inline(always)]
fn div9_rounded(sum: u16) -> u8 {
    (((sum + 4) as u32 * 7282) >> 16) as u8
}

/// Sobel 3×3: x and y derivatives to S16, OpenCV's `Sobel(ddepth = CV_16S, ksize = 3)`.
#[tiling_kernel(name = "filters.sobel3x3", nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn sobel([a, b, c]: Rows<u8, 3>, gx: &mut [i16], gy: &mut [i16]) {
    sobel_at(level(), a, b, c, gx, gy)
}

/// One Sobel output row (both derivatives) at level `l` (as [`gaussian_at`]).
pub(crate) fn sobel_at(l: Level, a: &[u8], b: &[u8], c: &[u8], gx: &mut [i16], gy: &mut [i16]) {
    // AVX2 at most: an AVX-512 Sobel (32 columns per step, two S16 outputs) measured slower at
    // 1080p and 4K on one thread (0.6-0.95x OpenCV against 1.05-1.24x), whichever the store width.
    let done = leading!(l, sobel_row(a, b, c, gx, gy));
    if done < gx.len() {
        sobel_row::at(l, &a[done..], &b[done..], &c[done..], &mut gx[done..], &mut gy[done..])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn div9_is_exact_for_every_sum_of_nine_bytes() {
        for sum in 0..=9 * 255u16 {
            assert_eq!(super::div9_rounded(sum) as u16, (sum + 4) / 9, "sum {sum}");
        }
    }
}
