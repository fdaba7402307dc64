//! The Distribution view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/distribution.rs`).

use crate::kinds::ObjectMeta;
use super::{data_view, dims};
use crate::kinds::distribution::{CODE, Wire};


data_view!(
    /// A distribution's U32 counts.
    Distribution<>, u32, CODE, |_m| Ok(())
);

dims!(Distribution {
    bins: usize => ObjectMeta::Distribution(Wire { bins, .. }) => *bins as usize,
    offset: i32 => ObjectMeta::Distribution(Wire { offset, .. }) => *offset,
    range: u32 => ObjectMeta::Distribution(Wire { range, .. }) => *range,
    window: u32 => ObjectMeta::Distribution(Wire { window, .. }) => *window
});
