//! The host's side of one user-kernel process call ([`Processor`]): map images and the memory of
//! fixed-layout objects, read and write scalars, thresholds and arrays, reach local data and
//! kernel memory.

use std::ffi::c_void;

use abi_stable::StableAbi;

use super::error::{AbiError, AbiResult};
use super::handle::{LocalData, MemBlockInfo, handed_block, handle};
use crate::geometry::Rect;
use crate::memory::{MemBlock, MemRegion, Plain};
use crate::object_meta::{MappedData, ObjectMeta, ParamPath, ScalarBits, ThresholdBits};
use crate::status::Status;

handle!(
    /// The host's side of one user-kernel process call.
    Processor,
    ProcessorVtableRef,
    *mut c_void
);

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

/// Functions a user kernel's process may call to reach its parameters. Each trusts the handle's
/// host pointer; call them through the [`Processor`] methods. One form per function: objects are
/// named by [`ParamPath`] (a parameter is `ParamPath::param(index)`), since ABI 6.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ProcessorVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ProcessorVtable {
    /// Map `rect` (image coordinates; an empty rectangle means the whole image) of plane 0 of the
    /// image at `path` (a parameter, a pyramid level, an object-array item) for reading or writing.
    pub map_image:
        unsafe extern "C" fn(p: &Processor, path: ParamPath, rect: Rect, write: bool) -> AbiResult<MappedImage>,
    /// Map the memory of the fixed-layout object at `path` (matrix, convolution, LUT,
    /// distribution, remap, tensor, user data object); unmap with `unmap_image`'s token.
    pub map_data: unsafe extern "C" fn(p: &Processor, path: ParamPath, write: bool) -> AbiResult<MappedData>,
    /// Unmap what `map_image` or `map_data` mapped.
    pub unmap_image: unsafe extern "C" fn(p: &Processor, token: u64),
    /// What the object at `path` is.
    pub object_meta: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ObjectMeta>,
    /// The value bytes (native order, at the start) and type code of the scalar at `path`.
    pub read_scalar: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ScalarBits>,
    /// Write the scalar at `path`.
    pub write_scalar: unsafe extern "C" fn(p: &Processor, path: ParamPath, value: ScalarBits) -> AbiResult<()>,
    /// The values of the threshold at `path`.
    pub threshold_read: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ThresholdBits>,
    /// Set every value of the threshold at `path`: binary value, range and outputs.
    pub threshold_write: unsafe extern "C" fn(p: &Processor, path: ParamPath, values: ThresholdBits) -> AbiResult<()>,
    /// Item size, capacity and item count of the array at `path`.
    pub array_info: unsafe extern "C" fn(p: &Processor, path: ParamPath) -> AbiResult<ArrayInfo>,
    /// Append `count` items (item-size bytes each) from `items` to the array at `path`.
    pub array_add: unsafe extern "C" fn(p: &Processor, path: ParamPath, items: *const u8, count: u64) -> AbiResult<()>,
    /// Copy up to `capacity` items of the array at `path` into `out`; returns how many were copied.
    pub array_read: unsafe extern "C" fn(p: &Processor, path: ParamPath, out: *mut u8, capacity: u64) -> AbiResult<u64>,
    /// Keep the first `count` items of the array at `path`.
    pub array_truncate: unsafe extern "C" fn(p: &Processor, path: ParamPath, count: u64) -> AbiResult<()>,
    /// The node's local data (`VX_NODE_LOCAL_DATA_PTR` / `_SIZE`).
    pub local_data: unsafe extern "C" fn(p: &Processor) -> LocalData,
    /// Whether parameter `index` is set (an optional one may be unset).
    pub param_present: unsafe extern "C" fn(p: &Processor, index: u32) -> bool,
    /// `vxIsParameterAliased`.
    pub is_aliased: unsafe extern "C" fn(p: &Processor, a: u32, b: u32) -> bool,
    /// Block `index` of region `region` ([`crate::wire::mem_region`]): persistent, or scratch in
    /// the running executor's arena. Each block once per call.
    pub mem_block: unsafe extern "C" fn(p: &Processor, region: u32, index: u32) -> AbiResult<MemBlockInfo>,
    /// Allocation in process: always refused (kernels allocate in init), with the reason.
    #[sabi(last_prefix_field)]
    pub mem_alloc: unsafe extern "C" fn(p: &Processor, region: u32, bytes: u64) -> AbiResult<u32>,
}

impl Processor {
    /// Map `rect` (empty: the whole image) of plane 0 of the image at `path` (parameter `index` is
    /// `ParamPath::param(index)`; a pyramid level, an object-array item); unmap with
    /// [`Self::unmap_image`] (the host unmaps whatever is left when process returns).
    pub fn map_image(&self, path: ParamPath, rect: Rect, write: bool) -> Result<MappedImage, AbiError> {
        // SAFETY: only the host makes a Processor (`from_raw`'s contract).
        unsafe { (self.vtable.map_image())(self, path, rect, write) }.into_result()
    }
    /// Map the memory of the fixed-layout object at `path`; unmap with
    /// [`Self::unmap_image`]`(token)` (the host unmaps whatever is left when process returns).
    /// The typed views ([`crate::views`]) are the safe way in.
    pub fn map_data(&self, path: ParamPath, write: bool) -> Result<MappedData, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.map_data())(self, path, write) }.into_result()
    }
    /// Unmap a patch (or mapped data) by its token.
    pub fn unmap_image(&self, token: u64) {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.unmap_image())(self, token) }
    }
    /// What the object at `path` is.
    pub fn meta_at(&self, path: ParamPath) -> Result<ObjectMeta, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.object_meta())(self, path) }.into_result()
    }
    /// Read the scalar at `path`.
    pub fn read_scalar(&self, path: ParamPath) -> Result<ScalarBits, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.read_scalar())(self, path) }.into_result()
    }
    /// Write the scalar at `path`.
    pub fn write_scalar(&self, path: ParamPath, value: ScalarBits) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.write_scalar())(self, path, value) }.into_result()
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
    pub fn array_info(&self, path: ParamPath) -> Result<ArrayInfo, AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.array_info())(self, path) }.into_result()
    }
    /// Append the items in `bytes` (a whole number of items of the array's item size) to the array
    /// at `path`.
    pub fn array_add(&self, path: ParamPath, bytes: &[u8]) -> Result<(), AbiError> {
        let item = self.array_info(path)?.item_size.max(1) as usize;
        if !bytes.len().is_multiple_of(item) {
            return Err(AbiError::new(
                Status::InvalidParameters,
                format!("{} bytes are not a whole number of {item}-byte items", bytes.len()),
            ));
        }
        // SAFETY: as in `map_image`; `bytes` holds `len / item` items of the array's item size.
        unsafe { (self.vtable.array_add())(self, path, bytes.as_ptr(), (bytes.len() / item) as u64) }.into_result()
    }
    /// Copy items of the array at `path` into `out` (as many whole items as fit); returns how many
    /// were copied.
    pub fn array_read(&self, path: ParamPath, out: &mut [u8]) -> Result<u64, AbiError> {
        let item = self.array_info(path)?.item_size.max(1) as usize;
        // SAFETY: as in `map_image`; `out` has room for `len / item` items of the item size.
        unsafe { (self.vtable.array_read())(self, path, out.as_mut_ptr(), (out.len() / item) as u64) }.into_result()
    }
    /// Keep the first `count` items of the array at `path`.
    pub fn array_truncate(&self, path: ParamPath, count: u64) -> Result<(), AbiError> {
        // SAFETY: as in `map_image`.
        unsafe { (self.vtable.array_truncate())(self, path, count) }.into_result()
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
}
