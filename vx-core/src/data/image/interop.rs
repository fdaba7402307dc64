//! `image` crate interop (cargo feature `image`): images in and out of `image::ImageBuffer`s of
//! the pixel types that map to an OpenVX format — `Luma<u8>` (U8), `Luma<u16>` (U16), `Rgb<u8>`
//! (RGB), `Rgba<u8>` (RGBX: the fourth byte travels, OpenVX calls it padding). Copies with
//! [`Image::from_image`] / [`Image::to_image`]; in place, no copy, with [`Image::from_image_buffer`]
//! (the buffer is lent through an [`ImageHandle`] and comes back from [`Image::swap_handle`]).

use image::{ImageBuffer, Luma, Rgb, Rgba};
use vx_plugin_abi::{ImageFormat, Rect};

use crate::data::buffer::ExternalMemory;
use crate::data::image::Image;
use crate::data::image::import::ImageHandle;
use crate::data::image::patch::Pixel;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::AsContext;

/// An `image` pixel type with an OpenVX format.
pub trait FormatPixel: image::Pixel + Send + 'static {
    /// The OpenVX format of images of this pixel.
    const FORMAT: ImageFormat;
    /// The runtime's element of one pixel (`u8`, `u16`, `[u8; 3]`, `[u8; 4]`): the same bytes as
    /// the pixel's channels.
    type Element: Pixel;
}

impl FormatPixel for Luma<u8> {
    const FORMAT: ImageFormat = ImageFormat::U8;
    type Element = u8;
}
impl FormatPixel for Luma<u16> {
    const FORMAT: ImageFormat = ImageFormat::U16;
    type Element = u16;
}
impl FormatPixel for Rgb<u8> {
    const FORMAT: ImageFormat = ImageFormat::Rgb;
    type Element = [u8; 3];
}
impl FormatPixel for Rgba<u8> {
    const FORMAT: ImageFormat = ImageFormat::Rgbx;
    type Element = [u8; 4];
}

/// How many pixel elements `len` samples make, after checking that an element is exactly the
/// pixel's channels (same size, alignment no stricter): what the casts below rely on.
fn element_count<P: FormatPixel>(len: usize) -> usize {
    assert_eq!(size_of::<P::Element>(), P::CHANNEL_COUNT as usize * size_of::<P::Subpixel>());
    assert!(align_of::<P::Element>() <= align_of::<P::Subpixel>());
    len / P::CHANNEL_COUNT as usize
}

/// An `image` buffer's samples as pixel elements.
fn elements<P: FormatPixel>(samples: &[P::Subpixel]) -> &[P::Element] {
    let n = element_count::<P>(samples.len());
    // SAFETY: an element is exactly the pixel's channels (checked by `element_count`), both plain
    // integers valid for every bit pattern; the borrow is the samples'.
    unsafe { std::slice::from_raw_parts(samples.as_ptr() as *const P::Element, n) }
}

/// [`elements`] for writing.
fn elements_mut<P: FormatPixel>(samples: &mut [P::Subpixel]) -> &mut [P::Element] {
    let n = element_count::<P>(samples.len());
    // SAFETY: as in `elements`, with the exclusive borrow of the samples.
    unsafe { std::slice::from_raw_parts_mut(samples.as_mut_ptr() as *mut P::Element, n) }
}

impl<P: FormatPixel> ExternalMemory for ImageBuffer<P, Vec<P::Subpixel>>
where
    P::Subpixel: Send,
{
    fn bytes_mut(&mut self) -> &mut [u8] {
        let samples: &mut [P::Subpixel] = self;
        let len = size_of_val(samples);
        // SAFETY: the samples are plain integers (u8 or u16) viewed as their bytes; u8 has
        // alignment 1; the borrow is the buffer's.
        unsafe { std::slice::from_raw_parts_mut(samples.as_mut_ptr() as *mut u8, len) }
    }
}

impl Image {
    /// A new image with a copy of `img` (`Image::from_image(&ctx, &gray)`).
    pub fn from_image<P: FormatPixel>(ctx: &impl AsContext, img: &ImageBuffer<P, Vec<P::Subpixel>>) -> Result<Image> {
        let (w, h) = img.dimensions();
        let image = Image::new(ctx, w, h, P::FORMAT)?;
        image.copy_from(Rect::full(w, h), 0, elements::<P>(img.as_raw()))?;
        Ok(image)
    }

    /// A copy of the image (its valid region ignored: every pixel) as an `image` buffer of `P`,
    /// which must be the image's format.
    pub fn to_image<P: FormatPixel>(&self) -> Result<ImageBuffer<P, Vec<P::Subpixel>>> {
        if self.format() != P::FORMAT {
            return Err(Error::new(ErrorKind::InvalidFormat, "the image's format is not the pixel type's")
                .on_object(&self.name())
                .expected_found(P::FORMAT, self.format()));
        }
        let (w, h) = (self.width(), self.height());
        // Mapped first (a virtual image, a buffer past the context's limits: refused before the copy
        // is reserved), then the samples reserved fallibly (`ImageBuffer::new` aborts on memory it
        // cannot get).
        let patch = self.map::<P::Element>(Rect::full(w, h))?;
        let n = crate::support::size::checked_bytes(
            "copy of the image",
            &[w as usize, h as usize, P::CHANNEL_COUNT as usize],
            size_of::<P::Subpixel>(),
        )
        .map_err(|e| e.on_object(&self.name()))?
            / size_of::<P::Subpixel>();
        let mut samples = crate::support::size::try_vec::<P::Subpixel>("copy of the image", n)
            .map_err(|e| e.on_object(&self.name()))?;
        // Every sample is overwritten below.
        samples.resize(n, <P::Subpixel as image::Primitive>::DEFAULT_MIN_VALUE);
        for (y, row) in elements_mut::<P>(&mut samples).chunks_exact_mut(w as usize).enumerate() {
            row.copy_from_slice(patch.row(y as u32));
        }
        drop(patch);
        Ok(ImageBuffer::from_raw(w, h, samples).expect("w × h × channels samples make a w × h buffer"))
    }

    /// An image whose pixels are `img`'s, used in place (no copy in, none out): graphs read and
    /// write the buffer itself. Get it back with `swap_handle(None)` and
    /// `ImageHandle::into_inner::<ImageBuffer<P, Vec<_>>>()`.
    pub fn from_image_buffer<P: FormatPixel>(
        ctx: &impl AsContext,
        img: ImageBuffer<P, Vec<P::Subpixel>>,
    ) -> Result<Image>
    where
        P::Subpixel: Send,
    {
        let (w, h) = img.dimensions();
        let stride = w as usize * size_of::<P::Element>();
        Image::from_handle(ctx, w, h, P::FORMAT, ImageHandle::new(img, stride))
    }
}
