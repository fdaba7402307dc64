use vx_plugin_abi::{Rows, tiling_kernel};

// No rule at all.
#[tiling_kernel(nbhd = (-1, 1, -1, 1))]
fn missing([_a, _b, _c]: Rows<u8, 3>, _out: &mut [u8]) {}

// Self_ asks the kernel to make up the pixels, but a row kernel is handed them.
#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Self_)]
fn self_border([_a, _b, _c]: Rows<u8, 3>, _out: &mut [u8]) {}

// Constant needs its value.
#[tiling_kernel(nbhd = (-1, 1, -1, 1), border = Constant)]
fn constant([_a, _b, _c]: Rows<u8, 3>, _out: &mut [u8]) {}

fn main() {}
