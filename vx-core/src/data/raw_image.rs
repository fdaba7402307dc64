//! Raw images (TIOVX's `tivx_raw_image`, `TI/tivx_ext_raw_image.h`): what a camera sensor reads
//! out, 1 to 3 exposures of `width × height` pixels in an 8-bit, 16-bit or packed 12-bit container,
//! with meta rows before and after the pixels, the exposures separate or line-interleaved. The
//! bytes are one blob laid out by `vx_plugin_abi::kinds::raw_image::layout`, the function the
//! modules' views use too; copied and mapped per exposure and buffer (pixels, meta before, meta
//! after), as `tivxCopyRawImagePatch` / `tivxMapRawImagePatch` do.

use crate::data::blob::{MappedSlice, MappedSliceMut};
use crate::data::items::ArrayItemType;
use crate::data::kernel_view::KernelView;
use crate::data::kind::{Applied, BlobBody, BlobKind, Handle, ObjectKind, Refusal, blob_object, kind_names};
use crate::data::kind::{exactly, meta_attributes};
use crate::data::object::{Access, ObjectHeader};
use crate::data::types::ScalarType;
use crate::data::wire::AttrValue;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, VirtualScope};
use vx_plugin_abi::Rect;
pub use vx_plugin_abi::kinds::raw_image::{
    ExposureLayout as RawImageExposure, Layout as RawImageLayout, Region as RawImageRegion,
};
use vx_plugin_abi::kinds::raw_image::{LayoutError, MAX_EXPOSURES, RawFormat, Wire, layout, pixel_container};

kind_names! {
    kind: RawImageKind, meta: RawImageMeta, attr: RawImageAttr, partial: RawImagePartial;
    exports: RawImage, RawImageAttr, RawImageMeta, RawImageFormat, RawPixelContainer, RawImageBuffer,
        RawImageExposure, RawImageLayout, RawImageRegion, RawImagePatch, RawImagePatchMut
}

/// `tivx_raw_image_pixel_container_e`: how a pixel is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RawPixelContainer {
    /// `TIVX_RAW_IMAGE_8_BIT`: one byte per pixel.
    Bit8,
    /// `TIVX_RAW_IMAGE_16_BIT`: two bytes per pixel.
    Bit16,
    /// `TIVX_RAW_IMAGE_P12_BIT`: packed 12 bits, three bytes per two pixels.
    P12,
}

impl RawPixelContainer {
    /// Its TIOVX code.
    pub fn code(self) -> u32 {
        match self {
            RawPixelContainer::Bit8 => pixel_container::BIT8,
            RawPixelContainer::Bit16 => pixel_container::BIT16,
            RawPixelContainer::P12 => pixel_container::P12,
        }
    }
    /// The container with TIOVX code `code` (`InvalidParameters` for any other, as
    /// `tivxCreateRawImage` refuses a `pixel_container` above `TIVX_RAW_IMAGE_P12_BIT`).
    pub fn from_code(code: u32) -> Result<RawPixelContainer> {
        match code {
            pixel_container::BIT8 => Ok(RawPixelContainer::Bit8),
            pixel_container::BIT16 => Ok(RawPixelContainer::Bit16),
            pixel_container::P12 => Ok(RawPixelContainer::P12),
            other => Err(Error::new(ErrorKind::InvalidParameters, "invalid pixel_container")
                .expected("TIVX_RAW_IMAGE_8_BIT, TIVX_RAW_IMAGE_16_BIT or TIVX_RAW_IMAGE_P12_BIT")
                .found(format!("{other:#x}"))),
        }
    }
}

/// `tivx_raw_image_format_t`: one exposure's container and the pixel's most significant bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawImageFormat {
    /// `pixel_container`.
    pub container: RawPixelContainer,
    /// `msb`: at most 7 (8 bits), 11 (P12) or 15 (16 bits).
    pub msb: u32,
}

impl RawImageFormat {
    /// 8-bit pixels, msb 7.
    pub const BIT8: RawImageFormat = RawImageFormat { container: RawPixelContainer::Bit8, msb: 7 };
    /// 16-bit containers of 12-bit pixels, msb 11.
    pub const BIT16: RawImageFormat = RawImageFormat { container: RawPixelContainer::Bit16, msb: 11 };
    /// Packed 12-bit pixels, msb 11.
    pub const P12: RawImageFormat = RawImageFormat { container: RawPixelContainer::P12, msb: 11 };
}

/// The meta data of a raw image (`tivx_raw_image_create_params_t`; `TIVX_RAW_IMAGE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawImageMeta {
    /// `TIVX_RAW_IMAGE_WIDTH`: pixels per row (even, at least 2).
    pub width: u32,
    /// `TIVX_RAW_IMAGE_HEIGHT`: pixel rows, the meta rows aside (at least 1).
    pub height: u32,
    /// `TIVX_RAW_IMAGE_NUM_EXPOSURES`: 1 to 3.
    pub num_exposures: u32,
    /// `TIVX_RAW_IMAGE_LINE_INTERLEAVED`: the exposures interleaved line by line in one buffer.
    pub line_interleaved: bool,
    /// `TIVX_RAW_IMAGE_FORMAT`: each exposure's format (the first `num_exposures` count; only the
    /// first when line-interleaved).
    pub format: [RawImageFormat; MAX_EXPOSURES],
    /// `TIVX_RAW_IMAGE_META_HEIGHT_BEFORE`: meta rows before the pixels.
    pub meta_height_before: u32,
    /// `TIVX_RAW_IMAGE_META_HEIGHT_AFTER`: meta rows after the pixels.
    pub meta_height_after: u32,
}

impl RawImageMeta {
    /// One exposure of `width × height` pixels in `format`, no meta rows.
    pub fn new(width: u32, height: u32, format: RawImageFormat) -> RawImageMeta {
        RawImageMeta {
            width,
            height,
            num_exposures: 1,
            line_interleaved: false,
            format: [format; MAX_EXPOSURES],
            meta_height_before: 0,
            meta_height_after: 0,
        }
    }
    /// With `formats.len()` exposures of these formats (separate buffers).
    pub fn exposures(mut self, formats: &[RawImageFormat]) -> RawImageMeta {
        self.num_exposures = formats.len() as u32;
        for (f, g) in self.format.iter_mut().zip(formats) {
            *f = *g;
        }
        self
    }
    /// With the exposures line-interleaved (all in `format[0]`).
    pub fn line_interleaved(mut self, on: bool) -> RawImageMeta {
        self.line_interleaved = on;
        self
    }
    /// With `before` meta rows before the pixels and `after` after.
    pub fn meta_rows(mut self, before: u32, after: u32) -> RawImageMeta {
        (self.meta_height_before, self.meta_height_after) = (before, after);
        self
    }
}

impl std::fmt::Display for RawImageMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let used = if self.line_interleaved { 1 } else { (self.num_exposures as usize).min(MAX_EXPOSURES) };
        write!(f, "raw image {}x{} exposures {}", self.width, self.height, self.num_exposures)?;
        if self.line_interleaved {
            f.write_str(" line-interleaved")?;
        }
        for x in &self.format[..used] {
            write!(f, " {:?}/msb {}", x.container, x.msb)?;
        }
        write!(f, " meta rows {}+{}", self.meta_height_before, self.meta_height_after)
    }
}

/// `TIVX_RAW_IMAGE_FORMAT`'s value: three `(pixel_container, msb)` pairs of `vx_uint32`.
fn formats(v: &AttrValue<'_>) -> Result<[RawImageFormat; MAX_EXPOSURES]> {
    let bytes: &[u8; 8 * MAX_EXPOSURES] = v.bytes.try_into().map_err(|_| v.wrong("tivx_raw_image_format_t[3]", 24))?;
    let mut out = [RawImageFormat::BIT8; MAX_EXPOSURES];
    for (f, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        let word = |i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        *f = RawImageFormat { container: RawPixelContainer::from_code(word(0))?, msb: word(4) };
    }
    Ok(out)
}

meta_attributes! {
    /// One meta-format attribute of a raw image.
    RawImageAttr, RawImagePartial for RawImageMeta {
        /// `TIVX_RAW_IMAGE_WIDTH`.
        Width(u32) => width @ RAW_IMAGE_WIDTH: AttrValue::u32,
        /// `TIVX_RAW_IMAGE_HEIGHT`.
        Height(u32) => height @ RAW_IMAGE_HEIGHT: AttrValue::u32,
        /// `TIVX_RAW_IMAGE_NUM_EXPOSURES` (unset: 1).
        NumExposures(u32) => num_exposures @ RAW_IMAGE_NUM_EXPOSURES: AttrValue::u32,
        /// `TIVX_RAW_IMAGE_LINE_INTERLEAVED` (unset: false).
        LineInterleaved(bool) => line_interleaved @ RAW_IMAGE_LINE_INTERLEAVED: |v: &AttrValue<'_>| v.u32().map(|b| b != 0),
        /// `TIVX_RAW_IMAGE_FORMAT`.
        Format([RawImageFormat; MAX_EXPOSURES]) => format @ RAW_IMAGE_FORMAT: formats,
        /// `TIVX_RAW_IMAGE_META_HEIGHT_BEFORE` (unset: 0).
        MetaHeightBefore(u32) => meta_height_before @ RAW_IMAGE_META_HEIGHT_BEFORE: AttrValue::u32,
        /// `TIVX_RAW_IMAGE_META_HEIGHT_AFTER` (unset: 0).
        MetaHeightAfter(u32) => meta_height_after @ RAW_IMAGE_META_HEIGHT_AFTER: AttrValue::u32,
    }
}

/// The [`ObjectKind`] of raw images.
pub struct RawImageKind;

/// A raw image handle (`tivx_raw_image`).
pub type RawImage = Handle<RawImageKind>;

fn wire_of(m: &RawImageMeta) -> Wire {
    Wire {
        width: m.width,
        height: m.height,
        num_exposures: m.num_exposures,
        line_interleaved: u32::from(m.line_interleaved),
        format: m.format.map(|f| RawFormat { pixel_container: f.container.code(), msb: f.msb }),
        meta_height_before: m.meta_height_before,
        meta_height_after: m.meta_height_after,
    }
}

/// The layout of `m`, or TIOVX's refusal (`VX_ERROR_INVALID_PARAMETERS` for every rule of
/// `ownIsValidCreateParams`; a size beyond the addressable memory is `InvalidDimension`).
fn checked_layout(m: &RawImageMeta) -> Result<RawImageLayout> {
    layout(&wire_of(m)).map_err(|e| {
        let kind = match e {
            LayoutError::TooLarge => ErrorKind::InvalidDimension,
            _ => ErrorKind::InvalidParameters,
        };
        Error::new(kind, format!("tivxCreateRawImage: {e}")).found(m)
    })
}

impl ObjectKind for RawImageKind {
    type Wire = Wire;
    const NAME: &'static str = "RawImage";
    type Meta = RawImageMeta;
    type Attr = RawImageAttr;
    type Partial = RawImagePartial;
    type Body = BlobBody<RawImageKind>;
    blob_object!();
    fn fmt_details(h: &RawImage, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = h.obj.body.meta;
        write!(f, "{}x{} x{}", m.width, m.height, m.num_exposures)
    }
    /// Fixed at creation (virtual ones too): checked, never completed.
    fn apply(h: &RawImage, w: &RawImageMeta) -> std::result::Result<Applied, Refusal> {
        let m = h.meta();
        if (m.width, m.height) != (w.width, w.height) {
            return Err(Refusal::Mismatch(ErrorKind::InvalidDimension));
        }
        exactly(&m, w, ErrorKind::InvalidFormat)
    }
    fn exemplar(p: &mut RawImagePartial, m: &RawImageMeta) {
        *p = RawImagePartial::of(m);
    }
    fn resolve(p: &RawImagePartial) -> std::result::Result<RawImageMeta, &'static str> {
        Ok(RawImageMeta {
            width: p.width.ok_or("raw image width")?,
            height: p.height.ok_or("raw image height")?,
            num_exposures: p.num_exposures.unwrap_or(1),
            line_interleaved: p.line_interleaved.unwrap_or(false),
            format: p.format.ok_or("raw image format")?,
            meta_height_before: p.meta_height_before.unwrap_or(0),
            meta_height_after: p.meta_height_after.unwrap_or(0),
        })
    }
    fn to_wire(h: &RawImage) -> Wire {
        wire_of(&h.obj.body.meta)
    }
    fn from_wire(w: &Wire) -> Result<RawImageMeta> {
        let mut format = [RawImageFormat::BIT8; MAX_EXPOSURES];
        let used = if w.line_interleaved != 0 { 1 } else { (w.num_exposures as usize).clamp(1, MAX_EXPOSURES) };
        for (i, (f, g)) in format.iter_mut().zip(&w.format).enumerate() {
            // Unused entries may hold anything on the wire; they keep the first's format.
            let g = if i < used { g } else { &w.format[0] };
            *f = RawImageFormat { container: RawPixelContainer::from_code(g.pixel_container)?, msb: g.msb };
        }
        Ok(RawImageMeta {
            width: w.width,
            height: w.height,
            num_exposures: w.num_exposures,
            line_interleaved: w.line_interleaved != 0,
            format,
            meta_height_before: w.meta_height_before,
            meta_height_after: w.meta_height_after,
        })
    }
}

impl BlobKind for RawImageKind {
    type Extra = ();
    fn layout(m: &RawImageMeta) -> Result<usize> {
        Ok(checked_layout(m)?.total as usize)
    }
    fn element(_: &RawImageMeta) -> ArrayItemType {
        ScalarType::Uint8.into()
    }
}

/// `tivx_raw_image_buffer_access_e`: which rows of an exposure a copy or map reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawImageBuffer {
    /// `TIVX_RAW_IMAGE_PIXEL_BUFFER`: the pixels in a rectangle. In a packed 12-bit exposure the
    /// rectangle's columns must be even (a patch starts and ends on a byte).
    Pixels(Rect),
    /// `TIVX_RAW_IMAGE_META_BUFFER`, the rows before the pixels.
    MetaBefore,
    /// `TIVX_RAW_IMAGE_META_BUFFER`, the rows after the pixels.
    MetaAfter,
}

/// An exposure's rows mapped for reading (`tivxMapRawImagePatch` with `VX_READ_ONLY`): row `r` is
/// [`row`](Self::row); unmapped when dropped.
pub struct RawImagePatch<'a> {
    bytes: MappedSlice<'a, u8>,
    region: RawImageRegion,
}

/// An exposure's rows mapped for writing; unmapped when dropped.
pub struct RawImagePatchMut<'a> {
    bytes: MappedSliceMut<'a, u8>,
    region: RawImageRegion,
}

impl RawImagePatch<'_> {
    /// Where the rows lie in the object (`stride` is TIOVX's `stride_y`).
    pub fn region(&self) -> RawImageRegion {
        self.region
    }
    /// Row `r`'s bytes (`None` past the last).
    pub fn row(&self, r: u32) -> Option<&[u8]> {
        self.region.row(u64::from(r)).map(|b| &self.bytes[b])
    }
}

impl RawImagePatchMut<'_> {
    /// Where the rows lie in the object.
    pub fn region(&self) -> RawImageRegion {
        self.region
    }
    /// Row `r`'s bytes (`None` past the last).
    pub fn row(&self, r: u32) -> Option<&[u8]> {
        self.region.row(u64::from(r)).map(|b| &self.bytes[b])
    }
    /// Row `r`'s bytes for writing (`None` past the last).
    pub fn row_mut(&mut self, r: u32) -> Option<&mut [u8]> {
        self.region.row(u64::from(r)).map(|b| &mut self.bytes[b])
    }
}

impl Handle<RawImageKind> {
    /// `tivxCreateRawImage`: a raw image of `meta`, refused as TIOVX refuses (`InvalidParameters`
    /// naming the rule: width and/or height, num_exposures, pixel_container, msb).
    pub fn new(ctx: &impl AsContext, meta: &RawImageMeta) -> Result<RawImage> {
        checked_layout(meta)?;
        RawImage::with_header(ObjectHeader::new(ctx, "raw-image", None)?, *meta)
    }

    /// A raw image only the kernels of `graph` can read and write (TIOVX has no virtual creator;
    /// the meta data is fixed here, as every virtual raw image's).
    pub fn new_virtual(graph: &impl VirtualScope, meta: &RawImageMeta) -> Result<RawImage> {
        checked_layout(meta)?;
        RawImage::with_header(ObjectHeader::new(graph, "virtual-raw-image", Some(graph.scope_id()))?, *meta)
    }

    /// `TIVX_RAW_IMAGE_WIDTH`.
    pub fn width(&self) -> u32 {
        self.obj.body.meta.width
    }
    /// `TIVX_RAW_IMAGE_HEIGHT`.
    pub fn height(&self) -> u32 {
        self.obj.body.meta.height
    }
    /// `TIVX_RAW_IMAGE_NUM_EXPOSURES`.
    pub fn num_exposures(&self) -> u32 {
        self.obj.body.meta.num_exposures
    }
    /// `TIVX_RAW_IMAGE_LINE_INTERLEAVED`.
    pub fn line_interleaved(&self) -> bool {
        self.obj.body.meta.line_interleaved
    }
    /// `TIVX_RAW_IMAGE_FORMAT`.
    pub fn format(&self) -> [RawImageFormat; MAX_EXPOSURES] {
        self.obj.body.meta.format
    }
    /// `TIVX_RAW_IMAGE_META_HEIGHT_BEFORE`.
    pub fn meta_height_before(&self) -> u32 {
        self.obj.body.meta.meta_height_before
    }
    /// `TIVX_RAW_IMAGE_META_HEIGHT_AFTER`.
    pub fn meta_height_after(&self) -> u32 {
        self.obj.body.meta.meta_height_after
    }
    /// Where each exposure's rows lie (TIOVX's `TIVX_RAW_IMAGE_IMAGEPATCH_ADDRESSING`, per exposure).
    pub fn layout(&self) -> RawImageLayout {
        // Checked at creation: the same meta gives the same layout.
        checked_layout(&self.obj.body.meta).expect("checked at creation")
    }

    /// The rows `buffer` names in exposure `exposure`, and the bytes of `[first, end)` columns.
    fn rows(&self, exposure: u32, buffer: RawImageBuffer) -> Result<(RawImageRegion, std::ops::Range<u64>)> {
        let lay = checked_layout(&self.obj.body.meta)?;
        let name = self.name();
        let x = lay.exposure(exposure as usize).ok_or_else(|| {
            Error::new(ErrorKind::InvalidParameters, "exposure index is greater than the image's number of exposures")
                .on_object(&name)
                .expected_found(format!("< {}", lay.num_exposures), exposure)
        })?;
        match buffer {
            RawImageBuffer::MetaBefore => Ok((x.meta_before, 0..x.meta_before.row_bytes)),
            RawImageBuffer::MetaAfter => Ok((x.meta_after, 0..x.meta_after.row_bytes)),
            RawImageBuffer::Pixels(r) => {
                let m = &self.obj.body.meta;
                if r.start_x >= r.end_x || r.start_y >= r.end_y || r.end_x > m.width || r.end_y > m.height {
                    return Err(Error::new(ErrorKind::InvalidParameters, "the patch lies outside the raw image")
                        .on_object(&name)
                        .expected_found(format!("inside {}x{}", m.width, m.height), format!("{r:?}")));
                }
                let (a, b) = (u64::from(r.start_x), u64::from(r.end_x));
                let cols = if x.pixel_container == pixel_container::P12 {
                    if a % 2 == 1 || b % 2 == 1 {
                        return Err(Error::new(
                            ErrorKind::InvalidParameters,
                            "a packed 12-bit patch starts and ends on an even column",
                        )
                        .on_object(&name)
                        .found(format!("{r:?}")));
                    }
                    a * 3 / 2..b * 3 / 2
                } else {
                    let px = x.pixels.row_bytes / u64::from(m.width);
                    a * px..b * px
                };
                let mut region = x.pixels;
                region.offset += u64::from(r.start_y) * region.stride;
                region.rows = u64::from(r.end_y - r.start_y);
                Ok((region, cols))
            }
        }
    }

    /// The bytes a patch copy moves: `rows × columns' bytes`, packed row after row.
    fn check_len(&self, region: &RawImageRegion, cols: &std::ops::Range<u64>, len: usize) -> Result<usize> {
        let row = (cols.end - cols.start) as usize;
        let want = row * region.rows as usize;
        if len != want {
            return Err(Error::new(ErrorKind::InvalidParameters, "the user memory does not hold the patch")
                .on_object(&self.name())
                .expected_found(format!("{want} bytes"), format!("{len} bytes")));
        }
        Ok(row)
    }

    fn patch_to(&self, exposure: u32, buffer: RawImageBuffer, out: &mut [u8], access: Access) -> Result<()> {
        let (region, cols) = self.rows(exposure, buffer)?;
        let row = self.check_len(&region, &cols, out.len())?;
        if row == 0 {
            return Ok(());
        }
        self.obj.body.data.read(&self.obj.header, access, |bytes| {
            for (r, dst) in out.chunks_exact_mut(row).enumerate() {
                let start = (region.offset + r as u64 * region.stride + cols.start) as usize;
                dst.copy_from_slice(&bytes[start..start + row]);
            }
        })
    }

    fn patch_from(&self, exposure: u32, buffer: RawImageBuffer, src: &[u8], access: Access) -> Result<()> {
        let (region, cols) = self.rows(exposure, buffer)?;
        let row = self.check_len(&region, &cols, src.len())?;
        if row == 0 {
            return Ok(());
        }
        self.obj.body.data.write(&self.obj.header, access, |bytes| {
            for (r, s) in src.chunks_exact(row).enumerate() {
                let start = (region.offset + r as u64 * region.stride + cols.start) as usize;
                bytes[start..start + row].copy_from_slice(s);
            }
        })
    }

    fn map_rows(&self, exposure: u32, buffer: RawImageBuffer, access: Access) -> Result<RawImagePatch<'_>> {
        let (region, cols) = self.rows(exposure, buffer)?;
        let region = RawImageRegion { offset: region.offset + cols.start, row_bytes: cols.end - cols.start, ..region };
        Ok(RawImagePatch { bytes: self.obj.body.data.map(&self.obj.header, access)?, region })
    }

    fn map_rows_mut(&self, exposure: u32, buffer: RawImageBuffer, access: Access) -> Result<RawImagePatchMut<'_>> {
        let (region, cols) = self.rows(exposure, buffer)?;
        let region = RawImageRegion { offset: region.offset + cols.start, row_bytes: cols.end - cols.start, ..region };
        Ok(RawImagePatchMut { bytes: self.obj.body.data.map_mut(&self.obj.header, access)?, region })
    }

    /// `tivxCopyRawImagePatch` (read): exposure `exposure`'s `buffer` into `out`, rows packed one
    /// after the other (a pixel patch's row: its columns' bytes; a meta row: the whole row).
    pub fn copy_patch_to(&self, exposure: u32, buffer: RawImageBuffer, out: &mut [u8]) -> Result<()> {
        self.patch_to(exposure, buffer, out, Access::Application)
    }
    /// `tivxCopyRawImagePatch` (write): `src`, rows packed, into exposure `exposure`'s `buffer`.
    pub fn copy_patch_from(&self, exposure: u32, buffer: RawImageBuffer, src: &[u8]) -> Result<()> {
        self.patch_from(exposure, buffer, src, Access::Application)
    }
    /// `tivxMapRawImagePatch` (`VX_READ_ONLY`): exposure `exposure`'s `buffer`, in place.
    pub fn map_patch(&self, exposure: u32, buffer: RawImageBuffer) -> Result<RawImagePatch<'_>> {
        self.map_rows(exposure, buffer, Access::Application)
    }
    /// `tivxMapRawImagePatch` (`VX_WRITE_ONLY` / `VX_READ_AND_WRITE`).
    pub fn map_patch_mut(&self, exposure: u32, buffer: RawImageBuffer) -> Result<RawImagePatchMut<'_>> {
        self.map_rows_mut(exposure, buffer, Access::Application)
    }
    /// Every byte, padding included (an exact copy of another raw image of the same meta data).
    pub fn copy_bytes_to(&self, out: &mut [u8]) -> Result<()> {
        self.copy_whole_to(out, Access::Application)
    }
    /// Write every byte.
    pub fn copy_bytes_from(&self, src: &[u8]) -> Result<()> {
        self.copy_whole_from(src, Access::Application)
    }
}

impl<'a> KernelView<'a, RawImage> {
    /// As [`RawImage::copy_patch_to`], from a kernel of the object's graph.
    pub fn copy_patch_to(&self, exposure: u32, buffer: RawImageBuffer, out: &mut [u8]) -> Result<()> {
        self.object.patch_to(exposure, buffer, out, Access::Kernel)
    }
    /// As [`RawImage::copy_patch_from`].
    pub fn copy_patch_from(&self, exposure: u32, buffer: RawImageBuffer, src: &[u8]) -> Result<()> {
        self.object.patch_from(exposure, buffer, src, Access::Kernel)
    }
    /// As [`RawImage::map_patch`].
    pub fn map_patch(&self, exposure: u32, buffer: RawImageBuffer) -> Result<RawImagePatch<'a>> {
        self.object.map_rows(exposure, buffer, Access::Kernel)
    }
    /// As [`RawImage::map_patch_mut`].
    pub fn map_patch_mut(&self, exposure: u32, buffer: RawImageBuffer) -> Result<RawImagePatchMut<'a>> {
        self.object.map_rows_mut(exposure, buffer, Access::Kernel)
    }
    /// As [`RawImage::copy_bytes_to`].
    pub fn copy_bytes_to(&self, out: &mut [u8]) -> Result<()> {
        self.object.copy_whole_to(out, Access::Kernel)
    }
    /// As [`RawImage::copy_bytes_from`].
    pub fn copy_bytes_from(&self, src: &[u8]) -> Result<()> {
        self.object.copy_whole_from(src, Access::Kernel)
    }
}

/// A real raw image for the tests over the list of kinds (`data/kinds/`): two separate exposures
/// (16-bit and packed 12-bit) with meta rows before and after.
#[cfg(test)]
pub(crate) fn sample(ctx: &crate::Context) -> crate::Reference {
    let meta = RawImageMeta::new(8, 4, RawImageFormat::BIT16)
        .exposures(&[RawImageFormat::BIT16, RawImageFormat::P12])
        .meta_rows(1, 2);
    RawImage::new(ctx, &meta).expect("a valid raw image").into()
}
