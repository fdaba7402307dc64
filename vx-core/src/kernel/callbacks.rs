//! The functions a kernel runs, as the host stores them: validator, init/deinit, process (user
//! kernels) or fast/flexible tile functions (tiling kernels).

use std::sync::Arc;

use vx_plugin_abi::{TileArgs, TileError};

use crate::error::Result;
use crate::kernel::contexts::{LifecycleContext, ProcessContext, ValidateContext};
use crate::kernel::meta_format::MetaFormats;

/// `vx_kernel_f`: the host-side kernel function.
pub type ProcessFn = dyn Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync;
/// `vx_kernel_validate_f`: checks the inputs and fills one meta format per output.
pub type ValidateFn = dyn Fn(&ValidateContext<'_>, &mut MetaFormats) -> Result<()> + Send + Sync;
/// `vx_kernel_initialize_f` / `vx_kernel_deinitialize_f`.
pub type LifecycleFn = dyn Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync;
/// `vx_tiling_kernel_f`: processes one tile (fast or flexible function).
pub type TilingFn = dyn Fn(&mut TileArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync;

/// The functions a kernel runs.
#[derive(Clone)]
pub(crate) enum KernelFunctions {
    /// A user kernel: one process function over the whole node.
    User { process: Arc<ProcessFn> },
    /// A tiling kernel: a fast and/or a flexible function called per tile.
    Tiling { fast: Option<Arc<TilingFn>>, flexible: Option<Arc<TilingFn>> },
}

impl KernelFunctions {
    pub(crate) fn is_tiling(&self) -> bool {
        matches!(self, KernelFunctions::Tiling { .. })
    }
}
