//! Every data object across the module ABI: which object a [`ParamPath`] names (a parameter, an
//! object-array item, a pyramid level), its meta data as the wire carries it ([`wire_meta`]) and
//! back for outputs ([`core_meta`]), and meta-format attributes by their OpenVX codes
//! ([`attribute`], `vxSetMetaFormatAttribute`'s code-and-bytes form).

use vx_plugin_abi::ImageFormat;
use vx_plugin_abi::abi_stable::std_types::RString;
use vx_plugin_abi::object_meta::{ObjectMeta as WireMeta, PATH_NONE, ParamPath};
use vx_plugin_abi::wire::{attribute as at, item_type, pattern, threshold_type};

use crate::data::array::ArrayItemType;
use crate::data::convolution::ConvolutionMeta;
use crate::data::distribution::DistributionMeta;
use crate::data::image::Image;
use crate::data::lut::LutMeta;
use crate::data::matrix::{MatrixMeta, MatrixPattern};
use crate::data::pyramid::PyramidMeta;
use crate::data::reference::{DataObject, ObjectMeta, Reference};
use crate::data::remap::RemapMeta;
use crate::data::tensor::{MAX_TENSOR_DIMS, TensorMeta};
use crate::data::threshold::{ThresholdMeta, ThresholdType};
use crate::data::types::{DataType, ScalarType};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel::meta_format::MetaAttribute;
use vx_plugin_abi::module_abi::ScalarBits;

use crate::data::types::ScalarValue;

/// A scalar value as the module ABI carries it.
pub(super) fn scalar_bits(v: ScalarValue) -> ScalarBits {
    ScalarBits { type_code: v.scalar_type().code() as u32, bytes: v.to_ne_bytes() }
}

/// The object a path names.
#[derive(Clone, Copy)]
pub(super) enum Target<'b> {
    /// A parameter or an object-array item.
    Ref(&'b Reference),
    /// A pyramid level.
    Level(&'b Image),
}

impl<'b> Target<'b> {
    /// The image, if the object is one (a parameter, an item or a level).
    pub(super) fn image(self) -> Option<&'b Image> {
        match self {
            Target::Ref(r) => r.as_image(),
            Target::Level(i) => Some(i),
        }
    }
    /// The reference, if the object is not a pyramid level.
    pub(super) fn reference(self) -> Option<&'b Reference> {
        match self {
            Target::Ref(r) => Some(r),
            Target::Level(_) => None,
        }
    }
    fn data_type(self) -> DataType {
        match self {
            Target::Ref(r) => r.data_type(),
            Target::Level(_) => DataType::Image,
        }
    }
}

/// The object at `path`, or `None` for an unset optional parameter.
pub(super) fn resolve(params: &[Option<Reference>], path: ParamPath) -> Result<Option<Target<'_>>> {
    let at = |e: Error| e.at_parameter(path.index);
    let slot = params.get(path.index as usize).ok_or_else(|| {
        Error::new(ErrorKind::InvalidParameters, "no such parameter")
            .expected_found(format!("index < {}", params.len()), path.index)
    })?;
    let Some(mut r) = slot.as_ref() else { return Ok(None) };
    if path.item != PATH_NONE {
        let Reference::ObjectArray(a) = r else {
            return Err(at(Error::new(
                ErrorKind::InvalidParameters,
                format!("{path}: the parameter is not an object array"),
            )
            .found(r.data_type())));
        };
        r = a.item_ref(path.item as usize).map_err(at)?;
    }
    if path.level == PATH_NONE {
        return Ok(Some(Target::Ref(r)));
    }
    let Reference::Pyramid(p) = r else {
        return Err(at(Error::new(ErrorKind::InvalidParameters, format!("{path}: the object is not a pyramid"))
            .found(r.data_type())));
    };
    Ok(Some(Target::Level(p.level_ref(path.level as usize).map_err(at)?)))
}

/// The object at `path`, which must be set and of type `want` (named in the error).
pub(super) fn target(params: &[Option<Reference>], path: ParamPath, want: DataType) -> Result<Target<'_>> {
    let t = resolve(params, path)?.ok_or_else(|| {
        Error::new(ErrorKind::InvalidParameters, format!("{path} is not set")).at_parameter(path.index)
    })?;
    if t.data_type() != want {
        return Err(Error::new(ErrorKind::InvalidType, format!("{path} is not a {want}"))
            .at_parameter(path.index)
            .expected_found(want, t.data_type()));
    }
    Ok(t)
}

/// The `T` at `path` (not a pyramid level: those are images, see [`target`]).
pub(super) fn get<T: DataObject>(params: &[Option<Reference>], path: ParamPath) -> Result<&T> {
    let t = target(params, path, T::TYPE)?;
    t.reference().and_then(T::from_reference).ok_or_else(|| {
        Error::new(ErrorKind::InvalidType, format!("{path} is not a {}", T::TYPE)).at_parameter(path.index)
    })
}

/// The image at `path` (a parameter, an item, a level).
pub(super) fn image(params: &[Option<Reference>], path: ParamPath) -> Result<&Image> {
    Ok(target(params, path, DataType::Image)?.image().expect("an image target is an image"))
}

fn code(t: ScalarType) -> u32 {
    t.code() as u32
}

fn scalar_type(code: u32) -> Result<ScalarType> {
    ScalarType::ALL.into_iter().find(|t| t.code() as u32 == code).ok_or_else(|| {
        Error::new(ErrorKind::InvalidType, "unknown scalar type code")
            .found(vx_plugin_abi::wire::scalar_type::name(code))
    })
}

fn format(code: u32) -> Result<ImageFormat> {
    ImageFormat::from_fourcc(code)
        .ok_or_else(|| Error::new(ErrorKind::InvalidFormat, "unknown image format code").found(format!("{code:#x}")))
}

fn item_code(t: ArrayItemType) -> u32 {
    match t {
        ArrayItemType::Scalar(s) => code(s),
        ArrayItemType::Rectangle => item_type::RECTANGLE,
        ArrayItemType::Coordinates2d => item_type::COORDINATES2D,
        ArrayItemType::Coordinates2dF => item_type::COORDINATES2DF,
        ArrayItemType::Coordinates3d => item_type::COORDINATES3D,
        ArrayItemType::Keypoint => item_type::KEYPOINT,
        ArrayItemType::User { .. } => item_type::USER_STRUCT,
    }
}

fn item_of(code: u32, size: u64) -> Result<ArrayItemType> {
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

fn pattern_code(p: MatrixPattern) -> u32 {
    match p {
        MatrixPattern::Box => pattern::BOX,
        MatrixPattern::Cross => pattern::CROSS,
        MatrixPattern::Disk => pattern::DISK,
        MatrixPattern::Other => pattern::OTHER,
    }
}

fn pattern_of(code: u32) -> Result<MatrixPattern> {
    Ok(match code {
        pattern::BOX => MatrixPattern::Box,
        pattern::CROSS => MatrixPattern::Cross,
        pattern::DISK => MatrixPattern::Disk,
        pattern::OTHER => MatrixPattern::Other,
        other => {
            return Err(Error::new(ErrorKind::InvalidValue, "unknown matrix pattern code").found(format!("{other:#x}")));
        }
    })
}

fn threshold_code(t: ThresholdType) -> u32 {
    match t {
        ThresholdType::Binary => threshold_type::BINARY,
        ThresholdType::Range => threshold_type::RANGE,
    }
}

fn threshold_of(code: u32) -> Result<ThresholdType> {
    match code {
        threshold_type::BINARY => Ok(ThresholdType::Binary),
        threshold_type::RANGE => Ok(ThresholdType::Range),
        other => Err(Error::new(ErrorKind::InvalidType, "unknown threshold type code").found(format!("{other:#x}"))),
    }
}

/// What the object at `path` is, as the wire says it (values a validator may read included).
pub(super) fn wire_meta(params: &[Option<Reference>], path: ParamPath) -> Result<WireMeta> {
    let r = match resolve(params, path)? {
        None => return Ok(WireMeta::Absent),
        Some(Target::Level(i)) => {
            return Ok(WireMeta::Image { format: i.format().fourcc(), width: i.width(), height: i.height() });
        }
        Some(Target::Ref(r)) => r,
    };
    Ok(match (r.meta(), r) {
        (ObjectMeta::Image { format, width, height }, _) => WireMeta::Image { format: format.fourcc(), width, height },
        (ObjectMeta::Scalar { scalar_type }, Reference::Scalar(s)) => {
            WireMeta::Scalar { scalar_type: code(scalar_type), value: scalar_bits(s.value()) }
        }
        (ObjectMeta::Array { item_type, capacity }, Reference::Array(a)) => WireMeta::Array {
            item_type: item_type.map_or(0, item_code),
            item_size: item_type.map_or(0, |t| t.size()) as u64,
            capacity: capacity as u64,
            num_items: a.num_items() as u64,
        },
        (ObjectMeta::UserDataObject { type_name, size }, _) => {
            WireMeta::UserDataObject { type_name: RString::from(type_name), size: size as u64 }
        }
        (ObjectMeta::Matrix(m), _) => WireMeta::Matrix {
            element: code(m.element),
            columns: m.columns as u64,
            rows: m.rows as u64,
            origin_x: m.origin.0 as u64,
            origin_y: m.origin.1 as u64,
            pattern: pattern_code(m.pattern),
        },
        (ObjectMeta::Convolution(m), Reference::Convolution(c)) => {
            WireMeta::Convolution { columns: m.columns as u64, rows: m.rows as u64, scale: c.scale() }
        }
        (ObjectMeta::Lut(m), _) => {
            WireMeta::Lut { element: code(m.element), count: m.count as u64, offset: m.offset() as u32 }
        }
        (ObjectMeta::Distribution(m), _) => {
            WireMeta::Distribution { bins: m.bins as u64, offset: m.offset, range: m.range, window: m.window() }
        }
        (ObjectMeta::Threshold(m), _) => WireMeta::Threshold {
            threshold_type: threshold_code(m.threshold_type),
            input_format: m.input_format.fourcc(),
            output_format: m.output_format.fourcc(),
        },
        (ObjectMeta::Pyramid(m), _) => WireMeta::Pyramid {
            levels: m.levels as u64,
            scale: m.scale,
            width: m.width,
            height: m.height,
            format: m.format.fourcc(),
        },
        (ObjectMeta::Remap(m), _) => WireMeta::Remap {
            source_width: m.source_width,
            source_height: m.source_height,
            destination_width: m.destination_width,
            destination_height: m.destination_height,
        },
        (ObjectMeta::ObjectArray { item_type, count }, _) => {
            WireMeta::ObjectArray { item_type: item_type.code() as u32, count: count as u64 }
        }
        (ObjectMeta::Tensor(m), _) => WireMeta::Tensor {
            num_dims: m.num_dims as u32,
            dims: m.dims.map(|d| d as u64),
            data_type: m.data_type.map_or(0, code),
            fixed_point_position: m.fixed_point_position,
        },
        (other, _) => unreachable!("a reference's meta has its own type: {other}"),
    })
}

/// The meta data a module gave for an output (values such as a scalar's are not meta data).
pub(super) fn core_meta(w: &WireMeta) -> Result<ObjectMeta> {
    let size =
        |v: u64| usize::try_from(v).map_err(|_| Error::new(ErrorKind::InvalidValue, "a size overflows").found(v));
    Ok(match w {
        WireMeta::Absent => {
            return Err(Error::new(ErrorKind::InvalidParameters, "an output's meta cannot be 'absent'"));
        }
        WireMeta::Image { format: f, width, height } => {
            ObjectMeta::Image { format: format(*f)?, width: *width, height: *height }
        }
        WireMeta::Scalar { scalar_type: t, .. } => ObjectMeta::Scalar { scalar_type: scalar_type(*t)? },
        WireMeta::Array { item_type: t, item_size, capacity, .. } => ObjectMeta::Array {
            item_type: if *t == 0 { None } else { Some(item_of(*t, *item_size)?) },
            capacity: size(*capacity)?,
        },
        WireMeta::UserDataObject { type_name, size: s } => {
            ObjectMeta::UserDataObject { type_name: type_name.to_string(), size: size(*s)? }
        }
        WireMeta::Matrix { element, columns, rows, origin_x, origin_y, pattern } => ObjectMeta::Matrix(MatrixMeta {
            element: scalar_type(*element)?,
            columns: size(*columns)?,
            rows: size(*rows)?,
            origin: (size(*origin_x)?, size(*origin_y)?),
            pattern: pattern_of(*pattern)?,
        }),
        WireMeta::Convolution { columns, rows, .. } => {
            ObjectMeta::Convolution(ConvolutionMeta { columns: size(*columns)?, rows: size(*rows)? })
        }
        WireMeta::Lut { element, count, .. } => {
            ObjectMeta::Lut(LutMeta { element: scalar_type(*element)?, count: size(*count)? })
        }
        WireMeta::Distribution { bins, offset, range, .. } => {
            ObjectMeta::Distribution(DistributionMeta { bins: size(*bins)?, offset: *offset, range: *range })
        }
        WireMeta::Threshold { threshold_type: t, input_format, output_format } => {
            ObjectMeta::Threshold(ThresholdMeta {
                threshold_type: threshold_of(*t)?,
                input_format: format(*input_format)?,
                output_format: format(*output_format)?,
            })
        }
        WireMeta::Pyramid { levels, scale, width, height, format: f } => ObjectMeta::Pyramid(PyramidMeta {
            levels: size(*levels)?,
            scale: *scale,
            width: *width,
            height: *height,
            format: format(*f)?,
        }),
        WireMeta::Remap { source_width, source_height, destination_width, destination_height } => {
            ObjectMeta::Remap(RemapMeta {
                source_width: *source_width,
                source_height: *source_height,
                destination_width: *destination_width,
                destination_height: *destination_height,
            })
        }
        WireMeta::ObjectArray { item_type: t, count } => ObjectMeta::ObjectArray {
            item_type: DataType::from_code(*t).ok_or_else(|| {
                Error::new(ErrorKind::InvalidType, "unknown object type code").found(format!("{t:#x}"))
            })?,
            count: size(*count)?,
        },
        WireMeta::Tensor { num_dims, dims, data_type, fixed_point_position } => {
            let mut d = [0usize; MAX_TENSOR_DIMS];
            for (o, i) in d.iter_mut().zip(dims) {
                *o = size(*i)?;
            }
            ObjectMeta::Tensor(TensorMeta {
                num_dims: *num_dims as usize,
                dims: d,
                data_type: if *data_type == 0 { None } else { Some(scalar_type(*data_type)?) },
                fixed_point_position: *fixed_point_position,
            })
        }
    })
}

/// An attribute set by code: a meta attribute, or a user data object's type name (kept apart
/// from the attributes, as [`crate::kernel::meta_format::MetaFormat`] keeps it).
pub(super) enum Attribute {
    Meta(MetaAttribute),
    UserDataObjectName(String),
}

/// `vxSetMetaFormatAttribute`'s `(attribute, value bytes)`: the attribute, or an error naming the
/// attribute and the C type its value must be.
pub(super) fn attribute(code: u32, value: &[u8]) -> Result<Attribute> {
    use MetaAttribute as A;
    let wrong = |ctype: &str, bytes: usize| {
        Error::new(ErrorKind::InvalidParameters, format!("attribute {code:#x} takes a {ctype}"))
            .expected_found(format!("{bytes} bytes"), format!("{} bytes", value.len()))
    };
    let u32v = || -> Result<u32> { value.try_into().map(u32::from_ne_bytes).map_err(|_| wrong("4-byte value", 4)) };
    let sizev = || -> Result<usize> {
        value.try_into().map(|b| u64::from_ne_bytes(b) as usize).map_err(|_| wrong("vx_size", 8))
    };
    let scalar = || u32v().and_then(scalar_type);
    let fmt = || u32v().and_then(format);
    Ok(Attribute::Meta(match code {
        at::IMAGE_WIDTH => A::ImageWidth(u32v()?),
        at::IMAGE_HEIGHT => A::ImageHeight(u32v()?),
        at::IMAGE_FORMAT => A::ImageFormat(fmt()?),
        at::SCALAR_TYPE => A::ScalarType(scalar()?),
        at::ARRAY_ITEMTYPE => A::ArrayItemType(item_of(u32v()?, 0)?),
        at::ARRAY_CAPACITY => A::ArrayCapacity(sizev()?),
        at::ARRAY_ITEMSIZE => A::ArrayItemType(ArrayItemType::User { size: sizev()? }),
        at::MATRIX_TYPE => A::MatrixType(scalar()?),
        at::MATRIX_ROWS => A::MatrixRows(sizev()?),
        at::MATRIX_COLUMNS => A::MatrixColumns(sizev()?),
        at::CONVOLUTION_ROWS => A::ConvolutionRows(sizev()?),
        at::CONVOLUTION_COLUMNS => A::ConvolutionColumns(sizev()?),
        at::LUT_TYPE => A::LutType(scalar()?),
        at::LUT_COUNT => A::LutCount(sizev()?),
        at::DISTRIBUTION_BINS => A::DistributionBins(sizev()?),
        at::DISTRIBUTION_OFFSET => A::DistributionOffset(u32v()? as i32),
        at::DISTRIBUTION_RANGE => A::DistributionRange(u32v()?),
        at::THRESHOLD_TYPE => A::ThresholdType(u32v().and_then(threshold_of)?),
        at::THRESHOLD_INPUT_FORMAT => A::ThresholdInputFormat(fmt()?),
        at::THRESHOLD_OUTPUT_FORMAT => A::ThresholdOutputFormat(fmt()?),
        at::PYRAMID_LEVELS => A::PyramidLevels(sizev()?),
        at::PYRAMID_SCALE => A::PyramidScale(f32::from_bits(u32v()?)),
        at::PYRAMID_WIDTH => A::PyramidWidth(u32v()?),
        at::PYRAMID_HEIGHT => A::PyramidHeight(u32v()?),
        at::PYRAMID_FORMAT => A::PyramidFormat(fmt()?),
        at::REMAP_SOURCE_WIDTH => A::RemapSourceWidth(u32v()?),
        at::REMAP_SOURCE_HEIGHT => A::RemapSourceHeight(u32v()?),
        at::REMAP_DESTINATION_WIDTH => A::RemapDestinationWidth(u32v()?),
        at::REMAP_DESTINATION_HEIGHT => A::RemapDestinationHeight(u32v()?),
        at::OBJECT_ARRAY_ITEMTYPE => A::ObjectArrayItemType(u32v().and_then(|c| {
            DataType::from_code(c)
                .ok_or_else(|| Error::new(ErrorKind::InvalidType, "unknown object type code").found(format!("{c:#x}")))
        })?),
        at::OBJECT_ARRAY_NUMITEMS => A::ObjectArrayCount(sizev()?),
        at::TENSOR_NUMBER_OF_DIMS => A::TensorNumberOfDims(sizev()?),
        at::TENSOR_DIMS => {
            if !value.len().is_multiple_of(8) || value.len() > 8 * MAX_TENSOR_DIMS {
                return Err(wrong("vx_size array of at most 6 dimensions", 8 * MAX_TENSOR_DIMS));
            }
            let mut d = [0usize; MAX_TENSOR_DIMS];
            for (o, c) in d.iter_mut().zip(value.chunks_exact(8)) {
                *o = u64::from_ne_bytes(c.try_into().expect("8-byte chunk")) as usize;
            }
            A::TensorDims(d)
        }
        at::TENSOR_DATA_TYPE => A::TensorDataType(scalar()?),
        at::TENSOR_FIXED_POINT_POSITION => {
            let [b] = value else { return Err(wrong("vx_int8", 1)) };
            A::TensorFixedPointPosition(*b as i8)
        }
        at::USER_DATA_OBJECT_SIZE => A::UserDataObjectSize(sizev()?),
        at::USER_DATA_OBJECT_NAME => {
            let name = std::str::from_utf8(value).map_err(|_| {
                Error::new(ErrorKind::InvalidParameters, "a user data object's type name must be UTF-8")
            })?;
            return Ok(Attribute::UserDataObjectName(name.trim_end_matches('\0').to_owned()));
        }
        other => {
            return Err(
                Error::new(ErrorKind::NotSupported, "no such meta-format attribute").found(format!("{other:#x}"))
            );
        }
    }))
}
