//! Where nodes run and how commands reach them (TIOVX user target kernels on a host).
//!
//! - **Placement** (node pass `targets`): a node runs on the target the application set
//!   (`Node::set_target`) or, by default, on the host target when its kernel has its own process
//!   function, else on the first of its kernel's target implementations whose target this context
//!   has. A node on a named target runs that target's implementation (process, create, delete,
//!   control) when the kernel registered one, else the kernel's own functions on that target's
//!   threads. A kernel with neither for the target is refused, naming the targets it has.
//! - **Commands** (`Node::send_command`, `tivxNodeSendCommand`): each initialized node has a
//!   [`ControlPort`] the graph keeps outside its lock, so a command does not wait for a whole frame,
//!   only for the node's current process call (the port shares the node's run lock). The command is
//!   queued on the node's target FIFO (host-target nodes: the context's host control thread), runs
//!   the control callback, and the sender waits for it up to its timeout. A timed-out command marks
//!   the node; the command still runs when the target reaches it.
//! - **Deadlocks** (the TIOVX notes' warning): a command sent from one of the node's own target's
//!   threads, or to a host-target node from inside its graph's processing on this thread, would wait
//!   for itself; both are refused at once. The rest is bounded by the timeout.
//! - **Completion callbacks** (`vxAssignNodeCallback`): called after each successful process of the
//!   node, on the thread that ran it; [`NodeAction::Abandon`] stops the frame.
//!
//! # Commands, interleaving by interleaving
//!
//! A `CommandJob` is owned by the queued job (one `Arc` count leaked into the job, taken back by
//! `run_command`) and by the sender.
//!
//! - *The command completes in time*: the job stores the result and counts the latch down; the
//!   sender reads it.
//! - *It times out*: the sender returns `Timeout` and drops its count; the job still runs later,
//!   writes a result no one reads and frees the last count — no use after free.
//! - *The node is deinitialized*: `ControlPort::retire` clears `live`, then deinit takes the
//!   node's run lock (`graph/slot.rs`). A command holding the run lock finishes first (control
//!   before deinit); a later one sees `live` false and is refused. Control never runs during or
//!   after deinit.
//!
//! Timeouts of any size are accepted: a deadline past the clock's range waits without one
//! (`support/time.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use vx_plugin_abi::BorderMode;

use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::node::{Node, Perf};
use crate::graph::{ACTIVE_GRAPH, NodeRun, NodeSlot};
use crate::kernel::callbacks::{ControlFn, KernelFunctions, LifecycleFn, ProcessFn, TargetKernel};
use crate::kernel::contexts::ControlContext;
use crate::kernel::record::KernelInner;
use crate::shared::target::{Executor, Job, Latch};
use crate::shared::{HOST_TARGET, TARGET_ANY, Targets};
use crate::support::sync::lock;
use crate::support::unwind::call_guarded;

/// Where a node runs: its target, the target's executor (`None`: the host target), and the target
/// implementation it runs (`None`: the kernel's own functions).
pub(super) struct Placement {
    pub(super) executor: Option<Arc<Executor>>,
    pub(super) implementation: Option<TargetKernel>,
}

/// Where a node of `kernel` runs, given the target asked for.
pub(super) fn place(kernel: &KernelInner, requested: Option<&str>, targets: &Targets) -> Result<Placement> {
    let has = || {
        let mut t: Vec<&str> = kernel.targets.iter().map(|(t, _)| t.as_str()).collect();
        if kernel.runs_anywhere() {
            t.insert(0, "any (its own process function)");
        }
        t.join(", ")
    };
    let at = |target: &str| Placement {
        executor: targets.get(target).cloned(),
        implementation: kernel.target_impl(target).cloned(),
    };
    // `VX_TARGET_ANY`: any target that implements the kernel — the default rule.
    let requested = requested.filter(|t| !t.eq_ignore_ascii_case(TARGET_ANY));
    match requested {
        Some(t) => {
            if !targets.exists(t) {
                return Err(Error::new(ErrorKind::InvalidParameters, format!("this context has no target '{t}'"))
                    .expected_found(format!("one of: {}", targets.names().join(", ")), t));
            }
            if kernel.target_impl(t).is_none() && !kernel.runs_anywhere() {
                return Err(Error::new(
                    ErrorKind::NotSupported,
                    format!("kernel '{}' has no implementation on target '{t}'", kernel.name),
                )
                .expected_found(format!("one of its targets: {}", has()), t));
            }
            Ok(at(t))
        }
        None if kernel.runs_anywhere() => Ok(at(HOST_TARGET)),
        None => kernel.targets.iter().find(|(t, _)| targets.exists(t)).map(|(t, _)| at(t)).ok_or_else(|| {
            Error::new(
                ErrorKind::NotSupported,
                format!("kernel '{}' is implemented on targets this context does not have", kernel.name),
            )
            .expected_found(
                format!("one of: {}", has()),
                format!("this context's targets: {}", targets.names().join(", ")),
            )
        }),
    }
}

impl Placement {
    /// Which executor and implementation (compared, not dereferenced: a re-verification checks
    /// that a node's placement stayed).
    pub(super) fn identity(&self) -> *const () {
        self.executor.as_ref().map_or(std::ptr::null(), |e| Arc::as_ptr(e) as *const ())
    }

    /// The target's name.
    pub(super) fn name(&self) -> &str {
        self.executor.as_ref().map_or(HOST_TARGET, |e| e.config.name.as_str())
    }
}

impl NodeSlot {
    fn implementation(&self) -> Option<&TargetKernel> {
        self.placement.as_ref()?.implementation.as_ref()
    }
    /// The process function the node runs (user kernels).
    pub(super) fn process_fn(&self) -> Option<&Arc<ProcessFn>> {
        match (self.implementation(), &self.kernel.functions) {
            (Some(t), _) => Some(&t.process),
            (None, KernelFunctions::User { process }) => process.as_ref(),
            (None, KernelFunctions::Tiling { .. }) => None,
        }
    }
    /// Init: the target implementation's create, or the kernel's init.
    pub(super) fn init_fn(&self) -> Option<Arc<LifecycleFn>> {
        match self.implementation() {
            Some(t) => t.create.clone(),
            None => self.kernel.init.clone(),
        }
    }
    /// Deinit: the target implementation's delete, or the kernel's deinit.
    pub(super) fn deinit_fn(&self) -> Option<Arc<LifecycleFn>> {
        match self.implementation() {
            Some(t) => t.delete.clone(),
            None => self.kernel.deinit.clone(),
        }
    }
    pub(super) fn control_fn(&self) -> Option<Arc<ControlFn>> {
        match self.implementation() {
            Some(t) => t.control.clone(),
            None => self.kernel.control.clone(),
        }
    }
    /// The node's executor (`None`: the host target).
    pub(super) fn executor(&self) -> Option<&Arc<Executor>> {
        self.placement.as_ref()?.executor.as_ref()
    }

    /// The node's control port, made when its init succeeded (nodes with a control callback).
    pub(super) fn open_port(&mut self, control: Arc<ControlFn>, targets: &Targets) -> Result<Arc<ControlPort>> {
        let placement = self.placement.as_ref().expect("placed before init");
        let executor = match &placement.executor {
            Some(e) => Arc::clone(e),
            None => Arc::clone(targets.host_control()?),
        };
        let port = Arc::new(ControlPort {
            key: self.key,
            node: self.name.clone(),
            kernel: self.kernel.name.clone(),
            target: placement.name().to_owned(),
            control,
            executor,
            host: placement.executor.is_none(),
            run: Arc::clone(&self.run),
            params: self.params.clone(),
            border: self.border,
            aliased: self.aliased.clone(),
            live: AtomicBool::new(true),
            timed_out: AtomicBool::new(false),
        });
        self.port = Some(Arc::clone(&port));
        Ok(port)
    }
}

/// Where commands to one initialized node go.
pub(super) struct ControlPort {
    key: crate::kernel::contexts::NodeKey,
    node: String,
    kernel: String,
    target: String,
    control: Arc<ControlFn>,
    /// The node's target executor, or the host control thread.
    executor: Arc<Executor>,
    /// The node runs on the host target (the calling thread and the crew).
    host: bool,
    run: Arc<Mutex<NodeRun>>,
    params: Vec<Option<Reference>>,
    border: BorderMode,
    aliased: Vec<(u32, u32)>,
    /// Cleared when the node is deinitialized: later commands are refused.
    live: AtomicBool,
    /// A command to the node timed out.
    pub(super) timed_out: AtomicBool,
}

impl ControlPort {
    /// The node is being deinitialized: commands from now on are refused.
    pub(super) fn retire(&self) {
        self.live.store(false, Ordering::Release);
    }

    fn refused(&self, why: &str) -> Error {
        Error::new(
            ErrorKind::NotSupported,
            format!("command to node '{}' on target '{}': {why}", self.node, self.target),
        )
        .in_node(&self.node)
        .in_kernel(&self.kernel)
    }

    /// Run one command (on the target): serialized with the node's process by its run lock.
    fn execute(&self, command: u32, refs: &[Reference]) -> Result<()> {
        let mut run = lock(&self.run);
        if !self.live.load(Ordering::Acquire) {
            return Err(self.refused("the node was released or is being re-verified"));
        }
        let run = &mut *run;
        let mut cc = ControlContext {
            node: self.key,
            node_name: &self.node,
            params: &self.params,
            border: self.border,
            aliased: &self.aliased,
            command,
            refs,
            memory: &run.memory,
            taken: Default::default(),
            instance: &mut run.instance,
            local: &run.local,
        };
        call_guarded("control", || (self.control)(&mut cc)).map_err(|e| e.in_kernel(&self.kernel).in_node(&self.node))
    }

    /// Queue a command on the node's target and wait for it at most `timeout`.
    pub(super) fn send(
        self: &Arc<Self>,
        graph: u64,
        command: u32,
        refs: &[Reference],
        timeout: Duration,
    ) -> Result<()> {
        if !self.live.load(Ordering::Acquire) {
            return Err(self.refused("the node was released or is being re-verified"));
        }
        if self.executor.is_current() {
            return Err(self.refused("sent from a callback running on that target, it would wait for itself"));
        }
        if self.host && ACTIVE_GRAPH.with(|c| c.get()) == graph {
            return Err(self.refused("sent from inside its own graph's processing, it could wait for itself"));
        }
        let job = Arc::new(CommandJob {
            port: Arc::clone(self),
            command,
            refs: refs.to_vec(),
            result: Mutex::new(None),
            done: Latch::new(1),
        });
        let data = Arc::into_raw(Arc::clone(&job)) as *const ();
        // SAFETY: the job owns one strong count of `data`, released by `run_command` (or below if
        // it is never queued), so the CommandJob outlives the job whatever the sender does.
        if let Err(e) = unsafe { self.executor.submit(Job { run: run_command, data, arg: 0 }, false) } {
            // SAFETY: not queued: the count taken for the job is ours to release.
            drop(unsafe { Arc::from_raw(data as *const CommandJob) });
            return Err(e.in_node(&self.node));
        }
        if !job.done.wait_for(timeout) {
            self.timed_out.store(true, Ordering::Release);
            return Err(Error::new(
                ErrorKind::Timeout,
                format!(
                    "command {command} to node '{}' on target '{}' did not complete within {timeout:?} (it stays queued)",
                    self.node, self.target
                ),
            )
            .in_node(&self.node)
            .in_kernel(&self.kernel));
        }
        lock(&job.result).take().unwrap_or_else(|| Err(self.refused("the command was dropped")))
    }
}

/// A command in flight: owned by the queued job and the sender.
struct CommandJob {
    port: Arc<ControlPort>,
    command: u32,
    refs: Vec<Reference>,
    result: Mutex<Option<Result<()>>>,
    done: Latch,
}

/// The job of one command (see [`ControlPort::send`]).
unsafe fn run_command(data: *const (), _: usize) {
    // SAFETY: `send` leaked one strong count of an Arc<CommandJob> into `data` for this job.
    let job = unsafe { Arc::from_raw(data as *const CommandJob) };
    let r = job.port.execute(job.command, &job.refs);
    *lock(&job.result) = Some(r);
    job.done.count_down();
}

/// What a completion callback learns about the node that completed.
#[derive(Clone, Debug)]
pub struct NodeCompletion<'a> {
    /// The node's identity.
    pub key: crate::kernel::contexts::NodeKey,
    /// The node's name.
    pub node: &'a str,
    /// The node's kernel.
    pub kernel: &'a str,
    /// The target it ran on.
    pub target: &'a str,
    /// Its execution times so far (this run included).
    pub perf: Perf,
}

/// `vx_action`: what the graph does after a completion callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAction {
    /// `VX_ACTION_CONTINUE`.
    Continue,
    /// `VX_ACTION_ABANDON`: stop the frame (the graph's process returns `GraphAbandoned`).
    Abandon,
}

/// A node completion callback (`vx_nodecomplete_f`).
pub type NodeCallbackFn = dyn Fn(&NodeCompletion<'_>) -> NodeAction + Send + Sync;

impl Node {
    /// `vxSetNodeTarget` by name: run the node on `target` (`HOST_TARGET` or one of the context's
    /// named targets), or on any target that implements its kernel with [`TARGET_ANY`]
    /// (`VX_TARGET_ANY`). Names are case-insensitive, as OpenVX's target strings are ("any", "ANY",
    /// "Any"). Refused when the context has no such target or the node's kernel has no
    /// implementation there; the node is re-verified (deinit on the old target, create on the new).
    pub fn set_target(&self, target: &str) -> Result<()> {
        self.with(|g, body, i| {
            let s = body.nodes[i].as_mut().expect("checked");
            place(&s.kernel, Some(target), &g.ctx.inner.shared.targets)
                .map_err(|e| e.in_node(&s.name).in_graph(&g.name()))?;
            s.requested_target = Some(target.to_owned());
            s.dirty = true;
            body.invalidate();
            Ok(())
        })
    }

    /// The target the node runs on: as placed at the last verification, else as requested, else
    /// where the default rule would put it now.
    pub fn target(&self) -> Result<String> {
        self.with(|g, body, i| {
            let s = body.nodes[i].as_ref().expect("checked");
            match &s.placement {
                Some(p) => Ok(p.name().to_owned()),
                None => {
                    Ok(place(&s.kernel, s.requested_target.as_deref(), &g.ctx.inner.shared.targets)?.name().to_owned())
                }
            }
        })
    }

    /// `tivxNodeSendCommand`: send `command` (with `refs`) to the node's control callback, queued
    /// on its target's FIFO and serialized with its process calls; wait at most `timeout`. Only
    /// between verification and release. Returns the control callback's result; a timeout is
    /// [`ErrorKind::Timeout`] naming node and target, and marks the node
    /// ([`command_timed_out`](Self::command_timed_out)).
    pub fn send_command(&self, command: u32, refs: &[Reference], timeout: Duration) -> Result<()> {
        let g = self
            .graph
            .upgrade()
            .ok_or_else(|| Error::new(ErrorKind::InvalidReference, "the node's graph was released"))?;
        let port = lock(&g.ports).get(self.index).cloned().flatten();
        let Some(port) = port else {
            return Err(Error::new(
                ErrorKind::NotSupported,
                "commands reach a node whose kernel has a control callback, between its graph's verification and its \
                 release: verify the graph first",
            )
            .in_graph(&g.name()));
        };
        port.send(g.id, command, refs, timeout).map_err(|e| e.in_graph(&g.name()))
    }

    /// Whether a command to the node timed out since its last verification.
    pub fn command_timed_out(&self) -> Result<bool> {
        let g = self
            .graph
            .upgrade()
            .ok_or_else(|| Error::new(ErrorKind::InvalidReference, "the node's graph was released"))?;
        let port = lock(&g.ports).get(self.index).cloned().flatten();
        Ok(port.is_some_and(|p| p.timed_out.load(Ordering::Acquire)))
    }

    /// `vxAssignNodeCallback`: `callback` runs after each successful process of the node (on the
    /// thread that ran it); [`NodeAction::Abandon`] stops the frame. `None` removes it.
    pub fn set_callback(
        &self,
        callback: Option<impl Fn(&NodeCompletion<'_>) -> NodeAction + Send + Sync + 'static>,
    ) -> Result<()> {
        self.with(|_, body, i| {
            body.nodes[i].as_mut().expect("checked").callback = callback.map(|c| Arc::new(c) as Arc<NodeCallbackFn>);
            Ok(())
        })
    }
}
