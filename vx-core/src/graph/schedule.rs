//! `vxScheduleGraph` / `vxWaitGraph`: a graph's process started on a thread of its own and
//! collected later. One run at a time per graph: scheduling a graph already scheduled is refused
//! (`GraphScheduled`) until `wait` collects the run.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::error::{Error, ErrorKind, Result};
use crate::graph::Graph;
use crate::support::sync::lock;

impl Graph {
    /// `vxScheduleGraph`: verify the graph if needed, then start processing it and return at
    /// once; [`wait`](Self::wait) returns the result. A verification error (an empty graph
    /// included) is returned here, and the graph is not scheduled.
    ///
    /// In a queue mode (a pipelined graph): manual mode starts the frames whose references are
    /// all enqueued; auto mode refuses (its frames start on their own).
    pub fn schedule(&self) -> Result<()> {
        if self.inner.queues.queued() {
            return self.schedule_queued();
        }
        let mut slot = lock(&self.inner.scheduled);
        if slot.is_some() {
            return Err(Error::new(
                ErrorKind::GraphScheduled,
                "the graph is already scheduled: wait for it before scheduling it again",
            )
            .in_graph(&self.name()));
        }
        // Every error knowable now is returned now, as `vxScheduleGraph` does: the graph is
        // verified (if it changed) before the run starts; a graph that fails verification, or
        // has no nodes, is not scheduled.
        self.inner.lock()?.prepare_to_run(&self.inner)?;
        let graph = Graph { inner: Arc::clone(&self.inner) };
        // Counted as running from now until the run's thread ends (`Graph::state` reads `Running`).
        self.inner.observed.runs.fetch_add(1, Ordering::AcqRel);
        let handle = std::thread::Builder::new()
            .name(format!("vx-graph{}", self.inner.id))
            .spawn(move || {
                let result = graph.process();
                graph.inner.observed.runs.fetch_sub(1, Ordering::AcqRel);
                result
            })
            .map_err(|e| {
                self.inner.observed.runs.fetch_sub(1, Ordering::AcqRel);
                Error::new(ErrorKind::NoResources, format!("could not start the scheduled run: {e}"))
                    .in_graph(&self.name())
            })?;
        *slot = Some(handle);
        Ok(())
    }

    /// `vxWaitGraph`: wait for the run [`schedule`](Self::schedule) started and return its result.
    /// Refused (`Failure`) when the graph is not scheduled.
    ///
    /// In a queue mode: wait until no frame is in flight or can start, and return the first
    /// error of a frame since the last wait.
    pub fn wait(&self) -> Result<()> {
        if self.inner.queues.queued() {
            return self.wait_queued();
        }
        let handle = lock(&self.inner.scheduled).take();
        let Some(handle) = handle else {
            return Err(Error::new(ErrorKind::Failure, "the graph is not scheduled").in_graph(&self.name()));
        };
        handle.join().unwrap_or_else(|p| {
            Err(Error::new(
                ErrorKind::Failure,
                format!("the scheduled run panicked: {}", crate::support::unwind::panic_message(&*p)),
            )
            .in_graph(&self.name()))
        })
    }
}
