//! The image's [`ObjectKind`]: its meta data ([`ImageMeta`]), meta-format attributes
//! ([`ImageAttr`]), verify's rule (a virtual image takes what it did not declare), its wire form,
//! frame copies and storage sharing.

use vx_plugin_abi::ImageFormat;

use super::{Image, ImageBody, ImageKind};
use crate::data::kind::{Applied, ObjectKind, Recorded, Refusal, meta_attributes, positive};
use crate::data::object::ObjectHeader;
use crate::data::types::Direction;
use crate::data::wire::{AttrValue, format};
use crate::error::{Error, ErrorKind, Result};
use vx_plugin_abi::kinds::image::Wire;

/// The meta data of an image (`VX_IMAGE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageMeta {
    /// `VX_IMAGE_FORMAT` ([`ImageFormat::Virtual`]: not known yet).
    pub format: ImageFormat,
    /// `VX_IMAGE_WIDTH` (0: not known yet).
    pub width: u32,
    /// `VX_IMAGE_HEIGHT` (0: not known yet).
    pub height: u32,
}

impl std::fmt::Display for ImageMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "image {} {}x{}", self.format, self.width, self.height)
    }
}

meta_attributes! {
    /// One meta-format attribute of an image.
    ImageAttr, ImagePartial for ImageMeta {
        /// `VX_IMAGE_FORMAT`.
        Format(ImageFormat) => format @ IMAGE_FORMAT: AttrValue::format,
        /// `VX_IMAGE_WIDTH`.
        Width(u32) => width @ IMAGE_WIDTH: AttrValue::u32,
        /// `VX_IMAGE_HEIGHT`.
        Height(u32) => height @ IMAGE_HEIGHT: AttrValue::u32,
    }
}

/// An output's image format must be concrete.
pub(crate) fn concrete(f: ImageFormat) -> Result<ImageFormat> {
    if f == ImageFormat::Virtual {
        return Err(
            Error::new(ErrorKind::InvalidFormat, "an output meta format needs a concrete image format").found(f)
        );
    }
    Ok(f)
}

impl ObjectKind for ImageKind {
    type Wire = Wire;
    const NAME: &'static str = "Image";
    const VALID_RECTS: bool = true;
    const TILING_DIRECTIONS: &'static [Direction] = &[Direction::Input, Direction::Output];
    type Meta = ImageMeta;
    type Attr = ImageAttr;
    type Partial = ImagePartial;
    type Body = ImageBody;
    fn fmt_details(h: &Image, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.meta();
        write!(f, "{} {}x{}", m.format, m.width, m.height)
    }
    fn meta(h: &Image) -> ImageMeta {
        let m = h.meta();
        ImageMeta { format: m.format, width: m.width, height: m.height }
    }
    fn build(header: ObjectHeader, m: &ImageMeta) -> Result<Image> {
        Image::with_header(header, m.width, m.height, m.format)
    }
    fn ensure_allocated(h: &Image) -> Result<()> {
        h.ensure_allocated()
    }
    /// A virtual image takes what it did not declare (format `Virtual`, size 0).
    fn apply(h: &Image, w: &ImageMeta) -> std::result::Result<Applied, Refusal> {
        let (df, dw, dh) = if h.is_virtual() {
            h.obj.body.declared
        } else {
            let m = h.meta();
            (m.format, m.width, m.height)
        };
        if df != ImageFormat::Virtual && df != w.format {
            return Err(Refusal::Mismatch(ErrorKind::InvalidFormat));
        }
        if (dw != 0 && dw != w.width) || (dh != 0 && dh != w.height) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        if h.is_virtual() && h.complete_virtual(w.format, w.width, w.height)? {
            return Ok(Applied::Completed);
        }
        Ok(Applied::Unchanged)
    }
    fn set(p: &mut ImagePartial, a: ImageAttr) -> Result<()> {
        if let ImageAttr::Format(f) = a {
            concrete(f)?;
        }
        p.record(a);
        Ok(())
    }
    fn exemplar(p: &mut ImagePartial, m: &ImageMeta) {
        *p = ImagePartial::of(m);
    }
    fn resolve(p: &ImagePartial) -> std::result::Result<ImageMeta, &'static str> {
        Ok(ImageMeta {
            format: p.format.ok_or("image format")?,
            width: positive(p.width, "image width")?,
            height: positive(p.height, "image height")?,
        })
    }
    fn valid_rect_parts(h: &Image, f: &mut dyn FnMut(&dyn crate::data::kind::ValidRectPart)) {
        f(h)
    }
    fn frame_copy(h: &Image, slot: usize) -> Option<Result<Image>> {
        Some(h.frame_copy(slot))
    }
    /// The pixels' effective storage (an aliased chain is one buffer), the root layout's bytes.
    fn plan_storage(h: &Image, f: &mut dyn FnMut(crate::data::kind::PlanStorage<'_>)) {
        let storage = h.storage();
        let bytes = storage.layout().as_ref().map(|l| l.size);
        f(crate::data::kind::PlanStorage::new(&storage.buffer, bytes))
    }
    fn storage_key(h: &Image) -> Option<usize> {
        Some(h.storage_key())
    }
    fn share_elements(a: &Image, b: &Image) -> bool {
        a.rect_in_storage().overlaps(&b.rect_in_storage())
    }
    fn to_wire(h: &Image) -> Wire {
        let m = h.meta();
        Wire { format: m.format.fourcc(), width: m.width, height: m.height }
    }
    fn from_wire(w: &Wire) -> Result<ImageMeta> {
        let Wire { format: f, width, height } = w;
        Ok(ImageMeta { format: format(*f)?, width: *width, height: *height })
    }
}

impl crate::data::kind::ValidRectPart for Image {
    fn size(&self) -> (u32, u32) {
        (self.width(), self.height())
    }
    fn valid(&self) -> vx_plugin_abi::Rect {
        self.valid_region()
    }
    fn set_valid(&self, r: vx_plugin_abi::Rect) {
        self.set_valid_unchecked(r)
    }
}
