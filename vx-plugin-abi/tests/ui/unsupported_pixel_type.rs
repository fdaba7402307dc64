// A pixel type no image format has: one error at the type, naming it and the supported ones (the
// function is kept without its body, so rustc adds nothing of its own).
use vx_plugin_abi::views::Image;
use vx_plugin_abi::{ImageIn, InPlace, Rows, Tile, TileMut, tiling_kernel, user_kernel};

#[tiling_kernel]
fn to_float(src: &Tile<u8>, dst: &mut TileMut<f64>) {
    let _ = (src, dst);
}

#[tiling_kernel(alias(0, 1, dense))]
fn in_place(px: &mut InPlace<[u8; 2]>) {
    let _ = px;
}

#[tiling_kernel(nbhd = (0, 0, -1, 1), border = Replicate)]
fn rows([a, b, c]: Rows<f32, 3>, out: &mut [(u8, u8)]) {
    let _ = (a, b, c, out);
}

#[user_kernel]
fn widen(src: &ImageIn<i64>, level: u8, view: &Image<bool>) {
    let _ = (src, level, view);
}

// Outside the macros (or through an alias they cannot see through), rustc says it.
type Px = f64;
fn helper(_: &Tile<Px>) {}

fn main() {}
