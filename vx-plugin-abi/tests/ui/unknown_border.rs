use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

#[tiling_kernel(border = Mirror)]
fn k(_input: &Tile<u8>, _out: &mut TileMut<u8>) {}

fn main() {}
