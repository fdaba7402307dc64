//! The SDK's one panic catch ([`catch_panic`], under the trampolines' guard
//! [`crate::module_api::guard`]) and the message of a caught panic, shared by the host and the
//! modules' generated entry points.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Run `f`, catching a panic: `Err(payload)` instead of unwinding further (never across the module
/// boundary). `f` is taken as unwind safe: the guard turns the panic into an error.
pub(crate) fn catch_panic<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

/// The message of a caught panic payload (`&str` or `String`, else a placeholder).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_string())
}

/// Message fragments of panics tests cause on purpose.
static EXPECTED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

/// For tests that make a kernel panic on purpose (and assert the error it becomes): the panic hook
/// stays quiet about panics whose message contains `fragment`, from any thread, and passes every
/// other panic to the hook installed before (by default, the one that prints). Without it, such a
/// test prints an alarming "thread … panicked at" under `--nocapture` or from threads outside the
/// test's output capture, though nothing failed.
pub fn expect_panics(fragment: &'static str) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = panic_message(info.payload());
            let expected = EXPECTED.lock().unwrap_or_else(|p| p.into_inner());
            if !expected.iter().any(|f| message.contains(f)) {
                drop(expected);
                previous(info);
            }
        }));
    });
    EXPECTED.lock().unwrap_or_else(|p| p.into_inner()).push(fragment);
}
