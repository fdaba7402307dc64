use vx_plugin_abi::module_abi::AbiError;
use vx_plugin_abi::views::Image;
use vx_plugin_abi::{Rect, user_kernel};

fn shrink(_: &[Rect], _: &mut [Rect]) -> Result<(), AbiError> {
    Ok(())
}

#[user_kernel(valid_rect = shrink)]
fn copy(a: &Image<u8>, b: &mut Image<u8>) {
    for y in 0..a.height() {
        b.row_mut(y).copy_from_slice(a.row(y));
    }
}

fn main() {}
