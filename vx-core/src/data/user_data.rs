//! User data objects (`vx_user_data_object`): a named type and a size in bytes, copied in and
//! out or mapped (`vxCopyUserDataObject`, `vxMapUserDataObject`). The type name is part of the
//! meta data. The bytes are allocated on first copy or map, or at verify.

use crate::data::blob::{MappedSlice, MappedSliceMut};
use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{
    Applied, BlobBody, BlobKind, Handle, ObjectKind, Refusal, blob_object, kind_names, meta_attributes,
};
use crate::data::object::{Access, ObjectHeader};
use crate::data::wire::{AttrValue, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::abi_stable::std_types::RString;
use vx_plugin_abi::kinds::user_data::Wire;

kind_names! {
    kind: UserDataObjectKind, meta: UserDataMeta, attr: UserDataAttr, partial: UserDataPartial;
    exports: MAX_TYPE_NAME, UserDataAttr, UserDataMeta, UserDataObject
}

/// `VX_MAX_REFERENCE_NAME`: the longest type name of a user data object.
pub const MAX_TYPE_NAME: usize = 64;

/// The meta data of a user data object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UserDataMeta {
    /// `VX_USER_DATA_OBJECT_NAME`.
    pub type_name: String,
    /// `VX_USER_DATA_OBJECT_SIZE`: bytes.
    pub size: usize,
}

/// The [`ObjectKind`] of user data objects.
pub struct UserDataObjectKind;

/// A user data object handle.
pub type UserDataObject = Handle<UserDataObjectKind>;

impl crate::data::reference::Reference {
    /// The user data object, if this is one.
    pub fn as_user_data_object(&self) -> Option<&UserDataObject> {
        self.get()
    }
}

impl std::fmt::Display for UserDataMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "user data object '{}' of {} bytes", self.type_name, self.size)
    }
}

meta_attributes! {
    /// One meta-format attribute of a user data object.
    UserDataAttr, UserDataPartial for UserDataMeta {
        /// `VX_USER_DATA_OBJECT_SIZE`.
        Size(usize) => size @ USER_DATA_OBJECT_SIZE: AttrValue::size,
        /// `VX_USER_DATA_OBJECT_NAME` (unset: any type name).
        Name(String) => type_name @ USER_DATA_OBJECT_NAME: AttrValue::utf8,
    }
}

impl ObjectKind for UserDataObjectKind {
    type Wire = Wire;
    const NAME: &'static str = "UserDataObject";
    type Meta = UserDataMeta;
    type Attr = UserDataAttr;
    type Partial = UserDataPartial;
    type Body = BlobBody<UserDataObjectKind>;
    blob_object!();
    fn fmt_details(h: &UserDataObject, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "type '{}', {} bytes", h.type_name(), h.size())
    }
    fn apply(h: &UserDataObject, w: &UserDataMeta) -> std::result::Result<Applied, Refusal> {
        if !w.type_name.is_empty() && w.type_name != h.type_name() {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        if w.size != h.size() {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut UserDataPartial, m: &UserDataMeta) {
        *p = UserDataPartial::of(m);
    }
    fn resolve(p: &UserDataPartial) -> std::result::Result<UserDataMeta, &'static str> {
        Ok(UserDataMeta {
            type_name: p.type_name.clone().unwrap_or_default(),
            size: p.size.ok_or("user data object size")?,
        })
    }
    fn to_wire(h: &UserDataObject) -> Wire {
        Wire { type_name: RString::from(h.type_name()), size: h.size() as u64 }
    }
    fn from_wire(w: &Wire) -> Result<UserDataMeta> {
        let Wire { type_name, size: s } = w;
        Ok(UserDataMeta { type_name: type_name.to_string(), size: size(*s)? })
    }
}

impl BlobKind for UserDataObjectKind {
    type Extra = ();
    fn layout(meta: &UserDataMeta) -> Result<usize> {
        if meta.type_name.len() >= MAX_TYPE_NAME {
            return Err(Error::new(ErrorKind::InvalidParameters, "the type name is too long")
                .expected_found(format!("fewer than {MAX_TYPE_NAME} bytes"), meta.type_name.len()));
        }
        if meta.size == 0 || meta.size > isize::MAX as usize {
            return Err(Error::new(ErrorKind::InvalidParameters, "a user data object needs a size")
                .expected_found(format!("1..={}", isize::MAX), meta.size));
        }
        Ok(meta.size)
    }
    fn element(_: &UserDataMeta) -> ArrayItemType {
        u8::ITEM_TYPE
    }
}

impl Handle<UserDataObjectKind> {
    /// `vxCreateUserDataObject`: `size` bytes (at least 1) of a type called `type_name`.
    pub fn new(ctx: &impl AsContext, type_name: &str, size: usize) -> Result<UserDataObject> {
        let meta = UserDataMeta { type_name: type_name.to_owned(), size };
        UserDataObject::with_header(ObjectHeader::new(ctx, "user-data", None)?, meta)
    }

    /// `vxCreateVirtualUserDataObject`: bytes only the kernels of `graph` read and write.
    pub fn new_virtual(graph: &impl VirtualScope, type_name: &str, size: usize) -> Result<UserDataObject> {
        let header = ObjectHeader::new(graph, "virtual-user-data", Some(graph.scope_id()))?;
        UserDataObject::with_header(header, UserDataMeta { type_name: type_name.to_owned(), size })
    }

    /// `VX_USER_DATA_OBJECT_NAME`.
    pub fn type_name(&self) -> &str {
        &self.obj.body.meta.type_name
    }
    /// `vxMapUserDataObject` for reading: every byte; unmapped when the guard drops.
    pub fn map(&self) -> Result<MappedSlice<'_, u8>> {
        self.map_as(Access::Application)
    }

    /// `vxMapUserDataObject` for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'_, u8>> {
        self.map_mut_as(Access::Application)
    }

    /// `vxCopyUserDataObject` (read): copy bytes starting at `offset` into `out`.
    pub fn copy_to(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.copy_range_to(offset, out, Access::Application)
    }

    /// `vxCopyUserDataObject` (write): copy `src` into the object at `offset`.
    pub fn copy_from(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.copy_range_from(offset, src, Access::Application)
    }
}

impl<'a> KernelView<'a, UserDataObject> {
    /// Copy bytes out.
    pub fn copy_to(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        self.object.copy_range_to(offset, out, Access::Kernel)
    }
    /// Copy bytes in.
    pub fn copy_from(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.object.copy_range_from(offset, src, Access::Kernel)
    }
    /// Map every byte for reading.
    pub fn map(&self) -> Result<MappedSlice<'a, u8>> {
        self.object.map_as(Access::Kernel)
    }
    /// Map every byte for writing.
    pub fn map_mut(&self) -> Result<MappedSliceMut<'a, u8>> {
        self.object.map_mut_as(Access::Kernel)
    }
}
