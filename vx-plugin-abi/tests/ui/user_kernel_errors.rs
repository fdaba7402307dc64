// #[user_kernel] shares the collected errors of #[tiling_kernel]: every one is reported at once.
use vx_plugin_abi::{ImageOut, Tile, user_kernel};

fn hook(_: &mut u32) -> Result<(), vx_plugin_abi::module_abi::AbiError> {
    Ok(())
}

#[user_kernel(nmae = "x", init = hook)]
fn k(_input: &Tile<u8>, _out: Option<Option<u8>>, _o: &mut ImageOut<u8>) {}

fn main() {}
