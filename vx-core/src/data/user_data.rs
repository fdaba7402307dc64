//! User data objects (`vx_user_data_object`): a named type and a size in bytes, copied in and
//! out. The bytes are allocated on first copy or at verify.

use std::sync::Arc;

use crate::data::buffer::{SharedBuffer, WHOLE};
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::AsContext;

/// `VX_MAX_REFERENCE_NAME`: the longest type name of a user data object.
pub const MAX_TYPE_NAME: usize = 64;

pub(crate) struct UserDataObj {
    pub(crate) header: ObjectHeader,
    pub(super) type_name: String,
    pub(crate) size: usize,
    pub(crate) buffer: SharedBuffer,
}

/// A user data object handle.
#[derive(Clone)]
pub struct UserDataObject {
    pub(crate) obj: Arc<UserDataObj>,
}

impl std::fmt::Debug for UserDataObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserDataObject('{}', type '{}', {} bytes)", self.name(), self.type_name(), self.size())
    }
}

impl UserDataObject {
    /// `vxCreateUserDataObject`: `size` bytes (at least 1) of a type called `type_name`.
    pub fn new(ctx: &impl AsContext, type_name: &str, size: usize) -> Result<UserDataObject> {
        if type_name.len() >= MAX_TYPE_NAME {
            return Err(Error::new(ErrorKind::InvalidParameters, "the type name is too long")
                .expected_found(format!("fewer than {MAX_TYPE_NAME} bytes"), type_name.len()));
        }
        if size == 0 || size > isize::MAX as usize {
            return Err(Error::new(ErrorKind::InvalidParameters, "a user data object needs a size")
                .expected_found(format!("1..={}", isize::MAX), size));
        }
        Ok(UserDataObject {
            obj: Arc::new(UserDataObj {
                header: ObjectHeader::new(ctx, "user-data", None)?,
                type_name: type_name.to_owned(),
                size,
                buffer: SharedBuffer::new(),
            }),
        })
    }

    /// `VX_USER_DATA_OBJECT_NAME`.
    pub fn type_name(&self) -> &str {
        &self.obj.type_name
    }
    /// `VX_USER_DATA_OBJECT_SIZE`.
    pub fn size(&self) -> usize {
        self.obj.size
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True once the bytes exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.buffer.is_allocated()
    }

    pub(crate) fn ensure_allocated(&self) -> Result<()> {
        self.obj.buffer.ensure(self.obj.size, &self.obj.header.ctx.resources)
    }

    fn check_range(&self, offset: usize, len: usize) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.obj.size) {
            return Err(Error::new(ErrorKind::InvalidParameters, "the byte range lies outside the object")
                .on_object(&self.name())
                .expected_found(format!("offset + length <= {}", self.obj.size), format!("{offset} + {len}")));
        }
        Ok(())
    }

    pub(crate) fn copy_out_impl(&self, offset: usize, out: &mut [u8], access: Access) -> Result<()> {
        self.obj.header.check_access(access)?;
        self.check_range(offset, out.len())?;
        self.ensure_allocated()?;
        let lease = self.obj.buffer.acquire(WHOLE, false)?;
        // SAFETY: the range was checked against size == buffer length; the read lease keeps writers
        // away while we copy.
        unsafe { std::ptr::copy_nonoverlapping(lease.ptr.add(offset), out.as_mut_ptr(), out.len()) };
        self.obj.buffer.release(lease.slot);
        Ok(())
    }

    pub(crate) fn copy_in_impl(&self, offset: usize, src: &[u8], access: Access) -> Result<()> {
        self.obj.header.check_access(access)?;
        self.check_range(offset, src.len())?;
        self.ensure_allocated()?;
        let lease = self.obj.buffer.acquire(WHOLE, true)?;
        // SAFETY: range checked as above; the write lease makes this the only access.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), lease.ptr.add(offset), src.len()) };
        self.obj.buffer.release(lease.slot);
        Ok(())
    }

    /// `vxCopyUserDataObject` (read): copy bytes starting at `offset` into `out`.
    pub fn copy_to(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.copy_out_impl(offset, out, Access::Application)
    }

    /// `vxCopyUserDataObject` (write): copy `src` into the object at `offset`.
    pub fn copy_from(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.copy_in_impl(offset, src, Access::Application)
    }
}
