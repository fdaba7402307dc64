//! The Convolution kind on the module side: its wire meta, code and attribute codes (its view: `views/convolution.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_CONVOLUTION`.
pub const CODE: u32 = 0x80C;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_CONVOLUTION_ROWS` (`vx_size`).
    pub const CONVOLUTION_ROWS: u32 = 0x80C00;
    /// `VX_CONVOLUTION_COLUMNS` (`vx_size`).
    pub const CONVOLUTION_COLUMNS: u32 = 0x80C01;
}

/// A convolution (S16 coefficients). The meta on the wire
/// ([`ObjectMeta::Convolution`](super::ObjectMeta::Convolution)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Columns.
    pub columns: u64,
    /// Rows.
    pub rows: u64,
    /// `VX_CONVOLUTION_SCALE` (ignored when setting an output's meta).
    pub scale: u32,
}
