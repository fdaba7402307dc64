//! The Lut view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/lut.rs`).

use crate::kinds::ObjectMeta;
use super::{Element, data_view, element_check};
use crate::kinds::lut::{CODE, Wire};


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

