//! The host as a module sees it during `publish` / `unpublish` ([`Host`]): add kernels, their
//! parameters and attributes, finalize and remove them, describe them for tools, log.

use std::ffi::c_void;

use abi_stable::StableAbi;
use abi_stable::std_types::RStr;

use super::error::{AbiError, AbiResult};
use super::handle::handle;
use super::kernel::{FusionDesc, KernelAttr, KernelDesc};

handle!(
    /// The host as a module sees it during `publish` / `unpublish`.
    Host,
    HostVtableRef,
    *const c_void
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
    /// What the kernel offers fused execution (ABI v8): its row entry, rule and row count, and
    /// whether its views are bounded. Called before `finalize`, at most once per kernel. Optional,
    /// as above.
    #[sabi(missing_field(option))]
    pub declare_fusion: unsafe extern "C" fn(host: &Host, kernel: u64, desc: &FusionDesc) -> AbiResult<()>,
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
    /// Declare what the kernel offers fused execution (before [`finalize`](Self::finalize), once);
    /// nothing on hosts without the function.
    pub fn declare_fusion(&self, kernel: u64, desc: &FusionDesc) -> Result<(), AbiError> {
        match self.vtable.declare_fusion() {
            // SAFETY: as in `add_kernel`.
            Some(f) => unsafe { f(self, kernel, desc) }.into_result(),
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
