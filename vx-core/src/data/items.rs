//! The element types of the object model: what arrays hold (`VX_ARRAY_ITEMTYPE`), and what
//! matrices, LUTs, distributions, convolutions, remaps and tensors are made of ([`ArrayItem`]).

use std::fmt;

use vx_plugin_abi::Rect;

use crate::data::types::ScalarType;
use crate::data::wire::{code, scalar_type};
use crate::error::Result;
use vx_plugin_abi::wire::item_type;

/// `vx_coordinates2d_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coordinates2d {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
}

/// `vx_coordinates2df_t` (a remap's source point).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Coordinates2dF {
    /// Column.
    pub x: f32,
    /// Row.
    pub y: f32,
}

/// `vx_coordinates3d_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coordinates3d {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
    /// Depth.
    pub z: u32,
}

/// `vx_keypoint_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Keypoint {
    /// Column.
    pub x: i32,
    /// Row.
    pub y: i32,
    /// Strength of the keypoint.
    pub strength: f32,
    /// Initialised to 0 by corner detectors.
    pub scale: f32,
    /// Initialised to 0 by corner detectors.
    pub orientation: f32,
    /// 1 when the point is tracked, 0 when lost.
    pub tracking_status: i32,
    /// Initialised to 0 by corner detectors.
    pub error: f32,
}

/// The type of an array's items (`VX_ARRAY_ITEMTYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayItemType {
    /// Items of a scalar type.
    Scalar(ScalarType),
    /// `VX_TYPE_RECTANGLE`
    Rectangle,
    /// `VX_TYPE_COORDINATES2D`
    Coordinates2d,
    /// `VX_TYPE_COORDINATES2DF`
    Coordinates2dF,
    /// `VX_TYPE_COORDINATES3D`
    Coordinates3d,
    /// `VX_TYPE_KEYPOINT`
    Keypoint,
    /// A user struct of the given size (`vxRegisterUserStruct`).
    User {
        /// Bytes per item.
        size: usize,
    },
}

impl ArrayItemType {
    /// `VX_ARRAY_ITEMSIZE`.
    pub const fn size(self) -> usize {
        match self {
            ArrayItemType::Scalar(t) => t.size(),
            ArrayItemType::Rectangle => 16,
            ArrayItemType::Coordinates2d | ArrayItemType::Coordinates2dF => 8,
            ArrayItemType::Coordinates3d => 12,
            ArrayItemType::Keypoint => 28,
            ArrayItemType::User { size } => size,
        }
    }
}

impl From<ScalarType> for ArrayItemType {
    /// Items (elements) of a scalar type.
    fn from(t: ScalarType) -> ArrayItemType {
        ArrayItemType::Scalar(t)
    }
}

impl ArrayItemType {
    /// The type's wire code (`VX_ARRAY_ITEMTYPE` across the module ABI).
    pub(super) fn wire_code(self) -> u32 {
        match self {
            ArrayItemType::Scalar(s) => code(s),
            ArrayItemType::Rectangle => item_type::RECTANGLE,
            ArrayItemType::Coordinates2d => item_type::COORDINATES2D,
            ArrayItemType::Coordinates2dF => item_type::COORDINATES2DF,
            ArrayItemType::Coordinates3d => item_type::COORDINATES3D,
            ArrayItemType::Keypoint => item_type::KEYPOINT,
            ArrayItemType::User { .. } => item_type::USER_STRUCT,
        }
    }

    /// The item type with wire code `code` (`size`: a user struct's).
    pub(super) fn from_wire(code: u32, size: u64) -> Result<ArrayItemType> {
        Ok(match code {
            item_type::RECTANGLE => ArrayItemType::Rectangle,
            item_type::COORDINATES2D => ArrayItemType::Coordinates2d,
            item_type::COORDINATES2DF => ArrayItemType::Coordinates2dF,
            item_type::COORDINATES3D => ArrayItemType::Coordinates3d,
            item_type::KEYPOINT => ArrayItemType::Keypoint,
            item_type::USER_STRUCT => ArrayItemType::User { size: size as usize },
            other => ArrayItemType::Scalar(scalar_type(other)?),
        })
    }
}

impl fmt::Display for ArrayItemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrayItemType::Scalar(t) => write!(f, "{t}"),
            ArrayItemType::Rectangle => f.write_str("Rectangle"),
            ArrayItemType::Coordinates2d => f.write_str("Coordinates2d"),
            ArrayItemType::Coordinates2dF => f.write_str("Coordinates2dF"),
            ArrayItemType::Coordinates3d => f.write_str("Coordinates3d"),
            ArrayItemType::Keypoint => f.write_str("Keypoint"),
            ArrayItemType::User { size } => write!(f, "user struct of {size} bytes"),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Rust types usable as array items (and as the elements of matrices, LUTs, distributions,
/// convolutions, remaps and tensors). Sealed: plain old data, any bit pattern valid.
pub trait ArrayItem: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// The item type this Rust type stands for.
    const ITEM_TYPE: ArrayItemType;
}

macro_rules! array_item {
    ($($t:ty => $it:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl ArrayItem for $t { const ITEM_TYPE: ArrayItemType = $it; }
    )*};
}
array_item!(
    i8 => ArrayItemType::Scalar(ScalarType::Int8), u8 => ArrayItemType::Scalar(ScalarType::Uint8),
    i16 => ArrayItemType::Scalar(ScalarType::Int16), u16 => ArrayItemType::Scalar(ScalarType::Uint16),
    i32 => ArrayItemType::Scalar(ScalarType::Int32), u32 => ArrayItemType::Scalar(ScalarType::Uint32),
    i64 => ArrayItemType::Scalar(ScalarType::Int64), u64 => ArrayItemType::Scalar(ScalarType::Uint64),
    f32 => ArrayItemType::Scalar(ScalarType::Float32), f64 => ArrayItemType::Scalar(ScalarType::Float64),
    Rect => ArrayItemType::Rectangle, Coordinates2d => ArrayItemType::Coordinates2d,
    Coordinates2dF => ArrayItemType::Coordinates2dF, Coordinates3d => ArrayItemType::Coordinates3d,
    Keypoint => ArrayItemType::Keypoint,
);
