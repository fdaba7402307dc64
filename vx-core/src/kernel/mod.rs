//! Kernels: the handle and its signature and attributes, the builder (`vxAddUserKernel`,
//! `vxAddTilingKernel`, per-target implementations), the contexts callbacks see, meta formats, node
//! local data and instance contexts, kernel memory regions (persistent and scratch), and the
//! context's kernel table with its id pools and its record of which node runs which kernel version
//! (`users.rs`). Kernels hold the kernel table (and through it the context's shared part), never
//! the context.

pub(crate) mod builder;
pub(crate) mod callbacks;
pub(crate) mod contexts;
pub(crate) mod fusion;
pub(crate) mod handle;
pub(crate) mod instance;
pub(crate) mod local_data;
pub(crate) mod memory;
pub(crate) mod meta_format;
pub(crate) mod record;
pub(crate) mod scope;
pub(crate) mod signature;
pub(crate) mod table;
pub(crate) mod users;
