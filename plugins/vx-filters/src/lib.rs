//! `vx_filters`: image filters as a kernel module, written only with `#[tiling_kernel]` and
//! `vx_module!`.
//!
//! 3×3 filters take border `Self_`: fast functions work on row slices in the image interior (the
//! compiler vectorizes the inner loops), flexible functions handle the image edges with OpenCV's
//! default border (reflect-101: `… 2 1 | 0 1 2 … w-2 w-1 | w-2 w-3 …`), so results match OpenCV
//! everywhere. Point operations use 16×1 blocks with a flexible function for the ragged edge.

mod border;
mod filters3x3;
mod point;
mod simd;

vx_plugin_abi::vx_module!(name = "vx_filters");
