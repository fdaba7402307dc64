//! A row kernel served from tables of row pointers instead of an image: what fused execution hands
//! a module (`docs/design/fusion.md` §6.1), whose intermediate rows live in small circular
//! line buffers that a [`TileDesc`](super::TileDesc) cannot describe.
//!
//! [`RowTable`] is an input image given as one pointer per row (image row `sy` at
//! `rows[sy - first_row]`); [`RowSink`] the output rows of one call. [`RowTable::for_rows`] runs the
//! very code [`Tile::for_rows`](super::Tile::for_rows) runs (`serve`, over a different row
//! supplier), so the border fill is the same in both modes by construction. A window row the table
//! does not hold is a [`TileError`], never a read of something else.
//!
//! The one unsafe step is building the two views from raw pointers ([`RowTable::from_raw`],
//! [`RowSink::from_raw`]); everything after is checked.

use std::marker::PhantomData;

use abi_stable::StableAbi;

use super::border::{RowSupply, ServedArea, check_neighborhood, serve};
use super::{BorderFill, Rows, TileError, TilePixel};
use crate::geometry::Neighborhood;
use crate::status::Status;

/// The output rows and columns of one row-entry call, and the image they belong to (the design's
/// `RowCall`): rows `y0 .. y0 + count`, columns `x0 .. x1` of an `image_width`×`image_height` image.
/// It crosses the module ABI as is ([`RowFnPtr`](crate::module_abi::RowFnPtr)'s `call`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, StableAbi)]
pub struct RowRegion {
    /// First output row (image coordinates).
    pub y0: u32,
    /// Output rows.
    pub count: u32,
    /// First output column.
    pub x0: u32,
    /// One past the last output column.
    pub x1: u32,
    /// Width of the image (every row of the tables holds this many pixels).
    pub image_width: u32,
    /// Height of the image (the border rule's reference for rows above and below it).
    pub image_height: u32,
}

impl RowRegion {
    fn check(&self) -> Result<(), TileError> {
        let rows_inside = self.y0 as u64 + self.count as u64 <= self.image_height as u64;
        if self.x0 > self.x1 || self.x1 > self.image_width || !rows_inside {
            return Err(TileError::new(Status::InvalidParameters, format!("{self:?} is not inside its image")));
        }
        Ok(())
    }
}

/// An input image as a table of row pointers (the design's `RowSource`): image row `sy` is at
/// `rows[sy - first_row]`, a null entry a row the table does not hold.
#[derive(Clone, Copy, Debug)]
pub struct RowTable<'a, T> {
    first_row: i64,
    rows: &'a [*const u8],
    image_width: usize,
    _pixels: PhantomData<&'a [T]>,
}

impl<'a, T: TilePixel> RowTable<'a, T> {
    /// The table of `len` row pointers at `rows`, for image rows `first_row .. first_row + len` of
    /// an image `image_width` pixels wide.
    ///
    /// # Safety
    ///
    /// For `'a`: `rows` points to `len` readable `*const u8` (or `len` is 0); each non-null one
    /// points to `image_width` pixels of `T` (`image_width * size_of::<T>()` bytes, `T`-aligned)
    /// that stay allocated and that nobody writes — in particular no [`RowSink`] row overlaps
    /// them.
    pub unsafe fn from_raw(first_row: i64, rows: *const *const u8, len: u32, image_width: u32) -> RowTable<'a, T> {
        let rows = if len == 0 || rows.is_null() {
            &[][..]
        } else {
            // SAFETY: `rows` points to `len` readable pointers for 'a (contract above).
            unsafe { std::slice::from_raw_parts(rows, len as usize) }
        };
        RowTable { first_row, rows, image_width: image_width as usize, _pixels: PhantomData }
    }

    /// [`Tile::for_rows`](super::Tile::for_rows) over `region` with the input rows from this table:
    /// `f(y, x, n, rows)` for output row `region.y0 + y`, output columns `region.x0 + x ..
    /// region.x0 + x + n`, `rows` the `N` rows of `neighborhood` extended by `fill` — what a tile
    /// over `region` of an image holding the same rows gets, call for call. Fails, before or while
    /// calling `f`, when a window row is not in the table, the region is not inside the image, or
    /// the neighborhood is not `N` rows high and at most [`MAX_NEIGHBORHOOD_WIDTH`](super::MAX_NEIGHBORHOOD_WIDTH)
    /// wide.
    pub fn for_rows<const N: usize>(
        &self,
        region: RowRegion,
        neighborhood: Neighborhood,
        fill: BorderFill<T>,
        mut f: impl FnMut(u32, u32, u32, Rows<'_, T, N>),
    ) -> Result<(), TileError> {
        check_neighborhood::<N>(neighborhood)?;
        region.check()?;
        if region.image_width as usize != self.image_width {
            return Err(TileError::new(
                Status::InvalidParameters,
                format!("a row table {} wide for an image {} wide", self.image_width, region.image_width),
            ));
        }
        if region.count == 0 || region.x0 == region.x1 {
            return Ok(());
        }
        let area = ServedArea {
            x: region.x0 as i64,
            y: region.y0 as i64,
            width: region.x1 - region.x0,
            image_width: region.image_width,
            image_height: region.image_height,
            neighborhood,
        };
        serve::<T, N>(self, &area, 0, region.count, fill, &mut f)
    }
}

impl<'a, T: TilePixel> RowSupply<'a, T> for RowTable<'a, T> {
    #[inline]
    fn row(&self, sy: i64) -> Result<&'a [T], TileError> {
        let slot = sy.checked_sub(self.first_row).and_then(|i| usize::try_from(i).ok());
        let ptr = slot.and_then(|i| self.rows.get(i)).copied().unwrap_or(std::ptr::null());
        if ptr.is_null() || !ptr.cast::<T>().is_aligned() {
            return Err(TileError::new(
                Status::Failure,
                format!(
                    "image row {sy} is not in the row table (rows {}..{})",
                    self.first_row,
                    self.first_row + self.rows.len() as i64
                ),
            ));
        }
        // SAFETY: a non-null entry of the table points to `image_width` T-aligned (checked) pixels
        // that stay allocated and unwritten for 'a (contract of `from_raw`).
        Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), self.image_width) })
    }
}

/// The output rows of one call as a table of row pointers (the design's `RowSink`): `rows[i]` is
/// output row `y0 + i`, pointing to column 0 of the image.
#[derive(Debug)]
pub struct RowSink<'a, T> {
    rows: &'a [*mut u8],
    image_width: usize,
    _pixels: PhantomData<&'a mut [T]>,
}

impl<'a, T: TilePixel> RowSink<'a, T> {
    /// The `count` output row pointers at `rows`, each to column 0 of a row `image_width` pixels
    /// wide.
    ///
    /// # Safety
    ///
    /// For `'a`: `rows` points to `count` readable `*mut u8` (or `count` is 0); each non-null one
    /// points to `image_width` pixels of `T` (`image_width * size_of::<T>()` bytes, `T`-aligned)
    /// that stay allocated and that nobody but this sink reads or writes — in particular they
    /// overlap no [`RowTable`] row and no other sink's row.
    pub unsafe fn from_raw(rows: *const *mut u8, count: u32, image_width: u32) -> RowSink<'a, T> {
        let rows = if count == 0 || rows.is_null() {
            &[][..]
        } else {
            // SAFETY: `rows` points to `count` readable pointers for 'a (contract above).
            unsafe { std::slice::from_raw_parts(rows, count as usize) }
        };
        RowSink { rows, image_width: image_width as usize, _pixels: PhantomData }
    }

    /// Columns `x .. x + n` (image coordinates) of output row `i` of the call (row `y0 + i` of the
    /// image), or an error when the sink has no such row or columns.
    pub fn span(&mut self, i: u32, x: u32, n: u32) -> Result<&mut [T], TileError> {
        let ptr = self.rows.get(i as usize).copied().unwrap_or(std::ptr::null_mut());
        let end = x as usize + n as usize;
        if ptr.is_null() || !ptr.cast::<T>().is_aligned() || end > self.image_width {
            return Err(TileError::new(
                Status::Failure,
                format!("output row {i} columns {x}..{end} are not in the row sink"),
            ));
        }
        // SAFETY: a non-null entry points to `image_width` T-aligned (checked) pixels only this sink
        // accesses for 'a (contract of `from_raw`), and `x .. end` lies inside them (checked);
        // `&mut self` makes the slice unique.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<T>().add(x as usize), n as usize) })
    }
}

/// Run a row kernel with one output over `region`: `kernel(rows, out)` for each piece
/// [`RowTable::for_rows`] serves, `out` the matching span of `output` (`output`'s row `i` is output
/// row `region.y0 + i`). What the generated row entry of a one-output row kernel does; several
/// outputs take their spans from several sinks inside a [`RowTable::for_rows`] callback the same
/// way. Stops at the first error.
pub fn for_rows_from_table<T: TilePixel, U: TilePixel, const N: usize>(
    input: &RowTable<'_, T>,
    output: &mut RowSink<'_, U>,
    region: RowRegion,
    neighborhood: Neighborhood,
    fill: BorderFill<T>,
    mut kernel: impl FnMut(Rows<'_, T, N>, &mut [U]),
) -> Result<(), TileError> {
    let mut result = Ok(());
    input.for_rows::<N>(region, neighborhood, fill, |y, x, n, rows| {
        if result.is_err() {
            return;
        }
        match output.span(y, region.x0 + x, n) {
            Ok(out) => kernel(rows, out),
            Err(e) => result = Err(e),
        }
    })?;
    result
}
