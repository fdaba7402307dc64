use vx_plugin_abi::{Rows, Tile, TileMut, tiling_kernel};

#[tiling_kernel(flexible, fusion = no)]
fn k(_input: &Tile<u8>, _out: &mut TileMut<u8>) {}

#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Reflect101, fusion = "off")]
fn rows([_a, _b, _c]: Rows<u8, 3>, _out: &mut [u8]) {}

fn main() {}
