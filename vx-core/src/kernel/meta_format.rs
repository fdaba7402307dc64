//! Meta formats (`vx_meta_format`): what a validator says each output must look like, attribute by
//! attribute or copied from an exemplar, plus an optional valid-rectangle callback.

use std::fmt;
use std::sync::Arc;

use vx_plugin_abi::{ImageFormat, Rect};

use crate::data::array::ArrayItemType;
use crate::data::reference::{ObjectMeta, Reference};
use crate::data::types::{DataType, ScalarType};
use crate::error::{Error, ErrorKind, Result};

/// `vx_kernel_image_valid_rectangle_f`: given the output parameter index and the valid rectangles
/// of the node's input images (in parameter order), return the output's valid rectangle.
pub type ValidRectFn = dyn Fn(u32, &[Rect]) -> Result<Rect> + Send + Sync;

/// The meta format of one output parameter.
#[derive(Clone)]
pub struct MetaFormat {
    pub(crate) index: u32,
    pub(crate) data_type: DataType,
    image_format: Option<ImageFormat>,
    width: Option<u32>,
    height: Option<u32>,
    scalar_type: Option<ScalarType>,
    item_type: Option<ArrayItemType>,
    capacity: Option<usize>,
    udo_size: Option<usize>,
    pub(crate) valid_rect: Option<Arc<ValidRectFn>>,
}

impl fmt::Debug for MetaFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetaFormat")
            .field("index", &self.index)
            .field("data_type", &self.data_type)
            .field("meta", &self.resolve().ok())
            .field("valid_rect_callback", &self.valid_rect.is_some())
            .finish()
    }
}

impl MetaFormat {
    pub(crate) fn new(index: u32, data_type: DataType) -> MetaFormat {
        MetaFormat {
            index,
            data_type,
            image_format: None,
            width: None,
            height: None,
            scalar_type: None,
            item_type: None,
            capacity: None,
            udo_size: None,
            valid_rect: None,
        }
    }

    fn want(&self, t: DataType, attr: &str) -> Result<()> {
        if self.data_type != t {
            return Err(Error::new(
                ErrorKind::InvalidType,
                format!("cannot set the {t} attribute '{attr}' on this meta format"),
            )
            .at_parameter(self.index)
            .expected_found(format!("a {} attribute", self.data_type), t));
        }
        Ok(())
    }

    /// The parameter index this meta format describes.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `VX_IMAGE_FORMAT`.
    pub fn set_image_format(&mut self, format: ImageFormat) -> Result<&mut Self> {
        self.want(DataType::Image, "format")?;
        if format == ImageFormat::Virtual {
            return Err(Error::new(ErrorKind::InvalidFormat, "an output meta format needs a concrete image format")
                .at_parameter(self.index)
                .found(format));
        }
        self.image_format = Some(format);
        Ok(self)
    }
    /// `VX_IMAGE_WIDTH`.
    pub fn set_image_width(&mut self, width: u32) -> Result<&mut Self> {
        self.want(DataType::Image, "width")?;
        self.width = Some(width);
        Ok(self)
    }
    /// `VX_IMAGE_HEIGHT`.
    pub fn set_image_height(&mut self, height: u32) -> Result<&mut Self> {
        self.want(DataType::Image, "height")?;
        self.height = Some(height);
        Ok(self)
    }
    /// Format, width and height at once.
    pub fn set_image(&mut self, format: ImageFormat, width: u32, height: u32) -> Result<&mut Self> {
        self.set_image_format(format)?.set_image_width(width)?.set_image_height(height)
    }
    /// `VX_SCALAR_TYPE`.
    pub fn set_scalar_type(&mut self, t: ScalarType) -> Result<&mut Self> {
        self.want(DataType::Scalar, "type")?;
        self.scalar_type = Some(t);
        Ok(self)
    }
    /// `VX_ARRAY_ITEMTYPE`.
    pub fn set_array_item_type(&mut self, t: ArrayItemType) -> Result<&mut Self> {
        self.want(DataType::Array, "item type")?;
        self.item_type = Some(t);
        Ok(self)
    }
    /// `VX_ARRAY_CAPACITY`.
    pub fn set_array_capacity(&mut self, capacity: usize) -> Result<&mut Self> {
        self.want(DataType::Array, "capacity")?;
        self.capacity = Some(capacity);
        Ok(self)
    }
    /// `VX_USER_DATA_OBJECT_SIZE`.
    pub fn set_user_data_object_size(&mut self, size: usize) -> Result<&mut Self> {
        self.want(DataType::UserDataObject, "size")?;
        self.udo_size = Some(size);
        Ok(self)
    }
    /// `VX_VALID_RECT_CALLBACK`: compute the output's valid rectangle from the inputs'.
    pub fn set_valid_rect_callback(
        &mut self,
        f: impl Fn(u32, &[Rect]) -> Result<Rect> + Send + Sync + 'static,
    ) -> Result<&mut Self> {
        self.want(DataType::Image, "valid rectangle callback")?;
        self.valid_rect = Some(Arc::new(f));
        Ok(self)
    }

    /// `vxSetMetaFormatFromReference`: copy every meta attribute of `exemplar`.
    pub fn set_from_reference(&mut self, exemplar: &Reference) -> Result<&mut Self> {
        if exemplar.data_type() != self.data_type {
            return Err(Error::new(ErrorKind::InvalidType, "the exemplar has another type than the parameter")
                .at_parameter(self.index)
                .expected_found(self.data_type, exemplar.data_type()));
        }
        match exemplar.meta() {
            ObjectMeta::Image { format, width, height } => {
                self.image_format = Some(format);
                self.width = Some(width);
                self.height = Some(height);
            }
            ObjectMeta::Scalar { scalar_type } => self.scalar_type = Some(scalar_type),
            ObjectMeta::Array { item_type, capacity } => {
                self.item_type = item_type;
                self.capacity = Some(capacity);
            }
            ObjectMeta::UserDataObject { size } => self.udo_size = Some(size),
        }
        Ok(self)
    }

    /// The complete meta data, or which attribute the validator left unset.
    pub(crate) fn resolve(&self) -> Result<ObjectMeta> {
        let missing = |what: &str| {
            Error::new(
                ErrorKind::InvalidParameters,
                format!("the validator did not set the {what} of the output meta format"),
            )
            .at_parameter(self.index)
        };
        Ok(match self.data_type {
            DataType::Image => ObjectMeta::Image {
                format: self
                    .image_format
                    .filter(|f| *f != ImageFormat::Virtual)
                    .ok_or_else(|| missing("image format"))?,
                width: self.width.filter(|w| *w > 0).ok_or_else(|| missing("image width"))?,
                height: self.height.filter(|h| *h > 0).ok_or_else(|| missing("image height"))?,
            },
            DataType::Scalar => {
                ObjectMeta::Scalar { scalar_type: self.scalar_type.ok_or_else(|| missing("scalar type"))? }
            }
            DataType::Array => ObjectMeta::Array {
                item_type: Some(self.item_type.ok_or_else(|| missing("array item type"))?),
                capacity: self.capacity.filter(|c| *c > 0).ok_or_else(|| missing("array capacity"))?,
            },
            DataType::UserDataObject => {
                ObjectMeta::UserDataObject { size: self.udo_size.ok_or_else(|| missing("user data object size"))? }
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
