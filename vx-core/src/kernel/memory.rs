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
//! - Process reaches its blocks with `ProcessContext::block`, each block at most once per callback
//!   ([`Taken`]), so the `&mut` slices it hands out never overlap; init and deinit with
//!   `LifecycleContext::block`, one at a time (the slice borrows the context). Process cannot allocate: the in-process API has
//!   no such method, and the module ABI's process-time allocation is refused with an error naming
//!   the node and the callback.
//! - Deinit frees persistent blocks; whatever it leaves is freed by the runtime and reported
//!   ([`MemoryLeak`](crate::MemoryLeak), with the node's name, and a `tracing` warning).

use std::sync::Arc;

pub use vx_plugin_abi::memory::{MemBlock, MemRegion, Plain};

use crate::data::buffer::{BUFFER_ALIGN, RawBuf};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{ResourceKind, Resources};

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
    pub(super) fn alloc(&mut self, region: MemRegion, bytes: usize, resources: &Arc<Resources>) -> Result<u32> {
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

    /// Where block `index` of `region` is: (address, bytes). Scratch blocks are in `scratch`
    /// (the executor's arena: base, length); none outside process.
    pub(crate) fn locate(&self, region: MemRegion, index: u32, scratch: (*mut u8, usize)) -> Result<(*mut u8, usize)> {
        let missing = || Error::new(ErrorKind::InvalidParameters, format!("no {region} block #{index}"));
        match region {
            MemRegion::Persistent => {
                let b = self.persistent.get(index as usize).and_then(Option::as_ref).ok_or_else(missing)?;
                Ok((b.as_ptr(), b.len()))
            }
            MemRegion::Scratch => {
                let (offset, bytes) = self.scratch.get(index as usize).copied().flatten().ok_or_else(missing)?;
                if scratch.0.is_null() || offset + bytes > scratch.1 {
                    return Err(Error::new(
                        ErrorKind::NotSupported,
                        "scratch blocks are reachable in process only, in the executor's arena",
                    ));
                }
                // SAFETY: offset + bytes <= the arena's length, checked just above.
                Ok((unsafe { scratch.0.add(offset) }, bytes))
            }
        }
    }
}

/// `bytes` bytes at `ptr` as a slice of `T`.
///
/// # Safety
///
/// `ptr..ptr + bytes` must be a range [`NodeMemory::locate`] returned (64-byte aligned, initialised:
/// blocks are zeroed when allocated), valid for `'a`, and no other reference may cover it for `'a`.
/// Every bit pattern is a valid `T` (`Plain`).
pub(super) unsafe fn block_slice<'a, T: Plain>(ptr: *mut u8, bytes: usize) -> &'a mut [T] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(ptr as *mut T, bytes / std::mem::size_of::<T>()) }
}

/// Which blocks a callback has been handed (one bit per block, per region).
#[derive(Default)]
pub(crate) struct Taken([u64; 2]);

impl Taken {
    /// Whether block `index` of `region` was handed out.
    pub(crate) fn is_taken(&self, region: MemRegion, index: u32) -> bool {
        self.0[region.index()] & 1u64.checked_shl(index).unwrap_or(0) != 0
    }

    /// Mark block `index` of `region` handed out; an error if it already was.
    pub(crate) fn take(&mut self, region: MemRegion, index: u32) -> Result<()> {
        let bit = 1u64.checked_shl(index).unwrap_or(0);
        if self.0[region.index()] & bit != 0 {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                format!("{region} block #{index} is already in use in this callback"),
            ));
        }
        self.0[region.index()] |= bit;
        Ok(())
    }
}
