//! Graph execution (`vxProcessGraph`): automatic re-verification when needed, then the nodes level
//! by level in dependency order — a level's independent nodes run concurrently on the context's
//! pool — stopping at the first failing node with an error naming graph, node and kernel.
//!
//! Steady-state processing of a verified graph performs no heap allocation in the runtime: node
//! state lives in per-node slots built at verify, a single-node level runs on the calling thread,
//! and a level of several nodes is shared between the calling thread and the context's crew
//! (`shared::crew`, allocation-free). Pinned by `tests/zero_alloc.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use vx_plugin_abi::Status;

use crate::data::buffer::RawBuf;
use crate::error::{Error, Result};
use crate::graph::verify::verify_body;
use crate::graph::{ActiveGuard, Graph, GraphBody, GraphState, NodeSlot};
use crate::kernel::callbacks::KernelFunctions;
use crate::kernel::contexts::ProcessContext;
use crate::shared::ContextShared;
use crate::support::sync::lock;
use crate::support::unwind::call_guarded;

impl Graph {
    /// `vxProcessGraph`: verify first if the graph changed since its last verification (the
    /// spec's automatic re-verification), then run every node once.
    pub fn process(&self) -> Result<()> {
        let g = &self.inner;
        let mut body = g.lock()?;
        // A module reload replaced a kernel some node uses: rebind (one atomic load per node).
        if body.nodes.iter().flatten().any(|n| n.kernel.replaced.load(std::sync::atomic::Ordering::Acquire)) {
            crate::graph::rebind_replaced(&mut body, &g.ctx.inner.kernels).map_err(|e| e.in_graph(&g.name()))?;
        }
        if !body.verified {
            let never = body.nodes.iter().flatten().all(|n| !n.initialized);
            verify_body(g, &mut body, never)?;
        }
        let _active = ActiveGuard::enter(g.id);
        let t0 = Instant::now();
        let result = run_levels(&g.ctx, g.id, &body);
        let elapsed = t0.elapsed();
        match result {
            Ok(()) => {
                body.perf.record(elapsed);
                body.state = GraphState::Completed;
                Ok(())
            }
            Err(e) => {
                body.state = GraphState::Abandoned;
                Err(e.in_graph(&g.name()))
            }
        }
    }
}

fn run_levels(ctx: &crate::context::Context, graph: u64, body: &GraphBody) -> Result<()> {
    let shared = &ctx.inner.shared;
    let node = |n: usize| body.nodes[n].as_ref().expect("scheduled nodes are live");
    for level in &body.schedule {
        match level.as_slice() {
            [] => {}
            [n] => run_node(shared, graph, &body.scratch, node(*n))?,
            many => {
                // The calling thread and the crew's helpers take the level's nodes from a shared
                // counter; the error of the first failing node (in schedule order) is reported.
                let next = AtomicUsize::new(0);
                let failed = AtomicUsize::new(usize::MAX);
                let first_error: Mutex<Option<Error>> = Mutex::new(None);
                shared.crew.run(many.len() - 1, &|| {
                    while let Some(&n) = many.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if let Err(e) = run_node(shared, graph, &body.scratch, node(n)) {
                            let mut slot = lock(&first_error);
                            if failed.fetch_min(n, Ordering::Relaxed) > n {
                                *slot = Some(e);
                            }
                        }
                    }
                });
                if let Some(e) = first_error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// The scratch arena of the executor running on this thread: crew helper `i` has `arenas[i]`, the
/// calling thread the last. Locked for the node's call (uncontended: one executor per arena, unless
/// a helper of another context runs this graph from inside a kernel).
fn executor_arena(arenas: &[Mutex<RawBuf>]) -> Option<MutexGuard<'_, RawBuf>> {
    let last = arenas.len().checked_sub(1)?;
    let i = crate::shared::crew::Crew::current_index().filter(|&i| i < last).unwrap_or(last);
    Some(lock(&arenas[i]))
}

fn run_node(shared: &ContextShared, graph: u64, scratch: &[Mutex<RawBuf>], s: &NodeSlot) -> Result<()> {
    // Mark the graph active on whichever thread runs the node (pool workers included), so a
    // callback that re-enters its graph gets an error instead of a deadlock.
    let _active = ActiveGuard::enter(graph);
    let mut run = s.run();
    let run = &mut *run;
    let t0 = Instant::now();
    let result = match &s.kernel.functions {
        KernelFunctions::User { process } => {
            let arena = if run.memory.scratch_bytes > 0 { executor_arena(scratch) } else { None };
            let mut pc = ProcessContext {
                node_name: &s.name,
                params: &s.params,
                border: s.border,
                aliased: &s.aliased,
                local: &mut run.local,
                memory: &run.memory,
                // The guard is held for the call: the arena is this executor's alone until it returns.
                scratch: arena.as_ref().map_or((std::ptr::null_mut(), 0), |a| (a.as_ptr(), a.len())),
                taken: Default::default(),
            };
            call_guarded("process", || process(&mut pc))
        }
        KernelFunctions::Tiling { fast, flexible } => {
            let fin = s.kernel.final_().expect("nodes are created from finalized kernels");
            crate::graph::tiling::run(shared, graph, s, fin, fast.as_deref(), flexible.as_deref())
        }
    };
    run.perf.record(t0.elapsed());
    match result {
        Ok(()) => {
            run.status = Status::Success;
            Ok(())
        }
        Err(e) => {
            run.status = e.status();
            Err(e.in_kernel(&s.kernel.name).in_node(&s.name))
        }
    }
}
