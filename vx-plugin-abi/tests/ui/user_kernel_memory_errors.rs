// Kernel memory requests in #[user_kernel]: a request naming no argument, a request's argument of
// the wrong type, a request declared twice, and a `&mut [T]` named by no request — all at once.
use vx_plugin_abi::{ImageIn, ImageOut, user_kernel};

#[user_kernel(persistent(count = 1, missing = 4), scratch(row = 8, count = 2))]
fn k(_input: &ImageIn<u8>, _out: &mut ImageOut<u8>, count: &mut [u32], row: &mut Vec<u16>, other: &mut [u8]) {}

fn main() {}
