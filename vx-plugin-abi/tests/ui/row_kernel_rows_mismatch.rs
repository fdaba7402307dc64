use vx_plugin_abi::{Rows, tiling_kernel};

#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Reflect101)]
fn k([_a, _b, _c, _d, _e]: Rows<u8, 5>, _out: &mut [u8]) {}

fn main() {}
