//! The host side of the module ABI, one file per vtable: [`publish`] (the host vtable a module
//! registers kernels through), [`validator`], [`processor`] (user-kernel process), [`lifecycle`]
//! (init/deinit) and [`tiling`]. Each wrapper turns a module's `extern "C"` function into an
//! ordinary kernel callback, copies every string it receives, and turns an `AbiError` into an
//! `Error`; the kernel it is stored in keeps the module's library alive.

mod lifecycle;
mod processor;
pub(crate) mod publish;
pub(crate) mod tiling;
pub(crate) mod validator;

use vx_plugin_abi::Status;
use vx_plugin_abi::abi_stable::std_types::RResult;
use vx_plugin_abi::module_abi::{AbiError, AbiResult};

use crate::error::{Error, ErrorKind, Result};

fn to_error(e: AbiError) -> Error {
    let status = Status::from_code(e.status).unwrap_or(Status::Failure);
    Error::new(ErrorKind::from_status(status), e.message.into_string())
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
