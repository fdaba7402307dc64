//! When a tiling node's tiles are shared with the crew's helpers: a cost model, not a size
//! threshold (issue 29). A node is split when its estimated work per thread exceeds the measured
//! delay of a helper joining a job ([`Crew::join_estimate`](crate::shared::crew::Crew::join_estimate)):
//! below that, the helper would arrive after the calling thread had done the work alone.
//!
//! The node's work is measured, not guessed: every run of a node that could be split records its
//! busy time (the sum over the threads that ran its tiles) into a moving average. The first run of
//! such a node runs alone and measures. A node kept alone because helpers were slow to join splits
//! anyway one run in [`EXPLORE_EVERY`], so the join estimate follows the machine (helpers that now
//! spin between frames join in a microsecond; parked ones on a VM take 50–300 µs). Splitting never
//! costs the caller more than the publication of the job: the caller starts on the tiles at once
//! and finishes them alone if no helper comes (`shared::crew`).
//!
//! The decision only chooses who runs which tiles; every tile is the same either way, so outputs
//! are identical whatever it decides.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::support::time::moving_average;

/// A node kept alone by the model splits anyway once in this many runs (to re-measure joining).
pub(super) const EXPLORE_EVERY: u32 = 32;

/// Nodes whose estimated work per thread is below this never split, exploring or not: even a
/// helper already spinning costs about this much to hand the job to.
const LEAST_WORK_PER_THREAD: Duration = Duration::from_micros(2);

/// How one run of a node shares its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// On the calling thread, in order; `measure`: time it for the model.
    Alone { measure: bool },
    /// With the crew's helpers (the busy time is always measured).
    Together,
}

/// One node's sharing state (inside its `TilingState`).
#[derive(Debug)]
pub(super) struct Split {
    /// Several threads and several tiles, and at least the policy's floor of pixels.
    possible: bool,
    /// `TilingPolicy::split_by_cost`: false splits every possible run.
    by_cost: bool,
    /// Threads that can share the tiles (the calling thread and the helpers).
    threads: u32,
    /// Moving average of the node's busy time, ns (0: not measured yet).
    work_ns: AtomicU64,
    /// Runs the model kept alone (for exploring).
    kept_alone: AtomicU32,
}

impl Split {
    pub(super) fn new(possible: bool, by_cost: bool, threads: usize) -> Split {
        Split {
            possible,
            by_cost,
            threads: threads.max(1) as u32,
            work_ns: AtomicU64::new(0),
            kept_alone: AtomicU32::new(0),
        }
    }

    /// Share this run's tiles or not, given how long a helper has taken to join lately.
    pub(super) fn decide(&self, join: Duration) -> Decision {
        if !self.possible {
            return Decision::Alone { measure: false };
        }
        if !self.by_cost {
            return Decision::Together;
        }
        let work = self.work_ns.load(Ordering::Relaxed);
        if work == 0 {
            return Decision::Alone { measure: true };
        }
        let per_thread = Duration::from_nanos(work / self.threads as u64);
        if per_thread < LEAST_WORK_PER_THREAD {
            return Decision::Alone { measure: true };
        }
        if per_thread > join {
            return Decision::Together;
        }
        let n = self.kept_alone.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        if n.is_multiple_of(EXPLORE_EVERY) { Decision::Together } else { Decision::Alone { measure: true } }
    }

    /// Record one run's busy time.
    pub(super) fn note_work(&self, busy: Duration) {
        moving_average(&self.work_ns, busy.as_nanos().min(u64::MAX as u128) as u64);
    }

    /// The node's estimated busy time (None before its first measured run).
    #[cfg(test)]
    pub(super) fn work_estimate(&self) -> Option<Duration> {
        Some(self.work_ns.load(Ordering::Relaxed)).filter(|&n| n > 0).map(Duration::from_nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn a_node_that_cannot_split_never_measures() {
        let s = Split::new(false, true, 2);
        assert_eq!(s.decide(Duration::ZERO), Decision::Alone { measure: false });
    }

    #[test]
    fn without_the_cost_model_every_possible_run_splits() {
        let s = Split::new(true, false, 2);
        assert_eq!(s.decide(Duration::from_secs(1)), Decision::Together);
    }

    #[test]
    fn the_first_run_measures_alone_then_work_per_thread_is_weighed_against_joining() {
        let s = Split::new(true, true, 2);
        assert_eq!(s.decide(US), Decision::Alone { measure: true });
        s.note_work(100 * US); // 50 µs per thread
        assert_eq!(s.decide(10 * US), Decision::Together);
        assert_eq!(s.decide(49 * US), Decision::Together);
        // A helper slower than the work per thread: alone, except one run in EXPLORE_EVERY.
        let together = (0..EXPLORE_EVERY * 4).filter(|_| s.decide(60 * US) == Decision::Together).count();
        assert_eq!(together, 4);
    }

    #[test]
    fn tiny_nodes_never_split_even_when_helpers_join_at_once() {
        let s = Split::new(true, true, 2);
        s.note_work(3 * US); // 1.5 µs per thread
        assert!((0..200).all(|_| s.decide(Duration::ZERO) == Decision::Alone { measure: true }));
    }

    #[test]
    fn the_average_follows_samples() {
        let s = Split::new(true, true, 4);
        s.note_work(800 * US);
        assert_eq!(s.work_estimate(), Some(800 * US));
        for _ in 0..100 {
            s.note_work(80 * US);
        }
        let w = s.work_estimate().unwrap();
        assert!(w >= 80 * US && w < 81 * US, "{w:?}");
    }
}
