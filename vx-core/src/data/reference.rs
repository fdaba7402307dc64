//! References (`vx_reference`): any data object, as passed to nodes and kernels, with its meta
//! data and identity.

use std::fmt;
use std::sync::Arc;

use vx_plugin_abi::ImageFormat;

use crate::data::array::{Array, ArrayItemType};
use crate::data::image::Image;
use crate::data::object::ObjectHeader;
use crate::data::scalar::Scalar;
use crate::data::types::{DataType, ScalarType};
use crate::data::user_data::UserDataObject;
use crate::shared::ContextShared;

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
}

/// The meta data of an object: what a validator's meta format describes and what re-verification
/// compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
        /// Bytes.
        size: usize,
    },
}

impl fmt::Display for ObjectMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectMeta::Image { format, width, height } => write!(f, "image {format} {width}x{height}"),
            ObjectMeta::Scalar { scalar_type } => write!(f, "scalar {scalar_type}"),
            ObjectMeta::Array { item_type: Some(t), capacity } => write!(f, "array of {capacity} {t}"),
            ObjectMeta::Array { item_type: None, capacity } => write!(f, "array of {capacity} (type unknown)"),
            ObjectMeta::UserDataObject { size } => write!(f, "user data object of {size} bytes"),
        }
    }
}

impl Reference {
    /// The type of the object.
    pub fn data_type(&self) -> DataType {
        match self {
            Reference::Image(_) => DataType::Image,
            Reference::Scalar(_) => DataType::Scalar,
            Reference::Array(_) => DataType::Array,
            Reference::UserDataObject(_) => DataType::UserDataObject,
        }
    }

    pub(crate) fn header(&self) -> &ObjectHeader {
        match self {
            Reference::Image(i) => &i.obj.header,
            Reference::Scalar(s) => &s.obj.header,
            Reference::Array(a) => &a.obj.header,
            Reference::UserDataObject(u) => &u.obj.header,
        }
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
            Reference::UserDataObject(u) => ObjectMeta::UserDataObject { size: u.size() },
        }
    }

    /// True when writing `self` may change what reading `other` sees (same object, or images
    /// sharing pixels).
    pub(crate) fn overlaps(&self, other: &Reference) -> bool {
        if self.same_object(other) {
            // Checked first: a virtual image of unknown size covers an empty rectangle.
            return true;
        }
        match (self, other) {
            (Reference::Image(x), Reference::Image(y)) => {
                x.storage_key() == y.storage_key() && x.rect_in_storage().overlaps(&y.rect_in_storage())
            }
            _ => false,
        }
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
            Reference::Scalar(_) => Ok(()),
            Reference::Array(a) => a.ensure_allocated(),
            Reference::UserDataObject(u) => u.ensure_allocated(),
        }
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

macro_rules! reference_from {
    ($($t:ident),*) => {$(
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
reference_from!(Image, Scalar, Array, UserDataObject);
