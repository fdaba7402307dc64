//! AVX-512 (F + BW) row loops for the Gaussian and the box 3×3: 32 output pixels per step in 16-bit
//! lanes, the same integer arithmetic as `avx2.rs` (results identical, checked against the OpenCV goldens at
//! every forced level). Each returns how many leading output pixels it wrote (a multiple of 32);
//! the AVX2 and portable loops do the rest. (Sobel stays at AVX2: a 32-column version measured
//! slower at 1080p and 4K.)

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// 32 input pixels from `r[x..x + 32]`, widened to u16 lanes.
///
/// # Safety
/// AVX-512 F and BW are available and `x + 32 <= r.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load32(r: &[u8], x: usize) -> __m512i {
    debug_assert!(x + 32 <= r.len());
    // SAFETY: the caller guarantees 32 readable bytes at x; loadu has no alignment requirement.
    unsafe { _mm512_cvtepu8_epi16(_mm256_loadu_si256(r.as_ptr().add(x) as *const __m256i)) }
}

/// Store 32 u16 lanes holding values ≤ 255 as u8 at `o[x..]`.
///
/// # Safety
/// AVX-512 F and BW are available and `x + 32 <= o.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn store32_u8(o: &mut [u8], x: usize, v: __m512i) {
    debug_assert!(x + 32 <= o.len());
    // SAFETY: the caller guarantees 32 writable bytes at x; storeu has no alignment requirement.
    unsafe { _mm256_storeu_si256(o.as_mut_ptr().add(x) as *mut __m256i, _mm512_cvtepi16_epi8(v)) }
}

/// Lane indices `k .. k + 32` of the 64 lanes `[cur | next]`.
static NEXT1: [u16; 32] = {
    let mut t = [0u16; 32];
    let mut i = 0;
    while i < 32 {
        t[i] = i as u16 + 1;
        i += 1;
    }
    t
};
static NEXT2: [u16; 32] = {
    let mut t = [0u16; 32];
    let mut i = 0;
    while i < 32 {
        t[i] = i as u16 + 2;
        i += 1;
    }
    t
};

/// Columns `x+1 .. x+33` and `x+2 .. x+34` of 16-bit lanes, from columns `x .. x+32` (`cur`) and
/// `x+32 .. x+64` (`next`): one two-source permute each.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn shifted(cur: __m512i, next: __m512i) -> (__m512i, __m512i) {
    // SAFETY: both tables are 64 readable bytes; loadu has no alignment requirement.
    let (i1, i2) = unsafe {
        (_mm512_loadu_si512(NEXT1.as_ptr() as *const __m512i), _mm512_loadu_si512(NEXT2.as_ptr() as *const __m512i))
    };
    (_mm512_permutex2var_epi16(cur, i1, next), _mm512_permutex2var_epi16(cur, i2, next))
}

/// Vertical sums of a 3×3 filter over 32 columns from `x`: `a + k·b + c` (`k` = 1 or 2).
///
/// # Safety
/// AVX-512 F and BW are available and `x + 32 <=` each row's length.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn vertical(a: &[u8], b: &[u8], c: &[u8], x: usize, double_middle: bool) -> __m512i {
    // SAFETY: the caller guarantees 32 readable pixels at x in each row.
    let (ra, rb, rc) = unsafe { (load32(a, x), load32(b, x), load32(c, x)) };
    let rb = if double_middle { _mm512_slli_epi16(rb, 1) } else { rb };
    _mm512_add_epi16(_mm512_add_epi16(ra, rc), rb)
}

/// The separable 3×3 row loop of `avx2.rs::separable` (vertical sums once per column, neighbors by
/// lane shifts of the next block's), 32 columns per step in column order (`vpmovzxbw` widens a
/// whole 256-bit load into 512 bits).
///
/// # Safety
/// AVX-512 F and BW are available.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn separable(
    [a, b, c]: [&[u8]; 3],
    o: &mut [u8],
    double_middle: bool,
    finish: impl Fn(__m512i, __m512i, __m512i) -> __m512i,
) -> usize {
    let n = o.len();
    assert!([a, b, c].iter().all(|r| r.len() >= n + 2));
    if n < 32 {
        return 0;
    }
    // SAFETY: 32 <= n + 2 pixels at 0 in each row.
    let mut cur = unsafe { vertical(a, b, c, 0, double_middle) };
    let mut x = 0;
    while x + 32 <= n {
        let (v1, v2, next) = if x + 64 <= n + 2 {
            // SAFETY: x + 64 <= n + 2 <= each row's length.
            let next = unsafe { vertical(a, b, c, x + 32, double_middle) };
            let (v1, v2) = shifted(cur, next);
            (v1, v2, next)
        } else {
            // SAFETY: x + 2 + 32 <= n + 2 <= each row's length (x + 32 <= n).
            let (v1, v2) =
                unsafe { (vertical(a, b, c, x + 1, double_middle), vertical(a, b, c, x + 2, double_middle)) };
            (v1, v2, cur)
        };
        // SAFETY: x + 32 <= n = o.len().
        unsafe { store32_u8(o, x, finish(cur, v1, v2)) };
        cur = next;
        x += 32;
    }
    x
}

/// Gaussian `1 2 1` ⊗ `1 2 1` / 16, rounded.
///
/// # Safety
/// The CPU has AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn gaussian_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) -> usize {
    let finish = |v0, v1, v2| {
        let s = _mm512_add_epi16(_mm512_add_epi16(v0, v2), _mm512_slli_epi16(v1, 1));
        _mm512_srli_epi16(_mm512_add_epi16(s, _mm512_set1_epi16(8)), 4)
    };
    // SAFETY: AVX-512 F and BW are available (this function's contract).
    unsafe { separable([a, b, c], o, true, finish) }
}

/// Box 3×3 mean, rounded: `((sum + 4) * 7282) >> 16`, as `div9_rounded`.
///
/// # Safety
/// The CPU has AVX-512 F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn box_row(a: &[u8], b: &[u8], c: &[u8], o: &mut [u8]) -> usize {
    let finish = |v0, v1, v2| {
        let s = _mm512_add_epi16(_mm512_add_epi16(v0, v1), v2);
        _mm512_mulhi_epu16(_mm512_add_epi16(s, _mm512_set1_epi16(4)), _mm512_set1_epi16(7282))
    };
    // SAFETY: AVX-512 F and BW are available (this function's contract).
    unsafe { separable([a, b, c], o, false, finish) }
}

/// `avx512::f(args)` when level `l` (capped to the CPU's) is AVX-512, else 0: the output pixels
/// done (a multiple of 32).
macro_rules! widest {
    ($l:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        #[cfg(target_arch = "x86_64")]
        let done = if $crate::simd::clamp($l) >= $crate::simd::Level::Avx512 {
            // SAFETY: `clamp` never returns a level above the CPU's: it has AVX-512 F and BW, the
            // functions' only requirement.
            unsafe { $crate::avx512::$f($($arg),*) }
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
pub(crate) use widest;
