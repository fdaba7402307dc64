//! Deadlines from callers' durations: any `Duration` is accepted, and one too long to add to the
//! clock means "no deadline" (it saturates) instead of the panic of `Instant + Duration`. Every
//! deadline in the runtime is made here; and the settling estimate of measured times (the cost
//! model's estimates).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When `timeout` from now runs out; `None` when that lies beyond what the clock can represent
/// (e.g. `Duration::MAX`): never.
pub(crate) fn deadline(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// How long from `now` until `deadline` (`None`: forever), zero once it passed.
pub(crate) fn remaining(deadline: Option<Instant>, now: Instant) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(now))
}

/// Nanoseconds of instant `t` on a monotonic clock counted from the first call in the process:
/// cheap timestamps for atomics, from an instant already read (the hot path reads the clock as few
/// times as it can — a read costs 30–50 ns on a VM's clock source). 0 for an instant before the
/// origin.
pub(crate) fn ns_of(t: Instant) -> u64 {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    t.saturating_duration_since(*ORIGIN.get_or_init(Instant::now)).as_nanos().min(u64::MAX as u128) as u64
}

/// Fold the run time `sample` into the estimate in `est`, trusting a faster run more than a slower
/// one: a run's time is noisy upwards only (preemption, a first run's page faults, a cold cache),
/// so a sample below the estimate moves it three quarters of the way down, one above it an eighth
/// of the way up (the first sample sets it). The split cost model's estimates and the crew's join
/// delays: an outlier (the first run of a node took 25 times its usual time here) fades in two
/// runs, not in forty.
pub(crate) fn settling_average(est: &AtomicU64, sample: u64) {
    let sample = sample.max(1);
    let old = est.load(Ordering::Relaxed);
    let new = match old {
        0 => sample,
        _ if sample < old => sample + (old - sample) / 4,
        _ => old + (sample - old) / 8,
    };
    est.store(new.max(1), Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settling_average_drops_fast_and_rises_slowly() {
        let e = AtomicU64::new(0);
        settling_average(&e, 233_000);
        assert_eq!(e.load(Ordering::Relaxed), 233_000);
        settling_average(&e, 9_000);
        settling_average(&e, 9_000);
        assert!(e.load(Ordering::Relaxed) < 24_000, "{e:?}");
        let low = e.load(Ordering::Relaxed);
        settling_average(&e, 1_000_000); // one preempted run
        assert!(e.load(Ordering::Relaxed) < low + 1_000_000 / 8 + 1, "{e:?}");
        for _ in 0..60 {
            settling_average(&e, 50_000); // a real slowdown is followed
        }
        assert!(e.load(Ordering::Relaxed) > 49_000, "{e:?}");
    }

    #[test]
    fn deadlines_saturate_instead_of_panicking() {
        assert!(deadline(Duration::MAX).is_none());
        assert!(deadline(Duration::new(u64::MAX, 999_999_999)).is_none());
        assert!(deadline(Duration::from_secs(u64::MAX / 2)).is_none());
        let d = deadline(Duration::ZERO).unwrap();
        assert_eq!(remaining(Some(d), d + Duration::from_secs(1)), Some(Duration::ZERO));
        assert_eq!(remaining(None, Instant::now()), None);
        let soon = deadline(Duration::from_secs(5)).unwrap();
        assert!(remaining(Some(soon), Instant::now()).unwrap() <= Duration::from_secs(5));
    }
}
