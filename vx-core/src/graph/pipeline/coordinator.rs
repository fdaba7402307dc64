//! The coordinator of a pipelined graph: one thread per graph in a queue mode. Idle, it waits for
//! a frame to become admissible; then it takes the graph's lock for a *burst* — verifies if
//! needed, registers the burst in the queues' state, and waits until no frame is in flight or can
//! start.
//!
//! During a burst the scheduling is done by whichever thread changed something, under the queues'
//! mutex: a job's thread when its node finished, the application's thread in `enqueue` or
//! `schedule`, the coordinator when the burst begins. That thread *settles* — records the node,
//! delivers finished frames to the done queues, admits ready frames into free slots, skips a
//! failed frame's remaining nodes — and collects the jobs that became runnable, counting each in
//! `outstanding` before it releases the mutex; then it submits them. A hand-off from one stage to
//! the next is therefore one wake-up (the next target's), not two (coordinator, then target).
//!
//! A node of frame *f* runs when (1) its producers in frame *f* are done, (2) it has run frame
//! *f* − 1 (frames reach a node in order), (3) the readers of the shared objects it writes have run
//! frame *f* − 1 (`FrameSlots::hazards`), and (4) it is not running.
//!
//! The coordinator remains the fallback: it submits, waiting for space, the jobs a job thread found
//! a full target queue for (a target thread must not wait on a queue only targets drain), and it
//! ends the burst once `outstanding` is 0 and no slot is busy — woken by the thread that settled
//! last. Lock order: the graph's lock (held by the coordinator for the burst), then the queues'
//! mutex, then a slot's parameter table or an executor's queue; a thread never waits for the
//! queues' mutex while holding an executor's queue, and submits only after releasing the queues'.

use std::sync::{Arc, MutexGuard, Weak};

use crate::error::{Error, Result};
use crate::graph::execute::run_node;
use crate::graph::pipeline::{Dequeued, QueueState, Queues};
use crate::graph::{GraphBody, GraphInner, GraphState};
use crate::kernel::table::KernelTable;
use crate::shared::ContextShared;
use crate::shared::target::{Executor, Job};
use crate::support::sync::read;

/// The coordinator thread's life: wait, burst, wait … until the graph goes.
pub(super) fn main(graph: Weak<GraphInner>, queues: Arc<Queues>) {
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
        let outcome = bursts(&g, &queues);
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
fn bursts(g: &GraphInner, queues: &Arc<Queues>) -> Result<()> {
    let mut body = g.lock_for_pipeline()?;
    loop {
        if let Err(e) = prepare(g, &mut body) {
            body.state = GraphState::Abandoned;
            return Err(e);
        }
        match burst(g, &body, queues) {
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

/// What the jobs of one burst share: on the coordinator's stack, registered in [`Run::burst`]
/// from the burst's first settle until `outstanding` is 0 and no slot is busy.
struct Burst<'a> {
    shared: &'a ContextShared,
    kernels: &'a KernelTable,
    graph: u64,
    body: &'a GraphBody,
    queues: &'a Arc<Queues>,
    host: &'a Executor,
    n_nodes: usize,
}

/// The address of the registered [`Burst`], lifetime erased.
#[derive(Clone, Copy)]
struct BurstPtr(*const ());

// SAFETY: a BurstPtr is only dereferenced under the protocol of `Run::burst` (under the queues'
// mutex while registered, or while a job counted in `outstanding` holds the burst open); what it
// points to (references to the locked graph, the context, the queues) is Sync.
unsafe impl Send for BurstPtr {}

/// The scheduling state of the pipeline, under the queues' mutex (`QueueState::run`); kept from
/// burst to burst, so a steady stream allocates nothing even when the pipeline runs dry between
/// frames.
#[derive(Default)]
pub(super) struct Run {
    book: Bookkeeping,
    /// The live burst, if any. Set by the coordinator before its first settle; cleared by it,
    /// under the mutex, only when `outstanding` is 0 and no slot is busy.
    burst: Option<BurstPtr>,
    /// Jobs counted and not reported yet: collected by a settle (queued or about to be), deferred
    /// to the coordinator, or one *hold* of a settling thread whose batch was full.
    outstanding: usize,
    /// A kernel was replaced: admit nothing until the burst drained, then rebind.
    draining: bool,
    /// The last delivered frame failed.
    last_failed: bool,
    /// Counted jobs whose target queue was full when a job thread (or the application) submitted
    /// them: the coordinator submits them, waiting for space. At most one per node.
    deferred: Vec<(usize, usize)>,
}

impl Run {
    fn quiet(&self) -> bool {
        self.outstanding == 0 && self.book.slots.iter().all(|s| !s.busy)
    }

    /// Whether a burst is registered (settles happen on the threads that change things).
    pub(super) fn live(&self) -> bool {
        self.burst.is_some()
    }
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

/// Per-slot and per-node progress, reused from burst to burst (sized again only when the graph's
/// shape changes).
#[derive(Default)]
struct Bookkeeping {
    slots: Vec<SlotRun>,
    nodes: Vec<NodeProgress>,
    /// Live nodes in schedule order.
    order: Vec<usize>,
    /// Busy slots, oldest frame first.
    by_frame: Vec<usize>,
}

impl Bookkeeping {
    fn reset(&mut self, body: &GraphBody, first: u64) {
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
        }
        self.slots.iter_mut().for_each(|s| s.busy = false);
        // Every earlier frame is done: each node's next frame is the next admitted one.
        self.nodes.iter_mut().for_each(|n| *n = NodeProgress { next: first, running: false });
        self.order.clear();
        self.order.extend(body.schedule.iter().flatten().copied());
    }
}

#[derive(Clone, Copy)]
struct NodeProgress {
    /// The frame the node runs next.
    next: u64,
    running: bool,
}

/// Jobs one settle collects before its thread submits them (more: it settles again).
const BATCH: usize = 2;

/// Runnable jobs (slot, node), on the settling thread's stack.
struct Batch {
    jobs: [(usize, usize); BATCH],
    len: usize,
}

impl Batch {
    fn new() -> Batch {
        Batch { jobs: [(0, 0); BATCH], len: 0 }
    }
}

fn burst(g: &GraphInner, body: &GraphBody, queues: &Arc<Queues>) -> Outcome {
    let host = match g.ctx.inner.shared.targets.host_pipeline() {
        Ok(h) => Arc::clone(h),
        Err(e) => return Outcome::Failed(e.in_graph(&g.name())),
    };
    let b = Burst {
        shared: &g.ctx.inner.shared,
        kernels: &g.ctx.inner.kernels,
        graph: g.id,
        body,
        queues,
        host: &host,
        n_nodes: body.nodes.len(),
    };
    let mut st = queues.lock();
    let first = st.next_frame;
    {
        let run = &mut st.run;
        run.book.reset(body, first);
        run.deferred.clear();
        run.deferred.reserve(body.nodes.len());
        run.outstanding = 0;
        run.draining = false;
        run.last_failed = false;
        run.burst = Some(BurstPtr(&b as *const Burst<'_> as *const ()));
    }
    // The burst's first settle (admission); the coordinator may wait for space in a full queue.
    settle_and_dispatch(queues, st, true);
    let mut st = queues.lock();
    loop {
        if let Some((s, n)) = st.run.deferred.pop() {
            let ptr = st.run.burst.expect("registered while jobs are counted");
            drop(st);
            // The deferred job is still counted: the burst is alive.
            dispatch_one(queues, ptr, s, n, true);
            st = queues.lock();
            continue;
        }
        if st.run.quiet() {
            // Deregistered under the mutex with nothing counted: no thread reaches `b` any more.
            st.run.burst = None;
            return if st.run.draining {
                Outcome::Rebind
            } else if st.run.last_failed {
                Outcome::Idle(GraphState::Abandoned)
            } else {
                Outcome::Idle(GraphState::Completed)
            };
        }
        st = queues.wake.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// Settle and submit what became runnable, repeatedly while a batch filled up. Called with the
/// queues' mutex held (it is released here); a no-op when no burst is registered (the coordinator
/// settles when it registers one). `wait_for_space`: the coordinator's (a full target queue blocks
/// it); any other thread hands a job it finds a full queue for to the coordinator.
pub(super) fn settle_and_dispatch<'q>(queues: &'q Queues, mut st: MutexGuard<'q, QueueState>, wait_for_space: bool) {
    loop {
        let Some(ptr) = st.run.burst else { return };
        let mut batch = Batch::new();
        let mut run = std::mem::take(&mut st.run);
        // SAFETY: the burst is registered and the mutex is held: the coordinator deregisters it
        // (under this mutex) before its stack frame goes.
        let b = unsafe { &*(ptr.0 as *const Burst<'_>) };
        let settled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| settle(&mut st, &mut run, b, &mut batch)));
        // The state goes back even if a settle panicked (a bug): left taken, the empty bookkeeping
        // would look quiet and let the coordinator end a burst that counted jobs still reach. The
        // panicking thread's collected jobs stay counted: the burst hangs rather than being freed
        // under them.
        st.run = run;
        let more = match settled {
            Ok(more) => more,
            Err(panic) => {
                drop(st);
                std::panic::resume_unwind(panic);
            }
        };
        if more {
            // A hold: the burst stays open until this thread has settled again.
            st.run.outstanding += 1;
        }
        if st.run.quiet() || !st.run.deferred.is_empty() {
            queues.wake.notify_one();
        }
        let delivered = std::mem::take(&mut st.run_delivered);
        drop(st);
        if delivered {
            // After the unlock: `queues` outlives the burst (the caller's own handle, see `run_job`).
            queues.changed.notify_all();
        }
        for &(s, n) in &batch.jobs[..batch.len] {
            // Each collected job was counted in `outstanding` before the mutex was released.
            dispatch_one(queues, ptr, s, n, wait_for_space);
        }
        if !more {
            return;
        }
        st = queues.lock();
        // The hold is released under the mutex; the burst is still registered (it was counted).
        st.run.outstanding -= 1;
    }
}

/// Queue counted job (`s`, `n`) on its node's target. A full queue (`wait_for_space` false): the
/// job goes to the coordinator, still counted. A stopped target: the node is reported failed.
fn dispatch_one(queues: &Queues, ptr: BurstPtr, s: usize, n: usize, wait_for_space: bool) {
    // SAFETY: the job is counted in `outstanding`, so the coordinator keeps the burst registered
    // and alive until it is reported; nothing below touches `b` once the job is queued.
    let b = unsafe { &*(ptr.0 as *const Burst<'_>) };
    let node = b.body.nodes[n].as_ref().expect("scheduled nodes are live");
    let ex: &Executor = node.executor().map_or(b.host, |e| e);
    let job = Job { run: run_job, data: ptr.0, arg: s * b.n_nodes + n };
    // SAFETY: the burst stays alive until the job reported (it is counted in `outstanding` until
    // `report` runs under the mutex, on the job's thread or here when it could not be queued).
    match unsafe { ex.try_submit(job, wait_for_space) } {
        Ok(true) => {}
        Ok(false) => {
            let mut st = queues.lock();
            st.run.deferred.push((s, n));
            queues.wake.notify_one();
        }
        Err(e) => {
            let e = e.in_node(&node.name);
            let mut st = queues.lock();
            report(&mut st, b, s, n, Some(e));
            settle_and_dispatch(queues, st, wait_for_space);
        }
    }
}

/// Under the queues' mutex: node `n` of slot `s` ran (or could not), its count released.
fn report(st: &mut QueueState, b: &Burst<'_>, s: usize, n: usize, error: Option<Error>) {
    let run = &mut st.run;
    run.outstanding -= 1;
    let Bookkeeping { slots, nodes, .. } = &mut run.book;
    node_done(&mut slots[s], &mut nodes[n], n, error, &b.body.frames);
}

/// Under the queues' mutex: deliver finished frames, admit ready ones into free slots, skip a
/// failed frame's remaining nodes, and collect runnable jobs (oldest frame first) into `batch`,
/// each marked running and counted in `outstanding`. True when the batch filled up (more may be
/// runnable: the caller settles again).
fn settle(st: &mut QueueState, run: &mut Run, b: &Burst<'_>, batch: &mut Batch) -> bool {
    let body = b.body;
    let frames = &body.frames;
    let Bookkeeping { slots, nodes, order, by_frame } = &mut run.book;
    loop {
        let mut progressed = false;
        for (s, slot) in slots.iter_mut().enumerate().filter(|(_, s)| s.busy && s.done == order.len()) {
            run.last_failed = deliver(st, slot, s, body);
            progressed = true;
        }
        run.draining = run.draining || body.kernel_replaced(b.kernels);
        while !run.draining && st.admissible() {
            let Some(s) = slots.iter().position(|s| !s.busy) else { break };
            admit(st, &mut slots[s], s, body);
            progressed = true;
        }
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
                    // A failed frame's node is skipped: done without running.
                    node_done(&mut slots[s], &mut nodes[n], n, None, frames);
                    progressed = true;
                } else if batch.len == BATCH {
                    return true;
                } else {
                    nodes[n].running = true;
                    run.outstanding += 1;
                    batch.jobs[batch.len] = (s, n);
                    batch.len += 1;
                }
            }
        }
        if !progressed {
            return false;
        }
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

/// A finished frame's references to the done queues; true when the frame failed.
fn deliver(st: &mut QueueState, slot: &mut SlotRun, s: usize, body: &GraphBody) -> bool {
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
    // `changed` is notified by the settling thread once it released the mutex: woken under it, the
    // application would only block on the mutex again (a second wake-up per frame).
    st.run_delivered = true;
    match result {
        Ok(()) => false,
        Err(e) => {
            st.first_error.get_or_insert(e);
            true
        }
    }
}

/// The job of one node of one frame (`arg` = slot × nodes + node): run it, then report and settle
/// on this thread, submitting what became runnable (the next stage's hand-off).
unsafe fn run_job(data: *const (), arg: usize) {
    // SAFETY: this job is counted in `outstanding` until `report` below, so the burst is alive.
    let b = unsafe { &*(data as *const Burst<'_>) };
    // A handle of our own: the queues' mutex is released below after the burst may have ended.
    let queues = Arc::clone(b.queues);
    let (s, n) = (arg / b.n_nodes, arg % b.n_nodes);
    let node = b.body.nodes[n].as_ref().expect("scheduled nodes are live");
    let result = {
        let table = read(&b.body.frames.slots[s].params);
        run_node(b.shared, b.graph, &b.body.scratch, node, &table[n])
    };
    let mut st = queues.lock();
    report(&mut st, b, s, n, result.err());
    // From here on `b` is not used: the settle reaches the burst through its registration.
    settle_and_dispatch(&queues, st, false);
}
