//! Kernel memory regions as host and modules name them: the region ([`MemRegion`], TIOVX's
//! `tivx_mem_heap_region_e`), typed block handles ([`MemBlock`]) and the element types blocks may
//! hold ([`Plain`]). Kernels allocate in init only; process reaches its blocks (in-process through
//! `vx::ProcessContext::memory`, in a module through
//! [`Processor::block`](crate::module_abi::Processor::block)).

use std::marker::PhantomData;

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
    /// 0 for persistent, 1 for scratch (for per-region tables).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The region's [`crate::wire::mem_region`] code.
    pub fn code(self) -> u32 {
        match self {
            MemRegion::Persistent => crate::wire::mem_region::PERSISTENT,
            MemRegion::Scratch => crate::wire::mem_region::SCRATCH,
        }
    }

    /// The region of a [`crate::wire::mem_region`] code.
    pub fn from_code(code: u32) -> Option<MemRegion> {
        match code {
            crate::wire::mem_region::PERSISTENT => Some(MemRegion::Persistent),
            crate::wire::mem_region::SCRATCH => Some(MemRegion::Scratch),
            _ => None,
        }
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

/// Element types of kernel memory blocks and mapped objects: plain numbers (and `[f32; 2]`, a
/// remap's points), valid for any bit pattern.
pub trait Plain: sealed::Sealed + Copy + Send + 'static {}
macro_rules! plain {
    ($($t:ty),*) => {$(impl sealed::Sealed for $t {} impl Plain for $t {})*};
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, usize, f32, f64, [f32; 2]);

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

impl<T: Plain> PartialEq for MemBlock<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.region, self.index) == (other.region, other.index)
    }
}
impl<T: Plain> Eq for MemBlock<T> {}

impl<T: Plain> std::fmt::Debug for MemBlock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemBlock<{}>({} #{})", std::any::type_name::<T>(), self.region, self.index)
    }
}

impl<T: Plain> MemBlock<T> {
    /// The `index`-th block init allocated in `region` (0 = the first).
    pub const fn nth(region: MemRegion, index: u32) -> Self {
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
