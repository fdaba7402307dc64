// A kernel is a free function, registered by its name: inside an `impl` block (with or without
// `self`) it is refused, naming the function and saying where to move it.
use vx_plugin_abi::{Tile, TileMut, tiling_kernel, user_kernel};

struct Filters;

impl Filters {
    #[tiling_kernel(block = 16x1)]
    fn invert(src: &Tile<u8>, dst: &mut TileMut<u8>) {
        let _ = (src, dst);
    }

    #[tiling_kernel]
    fn brighten(&self, dst: &mut TileMut<u8>) {
        let _ = dst;
    }
}

trait Kernels {
    #[user_kernel]
    fn count(level: u8) {
        let _ = level;
    }
}

fn main() {}
