//! Panics caught at the edge of user code: a kernel callback that panics becomes an error naming the
//! callback, and the host stays alive (rayon-core's `unwind.rs` idea).

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
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            Err(Error::new(ErrorKind::Failure, format!("{} panicked: {}", what(), panic_message(&*payload))))
        }
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    vx_plugin_abi::panic_message(payload)
}
