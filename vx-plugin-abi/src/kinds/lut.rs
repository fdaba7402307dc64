//! The Lut kind on the module side: its wire meta, code, attribute codes and view.


use abi_stable::StableAbi;

use super::ObjectMeta;
use super::view::{Element, data_view, element_check};

/// `VX_TYPE_LUT`.
pub const CODE: u32 = 0x807;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_LUT_TYPE` (`vx_enum`).
    pub const LUT_TYPE: u32 = 0x80700;
    /// `VX_LUT_COUNT` (`vx_size`).
    pub const LUT_COUNT: u32 = 0x80701;
}

/// A LUT. The meta on the wire ([`ObjectMeta::Lut`]).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// `VX_LUT_TYPE` (U8 or S16).
    pub element: u32,
    /// Entries.
    pub count: u64,
    /// `VX_LUT_OFFSET`: the entry of input value 0.
    pub offset: u32,
}


data_view!(
    /// A LUT of `T` (`u8` or `i16`).
    Lut<T: Element>, T, CODE, |m| match m {
        ObjectMeta::Lut(Wire { element, .. }) => element_check::<T>("LUT", *element),
        _ => Ok(()),
    }
);

impl<T: Element> Lut<'_, T> {
    /// `VX_LUT_OFFSET`: the entry of input value 0.
    pub fn offset(&self) -> usize {
        match &self.meta {
            ObjectMeta::Lut(Wire { offset, .. }) => *offset as usize,
            _ => unreachable!("checked at map"),
        }
    }
}

