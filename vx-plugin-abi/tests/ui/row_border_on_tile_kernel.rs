use vx_plugin_abi::{Tile, TileMut, tiling_kernel};

// A border rule is for row kernels; a kernel with Tile views handles its border itself.
#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Replicate, flexible)]
fn k(_input: &Tile<u8>, _out: &mut TileMut<u8>) {}

fn main() {}
