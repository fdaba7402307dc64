//! Every data object across the module ABI (since version 5): which object a call means
//! ([`ParamPath`]: a parameter, an item of an object array, a level of a pyramid), what it is
//! ([`ObjectMeta`], one variant per OpenVX type, with the values a validator may read: a scalar's
//! value, an array's item count), a mapped object's memory ([`MappedData`]) and a threshold's values
//! ([`ThresholdBits`]). Plain wire data: the host fills it, modules read it; codes are the
//! [`crate::wire`] ones.

use abi_stable::StableAbi;
use abi_stable::std_types::RString;

/// No item / no level in a [`ParamPath`].
pub const PATH_NONE: u32 = u32::MAX;

/// Which object a call means: parameter `index`, then item `item` of it (an object array), then
/// level `level` of that (a pyramid). An object array of pyramids reaches a level of an item.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamPath {
    /// The parameter index.
    pub index: u32,
    /// The object-array item ([`PATH_NONE`]: the parameter itself).
    pub item: u32,
    /// The pyramid level ([`PATH_NONE`]: the object itself).
    pub level: u32,
}

impl ParamPath {
    /// Parameter `index` itself.
    pub const fn param(index: u32) -> ParamPath {
        ParamPath { index, item: PATH_NONE, level: PATH_NONE }
    }
    /// Item `item` of this object array.
    pub const fn item(self, item: u32) -> ParamPath {
        ParamPath { item, ..self }
    }
    /// Level `level` of this pyramid.
    pub const fn level(self, level: u32) -> ParamPath {
        ParamPath { level, ..self }
    }
}

impl std::fmt::Display for ParamPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter {}", self.index)?;
        if self.item != PATH_NONE {
            write!(f, " item {}", self.item)?;
        }
        if self.level != PATH_NONE {
            write!(f, " level {}", self.level)?;
        }
        Ok(())
    }
}

/// What an object is: its type and OpenVX attributes. Validators read it for inputs
/// ([`Validator::meta`](crate::module_abi::Validator::meta)) and give it for outputs
/// ([`Validator::set_output_meta`](crate::module_abi::Validator::set_output_meta), like
/// `vxSetMetaFormatFromReference`); init, deinit and process read it too. Sizes cross as `u64`,
/// types and formats as [`crate::wire`] codes (0: not known yet, a virtual object before verify).
#[repr(C, u8)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub enum ObjectMeta {
    /// An optional parameter left unset.
    Absent,
    /// An image (`VX_IMAGE_FORMAT` FourCC, width, height).
    Image {
        /// FourCC.
        format: u32,
        /// Pixels per row.
        width: u32,
        /// Rows.
        height: u32,
    },
    /// A scalar and its value now (validators may read input scalars, as `vxCopyScalar` allows).
    Scalar {
        /// A [`crate::wire::scalar_type`] code.
        scalar_type: u32,
        /// The value (ignored when setting an output's meta).
        value: ScalarBits,
    },
    /// An array.
    Array {
        /// A [`crate::wire::item_type`] code (0: not known yet).
        item_type: u32,
        /// Bytes per item.
        item_size: u64,
        /// Most items.
        capacity: u64,
        /// Items now (ignored when setting an output's meta).
        num_items: u64,
    },
    /// A user data object.
    UserDataObject {
        /// `VX_USER_DATA_OBJECT_NAME` (may be empty).
        type_name: RString,
        /// Bytes.
        size: u64,
    },
    /// A matrix.
    Matrix {
        /// Element type ([`crate::wire::scalar_type`]).
        element: u32,
        /// Columns.
        columns: u64,
        /// Rows.
        rows: u64,
        /// `VX_MATRIX_ORIGIN`: column.
        origin_x: u64,
        /// `VX_MATRIX_ORIGIN`: row.
        origin_y: u64,
        /// `VX_MATRIX_PATTERN` ([`crate::wire::pattern`]).
        pattern: u32,
    },
    /// A convolution (S16 coefficients).
    Convolution {
        /// Columns.
        columns: u64,
        /// Rows.
        rows: u64,
        /// `VX_CONVOLUTION_SCALE` (ignored when setting an output's meta).
        scale: u32,
    },
    /// A LUT.
    Lut {
        /// `VX_LUT_TYPE` (U8 or S16).
        element: u32,
        /// Entries.
        count: u64,
        /// `VX_LUT_OFFSET`: the entry of input value 0.
        offset: u32,
    },
    /// A distribution (U32 counts).
    Distribution {
        /// Bins.
        bins: u64,
        /// The first value counted.
        offset: i32,
        /// How many values are counted.
        range: u32,
        /// `range / bins`.
        window: u32,
    },
    /// A threshold.
    Threshold {
        /// [`crate::wire::threshold_type`].
        threshold_type: u32,
        /// Input image FourCC (0: any).
        input_format: u32,
        /// Output image FourCC (0: any).
        output_format: u32,
    },
    /// A pyramid.
    Pyramid {
        /// Levels.
        levels: u64,
        /// Scale between levels (0.5, or ORB's 0.8408964).
        scale: f32,
        /// Level 0's width.
        width: u32,
        /// Level 0's height.
        height: u32,
        /// FourCC.
        format: u32,
    },
    /// A remap.
    Remap {
        /// Source width.
        source_width: u32,
        /// Source height.
        source_height: u32,
        /// Destination width.
        destination_width: u32,
        /// Destination height.
        destination_height: u32,
    },
    /// An object array.
    ObjectArray {
        /// The items' [`crate::wire::data_type`].
        item_type: u32,
        /// Items.
        count: u64,
    },
    /// A tensor.
    Tensor {
        /// Dimensions used (≤ 6).
        num_dims: u32,
        /// Sizes, dimension 0 first (the first `num_dims` count).
        dims: [u64; 6],
        /// Element type ([`crate::wire::scalar_type`]).
        data_type: u32,
        /// `VX_TENSOR_FIXED_POINT_POSITION`.
        fixed_point_position: i8,
    },
}

impl ObjectMeta {
    /// The object's [`crate::wire::data_type`] code (0 for [`ObjectMeta::Absent`]).
    pub fn data_type(&self) -> u32 {
        use crate::wire::data_type as d;
        match self {
            ObjectMeta::Absent => 0,
            ObjectMeta::Image { .. } => d::IMAGE,
            ObjectMeta::Scalar { .. } => d::SCALAR,
            ObjectMeta::Array { .. } => d::ARRAY,
            ObjectMeta::UserDataObject { .. } => d::USER_DATA_OBJECT,
            ObjectMeta::Matrix { .. } => d::MATRIX,
            ObjectMeta::Convolution { .. } => d::CONVOLUTION,
            ObjectMeta::Lut { .. } => d::LUT,
            ObjectMeta::Distribution { .. } => d::DISTRIBUTION,
            ObjectMeta::Threshold { .. } => d::THRESHOLD,
            ObjectMeta::Pyramid { .. } => d::PYRAMID,
            ObjectMeta::Remap { .. } => d::REMAP,
            ObjectMeta::ObjectArray { .. } => d::OBJECT_ARRAY,
            ObjectMeta::Tensor { .. } => d::TENSOR,
        }
    }
}

/// An object's memory mapped for a module's process (matrix, convolution, LUT, distribution,
/// remap, tensor, user data object): `bytes` bytes at `base`, 64-byte aligned, until unmapped by
/// `token`. A tensor view's elements are `strides` bytes apart per dimension (its `bytes` run
/// from its first element to one past its last); the other objects are packed.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct MappedData {
    /// The first byte.
    pub base: *mut u8,
    /// Bytes reachable from `base`.
    pub bytes: u64,
    /// Byte strides per dimension (tensors; 0 otherwise).
    pub strides: [u64; 6],
    /// Pass back to `unmap`.
    pub token: u64,
}

/// A threshold's values (`VX_THRESHOLD_THRESHOLD_VALUE`, `_LOWER`, `_UPPER`, `_TRUE_VALUE`,
/// `_FALSE_VALUE`), as 64-bit integers whatever the formats.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThresholdBits {
    /// The binary threshold's value.
    pub value: i64,
    /// The range threshold's lower bound.
    pub lower: i64,
    /// The range threshold's upper bound.
    pub upper: i64,
    /// Output where the test holds.
    pub true_value: i64,
    /// Output where it does not.
    pub false_value: i64,
}

/// A scalar value across the boundary.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarBits {
    /// A [`crate::wire::scalar_type`] code.
    pub type_code: u32,
    /// The value's bytes in native order, at the start.
    pub bytes: [u8; 8],
}
