//! The Matrix kind on the module side: its wire meta, code and attribute codes (its view: `views/matrix.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_MATRIX`.
pub const CODE: u32 = 0x80B;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_MATRIX_TYPE` (`vx_enum`).
    pub const MATRIX_TYPE: u32 = 0x80B00;
    /// `VX_MATRIX_ROWS` (`vx_size`).
    pub const MATRIX_ROWS: u32 = 0x80B01;
    /// `VX_MATRIX_COLUMNS` (`vx_size`).
    pub const MATRIX_COLUMNS: u32 = 0x80B02;
}

/// A matrix. The meta on the wire ([`ObjectMeta::Matrix`](super::ObjectMeta::Matrix)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Element type ([`crate::wire::scalar_type`]).
    pub element: u32,
    /// Columns.
    pub columns: u64,
    /// Rows.
    pub rows: u64,
    /// `VX_MATRIX_ORIGIN`: column.
    pub origin_x: u64,
    /// `VX_MATRIX_ORIGIN`: row.
    pub origin_y: u64,
    /// `VX_MATRIX_PATTERN` ([`crate::wire::pattern`]).
    pub pattern: u32,
}
