//! Where the bytes of an image live: per-plane offsets, strides and sizes, computed with checked
//! arithmetic so that absurd sizes fail with a clear error instead of overflowing.

use vx_plugin_abi::ImageFormat;

use crate::data::buffer::BUFFER_ALIGN;
use crate::error::{Error, ErrorKind, Result};

/// The layout of one plane inside the image buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneLayout {
    /// Byte offset of the plane's first row in the buffer.
    pub offset: usize,
    /// Bytes from one row to the next (a multiple of 64).
    pub stride: usize,
    /// Elements per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Bytes per element.
    pub bytes_per_element: u32,
    /// Horizontal subsampling relative to the image.
    pub subsample_x: u32,
    /// Vertical subsampling relative to the image.
    pub subsample_y: u32,
}

/// The layout of a whole image buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageLayout {
    /// The image format.
    pub format: ImageFormat,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// One entry per plane, in plane order.
    pub planes: Vec<PlaneLayout>,
    /// Total bytes of the buffer.
    pub size: usize,
}

impl ImageLayout {
    /// The layout of a `width × height` image of `format`, or why there cannot be one.
    ///
    /// Row strides must fit `vx_imagepatch_addressing_t::stride_y` (an `i32`) and the total size
    /// must fit `isize`; zero dimensions and the virtual format are refused.
    pub fn new(format: ImageFormat, width: u32, height: u32) -> Result<ImageLayout> {
        if format == ImageFormat::Virtual {
            return Err(Error::new(ErrorKind::InvalidFormat, "an image buffer needs a concrete format")
                .expected_found("one of U8, U16, S16, U32, S32, RGB, RGBX, NV12", format));
        }
        if width == 0 || height == 0 {
            return Err(Error::new(ErrorKind::InvalidDimension, "an image must have at least one pixel")
                .expected_found("width and height >= 1", format!("{width}x{height}")));
        }
        let too_big = || {
            Error::new(ErrorKind::InvalidDimension, "image size overflows the addressable memory").expected_found(
                format!("rows of at most {} bytes and a total below {} bytes", i32::MAX, isize::MAX),
                format!("{format} {width}x{height}"),
            )
        };
        let mut planes = Vec::with_capacity(format.plane_count());
        let mut offset: usize = 0;
        for p in format.planes() {
            let pw = width.div_ceil(p.subsample_x);
            let ph = height.div_ceil(p.subsample_y);
            let row = (pw as usize).checked_mul(p.bytes_per_element as usize).ok_or_else(too_big)?;
            let stride = row.checked_next_multiple_of(BUFFER_ALIGN).ok_or_else(too_big)?;
            if stride > i32::MAX as usize {
                return Err(too_big());
            }
            let bytes = stride.checked_mul(ph as usize).ok_or_else(too_big)?;
            planes.push(PlaneLayout {
                offset,
                stride,
                width: pw,
                height: ph,
                bytes_per_element: p.bytes_per_element,
                subsample_x: p.subsample_x,
                subsample_y: p.subsample_y,
            });
            offset = offset.checked_add(bytes).ok_or_else(too_big)?;
        }
        if offset > isize::MAX as usize {
            return Err(too_big());
        }
        Ok(ImageLayout { format, width, height, planes, size: offset })
    }
}

impl ImageLayout {
    /// The layout of a one-plane image whose rows are `stride` bytes apart (memory the application
    /// lends, [`crate::Image::from_handle`]): `stride` holds a row and is a multiple of the pixel size.
    pub fn with_stride(format: ImageFormat, width: u32, height: u32, stride: usize) -> Result<ImageLayout> {
        let mut l = ImageLayout::new(format, width, height)?;
        if l.planes.len() != 1 {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "memory of the application is lent to one-plane images only",
            )
            .expected_found("U8, U16, S16, U32, S32, RGB or RGBX", format));
        }
        let p = &mut l.planes[0];
        let (row, bpe) = (p.width as usize * p.bytes_per_element as usize, p.bytes_per_element as usize);
        if stride < row || !stride.is_multiple_of(bpe) || stride > i32::MAX as usize {
            return Err(Error::new(ErrorKind::InvalidParameters, "the row stride does not fit the image")
                .expected_found(
                    format!("at least {row} bytes (a {format} row of {width} pixels), a multiple of {bpe}"),
                    stride,
                ));
        }
        p.stride = stride;
        l.size = stride.checked_mul(height as usize).filter(|&s| s <= isize::MAX as usize).ok_or_else(|| {
            Error::new(ErrorKind::InvalidDimension, "image size overflows the addressable memory")
                .found(format!("{height} rows of {stride} bytes"))
        })?;
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nv12_has_half_resolution_uv_plane() {
        let l = ImageLayout::new(ImageFormat::Nv12, 63, 33).unwrap();
        assert_eq!(l.planes.len(), 2);
        assert_eq!((l.planes[0].width, l.planes[0].height, l.planes[0].stride), (63, 33, 64));
        assert_eq!((l.planes[1].width, l.planes[1].height, l.planes[1].stride), (32, 17, 64));
        assert_eq!(l.planes[1].offset, 64 * 33);
        assert_eq!(l.size, 64 * 33 + 64 * 17);
    }

    #[test]
    fn absurd_sizes_are_refused() {
        let e = ImageLayout::new(ImageFormat::U32, u32::MAX, u32::MAX).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidDimension);
        let e = ImageLayout::new(ImageFormat::Rgbx, 1 << 30, 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidDimension, "{e}");
        let e = ImageLayout::new(ImageFormat::U8, 0, 10).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidDimension);
    }
}
