use vx_plugin_abi::{InPlace, tiling_kernel};

// An in-place view stands for parameters 0 (input) and 1 (output); the kernel must say how it
// touches them (dense or sparse), or the runtime cannot arbitrate the hint.
#[tiling_kernel(flexible)]
fn clamp(io: &mut InPlace<u8>, level: u8) {
    let _ = (io, level);
}

fn main() {}
