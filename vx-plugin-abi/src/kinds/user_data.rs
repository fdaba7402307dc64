//! The UserDataObject kind on the module side: its wire meta, code and attribute codes (its view: `views/user_data.rs`).

use abi_stable::StableAbi;
use abi_stable::std_types::RString;

/// `VX_TYPE_USER_DATA_OBJECT`.
pub const CODE: u32 = 0x816;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_USER_DATA_OBJECT_NAME` (`vx_char[]`, UTF-8, no terminator needed).
    pub const USER_DATA_OBJECT_NAME: u32 = 0x81600;
    /// `VX_USER_DATA_OBJECT_SIZE` (`vx_size`).
    pub const USER_DATA_OBJECT_SIZE: u32 = 0x81601;
}

/// A user data object. The meta on the wire
/// ([`ObjectMeta::UserDataObject`](super::ObjectMeta::UserDataObject)).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, PartialEq)]
pub struct Wire {
    /// `VX_USER_DATA_OBJECT_NAME` (may be empty).
    pub type_name: RString,
    /// Bytes.
    pub size: u64,
}
