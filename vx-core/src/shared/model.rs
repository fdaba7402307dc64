//! What the runtime's thread protocols are built of (the crew, `shared/crew.rs`; the targets'
//! executors, `shared/target.rs`): the standard library's threads, locks and atomics, the host's
//! CPUs, and clock-bounded spins and waits — or, under `--cfg loom`, the loom model checker's
//! (so it explores every interleaving of those protocols: their `loom_tests`), with a fake CPU per
//! model thread (every thread starts on CPU 0, where a crew's caller runs, so helpers take the
//! move-off path), spins that give up after one look and joins without a deadline (loom cannot
//! model time). It imports nothing from the layers above; only the crew and the executors use it.
//!
//! Run the models: `RUSTFLAGS="--cfg loom" cargo test --release -p vx-rs --lib loom`.

#[cfg(not(loom))]
pub(super) use self::host::*;
#[cfg(loom)]
pub(super) use self::model_checked::*;

/// `thread_local!` for protocol state: the standard library's (`const`-initialized) or, under
/// loom, loom's (which gives every model thread its own, fresh in every execution).
#[cfg(not(loom))]
macro_rules! protocol_local {
    ($($(#[$m:meta])* static $name:ident: $t:ty = $init:expr;)*) => {
        std::thread_local! { $($(#[$m])* static $name: $t = const { $init };)* }
    };
}
#[cfg(loom)]
macro_rules! protocol_local {
    ($($(#[$m:meta])* static $name:ident: $t:ty = $init:expr;)*) => {
        loom::thread_local! { $($(#[$m])* static $name: $t = $init;)* }
    };
}
pub(super) use protocol_local;

/// Lock `m` (std's or loom's): a poisoned lock only means a panic escaped while the state it
/// guards was consistent.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Check `f` in every interleaving with up to `preemptions` preemptions (`LOOM_MAX_PREEMPTIONS`
/// overrides it): the models' runner.
#[cfg(all(test, loom))]
pub(super) fn check(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(preemptions);
    }
    b.check(f);
}

#[cfg(not(loom))]
mod host {
    pub(in crate::shared) use crate::support::cpu::{self, CpuSet};
    pub(in crate::shared) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub(in crate::shared) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(in crate::shared) use std::thread::{self, JoinHandle};
    use std::time::{Duration, Instant};

    /// A spin bounded by the clock.
    pub(in crate::shared) struct SpinBudget(Instant);

    impl SpinBudget {
        /// Loads of the awaited atomic between two looks at the clock.
        pub(in crate::shared) const BATCH: usize = 64;
        pub(in crate::shared) fn start() -> SpinBudget {
            SpinBudget(Instant::now())
        }
        pub(in crate::shared) fn spent(&self, limit: Duration) -> bool {
            self.0.elapsed() >= limit
        }
        pub(in crate::shared) fn pause() {
            std::hint::spin_loop();
        }
    }

    /// Join `h` if its thread ends before `deadline` (polled every millisecond); false when it
    /// did not, and the thread is left to run on (detached).
    pub(in crate::shared) fn join_by(h: JoinHandle<()>, deadline: Instant) -> bool {
        while !h.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if h.is_finished() {
            let _ = h.join();
            true
        } else {
            false
        }
    }
}

#[cfg(loom)]
mod model_checked {
    pub(in crate::shared) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
    pub(in crate::shared) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(in crate::shared) use loom::thread::{self, JoinHandle};
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    /// A spin of one look: loom explores what happens after it gives up at every point.
    pub(in crate::shared) struct SpinBudget;

    impl SpinBudget {
        pub(in crate::shared) const BATCH: usize = 1;
        pub(in crate::shared) fn start() -> SpinBudget {
            SpinBudget
        }
        pub(in crate::shared) fn spent(&self, _limit: Duration) -> bool {
            true
        }
        pub(in crate::shared) fn pause() {
            loom::thread::yield_now();
        }
    }

    /// Join `h` (no deadline: a thread that never ends fails the model as a deadlock).
    pub(in crate::shared) fn join_by(h: JoinHandle<()>, _deadline: Instant) -> bool {
        let _ = h.join();
        true
    }

    loom::thread_local! {
        /// The CPU this model thread "runs on": all start on CPU 0 (a crew caller's).
        static CPU: Cell<usize> = Cell::new(0);
        /// Moves this model thread tried.
        static MOVES: Cell<u32> = Cell::new(0);
    }

    pub(in crate::shared) mod cpu {
        /// This thread's fake CPU.
        pub(in crate::shared) fn current() -> Option<usize> {
            Some(super::CPU.with(|c| c.get()))
        }
    }

    std::thread_local! {
        /// Set by a model (on the test's OS thread, where loom runs every model thread): each
        /// thread's first move off a CPU fails, as when the scheduler undoes it or the other CPU
        /// is not allowed.
        pub(in crate::shared) static FIRST_MOVE_FAILS: Cell<bool> = const { Cell::new(false) };
    }

    /// The fake CPUs a thread may use: a move off one succeeds (but see [`FIRST_MOVE_FAILS`]);
    /// pinning always does.
    pub(in crate::shared) struct CpuSet;

    impl CpuSet {
        pub(in crate::shared) fn of_this_thread() -> Option<CpuSet> {
            Some(CpuSet)
        }
        pub(in crate::shared) fn move_off(&self, cpu: usize) -> bool {
            let tried = MOVES.with(|m| m.replace(m.get() + 1));
            if tried == 0 && FIRST_MOVE_FAILS.with(Cell::get) {
                return false;
            }
            CPU.with(|c| c.set(cpu + 1));
            true
        }
        pub(in crate::shared) fn pin_to_cores(_cpus: &[usize]) -> bool {
            true
        }
    }
}
