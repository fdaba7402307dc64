//! vx_hello: a kernel module with one tiling kernel, `hello.brighten`.

use vx_plugin_abi::{Tile, TileMut, tiling_kernel, vx_module};

vx_module!(name = "vx_hello");

#[cfg(test)]
mod tests;

/// Brighten every pixel by `amount` (saturating). The fast function works on whole 16×1 blocks.
#[tiling_kernel(name = "hello.brighten", block = 16x1, flexible = brighten_any)]
fn brighten(input: &Tile<u8>, amount: u8, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        let src = input.row(y as i32).expect("fast tiles have their rows");
        for (o, &p) in out.row_mut(y).expect("not aliased").iter_mut().zip(src) {
            *o = p.saturating_add(amount);
        }
    }
}

/// The same on any tile: the columns at the right edge that do not fill a 16×1 block.
fn brighten_any(input: &Tile<u8>, amount: u8, out: &mut TileMut<u8>) {
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, input.pixel(x, y, 0, 0).saturating_add(amount));
        }
    }
}
