//! `vx_context`: a vx-rs [`Context`](vx::Context) with what the C API keeps beside it — the log
//! callback, the error objects, the immediate-mode border, the nodes its graphs hold — and the
//! context, reference and log functions of `vx_api.h`.

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use vx::{Node, NodeKey};

use crate::ffi::{self, guard, guard_ref, put, put_text};
use crate::handle::{self, Entry, Object};
use crate::sys::consts::*;
use crate::sys::*;

/// The C side of one context.
pub(crate) struct CContext {
    pub(crate) ctx: vx::Context,
    /// The context's own handle.
    pub(crate) handle: Mutex<vx_reference>,
    log: Mutex<LogCallback>,
    /// Error objects by status, made on first use, alive as long as the context.
    errors: Mutex<HashMap<vx_status, usize>>,
    pub(crate) immediate_border: Mutex<vx_border_t>,
    /// Every node made through the C API, so a callback gets a handle for its node even after
    /// the application released its own.
    pub(crate) nodes: Mutex<crate::handle::FastMap<NodeKey, Node>>,
    /// The context's delays (a node parameter set to a slot's object is bound to its index).
    pub(crate) delays: Mutex<Vec<vx::Delay>>,
    /// `vxAssignNodeCallback`'s callbacks by node (`vxRetrieveNodeCallback` returns them).
    pub(crate) node_callbacks: Mutex<HashMap<NodeKey, vx_nodecomplete_f>>,
}

// SAFETY: the raw handle in `handle` is only an address (compared and returned, never read
// through without the table's lookup); every other field is Send + Sync.
unsafe impl Send for CContext {}
// SAFETY: as above.
unsafe impl Sync for CContext {}

#[derive(Clone, Copy)]
struct LogCallback {
    f: vx_log_callback_f,
    reentrant: bool,
}

impl CContext {
    /// Call the log callback for `r` (if one is registered and logging is enabled for `r`).
    pub(crate) fn log(&self, r: vx_reference, status: vx_status, text: &str) {
        if let Some(e) = handle::lookup(r)
            && !e.logging.load(Ordering::Relaxed)
        {
            return;
        }
        let ctx_handle = *self.handle.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = handle::lookup(ctx_handle)
            && !e.logging.load(Ordering::Relaxed)
        {
            return;
        }
        let cb = *self.log.lock().unwrap_or_else(|p| p.into_inner());
        let Some(f) = cb.f else { return };
        // At most VX_MAX_LOG_MESSAGE_LEN bytes with the terminator, cut on a character boundary.
        let max = VX_MAX_LOG_MESSAGE_LEN as usize - 1;
        let mut end = text.len().min(max);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let c = CString::new(text[..end].replace('\0', " ")).unwrap_or_default();
        let call = || {
            // SAFETY: the application registered `f` as a log callback with this signature; the
            // string is NUL-terminated and lives for the call.
            unsafe { f(ctx_handle, r, status, c.as_ptr()) }
        };
        thread_local! {
            /// This thread is inside a log callback (one that logs must not wait for itself).
            static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }
        if IN_CALLBACK.with(std::cell::Cell::get) {
            // A message logged by the log callback itself: not handed back to it (it would recurse,
            // or wait for itself when it is not re-entrant), but not lost either.
            eprintln!("vx-rs (logged inside the log callback) [{status}]: {text}");
            return;
        }
        struct Leave;
        impl Drop for Leave {
            fn drop(&mut self) {
                IN_CALLBACK.with(|c| c.set(false));
            }
        }
        IN_CALLBACK.with(|c| c.set(true));
        let _leave = Leave;
        if cb.reentrant {
            call();
        } else {
            // Not re-entrant: one call at a time, across threads.
            static SERIAL: Mutex<()> = Mutex::new(());
            let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
            call();
        }
    }
}

/// The error object for `status` in `ctx` (or of no context): `vxGetStatus` reads `status`.
pub(crate) fn error_object(ctx: Option<&Arc<CContext>>, status: vx_status) -> vx_reference {
    static GLOBAL: Mutex<Option<HashMap<vx_status, usize>>> = Mutex::new(None);
    let make = |c: Option<Arc<CContext>>| handle::register(Entry::new(VX_TYPE_ERROR, c, Object::Error(status)), true);
    match ctx {
        Some(c) => {
            let mut errors = c.errors.lock().unwrap_or_else(|p| p.into_inner());
            // Made once per status; made again if the table no longer has it (the context is
            // being released: its entries went first).
            let live = |h: usize| {
                handle::lookup(h as vx_reference).is_some_and(|e| matches!(e.object, Object::Error(s) if s == status))
            };
            match errors.get(&status) {
                Some(&h) if live(h) => h as vx_reference,
                _ => {
                    let h = make(Some(Arc::clone(c)));
                    errors.insert(status, h as usize);
                    h
                }
            }
        }
        None => {
            let mut g = GLOBAL.lock().unwrap_or_else(|p| p.into_inner());
            *g.get_or_insert_with(HashMap::new).entry(status).or_insert_with(|| make(None) as usize) as vx_reference
        }
    }
}

/// The context behind handle `c`.
pub(crate) fn context_of(c: vx_context) -> Result<Arc<CContext>, vx_status> {
    match &handle::get(c, VX_TYPE_CONTEXT)?.object {
        Object::Context(cc) => Ok(Arc::clone(cc)),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateContext() -> vx_context {
    guard_ref(std::ptr::null_mut(), || match vx::Context::new() {
        Ok(ctx) => {
            let cc = Arc::new(CContext {
                ctx,
                handle: Mutex::new(std::ptr::null_mut()),
                log: Mutex::new(LogCallback { f: None, reentrant: false }),
                errors: Mutex::default(),
                immediate_border: Mutex::new(vx_border_t {
                    mode: VX_BORDER_UNDEFINED,
                    constant_value: vx_pixel_value_t { reserved: [0; 16] },
                }),
                nodes: Mutex::default(),
                delays: Mutex::default(),
                node_callbacks: Mutex::default(),
            });
            let h = handle::register(Entry::new(VX_TYPE_CONTEXT, None, Object::Context(Arc::clone(&cc))), true);
            *cc.handle.lock().unwrap_or_else(|p| p.into_inner()) = h;
            crate::modules::install_host(&cc);
            h
        }
        Err(e) => {
            eprintln!("vx-rs: vxCreateContext: {e}");
            error_object(None, e.status().code())
        }
    })
}

/// # Safety
/// `context` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseContext(context: *mut vx_context) -> vx_status {
    // SAFETY: forwarded contract.
    let c = unsafe { ffi::deref(context) };
    guard(c, || {
        let Ok(cc) = context_of(c) else { return VX_ERROR_INVALID_REFERENCE };
        match handle::release(c, VX_TYPE_CONTEXT, true) {
            Err(s) => s,
            Ok(None) => {
                // SAFETY: forwarded contract.
                unsafe { ffi::clear(context) };
                VX_SUCCESS
            }
            Ok(Some(own)) => {
                // The last count: every object of the context goes, then the context. Dropping
                // runs deinit callbacks, which may lend new handles: repeat until none is left.
                // Graphs first (their nodes' deinit callbacks still find the data objects).
                handle::reinstate(own);
                loop {
                    let gone = handle::remove_context_entries(&cc);
                    if gone.is_empty() {
                        break;
                    }
                    let (graphs, rest): (Vec<_>, Vec<_>) =
                        gone.into_iter().partition(|e| matches!(e.object, Object::Graph(_)));
                    drop(graphs);
                    drop(rest);
                }
                cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).clear();
                cc.errors.lock().unwrap_or_else(|p| p.into_inner()).clear();
                drop(handle::remove_entry(c));
                // SAFETY: forwarded contract.
                unsafe { ffi::clear(context) };
                VX_SUCCESS
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetContext(reference: vx_reference) -> vx_context {
    guard_value(reference, std::ptr::null_mut(), || match handle::lookup(reference).and_then(|e| e.context()) {
        Some(c) => *c.handle.lock().unwrap_or_else(|p| p.into_inner()),
        None => std::ptr::null_mut(),
    })
}

use crate::ffi::guard_value;

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryContext(
    context: vx_context,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(s) => return s,
        };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_CONTEXT_VENDOR_ID => put(ptr, size, VX_ID_DEFAULT as vx_uint16),
                VX_CONTEXT_VERSION => put(ptr, size, VX_VERSION as vx_uint16),
                VX_CONTEXT_UNIQUE_KERNELS => put(ptr, size, cc.ctx.unique_kernel_count() as vx_uint32),
                VX_CONTEXT_MODULES => put(ptr, size, cc.ctx.module_count() as vx_uint32),
                VX_CONTEXT_REFERENCES => put(ptr, size, handle::live_in(&cc) as vx_uint32),
                VX_CONTEXT_IMPLEMENTATION => {
                    if size > VX_MAX_IMPLEMENTATION_NAME as usize {
                        return VX_ERROR_INVALID_PARAMETERS;
                    }
                    put_text(ptr, size, IMPLEMENTATION)
                }
                VX_CONTEXT_EXTENSIONS_SIZE => put(ptr, size, EXTENSIONS.len() + 1),
                VX_CONTEXT_EXTENSIONS => put_text(ptr, size, EXTENSIONS),
                VX_CONTEXT_CONVOLUTION_MAX_DIMENSION => put(ptr, size, vx::MAX_CONVOLUTION_DIMENSION as vx_size),
                VX_CONTEXT_NONLINEAR_MAX_DIMENSION => put(ptr, size, NONLINEAR_MAX_DIMENSION),
                VX_CONTEXT_OPTICAL_FLOW_MAX_WINDOW_DIMENSION => put(ptr, size, OPTICAL_FLOW_MAX_WINDOW),
                VX_CONTEXT_IMMEDIATE_BORDER => {
                    put(ptr, size, *cc.immediate_border.lock().unwrap_or_else(|p| p.into_inner()))
                }
                VX_CONTEXT_IMMEDIATE_BORDER_POLICY => put(ptr, size, VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED as vx_enum),
                VX_CONTEXT_MAX_TENSOR_DIMS => put(ptr, size, vx::MAX_TENSOR_DIMS as vx_size),
                VX_CONTEXT_UNIQUE_KERNEL_TABLE => {
                    let kernels = cc.ctx.kernel_table();
                    let need = kernels.len() * size_of::<vx_kernel_info_t>();
                    if ptr.is_null() || size != need {
                        return VX_ERROR_INVALID_PARAMETERS;
                    }
                    let out = ptr as *mut vx_kernel_info_t;
                    for (i, (name, enumeration)) in kernels.iter().enumerate() {
                        let mut info =
                            vx_kernel_info_t { enumeration: *enumeration, name: [0; VX_MAX_KERNEL_NAME as usize] };
                        for (d, s) in info.name.iter_mut().zip(name.bytes().take(VX_MAX_KERNEL_NAME as usize - 1)) {
                            *d = s as c_char;
                        }
                        // SAFETY: `need` bytes at `ptr` (checked), so entry i < len fits.
                        out.add(i).write_unaligned(info);
                    }
                    VX_SUCCESS
                }
                _ => ffi::refuse(
                    &handle::get(context, VX_TYPE_CONTEXT).expect("checked"),
                    context,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryContext: attribute {attribute:#x} is not a context attribute vx-rs has"),
                ),
            }
        }
    })
}

/// `VX_CONTEXT_IMPLEMENTATION`.
const IMPLEMENTATION: &str = "vx-rs";
/// `VX_CONTEXT_EXTENSIONS`: the extensions the C API implements (none yet: the tiling, aliasing,
/// pipelining, user-data-object and TIOVX ones are in the Rust API only).
const EXTENSIONS: &str = "";
/// `VX_CONTEXT_NONLINEAR_MAX_DIMENSION`: the spec's minimum (no non-linear filter kernel yet).
const NONLINEAR_MAX_DIMENSION: vx_size = 9;
/// `VX_CONTEXT_OPTICAL_FLOW_MAX_WINDOW_DIMENSION`: the spec's minimum (no optical-flow kernel yet).
const OPTICAL_FLOW_MAX_WINDOW: vx_size = 9;

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetContextAttribute(
    context: vx_context,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    guard(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(s) => return s,
        };
        match attribute {
            VX_CONTEXT_IMMEDIATE_BORDER => {
                // SAFETY: forwarded contract.
                let b = match unsafe { ffi::take::<vx_border_t>(ptr, size) } {
                    Ok(b) => b,
                    Err(s) => return s,
                };
                if !matches!(b.mode, VX_BORDER_UNDEFINED | VX_BORDER_CONSTANT | VX_BORDER_REPLICATE) {
                    return VX_ERROR_INVALID_VALUE;
                }
                *cc.immediate_border.lock().unwrap_or_else(|p| p.into_inner()) = b;
                VX_SUCCESS
            }
            _ => VX_ERROR_NOT_SUPPORTED,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxRegisterLogCallback(context: vx_context, callback: vx_log_callback_f, reentrant: vx_bool) {
    guard_value(context, (), || {
        if let Ok(cc) = context_of(context) {
            *cc.log.lock().unwrap_or_else(|p| p.into_inner()) =
                LogCallback { f: callback, reentrant: reentrant != VX_FALSE };
        }
    })
}

unsafe extern "C" {
    /// `csrc/log_entry.c`: formats the message, then calls [`vxrs_add_log_entry`].
    fn vxrs_add_log_entry_va();
}

/// `vxAddLogEntry(ref, status, message, ...)`: a jump to the C body, which reads the variadic
/// arguments (every argument register, `al` and the stack are as the caller left them).
///
/// # Safety
/// As `vxAddLogEntry`: `message` a printf format whose arguments follow.
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxAddLogEntry() {
    #[cfg(target_arch = "x86_64")]
    core::arch::naked_asm!("jmp {0}", sym vxrs_add_log_entry_va);
    #[cfg(target_arch = "aarch64")]
    core::arch::naked_asm!("b {0}", sym vxrs_add_log_entry_va);
}

/// The Rust half of `vxAddLogEntry` (`csrc/log_entry.c` formats the message).
///
/// # Safety
/// `message` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxrs_add_log_entry(r: vx_reference, status: vx_status, message: *const c_char) {
    guard_value(r, (), || {
        // SAFETY: forwarded contract.
        let Some(text) = (unsafe { ffi::text(message) }) else { return };
        if let Some(cc) = handle::lookup(r).and_then(|e| e.context()) {
            cc.log(r, status, text);
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetStatus(reference: vx_reference) -> vx_status {
    guard(reference, || match handle::lookup(reference) {
        None => VX_ERROR_NO_RESOURCES,
        Some(e) => match e.object {
            Object::Error(s) => s,
            _ => VX_SUCCESS,
        },
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxDirective(reference: vx_reference, directive: vx_enum) -> vx_status {
    guard(reference, || {
        let e = match handle::get(reference, VX_TYPE_REFERENCE) {
            Ok(e) => e,
            Err(s) => return s,
        };
        match directive {
            VX_DIRECTIVE_DISABLE_LOGGING => e.logging.store(false, Ordering::Relaxed),
            VX_DIRECTIVE_ENABLE_LOGGING => e.logging.store(true, Ordering::Relaxed),
            // Performance is always measured (vx_perf_t costs two clock reads per node).
            VX_DIRECTIVE_ENABLE_PERFORMANCE | VX_DIRECTIVE_DISABLE_PERFORMANCE
                if matches!(e.object, Object::Context(_)) => {}
            _ => return VX_ERROR_NOT_SUPPORTED,
        }
        VX_SUCCESS
    })
}

/// # Safety
/// `data` must be NULL or point to `data_size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxHint(
    reference: vx_reference,
    hint: vx_enum,
    _data: *const c_void,
    _data_size: vx_size,
) -> vx_status {
    guard(reference, || {
        if handle::get(reference, VX_TYPE_REFERENCE).is_err() {
            return VX_ERROR_INVALID_REFERENCE;
        }
        match hint {
            // Hints may be ignored (the spec): vx-rs has one way to run.
            VX_HINT_PERFORMANCE_DEFAULT | VX_HINT_PERFORMANCE_LOW_POWER | VX_HINT_PERFORMANCE_HIGH_SPEED => VX_SUCCESS,
            _ => VX_ERROR_NOT_SUPPORTED,
        }
    })
}
