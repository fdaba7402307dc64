//! [`Handle<K>`]: the handle of a data-object type, written once; each type is a marker `K` that
//! implements [`ObjectKind`] in the type's own file (`pub type Matrix = Handle<MatrixKind>;`).
//! [`BlobKind`]: the fixed-layout types whose bytes are one [`Blob`] (matrices, convolutions, LUTs,
//! distributions, remaps, user data objects): construction, attributes, typed copies and maps,
//! written once here; each type's file keeps its checks, its accessors and its public signatures.

use std::fmt;
use std::sync::Arc;

use crate::data::array::{ArrayItem, ArrayItemType};
use crate::data::blob::{Blob, MappedSlice, MappedSliceMut, RawLease, check_element};
use crate::data::object::{Access, ObjectHeader};
use crate::error::Result;

/// One data-object type, as the host needs it: implemented once, in the type's own file, on a
/// marker type. Not nameable outside the crate.
pub trait ObjectKind: Sized + Send + Sync + 'static {
    /// The type's name in `Debug` output (`Matrix('m#3', …)`).
    const NAME: &'static str;
    /// Its meta data (`MatrixMeta`).
    type Meta: Clone + fmt::Debug + Send + Sync;
    /// The state behind the handle's `Arc`, next to the header.
    type Body: Send + Sync;
    /// What `Debug` prints after the object's name.
    fn fmt_details(h: &Handle<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// A fixed-layout type: its bytes are one [`Blob`], known from its meta data at creation.
pub trait BlobKind: ObjectKind<Body = BlobBody<Self>> {
    /// What the object holds besides its meta data and bytes (a convolution's scale); a new
    /// object starts with the default.
    type Extra: Default + Send + Sync;
    /// Check `meta` and give the bytes it needs (the errors name no object; the caller adds it).
    fn layout(meta: &Self::Meta) -> Result<usize>;
    /// The element type that typed copies and maps must use.
    fn element(meta: &Self::Meta) -> ArrayItemType;
}

/// The handle of a data object: an `Arc` of its header and body.
pub struct Handle<K: ObjectKind> {
    pub(crate) obj: Arc<Obj<K>>,
}

/// Header and body of one object.
pub(crate) struct Obj<K: ObjectKind> {
    pub(super) header: ObjectHeader,
    pub(crate) body: K::Body,
}

/// The body of a [`BlobKind`] object.
pub struct BlobBody<K: BlobKind> {
    pub(super) meta: K::Meta,
    pub(super) data: Blob,
    pub(super) extra: K::Extra,
}

impl<K: ObjectKind> Clone for Handle<K> {
    fn clone(&self) -> Self {
        Handle { obj: Arc::clone(&self.obj) }
    }
}

impl<K: ObjectKind> fmt::Debug for Handle<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}('{}', ", K::NAME, self.name())?;
        K::fmt_details(self, f)?;
        f.write_str(")")
    }
}

impl<K: ObjectKind> Handle<K> {
    /// The handle of a new object.
    pub(super) fn from_body(header: ObjectHeader, body: K::Body) -> Self {
        Handle { obj: Arc::new(Obj { header, body }) }
    }
    /// The object's name.
    pub fn name(&self) -> String {
        self.obj.header.name()
    }
    /// True for virtual objects.
    pub fn is_virtual(&self) -> bool {
        self.obj.header.scope.is_some()
    }
}

impl<K: BlobKind> Handle<K> {
    /// A new object of `meta` under `header` (checked; the bytes are allocated at first need).
    pub(super) fn with_header(header: ObjectHeader, meta: K::Meta) -> Result<Self> {
        let bytes = K::layout(&meta).map_err(|e| e.on_object(&header.name()))?;
        Ok(Handle::from_body(header, BlobBody { data: Blob::new(bytes), extra: K::Extra::default(), meta }))
    }

    /// Every attribute that makes its meta data.
    pub fn meta(&self) -> K::Meta {
        self.obj.body.meta.clone()
    }
    /// The size in bytes (`VX_MATRIX_SIZE`, `VX_LUT_SIZE`, …).
    pub fn size(&self) -> usize {
        self.obj.body.data.len()
    }
    /// True once the bytes exist.
    pub fn is_allocated(&self) -> bool {
        self.obj.body.data.is_allocated()
    }
    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.body.data.ensure(&self.obj.header)
    }

    /// Map the bytes for a module's kernel (the module ABI's `map_data`).
    pub(crate) fn lease_raw(&self, write: bool) -> Result<RawLease<'_>> {
        self.obj.body.data.lease_raw(&self.obj.header, Access::Kernel, write)
    }

    fn check<T: ArrayItem>(&self) -> Result<()> {
        check_element::<T>(&self.obj.header, K::element(&self.obj.body.meta))
    }

    /// Copy every element out (`out` holds exactly as many).
    pub(super) fn copy_whole_to<T: ArrayItem>(&self, out: &mut [T], access: Access) -> Result<()> {
        self.check::<T>()?;
        self.obj.body.data.copy_out_whole(&self.obj.header, access, out)
    }
    /// Copy every element in (`src` holds exactly as many).
    pub(super) fn copy_whole_from<T: ArrayItem>(&self, src: &[T], access: Access) -> Result<()> {
        self.check::<T>()?;
        self.obj.body.data.copy_in_whole(&self.obj.header, access, src)
    }
    /// Copy elements `first..first + out.len()` out.
    pub(super) fn copy_range_to<T: ArrayItem>(&self, first: usize, out: &mut [T], access: Access) -> Result<()> {
        self.check::<T>()?;
        self.obj.body.data.copy_out(&self.obj.header, access, first, out)
    }
    /// Copy `src` into elements `first..first + src.len()`.
    pub(super) fn copy_range_from<T: ArrayItem>(&self, first: usize, src: &[T], access: Access) -> Result<()> {
        self.check::<T>()?;
        self.obj.body.data.copy_in(&self.obj.header, access, first, src)
    }
    /// Map every element for reading.
    pub(super) fn map_as<T: ArrayItem>(&self, access: Access) -> Result<MappedSlice<'_, T>> {
        self.check::<T>()?;
        self.obj.body.data.map(&self.obj.header, access)
    }
    /// Map every element for writing.
    pub(super) fn map_mut_as<T: ArrayItem>(&self, access: Access) -> Result<MappedSliceMut<'_, T>> {
        self.check::<T>()?;
        self.obj.body.data.map_mut(&self.obj.header, access)
    }
}
