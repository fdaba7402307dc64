//! Run-time SIMD dispatch for every pixel loop of the module.
//!
//! - [`Level`]: the instruction sets a row function may use — `Portable` (plain Rust, what the
//!   compiler makes of it for the build target: SSE2 auto-vectorized on x86-64, NEON on aarch64),
//!   and on x86-64 `Sse2`, `Avx2` and `Avx512` (AVX-512 F + BW) hand-written loops.
//! - [`level`]: the level in use, detected once (a cached atomic load afterwards) and capped by the
//!   environment variable `VX_FILTERS_SIMD=portable|scalar|sse2|avx2|avx512`, read once (a level
//!   the CPU lacks is capped to the best it has). Tests pass levels explicitly (`*_at` functions).
//! - `multiversion!`: one portable row function compiled for each level (baseline, AVX2,
//!   AVX-512), for the loops the compiler vectorizes well enough by itself.
//! - [`stream_stores`]: whether a point operation over images of this many bytes writes its output
//!   with non-temporal stores (`VX_FILTERS_NT=on|off|auto`, read once; `auto`: past
//!   [`stream_threshold`] — the private L2, or on AMD a quarter of the L3 when that is larger).
//!   Streaming stores lose while the images stay in a fast cache (a following node, or the next
//!   frame, reads them from there) and win once the output would leave it anyway; the 3×3 filters
//!   (staged through an L1 buffer) did not win at any size measured, so they always write with
//!   plain stores.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level of the row functions, ordered: a CPU with one has those below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Level {
    /// Plain Rust, no explicit SIMD (the compiler's auto-vectorization for the build target).
    Portable = 0,
    /// x86-64 baseline: SSE2.
    Sse2 = 1,
    /// AVX2.
    Avx2 = 2,
    /// AVX-512 F and BW.
    Avx512 = 3,
}

impl Level {
    /// Every level, lowest first.
    #[cfg(test)]
    pub(crate) const ALL: [Level; 4] = [Level::Portable, Level::Sse2, Level::Avx2, Level::Avx512];

    fn from_u8(v: u8) -> Level {
        match v {
            1 => Level::Sse2,
            2 => Level::Avx2,
            3 => Level::Avx512,
            _ => Level::Portable,
        }
    }

    /// The level named by `VX_FILTERS_SIMD`'s value.
    pub(crate) fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_lowercase().as_str() {
            "portable" | "scalar" | "none" => Some(Level::Portable),
            "sse2" => Some(Level::Sse2),
            "avx2" => Some(Level::Avx2),
            "avx512" | "avx512bw" => Some(Level::Avx512),
            _ => None,
        }
    }
}

/// The best level this CPU runs (`Portable` off x86-64).
pub(crate) fn detected() -> Level {
    static DETECTED: AtomicU8 = AtomicU8::new(u8::MAX);
    let v = DETECTED.load(Ordering::Relaxed);
    if v != u8::MAX {
        return Level::from_u8(v);
    }
    let l = detect();
    DETECTED.store(l as u8, Ordering::Relaxed);
    l
}

fn detect() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") {
            return Level::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
        Level::Sse2
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Level::Portable
    }
}

/// The level the kernels use: [`detected`], capped by `VX_FILTERS_SIMD` (read once).
#[inline]
pub(crate) fn level() -> Level {
    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
    let v = LEVEL.load(Ordering::Relaxed);
    if v != u8::MAX {
        return Level::from_u8(v);
    }
    let forced = std::env::var("VX_FILTERS_SIMD").ok().and_then(|s| Level::parse(&s));
    let l = forced.map_or(detected(), |f| f.min(detected()));
    LEVEL.store(l as u8, Ordering::Relaxed);
    l
}

/// `l` capped to what the CPU runs: the `*_at` functions take any level and never run an
/// instruction set the CPU lacks.
#[inline]
pub(crate) fn clamp(l: Level) -> Level {
    l.min(detected())
}

/// Every level this CPU runs, lowest first (the tests run each).
#[cfg(test)]
pub(crate) fn levels() -> Vec<Level> {
    Level::ALL.into_iter().filter(|&l| l <= detected()).collect()
}

/// Bytes of cpu0's data (or unified) cache of `level` as sysfs reports it, if it does.
pub(crate) fn cache_bytes(level: u32) -> Option<usize> {
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).map(|s| s.trim().to_owned());
        let (Ok(kind), Ok(l), Ok(size)) = (read("type"), read("level"), read("size")) else { continue };
        if kind == "Instruction" || l != level.to_string() {
            continue;
        }
        let bytes = match size.as_bytes().last() {
            Some(b'K') => size[..size.len() - 1].parse::<usize>().ok().map(|v| v << 10),
            Some(b'M') => size[..size.len() - 1].parse::<usize>().ok().map(|v| v << 20),
            _ => size.parse().ok(),
        };
        if let Some(b) = bytes.filter(|&b| b > 0) {
            return Some(b);
        }
    }
    None
}

/// Bytes of cpu0's level-2 data (or unified) cache as sysfs reports it, read once; 1 MiB when
/// unknown.
pub(crate) fn l2_bytes() -> usize {
    static L2: OnceLock<usize> = OnceLock::new();
    *L2.get_or_init(|| cache_bytes(2).unwrap_or(1 << 20))
}

/// Whether the CPU is an AMD one, or a Hygon (Zen-based): `AuthenticAMD` / `HygonGenuine` from
/// `cpuid` leaf 0.
pub(crate) fn is_amd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `cpuid` exists on every x86-64 CPU; leaf 0 is always valid. (A safe function
        // in newer toolchains; unsafe in older ones the MSRV allows.)
        #[allow(unused_unsafe)]
        let r = unsafe { std::arch::x86_64::__cpuid(0) };
        let mut v = [0u8; 12];
        v[..4].copy_from_slice(&r.ebx.to_le_bytes());
        v[4..8].copy_from_slice(&r.edx.to_le_bytes());
        v[8..].copy_from_slice(&r.ecx.to_le_bytes());
        &v == b"AuthenticAMD" || &v == b"HygonGenuine"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The image bytes past which [`stream_stores`] says yes, read once: the private L2, or on AMD a
/// quarter of the L3 when that is larger. An AMD L3 is the victim cache of the few cores of one
/// complex, fast enough that an output kept there beats writing it to memory, while images that
/// take a fair part of it (shared with the other cores, and on a VM with other tenants) leave it
/// before the next frame; Intel's server L3 is one cache over the whole mesh, and there streaming
/// paid from the L2 on. With a 32 MiB L3 the quarter (8 MiB) lies between a 1080p point
/// operation's images (4.1 MB) and a 4K one's (16.6 MB).
pub(crate) fn stream_threshold() -> usize {
    static T: OnceLock<usize> = OnceLock::new();
    *T.get_or_init(|| {
        let l2 = l2_bytes();
        if is_amd() { cache_bytes(3).map_or(l2, |l3| (l3 / 4).max(l2)) } else { l2 }
    })
}

/// Non-temporal store policy from `VX_FILTERS_NT`: 0 auto, 1 always, 2 never.
fn nt_policy() -> u8 {
    static NT: OnceLock<u8> = OnceLock::new();
    *NT.get_or_init(|| match std::env::var("VX_FILTERS_NT").as_deref().map(str::trim) {
        Ok("on" | "1" | "always") => 1,
        Ok("off" | "0" | "never") => 2,
        _ => 0,
    })
}

/// Whether a node whose images (inputs and outputs) take `bytes` writes its output with
/// non-temporal stores: past [`stream_threshold`] (the core's private L2; on AMD a quarter of the
/// L3 when larger), unless `VX_FILTERS_NT` says otherwise. Past that the output leaves the fast caches
/// before anyone reads it, and plain stores would first read every line (twice the traffic of the
/// write). Measured (`tests/benches/performance.sh`, `VX_FILTERS_NT=never` / `always` against
/// the rule):
///
/// - Intel Xeon VM, 2 vCPUs, L2 2 MiB, L3 260 MB (shared with the other tenants, not what a
///   process gets): threshold at 1080p on 1 thread 0.146 → 0.111 ms streaming, at 4K 0.62 →
///   0.52 ms; at VGA (0.6 MB) plain stores stay (the next frame finds the output in L2).
/// - AMD EPYC VM, 2 vCPUs, L2 512 KiB, L3 32 MiB (2026-11-26): streaming from the L2 on made
///   VGA threshold and not 17–20 µs against 10–13 µs plain (slower than OpenCV), and 1080p
///   (4.1 MB) 0.11–0.13 ms against 0.07–0.09 ms; at 4K (16.6 MB) streaming measured 0.76–0.89 ms
///   against 0.94–1.23 ms plain in one pair of runs, and within the machine's noise (0.7–1.0 ms
///   either way) in later ones. A quarter of the L3 (8 MiB) separates 1080p from 4K.
///
/// `bytes` is what one thread touches: a point operation shared by the run's threads passes its
/// images' bytes over their count (`point.rs`), so a 4K one on two threads (8.3 MB each) keeps
/// plain stores — 190–270 µs a frame there against 360–420 streaming (2026-11-27).
#[inline]
pub(crate) fn stream_stores(bytes: usize) -> bool {
    match nt_policy() {
        1 => true,
        2 => false,
        _ => bytes > stream_threshold(),
    }
}

/// One portable row function compiled for every level: `fn name(args)` runs the best the CPU has
/// (capped by `VX_FILTERS_SIMD`), `name::at(level, args)` the given one (capped to the CPU's).
macro_rules! multiversion {
    ($(#[$m:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        #[allow(dead_code)]
        fn $name($($arg: $ty),*) {
            $name::at($crate::simd::level(), $($arg),*)
        }

        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[inline(always)]
            fn imp($($arg: $ty),*) $body

            /// The row function at level `l` (capped to the CPU's).
            #[allow(dead_code)]
            pub(crate) fn at(l: $crate::simd::Level, $($arg: $ty),*) {
                #[cfg(target_arch = "x86_64")]
                {
                    #[target_feature(enable = "avx2")]
                    unsafe fn avx2($($arg: $ty),*) {
                        imp($($arg),*)
                    }
                    #[target_feature(enable = "avx512f,avx512bw")]
                    unsafe fn avx512($($arg: $ty),*) {
                        imp($($arg),*)
                    }
                    match $crate::simd::clamp(l) {
                        // SAFETY: `clamp` never returns a level above the CPU's, so the CPU has
                        // AVX-512 F and BW, the only requirement of calling this function.
                        $crate::simd::Level::Avx512 => return unsafe { avx512($($arg),*) },
                        // SAFETY: as above, the CPU has AVX2.
                        $crate::simd::Level::Avx2 => return unsafe { avx2($($arg),*) },
                        _ => {}
                    }
                }
                let _ = l;
                imp($($arg),*)
            }
        }
    };
}
pub(crate) use multiversion;

/// `x86::name::{avx512, avx2, sse2}(args)` for level `l` (capped to the CPU's); 0 at `Portable`.
macro_rules! dispatch {
    ($l:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        let done = match $crate::simd::clamp($l) {
            // SAFETY: `clamp` never returns a level above the CPU's: it has the instruction set.
            $crate::simd::Level::Avx512 => unsafe { $crate::x86::$name::avx512($($arg),*) },
            // SAFETY: as above.
            $crate::simd::Level::Avx2 => unsafe { $crate::x86::$name::avx2($($arg),*) },
            // SAFETY: as above.
            $crate::simd::Level::Sse2 => unsafe { $crate::x86::$name::sse2($($arg),*) },
            $crate::simd::Level::Portable => 0,
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = { let _ = $l; 0 };
        done
    }};
}
pub(crate) use dispatch;
