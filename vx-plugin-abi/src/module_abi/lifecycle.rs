//! The host's side of one init or deinit call ([`Lifecycle`]): local data, parameter metas, kernel
//! memory (allocated in init only).

use std::ffi::c_void;

use abi_stable::StableAbi;

use super::error::{AbiError, AbiResult};
use super::handle::{LocalData, MemBlockInfo, handed_block, handle};
use super::validator::ParamMeta;
use crate::memory::{MemBlock, MemRegion, Plain};
use crate::object_meta::{ObjectMeta, ParamPath};

handle!(
    /// The host's side of one init or deinit call.
    Lifecycle,
    LifecycleVtableRef,
    *mut c_void
);

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
        self.meta_at(ParamPath::param(index)).map(|m| ParamMeta::of(&m))
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
