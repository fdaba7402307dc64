//! # vx-plugin-abi — what the vx-rs host and kernel modules share
//!
//! This crate is the kernel SDK's foundation. It holds only plain data types whose layout both
//! sides agree on: the OpenVX status codes ([`Status`]), rectangles, border modes, tile block
//! sizes and neighborhoods ([`geometry`]), and image formats ([`ImageFormat`]).
//!
//! It depends on nothing of ours except `vx-macros`, so a kernel module can depend on it without
//! ever linking the runtime (`vx-core`). The tile descriptor, the host vtable and the module root
//! descriptor arrive with the tiling and module issues.
#![forbid(unsafe_code)]

pub mod geometry;
pub mod image_format;
pub mod status;

pub use geometry::{BorderMode, Neighborhood, Rect, TileBlockSize};
pub use image_format::ImageFormat;
pub use status::Status;
