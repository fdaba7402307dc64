//! The object model as the module ABI carries it, in the parts every type shares: scalar-type,
//! image-format and size conversions, a scalar's value, and the bytes of a meta-format attribute
//! set by its OpenVX code ([`AttrValue`]). Each type's own wire form is in its file
//! (`ObjectKind::{to_wire, from_wire, attr_by_code}`).

use vx_plugin_abi::ImageFormat;
use vx_plugin_abi::module_abi::ScalarBits;
pub(super) use vx_plugin_abi::object_meta::ObjectMeta as WireMeta;

use crate::data::types::{ScalarType, ScalarValue};
use crate::error::{Error, ErrorKind, Result};

/// A scalar type's wire code.
pub(super) fn code(t: ScalarType) -> u32 {
    t.code() as u32
}

/// The scalar type with wire code `code`.
pub(super) fn scalar_type(code: u32) -> Result<ScalarType> {
    ScalarType::ALL.into_iter().find(|t| t.code() as u32 == code).ok_or_else(|| {
        Error::new(ErrorKind::InvalidType, "unknown scalar type code")
            .found(vx_plugin_abi::wire::scalar_type::name(code))
    })
}

/// The image format with code (FourCC) `code`.
pub(super) fn format(code: u32) -> Result<ImageFormat> {
    ImageFormat::from_fourcc(code)
        .ok_or_else(|| Error::new(ErrorKind::InvalidFormat, "unknown image format code").found(format!("{code:#x}")))
}

/// A wire size as a `usize`.
pub(super) fn size(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidValue, "a size overflows").found(v))
}

/// A scalar value as the module ABI carries it.
pub(crate) fn scalar_bits(v: ScalarValue) -> ScalarBits {
    ScalarBits { type_code: v.scalar_type().code() as u32, bytes: v.to_ne_bytes() }
}

/// `vxSetMetaFormatAttribute`'s `(attribute, value bytes)`, read as the C type the attribute has.
pub struct AttrValue<'a> {
    pub(super) code: u32,
    pub(super) bytes: &'a [u8],
}

impl AttrValue<'_> {
    /// The error naming the attribute and the C type its value must be.
    pub(super) fn wrong(&self, ctype: &str, bytes: usize) -> Error {
        Error::new(ErrorKind::InvalidParameters, format!("attribute {:#x} takes a {ctype}", self.code))
            .expected_found(format!("{bytes} bytes"), format!("{} bytes", self.bytes.len()))
    }
    /// A 4-byte value.
    pub(super) fn u32(&self) -> Result<u32> {
        self.bytes.try_into().map(u32::from_ne_bytes).map_err(|_| self.wrong("4-byte value", 4))
    }
    /// A `vx_size`.
    pub(super) fn size(&self) -> Result<usize> {
        self.bytes.try_into().map(|b| u64::from_ne_bytes(b) as usize).map_err(|_| self.wrong("vx_size", 8))
    }
    /// A `vx_int32`.
    pub(super) fn i32(&self) -> Result<i32> {
        self.u32().map(|v| v as i32)
    }
    /// A `vx_float32`.
    pub(super) fn f32(&self) -> Result<f32> {
        self.u32().map(f32::from_bits)
    }
    /// A `vx_int8`.
    pub(super) fn i8(&self) -> Result<i8> {
        match self.bytes {
            [b] => Ok(*b as i8),
            _ => Err(self.wrong("vx_int8", 1)),
        }
    }
    /// UTF-8 text (a trailing NUL dropped).
    pub(super) fn utf8(&self) -> Result<String> {
        let s = std::str::from_utf8(self.bytes)
            .map_err(|_| Error::new(ErrorKind::InvalidParameters, "a user data object's type name must be UTF-8"))?;
        Ok(s.trim_end_matches('\0').to_owned())
    }
    /// A scalar type's code.
    pub(super) fn scalar_type(&self) -> Result<ScalarType> {
        self.u32().and_then(scalar_type)
    }
    /// An image format's code.
    pub(super) fn format(&self) -> Result<ImageFormat> {
        self.u32().and_then(format)
    }
}
