//! # vx-rs — the vx-rs runtime
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
//! use vx::*;
//!
//! # fn main() -> vx::Result<()> {
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
//!
//! The guide is the vx-rs book, in the repository's `docs/book/` (`mdbook build docs/book`):
//! *Applications* (`docs/book/src/applications.md`) for contexts, data objects and graphs; *Kernel
//! modules and hot reload* (`modules.md`); *Fusion*, *Memory*, *Targets and target kernels* and
//! *Pipelining* for what the runtime does with a graph; *Limits* and *Security* for its bounds and
//! threat model. Kernels are written with the SDK, `vx-plugin-abi`.

#[cfg(not(target_os = "linux"))]
compile_error!(
    "vx-rs supports Linux only today: its module loader relies on ELF, `lib<name>.so`, RTLD_NOLOAD and /proc/self/maps"
);

mod context;
mod data;
mod error;
mod graph;
mod kernel;
mod module;
mod shared;
mod support;
mod watcher;

pub use context::{Context, ContextBuilder};
pub use data::blob::{BytesMap, MappedSlice, MappedSliceMut};
pub use data::buffer::{BUFFER_ALIGN, ExternalMemory};
pub use data::image::import::ImageHandle;
#[cfg(feature = "image")]
pub use data::image::interop::FormatPixel;
pub use data::image::layout::{ImageLayout, PlaneLayout};
pub use data::image::patch::{ImagePatch, ImagePatchMut, PatchAddressing, Pixel};
pub use data::image::{ColorSpace, ImageBytesMap};
pub use data::items::{ArrayItem, ArrayItemType, Coordinates2d, Coordinates2dF, Coordinates3d, Keypoint};
pub use data::kernel_view::KernelView;
pub use data::kind::Handle;
pub use data::kinds::exports::*;
pub use data::kinds::{DataObject, MetaAttribute, ObjectMeta, Reference};
pub use data::types::{DataType, Direction, ParamState, ScalarPrimitive, ScalarType, ScalarValue};
pub use error::{Error, ErrorContext, ErrorKind, Result};
pub use graph::delay::{Delay, MAX_DELAY_SLOTS};
pub use graph::fusion::{FusedGroupReport, FusionRefusal, FusionReport, UnfusedNode};
pub use graph::node::{Node, NodeKey, Perf};
pub use graph::pipeline::{Dequeued, MAX_PIPELINE_DEPTH, MAX_QUEUE_REFERENCES, ScheduleConfig, ScheduleMode};
pub use graph::targets::{NodeAction, NodeCallbackFn, NodeCompletion};
pub use graph::tiling::plan as tile_plan;
#[doc(hidden)]
pub use graph::verify::check_always as __verify_check_always;
pub use graph::verify::pass_times::pass_times as __verify_pass_times;
pub use graph::verify::{AliasDecision, KernelMemoryUse, MemoryPlan, NodeMemoryUse, PlannedBuffer};
pub use graph::{Graph, GraphState, PerfRow, PerfTable};
pub use kernel::builder::KernelBuilder;
pub use kernel::callbacks::{ControlFn, LifecycleFn, ProcessFn, RowFn, TargetKernel, TilingFn, ValidateFn};
pub use kernel::contexts::{
    ControlContext, KernelArray, KernelImage, KernelUserData, LifecycleContext, ProcessContext, ValidateContext,
};
pub use kernel::fusion::{FusionSupport, RowFill};
pub use kernel::handle::{Kernel, WeakKernel};
pub use kernel::memory::{MAX_BLOCKS, MemBlock, MemRegion, Plain};
pub use kernel::meta_format::{MetaFormat, MetaFormats, ValidRectFn};
pub use kernel::signature::{
    AliasHint, AliasKind, KernelAttribute, KernelAttributes, KernelDocs, MAX_KERNEL_NAME, MAX_KERNEL_PARAMETERS,
    ParamDirection, ParamSpec,
};
pub use kernel::table::{MAX_USER_LIBRARY_ID, USER_KERNEL_ID_POOL, VX_ID_USER, kernel_base};
pub use kernel::users::StaleNode;
#[doc(hidden)]
pub use module::copy::test_hooks as __test_hooks;
pub use module::foreign::{ForeignEntry, ForeignModuleHost};
#[doc(hidden)]
pub use module::library::check_elf_bytes as __check_elf_bytes;
pub use module::library::{ModuleBuild, ModuleInfo, ModuleState, module_name_of_file};
pub use module::loader::{MODULE_PATH_VAR, ReloadOptions, ReloadReport};
pub use module::trust::module_digest;
pub use shared::crew::CrewStats;
pub use shared::{
    AsContext, ContextConfig, ContextShared, DEFAULT_MAX_MODULE_BYTES, HOST_TARGET, Limits, MAX_LIMITS_FILE_BYTES,
    MAX_QUEUE_DEPTH, MAX_THREADS, MemoryLeak, ModuleTrust, ResourceKind, ResourceStat, ResourceUsage, TARGET_ANY,
    TargetConfig, TargetInfo, TilingPolicy, VirtualScope,
};
pub use vx_plugin_abi::module_abi::ABI_VERSION as MODULE_ABI_VERSION;
pub use vx_plugin_abi::{
    BorderMode, ImageFormat, Neighborhood, Rect, Status, Tile, TileArgs, TileBlockSize, TileError, TileMut, TilePixel,
    TileScalar,
};
pub use watcher::{ModuleWatcher, WatchEvent, WatchOptions};

/// The README's examples, compiled and run as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The book's chapters (`docs/book/src/`), every Rust block compiled and run as a doctest, so
/// nothing in the book can rot. `tests/tests/docs.rs` checks that every chapter is listed here.
#[cfg(doctest)]
pub mod book {
    #[doc = include_str!("../../docs/book/src/introduction.md")]
    pub struct Introduction;
    #[doc = include_str!("../../docs/book/src/first-kernel.md")]
    pub struct FirstKernel;
    #[doc = include_str!("../../docs/book/src/tiling.md")]
    pub struct Tiling;
    #[doc = include_str!("../../docs/book/src/user-kernels.md")]
    pub struct UserKernels;
    #[doc = include_str!("../../docs/book/src/aliasing.md")]
    pub struct Aliasing;
    #[doc = include_str!("../../docs/book/src/applications.md")]
    pub struct Applications;
    #[doc = include_str!("../../docs/book/src/modules.md")]
    pub struct Modules;
    #[doc = include_str!("../../docs/book/src/fusion.md")]
    pub struct Fusion;
    #[doc = include_str!("../../docs/book/src/memory.md")]
    pub struct Memory;
    #[doc = include_str!("../../docs/book/src/targets.md")]
    pub struct Targets;
    #[doc = include_str!("../../docs/book/src/pipelining.md")]
    pub struct Pipelining;
    #[doc = include_str!("../../docs/book/src/cli.md")]
    pub struct Cli;
    #[doc = include_str!("../../docs/book/src/graph-file.md")]
    pub struct GraphFile;
    #[doc = include_str!("../../docs/book/src/limits.md")]
    pub struct Limits;
    #[doc = include_str!("../../docs/book/src/security.md")]
    pub struct Security;
    #[doc = include_str!("../../docs/book/src/performance.md")]
    pub struct Performance;
    #[doc = include_str!("../../docs/book/src/openvx-mapping.md")]
    pub struct OpenvxMapping;
    #[doc = include_str!("../../docs/book/src/c-api.md")]
    pub struct CApi;
    #[doc = include_str!("../../docs/book/src/development.md")]
    pub struct Development;
    #[doc = include_str!("../../docs/book/src/mutants.md")]
    pub struct Mutants;
}
