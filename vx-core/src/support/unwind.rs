//! Panics caught at the edge of user code: a kernel callback that panics becomes an error naming the
//! callback, and the host stays alive (rayon-core's `unwind.rs` idea). The one place the host
//! catches panics: every other guard (the module ABI's `extern "C"` functions, crew helpers, target
//! workers, tiles, the watcher's callback) calls [`catch_panic`] or [`call_guarded`].

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{Error, ErrorKind, Result};

/// Run a kernel callback, turning a panic into an error (the host stays alive). Allocates nothing
/// unless it panics (it runs on the process path).
pub(crate) fn call_guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    guarded_as(|| format!("the kernel's {what} callback"), f)
}

/// Run `f`, turning a panic into an error saying `what` panicked.
pub(crate) fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    guarded_as(|| what.to_owned(), f)
}

fn guarded_as<T>(what: impl FnOnce() -> String, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_panic(f) {
        Ok(r) => r,
        Err(payload) => {
            Err(Error::new(ErrorKind::Failure, format!("{} panicked: {}", what(), panic_message(&*payload))))
        }
    }
}

/// Run `f`, catching a panic: `Err(payload)` instead of unwinding further (`f` is taken as unwind
/// safe: callers either discard what it touched or report the panic). Allocates nothing unless it
/// panics.
pub(crate) fn catch_panic<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    vx_plugin_abi::panic_message(payload)
}
