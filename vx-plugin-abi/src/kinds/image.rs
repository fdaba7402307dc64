//! The Image kind on the module side: its wire meta, code and attribute codes (its view: `views/image.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_IMAGE`.
pub const CODE: u32 = 0x80F;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_IMAGE_WIDTH` (`vx_uint32`).
    pub const IMAGE_WIDTH: u32 = 0x80F00;
    /// `VX_IMAGE_HEIGHT` (`vx_uint32`).
    pub const IMAGE_HEIGHT: u32 = 0x80F01;
    /// `VX_IMAGE_FORMAT` (`vx_df_image`, 4 bytes).
    pub const IMAGE_FORMAT: u32 = 0x80F02;
}

/// An image (`VX_IMAGE_FORMAT` FourCC, width, height). The meta on the wire
/// ([`ObjectMeta::Image`](super::ObjectMeta::Image)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// FourCC.
    pub format: u32,
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
}
