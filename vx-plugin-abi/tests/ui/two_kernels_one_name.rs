// Two kernels of one name in a crate: the host would refuse the second at publish; the macros
// refuse it at compile time, at the second, naming the first (explicit names, and the default
// `<crate>.<function>` names of two functions of one name in two modules). A kernel under
// `#[cfg]` may not be compiled, so it is never the first.
use vx_plugin_abi::{TileMut, tiling_kernel};

#[cfg(any())]
mod off {
    use super::*;
    #[tiling_kernel(name = "demo.fill")]
    fn fill_off(out: &mut TileMut<u8>) {
        let _ = (out, 1);
    }
}

mod a {
    use super::*;
    #[tiling_kernel(name = "demo.fill")]
    fn fill(out: &mut TileMut<u8>) {
        let _ = (out, 1);
    }
    #[tiling_kernel]
    fn clear(out: &mut TileMut<u8>) {
        let _ = (out, 0);
    }
}

mod b {
    use super::*;
    #[tiling_kernel(name = "demo.fill")]
    fn fill_too(out: &mut TileMut<u8>) {
        let _ = (out, 2);
    }
    #[tiling_kernel]
    fn clear(out: &mut TileMut<u8>) {
        let _ = (out, 0);
    }
}

fn main() {}
