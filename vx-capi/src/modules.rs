//! `vxLoadKernels` / `vxUnloadKernels`: modules by name, through vx-rs's loader — vx-rs modules
//! and OpenVX C modules (`vxPublishKernels`) alike, from the module search path and, for C API
//! contexts, `LD_LIBRARY_PATH`, under the context's trust rules. A C module's entry points get the
//! context's handle ([`install_host`]).

use std::ffi::c_void;
use std::sync::{Arc, Weak};

use crate::context::{CContext, context_of};
use crate::ffi::{self, fail, guard};
use crate::sys::consts::*;
use crate::sys::*;

/// Let `cc`'s vx-rs context call OpenVX C modules' entry points with `cc`'s handle.
pub(crate) fn install_host(cc: &Arc<CContext>) {
    let weak: Weak<CContext> = Arc::downgrade(cc);
    cc.ctx.set_foreign_module_host(Arc::new(move |entry: vx::ForeignEntry| {
        let Some(cc) = weak.upgrade() else { return VX_ERROR_INVALID_REFERENCE };
        let handle = *cc.handle.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `entry` is the module's vxPublishKernels / vxUnpublishKernels, of the OpenVX
        // type `vx_status (*)(vx_context)`; the handle is this context's, alive (we hold `cc`).
        unsafe { entry(handle as *mut c_void) }
    }));
}

fn with_module(
    context: vx_context,
    module: *const vx_char,
    f: impl FnOnce(&Arc<CContext>, &str) -> vx::Result<()>,
) -> vx_status {
    guard(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(s) => return s,
        };
        // SAFETY: the caller passes a NUL-terminated string (or NULL, refused).
        let Some(name) = (unsafe { ffi::text(module) }) else {
            cc.log(context, VX_ERROR_INVALID_PARAMETERS, "the module name is NULL or not UTF-8");
            return VX_ERROR_INVALID_PARAMETERS;
        };
        match f(&cc, name) {
            Ok(()) => VX_SUCCESS,
            Err(e) => fail(Some(&cc), context, &e),
        }
    })
}

/// # Safety
/// `module` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxLoadKernels(context: vx_context, module: *const vx_char) -> vx_status {
    with_module(context, module, |cc, name| cc.ctx.load_module(name))
}

/// # Safety
/// `module` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxUnloadKernels(context: vx_context, module: *const vx_char) -> vx_status {
    with_module(context, module, |cc, name| cc.ctx.unload_module(name))
}
