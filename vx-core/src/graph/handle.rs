//! The public graph handle (`vx_graph`): creation, naming, queries, node creation and removal.

use std::fmt;
use std::sync::{Arc, Mutex};

use vx_plugin_abi::{BorderMode, Status};

use crate::context::Context;
use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::node::{Node, Perf};
use crate::kernel::handle::Kernel;
use crate::kernel::local_data::LocalData;
use crate::kernel::record::KernelInner;
use crate::kernel::signature::ParamSpec;
use crate::kernel::users::StaleNode;
use crate::shared::ResourceKind;
use crate::shared::{AsContext, ContextShared, Sealed, VirtualScope};
use crate::support::ids::next_id;
use crate::support::sync::lock;

use super::{GraphBody, GraphInner, NodeRun, NodeSlot, NodeStats, Observed, stale};
use super::{GraphState, pipeline};

/// A graph handle (`vx_graph`). Clones share the graph; dropping the last handle releases the
/// graph and destroys its nodes (calling their deinit callbacks).
#[derive(Clone)]
pub struct Graph {
    pub(super) inner: Arc<GraphInner>,
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

pub(super) fn check_param(
    graph: &GraphInner,
    kernel: &KernelInner,
    index: usize,
    spec: ParamSpec,
    r: &Reference,
) -> Result<()> {
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
                    products: None,
                    rebound: Vec::new(),
                    checked_reloads: std::sync::atomic::AtomicU64::new(crate::graph::body::NOT_CHECKED),
                    deferred: None,
                    fusion: Default::default(),
                    fusion_override: None,
                }),
                ports: Mutex::new(Vec::new()),
                observed: Observed::default(),
                scheduled: Mutex::new(None),
                queues: Arc::new(pipeline::Queues::new()),
                auto_aging: Mutex::new(Vec::new()),
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

    /// The graph's process-unique id (never reused).
    pub fn id(&self) -> u64 {
        self.inner.id
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

    /// The graph's time table, one row per unit that runs: a node, or a fused group (its members
    /// run as one and share one time, so the group is one row naming them all, in the order each
    /// step runs them). Rows in node creation order, a group at its first member's place. The
    /// groups are those of the last verification (a graph changed since shows them until it is
    /// verified again). Takes the graph's lock, like [`Graph::node_perf`]: not from the graph's
    /// own callbacks. [`PerfTable`]'s `Display` prints it.
    pub fn perf_table(&self) -> Result<PerfTable> {
        let body = self.inner.lock()?;
        let mut rows: Vec<PerfRow> = Vec::new();
        let mut done = vec![false; body.nodes.len()];
        for (n, slot) in body.nodes.iter().enumerate() {
            let Some(slot) = slot else { continue };
            let unit = body.fusion.unit(n);
            if done.get(unit).copied().unwrap_or(true) {
                continue;
            }
            done[unit] = true;
            // A group's members in run order (its leader is `unit`); a node alone is itself.
            let members: Vec<&NodeSlot> = match body.fusion.led_by(unit) {
                Some(g) => g.nodes().iter().filter_map(|&m| body.nodes.get(m).and_then(Option::as_ref)).collect(),
                None => vec![slot],
            };
            let timed = body.nodes.get(unit).and_then(Option::as_ref).unwrap_or(slot);
            rows.push(PerfRow {
                nodes: members.iter().map(|m| m.name.clone()).collect(),
                kernels: members.iter().map(|m| m.kernel.name.clone()).collect(),
                perf: timed.stats.get().1,
            });
        }
        Ok(PerfTable { rows, graph: *lock(&self.inner.observed.perf) })
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
        // At most one more than the kernel takes is collected: a caller's endless (or huge)
        // iterator is refused, not collected.
        let mut given: Vec<Option<Reference>> = params.into_iter().take(fin.params.len() + 1).map(Into::into).collect();
        if given.len() > fin.params.len() {
            return Err(ctxt(
                Error::new(ErrorKind::InvalidParameters, "too many parameters for the kernel")
                    .expected_found(fin.params.len(), format!("at least {}", given.len())),
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
        let owner: std::sync::Weak<dyn crate::kernel::users::IdleRebind> = Arc::downgrade(&self.inner) as _;
        let user = kernel.table.register_use(k, &g.name, &name, owner);
        drop(swap);
        let stats = Arc::new(NodeStats(Mutex::new((Status::Success, Perf::default()))));
        {
            let mut observed = lock(&g.observed.nodes);
            observed.resize(index, None);
            observed.push(Some(Arc::clone(&stats)));
        }
        body.nodes.push(Some(NodeSlot {
            key: crate::kernel::contexts::NodeKey { graph: g.id, index },
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
            noted: None,
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
        Ok(Node { graph: Arc::downgrade(&self.inner), index, graph_id: self.inner.id })
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

/// One row of a [`PerfTable`]: a node, or a fused group of nodes that run as one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PerfRow {
    /// The node's name, or the group's members in node creation order.
    pub nodes: Vec<String>,
    /// Each node's kernel name, as `nodes`.
    pub kernels: Vec<String>,
    /// The unit's execution times (a fused group's are the group's, measured once per run).
    pub perf: Perf,
}

impl PerfRow {
    /// A fused group (more than one node).
    pub fn is_fused(&self) -> bool {
        self.nodes.len() > 1
    }

    /// The row's name: the node's, or `fused: a + b + c` for a group.
    pub fn label(&self) -> String {
        if self.is_fused() { format!("fused: {}", self.nodes.join(" + ")) } else { self.nodes[0].clone() }
    }

    /// The row's kernel column: the node's kernel, or `N kernels` for a group.
    pub fn kernel_label(&self) -> String {
        if self.is_fused() { format!("{} kernels", self.kernels.len()) } else { self.kernels[0].clone() }
    }
}

/// A graph's time table ([`Graph::perf_table`]): a row per unit that runs, and the whole graph's.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PerfTable {
    /// One row per node or fused group.
    pub rows: Vec<PerfRow>,
    /// The whole graph's times.
    pub graph: Perf,
}

impl fmt::Display for PerfTable {
    /// Columns `node`, `kernel`, `avg`, `min`, `max` (µs); a fused group is one row, `fused: a + b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = |d: std::time::Duration| format!("{:>9.1} µs", d.as_secs_f64() * 1e6);
        let labels: Vec<(String, String)> = self.rows.iter().map(|r| (r.label(), r.kernel_label())).collect();
        let nw = labels.iter().map(|l| l.0.chars().count()).max().unwrap_or(0).max(5);
        let kw = labels.iter().map(|l| l.1.chars().count()).max().unwrap_or(0).max(6);
        writeln!(f, "{:<nw$}  {:<kw$}  {:>12} {:>12} {:>12}", "node", "kernel", "avg", "min", "max")?;
        for ((name, kernel), r) in labels.iter().zip(&self.rows) {
            writeln!(f, "{name:<nw$}  {kernel:<kw$}  {} {} {}", us(r.perf.avg()), us(r.perf.min), us(r.perf.max))?;
        }
        writeln!(
            f,
            "{:<nw$}  {:<kw$}  {} {} {}",
            "graph",
            "",
            us(self.graph.avg()),
            us(self.graph.min),
            us(self.graph.max)
        )
    }
}
