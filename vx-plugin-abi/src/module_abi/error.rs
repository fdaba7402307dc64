//! What every call across the module boundary returns: a value or an [`AbiError`] (a status and a
//! message the receiver copies).

use abi_stable::StableAbi;
use abi_stable::std_types::{RResult, RString};

use crate::status::Status;

/// An error crossing the module boundary: an OpenVX status code and a message.
#[repr(C)]
#[derive(StableAbi, Debug, Clone)]
pub struct AbiError {
    /// The `vx_status` code.
    pub status: i32,
    /// What went wrong, for the host's error message.
    pub message: RString,
}

impl AbiError {
    /// An error with a status and a message.
    pub fn new(status: Status, message: impl Into<String>) -> AbiError {
        AbiError { status: status.code(), message: RString::from(message.into()) }
    }

    /// The status (an unknown code reads as `Failure`).
    pub fn status(&self) -> Status {
        Status::from_code(self.status).unwrap_or(Status::Failure)
    }
}

/// The result of every call across the boundary.
pub type AbiResult<T> = RResult<T, AbiError>;
