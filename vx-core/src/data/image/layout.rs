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
                .expected_found(
                    "one of U8, U16, S16, U32, S32, RGB, RGBX, NV12, NV21, UYVY, YUYV, IYUV, YUV4",
                    format,
                ));
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
            .expected_found("U8, U16, S16, U32, S32, RGB, RGBX, UYVY or YUYV", format));
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

    /// The formats added beside NV12, and an element of each plane (the pixel type a typed map
    /// takes: `[u8; 2]` for a chroma pair or a 4:2:2 pixel, `u8` otherwise).
    const YUV: [ImageFormat; 5] =
        [ImageFormat::Nv21, ImageFormat::Uyvy, ImageFormat::Yuyv, ImageFormat::Iyuv, ImageFormat::Yuv4];

    #[test]
    fn yuv_layouts_round_subsampled_planes_up() {
        // (format, per plane: (width, height) of a 6x4 image, of a 7x5 image, bytes per element).
        type Plane = ((u32, u32), (u32, u32), u32);
        let table: [(ImageFormat, &[Plane]); 5] = [
            (ImageFormat::Nv21, &[((6, 4), (7, 5), 1), ((3, 2), (4, 3), 2)]),
            (ImageFormat::Uyvy, &[((6, 4), (7, 5), 2)]),
            (ImageFormat::Yuyv, &[((6, 4), (7, 5), 2)]),
            (ImageFormat::Iyuv, &[((6, 4), (7, 5), 1), ((3, 2), (4, 3), 1), ((3, 2), (4, 3), 1)]),
            (ImageFormat::Yuv4, &[((6, 4), (7, 5), 1), ((6, 4), (7, 5), 1), ((6, 4), (7, 5), 1)]),
        ];
        for (f, planes) in table {
            for (odd, (w, h)) in [(6, 4), (7, 5)].into_iter().enumerate() {
                let l = ImageLayout::new(f, w, h).unwrap();
                assert_eq!((l.format, l.width, l.height, l.planes.len()), (f, w, h, planes.len()), "{f}");
                let mut offset = 0;
                for (i, (p, &(even_dims, odd_dims, bpe))) in l.planes.iter().zip(planes).enumerate() {
                    let dims = if odd == 1 { odd_dims } else { even_dims };
                    assert_eq!(
                        (p.width, p.height, p.bytes_per_element),
                        (dims.0, dims.1, bpe),
                        "{f} {w}x{h} plane {i}"
                    );
                    assert_eq!(p.offset, offset, "{f} plane {i} follows the previous one");
                    assert_eq!(p.stride, (dims.0 * bpe).next_multiple_of(64) as usize);
                    offset += p.stride * p.height as usize;
                }
                assert_eq!(l.size, offset, "{f} {w}x{h}");
            }
        }
        // One row of a 4:2:2 image is 2 bytes a pixel; lent memory of one plane may hold them.
        let l = ImageLayout::with_stride(ImageFormat::Uyvy, 7, 3, 14).unwrap();
        assert_eq!((l.planes[0].stride, l.size), (14, 42));
        assert_eq!(
            ImageLayout::with_stride(ImageFormat::Yuyv, 7, 3, 13).unwrap_err().kind(),
            ErrorKind::InvalidParameters
        );
        let e = ImageLayout::with_stride(ImageFormat::Iyuv, 8, 8, 64).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
    }

    /// Every plane of each new format written through a typed map and read back by a copy (and
    /// the other way round), the planes independent of each other; typed maps take the plane's
    /// element type only; patches of subsampled planes address the plane's elements.
    #[test]
    fn yuv_planes_map_and_copy_round_trip() {
        use crate::{ColorSpace, Context, Image, Rect};
        let ctx = Context::new().unwrap();
        for f in YUV {
            let (w, h) = (7, 5);
            let img = Image::new(&ctx, w, h, f).unwrap();
            assert_eq!((img.planes(), img.format()), (f.plane_count(), f));
            assert_eq!(img.color_space(), ColorSpace::Bt709, "{f}: the YUV default");
            let full = Rect::full(w, h);
            let layout = ImageLayout::new(f, w, h).unwrap();
            let seed = |plane: usize, i: usize| (plane * 64 + i) as u8;
            for (plane, pl) in layout.planes.iter().enumerate() {
                let n = (pl.width * pl.height) as usize;
                if pl.bytes_per_element == 2 {
                    assert_eq!(img.map_plane::<u8>(full, plane).unwrap_err().kind(), ErrorKind::InvalidFormat);
                    let mut p = img.map_plane_mut::<[u8; 2]>(full, plane).unwrap();
                    let a = p.addressing();
                    assert_eq!((a.dim_x, a.dim_y, a.stride_x, a.stride_y), (pl.width, pl.height, 2, pl.stride as i32));
                    for y in 0..a.dim_y {
                        for (x, px) in p.row_mut(y).iter_mut().enumerate() {
                            let i = (y * a.dim_x) as usize + x;
                            *px = [seed(plane, i), !seed(plane, i)];
                        }
                    }
                } else {
                    assert_eq!(img.map_plane::<[u8; 2]>(full, plane).unwrap_err().kind(), ErrorKind::InvalidFormat);
                    let src: Vec<u8> = (0..n).map(|i| seed(plane, i)).collect();
                    img.copy_from(full, plane, &src).unwrap();
                    let p = img.map_plane::<u8>(full, plane).unwrap();
                    let a = p.addressing();
                    assert_eq!((a.dim_x, a.dim_y, a.stride_x, a.stride_y), (pl.width, pl.height, 1, pl.stride as i32));
                }
            }
            // Read back after every plane was written: no plane overwrote another.
            for (plane, pl) in layout.planes.iter().enumerate() {
                let n = (pl.width * pl.height) as usize;
                if pl.bytes_per_element == 2 {
                    let mut out = vec![[0u8; 2]; n];
                    img.copy_to(full, plane, &mut out).unwrap();
                    assert!(
                        out.iter().enumerate().all(|(i, px)| *px == [seed(plane, i), !seed(plane, i)]),
                        "{f} {plane}"
                    );
                } else {
                    let mut out = vec![0u8; n];
                    img.copy_to(full, plane, &mut out).unwrap();
                    assert!(out.iter().enumerate().all(|(i, v)| *v == seed(plane, i)), "{f} plane {plane}");
                }
            }
            let missing = img.map_plane::<u8>(full, f.plane_count()).unwrap_err();
            assert_eq!(missing.kind(), ErrorKind::InvalidParameters);
        }
        // A patch of a 2x2-subsampled plane: dims in plane elements, rounded up; it must start on
        // the plane's grid.
        let img = Image::new(&ctx, 7, 5, ImageFormat::Iyuv).unwrap();
        let p = img.map_plane::<u8>(Rect::new(2, 2, 7, 5), 2).unwrap();
        assert_eq!((p.width(), p.height()), (3, 2));
        drop(p);
        assert_eq!(img.map_plane::<u8>(Rect::new(1, 2, 7, 5), 1).unwrap_err().kind(), ErrorKind::InvalidParameters);
        assert_eq!(img.map_plane::<u8>(Rect::new(1, 1, 7, 5), 0).unwrap().width(), 6, "the Y plane is not subsampled");
        // A 4:2:2 pixel patch may start anywhere: its elements are pixels.
        let img = Image::new(&ctx, 7, 5, ImageFormat::Uyvy).unwrap();
        assert_eq!(img.map_plane::<[u8; 2]>(Rect::new(3, 1, 6, 2), 0).unwrap().width(), 3);
        assert_eq!(Image::new(&ctx, 7, 5, ImageFormat::U8).unwrap().color_space(), ColorSpace::None);
    }

    /// ROIs start on the format's grid: even x and y for NV21 and IYUV, even x for UYVY and
    /// YUYV, anywhere for YUV4; an ROI writes its parent's pixels in every plane.
    #[test]
    fn yuv_rois_start_on_the_format_grid() {
        use crate::{Context, Image, Rect};
        let ctx = Context::new().unwrap();
        for f in YUV {
            let parent = Image::new(&ctx, 8, 6, f).unwrap();
            let (ax, ay) = f.roi_alignment();
            for (x, y) in [(1, 0), (0, 1), (1, 1), (2, 2), (3, 2), (2, 3)] {
                let r = parent.roi(Rect::new(x, y, 8, 6));
                if x % ax == 0 && y % ay == 0 {
                    assert_eq!(r.unwrap().format(), f);
                } else {
                    assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidParameters, "{f} at ({x}, {y})");
                }
            }
            let roi = parent.roi(Rect::new(2, 2, 8, 6)).unwrap();
            assert_eq!(roi.color_space(), parent.color_space());
            // An ROI of the ROI at (2, 2) again: (4, 4) in the parent.
            let sub = roi.roi(Rect::new(2, 2, 6, 4)).unwrap();
            for (plane, pl) in f.planes().iter().enumerate() {
                let (px, py) = (4 / pl.subsample_x, 4 / pl.subsample_y);
                let at = Rect::new(4, 4, 4 + pl.subsample_x, 4 + pl.subsample_y);
                if pl.bytes_per_element == 2 {
                    sub.copy_from(Rect::full(pl.subsample_x, pl.subsample_y), plane, &[[plane as u8 + 1, 0xA5]])
                        .unwrap();
                    let mut back = [[0u8; 2]];
                    parent.copy_to(at, plane, &mut back).unwrap();
                    assert_eq!(back, [[plane as u8 + 1, 0xA5]], "{f} plane {plane} element ({px}, {py})");
                } else {
                    sub.copy_from(Rect::full(pl.subsample_x, pl.subsample_y), plane, &[plane as u8 + 1]).unwrap();
                    let mut back = [0u8];
                    parent.copy_to(at, plane, &mut back).unwrap();
                    assert_eq!(back, [plane as u8 + 1], "{f} plane {plane} element ({px}, {py})");
                }
            }
        }
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
