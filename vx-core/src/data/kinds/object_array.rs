//! Object arrays (`vx_object_array`): `count` objects of one type and meta data, made from an
//! exemplar; each item is a [`Reference`] that is part of the array.

use std::fmt;

use super::{DataObject, ObjectMeta, Reference};
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, Handle, ObjectKind, Refusal, kind_names, meta_attributes};
use crate::data::object::ObjectHeader;
use crate::data::types::DataType;
use crate::data::wire::{AttrValue, size};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::kinds::object_array::Wire;

kind_names! {
    kind: ObjectArrayKind, meta: ObjectArrayMeta, attr: ObjectArrayAttr, partial: ObjectArrayPartial;
    exports: MAX_OBJECT_ARRAY_ITEMS, ObjectArray, ObjectArrayAttr, ObjectArrayMeta
}

/// The object type with code `code`.
fn type_of(code: u32) -> Result<DataType> {
    DataType::from_code(code)
        .ok_or_else(|| Error::new(ErrorKind::InvalidType, "unknown object type code").found(format!("{code:#x}")))
}

/// The most items an object array holds.
pub const MAX_OBJECT_ARRAY_ITEMS: usize = 1 << 16;

/// The meta data of an object array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectArrayMeta {
    /// `VX_OBJECT_ARRAY_ITEMTYPE`.
    pub item_type: DataType,
    /// `VX_OBJECT_ARRAY_NUMITEMS`.
    pub count: usize,
}

/// The state behind an object array handle, next to its header.
pub struct ObjectArrayBody {
    items: Vec<Reference>,
    item_type: DataType,
}

/// An object array handle.
pub type ObjectArray = Handle<ObjectArrayKind>;

/// The [`ObjectKind`] of object arrays.
pub struct ObjectArrayKind;

impl fmt::Display for ObjectArrayMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "object array of {} {}", self.count, self.item_type)
    }
}

meta_attributes! {
    /// One meta-format attribute of an object array.
    ObjectArrayAttr, ObjectArrayPartial for ObjectArrayMeta {
        /// `VX_OBJECT_ARRAY_ITEMTYPE`.
        ItemType(DataType) => item_type @ OBJECT_ARRAY_ITEMTYPE: |v: &AttrValue<'_>| v.u32().and_then(type_of),
        /// `VX_OBJECT_ARRAY_NUMITEMS`.
        Count(usize) => count @ OBJECT_ARRAY_NUMITEMS: AttrValue::size,
    }
}

impl ObjectKind for ObjectArrayKind {
    type Wire = Wire;
    const NAME: &'static str = "ObjectArray";
    /// Its items' valid rectangles (none for items without).
    const VALID_RECTS: bool = true;
    type Meta = ObjectArrayMeta;
    type Attr = ObjectArrayAttr;
    type Partial = ObjectArrayPartial;
    type Body = ObjectArrayBody;
    fn fmt_details(h: &ObjectArray, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} x {}", h.count(), h.item_type())
    }
    fn meta(h: &ObjectArray) -> ObjectArrayMeta {
        ObjectArrayMeta { item_type: h.item_type(), count: h.count() }
    }
    fn build(header: ObjectHeader, _: &ObjectArrayMeta) -> Result<ObjectArray> {
        Err(Error::new(ErrorKind::InvalidType, "an object array cannot hold object arrays").on_object(&header.name()))
    }
    fn valid_rect_parts(h: &ObjectArray, f: &mut dyn FnMut(&dyn crate::data::kind::ValidRectPart)) {
        h.items().iter().for_each(|i| i.valid_rect_parts(f))
    }
    fn new_like(h: &ObjectArray, header: ObjectHeader) -> Result<ObjectArray> {
        ObjectArray::with_header(header, &h.items()[0].meta(), h.count())
    }
    /// A pipelined frame's copy: as many items, each made from the first item's meta data.
    fn frame_copy(h: &ObjectArray, slot: usize) -> Option<Result<ObjectArray>> {
        let header = ObjectHeader::frame_copy_of(&h.obj.header, slot);
        Some(header.and_then(|header| ObjectArray::with_header(header, &h.items()[0].meta(), h.count())))
    }
    fn ensure_allocated(h: &ObjectArray) -> Result<()> {
        h.obj.body.items.iter().try_for_each(Reference::ensure_allocated)
    }
    fn apply(h: &ObjectArray, w: &ObjectArrayMeta) -> std::result::Result<Applied, Refusal> {
        if h.item_type() != w.item_type {
            return Err(Refusal::Mismatch(ErrorKind::InvalidType));
        }
        if h.count() != w.count {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        Ok(Applied::Unchanged)
    }
    fn exemplar(p: &mut ObjectArrayPartial, m: &ObjectArrayMeta) {
        *p = ObjectArrayPartial::of(m);
    }
    fn resolve(p: &ObjectArrayPartial) -> std::result::Result<ObjectArrayMeta, &'static str> {
        Ok(ObjectArrayMeta {
            item_type: p.item_type.ok_or("object array item type")?,
            count: p.count.filter(|n| *n > 0).ok_or("object array item count")?,
        })
    }
    fn to_wire(h: &ObjectArray) -> Wire {
        Wire { item_type: h.item_type().code() as u32, count: h.count() as u64 }
    }
    fn from_wire(w: &Wire) -> Result<ObjectArrayMeta> {
        let Wire { item_type, count } = w;
        Ok(ObjectArrayMeta { item_type: type_of(*item_type)?, count: size(*count)? })
    }
}

impl ObjectArray {
    /// `vxCreateObjectArray`: `count` objects with `exemplar`'s type and meta data.
    pub fn new(ctx: &impl AsContext, exemplar: impl Into<Reference>, count: usize) -> Result<ObjectArray> {
        ObjectArray::with_header(ObjectHeader::new(ctx, "object-array", None)?, &exemplar.into().meta(), count)
    }

    /// `vxCreateVirtualObjectArray`: the items are virtual objects of `graph`.
    pub fn new_virtual(graph: &impl VirtualScope, exemplar: impl Into<Reference>, count: usize) -> Result<ObjectArray> {
        let header = ObjectHeader::new(graph, "virtual-object-array", Some(graph.scope_id()))?;
        ObjectArray::with_header(header, &exemplar.into().meta(), count)
    }

    pub(super) fn with_header(header: ObjectHeader, exemplar: &ObjectMeta, count: usize) -> Result<ObjectArray> {
        let item_type = exemplar.data_type();
        if item_type == DataType::ObjectArray {
            return Err(Error::new(ErrorKind::InvalidType, "an object array cannot hold object arrays")
                .on_object(&header.name())
                .found(item_type));
        }
        if count == 0 || count > MAX_OBJECT_ARRAY_ITEMS {
            return Err(Error::new(ErrorKind::InvalidParameters, "an object array's item count is out of range")
                .on_object(&header.name())
                .expected_found(format!("1..={MAX_OBJECT_ARRAY_ITEMS}"), count));
        }
        let items = (0..count)
            .map(|i| Reference::with_meta(ObjectHeader::part_of(&header, "item", i)?, exemplar))
            .collect::<Result<Vec<_>>>()?;
        Ok(Handle::from_body(header, ObjectArrayBody { items, item_type }))
    }

    /// `VX_OBJECT_ARRAY_ITEMTYPE`.
    pub fn item_type(&self) -> DataType {
        self.obj.body.item_type
    }
    /// `VX_OBJECT_ARRAY_NUMITEMS`.
    pub fn count(&self) -> usize {
        self.obj.body.items.len()
    }

    /// `vxGetObjectArrayItem`: item `index` (a handle to the same object each time).
    pub fn item(&self, index: usize) -> Result<Reference> {
        self.item_ref(index).cloned()
    }

    /// Item `index` as its own type: `array.item_as::<Matrix>(3)`.
    pub fn item_as<T: DataObject>(&self, index: usize) -> Result<T> {
        let r = self.item_ref(index)?;
        T::from_reference(r).cloned().ok_or_else(|| self.wrong_type::<T>())
    }

    fn wrong_type<T: DataObject>(&self) -> Error {
        Error::new(ErrorKind::InvalidType, "the object array holds another type")
            .on_object(&self.name())
            .expected_found(T::TYPE, self.item_type())
    }

    pub(crate) fn item_ref(&self, index: usize) -> Result<&Reference> {
        self.obj.body.items.get(index).ok_or_else(|| {
            Error::new(ErrorKind::InvalidParameters, "no such object array item")
                .on_object(&self.name())
                .expected_found(format!("index < {}", self.count()), index)
        })
    }

    /// Every item.
    pub fn items(&self) -> &[Reference] {
        &self.obj.body.items
    }
}

impl<'a> KernelView<'a, ObjectArray> {
    /// Item `index` as its own type, as the kernel sees it (mappable even when virtual).
    pub fn item<T: DataObject>(&self, index: usize) -> Result<KernelView<'a, T>> {
        let r = self.object.item_ref(index)?;
        T::from_reference(r).map(KernelView::new).ok_or_else(|| self.object.wrong_type::<T>())
    }
}
