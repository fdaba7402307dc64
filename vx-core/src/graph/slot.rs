//! A node's place in a graph: its kernel, parameters and per-verification state (`NodeSlot`), its
//! run-time instance (`NodeRun`: local data, kernel memory, instance context) and the statistics
//! readable while it runs (`NodeStats`).

use std::sync::{Arc, Mutex, MutexGuard};

use vx_plugin_abi::{BorderMode, Neighborhood, Status};

use crate::data::reference::Reference;
use crate::error::Result;
use crate::graph::node::Perf;
use crate::kernel::contexts::LifecycleContext;
use crate::kernel::local_data::{LocalData, Phase};
use crate::kernel::meta_format::ValidRectFn;
use crate::kernel::record::KernelInner;
use crate::kernel::signature::ParamSpec;
use crate::kernel::users::KernelUse;
use crate::shared::ContextShared;
use crate::shared::ResourceSlot;
use crate::support::sync::lock;

use super::targets;

/// A node's `VX_NODE_STATUS` and `VX_NODE_PERFORMANCE`, apart from its run lock (held while it runs:
/// a user node, or a tiling node that takes commands; other tiling nodes have no run state).
pub(crate) struct NodeStats(pub(crate) Mutex<(Status, Perf)>);

impl NodeStats {
    pub(super) fn record(&self, status: Status, took: std::time::Duration) -> Perf {
        let mut s = lock(&self.0);
        s.0 = status;
        s.1.record(took);
        s.1
    }
    pub(super) fn get(&self) -> (Status, Perf) {
        *lock(&self.0)
    }
}

pub(crate) struct NodeRun {
    pub(super) local: LocalData,
    /// Kernel memory: persistent blocks and the scratch layout (allocated in init).
    pub(crate) memory: crate::kernel::memory::NodeMemory,
    /// The typed instance context (`tivxSetTargetKernelInstanceContext`).
    pub(crate) instance: crate::kernel::instance::InstanceContext,
}

pub(crate) struct NodeSlot {
    /// The node's identity (its graph's id and its index there).
    pub(super) key: crate::kernel::contexts::NodeKey,
    pub(super) name: String,
    pub(super) kernel: Arc<KernelInner>,
    pub(super) params: Vec<Option<Reference>>,
    pub(super) border: BorderMode,
    /// The input neighborhood (tiling nodes; starts as the kernel's, may be overridden).
    pub(super) neighborhood: Neighborhood,
    /// Parameter pairs (input, output) sharing one buffer, decided by the `aliasing` pass.
    pub(super) aliased: Vec<(u32, u32)>,
    /// Every alias hint's decision at the last verification, with the reason of each refusal.
    pub(super) alias_decisions: Vec<crate::graph::verify::AliasDecision>,
    /// The hints that passed the topology rules at the last verification (a change re-verifies).
    pub(super) alias_candidates: Vec<(u32, u32)>,
    /// The tile plan and arenas of a verified tiling node.
    pub(super) tiling: Option<crate::graph::tiling::TilingState>,
    /// A re-verification trigger of the spec occurred since the last verification.
    pub(super) dirty: bool,
    /// Its entry in `GraphBody::rebound` (a proportional re-verification will visit it).
    pub(super) noted: Option<usize>,
    /// Validate and init ran (so deinit is due at re-verification or destruction).
    pub(super) initialized: bool,
    pub(super) valid_rect_fns: Vec<Option<Arc<ValidRectFn>>>,
    /// The node's run state; shared with its control port, so a command reaches it without the
    /// graph's lock (and waits for the node's process call, never for the whole frame).
    pub(super) run: Arc<Mutex<NodeRun>>,
    /// Status and perf of its last run, readable while it runs (also kept in `Observed::nodes`).
    pub(super) stats: Arc<NodeStats>,
    /// The target the application asked for (`Node::set_target`).
    pub(super) requested_target: Option<String>,
    /// Where the node runs and with which functions (pass `targets`).
    pub(super) placement: Option<targets::Placement>,
    /// Where commands reach the node, while it is initialized.
    pub(super) port: Option<Arc<targets::ControlPort>>,
    /// `vxAssignNodeCallback`.
    pub(super) callback: Option<Arc<targets::NodeCallbackFn>>,
    /// The node's entry in the kernel table's record of uses (a reload names the nodes it would
    /// leave on old code); replaced when the node rebinds.
    pub(super) user: Arc<KernelUse>,
    pub(super) _slot: ResourceSlot,
}

impl NodeSlot {
    pub(super) fn run(&self) -> MutexGuard<'_, NodeRun> {
        lock(&self.run)
    }

    /// The node runs a tiling kernel.
    pub(super) fn tiling_kernel(&self) -> bool {
        matches!(self.kernel.functions, crate::kernel::callbacks::KernelFunctions::Tiling { .. })
    }

    pub(super) fn spec(&self, index: usize) -> ParamSpec {
        self.kernel.final_().expect("nodes are created from finalized kernels").params[index]
    }

    /// Call deinit (the kernel's, or its target implementation's delete) under the spec's
    /// local-data rules, on the node's target. Then drop the instance context and free the kernel
    /// memory deinit left, reporting persistent blocks as a leak.
    pub(super) fn deinit(&mut self, shared: &Arc<ContextShared>) -> Result<()> {
        if !self.initialized {
            return Ok(());
        }
        self.initialized = false;
        if let Some(port) = self.port.take() {
            port.retire();
        }
        match self.placement.as_ref().and_then(|p| p.executor.clone()) {
            // A stopped target (the context is going away) cannot run it: run it here.
            Some(ex) => match ex.run_sync(|| self.deinit_here(shared)) {
                Ok(r) => r,
                Err(_) => self.deinit_here(shared),
            },
            None => self.deinit_here(shared),
        }
    }

    /// What init or deinit sees of this node (`run` is the node's locked run state).
    pub(super) fn lifecycle<'a>(
        &'a self,
        run: &'a mut NodeRun,
        phase: Phase,
        resources: &'a Arc<crate::shared::Resources>,
    ) -> LifecycleContext<'a> {
        LifecycleContext {
            node: self.key,
            node_name: &self.name,
            params: &self.params,
            border: self.border,
            aliased: &self.aliased,
            phase,
            kernel_local_size: self.kernel.final_().map_or(0, |f| f.attrs.local_data_size),
            local: &mut run.local,
            memory: &mut run.memory,
            resources,
            instance: &mut run.instance,
        }
    }

    fn deinit_here(&mut self, shared: &Arc<ContextShared>) -> Result<()> {
        let deinit = self.deinit_fn();
        let mut run = lock(&self.run);
        let run = &mut *run;
        let result = match deinit {
            None => Ok(()),
            Some(deinit) => {
                let mut lc = self.lifecycle(run, Phase::Deinit, &shared.resources);
                crate::support::unwind::call_guarded("deinit", || deinit(&mut lc))
                    .map_err(|e| e.in_kernel(&self.kernel.name).in_node(&self.name))
            }
        };
        run.instance.clear();
        if let Some((blocks, bytes)) = run.memory.reclaim() {
            shared.report_leak(crate::shared::MemoryLeak {
                node: self.name.clone(),
                kernel: self.kernel.name.clone(),
                blocks,
                bytes,
            });
        }
        result
    }
}
