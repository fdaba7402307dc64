//! Meta formats (`vx_meta_format`): what a validator says each output must look like, attribute by
//! attribute ([`MetaAttribute`], `vxSetMetaFormatAttribute`) or copied from an exemplar
//! (`vxSetMetaFormatFromReference`), plus an optional valid-rectangle callback. What each type's
//! attributes mean is its own file's business (`ObjectKind::{set, exemplar, resolve}`); the
//! shorthand setters below are for the types kernels use most.

use std::fmt;
use std::sync::Arc;

use vx_plugin_abi::{ImageFormat, Rect};

use crate::data::array::ArrayAttr;
use crate::data::image::ImageAttr;
use crate::data::items::ArrayItemType;
use crate::data::kinds::{MetaAttribute, ObjectMeta, PartialMeta, Reference};
use crate::data::scalar::ScalarAttr;
use crate::data::types::DataType;
use crate::data::types::ScalarType;
use crate::data::user_data::UserDataAttr;
use crate::error::{Error, ErrorKind, Result};

/// `vx_kernel_image_valid_rectangle_f`: given the output parameter index and the valid rectangles
/// of the node's input images (in parameter order; a pyramid input gives one per level), fill the
/// output's valid rectangles: one for an image, one per level for a pyramid.
pub type ValidRectFn = dyn Fn(u32, &[Rect], &mut [Rect]) -> Result<()> + Send + Sync;

/// The meta format of one output parameter.
#[derive(Clone)]
pub struct MetaFormat {
    pub(super) index: u32,
    pub(super) data_type: DataType,
    /// The attributes set so far (the last of a kind counts).
    partial: PartialMeta,
    pub(crate) valid_rect: Option<Arc<ValidRectFn>>,
}

impl fmt::Debug for MetaFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetaFormat")
            .field("index", &self.index)
            .field("data_type", &self.data_type)
            .field("attributes", &self.partial)
            .field("valid_rect_callback", &self.valid_rect.is_some())
            .finish()
    }
}

impl MetaFormat {
    pub(crate) fn new(index: u32, data_type: DataType) -> MetaFormat {
        MetaFormat { index, data_type, partial: PartialMeta::new(data_type), valid_rect: None }
    }

    /// The parameter index this meta format describes.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `vxSetMetaFormatAttribute`: set one attribute of the output's type
    /// (`meta.set(MatrixAttr::Rows(5))`).
    pub fn set(&mut self, attribute: impl Into<MetaAttribute>) -> Result<&mut Self> {
        let attribute = attribute.into();
        let t = attribute.data_type();
        if self.data_type != t {
            return Err(Error::new(ErrorKind::InvalidType, format!("cannot set a {t} attribute on this meta format"))
                .at_parameter(self.index)
                .expected_found(format!("a {} attribute", self.data_type), format!("{attribute:?}")));
        }
        self.partial.set(attribute).map_err(|e| e.at_parameter(self.index))?;
        Ok(self)
    }

    /// `VX_IMAGE_FORMAT`.
    pub fn set_image_format(&mut self, format: ImageFormat) -> Result<&mut Self> {
        self.set(ImageAttr::Format(format))
    }
    /// `VX_IMAGE_WIDTH`.
    pub fn set_image_width(&mut self, width: u32) -> Result<&mut Self> {
        self.set(ImageAttr::Width(width))
    }
    /// `VX_IMAGE_HEIGHT`.
    pub fn set_image_height(&mut self, height: u32) -> Result<&mut Self> {
        self.set(ImageAttr::Height(height))
    }
    /// Format, width and height at once.
    pub fn set_image(&mut self, format: ImageFormat, width: u32, height: u32) -> Result<&mut Self> {
        self.set_image_format(format)?.set_image_width(width)?.set_image_height(height)
    }
    /// `VX_SCALAR_TYPE`.
    pub fn set_scalar_type(&mut self, t: ScalarType) -> Result<&mut Self> {
        self.set(ScalarAttr::Type(t))
    }
    /// `VX_ARRAY_ITEMTYPE`.
    pub fn set_array_item_type(&mut self, t: ArrayItemType) -> Result<&mut Self> {
        self.set(ArrayAttr::ItemType(t))
    }
    /// `VX_ARRAY_CAPACITY`.
    pub fn set_array_capacity(&mut self, capacity: usize) -> Result<&mut Self> {
        self.set(ArrayAttr::Capacity(capacity))
    }
    /// `VX_USER_DATA_OBJECT_SIZE`.
    pub fn set_user_data_object_size(&mut self, size: usize) -> Result<&mut Self> {
        self.set(UserDataAttr::Size(size))
    }
    /// `VX_USER_DATA_OBJECT_NAME`: the output must be a user data object of this type name.
    pub fn set_user_data_object_type_name(&mut self, name: &str) -> Result<&mut Self> {
        self.set(UserDataAttr::Name(name.to_owned()))
    }
    /// `VX_VALID_RECT_CALLBACK`: compute the output's valid rectangles (one per pyramid level) from
    /// the inputs'.
    pub fn set_valid_rect_callback(
        &mut self,
        f: impl Fn(u32, &[Rect], &mut [Rect]) -> Result<()> + Send + Sync + 'static,
    ) -> Result<&mut Self> {
        if !self.data_type.has_valid_rects() {
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

    /// `vxSetMetaFormatFromReference`: copy every meta attribute of `exemplar` (not the values it
    /// holds: a convolution's scale stays unset, any).
    pub fn set_from_reference(&mut self, exemplar: &Reference) -> Result<&mut Self> {
        self.set_from_meta(exemplar.any().exemplar_meta())
    }

    /// Every meta attribute of `meta` (an exemplar's meta data, or one a module built).
    pub fn set_from_meta(&mut self, meta: ObjectMeta) -> Result<&mut Self> {
        if meta.data_type() != self.data_type {
            return Err(Error::new(ErrorKind::InvalidType, "the exemplar has another type than the parameter")
                .at_parameter(self.index)
                .expected_found(self.data_type, meta.data_type()));
        }
        self.partial.exemplar(&meta);
        Ok(self)
    }

    /// The complete meta data, or which attribute the validator left unset. A threshold's formats
    /// and a user data object's type name may stay unset: `ImageFormat::Virtual` / an empty name
    /// then means "any" when the output is checked.
    pub(crate) fn resolve(&self) -> Result<ObjectMeta> {
        self.partial.resolve().map_err(|what| {
            Error::new(
                ErrorKind::InvalidParameters,
                format!("the validator did not set the {what} of the output meta format"),
            )
            .at_parameter(self.index)
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
