//! # vx-core — the vx-rs runtime
//!
//! An OpenVX-style runtime for user kernels: a [`Context`] owns kernels and a thread pool; data
//! objects ([`Image`], [`Scalar`], [`Array`], [`UserDataObject`]) are RAII handles; user kernels are
//! added with [`Context::user_kernel`], given a signature, and finalized; [`Graph`]s of [`Node`]s are
//! verified (validators, meta formats, virtual objects, valid regions, the spec's local-data
//! sequence) and processed. Tiling kernels ([`Context::tiling_kernel`]) are cut into cache-sized
//! tiles per the tiling extension's tables ([`tile_plan`]) and run in parallel; kernel modules are
//! loaded, reloaded and unloaded at run time ([`Context::load_module`], [`ModuleWatcher`]); kernels
//! compiled into the application are published with [`Context::publish_in_process`].
//!
//! ```
//! use vx_core::*;
//!
//! # fn main() -> vx_core::Result<()> {
//! let ctx = Context::builder().threads(2).build()?;
//! let id = ctx.allocate_user_kernel_id()?;
//! let invert = ctx
//!     .user_kernel("example.invert", id, 2)
//!     .validate(|v, metas| {
//!         let input = v.expect_image_format(0, ImageFormat::U8)?;
//!         metas.get(1)?.set_image(ImageFormat::U8, input.width(), input.height())?;
//!         Ok(())
//!     })
//!     .process(|p| {
//!         let (input, mut output) = p.map_pair::<u8, u8>(0, 1)?;
//!         for y in 0..input.height() {
//!             for (o, i) in output.row_mut(y).iter_mut().zip(input.row(y)) {
//!                 *o = 255 - *i;
//!             }
//!         }
//!         Ok(())
//!     })
//!     .add()?;
//! invert.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required)?;
//! invert.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required)?;
//! invert.finalize()?;
//!
//! let graph = Graph::new(&ctx)?;
//! let input = Image::new(&ctx, 4, 2, ImageFormat::U8)?;
//! input.copy_from(Rect::full(4, 2), 0, &[0u8, 1, 2, 3, 4, 5, 6, 7])?;
//! let output = Image::new(&ctx, 4, 2, ImageFormat::U8)?;
//! graph.add_node(&invert, [&input, &output])?;
//! graph.process()?; // verifies first
//! assert_eq!(output.to_vec::<u8>()?, [255, 254, 253, 252, 251, 250, 249, 248]);
//! # Ok(()) }
//! ```

mod array;
mod buffer;
mod context;
mod data_type;
mod error;
mod graph;
mod image;
mod image_layout;
mod image_patch;
mod kernel;
mod kernel_context;
mod kernel_registry;
mod local_data;
mod meta_format;
mod module_host;
mod module_library;
mod module_loader;
mod module_watcher;
mod node;
mod object;
mod process;
mod reference;
mod resources;
mod scalar;
pub mod tile_plan;
mod tiling;
mod user_data_object;
mod verify;

pub use array::{Array, ArrayItem, ArrayItemType, Coordinates2d};
pub use buffer::BUFFER_ALIGN;
pub use context::{Context, ContextBuilder, ContextConfig};
pub use data_type::{DataType, Direction, ParamState, ScalarPrimitive, ScalarType, ScalarValue};
pub use error::{Error, ErrorContext, ErrorKind, Result};
pub use graph::{Graph, GraphState};
pub use image::Image;
pub use image_layout::{ImageLayout, PlaneLayout};
pub use image_patch::{ImagePatch, ImagePatchMut, PatchAddressing, Pixel};
pub use kernel::{
    AliasHint, AliasKind, Kernel, KernelAttribute, KernelAttributes, KernelBuilder, LifecycleFn, MAX_KERNEL_NAME,
    MAX_KERNEL_PARAMETERS, ParamDirection, ParamSpec, ProcessFn, TilingFn, ValidateFn,
};
pub use kernel_context::{KernelArray, KernelImage, KernelUserData, LifecycleContext, ProcessContext, ValidateContext};
pub use kernel_registry::{MAX_USER_LIBRARY_ID, USER_KERNEL_ID_POOL, VX_ID_USER, kernel_base};
pub use meta_format::{MetaFormat, MetaFormats, ValidRectFn};
pub use module_library::ModuleState;
pub use module_loader::MODULE_PATH_VAR;
pub use module_watcher::{ModuleWatcher, WatchEvent, WatchOptions};
pub use node::{Node, Perf};
pub use reference::{ObjectMeta, Reference};
pub use resources::{ResourceKind, ResourceUsage};
pub use scalar::Scalar;
pub use tile_plan::TilingPolicy;
pub use user_data_object::{MAX_TYPE_NAME, UserDataObject};
pub use vx_plugin_abi::{
    BorderMode, ImageFormat, Neighborhood, Rect, Status, Tile, TileArgs, TileBlockSize, TileError, TileMut, TilePixel,
    TileScalar,
};

/// The README's examples, compiled and run as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
