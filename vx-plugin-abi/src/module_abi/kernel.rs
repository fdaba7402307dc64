//! The kernels a module adds: [`KernelDesc`] (user, tiling or target-only kernels), per-target
//! implementations ([`TargetDesc`]), kernel attributes ([`KernelAttr`]) and the function pointers
//! they carry across the boundary.

use abi_stable::StableAbi;
use abi_stable::std_types::{RSlice, RStr};

use super::controller::Controller;
use super::error::AbiResult;
use super::lifecycle::Lifecycle;
use super::processor::Processor;
use super::validator::Validator;
use crate::tile::{RowRegion, TileParam};
use crate::wire;

/// `vx_tiling_kernel_f` across the boundary: the parameters array, its length, the tile memory and
/// its size.
///
/// # Safety
///
/// The caller passes `num` parameters valid for the call and tile memory of `size` bytes (or null
/// and 0), upholding [`crate::TileArgs::new`]'s contract.
pub type TilingFnPtr =
    unsafe extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>;

/// A row kernel's row entry (ABI v8; fused execution, `docs/design/fusion.md` §6.1): output rows
/// `call.y0 .. call.y0 + call.count`, columns `call.x0 .. call.x1`. `params` as for a tiling
/// function, except its images: an input is [`TileParamKind::InputRows`](crate::TileParamKind)
/// (`ptr` → [`RowSourceDesc`]), an output [`TileParamKind::OutputRows`](crate::TileParamKind)
/// (`ptr` → [`RowSinkDesc`], `call.count` rows). The module resolves every window row with its own
/// border rule and looks it up in the table (a missing row is an error, never a read elsewhere).
///
/// # Safety
///
/// The caller upholds [`RowArgs::new`](crate::RowArgs::new)'s contract for `num` parameters at
/// `params` and the region `call`.
pub type RowFnPtr = unsafe extern "C" fn(params: *const TileParam, num: u32, call: &RowRegion) -> AbiResult<()>;

/// An input image of a row entry as a table of row pointers (the design's `RowSource`): image row
/// `sy` is at `rows[sy - first_row]`, full width (`RowRegion::image_width` pixels from column 0), a
/// null entry a row the table does not hold.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct RowSourceDesc {
    /// The image row `rows[0]` holds (may be negative: rows above the image are never held, but a
    /// table may start anywhere).
    pub first_row: i64,
    /// `len` row pointers.
    pub rows: *const *const u8,
    /// Entries in `rows`.
    pub len: u32,
    /// The image format's FourCC (equal to the parameter's `type_code`).
    pub format: u32,
}

/// The output rows of a row-entry call (the design's `RowSink`): `rows[i]` is output row
/// `call.y0 + i`, pointing to column 0; `call.count` entries.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct RowSinkDesc {
    /// `call.count` row pointers.
    pub rows: *const *mut u8,
    /// The image format's FourCC (equal to the parameter's `type_code`).
    pub format: u32,
}

/// What a kernel declares for fused execution (ABI v8, [`Host::declare_fusion`](super::Host::declare_fusion)):
/// its row entry, the border rule that entry applies and its row count `N` (a `Rows<T, N>` kernel),
/// and [`wire::fusion`] flags.
#[repr(C)]
#[derive(StableAbi, Clone, Copy)]
pub struct FusionDesc {
    /// The row entry ([`RowFnPtr`]), or `None` for a kernel without one.
    pub rows: Option<unsafe extern "C" fn(params: *const TileParam, num: u32, call: &RowRegion) -> AbiResult<()>>,
    /// The rule the row entry applies past the image edge: a [`wire::row_fill`] code
    /// ([`NONE`](wire::row_fill::NONE) without a row entry).
    pub fill: u32,
    /// The rows the row entry's window spans (`N` of `Rows<T, N>`; 0 without a row entry).
    pub rows_n: u32,
    /// [`wire::fusion`] flags.
    pub flags: u32,
}

impl FusionDesc {
    /// A row kernel: its row entry, rule (a [`wire::row_fill`] code) and `N`; its views are the
    /// SDK's, so bounded.
    pub fn rows(entry: RowFnPtr, fill: u32, rows_n: u32) -> FusionDesc {
        FusionDesc { rows: Some(entry), fill, rows_n, flags: wire::fusion::VIEWS_BOUNDED }
    }

    /// A kernel without a row entry whose tile functions read only through SDK views, each bounded
    /// by its descriptor's `readable` rectangle.
    pub fn bounded() -> FusionDesc {
        FusionDesc { rows: None, fill: wire::row_fill::NONE, rows_n: 0, flags: wire::fusion::VIEWS_BOUNDED }
    }
}

/// A validator across the boundary.
pub type ValidateFnPtr = extern "C" fn(v: &Validator) -> AbiResult<()>;

/// A user kernel's process function across the boundary.
pub type ProcessFnPtr = extern "C" fn(p: &Processor) -> AbiResult<()>;

/// Init or deinit across the boundary.
pub type LifecycleFnPtr = extern "C" fn(l: &Lifecycle) -> AbiResult<()>;

/// A control callback's entry point (`tivxNodeSendCommand` → `control_func`).
pub type ControlFnPtr = extern "C" fn(c: &Controller) -> AbiResult<()>;

/// One target's implementation of a kernel (`tivxAddTargetKernelByName`).
#[repr(C)]
#[derive(StableAbi, Clone, Copy)]
pub struct TargetDesc<'a> {
    /// The target's name.
    pub target: RStr<'a>,
    /// Process on that target.
    pub process: extern "C" fn(p: &Processor) -> AbiResult<()>,
    /// Create (init) on that target.
    pub create: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
    /// Delete (deinit) on that target.
    pub delete: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
    /// Control on that target.
    pub control: Option<extern "C" fn(c: &Controller) -> AbiResult<()>>,
}

/// A kernel attribute across the boundary.
#[repr(C, u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelAttr {
    /// `VX_KERNEL_LOCAL_DATA_SIZE`.
    LocalDataSize(u64),
    /// `VX_KERNEL_INPUT_NEIGHBORHOOD`: left, right, top, bottom.
    InputNeighborhood(i32, i32, i32, i32),
    /// `VX_KERNEL_OUTPUT_TILE_BLOCK_SIZE`: width, height.
    OutputTileBlockSize(u32, u32),
    /// `VX_KERNEL_BORDER`: a [`crate::wire::border`] code.
    Border(u32),
    /// `VX_KERNEL_TILE_MEMORY_SIZE`.
    TileMemorySize(u64),
}

/// A kernel to add: `vxAddUserKernel` (`process`) or `vxAddTilingKernel` (`fast` / `flexible`).
#[repr(C)]
#[derive(StableAbi)]
pub struct KernelDesc<'a> {
    /// The kernel's name.
    pub name: RStr<'a>,
    /// Its enumeration; 0 lets the host allocate one.
    pub enumeration: i32,
    /// Its parameter count.
    pub num_params: u32,
    /// The validator.
    pub validate: extern "C" fn(v: &Validator) -> AbiResult<()>,
    /// The process function (user kernels).
    pub process: Option<extern "C" fn(p: &Processor) -> AbiResult<()>>,
    /// The fast function (tiling kernels).
    pub fast: Option<
        unsafe extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>,
    >,
    /// The flexible function (tiling kernels).
    pub flexible: Option<
        unsafe extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>,
    >,
    /// `vx_kernel_initialize_f` (user kernels).
    pub init: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
    /// `vx_kernel_deinitialize_f` (user kernels).
    pub deinit: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
    /// Control for nodes running the kernel's own process (user kernels).
    pub control: Option<extern "C" fn(c: &Controller) -> AbiResult<()>>,
    /// Implementations per target (user kernels; `process` may then be `None`).
    pub targets: RSlice<'a, TargetDesc<'a>>,
    /// Nonzero: the validator is a pure function of the kernel's declaration, named by this key
    /// (the kernel macros' generated validators: a hash of the declared signature and of the SDK
    /// version). Two versions of a kernel with one nonzero key validate every node alike, so a
    /// reload that keeps it revalidates none of its nodes. 0: the validator is the kernel's own.
    pub validator_key: u64,
}

impl<'a> KernelDesc<'a> {
    /// A tiling kernel with a fast and/or a flexible function.
    pub fn tiling(
        name: &'a str,
        enumeration: i32,
        num_params: u32,
        validate: ValidateFnPtr,
        fast: Option<TilingFnPtr>,
        flexible: Option<TilingFnPtr>,
    ) -> Self {
        KernelDesc {
            name: RStr::from_str(name),
            enumeration,
            num_params,
            validate,
            process: None,
            fast,
            flexible,
            init: None,
            deinit: None,
            control: None,
            targets: RSlice::EMPTY,
            validator_key: 0,
        }
    }

    /// A user (non-tiling) kernel.
    pub fn user(
        name: &'a str,
        enumeration: i32,
        num_params: u32,
        validate: ValidateFnPtr,
        process: ProcessFnPtr,
    ) -> Self {
        KernelDesc {
            name: RStr::from_str(name),
            enumeration,
            num_params,
            validate,
            process: Some(process),
            fast: None,
            flexible: None,
            init: None,
            deinit: None,
            control: None,
            targets: RSlice::EMPTY,
            validator_key: 0,
        }
    }

    /// A user kernel implemented only on targets (no process of its own).
    pub fn target_only(
        name: &'a str,
        enumeration: i32,
        num_params: u32,
        validate: ValidateFnPtr,
        targets: &'a [TargetDesc<'a>],
    ) -> Self {
        // No process and no tiling functions: only the targets' implementations.
        KernelDesc::tiling(name, enumeration, num_params, validate, None, None).with_targets(targets)
    }

    /// Add init and deinit callbacks (user kernels).
    pub fn with_lifecycle(mut self, init: Option<LifecycleFnPtr>, deinit: Option<LifecycleFnPtr>) -> Self {
        self.init = init;
        self.deinit = deinit;
        self
    }

    /// Declare the validator a pure function of the declaration named by `key` (nonzero; see
    /// [`validator_key`](Self::validator_key)). Only generated validators may claim this.
    pub fn with_validator_key(mut self, key: u64) -> Self {
        self.validator_key = key;
        self
    }

    /// Add a control callback (user kernels).
    pub fn with_control(mut self, control: Option<ControlFnPtr>) -> Self {
        self.control = control;
        self
    }

    /// Add implementations per target (user kernels).
    pub fn with_targets(mut self, targets: &'a [TargetDesc<'a>]) -> Self {
        self.targets = RSlice::from_slice(targets);
        self
    }
}
