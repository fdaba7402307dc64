//! The module ABI (version 5): what a kernel module exports and what the host passes it — the wire
//! contract only; the module-side glue is in [`crate::module_api`].
//!
//! A module exports one root descriptor ([`VxModule`], an abi_stable prefix type with an explicit
//! [`ABI_VERSION`]) whose `publish` / `unpublish` entry points receive a [`Host`] handle through
//! which the module adds kernels, parameters and attributes, finalizes and removes kernels. Kernel
//! functions cross the boundary as `extern "C"` pointers: tiling functions with the
//! `vx_tiling_kernel_f` shape ([`TilingFnPtr`]), validators through a [`Validator`] handle,
//! user-kernel process functions through a [`Processor`] handle, init/deinit through a
//! [`Lifecycle`] handle. Every call returns an [`AbiResult`]: a status plus a message the receiver
//! copies. Codes cross as the integers of [`crate::wire`].
//!
//! **Soundness by construction.** A handle is a vtable plus an opaque pointer to host state, valid
//! for one call on one thread: handles are neither `Send` nor `Sync` (abi_stable's
//! [`UnsyncUnsend`]), their fields are private, and only the host makes them
//! ([`Host::from_raw`] and friends are `unsafe`, with the contract that the pointer is what the
//! vtable expects). The vtable functions trust that pointer, so their types are
//! `unsafe extern "C" fn`; the handles' safe methods call them, relying on that contract. Entry
//! points that trust raw pointers from their caller ([`TilingFnPtr`], array items) are
//! `unsafe extern "C" fn` too. Neither side lets a panic cross: the module's generated entry points
//! catch it inside the module, and every host-side `extern "C"` function catches it inside the host.
//!
//! The host keeps nothing from module memory beyond the module's lifetime: it copies names and
//! messages, and keeps function pointers only next to a handle that keeps the library mapped.

use std::ffi::c_void;

use abi_stable::library::RootModule;
use abi_stable::marker_type::UnsyncUnsend;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RResult, RSlice, RStr, RString};
use abi_stable::{StableAbi, declare_root_module_statics, package_version_strings};

use crate::geometry::Rect;
use crate::image_format::ImageFormat;
use crate::memory::{MemBlock, MemRegion, Plain};
use crate::object_meta::{MappedData, ObjectMeta, ParamPath, ThresholdBits};
use crate::status::Status;
use crate::tile::TileParam;

/// The module ABI version. A host refuses modules built for another one. Version 2: handles with a
/// private host pointer, `!Send`/`!Sync`; `unsafe extern "C" fn` where raw pointers are trusted.
/// Version 3: kernel memory (`mem_*` in the lifecycle and processor vtables) — a module built for it
/// must not load into a host without them, so the version changed although the vtables only grew.
/// Version 4: init and deinit read parameter metas (`param_meta` in the lifecycle vtable), so a
/// kernel sizes its memory requests by its images; target kernels (`KernelDesc::targets`, control
/// callbacks and the [`Controller`] handle).
/// Version 5: every data object ([`crate::object_meta`]): validators, init and deinit read any
/// object's meta ([`ObjectMeta`], scalar values and array item counts included) and set outputs
/// of any type, whole or attribute by attribute; process maps pyramid levels, object-array items
/// and the fixed-layout objects, reads and writes thresholds. All new vtable functions follow the
/// last prefix field, so the prefix-type layout rules hold; the version changed because a module
/// calling them must not load into a host without them.
pub const ABI_VERSION: u32 = 5;

/// The name of the plain `u32` static (no mangling) holding the module's [`ABI_VERSION`]. The host
/// reads it before abi_stable's layout check, so a module of another ABI version is refused with
/// that reason (a layout report would hide it); modules built against ABI version 1 lack it.
pub const ABI_VERSION_SYMBOL: &str = "vx_rs_module_abi_version";

/// An error crossing the module boundary: an OpenVX status code and a message.
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct AbiError {
    /// The `vx_status` code.
    pub status: i32,
    /// What went wrong, for the host's error message.
    pub message: RString,
}

impl AbiError {
    /// An error with a status and a message.
    pub fn new(status: Status, message: impl Into<String>) -> AbiError {
        AbiError { status: status.code(), message: RString::from(message.into()) }
    }

    /// The status (an unknown code reads as `Failure`).
    pub fn status(&self) -> Status {
        Status::from_code(self.status).unwrap_or(Status::Failure)
    }
}

/// The result of every call across the boundary.
pub type AbiResult<T> = RResult<T, AbiError>;

/// `vx_tiling_kernel_f` across the boundary: the parameters array, its length, the tile memory and
/// its size.
///
/// # Safety
///
/// The caller passes `num` parameters valid for the call and tile memory of `size` bytes (or null
/// and 0), upholding [`crate::TileArgs::new`]'s contract.
pub type TilingFnPtr =
    unsafe extern "C" fn(params: *const TileParam, num: u32, tile_memory: *mut u8, size: usize) -> AbiResult<()>;

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

/// A module's `publish` / `unpublish`.
pub type EntryFnPtr = extern "C" fn(host: &Host) -> AbiResult<()>;

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

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $vtable:ident, $ptr:ty) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(StableAbi)]
        pub struct $name {
            vtable: $vtable,
            ctx: $ptr,
            _not_thread_safe: UnsyncUnsend,
        }

        impl $name {
            /// Make a handle (host side).
            ///
            /// # Safety
            ///
            /// `ctx` must be the state `vtable`'s functions expect, valid (and used by nobody else)
            /// for as long as the handle is used; the handle is lent to a module for one call only.
            pub unsafe fn from_raw(vtable: $vtable, ctx: $ptr) -> Self {
                $name { vtable, ctx, _not_thread_safe: UnsyncUnsend::NEW }
            }

            /// The host state behind the handle (host side: what [`Self::from_raw`] was given).
            pub fn ctx(&self) -> $ptr {
                self.ctx
            }
        }
    };
}

handle!(
    /// The host as a module sees it during `publish` / `unpublish`.
    Host,
    HostVtableRef,
    *const c_void
);
handle!(
    /// The host's side of one validator call.
    Validator,
    ValidatorVtableRef,
    *mut c_void
);
handle!(
    /// The host's side of one user-kernel process call.
    Processor,
    ProcessorVtableRef,
    *mut c_void
);
handle!(
    /// The host's side of one control call (a command sent to a node).
    Controller,
    ControllerVtableRef,
    *mut c_void
);
handle!(
    /// The host's side of one init or deinit call.
    Lifecycle,
    LifecycleVtableRef,
    *mut c_void
);

/// The host's functions (forward-compatible: new ones are added after the last prefix field).
/// Each trusts the handle's host pointer; call them through the [`Host`] methods.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = HostVtableRef)))]
#[sabi(missing_field(panic))]
pub struct HostVtable {
    /// Add a kernel; returns a handle for the calls below.
    pub add_kernel: unsafe extern "C" fn(host: &Host, desc: &KernelDesc<'_>) -> AbiResult<u64>,
    /// `vxAddParameterToKernel` ([`crate::wire`] direction, data type and state codes).
    pub add_parameter: unsafe extern "C" fn(
        host: &Host,
        kernel: u64,
        index: u32,
        direction: u32,
        data_type: u32,
        state: u32,
    ) -> AbiResult<()>,
    /// `vxSetKernelAttribute`.
    pub set_attribute: unsafe extern "C" fn(host: &Host, kernel: u64, attribute: KernelAttr) -> AbiResult<()>,
    /// `vxAliasParameterIndexHint` (kind: a [`crate::wire::alias_kind`] code).
    pub alias_hint: unsafe extern "C" fn(host: &Host, kernel: u64, a: u32, b: u32, kind: u32) -> AbiResult<()>,
    /// `vxFinalizeKernel`.
    pub finalize: unsafe extern "C" fn(host: &Host, kernel: u64) -> AbiResult<()>,
    /// `vxRemoveKernel` by name (from `unpublish`).
    #[sabi(last_prefix_field)]
    pub remove_kernel: unsafe extern "C" fn(host: &Host, name: RStr<'_>) -> AbiResult<()>,
    /// A one-line summary of the kernel, for tools (`vx inspect`). Optional: hosts before it lack
    /// it and the [`Host`] method then does nothing (names are informational).
    #[sabi(missing_field(option))]
    pub describe_kernel: unsafe extern "C" fn(host: &Host, kernel: u64, summary: RStr<'_>) -> AbiResult<()>,
    /// A parameter's name and element (pixel or scalar type), for tools. Optional, as above.
    #[sabi(missing_field(option))]
    pub describe_parameter:
        unsafe extern "C" fn(host: &Host, kernel: u64, index: u32, name: RStr<'_>, element: RStr<'_>) -> AbiResult<()>,
    /// A log line or a panic message from module code, for the host's `tracing` subscriber
    /// (`level`: a [`crate::wire::log_level`] code). Valid for the whole process (not only during
    /// publish): modules keep it. Optional, as above.
    #[sabi(missing_field(option))]
    pub log: unsafe extern "C" fn(level: u32, target: RStr<'_>, message: RStr<'_>),
}

impl Host {
    /// Add a kernel; then add its parameters and attributes and finalize it.
    pub fn add_kernel(&self, desc: &KernelDesc<'_>) -> Result<u64, AbiError> {
        // SAFETY: only the host makes a Host (`from_raw`'s contract: ctx is what the vtable expects).
        unsafe { (self.vtable.add_kernel())(self, desc) }.into_result()
    }
    /// `vxAddParameterToKernel` with [`crate::wire`] codes.
    pub fn add_parameter(
        &self,
        kernel: u64,
        index: u32,
        direction: u32,
        data_type: u32,
        state: u32,
    ) -> Result<(), AbiError> {
        // SAFETY: as in `add_kernel`.
        unsafe { (self.vtable.add_parameter())(self, kernel, index, direction, data_type, state) }.into_result()
    }
    /// `vxSetKernelAttribute`.
    pub fn set_attribute(&self, kernel: u64, attribute: KernelAttr) -> Result<(), AbiError> {
        // SAFETY: as in `add_kernel`.
        unsafe { (self.vtable.set_attribute())(self, kernel, attribute) }.into_result()
    }
    /// `vxAliasParameterIndexHint` with a [`crate::wire::alias_kind`] code.
    pub fn alias_hint(&self, kernel: u64, a: u32, b: u32, kind: u32) -> Result<(), AbiError> {
        // SAFETY: as in `add_kernel`.
        unsafe { (self.vtable.alias_hint())(self, kernel, a, b, kind) }.into_result()
    }
    /// `vxFinalizeKernel`.
    pub fn finalize(&self, kernel: u64) -> Result<(), AbiError> {
        // SAFETY: as in `add_kernel`.
        unsafe { (self.vtable.finalize())(self, kernel) }.into_result()
    }
    /// `vxRemoveKernel` by name.
    pub fn remove_kernel(&self, name: &str) -> Result<(), AbiError> {
        // SAFETY: as in `add_kernel`.
        unsafe { (self.vtable.remove_kernel())(self, RStr::from_str(name)) }.into_result()
    }
    /// A one-line summary of the kernel for tools; nothing on hosts without the function.
    pub fn describe_kernel(&self, kernel: u64, summary: &str) -> Result<(), AbiError> {
        match self.vtable.describe_kernel() {
            // SAFETY: as in `add_kernel`.
            Some(f) => unsafe { f(self, kernel, RStr::from_str(summary)) }.into_result(),
            None => Ok(()),
        }
    }
    /// A parameter's name and element for tools; nothing on hosts without the function.
    pub fn describe_parameter(&self, kernel: u64, index: u32, name: &str, element: &str) -> Result<(), AbiError> {
        match self.vtable.describe_parameter() {
            // SAFETY: as in `add_kernel`.
            Some(f) => unsafe { f(self, kernel, index, RStr::from_str(name), RStr::from_str(element)) }.into_result(),
            None => Ok(()),
        }
    }
    /// The host's log function, if it has one (valid for the whole process).
    pub fn log_fn(&self) -> Option<LogFnPtr> {
        self.vtable.log()
    }
}

/// The host's log function ([`HostVtable::log`]).
pub type LogFnPtr = unsafe extern "C" fn(level: u32, target: RStr<'_>, message: RStr<'_>);

/// What a validator learns about one parameter.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamMeta {
    /// False for an unset optional parameter.
    pub present: bool,
    /// A [`crate::wire::data_type`] code.
    pub data_type: u32,
    /// Image FourCC (0 otherwise).
    pub format: u32,
    /// Image width (0 otherwise).
    pub width: u32,
    /// Image height (0 otherwise).
    pub height: u32,
    /// A [`crate::wire::scalar_type`] code (0 otherwise).
    pub scalar_type: u32,
}

/// Functions a validator may call. Each trusts the handle's host pointer; call them through the
/// [`Validator`] methods.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ValidatorVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ValidatorVtable {
    /// The node's parameter count.
    pub num_params: unsafe extern "C" fn(v: &Validator) -> u32,
    /// What parameter `index` is.
    pub param_meta: unsafe extern "C" fn(v: &Validator, index: u32) -> AbiResult<ParamMeta>,
    /// Set an output image's meta format.
    pub set_output_image:
        unsafe extern "C" fn(v: &Validator, index: u32, format: u32, width: u32, height: u32) -> AbiResult<()>,
    /// Set an output array's meta format: items of a scalar type, capacity.
    #[sabi(last_prefix_field)]
    pub set_output_array:
        unsafe extern "C" fn(v: &Validator, index: u32, scalar_type: u32, capacity: u64) -> AbiResult<()>,
    /// What the object at `path` is (ABI 5).
    pub object_meta: unsafe extern "C" fn(v: &Validator, path: ParamPath) -> AbiResult<ObjectMeta>,
    /// Set output `index`'s whole meta format (`vxSetMetaFormatFromReference`; ABI 5).
    pub set_output_meta: unsafe extern "C" fn(v: &Validator, index: u32, meta: &ObjectMeta) -> AbiResult<()>,
    /// Set one attribute of output `index`'s meta format (`vxSetMetaFormatAttribute`: a
    /// [`crate::wire::attribute`] code and the value's bytes; ABI 5).
    pub set_output_attribute:
        unsafe extern "C" fn(v: &Validator, index: u32, attribute: u32, value: RSlice<'_, u8>) -> AbiResult<()>,
}

impl Validator {
    /// The node's parameter count.
    pub fn num_params(&self) -> u32 {
        // SAFETY: only the host makes a Validator (`from_raw`'s contract).
        unsafe { (self.vtable.num_params())(self) }
    }
    /// Meta data of parameter `index`.
    pub fn param(&self, index: u32) -> Result<ParamMeta, AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.param_meta())(self, index) }.into_result()
    }
    /// Set output array `index` to `capacity` items of the scalar type `scalar_type`.
    pub fn set_output_array(&self, index: u32, scalar_type: u32, capacity: u64) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.set_output_array())(self, index, scalar_type, capacity) }.into_result()
    }
    /// Set output image `index` to `format`, `width × height`.
    pub fn set_output_image(&self, index: u32, format: ImageFormat, width: u32, height: u32) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.set_output_image())(self, index, format.fourcc(), width, height) }.into_result()
    }
    /// What parameter `index` is: any type, with a scalar's value and an array's item count.
    pub fn meta(&self, index: u32) -> Result<ObjectMeta, AbiError> {
        self.meta_at(ParamPath::param(index))
    }
    /// What the object at `path` is (an object array's item, a pyramid's level).
    pub fn meta_at(&self, path: ParamPath) -> Result<ObjectMeta, AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.object_meta())(self, path) }.into_result()
    }
    /// Output `index` will look like `meta` (`vxSetMetaFormatFromReference` with an exemplar's
    /// meta; values such as a scalar's are ignored).
    pub fn set_output_meta(&self, index: u32, meta: &ObjectMeta) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.set_output_meta())(self, index, meta) }.into_result()
    }
    /// `vxSetMetaFormatAttribute`: one attribute of output `index` (a [`crate::wire::attribute`]
    /// code; `value` is the attribute's C type: `&3usize` for a `vx_size`, `&fourcc` for a
    /// `vx_df_image`, `&code` (`i32`) for a `vx_enum`).
    pub fn set_output_attribute<T: Plain>(&self, index: u32, attribute: u32, value: &T) -> Result<(), AbiError> {
        // SAFETY: `T: Plain` is a number type: its bytes are initialised.
        let bytes = unsafe { std::slice::from_raw_parts(value as *const T as *const u8, std::mem::size_of::<T>()) };
        self.set_output_attribute_bytes(index, attribute, bytes)
    }
    /// [`Self::set_output_attribute`] with the value's bytes (a tensor's dimensions, a user data
    /// object's type name).
    pub fn set_output_attribute_bytes(&self, index: u32, attribute: u32, value: &[u8]) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.set_output_attribute())(self, index, attribute, RSlice::from_slice(value)) }.into_result()
    }
}

/// A mapped image patch handed to a user kernel.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct MappedImage {
    /// First pixel of the patch.
    pub base: *mut u8,
    /// Pixels per row.
    pub dim_x: u32,
    /// Rows.
    pub dim_y: u32,
    /// Bytes from one pixel to the next.
    pub stride_x: i32,
    /// Bytes from one row to the next.
    pub stride_y: i32,
    /// Pass back to `unmap_image`.
    pub token: u64,
}

/// Functions a user kernel's process may call to reach its parameters. Each trusts the handle's
/// host pointer; call them through the [`Processor`] methods.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ProcessorVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ProcessorVtable {
    /// Map `rect` (image coordinates; an empty rectangle means the whole image) of plane 0 of image
    /// parameter `index` for reading or writing.
    pub map_image: unsafe extern "C" fn(p: &Processor, index: u32, rect: Rect, write: bool) -> AbiResult<MappedImage>,
    /// Unmap what `map_image` mapped.
    pub unmap_image: unsafe extern "C" fn(p: &Processor, token: u64),
    /// A scalar's value bytes (native order, at the start) and its type code.
    pub read_scalar: unsafe extern "C" fn(p: &Processor, index: u32) -> AbiResult<ScalarBits>,
    /// Write a scalar.
    pub write_scalar: unsafe extern "C" fn(p: &Processor, index: u32, value: ScalarBits) -> AbiResult<()>,
    /// Item size, capacity and item count of array parameter `index`.
    pub array_info: unsafe extern "C" fn(p: &Processor, index: u32) -> AbiResult<ArrayInfo>,
    /// Append `count` items (item-size bytes each) from `items`.
    pub array_add: unsafe extern "C" fn(p: &Processor, index: u32, items: *const u8, count: u64) -> AbiResult<()>,
    /// Copy up to `capacity` items into `out`; returns how many were copied.
    pub array_read: unsafe extern "C" fn(p: &Processor, index: u32, out: *mut u8, capacity: u64) -> AbiResult<u64>,
    /// Keep the first `count` items.
    pub array_truncate: unsafe extern "C" fn(p: &Processor, index: u32, count: u64) -> AbiResult<()>,
    /// The node's local data (`VX_NODE_LOCAL_DATA_PTR` / `_SIZE`).
    pub local_data: unsafe extern "C" fn(p: &Processor) -> LocalData,
    /// Whether parameter `index` is set (an optional one may be unset).
    pub param_present: unsafe extern "C" fn(p: &Processor, index: u32) -> bool,
    /// `vxIsParameterAliased`.
    #[sabi(last_prefix_field)]
    pub is_aliased: unsafe extern "C" fn(p: &Processor, a: u32, b: u32) -> bool,
    /// Block `index` of region `region` ([`crate::wire::mem_region`]): persistent, or scratch in
    /// the running executor's arena. Each block once per call.
    pub mem_block: unsafe extern "C" fn(p: &Processor, region: u32, index: u32) -> AbiResult<MemBlockInfo>,
    /// Allocation in process: always refused (kernels allocate in init), with the reason.
    pub mem_alloc: unsafe extern "C" fn(p: &Processor, region: u32, bytes: u64) -> AbiResult<u32>,
    /// What the object at `path` is (ABI 5).
    pub object_meta: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ObjectMeta>,
    /// `map_image` for the image at `path` (a pyramid level, an object-array item; ABI 5).
    pub map_image_at:
        unsafe extern "C" fn(p: &Processor, path: ParamPath, rect: Rect, write: bool) -> AbiResult<MappedImage>,
    /// Map the memory of the fixed-layout object at `path` (matrix, convolution, LUT,
    /// distribution, remap, tensor, user data object); unmap with `unmap_image`'s token (ABI 5).
    pub map_data: unsafe extern "C" fn(p: &Processor, path: ParamPath, write: bool) -> AbiResult<MappedData>,
    /// `read_scalar` at `path` (ABI 5).
    pub read_scalar_at: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ScalarBits>,
    /// `write_scalar` at `path` (ABI 5).
    pub write_scalar_at: unsafe extern "C" fn(p: &Processor, path: ParamPath, value: ScalarBits) -> AbiResult<()>,
    /// A threshold's values (ABI 5).
    pub threshold_read: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ThresholdBits>,
    /// Set every value of a threshold: binary value, range and outputs (ABI 5).
    pub threshold_write: unsafe extern "C" fn(p: &Processor, path: ParamPath, values: ThresholdBits) -> AbiResult<()>,
    /// `array_info` at `path` (ABI 5).
    pub array_info_at: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ArrayInfo>,
    /// `array_add` at `path` (ABI 5).
    pub array_add_at:
        unsafe extern "C" fn(p: &Processor, path: ParamPath, items: *const u8, count: u64) -> AbiResult<()>,
    /// `array_read` at `path` (ABI 5).
    pub array_read_at:
        unsafe extern "C" fn(p: &Processor, path: ParamPath, out: *mut u8, capacity: u64) -> AbiResult<u64>,
    /// `array_truncate` at `path` (ABI 5).
    pub array_truncate_at: unsafe extern "C" fn(p: &Processor, path: ParamPath, count: u64) -> AbiResult<()>,
}

/// A kernel memory block as the host hands it out: address and size.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemBlockInfo {
    /// The block's first byte (64-byte aligned).
    pub ptr: usize,
    /// Its size.
    pub bytes: u64,
}

/// A handle's `block`: ask the host for the block (`mem_block`: region code, index), then view it
/// as `&mut [T]`.
///
/// # Safety
///
/// `mem_block` must be the handle's host function, which hands a block out at most once per call,
/// so no other reference covers the returned slice while the call lasts.
unsafe fn handed_block<'a, T: Plain>(
    block: MemBlock<T>,
    mem_block: impl FnOnce(u32, u32) -> AbiResult<MemBlockInfo>,
) -> Result<&'a mut [T], AbiError> {
    let info = mem_block(block.region().code(), block.index()).into_result()?;
    // SAFETY: the caller's contract; blocks are 64-byte aligned, zero-initialised when allocated,
    // and every bit pattern is a valid `Plain`.
    Ok(unsafe { std::slice::from_raw_parts_mut(info.ptr as *mut T, info.bytes as usize / std::mem::size_of::<T>()) })
}

impl Processor {
    /// Map `rect` (empty: the whole image) of plane 0 of image parameter `index`; unmap with
    /// [`Self::unmap_image`] (the host unmaps whatever is left when process returns).
    pub fn map_image(&self, index: u32, rect: Rect, write: bool) -> Result<MappedImage, AbiError> {
        // SAFETY: only the host makes a Processor (`from_raw`'s contract).
        unsafe { (self.vtable.map_image())(self, index, rect, write) }.into_result()
    }
    /// Unmap a patch by its token.
    pub fn unmap_image(&self, token: u64) {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.unmap_image())(self, token) }
    }
    /// Read input scalar `index`.
    pub fn read_scalar(&self, index: u32) -> Result<ScalarBits, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.read_scalar())(self, index) }.into_result()
    }
    /// Write scalar `index`.
    pub fn write_scalar(&self, index: u32, value: ScalarBits) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.write_scalar())(self, index, value) }.into_result()
    }
    /// Shape of array parameter `index`.
    pub fn array_info(&self, index: u32) -> Result<ArrayInfo, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.array_info())(self, index) }.into_result()
    }
    /// Append the items in `bytes` (a whole number of items of the array's item size).
    pub fn array_add(&self, index: u32, bytes: &[u8]) -> Result<(), AbiError> {
        let item = self.array_info(index)?.item_size.max(1) as usize;
        if !bytes.len().is_multiple_of(item) {
            return Err(AbiError::new(
                Status::InvalidParameters,
                format!("{} bytes are not a whole number of {item}-byte items", bytes.len()),
            ));
        }
        // SAFETY: as in `map_image`; `bytes` holds `len / item` items of the array's item size.
        unsafe { (self.vtable.array_add())(self, index, bytes.as_ptr(), (bytes.len() / item) as u64) }.into_result()
    }
    /// Copy items into `out` (as many whole items as fit); returns how many were copied.
    pub fn array_read(&self, index: u32, out: &mut [u8]) -> Result<u64, AbiError> {
        let item = self.array_info(index)?.item_size.max(1) as usize;
        // SAFETY: as in `map_image`; `out` has room for `len / item` items of the item size.
        unsafe { (self.vtable.array_read())(self, index, out.as_mut_ptr(), (out.len() / item) as u64) }.into_result()
    }
    /// Keep the first `count` items of array `index`.
    pub fn array_truncate(&self, index: u32, count: u64) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.array_truncate())(self, index, count) }.into_result()
    }
    /// Whether parameter `index` is set (an optional one may be unset).
    pub fn is_present(&self, index: u32) -> bool {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.param_present())(self, index) }
    }
    /// The node's local data.
    pub fn local_data(&self) -> LocalData {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.local_data())(self) }
    }
    /// `vxIsParameterAliased`.
    pub fn is_aliased(&self, a: u32, b: u32) -> bool {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.is_aliased())(self, a, b) }
    }
    /// The elements of a block init allocated: persistent, or scratch in this executor's arena.
    /// The host hands each block out once per call (a second time is an error), so the slices
    /// never overlap.
    #[allow(clippy::mut_from_ref)] // the host hands each block out once per call
    pub fn block<T: Plain>(&self, block: MemBlock<T>) -> Result<&mut [T], AbiError> {
        // SAFETY: the handle's own `mem_block` (valid as in `map_image`), one block per call.
        unsafe { handed_block(block, |r, i| (self.vtable.mem_block())(self, r, i)) }
    }
    /// Allocate in process: the host always refuses (kernels allocate in init, TIOVX's rule);
    /// here so a module can see the rule enforced.
    pub fn alloc_bytes(&self, region: MemRegion, bytes: u64) -> Result<u32, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.mem_alloc())(self, region.code(), bytes) }.into_result()
    }
    /// What the object at `path` is.
    pub fn meta_at(&self, path: ParamPath) -> Result<ObjectMeta, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.object_meta())(self, path) }.into_result()
    }
    /// [`Self::map_image`] for the image at `path` (a pyramid level, an object-array item).
    pub fn map_image_at(&self, path: ParamPath, rect: Rect, write: bool) -> Result<MappedImage, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.map_image_at())(self, path, rect, write) }.into_result()
    }
    /// Map the memory of the fixed-layout object at `path`; unmap with
    /// [`Self::unmap_image`]`(token)` (the host unmaps whatever is left when process returns).
    /// The typed views ([`crate::views`]) are the safe way in.
    pub fn map_data(&self, path: ParamPath, write: bool) -> Result<MappedData, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.map_data())(self, path, write) }.into_result()
    }
    /// Read the scalar at `path`.
    pub fn read_scalar_at(&self, path: ParamPath) -> Result<ScalarBits, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.read_scalar_at())(self, path) }.into_result()
    }
    /// Write the scalar at `path`.
    pub fn write_scalar_at(&self, path: ParamPath, value: ScalarBits) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.write_scalar_at())(self, path, value) }.into_result()
    }
    /// The values of the threshold at `path`.
    pub fn threshold_values(&self, path: ParamPath) -> Result<ThresholdBits, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.threshold_read())(self, path) }.into_result()
    }
    /// Set every value of the threshold at `path` (binary value, range, true and false outputs).
    pub fn set_threshold_values(&self, path: ParamPath, values: ThresholdBits) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.threshold_write())(self, path, values) }.into_result()
    }
    /// Shape of the array at `path`.
    pub fn array_info_at(&self, path: ParamPath) -> Result<ArrayInfo, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.array_info_at())(self, path) }.into_result()
    }
    /// Append the items in `bytes` to the array at `path`.
    pub fn array_add_at(&self, path: ParamPath, bytes: &[u8]) -> Result<(), AbiError> {
        let item = self.array_info_at(path)?.item_size.max(1) as usize;
        if !bytes.len().is_multiple_of(item) {
            return Err(AbiError::new(
                Status::InvalidParameters,
                format!("{} bytes are not a whole number of {item}-byte items", bytes.len()),
            ));
        }
        // SAFETY: as in `map_image`; `bytes` holds `len / item` items of the array's item size.
        unsafe { (self.vtable.array_add_at())(self, path, bytes.as_ptr(), (bytes.len() / item) as u64) }.into_result()
    }
    /// Copy items of the array at `path` into `out`; returns how many were copied.
    pub fn array_read_at(&self, path: ParamPath, out: &mut [u8]) -> Result<u64, AbiError> {
        let item = self.array_info_at(path)?.item_size.max(1) as usize;
        // SAFETY: as in `map_image`; `out` has room for `len / item` items of the item size.
        unsafe { (self.vtable.array_read_at())(self, path, out.as_mut_ptr(), (out.len() / item) as u64) }.into_result()
    }
    /// Keep the first `count` items of the array at `path`.
    pub fn array_truncate_at(&self, path: ParamPath, count: u64) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.array_truncate_at())(self, path, count) }.into_result()
    }
}

/// An array's shape.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayInfo {
    /// Bytes per item.
    pub item_size: u64,
    /// Most items.
    pub capacity: u64,
    /// Items now.
    pub num_items: u64,
}

/// A node's local data: address (0 = none) and size.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalData {
    /// The address (0: none).
    pub ptr: usize,
    /// Bytes.
    pub size: u64,
}

/// Functions init and deinit may call (the spec's local-data rules apply). Each trusts the handle's
/// host pointer; call them through the [`Lifecycle`] methods.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = LifecycleVtableRef)))]
#[sabi(missing_field(panic))]
pub struct LifecycleVtable {
    /// The node's local data.
    pub local_data: unsafe extern "C" fn(l: &Lifecycle) -> LocalData,
    /// `VX_NODE_LOCAL_DATA_SIZE` (allowed when the kernel's local data size is 0).
    pub set_local_data_size: unsafe extern "C" fn(l: &Lifecycle, size: u64) -> AbiResult<()>,
    /// `VX_NODE_LOCAL_DATA_PTR` (memory the module owns and frees in deinit).
    pub set_local_data_ptr: unsafe extern "C" fn(l: &Lifecycle, ptr: usize) -> AbiResult<()>,
    /// `vxIsParameterAliased`.
    #[sabi(last_prefix_field)]
    pub is_aliased: unsafe extern "C" fn(l: &Lifecycle, a: u32, b: u32) -> bool,
    /// `tivxMemAlloc` (init only): `bytes` in region `region` ([`crate::wire::mem_region`]);
    /// returns the block's number in its region.
    pub mem_alloc: unsafe extern "C" fn(l: &Lifecycle, region: u32, bytes: u64) -> AbiResult<u32>,
    /// `tivxMemFree`.
    pub mem_free: unsafe extern "C" fn(l: &Lifecycle, region: u32, index: u32) -> AbiResult<()>,
    /// A persistent block (each once per call).
    pub mem_block: unsafe extern "C" fn(l: &Lifecycle, region: u32, index: u32) -> AbiResult<MemBlockInfo>,
    /// What parameter `index` is (as a validator sees it).
    pub param_meta: unsafe extern "C" fn(l: &Lifecycle, index: u32) -> AbiResult<ParamMeta>,
    /// What the object at `path` is (ABI 5).
    pub object_meta: unsafe extern "C" fn(l: &Lifecycle, path: ParamPath) -> AbiResult<ObjectMeta>,
}

impl Lifecycle {
    /// The node's local data.
    pub fn local_data(&self) -> LocalData {
        // SAFETY: only the host makes a Lifecycle (`from_raw`'s contract).
        unsafe { (self.vtable.local_data())(self) }
    }
    /// Set `VX_NODE_LOCAL_DATA_SIZE`.
    pub fn set_local_data_size(&self, size: u64) -> Result<(), AbiError> {
        // SAFETY: as in `local_data`.
        unsafe { (self.vtable.set_local_data_size())(self, size) }.into_result()
    }
    /// Set `VX_NODE_LOCAL_DATA_PTR` (0 clears it).
    pub fn set_local_data_ptr(&self, ptr: usize) -> Result<(), AbiError> {
        // SAFETY: as in `local_data`.
        unsafe { (self.vtable.set_local_data_ptr())(self, ptr) }.into_result()
    }
    /// `vxIsParameterAliased`.
    pub fn is_aliased(&self, a: u32, b: u32) -> bool {
        // SAFETY: as in `local_data`.
        unsafe { (self.vtable.is_aliased())(self, a, b) }
    }
    /// What parameter `index` is: type, image format and size, scalar type (e.g. to size a
    /// memory request by an image's width).
    pub fn param(&self, index: u32) -> Result<ParamMeta, AbiError> {
        // SAFETY: as in `local_data`.
        unsafe { (self.vtable.param_meta())(self, index) }.into_result()
    }
    /// What the object at `path` is (any type).
    pub fn meta_at(&self, path: ParamPath) -> Result<ObjectMeta, AbiError> {
        // SAFETY: as in `local_data`.
        unsafe { (self.vtable.object_meta())(self, path) }.into_result()
    }
    /// Allocate `count` elements of `T` in `region` (`tivxMemAlloc`; init only, refused in
    /// deinit). Persistent blocks live until [`free`](Self::free); scratch blocks are requests
    /// reachable in process.
    pub fn alloc<T: Plain>(&self, region: MemRegion, count: usize) -> Result<MemBlock<T>, AbiError> {
        let bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        // SAFETY: as in `local_data`.
        let index = unsafe { (self.vtable.mem_alloc())(self, region.code(), bytes) }.into_result()?;
        Ok(MemBlock::nth(region, index))
    }
    /// Free a block (`tivxMemFree`): what init allocated, deinit frees; persistent blocks left
    /// are freed by the host and reported as a leak with the node's name.
    pub fn free<T: Plain>(&self, block: MemBlock<T>) -> Result<(), AbiError> {
        // SAFETY: as in `local_data`.
        unsafe { (self.vtable.mem_free())(self, block.region().code(), block.index()) }.into_result()
    }
    /// The elements of a persistent block (each once per call).
    #[allow(clippy::mut_from_ref)] // the host hands each block out once per call
    pub fn block<T: Plain>(&self, block: MemBlock<T>) -> Result<&mut [T], AbiError> {
        // SAFETY: the handle's own `mem_block` (valid as in `local_data`), one block per call.
        unsafe { handed_block(block, |r, i| (self.vtable.mem_block())(self, r, i)) }
    }
}

/// Functions a control callback may call. Each trusts the handle's host pointer; call them
/// through the [`Controller`] methods.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ControllerVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ControllerVtable {
    /// The command code.
    pub command: unsafe extern "C" fn(c: &Controller) -> u32,
    /// How many references came with the command.
    pub num_refs: unsafe extern "C" fn(c: &Controller) -> u32,
    /// Reference `index` of the command, if it is a scalar: its value.
    pub ref_scalar: unsafe extern "C" fn(c: &Controller, index: u32) -> AbiResult<ScalarBits>,
    /// The node's local data (the module's state).
    pub local_data: unsafe extern "C" fn(c: &Controller) -> LocalData,
    /// A persistent block (each once per call).
    #[sabi(last_prefix_field)]
    pub mem_block: unsafe extern "C" fn(c: &Controller, region: u32, index: u32) -> AbiResult<MemBlockInfo>,
}

impl Controller {
    /// The command code the application sent.
    pub fn command(&self) -> u32 {
        // SAFETY: only the host makes a Controller (`from_raw`'s contract).
        unsafe { (self.vtable.command())(self) }
    }
    /// How many references came with the command.
    pub fn num_refs(&self) -> u32 {
        // SAFETY: as in `command`.
        unsafe { (self.vtable.num_refs())(self) }
    }
    /// The value of the command's reference `index`, a scalar.
    pub fn ref_scalar(&self, index: u32) -> Result<ScalarBits, AbiError> {
        // SAFETY: as in `command`.
        unsafe { (self.vtable.ref_scalar())(self, index) }.into_result()
    }
    /// The node's local data.
    pub fn local_data(&self) -> LocalData {
        // SAFETY: as in `command`.
        unsafe { (self.vtable.local_data())(self) }
    }
    /// The elements of a persistent block init allocated (each once per call).
    #[allow(clippy::mut_from_ref)] // the host hands each block out once per call
    pub fn block<T: Plain>(&self, block: MemBlock<T>) -> Result<&mut [T], AbiError> {
        // SAFETY: the handle's own `mem_block` (valid as in `command`), one block per call.
        unsafe { handed_block(block, |r, i| (self.vtable.mem_block())(self, r, i)) }
    }
}

/// A scalar value across the boundary.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarBits {
    /// A [`crate::wire::scalar_type`] code.
    pub type_code: u32,
    /// The value's bytes in native order, at the start.
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
    /// Registers the module's kernels.
    pub publish: extern "C" fn(host: &Host) -> AbiResult<()>,
    /// Removes them.
    #[sabi(last_prefix_field)]
    pub unpublish: extern "C" fn(host: &Host) -> AbiResult<()>,
}

impl RootModule for VxModuleRef {
    declare_root_module_statics! {VxModuleRef}
    const BASE_NAME: &'static str = "vx_module";
    const NAME: &'static str = "vx_module";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
