//! The Pyramid kind on the module side: its wire meta, code and attribute codes (its view: `views/pyramid.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_PYRAMID`.
pub const CODE: u32 = 0x809;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_PYRAMID_LEVELS` (`vx_size`).
    pub const PYRAMID_LEVELS: u32 = 0x80900;
    /// `VX_PYRAMID_SCALE` (`vx_float32`).
    pub const PYRAMID_SCALE: u32 = 0x80901;
    /// `VX_PYRAMID_WIDTH` (`vx_uint32`).
    pub const PYRAMID_WIDTH: u32 = 0x80902;
    /// `VX_PYRAMID_HEIGHT` (`vx_uint32`).
    pub const PYRAMID_HEIGHT: u32 = 0x80903;
    /// `VX_PYRAMID_FORMAT` (`vx_df_image`).
    pub const PYRAMID_FORMAT: u32 = 0x80904;
}

/// A pyramid. The meta on the wire
/// ([`ObjectMeta::Pyramid`](super::ObjectMeta::Pyramid)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Levels.
    pub levels: u64,
    /// Scale between levels (0.5, or ORB's 0.8408964).
    pub scale: f32,
    /// Level 0's width.
    pub width: u32,
    /// Level 0's height.
    pub height: u32,
    /// FourCC.
    pub format: u32,
}
