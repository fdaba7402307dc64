//! The Lut kind on the module side: its wire meta, code and attribute codes (its view: `views/lut.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_LUT`.
pub const CODE: u32 = 0x807;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_LUT_TYPE` (`vx_enum`).
    pub const LUT_TYPE: u32 = 0x80700;
    /// `VX_LUT_COUNT` (`vx_size`).
    pub const LUT_COUNT: u32 = 0x80701;
}

/// A LUT. The meta on the wire ([`ObjectMeta::Lut`](super::ObjectMeta::Lut)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// `VX_LUT_TYPE` (U8 or S16).
    pub element: u32,
    /// Entries.
    pub count: u64,
    /// `VX_LUT_OFFSET`: the entry of input value 0.
    pub offset: u32,
}
