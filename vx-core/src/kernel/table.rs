//! The context's kernel table: names and enumerations are unique, lookups see finalized kernels
//! only, and the user kernel id / library id pools of `vxAllocateUserKernelId` and
//! `vxAllocateUserKernelLibraryId`.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::record::KernelInner;
use crate::shared::ContextShared;
use crate::support::sync::lock;

/// `VX_ID_USER`: the vendor id of user kernels.
pub const VX_ID_USER: u32 = 0xFFE;
/// Size of the dynamic user kernel id pool.
pub const USER_KERNEL_ID_POOL: u32 = 4096;
/// The largest dynamically allocated library id.
pub const MAX_USER_LIBRARY_ID: u32 = 255;

/// `VX_KERNEL_BASE(vendor, lib)`: `(vendor << 20) | (lib << 12)`, as a `vx_enum`.
pub const fn kernel_base(vendor: u32, library: u32) -> i32 {
    ((vendor << 20) | (library << 12)) as i32
}

/// A context's kernels: the registry behind a lock, with the context's shared part (for the
/// kernel resource count and for "same context" checks).
pub(crate) struct KernelTable {
    pub(crate) shared: Arc<ContextShared>,
    registry: Mutex<KernelRegistry>,
}

impl KernelTable {
    pub(crate) fn new(shared: Arc<ContextShared>) -> Arc<KernelTable> {
        Arc::new(KernelTable { shared, registry: Mutex::new(KernelRegistry::default()) })
    }

    /// The registry, locked.
    pub(crate) fn registry(&self) -> MutexGuard<'_, KernelRegistry> {
        lock(&self.registry)
    }
}

#[derive(Default)]
pub(crate) struct KernelRegistry {
    kernels: Vec<Arc<KernelInner>>,
    next_kernel_id: u32,
    next_library_id: u32,
}

impl KernelRegistry {
    pub(crate) fn len(&self) -> usize {
        self.kernels.len()
    }

    pub(crate) fn finalized_len(&self) -> usize {
        self.kernels.iter().filter(|k| k.final_().is_some()).count()
    }

    pub(super) fn check_new(&self, name: &str, enumeration: i32) -> Result<()> {
        if let Some(k) = self.kernels.iter().find(|k| k.name == name) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "a kernel of this name already exists in the context",
            )
            .in_kernel(name)
            .found(format!("existing kernel with enumeration {:#x}", k.enumeration)));
        }
        if let Some(k) = self.kernels.iter().find(|k| k.enumeration == enumeration) {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                format!("enumeration {enumeration:#x} is already used"),
            )
            .in_kernel(name)
            .found(format!("kernel '{}'", k.name)));
        }
        Ok(())
    }

    pub(crate) fn insert(&mut self, k: Arc<KernelInner>) {
        self.kernels.push(k);
    }

    pub(crate) fn contains(&self, k: &Arc<KernelInner>) -> bool {
        self.kernels.iter().any(|x| Arc::ptr_eq(x, k))
    }

    pub(crate) fn remove(&mut self, k: &Arc<KernelInner>) {
        self.kernels.retain(|x| !Arc::ptr_eq(x, k));
        k.removed.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Swap `old` for `new` in place (module reload).
    pub(crate) fn replace(&mut self, old: &Arc<KernelInner>, new: Arc<KernelInner>) {
        match self.kernels.iter_mut().find(|x| Arc::ptr_eq(x, old)) {
            Some(slot) => *slot = new,
            None => self.kernels.push(new),
        }
        old.removed.store(true, std::sync::atomic::Ordering::Release);
    }

    pub(crate) fn by_name(&self, name: &str) -> Option<Arc<KernelInner>> {
        self.kernels.iter().find(|k| k.name == name && k.final_().is_some()).cloned()
    }

    pub(crate) fn by_enum(&self, e: i32) -> Option<Arc<KernelInner>> {
        self.kernels.iter().find(|k| k.enumeration == e && k.final_().is_some()).cloned()
    }

    pub(crate) fn allocate_kernel_id(&mut self) -> Result<i32> {
        if self.next_kernel_id >= USER_KERNEL_ID_POOL {
            return Err(Error::new(ErrorKind::NoResources, "the user kernel id pool is exhausted")
                .expected_found(format!("at most {USER_KERNEL_ID_POOL} ids per context"), USER_KERNEL_ID_POOL + 1));
        }
        let id = kernel_base(VX_ID_USER, 0) + self.next_kernel_id as i32;
        self.next_kernel_id += 1;
        Ok(id)
    }

    pub(crate) fn allocate_library_id(&mut self) -> Result<i32> {
        if self.next_library_id >= MAX_USER_LIBRARY_ID {
            return Err(Error::new(ErrorKind::NoResources, "the user kernel library id pool is exhausted")
                .expected_found(format!("ids 1..={MAX_USER_LIBRARY_ID}"), MAX_USER_LIBRARY_ID + 1));
        }
        self.next_library_id += 1;
        Ok(self.next_library_id as i32)
    }
}
