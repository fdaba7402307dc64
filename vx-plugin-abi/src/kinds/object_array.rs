//! The ObjectArray kind on the module side: its wire meta, code and attribute codes (its view: `views/object_array.rs`).

use abi_stable::StableAbi;

/// `VX_TYPE_OBJECT_ARRAY`.
pub const CODE: u32 = 0x813;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_OBJECT_ARRAY_ITEMTYPE` (`vx_enum`).
    pub const OBJECT_ARRAY_ITEMTYPE: u32 = 0x81300;
    /// `VX_OBJECT_ARRAY_NUMITEMS` (`vx_size`).
    pub const OBJECT_ARRAY_NUMITEMS: u32 = 0x81301;
}

/// An object array. The meta on the wire
/// ([`ObjectMeta::ObjectArray`](super::ObjectMeta::ObjectArray)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// The items' [`crate::wire::data_type`].
    pub item_type: u32,
    /// Items.
    pub count: u64,
}
