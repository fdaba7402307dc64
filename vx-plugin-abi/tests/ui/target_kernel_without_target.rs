// A target kernel names its target; `create` without `local` has no state to run on.
use vx_plugin_abi::module_abi::AbiError;
use vx_plugin_abi::{ImageIn, ImageOut, target_kernel};

fn make(_: &mut u8) -> Result<(), AbiError> {
    Ok(())
}

#[target_kernel(name = "x", create = make)]
fn k(_input: &ImageIn<u8>, _out: &mut ImageOut<u8>) {}

fn main() {}
