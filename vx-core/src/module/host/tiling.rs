//! Tiling functions across the boundary: the host calls a module's `vx_tiling_kernel_f` (or a row
//! kernel's row entry) with the raw parameters of a tile (or of a call over row tables) and turns
//! its result into a `TileError`.

use vx_plugin_abi::abi_stable::std_types::RResult;
use vx_plugin_abi::module_abi::{RowFnPtr, TilingFnPtr};
use vx_plugin_abi::{RowArgs, TileArgs, TileError};

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

/// Call the module's row entry `f` on the call `args` describes.
pub(super) fn call_rows(f: RowFnPtr, args: &RowArgs<'_>) -> Result<(), TileError> {
    let (params, n) = args.as_raw();
    let region = args.region();
    // SAFETY: `args` was made with `RowArgs::new`, whose contract (the parameters, their row tables
    // and sinks valid for the call) is exactly what `RowFnPtr`'s contract asks of the caller.
    match unsafe { f(params, n, &region) } {
        RResult::ROk(()) => Ok(()),
        RResult::RErr(e) => Err(TileError::new(e.status(), e.message.into_string())),
    }
}
