//! The Distribution kind on the module side: its wire meta, code and attribute codes (its view: `views/distribution.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_DISTRIBUTION`.
pub const CODE: u32 = 0x808;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_DISTRIBUTION_OFFSET` (`vx_int32`).
    pub const DISTRIBUTION_OFFSET: u32 = 0x80801;
    /// `VX_DISTRIBUTION_RANGE` (`vx_uint32`).
    pub const DISTRIBUTION_RANGE: u32 = 0x80802;
    /// `VX_DISTRIBUTION_BINS` (`vx_size`).
    pub const DISTRIBUTION_BINS: u32 = 0x80803;
}

/// A distribution (U32 counts). The meta on the wire
/// ([`ObjectMeta::Distribution`](super::ObjectMeta::Distribution)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Bins.
    pub bins: u64,
    /// The first value counted.
    pub offset: i32,
    /// How many values are counted.
    pub range: u32,
    /// `range / bins`.
    pub window: u32,
}
