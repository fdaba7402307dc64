use vx_plugin_abi::module_abi::AbiError;
use vx_plugin_abi::views::Matrix;
use vx_plugin_abi::{Rect, user_kernel};

fn shrink(_: u32, _: &[Rect], _: &mut [Rect]) -> Result<(), AbiError> {
    Ok(())
}

#[user_kernel(valid_rect = shrink)]
fn copy_matrix(a: &Matrix<u8>, b: &mut Matrix<u8>) {
    b.as_mut_slice().copy_from_slice(a.as_slice())
}

fn main() {}
