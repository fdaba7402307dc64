//! The functions a kernel runs, as the host stores them: validator, init/deinit, process (user
//! kernels) or fast/flexible tile functions (tiling kernels), control, and per-target
//! implementations ([`TargetKernel`]).

use std::sync::{Arc, OnceLock};

use vx_plugin_abi::{RowArgs, TileArgs, TileError};

use crate::error::Result;
use crate::kernel::contexts::{ControlContext, LifecycleContext, ProcessContext, ValidateContext};
use crate::kernel::meta_format::MetaFormats;

/// `vx_kernel_f`: the host-side kernel function.
pub type ProcessFn = dyn Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync;
/// `vx_kernel_validate_f`: checks the inputs and fills one meta format per output.
pub type ValidateFn = dyn Fn(&ValidateContext<'_>, &mut MetaFormats) -> Result<()> + Send + Sync;
/// `vx_kernel_initialize_f` / `vx_kernel_deinitialize_f`.
pub type LifecycleFn = dyn Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync;
/// `vx_tiling_kernel_f`: processes one tile (fast or flexible function).
pub type TilingFn = dyn Fn(&mut TileArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync;

/// A row kernel's row entry (fused execution, `docs/design/fusion.md` §6.1): the output rows of
/// `args.region()` from the inputs' row tables.
pub type RowFn = dyn Fn(&RowArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync;

/// A target kernel's control callback (`tivxNodeSendCommand`): a command sent to one node,
/// serialized with its process calls.
pub type ControlFn = dyn Fn(&mut ControlContext<'_>) -> Result<()> + Send + Sync;

/// One target's implementation of a kernel (TIOVX's `tivxAddTargetKernelByName`): process
/// (required), create (init: at verify, on the node's target), delete (deinit: at release, on the
/// node's target) and control. Added with `KernelBuilder::target`.
#[derive(Clone)]
pub struct TargetKernel {
    pub(crate) process: Arc<ProcessFn>,
    pub(crate) create: Option<Arc<LifecycleFn>>,
    pub(crate) delete: Option<Arc<LifecycleFn>>,
    pub(crate) control: Option<Arc<ControlFn>>,
}

impl TargetKernel {
    /// A target implementation with its process function.
    pub fn new(process: impl Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync + 'static) -> TargetKernel {
        TargetKernel { process: Arc::new(process), create: None, delete: None, control: None }
    }
    /// Create (`create_func`): at verify, once per node, nodes one by one, on the node's target.
    /// The only callback that may allocate kernel memory; set the instance context here.
    pub fn create(mut self, f: impl Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.create = Some(Arc::new(f));
        self
    }
    /// Delete (`delete_func`): at release or re-verification, on the node's target.
    pub fn delete(mut self, f: impl Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.delete = Some(Arc::new(f));
        self
    }
    /// Control (`control_func`): a command `Node::send_command` queued on the node's target.
    pub fn control(mut self, f: impl Fn(&mut ControlContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.control = Some(Arc::new(f));
        self
    }
}

/// The functions a kernel runs.
#[derive(Clone)]
pub(crate) enum KernelFunctions {
    /// A user kernel: one process function over the whole node, for any target (`None`: the
    /// kernel runs only where it has a target implementation).
    User { process: Option<Arc<ProcessFn>> },
    /// A tiling kernel: a fast and/or a flexible function called per tile, and a row kernel's row
    /// entry (set once, before finalize: a module declares it after adding the kernel).
    Tiling { fast: Option<Arc<TilingFn>>, flexible: Option<Arc<TilingFn>>, rows: OnceLock<Arc<RowFn>> },
}

impl KernelFunctions {
    pub(crate) fn is_tiling(&self) -> bool {
        matches!(self, KernelFunctions::Tiling { .. })
    }
}

impl KernelFunctions {
    /// The row entry of a row kernel, if it declared one.
    pub(crate) fn rows(&self) -> Option<&Arc<RowFn>> {
        match self {
            KernelFunctions::Tiling { rows, .. } => rows.get(),
            KernelFunctions::User { .. } => None,
        }
    }
}
