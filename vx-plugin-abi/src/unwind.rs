//! The message of a caught panic, shared by the host and the modules' generated entry points.

use std::any::Any;

/// The message of a caught panic payload (`&str` or `String`, else a placeholder).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_string())
}
