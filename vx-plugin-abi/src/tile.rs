//! Tile access (`vx_tile_t`, `vxImagePixel`, `vxTileWidth`, …): the `repr(C)` descriptors the
//! runtime hands a tiling kernel, and the safe typed views over them.
//!
//! A tiling function receives [`TileArgs`]: one [`TileParam`] per kernel parameter (an input
//! image tile, an output image tile, or an input scalar by value) plus its tile memory. Views:
//!
//! - [`Tile`] (input): [`Tile::pixel`] reads relative to the tile with a neighborhood offset, like
//!   `vxImagePixel`; [`Tile::row`] gives the row slice a fast path can vectorize.
//! - [`TileMut`] (output): [`TileMut::set`] / [`TileMut::row_mut`].
//!
//! Soundness when an input and an output share a buffer (buffer aliasing): the descriptor's
//! [`TILE_ALIASED`] flag is then set, and the views hand out **no** slices — `row` and `row_mut`
//! return `None` — so no `&[T]` ever overlaps a `&mut [T]`; by-value `pixel`/`get`/`set` go through
//! raw pointers and stay valid. For read-modify-write of an aliased pair, [`TileArgs::in_place`]
//! (the macros' `&mut InPlace<T>` argument) owns both parameters and hands out the shared rows. Every read is bounded by the descriptor's `readable` rectangle and
//! every write by the tile itself; a kernel that strays panics (inside the runtime's catch) instead
//! of touching memory it does not own.

use std::borrow::Cow;
use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use abi_stable::StableAbi;

use crate::geometry::{Neighborhood, Rect, TileBlockSize};
use crate::image_format::ImageFormat;
use crate::status::Status;

/// Most parameters a tiling kernel may have.
pub const MAX_TILING_PARAMS: usize = 16;

/// [`TileDesc::flags`] bit: an input of this node may share memory with an output.
pub const TILE_ALIASED: u32 = 1;

/// [`TileDesc::flags`] bit (ABI v8): the image behind this descriptor is a fused group's small
/// line buffer, read back at once — write it with ordinary stores, never non-temporal ones.
pub const TILE_LINE_BUFFER: u32 = 2;

/// [`TileDesc::flags`] bits 8–15 (added within ABI v8: a host before it leaves them 0): how many
/// threads were asked to share the tiles of this run of the node, each writing its own bands of
/// the image (no more than there are tiles; one invited may come late and find none left),
/// saturated at 255 (1: the calling thread alone; 0: the host does not say, read as 1 —
/// [`TileMut::run_threads`]). A kernel that chooses its stores by how much of the image one
/// thread writes (non-temporal stores past the cache a core has) divides by it: two threads on
/// two cores each keep half the image in their caches.
pub const TILE_RUN_THREADS_SHIFT: u32 = 8;

/// The bits of [`TileDesc::flags`] that hold the run's thread count ([`TILE_RUN_THREADS_SHIFT`]).
pub const TILE_RUN_THREADS_MASK: u32 = 0xff << TILE_RUN_THREADS_SHIFT;

/// The [`TileDesc::flags`] bits that say `threads` threads share a run's tiles (saturated at 255).
pub const fn tile_run_threads_flags(threads: usize) -> u32 {
    let n = if threads > 255 { 255 } else { threads as u32 };
    n << TILE_RUN_THREADS_SHIFT
}

/// The run's thread count in a descriptor's `flags` (0, from a host that does not say, reads as 1).
fn run_threads_of(flags: u32) -> u32 {
    ((flags & TILE_RUN_THREADS_MASK) >> TILE_RUN_THREADS_SHIFT).max(1)
}

/// The `vx_tile_t` content for one single-plane image.
#[repr(C)]
#[derive(Clone, Copy, Debug, StableAbi)]
pub struct TileDesc {
    /// Address of pixel (0, 0) of the image; pixel (x, y) is at `base + y*stride_y + x*stride_x`.
    pub base: *mut u8,
    /// The image format's FourCC ([`ImageFormat::fourcc`]).
    pub format: u32,
    /// Top-left pixel of the tile, in image coordinates.
    pub tile_x: u32,
    /// First output row of the tile.
    pub tile_y: u32,
    /// Tile size in pixels.
    pub width: u32,
    /// Height of the tile in pixels.
    pub height: u32,
    /// Bytes per pixel.
    pub stride_x: i32,
    /// Bytes per row.
    pub stride_y: i32,
    /// The kernel's output tile block.
    pub block: TileBlockSize,
    /// The node's input neighborhood.
    pub neighborhood: Neighborhood,
    /// Image size.
    pub image_width: u32,
    /// Height of the whole image.
    pub image_height: u32,
    /// The pixels this view may read: the tile grown by the neighborhood, clipped to the image.
    pub readable: Rect,
    /// [`TILE_ALIASED`], [`TILE_LINE_BUFFER`] or both, or 0, and the run's thread count in bits
    /// 8–15 ([`TILE_RUN_THREADS_SHIFT`]); bits 16–31 are reserved (0). Test the bits you need
    /// (the accessors do), never the whole word.
    pub flags: u32,
}

/// What a [`TileParam`] holds.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, StableAbi)]
pub enum TileParamKind {
    /// An optional parameter that is not set.
    Absent = 0,
    /// `ptr` is a `*const TileDesc` of an input image.
    InputImage = 1,
    /// `ptr` is a `*const TileDesc` of an output image.
    OutputImage = 2,
    /// `ptr` points to the scalar's value; `type_code` is its `vx_type_e`.
    Scalar = 3,
    /// Row entries only (ABI v8): `ptr` is a `*const RowSourceDesc` of an input image given as a
    /// table of row pointers ([`crate::module_abi::RowSourceDesc`]).
    InputRows = 4,
    /// Row entries only (ABI v8): `ptr` is a `*const RowSinkDesc`, the output rows of the call
    /// ([`crate::module_abi::RowSinkDesc`]).
    OutputRows = 5,
}

/// One entry of the parameters array (the spec's `void *parameters[]`, with its type made explicit).
#[repr(C)]
#[derive(Clone, Copy, Debug, StableAbi)]
pub struct TileParam {
    /// What the parameter is.
    pub kind: TileParamKind,
    /// Image FourCC or scalar `vx_type_e`.
    pub type_code: u32,
    /// The parameter's descriptor or value (see `kind`).
    pub ptr: *mut c_void,
}

impl TileParam {
    /// An unset optional parameter.
    pub const ABSENT: TileParam = TileParam { kind: TileParamKind::Absent, type_code: 0, ptr: std::ptr::null_mut() };
}

/// Why a tiling function failed: a status and a message the runtime copies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileError {
    /// The status the node reports.
    pub status: Status,
    /// What went wrong.
    pub message: Cow<'static, str>,
}

impl TileError {
    /// An error with a status and a message.
    pub fn new(status: Status, message: impl Into<Cow<'static, str>>) -> TileError {
        TileError { status, message: message.into() }
    }
}

impl fmt::Display for TileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.message, self.status)
    }
}

impl std::error::Error for TileError {}

mod sealed {
    pub trait Sealed {}
}

/// Pixel types of single-plane images: `u8` ↔ U8, `u16` ↔ U16, `i16` ↔ S16, `u32` ↔ U32,
/// `i32` ↔ S32, `[u8; 3]` ↔ RGB, `[u8; 4]` ↔ RGBX. Sealed: plain old data, any bit pattern valid.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pixel type",
    label = "not a pixel type",
    note = "images hold `u8` (U8), `u16` (U16), `i16` (S16), `u32` (U32), `i32` (S32), `[u8; 3]` (RGB) or `[u8; 4]` (RGBX)"
)]
pub trait TilePixel: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// The image format whose pixels are this type.
    const FORMAT: ImageFormat;
}

macro_rules! tile_pixel {
    ($($t:ty => $f:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl TilePixel for $t { const FORMAT: ImageFormat = ImageFormat::$f; }
    )*};
}
tile_pixel!(u8 => U8, u16 => U16, i16 => S16, u32 => U32, i32 => S32, [u8; 3] => Rgb, [u8; 4] => Rgbx);

/// Scalar types a tiling kernel receives by value, with their `vx_type_e` codes.
pub trait TileScalar: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The `vx_type_e` code.
    const TYPE_CODE: u32;
}

macro_rules! tile_scalar {
    ($($t:ty => $c:expr),*) => {$(
        impl TileScalar for $t { const TYPE_CODE: u32 = $c; }
    )*};
}
impl sealed::Sealed for i8 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for i64 {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for f64 {}
impl sealed::Sealed for bool {}
use crate::wire::scalar_type as st;
tile_scalar!(i8 => st::INT8, u8 => st::UINT8, i16 => st::INT16, u16 => st::UINT16, i32 => st::INT32, u32 => st::UINT32,
    i64 => st::INT64, u64 => st::UINT64, f32 => st::FLOAT32, f64 => st::FLOAT64, bool => st::BOOL);

/// The arguments of one tiling-function call: parameters and tile memory.
pub struct TileArgs<'a> {
    params: &'a [TileParam],
    tile_memory: *mut u8,
    tile_memory_size: usize,
    /// Output parameters already handed out as [`TileMut`] (one view per output).
    taken: Cell<u64>,
    /// Input parameters handed out as [`Tile`] (an in-place view needs its input to itself).
    inputs_out: Cell<u64>,
    /// Input parameters owned by an [`InPlace`] view (no [`Tile`] of them is handed out).
    in_place: Cell<u64>,
    _lt: PhantomData<&'a mut [u8]>,
}

/// Input scalar parameter `i` of a tiling or row call, by value: what [`TileArgs::scalar`] and
/// [`RowArgs::scalar`] both read.
///
/// # Safety
///
/// Every entry of `params` whose kind is the scalar kind points to a value of its type code (the
/// contract of [`TileArgs::new`] and [`RowArgs::new`]).
pub(crate) unsafe fn scalar_param<T: TileScalar>(params: &[TileParam], i: usize) -> Result<T, TileError> {
    let p = params.get(i).ok_or_else(|| TileError::new(Status::InvalidParameters, format!("no parameter {i}")))?;
    if p.kind != TileParamKind::Scalar {
        return Err(TileError::new(Status::InvalidParameters, format!("parameter {i} is not a scalar")));
    }
    if p.type_code != T::TYPE_CODE || p.ptr.is_null() {
        return Err(TileError::new(Status::InvalidType, format!("the scalar of parameter {i} has another type")));
    }
    // SAFETY: the entry points to a value of its type code (this function's contract), which is
    // T's; read_unaligned makes no alignment assumption.
    Ok(unsafe { (p.ptr as *const T).read_unaligned() })
}

fn bad(status: Status, msg: &'static str) -> TileError {
    TileError::new(status, msg)
}

impl<'a> TileArgs<'a> {
    /// Wrap the runtime's parameters for one tile.
    ///
    /// # Safety
    ///
    /// For `'a`: every image entry points to a valid [`TileDesc`] whose `base`, strides and image
    /// size describe memory that stays allocated; its `readable` rectangle lies inside the image and
    /// is not written by anyone unless `TILE_ALIASED` is set; the output tiles of all `TileArgs` alive
    /// at the same time are disjoint and nobody else accesses them; every scalar entry points to a
    /// value of its `type_code`; `tile_memory` is valid for `tile_memory_size` bytes (or null with
    /// size 0) and used by nobody else. `params.len() <= 64`.
    pub unsafe fn new(params: &'a [TileParam], tile_memory: *mut u8, tile_memory_size: usize) -> TileArgs<'a> {
        TileArgs {
            params,
            tile_memory,
            tile_memory_size,
            taken: Cell::new(0),
            inputs_out: Cell::new(0),
            in_place: Cell::new(0),
            _lt: PhantomData,
        }
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// True when the kernel has no parameters.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    fn desc<T: TilePixel>(&self, i: usize, kind: TileParamKind) -> Result<&'a TileDesc, TileError> {
        let p = self.params.get(i).ok_or_else(|| bad(Status::InvalidParameters, "no such parameter index"))?;
        if p.kind != kind {
            return Err(bad(
                Status::InvalidParameters,
                match kind {
                    TileParamKind::InputImage => "the parameter is not an input image",
                    _ => "the parameter is not an output image",
                },
            ));
        }
        if p.type_code != T::FORMAT.fourcc() {
            return Err(bad(Status::InvalidFormat, "the pixel type does not match the image format"));
        }
        // SAFETY: image entries point to a TileDesc valid for 'a (contract of `new`).
        Ok(unsafe { &*(p.ptr as *const TileDesc) })
    }

    /// Input image parameter `i` as a tile of `T` pixels.
    pub fn input<T: TilePixel>(&self, i: usize) -> Result<Tile<'a, T>, TileError> {
        let d = self.desc::<T>(i, TileParamKind::InputImage)?;
        if self.in_place.get() & (1u64 << i) != 0 {
            return Err(bad(Status::InvalidParameters, "the input belongs to an in-place view"));
        }
        self.inputs_out.set(self.inputs_out.get() | 1u64 << i);
        Ok(Tile { d, _t: PhantomData })
    }

    /// Input `input` and output `output` as one in-place view (buffer aliasing): read-modify-write
    /// rows of the output, which hold the input's pixels — the same memory when the runtime aliased
    /// the two parameters, a copy made on first access otherwise. Neither parameter can be handed
    /// out again in this call, so no other view can read what the view writes.
    pub fn in_place<T: TilePixel>(&self, input: usize, output: usize) -> Result<InPlace<'a, T>, TileError> {
        let src = self.desc::<T>(input, TileParamKind::InputImage)?;
        if (self.inputs_out.get() | self.in_place.get()) & (1u64 << input) != 0 {
            return Err(bad(Status::InvalidParameters, "the input is already in use by another view"));
        }
        let dst = self.output::<T>(output)?.d;
        self.in_place.set(self.in_place.get() | 1u64 << input);
        let aliased = src.flags & dst.flags & TILE_ALIASED != 0 && src.base == dst.base;
        if !aliased && src.flags & TILE_ALIASED != 0 {
            return Err(bad(Status::InvalidParameters, "the input shares memory with another output"));
        }
        Ok(InPlace { src, dst, aliased, copied: 0, _t: PhantomData })
    }

    /// Output image parameter `i` as a writable tile (once per call and parameter).
    pub fn output<T: TilePixel>(&self, i: usize) -> Result<TileMut<'a, T>, TileError> {
        let d = self.desc::<T>(i, TileParamKind::OutputImage)?;
        let bit = 1u64 << i;
        if self.taken.get() & bit != 0 {
            return Err(bad(Status::InvalidParameters, "the output tile is already in use"));
        }
        self.taken.set(self.taken.get() | bit);
        Ok(TileMut { d, _t: PhantomData })
    }

    /// Input scalar parameter `i`, by value.
    pub fn scalar<T: TileScalar>(&self, i: usize) -> Result<T, TileError> {
        // SAFETY: scalar entries point to a value of their type code (contract of `new`).
        unsafe { scalar_param(self.params, i) }
    }

    /// True when optional parameter `i` is set.
    pub fn is_present(&self, i: usize) -> bool {
        self.params.get(i).is_some_and(|p| p.kind != TileParamKind::Absent)
    }

    /// This tile's memory: the kernel's tile memory size times the tile blocks in the tile.
    pub fn tile_memory(&mut self) -> &mut [u8] {
        if self.tile_memory.is_null() || self.tile_memory_size == 0 {
            return &mut [];
        }
        // SAFETY: valid for tile_memory_size bytes and exclusive to this call (contract of `new`);
        // &mut self makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.tile_memory, self.tile_memory_size) }
    }

    /// Questions about the node this call runs for (`vxIsParameterAliased`).
    pub fn context(&self) -> TileContext<'a> {
        TileContext { params: self.params }
    }

    /// The raw parts, to forward the call across the module boundary (`vx_tiling_kernel_f`).
    pub fn as_raw(&self) -> (*const TileParam, u32, *mut u8, usize) {
        (self.params.as_ptr(), self.params.len() as u32, self.tile_memory, self.tile_memory_size)
    }

    /// Size of [`tile_memory`](Self::tile_memory) in bytes.
    pub fn tile_memory_size(&self) -> usize {
        self.tile_memory_size
    }
}

/// What a tiling function may ask about its node.
#[derive(Clone, Copy)]
pub struct TileContext<'a> {
    params: &'a [TileParam],
}

impl TileContext<'_> {
    /// `vxIsParameterAliased`: true when image parameters `a` and `b` share one buffer.
    pub fn is_parameter_aliased(&self, a: usize, b: usize) -> bool {
        let desc = |i: usize| {
            self.params.get(i).filter(|p| matches!(p.kind, TileParamKind::InputImage | TileParamKind::OutputImage)).map(
                |p| {
                    // SAFETY: image entries point to a TileDesc valid for 'a (contract of TileArgs::new).
                    unsafe { &*(p.ptr as *const TileDesc) }
                },
            )
        };
        match (desc(a), desc(b)) {
            (Some(x), Some(y)) => {
                a != b && x.flags & TILE_ALIASED != 0 && y.flags & TILE_ALIASED != 0 && x.base == y.base
            }
            _ => false,
        }
    }
}

macro_rules! geometry {
    () => {
        /// `tile_x`: the tile's left column in the image.
        pub fn x(&self) -> u32 {
            self.d.tile_x
        }
        /// `tile_y`: the tile's top row in the image.
        pub fn y(&self) -> u32 {
            self.d.tile_y
        }
        /// `vxTileWidth`.
        pub fn width(&self) -> u32 {
            self.d.width
        }
        /// `vxTileHeight`.
        pub fn height(&self) -> u32 {
            self.d.height
        }
        /// `vxTileBlockWidth`.
        pub fn block_width(&self) -> u32 {
            self.d.block.width
        }
        /// `vxTileBlockHeight`.
        pub fn block_height(&self) -> u32 {
            self.d.block.height
        }
        /// The node's input neighborhood.
        pub fn neighborhood(&self) -> Neighborhood {
            self.d.neighborhood
        }
        /// Image width.
        pub fn image_width(&self) -> u32 {
            self.d.image_width
        }
        /// Image height.
        pub fn image_height(&self) -> u32 {
            self.d.image_height
        }
        /// The tile as an image rectangle.
        pub fn rect(&self) -> Rect {
            Rect::new(self.d.tile_x, self.d.tile_y, self.d.tile_x + self.d.width, self.d.tile_y + self.d.height)
        }
        /// True when this view's image may share memory with another parameter of the node.
        pub fn is_aliased(&self) -> bool {
            self.d.flags & TILE_ALIASED != 0
        }
        /// True when this view's image is a fused group's line buffer ([`TILE_LINE_BUFFER`]).
        pub fn is_line_buffer(&self) -> bool {
            self.d.flags & TILE_LINE_BUFFER != 0
        }
        /// How many threads share this run's tiles (at least 1; [`TILE_RUN_THREADS_SHIFT`]).
        pub fn run_threads(&self) -> u32 {
            run_threads_of(self.d.flags)
        }
        fn addr(&self, ix: i64, iy: i64) -> *mut T {
            // Callers checked (ix, iy) against `readable` (reads) or the tile (writes), both inside
            // the image, so the offset stays inside the image buffer.
            let off = iy as isize * self.d.stride_y as isize + ix as isize * self.d.stride_x as isize;
            self.d.base.wrapping_offset(off) as *mut T
        }
    };
}

/// An input image tile.
#[derive(Clone, Copy)]
pub struct Tile<'a, T: TilePixel> {
    d: &'a TileDesc,
    _t: PhantomData<&'a [T]>,
}

// SAFETY: a Tile only reads pixels that nobody writes while it lives (contract of TileArgs::new),
// like a shared slice; it can be shared and sent like &[T].
unsafe impl<T: TilePixel> Send for Tile<'_, T> {}
// SAFETY: as above.
unsafe impl<T: TilePixel> Sync for Tile<'_, T> {}

impl<'a, T: TilePixel> Tile<'a, T> {
    geometry!();

    /// The rectangle this view may read.
    pub fn readable(&self) -> Rect {
        self.d.readable
    }

    /// `vxImagePixel(T, tile, 0, x, y, ox, oy)`: the pixel at tile-relative `(x, y)` offset by
    /// `(ox, oy)`, or `None` outside the readable rectangle.
    #[inline]
    pub fn get(&self, x: u32, y: u32, ox: i32, oy: i32) -> Option<T> {
        let ix = self.d.tile_x as i64 + x as i64 + ox as i64;
        let iy = self.d.tile_y as i64 + y as i64 + oy as i64;
        let r = &self.d.readable;
        if ix < r.start_x as i64 || iy < r.start_y as i64 || ix >= r.end_x as i64 || iy >= r.end_y as i64 {
            return None;
        }
        // SAFETY: (ix, iy) lies in `readable`, which is inside the image and not written while this
        // view lives unless aliased, in which case we read by value through a raw pointer and never
        // create a reference; T is plain old data and the address is T-aligned (the runtime's
        // buffers are 64-aligned with strides that are multiples of the pixel size).
        Some(unsafe { self.addr(ix, iy).read() })
    }

    /// `vxImagePixel`: like [`get`](Self::get) but panics outside the readable rectangle (as slice
    /// indexing does; the runtime turns the panic into a node error). The panic names the caller's
    /// line (`#[track_caller]`), how far past the tile the read reaches and the kernel's declared
    /// neighborhood, e.g. ``Tile::pixel(3, 7, 0, 2) reads 2 rows below the tile {0,0,8,8}, outside
    /// the readable rectangle {0,0,9,9}: the kernel declares `nbhd = (-1, 1, -1, 1)` (left, right,
    /// top, bottom); read within it or declare a larger one (at src/lib.rs:12:20)``.
    #[inline]
    #[track_caller]
    pub fn pixel(&self, x: u32, y: u32, ox: i32, oy: i32) -> T {
        match self.get(x, y, ox, oy) {
            Some(p) => p,
            None => stray_read(self.d, [x, y], [ox, oy]),
        }
    }

    /// Input row `y` (tile-relative; may lie in the neighborhood, e.g. `-1`) spanning tile-relative
    /// columns `neighborhood.left ..  width + neighborhood.right`: element `i` is the pixel at
    /// tile-relative `x = i as i32 + neighborhood.left`. `None` when that span is not readable (a
    /// flexible tile at the border) or the image is aliased.
    #[inline]
    pub fn row(&self, y: i32) -> Option<&'a [T]> {
        if self.is_aliased() {
            return None;
        }
        let nb = self.d.neighborhood;
        let iy = self.d.tile_y as i64 + y as i64;
        let x0 = self.d.tile_x as i64 + nb.left as i64;
        let x1 = self.d.tile_x as i64 + self.d.width as i64 + nb.right as i64;
        let r = &self.d.readable;
        if iy < r.start_y as i64 || iy >= r.end_y as i64 || x0 < r.start_x as i64 || x1 > r.end_x as i64 || x1 <= x0 {
            return None;
        }
        // SAFETY: the span [x0, x1) of row iy lies in `readable` (inside the image, not written
        // while this view lives because the image is not aliased); T-aligned as in `get`.
        Some(unsafe { std::slice::from_raw_parts(self.addr(x0, iy) as *const T, (x1 - x0) as usize) })
    }
}

/// The panic of [`Tile::pixel`] outside the readable rectangle, at its caller's line.
#[cold]
#[inline(never)]
#[track_caller]
fn stray_read(d: &TileDesc, at: [u32; 2], offset: [i32; 2]) -> ! {
    panic!("{}", stray_read_message(d, at, offset, std::panic::Location::caller()))
}

/// What [`stray_read`] says of `Tile::pixel(x, y, ox, oy)` on the tile `d` describes, called at
/// `caller`: beyond the kernel's neighborhood, past the image's edge, or else outside what the host
/// made readable. Every form says "outside the readable rectangle".
fn stray_read_message(d: &TileDesc, [x, y]: [u32; 2], [ox, oy]: [i32; 2], caller: &std::panic::Location<'_>) -> String {
    let call = format!("Tile::pixel({x}, {y}, {ox}, {oy})");
    // Tile-relative, then image coordinates of the pixel read.
    let (tx, ty) = (x as i64 + ox as i64, y as i64 + oy as i64);
    let (ix, iy) = (d.tile_x as i64 + tx, d.tile_y as i64 + ty);
    // How far past the tile's edge, in the neighborhood's terms (negative: left or above).
    let past = |t: i64, len: u32| {
        if t < 0 { t } else { (t - (len as i64 - 1)).max(0) }
    };
    let (dx, dy) = (past(tx, d.width), past(ty, d.height));
    let nb = d.neighborhood;
    let tile = Rect::new(d.tile_x, d.tile_y, d.tile_x + d.width, d.tile_y + d.height);
    let readable = d.readable;
    if dx < nb.left as i64 || dx > nb.right as i64 || dy < nb.top as i64 || dy > nb.bottom as i64 {
        let part = |n: i64, unit: &str, before: &str, after: &str| match n {
            0 => None,
            n => Some(format!(
                "{} {unit}{} {}",
                n.abs(),
                if n.abs() == 1 { "" } else { "s" },
                if n < 0 { before } else { after }
            )),
        };
        let reach: Vec<String> = [part(dx, "column", "left of", "right of"), part(dy, "row", "above", "below")]
            .into_iter()
            .flatten()
            .collect();
        let none = if nb == Neighborhood::default() { ", the default when it declares none" } else { "" };
        format!(
            "{call} reads {} the tile {tile}, outside the readable rectangle {readable}: the kernel declares `nbhd = \
             ({}, {}, {}, {})` (left, right, top, bottom{none}); read within it or declare a larger one (at {caller})",
            reach.join(" and "),
            nb.left,
            nb.right,
            nb.top,
            nb.bottom
        )
    } else if ix < 0 || iy < 0 || ix >= d.image_width as i64 || iy >= d.image_height as i64 {
        format!(
            "{call} reads pixel ({ix}, {iy}), past the edge of the {}x{} image and outside the readable rectangle \
             {readable}: there a flexible function reads only what exists (`Tile::get` gives `None` past the edge) \
             (at {caller})",
            d.image_width, d.image_height
        )
    } else {
        format!(
            "{call} reads pixel ({ix}, {iy}), outside the readable rectangle {readable} of tile {tile} (at {caller})"
        )
    }
}

/// The panic of [`TileMut::set`] / [`TileMut::get`] outside the tile, at its caller's line (kept
/// out of the inlined accessors).
#[cold]
#[inline(never)]
#[track_caller]
fn outside_tile(what: &str, [x, y]: [u32; 2], d: &TileDesc) -> ! {
    panic!("tile {what} at ({x}, {y}) outside a {}x{} tile (at {})", d.width, d.height, std::panic::Location::caller())
}

impl<T: TilePixel> fmt::Debug for Tile<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tile").field("rect", &self.rect()).field("readable", &self.d.readable).finish()
    }
}

impl<T: TilePixel> fmt::Debug for TileMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TileMut").field("rect", &self.rect()).finish()
    }
}

/// An output image tile.
pub struct TileMut<'a, T: TilePixel> {
    d: &'a TileDesc,
    _t: PhantomData<&'a mut [T]>,
}

// SAFETY: a TileMut is the only view of its tile (TileArgs hands out one per output, tiles are
// disjoint), like &mut [T].
unsafe impl<T: TilePixel> Send for TileMut<'_, T> {}

impl<T: TilePixel> TileMut<'_, T> {
    geometry!();

    #[inline]
    fn inside(&self, x: u32, y: u32) -> bool {
        x < self.d.width && y < self.d.height
    }

    /// Write the pixel at tile-relative `(x, y)`. Panics outside the tile, naming the caller's line.
    #[inline]
    #[track_caller]
    pub fn set(&mut self, x: u32, y: u32, value: T) {
        if !self.inside(x, y) {
            outside_tile("write", [x, y], self.d);
        }
        let (ix, iy) = (self.d.tile_x as i64 + x as i64, self.d.tile_y as i64 + y as i64);
        // SAFETY: (x, y) is inside this tile, which this view alone may access (contract of
        // TileArgs::new); writing by value through a raw pointer creates no reference.
        unsafe { self.addr(ix, iy).write(value) }
    }

    /// Read back a pixel of this tile (e.g. written earlier in the same call). Panics outside,
    /// naming the caller's line.
    #[inline]
    #[track_caller]
    pub fn get(&self, x: u32, y: u32) -> T {
        if !self.inside(x, y) {
            outside_tile("read", [x, y], self.d);
        }
        let (ix, iy) = (self.d.tile_x as i64 + x as i64, self.d.tile_y as i64 + y as i64);
        // SAFETY: as in `set`, read by value.
        unsafe { self.addr(ix, iy).read() }
    }

    /// Output row `y` of the tile (`width` pixels), or `None` past the last row or when the image is
    /// aliased with an input.
    #[inline]
    pub fn row_mut(&mut self, y: u32) -> Option<&mut [T]> {
        if self.is_aliased() || y >= self.d.height {
            return None;
        }
        let (ix, iy) = (self.d.tile_x as i64, self.d.tile_y as i64 + y as i64);
        // SAFETY: the row segment lies inside this tile, which only this view accesses, and no
        // input view hands out slices of it (not aliased); &mut self makes the slice unique.
        Some(unsafe { std::slice::from_raw_parts_mut(self.addr(ix, iy), self.d.width as usize) })
    }
}

/// An input and an output tile as one read-modify-write view ([`TileArgs::in_place`]; in the
/// macros, an argument `io: &mut InPlace<T>` standing for two parameters, input `i` and output
/// `i + 1`, with `alias(i, i + 1, dense | sparse)`).
///
/// - [`row_mut`](Self::row_mut) (sparse kernels): output row `y` holding the input's pixels. When
///   the runtime aliased the two parameters it *is* the input row — a kernel writes only the
///   pixels it changes; otherwise the input row is copied in first (once per row).
/// - [`rows`](Self::rows) (dense kernels): the input and output rows apart, or the one shared row —
///   no copy either way.
///
/// Use one of the two per tile: `rows` leaves rows un-copied, so a later `row_mut` of such a row
/// would copy the input over what was written.
pub struct InPlace<'a, T: TilePixel> {
    src: &'a TileDesc,
    dst: &'a TileDesc,
    aliased: bool,
    /// Rows `0..copied` of the output hold the input's pixels (not aliased).
    copied: u32,
    _t: PhantomData<&'a mut [T]>,
}

/// One row of an [`InPlace`] view, for dense kernels.
pub enum InPlaceRow<'r, T> {
    /// Aliased: the input's pixels, to be overwritten in place.
    Same(&'r mut [T]),
    /// Not aliased: the input row and the output row.
    Apart(&'r [T], &'r mut [T]),
}

// SAFETY: an InPlace is the only view of its output tile and of its input's tile in this call
// (TileArgs hands neither out again), like a &mut [T] plus a &[T].
unsafe impl<T: TilePixel> Send for InPlace<'_, T> {}

impl<T: TilePixel> InPlace<'_, T> {
    /// Tile width.
    pub fn width(&self) -> u32 {
        self.dst.width
    }
    /// Tile height.
    pub fn height(&self) -> u32 {
        self.dst.height
    }
    /// Image width.
    pub fn image_width(&self) -> u32 {
        self.dst.image_width
    }
    /// Image height.
    pub fn image_height(&self) -> u32 {
        self.dst.image_height
    }
    /// The tile as an image rectangle.
    pub fn rect(&self) -> Rect {
        let d = self.dst;
        Rect::new(d.tile_x, d.tile_y, d.tile_x + d.width, d.tile_y + d.height)
    }
    /// True when the runtime placed the input and the output in one buffer.
    pub fn is_aliased(&self) -> bool {
        self.aliased
    }
    /// True when the output is a fused group's line buffer ([`TILE_LINE_BUFFER`]).
    pub fn is_line_buffer(&self) -> bool {
        self.dst.flags & TILE_LINE_BUFFER != 0
    }
    /// How many threads share this run's tiles (at least 1; [`TILE_RUN_THREADS_SHIFT`]).
    pub fn run_threads(&self) -> u32 {
        run_threads_of(self.dst.flags)
    }

    fn row_ptr(d: &TileDesc, y: u32) -> *mut T {
        let off = (d.tile_y + y) as isize * d.stride_y as isize + d.tile_x as isize * d.stride_x as isize;
        d.base.wrapping_offset(off) as *mut T
    }

    /// Output row `y` holding the input's pixels (see the type's doc), or `None` past the last row.
    pub fn row_mut(&mut self, y: u32) -> Option<&mut [T]> {
        if y >= self.dst.height {
            return None;
        }
        let w = self.dst.width as usize;
        if !self.aliased {
            while self.copied <= y {
                let r = self.copied;
                // SAFETY: row r of the input tile lies in its readable rectangle (the tile is inside
                // it), row r of the output tile is this view's alone, and the two do not overlap
                // (not aliased; contract of TileArgs::new); copy_nonoverlapping creates no reference.
                unsafe { std::ptr::copy_nonoverlapping(Self::row_ptr(self.src, r), Self::row_ptr(self.dst, r), w) };
                self.copied += 1;
            }
        }
        // SAFETY: the row lies inside the output tile, which only this view accesses (the input,
        // when it is the same memory, is owned by this view too); &mut self makes the slice unique.
        Some(unsafe { std::slice::from_raw_parts_mut(Self::row_ptr(self.dst, y), w) })
    }

    /// Row `y` for a dense kernel (see [`InPlaceRow`]), or `None` past the last row.
    pub fn rows(&mut self, y: u32) -> Option<InPlaceRow<'_, T>> {
        if y >= self.dst.height {
            return None;
        }
        let w = self.dst.width as usize;
        // SAFETY: as in `row_mut`; when not aliased the input row (readable, written by nobody
        // during the node) and the output row (this view's alone) do not overlap.
        unsafe {
            let out = std::slice::from_raw_parts_mut(Self::row_ptr(self.dst, y), w);
            Some(if self.aliased {
                InPlaceRow::Same(out)
            } else {
                InPlaceRow::Apart(std::slice::from_raw_parts(Self::row_ptr(self.src, y), w), out)
            })
        }
    }
}

mod border;
mod row_args;
mod rows;
mod span;
#[cfg(test)]
mod tests;

pub use border::{BorderFill, MAX_NEIGHBORHOOD_WIDTH, ROW_CHUNK, Rows, border_source};
pub use row_args::RowArgs;
pub use rows::{RowRegion, RowSink, RowTable, for_rows_from_table};
