//! Every row function at every SIMD level this CPU runs, against plain scalar references written
//! here (independently of the kernels' code): random rows of random lengths 0..300 at random
//! offsets (so no alignment is assumed), with and without non-temporal stores.
//!
//! `VX_FILTERS_CASES` sets the random rows per kernel (default 1500, each checked at every level
//! and both store modes); `cargo test -p vx-filters --release` with `VX_FILTERS_CASES=20000` for
//! a long run.

use crate::filters3x3::{box_at, gaussian_at, sobel_at};
use crate::rows;
use crate::simd::{Level, levels};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
    /// Bytes biased towards the interesting values (0, 255, around a level) half the time.
    fn bytes(&mut self, n: usize, near: u8) -> Vec<u8> {
        let edgy = self.next() & 1 == 0;
        (0..n)
            .map(|_| match (edgy, self.below(6)) {
                (true, 0) => 0,
                (true, 1) => 255,
                (true, 2) => near,
                (true, 3) => near.wrapping_add(1),
                (true, 4) => near.wrapping_sub(1),
                _ => self.byte(),
            })
            .collect()
    }
    fn i16s(&mut self, n: usize) -> Vec<i16> {
        (0..n)
            .map(|_| match self.below(4) {
                // Small gradients (results below 255, where rounding matters), and any value.
                0 | 1 => (self.below(512) as i16) - 256,
                2 => (self.below(361) as i16) - 180,
                _ => self.next() as i16,
            })
            .collect()
    }
}

fn cases() -> usize {
    std::env::var("VX_FILTERS_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500)
}

/// Runs `check(rng, level, nt, case)` for `cases()` random cases at every level and store mode;
/// returns the checks made.
fn each(seed: u64, mut check: impl FnMut(&mut Rng, Level, bool, u64)) -> usize {
    let mut rng = Rng(seed);
    let mut n = 0;
    for case in 0..cases() as u64 {
        let case_seed = rng.next() | 1;
        for l in levels() {
            for nt in [false, true] {
                check(&mut Rng(case_seed), l, nt, case);
                n += 1;
            }
        }
    }
    n
}

/// A slice of `len` elements at a random offset 0..64 inside a fresh buffer filled with `fill`,
/// plus the offset: output buffers whose start has any alignment, and whose guard elements around
/// the slice must stay untouched.
fn buffer<T: Copy>(rng: &mut Rng, len: usize, fill: T) -> (Vec<T>, usize) {
    let off = rng.below(64);
    (vec![fill; off + len + 64], off)
}

fn assert_guard<T: Copy + PartialEq + std::fmt::Debug>(buf: &[T], off: usize, len: usize, fill: T, what: &str) {
    assert!(buf[..off].iter().chain(&buf[off + len..]).all(|&v| v == fill), "{what}: wrote outside the row");
}

/// Input slice of `len` random bytes at a random offset.
fn input(rng: &mut Rng, len: usize, near: u8) -> Vec<u8> {
    let off = rng.below(64);
    let mut v = rng.bytes(off + len, near);
    v.drain(..off);
    v
}

macro_rules! unary_u8 {
    ($test:ident, $seed:expr, |$rng:ident, $l:ident, $nt:ident, $src:ident, $dst:ident| $call:expr, |$p:ident| $reference:expr) => {
        #[test]
        fn $test() {
            let checks = each($seed, |$rng, $l, $nt, case| {
                let len = $rng.below(300);
                let near = $rng.byte();
                let $src = input($rng, len, near);
                let (mut buf, off) = buffer($rng, len, 0xA5u8);
                {
                    let $dst = &mut buf[off..off + len];
                    $call;
                }
                let want: Vec<u8> = $src.iter().map(|&$p| $reference).collect();
                let what = format!("{} case {case}, {:?}, nt {}, len {len}", stringify!($test), $l, $nt);
                assert_eq!(&buf[off..off + len], &want[..], "{what}");
                assert_guard(&buf, off, len, 0xA5, &what);
            });
            assert!(checks >= cases());
        }
    };
}

// Each reference takes the threshold values from the rng state (drawn the same way as the call).
#[test]
fn threshold_every_level() {
    each(1, |rng, l, nt, case| {
        let len = rng.below(300);
        let level = rng.byte();
        let src = input(rng, len, level);
        let (mut buf, off) = buffer(rng, len, 0xA5u8);
        rows::threshold(l, &src, level, &mut buf[off..off + len], nt);
        let want: Vec<u8> = src.iter().map(|&p| if p > level { 255 } else { 0 }).collect();
        let what = format!("threshold case {case}, {l:?}, nt {nt}, len {len}, level {level}");
        assert_eq!(&buf[off..off + len], &want[..], "{what}");
        assert_guard(&buf, off, len, 0xA5, &what);
    });
}

#[test]
fn threshold_range_every_level() {
    each(2, |rng, l, nt, case| {
        let len = rng.below(300);
        let (lower, upper) = (rng.byte(), rng.byte());
        // Often an ordered pair (the usual use); sometimes lower > upper (all false).
        let (lower, upper) = if rng.below(4) > 0 { (lower.min(upper), lower.max(upper)) } else { (lower, upper) };
        let near = if rng.next() & 1 == 0 { lower } else { upper };
        let src = input(rng, len, near);
        let (mut buf, off) = buffer(rng, len, 0xA5u8);
        rows::threshold_range(l, &src, lower, upper, &mut buf[off..off + len], nt);
        let want: Vec<u8> = src.iter().map(|&p| if p < lower || p > upper { 0 } else { 255 }).collect();
        let what = format!("range case {case}, {l:?}, nt {nt}, len {len}, [{lower}, {upper}]");
        assert_eq!(&buf[off..off + len], &want[..], "{what}");
        assert_guard(&buf, off, len, 0xA5, &what);
    });
}

unary_u8!(not_every_level, 3, |rng, l, nt, src, dst| rows::not(l, &src, dst, nt), |p| 255 - p);
unary_u8!(posterize_every_level, 4, |rng, l, nt, src, dst| rows::posterize(l, &src, dst, nt), |p| (p / 16) * 17);

#[test]
fn not_in_place_every_level() {
    each(5, |rng, l, _, case| {
        let len = rng.below(300);
        let src = input(rng, len, 0);
        let (mut buf, off) = buffer(rng, len, 0xA5u8);
        buf[off..off + len].copy_from_slice(&src);
        rows::not_in_place(l, &mut buf[off..off + len]);
        let want: Vec<u8> = src.iter().map(|&p| 255 - p).collect();
        let what = format!("not in place case {case}, {l:?}, len {len}");
        assert_eq!(&buf[off..off + len], &want[..], "{what}");
        assert_guard(&buf, off, len, 0xA5, &what);
    });
}

#[test]
fn truncate_every_level() {
    each(6, |rng, l, _, case| {
        let len = rng.below(300);
        let level = rng.byte();
        let src = input(rng, len, level);
        let (mut buf, off) = buffer(rng, len, 0xA5u8);
        buf[off..off + len].copy_from_slice(&src);
        rows::truncate(l, &mut buf[off..off + len], level);
        let want: Vec<u8> = src.iter().map(|&p| if p > level { level } else { p }).collect();
        let what = format!("truncate case {case}, {l:?}, len {len}, level {level}");
        assert_eq!(&buf[off..off + len], &want[..], "{what}");
        assert_guard(&buf, off, len, 0xA5, &what);
    });
}

#[test]
fn add_and_subtract_every_level() {
    each(7, |rng, l, nt, case| {
        let len = rng.below(300);
        let (a, b) = (input(rng, len, 0), input(rng, len, 255));
        for sub in [false, true] {
            let (mut buf, off) = buffer(rng, len, 0x5A5Ai16);
            let o = &mut buf[off..off + len];
            if sub {
                rows::subtract(l, &a, &b, o, nt)
            } else {
                rows::add(l, &a, &b, o, nt)
            }
            let want: Vec<i16> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| if sub { i32::from(x) - i32::from(y) } else { i32::from(x) + i32::from(y) } as i16)
                .collect();
            let what = format!("{} case {case}, {l:?}, nt {nt}, len {len}", if sub { "subtract" } else { "add" });
            assert_eq!(&buf[off..off + len], &want[..], "{what}");
            assert_guard(&buf, off, len, 0x5A5A, &what);
        }
    });
}

/// OpenCV's rule (as the goldens): `saturate_cast<uchar>(cvRound(sqrt(x² + y²)))`, here in f64
/// (exact for these inputs), ties to even.
fn magnitude_reference(x: i16, y: i16) -> u8 {
    let m = ((x as f64).powi(2) + (y as f64).powi(2)).sqrt();
    m.round_ties_even().clamp(0.0, 255.0) as u8
}

#[test]
fn magnitude_every_level() {
    each(8, |rng, l, nt, case| {
        let len = rng.below(300);
        let (gx, gy) = (rng.i16s(len), rng.i16s(len));
        let (mut buf, off) = buffer(rng, len, 0xA5u8);
        rows::magnitude(l, &gx, &gy, &mut buf[off..off + len], nt);
        let want: Vec<u8> = gx.iter().zip(&gy).map(|(&x, &y)| magnitude_reference(x, y)).collect();
        let what = format!("magnitude case {case}, {l:?}, nt {nt}, len {len}");
        assert_eq!(&buf[off..off + len], &want[..], "{what}");
        assert_guard(&buf, off, len, 0xA5, &what);
    });
}

#[test]
fn magnitude_every_small_pair_every_level() {
    // Every gradient pair whose magnitude does not saturate, where rounding decides.
    let (gx, gy): (Vec<i16>, Vec<i16>) = (-256..=256i16).flat_map(|x| (0..=256i16).map(move |y| (x, y))).unzip();
    for l in levels() {
        let mut o = vec![0u8; gx.len()];
        rows::magnitude(l, &gx, &gy, &mut o, false);
        for i in 0..gx.len() {
            assert_eq!(o[i], magnitude_reference(gx[i], gy[i]), "{l:?}: ({}, {})", gx[i], gy[i]);
        }
    }
}

#[test]
fn magnitude_extreme_pairs_every_level() {
    // Every pair of values at the edges of i16 and of saturation: gx² + gy² above i32::MAX
    // (-32768, -32768), above f32's exact integers, and around 255.5².
    const EDGES: [i16; 16] =
        [-32768, -32767, -23171, -4096, -1021, -256, -181, -1, 0, 1, 180, 181, 255, 256, 23170, 32767];
    let (gx, gy): (Vec<i16>, Vec<i16>) = EDGES.iter().flat_map(|&x| EDGES.iter().map(move |&y| (x, y))).unzip();
    // Long enough for every level's widest step, at a few offsets.
    for shift in 0..3 {
        let (gx, gy) = (gx.repeat(3)[shift..].to_vec(), gy.repeat(3)[shift..].to_vec());
        for l in levels() {
            let mut o = vec![0u8; gx.len()];
            rows::magnitude(l, &gx, &gy, &mut o, false);
            for i in 0..gx.len() {
                assert_eq!(o[i], magnitude_reference(gx[i], gy[i]), "{l:?}: ({}, {})", gx[i], gy[i]);
            }
        }
    }
}

/// Three input rows of `len + 2` bytes at random offsets.
fn three_rows(rng: &mut Rng, len: usize) -> [Vec<u8>; 3] {
    let near = rng.byte();
    [input(rng, len + 2, near), input(rng, len + 2, near), input(rng, len + 2, near)]
}

#[test]
fn gaussian_and_box_every_level() {
    each(9, |rng, l, _, case| {
        let len = rng.below(300);
        let [a, b, c] = three_rows(rng, len);
        for gauss in [false, true] {
            let (mut buf, off) = buffer(rng, len, 0xA5u8);
            let o = &mut buf[off..off + len];
            if gauss {
                gaussian_at(l, &a, &b, &c, o)
            } else {
                box_at(l, &a, &b, &c, o)
            }
            let want: Vec<u8> = (0..len)
                .map(|x| {
                    let w = |r: &[u8], k: [u32; 3]| (0..3).map(|i| r[x + i] as u32 * k[i]).sum::<u32>();
                    if gauss {
                        ((w(&a, [1, 2, 1]) + 2 * w(&b, [1, 2, 1]) + w(&c, [1, 2, 1]) + 8) / 16) as u8
                    } else {
                        // Rounded mean of nine: (sum + 4) / 9 rounds to nearest (no ties in ninths).
                        ((w(&a, [1; 3]) + w(&b, [1; 3]) + w(&c, [1; 3]) + 4) / 9) as u8
                    }
                })
                .collect();
            let what = format!("{} case {case}, {l:?}, len {len}", if gauss { "gaussian" } else { "box" });
            assert_eq!(&buf[off..off + len], &want[..], "{what}");
            assert_guard(&buf, off, len, 0xA5, &what);
        }
    });
}

#[test]
fn sobel_every_level() {
    each(10, |rng, l, _, case| {
        let len = rng.below(300);
        let [a, b, c] = three_rows(rng, len);
        let (mut bx, ox) = buffer(rng, len, 0x5A5Ai16);
        let (mut by, oy) = buffer(rng, len, 0x5A5Ai16);
        sobel_at(l, &a, &b, &c, &mut bx[ox..ox + len], &mut by[oy..oy + len]);
        let p = |r: &[u8], i: usize| r[i] as i32;
        let wx: Vec<i16> = (0..len)
            .map(|x| ((p(&a, x + 2) - p(&a, x)) + 2 * (p(&b, x + 2) - p(&b, x)) + (p(&c, x + 2) - p(&c, x))) as i16)
            .collect();
        let wy: Vec<i16> = (0..len)
            .map(|x| ((p(&c, x) - p(&a, x)) + 2 * (p(&c, x + 1) - p(&a, x + 1)) + (p(&c, x + 2) - p(&a, x + 2))) as i16)
            .collect();
        let what = format!("sobel case {case}, {l:?}, len {len}");
        assert_eq!(&bx[ox..ox + len], &wx[..], "gx {what}");
        assert_eq!(&by[oy..oy + len], &wy[..], "gy {what}");
        assert_guard(&bx, ox, len, 0x5A5A, &what);
        assert_guard(&by, oy, len, 0x5A5A, &what);
    });
}

#[test]
fn levels_cover_the_cpu() {
    let ls = levels();
    assert_eq!(ls[0], Level::Portable);
    #[cfg(target_arch = "x86_64")]
    {
        assert!(ls.contains(&Level::Sse2));
        assert_eq!(ls.contains(&Level::Avx2), std::is_x86_feature_detected!("avx2"));
        assert_eq!(
            ls.contains(&Level::Avx512),
            std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
        );
    }
    assert_eq!(Level::parse("scalar"), Some(Level::Portable));
    assert_eq!(Level::parse("AVX512"), Some(Level::Avx512));
    assert_eq!(Level::parse("sse2"), Some(Level::Sse2));
    assert_eq!(Level::parse("avx2"), Some(Level::Avx2));
    assert_eq!(Level::parse("mmx"), None);
}

#[test]
fn streaming_starts_past_the_l2_and_on_amd_past_a_quarter_of_the_l3() {
    use crate::simd::{cache_bytes, is_amd, l2_bytes, stream_stores, stream_threshold};
    // The vendor from cpuid against the kernel's own reading of it.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if let Some(line) = cpuinfo.lines().find(|l| l.starts_with("vendor_id")) {
        assert_eq!(is_amd(), line.contains("AuthenticAMD") || line.contains("HygonGenuine"), "{line}");
    }
    let (l2, t) = (l2_bytes(), stream_threshold());
    let l3 = cache_bytes(3).filter(|_| is_amd());
    match l3 {
        Some(l3) => assert_eq!(t, (l3 / 4).max(l2)),
        None => assert_eq!(t, l2),
    }
    // The decisions for a point operation's input and output (2 bytes a pixel), unless the
    // environment forces a policy.
    if std::env::var_os("VX_FILTERS_NT").is_none() {
        let (vga, hd, uhd) = (640 * 480 * 2, 1920 * 1080 * 2, 3840 * 2160 * 2);
        for bytes in [vga, hd, uhd] {
            assert_eq!(stream_stores(bytes), bytes > t, "{bytes} bytes");
        }
        if let Some(l3) = l3.filter(|l3| ((32 << 20)..(64 << 20)).contains(l3)) {
            // A 32–64 MiB AMD L3 (the EPYC VM these thresholds were measured on): 1080p stays in
            // it, 4K streams.
            assert!(!stream_stores(hd) && stream_stores(uhd), "L3 {l3}");
            // Shared by two threads, a 4K point operation's half (8.3 MB) stays under the
            // quarter (8.4 MB): plain stores, each core keeps its bands (measured 230–280 µs a
            // frame against 360–410 streaming, `VX_BENCH_ONLY=split` of the showcase bench).
            let (w, h) = (3840, 2160);
            assert!(stream_stores(crate::point::per_thread_bytes(w, h, 2, 1)));
            assert!(!stream_stores(crate::point::per_thread_bytes(w, h, 2, 2)));
        }
    }
    // One thread's share of the bytes; a count of 0 (a host that does not say) is one thread.
    use crate::point::per_thread_bytes;
    assert_eq!(per_thread_bytes(3840, 2160, 2, 1), 3840 * 2160 * 2);
    assert_eq!(per_thread_bytes(3840, 2160, 2, 0), 3840 * 2160 * 2);
    assert_eq!(per_thread_bytes(3840, 2160, 2, 2), 3840 * 2160);
    assert_eq!(per_thread_bytes(640, 480, 5, 3), 640 * 480 * 5 / 3);
}
