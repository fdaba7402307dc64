//! User data objects (`vx_user_data_object`): a named type and a size in bytes, copied in and
//! out or mapped (`vxCopyUserDataObject`, `vxMapUserDataObject`). The type name is part of the
//! meta data. The bytes are allocated on first copy or map, or at verify.

use std::sync::Arc;

use crate::data::blob::{Blob, MappedSlice, MappedSliceMut};
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

/// `VX_MAX_REFERENCE_NAME`: the longest type name of a user data object.
pub const MAX_TYPE_NAME: usize = 64;

pub(crate) struct UserDataObj {
    pub(super) header: ObjectHeader,
    pub(super) type_name: String,
    pub(super) size: usize,
    data: Blob,
}

/// A user data object handle.
#[derive(Clone)]
pub struct UserDataObject {
    pub(super) obj: Arc<UserDataObj>,
}

impl std::fmt::Debug for UserDataObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserDataObject('{}', type '{}', {} bytes)", self.name(), self.type_name(), self.size())
    }
}

impl UserDataObject {
    /// The storage and header (a module kernel's raw map).
    pub(crate) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.data, &self.obj.header)
    }

    /// `vxCreateUserDataObject`: `size` bytes (at least 1) of a type called `type_name`.
    pub fn new(ctx: &impl AsContext, type_name: &str, size: usize) -> Result<UserDataObject> {
        UserDataObject::with_header(ObjectHeader::new(ctx, "user-data", None)?, type_name, size)
    }

    /// `vxCreateVirtualUserDataObject`: bytes only the kernels of `graph` read and write.
    pub fn new_virtual(graph: &impl VirtualScope, type_name: &str, size: usize) -> Result<UserDataObject> {
        let header = ObjectHeader::new(graph, "virtual-user-data", Some(graph.scope_id()))?;
        UserDataObject::with_header(header, type_name, size)
    }

    pub(super) fn with_header(header: ObjectHeader, type_name: &str, size: usize) -> Result<UserDataObject> {
        if type_name.len() >= MAX_TYPE_NAME {
            return Err(Error::new(ErrorKind::InvalidParameters, "the type name is too long")
                .on_object(&header.name())
                .expected_found(format!("fewer than {MAX_TYPE_NAME} bytes"), type_name.len()));
        }
        if size == 0 || size > isize::MAX as usize {
            return Err(Error::new(ErrorKind::InvalidParameters, "a user data object needs a size")
                .on_object(&header.name())
                .expected_found(format!("1..={}", isize::MAX), size));
        }
        Ok(UserDataObject {
            obj: Arc::new(UserDataObj { header, type_name: type_name.to_owned(), size, data: Blob::new(size) }),
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
        self.obj.data.is_allocated()
    }

    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.data.ensure(&self.obj.header)
    }

    pub(crate) fn copy_out_impl(&self, offset: usize, out: &mut [u8], access: Access) -> Result<()> {
        self.obj.data.copy_out(&self.obj.header, access, offset, out)
    }

    pub(crate) fn copy_in_impl(&self, offset: usize, src: &[u8], access: Access) -> Result<()> {
        self.obj.data.copy_in(&self.obj.header, access, offset, src)
    }

    /// `vxMapUserDataObject` for reading: every byte; unmapped when the guard drops.
    pub fn map(&self) -> Result<MappedSlice<'_, u8>> {
        self.obj.data.map(&self.obj.header, Access::Application)
    }

    /// `vxMapUserDataObject` for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'_, u8>> {
        self.obj.data.map_mut(&self.obj.header, Access::Application)
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

impl<'a> KernelView<'a, UserDataObject> {
    /// Copy bytes out.
    pub fn copy_to(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.object.copy_out_impl(offset, out, Access::Kernel)
    }
    /// Copy bytes in.
    pub fn copy_from(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.object.copy_in_impl(offset, src, Access::Kernel)
    }
    /// Map every byte for reading.
    pub fn map(&self) -> Result<MappedSlice<'a, u8>> {
        self.object.obj.data.map(&self.object.obj.header, Access::Kernel)
    }
    /// Map every byte for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'a, u8>> {
        self.object.obj.data.map_mut(&self.object.obj.header, Access::Kernel)
    }
}
