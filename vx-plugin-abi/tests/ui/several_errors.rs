use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

#[tiling_kernel(block = 0x1, nbhd = (1, 0, 0, 0), border = Mirror, alias(0, 1, inplace))]
fn k(_input: &Tile<u8>, _out: &mut TileMut<u8>) {}

fn main() {}
