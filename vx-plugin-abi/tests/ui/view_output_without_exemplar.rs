// An output view whose meta the generated validator cannot take from an input of its kind.
use vx_plugin_abi::user_kernel;
use vx_plugin_abi::views;

#[user_kernel(name = "ui.no_exemplar")]
fn make_matrix(size: u32, out: &mut views::Matrix<f32>) {
    let _ = (size, out);
}

fn main() {}
