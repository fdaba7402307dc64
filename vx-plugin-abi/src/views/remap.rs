//! The Remap view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/remap.rs`).

use super::data_view;
use crate::kinds::remap::{CODE};


data_view!(
    /// A remap's destination points `[x, y]` (source coordinates), row-major.
    Remap<>, [f32; 2], CODE, |_m| Ok(())
);
