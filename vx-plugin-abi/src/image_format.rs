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
}

/// One plane of a format: bytes per element and subsampling in x and y.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneInfo {
    /// Bytes of one element of the plane (an NV12 UV element is the pair U, V: 2 bytes).
    pub bytes_per_element: u32,
    /// Horizontal subsampling: plane width = ceil(image width / subsample_x).
    pub subsample_x: u32,
    /// Vertical subsampling: plane height = ceil(image height / subsample_y).
    pub subsample_y: u32,
}

impl ImageFormat {
    /// Every concrete (non-virtual) format.
    pub const CONCRETE: [ImageFormat; 8] = [
        ImageFormat::U8,
        ImageFormat::U16,
        ImageFormat::S16,
        ImageFormat::U32,
        ImageFormat::S32,
        ImageFormat::Rgb,
        ImageFormat::Rgbx,
        ImageFormat::Nv12,
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
        const NV12: [PlaneInfo; 2] = [p(1, 1, 1), p(2, 2, 2)];
        match self {
            ImageFormat::Virtual => &[],
            ImageFormat::U8 => &B1,
            ImageFormat::U16 | ImageFormat::S16 => &B2,
            ImageFormat::U32 | ImageFormat::S32 => &B4,
            ImageFormat::Rgb => &B3,
            ImageFormat::Rgbx => &B4,
            ImageFormat::Nv12 => &NV12,
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
}
