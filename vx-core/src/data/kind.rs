//! [`ObjectKind`]: what one data-object type is to the host (its meta data, how verify completes
//! or checks it, its meta-format attributes, its wire form, storage, frame copies), implemented
//! once in the type's own file on a marker `K`; [`Handle<K>`]: the handle of every type, written
//! once (`pub type Matrix = Handle<MatrixKind>;`). [`BlobKind`]: the fixed-layout types whose
//! bytes are one [`Blob`] (matrices, convolutions, LUTs, distributions, remaps, user data
//! objects): construction, attributes, typed copies and maps, written once here. Two helper
//! macros for the type files: `meta_attributes!` (a kind's attribute enum and partial meta) and
//! `blob_object!` (the `ObjectKind` functions every blob kind shares).

use std::fmt;
use std::sync::Arc;

use crate::data::blob::{Blob, BytesMap, MappedSlice, MappedSliceMut, RawLease, check_element};
pub(super) use crate::data::buffer::PlanStorage;
use crate::data::items::{ArrayItem, ArrayItemType};
use crate::data::kernel_view::KernelView;
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::Direction;
use crate::data::wire::{AttrValue, WireMeta};
use crate::error::{Error, ErrorKind, Result};

/// One data-object type, as the host needs it: implemented once, in the type's own file, on a
/// marker type. Not nameable outside the crate. The code that serves every type (verify, meta
/// formats, object arrays) reaches these through `data/kinds/mod.rs`, which names no type.
pub trait ObjectKind: Sized + Send + Sync + 'static {
    /// The type's name in `Debug` output (`Matrix('m#3', …)`).
    const NAME: &'static str;
    /// True when a validator may give the object valid rectangles (images, pyramids, object
    /// arrays of them): it has [`valid_rect_parts`](Self::valid_rect_parts).
    const VALID_RECTS: bool = false;
    /// The directions in which a tiling kernel may take an object of this type as a parameter
    /// (the tiling extension: images either way, scalars as inputs). Default: none.
    const TILING_DIRECTIONS: &'static [Direction] = &[];
    /// Its meta data (`MatrixMeta`): what verify compares; `Display` in messages.
    /// Its wire meta (`vx_plugin_abi::kinds::<kind>::Wire`), a variant of the wire `ObjectMeta`.
    type Wire: Into<WireMeta>;
    type Meta: Clone + PartialEq + fmt::Debug + fmt::Display + Send + Sync;
    /// One meta-format attribute (`vxSetMetaFormatAttribute`: `MatrixAttr::Rows(5)`).
    type Attr: Clone + fmt::Debug + PartialEq;
    /// The attributes a meta format has been given so far (from `meta_attributes!`).
    type Partial: Default + Clone + fmt::Debug + Send + Sync + Recorded<Self::Attr>;
    /// The state behind the handle's `Arc`, next to the header.
    type Body: Send + Sync;
    /// What `Debug` prints after the object's name.
    fn fmt_details(h: &Handle<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result;

    /// The meta data now.
    fn meta(h: &Handle<Self>) -> Self::Meta;
    /// A new object of `meta` under `header` (an object array's item).
    fn build(header: ObjectHeader, meta: &Self::Meta) -> Result<Handle<Self>>;
    /// Make the storage exist (verify allocates every object its graph uses).
    fn ensure_allocated(_: &Handle<Self>) -> Result<()> {
        Ok(())
    }
    /// Verify's meta pass: complete a virtual object from `want`, or check a real one against it.
    fn apply(h: &Handle<Self>, want: &Self::Meta) -> std::result::Result<Applied, Refusal>;

    /// Record attribute `a` (the errors name no parameter; the caller adds it). Default: as given.
    fn set(p: &mut Self::Partial, a: Self::Attr) -> Result<()> {
        p.record(a);
        Ok(())
    }
    /// Record every attribute of an exemplar's meta data (`vxSetMetaFormatFromReference`).
    fn exemplar(p: &mut Self::Partial, m: &Self::Meta);
    /// What the object gives a meta format as an exemplar (`vxSetMetaFormatFromReference`): its
    /// meta data without the values it holds (a convolution's scale). Default: [`Self::meta`].
    fn exemplar_meta(h: &Handle<Self>) -> Self::Meta {
        Self::meta(h)
    }
    /// The complete meta data, or the name of the attribute left unset ("matrix rows").
    fn resolve(p: &Self::Partial) -> std::result::Result<Self::Meta, &'static str>;

    /// The wire form (with the values a validator may read: a scalar's value, an array's count).
    fn to_wire(h: &Handle<Self>) -> Self::Wire;
    /// The meta data a module gave for an output.
    fn from_wire(w: &Self::Wire) -> Result<Self::Meta>;
    /// The attribute with OpenVX code `v.code`; `None` when this type has no such attribute.
    fn attr_by_code(v: &AttrValue<'_>) -> Option<Result<Self::Attr>> {
        Self::Partial::by_code(v)
    }

    /// Map the bytes for a module's kernel (the module ABI's `map_data`); `None`: this type is
    /// not mapped as data.
    fn map_raw(_: &Handle<Self>, _write: bool) -> Option<Result<RawMap<'_>>> {
        None
    }

    /// The copy a pipelined graph gives frame slot `slot` (`None`: not supported for this type).
    /// Default: a virtual object of the same graph and meta data with its own storage (the
    /// producer writes it each frame); images and arrays add what they carry beyond their meta.
    /// A new object like `h` under `header` (a delay's slot: same type and meta data, its own
    /// storage). Default: [`build`](Self::build) from the meta data; object arrays make their
    /// items from their first item's.
    fn new_like(h: &Handle<Self>, header: ObjectHeader) -> Result<Handle<Self>> {
        Self::build(header, &Self::meta(h))
    }
    fn frame_copy(h: &Handle<Self>, slot: usize) -> Option<Result<Handle<Self>>> {
        Some(ObjectHeader::frame_copy_of(&h.obj.header, slot).and_then(|header| Self::build(header, &Self::meta(h))))
    }
    /// Each part of the object that has a valid rectangle, in order (an image: itself; a pyramid:
    /// its levels; an object array: its items' parts). Default: none.
    fn valid_rect_parts(_: &Handle<Self>, _: &mut dyn FnMut(&dyn ValidRectPart)) {}
    /// The memory plan (`graph/verify/memory_plan.rs`): hand `f` the one buffer a graph's plan may
    /// place this object's bytes in, with the bytes it needs ([`PlanStorage`]). Not calling `f` —
    /// the default — says the kind is never planned: a scalar or a threshold holds values, not a
    /// buffer; a pyramid or an object array is its parts, which keep their own memory. Blob kinds
    /// get it from `blob_object!`, so a kind is planned by declaring its buffer once, here.
    fn plan_storage(_: &Handle<Self>, _f: &mut dyn FnMut(PlanStorage<'_>)) {}
    /// The storage the object lives in, when objects may share it (images, tensors).
    fn storage_key(_: &Handle<Self>) -> Option<usize> {
        None
    }
    /// True when `a` and `b`, two objects in the same storage, share elements.
    fn share_elements(_: &Handle<Self>, _: &Handle<Self>) -> bool {
        false
    }
}

/// Something with a valid rectangle (an image), as the `valid regions` pass sees it.
pub trait ValidRectPart {
    /// Width and height.
    fn size(&self) -> (u32, u32);
    /// The valid rectangle now.
    fn valid(&self) -> vx_plugin_abi::Rect;
    /// Set it (the caller checked it lies inside).
    fn set_valid(&self, r: vx_plugin_abi::Rect);
}

/// An object's bytes mapped for a module's kernel ([`ObjectKind::map_raw`]): the lease, where the
/// object's elements start in it, each dimension's byte stride (tensors; zeros otherwise) and the
/// bytes from the first element to one past the last.
pub struct RawMap<'a> {
    pub(crate) lease: RawLease<'a>,
    pub(crate) offset: usize,
    pub(crate) strides: [u64; 6],
    pub(crate) bytes: usize,
}

impl<'a> RawMap<'a> {
    /// All of `lease`, as one run of bytes.
    pub(super) fn whole(lease: RawLease<'a>) -> RawMap<'a> {
        RawMap { offset: 0, strides: [0; 6], bytes: lease.len, lease }
    }
}

/// A kind's partial meta data as `meta_attributes!` declares it: attributes recorded one by
/// one, and read by their OpenVX codes.
pub trait Recorded<A> {
    /// Record `a` (the last of a kind counts).
    fn record(&mut self, a: A);
    /// The attribute with OpenVX code `v.code`, if it is one of these.
    fn by_code(v: &AttrValue<'_>) -> Option<Result<A>>;
}

/// What [`ObjectKind::apply`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The object already was what the meta format says.
    Unchanged,
    /// A virtual object was completed (its readers must be re-verified).
    Completed,
}

/// Why [`ObjectKind::apply`] refused.
pub enum Refusal {
    /// The object does not match the meta format (the caller says how, with both metas).
    Mismatch(ErrorKind),
    /// Another error.
    Error(Error),
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        Refusal::Error(e)
    }
}

/// A fixed-layout type: its bytes are one [`Blob`], known from its meta data at creation.
pub trait BlobKind: ObjectKind<Body = BlobBody<Self>> {
    /// What the object holds besides its meta data and bytes (a convolution's scale).
    type Extra: Default + Send + Sync;
    /// A new object's `Extra`, from its meta data. Default: `Extra::default()`.
    fn extra_of(_meta: &Self::Meta) -> Self::Extra {
        Self::Extra::default()
    }
    /// The meta data of an object made with `meta` that now holds `extra` (a convolution's meta
    /// data has its scale, which may change). Default: `meta`.
    fn meta_of(meta: &Self::Meta, _extra: &Self::Extra) -> Self::Meta {
        meta.clone()
    }
    /// Check `meta` and give the bytes it needs (the errors name no object; the caller adds it).
    fn layout(meta: &Self::Meta) -> Result<usize>;
    /// The element type that typed copies and maps must use.
    fn element(meta: &Self::Meta) -> ArrayItemType;
}

/// The handle of a data object: an `Arc` of its header and body.
pub struct Handle<K: ObjectKind> {
    pub(super) obj: Arc<Obj<K>>,
}

/// Header and body of one object.
pub(super) struct Obj<K: ObjectKind> {
    pub(super) header: ObjectHeader,
    pub(super) body: K::Body,
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
        Ok(Handle::from_body(header, BlobBody { data: Blob::new(bytes), extra: K::extra_of(&meta), meta }))
    }

    /// Every attribute that makes its meta data.
    pub fn meta(&self) -> K::Meta {
        K::meta_of(&self.obj.body.meta, &self.obj.body.extra)
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
    /// [`ObjectKind::plan_storage`] of every blob kind: the blob, whole.
    pub(super) fn plan_storage(&self, f: &mut dyn FnMut(PlanStorage<'_>)) {
        self.obj.body.data.plan_storage(f)
    }

    /// Map the bytes for a module's kernel (the module ABI's `map_data`).
    pub(super) fn lease_raw(&self, write: bool) -> Result<RawLease<'_>> {
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

    /// Every byte mapped as a [`BytesMap`], which keeps the object alive.
    fn map_bytes_as(&self, write: bool, access: Access) -> Result<BytesMap> {
        let (ptr, len, slot) = self.obj.body.data.lease(&self.obj.header, access, write)?;
        let h = self.clone();
        Ok(BytesMap::new(ptr, len, write, move || h.obj.body.data.release(slot)))
    }

    /// `vxMapLUT`, `vxMapDistribution`, `vxMapUserDataObject`, … as bytes, for a binding whose
    /// mapping outlives any Rust borrow (the C API): every byte of the object, for writing (and
    /// reading) when `write`. The lease is released when the [`BytesMap`] drops.
    pub fn map_bytes(&self, write: bool) -> Result<BytesMap> {
        self.map_bytes_as(write, Access::Application)
    }
}

impl<K: BlobKind> KernelView<'_, Handle<K>> {
    /// [`Handle::map_bytes`] as the node's kernel (a virtual object too).
    pub fn map_bytes(&self, write: bool) -> Result<BytesMap> {
        self.object.map_bytes_as(write, Access::Kernel)
    }
}

/// `v` if set and above zero, else `what` (the attribute a meta format left unset).
pub(super) fn positive<T: Default + PartialOrd>(
    v: Option<T>,
    what: &'static str,
) -> std::result::Result<T, &'static str> {
    v.filter(|v| *v > T::default()).ok_or(what)
}

/// The [`ObjectKind`] functions every [`BlobKind`] writes the same way (inside its `impl`).
macro_rules! blob_object {
    () => {
        fn meta(h: &Handle<Self>) -> Self::Meta {
            h.meta()
        }
        fn build(header: crate::data::object::ObjectHeader, m: &Self::Meta) -> crate::error::Result<Handle<Self>> {
            Handle::<Self>::with_header(header, m.clone())
        }
        fn ensure_allocated(h: &Handle<Self>) -> crate::error::Result<()> {
            h.ensure_allocated()
        }
        fn map_raw(h: &Handle<Self>, write: bool) -> Option<crate::error::Result<crate::data::kind::RawMap<'_>>> {
            Some(h.lease_raw(write).map(crate::data::kind::RawMap::whole))
        }
        fn plan_storage(h: &Handle<Self>, f: &mut dyn FnMut(crate::data::kind::PlanStorage<'_>)) {
            h.plan_storage(f)
        }
    };
}
pub(super) use blob_object;

/// A kind's meta-format attributes, declared once: the `Attr` enum (one variant per attribute),
/// the `Partial` struct (one `Option` per attribute, named as the meta field it sets) and its
/// [`Recorded`] impl (`by_code` for the attributes that have an OpenVX code on the wire), and, with
/// `for Meta`, `of(meta)` (every attribute of an exemplar).
macro_rules! meta_attributes {
    (
        $(#[$doc:meta])* $Attr:ident, $Partial:ident for $Meta:ty {
            $($(#[$vdoc:meta])* $V:ident($t:ty) => $f:ident $(@ $code:ident: $read:expr)?),* $(,)?
        }
    ) => {
        meta_attributes! { $(#[$doc])* $Attr, $Partial { $($(#[$vdoc])* $V($t) => $f $(@ $code: $read)?),* } }
        impl $Partial {
            /// Every attribute of `m`.
            fn of(m: &$Meta) -> $Partial {
                $Partial { $($f: Some(m.$f.clone()),)* }
            }
        }
    };
    (
        $(#[$doc:meta])* $Attr:ident, $Partial:ident {
            $($(#[$vdoc:meta])* $V:ident($t:ty) => $f:ident $(@ $code:ident: $read:expr)?),* $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $Attr {
            $($(#[$vdoc])* $V($t),)*
        }

        /// The attributes a meta format has been given so far.
        #[doc(hidden)]
        #[derive(Clone, Debug, Default)]
        pub struct $Partial {
            $($f: Option<$t>,)*
        }

        impl crate::data::kind::Recorded<$Attr> for $Partial {
            fn record(&mut self, a: $Attr) {
                match a {
                    $($Attr::$V(v) => self.$f = Some(v),)*
                }
            }
            #[allow(clippy::redundant_closure_call)]
            fn by_code(v: &crate::data::wire::AttrValue<'_>) -> Option<crate::error::Result<$Attr>> {
                match v.code {
                    $($(vx_plugin_abi::wire::attribute::$code => Some(($read)(v).map($Attr::$V)),)?)*
                    _ => None,
                }
            }
        }
    };
}
pub(super) use meta_attributes;

/// A kind's names, declared once in its file: the ones `data/kinds/` reaches it by (`Kind`,
/// `Meta`, `Attr`, `Partial`) and what the crate root re-exports from the file (`exports`).
macro_rules! kind_names {
    (kind: $K:ident, meta: $M:ident, attr: $A:ident, partial: $P:ident; exports: $($e:ident),* $(,)?) => {
        pub(super) use self::{$A as Attr, $K as Kind, $M as Meta, $P as Partial};
        /// What the crate root re-exports from this file (through `data/kinds/`).
        pub(super) mod exports {
            pub use super::{$($e),*};
        }
    };
}
pub(super) use kind_names;

/// [`ObjectKind::apply`] for kinds whose meta data must match exactly: `kind` when it does not.
pub(super) fn exactly<M: PartialEq>(have: &M, want: &M, kind: ErrorKind) -> std::result::Result<Applied, Refusal> {
    if have != want {
        return Err(Refusal::Mismatch(kind));
    }
    Ok(Applied::Unchanged)
}
