//! Deadlines from callers' durations: any `Duration` is accepted, and one too long to add to the
//! clock means "no deadline" (it saturates) instead of the panic of `Instant + Duration`. Every
//! deadline in the runtime is made here.

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
