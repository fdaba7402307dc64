//! Where verify spends its time, pass by pass, for the scaling benchmark: off unless a
//! caller turns it on with [`pass_times`]; then every graph pass and every node pass adds its wall
//! time to a process-wide table. A leaf: it imports nothing of the crate.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ON: AtomicBool = AtomicBool::new(false);
/// (group, pass, total): group `""` for graph passes, `"nodes/"` for node passes.
static TABLE: Mutex<Vec<(&'static str, &'static str, Duration)>> = Mutex::new(Vec::new());

/// Benchmark hook: turn the per-pass timing on (`true`) or off, and take what was timed since the
/// last call — pass name and total wall time, in the order the passes first ran; node passes are
/// named `nodes/<pass>` and are part of `nodes`.
#[doc(hidden)]
pub fn pass_times(on: bool) -> Vec<(String, Duration)> {
    ON.store(on, Ordering::Relaxed);
    let table = std::mem::take(&mut *TABLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    table.into_iter().map(|(group, pass, d)| (format!("{group}{pass}"), d)).collect()
}

/// A running timer of pass `pass` in `group` when timing is on.
pub(super) fn start(group: &'static str, pass: &'static str) -> Option<Timer> {
    ON.load(Ordering::Relaxed).then(|| Timer { group, pass, t0: Instant::now() })
}

/// One pass being timed.
pub(super) struct Timer {
    group: &'static str,
    pass: &'static str,
    t0: Instant,
}

/// Add a timer's time to its pass.
pub(super) fn stop(timer: Option<Timer>) {
    let Some(Timer { group, pass, t0 }) = timer else { return };
    let took = t0.elapsed();
    let mut table = TABLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match table.iter_mut().find(|(g, p, _)| *g == group && *p == pass) {
        Some((_, _, d)) => *d += took,
        None => table.push((group, pass, took)),
    }
}
