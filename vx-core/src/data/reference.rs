//! References (`vx_reference`): any data object, as passed to nodes and kernels, with its meta
//! data ([`ObjectMeta`]) and identity; [`DataObject`] for typed access; and object arrays, which
//! are lists of references (so they live here).

use std::fmt;
use std::sync::Arc;

use vx_plugin_abi::ImageFormat;

use crate::data::array::{Array, ArrayItemType};
use crate::data::convolution::{Convolution, ConvolutionMeta};
use crate::data::distribution::{Distribution, DistributionMeta};
use crate::data::image::Image;
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Handle, ObjectKind};
use crate::data::lut::{Lut, LutMeta};
use crate::data::matrix::{Matrix, MatrixMeta};
use crate::data::object::ObjectHeader;
use crate::data::pyramid::{Pyramid, PyramidMeta};
use crate::data::remap::{Remap, RemapMeta};
use crate::data::scalar::Scalar;
use crate::data::tensor::{Tensor, TensorMeta};
use crate::data::threshold::{Threshold, ThresholdMeta};
use crate::data::types::{DataType, ScalarType, ScalarValue};
use crate::data::user_data::{UserDataMeta, UserDataObject};
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, ContextShared, VirtualScope};

/// Any data object.
#[derive(Clone, Debug)]
pub enum Reference {
    /// An image.
    Image(Image),
    /// A scalar.
    Scalar(Scalar),
    /// An array.
    Array(Array),
    /// A user data object.
    UserDataObject(UserDataObject),
    /// A matrix.
    Matrix(Matrix),
    /// A convolution.
    Convolution(Convolution),
    /// A LUT.
    Lut(Lut),
    /// A distribution.
    Distribution(Distribution),
    /// A threshold.
    Threshold(Threshold),
    /// A pyramid.
    Pyramid(Pyramid),
    /// A remap.
    Remap(Remap),
    /// An object array.
    ObjectArray(ObjectArray),
    /// A tensor.
    Tensor(Tensor),
}

/// The meta data of an object: what a validator's meta format describes and what re-verification
/// compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectMeta {
    /// An image.
    Image {
        /// Its format.
        format: ImageFormat,
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
    /// A scalar.
    Scalar {
        /// Its type.
        scalar_type: ScalarType,
    },
    /// An array.
    Array {
        /// Item type (`None`: a virtual array not yet completed).
        item_type: Option<ArrayItemType>,
        /// Most items it holds.
        capacity: usize,
    },
    /// A user data object.
    UserDataObject {
        /// `VX_USER_DATA_OBJECT_NAME`.
        type_name: String,
        /// Bytes.
        size: usize,
    },
    /// A matrix.
    Matrix(MatrixMeta),
    /// A convolution.
    Convolution(ConvolutionMeta),
    /// A LUT.
    Lut(LutMeta),
    /// A distribution.
    Distribution(DistributionMeta),
    /// A threshold.
    Threshold(ThresholdMeta),
    /// A pyramid.
    Pyramid(PyramidMeta),
    /// A remap.
    Remap(RemapMeta),
    /// An object array.
    ObjectArray {
        /// `VX_OBJECT_ARRAY_ITEMTYPE`.
        item_type: DataType,
        /// `VX_OBJECT_ARRAY_NUMITEMS`.
        count: usize,
    },
    /// A tensor.
    Tensor(TensorMeta),
}

impl ObjectMeta {
    /// The type of object this describes.
    pub fn data_type(&self) -> DataType {
        match self {
            ObjectMeta::Image { .. } => DataType::Image,
            ObjectMeta::Scalar { .. } => DataType::Scalar,
            ObjectMeta::Array { .. } => DataType::Array,
            ObjectMeta::UserDataObject { .. } => DataType::UserDataObject,
            ObjectMeta::Matrix(_) => DataType::Matrix,
            ObjectMeta::Convolution(_) => DataType::Convolution,
            ObjectMeta::Lut(_) => DataType::Lut,
            ObjectMeta::Distribution(_) => DataType::Distribution,
            ObjectMeta::Threshold(_) => DataType::Threshold,
            ObjectMeta::Pyramid(_) => DataType::Pyramid,
            ObjectMeta::Remap(_) => DataType::Remap,
            ObjectMeta::ObjectArray { .. } => DataType::ObjectArray,
            ObjectMeta::Tensor(_) => DataType::Tensor,
        }
    }
}

impl fmt::Display for ObjectMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectMeta::Image { format, width, height } => write!(f, "image {format} {width}x{height}"),
            ObjectMeta::Scalar { scalar_type } => write!(f, "scalar {scalar_type}"),
            ObjectMeta::Array { item_type: Some(t), capacity } => write!(f, "array of {capacity} {t}"),
            ObjectMeta::Array { item_type: None, capacity } => write!(f, "array of {capacity} (type unknown)"),
            ObjectMeta::UserDataObject { type_name, size } => {
                write!(f, "user data object '{type_name}' of {size} bytes")
            }
            ObjectMeta::Matrix(m) => {
                write!(f, "matrix {} {}x{} origin {:?} pattern {:?}", m.element, m.columns, m.rows, m.origin, m.pattern)
            }
            ObjectMeta::Convolution(m) => write!(f, "convolution {}x{}", m.columns, m.rows),
            ObjectMeta::Lut(m) => write!(f, "LUT of {} {}", m.count, m.element),
            ObjectMeta::Distribution(m) => {
                write!(f, "distribution of {} bins, offset {}, range {}", m.bins, m.offset, m.range)
            }
            ObjectMeta::Threshold(m) => {
                write!(f, "threshold {:?} {} -> {}", m.threshold_type, m.input_format, m.output_format)
            }
            ObjectMeta::Pyramid(m) => {
                write!(f, "pyramid of {} levels x {} from {} {}x{}", m.levels, m.scale, m.format, m.width, m.height)
            }
            ObjectMeta::Remap(m) => write!(
                f,
                "remap {}x{} -> {}x{}",
                m.source_width, m.source_height, m.destination_width, m.destination_height
            ),
            ObjectMeta::ObjectArray { item_type, count } => write!(f, "object array of {count} {item_type}"),
            ObjectMeta::Tensor(m) => match m.data_type {
                Some(t) => write!(f, "tensor {:?} of {t} (fixed point {})", m.dims(), m.fixed_point_position),
                None => write!(f, "tensor {:?} (type unknown)", m.dims()),
            },
        }
    }
}

/// `match` over every variant of a [`Reference`], binding the object as `$x`: the one list of
/// variants the generic accessors share.
macro_rules! each_object {
    ($r:expr, $x:ident => $e:expr) => {
        match $r {
            Reference::Image($x) => $e,
            Reference::Scalar($x) => $e,
            Reference::Array($x) => $e,
            Reference::UserDataObject($x) => $e,
            Reference::Matrix($x) => $e,
            Reference::Convolution($x) => $e,
            Reference::Lut($x) => $e,
            Reference::Distribution($x) => $e,
            Reference::Threshold($x) => $e,
            Reference::Pyramid($x) => $e,
            Reference::Remap($x) => $e,
            Reference::ObjectArray($x) => $e,
            Reference::Tensor($x) => $e,
        }
    };
}

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

impl Reference {
    /// The type of the object.
    pub fn data_type(&self) -> DataType {
        fn tag<T: DataObject>(_: &T) -> DataType {
            T::TYPE
        }
        each_object!(self, x => tag(x))
    }

    pub(crate) fn header(&self) -> &ObjectHeader {
        each_object!(self, x => &x.obj.header)
    }

    /// A new object of `meta` under `header` (an object array's item). Scalars start at zero.
    pub(super) fn with_meta(header: ObjectHeader, meta: &ObjectMeta) -> Result<Reference> {
        Ok(match meta.clone() {
            ObjectMeta::Image { format, width, height } => {
                Reference::Image(Image::with_header(header, width, height, format)?)
            }
            ObjectMeta::Scalar { scalar_type } => {
                Reference::Scalar(Scalar::with_header(header, ScalarValue::zero(scalar_type)))
            }
            ObjectMeta::Array { item_type, capacity } => Reference::Array(Array::build(header, item_type, capacity)?),
            ObjectMeta::UserDataObject { type_name, size } => {
                Reference::UserDataObject(UserDataObject::with_header(header, UserDataMeta { type_name, size })?)
            }
            ObjectMeta::Matrix(m) => Reference::Matrix(Matrix::with_header(header, m)?),
            ObjectMeta::Convolution(m) => Reference::Convolution(Convolution::with_header(header, m)?),
            ObjectMeta::Lut(m) => Reference::Lut(Lut::with_header(header, m)?),
            ObjectMeta::Distribution(m) => Reference::Distribution(Distribution::with_header(header, m)?),
            ObjectMeta::Threshold(m) => Reference::Threshold(Threshold::with_header(header, m)?),
            ObjectMeta::Pyramid(m) => Reference::Pyramid(Pyramid::with_header(header, m)?),
            ObjectMeta::Remap(m) => Reference::Remap(Remap::with_header(header, m)?),
            ObjectMeta::Tensor(m) => Reference::Tensor(Tensor::with_header(header, m)?),
            ObjectMeta::ObjectArray { .. } => {
                return Err(Error::new(ErrorKind::InvalidType, "an object array cannot hold object arrays")
                    .on_object(&header.name()));
            }
        })
    }

    /// The object's name.
    pub fn name(&self) -> String {
        self.header().name()
    }

    /// True for virtual objects.
    pub fn is_virtual(&self) -> bool {
        self.header().scope.is_some()
    }

    pub(crate) fn context(&self) -> &Arc<ContextShared> {
        &self.header().ctx
    }

    /// The object's current meta data.
    pub fn meta(&self) -> ObjectMeta {
        match self {
            Reference::Image(i) => {
                let m = i.meta();
                ObjectMeta::Image { format: m.format, width: m.width, height: m.height }
            }
            Reference::Scalar(s) => ObjectMeta::Scalar { scalar_type: s.scalar_type() },
            Reference::Array(a) => {
                let s = a.state();
                ObjectMeta::Array { item_type: s.item_type, capacity: s.capacity }
            }
            Reference::UserDataObject(u) => {
                ObjectMeta::UserDataObject { type_name: u.type_name().to_owned(), size: u.size() }
            }
            Reference::Matrix(m) => ObjectMeta::Matrix(m.meta()),
            Reference::Convolution(c) => ObjectMeta::Convolution(c.meta()),
            Reference::Lut(l) => ObjectMeta::Lut(l.meta()),
            Reference::Distribution(d) => ObjectMeta::Distribution(d.meta()),
            Reference::Threshold(t) => ObjectMeta::Threshold(t.meta()),
            Reference::Pyramid(p) => ObjectMeta::Pyramid(p.meta()),
            Reference::Remap(r) => ObjectMeta::Remap(r.meta()),
            Reference::ObjectArray(o) => ObjectMeta::ObjectArray { item_type: o.item_type(), count: o.count() },
            Reference::Tensor(t) => ObjectMeta::Tensor(t.meta()),
        }
    }

    /// What [`overlaps`](Self::overlaps) compares first, for indexes (`graph/verify/overlap.rs`):
    /// the object's id, its containers' ids, and for images and tensors the storage they live in.
    /// Two references overlap only if they share an id among these or a storage.
    pub(crate) fn overlap_keys(&self) -> OverlapKeys<'_> {
        let h = self.header();
        let storage = match self {
            Reference::Image(i) => Some(i.storage_key()),
            Reference::Tensor(t) => Some(t.storage_key()),
            _ => None,
        };
        OverlapKeys { id: h.id, containers: &h.ancestors, storage }
    }

    /// True when writing `self` may change what reading `other` sees: the same object, one a part
    /// of the other (a pyramid and its level, an object array and its item, an image and its ROI),
    /// or images (tensors) sharing pixels (elements).
    pub(crate) fn overlaps(&self, other: &Reference) -> bool {
        if self.header().contains_or_within(other.header()) {
            // Checked first: a virtual image of unknown size covers an empty rectangle.
            return true;
        }
        match (self, other) {
            (Reference::Image(x), Reference::Image(y)) => {
                x.storage_key() == y.storage_key() && x.rect_in_storage().overlaps(&y.rect_in_storage())
            }
            (Reference::Tensor(x), Reference::Tensor(y)) => x.storage_key() == y.storage_key() && x.boxes_overlap(y),
            _ => false,
        }
    }

    /// `VX_REFERENCE_COUNT`: how many handles to the object exist now — the application's and those
    /// the runtime holds (a graph's nodes and parameters, a schedule config's queues, a container).
    /// A graph releases its own when dropped; after [`Graph::wait`](crate::Graph::wait) no thread of
    /// the runtime holds one that the graph did not hold before the frames ran.
    pub fn reference_count(&self) -> usize {
        each_object!(self, x => Arc::strong_count(&x.obj))
    }

    /// True when both refer to the same object.
    pub fn same_object(&self, other: &Reference) -> bool {
        self.header().id == other.header().id
    }

    /// The copy of a virtual object a pipelined graph gives frame slot `frame_slot`
    /// (`graph/verify/frames.rs`).
    pub(crate) fn frame_copy(&self, frame_slot: usize) -> crate::error::Result<Reference> {
        match self {
            Reference::Image(i) => i.frame_copy(frame_slot).map(Reference::Image),
            Reference::Array(a) => a.frame_copy(frame_slot).map(Reference::Array),
            other => Err(crate::error::Error::new(
                crate::error::ErrorKind::NotSupported,
                format!("a virtual {} cannot be copied for each frame in flight", other.data_type()),
            )
            .on_object(&other.name())),
        }
    }

    pub(crate) fn ensure_allocated(&self) -> crate::error::Result<()> {
        match self {
            Reference::Image(i) => i.ensure_allocated(),
            Reference::Scalar(_) | Reference::Threshold(_) => Ok(()),
            Reference::Array(a) => a.ensure_allocated(),
            Reference::UserDataObject(u) => u.ensure_allocated(),
            Reference::Matrix(m) => m.ensure_allocated(),
            Reference::Convolution(c) => c.ensure_allocated(),
            Reference::Lut(l) => l.ensure_allocated(),
            Reference::Distribution(d) => d.ensure_allocated(),
            Reference::Pyramid(p) => p.ensure_allocated(),
            Reference::Remap(r) => r.ensure_allocated(),
            Reference::ObjectArray(o) => o.ensure_allocated(),
            Reference::Tensor(t) => t.ensure_allocated(),
        }
    }

    /// The object, if it is a `T`: `r.get::<Matrix>()`.
    pub fn get<T: DataObject>(&self) -> Option<&T> {
        T::from_reference(self)
    }

    /// The image, if this is one.
    pub fn as_image(&self) -> Option<&Image> {
        match self {
            Reference::Image(i) => Some(i),
            _ => None,
        }
    }
    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match self {
            Reference::Scalar(s) => Some(s),
            _ => None,
        }
    }
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Reference::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The user data object, if this is one.
    pub fn as_user_data_object(&self) -> Option<&UserDataObject> {
        match self {
            Reference::UserDataObject(u) => Some(u),
            _ => None,
        }
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

macro_rules! reference_from {
    ($($t:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl DataObject for $t {
            const TYPE: DataType = DataType::$t;
            fn from_reference(r: &Reference) -> Option<&Self> {
                match r { Reference::$t(x) => Some(x), _ => None }
            }
        }
        impl From<&$t> for Reference {
            fn from(x: &$t) -> Reference { Reference::$t(x.clone()) }
        }
        impl From<$t> for Reference {
            fn from(x: $t) -> Reference { Reference::$t(x) }
        }
        impl From<&$t> for Option<Reference> {
            fn from(x: &$t) -> Option<Reference> { Some(Reference::$t(x.clone())) }
        }
    )*};
}
reference_from!(
    Image,
    Scalar,
    Array,
    UserDataObject,
    Matrix,
    Convolution,
    Lut,
    Distribution,
    Threshold,
    Pyramid,
    Remap,
    ObjectArray,
    Tensor
);

// Object arrays live here: an object array is a list of references, and a reference may be one.

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

/// The state behind a ObjectArray handle, next to its header.
pub struct ObjectArrayBody {
    items: Vec<Reference>,
    item_type: DataType,
}

/// An object array handle.
pub type ObjectArray = Handle<ObjectArrayKind>;

/// The [`ObjectKind`] of ObjectArray.
pub struct ObjectArrayKind;

impl ObjectKind for ObjectArrayKind {
    const NAME: &'static str = "ObjectArray";
    type Meta = ObjectArrayMeta;
    type Body = ObjectArrayBody;
    fn fmt_details(h: &ObjectArray, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x {}", h.count(), h.item_type())
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

    pub(super) fn ensure_allocated(&self) -> Result<()> {
        self.obj.body.items.iter().try_for_each(Reference::ensure_allocated)
    }
}

impl<'a> KernelView<'a, ObjectArray> {
    /// Item `index` as its own type, as the kernel sees it (mappable even when virtual).
    pub fn item<T: DataObject>(&self, index: usize) -> Result<KernelView<'a, T>> {
        let r = self.object.item_ref(index)?;
        T::from_reference(r).map(KernelView::new).ok_or_else(|| self.object.wrong_type::<T>())
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
