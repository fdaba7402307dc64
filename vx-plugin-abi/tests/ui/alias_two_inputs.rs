use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

#[tiling_kernel(alias(0, 1, sparse))]
fn k(_a: &Tile<u8>, _b: &Tile<u8>, _out: &mut TileMut<u8>) {}

fn main() {}
