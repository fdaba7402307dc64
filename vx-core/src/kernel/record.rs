//! What the runtime knows of one kernel: name, enumeration, functions, the signature while it is
//! built and frozen at finalize, the keep-alive of the module it came from, and its chain of
//! replacements across module reloads. Shared by the handle, the builder and the kernel table.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::kernel::callbacks::{KernelFunctions, LifecycleFn, ValidateFn};
use crate::kernel::signature::{AliasHint, KernelAttributes, ParamSpec};
use crate::shared::ResourceSlot;
use crate::support::sync::lock;

/// The signature and attributes of a kernel being built (before finalize).
pub(super) struct KernelBuild {
    pub(super) params: Vec<Option<ParamSpec>>,
    pub(crate) attrs: KernelAttributes,
    pub(super) alias_hints: Vec<AliasHint>,
}

/// What a finalized kernel is: immutable from then on.
pub(crate) struct FinalKernel {
    pub(crate) params: Vec<ParamSpec>,
    pub(crate) attrs: KernelAttributes,
    pub(crate) alias_hints: Vec<AliasHint>,
}

pub(crate) struct KernelInner {
    pub(crate) name: String,
    pub(crate) enumeration: i32,
    /// The enumeration came from the context's user kernel id pool on the kernel's behalf (a module
    /// kernel without an explicit one): it returns to the pool when the kernel leaves the table, and
    /// a reload's successor inherits it.
    pub(crate) owns_enumeration: bool,
    pub(crate) num_params: u32,
    pub(crate) functions: KernelFunctions,
    pub(crate) validate: Arc<ValidateFn>,
    pub(crate) init: Option<Arc<LifecycleFn>>,
    pub(crate) deinit: Option<Arc<LifecycleFn>>,
    pub(super) build: Mutex<KernelBuild>,
    pub(crate) finalized: OnceLock<FinalKernel>,
    /// Keeps whatever the kernel's code lives in (a module's library) alive as long as the kernel.
    #[allow(dead_code)]
    pub(crate) keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    /// Set when the registry dropped the kernel (removed, unloaded or replaced).
    pub(crate) removed: AtomicBool,
    /// Set when a module reload replaced this kernel: nodes rebind to the successor.
    pub(crate) replaced: AtomicBool,
    pub(super) replacement: Mutex<Option<Arc<KernelInner>>>,
    pub(super) _slot: ResourceSlot,
}

impl KernelInner {
    /// Record that `next` replaces this kernel (module reload).
    pub(crate) fn replace_with(&self, next: Arc<KernelInner>) {
        *lock(&self.replacement) = Some(next);
        self.replaced.store(true, Ordering::Release);
    }

    /// The newest kernel in this kernel's chain of replacements.
    pub(crate) fn latest(self: &Arc<Self>) -> Arc<KernelInner> {
        let mut k = Arc::clone(self);
        loop {
            let next = lock(&k.replacement).clone();
            match next {
                Some(n) => k = n,
                None => return k,
            }
        }
    }

    pub(super) fn build(&self) -> MutexGuard<'_, KernelBuild> {
        lock(&self.build)
    }
    pub(crate) fn final_(&self) -> Option<&FinalKernel> {
        self.finalized.get()
    }
}
