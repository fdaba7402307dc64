use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

#[tiling_kernel]
fn k(_input: &Tile<u8>, _out: &mut TileMut<u8>, _table: Vec<u8>) {}

fn main() {}
