//! Meta formats (`vx_meta_format`): what a validator says each output must look like, attribute by
//! attribute ([`MetaAttribute`], `vxSetMetaFormatAttribute`) or copied from an exemplar
//! (`vxSetMetaFormatFromReference`), plus an optional valid-rectangle callback.

use std::fmt;
use std::sync::Arc;

use vx_plugin_abi::{ImageFormat, Rect};

use crate::data::array::ArrayItemType;
use crate::data::convolution::ConvolutionMeta;
use crate::data::distribution::DistributionMeta;
use crate::data::lut::LutMeta;
use crate::data::matrix::{MatrixMeta, MatrixPattern};
use crate::data::pyramid::PyramidMeta;
use crate::data::reference::{ObjectMeta, Reference};
use crate::data::remap::RemapMeta;
use crate::data::tensor::{MAX_TENSOR_DIMS, TensorMeta};
use crate::data::threshold::{ThresholdMeta, ThresholdType};
use crate::data::types::{DataType, ScalarType};
use crate::error::{Error, ErrorKind, Result};

/// `vx_kernel_image_valid_rectangle_f`: given the output parameter index and the valid rectangles
/// of the node's input images (in parameter order; a pyramid input gives one per level), fill the
/// output's valid rectangles: one for an image, one per level for a pyramid.
pub type ValidRectFn = dyn Fn(u32, &[Rect], &mut [Rect]) -> Result<()> + Send + Sync;

/// One attribute of an output's meta data (`vxSetMetaFormatAttribute`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MetaAttribute {
    /// `VX_IMAGE_FORMAT`.
    ImageFormat(ImageFormat),
    /// `VX_IMAGE_WIDTH`.
    ImageWidth(u32),
    /// `VX_IMAGE_HEIGHT`.
    ImageHeight(u32),
    /// `VX_SCALAR_TYPE`.
    ScalarType(ScalarType),
    /// `VX_ARRAY_ITEMTYPE`.
    ArrayItemType(ArrayItemType),
    /// `VX_ARRAY_CAPACITY`.
    ArrayCapacity(usize),
    /// `VX_USER_DATA_OBJECT_SIZE`.
    UserDataObjectSize(usize),
    /// `VX_MATRIX_TYPE`.
    MatrixType(ScalarType),
    /// `VX_MATRIX_ROWS`.
    MatrixRows(usize),
    /// `VX_MATRIX_COLUMNS`.
    MatrixColumns(usize),
    /// `VX_CONVOLUTION_ROWS`.
    ConvolutionRows(usize),
    /// `VX_CONVOLUTION_COLUMNS`.
    ConvolutionColumns(usize),
    /// `VX_LUT_TYPE`.
    LutType(ScalarType),
    /// `VX_LUT_COUNT`.
    LutCount(usize),
    /// `VX_DISTRIBUTION_BINS`.
    DistributionBins(usize),
    /// `VX_DISTRIBUTION_OFFSET`.
    DistributionOffset(i32),
    /// `VX_DISTRIBUTION_RANGE`.
    DistributionRange(u32),
    /// `VX_THRESHOLD_TYPE`.
    ThresholdType(ThresholdType),
    /// `VX_THRESHOLD_INPUT_FORMAT`.
    ThresholdInputFormat(ImageFormat),
    /// `VX_THRESHOLD_OUTPUT_FORMAT`.
    ThresholdOutputFormat(ImageFormat),
    /// `VX_PYRAMID_LEVELS`.
    PyramidLevels(usize),
    /// `VX_PYRAMID_SCALE`.
    PyramidScale(f32),
    /// `VX_PYRAMID_WIDTH`.
    PyramidWidth(u32),
    /// `VX_PYRAMID_HEIGHT`.
    PyramidHeight(u32),
    /// `VX_PYRAMID_FORMAT`.
    PyramidFormat(ImageFormat),
    /// `VX_REMAP_SOURCE_WIDTH`.
    RemapSourceWidth(u32),
    /// `VX_REMAP_SOURCE_HEIGHT`.
    RemapSourceHeight(u32),
    /// `VX_REMAP_DESTINATION_WIDTH`.
    RemapDestinationWidth(u32),
    /// `VX_REMAP_DESTINATION_HEIGHT`.
    RemapDestinationHeight(u32),
    /// `VX_OBJECT_ARRAY_ITEMTYPE`.
    ObjectArrayItemType(DataType),
    /// `VX_OBJECT_ARRAY_NUMITEMS`.
    ObjectArrayCount(usize),
    /// `VX_TENSOR_NUMBER_OF_DIMS`.
    TensorNumberOfDims(usize),
    /// `VX_TENSOR_DIMS` (the first `VX_TENSOR_NUMBER_OF_DIMS` entries count).
    TensorDims([usize; MAX_TENSOR_DIMS]),
    /// `VX_TENSOR_DATA_TYPE`.
    TensorDataType(ScalarType),
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    TensorFixedPointPosition(i8),
}

impl MetaAttribute {
    /// The object type the attribute belongs to.
    pub fn data_type(&self) -> DataType {
        use MetaAttribute as A;
        match self {
            A::ImageFormat(_) | A::ImageWidth(_) | A::ImageHeight(_) => DataType::Image,
            A::ScalarType(_) => DataType::Scalar,
            A::ArrayItemType(_) | A::ArrayCapacity(_) => DataType::Array,
            A::UserDataObjectSize(_) => DataType::UserDataObject,
            A::MatrixType(_) | A::MatrixRows(_) | A::MatrixColumns(_) => DataType::Matrix,
            A::ConvolutionRows(_) | A::ConvolutionColumns(_) => DataType::Convolution,
            A::LutType(_) | A::LutCount(_) => DataType::Lut,
            A::DistributionBins(_) | A::DistributionOffset(_) | A::DistributionRange(_) => DataType::Distribution,
            A::ThresholdType(_) | A::ThresholdInputFormat(_) | A::ThresholdOutputFormat(_) => DataType::Threshold,
            A::PyramidLevels(_)
            | A::PyramidScale(_)
            | A::PyramidWidth(_)
            | A::PyramidHeight(_)
            | A::PyramidFormat(_) => DataType::Pyramid,
            A::RemapSourceWidth(_)
            | A::RemapSourceHeight(_)
            | A::RemapDestinationWidth(_)
            | A::RemapDestinationHeight(_) => DataType::Remap,
            A::ObjectArrayItemType(_) | A::ObjectArrayCount(_) => DataType::ObjectArray,
            A::TensorNumberOfDims(_) | A::TensorDims(_) | A::TensorDataType(_) | A::TensorFixedPointPosition(_) => {
                DataType::Tensor
            }
        }
    }
}

/// The meta format of one output parameter.
#[derive(Clone)]
pub struct MetaFormat {
    pub(super) index: u32,
    pub(super) data_type: DataType,
    /// Attributes in the order set (the last of a kind counts).
    attrs: Vec<MetaAttribute>,
    /// A user data object's type name, when the validator gave one.
    udo_type_name: Option<String>,
    /// Matrix origin and pattern, when copied from an exemplar.
    matrix_extra: Option<((usize, usize), MatrixPattern)>,
    pub(crate) valid_rect: Option<Arc<ValidRectFn>>,
}

impl fmt::Debug for MetaFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetaFormat")
            .field("index", &self.index)
            .field("data_type", &self.data_type)
            .field("attributes", &self.attrs)
            .field("valid_rect_callback", &self.valid_rect.is_some())
            .finish()
    }
}

macro_rules! attr {
    ($self:ident, $v:ident) => {
        $self.attrs.iter().rev().find_map(|a| match a {
            MetaAttribute::$v(x) => Some(*x),
            _ => None,
        })
    };
}

impl MetaFormat {
    pub(crate) fn new(index: u32, data_type: DataType) -> MetaFormat {
        MetaFormat { index, data_type, attrs: Vec::new(), udo_type_name: None, matrix_extra: None, valid_rect: None }
    }

    /// The parameter index this meta format describes.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `vxSetMetaFormatAttribute`: set one attribute of the output's type.
    pub fn set(&mut self, attribute: MetaAttribute) -> Result<&mut Self> {
        let t = attribute.data_type();
        if self.data_type != t {
            return Err(Error::new(ErrorKind::InvalidType, format!("cannot set a {t} attribute on this meta format"))
                .at_parameter(self.index)
                .expected_found(format!("a {} attribute", self.data_type), format!("{attribute:?}")));
        }
        let bad_format = |f: ImageFormat| f == ImageFormat::Virtual;
        match attribute {
            MetaAttribute::ImageFormat(f) | MetaAttribute::PyramidFormat(f) if bad_format(f) => {
                return Err(Error::new(
                    ErrorKind::InvalidFormat,
                    "an output meta format needs a concrete image format",
                )
                .at_parameter(self.index)
                .found(f));
            }
            MetaAttribute::TensorNumberOfDims(n) if n == 0 || n > MAX_TENSOR_DIMS => {
                return Err(Error::new(ErrorKind::InvalidDimension, "a tensor has 1 to 6 dimensions")
                    .at_parameter(self.index)
                    .expected_found(format!("1..={MAX_TENSOR_DIMS}"), n));
            }
            _ => {}
        }
        self.attrs.push(attribute);
        Ok(self)
    }

    /// `VX_IMAGE_FORMAT`.
    pub fn set_image_format(&mut self, format: ImageFormat) -> Result<&mut Self> {
        self.set(MetaAttribute::ImageFormat(format))
    }
    /// `VX_IMAGE_WIDTH`.
    pub fn set_image_width(&mut self, width: u32) -> Result<&mut Self> {
        self.set(MetaAttribute::ImageWidth(width))
    }
    /// `VX_IMAGE_HEIGHT`.
    pub fn set_image_height(&mut self, height: u32) -> Result<&mut Self> {
        self.set(MetaAttribute::ImageHeight(height))
    }
    /// Format, width and height at once.
    pub fn set_image(&mut self, format: ImageFormat, width: u32, height: u32) -> Result<&mut Self> {
        self.set_image_format(format)?.set_image_width(width)?.set_image_height(height)
    }
    /// `VX_SCALAR_TYPE`.
    pub fn set_scalar_type(&mut self, t: ScalarType) -> Result<&mut Self> {
        self.set(MetaAttribute::ScalarType(t))
    }
    /// `VX_ARRAY_ITEMTYPE`.
    pub fn set_array_item_type(&mut self, t: ArrayItemType) -> Result<&mut Self> {
        self.set(MetaAttribute::ArrayItemType(t))
    }
    /// `VX_ARRAY_CAPACITY`.
    pub fn set_array_capacity(&mut self, capacity: usize) -> Result<&mut Self> {
        self.set(MetaAttribute::ArrayCapacity(capacity))
    }
    /// `VX_USER_DATA_OBJECT_SIZE`.
    pub fn set_user_data_object_size(&mut self, size: usize) -> Result<&mut Self> {
        self.set(MetaAttribute::UserDataObjectSize(size))
    }
    /// `VX_USER_DATA_OBJECT_NAME`: the output must be a user data object of this type name.
    pub fn set_user_data_object_type_name(&mut self, name: &str) -> Result<&mut Self> {
        if self.data_type != DataType::UserDataObject {
            return Err(Error::new(
                ErrorKind::InvalidType,
                "cannot set a user data object attribute on this meta format",
            )
            .at_parameter(self.index)
            .expected_found(format!("a {} attribute", self.data_type), "VX_USER_DATA_OBJECT_NAME"));
        }
        self.udo_type_name = Some(name.to_owned());
        Ok(self)
    }
    /// `VX_VALID_RECT_CALLBACK`: compute the output's valid rectangles (one per pyramid level) from
    /// the inputs'.
    pub fn set_valid_rect_callback(
        &mut self,
        f: impl Fn(u32, &[Rect], &mut [Rect]) -> Result<()> + Send + Sync + 'static,
    ) -> Result<&mut Self> {
        if !matches!(self.data_type, DataType::Image | DataType::Pyramid) {
            return Err(Error::new(
                ErrorKind::InvalidType,
                "a valid rectangle callback is for image and pyramid outputs",
            )
            .at_parameter(self.index)
            .found(self.data_type));
        }
        self.valid_rect = Some(Arc::new(f));
        Ok(self)
    }

    /// `vxSetMetaFormatFromReference`: copy every meta attribute of `exemplar`.
    pub fn set_from_reference(&mut self, exemplar: &Reference) -> Result<&mut Self> {
        self.set_from_meta(exemplar.meta())
    }

    /// Every meta attribute of `meta` (an exemplar's meta data, or one a module built).
    pub fn set_from_meta(&mut self, meta: ObjectMeta) -> Result<&mut Self> {
        if meta.data_type() != self.data_type {
            return Err(Error::new(ErrorKind::InvalidType, "the exemplar has another type than the parameter")
                .at_parameter(self.index)
                .expected_found(self.data_type, meta.data_type()));
        }
        use MetaAttribute as A;
        let attrs: Vec<MetaAttribute> = match meta {
            ObjectMeta::Image { format, width, height } => {
                vec![A::ImageFormat(format), A::ImageWidth(width), A::ImageHeight(height)]
            }
            ObjectMeta::Scalar { scalar_type } => vec![A::ScalarType(scalar_type)],
            ObjectMeta::Array { item_type, capacity } => {
                item_type.map(A::ArrayItemType).into_iter().chain([A::ArrayCapacity(capacity)]).collect()
            }
            ObjectMeta::UserDataObject { type_name, size } => {
                self.udo_type_name = Some(type_name);
                vec![A::UserDataObjectSize(size)]
            }
            ObjectMeta::Matrix(m) => {
                self.matrix_extra = Some((m.origin, m.pattern));
                vec![A::MatrixType(m.element), A::MatrixColumns(m.columns), A::MatrixRows(m.rows)]
            }
            ObjectMeta::Convolution(m) => vec![A::ConvolutionColumns(m.columns), A::ConvolutionRows(m.rows)],
            ObjectMeta::Lut(m) => vec![A::LutType(m.element), A::LutCount(m.count)],
            ObjectMeta::Distribution(m) => {
                vec![A::DistributionBins(m.bins), A::DistributionOffset(m.offset), A::DistributionRange(m.range)]
            }
            ObjectMeta::Threshold(m) => vec![
                A::ThresholdType(m.threshold_type),
                A::ThresholdInputFormat(m.input_format),
                A::ThresholdOutputFormat(m.output_format),
            ],
            ObjectMeta::Pyramid(m) => {
                let mut v = vec![A::PyramidLevels(m.levels), A::PyramidScale(m.scale)];
                if m.format != ImageFormat::Virtual {
                    v.push(A::PyramidFormat(m.format));
                }
                v.extend([A::PyramidWidth(m.width), A::PyramidHeight(m.height)]);
                v
            }
            ObjectMeta::Remap(m) => vec![
                A::RemapSourceWidth(m.source_width),
                A::RemapSourceHeight(m.source_height),
                A::RemapDestinationWidth(m.destination_width),
                A::RemapDestinationHeight(m.destination_height),
            ],
            ObjectMeta::ObjectArray { item_type, count } => {
                vec![A::ObjectArrayItemType(item_type), A::ObjectArrayCount(count)]
            }
            ObjectMeta::Tensor(m) => {
                let mut v = vec![A::TensorNumberOfDims(m.num_dims), A::TensorDims(m.dims)];
                v.extend(m.data_type.map(A::TensorDataType));
                v.push(A::TensorFixedPointPosition(m.fixed_point_position));
                v
            }
        };
        self.attrs.extend(attrs);
        Ok(self)
    }

    /// The complete meta data, or which attribute the validator left unset. A threshold's formats
    /// and a user data object's type name may stay unset: `ImageFormat::Virtual` / an empty name
    /// then means "any" when the output is checked.
    pub(crate) fn resolve(&self) -> Result<ObjectMeta> {
        let missing = |what: &str| {
            Error::new(
                ErrorKind::InvalidParameters,
                format!("the validator did not set the {what} of the output meta format"),
            )
            .at_parameter(self.index)
        };
        let positive = |v: Option<usize>, what: &str| v.filter(|v| *v > 0).ok_or_else(|| missing(what));
        let positive32 = |v: Option<u32>, what: &str| v.filter(|v| *v > 0).ok_or_else(|| missing(what));
        Ok(match self.data_type {
            DataType::Image => ObjectMeta::Image {
                format: attr!(self, ImageFormat).ok_or_else(|| missing("image format"))?,
                width: positive32(attr!(self, ImageWidth), "image width")?,
                height: positive32(attr!(self, ImageHeight), "image height")?,
            },
            DataType::Scalar => {
                ObjectMeta::Scalar { scalar_type: attr!(self, ScalarType).ok_or_else(|| missing("scalar type"))? }
            }
            DataType::Array => ObjectMeta::Array {
                item_type: Some(attr!(self, ArrayItemType).ok_or_else(|| missing("array item type"))?),
                capacity: positive(attr!(self, ArrayCapacity), "array capacity")?,
            },
            DataType::UserDataObject => ObjectMeta::UserDataObject {
                type_name: self.udo_type_name.clone().unwrap_or_default(),
                size: attr!(self, UserDataObjectSize).ok_or_else(|| missing("user data object size"))?,
            },
            DataType::Matrix => {
                let columns = positive(attr!(self, MatrixColumns), "matrix columns")?;
                let rows = positive(attr!(self, MatrixRows), "matrix rows")?;
                let (origin, pattern) = self.matrix_extra.unwrap_or(((columns / 2, rows / 2), MatrixPattern::Other));
                ObjectMeta::Matrix(MatrixMeta {
                    element: attr!(self, MatrixType).ok_or_else(|| missing("matrix type"))?,
                    columns,
                    rows,
                    origin,
                    pattern,
                })
            }
            DataType::Convolution => ObjectMeta::Convolution(ConvolutionMeta {
                columns: positive(attr!(self, ConvolutionColumns), "convolution columns")?,
                rows: positive(attr!(self, ConvolutionRows), "convolution rows")?,
            }),
            DataType::Lut => ObjectMeta::Lut(LutMeta {
                element: attr!(self, LutType).ok_or_else(|| missing("LUT type"))?,
                count: positive(attr!(self, LutCount), "LUT count")?,
            }),
            DataType::Distribution => ObjectMeta::Distribution(DistributionMeta {
                bins: positive(attr!(self, DistributionBins), "distribution bins")?,
                offset: attr!(self, DistributionOffset).ok_or_else(|| missing("distribution offset"))?,
                range: positive32(attr!(self, DistributionRange), "distribution range")?,
            }),
            DataType::Threshold => ObjectMeta::Threshold(ThresholdMeta {
                threshold_type: attr!(self, ThresholdType).ok_or_else(|| missing("threshold type"))?,
                input_format: attr!(self, ThresholdInputFormat).unwrap_or(ImageFormat::Virtual),
                output_format: attr!(self, ThresholdOutputFormat).unwrap_or(ImageFormat::Virtual),
            }),
            DataType::Pyramid => ObjectMeta::Pyramid(PyramidMeta {
                levels: positive(attr!(self, PyramidLevels), "pyramid levels")?,
                scale: attr!(self, PyramidScale).ok_or_else(|| missing("pyramid scale"))?,
                width: positive32(attr!(self, PyramidWidth), "pyramid width")?,
                height: positive32(attr!(self, PyramidHeight), "pyramid height")?,
                format: attr!(self, PyramidFormat).ok_or_else(|| missing("pyramid format"))?,
            }),
            DataType::Remap => ObjectMeta::Remap(RemapMeta {
                source_width: positive32(attr!(self, RemapSourceWidth), "remap source width")?,
                source_height: positive32(attr!(self, RemapSourceHeight), "remap source height")?,
                destination_width: positive32(attr!(self, RemapDestinationWidth), "remap destination width")?,
                destination_height: positive32(attr!(self, RemapDestinationHeight), "remap destination height")?,
            }),
            DataType::ObjectArray => ObjectMeta::ObjectArray {
                item_type: attr!(self, ObjectArrayItemType).ok_or_else(|| missing("object array item type"))?,
                count: positive(attr!(self, ObjectArrayCount), "object array item count")?,
            },
            DataType::Tensor => {
                let num_dims = attr!(self, TensorNumberOfDims).ok_or_else(|| missing("tensor number of dimensions"))?;
                let dims = attr!(self, TensorDims).ok_or_else(|| missing("tensor dimensions"))?;
                if dims[..num_dims].contains(&0) {
                    return Err(missing("tensor dimensions (one is 0)"));
                }
                ObjectMeta::Tensor(TensorMeta {
                    num_dims,
                    dims,
                    data_type: Some(attr!(self, TensorDataType).ok_or_else(|| missing("tensor data type"))?),
                    fixed_point_position: attr!(self, TensorFixedPointPosition).unwrap_or(0),
                })
            }
        })
    }
}

/// The meta formats a validator fills: one per output parameter, indexed like the parameters.
pub struct MetaFormats {
    pub(crate) metas: Vec<Option<MetaFormat>>,
}

impl MetaFormats {
    /// The meta format of output parameter `index`.
    pub fn get(&mut self, index: u32) -> Result<&mut MetaFormat> {
        let n = self.metas.len();
        match self.metas.get_mut(index as usize) {
            Some(Some(m)) => Ok(m),
            Some(None) => {
                Err(Error::new(ErrorKind::InvalidParameters, "meta formats exist only for output parameters")
                    .at_parameter(index))
            }
            None => Err(Error::new(ErrorKind::InvalidParameters, "no such parameter")
                .at_parameter(index)
                .expected_found(format!("index < {n}"), index)),
        }
    }
}
