// One module entry point per crate: a second `vx_module!` is refused where it is written.
vx_plugin_abi::vx_module!(name = "first");

mod more {
    vx_plugin_abi::vx_module!(name = "second");
}

fn main() {}
