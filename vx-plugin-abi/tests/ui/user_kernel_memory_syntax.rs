// A memory request is `name = count`: a path is refused with the expected form.
use vx_plugin_abi::{ImageIn, ImageOut, user_kernel};

#[user_kernel(scratch(a::b = 1))]
fn k(_input: &ImageIn<u8>, _out: &mut ImageOut<u8>) {}

fn main() {}
