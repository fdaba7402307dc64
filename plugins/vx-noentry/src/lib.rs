//! A shared library that is not a vx-rs module: it exports a function but no root descriptor.
//!
//! With the feature `kernels` it also defines kernels — in `kernels.rs` and its submodule — but
//! still no `vx_module!`: the kernel macros refuse to compile that, once, at the first kernel.

#[cfg(feature = "kernels")]
mod kernels;

/// Something to export, so the library is not empty.
#[unsafe(no_mangle)]
pub extern "C" fn vx_noentry_answer() -> i32 {
    42
}
