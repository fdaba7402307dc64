// A tiling function trusts the raw pointers it is given: calling one takes `unsafe`.
use vx_plugin_abi::module_abi::TilingFnPtr;
use vx_plugin_abi::module_api::{TilingFunction, tiling_trampoline};
use vx_plugin_abi::{TileArgs, TileError};

struct Nothing;
impl TilingFunction for Nothing {
    fn call(_: &mut TileArgs<'_>) -> Result<(), TileError> {
        Ok(())
    }
}

fn main() {
    let f: TilingFnPtr = tiling_trampoline::<Nothing>;
    let _ = f(std::ptr::null(), 0, std::ptr::null_mut(), 0);
}
