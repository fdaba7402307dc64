//! The Convolution kind on the module side: its wire meta, code, attribute codes and view.


use abi_stable::StableAbi;

use super::ObjectMeta;
use super::view::{data_view, dims};

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
/// ([`ObjectMeta::Convolution`]).
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


data_view!(
    /// A convolution's S16 coefficients, row-major.
    Convolution<>, i16, CODE, |_m| Ok(())
);

dims!(Convolution {
    rows: usize => ObjectMeta::Convolution(Wire { rows, .. }) => *rows as usize,
    columns: usize => ObjectMeta::Convolution(Wire { columns, .. }) => *columns as usize,
    scale: u32 => ObjectMeta::Convolution(Wire { scale, .. }) => *scale
});
