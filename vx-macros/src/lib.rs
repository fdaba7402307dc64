//! # vx-macros — `#[tiling_kernel]` and `#[user_kernel]`
//!
//! The procedural macros that turn an annotated Rust function into a registered kernel (validator,
//! parameter signature, `extern "C"` trampolines, registration record). They arrive with issue 5;
//! until then this crate exports nothing. It exists now so the workspace layout of `DESIGN.md` is
//! in place and `vx-plugin-abi` can re-export the macros without a layout change.
