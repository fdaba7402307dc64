//! Pipelined graphs (the OpenVX pipelining extension's queue modes, TIOVX's pipeline depth):
//! several frames in flight across targets, fed and drained through graph-parameter queues.
//!
//! ```text
//!  application ── enqueue(p, ref) ──► ready queue of p ─┐  a frame is admitted when every queued
//!                                                        ├─ parameter has a ready reference and a
//!  application ◄─ dequeue(p) ──────── done queue of p ◄─┘  frame slot is free (at most `depth`)
//! ```
//!
//! - [`ScheduleConfig`] (`vxSetGraphScheduleConfig` + `tivxSetGraphPipelineDepth`): the mode, the
//!   pipeline depth and, per queued graph parameter, the references that may be enqueued.
//! - The verify pass `frame slots` (`graph/verify/frames.rs`) gives each of the *depth* slots its
//!   own virtual objects and parameter table.
//! - The **coordinator** (`coordinator.rs`), one thread per pipelined graph, admits frames, runs
//!   each node of each frame as a job on the node's target (host nodes on the context's host
//!   pipeline executor) once its producers in that frame are done, its previous frame is done (a
//!   node sees frames in order, so stateful kernels behave as in sequential processing) and the
//!   readers of shared objects it writes are done with the previous frame. A frame whose node
//!   fails skips its remaining nodes; its references are dequeued with the error.
//! - While frames are in flight the coordinator holds the graph's lock: graph and node calls are
//!   refused with `GraphScheduled` (a monitoring thread must not hang on a stream that never
//!   drains); `Node::send_command` still reaches nodes (control ports live outside the lock).
//!   A module reload stops admission until the frames in flight are done, then rebinds.

mod coordinator;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Graph, GraphInner};
use crate::support::sync::lock;

/// TIOVX's `TIVX_GRAPH_MAX_PIPELINE_DEPTH`.
pub const MAX_PIPELINE_DEPTH: usize = 16;

/// The most references one graph parameter's queue may list ([`ScheduleConfig::queue`] takes one
/// more at most, so [`Graph::set_schedule_config`] can refuse the list instead of collecting an
/// endless iterator).
pub const MAX_QUEUE_REFERENCES: usize = 1024;

/// `vx_graph_schedule_mode_type_e`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleMode {
    /// `VX_GRAPH_SCHEDULE_MODE_NORMAL`: `process` / `schedule` run one frame at a time.
    Normal,
    /// `VX_GRAPH_SCHEDULE_MODE_QUEUE_AUTO`: a frame starts as soon as every queued parameter has
    /// a reference enqueued.
    QueueAuto,
    /// `VX_GRAPH_SCHEDULE_MODE_QUEUE_MANUAL`: frames start at [`Graph::schedule`], which starts as
    /// many as there are complete sets of enqueued references then.
    QueueManual,
}

/// One queued graph parameter (`vx_graph_parameter_queue_params_t`).
#[derive(Clone, Debug)]
pub(super) struct ParameterQueue {
    pub(super) param: u32,
    pub(super) refs: Vec<Reference>,
}

/// `vxSetGraphScheduleConfig` with `tivxSetGraphPipelineDepth`: how a graph is scheduled.
///
/// ```
/// # use vx::*;
/// # fn demo(graph: &Graph, input: u32, output: u32, ins: Vec<Image>, outs: Vec<Image>) -> Result<()> {
/// graph.set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(input, ins).queue(output, outs))?;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct ScheduleConfig {
    pub(super) mode: ScheduleMode,
    pub(super) depth: usize,
    pub(super) queues: Vec<ParameterQueue>,
}

impl ScheduleConfig {
    /// Sequential processing (the default).
    pub fn normal() -> ScheduleConfig {
        ScheduleConfig { mode: ScheduleMode::Normal, depth: 1, queues: Vec::new() }
    }
    /// Frames start when every queued parameter has a reference (depth 1 until [`depth`](Self::depth)).
    pub fn queue_auto() -> ScheduleConfig {
        ScheduleConfig { mode: ScheduleMode::QueueAuto, ..ScheduleConfig::normal() }
    }
    /// Frames start at [`Graph::schedule`].
    pub fn queue_manual() -> ScheduleConfig {
        ScheduleConfig { mode: ScheduleMode::QueueManual, ..ScheduleConfig::normal() }
    }
    /// The pipeline depth: most frames in flight (1 ..= [`MAX_PIPELINE_DEPTH`]).
    pub fn depth(mut self, depth: usize) -> ScheduleConfig {
        self.depth = depth;
        self
    }
    /// Queue graph parameter `param` with the references that may be enqueued to it.
    pub fn queue<R: Into<Reference>>(mut self, param: u32, refs: impl IntoIterator<Item = R>) -> ScheduleConfig {
        // One more than the most allowed, at most: set_schedule_config refuses a longer list.
        let refs = refs.into_iter().take(MAX_QUEUE_REFERENCES + 1).map(Into::into).collect();
        self.queues.push(ParameterQueue { param, refs });
        self
    }
    /// The mode.
    pub fn mode(&self) -> ScheduleMode {
        self.mode
    }
    /// The pipeline depth.
    pub fn pipeline_depth(&self) -> usize {
        self.depth
    }
}

/// A reference back from its queue ([`Graph::dequeue`]), with the frame it was part of.
#[derive(Clone, Debug)]
pub struct Dequeued {
    /// The reference (one of those given for this parameter in the schedule config).
    pub reference: Reference,
    /// The frame's number (counting from 0 for the graph's first pipelined frame).
    pub frame: u64,
    /// How the frame went: the failing node's error if one failed (its later nodes were skipped).
    pub result: Result<()>,
}

/// A graph's queues and the coordinator's inbox.
pub(super) struct Queues {
    state: Mutex<QueueState>,
    /// The coordinator waits here for ready references and node completions.
    wake: Condvar,
    /// The application waits here for done references and a drained pipeline.
    changed: Condvar,
    /// `QueueState::bursting`, readable without the lock (every graph call checks it).
    streaming: AtomicBool,
}

pub(super) struct QueueState {
    /// Queue modes only.
    config: Option<Arc<ScheduleConfig>>,
    /// Per queue: indices (into the queue's `refs`) enqueued and not admitted yet.
    ready: Vec<VecDeque<usize>>,
    /// Per queue: references of completed frames, not dequeued yet.
    done: Vec<VecDeque<Dequeued>>,
    /// Per queue, per reference: enqueued and not dequeued yet.
    enqueued: Vec<Vec<bool>>,
    /// Frames `schedule` allowed to start (manual mode).
    permits: usize,
    in_flight: usize,
    /// Node jobs done: (slot, node, error).
    completions: VecDeque<(usize, usize, Option<Error>)>,
    /// The next frame's number.
    next_frame: u64,
    /// The first error since the last `wait`.
    first_error: Option<Error>,
    /// The coordinator holds the graph (admitting or running frames).
    bursting: bool,
    shutdown: bool,
    coordinator: Option<std::thread::JoinHandle<()>>,
}

impl QueueState {
    /// A frame can start now (references permitting; a free slot is the coordinator's business).
    fn admissible(&self) -> bool {
        let Some(c) = &self.config else { return false };
        !self.ready.is_empty()
            && self.ready.iter().all(|r| !r.is_empty())
            && (c.mode == ScheduleMode::QueueAuto || self.permits > 0)
    }

    /// Complete sets of ready references.
    fn ready_sets(&self) -> usize {
        self.ready.iter().map(VecDeque::len).min().unwrap_or(0)
    }
}

impl Queues {
    pub(super) fn new() -> Queues {
        Queues {
            state: Mutex::new(QueueState {
                config: None,
                ready: Vec::new(),
                done: Vec::new(),
                enqueued: Vec::new(),
                permits: 0,
                in_flight: 0,
                completions: VecDeque::new(),
                next_frame: 0,
                first_error: None,
                bursting: false,
                shutdown: false,
                coordinator: None,
            }),
            wake: Condvar::new(),
            changed: Condvar::new(),
            streaming: AtomicBool::new(false),
        }
    }

    /// The coordinator holds the graph (between admitting a first frame and the pipeline draining).
    pub(super) fn streaming(&self) -> bool {
        self.streaming.load(Ordering::Acquire)
    }

    fn set_bursting(&self, st: &mut QueueState, on: bool) {
        st.bursting = on;
        self.streaming.store(on, Ordering::Release);
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        lock(&self.state)
    }

    /// Whether the graph is in a queue mode.
    pub(super) fn queued(&self) -> bool {
        self.lock().config.is_some()
    }

    /// The graph is going away: the coordinator ends (joined unless this is its own thread).
    pub(super) fn shut_down(&self) {
        let handle = {
            let mut st = self.lock();
            st.shutdown = true;
            self.wake.notify_all();
            st.coordinator.take()
        };
        if let Some(h) = handle
            && h.thread().id() != std::thread::current().id()
        {
            let _ = h.join();
        }
    }

    /// A job's report: node `node` of slot `slot` ran. Notifies under the lock, so the queues are
    /// not touched after the coordinator can see the report.
    fn complete(&self, slot: usize, node: usize, error: Option<Error>) {
        let mut st = self.lock();
        st.completions.push_back((slot, node, error));
        self.wake.notify_one();
        drop(st);
    }
}

impl Graph {
    /// `vxSetGraphScheduleConfig` (with `tivxSetGraphPipelineDepth`): sequential processing
    /// ([`ScheduleConfig::normal`]) or a queue mode with a pipeline depth and, per queued graph
    /// parameter, the references that may be enqueued to it. Each reference must have the same meta
    /// data as the graph parameter's object now. Refused while frames are queued or in flight. The
    /// graph is verified again before its next frame.
    pub fn set_schedule_config(&self, config: ScheduleConfig) -> Result<()> {
        let g = &self.inner;
        let bad = |msg: String| Error::new(ErrorKind::InvalidParameters, msg).in_graph(&g.name());
        // Checked in every mode: sequential processing ignores the depth, but a depth out of
        // range is a caller's mistake either way (and nothing is reserved from it).
        if !(1..=MAX_PIPELINE_DEPTH).contains(&config.depth) {
            return Err(bad("the pipeline depth is out of range".into())
                .expected_found(format!("1..={MAX_PIPELINE_DEPTH}"), config.depth));
        }
        if let Some(q) = config.queues.iter().find(|q| q.refs.len() > MAX_QUEUE_REFERENCES) {
            return Err(bad(format!("graph parameter {} is queued with too many references", q.param))
                .expected_found(format!("at most {MAX_QUEUE_REFERENCES}"), format!("at least {}", q.refs.len())));
        }
        if config.mode != ScheduleMode::Normal && config.queues.is_empty() {
            return Err(bad("a queue mode needs at least one queued graph parameter".into()));
        }
        let mut body = g.lock()?;
        for (k, q) in config.queues.iter().enumerate() {
            if config.queues[..k].iter().any(|o| o.param == q.param) {
                return Err(bad(format!("graph parameter {} is queued twice", q.param)));
            }
            let (n, p) = crate::graph::parameters::graph_param(&body, q.param).map_err(|e| e.in_graph(&g.name()))?;
            let s = body.nodes[n].as_ref().expect("checked");
            let exemplar = s.params[p].clone().expect("graph parameters stay set");
            if q.refs.is_empty() {
                return Err(bad(format!("graph parameter {} is queued with no references", q.param)));
            }
            for (i, r) in q.refs.iter().enumerate() {
                let at = |msg: &str| {
                    Error::new(
                        ErrorKind::InvalidParameters,
                        format!("{msg} (reference {i} of the queue of graph parameter {})", q.param),
                    )
                    .in_graph(&g.name())
                    .on_object(&r.name())
                    .expected_found(exemplar.meta(), r.meta())
                };
                crate::graph::check_param(g, &s.kernel, p, s.spec(p), r)?;
                if r.is_virtual() {
                    return Err(at("a virtual object cannot be enqueued"));
                }
                if r.meta() != exemplar.meta() {
                    return Err(at("an enqueueable reference must have the graph parameter's meta data"));
                }
                if q.refs[..i].iter().any(|o| o.same_object(r)) {
                    return Err(at("a reference is given twice"));
                }
            }
        }
        let mut st = self.inner.queues.lock();
        if st.in_flight > 0 || st.ready.iter().any(|r| !r.is_empty()) || st.bursting {
            return Err(Error::new(
                ErrorKind::GraphScheduled,
                "frames are queued or in flight: wait for the graph before changing its schedule",
            )
            .in_graph(&g.name()));
        }
        let queued = config.mode != ScheduleMode::Normal;
        let config = Arc::new(config);
        body.pipeline = queued.then(|| Arc::clone(&config));
        body.invalidate();
        st.ready = config.queues.iter().map(|q| VecDeque::with_capacity(q.refs.len())).collect();
        st.done = config.queues.iter().map(|q| VecDeque::with_capacity(q.refs.len())).collect();
        st.enqueued = config.queues.iter().map(|q| vec![false; q.refs.len()]).collect();
        st.permits = 0;
        // Room for every node of every slot to report at once (no allocation while streaming).
        let reports = if queued { body.nodes.len().saturating_mul(config.depth) } else { 0 };
        let queued_reports = st.completions.len();
        st.completions.reserve(reports.saturating_sub(queued_reports));
        st.config = queued.then_some(config);
        if queued && st.coordinator.is_none() {
            let (graph, queues): (Weak<GraphInner>, Arc<Queues>) =
                (Arc::downgrade(&self.inner), Arc::clone(&self.inner.queues));
            let handle = std::thread::Builder::new()
                .name(format!("vx-graph{}-pipeline", g.id))
                .spawn(move || coordinator::main(graph, queues))
                .map_err(|e| {
                    Error::new(ErrorKind::NoResources, format!("could not start the pipeline's coordinator: {e}"))
                        .in_graph(&g.name())
                })?;
            st.coordinator = Some(handle);
        }
        Ok(())
    }

    /// The schedule mode (`VX_GRAPH_SCHEDULE_MODE`… of the last [`set_schedule_config`](Self::set_schedule_config)).
    pub fn schedule_mode(&self) -> ScheduleMode {
        self.inner.queues.lock().config.as_ref().map_or(ScheduleMode::Normal, |c| c.mode)
    }

    /// `vxGraphParameterEnqueueReadyRef`: give graph parameter `param` a reference for a coming
    /// frame. The reference must be one of those the schedule config gave for `param`, not
    /// enqueued already (until it is dequeued).
    pub fn enqueue(&self, param: u32, reference: impl Into<Reference>) -> Result<()> {
        let r = reference.into();
        self.verify_before_frames()?;
        let mut st = self.inner.queues.lock();
        let (q, i) = self.queue_of(&st, param, Some(&r))?;
        let i = i.expect("asked for");
        if st.enqueued[q][i] {
            return Err(Error::new(
                ErrorKind::InvalidParameters,
                "the reference is enqueued already (dequeue it first)",
            )
            .on_object(&r.name())
            .in_graph(&self.name()));
        }
        st.enqueued[q][i] = true;
        st.ready[q].push_back(i);
        self.inner.queues.wake.notify_one();
        Ok(())
    }

    /// `vxGraphParameterDequeueDoneRef`: the oldest reference of graph parameter `param` whose
    /// frame is done, waiting for one if a frame is in flight. When it returns the last frame's
    /// reference (nothing else in flight or admissible), the pipeline is idle: the graph is free.
    /// Refused (`Failure`, at once) when nothing could ever come: no frame in flight and none can
    /// start (naming the parameter that has no reference).
    pub fn dequeue(&self, param: u32) -> Result<Dequeued> {
        let queues = &self.inner.queues;
        let mut st = queues.lock();
        let (q, _) = self.queue_of(&st, param, None)?;
        loop {
            if let Some(d) = st.done[q].pop_front() {
                if let Some(i) =
                    st.config.as_ref().expect("queued").queues[q].refs.iter().position(|r| r.same_object(&d.reference))
                {
                    st.enqueued[q][i] = false;
                }
                // The last frame's reference: nothing is in flight or can start, so the pipeline is
                // going idle — wait until the coordinator has let go of the graph, so that after the
                // last dequeue (as after `wait`) the graph can be queried, changed or dropped at once.
                while st.bursting && st.in_flight == 0 && !st.admissible() {
                    st = queues.changed.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                return Ok(d);
            }
            let config = st.config.as_ref().expect("queued");
            if st.in_flight == 0 && !st.bursting && !st.admissible() {
                let why = match st.ready.iter().position(VecDeque::is_empty) {
                    Some(e) => format!("graph parameter {} has no reference enqueued", config.queues[e].param),
                    None => "the graph is in manual mode and was not scheduled".to_string(),
                };
                return Err(Error::new(ErrorKind::Failure, format!("no frame is in flight or can start: {why}"))
                    .at_parameter(param)
                    .in_graph(&self.name()));
            }
            st = queues.changed.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// `vxGraphParameterCheckDoneRef`: how many references of graph parameter `param` can be
    /// dequeued without waiting.
    pub fn check_done(&self, param: u32) -> Result<usize> {
        let st = self.inner.queues.lock();
        let (q, _) = self.queue_of(&st, param, None)?;
        Ok(st.done[q].len())
    }

    /// The queue index of graph parameter `param`, and the index of `r` among its references.
    fn queue_of(&self, st: &QueueState, param: u32, r: Option<&Reference>) -> Result<(usize, Option<usize>)> {
        let Some(config) = &st.config else {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "the graph is not pipelined: set a queue mode with Graph::set_schedule_config first",
            )
            .in_graph(&self.name()));
        };
        let Some(q) = config.queues.iter().position(|q| q.param == param) else {
            return Err(Error::new(ErrorKind::InvalidParameters, "the graph parameter is not queued")
                .at_parameter(param)
                .expected_found(
                    format!("one of {:?}", config.queues.iter().map(|q| q.param).collect::<Vec<_>>()),
                    param,
                )
                .in_graph(&self.name()));
        };
        let Some(r) = r else { return Ok((q, None)) };
        match config.queues[q].refs.iter().position(|o| o.same_object(r)) {
            Some(i) => Ok((q, Some(i))),
            None => Err(Error::new(
                ErrorKind::InvalidReference,
                "the reference is not one the schedule config gave for this graph parameter",
            )
            .at_parameter(param)
            .on_object(&r.name())
            .in_graph(&self.name())),
        }
    }

    /// Errors knowable before a frame starts are returned to the caller (`enqueue`, `schedule`),
    /// not only in the frame's dequeued result: a pipelined graph that is idle and changed is
    /// verified (and rebound to reloaded kernels) here. While frames stream, the coordinator holds
    /// the graph and did this itself. Called without the queues' lock (the coordinator takes the
    /// graph's lock, then the queues').
    fn verify_before_frames(&self) -> Result<()> {
        let g = &self.inner;
        if g.queues.streaming() {
            return Ok(());
        }
        match g.lock() {
            Ok(mut body) if body.pipeline.is_some() => body.prepare_to_run(g),
            // Not pipelined: `queue_of` names that; streaming began meanwhile: the coordinator verifies.
            Ok(_) => Ok(()),
            // From inside one of the graph's callbacks, or while streaming: the coordinator verifies.
            Err(e) if matches!(e.kind(), ErrorKind::GraphScheduled | ErrorKind::NotSupported) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Queue modes' `vxScheduleGraph`: manual mode starts as many frames as there are complete
    /// sets of enqueued references; auto mode refuses (frames start on their own).
    pub(super) fn schedule_queued(&self) -> Result<()> {
        self.verify_before_frames()?;
        let queues = &self.inner.queues;
        let mut st = queues.lock();
        match st.config.as_ref().map(|c| c.mode) {
            Some(ScheduleMode::QueueManual) => {
                let sets = st.ready_sets();
                if sets <= st.permits {
                    return Err(Error::new(
                        ErrorKind::Failure,
                        "nothing to schedule: enqueue a reference to every queued graph parameter first",
                    )
                    .in_graph(&self.name()));
                }
                st.permits = sets;
                queues.wake.notify_one();
                Ok(())
            }
            _ => Err(Error::new(
                ErrorKind::NotSupported,
                "the graph is in queue-auto mode: frames start when every queued parameter has a reference",
            )
            .in_graph(&self.name())),
        }
    }

    /// Queue modes' `vxWaitGraph`: wait until no frame is in flight or can start; the first error
    /// of a frame since the last wait.
    pub(super) fn wait_queued(&self) -> Result<()> {
        let queues = &self.inner.queues;
        let mut st = queues.lock();
        while st.in_flight > 0 || st.bursting || st.admissible() {
            st = queues.changed.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        st.first_error.take().map_or(Ok(()), Err)
    }
}
