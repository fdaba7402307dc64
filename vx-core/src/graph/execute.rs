//! Graph execution (`vxProcessGraph`): automatic re-verification when needed, then the nodes level
//! by level in dependency order — a level's independent nodes run concurrently on the context's
//! pool — stopping at the first failing node with an error naming graph, node and kernel.
//!
//! Steady-state processing of a verified graph performs no heap allocation in the runtime: node
//! state lives in per-node slots built at verify, a single-node level runs on the calling thread,
//! and a level of several nodes is shared between the calling thread and the context's crew
//! (`shared::crew`, allocation-free). Pinned by `vx-core/tests/zero_alloc.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use std::time::Instant;

use vx_plugin_abi::Status;

use crate::data::buffer::RawBuf;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::targets::{NodeAction, NodeCompletion};
use crate::graph::{ActiveGuard, Graph, GraphBody, GraphState, NodeSlot, RunGuard};
use crate::kernel::callbacks::KernelFunctions;
use crate::kernel::contexts::ProcessContext;
use crate::shared::ContextShared;
use crate::shared::target::{Job, Latch};
use crate::support::sync::lock;
use crate::support::unwind::call_guarded;

impl Graph {
    /// `vxProcessGraph`: verify first if the graph changed since its last verification (the
    /// spec's automatic re-verification), then run every node once.
    pub fn process(&self) -> Result<()> {
        let g = &self.inner;
        let mut body = g.lock()?;
        if body.pipeline.is_some() {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "the graph is pipelined (a queue mode): enqueue and dequeue its parameters instead of processing it",
            )
            .in_graph(&g.name()));
        }
        // Field values are only computed when a subscriber wants the span (no allocation otherwise).
        let _span = tracing::info_span!("process", graph = %g.name()).entered();
        body.prepare_to_run(g)?;
        let active = ActiveGuard::enter(g.id);
        let t0 = Instant::now();
        let result = {
            let _running = RunGuard::enter(&g.observed);
            run_levels(&g.ctx, g.id, &body, t0)
        };
        // A one-node graph's node ends the graph's run: its end time serves both (one clock read).
        let elapsed = match result {
            Ok(Some(end)) => end.saturating_duration_since(t0),
            _ => t0.elapsed(),
        };
        match result {
            Ok(_) => {
                lock(&g.observed.perf).record(elapsed);
                body.state = GraphState::Completed;
                // Auto-aging rebinds node parameters, which takes the graph's lock: not held now,
                // and the graph no longer marked active on this thread.
                drop(body);
                drop(active);
                self.age_delays()
            }
            Err(e) => {
                body.state = GraphState::Abandoned;
                Err(e.in_graph(&g.name()))
            }
        }
    }
}

/// Run every level; when the graph is one node run here, its end time (timed from `t0`).
fn run_levels(ctx: &crate::context::Context, graph: u64, body: &GraphBody, t0: Instant) -> Result<Option<Instant>> {
    let shared = &ctx.inner.shared;
    let node = |n: usize| body.nodes[n].as_ref().expect("scheduled nodes are live");
    // A fused group's members after its first run with the first (`graph/fusion`): they are
    // neither run here nor sent to a target.
    let follows = |n: usize| body.fusion.follows(n);
    let fused = body.fusion.any();
    // A node (or the group it leads) on a named target runs on its executor, unless this thread
    // is one of that target's (a graph processed from inside a target callback): then it runs here.
    let remote = |n: usize| node(n).executor().is_some_and(|e| !e.is_current()) && !(fused && follows(n));
    if let [level] = body.schedule.as_slice()
        && let [n] = level.as_slice()
        && !remote(*n)
    {
        // One node on this thread: it is timed from the graph's start, and its end is the graph's.
        let (result, end) = run_node_from(shared, graph, &body.scratch, node(*n), &node(*n).params, t0);
        return result.map(|()| Some(end));
    }
    for level in &body.schedule {
        let on_targets = level.iter().filter(|&&n| remote(n)).count();
        let followers = if fused { level.iter().filter(|&&n| follows(n)).count() } else { 0 };
        let level_run = LevelRun { shared, graph, body, first_error: Mutex::new(None), done: Latch::new(on_targets) };
        if on_targets > 0 {
            for &n in level.iter().filter(|&&n| remote(n)) {
                let ex = node(n).executor().expect("remote nodes have an executor");
                let job = Job { run: run_on_target, data: &level_run as *const LevelRun<'_> as *const (), arg: n };
                // SAFETY: `level_run` lives on this stack until `done` is released below: every
                // queued job counts it down once (a job that failed to queue is counted here).
                if let Err(e) = unsafe { ex.submit(job, true) } {
                    level_run.fail(n, e.in_node(&node(n).name));
                    level_run.done.count_down();
                }
            }
        }
        match level.len() - on_targets - followers {
            0 => {}
            1 => {
                let n = if on_targets + followers == 0 {
                    level[0]
                } else {
                    *level.iter().find(|&&n| !remote(n) && !follows(n)).expect("counted")
                };
                if let Err(e) = run_unit(shared, graph, body, n) {
                    level_run.fail(n, e);
                }
            }
            many => {
                // The calling thread and the crew's helpers take the level's host nodes from a
                // shared counter; the error of the first failing node (in schedule order) wins.
                let next = AtomicUsize::new(0);
                shared.crew.run(many - 1, &|| {
                    while let Some(&n) = level.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if (on_targets > 0 && remote(n)) || (followers > 0 && follows(n)) {
                            continue;
                        }
                        if let Err(e) = run_unit(shared, graph, body, n) {
                            level_run.fail(n, e);
                        }
                    }
                });
            }
        }
        if on_targets > 0 {
            level_run.done.wait();
        }
        if let Some((_, e)) = level_run.first_error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            return Err(e);
        }
    }
    Ok(None)
}

/// Run node `n`, or the fused group it leads, on this thread.
fn run_unit(shared: &ContextShared, graph: u64, body: &GraphBody, n: usize) -> Result<()> {
    match body.fusion.led_by(n) {
        Some(group) => {
            let params = |m: usize| body.nodes[m].as_ref().map_or(&[][..], |s| &s.params[..]);
            crate::graph::fusion::run_group(shared, graph, body, group, &params)
        }
        None => {
            let s = body.nodes[n].as_ref().expect("scheduled nodes are live");
            run_node(shared, graph, &body.scratch, s, &s.params)
        }
    }
}

/// One level of one frame, shared by the threads running its nodes.
struct LevelRun<'a> {
    shared: &'a ContextShared,
    graph: u64,
    body: &'a GraphBody,
    /// The first failing node in schedule order, and its error.
    first_error: Mutex<Option<(usize, Error)>>,
    /// Released when every node queued on a target has run.
    done: Latch,
}

impl LevelRun<'_> {
    fn fail(&self, n: usize, e: Error) {
        let mut slot = lock(&self.first_error);
        if slot.as_ref().is_none_or(|(m, _)| n < *m) {
            *slot = Some((n, e));
        }
    }
}

/// The job of one node (or the group it leads) on its target (`arg` = the node's index).
unsafe fn run_on_target(data: *const (), n: usize) {
    // SAFETY: `run_levels` keeps the LevelRun alive until this job counts `done` down.
    let lr = unsafe { &*(data as *const LevelRun<'_>) };
    if let Err(e) = run_unit(lr.shared, lr.graph, lr.body, n) {
        lr.fail(n, e);
    }
    lr.done.count_down();
}

/// The scratch arena of the executor running on this thread: crew helper `i` has `arenas[i]`, the
/// calling thread the last. Locked for the node's call (uncontended: one executor per arena, unless
/// a helper of another context runs this graph from inside a kernel).
fn executor_arena(arenas: &[Mutex<RawBuf>]) -> Option<MutexGuard<'_, RawBuf>> {
    let last = arenas.len().checked_sub(1)?;
    let i = crate::shared::crew::Crew::current_index().filter(|&i| i < last).unwrap_or(last);
    Some(lock(&arenas[i]))
}

/// Run node `s` once on this thread, seeing `params` (its own, or a pipelined frame's).
pub(super) fn run_node(
    shared: &ContextShared,
    graph: u64,
    scratch: &[Mutex<RawBuf>],
    s: &NodeSlot,
    params: &[Option<crate::data::reference::Reference>],
) -> Result<()> {
    run_node_from(shared, graph, scratch, s, params, Instant::now()).0
}

/// [`run_node`] timed from `t0` (its `VX_NODE_PERFORMANCE`); also returns when it ended.
fn run_node_from(
    shared: &ContextShared,
    graph: u64,
    scratch: &[Mutex<RawBuf>],
    s: &NodeSlot,
    params: &[Option<crate::data::reference::Reference>],
    t0: Instant,
) -> (Result<()>, Instant) {
    // Mark the graph active on whichever thread runs the node (pool workers included), so a
    // callback that re-enters its graph gets an error instead of a deadlock.
    let _active = ActiveGuard::enter(graph);
    let _span = tracing::debug_span!("node", node = %s.name, kernel = %s.kernel.name).entered();
    // The node's run state, held for the whole run (the call, the statistics, the completion
    // callback): a control command (which takes it too) waits for the run. A tiling node without
    // a control port has neither state nor commands, and skips the lock (one less per run).
    let user = matches!(s.kernel.functions, KernelFunctions::User { .. });
    let mut held = (user || s.port.is_some()).then(|| s.run());
    let result = match &s.kernel.functions {
        KernelFunctions::User { .. } => {
            let run = &mut **held.as_mut().expect("taken for every user node above");
            let process = s.process_fn().expect("placed user nodes have a process function");
            let arena = if run.memory.scratch_bytes > 0 { executor_arena(scratch) } else { None };
            let mut pc = ProcessContext {
                node: s.key,
                node_name: &s.name,
                params,
                border: s.border,
                aliased: &s.aliased,
                local: &mut run.local,
                memory: &run.memory,
                // The guard is held for the call: the arena is this executor's alone until it returns.
                scratch: arena.as_ref().map_or((std::ptr::null_mut(), 0), |a| (a.as_ptr(), a.len())),
                taken: Default::default(),
                instance: &mut run.instance,
            };
            call_guarded("process", || process(&mut pc)).map(|()| None)
        }
        KernelFunctions::Tiling { fast, flexible, .. } => {
            let fin = s.kernel.final_().expect("nodes are created from finalized kernels");
            crate::graph::tiling::run(shared, graph, s, params, fin, fast.as_deref(), flexible.as_deref(), t0)
        }
    };
    // The tiling run's own end when it read one (one clock read less on the hot path).
    let (result, end) = match result {
        Ok(Some(end)) => (Ok(()), end),
        Ok(None) => (Ok(()), Instant::now()),
        Err(e) => (Err(e), Instant::now()),
    };
    let took = end.saturating_duration_since(t0);
    let result = match result {
        Ok(()) => {
            let perf = s.stats.record(Status::Success, took);
            match &s.callback {
                Some(cb) => completion(s, cb.as_ref(), perf),
                None => Ok(()),
            }
        }
        Err(e) => {
            s.stats.record(e.status(), took);
            Err(e.in_kernel(&s.kernel.name).in_node(&s.name))
        }
    };
    (result, end)
}

/// The node's completion callback after a successful run; `Abandon` fails the graph.
fn completion(s: &NodeSlot, cb: &crate::graph::targets::NodeCallbackFn, perf: crate::graph::node::Perf) -> Result<()> {
    let target = s.placement.as_ref().map_or(crate::shared::HOST_TARGET, |p| p.name());
    let done = NodeCompletion { key: s.key, node: &s.name, kernel: &s.kernel.name, target, perf };
    let action = call_guarded("completion callback", || Ok(cb(&done)))
        .map_err(|e| e.in_kernel(&s.kernel.name).in_node(&s.name))?;
    if action == NodeAction::Abandon {
        return Err(Error::new(ErrorKind::GraphAbandoned, "the node's completion callback abandoned the graph")
            .in_kernel(&s.kernel.name)
            .in_node(&s.name));
    }
    Ok(())
}
