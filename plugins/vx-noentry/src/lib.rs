//! A shared library that is not a vx-rs module: it exports a function but no root descriptor.

/// Something to export, so the library is not empty.
#[unsafe(no_mangle)]
pub extern "C" fn vx_noentry_answer() -> i32 {
    42
}
