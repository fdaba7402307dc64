//! A counting global allocator for the zero-allocation tests (also used by the workspace tests'
//! pipeline check): counts every allocation and reallocation while `COUNTING` is up on the threads
//! that run the graph — the thread that called [`allocations`] and every runtime thread (all named
//! `vx-…`: crew helpers, target executors, pipeline coordinators, scheduled runs) — and records where
//! the first few came from (thread name and backtrace), so a failure names the path that allocated.
//! The test harness's own threads are not counted: libtest's main thread grows its bookkeeping
//! while a test runs (seen under load: a `HashMap` resize in `test::run_tests`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// The allocator; declare it `#[global_allocator]` in the test binary.
pub(crate) struct Counting;

/// Count while this is true.
pub(crate) static COUNTING: AtomicBool = AtomicBool::new(false);
/// Allocations counted.
pub(crate) static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// Where the first counted allocations came from.
static SITES: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Backtraces recorded per counting window (recording allocates: it is kept out of the count).
const MAX_SITES: usize = 4;
/// Recordings under way (symbolizing takes a while; `sites` waits for them).
static PENDING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread is recording a site: its own allocations are not counted.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's allocations count: 0 not known yet, 1 yes, 2 no.
    static COUNTED_HERE: Cell<u8> = const { Cell::new(0) };
}

/// The caller of `allocations` and the runtime's threads (`vx-…`) count; others do not.
fn counts_here() -> bool {
    match COUNTED_HERE.with(Cell::get) {
        1 => true,
        2 => false,
        _ => {
            // Looking at the name may allocate (the main thread's handle): not counted.
            RECORDING.with(|r| r.set(true));
            let runtime = std::thread::current().name().is_some_and(|n| n.starts_with("vx-"));
            RECORDING.with(|r| r.set(false));
            COUNTED_HERE.with(|c| c.set(if runtime { 1 } else { 2 }));
            runtime
        }
    }
}

fn counted(layout: Layout) {
    if !COUNTING.load(SeqCst) || RECORDING.with(Cell::get) || !counts_here() {
        return;
    }
    let n = ALLOCS.fetch_add(1, SeqCst);
    if n < MAX_SITES {
        PENDING.fetch_add(1, SeqCst);
        RECORDING.with(|r| r.set(true));
        let thread = std::thread::current().name().unwrap_or("<unnamed>").to_owned();
        let trace = std::backtrace::Backtrace::force_capture();
        let site = format!("allocation {n} of {} bytes on thread '{thread}':\n{trace}", layout.size());
        SITES.lock().unwrap_or_else(|p| p.into_inner()).push(site);
        RECORDING.with(|r| r.set(false));
        PENDING.fetch_sub(1, SeqCst);
    }
}

// SAFETY: forwards every call to the system allocator unchanged; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counted(layout);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        counted(layout);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made while `f` runs (on this thread and the runtime's).
pub(crate) fn allocations(f: impl FnOnce()) -> usize {
    COUNTED_HERE.with(|c| c.set(1));
    SITES.lock().unwrap_or_else(|p| p.into_inner()).clear();
    ALLOCS.store(0, SeqCst);
    COUNTING.store(true, SeqCst);
    f();
    COUNTING.store(false, SeqCst);
    ALLOCS.load(SeqCst)
}

/// Where the first allocations of the last [`allocations`] window came from.
#[allow(dead_code)]
pub(crate) fn sites() -> String {
    let t0 = std::time::Instant::now();
    while PENDING.load(SeqCst) > 0 && t0.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    SITES.lock().unwrap_or_else(|p| p.into_inner()).join("\n")
}
