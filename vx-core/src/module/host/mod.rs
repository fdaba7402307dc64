//! The host side of the module ABI, one file per vtable: [`publish`] (the host vtable a module
//! registers kernels through), [`validator`], [`processor`] (user-kernel process), [`lifecycle`]
//! (init/deinit) and [`tiling`]; [`objects`] says which object an ABI path names and carries
//! every type's meta data across. Each wrapper turns a module's `extern "C"` function into an
//! ordinary kernel callback, copies every string it receives, and turns an `AbiError` into an
//! `Error`; the kernel it is stored in keeps the module's library alive. Every host-side
//! `extern "C"` function catches panics ([`catch`]); the handles it lends a module are built with
//! `from_raw` over state that lives for the call.

mod control;
mod lifecycle;
mod objects;
mod processor;
pub(super) mod publish;
pub(super) mod tiling;
pub(super) mod validator;

use vx_plugin_abi::Status;
use vx_plugin_abi::abi_stable::std_types::RResult;
use vx_plugin_abi::module_abi::{AbiError, AbiResult};

use crate::error::{Error, ErrorKind, Result};
use crate::support::unwind::{catch_panic, panic_message};

fn to_error(e: AbiError) -> Error {
    Error::new(ErrorKind::from_status(e.status()), e.message.into_string())
}

fn to_abi(e: Error) -> AbiError {
    AbiError::new(e.status(), e.to_string())
}

fn abi<T>(r: Result<T>) -> AbiResult<T> {
    match r {
        Ok(v) => RResult::ROk(v),
        Err(e) => RResult::RErr(to_abi(e)),
    }
}

/// Run the body of a host-side `extern "C"` function: a panic (a bug in the host, or in a
/// kernel callback the host runs) is caught here and becomes an error, never unwinding into the
/// module's frames.
fn catch<T>(what: &str, f: impl FnOnce() -> AbiResult<T>) -> AbiResult<T> {
    match catch_panic(f) {
        Ok(r) => r,
        Err(payload) => RResult::RErr(AbiError::new(
            Status::Failure,
            format!("the host's {what} panicked: {}", panic_message(&*payload)),
        )),
    }
}

/// [`catch`] for functions without an error channel: a panic yields `fallback` (and is logged).
fn catch_or<T>(what: &str, fallback: T, f: impl FnOnce() -> T) -> T {
    catch_panic(f).unwrap_or_else(|payload| {
        tracing::error!("the host's {what} panicked: {}", panic_message(&*payload));
        fallback
    })
}
