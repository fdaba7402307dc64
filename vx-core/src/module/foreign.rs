//! OpenVX C modules ("foreign" modules): libraries that export `vxPublishKernels` and
//! `vxUnpublishKernels` instead of vx-rs's entry point, as every other OpenVX implementation's
//! modules do. They load exactly like vx-rs modules (search path, trust rules, private copy,
//! transactional publish, reload, the library mapped while a kernel or node of it lives), with one
//! difference: the entry points take a `vx_context`, so they are called through the host the C
//! API installs (`Context::set_foreign_module_host`).
//! The kernels the module adds through the C API during the call are its kernels (the publish
//! scope, `kernel/scope.rs`).

use std::any::Any;
use std::sync::Arc;

use vx_plugin_abi::Status;

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::handle::Kernel;
use crate::kernel::record::KernelInner;
use crate::kernel::scope::{PublishScope, with_scope};
use crate::kernel::table::KernelTable;
use crate::module::host::publish::PublishCtx;

pub use crate::module::library::ForeignEntry;

/// What calls a foreign module's entry point with the context's C handle and returns its status
/// (installed by the C API for each context it makes).
pub type ForeignModuleHost = dyn Fn(ForeignEntry) -> i32 + Send + Sync;

struct Scope<'a, 'b> {
    p: &'a PublishCtx<'b>,
    keep: Option<Arc<dyn Any + Send + Sync>>,
    /// The module's kernels (unpublish may remove these).
    own: &'a [String],
}

impl PublishScope for Scope<'_, '_> {
    fn table(&self) -> &Arc<KernelTable> {
        self.p.kernels
    }
    fn keep_alive(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        self.keep.clone()
    }
    fn staged(&self) -> bool {
        self.p.staged
    }
    fn added(&self, kernel: &Arc<KernelInner>) {
        self.p.added.borrow_mut().push(Kernel { inner: Arc::clone(kernel), table: Arc::clone(self.p.kernels) });
    }
    fn removing(&self, name: &str) -> bool {
        let own = self.own.iter().any(|n| n == name) || self.p.added.borrow().iter().any(|k| k.name() == name);
        if own {
            self.p.removed.borrow_mut().push(name.to_owned());
        }
        own
    }
}

/// Call `entry` (`what`: "vxPublishKernels" or "vxUnpublishKernels") through `host` with the
/// publish scope of `p` set; `own` names the module's kernels (for unpublish).
pub(super) fn run_foreign(
    p: &PublishCtx<'_>,
    host: Option<&Arc<ForeignModuleHost>>,
    entry: ForeignEntry,
    what: &str,
    own: &[String],
) -> Result<()> {
    let Some(host) = host else {
        return Err(Error::new(
            ErrorKind::InvalidModule,
            format!(
                "the module is an OpenVX C module ({what}); C modules load through vx-rs's C API \
                 (libopenvx: vxLoadKernels), which calls their entry points with a vx_context"
            ),
        ));
    };
    let keep = p.library.clone().map(|l| -> Arc<dyn Any + Send + Sync> { l });
    let scope = Scope { p, keep, own };
    let status = with_scope(&scope, || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| host(entry))).unwrap_or(Status::Failure.code())
    });
    match Status::from_code(status) {
        Some(Status::Success) => Ok(()),
        s => Err(Error::new(
            s.map_or(ErrorKind::Failure, ErrorKind::from_status),
            format!("{what} returned {}", s.map_or_else(|| status.to_string(), |s| s.c_name().to_owned())),
        )),
    }
}
