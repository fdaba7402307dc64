//! Type tags of the object model: data object types (`vx_type_e`, generated from the list of
//! kinds), parameter directions and states, and scalar types with their values.

use std::fmt;
use vx_plugin_abi::wire::{data_type, scalar_type};

/// Generates [`DataType`] from the list of kinds.
macro_rules! data_types {
    ($($T:ident { code: $code:ident, module: $m:ident, view: $v:ident, label: $label:literal }),* $(,)?) => {
        /// The type of a kernel parameter / data object (`vx_type_e`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DataType {
            $(#[doc = concat!("`VX_TYPE_", stringify!($code), "`")] $T,)*
        }

        impl DataType {
            /// Every data object type.
            pub const ALL: [DataType; [$(DataType::$T),*].len()] = [$(DataType::$T),*];

            /// The `vx_type_e` value.
            pub const fn code(self) -> i32 {
                (match self { $(DataType::$T => data_type::$code,)* }) as i32
            }

            /// The type with `vx_type_e` value `code`.
            pub fn from_code(code: u32) -> Option<DataType> {
                DataType::ALL.into_iter().find(|t| t.code() as u32 == code)
            }
        }

        impl fmt::Display for DataType {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self { $(DataType::$T => $label,)* })
            }
        }
    };
}
vx_plugin_abi::for_each_kind!(data_types);

/// Parameter direction. OpenVX's `VX_BIDIRECTIONAL` is not allowed for user kernels and so has no
/// variant here (the spec: "This must be either VX_INPUT or VX_OUTPUT").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `VX_INPUT`.
    Input,
    /// `VX_OUTPUT`.
    Output,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Input => "input",
            Direction::Output => "output",
        })
    }
}

/// Whether a parameter must be given (`vx_parameter_state_e`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamState {
    /// `VX_PARAMETER_STATE_REQUIRED`: the node must set it.
    Required,
    /// `VX_PARAMETER_STATE_OPTIONAL`: the node may leave it unset.
    Optional,
}

/// The types a scalar can hold (`vx_type_e` scalar subset).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `VX_TYPE_CHAR`.
    Char,
    /// `VX_TYPE_INT8`.
    Int8,
    /// `VX_TYPE_UINT8`.
    Uint8,
    /// `VX_TYPE_INT16`.
    Int16,
    /// `VX_TYPE_UINT16`.
    Uint16,
    /// `VX_TYPE_INT32`.
    Int32,
    /// `VX_TYPE_UINT32`.
    Uint32,
    /// `VX_TYPE_INT64`.
    Int64,
    /// `VX_TYPE_UINT64`.
    Uint64,
    /// `VX_TYPE_FLOAT32`.
    Float32,
    /// `VX_TYPE_FLOAT64`.
    Float64,
    /// `VX_TYPE_ENUM`.
    Enum,
    /// `VX_TYPE_SIZE`.
    Size,
    /// `VX_TYPE_DF_IMAGE` (a FourCC).
    DfImage,
    /// `VX_TYPE_BOOL`.
    Bool,
}

impl ScalarType {
    /// Every scalar type.
    pub const ALL: [ScalarType; 15] = [
        ScalarType::Char,
        ScalarType::Int8,
        ScalarType::Uint8,
        ScalarType::Int16,
        ScalarType::Uint16,
        ScalarType::Int32,
        ScalarType::Uint32,
        ScalarType::Int64,
        ScalarType::Uint64,
        ScalarType::Float32,
        ScalarType::Float64,
        ScalarType::Enum,
        ScalarType::Size,
        ScalarType::DfImage,
        ScalarType::Bool,
    ];

    /// The `vx_type_e` value.
    pub const fn code(self) -> i32 {
        match self {
            ScalarType::Char => scalar_type::CHAR as i32,
            ScalarType::Int8 => scalar_type::INT8 as i32,
            ScalarType::Uint8 => scalar_type::UINT8 as i32,
            ScalarType::Int16 => scalar_type::INT16 as i32,
            ScalarType::Uint16 => scalar_type::UINT16 as i32,
            ScalarType::Int32 => scalar_type::INT32 as i32,
            ScalarType::Uint32 => scalar_type::UINT32 as i32,
            ScalarType::Int64 => scalar_type::INT64 as i32,
            ScalarType::Uint64 => scalar_type::UINT64 as i32,
            ScalarType::Float32 => scalar_type::FLOAT32 as i32,
            ScalarType::Float64 => scalar_type::FLOAT64 as i32,
            ScalarType::Enum => scalar_type::ENUM as i32,
            ScalarType::Size => scalar_type::SIZE as i32,
            ScalarType::DfImage => scalar_type::DF_IMAGE as i32,
            ScalarType::Bool => scalar_type::BOOL as i32,
        }
    }

    /// Size in bytes of the C type.
    pub const fn size(self) -> usize {
        match self {
            ScalarType::Char | ScalarType::Int8 | ScalarType::Uint8 | ScalarType::Bool => 1,
            ScalarType::Int16 | ScalarType::Uint16 => 2,
            ScalarType::Int32 | ScalarType::Uint32 | ScalarType::Float32 | ScalarType::Enum | ScalarType::DfImage => 4,
            ScalarType::Int64 | ScalarType::Uint64 | ScalarType::Float64 | ScalarType::Size => 8,
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A scalar value with its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    /// `VX_TYPE_CHAR` value.
    Char(u8),
    /// `VX_TYPE_INT8` value.
    Int8(i8),
    /// `VX_TYPE_UINT8` value.
    Uint8(u8),
    /// `VX_TYPE_INT16` value.
    Int16(i16),
    /// `VX_TYPE_UINT16` value.
    Uint16(u16),
    /// `VX_TYPE_INT32` value.
    Int32(i32),
    /// `VX_TYPE_UINT32` value.
    Uint32(u32),
    /// `VX_TYPE_INT64` value.
    Int64(i64),
    /// `VX_TYPE_UINT64` value.
    Uint64(u64),
    /// `VX_TYPE_FLOAT32` value.
    Float32(f32),
    /// `VX_TYPE_FLOAT64` value.
    Float64(f64),
    /// `VX_TYPE_ENUM` value.
    Enum(i32),
    /// `VX_TYPE_SIZE` value.
    Size(usize),
    /// `VX_TYPE_DF_IMAGE` (a FourCC) value.
    DfImage(u32),
    /// `VX_TYPE_BOOL` value.
    Bool(bool),
}

impl ScalarValue {
    /// The type of the value.
    pub const fn scalar_type(&self) -> ScalarType {
        match self {
            ScalarValue::Char(_) => ScalarType::Char,
            ScalarValue::Int8(_) => ScalarType::Int8,
            ScalarValue::Uint8(_) => ScalarType::Uint8,
            ScalarValue::Int16(_) => ScalarType::Int16,
            ScalarValue::Uint16(_) => ScalarType::Uint16,
            ScalarValue::Int32(_) => ScalarType::Int32,
            ScalarValue::Uint32(_) => ScalarType::Uint32,
            ScalarValue::Int64(_) => ScalarType::Int64,
            ScalarValue::Uint64(_) => ScalarType::Uint64,
            ScalarValue::Float32(_) => ScalarType::Float32,
            ScalarValue::Float64(_) => ScalarType::Float64,
            ScalarValue::Enum(_) => ScalarType::Enum,
            ScalarValue::Size(_) => ScalarType::Size,
            ScalarValue::DfImage(_) => ScalarType::DfImage,
            ScalarValue::Bool(_) => ScalarType::Bool,
        }
    }

    /// The value's bytes in native order, at the start of 8 bytes (how tiling kernels receive
    /// scalars by value).
    pub fn to_ne_bytes(&self) -> [u8; 8] {
        let mut out = [0u8; 8];
        let b: &[u8] = match self {
            ScalarValue::Char(v) => &v.to_ne_bytes(),
            ScalarValue::Int8(v) => &v.to_ne_bytes(),
            ScalarValue::Uint8(v) => &v.to_ne_bytes(),
            ScalarValue::Int16(v) => &v.to_ne_bytes(),
            ScalarValue::Uint16(v) => &v.to_ne_bytes(),
            ScalarValue::Int32(v) => &v.to_ne_bytes(),
            ScalarValue::Uint32(v) => &v.to_ne_bytes(),
            ScalarValue::Int64(v) => &v.to_ne_bytes(),
            ScalarValue::Uint64(v) => &v.to_ne_bytes(),
            ScalarValue::Float32(v) => &v.to_ne_bytes(),
            ScalarValue::Float64(v) => &v.to_ne_bytes(),
            ScalarValue::Enum(v) => &v.to_ne_bytes(),
            ScalarValue::Size(v) => &(*v as u64).to_ne_bytes(),
            ScalarValue::DfImage(v) => &v.to_ne_bytes(),
            ScalarValue::Bool(v) => &[*v as u8],
        };
        out[..b.len()].copy_from_slice(b);
        out
    }

    /// The value of type `ty` whose native-order bytes start `bytes` (inverse of `to_ne_bytes`).
    pub fn from_ne_bytes(ty: ScalarType, bytes: [u8; 8]) -> ScalarValue {
        let b = bytes;
        match ty {
            ScalarType::Char => ScalarValue::Char(b[0]),
            ScalarType::Int8 => ScalarValue::Int8(b[0] as i8),
            ScalarType::Uint8 => ScalarValue::Uint8(b[0]),
            ScalarType::Int16 => ScalarValue::Int16(i16::from_ne_bytes([b[0], b[1]])),
            ScalarType::Uint16 => ScalarValue::Uint16(u16::from_ne_bytes([b[0], b[1]])),
            ScalarType::Int32 => ScalarValue::Int32(i32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            ScalarType::Uint32 => ScalarValue::Uint32(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            ScalarType::Int64 => ScalarValue::Int64(i64::from_ne_bytes(b)),
            ScalarType::Uint64 => ScalarValue::Uint64(u64::from_ne_bytes(b)),
            ScalarType::Float32 => ScalarValue::Float32(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            ScalarType::Float64 => ScalarValue::Float64(f64::from_ne_bytes(b)),
            ScalarType::Enum => ScalarValue::Enum(i32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            ScalarType::Size => ScalarValue::Size(u64::from_ne_bytes(b) as usize),
            ScalarType::DfImage => ScalarValue::DfImage(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            ScalarType::Bool => ScalarValue::Bool(b[0] != 0),
        }
    }

    /// The zero value of a type.
    pub const fn zero(ty: ScalarType) -> ScalarValue {
        match ty {
            ScalarType::Char => ScalarValue::Char(0),
            ScalarType::Int8 => ScalarValue::Int8(0),
            ScalarType::Uint8 => ScalarValue::Uint8(0),
            ScalarType::Int16 => ScalarValue::Int16(0),
            ScalarType::Uint16 => ScalarValue::Uint16(0),
            ScalarType::Int32 => ScalarValue::Int32(0),
            ScalarType::Uint32 => ScalarValue::Uint32(0),
            ScalarType::Int64 => ScalarValue::Int64(0),
            ScalarType::Uint64 => ScalarValue::Uint64(0),
            ScalarType::Float32 => ScalarValue::Float32(0.0),
            ScalarType::Float64 => ScalarValue::Float64(0.0),
            ScalarType::Enum => ScalarValue::Enum(0),
            ScalarType::Size => ScalarValue::Size(0),
            ScalarType::DfImage => ScalarValue::DfImage(0),
            ScalarType::Bool => ScalarValue::Bool(false),
        }
    }
}

/// Rust types that map one-to-one onto a scalar type, for typed reads and writes.
pub trait ScalarPrimitive: Copy + Send + Sync + 'static {
    /// The scalar type this Rust type stands for.
    const TYPE: ScalarType;
    /// Wrap into a value.
    fn into_value(self) -> ScalarValue;
    /// Unwrap from a value of the same type.
    fn from_value(v: ScalarValue) -> Option<Self>;
}

macro_rules! scalar_primitive {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl ScalarPrimitive for $t {
            const TYPE: ScalarType = ScalarType::$v;
            fn into_value(self) -> ScalarValue { ScalarValue::$v(self) }
            fn from_value(v: ScalarValue) -> Option<Self> {
                match v { ScalarValue::$v(x) => Some(x), _ => None }
            }
        }
    )*};
}
scalar_primitive!(i8 => Int8, u8 => Uint8, i16 => Int16, u16 => Uint16, i32 => Int32, u32 => Uint32,
    i64 => Int64, u64 => Uint64, f32 => Float32, f64 => Float64, usize => Size, bool => Bool);
