//! User kernels (`vx_kernel`): `vxAddUserKernel` (a builder), `vxAddParameterToKernel`,
//! `vxSetKernelAttribute`, `vxFinalizeKernel`, `vxRemoveKernel`, and queries.
//!
//! A kernel carries every attribute later features need — tiling neighborhood, tile block size,
//! border, tile memory size — and an optional keep-alive handle for the module it came from.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use vx_plugin_abi::{BorderMode, MAX_TILING_PARAMS, Neighborhood, TileArgs, TileBlockSize, TileError};

use crate::context::Context;
use crate::data_type::{DataType, Direction, ParamState};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel_context::{LifecycleContext, ProcessContext, ValidateContext};
use crate::meta_format::MetaFormats;
use crate::resources::{ResourceKind, ResourceSlot};

/// `VX_MAX_KERNEL_NAME`: kernel names are shorter than this many bytes.
pub const MAX_KERNEL_NAME: usize = 256;
/// Most parameters a kernel may declare.
pub const MAX_KERNEL_PARAMETERS: u32 = 64;

/// `vx_kernel_f`: the host-side kernel function.
pub type ProcessFn = dyn Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync;
/// `vx_kernel_validate_f`: checks the inputs and fills one meta format per output.
pub type ValidateFn = dyn Fn(&ValidateContext<'_>, &mut MetaFormats) -> Result<()> + Send + Sync;
/// `vx_kernel_initialize_f` / `vx_kernel_deinitialize_f`.
pub type LifecycleFn = dyn Fn(&mut LifecycleContext<'_>) -> Result<()> + Send + Sync;
/// `vx_tiling_kernel_f`: processes one tile (fast or flexible function).
pub type TilingFn = dyn Fn(&mut TileArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync;

/// A parameter of a kernel's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub direction: Direction,
    pub data_type: DataType,
    pub state: ParamState,
}

/// The settable kernel attributes (`vx_kernel_attribute_e` and the tiling extension's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelAttribute {
    /// `VX_KERNEL_LOCAL_DATA_SIZE`: bytes of node local data the framework allocates per node.
    LocalDataSize(usize),
    /// `VX_KERNEL_INPUT_NEIGHBORHOOD` (tiling kernels).
    InputNeighborhood(Neighborhood),
    /// `VX_KERNEL_OUTPUT_TILE_BLOCK_SIZE` (tiling kernels).
    OutputTileBlockSize(TileBlockSize),
    /// `VX_KERNEL_BORDER` (tiling kernels).
    Border(BorderMode),
    /// `VX_KERNEL_TILE_MEMORY_SIZE`: bytes per tile block (tiling kernels).
    TileMemorySize(usize),
}

/// `vx_buffer_aliasing_processing_type_e`: how a kernel would touch an aliased buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AliasKind {
    /// Every element is read and written (e.g. NOT).
    Dense,
    /// Only some elements are written (e.g. a threshold that leaves most pixels).
    Sparse,
}

/// A `vxAliasParameterIndexHint` recorded on a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AliasHint {
    pub a: u32,
    pub b: u32,
    pub kind: AliasKind,
}

/// The attribute values of a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelAttributes {
    pub local_data_size: usize,
    pub neighborhood: Neighborhood,
    pub block_size: TileBlockSize,
    pub border: BorderMode,
    pub tile_memory_size: usize,
}

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

struct KernelBuild {
    params: Vec<Option<ParamSpec>>,
    attrs: KernelAttributes,
    alias_hints: Vec<AliasHint>,
}

/// What a finalized kernel is: immutable from then on.
pub(crate) struct FinalKernel {
    pub(crate) params: Vec<ParamSpec>,
    pub(crate) attrs: KernelAttributes,
    pub(crate) alias_hints: Vec<AliasHint>,
}

pub(crate) struct KernelInner {
    pub(crate) name: String,
    pub(crate) enumeration: i32,
    pub(crate) num_params: u32,
    pub(crate) functions: KernelFunctions,
    pub(crate) validate: Arc<ValidateFn>,
    pub(crate) init: Option<Arc<LifecycleFn>>,
    pub(crate) deinit: Option<Arc<LifecycleFn>>,
    build: Mutex<KernelBuild>,
    pub(crate) finalized: OnceLock<FinalKernel>,
    /// Keeps whatever the kernel's code lives in (a module's library) alive as long as the kernel.
    #[allow(dead_code)]
    pub(crate) keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    /// Set when the registry dropped the kernel (removed, unloaded or replaced).
    pub(crate) removed: AtomicBool,
    /// Set when a module reload replaced this kernel: nodes rebind to the successor.
    pub(crate) replaced: AtomicBool,
    replacement: Mutex<Option<Arc<KernelInner>>>,
    _slot: ResourceSlot,
}

impl KernelInner {
    /// Record that `next` replaces this kernel (module reload).
    pub(crate) fn replace_with(&self, next: Arc<KernelInner>) {
        *self.replacement.lock().unwrap_or_else(|p| p.into_inner()) = Some(next);
        self.replaced.store(true, Ordering::Release);
    }

    /// The newest kernel in this kernel's chain of replacements.
    pub(crate) fn latest(self: &Arc<Self>) -> Arc<KernelInner> {
        let mut k = Arc::clone(self);
        loop {
            let next = k.replacement.lock().unwrap_or_else(|p| p.into_inner()).clone();
            match next {
                Some(n) => k = n,
                None => return k,
            }
        }
    }

    fn build(&self) -> MutexGuard<'_, KernelBuild> {
        self.build.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub(crate) fn final_(&self) -> Option<&FinalKernel> {
        self.finalized.get()
    }
}

/// A kernel handle. Clones share the kernel.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) inner: Arc<KernelInner>,
    pub(crate) ctx: Context,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.inner.name)
            .field("enumeration", &format_args!("{:#x}", self.inner.enumeration))
            .field("finalized", &self.is_finalized())
            .finish()
    }
}

/// `vxAddUserKernel` / `vxAddTilingKernel` as a builder:
/// `ctx.user_kernel(name, enumeration, num_params).process(..).validate(..).init(..).deinit(..).add()`
/// or `ctx.tiling_kernel(name, enumeration, num_params).fast(..).flexible(..).validate(..).add()`.
#[must_use = "call .add() to register the kernel"]
pub struct KernelBuilder<'c> {
    ctx: &'c Context,
    name: String,
    enumeration: i32,
    num_params: u32,
    tiling: bool,
    process: Option<Arc<ProcessFn>>,
    fast: Option<Arc<TilingFn>>,
    flexible: Option<Arc<TilingFn>>,
    validate: Option<Arc<ValidateFn>>,
    init: Option<Arc<LifecycleFn>>,
    deinit: Option<Arc<LifecycleFn>>,
    keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    staged: bool,
}

impl<'c> KernelBuilder<'c> {
    /// Build the kernel without registering it (module reload stages the new version first).
    pub(crate) fn staged(mut self) -> Self {
        self.staged = true;
        self
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
    /// Keep `owner` alive as long as the kernel (used for module libraries).
    pub fn keep_alive(mut self, owner: Arc<dyn Any + Send + Sync>) -> Self {
        self.keep_alive = Some(owner);
        self
    }

    /// Register the kernel (not yet finalized: add parameters, set attributes, then
    /// [`Kernel::finalize`]).
    pub fn add(self) -> Result<Kernel> {
        let name = self.name;
        let fail = |kind, msg: &str| Error::new(kind, msg.to_owned()).in_kernel(&name);
        if name.is_empty() || name.len() >= MAX_KERNEL_NAME {
            return Err(fail(ErrorKind::InvalidParameters, "invalid kernel name")
                .expected_found(format!("1..{MAX_KERNEL_NAME} bytes"), name.len()));
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
            KernelFunctions::Tiling { fast: self.fast, flexible: self.flexible }
        } else {
            if self.fast.is_some() || self.flexible.is_some() {
                return Err(fail(
                    ErrorKind::InvalidParameters,
                    "fast/flexible functions belong to tiling kernels (use Context::tiling_kernel)",
                ));
            }
            let Some(process) = self.process else {
                return Err(fail(ErrorKind::InvalidParameters, "a user kernel needs a process function"));
            };
            KernelFunctions::User { process }
        };
        let Some(validate) = self.validate else {
            return Err(fail(ErrorKind::InvalidParameters, "a kernel needs a validate function"));
        };
        let ctx = self.ctx;
        let mut registry = ctx.inner.registry();
        if !self.staged {
            registry.check_new(&name, self.enumeration)?;
        }
        let slot = ctx.inner.acquire(ResourceKind::Kernels).map_err(|e| e.in_kernel(&name))?;
        let inner = Arc::new(KernelInner {
            name: name.clone(),
            enumeration: self.enumeration,
            num_params: self.num_params,
            functions,
            validate,
            init: self.init,
            deinit: self.deinit,
            build: Mutex::new(KernelBuild {
                params: vec![None; self.num_params as usize],
                attrs: KernelAttributes::default(),
                alias_hints: Vec::new(),
            }),
            finalized: OnceLock::new(),
            keep_alive: self.keep_alive,
            removed: AtomicBool::new(false),
            replaced: AtomicBool::new(false),
            replacement: Mutex::new(None),
            _slot: slot,
        });
        if !self.staged {
            registry.insert(Arc::clone(&inner));
        }
        drop(registry);
        tracing::debug!(kernel = %name, enumeration = self.enumeration, "kernel added");
        Ok(Kernel { inner, ctx: ctx.clone() })
    }
}

impl Context {
    /// `vxAddUserKernel`: start building a user kernel named `name` with `num_params` parameters.
    pub fn user_kernel(&self, name: &str, enumeration: i32, num_params: u32) -> KernelBuilder<'_> {
        self.kernel_builder(name, enumeration, num_params, false)
    }

    /// `vxAddTilingKernel`: start building a tiling kernel (fast and/or flexible function; images
    /// in and out plus input scalars).
    pub fn tiling_kernel(&self, name: &str, enumeration: i32, num_params: u32) -> KernelBuilder<'_> {
        self.kernel_builder(name, enumeration, num_params, true)
    }

    fn kernel_builder(&self, name: &str, enumeration: i32, num_params: u32, tiling: bool) -> KernelBuilder<'_> {
        KernelBuilder {
            ctx: self,
            name: name.to_owned(),
            enumeration,
            num_params,
            tiling,
            process: None,
            fast: None,
            flexible: None,
            validate: None,
            init: None,
            deinit: None,
            keep_alive: None,
            staged: false,
        }
    }

    /// `vxGetKernelByName`: a finalized kernel.
    pub fn kernel_by_name(&self, name: &str) -> Result<Kernel> {
        let inner = self.inner.registry().by_name(name).ok_or_else(|| {
            Error::new(ErrorKind::InvalidReference, "no finalized kernel of that name in the context").in_kernel(name)
        })?;
        Ok(Kernel { inner, ctx: self.clone() })
    }

    /// `vxGetKernelByEnum`: a finalized kernel.
    pub fn kernel_by_enum(&self, enumeration: i32) -> Result<Kernel> {
        let inner = self.inner.registry().by_enum(enumeration).ok_or_else(|| {
            Error::new(ErrorKind::InvalidReference, format!("no finalized kernel with enumeration {enumeration:#x}"))
        })?;
        Ok(Kernel { inner, ctx: self.clone() })
    }

    /// `vxAllocateUserKernelId`: the next of 4096 enumerations from `VX_KERNEL_BASE(VX_ID_USER, 0)`.
    pub fn allocate_user_kernel_id(&self) -> Result<i32> {
        self.inner.registry().allocate_kernel_id()
    }

    /// `vxAllocateUserKernelLibraryId`: the next library id of 1..=255.
    pub fn allocate_user_kernel_library_id(&self) -> Result<i32> {
        self.inner.registry().allocate_library_id()
    }
}

impl Kernel {
    fn err(&self, kind: ErrorKind, msg: impl Into<String>) -> Error {
        Error::new(kind, msg).in_kernel(&self.inner.name)
    }

    fn check_mutable(&self) -> Result<()> {
        if self.is_finalized() {
            return Err(self
                .err(ErrorKind::NotSupported, "the kernel is finalized; its signature and attributes cannot change"));
        }
        if self.is_removed() {
            return Err(self.err(ErrorKind::InvalidReference, "the kernel was removed"));
        }
        Ok(())
    }

    /// `vxAddParameterToKernel`. `Bidirectional` is refused, as the spec requires.
    pub fn add_parameter(
        &self,
        index: u32,
        direction: ParamDirection,
        data_type: DataType,
        state: ParamState,
    ) -> Result<()> {
        self.check_mutable()?;
        let direction = match direction {
            ParamDirection::Input => Direction::Input,
            ParamDirection::Output => Direction::Output,
            ParamDirection::Bidirectional => {
                return Err(self
                    .err(ErrorKind::InvalidParameters, "user kernel parameters cannot be bidirectional")
                    .at_parameter(index)
                    .expected_found("Input or Output", "Bidirectional"));
            }
        };
        if self.inner.functions.is_tiling()
            && !matches!((direction, data_type), (_, DataType::Image) | (Direction::Input, DataType::Scalar))
        {
            return Err(self
                .err(ErrorKind::InvalidParameters, "tiling kernels take images (input or output) and input scalars")
                .at_parameter(index)
                .found(format!("{direction} {data_type}")));
        }
        let mut b = self.inner.build();
        let n = b.params.len();
        let Some(slot) = b.params.get_mut(index as usize) else {
            return Err(self
                .err(ErrorKind::InvalidParameters, "parameter index out of range")
                .at_parameter(index)
                .expected_found(format!("index < {n}"), index));
        };
        if slot.is_some() {
            return Err(self.err(ErrorKind::InvalidParameters, "the parameter was already added").at_parameter(index));
        }
        *slot = Some(ParamSpec { direction, data_type, state });
        Ok(())
    }

    /// `vxSetKernelAttribute`; refused after [`finalize`](Self::finalize).
    pub fn set_attribute(&self, attribute: KernelAttribute) -> Result<()> {
        self.check_mutable()?;
        let tiling_only = |what: &str| {
            self.err(ErrorKind::NotSupported, format!("{what} applies to tiling kernels only; this is a user kernel"))
        };
        let mut b = self.inner.build();
        match attribute {
            KernelAttribute::LocalDataSize(n) => {
                if n > isize::MAX as usize {
                    return Err(self.err(ErrorKind::InvalidValue, "local data size too large").found(n));
                }
                b.attrs.local_data_size = n
            }
            KernelAttribute::InputNeighborhood(nb) if self.inner.functions.is_tiling() => {
                b.attrs.neighborhood = check_neighborhood(nb).map_err(|e| e.in_kernel(&self.inner.name))?
            }
            KernelAttribute::OutputTileBlockSize(bs) if self.inner.functions.is_tiling() => {
                if bs.width == 0 || bs.height == 0 {
                    return Err(self
                        .err(ErrorKind::InvalidValue, "the output tile block must be at least 1x1")
                        .found(format!("{}x{}", bs.width, bs.height)));
                }
                b.attrs.block_size = bs
            }
            KernelAttribute::Border(bm) if self.inner.functions.is_tiling() => {
                b.attrs.border = check_tiling_border(bm).map_err(|e| e.in_kernel(&self.inner.name))?
            }
            KernelAttribute::TileMemorySize(n) if self.inner.functions.is_tiling() => b.attrs.tile_memory_size = n,
            KernelAttribute::InputNeighborhood(_) => return Err(tiling_only("VX_KERNEL_INPUT_NEIGHBORHOOD")),
            KernelAttribute::OutputTileBlockSize(_) => return Err(tiling_only("VX_KERNEL_OUTPUT_TILE_BLOCK_SIZE")),
            KernelAttribute::Border(_) => return Err(tiling_only("VX_KERNEL_BORDER")),
            KernelAttribute::TileMemorySize(_) => return Err(tiling_only("VX_KERNEL_TILE_MEMORY_SIZE")),
        }
        Ok(())
    }

    /// `vxAliasParameterIndexHint`: the kernel could process parameters `a` and `b` in one buffer.
    /// Checked at finalize to pair an input with an output. The runtime records hints; until alias
    /// arbitration exists it never aliases (the extension allows this), so `is_parameter_aliased`
    /// answers false.
    pub fn alias_parameter_index_hint(&self, a: u32, b: u32, kind: AliasKind) -> Result<()> {
        self.check_mutable()?;
        let n = self.inner.num_params;
        if a >= n || b >= n || a == b {
            return Err(self
                .err(ErrorKind::InvalidParameters, "an alias hint names two different parameters of the kernel")
                .expected_found(format!("two distinct indices < {n}"), format!("({a}, {b})")));
        }
        let mut build = self.inner.build();
        if !build.alias_hints.iter().any(|h| (h.a, h.b) == (a, b) || (h.a, h.b) == (b, a)) {
            build.alias_hints.push(AliasHint { a, b, kind });
        }
        Ok(())
    }

    /// The recorded alias hints.
    pub fn alias_hints(&self) -> Vec<AliasHint> {
        match self.inner.final_() {
            Some(f) => f.alias_hints.clone(),
            None => self.inner.build().alias_hints.clone(),
        }
    }

    /// Shorthand for `set_attribute(KernelAttribute::LocalDataSize(n))`.
    pub fn set_local_data_size(&self, n: usize) -> Result<()> {
        self.set_attribute(KernelAttribute::LocalDataSize(n))
    }

    /// `vxFinalizeKernel`: the signature must be complete (every index added). After this the
    /// kernel can be used by nodes and looked up, and nothing about it can change.
    pub fn finalize(&self) -> Result<()> {
        self.check_mutable()?;
        let b = self.inner.build();
        let missing: Vec<String> =
            b.params.iter().enumerate().filter(|(_, p)| p.is_none()).map(|(i, _)| i.to_string()).collect();
        if !missing.is_empty() {
            return Err(self
                .err(ErrorKind::InvalidParameters, "cannot finalize: parameters were never added")
                .expected_found(
                    format!("{} parameters", b.params.len()),
                    format!("missing indices {}", missing.join(", ")),
                ));
        }
        let params: Vec<ParamSpec> = b.params.iter().map(|p| p.expect("checked")).collect();
        for h in &b.alias_hints {
            let (da, db) = (params[h.a as usize].direction, params[h.b as usize].direction);
            if da == db {
                return Err(self
                    .err(ErrorKind::InvalidParameters, "an alias hint must pair an input with an output")
                    .expected_found(
                        "one input and one output",
                        format!("parameters {} and {} are both {da}s", h.a, h.b),
                    ));
            }
        }
        let fin = FinalKernel { params, attrs: b.attrs, alias_hints: b.alias_hints.clone() };
        drop(b);
        let _registry = self.ctx.inner.registry();
        self.inner
            .finalized
            .set(fin)
            .map_err(|_| self.err(ErrorKind::NotSupported, "the kernel is already finalized"))?;
        tracing::debug!(kernel = %self.inner.name, "kernel finalized");
        Ok(())
    }

    /// `vxRemoveKernel`: unregister the kernel. Fails with `VX_FAILURE` while any other reference
    /// exists — another `Kernel` handle, or a node (hence a graph) using the kernel. Succeeds on an
    /// unfinalized kernel (e.g. to clean up a failed publish).
    pub fn remove(self) -> Result<()> {
        let mut registry = self.ctx.inner.registry();
        if !registry.contains(&self.inner) {
            return Err(
                self.err(ErrorKind::InvalidReference, "the kernel is not registered in its context (already removed?)")
            );
        }
        // One reference is the registry's, one is `self`'s; any other is a node or another handle.
        let others = Arc::strong_count(&self.inner) - 2;
        if others > 0 {
            return Err(self
                .err(
                    ErrorKind::Failure,
                    "the kernel is still referenced; release every node, graph and kernel handle using it first",
                )
                .expected_found("no other reference", format!("{others} other reference(s)")));
        }
        registry.remove(&self.inner);
        tracing::debug!(kernel = %self.inner.name, "kernel removed");
        Ok(())
    }

    /// `VX_KERNEL_NAME`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    /// `VX_KERNEL_ENUM`.
    pub fn enumeration(&self) -> i32 {
        self.inner.enumeration
    }
    /// `VX_KERNEL_PARAMETERS`.
    pub fn num_params(&self) -> u32 {
        self.inner.num_params
    }
    /// The signature entry at `index`, if added.
    pub fn parameter(&self, index: u32) -> Option<ParamSpec> {
        match self.inner.final_() {
            Some(f) => f.params.get(index as usize).copied(),
            None => self.inner.build().params.get(index as usize).copied().flatten(),
        }
    }
    /// The attribute values.
    pub fn attributes(&self) -> KernelAttributes {
        match self.inner.final_() {
            Some(f) => f.attrs,
            None => self.inner.build().attrs,
        }
    }
    /// `VX_KERNEL_LOCAL_DATA_SIZE`.
    pub fn local_data_size(&self) -> usize {
        self.attributes().local_data_size
    }
    /// True after [`finalize`](Self::finalize).
    pub fn is_finalized(&self) -> bool {
        self.inner.final_().is_some()
    }
    /// True once the kernel was removed from its context (removed, unloaded with its module, or
    /// replaced by a module reload).
    pub fn is_removed(&self) -> bool {
        self.inner.removed.load(Ordering::Acquire)
    }
}

/// A neighborhood is `(left <= 0, right >= 0, top <= 0, bottom >= 0)`.
pub(crate) fn check_neighborhood(nb: Neighborhood) -> Result<Neighborhood> {
    if nb.left > 0 || nb.right < 0 || nb.top > 0 || nb.bottom < 0 {
        return Err(Error::new(ErrorKind::InvalidValue, "invalid input neighborhood (left, right, top, bottom)")
            .expected_found(
                "left <= 0, right >= 0, top <= 0, bottom >= 0",
                format!("({}, {}, {}, {})", nb.left, nb.right, nb.top, nb.bottom),
            ));
    }
    Ok(nb)
}

/// Tiling kernels support the `Undefined` and `Self_` border modes only.
pub(crate) fn check_tiling_border(bm: BorderMode) -> Result<BorderMode> {
    match bm {
        BorderMode::Undefined | BorderMode::Self_ => Ok(bm),
        other => {
            Err(Error::new(ErrorKind::NotSupported, "tiling kernels support the Undefined and Self_ border modes only")
                .expected_found("Undefined or Self_", format!("{other:?}")))
        }
    }
}

/// Parameter direction as `vxAddParameterToKernel` accepts it (OpenVX's three values; only
/// `Input` and `Output` are allowed for user kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamDirection {
    Input,
    Output,
    Bidirectional,
}
