//! The module ABI (version 8): what a kernel module exports and what the host passes it — the wire
//! contract only; the module-side glue is in [`crate::module_api`].
//!
//! A module exports one root descriptor ([`VxModule`], an abi_stable prefix type with an explicit
//! [`ABI_VERSION`]) whose `publish` / `unpublish` entry points receive a [`Host`] handle through
//! which the module adds kernels, parameters and attributes, finalizes and removes kernels. Kernel
//! functions cross the boundary as `extern "C"` pointers: tiling functions with the
//! `vx_tiling_kernel_f` shape ([`TilingFnPtr`]), row entries of row kernels over tables of row
//! pointers ([`RowFnPtr`], declared with [`FusionDesc`]), validators through a [`Validator`] handle,
//! user-kernel process functions through a [`Processor`] handle, init/deinit through a
//! [`Lifecycle`] handle. Every call returns an [`AbiResult`]: a status plus a message the receiver
//! copies. Codes cross as the integers of [`crate::wire`].
//!
//! **Soundness by construction.** A handle is a vtable plus an opaque pointer to host state, valid
//! for one call on one thread: handles are neither `Send` nor `Sync` (abi_stable's
//! [`UnsyncUnsend`](abi_stable::marker_type::UnsyncUnsend)), their fields are private, and only the host makes them
//! ([`Host::from_raw`] and friends are `unsafe`, with the contract that the pointer is what the
//! vtable expects). The vtable functions trust that pointer, so their types are
//! `unsafe extern "C" fn`; the handles' safe methods call them, relying on that contract. Entry
//! points that trust raw pointers from their caller ([`TilingFnPtr`], array items) are
//! `unsafe extern "C" fn` too. Neither side lets a panic cross: the module's generated entry points
//! catch it inside the module, and every host-side `extern "C"` function catches it inside the host.
//!
//! The host keeps nothing from module memory beyond the module's lifetime: it copies names and
//! messages, and keeps function pointers only next to a handle that keeps the library mapped.
//!
//! One file per concern, like the host's side (`vx-core/src/module/host/`): `root.rs` (the version
//! and the root descriptor a module exports), `error.rs` (what every call returns), `kernel.rs`
//! (the kernel descriptors and the function pointers they carry), `host.rs` (the handle `publish`
//! and `unpublish` receive), `validator.rs`, `processor.rs`, `lifecycle.rs` (init / deinit) and
//! `controller.rs` (commands), each a handle and its vtable; `handle.rs` holds what every handle
//! shares. Everything is re-exported here: `vx_plugin_abi::module_abi::{AbiError, Processor, …}`.

mod controller;
mod error;
mod handle;
mod host;
mod kernel;
mod lifecycle;
mod processor;
mod root;
mod validator;

pub use controller::{Controller, ControllerVtable, ControllerVtableRef};
pub use error::{AbiError, AbiResult};
pub use handle::{LocalData, MemBlockInfo};
pub use host::{Host, HostVtable, HostVtableRef, LogFnPtr};
pub use kernel::{
    ControlFnPtr, FusionDesc, KernelAttr, KernelDesc, LifecycleFnPtr, ProcessFnPtr, RowFnPtr, RowSinkDesc,
    RowSourceDesc, TargetDesc, TilingFnPtr, ValidateFnPtr,
};
pub use lifecycle::{Lifecycle, LifecycleVtable, LifecycleVtableRef};
pub use processor::{ArrayInfo, MappedImage, Processor, ProcessorVtable, ProcessorVtableRef};
pub use root::{ABI_VERSION, ABI_VERSION_SYMBOL, BUILD_DEBUG_SYMBOL, EntryFnPtr, VxModule, VxModuleRef};
pub use validator::{ParamMeta, ValidRectFnPtr, Validator, ValidatorVtable, ValidatorVtableRef};

/// A scalar value across the boundary (defined with the other wire data in [`crate::object_meta`]).
pub use crate::object_meta::ScalarBits;
