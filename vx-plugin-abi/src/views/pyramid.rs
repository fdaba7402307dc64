//! The Pyramid view: what a `#[user_kernel]` takes for the kind (its wire side: `kinds/pyramid.rs`).

use std::marker::PhantomData;
use crate::kinds::ObjectMeta;
use super::image::Image;
use crate::kinds::ViewKind;
use super::{ParamView, fourcc, meta_for};
use crate::image_format::ImageFormat;
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{ParamPath};
use crate::tile::TilePixel;
use crate::kinds::pyramid::{CODE, Wire};


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

