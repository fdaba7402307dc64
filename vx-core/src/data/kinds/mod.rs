//! The data-object types, once: from the list of kinds (`vx_plugin_abi::for_each_kind!`) this
//! file generates [`Reference`], [`ObjectMeta`], [`MetaAttribute`], the meta formats'
//! [`PartialMeta`], the [`DataObject`] and `From` impls, and the dispatch behind [`AnyObject`],
//! the one place where code that serves every type reaches a type's [`ObjectKind`]. It names no
//! type: everything comes from the list's metavariables. (`DataType` is generated from the same
//! list in `data/types.rs`.) Object arrays live in a child module: an object array is a list of
//! references, and a reference may be one.

use std::fmt;
use std::sync::Arc;

use crate::data::buffer::RawBuf;
use crate::data::kind::{Applied, Handle, ObjectKind, PlanStorage, RawMap, Refusal};
use crate::data::object::ObjectHeader;
use crate::data::types::{DataType, Direction};
use crate::data::wire::{AttrValue, WireMeta};
use crate::error::{Error, ErrorKind, Result};
// Every kind's file (`data/<module>.rs`, reached as `$m::` below), without naming them again here:
// object arrays are this module's own child.
#[allow(clippy::wildcard_imports)]
use crate::data::*;

pub(super) mod object_array;

mod sealed {
    pub trait Sealed {}
}

/// The data object types: what [`Reference`] holds, named by their handle types, for typed
/// parameter access (`v.object::<Matrix>(1)`, `p.object::<Lut>(0)`).
pub trait DataObject: sealed::Sealed + Clone + Send + Sync + 'static {
    /// The type tag.
    const TYPE: DataType;
    /// The object, if `r` is one of this type.
    fn from_reference(r: &Reference) -> Option<&Self>;
}

/// What verify, meta formats and object arrays call on any object, without naming its type
/// (erased-serde's idea: the object-safe twin of [`ObjectKind`]).
pub(crate) trait AnyObject {
    fn header(&self) -> &ObjectHeader;
    fn meta(&self) -> ObjectMeta;
    /// What the object gives a meta format as an exemplar (`ObjectKind::exemplar_meta`).
    fn exemplar_meta(&self) -> ObjectMeta;
    /// Verify's meta pass: complete a virtual object from `want` or check a real one against it.
    fn apply_meta(&self, want: &ObjectMeta) -> Result<Applied>;
    fn ensure_allocated(&self) -> Result<()>;
    fn frame_copy(&self, frame_slot: usize) -> Result<Reference>;
    /// `ObjectKind::new_like` under `header`.
    fn new_like(&self, header: ObjectHeader) -> Result<Reference>;
    fn valid_rect_parts(&self, f: &mut dyn FnMut(&dyn crate::data::kind::ValidRectPart));
    fn storage_key(&self) -> Option<usize>;
    fn reference_count(&self) -> usize;
    /// What the module ABI says the object is.
    fn to_wire(&self) -> WireMeta;
    /// The bytes mapped for a module's kernel; `None`: this type is not mapped as data.
    fn map_raw(&self, write: bool) -> Option<Result<RawMap<'_>>>;
    /// The memory plan's view ([`ObjectKind::plan_storage`]): the key of the buffer a plan may
    /// place and the bytes it needs there (`None`: not known yet); `None` for kinds never planned.
    fn plan_bytes(&self) -> Option<(usize, Option<usize>)>;
    /// Put the planned buffer at `offset..offset + len` of `arena`.
    fn place_planned(&self, arena: &Arc<RawBuf>, offset: usize, len: usize) -> Result<()>;
    /// Take the planned buffer out of its arena (nothing for kinds never planned).
    fn unplace_planned(&self);
    /// Where a plan placed the buffer: (arena address, offset).
    fn planned_at(&self) -> Option<(usize, usize)>;
}

/// A listed kind: its place in the generated enums.
pub(super) trait Listed: ObjectKind {
    const TYPE: DataType;
    fn into_reference(h: Handle<Self>) -> Reference;
    fn meta_from(m: &ObjectMeta) -> Option<&Self::Meta>;
    fn meta_into(m: Self::Meta) -> ObjectMeta;
}

impl<K: Listed> AnyObject for Handle<K> {
    fn header(&self) -> &ObjectHeader {
        &self.obj.header
    }
    fn meta(&self) -> ObjectMeta {
        K::meta_into(K::meta(self))
    }
    fn exemplar_meta(&self) -> ObjectMeta {
        K::meta_into(K::exemplar_meta(self))
    }
    fn apply_meta(&self, want: &ObjectMeta) -> Result<Applied> {
        let refused = |kind| {
            Error::new(kind, "the output object does not match the validator's meta format")
                .expected_found(want, AnyObject::meta(self))
        };
        let Some(w) = K::meta_from(want) else { return Err(refused(ErrorKind::InvalidType)) };
        K::apply(self, w).map_err(|r| match r {
            Refusal::Mismatch(kind) => refused(kind),
            Refusal::Error(e) => e,
        })
    }
    fn ensure_allocated(&self) -> Result<()> {
        K::ensure_allocated(self)
    }
    fn frame_copy(&self, frame_slot: usize) -> Result<Reference> {
        match K::frame_copy(self, frame_slot) {
            Some(copy) => copy.map(K::into_reference),
            None => Err(Error::new(
                ErrorKind::NotSupported,
                format!("a virtual {} cannot be copied for each frame in flight", K::TYPE),
            )
            .on_object(&self.name())),
        }
    }
    fn new_like(&self, header: ObjectHeader) -> Result<Reference> {
        K::new_like(self, header).map(K::into_reference)
    }
    fn storage_key(&self) -> Option<usize> {
        K::storage_key(self)
    }
    fn valid_rect_parts(&self, f: &mut dyn FnMut(&dyn crate::data::kind::ValidRectPart)) {
        K::valid_rect_parts(self, f)
    }
    fn reference_count(&self) -> usize {
        Arc::strong_count(&self.obj)
    }
    fn to_wire(&self) -> WireMeta {
        K::to_wire(self).into()
    }
    fn map_raw(&self, write: bool) -> Option<Result<RawMap<'_>>> {
        K::map_raw(self, write)
    }
    fn plan_bytes(&self) -> Option<(usize, Option<usize>)> {
        let mut out = None;
        K::plan_storage(self, &mut |s: PlanStorage<'_>| out = Some((s.key(), s.bytes())));
        out
    }
    fn place_planned(&self, arena: &Arc<RawBuf>, offset: usize, len: usize) -> Result<()> {
        let mut out = Err(Error::new(ErrorKind::NotSupported, format!("a {} is not memory-planned", K::TYPE)));
        K::plan_storage(self, &mut |s: PlanStorage<'_>| out = s.place(arena, offset, len));
        out.map_err(|e| e.on_object(&self.name()))
    }
    fn unplace_planned(&self) {
        K::plan_storage(self, &mut |s: PlanStorage<'_>| s.unplace());
    }
    fn planned_at(&self) -> Option<(usize, usize)> {
        let mut out = None;
        K::plan_storage(self, &mut |s: PlanStorage<'_>| out = s.placement());
        out
    }
}

/// Generates every per-type list from the list of kinds (see the module doc).
macro_rules! host_kinds {
    ($($T:ident { code: $code:ident, module: $m:ident, view: $v:ident, label: $label:literal }),* $(,)?) => {
        /// Every kind's public items, for the crate root.
        pub(crate) mod exports {
            $(pub use super::$m::exports::*;)*
        }

        impl DataType {
            /// True when a validator may give objects of this type valid rectangles.
            pub(crate) fn has_valid_rects(self) -> bool {
                match self { $(DataType::$T => <$m::Kind as ObjectKind>::VALID_RECTS,)* }
            }
            /// True when a tiling kernel may take a parameter of this type in `direction`.
            pub(crate) fn tiling_takes(self, direction: Direction) -> bool {
                match self { $(DataType::$T => <$m::Kind as ObjectKind>::TILING_DIRECTIONS.contains(&direction),)* }
            }
        }

        /// Any data object.
        #[derive(Clone, Debug)]
        pub enum Reference {
            $(
                #[doc = concat!("An object of kind '", $label, "' ([`", stringify!($T), "`](", stringify!($m),
                    "::", stringify!($T), ")).")]
                $T($m::$T),
            )*
        }

        impl Reference {
            /// The object, as what every type can do.
            pub(crate) fn any(&self) -> &dyn AnyObject {
                match self { $(Reference::$T(x) => x,)* }
            }
            /// The type of the object.
            pub fn data_type(&self) -> DataType {
                match self { $(Reference::$T(_) => DataType::$T,)* }
            }
            /// A new object of `meta` under `header` (an object array's item).
            pub(in crate::data) fn with_meta(header: ObjectHeader, meta: &ObjectMeta) -> Result<Reference> {
                match meta {
                    $(ObjectMeta::$T(m) => <$m::Kind as ObjectKind>::build(header, m).map(Reference::$T),)*
                }
            }
            /// True when both are of one type, in one storage, and share elements.
            pub(super) fn share_elements(&self, other: &Reference) -> bool {
                match (self, other) {
                    $((Reference::$T(x), Reference::$T(y)) => <$m::Kind as ObjectKind>::share_elements(x, y),)*
                    _ => false,
                }
            }
        }

        /// The meta data of an object: what a validator's meta format describes and what
        /// re-verification compares.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum ObjectMeta {
            $(
                #[doc = concat!("The meta data of an object of kind '", $label, "' ([`", stringify!($T), "`](",
                    stringify!($m), "::", stringify!($T), ")).")]
                $T($m::Meta),
            )*
        }

        impl ObjectMeta {
            /// The type of object this describes.
            pub fn data_type(&self) -> DataType {
                match self { $(ObjectMeta::$T(_) => DataType::$T,)* }
            }
        }

        impl ObjectMeta {
            /// The meta data a module gave for an output.
            pub(crate) fn from_wire(w: &WireMeta) -> Result<ObjectMeta> {
                match w {
                    $(WireMeta::$T(w) => <$m::Kind as ObjectKind>::from_wire(w).map(ObjectMeta::$T),)*
                    WireMeta::Absent => Err(Error::new(ErrorKind::InvalidParameters, "an output's meta cannot be 'absent'")),
                }
            }
        }

        impl fmt::Display for ObjectMeta {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self { $(ObjectMeta::$T(m) => m.fmt(f),)* }
            }
        }

        /// One attribute of an output's meta data (`vxSetMetaFormatAttribute`), by type:
        /// `MetaAttribute::Matrix(MatrixAttr::Rows(5))`, or `MatrixAttr::Rows(5).into()`.
        #[derive(Clone, Debug, PartialEq)]
        pub enum MetaAttribute {
            $(
                #[doc = concat!("An attribute of an object of kind '", $label, "' ([`", stringify!($T), "`](",
                    stringify!($m), "::", stringify!($T), ")).")]
                $T($m::Attr),
            )*
        }

        impl MetaAttribute {
            /// The object type the attribute belongs to.
            pub fn data_type(&self) -> DataType {
                match self { $(MetaAttribute::$T(_) => DataType::$T,)* }
            }
        }

        impl MetaAttribute {
            /// `vxSetMetaFormatAttribute`'s `(attribute, value bytes)`: the attribute, or an error
            /// naming the attribute and the C type its value must be. The type is in the code
            /// (OpenVX's `VX_ATTRIBUTE_BASE(vendor, type) + n`).
            pub fn from_code(code: u32, bytes: &[u8]) -> Result<MetaAttribute> {
                let v = AttrValue { code, bytes };
                let found = match DataType::from_code((code >> 8) & 0xFFF) {
                    $(Some(DataType::$T) => {
                        <$m::Kind as ObjectKind>::attr_by_code(&v).map(|a| a.map(MetaAttribute::$T))
                    })*
                    None => None,
                };
                found.unwrap_or_else(|| {
                    let e = Error::new(ErrorKind::NotSupported, "no such meta-format attribute");
                    Err(e.found(format!("{code:#x}")))
                })
            }
        }

        $(impl From<$m::Attr> for MetaAttribute {
            fn from(a: $m::Attr) -> MetaAttribute {
                MetaAttribute::$T(a)
            }
        })*

        /// The attributes a meta format has been given so far, by type.
        #[derive(Clone, Debug)]
        pub(crate) enum PartialMeta {
            $($T($m::Partial),)*
        }

        impl PartialMeta {
            /// Nothing set yet, for an object of type `t`.
            pub(crate) fn new(t: DataType) -> PartialMeta {
                match t { $(DataType::$T => PartialMeta::$T(Default::default()),)* }
            }
            /// Record `a` (of this partial's type: the caller checks).
            pub(crate) fn set(&mut self, a: MetaAttribute) -> Result<()> {
                match (self, a) {
                    $((PartialMeta::$T(p), MetaAttribute::$T(a)) => <$m::Kind as ObjectKind>::set(p, a),)*
                    (_, a) => Err(Error::new(ErrorKind::InvalidType, "the attribute is of another type")
                        .found(format!("{a:?}"))),
                }
            }
            /// Record every attribute of `m` (of this partial's type: the caller checks).
            pub(crate) fn exemplar(&mut self, m: &ObjectMeta) {
                match (self, m) {
                    $((PartialMeta::$T(p), ObjectMeta::$T(m)) => <$m::Kind as ObjectKind>::exemplar(p, m),)*
                    _ => {}
                }
            }
            /// The complete meta data, or the name of the attribute left unset.
            pub(crate) fn resolve(&self) -> std::result::Result<ObjectMeta, &'static str> {
                match self {
                    $(PartialMeta::$T(p) => <$m::Kind as ObjectKind>::resolve(p).map(ObjectMeta::$T),)*
                }
            }
        }

        $(
            impl sealed::Sealed for $m::$T {}
            impl DataObject for $m::$T {
                const TYPE: DataType = DataType::$T;
                fn from_reference(r: &Reference) -> Option<&Self> {
                    match r { Reference::$T(x) => Some(x), _ => None }
                }
            }
            impl Listed for $m::Kind {
                const TYPE: DataType = DataType::$T;
                fn into_reference(h: $m::$T) -> Reference {
                    Reference::$T(h)
                }
                fn meta_from(m: &ObjectMeta) -> Option<&$m::Meta> {
                    match m { ObjectMeta::$T(m) => Some(m), _ => None }
                }
                fn meta_into(m: $m::Meta) -> ObjectMeta {
                    ObjectMeta::$T(m)
                }
            }
            impl From<&$m::$T> for Reference {
                fn from(x: &$m::$T) -> Reference { Reference::$T(x.clone()) }
            }
            impl From<$m::$T> for Reference {
                fn from(x: $m::$T) -> Reference { Reference::$T(x) }
            }
            impl From<&$m::$T> for Option<Reference> {
                fn from(x: &$m::$T) -> Option<Reference> { Some(Reference::$T(x.clone())) }
            }
        )*
    };
}

vx_plugin_abi::for_each_kind!(host_kinds);

/// Tests over the list of kinds: one object of every kind, each through what the generated code
/// dispatches (meta data, the wire, meta formats, object-array items). A kind added to the list
/// fails `every_kind_is_sampled` until it has a sample here.
#[cfg(test)]
mod tests {
    use crate::*;

    /// One real object of every kind.
    fn samples(ctx: &Context) -> Vec<Reference> {
        let image = Image::new(ctx, 8, 4, ImageFormat::U8).unwrap();
        vec![
            image.clone().into(),
            Scalar::new(ctx, ScalarValue::Int16(-3)).unwrap().into(),
            Array::new(ctx, ArrayItemType::Keypoint, 5).unwrap().into(),
            UserDataObject::new(ctx, "pair", 16).unwrap().into(),
            Matrix::from_pattern(ctx, MatrixPattern::Cross, 5, 3).unwrap().into(),
            Convolution::new(ctx, 3, 5).unwrap().into(),
            Lut::new(ctx, ScalarType::Int16, 300).unwrap().into(),
            Distribution::new(ctx, 16, 2, 200).unwrap().into(),
            Threshold::new(ctx, ThresholdType::Range, ScalarType::Uint16).unwrap().into(),
            Pyramid::new(ctx, 3, PYRAMID_SCALE_HALF, 16, 8, ImageFormat::U8).unwrap().into(),
            Remap::new(ctx, 8, 4, 16, 8).unwrap().into(),
            ObjectArray::new(ctx, &image, 2).unwrap().into(),
            Tensor::new(ctx, &[2, 3, 4], ScalarType::Int8, 0).unwrap().into(),
            crate::data::raw_image::sample(ctx),
        ]
    }

    #[test]
    fn every_kind_is_sampled() {
        let ctx = Context::new().unwrap();
        let kinds: Vec<DataType> = samples(&ctx).iter().map(Reference::data_type).collect();
        assert_eq!(kinds, DataType::ALL.to_vec());
    }

    #[test]
    fn every_kind_round_trips_its_code_and_has_its_own_label() {
        let mut labels: Vec<String> = DataType::ALL.iter().map(|t| t.to_string()).collect();
        for t in DataType::ALL {
            assert_eq!(DataType::from_code(t.code() as u32), Some(t));
        }
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), DataType::ALL.len());
    }

    #[test]
    fn a_meta_survives_the_wire_and_a_meta_format() {
        let ctx = Context::new().unwrap();
        for r in samples(&ctx) {
            let meta = r.meta();
            assert_eq!(meta.data_type(), r.data_type());
            assert!(meta.to_string().starts_with(&r.data_type().to_string()), "{meta}");
            assert_eq!(ObjectMeta::from_wire(&r.any().to_wire()).unwrap(), meta, "{}", r.data_type());
            let mut m = MetaFormat::new(1, r.data_type());
            m.set_from_reference(&r).unwrap();
            assert_eq!(m.resolve().unwrap(), r.any().exemplar_meta(), "{}", r.data_type());
            let mut m = MetaFormat::new(1, r.data_type());
            m.set_from_meta(meta.clone()).unwrap();
            assert_eq!(m.resolve().unwrap(), meta, "{}", r.data_type());
        }
    }

    #[test]
    fn every_kind_but_object_arrays_can_be_an_object_array_item() {
        let ctx = Context::new().unwrap();
        for r in samples(&ctx) {
            let a = ObjectArray::new(&ctx, &r, 2);
            if r.data_type() == DataType::ObjectArray {
                assert_eq!(a.unwrap_err().kind(), ErrorKind::InvalidType);
                continue;
            }
            let a = a.unwrap();
            assert_eq!(a.item(1).unwrap().meta(), r.meta(), "{}", r.data_type());
            assert!(!a.item(0).unwrap().same_object(&r));
        }
    }

    #[test]
    fn an_attribute_of_another_kind_is_refused() {
        let mut m = MetaFormat::new(0, DataType::Matrix);
        let e = m.set(LutAttr::Count(3)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidType);
        m.set(MatrixAttr::Rows(3)).unwrap().set(MatrixAttr::Columns(2)).unwrap();
        assert_eq!(m.resolve().unwrap_err().kind(), ErrorKind::InvalidParameters, "the type is unset");
    }
}
