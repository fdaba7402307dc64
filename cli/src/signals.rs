//! SIGINT and SIGTERM during `vx run` and `vx watch` (signal-hook): the first asks the frame loop
//! to stop after the frame in hand (then outputs are written, the summary printed, exit 0); a
//! second one, of either kind, ends the process at once with exit code 130.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

use crate::Failure;

/// The exit code of a second signal (128 + SIGINT, the shell's code for an interrupted command).
pub(crate) const SECOND_SIGNAL_EXIT: i32 = 130;

/// Whether a stop was asked for, and by which signal.
pub(crate) struct Stop {
    asked: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Stop {
    /// Take over SIGINT and SIGTERM for the rest of the process.
    pub(crate) fn install() -> Result<Stop, Failure> {
        let stop = Stop { asked: Arc::new(AtomicBool::new(false)), signal: Arc::new(AtomicUsize::new(0)) };
        for sig in [SIGINT, SIGTERM] {
            // Order matters: the shutdown looks at the flag before the same signal sets it, so it
            // fires on the second signal only.
            flag::register_conditional_shutdown(sig, SECOND_SIGNAL_EXIT, Arc::clone(&stop.asked))
                .and_then(|_| flag::register_usize(sig, Arc::clone(&stop.signal), sig as usize))
                .and_then(|_| flag::register(sig, Arc::clone(&stop.asked)))
                .map_err(|e| Failure::process(format!("cannot handle signal {sig}: {e}")))?;
        }
        Ok(stop)
    }

    /// The signal that asked to stop, if one did.
    pub(crate) fn asked(&self) -> Option<&'static str> {
        if !self.asked.load(Ordering::SeqCst) {
            return None;
        }
        Some(match self.signal.load(Ordering::SeqCst) as i32 {
            SIGTERM => "SIGTERM",
            _ => "SIGINT",
        })
    }

    /// Sleep up to `d`, waking early when a stop is asked for.
    pub(crate) fn sleep(&self, d: std::time::Duration) {
        let end = std::time::Instant::now() + d;
        while self.asked().is_none() {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
        }
    }
}
