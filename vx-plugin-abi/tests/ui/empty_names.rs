use vx_plugin_abi::{ImageIn, ImageOut, Tile, TileMut, tiling_kernel, user_kernel, vx_module};

#[tiling_kernel(name = "")]
fn tiled(_input: &Tile<u8>, _out: &mut TileMut<u8>) {}

#[user_kernel(name = " ")]
fn whole(_input: &ImageIn<u8>, _out: &mut ImageOut<u8>) {}

vx_module!(name = "");

fn main() {}
