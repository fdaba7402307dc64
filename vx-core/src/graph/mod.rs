//! Graphs (`vx_graph`): nodes over data objects, verified then processed. This file holds the
//! graph object and node creation/removal; [`crate::graph::verify`] and [`crate::graph::execute`] hold the two
//! phases.

mod execute;
pub(crate) mod node;
pub(crate) mod parameters;
pub(crate) mod pipeline;
mod schedule;
pub(crate) mod targets;
pub(crate) mod tiling;
pub(crate) mod verify;

use std::cell::Cell;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use vx_plugin_abi::{BorderMode, Neighborhood, Status};

use crate::context::Context;
use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::node::{Node, Perf};
use crate::kernel::contexts::LifecycleContext;
use crate::kernel::handle::Kernel;
use crate::kernel::local_data::{LocalData, Phase};
use crate::kernel::meta_format::ValidRectFn;
use crate::kernel::record::KernelInner;
use crate::kernel::signature::ParamSpec;
use crate::kernel::table::KernelTable;
use crate::kernel::users::{KernelUse, StaleNode};
use crate::shared::{AsContext, ContextShared, Sealed, VirtualScope};
use crate::shared::{ResourceKind, ResourceSlot};
use crate::support::ids::next_id;
use crate::support::sync::get_mut;
use crate::support::sync::lock;

/// `VX_GRAPH_STATE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphState {
    /// Never verified, or changed since the last verification.
    Unverified,
    /// Verified and ready to process.
    Verified,
    /// The last process completed successfully.
    Completed,
    /// The last process stopped at a failing node.
    Abandoned,
    /// `VX_GRAPH_STATE_RUNNING`: a process or a scheduled run is under way, or pipelined frames
    /// are in flight. Read from the graph's own callbacks too.
    Running,
}

/// What can be read of a graph and its nodes while it runs — from any thread, the graph's own
/// kernel and completion callbacks included, which cannot take the graph's lock.
#[derive(Default)]
pub(crate) struct Observed {
    /// Runs under way: `process`, and a `schedule`d run until its thread ends.
    pub(crate) runs: std::sync::atomic::AtomicUsize,
    /// `VX_GRAPH_PERFORMANCE`.
    pub(crate) perf: Mutex<Perf>,
    /// Per node index (`None` once removed): status and perf of its last run.
    pub(crate) nodes: Mutex<Vec<Option<Arc<NodeStats>>>>,
}

/// A node's `VX_NODE_STATUS` and `VX_NODE_PERFORMANCE`, apart from its run lock (held while it runs).
pub(crate) struct NodeStats(Mutex<(Status, Perf)>);

impl NodeStats {
    pub(crate) fn record(&self, status: Status, took: std::time::Duration) -> Perf {
        let mut s = lock(&self.0);
        s.0 = status;
        s.1.record(took);
        s.1
    }
    pub(crate) fn get(&self) -> (Status, Perf) {
        *lock(&self.0)
    }
}

/// Counts a run in [`Observed::runs`] while alive.
pub(crate) struct RunGuard<'a>(&'a Observed);

impl<'a> RunGuard<'a> {
    pub(crate) fn enter(o: &'a Observed) -> RunGuard<'a> {
        o.runs.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        RunGuard(o)
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.runs.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

pub(crate) struct NodeRun {
    pub(crate) local: LocalData,
    /// Kernel memory: persistent blocks and the scratch layout (allocated in init).
    pub(crate) memory: crate::kernel::memory::NodeMemory,
    /// The typed instance context (`tivxSetTargetKernelInstanceContext`).
    pub(crate) instance: crate::kernel::instance::InstanceContext,
}

pub(crate) struct NodeSlot {
    pub(crate) name: String,
    pub(crate) kernel: Arc<KernelInner>,
    pub(crate) params: Vec<Option<Reference>>,
    pub(crate) border: BorderMode,
    /// The input neighborhood (tiling nodes; starts as the kernel's, may be overridden).
    pub(crate) neighborhood: Neighborhood,
    /// Parameter pairs (input, output) sharing one buffer, decided by the `aliasing` pass.
    pub(crate) aliased: Vec<(u32, u32)>,
    /// Every alias hint's decision at the last verification, with the reason of each refusal.
    pub(crate) alias_decisions: Vec<crate::graph::verify::AliasDecision>,
    /// The hints that passed the topology rules at the last verification (a change re-verifies).
    pub(crate) alias_candidates: Vec<(u32, u32)>,
    /// The tile plan and arenas of a verified tiling node.
    pub(crate) tiling: Option<crate::graph::tiling::TilingState>,
    /// A re-verification trigger of the spec occurred since the last verification.
    dirty: bool,
    /// Validate and init ran (so deinit is due at re-verification or destruction).
    pub(crate) initialized: bool,
    valid_rect_fns: Vec<Option<Arc<ValidRectFn>>>,
    /// The node's run state; shared with its control port, so a command reaches it without the
    /// graph's lock (and waits for the node's process call, never for the whole frame).
    pub(crate) run: Arc<Mutex<NodeRun>>,
    /// Status and perf of its last run, readable while it runs (also kept in `Observed::nodes`).
    pub(crate) stats: Arc<NodeStats>,
    /// The target the application asked for (`Node::set_target`).
    pub(crate) requested_target: Option<String>,
    /// Where the node runs and with which functions (pass `targets`).
    pub(crate) placement: Option<targets::Placement>,
    /// Where commands reach the node, while it is initialized.
    pub(crate) port: Option<Arc<targets::ControlPort>>,
    /// `vxAssignNodeCallback`.
    pub(crate) callback: Option<Arc<targets::NodeCallbackFn>>,
    /// The node's entry in the kernel table's record of uses (a reload names the nodes it would
    /// leave on old code); replaced when the node rebinds.
    pub(crate) user: Arc<KernelUse>,
    _slot: ResourceSlot,
}

impl NodeSlot {
    pub(crate) fn run(&self) -> MutexGuard<'_, NodeRun> {
        lock(&self.run)
    }

    pub(crate) fn spec(&self, index: usize) -> ParamSpec {
        self.kernel.final_().expect("nodes are created from finalized kernels").params[index]
    }

    /// Call deinit (the kernel's, or its target implementation's delete) under the spec's
    /// local-data rules, on the node's target. Then drop the instance context and free the kernel
    /// memory deinit left, reporting persistent blocks as a leak.
    pub(crate) fn deinit(&mut self, shared: &Arc<ContextShared>) -> Result<()> {
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
    pub(crate) fn lifecycle<'a>(
        &'a self,
        run: &'a mut NodeRun,
        phase: Phase,
        resources: &'a Arc<crate::shared::Resources>,
    ) -> LifecycleContext<'a> {
        LifecycleContext {
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

pub(crate) struct GraphBody {
    pub(crate) nodes: Vec<Option<NodeSlot>>,
    pub(crate) verified: bool,
    pub(crate) state: GraphState,
    /// Node indices by level: every node's producers are in earlier levels.
    schedule: Vec<Vec<usize>>,
    /// Nodes rebound to reloaded kernels so far.
    pub(crate) reloads: u64,
    /// The virtual images' memory plan (pass `memory plan`).
    pub(crate) memory: verify::PlanState,
    /// One kernel scratch arena per executor: crew helper `i` uses `scratch[i]`, the calling
    /// thread the last (pass `scratch arenas`). Empty when no node asked for scratch memory.
    pub(crate) scratch: Vec<Mutex<crate::data::buffer::RawBuf>>,
    /// Graph parameters: (node index, parameter index) (`vxAddParameterToGraph`).
    pub(crate) graph_params: Vec<(usize, u32)>,
    /// The schedule config of a pipelined graph (queue modes; `None`: sequential).
    pub(crate) pipeline: Option<Arc<pipeline::ScheduleConfig>>,
    /// The frame slots of a pipelined graph (pass `frame slots`).
    pub(crate) frames: verify::FrameSlots,
}

impl GraphBody {
    /// A module reload replaced the kernel of some node (one atomic load per node).
    pub(crate) fn kernel_replaced(&self) -> bool {
        self.nodes.iter().flatten().any(|n| n.kernel.replaced.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Make the graph ready to run, as `process` and the pipeline's coordinator both need it: nodes
    /// rebound to reloaded kernels, then the automatic (re-)verification if anything changed.
    pub(crate) fn prepare_to_run(&mut self, g: &GraphInner) -> Result<()> {
        if self.kernel_replaced() {
            rebind_replaced(self, &g.ctx.inner.kernels, &g.name).map_err(|e| e.in_graph(&g.name()))?;
        }
        if !self.verified {
            let never = self.nodes.iter().flatten().all(|n| !n.initialized);
            verify::verify_body(g, self, never)?;
        }
        Ok(())
    }

    /// The graph changed (or is being verified): it must be verified again before it runs.
    fn invalidate(&mut self) {
        self.verified = false;
        self.state = GraphState::Unverified;
    }
}

pub(crate) struct GraphInner {
    pub(crate) id: u64,
    pub(crate) ctx: Context,
    /// Shared with the kernel uses of the graph's nodes.
    pub(crate) name: Arc<Mutex<String>>,
    body: Mutex<GraphBody>,
    /// Each node's control port (by node index), reachable while the graph processes.
    pub(crate) ports: Mutex<Vec<Option<Arc<targets::ControlPort>>>>,
    /// State, perf and node stats readable while the graph runs.
    pub(crate) observed: Observed,
    /// The run of `Graph::schedule`, until `Graph::wait` collects it.
    pub(crate) scheduled: Mutex<Option<std::thread::JoinHandle<Result<()>>>>,
    /// The graph-parameter queues of a pipelined graph and its coordinator's inbox.
    pub(crate) queues: Arc<pipeline::Queues>,
    _slot: ResourceSlot,
}

/// Rebind nodes whose kernel was replaced by a module reload: the old instance is deinitialized
/// (with the old code, still mapped), the node takes the newest kernel and is re-verified.
///
/// Which nodes move, and to which kernel, is decided in one step under the kernel table's
/// `rebinding` lock, which a reload's swap excludes: a frame runs every node of a module on one
/// version, never some on the old and some on the new. The deinits run after the lock is released.
pub(super) fn rebind_replaced(body: &mut GraphBody, kernels: &KernelTable, graph: &Arc<Mutex<String>>) -> Result<()> {
    let moves: Vec<(usize, Arc<KernelInner>, Arc<KernelUse>)> = {
        let _consistent = kernels.rebinding();
        body.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
            .filter(|(_, s)| s.kernel.replaced.load(std::sync::atomic::Ordering::Acquire))
            .map(|(i, s)| (i, s, s.kernel.latest()))
            // Nothing newer is left when the reloaded module was unloaded since: the node keeps
            // the version it has.
            .filter(|(_, s, next)| !Arc::ptr_eq(&s.kernel, next))
            // Registered where the move is decided (under the read side): a reload sees it.
            .map(|(i, s, next)| {
                let user = kernels.register_use(&next, graph, &s.name);
                (i, next, user)
            })
            .collect()
    };
    if moves.is_empty() {
        return Ok(());
    }
    let mut first_error = None;
    for (i, next, user) in moves {
        let Some(s) = body.nodes[i].as_mut() else { continue };
        if let Err(e) = s.deinit(&kernels.shared) {
            first_error.get_or_insert(e);
        }
        tracing::debug!(node = %s.name, kernel = %next.name, "node rebound to the reloaded kernel");
        let n = next.num_params as usize;
        s.params.resize(n, None);
        s.valid_rect_fns = vec![None; n];
        s.tiling = None;
        s.kernel = next;
        s.user = user;
        s.dirty = true;
        body.reloads += 1;
    }
    body.invalidate();
    first_error.map_or(Ok(()), Err)
}

/// The node as a [`StaleNode`] if the newest version of its kernel left the kernel table.
pub(crate) fn stale(s: &NodeSlot, graph: &str) -> Option<StaleNode> {
    if !s.kernel.latest().removed.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    let (module, version) = crate::module::library::origin(&s.kernel).unzip();
    Some(StaleNode { graph: graph.to_owned(), node: s.name.clone(), kernel: s.kernel.name.clone(), module, version })
}

thread_local! {
    /// The graph whose verify/process runs on this thread (0 = none): callbacks must not re-enter it.
    static ACTIVE_GRAPH: Cell<u64> = const { Cell::new(0) };
}

/// Marks `id` active on this thread until dropped.
struct ActiveGuard(u64);

impl ActiveGuard {
    fn enter(id: u64) -> ActiveGuard {
        ActiveGuard(ACTIVE_GRAPH.with(|c| c.replace(id)))
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        ACTIVE_GRAPH.with(|c| c.set(self.0));
    }
}

impl GraphInner {
    pub(crate) fn name(&self) -> String {
        lock(&self.name).clone()
    }

    /// Lock the graph, refusing re-entry from one of its own callbacks (which would deadlock).
    ///
    /// From inside a kernel callback (this thread verifies or processes some graph), another graph is
    /// only locked if it is free: waiting could deadlock (graph A's kernel processing B while B's
    /// kernel processes A on another thread), so a busy graph is refused with `NotSupported`.
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, GraphBody>> {
        if self.queues.streaming() {
            return Err(Error::new(
                ErrorKind::GraphScheduled,
                "the graph is streaming pipelined frames: wait for it (Graph::wait) before changing, verifying or querying it",
            )
            .in_graph(&self.name()));
        }
        self.lock_for_pipeline()
    }

    /// [`lock`](Self::lock) without the streaming check: the pipeline's coordinator takes the
    /// graph with it.
    pub(crate) fn lock_for_pipeline(&self) -> Result<MutexGuard<'_, GraphBody>> {
        let active = ACTIVE_GRAPH.with(|c| c.get());
        if active == self.id {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "a kernel callback cannot modify, verify or process the graph it is running in",
            )
            .in_graph(&self.name()));
        }
        if active == 0 {
            return Ok(lock(&self.body));
        }
        match self.body.try_lock() {
            Ok(guard) => Ok(guard),
            Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Err(Error::new(
                ErrorKind::NotSupported,
                "a kernel callback cannot wait for another graph that is busy on another thread (it could deadlock)",
            )
            .in_graph(&self.name())),
        }
    }
}

impl Drop for GraphInner {
    fn drop(&mut self) {
        self.queues.shut_down();
        let name = self.name();
        let shared = Arc::clone(&self.ctx.inner.shared);
        let body = get_mut(&mut self.body);
        for slot in body.nodes.iter_mut().flatten() {
            if let Err(e) = slot.deinit(&shared) {
                tracing::warn!(graph = %name, "node deinit failed while releasing the graph: {e}");
            }
        }
    }
}

/// A graph handle (`vx_graph`). Clones share the graph; dropping the last handle releases the
/// graph and destroys its nodes (calling their deinit callbacks).
#[derive(Clone)]
pub struct Graph {
    pub(crate) inner: Arc<GraphInner>,
}

impl Sealed for Graph {}
impl AsContext for Graph {
    fn as_context(&self) -> &Arc<ContextShared> {
        &self.inner.ctx.inner.shared
    }
}
impl VirtualScope for Graph {
    fn scope_id(&self) -> u64 {
        self.inner.id
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph('{}')", self.inner.name())
    }
}

fn check_param(graph: &GraphInner, kernel: &KernelInner, index: usize, spec: ParamSpec, r: &Reference) -> Result<()> {
    let ctxt = |e: Error| e.at_parameter(index as u32).in_kernel(&kernel.name).in_graph(&graph.name());
    if r.data_type() != spec.data_type {
        return Err(ctxt(
            Error::new(ErrorKind::InvalidType, "wrong parameter type")
                .on_object(&r.name())
                .expected_found(spec.data_type, r.data_type()),
        ));
    }
    if !graph.ctx.same(r.context()) {
        return Err(ctxt(
            Error::new(ErrorKind::InvalidReference, "the object belongs to another context").on_object(&r.name()),
        ));
    }
    if let Some(scope) = r.header().scope
        && scope != graph.id
    {
        return Err(ctxt(
            Error::new(ErrorKind::InvalidScope, "the virtual object belongs to another graph").on_object(&r.name()),
        ));
    }
    Ok(())
}

impl Graph {
    /// `vxCreateGraph`.
    pub fn new(ctx: &Context) -> Result<Graph> {
        let slot = ctx.inner.shared.acquire(ResourceKind::Graphs)?;
        let id = next_id();
        Ok(Graph {
            inner: Arc::new(GraphInner {
                id,
                ctx: ctx.clone(),
                name: Arc::new(Mutex::new(format!("graph#{id}"))),
                body: Mutex::new(GraphBody {
                    nodes: Vec::new(),
                    verified: false,
                    state: GraphState::Unverified,
                    schedule: Vec::new(),
                    reloads: 0,
                    memory: Default::default(),
                    scratch: Vec::new(),
                    graph_params: Vec::new(),
                    pipeline: None,
                    frames: Default::default(),
                }),
                ports: Mutex::new(Vec::new()),
                observed: Observed::default(),
                scheduled: Mutex::new(None),
                queues: Arc::new(pipeline::Queues::new()),
                _slot: slot,
            }),
        })
    }

    /// A graph with a name (used in every error and log about it).
    pub fn with_name(ctx: &Context, name: &str) -> Result<Graph> {
        let g = Graph::new(ctx)?;
        g.set_name(name);
        Ok(g)
    }

    /// The graph's name.
    pub fn name(&self) -> String {
        self.inner.name()
    }
    /// Rename the graph.
    pub fn set_name(&self, name: &str) {
        *lock(&self.inner.name) = name.to_owned();
    }
    /// The context.
    pub fn context(&self) -> Context {
        self.inner.ctx.clone()
    }

    /// `VX_GRAPH_STATE`. Like every graph operation, refused from a callback of this graph.
    ///
    /// `Running` while a process or scheduled run is under way or pipelined frames are in flight —
    /// also when asked from the graph's own kernel or completion callbacks, which get every other
    /// state of the graph refused (they cannot take its lock).
    pub fn state(&self) -> Result<GraphState> {
        let g = &self.inner;
        if g.observed.runs.load(std::sync::atomic::Ordering::Acquire) > 0 || g.queues.streaming() {
            return Ok(GraphState::Running);
        }
        let state = match g.lock() {
            Ok(body) => body.state,
            // Between the checks above and the lock, a run started (or the pipeline took the graph).
            Err(e) if e.kind() == ErrorKind::GraphScheduled => GraphState::Running,
            Err(e) => return Err(e),
        };
        Ok(state)
    }
    /// `VX_GRAPH_NUMNODES`.
    pub fn num_nodes(&self) -> Result<usize> {
        Ok(self.inner.lock()?.nodes.iter().flatten().count())
    }
    /// `VX_GRAPH_PERFORMANCE`: wall time of whole process calls.
    /// Readable from the graph's own callbacks (the last completed run's).
    pub fn perf(&self) -> Result<Perf> {
        Ok(*lock(&self.inner.observed.perf))
    }
    /// How many times a node of this graph was rebound to a reloaded module kernel.
    pub fn reloads(&self) -> Result<u64> {
        Ok(self.inner.lock()?.reloads)
    }
    /// The nodes that run a kernel version no longer published — a forced module reload dropped or
    /// renamed their kernel, or its module was unloaded: they keep the old code (and its library
    /// mapped) until removed. In node creation order. Each also gets a `tracing` warning at the
    /// forced reload and at every verification of the node.
    pub fn stale_nodes(&self) -> Result<Vec<StaleNode>> {
        let body = self.inner.lock()?;
        let graph = self.inner.name();
        Ok(body.nodes.iter().flatten().filter_map(|s| stale(s, &graph)).collect())
    }
    /// Per-node execution times in node creation order: (node name, kernel name, perf).
    pub fn node_perf(&self) -> Result<Vec<(String, String, Perf)>> {
        let body = self.inner.lock()?;
        Ok(body.nodes.iter().flatten().map(|n| (n.name.clone(), n.kernel.name.clone(), n.stats.get().1)).collect())
    }

    /// `vxCreateGenericNode` + `vxSetParameterByIndex`: a node running `kernel` on `params`
    /// (indexed like the kernel's signature; fewer than the kernel's count leaves the rest unset).
    pub fn add_node<I, R>(&self, kernel: &Kernel, params: I) -> Result<Node>
    where
        I: IntoIterator<Item = R>,
        R: Into<Option<Reference>>,
    {
        let g = &self.inner;
        let mut body = g.lock()?;
        // A handle from before a module reload stands for the kernel's newest version. Resolved
        // under the read side of the kernel table's swap lock: a reload marks the old version
        // removed and links its successor under the write side, so a kernel whose module stays
        // loaded always resolves (to the old or the new version), never to "removed".
        // The node's use is registered under the same read lock (see `kernel/users.rs`).
        let swap = kernel.table.rebinding();
        let latest = kernel.inner.latest();
        let removed = latest.removed.load(std::sync::atomic::Ordering::Acquire);
        let k = &latest;
        let ctxt = |e: Error| e.in_kernel(&k.name).in_graph(&g.name());
        if !g.ctx.same(&kernel.table.shared) {
            return Err(ctxt(Error::new(ErrorKind::InvalidReference, "the kernel belongs to another context")));
        }
        let Some(fin) = k.final_() else {
            return Err(ctxt(Error::new(ErrorKind::InvalidReference, "the kernel is not finalized")));
        };
        if removed {
            return Err(ctxt(Error::new(
                ErrorKind::InvalidReference,
                "the kernel was removed (its module was unloaded, or the kernel removed)",
            )));
        }
        let mut given: Vec<Option<Reference>> = params.into_iter().map(Into::into).collect();
        if given.len() > fin.params.len() {
            return Err(ctxt(
                Error::new(ErrorKind::InvalidParameters, "too many parameters for the kernel")
                    .expected_found(fin.params.len(), given.len()),
            ));
        }
        given.resize(fin.params.len(), None);
        for (i, r) in given.iter().enumerate() {
            if let Some(r) = r {
                check_param(g, k, i, fin.params[i], r)?;
            }
        }
        let slot = g.ctx.inner.shared.acquire(ResourceKind::Nodes).map_err(ctxt)?;
        let index = body.nodes.len();
        let name = format!("{}#{index}", k.name.rsplit('.').next().unwrap_or(&k.name));
        let user = kernel.table.register_use(k, &g.name, &name);
        drop(swap);
        let stats = Arc::new(NodeStats(Mutex::new((Status::Success, Perf::default()))));
        {
            let mut observed = lock(&g.observed.nodes);
            observed.resize(index, None);
            observed.push(Some(Arc::clone(&stats)));
        }
        body.nodes.push(Some(NodeSlot {
            name,
            kernel: Arc::clone(k),
            params: given,
            border: if k.functions.is_tiling() { fin.attrs.border } else { BorderMode::Undefined },
            neighborhood: fin.attrs.neighborhood,
            aliased: Vec::new(),
            alias_decisions: Vec::new(),
            alias_candidates: Vec::new(),
            tiling: None,
            dirty: true,
            initialized: false,
            valid_rect_fns: vec![None; fin.params.len()],
            run: Arc::new(Mutex::new(NodeRun {
                local: LocalData::default(),
                memory: Default::default(),
                instance: Default::default(),
            })),
            stats: Arc::clone(&stats),
            requested_target: None,
            placement: None,
            port: None,
            callback: None,
            user,
            _slot: slot,
        }));
        body.invalidate();
        Ok(Node { graph: Arc::downgrade(&self.inner), index })
    }

    /// `vxRemoveNode`: destroy a node (its deinit runs if it was initialized).
    pub fn remove_node(&self, node: &Node) -> Result<()> {
        let g = &self.inner;
        if !node.graph.upgrade().is_some_and(|n| Arc::ptr_eq(&n, g)) {
            return Err(
                Error::new(ErrorKind::InvalidReference, "the node belongs to another graph").in_graph(&g.name())
            );
        }
        let mut body = g.lock()?;
        let Some(mut slot) = body.nodes.get_mut(node.index).and_then(Option::take) else {
            return Err(Error::new(ErrorKind::InvalidReference, "the node was already removed").in_graph(&g.name()));
        };
        body.invalidate();
        drop(body);
        if let Some(o) = lock(&g.observed.nodes).get_mut(node.index) {
            *o = None;
        }
        slot.deinit(&g.ctx.inner.shared).map_err(|e| e.in_graph(&g.name()))
    }
}
