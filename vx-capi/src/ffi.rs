//! The glue every exported function goes through, written once: the panic guard (no unwind
//! crosses the C boundary: a panic becomes `VX_FAILURE` and a log entry), errors turned into
//! statuses and logged with the text a Rust user sees, and the query/copy-out helpers that check a
//! caller's size before writing to its memory.

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use crate::context::CContext;
use crate::handle::{self, Entry};
use crate::sys::consts::*;
use crate::sys::{vx_reference, vx_size, vx_status};

/// Run `f` with panics caught: a panic is logged (to the context of `r`, if any) and returns
/// `VX_FAILURE`.
pub(crate) fn guard(r: vx_reference, f: impl FnOnce() -> vx_status) -> vx_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(s) => s,
        Err(p) => {
            log_panic(r, &p);
            VX_FAILURE
        }
    }
}

/// [`guard`] for functions returning a handle: a panic returns an error object of `r`'s context
/// (or of no context).
pub(crate) fn guard_ref(r: vx_reference, f: impl FnOnce() -> vx_reference) -> vx_reference {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(h) => h,
        Err(p) => {
            log_panic(r, &p);
            crate::context::error_object(handle::lookup(r).and_then(|e| e.context()).as_ref(), VX_FAILURE)
        }
    }
}

/// [`guard`] for functions returning a plain value (`def` on a panic).
pub(crate) fn guard_value<T>(r: vx_reference, def: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(p) => {
            log_panic(r, &p);
            def
        }
    }
}

fn log_panic(r: vx_reference, p: &Box<dyn std::any::Any + Send>) {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned());
    let text = format!("vx-rs: internal error (a panic, caught at the C API boundary): {msg}");
    match handle::lookup(r).and_then(|e| e.context()) {
        Some(c) => c.log(r, VX_FAILURE, &text),
        None => eprintln!("{text}"),
    }
}

/// The status of `e`, after logging its text to `ctx`'s log callback against `r`.
pub(crate) fn fail(ctx: Option<&Arc<CContext>>, r: vx_reference, e: &vx::Error) -> vx_status {
    let status = e.status().code();
    if let Some(c) = ctx {
        c.log(r, status, &e.to_string());
    }
    status
}

/// Log `text` against `r` and return `status` (for errors found here, not by vx-rs).
pub(crate) fn refuse(entry: &Entry, r: vx_reference, status: vx_status, text: &str) -> vx_status {
    if let Some(c) = entry.context() {
        c.log(r, status, text);
    }
    status
}

/// Write `value` to the caller's `ptr` of `size` bytes, which must be exactly `size_of::<T>()`
/// (`VX_ERROR_INVALID_PARAMETERS` otherwise, nothing written).
///
/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
pub(crate) unsafe fn put<T: Copy>(ptr: *mut c_void, size: vx_size, value: T) -> vx_status {
    if ptr.is_null() || size != size_of::<T>() {
        return VX_ERROR_INVALID_PARAMETERS;
    }
    // SAFETY: the caller's buffer holds `size` = size_of::<T>() writable bytes (the contract);
    // an unaligned write because C callers may pass any address.
    unsafe { (ptr as *mut T).write_unaligned(value) };
    VX_SUCCESS
}

/// Read a `T` from the caller's `ptr` of `size` bytes (exactly `size_of::<T>()`).
///
/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
pub(crate) unsafe fn take<T: Copy>(ptr: *const c_void, size: vx_size) -> Result<T, vx_status> {
    if ptr.is_null() || size != size_of::<T>() {
        return Err(VX_ERROR_INVALID_PARAMETERS);
    }
    // SAFETY: as in `put`, for reading.
    Ok(unsafe { (ptr as *const T).read_unaligned() })
}

/// Copy `text` with its terminator into the caller's `ptr` of `size` bytes (at least the text's
/// length plus one: `VX_ERROR_INVALID_PARAMETERS` otherwise).
///
/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
pub(crate) unsafe fn put_text(ptr: *mut c_void, size: vx_size, text: &str) -> vx_status {
    let bytes = text.as_bytes();
    if ptr.is_null() || size < bytes.len() + 1 {
        return VX_ERROR_INVALID_PARAMETERS;
    }
    // SAFETY: `size` >= len + 1 writable bytes at `ptr` (the contract and the check above).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, bytes.len());
        *(ptr as *mut u8).add(bytes.len()) = 0;
    }
    VX_SUCCESS
}

/// The caller's C string, or `None` for NULL or text that is not UTF-8.
///
/// # Safety
/// `s` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn text<'a>(s: *const c_char) -> Option<&'a str> {
    if s.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string (the contract).
    unsafe { CStr::from_ptr(s) }.to_str().ok()
}

/// Set the caller's handle variable to NULL (every `vxRelease*` does on success).
///
/// # Safety
/// `p` must be NULL or point to a handle variable.
pub(crate) unsafe fn clear(p: *mut vx_reference) {
    if !p.is_null() {
        // SAFETY: a valid handle variable (the contract).
        unsafe { *p = std::ptr::null_mut() };
    }
}

/// The handle the caller's variable holds (NULL for a NULL variable).
///
/// # Safety
/// `p` must be NULL or point to a handle variable.
pub(crate) unsafe fn deref(p: *mut vx_reference) -> vx_reference {
    if p.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: a valid handle variable (the contract).
        unsafe { *p }
    }
}

/// `vxRelease*`: one external count less on the handle `*p` of type `kind`, then `*p = NULL`.
///
/// # Safety
/// `p` must be NULL or point to a handle variable.
pub(crate) unsafe fn release(p: *mut vx_reference, kind: i32) -> vx_status {
    // SAFETY: forwarded contract.
    let r = unsafe { deref(p) };
    guard(r, || match handle::release(r, kind, true) {
        Ok(gone) => {
            // SAFETY: forwarded contract.
            unsafe { clear(p) };
            drop(gone); // outside the table's lock: dropping a graph runs deinit callbacks
            VX_SUCCESS
        }
        Err(s) => s,
    })
}
