//! Tiling functions across the boundary: the host calls a module's `vx_tiling_kernel_f` with the
//! raw parameters of a tile and turns its result into a `TileError`.

use vx_plugin_abi::abi_stable::std_types::RResult;
use vx_plugin_abi::module_abi::TilingFnPtr;
use vx_plugin_abi::{TileArgs, TileError};

/// Call the module's tiling function `f` on the tile `args` describes.
pub(super) fn call_tiling(f: TilingFnPtr, args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let (params, n, mem, size) = args.as_raw();
    // SAFETY: `as_raw` gives the parameters array of this tile (n entries) and its tile memory,
    // valid for this call, exactly what `TilingFnPtr`'s contract asks of the caller.
    match unsafe { f(params, n, mem, size) } {
        RResult::ROk(()) => Ok(()),
        RResult::RErr(e) => Err(TileError::new(e.status(), e.message.into_string())),
    }
}
