//! Look-up tables (`vx_lut`): `count` entries of U8 (up to 256) or S16 (up to 65536, indexed from
//! `-count/2`), copied or mapped whole (`vxCopyLUT`, `vxMapLUT`).

use crate::data::blob::{MappedSlice, MappedSliceMut};
use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{
    Applied, BlobBody, BlobKind, Handle, ObjectKind, Refusal, blob_object, kind_names, meta_attributes, positive,
};
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::data::wire::{AttrValue, code, scalar_type, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::kinds::lut::Wire;

kind_names! {
    kind: LutKind, meta: LutMeta, attr: LutAttr, partial: LutPartial;
    exports: Lut, LutAttr, LutMeta
}

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

/// The [`ObjectKind`] of LUTs.
pub struct LutKind;

/// A LUT handle.
pub type Lut = Handle<LutKind>;

impl std::fmt::Display for LutMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LUT of {} {}", self.count, self.element)
    }
}

meta_attributes! {
    /// One meta-format attribute of a LUT.
    LutAttr, LutPartial for LutMeta {
        /// `VX_LUT_TYPE`.
        Type(ScalarType) => element @ LUT_TYPE: AttrValue::scalar_type,
        /// `VX_LUT_COUNT`.
        Count(usize) => count @ LUT_COUNT: AttrValue::size,
    }
}

impl ObjectKind for LutKind {
    type Wire = Wire;
    const NAME: &'static str = "Lut";
    type Meta = LutMeta;
    type Attr = LutAttr;
    type Partial = LutPartial;
    type Body = BlobBody<LutKind>;
    blob_object!();
    fn fmt_details(h: &Lut, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x {}", h.count(), h.element_type())
    }
    fn apply(h: &Lut, w: &LutMeta) -> std::result::Result<Applied, Refusal> {
        let m = h.meta();
        if m.element != w.element {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        if m.count != w.count {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut LutPartial, m: &LutMeta) {
        *p = LutPartial::of(m);
    }
    fn resolve(p: &LutPartial) -> std::result::Result<LutMeta, &'static str> {
        Ok(LutMeta { element: p.element.ok_or("LUT type")?, count: positive(p.count, "LUT count")? })
    }
    fn to_wire(h: &Lut) -> Wire {
        let m = h.meta();
        Wire { element: code(m.element), count: m.count as u64, offset: m.offset() as u32 }
    }
    fn from_wire(w: &Wire) -> Result<LutMeta> {
        let Wire { element, count, .. } = w;
        Ok(LutMeta { element: scalar_type(*element)?, count: size(*count)? })
    }
}

impl BlobKind for LutKind {
    type Extra = ();
    fn layout(meta: &LutMeta) -> Result<usize> {
        let most = match meta.element {
            ScalarType::Uint8 => 256,
            ScalarType::Int16 => 65536,
            other => {
                return Err(Error::new(ErrorKind::InvalidType, "a LUT holds U8 or S16 entries")
                    .expected_found("Uint8 or Int16", other));
            }
        };
        if meta.count == 0 || meta.count > most {
            return Err(Error::new(ErrorKind::InvalidParameters, "the LUT's entry count is out of range")
                .expected_found(format!("1..={most}"), meta.count));
        }
        Ok(meta.count * meta.element.size())
    }
    fn element(m: &LutMeta) -> ArrayItemType {
        m.element.into()
    }
}

impl Handle<LutKind> {
    /// `vxCreateLUT`: `count` zero entries of `element` (U8: 1..=256, S16: 1..=65536).
    pub fn new(ctx: &impl AsContext, element: ScalarType, count: usize) -> Result<Lut> {
        Lut::with_header(ObjectHeader::new(ctx, "lut", None)?, LutMeta { element, count })
    }

    /// `vxCreateVirtualLUT`.
    pub fn new_virtual(graph: &impl VirtualScope, element: ScalarType, count: usize) -> Result<Lut> {
        Lut::with_header(ObjectHeader::new(graph, "virtual-lut", Some(graph.scope_id()))?, LutMeta { element, count })
    }

    /// `VX_LUT_TYPE`.
    pub fn element_type(&self) -> ScalarType {
        self.obj.body.meta.element
    }
    /// `VX_LUT_COUNT`.
    pub fn count(&self) -> usize {
        self.obj.body.meta.count
    }
    /// `VX_LUT_OFFSET`.
    pub fn offset(&self) -> usize {
        self.obj.body.meta.offset()
    }
    /// `vxCopyLUT` (read): every entry (`u8` or `i16`, the LUT's type).
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.copy_whole_to(out, Access::Application)
    }
    /// `vxCopyLUT` (write).
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.copy_whole_from(src, Access::Application)
    }
    /// `vxMapLUT` for reading; unmapped when the guard drops.
    pub fn map<T: ArrayItem>(&self) -> Result<MappedSlice<'_, T>> {
        self.map_as(Access::Application)
    }
    /// `vxMapLUT` for writing.
    pub fn map_mut<T: ArrayItem>(&self) -> Result<MappedSliceMut<'_, T>> {
        self.map_mut_as(Access::Application)
    }
}

impl<'a> KernelView<'a, Lut> {
    /// Copy every entry out.
    pub fn copy_to<T: ArrayItem>(&self, out: &mut [T]) -> Result<()> {
        self.object.copy_whole_to(out, Access::Kernel)
    }
    /// Copy every entry in.
    pub fn copy_from<T: ArrayItem>(&self, src: &[T]) -> Result<()> {
        self.object.copy_whole_from(src, Access::Kernel)
    }
    /// Map the entries for reading.
    pub fn map<T: ArrayItem>(&self) -> Result<MappedSlice<'a, T>> {
        self.object.map_as(Access::Kernel)
    }
    /// Map the entries for writing.
    pub fn map_mut<T: ArrayItem>(&self) -> Result<MappedSliceMut<'a, T>> {
        self.object.map_mut_as(Access::Kernel)
    }
}
