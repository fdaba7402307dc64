#![doc = include_str!("guide.md")]

pub mod geometry;
pub mod image_format;
pub mod kernel_record;
pub mod kinds;
pub mod log;
#[doc(hidden)]
pub mod macro_support;
pub mod memory;
pub mod module_abi;
pub mod module_api;
pub mod object_meta;
pub mod status;
pub mod tile;
mod unwind;
pub mod views;
pub mod wire;

/// The `abi_stable` crate the wire contract is built with. [`module_abi`]'s types carry its types
/// (`RStr`, `RResult`, prefix types, the library header), so the host (`vx-rs`) and modules
/// written against the ABI by hand (`plugins/vx-sample`) name them through this re-export and get
/// the very version the contract was built with; the macros' output names it too. Modules written
/// with the macros never need it.
pub use abi_stable;
pub use geometry::{BorderMode, Neighborhood, Rect, TileBlockSize};
pub use image_format::ImageFormat;
pub use kernel_record::KernelRecord;
pub use memory::{MemBlock, MemRegion, Plain};
pub use module_abi::{AbiError, Validator};
pub use object_meta::{ObjectMeta, ParamPath};
pub use status::Status;
pub use tile::{
    BorderFill, InPlace, InPlaceRow, MAX_TILING_PARAMS, RowArgs, RowRegion, Rows, TILE_ALIASED, TILE_LINE_BUFFER,
    TILE_RUN_THREADS_MASK, TILE_RUN_THREADS_SHIFT, Tile, TileArgs, TileContext, TileDesc, TileError, TileMut,
    TileParam, TileParamKind, TilePixel, TileScalar, tile_run_threads_flags,
};
pub use unwind::{expect_panics, panic_message};
pub use views::{ImageIn, ImageOut};
pub use vx_macros::{target_kernel, tiling_kernel, user_kernel, vx_module};
