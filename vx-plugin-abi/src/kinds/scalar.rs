//! The Scalar kind on the module side: its wire meta, code and attribute codes (its view: `views/scalar.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_SCALAR`.
pub const CODE: u32 = 0x80D;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_SCALAR_TYPE` (`vx_enum`).
    pub const SCALAR_TYPE: u32 = 0x80D00;
}

/// A scalar and its value now (validators may read input scalars, as `vxCopyScalar` allows). The
/// meta on the wire ([`ObjectMeta::Scalar`](super::ObjectMeta::Scalar)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// A [`crate::wire::scalar_type`] code.
    pub scalar_type: u32,
    /// The value (ignored when setting an output's meta).
    pub value: ScalarBits,
}

/// A scalar value across the boundary.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalarBits {
    /// A [`crate::wire::scalar_type`] code.
    pub type_code: u32,
    /// The value's bytes in native order, at the start.
    pub bytes: [u8; 8],
}
