//! Look-up tables (`vx_lut`): `count` entries of U8 (up to 256) or S16 (up to 65536, indexed from
//! `-count/2`), copied or mapped whole (`vxCopyLUT`, `vxMapLUT`).

use std::sync::Arc;

use crate::data::array::{ArrayItem, ArrayItemType};
use crate::data::blob::{Blob, MappedSlice, MappedSliceMut, check_element};
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

/// The meta data of a LUT (`VX_LUT_TYPE`, `VX_LUT_COUNT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LutMeta {
    /// `VX_LUT_TYPE`: [`ScalarType::Uint8`] or [`ScalarType::Int16`].
    pub element: ScalarType,
    /// `VX_LUT_COUNT`.
    pub count: usize,
}

impl LutMeta {
    /// `VX_LUT_OFFSET`: the entry of input value 0 (0 for U8, `count / 2` for S16).
    pub fn offset(&self) -> usize {
        if self.element == ScalarType::Int16 { self.count / 2 } else { 0 }
    }
}

pub(crate) struct LutObj {
    pub(super) header: ObjectHeader,
    meta: LutMeta,
    data: Blob,
}

/// A LUT handle.
#[derive(Clone)]
pub struct Lut {
    pub(super) obj: Arc<LutObj>,
}

impl std::fmt::Debug for Lut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lut('{}', {} x {})", self.name(), self.obj.meta.count, self.obj.meta.element)
    }
}

impl Lut {
    /// The storage and header (a module kernel's raw map).
    pub(crate) fn blob(&self) -> (&Blob, &ObjectHeader) {
        (&self.obj.data, &self.obj.header)
    }

    /// `vxCreateLUT`: `count` zero entries of `element` (U8: 1..=256, S16: 1..=65536).
    pub fn new(ctx: &impl AsContext, element: ScalarType, count: usize) -> Result<Lut> {
        Lut::with_header(ObjectHeader::new(ctx, "lut", None)?, LutMeta { element, count })
    }

    /// `vxCreateVirtualLUT`.
    pub fn new_virtual(graph: &impl VirtualScope, element: ScalarType, count: usize) -> Result<Lut> {
        Lut::with_header(ObjectHeader::new(graph, "virtual-lut", Some(graph.scope_id()))?, LutMeta { element, count })
    }

    pub(super) fn with_header(header: ObjectHeader, meta: LutMeta) -> Result<Lut> {
        let most = match meta.element {
            ScalarType::Uint8 => 256,
            ScalarType::Int16 => 65536,
            other => {
                return Err(Error::new(ErrorKind::InvalidType, "a LUT holds U8 or S16 entries")
                    .on_object(&header.name())
                    .expected_found("Uint8 or Int16", other));
            }
        };
        if meta.count == 0 || meta.count > most {
            return Err(Error::new(ErrorKind::InvalidParameters, "the LUT's entry count is out of range")
                .on_object(&header.name())
                .expected_found(format!("1..={most}"), meta.count));
        }
        let data = Blob::new(meta.count * meta.element.size());
        Ok(Lut { obj: Arc::new(LutObj { header, meta, data }) })
    }

    /// Every attribute that makes its meta data.
    pub fn meta(&self) -> LutMeta {
        self.obj.meta
    }
    /// `VX_LUT_TYPE`.
    pub fn element_type(&self) -> ScalarType {
        self.obj.meta.element
    }
    /// `VX_LUT_COUNT`.
    pub fn count(&self) -> usize {
        self.obj.meta.count
    }
    /// `VX_LUT_SIZE`: bytes.
    pub fn size(&self) -> usize {
        self.obj.data.len()
    }
    /// `VX_LUT_OFFSET`.
    pub fn offset(&self) -> usize {
        self.obj.meta.offset()
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True once the entries exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.data.is_allocated()
    }
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.data.ensure(&self.obj.header)
    }

    fn check<T: ArrayItem>(&self) -> Result<()> {
        check_element::<T>(&self.obj.header, ArrayItemType::Scalar(self.obj.meta.element))
    }

    fn copy_to_impl<T: ArrayItem>(&self, out: &mut [T], access: Access) -> Result<()> {
        self.check::<T>()?;
        self.obj.data.copy_out_whole(&self.obj.header, access, out)
    }
    fn copy_from_impl<T: ArrayItem>(&self, src: &[T], access: Access) -> Result<()> {
        self.check::<T>()?;
        self.obj.data.copy_in_whole(&self.obj.header, access, src)
    }
    fn map_impl<T: ArrayItem>(&self, access: Access) -> Result<MappedSlice<'_, T>> {
        self.check::<T>()?;
        self.obj.data.map(&self.obj.header, access)
    }
    fn map_mut_impl<T: ArrayItem>(&self, access: Access) -> Result<MappedSliceMut<'_, T>> {
        self.check::<T>()?;
        self.obj.data.map_mut(&self.obj.header, access)
    }

    /// `vxCopyLUT` (read): every entry (`u8` or `i16`, the LUT's type).
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.copy_to_impl(out, Access::Application)
    }
    /// `vxCopyLUT` (write).
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.copy_from_impl(src, Access::Application)
    }
    /// `vxMapLUT` for reading; unmapped when the guard drops.
    pub fn map<T: ArrayItem>(&self) -> Result<MappedSlice<'_, T>> {
        self.map_impl(Access::Application)
    }
    /// `vxMapLUT` for writing.
    pub fn map_mut<T: ArrayItem>(&self) -> Result<MappedSliceMut<'_, T>> {
        self.map_mut_impl(Access::Application)
    }
}

impl<'a> KernelView<'a, Lut> {
    /// Copy every entry out.
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.object.copy_to_impl(out, Access::Kernel)
    }
    /// Copy every entry in.
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.object.copy_from_impl(src, Access::Kernel)
    }
    /// Map the entries for reading.
    pub fn map<T: ArrayItem>(&self) -> Result<MappedSlice<'a, T>> {
        self.object.map_impl(Access::Kernel)
    }
    /// Map the entries for writing.
    pub fn map_mut<T: ArrayItem>(&self) -> Result<MappedSliceMut<'a, T>> {
        self.object.map_mut_impl(Access::Kernel)
    }
}
