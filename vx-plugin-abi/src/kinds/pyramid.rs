//! The Pyramid kind on the module side: its wire meta, code, attribute codes and view.

use std::marker::PhantomData;

use abi_stable::StableAbi;

use super::ObjectMeta;
use super::image::Image;
use super::ViewKind;
use super::view::{ParamView, fourcc, meta_for};
use crate::image_format::ImageFormat;
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};
use crate::tile::TilePixel;

/// `VX_TYPE_PYRAMID`.
pub const CODE: u32 = 0x809;

/// Its meta-format attribute codes (re-exported in [`crate::wire::attribute`]).
pub mod attribute {
    /// `VX_PYRAMID_LEVELS` (`vx_size`).
    pub const PYRAMID_LEVELS: u32 = 0x80900;
    /// `VX_PYRAMID_SCALE` (`vx_float32`).
    pub const PYRAMID_SCALE: u32 = 0x80901;
    /// `VX_PYRAMID_WIDTH` (`vx_uint32`).
    pub const PYRAMID_WIDTH: u32 = 0x80902;
    /// `VX_PYRAMID_HEIGHT` (`vx_uint32`).
    pub const PYRAMID_HEIGHT: u32 = 0x80903;
    /// `VX_PYRAMID_FORMAT` (`vx_df_image`).
    pub const PYRAMID_FORMAT: u32 = 0x80904;
}

/// A pyramid. The meta on the wire
/// ([`ObjectMeta::Pyramid`]).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Levels.
    pub levels: u64,
    /// Scale between levels (0.5, or ORB's 0.8408964).
    pub scale: f32,
    /// Level 0's width.
    pub width: u32,
    /// Level 0's height.
    pub height: u32,
    /// FourCC.
    pub format: u32,
}


/// A pyramid of `T` images: its levels as [`Image`] views, mapped when asked for.
pub struct Pyramid<'a, T: TilePixel> {
    p: &'a Processor,
    path: ParamPath,
    meta: ObjectMeta,
    writable: bool,
    _t: PhantomData<T>,
}

impl<'a, T: TilePixel> ParamView<'a> for Pyramid<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        Ok(Pyramid { p, path, meta, writable: write, _t: PhantomData })
    }
}

impl<T: TilePixel> ViewKind for Pyramid<'_, T> {
    type At<'a> = Pyramid<'a, T>;
    const DATA_TYPE: u32 = CODE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Pyramid(Wire { format, .. })
                if *format != T::FORMAT.fourcc() && *format != ImageFormat::Virtual.fourcc() =>
            {
                Err(format!("a pyramid of {} images, not the kernel's {}", fourcc(*format), T::FORMAT))
            }
            _ => Ok(()),
        }
    }
}

impl<'a, T: TilePixel> Pyramid<'a, T> {
    /// Levels.
    pub fn levels(&self) -> usize {
        match &self.meta {
            ObjectMeta::Pyramid(Wire { levels, .. }) => *levels as usize,
            _ => unreachable!("checked at map"),
        }
    }
    /// The pyramid's meta data.
    pub fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    /// Level `index`, mapped as this pyramid is (for writing when taken by `&mut`).
    pub fn level(&self, index: usize) -> Result<Image<'a, T>, AbiError> {
        Image::map(self.p, self.path.level(index as u32), self.writable)
    }
}

