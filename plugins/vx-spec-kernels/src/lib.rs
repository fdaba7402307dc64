//! `vx_spec_kernels`: the tiling extension's example kernels as a kernel module, written only with
//! the macros (`#[tiling_kernel]` in `kernels.rs`, `vx_module!` here).

mod kernels;

vx_plugin_abi::vx_module!(name = "vx_spec_kernels");
