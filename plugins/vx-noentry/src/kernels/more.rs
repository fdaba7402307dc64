//! A second file of kernels: the missing entry point is reported once per crate, not per kernel.

use vx_plugin_abi::{TileMut, tiling_kernel};

/// Clears its output.
#[tiling_kernel(block = 1x1)]
fn clear(dst: &mut TileMut<u8>) {
    dst.set(0, 0, 0);
}
