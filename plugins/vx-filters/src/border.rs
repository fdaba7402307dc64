//! Reflect-101 border access for flexible functions.

use vx_plugin_abi::{Tile, TilePixel};

/// Reflect-101 of coordinate `i` into `0..n` (OpenCV's `BORDER_REFLECT_101`).
pub(crate) fn reflect(i: i64, n: i64) -> i64 {
    if n == 1 {
        return 0;
    }
    let mut i = i;
    while i < 0 || i >= n {
        i = if i < 0 { -i } else { 2 * (n - 1) - i };
    }
    i
}

/// The pixel at tile-relative `(x, y)` offset by `(ox, oy)`, reflected into the image.
pub(crate) fn pixel<T: TilePixel>(t: &Tile<T>, x: u32, y: u32, ox: i32, oy: i32) -> T {
    let ix = reflect(t.x() as i64 + x as i64 + ox as i64, t.image_width() as i64);
    let iy = reflect(t.y() as i64 + y as i64 + oy as i64, t.image_height() as i64);
    t.pixel(x, y, (ix - t.x() as i64 - x as i64) as i32, (iy - t.y() as i64 - y as i64) as i32)
}
