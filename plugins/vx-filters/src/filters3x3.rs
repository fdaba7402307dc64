//! 3×3 neighborhood filters: Gaussian, box, Sobel.

use vx_plugin_abi::{BorderFill, Status, Tile, TileError, TileMut, tiling_kernel};

use crate::simd::multiversion;

multiversion! {
    /// One output row of the Gaussian from three input rows extending one pixel left and right.
    fn gaussian_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) {
        let n = o.len();
        let (a, b, c) = (&a[..n + 2], &b[..n + 2], &c[..n + 2]);
        let col = |x: usize| a[x] as u16 + 2 * b[x] as u16 + c[x] as u16;
        for (x, o) in o.iter_mut().enumerate() {
            *o = ((col(x) + 2 * col(x + 1) + col(x + 2) + 8) >> 4) as u8;
        }
    }
}

multiversion! {
    /// One output row of the box mean.
    fn box_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) {
        let n = o.len();
        let (a, b, c) = (&a[..n + 2], &b[..n + 2], &c[..n + 2]);
        let col = |x: usize| a[x] as u16 + b[x] as u16 + c[x] as u16;
        for (x, o) in o.iter_mut().enumerate() {
            *o = div9_rounded(col(x) + col(x + 1) + col(x + 2));
        }
    }
}

multiversion! {
    /// One output row of both Sobel derivatives.
    fn sobel_row(a: &[u8], b: &[u8], c: &[u8], ox: &mut [i16], oy: &mut [i16]) {
        let n = ox.len();
        let (a, b, c, oy) = (&a[..n + 2], &b[..n + 2], &c[..n + 2], &mut oy[..n]);
        let col = |x: usize| a[x] as i16 + 2 * b[x] as i16 + c[x] as i16;
        for (x, o) in ox.iter_mut().enumerate() {
            *o = col(x + 2) - col(x);
        }
        let row = |r: &[u8], x: usize| r[x] as i16 + 2 * r[x + 1] as i16 + r[x + 2] as i16;
        for (x, o) in oy.iter_mut().enumerate() {
            *o = row(c, x) - row(a, x);
        }
    }
}

fn out_row<'o, T: vx_plugin_abi::TilePixel>(o: &'o mut TileMut<'_, T>, y: u32) -> Result<&'o mut [T], TileError> {
    o.row_mut(y).ok_or_else(|| TileError::new(Status::Failure, "output rows are not available (aliased?)"))
}

/// OpenCV's default border for its filters.
const BORDER: BorderFill<u8> = BorderFill::Reflect101;

/// Gaussian 3×3 (1 2 1 / 2 4 2 / 1 2 1) / 16, rounded: OpenCV's `GaussianBlur(ksize = 3, sigma = 0)`.
/// One function for every tile: interior rows straight from the image, edge rows extended by the
/// SDK (`Tile::with_rows`), the same vectorized row code on both.
#[tiling_kernel(name = "filters.gaussian3x3", nbhd = (-1, 1, -1, 1), border = Self_, flexible)]
fn gaussian(input: &Tile<u8>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let mut failed = None;
    input.for_rows::<3>(BORDER, |y, x, n, [a, b, c]| match out_row(out, y) {
        Ok(o) => gaussian_row(a, b, c, &mut o[x as usize..(x + n) as usize]),
        Err(e) => failed = Some(e),
    })?;
    failed.map_or(Ok(()), Err)
}

/// Box 3×3 mean, rounded: OpenCV's `blur(ksize = (3, 3))`.
#[tiling_kernel(name = "filters.box3x3", nbhd = (-1, 1, -1, 1), border = Self_, flexible)]
fn box3x3(input: &Tile<u8>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let mut failed = None;
    input.for_rows::<3>(BORDER, |y, x, n, [a, b, c]| match out_row(out, y) {
        Ok(o) => box_row(a, b, c, &mut o[x as usize..(x + n) as usize]),
        Err(e) => failed = Some(e),
    })?;
    failed.map_or(Ok(()), Err)
}

/// `round(sum / 9)` for a sum of nine u8 values, as a 16-bit multiply-high (vectorizes to
/// `pmulhuw`; exact for every possible sum, see the test).
#[inline(always)]
fn div9_rounded(sum: u16) -> u8 {
    (((sum + 4) as u32 * 7282) >> 16) as u8
}

/// Sobel 3×3: x and y derivatives to S16, OpenCV's `Sobel(ddepth = CV_16S, ksize = 3)`.
#[tiling_kernel(name = "filters.sobel3x3", nbhd = (-1, 1, -1, 1), border = Self_, flexible)]
fn sobel(input: &Tile<u8>, gx: &mut TileMut<i16>, gy: &mut TileMut<i16>) -> Result<(), TileError> {
    let mut failed = None;
    input.for_rows::<3>(BORDER, |y, x, n, [a, b, c]| match (out_row(gx, y), out_row(gy, y)) {
        (Ok(ox), Ok(oy)) => {
            let r = x as usize..(x + n) as usize;
            sobel_row(a, b, c, &mut ox[r.clone()], &mut oy[r])
        }
        (Err(e), _) | (_, Err(e)) => failed = Some(e),
    })?;
    failed.map_or(Ok(()), Err)
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
