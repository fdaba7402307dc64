//! Object arrays (`vx_object_array`): `count` objects made like an exemplar (same type and meta
//! data, not its values). Items are objects of their own, usable as node parameters; writing the
//! object array writes every item. Items of a virtual object array are virtual.

use std::sync::Arc;

use crate::data::object::ObjectHeader;
use crate::data::reference::{DataObject, KernelView, ObjectMeta, Reference};
use crate::data::types::DataType;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};

/// The most items an object array holds.
pub const MAX_OBJECT_ARRAY_ITEMS: usize = 1 << 16;

pub(crate) struct ObjectArrayObj {
    pub(crate) header: ObjectHeader,
    items: Vec<Reference>,
    item_type: DataType,
}

/// An object array handle.
#[derive(Clone)]
pub struct ObjectArray {
    pub(crate) obj: Arc<ObjectArrayObj>,
}

impl std::fmt::Debug for ObjectArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectArray('{}', {} x {})", self.name(), self.count(), self.item_type())
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

    pub(crate) fn with_header(header: ObjectHeader, exemplar: &ObjectMeta, count: usize) -> Result<ObjectArray> {
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
        Ok(ObjectArray { obj: Arc::new(ObjectArrayObj { header, items, item_type }) })
    }

    /// `VX_OBJECT_ARRAY_ITEMTYPE`.
    pub fn item_type(&self) -> DataType {
        self.obj.item_type
    }
    /// `VX_OBJECT_ARRAY_NUMITEMS`.
    pub fn count(&self) -> usize {
        self.obj.items.len()
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True for virtual object arrays.
    pub fn is_virtual(&self) -> bool {
        self.obj.header.scope.is_some()
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
        self.obj.items.get(index).ok_or_else(|| {
            Error::new(ErrorKind::InvalidParameters, "no such object array item")
                .on_object(&self.name())
                .expected_found(format!("index < {}", self.count()), index)
        })
    }

    /// Every item.
    pub fn items(&self) -> &[Reference] {
        &self.obj.items
    }

    pub(crate) fn ensure_allocated(&self) -> Result<()> {
        self.obj.items.iter().try_for_each(Reference::ensure_allocated)
    }
}

impl<'a> KernelView<'a, ObjectArray> {
    /// Item `index` as its own type, as the kernel sees it (mappable even when virtual).
    pub fn item<T: DataObject>(&self, index: usize) -> Result<KernelView<'a, T>> {
        let r = self.object.item_ref(index)?;
        T::from_reference(r).map(KernelView::new).ok_or_else(|| self.object.wrong_type::<T>())
    }
}
