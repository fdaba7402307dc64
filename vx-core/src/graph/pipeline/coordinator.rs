//! The coordinator of a pipelined graph: one thread per graph in a queue mode. Idle, it waits for
//! a frame to become admissible; then it takes the graph's lock for a *burst* — verifies if
//! needed, admits frames into free frame slots, dispatches node jobs as their frames allow, and
//! delivers finished frames to the done queues — until no frame is in flight or can start.
//!
//! All scheduling state is the coordinator's own (no lock); jobs report back through the queues'
//! completion list. A node of frame *f* runs when (1) its producers in frame *f* are done, (2) it
//! has run frame *f* − 1 (frames reach a node in order), (3) the readers of the shared objects it
//! writes have run frame *f* − 1 (`FrameSlots::hazards`), and (4) it is not running. A fused
//! group (`graph/fusion`) is one unit: its leader runs it as one job, its followers are not
//! scheduled, and the frame slots' dependencies are over units (`verify/frames.rs`) — so a group
//! never runs two frames at once and its line buffers need not be per frame.
//!
//! # Admission, drain, shutdown and `wait`, interleaving by interleaving
//!
//! The queues' state (`QueueState`, `graph/pipeline/mod.rs`) lives under the queues' mutex;
//! `bursting` (mirrored in the `streaming` atomic for lock-free refusals) is true from the moment
//! the coordinator decides to run until it *has released the graph*. Lock order: the graph's lock,
//! then the queues' (the coordinator); application calls that need both (`enqueue` verifying an
//! idle graph) take the graph's first and drop it before they take the queues'.
//!
//! - *`enqueue` vs. an idle coordinator*: `enqueue` pushes and notifies `wake` under the lock; the
//!   coordinator checks `admissible()` under the same lock before it waits: no wake-up is lost.
//! - *Frame completion*: a job reports through `Queues::complete` (push and notify under the lock)
//!   as its last touch of the burst; the burst, on the coordinator's stack, ends only when
//!   `outstanding` is zero, so no job outlives what it points to.
//! - *`wait` / `dequeue` vs. the end of a burst*: `wait` sleeps while
//!   `in_flight > 0 || bursting || admissible()`. The coordinator delivers the last frame,
//!   returns from the burst still `bursting`, drops the graph's lock and its `Arc<GraphInner>`,
//!   and only then clears `bursting` and notifies `changed` (`main`). So when `wait` returns, no
//!   runtime thread holds the graph or anything of it; a delivered frame's slot table already gave
//!   its references back (`deliver`).
//! - *Drop vs. the coordinator*: dropping `GraphInner` sets `shutdown` and joins the coordinator
//!   (`Queues::shut_down`), unless the drop runs on the coordinator (it held the last handle),
//!   which then exits at its next look at `shutdown`. A coordinator that wakes for a graph already
//!   gone (`Weak::upgrade` fails) exits.
//! - *A reload while streaming*: a replaced kernel stops admission (`draining`); frames in flight
//!   finish on the old version; with none left the burst rebinds and verifies, then goes on.
//! - *Delivery order*: several frames can finish in one settle. A frame is finished only if every
//!   earlier one is (each node sees frames in order), so the settle delivers finished slots oldest
//!   frame first, not in slot order.
//! - *The hand-off* is two wake-ups (job → coordinator → next target): settling on the job's
//!   thread instead measures slower (`docs/design/pipeline-handoff.md`).
//!
//! Tested by `the_hand_off_protocol_holds_under_stress` in `vx-core/tests/pipelining.rs`
//! (`VX_PIPE_STRESS_RUNS` runs: two graphs over shared one-job target queues, fan-out, failing
//! frames, dry runs), and under ThreadSanitizer in `.ci/run`.

use std::sync::{Arc, Weak};

use crate::error::{Error, Result};
use crate::graph::execute::run_node;
use crate::graph::fusion::run_group;
use crate::graph::pipeline::{Dequeued, QueueState, Queues};
use crate::graph::{GraphBody, GraphInner, GraphState};
use crate::shared::ContextShared;
use crate::shared::target::{Executor, Job};
use crate::support::sync::read;

/// The coordinator thread's life: wait, burst, wait … until the graph goes.
pub(super) fn main(graph: Weak<GraphInner>, queues: Arc<Queues>) {
    // Kept across bursts, so a steady stream allocates nothing even when the pipeline runs dry
    // between frames.
    let mut book = Bookkeeping::default();
    loop {
        {
            let mut st = queues.lock();
            loop {
                if st.shutdown {
                    return;
                }
                if st.admissible() {
                    queues.set_bursting(&mut st, true);
                    break;
                }
                st = queues.wake.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
        let Some(g) = graph.upgrade() else { return };
        let outcome = bursts(&g, &queues, &mut book);
        // Quiescence: the graph's lock and this thread's handle go *before* the application hears
        // that the pipeline is idle, so that when `wait` (or a `dequeue` that found nothing in
        // flight) returns, no thread of the runtime holds anything of the graph. The last handle
        // may be this one: then the graph is released here.
        drop(g);
        let mut st = queues.lock();
        if let Err(e) = outcome {
            fail_admissible(&mut st, &e);
        }
        queues.set_bursting(&mut st, false);
        queues.changed.notify_all();
    }
}

/// Bursts until the pipeline is idle: a module reload ends one burst (after its frames drained)
/// and the next starts rebound. An error means the graph could not run: the caller fails every
/// frame that could start (after releasing the graph).
fn bursts(g: &GraphInner, queues: &Queues, book: &mut Bookkeeping) -> Result<()> {
    let mut body = g.lock_for_pipeline()?;
    loop {
        if let Err(e) = prepare(g, &mut body) {
            body.state = GraphState::Abandoned;
            return Err(e);
        }
        match burst(g, &body, queues, book) {
            Outcome::Idle(state) => {
                body.state = state;
                return Ok(());
            }
            Outcome::Rebind => continue,
            Outcome::Failed(e) => {
                body.state = GraphState::Abandoned;
                return Err(e);
            }
        }
    }
}

/// Rebind reloaded kernels and verify, as `process` does.
fn prepare(g: &GraphInner, body: &mut GraphBody) -> Result<()> {
    body.prepare_to_run(g)?;
    if body.frames.slots.is_empty() {
        return Err(Error::new(crate::error::ErrorKind::InvalidGraph, "the pipelined graph has no frame slots")
            .in_graph(&g.name()));
    }
    Ok(())
}

/// The graph could not run: every frame that could start is delivered failed with `e`.
fn fail_admissible(st: &mut QueueState, e: &Error) {
    while st.admissible() {
        let frame = st.next_frame;
        st.next_frame += 1;
        if st.config.as_ref().is_some_and(|c| c.mode == super::ScheduleMode::QueueManual) {
            st.permits -= 1;
        }
        for q in 0..st.ready.len() {
            let i = st.ready[q].pop_front().expect("admissible");
            let reference = st.config.as_ref().expect("queued").queues[q].refs[i].clone();
            st.done[q].push_back(Dequeued { reference, frame, result: Err(e.clone()) });
        }
    }
    st.first_error.get_or_insert_with(|| e.clone());
}

enum Outcome {
    /// Nothing in flight and nothing can start; the graph's state after the last frame.
    Idle(GraphState),
    /// A kernel was replaced: the frames in flight drained, rebind and go on.
    Rebind,
    /// The burst could not go on (no host pipeline executor).
    Failed(Error),
}

/// What the jobs of one burst share (on the coordinator's stack until every job reported).
struct Burst<'a> {
    shared: &'a ContextShared,
    graph: u64,
    body: &'a GraphBody,
    queues: &'a Queues,
    n_nodes: usize,
}

/// One frame slot's progress.
struct SlotRun {
    busy: bool,
    frame: u64,
    /// Per node: producers of this frame not done yet.
    preds_left: Vec<u32>,
    finished: Vec<bool>,
    done: usize,
    error: Option<Error>,
    /// Per queue: the index of the frame's reference.
    refs: Vec<usize>,
}

/// The coordinator's working state, reused from burst to burst (sized again only when the graph's
/// shape changes).
#[derive(Default)]
struct Bookkeeping {
    slots: Vec<SlotRun>,
    nodes: Vec<NodeProgress>,
    /// Live nodes in schedule order, fused groups' followers left out (`graph/fusion`).
    order: Vec<usize>,
    /// Busy slots, oldest frame first.
    by_frame: Vec<usize>,
    runnable: Vec<(usize, usize)>,
}

impl Bookkeeping {
    fn reset(&mut self, body: &GraphBody) {
        let (n_nodes, depth, n_queues) = (body.nodes.len(), body.frames.slots.len(), body.frames.sites.len());
        let fits = self.slots.len() == depth
            && self.nodes.len() == n_nodes
            && self.slots.first().is_none_or(|s| s.finished.len() == n_nodes && s.refs.len() == n_queues);
        if !fits {
            self.slots = (0..depth)
                .map(|_| SlotRun {
                    busy: false,
                    frame: 0,
                    preds_left: vec![0; n_nodes],
                    finished: vec![false; n_nodes],
                    done: 0,
                    error: None,
                    refs: vec![0; n_queues],
                })
                .collect();
            self.nodes = vec![NodeProgress { next: 0, running: false }; n_nodes];
            self.by_frame = Vec::with_capacity(depth);
            self.runnable = Vec::with_capacity(n_nodes);
        }
        self.slots.iter_mut().for_each(|s| s.busy = false);
        self.nodes.iter_mut().for_each(|n| n.running = false);
        self.order.clear();
        // A fused group is one unit, run by its leader: its followers are neither run nor waited for.
        self.order.extend(body.schedule.iter().flatten().copied().filter(|&n| !body.fusion.follows(n)));
    }
}

#[derive(Clone, Copy)]
struct NodeProgress {
    /// The frame the node runs next.
    next: u64,
    running: bool,
}

fn burst(g: &GraphInner, body: &GraphBody, queues: &Queues, book: &mut Bookkeeping) -> Outcome {
    let frames = &body.frames;
    let n_nodes = body.nodes.len();
    let host = match g.ctx.inner.shared.targets.host_pipeline() {
        Ok(h) => Arc::clone(h),
        Err(e) => return Outcome::Failed(e.in_graph(&g.name())),
    };
    book.reset(body);
    let Bookkeeping { slots, nodes, order, by_frame, runnable } = book;
    let mut outstanding = 0usize;
    let mut draining = false;
    let mut last_state = GraphState::Completed;
    let b = Burst { shared: &g.ctx.inner.shared, graph: g.id, body, queues, n_nodes };

    let mut st = queues.lock();
    // Every earlier frame is done: each node's next frame is the next admitted one.
    let first = st.next_frame;
    nodes.iter_mut().for_each(|n| n.next = first);
    loop {
        // Settle everything that can be settled without running a node.
        loop {
            let mut progressed = false;
            while let Some((s, n, error)) = st.completions.pop_front() {
                outstanding -= 1;
                node_done(&mut slots[s], &mut nodes[n], n, error, frames);
            }
            // Finished frames in frame order: several can finish in one settle (reports popped
            // together, or a failed frame's skips finishing the next failed frame too), and slot
            // order is not frame order. A frame is finished only if every earlier one is (each
            // node sees frames in order), so oldest first keeps the done queues in frame order.
            while let Some(s) = (0..slots.len())
                .filter(|&s| slots[s].busy && slots[s].done == order.len())
                .min_by_key(|&s| slots[s].frame)
            {
                last_state = deliver(&mut st, &mut slots[s], s, body, queues);
                progressed = true;
            }
            draining = draining || body.kernel_replaced(&g.ctx.inner.kernels);
            while !draining && st.admissible() {
                let Some(s) = slots.iter().position(|s| !s.busy) else { break };
                admit(&mut st, &mut slots[s], s, body);
                progressed = true;
            }
            // Runnable nodes, oldest frame first; a failed frame's nodes are skipped here.
            runnable.clear();
            by_frame.clear();
            by_frame.extend((0..slots.len()).filter(|&s| slots[s].busy));
            by_frame.sort_unstable_by_key(|&s| slots[s].frame);
            for &s in by_frame.iter() {
                for &n in order.iter() {
                    let slot = &slots[s];
                    let ready = !slot.finished[n]
                        && slot.preds_left[n] == 0
                        && nodes[n].next == slot.frame
                        && !nodes[n].running
                        && frames.hazards[n].iter().all(|&h| nodes[h].next >= slot.frame);
                    if !ready {
                        continue;
                    }
                    if slot.error.is_some() {
                        node_done(&mut slots[s], &mut nodes[n], n, None, frames);
                        progressed = true;
                    } else {
                        nodes[n].running = true;
                        runnable.push((s, n));
                    }
                }
            }
            if !progressed || !runnable.is_empty() {
                break;
            }
        }
        if runnable.is_empty() {
            if outstanding == 0 && slots.iter().all(|s| !s.busy) {
                if draining {
                    return Outcome::Rebind;
                }
                // Still `bursting`: the coordinator's main loop announces the idle pipeline once
                // it let go of the graph.
                return Outcome::Idle(last_state);
            }
            st = queues.wake.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
            continue;
        }
        drop(st);
        for &(s, n) in runnable.iter() {
            outstanding += 1;
            let node = body.nodes[n].as_ref().expect("scheduled nodes are live");
            let ex: &Executor = node.executor().map_or(&host, |e| e);
            let job = Job { run: run_job, data: &b as *const Burst<'_> as *const (), arg: s * n_nodes + n };
            // SAFETY: `b` lives on this stack until every job reported (`outstanding` reaches 0
            // before `burst` returns); a job that failed to queue is reported here.
            if let Err(e) = unsafe { ex.submit(job, true) } {
                queues.complete(s, n, Some(e.in_node(&node.name)));
            }
        }
        st = queues.lock();
    }
}

/// Start a frame in free slot `s`: its references written into the slot's table at every site.
fn admit(st: &mut QueueState, slot: &mut SlotRun, s: usize, body: &GraphBody) {
    let config = Arc::clone(st.config.as_ref().expect("admissible"));
    if config.mode == super::ScheduleMode::QueueManual {
        st.permits -= 1;
    }
    slot.frame = st.next_frame;
    st.next_frame += 1;
    st.in_flight += 1;
    let frames = &body.frames;
    let mut table = crate::support::sync::write(&frames.slots[s].params);
    for (q, sites) in frames.sites.iter().enumerate() {
        let i = st.ready[q].pop_front().expect("admissible");
        slot.refs[q] = i;
        for &(n, p) in sites {
            table[n][p] = Some(config.queues[q].refs[i].clone());
        }
    }
    slot.busy = true;
    slot.done = 0;
    slot.error = None;
    slot.finished.fill(false);
    slot.preds_left.copy_from_slice(&frames.producers);
}

fn node_done(
    slot: &mut SlotRun,
    node: &mut NodeProgress,
    n: usize,
    error: Option<Error>,
    frames: &crate::graph::verify::FrameSlots,
) {
    node.running = false;
    node.next += 1;
    slot.finished[n] = true;
    slot.done += 1;
    for &m in &frames.successors[n] {
        slot.preds_left[m] -= 1;
    }
    if let Some(e) = error {
        slot.error.get_or_insert(e);
    }
}

/// A finished frame's references to the done queues.
fn deliver(st: &mut QueueState, slot: &mut SlotRun, s: usize, body: &GraphBody, queues: &Queues) -> GraphState {
    let config = Arc::clone(st.config.as_ref().expect("queued"));
    let result = slot.error.take().map_or(Ok(()), Err);
    for (q, &i) in slot.refs.iter().enumerate() {
        let reference = config.queues[q].refs[i].clone();
        st.done[q].push_back(Dequeued { reference, frame: slot.frame, result: result.clone() });
    }
    // The slot's table gives the frame's references back (its sites hold the graph parameters'
    // own objects again, as after verification): a delivered frame leaves no handle behind.
    let mut table = crate::support::sync::write(&body.frames.slots[s].params);
    for (n, p) in body.frames.sites.iter().flatten().copied() {
        table[n][p].clone_from(&body.nodes[n].as_ref().expect("scheduled nodes are live").params[p]);
    }
    drop(table);
    slot.busy = false;
    st.in_flight -= 1;
    queues.changed.notify_all();
    match result {
        Ok(()) => GraphState::Completed,
        Err(e) => {
            st.first_error.get_or_insert(e);
            GraphState::Abandoned
        }
    }
}

/// The job of one node of one frame, or of the fused group it leads (`arg` = slot × nodes + node).
unsafe fn run_job(data: *const (), arg: usize) {
    // SAFETY: `burst` keeps the Burst alive until this job reported through `complete`.
    let b = unsafe { &*(data as *const Burst<'_>) };
    let (s, n) = (arg / b.n_nodes, arg % b.n_nodes);
    let node = b.body.nodes[n].as_ref().expect("scheduled nodes are live");
    let result = {
        let table = read(&b.body.frames.slots[s].params);
        match b.body.fusion.led_by(n) {
            Some(group) => run_group(b.shared, b.graph, b.body, group, &|m| &table[m][..]),
            None => run_node(b.shared, b.graph, &b.body.scratch, node, &table[n]),
        }
    };
    b.queues.complete(s, n, result.err());
}
