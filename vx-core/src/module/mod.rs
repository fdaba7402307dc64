//! Kernel modules: one opened library ([`library`]) mapped from a private copy ([`copy`]) of a file
//! the context trusts ([`trust`]), the host side of the module ABI ([`host`]) and
//! the loader ([`loader`]: search path, ref-counted loads, publish as one transaction, reload with
//! an atomic swap). Modules publish into the context's kernel table; nothing here names `Context`.

pub(crate) mod copy;
pub(crate) mod foreign;
pub(crate) mod host;
pub(crate) mod library;
pub(crate) mod loader;
pub(crate) mod trust;
