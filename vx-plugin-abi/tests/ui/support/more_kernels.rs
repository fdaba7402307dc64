// A module file of `two_kernels_one_name_across_files.rs` (not a test of its own).
use vx_plugin_abi::{TileMut, tiling_kernel};

#[tiling_kernel(name = "demo.invert")]
fn invert_again(out: &mut TileMut<u8>) {
    let _ = out;
}
