//! Which tiles each thread of a shared run takes. The tiles are cut into one contiguous *home*
//! range per thread (the caller's first, then each helper's); a thread takes its own range from the
//! front and, when it is empty, steals from the back of the others'. So with helpers that join at
//! once every thread covers the same band of the image frame after frame — its rows stay in its
//! own core's cache, as OpenCV's fixed stripes do — and a helper that joins late or a core that is
//! slower still leaves no tile idle.
//!
//! Lives on the stack of one run (no allocation, nothing shared between runs); a range is one
//! atomic word (front in the low half, back in the high half), so taking a tile is one
//! compare-and-swap, and every tile is taken exactly once: a tile is taken only by moving a front
//! past it or a back below it, with `front < back` checked in the same swap.

use std::sync::atomic::{AtomicU64, Ordering};

/// At most this many home ranges; threads beyond share homes (`home % MAX_HOMES`).
pub(super) const MAX_HOMES: usize = 8;

/// One range on its own cache line (threads swap on different ranges most of the time).
#[repr(align(64))]
struct Range(AtomicU64);

const fn pack(front: u32, back: u32) -> u64 {
    front as u64 | ((back as u64) << 32)
}

const fn unpack(v: u64) -> (u32, u32) {
    (v as u32, (v >> 32) as u32)
}

/// The tiles of one shared run, by home range.
pub(in crate::graph) struct TileClaims {
    ranges: [Range; MAX_HOMES],
    homes: usize,
}

impl TileClaims {
    /// `tiles` tiles over `threads` threads (at most [`MAX_HOMES`] ranges; at least one).
    pub(in crate::graph) fn new(tiles: usize, threads: usize) -> TileClaims {
        let tiles = u32::try_from(tiles).expect("fewer than 2^32 tiles");
        let homes = threads.clamp(1, MAX_HOMES);
        let bound = |k: usize| (tiles as u64 * k as u64 / homes as u64) as u32;
        TileClaims {
            ranges: std::array::from_fn(|k| {
                Range(AtomicU64::new(if k < homes { pack(bound(k), bound(k + 1)) } else { pack(0, 0) }))
            }),
            homes,
        }
    }

    /// The next tile for the thread whose home is `home` (the caller 0, helper `i` `i + 1`): the
    /// front of its own range, else the back of another's; `None` when every range is empty.
    pub(in crate::graph) fn next(&self, home: usize) -> Option<usize> {
        let home = home % self.homes;
        if let Some(i) = self.take(home, true) {
            return Some(i);
        }
        (1..self.homes).find_map(|d| self.take((home + d) % self.homes, false))
    }

    /// Empty every range (after a failure: the threads stop taking tiles).
    pub(in crate::graph) fn stop(&self) {
        for r in &self.ranges[..self.homes] {
            r.0.store(pack(0, 0), Ordering::Relaxed);
        }
    }

    /// Take the front (`own`) or the back tile of range `k`, if it has one.
    fn take(&self, k: usize, own: bool) -> Option<usize> {
        let range = &self.ranges[k].0;
        let mut v = range.load(Ordering::Relaxed);
        loop {
            let (front, back) = unpack(v);
            if front >= back {
                return None;
            }
            let (next, tile) = if own { (pack(front + 1, back), front) } else { (pack(front, back - 1), back - 1) };
            // Relaxed: the tiles' outputs are published by the crew's join (its mutex), not here.
            match range.compare_exchange_weak(v, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(tile as usize),
                Err(now) => v = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn one_thread_takes_every_tile_in_order_of_its_home_then_the_others_from_the_back() {
        let c = TileClaims::new(10, 2);
        let order: Vec<usize> = std::iter::from_fn(|| c.next(0)).collect();
        assert_eq!(order, [0, 1, 2, 3, 4, 9, 8, 7, 6, 5]);
        let c = TileClaims::new(10, 2);
        let order: Vec<usize> = std::iter::from_fn(|| c.next(1)).collect();
        assert_eq!(order, [5, 6, 7, 8, 9, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn homes_are_contiguous_and_cover_every_tile_for_any_count() {
        for tiles in 0..40 {
            for threads in 1..12 {
                let c = TileClaims::new(tiles, threads);
                let mut seen = vec![0; tiles];
                for home in 0..threads {
                    // Each thread takes one tile of its own home first: its home's first tile.
                    if let Some(i) = c.next(home) {
                        seen[i] += 1;
                    }
                }
                while let Some(i) = c.next(0) {
                    seen[i] += 1;
                }
                assert!(seen.iter().all(|&n| n == 1), "{tiles} tiles, {threads} threads: {seen:?}");
            }
        }
    }

    #[test]
    fn stop_ends_the_run() {
        let c = TileClaims::new(10, 3);
        assert!(c.next(1).is_some());
        c.stop();
        assert_eq!(c.next(0), None);
        assert_eq!(c.next(2), None);
    }

    /// Threads racing over many runs: every tile taken exactly once per run.
    #[test]
    fn racing_threads_take_every_tile_exactly_once() {
        let runs: usize = std::env::var("VX_CLAIMS_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
        for run in 0..runs {
            let tiles = run % 97 + 1;
            let threads = run % 5 + 1;
            let c = TileClaims::new(tiles, threads);
            let seen: Vec<AtomicU32> = (0..tiles).map(|_| AtomicU32::new(0)).collect();
            std::thread::scope(|s| {
                for home in 0..threads {
                    let (c, seen) = (&c, &seen);
                    s.spawn(move || {
                        while let Some(i) = c.next(home) {
                            seen[i].fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
            assert!(seen.iter().all(|n| n.load(Ordering::Relaxed) == 1), "run {run}: {tiles} tiles, {threads} threads");
        }
    }
}
