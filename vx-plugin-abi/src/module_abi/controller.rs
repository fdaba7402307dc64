//! The host's side of one control call ([`Controller`]): a command sent to a node, its references,
//! the node's state.

use std::ffi::c_void;

use abi_stable::StableAbi;

use super::error::{AbiError, AbiResult};
use super::handle::{LocalData, MemBlockInfo, handed_block, handle};
use crate::memory::{MemBlock, Plain};
use crate::object_meta::ScalarBits;

handle!(
    /// The host's side of one control call (a command sent to a node).
    Controller,
    ControllerVtableRef,
    *mut c_void
);

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
