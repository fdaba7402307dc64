//! References (`vx_reference`): any data object, as passed to nodes and kernels, with its meta
//! data and identity. The enums themselves ([`Reference`], [`ObjectMeta`]) and [`DataObject`] are
//! generated from the list of kinds in `data/kinds/`; what is written here serves every type
//! through [`AnyObject`](crate::data::kinds::AnyObject).

use std::sync::Arc;

use crate::data::object::ObjectHeader;
use crate::error::Result;
use crate::shared::ContextShared;

pub(crate) use crate::data::kinds::{DataObject, ObjectMeta, Reference};

impl Reference {
    pub(crate) fn header(&self) -> &ObjectHeader {
        self.any().header()
    }

    /// The object's name.
    pub fn name(&self) -> String {
        self.header().name()
    }

    /// True for virtual objects.
    pub fn is_virtual(&self) -> bool {
        self.header().scope.is_some()
    }

    /// A virtual object that is not part of another (a pyramid level, an object array's item, an
    /// ROI are parts): the memory plan places only these.
    pub(crate) fn is_standalone_virtual(&self) -> bool {
        self.is_virtual() && self.header().ancestors.is_empty()
    }

    /// The object's process-unique id (never reused; a graph's and a node's are separate spaces).
    pub fn id(&self) -> u64 {
        self.header().id
    }

    pub(crate) fn context(&self) -> &Arc<ContextShared> {
        &self.header().ctx
    }

    /// The object's current meta data.
    pub fn meta(&self) -> ObjectMeta {
        self.any().meta()
    }

    /// What [`overlaps`](Self::overlaps) compares first, for indexes (`graph/verify/overlap.rs`):
    /// the object's id, its containers' ids, and for images and tensors the storage they live in.
    /// Two references overlap only if they share an id among these or a storage.
    pub(crate) fn overlap_keys(&self) -> OverlapKeys<'_> {
        let h = self.header();
        OverlapKeys { id: h.id, containers: &h.ancestors, storage: self.any().storage_key() }
    }

    /// True when writing `self` may change what reading `other` sees: the same object, one a part
    /// of the other (a pyramid and its level, an object array and its item, an image and its ROI),
    /// or images (tensors) sharing pixels (elements).
    pub(crate) fn overlaps(&self, other: &Reference) -> bool {
        if self.header().contains_or_within(other.header()) {
            // Checked first: a virtual image of unknown size covers an empty rectangle.
            return true;
        }
        let key = self.any().storage_key();
        key.is_some() && key == other.any().storage_key() && self.share_elements(other)
    }

    /// `VX_REFERENCE_COUNT`: how many handles to the object exist now — the application's and those
    /// the runtime holds (a graph's nodes and parameters, a schedule config's queues, a container).
    /// A graph releases its own when dropped; after [`Graph::wait`](crate::Graph::wait) no thread of
    /// the runtime holds one that the graph did not hold before the frames ran.
    pub fn reference_count(&self) -> usize {
        self.any().reference_count()
    }

    /// True when both refer to the same object.
    pub fn same_object(&self, other: &Reference) -> bool {
        self.header().id == other.header().id
    }

    /// Each part with a valid rectangle, in order: an image, a pyramid's levels, an object
    /// array's items' parts (`graph/verify/valid_regions.rs`).
    pub(crate) fn valid_rect_parts(&self, f: &mut dyn FnMut(&dyn crate::data::kind::ValidRectPart)) {
        self.any().valid_rect_parts(f)
    }

    /// The copy of a virtual object a pipelined graph gives frame slot `frame_slot`
    /// (`graph/verify/frames.rs`).
    pub(crate) fn frame_copy(&self, frame_slot: usize) -> Result<Reference> {
        self.any().frame_copy(frame_slot)
    }

    pub(crate) fn ensure_allocated(&self) -> Result<()> {
        self.any().ensure_allocated()
    }

    /// A new object of the same type and meta data in the same context, not virtual, with its
    /// own storage (a delay's slots, `vxCreateDelay`). Refused for an object whose meta data is
    /// not complete (a virtual one the graph has not completed yet).
    pub fn new_like(&self) -> Result<Reference> {
        let header = crate::data::object::ObjectHeader::new(self.context(), "delay-slot", None)?;
        self.any().new_like(header).map_err(|e| e.on_object(&self.name()))
    }

    /// The object, if it is a `T`: `r.get::<Matrix>()`. The most used kinds also have a shortcut
    /// in their own file (`as_image`, `as_scalar`, `as_array`, `as_user_data_object`).
    pub fn get<T: DataObject>(&self) -> Option<&T> {
        T::from_reference(self)
    }
}

impl From<&Reference> for Reference {
    fn from(r: &Reference) -> Reference {
        r.clone()
    }
}
impl From<&Reference> for Option<Reference> {
    fn from(r: &Reference) -> Option<Reference> {
        Some(r.clone())
    }
}

/// The keys under which a reference can overlap another ([`Reference::overlap_keys`]).
pub(crate) struct OverlapKeys<'a> {
    /// The object's id.
    pub(crate) id: u64,
    /// The ids of the objects it is part of.
    pub(crate) containers: &'a [u64],
    /// The storage of an image or tensor.
    pub(crate) storage: Option<usize>,
}
