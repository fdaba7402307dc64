// `flexible = path` names the flexible function of the same kernel: the runtime calls it with the
// same parameters as the fast one. One with another signature is refused at the path, naming both
// signatures.
use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

fn invert_any(src: &Tile<u8>, dst: &mut TileMut<u8>, extra: u8) {
    let _ = (src, dst, extra);
}

#[tiling_kernel(block = 16x1, flexible = invert_any)]
fn invert(src: &Tile<u8>, dst: &mut TileMut<u8>) {
    let _ = (src, dst);
}

fn main() {}
