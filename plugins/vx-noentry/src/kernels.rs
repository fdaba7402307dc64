//! Kernels of a crate that forgot `vx_module!` (feature `kernels`).

use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

/// Copies its input.
#[tiling_kernel(block = 1x1)]
fn copy(src: &Tile<u8>, dst: &mut TileMut<u8>) {
    dst.set(0, 0, src.pixel(0, 0, 0, 0));
}

mod more;
