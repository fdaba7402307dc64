// The second kernel of a name in another file of the crate: refused there, naming the first and
// its file.
use vx_plugin_abi::{TileMut, tiling_kernel};

#[tiling_kernel(name = "demo.invert")]
fn invert(out: &mut TileMut<u8>) {
    let _ = out;
}

#[path = "support/more_kernels.rs"]
mod more;

fn main() {}
