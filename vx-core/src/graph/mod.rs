//! Graphs (`vx_graph`): nodes over data objects, verified then processed. A hub: the public handle
//! (`handle.rs`), what the graph's lock guards (`body.rs`), a node's place (`slot.rs`), then the two
//! phases — [`crate::graph::verify`] and `execute.rs` — and nodes, parameters, targets, schedules,
//! pipelining and tiling.

mod body;
pub(super) mod delay;
mod execute;
pub(crate) mod fusion;
mod handle;
pub(crate) mod node;
pub(crate) mod parameters;
pub(crate) mod pipeline;
mod schedule;
mod slot;
pub(crate) mod targets;
pub(crate) mod tiling;
pub(crate) mod verify;

use body::{ACTIVE_GRAPH, ActiveGuard};
pub(crate) use body::{GraphBody, GraphInner, Observed, RunGuard, stale};
use handle::check_param;
pub use handle::{Graph, PerfRow, PerfTable};
pub(crate) use slot::{NodeRun, NodeSlot, NodeStats};

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
