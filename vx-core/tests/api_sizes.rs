//! Issue 33 (3): every data-object constructor, map, copy and ROI call of the public API, with sizes
//! drawn from {0, 1, small, 2^k ± 1 up to `u32::MAX` / `usize::MAX`, pairs whose product overflows},
//! returns `Ok` with storage matching its meta data (a created object reports the sizes asked for, a
//! copy round-trips, an ROI or a view writes through to its parent) or a clean `Err` of the kind the
//! meaning calls for — never a panic, never an abort.
//!
//! Each case runs under `catch_unwind`; the test binary's global allocator refuses (returns null
//! for) any single request over 1 GiB and reports its size on standard error first, so a size that
//! reaches an infallible allocation unchecked aborts. The cases therefore run in a child process
//! (this binary re-executed with `VX_API_SIZES_CHILD` set): the parent reports an abort as a failure
//! naming the last case started (each is written to standard error before it runs).
//! Buffers of 256 KiB and more are anonymous mappings, not the allocator's; a size the system
//! cannot back is `NoMemory`. Whole-buffer writes (patterns, whole copies, `to_vec`) run on small
//! objects or on a context limited to 1 MiB of buffers, so the test touches little memory.
//!
//! `VX_API_SIZES_SEED` replays a seed, `VX_API_SIZES_CASES` sets the number of cases.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

use vx::*;

// ---------------------------------------------------------------------------------------------
// The allocator: nothing over 1 GiB.

/// The largest single request the allocator grants.
const CAP: usize = 1 << 30;

/// The last refused request (bytes), and how many were refused.
static REFUSED_LAST: AtomicUsize = AtomicUsize::new(0);
static REFUSED_COUNT: AtomicUsize = AtomicUsize::new(0);

struct Capped;

/// Record a refused request and say so on standard error, without allocating.
fn refuse(size: usize) {
    REFUSED_LAST.store(size, Ordering::Relaxed);
    REFUSED_COUNT.fetch_add(1, Ordering::Relaxed);
    let mut buf = [0u8; 96];
    let prefix = b"api_sizes: the allocator refused a request of ";
    let mut n = prefix.len();
    buf[..n].copy_from_slice(prefix);
    let mut digits = [0u8; 20];
    let (mut v, mut d) = (size, 0);
    loop {
        digits[d] = b'0' + (v % 10) as u8;
        d += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in (0..d).rev() {
        buf[n] = digits[i];
        n += 1;
    }
    buf[n..n + 7].copy_from_slice(b" bytes\n");
    n += 7;
    // SAFETY: writes `n` initialised bytes of a stack buffer to file descriptor 2; no memory is
    // allocated and nothing is borrowed past the call.
    unsafe { libc::write(2, buf.as_ptr().cast(), n) };
}

// SAFETY: every method forwards to the system allocator unchanged, except that requests over CAP
// return null, which `GlobalAlloc` allows (allocation failure).
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CAP {
            refuse(layout.size());
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > CAP {
            refuse(layout.size());
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > CAP {
            refuse(new_size);
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`; `ptr` was allocated by this allocator, which is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by System with `layout` (every path above forwards to it).
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;

// ---------------------------------------------------------------------------------------------
// Sizes.

/// SplitMix64: small, seedable, good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// 2^k - 1, 2^k or 2^k + 1, saturated to `max`.
fn near_power(r: &mut Rng, k: u32, max: u128) -> u128 {
    let p = 1u128 << k;
    let v = match r.below(3) {
        0 => p - 1,
        1 => p,
        _ => p + 1,
    };
    v.min(max)
}

/// A `u32` size: 0, 1, small, 2^k ± 1, the top of the range, or anything.
fn u32_edge(r: &mut Rng) -> u32 {
    match r.below(10) {
        0 => 0,
        1 => 1,
        2..=4 => 2 + r.below(40) as u32,
        5 | 6 => {
            let k = 1 + r.below(32) as u32;
            near_power(r, k, u32::MAX as u128) as u32
        }
        7 => r.pick(&[u32::MAX, u32::MAX - 1, i32::MAX as u32, i32::MAX as u32 + 1, 65535, 65536, 65537]),
        8 => r.next() as u32,
        _ => 40 + r.below(400) as u32,
    }
}

/// A `usize` size: as [`u32_edge`], up to `usize::MAX`.
fn usize_edge(r: &mut Rng) -> usize {
    match r.below(10) {
        0 => 0,
        1 => 1,
        2..=4 => 2 + r.below(40) as usize,
        5 | 6 => {
            let k = 1 + r.below(64) as u32;
            near_power(r, k, usize::MAX as u128) as usize
        }
        7 => r.pick(&[
            usize::MAX,
            usize::MAX - 1,
            isize::MAX as usize,
            isize::MAX as usize + 1,
            u32::MAX as usize,
            u32::MAX as usize + 1,
        ]),
        8 => r.next() as usize,
        _ => 40 + r.below(400) as usize,
    }
}

/// Two `u32` sizes whose product is near 2^m for an m at a boundary (31, 32, 62, 63, 64…), so the
/// product overflows or lands just below the limit.
fn u32_pair(r: &mut Rng) -> (u32, u32) {
    let m = r.pick(&[30u32, 31, 32, 33, 34, 40, 48, 56, 61, 62, 63, 64]);
    let k = 1 + r.below((m - 1).min(31) as u64) as u32;
    let a = near_power(r, k, u32::MAX as u128) as u32;
    let b = near_power(r, (m - k).min(32), u32::MAX as u128) as u32;
    if r.chance(50) { (a, b) } else { (b, a) }
}

/// Two `usize` sizes whose product is near 2^m for m at a boundary.
fn usize_pair(r: &mut Rng) -> (usize, usize) {
    let m = r.pick(&[31u32, 32, 33, 40, 60, 61, 62, 63, 64, 65]);
    let k = 1 + r.below((m - 1).min(63) as u64) as u32;
    let a = near_power(r, k, usize::MAX as u128) as usize;
    let b = near_power(r, (m - k).min(64), usize::MAX as u128) as usize;
    if r.chance(50) { (a, b) } else { (b, a) }
}

/// A small size, at least 1.
fn small(r: &mut Rng, most: u64) -> u64 {
    1 + r.below(most)
}

/// Two `u32` sizes: mostly small (so the deeper calls run), else edges or an overflowing pair.
fn u32_dims(r: &mut Rng) -> (u32, u32) {
    match r.below(10) {
        0..=3 => (small(r, 70) as u32, small(r, 70) as u32),
        4 => (u32_edge(r), small(r, 8) as u32),
        5 => (small(r, 8) as u32, u32_edge(r)),
        6 | 7 => (u32_edge(r), u32_edge(r)),
        _ => u32_pair(r),
    }
}

/// Two `usize` sizes, as [`u32_dims`].
fn usize_dims(r: &mut Rng) -> (usize, usize) {
    match r.below(10) {
        0..=3 => (small(r, 70) as usize, small(r, 70) as usize),
        4 => (usize_edge(r), small(r, 8) as usize),
        5 => (small(r, 8) as usize, usize_edge(r)),
        6 | 7 => (usize_edge(r), usize_edge(r)),
        _ => usize_pair(r),
    }
}

/// A rectangle of a `w × h` area: mostly a small one inside, else anything (empty, inverted,
/// outside, at the top of the range).
fn rect_in(r: &mut Rng, w: u32, h: u32) -> Rect {
    if w > 0 && h > 0 && r.chance(75) {
        let sx = if r.chance(30) { w - 1 } else { r.below(w as u64) as u32 };
        let sy = if r.chance(30) { h - 1 } else { r.below(h as u64) as u32 };
        let ex = sx + 1 + r.below(((w - sx) as u64).min(48)) as u32;
        let ey = sy + 1 + r.below(((h - sy) as u64).min(48)) as u32;
        return Rect::new(sx, sy, ex, ey);
    }
    let mut c = || match r.below(4) {
        0 => u32_edge(r),
        1 => w.saturating_add(r.below(3) as u32),
        2 => h.saturating_sub(r.below(3) as u32),
        _ => r.below(4) as u32,
    };
    Rect::new(c(), c(), c(), c())
}

fn inside(rect: Rect, w: u32, h: u32) -> bool {
    !rect.is_empty() && rect.end_x <= w && rect.end_y <= h
}

// ---------------------------------------------------------------------------------------------
// Checks.

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Count one API call.
fn c<T>(r: T) -> T {
    CALLS.fetch_add(1, Ordering::Relaxed);
    r
}

const ALLOC: &[ErrorKind] = &[ErrorKind::NoMemory, ErrorKind::NoResources];

/// The error, which must be of one of `kinds`.
#[track_caller]
fn err<T: Debug>(r: Result<T>, kinds: &[ErrorKind]) -> Error {
    match r {
        Ok(v) => panic!("expected an error of {kinds:?}, got Ok({v:?})"),
        Err(e) => {
            assert!(kinds.contains(&e.kind()), "expected an error of {kinds:?}, got {:?}: {e}", e.kind());
            e
        }
    }
}

/// `Some` on success, `None` on an error of `kinds`; any other error fails.
#[track_caller]
fn ok_or<T>(r: Result<T>, kinds: &[ErrorKind]) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(kinds.contains(&e.kind()), "expected Ok or an error of {kinds:?}, got {:?}: {e}", e.kind());
            None
        }
    }
}

/// Success required.
#[track_caller]
fn ok<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("expected Ok, got {:?}: {e}", e.kind()))
}

/// A call that allocates a buffer of `bytes`: it must succeed when the buffer surely fits (small,
/// within the context's limit), may be refused with `NoMemory` / `NoResources` otherwise.
#[track_caller]
fn alloc_ok<T>(on: Ctx, bytes: u128, r: Result<T>) -> Option<T> {
    let fits = match on {
        Ctx::Limited => bytes <= LIMIT as u128,
        Ctx::Unlimited => bytes <= 64 << 20,
    };
    if fits { Some(ok(r)) } else { ok_or(r, ALLOC) }
}

// ---------------------------------------------------------------------------------------------
// The contexts every case uses.

/// Buffer bytes of the limited context.
const LIMIT: usize = 1 << 20;
/// The most bytes a case copies whole (an application-side vector of this size).
const WHOLE: u128 = 64 << 10;
/// The most elements a case copies as a patch.
const COPY_MOST: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    /// Default limits: huge buffers meet the system.
    Unlimited,
    /// 1 MiB of buffers: anything larger is `NoResources` before memory is touched.
    Limited,
}

struct Env {
    unlimited: Context,
    limited: Context,
    g_unlimited: Graph,
    g_limited: Graph,
}

impl Env {
    fn ctx(&self, c: Ctx) -> &Context {
        match c {
            Ctx::Unlimited => &self.unlimited,
            Ctx::Limited => &self.limited,
        }
    }
    fn graph(&self, c: Ctx) -> &Graph {
        match c {
            Ctx::Unlimited => &self.g_unlimited,
            Ctx::Limited => &self.g_limited,
        }
    }
}

fn pick_ctx(r: &mut Rng) -> Ctx {
    if r.chance(50) { Ctx::Unlimited } else { Ctx::Limited }
}

// ---------------------------------------------------------------------------------------------
// Element types: pixels and numeric items with values made from a seed.

trait Px: Pixel + PartialEq + Debug {
    fn px(v: u64) -> Self;
}
impl Px for u8 {
    fn px(v: u64) -> Self {
        v as u8
    }
}
impl Px for u16 {
    fn px(v: u64) -> Self {
        v as u16
    }
}
impl Px for i16 {
    fn px(v: u64) -> Self {
        v as i16
    }
}
impl Px for u32 {
    fn px(v: u64) -> Self {
        v as u32
    }
}
impl Px for i32 {
    fn px(v: u64) -> Self {
        v as i32
    }
}
impl Px for [u8; 2] {
    fn px(v: u64) -> Self {
        [v as u8, (v >> 8) as u8]
    }
}
impl Px for [u8; 3] {
    fn px(v: u64) -> Self {
        [v as u8, (v >> 8) as u8, (v >> 16) as u8]
    }
}
impl Px for [u8; 4] {
    fn px(v: u64) -> Self {
        [v as u8, (v >> 8) as u8, (v >> 16) as u8, (v >> 24) as u8]
    }
}

trait El: ArrayItem + PartialEq + Debug {
    fn make(v: u64) -> Self;
}
macro_rules! el_int {
    ($($t:ty),*) => {$(impl El for $t { fn make(v: u64) -> Self { v as $t } })*};
}
el_int!(i8, u8, i16, u16, i32, u32, i64, u64);
impl El for f32 {
    fn make(v: u64) -> Self {
        (v % 100_000) as f32 - 50_000.0
    }
}
impl El for f64 {
    fn make(v: u64) -> Self {
        (v % 1_000_000) as f64 / 8.0
    }
}
impl El for Coordinates2dF {
    fn make(v: u64) -> Self {
        Coordinates2dF { x: (v % 4096) as f32 + 0.25, y: ((v >> 12) % 4096) as f32 - 0.5 }
    }
}
impl El for Keypoint {
    fn make(v: u64) -> Self {
        Keypoint { x: v as i32, y: (v >> 32) as i32, strength: (v % 77) as f32, ..Keypoint::default() }
    }
}
impl El for Rect {
    fn make(v: u64) -> Self {
        Rect::new(v as u32 & 0xff, 1, 2, (v >> 8) as u32)
    }
}
impl El for Coordinates2d {
    fn make(v: u64) -> Self {
        Coordinates2d { x: v as u32, y: (v >> 32) as u32 }
    }
}
impl El for Coordinates3d {
    fn make(v: u64) -> Self {
        Coordinates3d { x: v as u32, y: (v >> 20) as u32, z: (v >> 40) as u32 }
    }
}

fn values<T, F: Fn(u64) -> T>(seed: u64, n: usize, f: F) -> Vec<T> {
    let mut r = Rng(seed);
    (0..n).map(|_| f(r.next())).collect()
}

/// Run `$body` with `$T` the Rust element type of numeric scalar type `$t` (u8 for the others).
macro_rules! with_elem {
    ($t:expr, $T:ident => $body:expr) => {
        match $t {
            ScalarType::Int8 => {
                type $T = i8;
                $body
            }
            ScalarType::Int16 => {
                type $T = i16;
                $body
            }
            ScalarType::Uint16 => {
                type $T = u16;
                $body
            }
            ScalarType::Int32 => {
                type $T = i32;
                $body
            }
            ScalarType::Uint32 => {
                type $T = u32;
                $body
            }
            ScalarType::Int64 => {
                type $T = i64;
                $body
            }
            ScalarType::Uint64 => {
                type $T = u64;
                $body
            }
            ScalarType::Float32 => {
                type $T = f32;
                $body
            }
            ScalarType::Float64 => {
                type $T = f64;
                $body
            }
            _ => {
                type $T = u8;
                $body
            }
        }
    };
}

/// Run `$body` with `$T` the pixel type of `$plane` of `$f`.
macro_rules! with_px {
    ($f:expr, $plane:expr, $T:ident => $body:expr) => {
        match ($f, $plane) {
            (ImageFormat::U16, _) => {
                type $T = u16;
                $body
            }
            (ImageFormat::S16, _) => {
                type $T = i16;
                $body
            }
            (ImageFormat::U32, _) => {
                type $T = u32;
                $body
            }
            (ImageFormat::S32, _) => {
                type $T = i32;
                $body
            }
            (ImageFormat::Rgb, _) => {
                type $T = [u8; 3];
                $body
            }
            (ImageFormat::Rgbx, _) => {
                type $T = [u8; 4];
                $body
            }
            (ImageFormat::Nv12 | ImageFormat::Nv21, 1) | (ImageFormat::Uyvy | ImageFormat::Yuyv, _) => {
                type $T = [u8; 2];
                $body
            }
            _ => {
                type $T = u8;
                $body
            }
        }
    };
}

const NUMERIC: [ScalarType; 10] = [
    ScalarType::Int8,
    ScalarType::Uint8,
    ScalarType::Int16,
    ScalarType::Uint16,
    ScalarType::Int32,
    ScalarType::Uint32,
    ScalarType::Int64,
    ScalarType::Uint64,
    ScalarType::Float32,
    ScalarType::Float64,
];

fn is_numeric(t: ScalarType) -> bool {
    NUMERIC.contains(&t)
}

/// Mostly numeric, sometimes any scalar type.
fn scalar_type(r: &mut Rng) -> ScalarType {
    if r.chance(85) { r.pick(&NUMERIC) } else { r.pick(&ScalarType::ALL) }
}

/// A type that is not `t`'s element type (for wrong-type calls).
fn other_numeric(t: ScalarType) -> ScalarType {
    if t == ScalarType::Uint8 { ScalarType::Int8 } else { ScalarType::Uint8 }
}

// ---------------------------------------------------------------------------------------------
// Images.

/// (bytes per element, subsampling x, subsampling y) of each plane.
fn planes_of(f: ImageFormat) -> &'static [(u128, u128, u128)] {
    match f {
        ImageFormat::U8 => &[(1, 1, 1)],
        ImageFormat::U16 | ImageFormat::S16 => &[(2, 1, 1)],
        ImageFormat::U32 | ImageFormat::S32 | ImageFormat::Rgbx => &[(4, 1, 1)],
        ImageFormat::Rgb => &[(3, 1, 1)],
        ImageFormat::Nv12 | ImageFormat::Nv21 => &[(1, 1, 1), (2, 2, 2)],
        ImageFormat::Uyvy | ImageFormat::Yuyv => &[(2, 1, 1)],
        ImageFormat::Iyuv => &[(1, 1, 1), (1, 2, 2), (1, 2, 2)],
        ImageFormat::Yuv4 => &[(1, 1, 1), (1, 1, 1), (1, 1, 1)],
        _ => &[],
    }
}

/// The grid an ROI must start on: even x and y where chroma is subsampled 2x2, even x for the
/// 4:2:2 interleaved formats (a U, V pair spans two pixels).
fn roi_grid(f: ImageFormat) -> (u32, u32) {
    match f {
        ImageFormat::Nv12 | ImageFormat::Nv21 | ImageFormat::Iyuv => (2, 2),
        ImageFormat::Uyvy | ImageFormat::Yuyv => (2, 1),
        _ => (1, 1),
    }
}

/// The model of `ImageLayout`: the buffer's bytes, or the error creating the image must give.
fn image_bytes(f: ImageFormat, w: u32, h: u32) -> std::result::Result<u128, ErrorKind> {
    if f == ImageFormat::Virtual {
        return Err(ErrorKind::InvalidFormat);
    }
    if w == 0 || h == 0 {
        return Err(ErrorKind::InvalidDimension);
    }
    let mut total = 0u128;
    for &(bpe, sx, sy) in planes_of(f) {
        let (pw, ph) = ((w as u128).div_ceil(sx), (h as u128).div_ceil(sy));
        let stride = (pw * bpe).next_multiple_of(64);
        if stride > i32::MAX as u128 {
            return Err(ErrorKind::InvalidDimension);
        }
        total += stride * ph;
    }
    if total > isize::MAX as u128 { Err(ErrorKind::InvalidDimension) } else { Ok(total) }
}

fn image_format(r: &mut Rng) -> ImageFormat {
    if r.chance(95) { r.pick(&ImageFormat::CONCRETE) } else { ImageFormat::Virtual }
}

#[derive(Debug)]
struct ImageCase {
    on: Ctx,
    virt: bool,
    w: u32,
    h: u32,
    format: ImageFormat,
    map: Rect,
    plane: usize,
    roi: Rect,
    sub: Rect,
    copy: Rect,
    valid: Rect,
    whole: bool,
    seed: u64,
}

fn gen_image(r: &mut Rng) -> ImageCase {
    let (w, h) = u32_dims(r);
    let format = image_format(r);
    let plane = if planes_of(format).len() > 1 && r.chance(40) {
        r.pick(&[1, 1, 2])
    } else {
        r.pick(&[0, 0, 0, 0, 1, 2, 3, usize::MAX])
    };
    let (map, roi, copy, valid) = (rect_in(r, w, h), rect_in(r, w, h), rect_in(r, w, h), rect_in(r, w, h));
    let sub = rect_in(r, roi.width(), roi.height());
    ImageCase {
        on: pick_ctx(r),
        virt: r.chance(10),
        w,
        h,
        format,
        map,
        plane,
        roi,
        sub,
        copy,
        valid,
        whole: r.chance(30),
        seed: r.next(),
    }
}

fn run_image(k: &ImageCase, env: &Env) {
    let ctx = env.ctx(k.on);
    if k.virt {
        // Any partial meta is accepted; the application can neither map nor copy it.
        let v = ok(c(Image::new_virtual(env.graph(k.on), k.w, k.h, k.format)));
        assert_eq!((v.width(), v.height(), v.format(), v.is_virtual()), (k.w, k.h, k.format, true));
        err(c(v.map::<u8>(k.map)), &[ErrorKind::OptimizedAway]);
        err(c(v.to_vec::<u8>()), &[ErrorKind::OptimizedAway]);
        err(c(v.roi(k.roi)), &[ErrorKind::InvalidReference]);
        return;
    }
    let model = image_bytes(k.format, k.w, k.h);
    let created = c(Image::new(ctx, k.w, k.h, k.format));
    let img = match model {
        Err(kind) => {
            err(created, &[kind]);
            return;
        }
        Ok(_) => ok(created),
    };
    let bytes = model.unwrap();
    assert_eq!((img.width(), img.height(), img.format()), (k.w, k.h, k.format));
    assert_eq!(img.planes(), planes_of(k.format).len());
    assert!(!img.is_allocated(), "nothing is allocated at creation");

    // A plane that does not exist, then the wrong element type: refused before any allocation.
    err(c(img.map_plane::<u8>(Rect::full(1, 1), img.planes() + k.plane % 3)), &[ErrorKind::InvalidParameters]);
    let wrong = if k.format == ImageFormat::U32 {
        c(img.map::<i32>(k.map)).map(|_| ())
    } else {
        c(img.map::<u32>(k.map)).map(|_| ())
    };
    err(wrong, &[ErrorKind::InvalidFormat]);
    assert!(!img.is_allocated(), "refused calls allocate nothing");

    // Map a patch of a plane, write its corners, read them back.
    let plane = k.plane;
    let plane_ok = plane < planes_of(k.format).len();
    with_px!(k.format, plane, T => {
        let (_, sx, sy) = planes_of(k.format).get(plane).copied().unwrap_or((1, 1, 1));
        let on_grid = (k.map.start_x as u128).is_multiple_of(sx) && (k.map.start_y as u128).is_multiple_of(sy);
        let r = c(img.map_plane_mut::<T>(k.map, plane));
        if !plane_ok || !inside(k.map, k.w, k.h) {
            err(r, &[ErrorKind::InvalidParameters]);
        } else if !on_grid {
            err(r, &[ErrorKind::InvalidParameters, ErrorKind::NoMemory, ErrorKind::NoResources]);
        } else if let Some(mut p) = alloc_ok(k.on, bytes, r) {
            let (dx, dy) = (k.map.width().div_ceil(sx as u32), k.map.height().div_ceil(sy as u32));
            assert_eq!((p.width(), p.height(), p.rect()), (dx, dy, k.map));
            assert!(p.get_row(dy).is_none());
            let (a, b) = (T::px(k.seed), T::px(k.seed >> 7));
            p.row_mut(0)[0] = a;
            p.row_mut(dy - 1)[dx as usize - 1] = b;
            drop(p);
            let q = ok(c(img.map_plane::<T>(k.map, plane)));
            assert_eq!(q.row(dy - 1)[dx as usize - 1], b);
            if dx > 1 || dy > 1 {
                assert_eq!(q.row(0)[0], a);
            }
        }
    });

    // Copy a patch of plane 0 in and out.
    with_px!(k.format, 0, T => {
        let n = k.copy.width() as usize * k.copy.height() as usize;
        let mut copied = false;
        if inside(k.copy, k.w, k.h) && n > COPY_MOST {
            // Too large to copy here: the length is checked after the buffer is allocated.
            let mut out = vec![T::default(); 16];
            let r = c(img.copy_to(k.copy, 0, &mut out));
            err(r, &[ErrorKind::InvalidParameters, ErrorKind::NoMemory, ErrorKind::NoResources]);
        } else if inside(k.copy, k.w, k.h) {
            let src = values(k.seed, n, T::px);
            if let Some(()) = alloc_ok(k.on, bytes, c(img.copy_from(k.copy, 0, &src))) {
                copied = true;
                let mut out = vec![T::default(); n];
                ok(c(img.copy_to(k.copy, 0, &mut out)));
                assert_eq!(out, src, "a copied patch round-trips");
                // A destination of the wrong length.
                let mut short = vec![T::default(); n - 1];
                err(c(img.copy_to(k.copy, 0, &mut short)), &[ErrorKind::InvalidParameters]);
            }
        } else {
            let mut out = vec![T::default(); n.min(4096)];
            err(c(img.copy_to(k.copy, 0, &mut out)), &[ErrorKind::InvalidParameters]);
        }
        // The whole plane as a vector: small images, or more than the allocator grants.
        let pixels = k.w as u128 * k.h as u128 * size_of::<T>() as u128;
        if k.whole && (pixels <= WHOLE || pixels > CAP as u128) {
            let r = c(img.to_vec::<T>());
            if let Some(v) = alloc_ok(k.on, bytes.max(pixels), r) {
                assert_eq!(v.len() as u128 * size_of::<T>() as u128, pixels);
                if copied && k.copy.start_x == 0 && k.copy.start_y == 0 {
                    assert_eq!(v[0], T::px(Rng(k.seed).next()));
                }
            }
            // The same as an `image` buffer (with the `image` feature).
            #[cfg(feature = "image")]
            to_image(&img, k.on, bytes.max(pixels));
        }
    });

    // An ROI, and an ROI of the ROI: the same pixels.
    let off_grid = |r: Rect| {
        let (ax, ay) = roi_grid(k.format);
        !r.start_x.is_multiple_of(ax) || !r.start_y.is_multiple_of(ay)
    };
    let r = c(img.roi(k.roi));
    if !inside(k.roi, k.w, k.h) || off_grid(k.roi) {
        err(r, &[ErrorKind::InvalidParameters]);
    } else {
        let roi = ok(r);
        assert_eq!(
            (roi.width(), roi.height(), roi.format(), roi.is_roi()),
            (k.roi.width(), k.roi.height(), k.format, true)
        );
        with_px!(k.format, 0, T => {
            let v = T::px(k.seed ^ 0x5555);
            if alloc_ok(k.on, bytes, c(roi.copy_from(Rect::full(1, 1), 0, &[v]))).is_some() {
                let mut back = [T::default()];
                let at = Rect::new(k.roi.start_x, k.roi.start_y, k.roi.start_x + 1, k.roi.start_y + 1);
                ok(c(img.copy_to(at, 0, &mut back)));
                assert_eq!(back[0], v, "an ROI writes its parent's pixels");
            }
        });
        let r = c(roi.roi(k.sub));
        if !inside(k.sub, roi.width(), roi.height()) || off_grid(k.sub) {
            err(r, &[ErrorKind::InvalidParameters]);
        } else {
            let sub = ok(r);
            assert_eq!((sub.width(), sub.height()), (k.sub.width(), k.sub.height()));
            with_px!(k.format, 0, T => {
                let v = T::px(k.seed ^ 0xaaaa);
                if alloc_ok(k.on, bytes, c(sub.copy_from(Rect::full(1, 1), 0, &[v]))).is_some() {
                    let (x, y) = (k.roi.start_x + k.sub.start_x, k.roi.start_y + k.sub.start_y);
                    let mut back = [T::default()];
                    ok(c(img.copy_to(Rect::new(x, y, x + 1, y + 1), 0, &mut back)));
                    assert_eq!(back[0], v, "an ROI of an ROI writes the root's pixels");
                }
            });
        }
    }

    // The valid rectangle.
    let r = c(img.set_valid_rectangle(Some(k.valid)));
    if k.valid.start_x <= k.valid.end_x
        && k.valid.start_y <= k.valid.end_y
        && k.valid.end_x <= k.w
        && k.valid.end_y <= k.h
    {
        ok(r);
        assert_eq!(img.valid_region(), k.valid);
    } else {
        err(r, &[ErrorKind::InvalidParameters]);
    }
}

/// `Image::to_image` of the formats that have an `image` pixel type: the same sizes as `to_vec`.
#[cfg(feature = "image")]
fn to_image(img: &Image, on: Ctx, bytes: u128) {
    use image::{Luma, Rgb, Rgba};
    let dims = |r: Result<(u32, u32)>| {
        if let Some(d) = alloc_ok(on, bytes, r) {
            assert_eq!(d, (img.width(), img.height()));
        }
    };
    match img.format() {
        ImageFormat::U8 => dims(c(img.to_image::<Luma<u8>>()).map(|b| b.dimensions())),
        ImageFormat::U16 => dims(c(img.to_image::<Luma<u16>>()).map(|b| b.dimensions())),
        ImageFormat::Rgb => dims(c(img.to_image::<Rgb<u8>>()).map(|b| b.dimensions())),
        ImageFormat::Rgbx => dims(c(img.to_image::<Rgba<u8>>()).map(|b| b.dimensions())),
        _ => drop(err(c(img.to_image::<Luma<u8>>()).map(|b| b.dimensions()), &[ErrorKind::InvalidFormat])),
    }
}

#[derive(Debug)]
struct HandleCase {
    on: Ctx,
    w: u32,
    h: u32,
    format: ImageFormat,
    stride: usize,
    len: usize,
}

fn gen_handle(r: &mut Rng) -> HandleCase {
    let (w, h) = if r.chance(60) { (small(r, 40) as u32, small(r, 40) as u32) } else { u32_dims(r) };
    let format = image_format(r);
    let bpe = planes_of(format).first().map_or(1, |p| p.0 as usize);
    let stride = if r.chance(60) { w as usize * bpe + bpe * r.below(3) as usize } else { usize_edge(r) };
    let len = if r.chance(70) { stride.saturating_mul(h as usize).min(1 << 16) } else { r.below(1 << 12) as usize };
    HandleCase { on: pick_ctx(r), w, h, format, stride, len }
}

fn run_handle(k: &HandleCase, env: &Env) {
    let planes = planes_of(k.format);
    let r = c(Image::from_handle(env.ctx(k.on), k.w, k.h, k.format, ImageHandle::new(vec![7u8; k.len], k.stride)));
    let Some(&(bpe, _, _)) = planes.first() else {
        err(r, &[ErrorKind::InvalidFormat]);
        return;
    };
    let row = k.w as u128 * bpe;
    let fine = k.w > 0
        && k.h > 0
        && planes.len() == 1
        && image_bytes(k.format, k.w, k.h).is_ok()
        && k.stride as u128 >= row
        && (k.stride as u128).is_multiple_of(bpe)
        && k.stride <= i32::MAX as usize
        && k.stride as u128 * k.h as u128 <= k.len as u128;
    if !fine {
        err(r, &[ErrorKind::InvalidDimension, ErrorKind::InvalidParameters, ErrorKind::NotSupported]);
        return;
    }
    // The only other refusal: memory not aligned to the pixel.
    let Some(img) = ok_or(r, &[ErrorKind::InvalidParameters]) else { return };
    assert_eq!((img.width(), img.height(), img.format()), (k.w, k.h, k.format));
    with_px!(k.format, 0, T => {
        let last = Rect::new(k.w - 1, k.h - 1, k.w, k.h);
        let v = T::px(k.stride as u64);
        ok(c(img.copy_from(last, 0, &[v])));
        let mut back = [T::default()];
        ok(c(img.copy_to(last, 0, &mut back)));
        assert_eq!(back[0], v);
    });
    // The memory comes back whole.
    let h = ok(c(img.swap_handle(None))).expect("the lent memory");
    assert_eq!(h.len(), k.len);
    assert_eq!(h.into_inner::<Vec<u8>>().map(|v| v.len()).ok(), Some(k.len));
}

// ---------------------------------------------------------------------------------------------
// Arrays.

#[derive(Debug)]
struct ArrayCase {
    on: Ctx,
    virt: bool,
    item: ArrayItemType,
    capacity: usize,
    adds: [usize; 3],
    truncate: usize,
    seed: u64,
}

fn gen_array(r: &mut Rng) -> ArrayCase {
    let item = match r.below(12) {
        0..=5 => ArrayItemType::Scalar(scalar_type(r)),
        6 => ArrayItemType::Rectangle,
        7 => ArrayItemType::Coordinates2d,
        8 => ArrayItemType::Coordinates2dF,
        9 => ArrayItemType::Coordinates3d,
        10 => ArrayItemType::Keypoint,
        _ => ArrayItemType::User { size: if r.chance(50) { small(r, 64) as usize } else { usize_edge(r) } },
    };
    let capacity = if r.chance(50) { small(r, 100) as usize } else { usize_edge(r) };
    let mut add = || if r.chance(80) { r.below(40) as usize } else { usize_edge(r).min(5000) };
    let adds = [add(), add(), add()];
    ArrayCase { on: pick_ctx(r), virt: r.chance(10), item, capacity, adds, truncate: usize_edge(r), seed: r.next() }
}

fn array_model(item: ArrayItemType, capacity: usize) -> std::result::Result<u128, ErrorKind> {
    if capacity == 0 {
        return Err(ErrorKind::InvalidParameters);
    }
    if item.size() == 0 {
        return Err(ErrorKind::InvalidParameters);
    }
    let b = item.size() as u128 * capacity as u128;
    if b > isize::MAX as u128 { Err(ErrorKind::InvalidDimension) } else { Ok(b) }
}

macro_rules! with_item {
    ($item:expr, $T:ident => $body:expr) => {
        match $item {
            ArrayItemType::Scalar(t) => with_elem!(t, $T => $body),
            ArrayItemType::Rectangle => {
                type $T = Rect;
                $body
            }
            ArrayItemType::Coordinates2d => {
                type $T = Coordinates2d;
                $body
            }
            ArrayItemType::Coordinates2dF => {
                type $T = Coordinates2dF;
                $body
            }
            ArrayItemType::Coordinates3d => {
                type $T = Coordinates3d;
                $body
            }
            _ => {
                type $T = Keypoint;
                $body
            }
        }
    };
}

fn run_array(k: &ArrayCase, env: &Env) {
    if k.virt {
        let r = c(Array::new_virtual(env.graph(k.on), Some(k.item), k.capacity));
        // Capacity 0 = unknown; the item size is still checked.
        let expect = if k.capacity == 0 && k.item.size() > 0 {
            Ok(())
        } else {
            array_model(k.item, k.capacity.max(1)).map(|_| ())
        };
        match expect {
            Err(kind) => drop(err(r, &[kind])),
            Ok(_) => {
                let a = ok(r);
                assert_eq!((a.capacity(), a.item_type(), a.is_virtual()), (k.capacity, Some(k.item), true));
                err(c(a.read_items::<u8>()), &[ErrorKind::OptimizedAway]);
            }
        }
        ok(c(Array::new_virtual(env.graph(k.on), None, k.capacity)));
        return;
    }
    let r = c(Array::new(env.ctx(k.on), k.item, k.capacity));
    let bytes = match array_model(k.item, k.capacity) {
        Err(kind) => {
            err(r, &[kind]);
            return;
        }
        Ok(b) => b,
    };
    let a = ok(r);
    assert_eq!((a.capacity(), a.item_size(), a.num_items(), a.is_allocated()), (k.capacity, k.item.size(), 0, false));
    // The wrong item type: refused before the items are allocated.
    let wrong = if k.item == ArrayItemType::Scalar(ScalarType::Uint8) {
        c(a.add_items(&[1i8]))
    } else {
        c(a.add_items(&[1u8]))
    };
    err(wrong, &[ErrorKind::InvalidType]);
    if k.item != ArrayItemType::Coordinates2d {
        err(c(a.read_items::<Coordinates2d>()), &[ErrorKind::InvalidType]);
    }
    assert!(!a.is_allocated(), "refused calls allocate nothing");
    if matches!(k.item, ArrayItemType::User { .. } | ArrayItemType::Scalar(_))
        && !matches!(k.item, ArrayItemType::Scalar(t) if is_numeric(t))
    {
        // No Rust item type stands for these.
        return;
    }
    with_item!(k.item, T => {
        let mut model: Vec<T> = Vec::new();
        for (i, &n) in k.adds.iter().enumerate() {
            let items = values(k.seed + i as u64, n, T::make);
            let r = c(a.add_items(&items));
            if model.len() + n <= k.capacity {
                if alloc_ok(k.on, bytes, r).is_none() {
                    return;
                }
                model.extend_from_slice(&items);
            } else {
                err(r, &[ErrorKind::NoResources, ErrorKind::NoMemory]);
            }
            assert_eq!(a.num_items(), model.len());
        }
        if let Some(v) = alloc_ok(k.on, bytes, c(a.read_items::<T>())) {
            assert_eq!(v, model, "items round-trip");
        }
        let n = if k.truncate.is_multiple_of(2) { k.truncate % (model.len() + 1) } else { k.truncate };
        let r = c(a.truncate(n));
        if n <= model.len() {
            ok(r);
            model.truncate(n);
        } else {
            err(r, &[ErrorKind::InvalidParameters]);
        }
        assert_eq!(a.num_items(), model.len());
        if a.is_allocated() {
            assert_eq!(ok(c(a.read_items::<T>())), model);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Matrices, convolutions, LUTs, distributions.

#[derive(Debug)]
struct MatrixCase {
    on: Ctx,
    virt: bool,
    element: ScalarType,
    columns: usize,
    rows: usize,
    pattern: MatrixPattern,
    origin: (usize, usize),
    seed: u64,
}

fn gen_matrix(r: &mut Rng) -> MatrixCase {
    let (columns, rows) = usize_dims(r);
    let origin = if r.chance(70) {
        (r.below(columns.max(1) as u64) as usize, r.below(rows.max(1) as u64) as usize)
    } else {
        (usize_edge(r), usize_edge(r))
    };
    MatrixCase {
        on: pick_ctx(r),
        virt: r.chance(10),
        element: scalar_type(r),
        columns,
        rows,
        pattern: r.pick(&[MatrixPattern::Box, MatrixPattern::Cross, MatrixPattern::Disk, MatrixPattern::Other]),
        origin,
        seed: r.next(),
    }
}

fn matrix_model(element: ScalarType, columns: usize, rows: usize) -> std::result::Result<u128, ErrorKind> {
    if !is_numeric(element) {
        return Err(ErrorKind::InvalidType);
    }
    if columns == 0 || rows == 0 {
        return Err(ErrorKind::InvalidDimension);
    }
    let b = (columns as u128 * rows as u128).saturating_mul(element.size() as u128);
    if b > isize::MAX as u128 { Err(ErrorKind::InvalidDimension) } else { Ok(b) }
}

fn run_matrix(k: &MatrixCase, env: &Env) {
    let ctx = env.ctx(k.on);
    let model = matrix_model(k.element, k.columns, k.rows);
    if k.virt {
        let r = c(Matrix::new_virtual(env.graph(k.on), k.element, k.columns, k.rows));
        match model {
            Err(kind) => drop(err(r, &[kind])),
            Ok(bytes) => {
                let m = ok(r);
                if bytes <= WHOLE {
                    with_elem!(k.element, T => {
                        let mut out = vec![T::default(); k.columns * k.rows];
                        err(c(m.copy_to(&mut out)), &[ErrorKind::OptimizedAway]);
                    });
                }
            }
        }
        return;
    }
    let r = c(Matrix::new(ctx, k.element, k.columns, k.rows));
    match model {
        Err(kind) => drop(err(r, &[kind])),
        Ok(bytes) => {
            let m = ok(r);
            let meta = m.meta();
            assert_eq!((meta.element, meta.columns, meta.rows), (k.element, k.columns, k.rows));
            assert_eq!((meta.origin, meta.pattern), ((k.columns / 2, k.rows / 2), MatrixPattern::Other));
            assert_eq!(m.size() as u128, bytes);
            let n = k.columns * k.rows;
            with_elem!(k.element, T => {
                // Whole copies: the exact length or InvalidParameters, before any allocation.
                let mut short = vec![T::default(); n.min(8) - 1];
                err(c(m.copy_to(&mut short)), &[ErrorKind::InvalidParameters]);
                with_elem!(other_numeric(k.element), W => {
                    err(c(m.copy_from::<W>(&[])), &[ErrorKind::InvalidType]);
                });
                assert!(!m.is_allocated(), "refused calls allocate nothing");
                if bytes <= WHOLE {
                    let src = values(k.seed, n, T::make);
                    if alloc_ok(k.on, bytes, c(m.copy_from(&src))).is_some() {
                        let mut out = vec![T::default(); n];
                        ok(c(m.copy_to(&mut out)));
                        assert_eq!(out, src, "a matrix round-trips");
                    }
                }
            });
        }
    }
    // Patterns are written whole: on the limited context, or small ones.
    let bytes = matrix_model(ScalarType::Uint8, k.columns, k.rows);
    if k.on == Ctx::Unlimited && bytes.is_ok_and(|b| b > WHOLE) {
        return;
    }
    let r = c(Matrix::from_pattern_and_origin(ctx, k.pattern, k.columns, k.rows, k.origin));
    let inside = k.origin.0 < k.columns && k.origin.1 < k.rows;
    match bytes {
        _ if k.pattern == MatrixPattern::Other => drop(err(r, &[ErrorKind::InvalidParameters])),
        Err(kind) => drop(err(r, &[kind])),
        Ok(_) if !inside => drop(err(r, &[ErrorKind::InvalidParameters])),
        Ok(b) => {
            let Some(m) = alloc_ok(k.on, b, r) else { return };
            assert_eq!((m.columns(), m.rows(), m.origin(), m.pattern()), (k.columns, k.rows, k.origin, k.pattern));
            if b <= WHOLE {
                let mut v = vec![0u8; k.columns * k.rows];
                ok(c(m.copy_to(&mut v)));
                assert!(v.iter().all(|&x| x == 0 || x == 255));
                let (oc, or) = k.origin;
                match k.pattern {
                    MatrixPattern::Box => assert!(v.iter().all(|&x| x == 255)),
                    MatrixPattern::Cross => {
                        assert_eq!(v[or * k.columns + oc], 255);
                        assert_eq!(v.iter().filter(|&&x| x == 255).count(), k.columns + k.rows - 1);
                    }
                    _ => {}
                }
            }
        }
    }
}

#[derive(Debug)]
struct SmallObjectsCase {
    on: Ctx,
    virt: bool,
    conv: (usize, usize),
    scale: u32,
    lut: (ScalarType, usize),
    dist: (usize, i32, u32),
    seed: u64,
}

fn gen_small_objects(r: &mut Rng) -> SmallObjectsCase {
    let conv = if r.chance(50) { (r.below(18) as usize, r.below(18) as usize) } else { usize_dims(r) };
    let lut_type = if r.chance(80) { r.pick(&[ScalarType::Uint8, ScalarType::Int16]) } else { scalar_type(r) };
    let count = match r.below(4) {
        0 => r.pick(&[0, 1, 255, 256, 257, 65535, 65536, 65537]),
        1 | 2 => small(r, 300) as usize,
        _ => usize_edge(r),
    };
    let bins = if r.chance(50) { small(r, 300) as usize } else { usize_edge(r) };
    let offset = match r.below(4) {
        0 => r.pick(&[0, -1, 1, i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1]),
        1 => r.below(512) as i32 - 256,
        _ => r.next() as i32,
    };
    let range = if r.chance(50) {
        (bins.min(u32::MAX as usize) as u32).saturating_add(r.below(1000) as u32)
    } else {
        u32_edge(r)
    };
    SmallObjectsCase {
        on: pick_ctx(r),
        virt: r.chance(10),
        conv,
        scale: if r.chance(50) { 1 << r.below(32) } else { u32_edge(r) },
        lut: (lut_type, count),
        dist: (bins, offset, range),
        seed: r.next(),
    }
}

fn run_small_objects(k: &SmallObjectsCase, env: &Env) {
    let ctx = env.ctx(k.on);
    let g = env.graph(k.on);
    // Convolution: odd sides, 3..=15.
    let (cols, rows) = k.conv;
    let side = |n: usize| (3..=MAX_CONVOLUTION_DIMENSION).contains(&n) && n % 2 == 1;
    let r = if k.virt { c(Convolution::new_virtual(g, cols, rows)) } else { c(Convolution::new(ctx, cols, rows)) };
    if !side(cols) || !side(rows) {
        err(r, &[ErrorKind::InvalidDimension]);
    } else {
        let cv = ok(r);
        assert_eq!((cv.columns(), cv.rows(), cv.size(), cv.scale()), (cols, rows, cols * rows * 2, 1));
        let s = c(cv.set_scale(k.scale));
        if k.scale.is_power_of_two() {
            ok(s);
            assert_eq!(cv.scale(), k.scale);
        } else {
            err(s, &[ErrorKind::InvalidValue]);
        }
        let src = values(k.seed, cols * rows, |v| v as i16);
        if k.virt {
            err(c(cv.copy_from(&src)), &[ErrorKind::OptimizedAway]);
        } else {
            ok(c(cv.copy_from(&src)));
            let mut out = vec![0i16; cols * rows];
            ok(c(cv.copy_to(&mut out)));
            assert_eq!(out, src);
            err(c(cv.copy_to(&mut out[1..])), &[ErrorKind::InvalidParameters]);
        }
    }

    // LUT: U8 1..=256, S16 1..=65536.
    let (t, count) = k.lut;
    let r = if k.virt { c(Lut::new_virtual(g, t, count)) } else { c(Lut::new(ctx, t, count)) };
    let most = match t {
        ScalarType::Uint8 => Some(256),
        ScalarType::Int16 => Some(65536),
        _ => None,
    };
    match most {
        None => drop(err(r, &[ErrorKind::InvalidType])),
        Some(m) if count == 0 || count > m => drop(err(r, &[ErrorKind::InvalidParameters])),
        Some(_) => {
            let l = ok(r);
            let offset = if t == ScalarType::Int16 { count / 2 } else { 0 };
            assert_eq!((l.count(), l.size(), l.offset(), l.element_type()), (count, count * t.size(), offset, t));
            with_elem!(t, T => {
                if k.virt {
                    err(c(l.map::<T>()).map(|_| ()), &[ErrorKind::OptimizedAway]);
                } else if let Some(mut m) = alloc_ok(k.on, l.size() as u128, c(l.map_mut::<T>())) {
                    assert_eq!(m.len(), count);
                    m[count - 1] = T::make(k.seed);
                    drop(m);
                    let mut out = vec![T::default(); count];
                    ok(c(l.copy_to(&mut out)));
                    assert_eq!(out[count - 1], T::make(k.seed));
                    let src = values(k.seed, count, T::make);
                    ok(c(l.copy_from(&src)));
                    assert_eq!(&ok(c(l.map::<T>()))[..], &src[..]);
                    with_elem!(other_numeric(t), W => {
                        err(c(l.map::<W>()).map(|_| ()), &[ErrorKind::InvalidType]);
                    });
                }
            });
        }
    }

    // Distribution: 1..=range bins, offset + range within i32.
    let (bins, offset, range) = k.dist;
    // The meta's window never panics, whatever its fields.
    let meta = DistributionMeta { bins, offset, range };
    let w = meta.window();
    if bins > 0 && bins as u64 <= u32::MAX as u64 {
        assert_eq!(w, range / bins as u32);
    }
    let r = if k.virt {
        c(Distribution::new_virtual(g, bins, offset, range))
    } else {
        c(Distribution::new(ctx, bins, offset, range))
    };
    if bins == 0 || bins as u128 > range as u128 || offset as i64 + range as i64 > i32::MAX as i64 + 1 {
        err(r, &[ErrorKind::InvalidParameters]);
    } else {
        let d = ok(r);
        assert_eq!((d.bins(), d.offset(), d.range(), d.size()), (bins, offset, range, bins * 4));
        assert_eq!(d.window(), range / bins as u32);
        if k.virt {
            err(c(d.map()).map(|_| ()), &[ErrorKind::OptimizedAway]);
        } else if let Some(m) = alloc_ok(k.on, bins as u128 * 4, c(d.map_mut())) {
            assert_eq!(m.len(), bins);
            drop(m);
            if bins as u128 * 4 <= WHOLE {
                let src = values(k.seed, bins, |v| v as u32);
                ok(c(d.copy_from(&src)));
                let mut out = vec![0u32; bins];
                ok(c(d.copy_to(&mut out)));
                assert_eq!(out, src);
                assert_eq!(&ok(c(d.map()))[..], &src[..]);
            }
            err(c(d.copy_to(&mut [])), &[ErrorKind::InvalidParameters]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Thresholds, scalars.

#[derive(Debug)]
struct ThresholdCase {
    on: Ctx,
    virt: bool,
    ty: ThresholdType,
    input: ImageFormat,
    output: ImageFormat,
    data_type: ScalarType,
    v: [i64; 5],
}

fn i64_edge(r: &mut Rng) -> i64 {
    match r.below(4) {
        0 => r.pick(&[0, 1, -1, i64::MIN, i64::MAX, 255, 256, -32768, -32769, 32767, 65535, 65536]),
        1 => r.pick(&[u32::MAX as i64, u32::MAX as i64 + 1, i32::MIN as i64, i32::MIN as i64 - 1, i32::MAX as i64]),
        2 => r.below(600) as i64 - 300,
        _ => r.next() as i64,
    }
}

fn gen_threshold(r: &mut Rng) -> ThresholdCase {
    ThresholdCase {
        on: pick_ctx(r),
        virt: r.chance(15),
        ty: r.pick(&[ThresholdType::Binary, ThresholdType::Range]),
        input: image_format(r),
        output: image_format(r),
        data_type: r.pick(&ScalarType::ALL),
        v: [i64_edge(r), i64_edge(r), i64_edge(r), i64_edge(r), i64_edge(r)],
    }
}

fn bounds(f: ImageFormat) -> Option<(i64, i64)> {
    Some(match f {
        ImageFormat::U8 => (0, 255),
        ImageFormat::U16 => (0, 65535),
        ImageFormat::S16 => (-32768, 32767),
        ImageFormat::U32 => (0, u32::MAX as i64),
        ImageFormat::S32 => (i32::MIN as i64, i32::MAX as i64),
        _ => return None,
    })
}

fn run_threshold(k: &ThresholdCase, env: &Env) {
    let r = if k.virt {
        c(Threshold::new_virtual_for_image(env.graph(k.on), k.ty, k.input, k.output))
    } else {
        c(Threshold::for_image(env.ctx(k.on), k.ty, k.input, k.output))
    };
    let (Some(inb), Some(outb)) = (bounds(k.input), bounds(k.output)) else {
        err(r, &[ErrorKind::InvalidFormat]);
        return;
    };
    let t = ok(r);
    assert_eq!((t.threshold_type(), t.input_format(), t.output_format()), (k.ty, k.input, k.output));
    let fits = |v: i64, b: (i64, i64)| v >= b.0 && v <= b.1;
    let [a, b, tv, fv, _] = k.v;
    let access = if k.virt { Some(ErrorKind::OptimizedAway) } else { None };
    let expect = |r: Result<()>, good: bool| match (good, access) {
        (false, _) => drop(err(r, &[ErrorKind::InvalidValue])),
        (true, Some(kind)) => drop(err(r, &[kind])),
        (true, None) => ok(r),
    };
    expect(c(t.set_value(a)), fits(a, inb));
    expect(c(t.set_range(a, b)), fits(a, inb) && fits(b, inb) && a <= b);
    expect(c(t.set_output(tv, fv)), fits(tv, outb) && fits(fv, outb));
    if access.is_none() {
        let v = ok(c(t.values()));
        if fits(a, inb) {
            assert_eq!(v.value, a);
        }
        if fits(tv, outb) && fits(fv, outb) {
            assert_eq!((v.true_value, v.false_value), (tv, fv));
        }
    }
    // OpenVX 1.1's creation from a data type.
    let r = c(Threshold::new(env.ctx(k.on), k.ty, k.data_type));
    let ok_type = matches!(
        k.data_type,
        ScalarType::Uint8 | ScalarType::Int16 | ScalarType::Uint16 | ScalarType::Int32 | ScalarType::Uint32
    );
    if ok_type { drop(ok(r)) } else { drop(err(r, &[ErrorKind::InvalidType])) }
}

#[derive(Debug)]
struct ScalarCase {
    on: Ctx,
    value: ScalarValue,
    other: ScalarValue,
}

fn scalar_value(r: &mut Rng) -> ScalarValue {
    let bits = if r.chance(50) { r.pick(&[0, 1, u64::MAX, i64::MIN as u64, i64::MAX as u64]) } else { r.next() };
    let v = ScalarValue::from_ne_bytes(r.pick(&ScalarType::ALL), bits.to_ne_bytes());
    match v {
        ScalarValue::Bool(_) => ScalarValue::Bool(bits & 1 == 1),
        v => v,
    }
}

fn gen_scalar(r: &mut Rng) -> ScalarCase {
    ScalarCase { on: pick_ctx(r), value: scalar_value(r), other: scalar_value(r) }
}

fn same_value(a: ScalarValue, b: ScalarValue) -> bool {
    a.scalar_type() == b.scalar_type() && a.to_ne_bytes() == b.to_ne_bytes()
}

fn run_scalar(k: &ScalarCase, env: &Env) {
    let s = ok(c(Scalar::new(env.ctx(k.on), k.value)));
    assert!(same_value(s.value().unwrap(), k.value));
    assert_eq!(s.scalar_type(), k.value.scalar_type());
    let r = c(s.set_value(k.other));
    if k.other.scalar_type() == k.value.scalar_type() {
        ok(r);
        assert!(same_value(s.value().unwrap(), k.other));
    } else {
        err(r, &[ErrorKind::InvalidType]);
        assert!(same_value(s.value().unwrap(), k.value));
    }
    let g = c(s.get::<u64>());
    if k.value.scalar_type() == ScalarType::Uint64 {
        ok(g);
    } else {
        err(g, &[ErrorKind::InvalidType]);
    }
    let g = c(s.get::<usize>());
    if k.value.scalar_type() == ScalarType::Size {
        ok(g);
    } else {
        err(g, &[ErrorKind::InvalidType]);
    }
}

// ---------------------------------------------------------------------------------------------
// Pyramids, remaps.

#[derive(Debug)]
struct PyramidCase {
    on: Ctx,
    virt: bool,
    levels: usize,
    scale: f32,
    w: u32,
    h: u32,
    format: ImageFormat,
    level: usize,
    seed: u64,
}

fn gen_pyramid(r: &mut Rng) -> PyramidCase {
    let (w, h) = u32_dims(r);
    PyramidCase {
        on: pick_ctx(r),
        virt: r.chance(15),
        levels: if r.chance(70) { r.below(MAX_PYRAMID_LEVELS as u64 + 3) as usize } else { usize_edge(r) },
        scale: if r.chance(85) {
            r.pick(&[PYRAMID_SCALE_HALF, PYRAMID_SCALE_ORB])
        } else {
            r.pick(&[0.0, 1.0, 2.0, -0.5, f32::NAN, f32::INFINITY, 0.25])
        },
        w,
        h,
        format: image_format(r),
        level: if r.chance(80) { r.below(MAX_PYRAMID_LEVELS as u64 + 1) as usize } else { usize_edge(r) },
        seed: r.next(),
    }
}

fn run_pyramid(k: &PyramidCase, env: &Env) {
    // Level sizes from any meta: at most MAX_PYRAMID_LEVELS, level 0 first, never growing.
    let meta = PyramidMeta { levels: k.levels, scale: k.scale, width: k.w, height: k.h, format: k.format };
    let sizes = meta.level_sizes();
    assert_eq!(sizes.len(), k.levels.min(MAX_PYRAMID_LEVELS));
    if let Some(&first) = sizes.first() {
        assert_eq!(first, (k.w, k.h));
    }
    let scale_ok = k.scale == PYRAMID_SCALE_HALF || k.scale == PYRAMID_SCALE_ORB;
    if scale_ok {
        assert!(sizes.windows(2).all(|p| p[1].0 <= p[0].0 && p[1].1 <= p[0].1), "{sizes:?}");
    }
    let levels_ok = (1..=MAX_PYRAMID_LEVELS).contains(&k.levels);
    let known = k.w != 0 && k.h != 0 && k.format != ImageFormat::Virtual;
    let r = if k.virt {
        c(Pyramid::new_virtual(env.graph(k.on), k.levels, k.scale, k.w, k.h, k.format))
    } else {
        c(Pyramid::new(env.ctx(k.on), k.levels, k.scale, k.w, k.h, k.format))
    };
    if !scale_ok || !levels_ok || (!k.virt && !known) {
        err(r, &[ErrorKind::InvalidParameters]);
        return;
    }
    let level0 = if known { image_bytes(k.format, k.w, k.h) } else { Ok(0) };
    let p = match level0 {
        Err(kind) => {
            // Level 0 is refused like an image of its size.
            err(r, &[kind, ErrorKind::NoResources]);
            return;
        }
        // Every level is a data object of its own: the context's object count may run out.
        Ok(_) => match ok_or(r, &[ErrorKind::NoResources]) {
            Some(p) => p,
            None => return,
        },
    };
    assert_eq!((p.levels(), p.width(), p.height(), p.format()), (k.levels, k.w, k.h, k.format));
    for (i, &(w, h)) in sizes.iter().enumerate() {
        let l = ok(c(p.level(i)));
        if known {
            assert_eq!((l.width(), l.height(), l.format()), (w, h, k.format), "level {i}");
        }
    }
    err(c(p.level(k.levels.saturating_add(k.level))), &[ErrorKind::InvalidParameters]);
    if !k.virt {
        let i = k.level % k.levels;
        let l = ok(c(p.level(i)));
        let bytes = image_bytes(k.format, l.width(), l.height()).expect("a level's size is an image's");
        with_px!(k.format, 0, T => {
            let v = T::px(k.seed);
            let last = Rect::new(l.width() - 1, l.height() - 1, l.width(), l.height());
            if alloc_ok(k.on, bytes, c(l.copy_from(last, 0, &[v]))).is_some() {
                let mut back = [T::default()];
                ok(c(p.level(i).and_then(|again| again.copy_to(last, 0, &mut back))));
                assert_eq!(back[0], v, "a level is the same image each time");
            }
        });
    }
}

#[derive(Debug)]
struct RemapCase {
    on: Ctx,
    virt: bool,
    src: (u32, u32),
    dst: (u32, u32),
    point: (u32, u32),
    patch: Rect,
    seed: u64,
}

fn gen_remap(r: &mut Rng) -> RemapCase {
    let dst = u32_dims(r);
    let point = if r.chance(70) {
        (r.below(dst.0.max(1) as u64) as u32, r.below(dst.1.max(1) as u64) as u32)
    } else {
        (u32_edge(r), u32_edge(r))
    };
    RemapCase {
        on: pick_ctx(r),
        virt: r.chance(10),
        src: u32_dims(r),
        dst,
        point,
        patch: rect_in(r, dst.0, dst.1),
        seed: r.next(),
    }
}

fn run_remap(k: &RemapCase, env: &Env) {
    let ((sw, sh), (dw, dh)) = (k.src, k.dst);
    let r = if k.virt {
        c(Remap::new_virtual(env.graph(k.on), sw, sh, dw, dh))
    } else {
        c(Remap::new(env.ctx(k.on), sw, sh, dw, dh))
    };
    if sw == 0 || sh == 0 || dw == 0 || dh == 0 {
        err(r, &[ErrorKind::InvalidParameters]);
        return;
    }
    let bytes = dw as u128 * dh as u128 * 8;
    if bytes > isize::MAX as u128 {
        err(r, &[ErrorKind::InvalidDimension]);
        return;
    }
    let m = ok(r);
    assert_eq!(
        m.meta(),
        RemapMeta { source_width: sw, source_height: sh, destination_width: dw, destination_height: dh }
    );
    let p = Coordinates2dF::make(k.seed);
    let (x, y) = k.point;
    let r = c(m.set_point(x, y, p));
    if k.virt {
        err(r, &[ErrorKind::OptimizedAway, ErrorKind::InvalidParameters]);
        return;
    }
    if x < dw && y < dh {
        if alloc_ok(k.on, bytes, r).is_none() {
            return;
        }
        assert_eq!(ok(c(m.point(x, y))), p);
    } else {
        err(r, &[ErrorKind::InvalidParameters]);
        err(c(m.point(x, y)), &[ErrorKind::InvalidParameters]);
    }
    let n = k.patch.width() as usize * k.patch.height() as usize;
    if inside(k.patch, dw, dh) && n > COPY_MOST {
        // The length is checked before anything is allocated.
        let mut out = vec![Coordinates2dF::default(); 16];
        err(c(m.copy_patch_to(k.patch, &mut out)), &[ErrorKind::InvalidParameters]);
    } else if inside(k.patch, dw, dh) {
        let src = values(k.seed, n, Coordinates2dF::make);
        if alloc_ok(k.on, bytes, c(m.copy_patch_from(k.patch, &src))).is_some() {
            let mut out = vec![Coordinates2dF::default(); n];
            ok(c(m.copy_patch_to(k.patch, &mut out)));
            assert_eq!(out, src, "a remap patch round-trips");
            err(c(m.copy_patch_to(k.patch, &mut out[1..])), &[ErrorKind::InvalidParameters]);
        }
    } else {
        let mut out = vec![Coordinates2dF::default(); n.min(64)];
        err(c(m.copy_patch_to(k.patch, &mut out)), &[ErrorKind::InvalidParameters]);
    }
}

// ---------------------------------------------------------------------------------------------
// Object arrays.

#[derive(Debug)]
struct ObjectArrayCase {
    on: Ctx,
    virt: bool,
    exemplar: u64,
    count: usize,
    index: usize,
}

fn gen_object_array(r: &mut Rng) -> ObjectArrayCase {
    let count = match r.below(10) {
        0..=5 => r.below(20) as usize,
        6 => r.pick(&[MAX_OBJECT_ARRAY_ITEMS - 1, MAX_OBJECT_ARRAY_ITEMS, MAX_OBJECT_ARRAY_ITEMS + 1, 4096]),
        _ => usize_edge(r),
    };
    ObjectArrayCase { on: pick_ctx(r), virt: r.chance(15), exemplar: r.below(11), count, index: usize_edge(r) }
}

fn exemplar(which: u64, ctx: &Context, g: &Graph) -> Reference {
    match which {
        0 => Image::new(ctx, 1 << 16, 1 << 16, ImageFormat::Rgbx).unwrap().into(),
        1 => Scalar::new(ctx, ScalarValue::Size(usize::MAX)).unwrap().into(),
        2 => Array::new(ctx, ArrayItemType::Keypoint, 1 << 40).unwrap().into(),
        3 => UserDataObject::new(ctx, "blob", isize::MAX as usize).unwrap().into(),
        4 => Matrix::new(ctx, ScalarType::Float64, 1 << 20, 1 << 20).unwrap().into(),
        5 => Lut::new(ctx, ScalarType::Int16, 65536).unwrap().into(),
        6 => Distribution::new(ctx, 1 << 20, i32::MIN, u32::MAX).unwrap().into(),
        7 => Pyramid::new(ctx, 4, PYRAMID_SCALE_HALF, 1 << 20, 1 << 10, ImageFormat::U8).unwrap().into(),
        8 => Remap::new(ctx, 1, 1, 1 << 20, 1 << 20).unwrap().into(),
        9 => Tensor::new(ctx, &[1 << 20, 1 << 20, 1 << 10], ScalarType::Int64, 0).unwrap().into(),
        _ => Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap().into(),
    }
}

fn run_object_array(k: &ObjectArrayCase, env: &Env) {
    let (ctx, g) = (env.ctx(k.on), env.graph(k.on));
    let ex = exemplar(k.exemplar, ctx, g);
    let per_item = match &ex {
        Reference::Pyramid(p) => 1 + p.levels(),
        _ => 1,
    };
    let live = ctx.usage(ResourceKind::DataObjects);
    let r = if k.virt { c(ObjectArray::new_virtual(g, &ex, k.count)) } else { c(ObjectArray::new(ctx, &ex, k.count)) };
    if k.count == 0 || k.count > MAX_OBJECT_ARRAY_ITEMS {
        err(r, &[ErrorKind::InvalidParameters]);
        return;
    }
    // A real array of a virtual image of unknown size: its items would need a size.
    if !k.virt && k.exemplar == 10 {
        err(r, &[ErrorKind::InvalidParameters]);
        return;
    }
    let needed = 1 + k.count * per_item;
    if live.current + needed > live.max {
        err(r, &[ErrorKind::NoResources]);
        assert_eq!(ctx.usage(ResourceKind::DataObjects).current, live.current, "a refused array holds nothing");
        return;
    }
    let a = ok(r);
    assert_eq!((a.count(), a.item_type(), a.items().len()), (k.count, ex.data_type(), k.count));
    let want = ex.meta();
    for i in [0, k.count / 2, k.count - 1] {
        let item = ok(c(a.item(i)));
        assert_eq!(item.meta(), want, "item {i} has the exemplar's meta data");
        assert_eq!(item.is_virtual(), k.virt);
    }
    err(c(a.item(k.count.saturating_add(k.index % 3))), &[ErrorKind::InvalidParameters]);
    let wrong = if ex.data_type() == DataType::Scalar {
        c(a.item_as::<Image>(0)).map(|_| ())
    } else {
        c(a.item_as::<Scalar>(0)).map(|_| ())
    };
    err(wrong, &[ErrorKind::InvalidType]);
    let idx = k.index % k.count;
    if let Reference::Scalar(s) = ok(c(a.item(idx))) {
        if k.virt {
            // An item of a virtual array is virtual: the application's access is refused.
            err(c(s.set(1usize)), &[ErrorKind::OptimizedAway]);
            return;
        }
        ok(c(s.set(u32::MAX as usize + 1)));
        assert_eq!(ok(c(a.item_as::<Scalar>(idx))).get::<usize>().unwrap(), u32::MAX as usize + 1);
    }
}

// ---------------------------------------------------------------------------------------------
// Tensors.

#[derive(Debug)]
struct TensorCase {
    on: Ctx,
    virt: bool,
    dims: Vec<usize>,
    data_type: ScalarType,
    fpp: i8,
    view: (Vec<usize>, Vec<usize>),
    patch: (Vec<usize>, Vec<usize>),
    seed: u64,
}

/// A box of `dims`: mostly inside and small, else anything.
fn gen_box(r: &mut Rng, dims: &[usize]) -> (Vec<usize>, Vec<usize>) {
    if r.chance(80) && dims.iter().all(|&d| d > 0) {
        let mut budget = 4096usize;
        let (mut s, mut e) = (Vec::new(), Vec::new());
        for &d in dims {
            let st = if r.chance(30) { d - 1 } else { r.below(d as u64) as usize };
            let most = (d - st).min(budget).max(1);
            let len = 1 + r.below(most as u64) as usize;
            budget = (budget / len).max(1);
            s.push(st);
            e.push(st + len);
        }
        if r.chance(10) {
            s.push(0);
            e.push(1);
        }
        return (s, e);
    }
    let n = if r.chance(70) { dims.len() } else { r.below(8) as usize };
    ((0..n).map(|_| usize_edge(r)).collect(), (0..n).map(|_| usize_edge(r)).collect())
}

fn gen_tensor(r: &mut Rng) -> TensorCase {
    let n = match r.below(10) {
        0 => 0,
        1 => 7 + r.below(3) as usize,
        _ => 1 + r.below(MAX_TENSOR_DIMS as u64) as usize,
    };
    let dims: Vec<usize> = (0..n)
        .map(|_| match r.below(10) {
            0..=5 => small(r, 12) as usize,
            6 => 1,
            _ => usize_edge(r),
        })
        .collect();
    let view = gen_box(r, &dims);
    let vdims: Vec<usize> = view.0.iter().zip(&view.1).map(|(s, e)| e.saturating_sub(*s)).collect();
    let patch = gen_box(r, &vdims);
    TensorCase {
        on: pick_ctx(r),
        virt: r.chance(10),
        dims,
        data_type: scalar_type(r),
        fpp: r.next() as i8,
        view,
        patch,
        seed: r.next(),
    }
}

fn tensor_model(dims: &[usize], t: ScalarType) -> std::result::Result<u128, ErrorKind> {
    if dims.is_empty() || dims.len() > MAX_TENSOR_DIMS || dims.contains(&0) {
        return Err(ErrorKind::InvalidDimension);
    }
    if !is_numeric(t) {
        return Err(ErrorKind::InvalidType);
    }
    let mut n = t.size() as u128;
    for &d in dims {
        n = n.saturating_mul(d as u128);
    }
    if n > isize::MAX as u128 { Err(ErrorKind::InvalidDimension) } else { Ok(n) }
}

fn box_ok(dims: &[usize], (s, e): &(Vec<usize>, Vec<usize>)) -> bool {
    s.len() == dims.len() && e.len() == dims.len() && s.iter().zip(e).zip(dims).all(|((s, e), d)| s < e && e <= d)
}

fn run_tensor(k: &TensorCase, env: &Env) {
    if k.virt {
        let r = c(Tensor::new_virtual(env.graph(k.on), &k.dims, Some(k.data_type), k.fpp));
        // Partial meta (0 = unknown dimension) is accepted; the element count is multiplied out in
        // `usize`, then by the element size within `isize`.
        let elements = k.dims.iter().try_fold(1u128, |a, &d| Some(a * d as u128).filter(|&n| n <= usize::MAX as u128));
        let expect = if k.dims.len() > MAX_TENSOR_DIMS {
            Err(ErrorKind::InvalidDimension)
        } else if !is_numeric(k.data_type) {
            Err(ErrorKind::InvalidType)
        } else if elements.is_none_or(|n| n * k.data_type.size() as u128 > isize::MAX as u128) {
            Err(ErrorKind::InvalidDimension)
        } else {
            Ok(())
        };
        match expect {
            Err(kind) => drop(err(r, &[kind])),
            Ok(()) => {
                let t = ok(r);
                assert_eq!(t.dims(), k.dims);
                err(c(t.view(&k.view.0, &k.view.1)), &[ErrorKind::InvalidReference]);
            }
        }
        return;
    }
    let r = c(Tensor::new(env.ctx(k.on), &k.dims, k.data_type, k.fpp));
    let bytes = match tensor_model(&k.dims, k.data_type) {
        Err(kind) => {
            err(r, &[kind]);
            return;
        }
        Ok(b) => b,
    };
    let t = ok(r);
    assert_eq!(
        (t.dims(), t.num_dims(), t.data_type(), t.fixed_point_position()),
        (k.dims.clone(), k.dims.len(), Some(k.data_type), k.fpp)
    );
    assert!(!t.is_allocated());
    let r = c(t.view(&k.view.0, &k.view.1));
    if !box_ok(&k.dims, &k.view) {
        err(r, &[ErrorKind::InvalidParameters]);
        return;
    }
    let v = ok(r);
    let vdims: Vec<usize> = k.view.0.iter().zip(&k.view.1).map(|(s, e)| e - s).collect();
    assert_eq!(v.dims(), vdims);
    with_elem!(k.data_type, T => {
        let (s, e) = &k.patch;
        let n: usize = if box_ok(&vdims, &k.patch) { s.iter().zip(e).map(|(s, e)| e - s).product() } else { 3 };
        if n > COPY_MOST {
            // The length is checked before anything is allocated.
            err(c(v.copy_patch_from(s, e, &values(k.seed, 16, T::make))), &[ErrorKind::InvalidParameters]);
            return;
        }
        let src = values(k.seed, n, T::make);
        let r = c(v.copy_patch_from(s, e, &src));
        if !box_ok(&vdims, &k.patch) {
            err(r, &[ErrorKind::InvalidParameters]);
            return;
        }
        if alloc_ok(k.on, bytes, r).is_none() {
            return;
        }
        // Read back through the view and through the tensor, at the view's offset.
        let mut out = vec![T::default(); n];
        ok(c(v.copy_patch_to(s, e, &mut out)));
        assert_eq!(out, src, "a tensor patch round-trips");
        let ps: Vec<usize> = s.iter().zip(&k.view.0).map(|(a, b)| a + b).collect();
        let pe: Vec<usize> = e.iter().zip(&k.view.0).map(|(a, b)| a + b).collect();
        let mut out = vec![T::default(); n];
        ok(c(t.copy_patch_to(&ps, &pe, &mut out)));
        assert_eq!(out, src, "a view writes its tensor's elements");
        err(c(t.copy_patch_to(&ps, &pe, &mut out[1..])), &[ErrorKind::InvalidParameters]);
        with_elem!(other_numeric(k.data_type), W => {
            let mut w = vec![W::default(); n];
            err(c(t.copy_patch_to(&ps, &pe, &mut w)), &[ErrorKind::InvalidType]);
        });
    });
}

// ---------------------------------------------------------------------------------------------
// User data objects.

#[derive(Debug)]
struct UserDataCase {
    on: Ctx,
    virt: bool,
    name_len: usize,
    size: usize,
    offset: usize,
    len: usize,
    seed: u64,
}

fn gen_user_data(r: &mut Rng) -> UserDataCase {
    let size = if r.chance(50) { small(r, 5000) as usize } else { usize_edge(r) };
    let offset = match r.below(3) {
        0 => r.below(size.max(1) as u64) as usize,
        1 => size.saturating_sub(r.below(4) as usize),
        _ => usize_edge(r),
    };
    UserDataCase {
        on: pick_ctx(r),
        virt: r.chance(10),
        name_len: r.pick(&[0, 1, 10, 63, 64, 65, 200]),
        size,
        offset,
        len: r.below(300) as usize,
        seed: r.next(),
    }
}

fn run_user_data(k: &UserDataCase, env: &Env) {
    let name = "n".repeat(k.name_len);
    let r = if k.virt {
        c(UserDataObject::new_virtual(env.graph(k.on), &name, k.size))
    } else {
        c(UserDataObject::new(env.ctx(k.on), &name, k.size))
    };
    if k.name_len >= MAX_TYPE_NAME || k.size == 0 || k.size > isize::MAX as usize {
        err(r, &[ErrorKind::InvalidParameters]);
        return;
    }
    let u = ok(r);
    assert_eq!((u.size(), u.type_name(), u.is_allocated()), (k.size, name.as_str(), false));
    let src = values(k.seed, k.len, |v| v as u8);
    let r = c(u.copy_from(k.offset, &src));
    let fits = k.offset as u128 + k.len as u128 <= k.size as u128;
    if !fits {
        err(r, &[ErrorKind::InvalidParameters]);
        assert!(!u.is_allocated(), "a refused copy allocates nothing");
        return;
    }
    if k.virt {
        err(r, &[ErrorKind::OptimizedAway]);
        return;
    }
    if alloc_ok(k.on, k.size as u128, r).is_none() {
        return;
    }
    let mut out = vec![0u8; k.len];
    ok(c(u.copy_to(k.offset, &mut out)));
    assert_eq!(out, src, "user data round-trips");
    let m = ok(c(u.map()));
    assert_eq!(m.len(), k.size);
    assert_eq!(&m[k.offset..k.offset + k.len], &src[..]);
    drop(m);
    let mut w = ok(c(u.map_mut()));
    if let Some(b) = w.last_mut() {
        *b = 0xA5;
    }
    drop(w);
    let mut last = [0u8];
    ok(c(u.copy_to(k.size - 1, &mut last)));
    assert_eq!(last[0], 0xA5);
    err(c(u.copy_to(k.size, &mut last)), &[ErrorKind::InvalidParameters]);
    err(c(u.copy_to(usize::MAX, &mut last)), &[ErrorKind::InvalidParameters]);
}

// ---------------------------------------------------------------------------------------------
// The run.

#[derive(Debug)]
enum Case {
    Image(ImageCase),
    Handle(HandleCase),
    Array(ArrayCase),
    Matrix(MatrixCase),
    Small(SmallObjectsCase),
    Threshold(ThresholdCase),
    Scalar(ScalarCase),
    Pyramid(PyramidCase),
    Remap(RemapCase),
    ObjectArray(ObjectArrayCase),
    Tensor(TensorCase),
    UserData(UserDataCase),
}

impl Case {
    fn generate(r: &mut Rng) -> Case {
        match r.below(24) {
            0..=4 => Case::Image(gen_image(r)),
            5 => Case::Handle(gen_handle(r)),
            6..=8 => Case::Array(gen_array(r)),
            9..=10 => Case::Matrix(gen_matrix(r)),
            11..=12 => Case::Small(gen_small_objects(r)),
            13 => Case::Threshold(gen_threshold(r)),
            14 => Case::Scalar(gen_scalar(r)),
            15..=16 => Case::Pyramid(gen_pyramid(r)),
            17..=18 => Case::Remap(gen_remap(r)),
            19 => Case::ObjectArray(gen_object_array(r)),
            20..=21 => Case::Tensor(gen_tensor(r)),
            _ => Case::UserData(gen_user_data(r)),
        }
    }

    fn run(&self, env: &Env) {
        match self {
            Case::Image(k) => run_image(k, env),
            Case::Handle(k) => run_handle(k, env),
            Case::Array(k) => run_array(k, env),
            Case::Matrix(k) => run_matrix(k, env),
            Case::Small(k) => run_small_objects(k, env),
            Case::Threshold(k) => run_threshold(k, env),
            Case::Scalar(k) => run_scalar(k, env),
            Case::Pyramid(k) => run_pyramid(k, env),
            Case::Remap(k) => run_remap(k, env),
            Case::ObjectArray(k) => run_object_array(k, env),
            Case::Tensor(k) => run_tensor(k, env),
            Case::UserData(k) => run_user_data(k, env),
        }
    }
}

const CHILD: &str = "VX_API_SIZES_CHILD";

/// The cases themselves; runs only in the child process (see below).
#[test]
fn api_sizes_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let seed = std::env::var("VX_API_SIZES_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x33_5EED_u64);
    let cases: usize = std::env::var("VX_API_SIZES_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(40_000);
    let unlimited = Context::builder().threads(1).build().unwrap();
    let limited = Context::builder().threads(1).max_buffer_bytes(LIMIT).build().unwrap();
    let env = Env {
        g_unlimited: Graph::new(&unlimited).unwrap(),
        g_limited: Graph::new(&limited).unwrap(),
        unlimited,
        limited,
    };
    let baseline = |c: &Context| c.usage(ResourceKind::DataObjects).current;
    let (b_unlimited, b_limited) = (baseline(&env.unlimited), baseline(&env.limited));
    let start = std::time::Instant::now();
    let mut rng = Rng(seed);
    let mut failures: Vec<String> = Vec::new();
    for i in 0..cases {
        let case = Case::generate(&mut rng);
        eprintln!("api_sizes case {i}: {case:?}");
        let result = catch_unwind(AssertUnwindSafe(|| case.run(&env)));
        if let Err(p) = result {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("case {i}: {case:?}: {msg}"));
        }
        // Everything a case made is gone with it: no bytes, no objects left counted.
        for (ctx, base, name) in [(&env.unlimited, b_unlimited, "unlimited"), (&env.limited, b_limited, "limited")] {
            let (bytes, objects) = (ctx.buffer_bytes().current, baseline(ctx));
            if bytes != 0 || objects != base {
                failures.push(format!("case {i}: {case:?}: the {name} context still counts {bytes} bytes, {objects} objects (baseline {base})"));
            }
        }
    }
    let calls = CALLS.load(Ordering::Relaxed);
    println!(
        "api_sizes: {cases} cases, {calls} calls, seed {seed}, {:.1} s, {} allocator refusals (last {} bytes; \
         each refused cleanly), {} failures",
        start.elapsed().as_secs_f64(),
        REFUSED_COUNT.load(Ordering::Relaxed),
        REFUSED_LAST.load(Ordering::Relaxed),
        failures.len()
    );
    assert!(failures.is_empty(), "{} failing cases:\n{}", failures.len(), failures.join("\n"));
}

/// Each panic's place and message (the line after), at most 20.
fn panics(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("panicked at") && out.len() < 20 {
            out.push(format!("{l} {}", lines.get(i + 1).unwrap_or(&"")));
        }
    }
    out.join("\n")
}

/// Runs the cases in a child process: a panic is a failure, and so is an abort (an unchecked size
/// reaching an infallible allocation the capped allocator refused), reported with the case.
#[test]
fn every_data_object_call_returns_ok_or_a_clean_error() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "api_sizes_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The child's summary (after libtest's "test api_sizes_child ... " on the same line).
    let summary: Vec<&str> = stdout.lines().filter_map(|l| l.find("api_sizes: ").map(|i| &l[i..])).collect();
    println!("{}", summary.join("\n"));
    if out.status.success() && stdout.contains("1 passed") {
        return;
    }
    let last_case = stderr.lines().rev().find(|l| l.starts_with("api_sizes case ")).unwrap_or("(none started)");
    let refused: Vec<&str> = stderr.lines().filter(|l| l.contains("allocator refused")).collect();
    let failures: String =
        stderr.lines().skip_while(|l| !l.contains("failing cases")).take(40).collect::<Vec<_>>().join("\n");
    use std::os::unix::process::ExitStatusExt;
    let how = match out.status.signal() {
        Some(s) => format!("was killed by signal {s}"),
        None => format!("failed ({})", out.status),
    };
    panic!(
        "the child {how}.\nlast case started: {last_case}\nallocator refusals: {:?}\n{failures}\npanics:\n{}",
        refused.iter().rev().take(5).collect::<Vec<_>>(),
        panics(&stderr),
    );
}
