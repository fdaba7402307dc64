//! A counting global allocator for the zero-allocation tests (also used by the workspace tests'
//! pipeline check): counts every allocation and reallocation on every thread while `COUNTING` is up.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// The allocator; declare it `#[global_allocator]` in the test binary.
pub(crate) struct Counting;

/// Count while this is true.
pub(crate) static COUNTING: AtomicBool = AtomicBool::new(false);
/// Allocations counted.
pub(crate) static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(SeqCst) {
            ALLOCS.fetch_add(1, SeqCst);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(SeqCst) {
            ALLOCS.fetch_add(1, SeqCst);
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made while `f` runs (on every thread).
pub(crate) fn allocations(f: impl FnOnce()) -> usize {
    ALLOCS.store(0, SeqCst);
    COUNTING.store(true, SeqCst);
    f();
    COUNTING.store(false, SeqCst);
    ALLOCS.load(SeqCst)
}
