//! Image formats (`vx_df_image_e`) with their FourCC codes and plane layout.

use std::fmt;

const fn fourcc(s: &[u8; 4]) -> u32 {
    (s[0] as u32) | ((s[1] as u32) << 8) | ((s[2] as u32) << 16) | ((s[3] as u32) << 24)
}

/// The image formats vx-rs supports. `Virtual` is the "not yet known" format of a virtual image
/// created with partial meta data; verification replaces it with the producer's format.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    /// `VX_DF_IMAGE_VIRT`
    Virtual = fourcc(b"VIRT"),
    /// `VX_DF_IMAGE_U8`
    U8 = fourcc(b"U008"),
    /// `VX_DF_IMAGE_U16`
    U16 = fourcc(b"U016"),
    /// `VX_DF_IMAGE_S16`
    S16 = fourcc(b"S016"),
    /// `VX_DF_IMAGE_U32`
    U32 = fourcc(b"U032"),
    /// `VX_DF_IMAGE_S32`
    S32 = fourcc(b"S032"),
    /// `VX_DF_IMAGE_RGB`: 3 interleaved bytes per pixel.
    Rgb = fourcc(b"RGB2"),
    /// `VX_DF_IMAGE_RGBX`: 4 interleaved bytes per pixel.
    Rgbx = fourcc(b"RGBA"),
    /// `VX_DF_IMAGE_NV12`: a full-resolution Y plane and a half-resolution interleaved UV plane.
    Nv12 = fourcc(b"NV12"),
    /// `VX_DF_IMAGE_NV21`: as NV12 with the chroma pairs in V, U order.
    Nv21 = fourcc(b"NV21"),
    /// `VX_DF_IMAGE_UYVY`: one plane of 4:2:2 interleaved U0 Y0 V0 Y1 bytes; a pixel is 2 bytes
    /// (U Y for even x, V Y for odd x).
    Uyvy = fourcc(b"UYVY"),
    /// `VX_DF_IMAGE_YUYV`: one plane of 4:2:2 interleaved Y0 U0 Y1 V0 bytes; a pixel is 2 bytes
    /// (Y U for even x, Y V for odd x).
    Yuyv = fourcc(b"YUYV"),
    /// `VX_DF_IMAGE_IYUV`: three planes, a full-resolution Y and half-resolution (2×2) U and V.
    Iyuv = fourcc(b"IYUV"),
    /// `VX_DF_IMAGE_YUV4`: three full-resolution planes Y, U and V.
    Yuv4 = fourcc(b"YUV4"),
}

/// One plane of a format: bytes per element and subsampling in x and y.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneInfo {
    /// Bytes of one element of the plane (an NV12 UV element is the pair U, V: 2 bytes; a UYVY
    /// or YUYV element is one pixel's 2 bytes).
    pub bytes_per_element: u32,
    /// Horizontal subsampling: plane width = ceil(image width / subsample_x).
    pub subsample_x: u32,
    /// Vertical subsampling: plane height = ceil(image height / subsample_y).
    pub subsample_y: u32,
}

impl ImageFormat {
    /// Every concrete (non-virtual) format.
    pub const CONCRETE: [ImageFormat; 13] = [
        ImageFormat::U8,
        ImageFormat::U16,
        ImageFormat::S16,
        ImageFormat::U32,
        ImageFormat::S32,
        ImageFormat::Rgb,
        ImageFormat::Rgbx,
        ImageFormat::Nv12,
        ImageFormat::Nv21,
        ImageFormat::Uyvy,
        ImageFormat::Yuyv,
        ImageFormat::Iyuv,
        ImageFormat::Yuv4,
    ];

    /// The FourCC value of `vx_df_image`.
    pub const fn fourcc(self) -> u32 {
        self as u32
    }

    /// The format with this FourCC, if vx-rs supports it.
    pub fn from_fourcc(code: u32) -> Option<ImageFormat> {
        if code == ImageFormat::Virtual.fourcc() {
            return Some(ImageFormat::Virtual);
        }
        ImageFormat::CONCRETE.iter().copied().find(|f| f.fourcc() == code)
    }

    /// The planes of the format; empty for `Virtual`.
    pub const fn planes(self) -> &'static [PlaneInfo] {
        const fn p(b: u32, sx: u32, sy: u32) -> PlaneInfo {
            PlaneInfo { bytes_per_element: b, subsample_x: sx, subsample_y: sy }
        }
        const B1: [PlaneInfo; 1] = [p(1, 1, 1)];
        const B2: [PlaneInfo; 1] = [p(2, 1, 1)];
        const B3: [PlaneInfo; 1] = [p(3, 1, 1)];
        const B4: [PlaneInfo; 1] = [p(4, 1, 1)];
        // NV12 and NV21: Y, then the interleaved chroma pairs (UV or VU) subsampled 2×2.
        const NV12: [PlaneInfo; 2] = [p(1, 1, 1), p(2, 2, 2)];
        const IYUV: [PlaneInfo; 3] = [p(1, 1, 1), p(1, 2, 2), p(1, 2, 2)];
        const YUV4: [PlaneInfo; 3] = [p(1, 1, 1), p(1, 1, 1), p(1, 1, 1)];
        match self {
            ImageFormat::Virtual => &[],
            ImageFormat::U8 => &B1,
            ImageFormat::U16 | ImageFormat::S16 | ImageFormat::Uyvy | ImageFormat::Yuyv => &B2,
            ImageFormat::U32 | ImageFormat::S32 => &B4,
            ImageFormat::Rgb => &B3,
            ImageFormat::Rgbx => &B4,
            ImageFormat::Nv12 | ImageFormat::Nv21 => &NV12,
            ImageFormat::Iyuv => &IYUV,
            ImageFormat::Yuv4 => &YUV4,
        }
    }

    /// Number of planes (0 for `Virtual`).
    pub const fn plane_count(self) -> usize {
        self.planes().len()
    }

    /// True for formats with more than one plane.
    pub const fn is_multi_plane(self) -> bool {
        self.plane_count() > 1
    }

    /// True for the YUV formats (NV12, NV21, UYVY, YUYV, IYUV, YUV4): those with a color space.
    pub const fn is_yuv(self) -> bool {
        matches!(
            self,
            ImageFormat::Nv12
                | ImageFormat::Nv21
                | ImageFormat::Uyvy
                | ImageFormat::Yuyv
                | ImageFormat::Iyuv
                | ImageFormat::Yuv4
        )
    }

    /// The grid `(x, y)` a sub-image (an ROI) must start on, so that its pixel (0, 0) is a
    /// pixel (0, 0) of the format: the largest subsampling of its planes, and 2 in x for the
    /// 4:2:2 interleaved formats (UYVY, YUYV), whose U and V span a pair of pixels.
    pub const fn roi_alignment(self) -> (u32, u32) {
        match self {
            ImageFormat::Nv12 | ImageFormat::Nv21 | ImageFormat::Iyuv => (2, 2),
            ImageFormat::Uyvy | ImageFormat::Yuyv => (2, 1),
            _ => (1, 1),
        }
    }
}

impl fmt::Display for ImageFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ImageFormat::Virtual => "VIRT",
            ImageFormat::U8 => "U8",
            ImageFormat::U16 => "U16",
            ImageFormat::S16 => "S16",
            ImageFormat::U32 => "U32",
            ImageFormat::S32 => "S32",
            ImageFormat::Rgb => "RGB",
            ImageFormat::Rgbx => "RGBX",
            ImageFormat::Nv12 => "NV12",
            ImageFormat::Nv21 => "NV21",
            ImageFormat::Uyvy => "UYVY",
            ImageFormat::Yuyv => "YUYV",
            ImageFormat::Iyuv => "IYUV",
            ImageFormat::Yuv4 => "YUV4",
        };
        f.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourcc_values_match_vx_df_image() {
        // VX_DF_IMAGE(a,b,c,d) = a | b<<8 | c<<16 | d<<24 in vx_types.h.
        assert_eq!(ImageFormat::U8.fourcc(), 0x3830_3055);
        assert_eq!(ImageFormat::Nv12.fourcc(), 0x3231_564E);
        assert_eq!(ImageFormat::Virtual.fourcc(), 0x5452_4956);
        for f in ImageFormat::CONCRETE {
            assert_eq!(ImageFormat::from_fourcc(f.fourcc()), Some(f));
        }
        assert!(ImageFormat::Nv12.is_multi_plane());
        assert!(!ImageFormat::Rgb.is_multi_plane());
    }

    /// The YUV formats beyond NV12: their FourCCs (the `vx_df_image_e` values of vx_types.h) and
    /// plane tables, pinned.
    #[test]
    fn yuv_formats_are_pinned() {
        let p = |b, sx, sy| PlaneInfo { bytes_per_element: b, subsample_x: sx, subsample_y: sy };
        // (format, FourCC, name, planes, ROI grid).
        type Row<'a> = (ImageFormat, u32, &'a str, &'a [PlaneInfo], (u32, u32));
        let table: [Row<'_>; 6] = [
            (ImageFormat::Nv12, 0x3231_564E, "NV12", &[p(1, 1, 1), p(2, 2, 2)], (2, 2)),
            (ImageFormat::Nv21, 825_382_478, "NV21", &[p(1, 1, 1), p(2, 2, 2)], (2, 2)),
            (ImageFormat::Uyvy, 1_498_831_189, "UYVY", &[p(2, 1, 1)], (2, 1)),
            (ImageFormat::Yuyv, 1_448_695_129, "YUYV", &[p(2, 1, 1)], (2, 1)),
            (ImageFormat::Iyuv, 1_448_433_993, "IYUV", &[p(1, 1, 1), p(1, 2, 2), p(1, 2, 2)], (2, 2)),
            (ImageFormat::Yuv4, 878_073_177, "YUV4", &[p(1, 1, 1), p(1, 1, 1), p(1, 1, 1)], (1, 1)),
        ];
        for (f, code, name, planes, align) in table {
            assert_eq!(f.fourcc(), code, "{name}");
            assert_eq!(ImageFormat::from_fourcc(code), Some(f));
            assert_eq!(f.to_string(), name);
            assert_eq!(f.planes(), planes, "{name}");
            assert_eq!(f.is_multi_plane(), planes.len() > 1);
            assert_eq!(f.roi_alignment(), align, "{name}");
            assert!(f.is_yuv(), "{name}");
            assert!(ImageFormat::CONCRETE.contains(&f));
        }
        assert_eq!(ImageFormat::Nv21.fourcc().to_le_bytes(), *b"NV21");
        assert_eq!(ImageFormat::Yuv4.fourcc().to_le_bytes(), *b"YUV4");
        for f in [ImageFormat::U8, ImageFormat::S16, ImageFormat::Rgb, ImageFormat::Rgbx, ImageFormat::Virtual] {
            assert!(!f.is_yuv());
            assert_eq!(f.roi_alignment(), (1, 1));
        }
        // An ROI's grid holds every plane's subsampling grid.
        for f in ImageFormat::CONCRETE {
            let (ax, ay) = f.roi_alignment();
            for pl in f.planes() {
                assert!(ax.is_multiple_of(pl.subsample_x) && ay.is_multiple_of(pl.subsample_y), "{f}");
            }
        }
        // U1 (1 bit per pixel) is still not a vx-rs format.
        assert_eq!(ImageFormat::from_fourcc(fourcc(b"U001")), None);
    }
}
