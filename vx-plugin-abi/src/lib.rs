//! # vx-plugin-abi: the vx-rs kernel SDK
//!
//! What the runtime (`vx-rs`) and kernel modules share: status codes, plain `repr(C)` geometry and
//! image-format types, the views kernels read and write ([`Tile`], [`TileMut`], [`Rows`],
//! [`InPlace`], the data-object [`views`]), kernel memory and the versioned [`module_abi`]. It
//! re-exports the macros that turn functions into kernels ([`tiling_kernel`], [`user_kernel`],
//! [`target_kernel`]) and a `cdylib` crate into a module ([`vx_module!`]). A module depends on this
//! crate only. A kernel, and a test (with `vx-rs` as a dev-dependency) that publishes it in process,
//! without a shared library, and runs it in a graph:
//!
//! ```
//! use vx::{Context, Graph, Image, ImageFormat, Rect, Reference, Scalar, ScalarValue};
//! use vx_plugin_abi::{Tile, TileMut, tiling_kernel};
//!
//! /// Brighten every pixel by `amount` (saturating).
//! #[tiling_kernel(name = "guide.brighten", flexible)]
//! fn brighten(input: &Tile<u8>, amount: u8, out: &mut TileMut<u8>) {
//!     for y in 0..out.height() {
//!         for x in 0..out.width() {
//!             out.set(x, y, input.pixel(x, y, 0, 0).saturating_add(amount));
//!         }
//!     }
//! }
//!
//! fn main() -> vx::Result<()> {
//!     let ctx = Context::new()?;
//!     ctx.publish_in_process()?; // every kernel compiled into this binary
//!     let input = Image::new(&ctx, 20, 1, ImageFormat::U8)?;
//!     input.copy_from(Rect::full(20, 1), 0, &[200u8; 20])?;
//!     let amount = Scalar::new(&ctx, ScalarValue::Uint8(100))?;
//!     let output = Image::new(&ctx, 20, 1, ImageFormat::U8)?;
//!     let graph = Graph::new(&ctx)?;
//!     let params = [Reference::from(&input), Reference::from(&amount), Reference::from(&output)];
//!     graph.add_node(&ctx.kernel_by_name("guide.brighten")?, params)?;
//!     graph.process()?;
//!     assert_eq!(output.to_vec::<u8>()?, [255u8; 20]); // saturated
//!     Ok(())
//! }
//! ```
//!
//! The guide is the vx-rs book (docs/book/src in the repository): the chapters *Your first kernel*
//! (first-kernel.md), *Tiling kernels and borders* (tiling.md), *User kernels and validators*
//! (user-kernels.md) and *Buffer aliasing: in-place kernels* (aliasing.md).

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
