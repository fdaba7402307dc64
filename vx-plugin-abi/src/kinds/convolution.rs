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
    /// `VX_CONVOLUTION_SCALE` (`vx_uint32`, a power of two): OpenVX 1.2's `VX/vx_types.h` has
    /// `VX_CONVOLUTION_SCALE = VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONVOLUTION) + 0x2`, with
    /// `VX_ATTRIBUTE_BASE(vendor, object) = (vendor << 20) | (object << 8)` and `VX_ID_KHRONOS` 0.
    pub const CONVOLUTION_SCALE: u32 = 0x80C02;
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
    /// `VX_CONVOLUTION_SCALE`, a power of two. Setting an output's meta: the scale the output
    /// must have (a virtual output gets it, a real one is checked), 0 for any.
    pub scale: u32,
}
