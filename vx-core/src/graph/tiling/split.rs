//! When a tiling node's tiles are shared with the crew's helpers: a cost model, not a size
//! threshold. The calling thread starts on the tiles at once and steals the helpers' when its own
//! are done (`claims.rs`), so helpers that join `j` after publication save `(work − j)·(T − 1)/T`
//! of a node's `work` on `T` threads when they come before the caller would have finished alone. A
//! node is split when that saving, with the measured join delay
//! ([`Crew::join_estimate`](crate::shared::crew::Crew::join_estimate)), exceeds [`LEAST_GAIN`]. The
//! saving counts the node's whole work, not its work per thread: a helper woken after half the
//! node still takes a quarter of it on two threads.
//!
//! The node's work is measured, not guessed: every run of a node that could be split records its
//! busy time (the sum over the threads that ran its tiles) into an estimate that settles fast on
//! faster runs and slowly on slower ones (`support::time::settling_average`), and its wall time
//! alone or together; once both were timed, sharing continues only while together was faster.
//! The first run of such a node runs alone and measures.
//!
//! The model explores. A node kept alone splits anyway after [`EXPLORE_EVERY`] runs, then after
//! twice as many each time it still does not pay, up to [`EXPLORE_EVERY_MAX`] (an exploration
//! costs a helper's wake-up, 100 µs and more on a VM). A node kept together runs alone after
//! [`EXPLORE_EVERY`] runs, then — while those runs alone take over a quarter longer than sharing —
//! twice as far apart each time, up to [`EXPLORE_EVERY_MAX`] (at 4K a run alone costs two frames:
//! the helpers park during it, and the next run wakes them). So a run alone that was slow by
//! accident (preempted) cannot keep a node sharing on a stale average, and the estimates follow
//! the machine (helpers that spin between frames join in a microsecond; parked ones on a VM take
//! 50–300 µs). Splitting never costs the caller more than the publication of the job: the caller
//! starts on the tiles at once and finishes them alone if no helper comes (`shared::crew`).
//!
//! Helpers are *warm* while they spin after a job (`shared::crew`: 200 µs) and *cold* once parked,
//! and the two are judged apart: the crew keeps a join estimate for each, and a node keeps its time
//! together for each. So a stream of frames whose node shares keeps its helpers warm and goes on
//! sharing at a microsecond's cost per frame, while the cold wake-up an exploration pays (the
//! helpers were parked because the node ran alone) does not count against it. The run after an
//! exploration that finds the helpers warm is shared too, timing warm sharing afresh: a node kept
//! alone never refreshes its warm estimate otherwise, and one estimate inflated by slow runs (the
//! first frames after an idle gap run 3–5 times slower on a VM) would keep it alone for good.
//! Frames further apart than the spin find the helpers cold every time and are judged by the cold
//! figures.
//!
//! Frames come in bursts (a batch, a `process` loop after an idle spell): the first run after a gap
//! whose predecessor was in a stream is treated as a stream's, so it wakes the parked helpers when
//! warm sharing pays, and the burst's second run finds them warm. Spaced runs, each after a gap,
//! never wake them. A stream wakes them only when the runs it still expects (streams' measured
//! length; one already longer is expected to last as long again) save more shared warm than the
//! wake-up costs the caller (a run shared with parked helpers against one alone): on a VM that
//! charges 350 µs a wake-up, waking them for every burst of two would make a 1080p `not` take
//! 390 µs a run instead of 97.
//!
//! The decision only chooses who runs which tiles; every tile is the same either way, so outputs
//! are identical whatever it decides.
//!
//! The estimates outlive a re-verification that leaves the work as it was ([`WorkKey`],
//! [`Split::inherit`]): a `process` loop that hands each frame its own images through
//! `set_parameter` re-verifies every frame, and a model that forgot its measurements each time
//! would run every frame alone, measuring, at one thread's speed.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::kernel::record::KernelInner;
use crate::shared::crew::Crew;
#[cfg(doc)]
use crate::support::time::ns_of;
use crate::support::time::settling_average;

/// A node kept alone by the model splits anyway once in this many runs (to re-measure joining); each
/// exploration that finds sharing still not paying doubles the interval, up to
/// [`EXPLORE_EVERY_MAX`] (a helper woken on a VM can take 100 µs and more to join, which a 10 µs
/// node would pay every 32 runs); the model choosing to share resets it.
pub(super) const EXPLORE_EVERY: u32 = 32;

/// The longest interval between explorations.
pub(super) const EXPLORE_EVERY_MAX: u32 = 4096;

/// Nodes whose estimated work per thread is below this never split, exploring or not: even a
/// helper already spinning costs about this much to hand the job to.
const LEAST_WORK_PER_THREAD: Duration = Duration::from_micros(2);

/// The least expected saving for which a node splits: publishing a job (a futex wake-up when
/// helpers are parked) and gathering the threads cost the caller about this much.
const LEAST_GAIN: Duration = Duration::from_micros(2);

/// How helpers join a job, as the crew sees them now ([`Crew::join_estimate`]).
#[derive(Clone, Copy, Debug)]
pub(in crate::graph) struct Joining {
    /// Lately, for a job published while a helper spun.
    pub(in crate::graph) warm: Duration,
    /// Lately, for a job published while every helper was parked.
    pub(in crate::graph) cold: Duration,
    /// A helper spins now: a job published now is warm.
    pub(in crate::graph) helpers_warm: bool,
}

/// How one run of a node shares its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::graph) enum Decision {
    /// On the calling thread, in order; `measure`: time it for the model.
    Alone { measure: bool },
    /// With the crew's helpers (the busy time is always measured).
    Together,
}

/// One node's sharing state (inside its `TilingState`).
#[derive(Debug)]
pub(in crate::graph) struct Split {
    /// Several threads and several tiles, and at least the policy's floor of pixels.
    possible: bool,
    /// `TilingPolicy::split_by_cost`: false splits every possible run.
    by_cost: bool,
    /// Threads that can share the tiles (the calling thread and the helpers).
    threads: u32,
    /// Settling estimate of the node's busy time, ns (0: not measured yet).
    work_ns: AtomicU64,
    /// Settling estimates of its wall time run alone, and run together with helpers that were warm
    /// (spinning) or cold (parked) when the job was published, ns (0: not measured yet). A cold
    /// run pays a wake-up a warm one does not; which one a run will be is known when it is decided
    /// ([`Crew::join_estimate`](crate::shared::crew::Crew::join_estimate)).
    alone_ns: AtomicU64,
    together_warm_ns: AtomicU64,
    together_cold_ns: AtomicU64,
    /// When its latest run ended ([`ns_of`] clock; 0: never): a run that starts within a
    /// helper's spin of it is part of a stream.
    last_end_ns: AtomicU64,
    /// Runs the model kept alone (for exploring).
    kept_alone: AtomicU32,
    /// Runs the model kept together (for exploring).
    kept_together: AtomicU32,
    /// The current interval between explorations of a node kept alone.
    explore_every: AtomicU32,
    /// The current interval between runs alone of a node kept together.
    alone_every: AtomicU32,
    /// A run alone made by the model for a node kept together is under way: the time together
    /// it is to be compared with, ns (0: none).
    alone_check_ns: AtomicU64,
    /// Runs of the current stream so far (this one included; 0: none yet; 1: the latest run
    /// came after a gap). Two or more: the latest run was decided in a stream (it started within
    /// a helper's spin of the run before), and the next run after a gap is expected to start a
    /// stream again.
    stream_runs: AtomicU32,
    /// Moving average of the runs a stream of this node has had, in sixteenths (0: no stream
    /// ended yet): how many warm runs a wake-up sent now can expect to serve.
    stream_len_16: AtomicU32,
    /// An exploration of a node kept alone was made with parked helpers (it timed a cold run) and
    /// no run since found them spinning (an exploration made while they spun sets nothing): the
    /// first that does is shared too, to time sharing with warm helpers afresh (nothing else
    /// would: a node kept alone never finds its helpers warm otherwise, and a stale warm estimate
    /// kept it alone for good).
    explored: AtomicBool,
}

/// What a node's measured times are times of: its kernel (the version its tile plan was made for:
/// a reload gives another, though a node moved in place to a new version of the same shape keeps
/// its plan, and this key, until it is verified again) and what verify decided about the work of
/// a run (`shape`: a hash of sizes, formats, border…, the caller's choice). Equal keys: the same
/// work, so a re-verification keeps the estimates (two shapes that hash alike would only share
/// estimates: outputs never depend on them). The kernel is held weakly: the key never keeps a
/// replaced kernel (or its module) alive, and its allocation is not reused while the key exists,
/// so equal pointers are the same kernel.
#[derive(Clone, Debug)]
pub(in crate::graph) struct WorkKey {
    kernel: Weak<KernelInner>,
    shape: u64,
}

impl WorkKey {
    pub(in crate::graph) fn new(kernel: &Arc<KernelInner>, shape: u64) -> WorkKey {
        WorkKey { kernel: Arc::downgrade(kernel), shape }
    }
}

impl PartialEq for WorkKey {
    fn eq(&self, other: &WorkKey) -> bool {
        Weak::ptr_eq(&self.kernel, &other.kernel) && self.shape == other.shape
    }
}

impl Split {
    pub(in crate::graph) fn new(possible: bool, by_cost: bool, threads: usize) -> Split {
        Split {
            possible,
            by_cost,
            threads: threads.max(1) as u32,
            work_ns: AtomicU64::new(0),
            alone_ns: AtomicU64::new(0),
            together_warm_ns: AtomicU64::new(0),
            together_cold_ns: AtomicU64::new(0),
            last_end_ns: AtomicU64::new(0),
            kept_alone: AtomicU32::new(0),
            kept_together: AtomicU32::new(0),
            explore_every: AtomicU32::new(EXPLORE_EVERY),
            alone_every: AtomicU32::new(EXPLORE_EVERY),
            alone_check_ns: AtomicU64::new(0),
            stream_runs: AtomicU32::new(0),
            stream_len_16: AtomicU32::new(0),
            explored: AtomicBool::new(false),
        }
    }

    /// Share this run's tiles or not, given how helpers have lately joined and whether they are
    /// warm now; `now`: the [`ns_of`] clock.
    pub(in crate::graph) fn decide(&self, join: Joining, now: u64) -> Decision {
        if !self.possible {
            return Decision::Alone { measure: false };
        }
        if !self.by_cost {
            return Decision::Together;
        }
        // Whether this run is in a stream (it starts within a helper's spin of the last one's
        // end), and whether the one before was: noted for every run, whatever is decided below.
        let last_end = self.last_end_ns.load(Ordering::Relaxed);
        let stream = last_end != 0 && now.saturating_sub(last_end) < Crew::SPIN.as_nanos() as u64;
        // Runs of the stream before this one: at least the run whose end this one follows
        // (saturating: a months-long stream does not wrap).
        let before = if stream {
            let add = |r: u32| Some(r.max(1).saturating_add(1));
            self.stream_runs.fetch_update(Ordering::Relaxed, Ordering::Relaxed, add).unwrap_or_else(|r| r).max(1)
        } else {
            self.stream_runs.swap(1, Ordering::Relaxed)
        };
        // The run before this one was decided in a stream.
        let streamed = before >= 2;
        let run_in_stream = if stream {
            before.saturating_add(1)
        } else {
            // A run after a gap starts a stream (or runs alone between gaps): the last one's
            // length goes into the estimate.
            if before > 0 {
                let old = self.stream_len_16.load(Ordering::Relaxed);
                let last = before.min(1 << 20) * 16;
                let new = if old == 0 { last } else { old - old / 4 + last / 4 };
                self.stream_len_16.store(new.max(16), Ordering::Relaxed);
            }
            1
        };
        let work = self.work_ns.load(Ordering::Relaxed);
        if work == 0 {
            return Decision::Alone { measure: true };
        }
        let per_thread = Duration::from_nanos(work / self.threads as u64);
        if per_thread < LEAST_WORK_PER_THREAD {
            return Decision::Alone { measure: true };
        }
        // The first run after an exploration that finds its helpers spinning (the one woken came;
        // for a node of a few µs, some runs later): time warm sharing afresh.
        if join.helpers_warm && self.explored.swap(false, Ordering::Relaxed) {
            return Decision::Together;
        }
        // Sharing must pay on the clock too: once both ways were timed, together must have been
        // faster (a helper that joins fast may still cost more than it saves, e.g. on a busy
        // machine or for a node at the memory wall).
        let alone = self.alone_ns.load(Ordering::Relaxed);
        let threads = self.threads as u64;
        let pays = |join: Duration, warm: bool| {
            let together = self.together(warm).load(Ordering::Relaxed);
            let saved = (work.saturating_sub(join.as_nanos().min(u64::MAX as u128) as u64)) * (threads - 1) / threads;
            saved > LEAST_GAIN.as_nanos() as u64 && (together == 0 || alone == 0 || together < alone)
        };
        // Cold helpers in a stream: a job published now wakes them — a futex wake-up for the
        // caller, which does not wait for them — and the next runs find them warm. So a stream
        // that pays warm shares from cold too. A run after a gap whose predecessor was in a stream
        // is expected to start one again (frames come in bursts: a batch, a `process` loop after
        // an idle spell): it wakes the helpers too, so the burst's second run finds them warm
        // instead of waking them itself. Spaced runs (every one after a gap) never do.
        // `share`: by the warm figures or the cold ones.
        let share = if join.helpers_warm {
            pays(join.warm, true).then_some(true)
        } else if pays(join.cold, false) {
            Some(false)
        } else {
            ((stream || streamed) && pays(join.warm, true) && self.wake_pays(alone, run_in_stream)).then_some(true)
        };
        if let Some(warm) = share {
            // Kept together by the model: alone again once in a while, so a slow run alone (a
            // preempted one) cannot keep the node sharing for good on a stale average. A run
            // alone costs a node of a few hundred µs twice (its helpers park meanwhile, and the
            // next run wakes them): when that run alone took over a quarter longer than sharing
            // (`note_alone`), the next one comes twice as far apart (up to EXPLORE_EVERY_MAX); a
            // close call brings it back to EXPLORE_EVERY.
            self.explore_every.store(EXPLORE_EVERY, Ordering::Relaxed);
            self.kept_alone.store(0, Ordering::Relaxed);
            let n = self.kept_together.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
            if n < self.alone_every.load(Ordering::Relaxed) {
                return Decision::Together;
            }
            self.kept_together.store(0, Ordering::Relaxed);
            self.alone_check_ns.store(self.together(warm).load(Ordering::Relaxed), Ordering::Relaxed);
            return Decision::Alone { measure: true };
        }
        self.alone_every.store(EXPLORE_EVERY, Ordering::Relaxed);
        self.kept_together.store(0, Ordering::Relaxed);
        let every = self.explore_every.load(Ordering::Relaxed);
        let n = self.kept_alone.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        if n >= every {
            // Explore, and wait twice as long for the next one unless sharing pays by then.
            self.kept_alone.store(0, Ordering::Relaxed);
            self.explore_every.store(every.saturating_mul(2).min(EXPLORE_EVERY_MAX), Ordering::Relaxed);
            // Made with parked helpers, it times a cold run: the next run that finds them warm
            // times a warm one. (Made with warm ones, it timed that already.)
            if !join.helpers_warm {
                self.explored.store(true, Ordering::Relaxed);
            }
            Decision::Together
        } else {
            Decision::Alone { measure: true }
        }
    }

    /// Take over `old`'s measurements: the caller checked that `old` timed the same work (equal
    /// [`WorkKey`]s). Nothing is taken when the two would not decide alike anyway (another thread
    /// count, or one of them never splits). Verify calls it, with no run of either in progress.
    pub(in crate::graph) fn inherit(&self, old: &Split) {
        if (self.possible, self.by_cost, self.threads) != (old.possible, old.by_cost, old.threads) {
            return;
        }
        for (new, old) in [
            (&self.work_ns, &old.work_ns),
            (&self.alone_ns, &old.alone_ns),
            (&self.together_warm_ns, &old.together_warm_ns),
            (&self.together_cold_ns, &old.together_cold_ns),
            (&self.last_end_ns, &old.last_end_ns),
        ] {
            new.store(old.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        for (new, old) in [
            (&self.kept_alone, &old.kept_alone),
            (&self.kept_together, &old.kept_together),
            (&self.explore_every, &old.explore_every),
            (&self.alone_every, &old.alone_every),
        ] {
            new.store(old.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        // A loop that re-verifies every frame explores on one state and runs the next frame on
        // its successor.
        self.explored.store(old.explored.load(Ordering::Relaxed), Ordering::Relaxed);
        self.stream_runs.store(old.stream_runs.load(Ordering::Relaxed), Ordering::Relaxed);
        self.stream_len_16.store(old.stream_len_16.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Record one run alone, ended at `now`: its time is its busy time and its wall time.
    pub(in crate::graph) fn note_alone(&self, took: Duration, now: u64) {
        self.last_end_ns.store(now.max(1), Ordering::Relaxed);
        let ns = took.as_nanos().min(u64::MAX as u128) as u64;
        // A run alone the model made while keeping the node together: against the time together
        // it was decided on, it sets how far apart the next one comes.
        let against = self.alone_check_ns.swap(0, Ordering::Relaxed);
        if against != 0 {
            let every = self.alone_every.load(Ordering::Relaxed);
            let clearly = ns > against.saturating_add(against / 4);
            let next = if clearly { every.saturating_mul(2).min(EXPLORE_EVERY_MAX) } else { EXPLORE_EVERY };
            self.alone_every.store(next, Ordering::Relaxed);
        }
        settling_average(&self.work_ns, ns);
        settling_average(&self.alone_ns, ns);
    }

    /// Record one run together: the threads' busy time and the run's wall time, decided with warm
    /// or cold helpers.
    pub(in crate::graph) fn note_together(&self, busy: Duration, wall: Duration, warm: bool, now: u64) {
        self.last_end_ns.store(now.max(1), Ordering::Relaxed);
        settling_average(&self.work_ns, busy.as_nanos().min(u64::MAX as u128) as u64);
        settling_average(self.together(warm), wall.as_nanos().min(u64::MAX as u128) as u64);
    }

    /// Whether waking parked helpers for this run — the `run_in_stream`th of its stream — pays
    /// back within the stream: what a run shared with cold helpers costs more than one alone (the
    /// caller's wake-up system call, 10–350 µs on a VM) against what the stream's remaining runs
    /// save shared warm. Yes while any of those is not measured yet (and a stream's length is not
    /// known before one ended): a `process` loop that never pauses is one endless stream. A VM that charged the caller 350 µs a wake-up made a 1080p `not`
    /// in bursts of two runs take 390 µs a run instead of 97 alone.
    fn wake_pays(&self, alone: u64, run_in_stream: u32) -> bool {
        let (cold, warm) =
            (self.together_cold_ns.load(Ordering::Relaxed), self.together_warm_ns.load(Ordering::Relaxed));
        let len_16 = self.stream_len_16.load(Ordering::Relaxed);
        if cold == 0 || warm == 0 || alone == 0 || len_16 == 0 {
            return true;
        }
        // The runs still to come: what streams have lasted on average, and a stream already
        // longer than that is expected to go on about as long again.
        let rest = u64::from(len_16.div_ceil(16).saturating_sub(run_in_stream).max(run_in_stream - 1));
        cold.saturating_sub(alone) < rest.saturating_mul(alone.saturating_sub(warm))
    }

    fn together(&self, warm: bool) -> &AtomicU64 {
        if warm { &self.together_warm_ns } else { &self.together_cold_ns }
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
    /// A decision long after the last run ended (not a stream).
    const FAR: u64 = 1 << 40;

    /// Helpers that take `join` to join, warm or cold alike, all parked now.
    fn both(join: Duration) -> Joining {
        Joining { warm: join, cold: join, helpers_warm: false }
    }

    /// A helper spinning now, joining in `join`; parked ones take 100 µs.
    fn warm(join: Duration) -> Joining {
        Joining { warm: join, cold: 100 * US, helpers_warm: true }
    }

    #[test]
    fn a_node_that_cannot_split_never_measures() {
        let s = Split::new(false, true, 2);
        assert_eq!(s.decide(both(Duration::ZERO), FAR), Decision::Alone { measure: false });
    }

    #[test]
    fn without_the_cost_model_every_possible_run_splits() {
        let s = Split::new(true, false, 2);
        assert_eq!(s.decide(both(Duration::from_secs(1)), FAR), Decision::Together);
    }

    #[test]
    fn the_first_run_measures_alone_then_work_per_thread_is_weighed_against_joining() {
        let s = Split::new(true, true, 2);
        assert_eq!(s.decide(both(US), FAR), Decision::Alone { measure: true });
        s.note_alone(100 * US, 1); // 50 µs per thread
        assert_eq!(s.decide(both(10 * US), FAR), Decision::Together);
        assert_eq!(s.decide(both(49 * US), FAR), Decision::Together);
        // A helper joining after 60 µs still takes (100 − 60) / 2 = 20 µs of the node.
        assert_eq!(s.decide(both(60 * US), FAR), Decision::Together);
        // One joining after 97 µs would save 1.5 µs, less than publishing costs: alone.
        assert_eq!(s.decide(both(97 * US), FAR), Decision::Alone { measure: true });
        // A helper slower than the whole node: alone, exploring after EXPLORE_EVERY runs, then
        // after twice as many each time (32, 64, 128: three explorations in 224 runs, counting the
        // one above).
        let explored = (1..EXPLORE_EVERY * 7).filter(|_| s.decide(both(120 * US), FAR) == Decision::Together).count();
        assert_eq!(explored, 3);
    }

    #[test]
    fn sharing_that_was_slower_on_the_clock_stops_except_to_explore() {
        let s = Split::new(true, true, 2);
        s.note_alone(100 * US, 1);
        assert_eq!(s.decide(both(US), FAR), Decision::Together);
        // Together took longer than alone: alone from now on, but exploring (after 32 runs, then 64).
        s.note_together(110 * US, 120 * US, false, 1);
        let together = (0..EXPLORE_EVERY * 3).filter(|_| s.decide(both(US), FAR) == Decision::Together).count();
        assert_eq!(together, 2);
        // Faster together: shared again.
        for _ in 0..40 {
            s.note_together(110 * US, 60 * US, false, 1);
        }
        assert_eq!(s.decide(both(US), FAR), Decision::Together);
    }

    /// `runs` decisions with helpers joining in 1 µs (parked), each followed by its run's report as
    /// the node does it: `alone` for a run alone, `together` for a run together (busy twice that);
    /// the indexes of the runs alone.
    fn runs_alone(s: &Split, runs: usize, alone: Duration, together: Duration) -> Vec<usize> {
        (0..runs)
            .filter(|_| match s.decide(both(US), FAR) {
                Decision::Alone { .. } => {
                    s.note_alone(alone, 1);
                    true
                }
                Decision::Together => {
                    s.note_together(2 * together, together, false, 1);
                    false
                }
            })
            .collect()
    }

    #[test]
    fn a_node_kept_sharing_runs_alone_once_in_a_while_and_a_slow_alone_run_does_not_stick() {
        let s = Split::new(true, true, 2);
        // One run alone preempted (1 ms); together 30 µs: sharing pays on those averages. Alone
        // really takes 10 µs: each run alone brings the estimate down (1000 → 258 → 72 → 25 µs),
        // and none is slower than sharing, so they come every EXPLORE_EVERY runs until the model
        // keeps the node alone; from then on it explores sharing after 32 runs, then 64.
        s.note_alone(1000 * US, 1);
        s.note_together(40 * US, 30 * US, false, 1);
        let alone = runs_alone(&s, 200, 10 * US, 30 * US);
        let e = EXPLORE_EVERY as usize;
        assert_eq!(alone[..3], [e - 1, 2 * e - 1, 3 * e - 1], "{alone:?}");
        let together: Vec<usize> = (3 * e..200).filter(|i| !alone.contains(i)).collect();
        assert_eq!(together, [4 * e - 1, 6 * e - 1], "kept alone, but to explore (after 32 runs, then 64)");
    }

    #[test]
    fn a_close_call_keeps_the_runs_alone_frequent_and_a_clear_one_backs_them_off_to_a_bound() {
        let e = EXPLORE_EVERY as usize;
        // Alone 100 µs against 90 together: one run in EXPLORE_EVERY alone, for good.
        let s = Split::new(true, true, 2);
        s.note_alone(100 * US, 1);
        s.note_together(180 * US, 90 * US, false, 1);
        let alone = runs_alone(&s, 7 * e, 100 * US, 90 * US);
        assert_eq!(alone, (1..=7).map(|k| k * e - 1).collect::<Vec<_>>());
        // Alone 100 µs against 50: after 32 runs, then 64, 128 … 4096, and then every 4096.
        let s = Split::new(true, true, 2);
        s.note_alone(100 * US, 1);
        s.note_together(100 * US, 50 * US, false, 1);
        let alone = runs_alone(&s, 100_000, 100 * US, 50 * US);
        let gaps: Vec<usize> = alone.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(alone[0], e - 1);
        assert_eq!(gaps[..7], [2 * e, 4 * e, 8 * e, 16 * e, 32 * e, 64 * e, 128 * e]);
        assert!(gaps[7..].iter().all(|&g| g == EXPLORE_EVERY_MAX as usize), "{gaps:?}");
        // A run alone that was fast (a close call) brings the interval back to EXPLORE_EVERY.
        let alone = runs_alone(&s, 2 * EXPLORE_EVERY_MAX as usize, 60 * US, 50 * US);
        let gaps: Vec<usize> = alone.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g == e), "{gaps:?}");
    }

    #[test]
    fn explorations_that_do_not_pay_back_off_to_a_bound_and_sharing_resets_it() {
        let s = Split::new(true, true, 2);
        s.note_alone(20 * US, 1); // 10 µs per thread; helpers take 100 µs to join
        let runs = 200_000;
        let explored = (0..runs).filter(|_| s.decide(both(100 * US), FAR) == Decision::Together).count();
        // 32 + 64 + … + 4096 = 8160 runs for the first eight, then one per 4096.
        let want = 8 + (runs - 8160) / EXPLORE_EVERY_MAX as usize;
        assert_eq!(explored, want);
        // Helpers now join at once: the model shares, and the interval is back to EXPLORE_EVERY.
        assert_eq!(s.decide(both(US), FAR), Decision::Together);
        let explored = (0..EXPLORE_EVERY * 3).filter(|_| s.decide(both(100 * US), FAR) == Decision::Together).count();
        assert_eq!(explored, 2);
    }

    #[test]
    fn warm_helpers_are_judged_apart_from_cold_ones() {
        let s = Split::new(true, true, 2);
        s.note_alone(20 * US, 1); // 10 µs per thread
        // Parked helpers take 100 µs to join: alone (but for explorations).
        assert_eq!(s.decide(both(100 * US), FAR), Decision::Alone { measure: true });
        // An exploration with cold helpers was slow on the clock (the wake-up)…
        s.note_together(20 * US, 120 * US, false, 1);
        // …which says nothing of helpers that spin now: warm, the node shares (not timed warm yet).
        assert_eq!(s.decide(warm(US), FAR), Decision::Together);
        // Warm sharing pays (12 µs < 20 µs alone): it goes on while helpers are warm…
        s.note_together(20 * US, 12 * US, true, 1);
        assert_eq!(s.decide(warm(US), FAR), Decision::Together);
        // …and a cold decision still weighs the cold figures: alone.
        assert_eq!(s.decide(both(100 * US), FAR), Decision::Alone { measure: true });
        // Warm sharing that does not pay stops too.
        for _ in 0..40 {
            s.note_together(20 * US, 30 * US, true, 1);
        }
        assert_eq!(s.decide(warm(US), FAR), Decision::Alone { measure: true });
    }

    #[test]
    fn a_stale_warm_estimate_is_timed_again_after_an_exploration() {
        let s = Split::new(true, true, 2);
        s.note_alone(70 * US, 1);
        // Warm sharing once timed slow (runs after an idle gap): the node is kept alone…
        s.note_together(70 * US, 120 * US, true, 1);
        assert_eq!(s.decide(warm(US), FAR), Decision::Alone { measure: true });
        // …until an exploration, made with parked helpers (cold).
        let cold = Joining { warm: US, cold: 100 * US, helpers_warm: false };
        let explored = (0..EXPLORE_EVERY).position(|_| s.decide(cold, FAR) == Decision::Together);
        assert!(explored.is_some(), "an exploration within EXPLORE_EVERY runs");
        s.note_together(70 * US, 100 * US, false, 1);
        // The helper it woke now spins: the next run is shared, whatever the stale estimate says.
        assert_eq!(s.decide(warm(US), FAR), Decision::Together);
        // Warm sharing pays now (48 µs): the node goes on sharing.
        s.note_together(80 * US, 48 * US, true, 1);
        assert!((0..10).all(|_| s.decide(warm(US), FAR) == Decision::Together));
        // Runs after an exploration whose helper has not come yet (still parked) are decided as
        // usual; the first that finds it spinning is shared, and only that one.
        let s = Split::new(true, true, 2);
        s.note_alone(70 * US, 1);
        s.note_together(70 * US, 120 * US, true, 1);
        (0..EXPLORE_EVERY).find(|_| s.decide(cold, FAR) == Decision::Together).expect("explored");
        assert_eq!(s.decide(cold, FAR), Decision::Alone { measure: true });
        assert_eq!(s.decide(cold, FAR), Decision::Alone { measure: true });
        assert_eq!(s.decide(warm(US), FAR), Decision::Together);
        assert_eq!(s.decide(warm(US), FAR), Decision::Alone { measure: true }, "stale estimate, not re-timed");
        // A loop that re-verifies every frame: the exploration on one state, the warm run on its
        // successor.
        let s = Split::new(true, true, 2);
        s.note_alone(70 * US, 1);
        s.note_together(70 * US, 120 * US, true, 1);
        (0..EXPLORE_EVERY).find(|_| s.decide(cold, FAR) == Decision::Together).expect("explored");
        let next = Split::new(true, true, 2);
        next.inherit(&s);
        assert_eq!(next.decide(warm(US), FAR), Decision::Together);
        // An exploration made with warm helpers timed a warm run already: no second one.
        let s = Split::new(true, true, 2);
        s.note_alone(70 * US, 1);
        s.note_together(70 * US, 120 * US, true, 1);
        let slow = Joining { warm: 200 * US, cold: 200 * US, helpers_warm: true };
        (0..EXPLORE_EVERY).find(|_| s.decide(slow, FAR) == Decision::Together).expect("explored");
        assert_eq!(s.decide(warm(US), FAR), Decision::Alone { measure: true });
    }

    #[test]
    fn a_stream_that_pays_warm_wakes_cold_helpers_and_spaced_runs_do_not() {
        let s = Split::new(true, true, 2);
        s.note_alone(20 * US, 1); // 10 µs per thread
        s.note_together(20 * US, 12 * US, true, 1); // warm sharing paid (12 < 20)
        let cold = Joining { warm: US, cold: 100 * US, helpers_warm: false };
        // The last run ended 5 µs ago (a stream): publish, waking the parked helpers.
        let end = 1_000_000;
        s.note_alone(20 * US, end);
        assert_eq!(s.decide(cold, end + 5_000), Decision::Together);
        // A run a millisecond after the last one ended, that one in a stream: a stream is
        // expected to start again, and it wakes them too.
        s.note_alone(20 * US, end);
        assert_eq!(s.decide(cold, end + 1_000_000), Decision::Together);
        // Spaced runs (the one before came after a gap too): the helpers would be cold, and a
        // wake-up takes longer than the whole node.
        let end = end + 1_000_000 + 20_000;
        s.note_together(20 * US, 12 * US, false, end);
        assert_eq!(s.decide(cold, end + 1_000_000), Decision::Alone { measure: true });
        s.note_alone(20 * US, end + 1_020_000);
        assert_eq!(s.decide(cold, end + 2_000_000), Decision::Alone { measure: true });
        // Nor does a stream wake them for a node whose warm sharing did not pay.
        for _ in 0..40 {
            s.note_together(20 * US, 30 * US, true, end);
        }
        assert_eq!(s.decide(cold, end + 5_000), Decision::Alone { measure: true });
    }

    /// Streams of `len` runs each (100 µs apart, 1 ms between streams), every run reported as a
    /// 100 µs run alone (the estimates stay put); each stream's decisions.
    fn streams(s: &Split, join: Joining, lens: &[u32]) -> Vec<Vec<Decision>> {
        let mut t = s.last_end_ns.load(Ordering::Relaxed).max(1_000_000);
        lens.iter()
            .map(|&len| {
                t += 1_000_000;
                (0..len)
                    .map(|_| {
                        let d = s.decide(join, t);
                        t += 100_000;
                        s.note_alone(100 * US, t);
                        d
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_wake_up_in_a_stream_is_sent_only_when_the_streams_warm_runs_pay_it_back() {
        let cold = Joining { warm: US, cold: 50 * US, helpers_warm: false };
        let new = || {
            let s = Split::new(true, true, 2);
            // Alone 100 µs; shared with warm helpers 78 (22 saved a run); shared with parked ones
            // 390: the wake-up cost the caller 290 µs (it happened here, on a VM).
            s.note_alone(100 * US, 1);
            s.note_together(156 * US, 78 * US, true, 1);
            s.note_together(100 * US, 390 * US, false, 1);
            s
        };
        let together = |d: &Vec<Decision>| d.iter().filter(|&&d| d == Decision::Together).count();
        // Streams of two runs: the wake-up would serve one warm run (22 µs): not sent (but to
        // explore, once in 32 runs kept alone).
        let s = new();
        let d = streams(&s, cold, &[2; 20]);
        assert!(d[1..].iter().all(|d| d[0] == Decision::Alone { measure: true }), "{d:?}");
        assert_eq!(d[1..].iter().map(together).sum::<usize>(), 1, "{d:?}");
        // Streams of twenty: it serves nineteen (418 µs): every stream's first run wakes them.
        let s = new();
        let d = streams(&s, cold, &[20; 20]);
        assert!(d[1..].iter().all(|d| d[0] == Decision::Together), "{d:?}");
        // A stream longer than the streams before it is expected to go on about as long again:
        // after streams of two, the 25th run of a long one wakes them (24 more runs expected).
        let s = new();
        streams(&s, cold, &[2; 20]);
        let d = &streams(&s, cold, &[40])[0];
        assert_eq!(d.iter().position(|&d| d == Decision::Together), Some(14), "{d:?}");
        // Before any stream ended (a `process` loop that never pauses), or before a run shared with
        // parked helpers was timed, the wake-up is sent.
        let s = Split::new(true, true, 2);
        s.note_alone(100 * US, 1);
        s.note_together(156 * US, 78 * US, true, 1);
        assert!(streams(&s, cold, &[2; 3])[1..].iter().all(|d| d[0] == Decision::Together));
    }

    #[test]
    fn tiny_nodes_never_split_even_when_helpers_join_at_once() {
        let s = Split::new(true, true, 2);
        s.note_alone(3 * US, 1); // 1.5 µs per thread
        assert!((0..200).all(|_| s.decide(both(Duration::ZERO), FAR) == Decision::Alone { measure: true }));
    }

    #[test]
    fn the_average_follows_samples() {
        let s = Split::new(true, true, 4);
        s.note_alone(800 * US, 1);
        assert_eq!(s.work_estimate(), Some(800 * US));
        for _ in 0..100 {
            s.note_alone(80 * US, 1);
        }
        let w = s.work_estimate().unwrap();
        assert!(w >= 80 * US && w < 81 * US, "{w:?}");
    }

    #[test]
    fn a_successor_decides_as_its_predecessor_would_have() {
        // A node measured once alone (a 10 ms node) shares on its second run; a fresh state would
        // run alone and measure, and one that inherited must share at once.
        let old = Split::new(true, true, 2);
        old.note_alone(10_000 * US, 1);
        assert_eq!(old.decide(warm(US), FAR), Decision::Together);
        let fresh = Split::new(true, true, 2);
        assert_eq!(fresh.decide(warm(US), FAR), Decision::Alone { measure: true });
        let next = Split::new(true, true, 2);
        next.inherit(&old);
        assert_eq!(next.work_estimate(), old.work_estimate());
        assert_eq!(next.decide(warm(US), FAR), Decision::Together);
        // Another thread count, or a state that never splits: nothing is taken.
        for other in [Split::new(true, true, 3), Split::new(false, true, 2), Split::new(true, false, 2)] {
            other.inherit(&old);
            assert_eq!(other.work_estimate(), None);
        }
    }

    /// Stream bookkeeping against a reference written apart: random runs, each starting within a
    /// helper's spin of the last one's end (a stream) or after a gap. The reference keeps whether
    /// the last decided run was in a stream as a flag and the stream's length as a count, and
    /// moves a plain average in sixteenths when a stream ends; the model keeps one counter.
    #[test]
    fn stream_lengths_follow_a_reference_over_random_runs() {
        let spin = Crew::SPIN.as_nanos() as u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        // 10,000 sequences of up to 40 runs: about 200,000 decisions.
        for _ in 0..10_000 {
            let s = Split::new(true, true, 2);
            let (mut runs, mut len_16) = (0u32, 0u32);
            let mut end = 0u64;
            // Half the sequences start with a run the model did not decide (a last end and no
            // stream yet), so the first decided run may be in a stream with none counted.
            if x & 1 == 1 {
                end = 1_000_000;
                s.note_alone(10 * US, end);
            }
            for _ in 0..(x % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let now = end + if end == 0 || x.is_multiple_of(3) { spin + 1 + x % 1000 } else { x % spin };
                let stream = end != 0 && now - end < spin;
                // The reference: the run whose end this one follows counts in its stream, decided
                // or not.
                if stream {
                    runs = runs.max(1) + 1;
                } else {
                    if runs > 0 {
                        len_16 = if len_16 == 0 { runs * 16 } else { len_16 - len_16 / 4 + runs * 4 };
                        len_16 = len_16.max(16);
                    }
                    runs = 1;
                }
                s.decide(warm(US), now);
                assert_eq!(s.stream_runs.load(Ordering::Relaxed), runs);
                assert_eq!(s.stream_len_16.load(Ordering::Relaxed), len_16);
                // The flag the model derives: the run before the next one was in a stream.
                assert_eq!(s.stream_runs.load(Ordering::Relaxed) >= 2, stream);
                end = now + x % 50_000;
                s.note_alone(Duration::from_nanos(end - now), end);
            }
        }
    }
}
