//! Explicit AVX2 row loops for the filters where the compiler's auto-vectorization falls short:
//! 16 or 32 output pixels per step in 16-bit lanes, the same integer arithmetic as the portable code
//! (so results are identical, checked against the OpenCV goldens). Each function returns how
//! many leading output pixels it wrote (a multiple of 16); the caller's portable loop does the
//! rest, and runs alone below level AVX2 (`simd::level()`, a cached atomic load per row).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// 16 input pixels from `r[x..x + 16]`, widened to u16 lanes.
///
/// # Safety
/// AVX2 is available and `x + 16 <= r.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load16(r: &[u8], x: usize) -> __m256i {
    debug_assert!(x + 16 <= r.len());
    // SAFETY: the caller guarantees 16 readable bytes at x; loadu has no alignment requirement.
    unsafe { _mm256_cvtepu8_epi16(_mm_loadu_si128(r.as_ptr().add(x) as *const __m128i)) }
}

/// Store 16 u16 lanes (values ≤ 255 after the caller's arithmetic, or saturated) as u8 at `o[x..]`.
///
/// # Safety
/// AVX2 is available and `x + 16 <= o.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store16_u8(o: &mut [u8], x: usize, v: __m256i) {
    debug_assert!(x + 16 <= o.len());
    let p = _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    // SAFETY: the caller guarantees 16 writable bytes at x.
    unsafe { _mm_storeu_si128(o.as_mut_ptr().add(x) as *mut __m128i, p) }
}

/// Columns `x+1 .. x+17` and `x+2 .. x+18` of 16-bit lanes, from columns `x .. x+16` (`cur`) and
/// `x+16 .. x+32` (`next`): the horizontal neighbors without loading again.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn shifted(cur: __m256i, next: __m256i) -> (__m256i, __m256i) {
    // [cur.hi | next.lo], so that alignr (which works per 128-bit lane) sees the lanes it needs.
    let mid = _mm256_permute2x128_si256(cur, next, 0x21);
    (_mm256_alignr_epi8(mid, cur, 2), _mm256_alignr_epi8(mid, cur, 4))
}

/// Vertical sums of a 3×3 filter over 16 columns from `x`: `a + k·b + c` (`k` = 1 or 2).
///
/// # Safety
/// AVX2 is available and `x + 16 <=` each row's length.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn vertical(a: &[u8], b: &[u8], c: &[u8], x: usize, double_middle: bool) -> __m256i {
    // SAFETY: the caller guarantees 16 readable pixels at x in each row.
    let (ra, rb, rc) = unsafe { (load16(a, x), load16(b, x), load16(c, x)) };
    let rb = if double_middle { _mm256_slli_epi16(rb, 1) } else { rb };
    _mm256_add_epi16(_mm256_add_epi16(ra, rc), rb)
}

/// Vertical sums of a 3×3 filter over 32 columns from `x` (`a + k·b + c`, `k` = 1 or 2), widened
/// within 128-bit lanes: `.0` holds columns `x+0..8` and `x+16..24`, `.1` columns `x+8..16` and
/// `x+24..32` (the order `vpunpck{l,h}bw` leaves, which `vpackuswb` undoes).
///
/// # Safety
/// AVX2 is available and `x + 32 <=` each row's length.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn vertical32(a: &[u8], b: &[u8], c: &[u8], x: usize, double_middle: bool) -> (__m256i, __m256i) {
    debug_assert!(x + 32 <= a.len().min(b.len()).min(c.len()));
    // SAFETY: the caller guarantees 32 readable bytes at x in each row; loadu has no alignment
    // requirement.
    let ld = |r: &[u8]| unsafe { _mm256_loadu_si256(r.as_ptr().add(x) as *const __m256i) };
    let (ra, rb, rc) = (ld(a), ld(b), ld(c));
    let z = _mm256_setzero_si256();
    let half = |lo: bool| {
        let widen = |r| if lo { _mm256_unpacklo_epi8(r, z) } else { _mm256_unpackhi_epi8(r, z) };
        let mid = if double_middle { _mm256_slli_epi16(widen(rb), 1) } else { widen(rb) };
        _mm256_add_epi16(_mm256_add_epi16(widen(ra), widen(rc)), mid)
    };
    (half(true), half(false))
}

/// The separable 3×3 row loop shared by the Gaussian and the box: vertical sums once per column
/// (`a + k·b + c`), horizontal neighbors by lane shifts of the next block's sums (the last block,
/// whose next columns do not all exist, sums columns `x+1` and `x+2` directly), then
/// `finish(v0, v1, v2)` → u16 results ≤ 255. 32 pixels a step while they last, in the lane order
/// of [`vertical32`] (no lane-crossing widen or narrow: 0.086 against 0.11 ns a pixel for the
/// Gaussian in L1 on a Zen 3), then one 16-pixel step in column order if 16 remain. Returns the
/// output pixels done (a multiple of 16).
///
/// # Safety
/// AVX2 is available.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn separable(
    [a, b, c]: [&[u8]; 3],
    o: &mut [u8],
    double_middle: bool,
    finish: impl Fn(__m256i, __m256i, __m256i) -> __m256i,
) -> usize {
    let n = o.len();
    assert!(rows_fit([a, b, c], n));
    let mut x = 0;
    if n >= 32 {
        // SAFETY: 32 <= n + 2 pixels at 0 in each row.
        let mut cur = unsafe { vertical32(a, b, c, 0, double_middle) };
        while x + 32 <= n {
            let (lo, hi) = cur;
            let ((lo1, hi1), (lo2, hi2), next) = if x + 64 <= n + 2 {
                // SAFETY: x + 32 + 32 <= n + 2 <= each row's length.
                let next = unsafe { vertical32(a, b, c, x + 32, double_middle) };
                // Lane k of `lo` continues in lane k of `hi`; lane 0 of `hi` continues in lane 1
                // of `lo`, and lane 1 of `hi` in lane 0 of the next block's `lo`.
                let mid = _mm256_permute2x128_si256(lo, next.0, 0x21);
                let shift1 = (_mm256_alignr_epi8(hi, lo, 2), _mm256_alignr_epi8(mid, hi, 2));
                let shift2 = (_mm256_alignr_epi8(hi, lo, 4), _mm256_alignr_epi8(mid, hi, 4));
                (shift1, shift2, next)
            } else {
                // SAFETY: x + 2 + 32 <= n + 2 <= each row's length (x + 32 <= n).
                let (s1, s2) =
                    unsafe { (vertical32(a, b, c, x + 1, double_middle), vertical32(a, b, c, x + 2, double_middle)) };
                (s1, s2, cur)
            };
            let r = _mm256_packus_epi16(finish(lo, lo1, lo2), finish(hi, hi1, hi2));
            // SAFETY: x + 32 <= n = o.len(); storeu has no alignment requirement.
            unsafe { _mm256_storeu_si256(o.as_mut_ptr().add(x) as *mut __m256i, r) };
            cur = next;
            x += 32;
        }
    }
    if x + 16 <= n {
        // SAFETY: x + 16 + 2 <= n + 2 <= each row's length, for all three sums.
        let (v0, v1, v2) = unsafe {
            (
                vertical(a, b, c, x, double_middle),
                vertical(a, b, c, x + 1, double_middle),
                vertical(a, b, c, x + 2, double_middle),
            )
        };
        // SAFETY: x + 16 <= n = o.len().
        unsafe { store16_u8(o, x, finish(v0, v1, v2)) };
        x += 16;
    }
    x
}

/// Input rows of a 3×3 filter for `n` output pixels: each at least `n + 2` long.
fn rows_fit(rows: [&[u8]; 3], n: usize) -> bool {
    rows.iter().all(|r| r.len() >= n + 2)
}

/// Gaussian `1 2 1` ⊗ `1 2 1` / 16, rounded.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn gaussian_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) -> usize {
    let finish = |v0, v1, v2| {
        let s = _mm256_add_epi16(_mm256_add_epi16(v0, v2), _mm256_slli_epi16(v1, 1));
        _mm256_srli_epi16(_mm256_add_epi16(s, _mm256_set1_epi16(8)), 4)
    };
    // SAFETY: AVX2 is available (this function's contract).
    unsafe { separable([a, b, c], o, true, finish) }
}

/// Box 3×3 mean, rounded: `((sum + 4) * 7282) >> 16`, as `div9_rounded`.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn box_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) -> usize {
    let finish = |v0, v1, v2| {
        let s = _mm256_add_epi16(_mm256_add_epi16(v0, v1), v2);
        _mm256_mulhi_epu16(_mm256_add_epi16(s, _mm256_set1_epi16(4)), _mm256_set1_epi16(7282))
    };
    // SAFETY: AVX2 is available (this function's contract).
    unsafe { separable([a, b, c], o, false, finish) }
}

/// Sobel 3×3, both derivatives: `gx = s[x+2] - s[x]` with `s = a + 2b + c` (the vertical
/// smoothing), and `gy = d[x] + 2d[x+1] + d[x+2]` with `d = c - a` (the vertical difference): each
/// column's `s` and `d` once, the neighbors by lane shifts of the next block's (the last block,
/// whose next 16 columns do not all exist, computes columns `x+1` and `x+2` directly). Three loads
/// a step instead of eight: 0.10 against 0.13 ns a pixel in L1 on a Zen 3.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn sobel_row(a: &[u8], b: &[u8], c: &[u8], ox: &mut [i16], oy: &mut [i16]) -> usize {
    let n = ox.len().min(oy.len());
    assert!(rows_fit([a, b, c], n));
    // `(s, d)` of the 16 columns from `x`.
    let smooth_and_difference = |x: usize| {
        // SAFETY: every call below has x + 16 <= n + 2 <= each row's length.
        let (ra, rb, rc) = unsafe { (load16(a, x), load16(b, x), load16(c, x)) };
        (_mm256_add_epi16(_mm256_add_epi16(ra, rc), _mm256_add_epi16(rb, rb)), _mm256_sub_epi16(rc, ra))
    };
    if n < 16 {
        return 0;
    }
    let mut cur = smooth_and_difference(0);
    let mut x = 0;
    while x + 16 <= n {
        let (s2, d1, d2, next) = if x + 32 <= n + 2 {
            let next = smooth_and_difference(x + 16);
            let ((_, s2), (d1, d2)) = (shifted(cur.0, next.0), shifted(cur.1, next.1));
            (s2, d1, d2, next)
        } else {
            // x + 2 + 16 <= n + 2 (x + 16 <= n).
            let ((_, d1), (s2, d2)) = (smooth_and_difference(x + 1), smooth_and_difference(x + 2));
            (s2, d1, d2, cur)
        };
        let gx = _mm256_sub_epi16(s2, cur.0);
        let gy = _mm256_add_epi16(_mm256_add_epi16(cur.1, d2), _mm256_add_epi16(d1, d1));
        // SAFETY: x + 16 <= n <= both output lengths; storeu has no alignment requirement.
        unsafe {
            _mm256_storeu_si256(ox.as_mut_ptr().add(x) as *mut __m256i, gx);
            _mm256_storeu_si256(oy.as_mut_ptr().add(x) as *mut __m256i, gy);
        }
        cur = next;
        x += 16;
    }
    x
}

/// `avx2::f(args)` when level `l` (capped to the CPU's) is AVX2 or above, else 0: the number of
/// leading output pixels done.
macro_rules! leading {
    ($l:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        let done = if $crate::simd::clamp($l) >= $crate::simd::Level::Avx2 {
            // SAFETY: `clamp` never returns a level above the CPU's: it has AVX2, the functions'
            // only requirement.
            unsafe { $crate::avx2::$f($($arg),*) }
        } else {
            0
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = {
            let _ = $l;
            0
        };
        done
    }};
}
pub(crate) use leading;
