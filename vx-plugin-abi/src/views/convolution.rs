//! The Convolution view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/convolution.rs`).

use crate::kinds::ObjectMeta;
use super::{data_view, dims};
use crate::kinds::convolution::{CODE, Wire};


data_view!(
    /// A convolution's S16 coefficients, row-major.
    Convolution<>, i16, CODE, |_m| Ok(())
);

dims!(Convolution {
    rows: usize => ObjectMeta::Convolution(Wire { rows, .. }) => *rows as usize,
    columns: usize => ObjectMeta::Convolution(Wire { columns, .. }) => *columns as usize,
    scale: u32 => ObjectMeta::Convolution(Wire { scale, .. }) => *scale
});
