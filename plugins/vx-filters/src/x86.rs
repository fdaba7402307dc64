//! Hand-written x86-64 loops of the point operations, written once over [`Simd`] (one register of
//! bytes: SSE2 `__m128i`, AVX2 `__m256i`, AVX-512 `__m512i`) and compiled for each instruction set
//! by `entries!` (one `#[target_feature]` function per level). Each loop returns how many leading
//! pixels it wrote; the caller's portable loop does the rest (see `rows.rs`). With `nt`, the output
//! is written with non-temporal (streaming) stores from its first register-aligned address, and
//! an `sfence` orders them before the function returns.

use std::arch::x86_64::*;

/// One SIMD register of bytes and the operations the point loops need.
///
/// # Safety
/// Every method requires the CPU to support the type's instruction set (the callers are the
/// `#[target_feature]` functions `entries!` generates, called only after detection).
pub(crate) trait Simd: Copy {
    /// Bytes per register.
    const LANES: usize;
    /// Unaligned load of `LANES` bytes.
    unsafe fn load(p: *const u8) -> Self;
    /// `LANES / 2` bytes zero-extended to u16 lanes, in order.
    unsafe fn load_widen(p: *const u8) -> Self;
    /// Unaligned store of `LANES` bytes.
    unsafe fn store(p: *mut u8, v: Self);
    /// Non-temporal store of `LANES` bytes at `p`, aligned to `LANES`.
    unsafe fn stream(p: *mut u8, v: Self);
    /// Orders the non-temporal stores before later stores.
    unsafe fn fence() {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_sfence() }
    }
    unsafe fn splat(b: u8) -> Self;
    unsafe fn and(a: Self, b: Self) -> Self;
    unsafe fn or(a: Self, b: Self) -> Self;
    unsafe fn xor(a: Self, b: Self) -> Self;
    unsafe fn min_u8(a: Self, b: Self) -> Self;
    unsafe fn max_u8(a: Self, b: Self) -> Self;
    /// 0xFF where `a == b`, else 0.
    unsafe fn eq_u8(a: Self, b: Self) -> Self;
    /// 0xFF where `a > b` (unsigned), else 0.
    unsafe fn gt_u8(a: Self, b: Self) -> Self;
    /// Whether any lane of `a` is above `b`'s (unsigned).
    unsafe fn any_gt_u8(a: Self, b: Self) -> bool;
    /// 16-bit lanes shifted right by 4.
    unsafe fn srl4_u16(a: Self) -> Self;
    unsafe fn add_i16(a: Self, b: Self) -> Self;
    unsafe fn sub_i16(a: Self, b: Self) -> Self;
}

#[derive(Clone, Copy)]
pub(crate) struct Sse2(__m128i);
#[derive(Clone, Copy)]
pub(crate) struct Avx2(__m256i);
#[derive(Clone, Copy)]
pub(crate) struct Avx512(__m512i);

// Every method: SAFETY: the trait's contract (the CPU has the type's instruction set); pointer
// arguments are valid for the bytes the method names (the callers' bounds), and `stream`'s are
// aligned (its contract).
impl Simd for Sse2 {
    const LANES: usize = 16;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_loadu_si128(p as *const __m128i) })
    }
    #[inline(always)]
    unsafe fn load_widen(p: *const u8) -> Self {
        // SAFETY: see the impl's note (8 readable bytes).
        Sse2(unsafe { _mm_unpacklo_epi8(_mm_loadl_epi64(p as *const __m128i), _mm_setzero_si128()) })
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: see the impl's note.
        unsafe { _mm_storeu_si128(p as *mut __m128i, v.0) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: see the impl's note (16-byte aligned).
        unsafe { _mm_stream_si128(p as *mut __m128i, v.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_set1_epi8(b as i8) })
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_and_si128(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn or(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_or_si128(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_xor_si128(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn min_u8(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_min_epu8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn max_u8(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_max_epu8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn eq_u8(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_cmpeq_epi8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn gt_u8(a: Self, b: Self) -> Self {
        // a > b ⇔ max(a, b) != b.
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_xor_si128(_mm_cmpeq_epi8(_mm_max_epu8(a.0, b.0), b.0), _mm_set1_epi8(-1)) })
    }
    #[inline(always)]
    unsafe fn any_gt_u8(a: Self, b: Self) -> bool {
        // SAFETY: see the impl's note.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(a.0, b.0), b.0)) != 0xFFFF }
    }
    #[inline(always)]
    unsafe fn srl4_u16(a: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_srli_epi16(a.0, 4) })
    }
    #[inline(always)]
    unsafe fn add_i16(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_add_epi16(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn sub_i16(a: Self, b: Self) -> Self {
        // SAFETY: see the impl's note.
        Sse2(unsafe { _mm_sub_epi16(a.0, b.0) })
    }
}

impl Simd for Avx2 {
    const LANES: usize = 32;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: see the note above `impl Simd for Sse2`.
        Avx2(unsafe { _mm256_loadu_si256(p as *const __m256i) })
    }
    #[inline(always)]
    unsafe fn load_widen(p: *const u8) -> Self {
        // SAFETY: as above (16 readable bytes).
        Avx2(unsafe { _mm256_cvtepu8_epi16(_mm_loadu_si128(p as *const __m128i)) })
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: as above.
        unsafe { _mm256_storeu_si256(p as *mut __m256i, v.0) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: as above (32-byte aligned).
        unsafe { _mm256_stream_si256(p as *mut __m256i, v.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_set1_epi8(b as i8) })
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_and_si256(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn or(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_or_si256(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_xor_si256(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn min_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_min_epu8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn max_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_max_epu8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn eq_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_cmpeq_epi8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn gt_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_xor_si256(_mm256_cmpeq_epi8(_mm256_max_epu8(a.0, b.0), b.0), _mm256_set1_epi8(-1)) })
    }
    #[inline(always)]
    unsafe fn any_gt_u8(a: Self, b: Self) -> bool {
        // SAFETY: as above.
        unsafe { _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(a.0, b.0), b.0)) != -1 }
    }
    #[inline(always)]
    unsafe fn srl4_u16(a: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_srli_epi16(a.0, 4) })
    }
    #[inline(always)]
    unsafe fn add_i16(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_add_epi16(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn sub_i16(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx2(unsafe { _mm256_sub_epi16(a.0, b.0) })
    }
}

impl Simd for Avx512 {
    const LANES: usize = 64;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: see the note above `impl Simd for Sse2`.
        Avx512(unsafe { _mm512_loadu_si512(p as *const __m512i) })
    }
    #[inline(always)]
    unsafe fn load_widen(p: *const u8) -> Self {
        // SAFETY: as above (32 readable bytes).
        Avx512(unsafe { _mm512_cvtepu8_epi16(_mm256_loadu_si256(p as *const __m256i)) })
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: Self) {
        // SAFETY: as above.
        unsafe { _mm512_storeu_si512(p as *mut __m512i, v.0) }
    }
    #[inline(always)]
    unsafe fn stream(p: *mut u8, v: Self) {
        // SAFETY: as above (64-byte aligned).
        unsafe { _mm512_stream_si512(p as *mut __m512i, v.0) }
    }
    #[inline(always)]
    unsafe fn splat(b: u8) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_set1_epi8(b as i8) })
    }
    #[inline(always)]
    unsafe fn and(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_and_si512(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn or(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_or_si512(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn xor(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_xor_si512(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn min_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_min_epu8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn max_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_max_epu8(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn eq_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_movm_epi8(_mm512_cmpeq_epu8_mask(a.0, b.0)) })
    }
    #[inline(always)]
    unsafe fn gt_u8(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_movm_epi8(_mm512_cmpgt_epu8_mask(a.0, b.0)) })
    }
    #[inline(always)]
    unsafe fn any_gt_u8(a: Self, b: Self) -> bool {
        // SAFETY: as above.
        unsafe { _mm512_cmpgt_epu8_mask(a.0, b.0) != 0 }
    }
    #[inline(always)]
    unsafe fn srl4_u16(a: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_srli_epi16(a.0, 4) })
    }
    #[inline(always)]
    unsafe fn add_i16(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_add_epi16(a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn sub_i16(a: Self, b: Self) -> Self {
        // SAFETY: as above.
        Avx512(unsafe { _mm512_sub_epi16(a.0, b.0) })
    }
}

/// The store loop every kernel shares: output elements of `E` bytes at `d`, `n` of them; `step(x)`
/// computes the register of output elements `x .. x + LANES / E`. Plain stores, or with `nt` one
/// unaligned register at 0 and then non-temporal stores from the first `LANES`-aligned element
/// (overlapping the first: element-wise kernels whose output does not overlap their inputs may
/// write a pixel twice). Returns the elements written.
///
/// # Safety
/// The CPU has `V`'s instruction set; `d` is valid for writes of `n * E` bytes and aligned to `E`;
/// `step(x)` is sound for every `x` with `x + LANES / E <= n`.
#[inline(always)]
unsafe fn drive<V: Simd, const E: usize>(n: usize, d: *mut u8, nt: bool, step: impl Fn(usize) -> V) -> usize {
    let per = V::LANES / E;
    let mut x = 0;
    if nt && n >= 2 * per {
        // SAFETY: per <= n elements at 0 (the contract).
        unsafe { V::store(d, step(0)) };
        let mis = d as usize % V::LANES;
        // `d` is E-aligned, so E divides `mis` and `LANES - mis`: x is a whole element, < per.
        x = if mis == 0 { 0 } else { (V::LANES - mis) / E };
        while x + per <= n {
            // SAFETY: x + per <= n elements (bounds), and d + x·E is LANES-aligned (chosen above).
            unsafe { V::stream(d.add(x * E), step(x)) };
            x += per;
        }
        // SAFETY: the CPU has V's instruction set, which includes SSE2.
        unsafe { V::fence() };
    } else {
        while x + per <= n {
            // SAFETY: x + per <= n elements.
            unsafe { V::store(d.add(x * E), step(x)) };
            x += per;
        }
    }
    x
}

// The kernels over `Simd`. # Safety of each: the CPU has V's instruction set.

#[inline(always)]
unsafe fn threshold<V: Simd>(src: &[u8], level: u8, dst: &mut [u8], nt: bool) -> usize {
    let (n, s) = (src.len().min(dst.len()), src.as_ptr());
    // SAFETY: the CPU has V's set (this function's contract).
    let l = unsafe { V::splat(level) };
    // SAFETY: dst is valid for n bytes; step reads src[x .. x + LANES] with x + LANES <= n <= src.len().
    unsafe { drive::<V, 1>(n, dst.as_mut_ptr(), nt, |x| V::gt_u8(V::load(s.add(x)), l)) }
}

#[inline(always)]
unsafe fn threshold_range<V: Simd>(src: &[u8], lower: u8, upper: u8, dst: &mut [u8], nt: bool) -> usize {
    let (n, s) = (src.len().min(dst.len()), src.as_ptr());
    // SAFETY: the CPU has V's set (this function's contract).
    let (lo, hi) = unsafe { (V::splat(lower), V::splat(upper)) };
    // SAFETY: as in `threshold`. Inside ⇔ max(p, lower) == p and min(p, upper) == p.
    unsafe {
        drive::<V, 1>(n, dst.as_mut_ptr(), nt, |x| {
            let p = V::load(s.add(x));
            V::and(V::eq_u8(V::max_u8(p, lo), p), V::eq_u8(V::min_u8(p, hi), p))
        })
    }
}

#[inline(always)]
unsafe fn not<V: Simd>(src: &[u8], dst: &mut [u8], nt: bool) -> usize {
    let (n, s) = (src.len().min(dst.len()), src.as_ptr());
    // SAFETY: the CPU has V's set (this function's contract).
    let ones = unsafe { V::splat(0xFF) };
    // SAFETY: as in `threshold`.
    unsafe { drive::<V, 1>(n, dst.as_mut_ptr(), nt, |x| V::xor(V::load(s.add(x)), ones)) }
}

#[inline(always)]
unsafe fn not_in_place<V: Simd>(row: &mut [u8]) -> usize {
    let (n, p) = (row.len(), row.as_mut_ptr());
    // SAFETY: the CPU has V's set (this function's contract).
    let ones = unsafe { V::splat(0xFF) };
    let mut x = 0;
    while x + V::LANES <= n {
        // SAFETY: x + LANES <= n bytes of the row, read then written.
        unsafe { V::store(p.add(x), V::xor(V::load(p.add(x)), ones)) };
        x += V::LANES;
    }
    x
}

#[inline(always)]
unsafe fn posterize<V: Simd>(src: &[u8], dst: &mut [u8], nt: bool) -> usize {
    let (n, s) = (src.len().min(dst.len()), src.as_ptr());
    // SAFETY: the CPU has V's set (this function's contract).
    let (high, low) = unsafe { (V::splat(0xF0), V::splat(0x0F)) };
    // SAFETY: as in `threshold`. `p >> 4` per byte: 16-bit shift, then the bits shifted in from
    // the neighbouring byte masked off.
    unsafe {
        drive::<V, 1>(n, dst.as_mut_ptr(), nt, |x| {
            let p = V::load(s.add(x));
            V::or(V::and(p, high), V::and(V::srl4_u16(p), low))
        })
    }
}

/// Pixels above `level` become `level`; a register is written only when one of its pixels is above.
#[inline(always)]
unsafe fn truncate<V: Simd>(row: &mut [u8], level: u8) -> usize {
    let (n, p) = (row.len(), row.as_mut_ptr());
    // SAFETY: the CPU has V's set (this function's contract).
    let l = unsafe { V::splat(level) };
    let mut x = 0;
    while x + V::LANES <= n {
        // SAFETY: x + LANES <= n bytes of the row, read and maybe written.
        unsafe {
            let v = V::load(p.add(x));
            if V::any_gt_u8(v, l) {
                V::store(p.add(x), V::min_u8(v, l));
            }
        }
        x += V::LANES;
    }
    x
}

#[inline(always)]
unsafe fn add_sub<V: Simd, const SUB: bool>(a: &[u8], b: &[u8], o: &mut [i16], nt: bool) -> usize {
    let n = a.len().min(b.len()).min(o.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    // SAFETY: o is valid for n i16 (2-byte aligned); step reads LANES / 2 bytes at x of a and b,
    // x + LANES / 2 <= n. u8 + u8 and u8 - u8 fit i16: no saturation happens.
    unsafe {
        drive::<V, 2>(n, o.as_mut_ptr() as *mut u8, nt, |x| {
            let (va, vb) = (V::load_widen(pa.add(x)), V::load_widen(pb.add(x)));
            if SUB { V::sub_i16(va, vb) } else { V::add_i16(va, vb) }
        })
    }
}

#[inline(always)]
unsafe fn add<V: Simd>(a: &[u8], b: &[u8], o: &mut [i16], nt: bool) -> usize {
    // SAFETY: the CPU has V's set (this function's contract).
    unsafe { add_sub::<V, false>(a, b, o, nt) }
}

#[inline(always)]
unsafe fn subtract<V: Simd>(a: &[u8], b: &[u8], o: &mut [i16], nt: bool) -> usize {
    // SAFETY: the CPU has V's set (this function's contract).
    unsafe { add_sub::<V, true>(a, b, o, nt) }
}

/// One register of gradient magnitudes (`LANES` outputs from `gx[x..]`, `gy[x..]`): `sqrt(gx² +
/// gy²) + 0.5` truncated and saturated to u8, in f32 (as the portable `mag`).
trait Magnitude: Simd {
    /// # Safety
    /// The CPU has the set; `LANES` i16 readable at each pointer.
    unsafe fn magnitude(gx: *const i16, gy: *const i16) -> Self;
}

// The helpers carry their instruction set themselves (closures would not, and their intrinsics
// would stay out-of-line calls).

/// 4 magnitudes as i32 from 4 interleaved `(gx, gy)` i16 pairs: `gx² + gy²` exact by `pmaddwd`
/// (both squares and their sum in one instruction; the f32 squares of the portable `mag` are exact
/// too wherever the result does not saturate), to f32, square root, `+ 0.5`, truncated. The sum
/// wraps to `i32::MIN` only for `gx = gy = -32768` (2³¹): its absolute value as f32 is 2³¹ again,
/// whose root saturates as it should. Above 2²⁴ the conversion rounds, but such sums saturate
/// either way (rounding is monotonic and 255.5² is far below).
#[inline]
#[target_feature(enable = "sse2")]
fn mag4_sse2(pairs: __m128i) -> __m128i {
    let s = _mm_cvtepi32_ps(_mm_madd_epi16(pairs, pairs));
    let s = _mm_andnot_ps(_mm_set1_ps(-0.0), s);
    _mm_cvttps_epi32(_mm_add_ps(_mm_sqrt_ps(s), _mm_set1_ps(0.5)))
}

/// 8 magnitudes as i16 (saturated) from 8 i16 pairs.
#[inline]
#[target_feature(enable = "sse2")]
fn mag8_sse2(vx: __m128i, vy: __m128i) -> __m128i {
    // The interleaves hold pairs 0–3 and 4–7: the pack keeps their order.
    _mm_packs_epi32(mag4_sse2(_mm_unpacklo_epi16(vx, vy)), mag4_sse2(_mm_unpackhi_epi16(vx, vy)))
}

impl Magnitude for Sse2 {
    #[inline(always)]
    unsafe fn magnitude(gx: *const i16, gy: *const i16) -> Self {
        // SAFETY: the trait's contract: SSE2, 16 i16 readable at each pointer.
        unsafe {
            let ld = |p: *const i16, k: usize| _mm_loadu_si128(p.add(k) as *const __m128i);
            Sse2(_mm_packus_epi16(mag8_sse2(ld(gx, 0), ld(gy, 0)), mag8_sse2(ld(gx, 8), ld(gy, 8))))
        }
    }
}

/// 8 magnitudes as i32 from 8 interleaved `(gx, gy)` i16 pairs, as [`mag4_sse2`] (the wrapped
/// 2³¹ is clamped as unsigned instead). The square root bounds this kernel on the CPUs measured
/// (one `vsqrtps` per 8 lanes, on the divider); the sums by `vpmaddwd` take the conversions and
/// multiplies of the i16 → f32 route off the other ports: 0.20 against 0.27 ns a pixel on a Zen 3
/// in L1 (an AVX2 port of [`mag16_avx512`]'s estimate-and-correct route, with `vrsqrtps`, took
/// 0.36 there).
#[inline]
#[target_feature(enable = "avx2")]
fn mag8_avx2(pairs: __m256i) -> __m256i {
    let s = _mm256_min_epu32(_mm256_madd_epi16(pairs, pairs), _mm256_set1_epi32(65536));
    _mm256_cvttps_epi32(_mm256_add_ps(_mm256_sqrt_ps(_mm256_cvtepi32_ps(s)), _mm256_set1_ps(0.5)))
}

/// 16 magnitudes as i16 (saturated), in order, from 16 i16 pairs: interleaving and packing both
/// work within 128-bit lanes, so the pack undoes the interleave's order.
#[inline]
#[target_feature(enable = "avx2")]
fn mag16_avx2(vx: __m256i, vy: __m256i) -> __m256i {
    _mm256_packs_epi32(mag8_avx2(_mm256_unpacklo_epi16(vx, vy)), mag8_avx2(_mm256_unpackhi_epi16(vx, vy)))
}

impl Magnitude for Avx2 {
    #[inline(always)]
    unsafe fn magnitude(gx: *const i16, gy: *const i16) -> Self {
        // SAFETY: the trait's contract: AVX2, 32 i16 readable at each pointer.
        unsafe {
            let ld = |p: *const i16, k: usize| _mm256_loadu_si256(p.add(k) as *const __m256i);
            let (a, b) = (mag16_avx2(ld(gx, 0), ld(gy, 0)), mag16_avx2(ld(gx, 16), ld(gy, 16)));
            // Two registers of 16 i16 values → 32 u8 (saturated). The pack works per 128-bit
            // lane ([a0 b0 | a1 b1]): one permute puts a's halves first.
            Avx2(_mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0b11_01_10_00))
        }
    }
}

/// 16 magnitudes as i32 from 16 interleaved `(gx, gy)` pairs, exact to the rounding of
/// `round(sqrt(gx² + gy²))` wherever the result is below 256 (the caller saturates to u8), without
/// a square-root instruction: the AVX-512 `vsqrtps` (one per 16 lanes, on a divider unit that
/// takes about 12 cycles each) bounded this kernel; the estimate and its integer check below take
/// a few cycles on the ordinary ports. The fused 4K edge pipeline on one thread got 5 % faster
/// (5.44 against 5.75 ms a frame, `vx run examples/graphs/edges.toml --frames 300 --threads 1` on
/// a 3840×2160 input, three alternating runs).
///
/// - `s = gx² + gy²` by `vpmaddwd` (both squares and their sum in one instruction), read as
///   unsigned: it exceeds `i32::MAX` only for `gx = gy = -32768` (2³¹). Exact in f32 up to 2²⁴.
/// - `s` is clamped to 65536 (= 256²): every sum above 255.5² saturates, and so does 256.
/// - `y = s · rsqrt14(s)` is `sqrt(s)` within a relative 2⁻¹⁴, so within 256 · 2⁻¹⁴ < 0.016 of it,
///   and `k = round(y)` is the correct `r = round(sqrt(s))` or next to it. (`s = 0`: the estimate's
///   input is lifted to ½ so that `0 · rsqrt14` is 0, not NaN.)
/// - An integer `r ≥ 1` is the rounded root exactly when `r² − r < s ≤ r² + r` (`(r ± ½)²` are
///   never integers: no ties). So `k + 1` when `s > k² + k`, `k − 1` when `s ≤ k² − k`, both
///   exact in f32 (`k ≤ 256`). For `s = 0`, `k = 0` steps to −1, which the unsigned pack saturates
///   back to 0, the right answer.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn mag16_avx512(pairs: __m512i) -> __m512i {
    let sum = _mm512_cvtepu32_ps(_mm512_madd_epi16(pairs, pairs));
    let s = _mm512_min_ps(sum, _mm512_set1_ps(65536.0));
    let y = _mm512_mul_ps(s, _mm512_rsqrt14_ps(_mm512_max_ps(s, _mm512_set1_ps(0.5))));
    let k = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT }>(y);
    let up = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(s, _mm512_fmadd_ps(k, k, k));
    let down = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(s, _mm512_fmsub_ps(k, k, k));
    let one = _mm512_set1_ps(1.0);
    let k = _mm512_mask_sub_ps(_mm512_mask_add_ps(k, up, k, one), down, k, one);
    _mm512_cvtps_epi32(k)
}

/// 32 magnitudes as i16 (saturated), in order, from 32 i16 pairs: interleaving and packing both
/// work within 128-bit lanes, so the pack undoes the interleave's order.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn mag32_avx512(vx: __m512i, vy: __m512i) -> __m512i {
    let lo = mag16_avx512(_mm512_unpacklo_epi16(vx, vy));
    let hi = mag16_avx512(_mm512_unpackhi_epi16(vx, vy));
    _mm512_packs_epi32(lo, hi)
}

impl Magnitude for Avx512 {
    #[inline(always)]
    unsafe fn magnitude(gx: *const i16, gy: *const i16) -> Self {
        // SAFETY: the trait's contract: AVX-512 F/BW, 64 i16 readable at each pointer.
        unsafe {
            let ld = |p: *const i16, k: usize| _mm512_loadu_si512(p.add(k) as *const __m512i);
            let (a, b) = (mag32_avx512(ld(gx, 0), ld(gy, 0)), mag32_avx512(ld(gx, 32), ld(gy, 32)));
            // 128-bit lane k of the pack holds a's lane k then b's: one permute puts a's four
            // lanes first.
            let packed = _mm512_packus_epi16(a, b);
            Avx512(_mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), packed))
        }
    }
}

#[inline(always)]
unsafe fn magnitude<V: Magnitude>(gx: &[i16], gy: &[i16], o: &mut [u8], nt: bool) -> usize {
    let n = gx.len().min(gy.len()).min(o.len());
    let (px, py) = (gx.as_ptr(), gy.as_ptr());
    // SAFETY: o is valid for n bytes; step reads LANES i16 at x of both, x + LANES <= n.
    unsafe { drive::<V, 1>(n, o.as_mut_ptr(), nt, |x| V::magnitude(px.add(x), py.add(x))) }
}

/// For each kernel, `name::{sse2, avx2, avx512}`: the generic loop compiled with that instruction
/// set. # Safety of each: the CPU has the set.
macro_rules! entries {
    ($($name:ident($($a:ident: $t:ty),*);)*) => {$(
        pub(crate) mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[target_feature(enable = "sse2")]
            pub(crate) unsafe fn sse2($($a: $t),*) -> usize {
                // SAFETY: SSE2 is enabled here (the caller checked the CPU has it).
                unsafe { super::$name::<Sse2>($($a),*) }
            }
            #[target_feature(enable = "avx2")]
            pub(crate) unsafe fn avx2($($a: $t),*) -> usize {
                // SAFETY: AVX2 is enabled here (the caller checked the CPU has it).
                unsafe { super::$name::<Avx2>($($a),*) }
            }
            #[target_feature(enable = "avx512f,avx512bw")]
            pub(crate) unsafe fn avx512($($a: $t),*) -> usize {
                // SAFETY: AVX-512 F/BW are enabled here (the caller checked the CPU has them).
                unsafe { super::$name::<Avx512>($($a),*) }
            }
        }
    )*};
}

entries! {
    threshold(src: &[u8], level: u8, dst: &mut [u8], nt: bool);
    threshold_range(src: &[u8], lower: u8, upper: u8, dst: &mut [u8], nt: bool);
    not(src: &[u8], dst: &mut [u8], nt: bool);
    not_in_place(row: &mut [u8]);
    posterize(src: &[u8], dst: &mut [u8], nt: bool);
    truncate(row: &mut [u8], level: u8);
    magnitude(gx: &[i16], gy: &[i16], o: &mut [u8], nt: bool);
    add(a: &[u8], b: &[u8], o: &mut [i16], nt: bool);
    subtract(a: &[u8], b: &[u8], o: &mut [i16], nt: bool);
}
