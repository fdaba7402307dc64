// The tiling extension's example kernels, written with `#[tiling_kernel]`. Shared verbatim by the
// module (`lib.rs`) and the in-process test (`tests/tests/macro_kernels.rs` includes this file), so
// both are checked against the same OpenCV goldens.

use vx_plugin_abi::{Status, Tile, TileError, TileMut, tiling_kernel};

/// Gaussian 3×3 with the spec's arithmetic (`sum >> 4`), as a fast function (border Undefined).
#[tiling_kernel(name = "spec.gaussian3x3", nbhd = (-1, 1, -1, 1))]
pub(crate) fn gaussian(input: &Tile<u8>, out: &mut TileMut<u8>) -> Result<(), TileError> {
    let missing = || TileError::new(Status::Failure, "fast tile without its rows");
    for y in 0..out.height() {
        let yi = y as i32;
        let (a, b, c) = (
            input.row(yi - 1).ok_or_else(missing)?,
            input.row(yi).ok_or_else(missing)?,
            input.row(yi + 1).ok_or_else(missing)?,
        );
        for (x, o) in out.row_mut(y).ok_or_else(missing)?.iter_mut().enumerate() {
            let s = |r: &[u8]| r[x] as u16 + 2 * r[x + 1] as u16 + r[x + 2] as u16;
            *o = ((s(a) + 2 * s(b) + s(c)) >> 4) as u8;
        }
    }
    Ok(())
}

/// Add u8 + u8 → s16: a 16×16 fast function paired with a flexible one.
#[tiling_kernel(name = "spec.add", block = 16x16, flexible = add_flexible)]
pub(crate) fn add_fast(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) {
    for y in 0..out.height() {
        let (ra, rb) = (a.row(y as i32).expect("fast tile"), b.row(y as i32).expect("fast tile"));
        for ((o, &x), &z) in out.row_mut(y).expect("not aliased").iter_mut().zip(ra).zip(rb) {
            *o = (x as i16).saturating_add(z as i16);
        }
    }
}

/// The flexible half of `spec.add`: any tile, one pixel at a time.
pub(crate) fn add_flexible(a: &Tile<u8>, b: &Tile<u8>, out: &mut TileMut<i16>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, (a.pixel(x, y, 0, 0) as i16).saturating_add(b.pixel(x, y, 0, 0) as i16));
        }
    }
}

/// Posterize `(p & 0xF0) | (p >> 4)` with a 4×1 block (fast only).
#[tiling_kernel(name = "spec.posterize", block = 4x1)]
pub(crate) fn posterize(input: &Tile<u8>, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        let src = input.row(y as i32).expect("fast tile");
        for (o, &p) in out.row_mut(y).expect("not aliased").iter_mut().zip(src) {
            *o = (p & 0xF0) | (p >> 4);
        }
    }
}
