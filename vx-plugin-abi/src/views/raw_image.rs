//! The RawImage view: what a `#[user_kernel]` takes for the kind (its wire side, with the layout
//! both sides use: `kinds/raw_image.rs`).

use std::marker::PhantomData;

use super::{Data, ParamView, err, meta_for};
use crate::kinds::ObjectMeta;
use crate::kinds::ViewKind;
use crate::kinds::raw_image::{CODE, Layout, RawContainer, Region, Wire, layout, pixel_container};
use crate::memory::Plain;
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::ParamPath;
use crate::status::Status;

/// A raw image whose exposures are in container `T`: each exposure's pixel rows
/// ([`row`](Self::row)) and its meta rows before and after ([`meta_before`](Self::meta_before),
/// [`meta_after`](Self::meta_after)), where the shared `layout()` puts them.
pub struct RawImage<'a, T: RawContainer> {
    data: Data<'a>,
    meta: ObjectMeta,
    layout: Layout,
    _t: PhantomData<T>,
}

impl<'a, T: RawContainer> ParamView<'a> for RawImage<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        let ObjectMeta::RawImage(w) = &meta else { unreachable!("checked by meta_for") };
        let layout = layout(w).map_err(|e| err(path, Status::InvalidParameters, e))?;
        let data = Data::map(p, path, write)?;
        if data.m.bytes < layout.total {
            return Err(err(path, Status::InvalidParameters, "the mapped raw image is smaller than its layout"));
        }
        Ok(RawImage { data, meta, layout, _t: PhantomData })
    }
}

impl<T: RawContainer> ViewKind for RawImage<'_, T> {
    type At<'a> = RawImage<'a, T>;
    const DATA_TYPE: u32 = CODE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        let ObjectMeta::RawImage(w) = meta else { return Ok(()) };
        let used = if w.line_interleaved != 0 { 1 } else { (w.num_exposures as usize).min(w.format.len()) };
        match w.format[..used].iter().find(|f| f.pixel_container != T::CONTAINER) {
            Some(f) => Err(format!(
                "a raw image of {} pixels, not the kernel's {}",
                pixel_container::name(f.pixel_container),
                pixel_container::name(T::CONTAINER)
            )),
            None => Ok(()),
        }
    }
}

impl<T: RawContainer> RawImage<'_, T>
where
    T::Unit: Plain,
{
    /// The meta data.
    pub fn wire(&self) -> &Wire {
        match &self.meta {
            ObjectMeta::RawImage(w) => w,
            _ => unreachable!("checked at map"),
        }
    }
    /// Where each exposure lies.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Pixels per row.
    pub fn width(&self) -> u32 {
        self.wire().width
    }
    /// Pixel rows.
    pub fn height(&self) -> u32 {
        self.wire().height
    }
    /// Exposures.
    pub fn num_exposures(&self) -> usize {
        self.layout.num_exposures
    }
    #[track_caller]
    fn region(&self, e: usize, pick: fn(&crate::kinds::raw_image::ExposureLayout) -> Region) -> Region {
        let x = self.layout.exposure(e);
        pick(x.unwrap_or_else(|| panic!("exposure {e} outside a raw image of {} exposures", self.num_exposures())))
    }
    #[track_caller]
    fn range(&self, r: Region, row: usize, what: &str) -> std::ops::Range<usize> {
        r.row(row as u64).unwrap_or_else(|| panic!("{what} row {row} outside the {} rows", r.rows))
    }
    /// Exposure `e`'s pixel row `y` (`width` units; for [`P12`](crate::kinds::raw_image::P12), `width × 3 / 2` bytes). Panics
    /// outside the image.
    #[track_caller]
    pub fn row(&self, e: usize, y: usize) -> &[T::Unit] {
        let b = self.range(self.region(e, |x| x.pixels), y, "pixel");
        let u = size_of::<T::Unit>();
        &self.data.slice::<T::Unit>()[b.start / u..b.end / u]
    }
    /// Exposure `e`'s pixel row `y` for writing. Panics outside the image or when mapped for reading.
    #[track_caller]
    pub fn row_mut(&mut self, e: usize, y: usize) -> &mut [T::Unit] {
        let b = self.range(self.region(e, |x| x.pixels), y, "pixel");
        let u = size_of::<T::Unit>();
        &mut self.data.slice_mut::<T::Unit>()[b.start / u..b.end / u]
    }
    /// Exposure `e`'s meta row `r` before the pixels, as bytes. Panics outside them.
    #[track_caller]
    pub fn meta_before(&self, e: usize, r: usize) -> &[u8] {
        let b = self.range(self.region(e, |x| x.meta_before), r, "meta-before");
        &self.data.slice::<u8>()[b]
    }
    /// Exposure `e`'s meta row `r` before the pixels, for writing.
    #[track_caller]
    pub fn meta_before_mut(&mut self, e: usize, r: usize) -> &mut [u8] {
        let b = self.range(self.region(e, |x| x.meta_before), r, "meta-before");
        &mut self.data.slice_mut::<u8>()[b]
    }
    /// Exposure `e`'s meta row `r` after the pixels, as bytes. Panics outside them.
    #[track_caller]
    pub fn meta_after(&self, e: usize, r: usize) -> &[u8] {
        let b = self.range(self.region(e, |x| x.meta_after), r, "meta-after");
        &self.data.slice::<u8>()[b]
    }
    /// Exposure `e`'s meta row `r` after the pixels, for writing.
    #[track_caller]
    pub fn meta_after_mut(&mut self, e: usize, r: usize) -> &mut [u8] {
        let b = self.range(self.region(e, |x| x.meta_after), r, "meta-after");
        &mut self.data.slice_mut::<u8>()[b]
    }
    /// Every byte (the layout's padding included).
    pub fn bytes(&self) -> &[u8] {
        &self.data.slice::<u8>()[..self.layout.total as usize]
    }
    /// Every byte, for writing.
    #[track_caller]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.layout.total as usize;
        &mut self.data.slice_mut::<u8>()[..n]
    }
}
