//! The module ABI: what a kernel module exports and what the host passes it.
//!
//! A module exports one root descriptor ([`VxModule`], an abi_stable prefix type with an explicit
//! [`ABI_VERSION`]) whose `publish` / `unpublish` entry points receive a [`Host`]: an opaque context
//! plus a forward-compatible vtable ([`HostVtable`]) through which the module adds kernels,
//! parameters and attributes, finalizes and removes kernels. Kernel functions cross the boundary as
//! `extern "C"` pointers: tiling functions with the `vx_tiling_kernel_f` shape ([`TilingFnPtr`]),
//! validators through a [`Validator`] handle, user-kernel process functions through a [`Processor`]
//! handle. Every entry point returns an [`AbiResult`]: a status plus a message the receiver copies.
//!
//! Modules never let a panic cross the boundary: the helpers [`guard`] and [`run_tiling`] catch it
//! inside the module and turn it into an error.
//!
//! The host keeps nothing from module memory beyond the module's lifetime: it copies names and
//! messages, and keeps function pointers only next to a handle that keeps the library mapped.

use std::panic::{AssertUnwindSafe, catch_unwind};

use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RResult, RStr, RString};
use abi_stable::{StableAbi, declare_root_module_statics, package_version_strings};

use crate::status::Status;
use crate::tile::{TileArgs, TileError, TileParam};

/// The module ABI version. A host refuses modules built for another one.
pub const ABI_VERSION: u32 = 1;

/// An error crossing the module boundary: an OpenVX status code and a message.
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct AbiError {
    pub status: i32,
    pub message: RString,
}

impl AbiError {
    /// An error with a status and a message.
    pub fn new(status: Status, message: impl Into<String>) -> AbiError {
        AbiError { status: status.code(), message: RString::from(message.into()) }
    }
}

/// The result of every call across the boundary.
pub type AbiResult<T> = RResult<T, AbiError>;

/// `vx_tiling_kernel_f` across the boundary: the parameters array, its length, the tile memory and
/// its size.
pub type TilingFnPtr =
    extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>;

/// A validator across the boundary.
pub type ValidateFnPtr = extern "C" fn(v: &Validator) -> AbiResult<()>;

/// A user kernel's process function across the boundary.
pub type ProcessFnPtr = extern "C" fn(p: &Processor) -> AbiResult<()>;

/// Data types of parameters (`vx_type_e` codes).
pub mod data_type {
    pub const SCALAR: u32 = 0x80D;
    pub const ARRAY: u32 = 0x80E;
    pub const IMAGE: u32 = 0x80F;
    pub const USER_DATA_OBJECT: u32 = 0x816;
}

/// Parameter directions (`vx_direction_e` order).
pub mod direction {
    pub const INPUT: u32 = 0;
    pub const OUTPUT: u32 = 1;
    pub const BIDIRECTIONAL: u32 = 2;
}

/// Parameter states.
pub mod param_state {
    pub const REQUIRED: u32 = 0;
    pub const OPTIONAL: u32 = 1;
}

/// A kernel attribute across the boundary.
#[repr(C, u8)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelAttr {
    LocalDataSize(u64),
    /// left, right, top, bottom
    InputNeighborhood(i32, i32, i32, i32),
    /// width, height
    OutputTileBlockSize(u32, u32),
    /// 0 = Undefined, 1 = Self_
    Border(u32),
    TileMemorySize(u64),
}

/// A kernel to add: `vxAddUserKernel` (`process`) or `vxAddTilingKernel` (`fast` / `flexible`).
#[repr(C)]
#[derive(StableAbi)]
pub struct KernelDesc<'a> {
    pub name: RStr<'a>,
    pub enumeration: i32,
    pub num_params: u32,
    pub validate: extern "C" fn(v: &Validator) -> AbiResult<()>,
    pub process: Option<extern "C" fn(p: &Processor) -> AbiResult<()>>,
    pub fast:
        Option<extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>>,
    pub flexible:
        Option<extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>>,
    /// `vx_kernel_initialize_f` (user kernels).
    pub init: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
    /// `vx_kernel_deinitialize_f` (user kernels).
    pub deinit: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
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
        }
    }

    /// Add init and deinit callbacks (user kernels).
    pub fn with_lifecycle(
        mut self,
        init: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
        deinit: Option<extern "C" fn(l: &Lifecycle) -> AbiResult<()>>,
    ) -> Self {
        self.init = init;
        self.deinit = deinit;
        self
    }
}

/// The host as a module sees it during `publish` / `unpublish`.
#[repr(C)]
#[derive(StableAbi)]
pub struct Host {
    pub vtable: HostVtableRef,
    /// Opaque to the module.
    pub ctx: usize,
}

/// The host's functions (forward-compatible: new ones are added after the last prefix field).
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = HostVtableRef)))]
#[sabi(missing_field(panic))]
pub struct HostVtable {
    /// Add a kernel; returns a handle for the calls below.
    pub add_kernel: extern "C" fn(host: &Host, desc: &KernelDesc<'_>) -> AbiResult<u64>,
    /// `vxAddParameterToKernel` (direction, data type and state codes of the modules above).
    pub add_parameter: extern "C" fn(
        host: &Host,
        kernel: u64,
        index: u32,
        direction: u32,
        data_type: u32,
        state: u32,
    ) -> AbiResult<()>,
    /// `vxSetKernelAttribute`.
    pub set_attribute: extern "C" fn(host: &Host, kernel: u64, attribute: KernelAttr) -> AbiResult<()>,
    /// `vxAliasParameterIndexHint` (kind: 0 = dense, 1 = sparse).
    pub alias_hint: extern "C" fn(host: &Host, kernel: u64, a: u32, b: u32, kind: u32) -> AbiResult<()>,
    /// `vxFinalizeKernel`.
    pub finalize: extern "C" fn(host: &Host, kernel: u64) -> AbiResult<()>,
    /// `vxRemoveKernel` by name (from `unpublish`).
    #[sabi(last_prefix_field)]
    pub remove_kernel: extern "C" fn(host: &Host, name: RStr<'_>) -> AbiResult<()>,
}

/// What a validator learns about one parameter.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamMeta {
    /// False for an unset optional parameter.
    pub present: bool,
    /// `data_type::*`.
    pub data_type: u32,
    /// Image FourCC (0 otherwise).
    pub format: u32,
    pub width: u32,
    pub height: u32,
    /// Scalar `vx_type_e` (0 otherwise).
    pub scalar_type: u32,
}

/// The host's side of one validator call.
#[repr(C)]
#[derive(StableAbi)]
pub struct Validator {
    pub vtable: ValidatorVtableRef,
    pub ctx: usize,
}

/// Functions a validator may call.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ValidatorVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ValidatorVtable {
    pub num_params: extern "C" fn(v: &Validator) -> u32,
    pub param_meta: extern "C" fn(v: &Validator, index: u32) -> AbiResult<ParamMeta>,
    /// Set an output image's meta format.
    pub set_output_image:
        extern "C" fn(v: &Validator, index: u32, format: u32, width: u32, height: u32) -> AbiResult<()>,
    /// Set an output array's meta format: items of a scalar type (`vx_type_e`), capacity.
    #[sabi(last_prefix_field)]
    pub set_output_array: extern "C" fn(v: &Validator, index: u32, scalar_type: u32, capacity: u64) -> AbiResult<()>,
}

impl Validator {
    /// Meta data of parameter `index`.
    pub fn param(&self, index: u32) -> Result<ParamMeta, AbiError> {
        (self.vtable.param_meta())(self, index).into_result()
    }
    /// Set output array `index` to `capacity` items of the scalar type `scalar_type` (`vx_type_e`).
    pub fn set_output_array(&self, index: u32, scalar_type: u32, capacity: u64) -> Result<(), AbiError> {
        (self.vtable.set_output_array())(self, index, scalar_type, capacity).into_result()
    }
    /// Set output image `index` to `format`, `width × height`.
    pub fn set_output_image(
        &self,
        index: u32,
        format: crate::ImageFormat,
        width: u32,
        height: u32,
    ) -> Result<(), AbiError> {
        (self.vtable.set_output_image())(self, index, format.fourcc(), width, height).into_result()
    }
}

/// A mapped image patch handed to a user kernel.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct MappedImage {
    /// First pixel of the patch.
    pub base: *mut u8,
    pub dim_x: u32,
    pub dim_y: u32,
    pub stride_x: i32,
    pub stride_y: i32,
    /// Pass back to `unmap_image`.
    pub token: u64,
}

/// The host's side of one user-kernel process call.
#[repr(C)]
#[derive(StableAbi)]
pub struct Processor {
    pub vtable: ProcessorVtableRef,
    pub ctx: usize,
}

/// Functions a user kernel's process may call to reach its parameters.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ProcessorVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ProcessorVtable {
    /// Map `rect` (image coordinates; an empty rectangle means the whole image) of plane 0 of image
    /// parameter `index` for reading or writing.
    pub map_image: extern "C" fn(p: &Processor, index: u32, rect: crate::Rect, write: bool) -> AbiResult<MappedImage>,
    pub unmap_image: extern "C" fn(p: &Processor, token: u64),
    /// A scalar's value bytes (native order, at the start) and its `vx_type_e`.
    pub read_scalar: extern "C" fn(p: &Processor, index: u32) -> AbiResult<ScalarBits>,
    pub write_scalar: extern "C" fn(p: &Processor, index: u32, value: ScalarBits) -> AbiResult<()>,
    /// Item size, capacity and item count of array parameter `index`.
    pub array_info: extern "C" fn(p: &Processor, index: u32) -> AbiResult<ArrayInfo>,
    /// Append `count` items (item-size bytes each) from `items`.
    pub array_add: extern "C" fn(p: &Processor, index: u32, items: *const u8, count: u64) -> AbiResult<()>,
    /// Copy up to `capacity` items into `out`; returns how many were copied.
    pub array_read: extern "C" fn(p: &Processor, index: u32, out: *mut u8, capacity: u64) -> AbiResult<u64>,
    pub array_truncate: extern "C" fn(p: &Processor, index: u32, count: u64) -> AbiResult<()>,
    /// The node's local data (`VX_NODE_LOCAL_DATA_PTR` / `_SIZE`).
    pub local_data: extern "C" fn(p: &Processor) -> LocalData,
    /// `vxIsParameterAliased`.
    #[sabi(last_prefix_field)]
    pub is_aliased: extern "C" fn(p: &Processor, a: u32, b: u32) -> bool,
}

/// An array's shape.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayInfo {
    pub item_size: u64,
    pub capacity: u64,
    pub num_items: u64,
}

/// A node's local data: address (0 = none) and size.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalData {
    pub ptr: usize,
    pub size: u64,
}

/// The host's side of one init or deinit call.
#[repr(C)]
#[derive(StableAbi)]
pub struct Lifecycle {
    pub vtable: LifecycleVtableRef,
    pub ctx: usize,
}

/// Functions init and deinit may call (the spec's local-data rules apply).
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = LifecycleVtableRef)))]
#[sabi(missing_field(panic))]
pub struct LifecycleVtable {
    pub local_data: extern "C" fn(l: &Lifecycle) -> LocalData,
    /// `VX_NODE_LOCAL_DATA_SIZE` (allowed when the kernel's local data size is 0).
    pub set_local_data_size: extern "C" fn(l: &Lifecycle, size: u64) -> AbiResult<()>,
    /// `VX_NODE_LOCAL_DATA_PTR` (memory the module owns and frees in deinit).
    pub set_local_data_ptr: extern "C" fn(l: &Lifecycle, ptr: usize) -> AbiResult<()>,
    #[sabi(last_prefix_field)]
    pub is_aliased: extern "C" fn(l: &Lifecycle, a: u32, b: u32) -> bool,
}

/// A scalar value across the boundary.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarBits {
    pub type_code: u32,
    pub bytes: [u8; 8],
}

/// The root descriptor every module exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = VxModuleRef)))]
#[sabi(missing_field(panic))]
pub struct VxModule {
    /// Must equal the host's [`ABI_VERSION`].
    #[cfg(not(feature = "abi-layout-mismatch"))]
    pub abi_version: u32,
    /// (Test feature: a different layout, which the host's abi_stable check must refuse.)
    #[cfg(feature = "abi-layout-mismatch")]
    pub abi_version: u64,
    /// The module's name (e.g. `vx_filters`).
    pub name: RStr<'static>,
    /// The module's own version.
    pub version: RStr<'static>,
    pub publish: extern "C" fn(host: &Host) -> AbiResult<()>,
    #[sabi(last_prefix_field)]
    pub unpublish: extern "C" fn(host: &Host) -> AbiResult<()>,
}

impl RootModule for VxModuleRef {
    declare_root_module_statics! {VxModuleRef}
    const BASE_NAME: &'static str = "vx_module";
    const NAME: &'static str = "vx_module";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// Module side: run `f`, turning a panic into an error (never let it cross the boundary).
pub fn guard<T>(what: &str, f: impl FnOnce() -> Result<T, AbiError>) -> AbiResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.into(),
        Err(payload) => {
            let msg = crate::unwind::panic_message(&*payload);
            RResult::RErr(AbiError::new(Status::Failure, format!("{what} panicked in the module: {msg}")))
        }
    }
}

/// Module side: the body of an exported tiling function.
///
/// # Safety
///
/// The arguments must be the ones the host passed to the `extern "C"` function (the contract of
/// [`TileArgs::new`] holds for them).
pub unsafe fn run_tiling(
    params: *const TileParam,
    num: u32,
    tile_memory: *mut u8,
    size: usize,
    f: fn(&mut TileArgs<'_>) -> Result<(), TileError>,
) -> AbiResult<()> {
    guard("a tiling function", || {
        // SAFETY: the host passes a parameters array of `num` entries valid for this call (caller's
        // contract).
        let params = unsafe { std::slice::from_raw_parts(params, num as usize) };
        // SAFETY: forwarded unchanged from the host, which upholds TileArgs::new's contract.
        let mut args = unsafe { TileArgs::new(params, tile_memory, size) };
        f(&mut args).map_err(|e| AbiError { status: e.status.code(), message: RString::from(e.message.into_owned()) })
    })
}

/// Module side: a typed wrapper over the [`Host`] handle for `publish` / `unpublish`.
pub struct HostApi<'h> {
    host: &'h Host,
}

impl<'h> HostApi<'h> {
    /// Wrap the handle the host passed.
    pub fn new(host: &'h Host) -> Self {
        HostApi { host }
    }
    /// Add a kernel; then add its parameters and attributes and finalize it.
    pub fn add_kernel(&self, desc: &KernelDesc<'_>) -> Result<u64, AbiError> {
        (self.host.vtable.add_kernel())(self.host, desc).into_result()
    }
    /// `vxAddParameterToKernel`.
    pub fn add_parameter(
        &self,
        kernel: u64,
        index: u32,
        direction: u32,
        data_type: u32,
        state: u32,
    ) -> Result<(), AbiError> {
        (self.host.vtable.add_parameter())(self.host, kernel, index, direction, data_type, state).into_result()
    }
    /// `vxSetKernelAttribute`.
    pub fn set_attribute(&self, kernel: u64, attribute: KernelAttr) -> Result<(), AbiError> {
        (self.host.vtable.set_attribute())(self.host, kernel, attribute).into_result()
    }
    /// `vxAliasParameterIndexHint`: `sparse` selects the sparse processing type, else dense.
    pub fn alias_hint(&self, kernel: u64, a: u32, b: u32, sparse: bool) -> Result<(), AbiError> {
        (self.host.vtable.alias_hint())(self.host, kernel, a, b, sparse as u32).into_result()
    }
    /// `vxFinalizeKernel`.
    pub fn finalize(&self, kernel: u64) -> Result<(), AbiError> {
        (self.host.vtable.finalize())(self.host, kernel).into_result()
    }
    /// `vxRemoveKernel` by name.
    pub fn remove_kernel(&self, name: &str) -> Result<(), AbiError> {
        (self.host.vtable.remove_kernel())(self.host, RStr::from_str(name)).into_result()
    }
}
