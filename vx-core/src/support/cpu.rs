//! Which CPU the calling thread runs on, and moving it off one: the crew's helpers use this to
//! leave the CPU of the thread that woke them (Linux; elsewhere the functions report nothing and
//! do nothing).
//!
//! Why: Linux wakes a thread on the waker's CPU when it judges the two share cache ("wake
//! affine"). For a fork-join step that is the worst place: the helper then time-slices with the
//! caller on one CPU while another sits idle, until the periodic load balancer moves one of them,
//! milliseconds later. On the 2-vCPU VM this left a 1080p 3×3 filter at one core's speed for a
//! whole benchmark run, in roughly one run out of two. Moving the helper off at once fixes it;
//! the cost is one `sched_setaffinity` call, paid only when the collision happens.

/// The CPU the calling thread is running on now (it may move at any time), if the OS tells.
pub(crate) fn current() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only reads the thread's state.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The CPUs a thread was allowed to run on when the set was read.
#[derive(Clone, Copy)]
pub(crate) struct CpuSet {
    #[cfg(target_os = "linux")]
    set: libc::cpu_set_t,
}

impl CpuSet {
    /// The calling thread's allowed CPUs, if the OS tells.
    pub(crate) fn of_this_thread() -> Option<CpuSet> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: cpu_set_t is a plain bit array for which all zeroes is a valid (empty) value.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 = this thread.
            let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
            (rc == 0).then_some(CpuSet { set })
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// How many CPUs the set holds.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: CPU_COUNT only reads the set.
            unsafe { libc::CPU_COUNT(&self.set) as usize }
        }
        #[cfg(not(target_os = "linux"))]
        {
            0
        }
    }

    /// Restrict the calling thread to this set without `cpu`; the OS migrates it at once if it is
    /// on `cpu` now. False (and nothing changed) when that would leave no CPU or the call fails.
    pub(crate) fn move_off(&self, cpu: usize) -> bool {
        #[cfg(target_os = "linux")]
        {
            let mut set = self.set;
            if cpu >= libc::CPU_SETSIZE as usize {
                return false;
            }
            // SAFETY: `cpu` < CPU_SETSIZE (checked above), so the bit lies inside the set.
            unsafe { libc::CPU_CLR(cpu, &mut set) };
            // SAFETY: CPU_COUNT only reads the set.
            if unsafe { libc::CPU_COUNT(&set) } == 0 {
                return false;
            }
            // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 = the calling thread.
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = cpu;
            false
        }
    }

    /// Restrict the calling thread to exactly `cpu` (tests force a collision with it).
    #[cfg(test)]
    pub(crate) fn pin_to(cpu: usize) -> bool {
        CpuSet::pin_to_cores(&[cpu])
    }

    /// Restrict the calling thread to `cpus` (a target pinned to cores). False (nothing changed)
    /// when a CPU is out of range, the set is empty, or the call fails.
    pub(crate) fn pin_to_cores(cpus: &[usize]) -> bool {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: all zeroes is an empty cpu_set_t.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            if cpus.is_empty() || cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
                return false;
            }
            for &cpu in cpus {
                // SAFETY: `cpu` < CPU_SETSIZE (checked above), so the bit lies inside the set.
                unsafe { libc::CPU_SET(cpu, &mut set) };
            }
            // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 = the calling thread.
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = cpus;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_off_a_cpu_leaves_it_at_once() {
        let Some(all) = CpuSet::of_this_thread() else { return };
        if all.count() < 2 {
            return; // nowhere to go
        }
        std::thread::spawn(move || {
            for _ in 0..20 {
                let here = current().expect("sched_getcpu works on Linux");
                assert!(all.move_off(here));
                assert_ne!(current(), Some(here), "still on the CPU it moved off");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn moving_off_the_only_cpu_changes_nothing() {
        let Some(all) = CpuSet::of_this_thread() else { return };
        std::thread::spawn(move || {
            let here = current().unwrap();
            assert!(CpuSet::pin_to(here));
            let only = CpuSet::of_this_thread().unwrap();
            assert_eq!(only.count(), 1);
            assert!(!only.move_off(here));
            assert_eq!(current(), Some(here));
            assert!(all.count() >= 1);
        })
        .join()
        .unwrap();
    }
}
