//! `vxAddUserKernel` / `vxAddTilingKernel` as a builder: functions first, then `add` registers the
//! kernel in its context's kernel table (or stages it, for a module reload).

use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use vx_plugin_abi::{MAX_TILING_PARAMS, RowArgs, TileArgs, TileError};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::callbacks::{
    ControlFn, KernelFunctions, LifecycleFn, ProcessFn, RowFn, TargetKernel, TilingFn, ValidateFn,
};
use crate::kernel::contexts::{ControlContext, LifecycleContext, ProcessContext, ValidateContext};
use crate::kernel::fusion::{FusionSupport, RowFill};
use crate::kernel::handle::Kernel;
use crate::kernel::meta_format::MetaFormats;
use crate::kernel::record::{KernelBuild, KernelInner};
use crate::kernel::signature::{KernelAttributes, KernelDocs, MAX_KERNEL_NAME, MAX_KERNEL_PARAMETERS};
use crate::kernel::table::KernelTable;
use crate::shared::ResourceKind;

/// `vxAddUserKernel` / `vxAddTilingKernel` as a builder:
/// `ctx.user_kernel(name, enumeration, num_params).process(..).validate(..).init(..).deinit(..).add()`
/// or `ctx.tiling_kernel(name, enumeration, num_params).fast(..).flexible(..).validate(..).add()`.
#[must_use = "call .add() to register the kernel"]
pub struct KernelBuilder<'c> {
    table: &'c Arc<KernelTable>,
    name: String,
    enumeration: i32,
    num_params: u32,
    tiling: bool,
    process: Option<Arc<ProcessFn>>,
    fast: Option<Arc<TilingFn>>,
    flexible: Option<Arc<TilingFn>>,
    rows: Option<Arc<RowFn>>,
    fusion: Option<FusionSupport>,
    validate: Option<Arc<ValidateFn>>,
    init: Option<Arc<LifecycleFn>>,
    deinit: Option<Arc<LifecycleFn>>,
    control: Option<Arc<ControlFn>>,
    targets: Vec<(String, TargetKernel)>,
    keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    staged: bool,
    owns_enumeration: bool,
    validator_key: u64,
}

impl<'c> KernelBuilder<'c> {
    /// A builder for a kernel of `table` (user kernel, or tiling kernel when `tiling`).
    pub(crate) fn new(
        table: &'c Arc<KernelTable>,
        name: &str,
        enumeration: i32,
        num_params: u32,
        tiling: bool,
    ) -> Self {
        KernelBuilder {
            table,
            name: name.to_owned(),
            enumeration,
            num_params,
            tiling,
            process: None,
            fast: None,
            flexible: None,
            rows: None,
            fusion: None,
            validate: None,
            init: None,
            deinit: None,
            control: None,
            targets: Vec::new(),
            keep_alive: None,
            staged: false,
            owns_enumeration: false,
            validator_key: 0,
        }
    }

    /// The enumeration was allocated from the id pool for this kernel (returned when it leaves).
    pub(crate) fn owns_enumeration(mut self) -> Self {
        self.owns_enumeration = true;
        self
    }

    /// Build the kernel without registering it (module reload stages the new version first).
    pub(crate) fn staged(mut self) -> Self {
        self.staged = true;
        self
    }

    /// The validator is a pure function of the kernel's declaration named by `key` (0: opaque); a
    /// module kernel's generated validator says so across the ABI (`KernelDesc::validator_key`).
    pub(crate) fn validator_key(mut self, key: u64) -> Self {
        self.validator_key = key;
        self
    }

    /// Test hook (the randomized graph test): a kernel's validator key, as a module's generated
    /// validator declares it; and a successor staged as a module reload stages it (not registered:
    /// [`Kernel::__replace_in_process`] swaps it in).
    #[doc(hidden)]
    pub fn __reload_test_hook(self, key: u64, staged: bool) -> Self {
        let b = self.validator_key(key);
        if staged { b.staged() } else { b }
    }

    /// The process function (required for user kernels).
    pub fn process(mut self, f: impl Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.process = Some(Arc::new(f));
        self
    }
    /// The tiling kernel's fast function: called only on block-aligned tiles whose neighborhood
    /// lies inside the image.
    pub fn fast(
        mut self,
        f: impl Fn(&mut TileArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync + 'static,
    ) -> Self {
        self.fast = Some(Arc::new(f));
        self
    }
    /// The tiling kernel's flexible function: any tile, including (with border `Self_`) tiles whose
    /// neighborhood leaves the image.
    pub fn flexible(
        mut self,
        f: impl Fn(&mut TileArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync + 'static,
    ) -> Self {
        self.flexible = Some(Arc::new(f));
        self
    }
    /// Declare the tiling kernel fusable on descriptors (`docs/design/fusion.md` §6.2): its tile
    /// functions read and write only through SDK views (`Tile`, `TileMut`, `InPlace`), never
    /// [`TileArgs::as_raw`] addresses outside a view's `readable` rectangle.
    pub fn fusable(mut self) -> Self {
        let fusion = self.fusion.get_or_insert(FusionSupport { fill: None, rows_n: 0, bounded: true });
        fusion.bounded = true;
        self
    }
    /// The row kernel's row entry (fused execution): `f` computes the output rows of
    /// `args.region()` from the inputs' row tables with rule `fill` over windows `n` rows high —
    /// as its flexible function does from tiles, typically through `RowTable::for_rows` (the code
    /// `Tile::for_rows` runs). Implies [`fusable`](Self::fusable).
    pub fn rows(
        mut self,
        fill: RowFill,
        n: u32,
        f: impl Fn(&RowArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync + 'static,
    ) -> Self {
        self.rows = Some(Arc::new(f));
        self.fusion = Some(FusionSupport { fill: Some(fill), rows_n: n, bounded: true });
        self
    }
    /// The validator (required, as in OpenVX 1.1+).
    pub fn validate(
        mut self,
        f: impl Fn(&ValidateContext<'_>, &mut MetaFormats) -> Result<()> + Send + Sync + 'static,
    ) -> Self {
        self.validate = Some(Arc::new(f));
        self
    }
    /// The initializer, called at verify after validation.
    pub fn init(mut self, f: impl Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.init = Some(Arc::new(f));
        self
    }
    /// The deinitializer, called at re-verification and node destruction.
    pub fn deinit(mut self, f: impl Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.deinit = Some(Arc::new(f));
        self
    }
    /// The control callback (`tivxNodeSendCommand`) of nodes that run the kernel's own process.
    pub fn control(mut self, f: impl Fn(&mut ControlContext<'_>) -> Result<()> + Send + Sync + 'static) -> Self {
        self.control = Some(Arc::new(f));
        self
    }
    /// The kernel's implementation on target `target` (`tivxAddTargetKernelByName`): nodes placed
    /// on that target run it (process, and its create/delete instead of init/deinit). A user kernel
    /// needs its own process function, or at least one target implementation.
    pub fn target(mut self, target: &str, implementation: TargetKernel) -> Self {
        self.targets.push((target.to_owned(), implementation));
        self
    }
    /// Keep `owner` alive as long as the kernel (used for module libraries).
    pub fn keep_alive(mut self, owner: Arc<dyn Any + Send + Sync>) -> Self {
        self.keep_alive = Some(owner);
        self
    }

    /// Register the kernel (not yet finalized: add parameters, set attributes, then
    /// [`Kernel::finalize`]).
    pub fn add(mut self) -> Result<Kernel> {
        // A foreign module publishing on this thread: the kernel is its kernel (`scope.rs`).
        let table = self.table;
        crate::kernel::scope::current(table, |scope| {
            if let Some(s) = scope {
                if self.keep_alive.is_none() {
                    self.keep_alive = s.keep_alive();
                }
                self.staged |= s.staged();
            }
        });
        let k = self.add_here()?;
        crate::kernel::scope::current(table, |scope| {
            if let Some(s) = scope {
                s.added(&k.inner);
            }
        });
        Ok(k)
    }

    fn add_here(self) -> Result<Kernel> {
        let name = self.name;
        let fail = |kind, msg: &str| Error::new(kind, msg.to_owned()).in_kernel(&name);
        if name.is_empty() || name.len() >= MAX_KERNEL_NAME {
            return Err(fail(ErrorKind::InvalidParameters, "invalid kernel name")
                .expected_found(format!("1..{MAX_KERNEL_NAME} bytes"), name.len()));
        }
        if self.num_params == 0 {
            // The Khronos sample refuses it too (`vxAddUserKernel` with `numParams == 0`): a node
            // of such a kernel could neither read nor write anything.
            return Err(fail(ErrorKind::InvalidParameters, "a kernel needs at least one parameter")
                .expected_found(format!("1..={MAX_KERNEL_PARAMETERS}"), 0));
        }
        if self.num_params > MAX_KERNEL_PARAMETERS {
            return Err(fail(ErrorKind::InvalidParameters, "too many parameters")
                .expected_found(format!("at most {MAX_KERNEL_PARAMETERS}"), self.num_params));
        }
        let functions = if self.tiling {
            if self.process.is_some() {
                return Err(fail(
                    ErrorKind::InvalidParameters,
                    "a tiling kernel has fast/flexible functions, not a process function",
                ));
            }
            if self.fast.is_none() && self.flexible.is_none() {
                return Err(fail(
                    ErrorKind::InvalidParameters,
                    "a tiling kernel needs a fast or a flexible function (or both)",
                ));
            }
            if self.num_params as usize > MAX_TILING_PARAMS {
                return Err(fail(ErrorKind::InvalidParameters, "too many parameters for a tiling kernel")
                    .expected_found(format!("at most {MAX_TILING_PARAMS}"), self.num_params));
            }
            if !self.targets.is_empty() {
                return Err(fail(
                    ErrorKind::NotSupported,
                    "target implementations belong to user kernels (a tiling kernel runs on the host target)",
                ));
            }
            if self.rows.is_some() && self.fusion.is_some_and(|f| f.rows_n == 0) {
                return Err(fail(ErrorKind::InvalidParameters, "a row entry spans at least one row")
                    .expected_found("n >= 1", 0));
            }
            let rows = self.rows.map(OnceLock::from).unwrap_or_default();
            KernelFunctions::Tiling { fast: self.fast, flexible: self.flexible, rows }
        } else {
            if self.fast.is_some() || self.flexible.is_some() || self.fusion.is_some() {
                return Err(fail(
                    ErrorKind::InvalidParameters,
                    "fast/flexible functions and row entries belong to tiling kernels (use Context::tiling_kernel)",
                ));
            }
            if self.process.is_none() && self.targets.is_empty() {
                return Err(fail(
                    ErrorKind::InvalidParameters,
                    "a user kernel needs a process function or a target implementation",
                ));
            }
            for (i, (t, _)) in self.targets.iter().enumerate() {
                if t.is_empty() || self.targets[..i].iter().any(|(o, _)| o == t) {
                    return Err(fail(
                        ErrorKind::InvalidParameters,
                        "target implementations need distinct, non-empty target names",
                    )
                    .found(format!("'{t}'")));
                }
            }
            KernelFunctions::User { process: self.process }
        };
        let Some(validate) = self.validate else {
            return Err(fail(ErrorKind::InvalidParameters, "a kernel needs a validate function"));
        };
        let table = self.table;
        let mut registry = table.registry();
        if !self.staged {
            registry.check_new(&name, self.enumeration)?;
        }
        let slot = table.shared.acquire(ResourceKind::Kernels).map_err(|e| e.in_kernel(&name))?;
        let inner = Arc::new(KernelInner {
            name: name.clone(),
            enumeration: self.enumeration,
            num_params: self.num_params,
            functions,
            validate,
            init: self.init,
            deinit: self.deinit,
            control: self.control,
            targets: self.targets,
            build: Mutex::new(KernelBuild {
                params: vec![None; self.num_params as usize],
                attrs: KernelAttributes::default(),
                alias_hints: Vec::new(),
                docs: KernelDocs::default(),
                fusion: self.fusion,
            }),
            finalized: OnceLock::new(),
            keep_alive: self.keep_alive,
            owns_enumeration: self.owns_enumeration,
            validator_key: self.validator_key,
            removed: AtomicBool::new(false),
            replaced: AtomicBool::new(false),
            lineage: OnceLock::new(),
            shape: OnceLock::new(),
            slot: Mutex::new(Some(slot)),
        });
        if !self.staged {
            registry.insert(Arc::clone(&inner));
        }
        drop(registry);
        tracing::debug!(kernel = %name, enumeration = self.enumeration, "kernel added");
        Ok(Kernel { inner, table: Arc::clone(table) })
    }
}
