//! # vx-plugin-abi — what the vx-rs host and kernel modules share
//!
//! This crate is the kernel SDK's foundation. It holds only plain data types whose layout both
//! sides agree on: the OpenVX status codes ([`Status`]), rectangles, border modes, tile block
//! sizes and neighborhoods ([`geometry`]), image formats ([`ImageFormat`]), and the tile descriptors
//! and views of tiling kernels ([`tile`]).
//!
//! It depends on nothing of ours except `vx-macros`, so a kernel module can depend on it without
//! ever linking the runtime (`vx-core`). [`module_abi`] holds the wire contract (the versioned root
//! descriptor, the handles and their vtables), [`wire`] the codes that cross it, [`module_api`] the
//! module-side glue (generic trampolines, panic guard), [`kernel_record`] the per-binary records.
//!
//! It is also the kernel SDK: it re-exports [`tiling_kernel`], [`user_kernel`] and [`vx_module!`]
//! (see the README's "Write a kernel"), whose generated code uses the hidden `macro_support`.
//!
//! Neighborhood filters are written as **row kernels**: a `#[tiling_kernel]` function taking
//! [`Rows<T, N>`](Rows) (the input rows of one output row's neighborhood) and `&mut [T]` outputs,
//! with a declared border rule (`border = Reflect101 | Replicate | Constant(v)`, a vx-rs extension);
//! the SDK serves rows straight from the image inside it and border-extended ones at its edges
//! ([`Tile::for_rows`] is the same service for kernels with `Tile` views).
//!
//! ```
//! use vx_plugin_abi::{Rows, tiling_kernel};
//!
//! /// `out = (a + 2b + c) / 4` down each column, replicating the top and bottom rows.
//! #[tiling_kernel(name = "doc.vblur", nbhd = (0, 0, -1, 1), border = Replicate)]
//! fn vblur([a, b, c]: Rows<u8, 3>, out: &mut [u8]) {
//!     for (x, o) in out.iter_mut().enumerate() {
//!         *o = ((a[x] as u16 + 2 * b[x] as u16 + c[x] as u16 + 2) / 4) as u8;
//!     }
//! }
//! ```
//!
//! ## Logging
//!
//! Module code logs with [`log::info!`](log) and friends: the lines reach the application's
//! `tracing` subscriber (a module's own `tracing` would not), and so do panics the SDK catches.
//!
//! ## What tools see
//!
//! The macros describe each kernel to the host: the first paragraph of its doc comment, each
//! parameter's name (the argument's) and element (`U8`, `S16`, the scalar type, the view type).
//! `vx inspect` prints them; `vx_core::Kernel::docs` returns them. Two kernels of one name in a
//! crate do not compile.
//!
//! ## Custom validators
//!
//! [`Validator`] (what a validator is handed) and [`AbiError`] (its error) are re-exported here for
//! `validate = path` functions of the macros.
//!
//! Every `unsafe` block (tile access, the module ABI's pointers, the macros' runtime support)
//! carries a `SAFETY:` comment; the tile-view tests are written to run under Miri.

pub mod geometry;
pub mod image_format;
pub mod kernel_record;
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

pub use abi_stable;
pub use geometry::{BorderMode, Neighborhood, Rect, TileBlockSize};
pub use image_format::ImageFormat;
pub use kernel_record::KernelRecord;
pub use macro_support::{ImageIn, ImageOut};
pub use memory::{MemBlock, MemRegion, Plain};
pub use module_abi::{AbiError, Validator};
pub use object_meta::{ObjectMeta, ParamPath};
pub use status::Status;
pub use tile::{
    BorderFill, InPlace, InPlaceRow, MAX_TILING_PARAMS, Rows, TILE_ALIASED, Tile, TileArgs, TileContext, TileDesc,
    TileError, TileMut, TileParam, TileParamKind, TilePixel, TileScalar,
};
pub use unwind::panic_message;
pub use vx_macros::{target_kernel, tiling_kernel, user_kernel, vx_module};
