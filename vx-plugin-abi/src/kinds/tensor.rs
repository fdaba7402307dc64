//! The Tensor kind on the module side: its wire meta, code and attribute codes (its view: `views/tensor.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_TENSOR`.
pub const CODE: u32 = 0x815;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_TENSOR_NUMBER_OF_DIMS` (`vx_size`).
    pub const TENSOR_NUMBER_OF_DIMS: u32 = 0x81500;
    /// `VX_TENSOR_DIMS` (`vx_size[]`, one per dimension).
    pub const TENSOR_DIMS: u32 = 0x81501;
    /// `VX_TENSOR_DATA_TYPE` (`vx_enum`).
    pub const TENSOR_DATA_TYPE: u32 = 0x81502;
    /// `VX_TENSOR_FIXED_POINT_POSITION` (`vx_int8`).
    pub const TENSOR_FIXED_POINT_POSITION: u32 = 0x81503;
}

/// A tensor. The meta on the wire ([`ObjectMeta::Tensor`](super::ObjectMeta::Tensor)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Dimensions used (≤ 6).
    pub num_dims: u32,
    /// Sizes, dimension 0 first (the first `num_dims` count).
    pub dims: [u64; 6],
    /// Element type ([`crate::wire::scalar_type`]).
    pub data_type: u32,
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    pub fixed_point_position: i8,
}
