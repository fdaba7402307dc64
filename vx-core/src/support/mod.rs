//! Leaf helpers every layer may use. Nothing here imports anything of vx-rs but `error`.

#[cfg_attr(loom, allow(dead_code))] // Under loom the model's fake CPUs stand in.
pub(crate) mod cpu;
pub(crate) mod hash;
pub(crate) mod ids;
pub(crate) mod size;
pub(crate) mod sync;
pub(crate) mod time;
pub(crate) mod unwind;
