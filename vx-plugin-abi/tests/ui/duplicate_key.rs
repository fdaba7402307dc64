use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

#[tiling_kernel(block = 4x1, block = 2x2)]
fn k(_input: &Tile<u8>, _out: &mut TileMut<u8>) {}

fn main() {}
