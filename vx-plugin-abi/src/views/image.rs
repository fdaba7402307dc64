//! The Image view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/image.rs`),
//! and the macro's original image arguments over it, [`ImageIn`] and [`ImageOut`].

use std::marker::PhantomData;
use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use super::{ParamView, assert_writable, err, fourcc, meta_for};
use crate::geometry::Rect;
use crate::image_format::ImageFormat;
use crate::module_abi::{AbiError, MappedImage, ParamMeta, Processor, Validator};
use crate::object_meta::{ParamPath};
use crate::status::Status;
use crate::tile::TilePixel;
use crate::kinds::image::{CODE, Wire};


/// An image, a pyramid level or an object-array item that is one: rows of `T`.
pub struct Image<'a, T: TilePixel> {
    p: &'a Processor,
    m: MappedImage,
    writable: bool,
    _t: PhantomData<&'a mut [T]>,
}

impl<'a, T: TilePixel> ParamView<'a> for Image<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        meta_for::<Self>(p, path)?;
        Image::map_unchecked(p, path, write)
    }
}

impl<'a, T: TilePixel> Image<'a, T> {
    /// Map without checking the format against the meta data (a validator did), only the pixel
    /// size: what `ImageIn` / `ImageOut` do.
    pub(crate) fn map_unchecked(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let m = p.map_image(path, Rect::default(), write)?;
        if m.stride_x as usize != size_of::<T>() {
            p.unmap_image(m.token);
            return Err(err(
                path,
                Status::InvalidFormat,
                format!("{}-byte pixels, not the kernel's {}", m.stride_x, size_of::<T>()),
            ));
        }
        Ok(Image { p, m, writable: write, _t: PhantomData })
    }
}

impl<T: TilePixel> ViewKind for Image<'_, T> {
    type At<'a> = Image<'a, T>;
    const DATA_TYPE: u32 = CODE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Image(Wire { format, .. }) if *format != T::FORMAT.fourcc() => {
                Err(format!("a {} image, not the kernel's {}", fourcc(*format), T::FORMAT))
            }
            _ => Ok(()),
        }
    }
}


impl<T: TilePixel> Image<'_, T> {
    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.m.dim_x
    }
    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.m.dim_y
    }
    /// Row `y`. Panics past the last row.
    #[track_caller]
    pub fn row(&self, y: u32) -> &[T] {
        assert!(y < self.m.dim_y, "row {y} outside an image of {} rows", self.m.dim_y);
        // SAFETY: the host mapped the whole plane (dim_x × dim_y pixels of size_of::<T>() bytes,
        // checked at map) until unmapped in Drop; rows are stride_y apart; T-aligned.
        unsafe {
            std::slice::from_raw_parts(
                self.m.base.add(y as usize * self.m.stride_y as usize) as *const T,
                self.m.dim_x as usize,
            )
        }
    }
    /// Row `y` for writing. Panics past the last row, or when mapped for reading.
    #[track_caller]
    pub fn row_mut(&mut self, y: u32) -> &mut [T] {
        assert_writable(self.writable);
        assert!(y < self.m.dim_y, "row {y} outside an image of {} rows", self.m.dim_y);
        // SAFETY: as in `row`; mapped for writing by this view alone, &mut self makes it unique.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.m.base.add(y as usize * self.m.stride_y as usize) as *mut T,
                self.m.dim_x as usize,
            )
        }
    }
}

impl<T: TilePixel> Drop for Image<'_, T> {
    fn drop(&mut self) {
        self.p.unmap_image(self.m.token);
    }
}

impl ParamMeta {
    /// An image's format and size, for [`ParamMeta::of`] (`None`: the meta is not an image's).
    pub(crate) fn image_part(meta: &ObjectMeta) -> Option<(u32, u32, u32)> {
        match meta {
            ObjectMeta::Image(i) => Some((i.format, i.width, i.height)),
            _ => None,
        }
    }
}

impl Validator {
    /// Set output image `index` to `format`, `width × height` (through [`Self::set_output_meta`]).
    pub fn set_output_image(&self, index: u32, format: ImageFormat, width: u32, height: u32) -> Result<(), AbiError> {
        let wire = Wire { format: format.fourcc(), width, height };
        self.set_output_meta(index, &ObjectMeta::Image(wire))
    }
}

/// An input image of a `#[user_kernel]`, mapped whole for reading; unmapped when dropped. (The
/// macro's original image argument; a read-only [`views::Image`](Image).)
pub struct ImageIn<'a, T: TilePixel>(Image<'a, T>);

/// An output image of a `#[user_kernel]`, mapped whole for writing; unmapped when dropped.
pub struct ImageOut<'a, T: TilePixel>(Image<'a, T>);

macro_rules! image_view {
    ($ty:ident, $write:literal) => {
        impl<'a, T: TilePixel> $ty<'a, T> {
            #[doc(hidden)]
            pub fn map(p: &'a Processor, index: u32) -> Result<Self, AbiError> {
                // The generated validator checked the format: no meta check here.
                Image::map_unchecked(p, ParamPath::param(index), $write).map($ty)
            }
            /// Width in pixels.
            pub fn width(&self) -> u32 {
                self.0.width()
            }
            /// Height in pixels.
            pub fn height(&self) -> u32 {
                self.0.height()
            }
            /// Row `y`. Panics past the last row.
            #[track_caller]
            pub fn row(&self, y: u32) -> &[T] {
                self.0.row(y)
            }
        }
    };
}
image_view!(ImageIn, false);
image_view!(ImageOut, true);

impl<T: TilePixel> ImageOut<'_, T> {
    /// Row `y` for writing. Panics past the last row.
    #[track_caller]
    pub fn row_mut(&mut self, y: u32) -> &mut [T] {
        self.0.row_mut(y)
    }
}
