//! Kernel memory regions, TIOVX's `tivxMemAlloc` / `tivxMemFree` with `TIVX_MEM_EXTERNAL`
//! (persistent) and `TIVX_MEM_EXTERNAL_SCRATCH` (scratch), made safe:
//!
//! - A kernel allocates in **init only** (TIOVX's `create_func`): [`MemRegion::Persistent`] blocks
//!   live until deinit frees them and are accounted per node; [`MemRegion::Scratch`] blocks are
//!   requests laid out from offset 0 for each node, in the scratch arena of whichever executor runs
//!   the node — one arena per executor (the calling thread, each crew helper) per graph, sized at
//!   verify as the largest request of any node. Each node starting at offset 0 is TIOVX's
//!   `tivxMemResetScratchHeap` before each node, done by construction. Scratch contents are
//!   undefined at the start of every callback.
//! - Process reaches its blocks through [`KernelMemory`], each block at most once per callback, so
//!   the `&mut` slices it hands out never overlap. Process cannot allocate: the in-process API has
//!   no such method, and the module ABI's process-time allocation is refused with an error naming
//!   the node and the callback.
//! - Deinit frees persistent blocks; whatever it leaves is freed by the runtime and reported
//!   ([`MemoryLeak`](crate::MemoryLeak), with the node's name, and a `tracing` warning).

use std::marker::PhantomData;
use std::sync::Arc;

use crate::data::buffer::{BUFFER_ALIGN, RawBuf};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{ResourceKind, Resources};

/// Where a kernel's block lives (`tivx_mem_heap_region_e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemRegion {
    /// Lives from init to deinit, one per node (`TIVX_MEM_EXTERNAL`).
    Persistent,
    /// Valid during one callback, in the running executor's scratch arena
    /// (`TIVX_MEM_EXTERNAL_SCRATCH`).
    Scratch,
}

impl MemRegion {
    fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for MemRegion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MemRegion::Persistent => "persistent",
            MemRegion::Scratch => "scratch",
        })
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Element types of kernel memory blocks: plain numbers, valid for any bit pattern.
pub trait Plain: sealed::Sealed + Copy + Send + 'static {}
macro_rules! plain {
    ($($t:ty),*) => {$(impl sealed::Sealed for $t {} impl Plain for $t {})*};
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// A block a kernel allocated in init: `len` elements of `T` in `region`. Copy it into the node's
/// state (or recompute it: blocks are numbered per region in allocation order, see
/// [`MemBlock::nth`]).
pub struct MemBlock<T: Plain> {
    region: MemRegion,
    index: u32,
    _t: PhantomData<fn() -> T>,
}

impl<T: Plain> Clone for MemBlock<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Plain> Copy for MemBlock<T> {}

impl<T: Plain> std::fmt::Debug for MemBlock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemBlock<{}>({} #{})", std::any::type_name::<T>(), self.region, self.index)
    }
}

impl<T: Plain> MemBlock<T> {
    /// The `index`-th block init allocated in `region` (0 = the first).
    pub fn nth(region: MemRegion, index: u32) -> Self {
        MemBlock { region, index, _t: PhantomData }
    }
    /// The region.
    pub fn region(&self) -> MemRegion {
        self.region
    }
    /// The block's number in its region.
    pub fn index(&self) -> u32 {
        self.index
    }
}

/// Most blocks per region per node.
pub const MAX_BLOCKS: usize = 64;

/// A node's kernel memory: its persistent blocks and its scratch layout.
#[derive(Default)]
pub(crate) struct NodeMemory {
    persistent: Vec<Option<RawBuf>>,
    /// (offset, bytes) in the executor's scratch arena; `None` once freed.
    scratch: Vec<Option<(usize, usize)>>,
    /// The end of the node's scratch layout: what its executor's arena must hold.
    pub(crate) scratch_bytes: usize,
}

impl NodeMemory {
    /// Allocate `bytes` in `region` (init): returns the block's number.
    pub(crate) fn alloc(&mut self, region: MemRegion, bytes: usize, resources: &Arc<Resources>) -> Result<u32> {
        let count = match region {
            MemRegion::Persistent => self.persistent.len(),
            MemRegion::Scratch => self.scratch.len(),
        };
        if count >= MAX_BLOCKS {
            return Err(Error::new(ErrorKind::NoResources, format!("too many {region} blocks for one node"))
                .expected_found(format!("at most {MAX_BLOCKS}"), count + 1));
        }
        match region {
            MemRegion::Persistent => {
                self.persistent.push(Some(RawBuf::counted(bytes, resources, ResourceKind::PersistentBytes)?));
            }
            MemRegion::Scratch => {
                let offset = self.scratch_bytes.next_multiple_of(BUFFER_ALIGN);
                let end = offset.checked_add(bytes).ok_or_else(|| {
                    Error::new(ErrorKind::NoMemory, format!("a scratch request of {bytes} bytes is too large"))
                })?;
                self.scratch.push(Some((offset, bytes)));
                self.scratch_bytes = end;
            }
        }
        Ok(count as u32)
    }

    /// Free block `index` of `region` (deinit, or init giving back what it took).
    pub(crate) fn free(&mut self, region: MemRegion, index: u32) -> Result<()> {
        let gone = match region {
            MemRegion::Persistent => self.persistent.get_mut(index as usize).and_then(Option::take).is_none(),
            MemRegion::Scratch => self.scratch.get_mut(index as usize).and_then(Option::take).is_none(),
        };
        if gone {
            return Err(Error::new(ErrorKind::InvalidParameters, format!("no such {region} block to free"))
                .found(format!("block #{index}")));
        }
        Ok(())
    }

    /// Bytes of persistent memory held.
    pub(crate) fn persistent_bytes(&self) -> usize {
        self.persistent.iter().flatten().map(RawBuf::len).sum()
    }

    /// After deinit: free what is left; returns (blocks, bytes) of persistent memory that leaked.
    pub(crate) fn reclaim(&mut self) -> Option<(usize, usize)> {
        let left: Vec<RawBuf> = self.persistent.drain(..).flatten().collect();
        self.scratch.clear();
        self.scratch_bytes = 0;
        (!left.is_empty()).then(|| (left.len(), left.iter().map(RawBuf::len).sum()))
    }

    /// The view process gets, over `scratch` (this executor's arena, at least `scratch_bytes`).
    pub(crate) fn view<'a>(&'a mut self, scratch: Option<&'a mut [u8]>) -> KernelMemory<'a> {
        let (base, len) = scratch.map_or((std::ptr::null_mut(), 0), |s| (s.as_mut_ptr(), s.len()));
        KernelMemory { memory: self, scratch: base, scratch_len: len, taken: [0; 2], _arena: PhantomData }
    }
}

/// A callback's access to its node's blocks: each block at most once per callback, so the slices
/// never overlap.
pub struct KernelMemory<'a> {
    memory: &'a mut NodeMemory,
    scratch: *mut u8,
    scratch_len: usize,
    /// One bit per block handed out, per region.
    taken: [u64; 2],
    _arena: PhantomData<&'a mut [u8]>,
}

impl<'a> KernelMemory<'a> {
    /// The elements of `block`. Each block once per callback (a second time is an error).
    pub fn get<T: Plain>(&mut self, block: MemBlock<T>) -> Result<&'a mut [T]> {
        let (region, index) = (block.region, block.index as usize);
        let bit = 1u64.checked_shl(block.index).unwrap_or(0);
        if self.taken[region.index()] & bit != 0 {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                format!("{region} block #{index} is already in use in this callback"),
            ));
        }
        let missing = || Error::new(ErrorKind::InvalidParameters, format!("no {region} block #{index}"));
        let (ptr, bytes) = match region {
            MemRegion::Persistent => {
                let b = self.memory.persistent.get(index).and_then(Option::as_ref).ok_or_else(missing)?;
                (b.as_ptr(), b.len())
            }
            MemRegion::Scratch => {
                let (offset, bytes) = self.memory.scratch.get(index).copied().flatten().ok_or_else(missing)?;
                if self.scratch.is_null() || offset + bytes > self.scratch_len {
                    return Err(Error::new(
                        ErrorKind::NoMemory,
                        "the executor's scratch arena is smaller than the node's requests (verify the graph again)",
                    ));
                }
                // SAFETY: offset + bytes <= scratch_len, checked just above.
                (unsafe { self.scratch.add(offset) }, bytes)
            }
        };
        self.taken[region.index()] |= bit;
        let n = bytes / std::mem::size_of::<T>();
        // SAFETY: `ptr` is 64-byte aligned (blocks and scratch offsets are), points to `bytes`
        // initialised bytes (blocks are zeroed when allocated) valid for `'a` (persistent blocks
        // belong to the node, borrowed for 'a; the arena is borrowed for 'a), every bit pattern is a
        // valid `T` (`Plain`), and the bit set above hands each block out once, so no two slices
        // overlap (blocks are disjoint: separate allocations, or disjoint scratch ranges).
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr as *mut T, n) })
    }
}
