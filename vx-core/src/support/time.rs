//! Deadlines from callers' durations: any `Duration` is accepted, and one too long to add to the
//! clock means "no deadline" (it saturates) instead of the panic of `Instant + Duration`. Every
//! deadline in the runtime is made here; and the moving average of measured times (the cost
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

/// Fold `sample` into the moving average in `avg` (weight 1/8; the first sample sets it). Updates
/// that race may lose one sample, which an estimate tolerates.
pub(crate) fn moving_average(avg: &AtomicU64, sample: u64) {
    let sample = sample.max(1);
    let old = avg.load(Ordering::Relaxed);
    let new = if old == 0 { sample } else { old - old / 8 + sample / 8 };
    avg.store(new.max(1), Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

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
