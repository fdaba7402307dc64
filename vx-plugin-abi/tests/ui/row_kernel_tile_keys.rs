use vx_plugin_abi::{Rows, tiling_kernel};

#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Replicate, block = 8x1, flexible, tile_memory = 64, alias(0, 1, dense))]
fn k([_a, _b, _c]: Rows<u8, 3>, _out: &mut [u8]) {}

fn main() {}
