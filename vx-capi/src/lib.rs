//! vx-rs as the OpenVX 1.3.1 C API: this crate builds `libopenvx.so` and `libopenvx.a`, exporting
//! every function of the headers in `include/VX/` (written for vx-rs, source- and
//! binary-compatible with the Khronos headers: `tests/c/header_pins.c` pins every value, layout
//! and signature against them).
//!
//! Layers, from the boundary in:
//! - [`sys`]: the C types and constants, `#[repr(C)]` (the constants generated from the headers);
//! - `ffi`: the glue each exported function goes through (panic guard, status and log, size-checked
//!   copies to the caller's memory);
//! - `handle`: the table every handle is looked up in before use;
//! - `frames`: what a callback running on this thread was lent (answers re-entrant calls);
//! - one file per concept for the functions themselves: `context`, `graph` (graphs, nodes,
//!   parameters), `kernel` (kernels, user kernels from C, meta formats), `modules` (vxLoadKernels), `data` (references,
//!   images, scalars), `delay`, `objects` (the other data objects), and `unimplemented` (generated: the rest, returning
//!   `VX_ERROR_NOT_IMPLEMENTED`).
//!
//! No panic crosses the boundary: each exported function runs under `ffi::guard`.

// The exported functions are `pub` for the linker, reached through the C ABI rather than Rust paths;
// their contracts are the specification's (each states its pointer rules in a `# Safety` section).
#![allow(non_snake_case, unreachable_pub, clippy::missing_safety_doc)]

pub mod sys;

mod context;
mod data;
mod delay;
mod ffi;
mod frames;
mod graph;
mod handle;
mod kernel;
mod modules;
mod objects;
mod unimplemented;

pub use unimplemented::NOT_IMPLEMENTED;

/// The vx-rs graph behind a `vx_graph` handle (benchmarks and tests compare the two APIs on one
/// graph).
#[doc(hidden)]
pub fn __graph_of(handle: sys::vx_graph) -> Option<vx::Graph> {
    graph::graph_of(handle).ok().map(|(g, _)| g)
}

/// The vx-rs context behind a `vx_context` handle.
#[doc(hidden)]
pub fn __context_of(handle: sys::vx_context) -> Option<vx::Context> {
    context::context_of(handle).ok().map(|c| c.ctx.clone())
}
