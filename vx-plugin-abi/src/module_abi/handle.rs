//! What every handle shares: the handle type itself (`handle!`: a vtable plus a private host
//! pointer, neither `Send` nor `Sync`, made only by the host), the node's local data and the kernel
//! memory blocks the host hands out.

use abi_stable::StableAbi;

use super::error::{AbiError, AbiResult};
use crate::memory::{MemBlock, Plain};

/// Define a handle type: `$name` over the vtable reference `$vtable` and a host pointer `$ptr`.
macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $vtable:ident, $ptr:ty) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(::abi_stable::StableAbi)]
        pub struct $name {
            vtable: $vtable,
            ctx: $ptr,
            _not_thread_safe: ::abi_stable::marker_type::UnsyncUnsend,
        }

        impl $name {
            /// Make a handle (host side).
            ///
            /// # Safety
            ///
            /// `ctx` must be the state `vtable`'s functions expect, valid (and used by nobody else)
            /// for as long as the handle is used; the handle is lent to a module for one call only.
            pub unsafe fn from_raw(vtable: $vtable, ctx: $ptr) -> Self {
                $name { vtable, ctx, _not_thread_safe: ::abi_stable::marker_type::UnsyncUnsend::NEW }
            }

            /// The host state behind the handle (host side: what [`Self::from_raw`] was given).
            pub fn ctx(&self) -> $ptr {
                self.ctx
            }
        }
    };
}
pub(crate) use handle;

/// A node's local data: address (0 = none) and size.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalData {
    /// The address (0: none).
    pub ptr: usize,
    /// Bytes.
    pub size: u64,
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
pub(super) unsafe fn handed_block<'a, T: Plain>(
    block: MemBlock<T>,
    mem_block: impl FnOnce(u32, u32) -> AbiResult<MemBlockInfo>,
) -> Result<&'a mut [T], AbiError> {
    let info = mem_block(block.region().code(), block.index()).into_result()?;
    // SAFETY: the caller's contract; blocks are 64-byte aligned, zero-initialised when allocated,
    // and every bit pattern is a valid `Plain`.
    Ok(unsafe { std::slice::from_raw_parts_mut(info.ptr as *mut T, info.bytes as usize / std::mem::size_of::<T>()) })
}
