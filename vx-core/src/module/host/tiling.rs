//! Tiling functions across the boundary: the host calls a module's `vx_tiling_kernel_f` with the
//! raw parameters of a tile and turns its result into a `TileError`.

use vx_plugin_abi::abi_stable::std_types::RResult;
use vx_plugin_abi::module_abi::AbiResult;
use vx_plugin_abi::{Status, TileError};

pub(super) fn call_tiling(
    f: extern "C" fn(*const vx_plugin_abi::TileParam, u32, *mut u8, usize) -> AbiResult<()>,
    args: &mut vx_plugin_abi::TileArgs<'_>,
) -> std::result::Result<(), TileError> {
    let (params, n, mem, size) = args.as_raw();
    match f(params, n, mem, size) {
        RResult::ROk(()) => Ok(()),
        RResult::RErr(e) => {
            Err(TileError::new(Status::from_code(e.status).unwrap_or(Status::Failure), e.message.into_string()))
        }
    }
}
