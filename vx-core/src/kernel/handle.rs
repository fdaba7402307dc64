//! The kernel handle (`vx_kernel`): `vxAddParameterToKernel`, `vxSetKernelAttribute`,
//! `vxAliasParameterIndexHint`, `vxFinalizeKernel`, `vxRemoveKernel` and queries; the kernel's
//! record (name, functions, signature while building, then frozen at finalize) and its chain of
//! replacements across module reloads. A kernel from a module keeps the module's library alive.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use vx_plugin_abi::{RowArgs, TileError};

use crate::data::types::{DataType, Direction, ParamState};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel::callbacks::{KernelFunctions, RowFn};
use crate::kernel::fusion::FusionSupport;
use crate::kernel::record::{FinalKernel, KernelInner};
use crate::kernel::signature::{
    AliasHint, AliasKind, KernelAttribute, KernelAttributes, KernelDocs, ParamDirection, ParamSpec, check_neighborhood,
    check_tiling_border,
};
use crate::kernel::table::KernelTable;

/// A kernel handle. Clones share the kernel.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) inner: Arc<KernelInner>,
    pub(crate) table: Arc<KernelTable>,
}

/// A kernel handle that does not keep the kernel alive ([`Kernel::downgrade`]).
#[derive(Clone)]
pub struct WeakKernel {
    inner: std::sync::Weak<KernelInner>,
    table: std::sync::Weak<KernelTable>,
}

impl WeakKernel {
    /// The kernel, while it exists.
    pub fn upgrade(&self) -> Option<Kernel> {
        Some(Kernel { inner: self.inner.upgrade()?, table: self.table.upgrade()? })
    }
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

impl Kernel {
    pub(super) fn err(&self, kind: ErrorKind, msg: impl Into<String>) -> Error {
        Error::new(kind, msg).in_kernel(&self.inner.name)
    }

    /// `index` names a parameter of the kernel's signature.
    fn check_index(&self, index: u32) -> Result<()> {
        let n = self.inner.num_params;
        if index >= n {
            return Err(self
                .err(ErrorKind::InvalidParameters, "parameter index out of range")
                .at_parameter(index)
                .expected_found(format!("index < {n}"), index));
        }
        Ok(())
    }

    pub(super) fn check_mutable(&self) -> Result<()> {
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
        if self.inner.functions.is_tiling() && !data_type.tiling_takes(direction) {
            return Err(self
                .err(ErrorKind::InvalidParameters, "tiling kernels take images (input or output) and input scalars")
                .at_parameter(index)
                .found(format!("{direction} {data_type}")));
        }
        self.check_index(index)?;
        let mut b = self.inner.build();
        let slot = &mut b.params[index as usize];
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
    /// Checked at finalize to pair an input with an output. Verification arbitrates the hints with
    /// the whole graph in view (`Graph::alias_decisions` tells which were honoured and why not);
    /// the kernel asks `is_parameter_aliased` at process time.
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

    /// Describe the kernel for tools (`vx inspect`): a short summary (the kernel macros pass the
    /// doc comment's first paragraph). Informational; refused after [`finalize`](Self::finalize)
    /// like every change.
    pub fn set_summary(&self, summary: &str) -> Result<()> {
        self.check_mutable()?;
        let summary = summary.trim();
        self.inner.build().docs.summary = (!summary.is_empty()).then(|| summary.to_owned());
        Ok(())
    }

    /// Describe parameter `index` for tools: its name and the element it takes (`"U8"`, `"S16"`,
    /// `"views::Matrix<f32>"`, …; empty strings leave either unset). Informational only.
    pub fn describe_parameter(&self, index: u32, name: &str, element: &str) -> Result<()> {
        self.check_mutable()?;
        self.check_index(index)?;
        let n = self.inner.num_params;
        let mut b = self.inner.build();
        let docs = &mut b.docs;
        let set = |v: &mut Vec<Option<String>>, s: &str| {
            v.resize(n as usize, None);
            v[index as usize] = (!s.is_empty()).then(|| s.to_owned());
        };
        set(&mut docs.param_names, name);
        set(&mut docs.param_elements, element);
        Ok(())
    }

    /// What the kernel says about itself ([`set_summary`](Self::set_summary),
    /// [`describe_parameter`](Self::describe_parameter); the kernel macros fill both from the
    /// function's doc comment and arguments).
    pub fn docs(&self) -> KernelDocs {
        let mut d = match self.inner.final_() {
            Some(f) => (*f.docs).clone(),
            None => self.inner.build().docs.clone(),
        };
        d.param_names.resize(self.inner.num_params as usize, None);
        d.param_elements.resize(self.inner.num_params as usize, None);
        d
    }

    /// Shorthand for `set_attribute(KernelAttribute::LocalDataSize(n))`.
    pub fn set_local_data_size(&self, n: usize) -> Result<()> {
        self.set_attribute(KernelAttribute::LocalDataSize(n))
    }

    /// `vxFinalizeKernel`: the signature must be complete (every index added). After this the
    /// kernel can be used by nodes and looked up, and nothing about it can change.
    pub fn finalize(&self) -> Result<()> {
        self.check_mutable()?;
        let mut b = self.inner.build();
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
        let docs = std::mem::take(&mut b.docs);
        let mut fin = FinalKernel {
            params,
            attrs: b.attrs,
            alias_hints: b.alias_hints.clone(),
            docs: Arc::new(docs),
            fusion: b.fusion,
        };
        drop(b);
        let registry = self.table.registry();
        // A reload's successor with the same description shares its predecessor's: module reloads
        // (months of them) keep no second copy and free none across threads.
        if let Some(prev) = registry.by_name(&self.inner.name)
            && let Some(pf) = prev.final_()
            && pf.docs == fin.docs
        {
            fin.docs = Arc::clone(&pf.docs);
        }
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
        self.try_remove().map_err(|(e, _)| e)
    }

    /// [`remove`](Self::remove) that hands the handle back when it refuses (a binding keeps it).
    pub fn try_remove(self) -> std::result::Result<(), (Error, Kernel)> {
        // A foreign module removing its own kernel while it unpublishes: the loader removes it
        // after the call (`scope.rs`).
        if crate::kernel::scope::current(&self.table, |s| s.is_some_and(|s| s.removing(&self.inner.name))) {
            return Ok(());
        }
        let mut registry = self.table.registry();
        if !registry.contains(&self.inner) {
            let e =
                self.err(ErrorKind::InvalidReference, "the kernel is not registered in its context (already removed?)");
            drop(registry);
            return Err((e, self));
        }
        // One reference is the registry's, one is `self`'s; any other is a node or another handle.
        let others = Arc::strong_count(&self.inner) - 2;
        if others > 0 {
            let e = self
                .err(
                    ErrorKind::Failure,
                    "the kernel is still referenced; release every node, graph and kernel handle using it first",
                )
                .expected_found("no other reference", format!("{others} other reference(s)"));
            drop(registry);
            return Err((e, self));
        }
        registry.remove(&self.inner);
        tracing::debug!(kernel = %self.inner.name, "kernel removed");
        Ok(())
    }

    /// A handle that does not keep the kernel (nor count as a reference to it).
    pub fn downgrade(&self) -> WeakKernel {
        WeakKernel { inner: Arc::downgrade(&self.inner), table: Arc::downgrade(&self.table) }
    }

    /// Test hook (the randomized graph test): swap in `successor` (built with
    /// `KernelBuilder::__reload_test_hook(_, true)` and finalized) as a module reload swaps a new
    /// version of this kernel in: idle graphs move their nodes that can move in place at once, the
    /// rest rebind at their next run.
    #[doc(hidden)]
    pub fn __replace_in_process(&self, successor: &Kernel) -> Result<()> {
        if successor.inner.name != self.inner.name || successor.inner.final_().is_none() {
            return Err(self.err(ErrorKind::InvalidParameters, "a successor has the kernel's name and is finalized"));
        }
        {
            let _swap = self.table.swap();
            self.table.registry().succeed(&self.inner, &successor.inner);
            self.table.note_reload();
        }
        self.table.rebind_idle_graphs();
        Ok(())
    }

    /// The kernel's identity while a handle holds it (the address of its record): two handles of
    /// one kernel give the same id; a reload's successor is another kernel.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
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
    /// True for a tiling kernel (fast and/or flexible functions), false for a user kernel.
    pub fn is_tiling(&self) -> bool {
        self.inner.functions.is_tiling()
    }
    /// Names of the targets the kernel has an implementation for (TIOVX target kernels).
    pub fn target_names(&self) -> Vec<String> {
        self.inner.targets.iter().map(|(t, _)| t.clone()).collect()
    }
    /// True when the kernel has a process function of its own (it runs on the host and on any
    /// target); false for a kernel implemented only on its [targets](Self::target_names).
    pub fn runs_anywhere(&self) -> bool {
        self.inner.runs_anywhere()
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

impl Kernel {
    /// `vxGetKernelByName`: a finalized kernel.
    pub(crate) fn by_name(table: &Arc<KernelTable>, name: &str) -> Result<Kernel> {
        let registry = table.registry();
        let found = registry.by_name(name);
        let inner = match found {
            Some(k) => k,
            None => return Err(Error::new(ErrorKind::InvalidReference, registry.unknown_name(name)).in_kernel(name)),
        };
        drop(registry);
        Ok(Kernel { inner, table: Arc::clone(table) })
    }

    /// `vxGetKernelByEnum`: a finalized kernel.
    pub(crate) fn by_enum(table: &Arc<KernelTable>, enumeration: i32) -> Result<Kernel> {
        let inner = table.registry().by_enum(enumeration).ok_or_else(|| {
            Error::new(ErrorKind::InvalidReference, format!("no finalized kernel with enumeration {enumeration:#x}"))
        })?;
        Ok(Kernel { inner, table: Arc::clone(table) })
    }
}

// Fused execution (issue 34): what the kernel offers it (`kernel/fusion.rs`).
impl Kernel {
    /// Record what the kernel offers fused execution (before finalize, once): `rows` is its row
    /// entry, which `support` must describe (a rule and `N >= 1` exactly when there is one).
    pub(crate) fn declare_fusion(&self, support: FusionSupport, rows: Option<Arc<RowFn>>) -> Result<()> {
        self.check_mutable()?;
        let KernelFunctions::Tiling { rows: slot, .. } = &self.inner.functions else {
            return Err(self.err(ErrorKind::NotSupported, "only tiling kernels take part in fused execution"));
        };
        let described = support.fill.is_some() && support.rows_n >= 1;
        if rows.is_some() != described {
            return Err(self
                .err(ErrorKind::InvalidParameters, "a row entry comes with its border rule and row count")
                .expected_found(
                    "a row entry, a rule and N >= 1, or none of them",
                    format!("row entry: {}, {support:?}", rows.is_some()),
                ));
        }
        let mut b = self.inner.build();
        if b.fusion.is_some() {
            return Err(self.err(ErrorKind::NotSupported, "the kernel's fusion support is declared already"));
        }
        if let Some(f) = rows
            && slot.set(f).is_err()
        {
            return Err(self.err(ErrorKind::NotSupported, "the kernel's row entry is set already"));
        }
        b.fusion = Some(support);
        Ok(())
    }

    /// What the kernel declared for fused execution (`None` before finalize or without a
    /// declaration).
    pub fn fusion_support(&self) -> Option<FusionSupport> {
        self.inner.final_().and_then(|f| f.fusion)
    }

    /// Test hook: call the kernel's row entry as fused execution will (`Err` with
    /// `NotSupported` for a kernel without one). `args` upholds its contract: it was made with the
    /// unsafe [`RowArgs::new`].
    #[doc(hidden)]
    pub fn __call_rows(&self, args: &RowArgs<'_>) -> std::result::Result<(), TileError> {
        match self.inner.functions.rows() {
            Some(f) => f(args),
            None => Err(TileError::new(vx_plugin_abi::Status::NotSupported, "the kernel has no row entry")),
        }
    }
}
