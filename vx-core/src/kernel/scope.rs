//! The publish scope of a foreign module: while an OpenVX C module's `vxPublishKernels` (or
//! `vxUnpublishKernels`) runs on a thread, the kernels it adds through the ordinary builder
//! ([`KernelBuilder::add`](crate::KernelBuilder::add), reached from the C API's
//! `vxAddUserKernel`) are its kernels: they keep its library mapped, are staged during a reload,
//! and are recorded for the load's roll-back; the kernels it removes (`vxRemoveKernel`) are
//! recorded for the loader to remove after the call. `module/` sets the scope; the kernel layer
//! only consults it.
//!
//! Concurrency: the scope is thread-local and set only for the duration of one entry call on
//! that thread, so another thread adding kernels at the same time is never captured.

use std::any::Any;
use std::cell::Cell;
use std::sync::Arc;

use crate::kernel::record::KernelInner;
use crate::kernel::table::KernelTable;

/// What a publish scope provides (implemented by the module loader).
pub(crate) trait PublishScope {
    /// The kernel table of the context the module publishes into.
    fn table(&self) -> &Arc<KernelTable>;
    /// The owner to keep alive with each kernel (the module's library).
    fn keep_alive(&self) -> Option<Arc<dyn Any + Send + Sync>>;
    /// Kernels are built staged (a reload swaps them in later).
    fn staged(&self) -> bool;
    /// A kernel was added.
    fn added(&self, kernel: &Arc<KernelInner>);
    /// `name` is being removed by the module: true if the scope takes it over (the loader
    /// removes it after the entry call).
    fn removing(&self, name: &str) -> bool;
}

thread_local! {
    static SCOPE: Cell<Option<*const (dyn PublishScope + 'static)>> = const { Cell::new(None) };
}

/// Run `f` with `scope` set on this thread (restored afterwards, also on a panic).
pub(crate) fn with_scope<R>(scope: &dyn PublishScope, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<*const (dyn PublishScope + 'static)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPE.with(|s| s.set(self.0));
        }
    }
    // SAFETY: only the lifetime is erased; the pointer is read (in `current`) only while this
    // function runs, during which `scope` is borrowed and alive, and `Restore` clears it before
    // `with_scope` returns or unwinds.
    let erased: *const (dyn PublishScope + 'static) = unsafe { std::mem::transmute(scope as *const dyn PublishScope) };
    let _restore = Restore(SCOPE.with(|s| s.replace(Some(erased))));
    f()
}

/// Run `f` with the scope set on this thread for `table`, if any.
pub(crate) fn current<R>(table: &Arc<KernelTable>, f: impl FnOnce(Option<&dyn PublishScope>) -> R) -> R {
    let scope = SCOPE.with(Cell::get);
    // SAFETY: a pointer in SCOPE is valid while the `with_scope` call that set it runs (see
    // there), and that call is on this thread's stack below us.
    let scope = scope.map(|p| unsafe { &*p }).filter(|s| Arc::ptr_eq(s.table(), table));
    f(scope)
}
