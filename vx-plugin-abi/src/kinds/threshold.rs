//! The Threshold kind on the module side: its wire meta, code and attribute codes (its view: `views/threshold.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_THRESHOLD`.
pub const CODE: u32 = 0x80A;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_THRESHOLD_TYPE` (`vx_enum`).
    pub const THRESHOLD_TYPE: u32 = 0x80A00;
    /// `VX_THRESHOLD_INPUT_FORMAT` (`vx_df_image`).
    pub const THRESHOLD_INPUT_FORMAT: u32 = 0x80A07;
    /// `VX_THRESHOLD_OUTPUT_FORMAT` (`vx_df_image`).
    pub const THRESHOLD_OUTPUT_FORMAT: u32 = 0x80A08;
}

/// A threshold. The meta on the wire
/// ([`ObjectMeta::Threshold`](super::ObjectMeta::Threshold)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// [`crate::wire::threshold_type`].
    pub threshold_type: u32,
    /// Input image FourCC (0: any).
    pub input_format: u32,
    /// Output image FourCC (0: any).
    pub output_format: u32,
}

/// A threshold's values (`VX_THRESHOLD_THRESHOLD_VALUE`, `_LOWER`, `_UPPER`, `_TRUE_VALUE`,
/// `_FALSE_VALUE`), as 64-bit integers whatever the formats.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThresholdBits {
    /// The binary threshold's value.
    pub value: i64,
    /// The range threshold's lower bound.
    pub lower: i64,
    /// The range threshold's upper bound.
    pub upper: i64,
    /// Output where the test holds.
    pub true_value: i64,
    /// Output where it does not.
    pub false_value: i64,
}
