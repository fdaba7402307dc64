//! Mapped image patches (`vxMapImagePatch` / `vxUnmapImagePatch`): typed row access to a
//! rectangle of one plane. Dropping the patch unmaps it.

use std::marker::PhantomData;

use vx_plugin_abi::{ImageFormat, Rect};

/// `vx_imagepatch_addressing_t`: how to walk a mapped patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchAddressing {
    /// Elements per row of the patch.
    pub dim_x: u32,
    /// Rows of the patch.
    pub dim_y: u32,
    /// Bytes from one element to the next.
    pub stride_x: i32,
    /// Bytes from one row to the next.
    pub stride_y: i32,
}

mod sealed {
    pub trait Sealed {}
}

/// Element types of image planes. `u8` ↔ U8 (and the NV12/NV21 Y plane, every IYUV and YUV4
/// plane), `[u8; 2]` ↔ the NV12 UV / NV21 VU plane and a UYVY or YUYV pixel (`[U, Y]` or
/// `[V, Y]` for UYVY, `[Y, U]` or `[Y, V]` for YUYV, by the parity of x), `u16` ↔ U16, `i16` ↔ S16,
/// `u32` ↔ U32, `i32` ↔ S32, `[u8; 3]` ↔ RGB, `[u8; 4]` ↔ RGBX.
///
/// Sealed: every implementor is plain old data for which any bit pattern is valid.
pub trait Pixel: sealed::Sealed + Copy + Default + Send + Sync + 'static {
    /// The Rust name, for error messages.
    const NAME: &'static str;
    /// True when this type is the element type of `plane` of `format`.
    fn matches(format: ImageFormat, plane: usize) -> bool;
}

macro_rules! pixel {
    ($t:ty, $name:literal, $($fmt:ident / $plane:literal),+) => {
        impl sealed::Sealed for $t {}
        impl Pixel for $t {
            const NAME: &'static str = $name;
            fn matches(format: ImageFormat, plane: usize) -> bool {
                $( (format == ImageFormat::$fmt && plane == $plane) )||+
            }
        }
    };
}
pixel!(u8, "u8", U8 / 0, Nv12 / 0, Nv21 / 0, Iyuv / 0, Iyuv / 1, Iyuv / 2, Yuv4 / 0, Yuv4 / 1, Yuv4 / 2);
pixel!([u8; 2], "[u8; 2]", Nv12 / 1, Nv21 / 1, Uyvy / 0, Yuyv / 0);
pixel!(u16, "u16", U16 / 0);
pixel!(i16, "i16", S16 / 0);
pixel!(u32, "u32", U32 / 0);
pixel!(i32, "i32", S32 / 0);
pixel!([u8; 3], "[u8; 3]", Rgb / 0);
pixel!([u8; 4], "[u8; 4]", Rgbx / 0);

/// A patch mapped for reading. Any number may exist at once; none while a write patch exists.
pub struct ImagePatch<'a, T: Pixel> {
    pub(super) storage: std::sync::Arc<super::ImageStorage>,
    pub(super) slot: usize,
    pub(super) base: *const u8,
    pub(super) addressing: PatchAddressing,
    pub(super) rect: Rect,
    pub(super) _t: PhantomData<&'a [T]>,
}

/// A patch mapped for writing (and reading). Exclusive: no other patch of the same storage exists.
pub struct ImagePatchMut<'a, T: Pixel> {
    pub(super) storage: std::sync::Arc<super::ImageStorage>,
    pub(super) slot: usize,
    pub(super) base: *mut u8,
    pub(super) addressing: PatchAddressing,
    pub(super) rect: Rect,
    pub(super) _t: PhantomData<&'a mut [T]>,
}

// SAFETY: a read patch only hands out shared slices of plain-old-data pixels; the mapping count it
// holds keeps writers away, so sharing or sending it across threads is like sharing &[T].
unsafe impl<T: Pixel> Send for ImagePatch<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Pixel> Sync for ImagePatch<'_, T> {}
// SAFETY: a write patch is the only mapping of its storage (exclusive, like &mut [T]).
unsafe impl<T: Pixel> Send for ImagePatchMut<'_, T> {}
// SAFETY: shared access to a write patch only yields shared slices (row needs &self).
unsafe impl<T: Pixel> Sync for ImagePatchMut<'_, T> {}

impl<T: Pixel> ImagePatch<'_, T> {
    /// Elements per row (`dim_x`).
    pub fn width(&self) -> u32 {
        self.addressing.dim_x
    }
    /// Rows (`dim_y`).
    pub fn height(&self) -> u32 {
        self.addressing.dim_y
    }
    /// How the patch is laid out.
    pub fn addressing(&self) -> PatchAddressing {
        self.addressing
    }
    /// The mapped rectangle, in image coordinates.
    pub fn rect(&self) -> Rect {
        self.rect
    }
    /// Row `y` of the patch (0 = the patch's first row), or `None` past the last row.
    pub fn get_row(&self, y: u32) -> Option<&[T]> {
        (y < self.addressing.dim_y).then(|| {
            // SAFETY: y < dim_y, so the row starts inside the mapped plane region; the row holds
            // dim_x elements of T (checked at map time: T matches the plane's element type, the base
            // is T-aligned because buffers are 64-aligned and strides/offsets are multiples of the
            // element size). The read lease keeps writers and reallocation away for 'self.
            unsafe {
                std::slice::from_raw_parts(
                    self.base.add(y as usize * self.addressing.stride_y as usize) as *const T,
                    self.addressing.dim_x as usize,
                )
            }
        })
    }
    /// Row `y` of the patch. Panics past the last row, like slice indexing.
    pub fn row(&self, y: u32) -> &[T] {
        match self.get_row(y) {
            Some(r) => r,
            None => panic!("row {y} outside a patch of {} rows", self.addressing.dim_y),
        }
    }
}

impl<T: Pixel> std::fmt::Debug for ImagePatch<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImagePatch").field("rect", &self.rect).field("addressing", &self.addressing).finish()
    }
}

impl<T: Pixel> std::fmt::Debug for ImagePatchMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImagePatchMut").field("rect", &self.rect).field("addressing", &self.addressing).finish()
    }
}

impl<T: Pixel> Drop for ImagePatch<'_, T> {
    fn drop(&mut self) {
        self.storage.buffer.release(self.slot);
    }
}

impl<T: Pixel> ImagePatchMut<'_, T> {
    /// Elements per row (`dim_x`).
    pub fn width(&self) -> u32 {
        self.addressing.dim_x
    }
    /// Rows (`dim_y`).
    pub fn height(&self) -> u32 {
        self.addressing.dim_y
    }
    /// How the patch is laid out.
    pub fn addressing(&self) -> PatchAddressing {
        self.addressing
    }
    /// The mapped rectangle, in image coordinates.
    pub fn rect(&self) -> Rect {
        self.rect
    }
    /// Row `y` for reading, or `None` past the last row.
    pub fn get_row(&self, y: u32) -> Option<&[T]> {
        (y < self.addressing.dim_y).then(|| {
            // SAFETY: as for ImagePatch::get_row; the write lease is exclusive and &self forbids a
            // simultaneous row_mut.
            unsafe {
                std::slice::from_raw_parts(
                    self.base.add(y as usize * self.addressing.stride_y as usize) as *const T,
                    self.addressing.dim_x as usize,
                )
            }
        })
    }
    /// Row `y` for writing, or `None` past the last row.
    pub fn get_row_mut(&mut self, y: u32) -> Option<&mut [T]> {
        (y < self.addressing.dim_y).then(|| {
            // SAFETY: bounds and alignment as in get_row; the write lease makes this patch the
            // only mapping of the storage and &mut self makes the returned slice unique.
            unsafe {
                std::slice::from_raw_parts_mut(
                    self.base.add(y as usize * self.addressing.stride_y as usize) as *mut T,
                    self.addressing.dim_x as usize,
                )
            }
        })
    }
    /// Row `y` for reading. Panics past the last row.
    pub fn row(&self, y: u32) -> &[T] {
        match self.get_row(y) {
            Some(r) => r,
            None => panic!("row {y} outside a patch of {} rows", self.addressing.dim_y),
        }
    }
    /// Row `y` for writing. Panics past the last row.
    pub fn row_mut(&mut self, y: u32) -> &mut [T] {
        let rows = self.addressing.dim_y;
        match self.get_row_mut(y) {
            Some(r) => r,
            None => panic!("row {y} outside a patch of {rows} rows"),
        }
    }
    /// Set every pixel of the patch to `value`.
    pub fn fill(&mut self, value: T) {
        for y in 0..self.addressing.dim_y {
            self.row_mut(y).fill(value);
        }
    }
}

impl<T: Pixel> Drop for ImagePatchMut<'_, T> {
    fn drop(&mut self) {
        self.storage.buffer.release(self.slot);
    }
}
