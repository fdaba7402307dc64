// A type by reference that is none of the views: rustc says so at the type, naming the views.
use vx_plugin_abi::{ImageIn, user_kernel};

#[user_kernel(name = "ui.not_a_view")]
fn k(_input: &ImageIn<u8>, _table: &Vec<u8>) {}

fn main() {}
