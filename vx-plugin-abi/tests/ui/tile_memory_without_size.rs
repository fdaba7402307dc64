use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

#[tiling_kernel]
fn scratch(_input: &Tile<u8>, _out: &mut TileMut<u8>, _memory: &mut [u8]) {}

#[tiling_kernel(tile_memory = 0)]
fn none(_input: &Tile<u8>, _out: &mut TileMut<u8>, _memory: &mut [u8]) {}

#[tiling_kernel(tile_memory = 64)]
fn fine(_input: &Tile<u8>, _out: &mut TileMut<u8>, _memory: &mut [u8]) {}

fn main() {}
