//! The Remap kind on the module side: its wire meta, code and attribute codes (its view: `views/remap.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_REMAP`.
pub const CODE: u32 = 0x810;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_REMAP_SOURCE_WIDTH` (`vx_uint32`).
    pub const REMAP_SOURCE_WIDTH: u32 = 0x81000;
    /// `VX_REMAP_SOURCE_HEIGHT` (`vx_uint32`).
    pub const REMAP_SOURCE_HEIGHT: u32 = 0x81001;
    /// `VX_REMAP_DESTINATION_WIDTH` (`vx_uint32`).
    pub const REMAP_DESTINATION_WIDTH: u32 = 0x81002;
    /// `VX_REMAP_DESTINATION_HEIGHT` (`vx_uint32`).
    pub const REMAP_DESTINATION_HEIGHT: u32 = 0x81003;
}

/// A remap. The meta on the wire ([`ObjectMeta::Remap`](super::ObjectMeta::Remap)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Source width.
    pub source_width: u32,
    /// Source height.
    pub source_height: u32,
    /// Destination width.
    pub destination_width: u32,
    /// Destination height.
    pub destination_height: u32,
}
