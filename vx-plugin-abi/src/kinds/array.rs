//! The Array kind on the module side: its wire meta, code and attribute codes (its view: `views/array.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_ARRAY`.
pub const CODE: u32 = 0x80E;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_ARRAY_ITEMTYPE` (`vx_enum`).
    pub const ARRAY_ITEMTYPE: u32 = 0x80E00;
    /// `VX_ARRAY_CAPACITY` (`vx_size`).
    pub const ARRAY_CAPACITY: u32 = 0x80E02;
    /// `VX_ARRAY_ITEMSIZE` (`vx_size`; for user-struct items).
    pub const ARRAY_ITEMSIZE: u32 = 0x80E03;
}

/// An array. The meta on the wire ([`ObjectMeta::Array`](super::ObjectMeta::Array)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// A [`crate::wire::item_type`] code (0: not known yet).
    pub item_type: u32,
    /// Bytes per item.
    pub item_size: u64,
    /// Most items.
    pub capacity: u64,
    /// Items now (ignored when setting an output's meta).
    pub num_items: u64,
}
