//! The RawImage kind on the module side (TIOVX's `tivx_raw_image`, `TI/tivx_ext_raw_image.h`): its
//! wire meta, code, attribute and pixel-container codes, and [`layout`], the one description of
//! where each exposure's rows lie that the host and the modules both use (its view:
//! `views/raw_image.rs`).
//!
//! A raw image is what a camera sensor reads out: 1 to 3 exposures of `width × height` pixels, each
//! pixel in a container of 8 bits, 16 bits or packed 12 bits (3 bytes per 2 pixels), with the
//! pixel's most significant bit at `msb`; `meta_height_before` and `meta_height_after` rows of
//! sensor meta data (as wide as a pixel row) around each exposure's pixels. The exposures are
//! either separate (one buffer each, one after the other) or line-interleaved (one buffer whose
//! lines hold each exposure's row in turn; every exposure has `format[0]`).
//!
//! The layout is TIOVX's (`source/framework/vx_raw_image.c`, `ownInitRawImage`): a line is the
//! row's bytes rounded up to [`LINE_ALIGN`] (`TIVX_DEFAULT_STRIDE_Y_ALIGN`); `stride_y` is one line,
//! times `num_exposures` when line-interleaved; a buffer is `stride_y × (meta_height_before +
//! height + meta_height_after)` bytes, the meta rows before first, then the pixels, then the meta
//! rows after. In a line-interleaved buffer exposure `e`'s rows start `e` lines into each
//! `stride_y`. All buffers are one run of bytes: exposure 0's buffer, then exposure 1's, ….

use abi_stable::StableAbi;

/// `TIVX_TYPE_RAW_IMAGE`.
pub const CODE: u32 = 0x817;

/// `TIVX_RAW_IMAGE_MAX_EXPOSURES`.
pub const MAX_EXPOSURES: usize = 3;

/// `TIVX_DEFAULT_STRIDE_Y_ALIGN`: each line's bytes are a multiple of this.
pub const LINE_ALIGN: u64 = 16;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]):
/// `VX_ATTRIBUTE_BASE(VX_ID_TI, TIVX_TYPE_RAW_IMAGE) + n` = `(1 << 20) | (0x817 << 8) | n`.
pub mod attribute {
    /// `TIVX_RAW_IMAGE_WIDTH` (`vx_uint32`).
    pub const RAW_IMAGE_WIDTH: u32 = 0x181700;
    /// `TIVX_RAW_IMAGE_HEIGHT` (`vx_uint32`).
    pub const RAW_IMAGE_HEIGHT: u32 = 0x181701;
    /// `TIVX_RAW_IMAGE_NUM_EXPOSURES` (`vx_uint32`).
    pub const RAW_IMAGE_NUM_EXPOSURES: u32 = 0x181702;
    /// `TIVX_RAW_IMAGE_LINE_INTERLEAVED` (`vx_bool`, 4 bytes).
    pub const RAW_IMAGE_LINE_INTERLEAVED: u32 = 0x181703;
    /// `TIVX_RAW_IMAGE_FORMAT` (`tivx_raw_image_format_t[3]`: `pixel_container`, `msb` as `vx_uint32`s).
    pub const RAW_IMAGE_FORMAT: u32 = 0x181704;
    /// `TIVX_RAW_IMAGE_META_HEIGHT_BEFORE` (`vx_uint32`).
    pub const RAW_IMAGE_META_HEIGHT_BEFORE: u32 = 0x181705;
    /// `TIVX_RAW_IMAGE_META_HEIGHT_AFTER` (`vx_uint32`).
    pub const RAW_IMAGE_META_HEIGHT_AFTER: u32 = 0x181706;
}

/// `tivx_raw_image_pixel_container_e`: `VX_ENUM_BASE(VX_ID_TI, TIVX_ENUM_RAW_IMAGE_PIXEL_CONTAINER) + n`
/// = `(1 << 20) | (1 << 12) | n`.
pub mod pixel_container {
    /// `TIVX_RAW_IMAGE_16_BIT`: two bytes per pixel.
    pub const BIT16: u32 = 0x101000;
    /// `TIVX_RAW_IMAGE_8_BIT`: one byte per pixel.
    pub const BIT8: u32 = 0x101001;
    /// `TIVX_RAW_IMAGE_P12_BIT`: packed 12 bits, three bytes per two pixels.
    pub const P12: u32 = 0x101002;

    /// The container's name in messages (TIOVX's).
    pub fn name(code: u32) -> &'static str {
        match code {
            BIT16 => "TIVX_RAW_IMAGE_16_BIT",
            BIT8 => "TIVX_RAW_IMAGE_8_BIT",
            P12 => "TIVX_RAW_IMAGE_P12_BIT",
            _ => "an unknown pixel container",
        }
    }
}

/// `tivx_raw_image_format_t`: one exposure's pixel container and most significant bit.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawFormat {
    /// [`pixel_container`] code.
    pub pixel_container: u32,
    /// The pixel's most significant bit in its container.
    pub msb: u32,
}

/// A raw image (`tivx_raw_image_create_params_t`). The meta on the wire
/// ([`ObjectMeta::RawImage`](super::ObjectMeta::RawImage)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Pixels per row.
    pub width: u32,
    /// Pixel rows (the meta rows aside).
    pub height: u32,
    /// Exposures, 1 to [`MAX_EXPOSURES`].
    pub num_exposures: u32,
    /// 1 when the exposures are interleaved line by line in one buffer.
    pub line_interleaved: u32,
    /// Each exposure's format (the first `num_exposures` count; only the first when line-interleaved).
    pub format: [RawFormat; MAX_EXPOSURES],
    /// Meta rows before the pixels.
    pub meta_height_before: u32,
    /// Meta rows after the pixels.
    pub meta_height_after: u32,
}

/// Rows of bytes in the object's memory: row `r` is `row_bytes` bytes from `offset + r × stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Region {
    /// Where row 0 starts, in bytes from the object's first byte.
    pub offset: u64,
    /// Bytes from one row to the next (`stride_y`).
    pub stride: u64,
    /// Rows.
    pub rows: u64,
    /// Bytes of each row that hold data.
    pub row_bytes: u64,
}

impl Region {
    /// The bytes of row `r` (`None` outside the region).
    pub fn row(&self, r: u64) -> Option<std::ops::Range<usize>> {
        if r >= self.rows {
            return None;
        }
        let start = self.offset + r * self.stride;
        Some(start as usize..(start + self.row_bytes) as usize)
    }
}

/// Where one exposure lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExposureLayout {
    /// Its [`pixel_container`].
    pub pixel_container: u32,
    /// The pixel rows.
    pub pixels: Region,
    /// The meta rows before the pixels (no rows when there are none).
    pub meta_before: Region,
    /// The meta rows after the pixels.
    pub meta_after: Region,
}

/// Where every exposure of a raw image lies ([`layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Each exposure (the first `num_exposures` count).
    pub exposures: [ExposureLayout; MAX_EXPOSURES],
    /// Exposures.
    pub num_exposures: usize,
    /// The object's bytes.
    pub total: u64,
}

impl Layout {
    /// Exposure `e`, if there is one.
    pub fn exposure(&self, e: usize) -> Option<&ExposureLayout> {
        self.exposures[..self.num_exposures].get(e)
    }
}

/// Why a raw image's parameters are refused (TIOVX's `ownIsValidCreateParams` names, and the size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutError {
    /// `width` odd or below 2, or `height` 0.
    WidthHeight,
    /// `num_exposures` not in `1..=3`.
    NumExposures,
    /// Exposure `.0`'s `pixel_container` is none of [`pixel_container`].
    PixelContainer(usize),
    /// Exposure `.0`'s `msb` is above 15 or beyond its container (7 for 8 bits, 11 for P12).
    Msb(usize),
    /// The bytes overflow the addressable memory.
    TooLarge,
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::WidthHeight => f.write_str("invalid width and/or height (width even and at least 2, height at least 1)"),
            LayoutError::NumExposures => f.write_str("invalid num_exposures (1 to 3)"),
            LayoutError::PixelContainer(e) => write!(f, "invalid pixel_container for exposure index {e}"),
            LayoutError::Msb(e) => write!(f, "invalid msb for exposure index {e} (at most 15, and inside its container)"),
            LayoutError::TooLarge => f.write_str("the raw image overflows the addressable memory"),
        }
    }
}

/// Bytes of one row of `width` pixels in `container` (`None`: an unknown container).
pub fn row_bytes(container: u32, width: u64) -> Option<u64> {
    match container {
        pixel_container::BIT8 => Some(width),
        pixel_container::BIT16 => width.checked_mul(2),
        pixel_container::P12 => width.checked_mul(12).map(|b| b.div_ceil(8)),
        _ => None,
    }
}

/// The highest `msb` a container holds.
fn max_msb(container: u32) -> u32 {
    match container {
        pixel_container::BIT8 => 7,
        pixel_container::P12 => 11,
        _ => 15,
    }
}

/// Check a raw image's parameters (TIOVX's rules) and say where each exposure lies.
pub fn layout(w: &Wire) -> Result<Layout, LayoutError> {
    if w.width < 2 || w.height < 1 || w.width % 2 == 1 {
        return Err(LayoutError::WidthHeight);
    }
    if w.num_exposures < 1 || w.num_exposures as usize > MAX_EXPOSURES {
        return Err(LayoutError::NumExposures);
    }
    let n = w.num_exposures as usize;
    let interleaved = w.line_interleaved != 0;
    let formats = if interleaved { 1 } else { n };
    for (e, f) in w.format[..formats].iter().enumerate() {
        if row_bytes(f.pixel_container, 2).is_none() {
            return Err(LayoutError::PixelContainer(e));
        }
        if f.msb > 15 || f.msb > max_msb(f.pixel_container) {
            return Err(LayoutError::Msb(e));
        }
    }
    let rows = u64::from(w.meta_height_before) + u64::from(w.height) + u64::from(w.meta_height_after);
    let mut exposures = [ExposureLayout::default(); MAX_EXPOSURES];
    let mut total: u64 = 0;
    for (e, x) in exposures[..n].iter_mut().enumerate() {
        let container = w.format[if interleaved { 0 } else { e }].pixel_container;
        let bytes = row_bytes(container, u64::from(w.width)).ok_or(LayoutError::PixelContainer(e))?;
        let line = bytes.checked_next_multiple_of(LINE_ALIGN).ok_or(LayoutError::TooLarge)?;
        let (stride, start) = if interleaved {
            // One buffer: each stride holds every exposure's line in turn.
            (line * n as u64, e as u64 * line)
        } else {
            // One buffer each, one after the other.
            let start = total;
            total = line.checked_mul(rows).and_then(|b| b.checked_add(total)).ok_or(LayoutError::TooLarge)?;
            (line, start)
        };
        let region = |first: u64, count: u32| Region {
            offset: start + first * stride,
            stride,
            rows: u64::from(count),
            row_bytes: bytes,
        };
        *x = ExposureLayout {
            pixel_container: container,
            meta_before: region(0, w.meta_height_before),
            pixels: region(u64::from(w.meta_height_before), w.height),
            meta_after: region(u64::from(w.meta_height_before) + u64::from(w.height), w.meta_height_after),
        };
        if interleaved {
            total = stride.checked_mul(rows).ok_or(LayoutError::TooLarge)?;
        }
    }
    if total > isize::MAX as u64 {
        return Err(LayoutError::TooLarge);
    }
    Ok(Layout { exposures, num_exposures: n, total })
}

/// Pixel `x` of a packed 12-bit row (TIOVX's packing: pixel pair `(p0, p1)` in bytes
/// `p0[7:0]`, `p1[3:0] p0[11:8]`, `p1[11:4]`; pixel `x` starts `12·x/8` bytes in). `None` past the row.
pub fn p12_get(row: &[u8], x: usize) -> Option<u16> {
    let i = (x / 2).checked_mul(3)?;
    let b = row.get(i..i.checked_add(3)?)?;
    Some(if x.is_multiple_of(2) {
        u16::from(b[0]) | (u16::from(b[1] & 0x0F) << 8)
    } else {
        u16::from(b[1] >> 4) | (u16::from(b[2]) << 4)
    })
}

/// Write pixel `x` (its low 12 bits) of a packed 12-bit row; false past the row.
pub fn p12_set(row: &mut [u8], x: usize, v: u16) -> bool {
    let Some(b) = (x / 2).checked_mul(3).and_then(|i| row.get_mut(i..i.checked_add(3)?)) else { return false };
    if x.is_multiple_of(2) {
        b[0] = v as u8;
        b[1] = (b[1] & 0xF0) | ((v >> 8) as u8 & 0x0F);
    } else {
        b[1] = (b[1] & 0x0F) | ((v as u8 & 0x0F) << 4);
        b[2] = (v >> 4) as u8;
    }
    true
}

/// A raw image's pixel container as a view's type parameter: `u8` (8 bits), `u16` (16 bits) or
/// [`P12`] (packed 12 bits: rows of bytes, read with [`p12_get`]).
pub trait RawContainer: 'static {
    /// Its `kinds::raw_image::pixel_container` code.
    const CONTAINER: u32;
    /// What a row is a slice of.
    type Unit: Copy + 'static;
}

impl RawContainer for u8 {
    const CONTAINER: u32 = pixel_container::BIT8;
    type Unit = u8;
}

impl RawContainer for u16 {
    const CONTAINER: u32 = pixel_container::BIT16;
    type Unit = u16;
}

/// The packed 12-bit container (`TIVX_RAW_IMAGE_P12_BIT`): rows are bytes, 3 per 2 pixels.
pub struct P12;

impl RawContainer for P12 {
    const CONTAINER: u32 = pixel_container::P12;
    type Unit = u8;
}
