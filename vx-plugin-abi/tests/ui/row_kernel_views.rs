use vx_plugin_abi::{Rows, Tile, tiling_kernel};

// A row kernel takes one Rows input, outputs as row slices, scalars; no Tile views, no Option.
#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn k([_a, _b, _c]: Rows<u8, 3>, _other: &Tile<u8>, _out: &mut [u8], _level: Option<u8>) {}

#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn two([_a, _b, _c]: Rows<u8, 3>, [_d, _e, _f]: Rows<u8, 3>, _out: &mut [u8]) {}

fn main() {}
