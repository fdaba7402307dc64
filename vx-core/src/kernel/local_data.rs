//! Node local data (`VX_NODE_LOCAL_DATA_SIZE` / `VX_NODE_LOCAL_DATA_PTR`): who owns the buffer
//! (nobody, the framework, or the kernel) and the spec's rules for who may set it when.

use std::ffi::c_void;
use std::sync::Arc;

use crate::data::buffer::RawBuf;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::Resources;

/// Who provided the node's local data pointer.
#[derive(Default)]
pub(super) enum LocalPtr {
    #[default]
    Null,
    /// Allocated by the framework (kernel-level size, or node size requested in init).
    Framework(RawBuf),
    /// Set by the kernel's init callback; the kernel owns (and frees) it.
    Kernel(usize),
}

#[derive(Default)]
pub(crate) struct LocalData {
    pub(crate) size: usize,
    pub(super) ptr: LocalPtr,
}

impl LocalData {
    pub(crate) fn ptr(&self) -> *mut c_void {
        match &self.ptr {
            LocalPtr::Null => std::ptr::null_mut(),
            LocalPtr::Framework(b) => b.as_ptr() as *mut c_void,
            LocalPtr::Kernel(p) => *p as *mut c_void,
        }
    }

    pub(crate) fn is_framework(&self) -> bool {
        matches!(self.ptr, LocalPtr::Framework(_))
    }

    /// The framework-owned buffer, if any.
    pub(super) fn framework_bytes(&mut self) -> Option<&mut [u8]> {
        match &mut self.ptr {
            LocalPtr::Framework(b) => Some(&mut b.as_mut_slice()[..self.size]),
            _ => None,
        }
    }

    pub(crate) fn reset(&mut self) {
        self.size = 0;
        self.ptr = LocalPtr::Null;
    }

    pub(crate) fn allocate(&mut self, size: usize, resources: &Arc<Resources>) -> Result<()> {
        self.ptr = LocalPtr::Framework(RawBuf::new(size, resources)?);
        self.size = size;
        Ok(())
    }
}

/// The callback a local-data attribute is being set from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Init,
    Deinit,
}

/// May `phase` set the node's local data size?
pub(super) fn check_set_size(phase: Phase, kernel_size: usize, local: &LocalData) -> Result<()> {
    if kernel_size != 0 {
        return Err(Error::new(
            ErrorKind::NotSupported,
            format!(
                "the kernel declares VX_KERNEL_LOCAL_DATA_SIZE = {kernel_size}, so the node's local data is set by the \
                 framework and cannot be changed from the {phase:?} callback"
            ),
        ));
    }
    if phase == Phase::Deinit && local.is_framework() {
        return Err(Error::new(
            ErrorKind::NotSupported,
            "the node's local data was allocated by the framework; deinit cannot change it",
        ));
    }
    Ok(())
}

/// May `phase` set the node's local data pointer?
pub(super) fn check_set_ptr(phase: Phase, kernel_size: usize, local: &LocalData) -> Result<()> {
    match phase {
        Phase::Init => check_set_size(phase, kernel_size, local),
        Phase::Deinit if local.is_framework() => Err(Error::new(
            ErrorKind::NotSupported,
            "VX_NODE_LOCAL_DATA_PTR was set by the framework; deinit cannot set it",
        )),
        Phase::Deinit => Ok(()),
    }
}
