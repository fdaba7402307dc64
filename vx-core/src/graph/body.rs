//! What a graph's lock guards (`GraphBody`: nodes, schedule, memory, pipeline state) and the shared
//! graph object (`GraphInner`: the lock, the control ports, what can be read while it runs), with the
//! rebinding of nodes after a module reload and the guard against re-entering a running graph.
//!
//! Why rebinding never mixes versions within a frame, and how idle graphs move at the reload
//! (`rebind_replaced`, `rebind_if_idle`), is argued in `docs/design/concurrency.md`.
//!
//! **Observing a running graph.** `Graph::state` reads `Running` from an atomic count of runs
//! (`Observed::runs`: `process`, a `schedule`d run until its thread ends) or from the queues'
//! streaming flag, before it would take the graph's lock; a node's status and perf live in its
//! `NodeStats`, beside its run lock (`graph/slot.rs`). So a completion callback, which runs while
//! its run holds the graph's lock, reads them without deadlock; other queries from a callback are
//! refused with `NotSupported` (`ACTIVE_GRAPH`, `GraphInner::lock`).

use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::context::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::node::Perf;
use crate::kernel::record::KernelInner;
use crate::kernel::table::KernelTable;
use crate::kernel::users::StaleNode;
use crate::shared::ResourceSlot;
use crate::support::sync::get_mut;
use crate::support::sync::lock;

use super::{GraphState, pipeline, targets, verify};
use super::{NodeSlot, NodeStats};

/// What can be read of a graph and its nodes while it runs — from any thread, the graph's own
/// kernel and completion callbacks included, which cannot take the graph's lock.
#[derive(Default)]
pub(crate) struct Observed {
    /// Runs under way: `process`, and a `schedule`d run until its thread ends.
    pub(super) runs: std::sync::atomic::AtomicUsize,
    /// `VX_GRAPH_PERFORMANCE`.
    pub(super) perf: Mutex<Perf>,
    /// Per node index (`None` once removed): status and perf of its last run.
    pub(super) nodes: Mutex<Vec<Option<Arc<NodeStats>>>>,
}

/// Counts a run in [`Observed::runs`] while alive.
pub(crate) struct RunGuard<'a>(&'a Observed);

impl<'a> RunGuard<'a> {
    pub(super) fn enter(o: &'a Observed) -> RunGuard<'a> {
        o.runs.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        RunGuard(o)
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.runs.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

pub(crate) struct GraphBody {
    pub(super) nodes: Vec<Option<NodeSlot>>,
    pub(super) verified: bool,
    pub(super) state: GraphState,
    /// Node indices by level: every node's producers are in earlier levels.
    pub(super) schedule: Vec<Vec<usize>>,
    /// Nodes rebound to reloaded kernels so far.
    pub(super) reloads: u64,
    /// The memory plan of the virtual objects (pass `memory plan`).
    pub(crate) memory: verify::PlanState,
    /// One kernel scratch arena per executor: crew helper `i` uses `scratch[i]`, the calling
    /// thread the last (pass `scratch arenas`). Empty when no node asked for scratch memory.
    pub(crate) scratch: Vec<Mutex<crate::data::buffer::RawBuf>>,
    /// Graph parameters: (node index, parameter index) (`vxAddParameterToGraph`).
    pub(super) graph_params: Vec<(usize, u32)>,
    /// The schedule config of a pipelined graph (queue modes; `None`: sequential).
    pub(super) pipeline: Option<Arc<pipeline::ScheduleConfig>>,
    /// The frame slots of a pipelined graph (pass `frame slots`).
    pub(crate) frames: verify::FrameSlots,
    /// What the graph passes of the last complete verification produced, kept for a re-verification
    /// of rebound nodes only (`None` once anything else changed).
    pub(crate) products: Option<verify::Products>,
    /// Nodes rebound by reloads since the last verification (with what they were verified with).
    pub(crate) rebound: Vec<verify::Rebound>,
    /// The kernel table's reload count when the nodes were last found on their newest kernels
    /// ([`NOT_CHECKED`]: look).
    pub(super) checked_reloads: std::sync::atomic::AtomicU64,
    /// An error found when no run was there to report it (check mode's comparison after nodes
    /// moved in place right after a reload): the next run returns it.
    pub(super) deferred: Option<Error>,
    /// The fused groups of the last verification (pass `fusion`).
    pub(super) fusion: crate::graph::fusion::FusionState,
    /// This graph's fusion setting (`Graph::set_fusion`; `None`: the context's).
    pub(super) fusion_override: Option<bool>,
}

/// `GraphBody::checked_reloads` of a graph whose nodes must be looked at.
pub(super) const NOT_CHECKED: u64 = u64::MAX;

impl GraphBody {
    /// A module reload replaced the kernel of some node: one atomic load when no reload happened
    /// since the nodes were last looked at, else one per node.
    pub(super) fn kernel_replaced(&self, kernels: &KernelTable) -> bool {
        use std::sync::atomic::Ordering;
        let epoch = kernels.reload_epoch();
        if epoch == self.checked_reloads.load(Ordering::Relaxed) {
            return false;
        }
        let replaced = self.nodes.iter().flatten().any(|n| n.kernel.replaced.load(Ordering::Acquire));
        if !replaced {
            self.checked_reloads.store(epoch, Ordering::Relaxed);
        }
        replaced
    }

    /// Make the graph ready to run, as `process` and the pipeline's coordinator both need it: nodes
    /// rebound to reloaded kernels, then the automatic (re-)verification if anything changed.
    pub(super) fn prepare_to_run(&mut self, g: &GraphInner) -> Result<()> {
        if let Some(e) = self.deferred.take() {
            self.invalidate();
            return Err(e);
        }
        self.move_to_reloaded(g, false)?;
        if !self.verified && !verify::reverify_rebound(g, self)? {
            let never = self.nodes.iter().flatten().all(|n| !n.initialized);
            verify::verify_body(g, self, never)?;
        }
        Ok(())
    }

    /// Move the nodes whose kernel a reload replaced to its newest version ([`rebind_replaced`];
    /// `in_place_only`: only those that move in place), then record the reload count if none is
    /// left, and in check mode compare what moved in place with a complete verification.
    fn move_to_reloaded(&mut self, g: &GraphInner, in_place_only: bool) -> Result<()> {
        let kernels = &g.ctx.inner.kernels;
        let epoch = kernels.reload_epoch();
        if !self.kernel_replaced(kernels) {
            return Ok(());
        }
        let done = rebind_replaced(self, kernels, in_place_only).map_err(|e| e.in_graph(&g.name()))?;
        if done.left == 0 {
            // Every node is on the newest version as of `epoch` (or of a later reload).
            self.checked_reloads.store(epoch, std::sync::atomic::Ordering::Relaxed);
        }
        if done.in_place > 0 && self.verified {
            // Nothing was re-verified: in check mode, compare with a complete verification.
            verify::check_in_place_rebind(g, self)?;
        }
        Ok(())
    }

    /// The graph changed (or is being verified): it must be verified again before it runs, by the
    /// full path.
    pub(super) fn invalidate(&mut self) {
        self.verified = false;
        self.state = GraphState::Unverified;
        self.products = None;
        for r in self.rebound.drain(..) {
            if let Some(s) = self.nodes.get_mut(r.node).and_then(Option::as_mut) {
                s.noted = None;
            }
        }
        // A node added or changed may hold a replaced kernel: look at the next run.
        self.checked_reloads.store(NOT_CHECKED, std::sync::atomic::Ordering::Relaxed);
    }
}

pub(crate) struct GraphInner {
    pub(super) id: u64,
    pub(super) ctx: Context,
    /// Shared with the kernel uses of the graph's nodes.
    pub(super) name: Arc<Mutex<String>>,
    pub(super) body: Mutex<GraphBody>,
    /// Each node's control port (by node index), reachable while the graph processes.
    pub(super) ports: Mutex<Vec<Option<Arc<targets::ControlPort>>>>,
    /// State, perf and node stats readable while the graph runs.
    pub(super) observed: Observed,
    /// The run of `Graph::schedule`, until `Graph::wait` collects it.
    pub(super) scheduled: Mutex<Option<std::thread::JoinHandle<Result<()>>>>,
    /// The graph-parameter queues of a pipelined graph and its coordinator's inbox.
    pub(super) queues: Arc<pipeline::Queues>,
    /// The delays aged after each successful process (`vxRegisterAutoAging`).
    pub(super) auto_aging: Mutex<Vec<crate::graph::delay::Delay>>,
    pub(super) _slot: ResourceSlot,
}

/// Rebind nodes whose kernel was replaced by a module reload: the old instance is deinitialized
/// (with the old code, still mapped), the node takes the newest kernel and is re-verified — or,
/// when the two versions differ in code alone (`KernelInner::rebinds_in_place`), the node takes
/// the new kernel with its verified state as it was (no deinit/init exist to run, the validator
/// would return what it returned). Returns how many nodes moved in place.
///
/// Which nodes move, and to which kernel, is decided in one step under the kernel table's
/// `rebinding` lock, which a reload's swap excludes: a frame runs every node of a module on one
/// version, never some on the old and some on the new. The deinits run after the lock is released.
pub(super) fn rebind_replaced(body: &mut GraphBody, kernels: &KernelTable, in_place_only: bool) -> Result<Rebinds> {
    // A verified graph changed only by reloads keeps what its graph passes produced: the next
    // verification visits the rebound nodes alone (`verify/rebound.rs`).
    let proportional = body.products.is_some();
    let (mut in_place, mut left) = (0, 0);
    let moves: Vec<(usize, Arc<KernelInner>)> = {
        let _consistent = kernels.rebinding();
        // The newest version of each replaced one, looked up once, and whether a node moves to it
        // in place (most nodes share a few pairs of versions).
        let mut pair: Option<(*const KernelInner, Arc<KernelInner>, bool)> = None;
        let mut moves = Vec::new();
        for (i, s) in body.nodes.iter_mut().enumerate() {
            let Some(s) = s else { continue };
            if !s.kernel.replaced.load(std::sync::atomic::Ordering::Acquire) {
                continue;
            }
            let old = Arc::as_ptr(&s.kernel);
            let (next, same_code_path) = match &pair {
                Some((o, next, same)) if *o == old => (Arc::clone(next), *same),
                _ => {
                    let next = s.kernel.latest();
                    let same = s.kernel.rebinds_in_place(&next);
                    pair = Some((old, Arc::clone(&next), same));
                    (next, same)
                }
            };
            // Nothing newer is left when the reloaded module was unloaded since: the node keeps
            // the version it has.
            if Arc::ptr_eq(&s.kernel, &next) {
                continue;
            }
            // Nothing of its verification depends on which of the two versions it runs (no
            // lifecycle, one validator, one shape): the node moves with its verified state intact
            // and the graph stays as verified as it was. Not a node already noted for
            // re-verification, nor one whose valid rectangles came from a callback of the old code.
            let moves_in_place = proportional
                && same_code_path
                && s.noted.is_none()
                && s.valid_rect_fns.iter().all(Option::is_none)
                && s.tiling.is_some() == s.tiling_kernel();
            if in_place_only && !moves_in_place {
                left += 1;
                continue;
            }
            // Each node's use moves where the move is decided (under the read side): a reload's
            // look sees it on the old version or the new.
            s.user.rebind(Arc::clone(&next));
            if moves_in_place {
                s.kernel = next;
                in_place += 1;
            } else {
                moves.push((i, next));
            }
        }
        moves
    };
    body.reloads += in_place as u64;
    if in_place > 0 {
        tracing::debug!(nodes = in_place, "nodes rebound in place to reloaded kernels of the same shape and validator");
    }
    if moves.is_empty() {
        return Ok(Rebinds { in_place, left });
    }
    let mut first_error = None;
    for (i, next) in moves {
        let Some(s) = body.nodes[i].as_mut() else { continue };
        // A node noted before keeps what it was verified with (a second reload, or an input
        // replaced first).
        if proportional {
            let had_valid_rect_fn = s.valid_rect_fns.iter().any(Option::is_some);
            match s.noted {
                None => {
                    s.noted = Some(body.rebound.len());
                    body.rebound.push(verify::Rebound {
                        node: i,
                        reloaded: true,
                        inputs_replaced: false,
                        verified_with: Arc::clone(&s.kernel),
                        had_valid_rect_fn,
                        tiling: s.tiling.take(),
                    });
                }
                Some(k) if !body.rebound[k].reloaded => {
                    let r = &mut body.rebound[k];
                    r.reloaded = true;
                    r.had_valid_rect_fn = had_valid_rect_fn;
                    r.tiling = s.tiling.take();
                }
                Some(_) => {}
            }
        }
        if let Err(e) = s.deinit(&kernels.shared) {
            first_error.get_or_insert(e);
        }
        tracing::debug!(node = %s.name, kernel = %next.name, "node rebound to the reloaded kernel");
        let n = next.num_params as usize;
        s.params.resize(n, None);
        s.valid_rect_fns.iter_mut().for_each(|f| *f = None);
        s.valid_rect_fns.resize(n, None);
        s.tiling = None;
        s.kernel = next;
        s.dirty = true;
        body.reloads += 1;
    }
    if first_error.is_some() || !proportional {
        body.invalidate();
    } else {
        body.verified = false;
        body.state = GraphState::Unverified;
    }
    first_error.map_or(Ok(Rebinds { in_place, left }), Err)
}

/// What [`rebind_replaced`] did.
pub(super) struct Rebinds {
    /// Nodes moved in place (nothing to re-verify).
    in_place: usize,
    /// Nodes left on a replaced version (`in_place_only`: they move at the graph's next run).
    left: usize,
}

impl crate::kernel::users::IdleRebind for GraphInner {
    /// Right after a reload published new versions: if no one holds the graph (it is not running,
    /// not in a callback of its own, not pipelined), the nodes that move in place move now —
    /// their old versions (and a library no one else holds) are released here, not in the next
    /// frame. Nodes needing re-verification or a deinit/init are left to the next run, which
    /// moves them before any node runs: a frame still sees every node of a module on one version
    /// (every run rebinds under the lock it runs under).
    fn rebind_if_idle(&self) {
        let Ok(mut body) = self.body.try_lock() else { return };
        let body = &mut *body;
        if body.pipeline.is_some() || self.queues.streaming() {
            return;
        }
        // What the check finds now is reported by the next run.
        if let Err(e) = body.move_to_reloaded(self, true) {
            body.deferred.get_or_insert(e);
        }
    }
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
    pub(super) static ACTIVE_GRAPH: Cell<u64> = const { Cell::new(0) };
}

/// Marks `id` active on this thread until dropped.
pub(super) struct ActiveGuard(u64);

impl ActiveGuard {
    pub(super) fn enter(id: u64) -> ActiveGuard {
        ActiveGuard(ACTIVE_GRAPH.with(|c| c.replace(id)))
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        ACTIVE_GRAPH.with(|c| c.set(self.0));
    }
}

impl GraphInner {
    pub(super) fn name(&self) -> String {
        lock(&self.name).clone()
    }

    /// Lock the graph, refusing re-entry from one of its own callbacks (which would deadlock).
    ///
    /// From inside a kernel callback (this thread verifies or processes some graph), another graph is
    /// only locked if it is free: waiting could deadlock (graph A's kernel processing B while B's
    /// kernel processes A on another thread), so a busy graph is refused with `NotSupported`.
    pub(super) fn lock(&self) -> Result<MutexGuard<'_, GraphBody>> {
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
    pub(super) fn lock_for_pipeline(&self) -> Result<MutexGuard<'_, GraphBody>> {
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
