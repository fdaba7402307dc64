//! `vx new`: a kernel-module crate that builds, tests and loads as made.

use std::path::PathBuf;

use crate::Failure;

/// `vx new NAME [--target TARGET]`.
#[derive(clap::Args, Debug)]
pub(crate) struct NewArgs {
    /// The directory to create; its last component is the crate's name.
    pub(crate) path: PathBuf,
}

/// `vx new`.
pub(crate) fn new(_args: &NewArgs) -> Result<(), Failure> {
    Err(Failure::usage("vx new: not yet"))
}
