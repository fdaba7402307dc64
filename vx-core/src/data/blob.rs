//! Fixed-layout storage shared by matrices, convolutions, LUTs, distributions, remaps and tensors:
//! a [`SharedBuffer`] whose byte length is known at creation (at verify for a virtual tensor), read
//! and written as typed element ranges or mapped whole as a typed slice ([`MappedSlice`],
//! [`MappedSliceMut`]). Allocated at the first copy or map, or at verify (TIOVX's rule).

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::data::buffer::{SharedBuffer, WHOLE};
use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};

pub(super) struct Blob {
    buffer: SharedBuffer,
    len: AtomicUsize,
}

/// The items of `bytes` (a whole number of `T`, 64-byte aligned: every data buffer is).
fn items<T: ArrayItem>(bytes: &[u8]) -> &[T] {
    debug_assert!(
        bytes.len().is_multiple_of(size_of::<T>()) && (bytes.as_ptr() as usize).is_multiple_of(align_of::<T>())
    );
    // SAFETY: T is sealed plain old data (any bit pattern valid); the buffer is aligned to 64 bytes
    // (more than any item's alignment) and its length is a whole number of items (checked by the
    // callers' layouts); the borrow is tied to `bytes`.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size_of::<T>()) }
}

fn items_mut<T: ArrayItem>(bytes: &mut [u8]) -> &mut [T] {
    debug_assert!(
        bytes.len().is_multiple_of(size_of::<T>()) && (bytes.as_ptr() as usize).is_multiple_of(align_of::<T>())
    );
    // SAFETY: as in `items`; the exclusive borrow of `bytes` makes the item slice exclusive.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), bytes.len() / size_of::<T>()) }
}

/// Refuse element type `T` on an object whose elements are `want`.
pub(super) fn check_element<T: ArrayItem>(header: &ObjectHeader, want: ArrayItemType) -> Result<()> {
    if T::ITEM_TYPE != want {
        return Err(Error::new(ErrorKind::InvalidType, "the element type is not the object's")
            .on_object(&header.name())
            .expected_found(want, T::ITEM_TYPE));
    }
    Ok(())
}

impl Blob {
    pub(super) fn new(len: usize) -> Blob {
        Blob { buffer: SharedBuffer::new(), len: AtomicUsize::new(len) }
    }

    /// Bytes the object needs (0: a virtual tensor not completed yet).
    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// A virtual object completed at verify with another size (reallocated at the next need).
    pub(super) fn set_len(&self, len: usize) {
        self.len.store(len, Ordering::Release);
    }

    pub(super) fn is_allocated(&self) -> bool {
        self.buffer.is_allocated()
    }

    /// The memory plan's view of the blob: its buffer and length (0: not known yet).
    pub(super) fn plan_storage(&self, f: &mut dyn FnMut(crate::data::buffer::PlanStorage<'_>)) {
        f(crate::data::buffer::PlanStorage::new(&self.buffer, Some(self.len())))
    }

    pub(super) fn ensure(&self, header: &ObjectHeader) -> Result<()> {
        let len = self.len();
        if len == 0 {
            return Err(Error::new(ErrorKind::NotAllocated, "the virtual object's meta data is not known yet")
                .on_object(&header.name()));
        }
        self.buffer.ensure(len, &header.ctx.resources).map_err(|e| e.on_object(&header.name()))
    }

    pub(super) fn lease(&self, header: &ObjectHeader, access: Access, write: bool) -> Result<(*mut u8, usize, usize)> {
        header.check_access(access)?;
        self.ensure(header)?;
        let lease = self.buffer.acquire(WHOLE, write).map_err(|e| e.on_object(&header.name()))?;
        Ok((lease.ptr, lease.len, lease.slot))
    }

    /// Give back a lease taken with [`lease`](Self::lease).
    pub(super) fn release(&self, slot: usize) {
        self.buffer.release(slot);
    }

    /// Run `f` over the bytes, mapped for reading.
    pub(super) fn read<R>(&self, header: &ObjectHeader, access: Access, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let (ptr, len, slot) = self.lease(header, access, false)?;
        // SAFETY: the read lease keeps writers away until released below; ptr/len are the buffer's.
        let r = f(unsafe { std::slice::from_raw_parts(ptr, len) });
        self.buffer.release(slot);
        Ok(r)
    }

    /// Run `f` over the bytes, mapped for writing.
    pub(super) fn write<R>(&self, header: &ObjectHeader, access: Access, f: impl FnOnce(&mut [u8]) -> R) -> Result<R> {
        let (ptr, len, slot) = self.lease(header, access, true)?;
        // SAFETY: the write lease is the only mapping until released below.
        let r = f(unsafe { std::slice::from_raw_parts_mut(ptr, len) });
        self.buffer.release(slot);
        Ok(r)
    }

    fn check_range(header: &ObjectHeader, first: usize, n: usize, total: usize) -> Result<()> {
        if first.checked_add(n).is_none_or(|end| end > total) {
            return Err(Error::new(ErrorKind::InvalidParameters, "the element range lies outside the object")
                .on_object(&header.name())
                .expected_found(format!("first + count <= {total}"), format!("{first} + {n}")));
        }
        Ok(())
    }

    /// Copy elements `first..first + out.len()` out.
    pub(super) fn copy_out<T: ArrayItem>(
        &self,
        header: &ObjectHeader,
        access: Access,
        first: usize,
        out: &mut [T],
    ) -> Result<()> {
        Blob::check_range(header, first, out.len(), self.len() / size_of::<T>())?;
        self.read(header, access, |b| out.copy_from_slice(&items::<T>(b)[first..first + out.len()]))
    }

    /// Copy `src` into elements `first..first + src.len()`.
    pub(super) fn copy_in<T: ArrayItem>(
        &self,
        header: &ObjectHeader,
        access: Access,
        first: usize,
        src: &[T],
    ) -> Result<()> {
        Blob::check_range(header, first, src.len(), self.len() / size_of::<T>())?;
        self.write(header, access, |b| items_mut::<T>(b)[first..first + src.len()].copy_from_slice(src))
    }

    fn check_whole(header: &ObjectHeader, n: usize, total: usize) -> Result<()> {
        if n != total {
            return Err(Error::new(ErrorKind::InvalidParameters, "the object is copied whole")
                .on_object(&header.name())
                .expected_found(format!("{total} elements"), n));
        }
        Ok(())
    }

    /// Copy every element out (`out` holds exactly as many).
    pub(super) fn copy_out_whole<T: ArrayItem>(
        &self,
        header: &ObjectHeader,
        access: Access,
        out: &mut [T],
    ) -> Result<()> {
        Blob::check_whole(header, out.len(), self.len() / size_of::<T>())?;
        self.copy_out(header, access, 0, out)
    }

    /// Copy every element in (`src` holds exactly as many).
    pub(super) fn copy_in_whole<T: ArrayItem>(&self, header: &ObjectHeader, access: Access, src: &[T]) -> Result<()> {
        Blob::check_whole(header, src.len(), self.len() / size_of::<T>())?;
        self.copy_in(header, access, 0, src)
    }

    /// Map the bytes for a module's kernel (the module ABI's `map_data`): a lease held until the
    /// [`RawLease`] drops.
    pub(super) fn lease_raw(&self, header: &ObjectHeader, access: Access, write: bool) -> Result<RawLease<'_>> {
        let (ptr, len, slot) = self.lease(header, access, write)?;
        Ok(RawLease { buffer: &self.buffer, ptr, len, slot })
    }

    /// Map every element for reading.
    pub(super) fn map<T: ArrayItem>(&self, header: &ObjectHeader, access: Access) -> Result<MappedSlice<'_, T>> {
        let (ptr, len, slot) = self.lease(header, access, false)?;
        Ok(MappedSlice { buffer: &self.buffer, ptr: ptr.cast(), len: len / size_of::<T>(), slot })
    }

    /// Map every element for writing.
    pub(super) fn map_mut<T: ArrayItem>(&self, header: &ObjectHeader, access: Access) -> Result<MappedSliceMut<'_, T>> {
        let (ptr, len, slot) = self.lease(header, access, true)?;
        Ok(MappedSliceMut { buffer: &self.buffer, ptr: ptr.cast(), len: len / size_of::<T>(), slot, _t: PhantomData })
    }
}

/// An object's bytes mapped for a binding whose mapping outlives any Rust borrow (the C API's
/// `vxMapLUT`, `vxMapArrayRange`, `vxMapTensorPatch`, …): it keeps the object alive and owns its
/// lease, released when it drops. While it lives, the [`len`](Self::len) bytes at
/// [`ptr`](Self::ptr) are this mapping's (exclusively when written). Made by the `map_bytes` of
/// the blob kinds ([`Handle::map_bytes`](crate::Handle::map_bytes)), [`Array`](crate::Array) and
/// [`Tensor`](crate::Tensor).
pub struct BytesMap {
    ptr: *mut u8,
    len: usize,
    write: bool,
    /// Gives the lease back (and drops the handle keeping the object alive).
    release: Option<Box<dyn FnOnce() + Send + Sync>>,
}

// SAFETY: the mapping is a lease on an object's buffer (kept alive and reserved for it by the
// handle the release closure owns, itself Send + Sync) and a pointer into that buffer; nothing in
// it is tied to the thread that mapped it.
unsafe impl Send for BytesMap {}
// SAFETY: `&BytesMap` only reads the plain fields; writing through `ptr` is the holder's
// business, as with any raw pointer.
unsafe impl Sync for BytesMap {}

impl BytesMap {
    /// A mapping of `len` bytes at `ptr`; `release` gives its lease back.
    pub(super) fn new(
        ptr: *mut u8,
        len: usize,
        write: bool,
        release: impl FnOnce() + Send + Sync + 'static,
    ) -> BytesMap {
        BytesMap { ptr, len, write, release: Some(Box::new(release)) }
    }
    /// The first byte mapped.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    /// How many bytes are mapped.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when no byte is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Mapped for writing.
    pub fn is_write(&self) -> bool {
        self.write
    }
}

impl std::fmt::Debug for BytesMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BytesMap({} bytes at {:p}, write: {})", self.len, self.ptr, self.write)
    }
}

impl Drop for BytesMap {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
    }
}

/// An object's bytes leased for reading or writing (as asked) until dropped: what a module's
/// process maps through the ABI. The pointer is only handed across the boundary, never
/// dereferenced here.
/// Bytes mapped for a module's kernel: unmapped when dropped.
pub(crate) struct RawLease<'a> {
    buffer: &'a SharedBuffer,
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
    slot: usize,
}

impl Drop for RawLease<'_> {
    fn drop(&mut self) {
        self.buffer.release(self.slot);
    }
}

/// The elements of an object mapped for reading (`vxMapLUT`, `vxMapDistribution`, … with
/// `VX_READ_ONLY`); unmapped when dropped.
pub struct MappedSlice<'a, T> {
    buffer: &'a SharedBuffer,
    ptr: *const T,
    len: usize,
    slot: usize,
}

impl<T> Deref for MappedSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: ptr/len describe the object's buffer (aligned, whole items), kept alive by the
        // borrow of the object and kept from writers by the read lease until drop.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for MappedSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for MappedSliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Drop for MappedSlice<'_, T> {
    fn drop(&mut self) {
        self.buffer.release(self.slot);
    }
}

/// The elements of an object mapped for writing (`VX_WRITE_ONLY` / `VX_READ_AND_WRITE`); unmapped
/// when dropped.
pub struct MappedSliceMut<'a, T> {
    buffer: &'a SharedBuffer,
    ptr: *mut T,
    len: usize,
    slot: usize,
    _t: PhantomData<&'a mut [T]>,
}

impl<T> Deref for MappedSliceMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: as for MappedSlice; the write lease excludes every other mapping.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> DerefMut for MappedSliceMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: the write lease makes this the only mapping; &mut self makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for MappedSliceMut<'_, T> {
    fn drop(&mut self) {
        self.buffer.release(self.slot);
    }
}
