//! Images over memory the application owns (`vxCreateImageFromHandle`, `vxSwapImageHandle`): a
//! frame from a camera or a decoder is processed where it is, no copy in or out.
//!
//! The application hands over an *owner* of the bytes (a `Vec`, an `image` crate buffer, anything
//! [`ExternalMemory`]) in an [`ImageHandle`]; the image keeps it while it uses the bytes and gives
//! it back from [`Image::swap_handle`], typed again with [`ImageHandle::into_inner`]. Ownership
//! makes the C API's rule ("do not touch the memory while the image has it") a compile-time fact.
//! A swap is refused while the image is mapped — by the application or by a graph processing it —
//! so a frame never changes under a running kernel.

use crate::data::buffer::{ExternalBlock, ExternalMemory};
use crate::data::image::Image;
use crate::data::image::layout::ImageLayout;
use crate::data::object::ObjectHeader;
use crate::error::{Error, ErrorKind, Result};
use crate::shared::AsContext;
use vx_plugin_abi::ImageFormat;

/// Memory the application lends to an image: its owner, and the bytes between rows.
pub struct ImageHandle {
    block: ExternalBlock,
    stride: usize,
}

impl std::fmt::Debug for ImageHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageHandle")
            .field("ptr", &self.as_ptr())
            .field("len", &self.len())
            .field("stride", &self.stride)
            .finish()
    }
}

impl ImageHandle {
    /// `memory` with rows `stride` bytes apart (for a tightly packed image: width × pixel size).
    pub fn new(memory: impl ExternalMemory, stride: usize) -> ImageHandle {
        ImageHandle { block: ExternalBlock::new(memory), stride }
    }
    /// Where the bytes are (stable for the handle's whole life).
    pub fn as_ptr(&self) -> *const u8 {
        self.block.as_ptr()
    }
    /// How many bytes.
    pub fn len(&self) -> usize {
        self.block.len()
    }
    /// True for no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes from one row to the next.
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// The owner back, as the type it was made from (`Err`: another type; the handle is returned).
    pub fn into_inner<M: 'static>(self) -> std::result::Result<M, ImageHandle> {
        let stride = self.stride;
        self.block.into_owner::<M>().map_err(|block| ImageHandle { block, stride })
    }

    fn check(&self, layout: &ImageLayout) -> Result<()> {
        let p = layout.planes[0];
        if self.len() < layout.size {
            return Err(Error::new(ErrorKind::InvalidParameters, "the memory is too small for the image")
                .expected_found(
                    format!("{} bytes ({} rows of {} bytes)", layout.size, p.height, p.stride),
                    format!("{} bytes", self.len()),
                ));
        }
        // The element's alignment: its size when a power of two (u16, u32, …), 1 otherwise (RGB's
        // three bytes).
        let align = if p.bytes_per_element.is_power_of_two() { p.bytes_per_element as usize } else { 1 };
        if !(self.as_ptr() as usize).is_multiple_of(align) {
            return Err(Error::new(ErrorKind::InvalidParameters, "the memory is not aligned to the pixel size")
                .expected_found(format!("an address that is a multiple of {align}"), format!("{:p}", self.as_ptr())));
        }
        Ok(())
    }
}

impl Image {
    /// `vxCreateImageFromHandle`: a `width × height` image of `format` (one plane) whose pixels
    /// are the application's memory, used in place: graphs read and write it directly.
    pub fn from_handle(
        ctx: &impl AsContext,
        width: u32,
        height: u32,
        format: ImageFormat,
        handle: ImageHandle,
    ) -> Result<Image> {
        let layout = ImageLayout::with_stride(format, width, height, handle.stride)?;
        handle.check(&layout)?;
        let header = ObjectHeader::new(ctx, "image", None)?;
        let image = Image::from_parts(header, Some(layout), format, width, height);
        image.obj.body.storage.buffer.import(Some(handle.block))?;
        Ok(image)
    }

    /// `vxSwapImageHandle`: give the image other memory of the same stride (`None`: none, the
    /// image cannot be used until given some) and get back the memory it had. Refused on an image
    /// not made [`from_handle`](Self::from_handle), on an ROI, and while the image is mapped (a
    /// graph processing it maps it), leaving the image as it was.
    pub fn swap_handle(&self, new: Option<ImageHandle>) -> Result<Option<ImageHandle>> {
        let name = self.name();
        if self.is_roi() {
            return Err(Error::new(ErrorKind::InvalidParameters, "swap_handle on an ROI; swap its parent's memory")
                .on_object(&name));
        }
        let storage = self.storage();
        if !storage.buffer.is_imported() {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "the image was not made from the application's memory",
            )
            .expected_found("an image from Image::from_handle", "an image the runtime allocates")
            .on_object(&name));
        }
        let layout = storage.layout().clone().expect("an imported image has a layout");
        let stride = layout.planes[0].stride;
        if let Some(h) = &new {
            if h.stride != stride {
                return Err(Error::new(
                    ErrorKind::InvalidParameters,
                    "the new memory's stride differs from the image's",
                )
                .expected_found(stride, h.stride)
                .on_object(&name));
            }
            h.check(&layout).map_err(|e| e.on_object(&name))?;
        }
        let old = storage.buffer.import(new.map(|h| h.block)).map_err(|e| e.on_object(&name))?;
        Ok(old.map(|block| ImageHandle { block, stride }))
    }
}
