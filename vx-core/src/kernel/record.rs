//! What the runtime knows of one kernel: name, enumeration, functions, the signature while it is
//! built and frozen at finalize, the keep-alive of the module it came from, and its lineage across
//! module reloads. Shared by the handle, the builder and the kernel table.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use crate::kernel::callbacks::{ControlFn, KernelFunctions, LifecycleFn, TargetKernel, ValidateFn};
use crate::kernel::fusion::FusionSupport;
use crate::kernel::signature::{AliasHint, KernelAttributes, KernelDocs, ParamSpec};
use crate::shared::ResourceSlot;
use crate::support::sync::lock;

/// The signature and attributes of a kernel being built (before finalize).
pub(super) struct KernelBuild {
    pub(super) params: Vec<Option<ParamSpec>>,
    pub(super) attrs: KernelAttributes,
    pub(super) alias_hints: Vec<AliasHint>,
    pub(super) docs: KernelDocs,
    /// What the kernel declared for fused execution (`declare_fusion`, `KernelBuilder::fusable`).
    pub(super) fusion: Option<FusionSupport>,
}

/// What a finalized kernel is: immutable from then on.
pub(crate) struct FinalKernel {
    pub(crate) params: Vec<ParamSpec>,
    pub(crate) attrs: KernelAttributes,
    pub(crate) alias_hints: Vec<AliasHint>,
    pub(super) docs: Arc<KernelDocs>,
    /// What the kernel declared for fused execution.
    pub(crate) fusion: Option<FusionSupport>,
}

/// The versions of one module kernel across reloads share one lineage, which names the newest.
///
/// A version does not hold its successor: a node or a `Kernel` handle that still holds version 1
/// after a thousand reloads keeps version 1 (and its library) alive, not the thousand versions
/// after it. The lineage holds the newest weakly: the kernel table owns it; if the module is
/// unloaded, nothing newer is left and holders keep the version they have.
#[derive(Default)]
pub(super) struct Lineage {
    newest: Mutex<Weak<KernelInner>>,
}

pub(crate) struct KernelInner {
    pub(crate) name: String,
    pub(crate) enumeration: i32,
    /// The enumeration came from the context's user kernel id pool on the kernel's behalf (a module
    /// kernel without an explicit one): it returns to the pool when the kernel leaves the table, and
    /// a reload's successor inherits it.
    pub(crate) owns_enumeration: bool,
    /// Nonzero: the validator is a pure function of the declaration this key names (a macro's
    /// generated validator); equal keys validate alike (`graph/verify/rebound.rs`).
    pub(crate) validator_key: u64,
    pub(crate) num_params: u32,
    pub(crate) functions: KernelFunctions,
    pub(crate) validate: Arc<ValidateFn>,
    pub(crate) init: Option<Arc<LifecycleFn>>,
    pub(crate) deinit: Option<Arc<LifecycleFn>>,
    /// Control for nodes running the kernel's own process (any target).
    pub(crate) control: Option<Arc<ControlFn>>,
    /// Implementations per target, by target name (`tivxAddTargetKernelByName`).
    pub(crate) targets: Vec<(String, TargetKernel)>,
    pub(super) build: Mutex<KernelBuild>,
    pub(super) finalized: OnceLock<FinalKernel>,
    /// Keeps whatever the kernel's code lives in (a module's library) alive as long as the kernel.
    #[allow(dead_code)]
    pub(crate) keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    /// Set when the registry dropped the kernel (removed, unloaded or replaced).
    pub(crate) removed: AtomicBool,
    /// Set when a module reload replaced this kernel: nodes rebind to the newest version.
    pub(crate) replaced: AtomicBool,
    /// Set when a module reload first replaces this kernel or makes it a successor.
    pub(super) lineage: OnceLock<Arc<Lineage>>,
    /// Its [`KernelShape`], made at first need after finalization.
    pub(super) shape: OnceLock<KernelShape>,
    /// The kernel's unit of the context's kernel count, held while the kernel is in the table
    /// (`ResourceKind::Kernels` counts kernels added and not removed, not versions a node or a
    /// handle still holds).
    pub(super) slot: Mutex<Option<ResourceSlot>>,
}

/// What of a kernel version the graph-level results of verification depend on besides what its
/// validator returns: two versions of one shape differ at most in their code
/// (`graph/verify/rebound.rs`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct KernelShape {
    params: Vec<ParamSpec>,
    attrs: KernelAttributes,
    alias_hints: Vec<AliasHint>,
    /// (tiling, has fast, has flexible, has its own process, has init, has deinit, has control)
    functions: [bool; 7],
    targets: Vec<String>,
    validator_key: u64,
    /// Has a row entry (fused execution reads functions at run, but with or without one is
    /// another group).
    rows: bool,
    /// The fusion declaration: another rule, row count or boundedness re-forms fused groups.
    fusion: Option<FusionSupport>,
}

impl KernelInner {
    /// The kernel's shape (`None` before it is finalized).
    pub(crate) fn shape(&self) -> Option<&KernelShape> {
        let fin = self.final_()?;
        Some(self.shape.get_or_init(|| {
            let (tiling, fast, flexible, process) = match &self.functions {
                KernelFunctions::Tiling { fast, flexible, .. } => (true, fast.is_some(), flexible.is_some(), false),
                KernelFunctions::User { process } => (false, false, false, process.is_some()),
            };
            KernelShape {
                params: fin.params.clone(),
                attrs: fin.attrs,
                alias_hints: fin.alias_hints.clone(),
                functions: [
                    tiling,
                    fast,
                    flexible,
                    process,
                    self.init.is_some(),
                    self.deinit.is_some(),
                    self.control.is_some(),
                ],
                targets: self.targets.iter().map(|(t, _)| t.to_ascii_lowercase()).collect(),
                validator_key: self.validator_key,
                rows: self.functions.rows().is_some(),
                fusion: fin.fusion,
            }
        }))
    }

    /// Whether a node verified with this version can move to `next` with nothing redone: one shape
    /// (so one tile plan, one placement rule), one nonzero validator key (a generated validator, a
    /// pure function of the signature: the same metas), and no per-node code besides processing —
    /// no init, deinit or control function, no local data, no target implementations (a node's
    /// placement is the host's either way). Such a move is the swap of the kernel pointer alone
    /// (`graph/body.rs::rebind_replaced`).
    pub(crate) fn rebinds_in_place(&self, next: &KernelInner) -> bool {
        let (Some(old), Some(new)) = (self.shape(), next.shape()) else { return false };
        old == new
            && new.validator_key != 0
            && new.functions[4..] == [false; 3]
            && new.targets.is_empty()
            && new.attrs.local_data_size == 0
    }

    /// Record that `next` replaces this kernel (module reload): `next` joins this kernel's lineage
    /// as its newest version.
    pub(super) fn replace_with(&self, next: &Arc<KernelInner>) {
        let lineage = Arc::clone(self.lineage.get_or_init(Default::default));
        *lock(&lineage.newest) = Arc::downgrade(next);
        // A staged successor has no lineage yet; if it had one, it would be this one.
        let _ = next.lineage.set(lineage);
        self.replaced.store(true, Ordering::Release);
    }

    /// The newest version of this kernel (itself if it was never replaced, or if its newest version
    /// is gone with an unloaded module).
    pub(crate) fn latest(self: &Arc<Self>) -> Arc<KernelInner> {
        self.lineage.get().and_then(|l| lock(&l.newest).upgrade()).unwrap_or_else(|| Arc::clone(self))
    }

    /// Give back the kernel's unit of the kernel count (it left the table).
    pub(super) fn release_slot(&self) {
        lock(&self.slot).take();
    }

    pub(super) fn build(&self) -> MutexGuard<'_, KernelBuild> {
        lock(&self.build)
    }
    pub(crate) fn final_(&self) -> Option<&FinalKernel> {
        self.finalized.get()
    }

    /// The kernel's implementation for target `name` (case-insensitive), if it registered one.
    pub(crate) fn target_impl(&self, name: &str) -> Option<&TargetKernel> {
        self.targets.iter().find(|(t, _)| t.eq_ignore_ascii_case(name)).map(|(_, k)| k)
    }

    /// Whether the kernel has a process function for any target (its own).
    pub(crate) fn runs_anywhere(&self) -> bool {
        !matches!(self.functions, KernelFunctions::User { process: None })
    }
}
