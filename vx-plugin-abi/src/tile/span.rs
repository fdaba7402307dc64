//! A tile's pixels as one slice when its rows are adjacent in memory: a point operation (each
//! output pixel from the input pixel at the same place) then runs one loop over the whole tile
//! instead of one per row — what a full-width tile of an unpadded image allows.

use super::{InPlace, InPlaceRow, Tile, TileDesc, TileMut, TilePixel};

/// The tile's rows follow one another in memory with nothing between: the tile spans whole image
/// rows and the image has no padding after a row.
fn adjacent<T>(d: &TileDesc) -> bool {
    let size = std::mem::size_of::<T>() as i64;
    d.tile_x == 0
        && d.width == d.image_width
        && i64::from(d.stride_x) == size
        && i64::from(d.stride_y) == i64::from(d.width) * size
        && d.width > 0
        && d.height > 0
}

/// The address of the tile's first pixel.
fn first<T>(d: &TileDesc) -> *mut T {
    d.base.wrapping_offset(d.tile_y as isize * d.stride_y as isize) as *mut T
}

impl<'a, T: TilePixel> Tile<'a, T> {
    /// The tile's pixels row after row (`width × height`, the neighborhood left out), when its rows
    /// are adjacent in memory (the tile spans whole rows of an image without row padding), readable
    /// and not aliased; else `None` — go row by row ([`row`](Self::row)).
    pub fn as_slice(&self) -> Option<&'a [T]> {
        let d = self.d;
        let r = &d.readable;
        let rows_readable = r.start_x <= d.tile_x
            && r.end_x >= d.tile_x + d.width
            && r.start_y <= d.tile_y
            && r.end_y >= d.tile_y + d.height;
        if self.is_aliased() || !adjacent::<T>(d) || !rows_readable {
            return None;
        }
        // SAFETY: the rows tile_y..tile_y + height are readable whole (checked above: inside the
        // image, not written while this view lives because the image is not aliased) and adjacent
        // (stride_y = width × size): one span of width × height pixels; T-aligned as in `get`.
        Some(unsafe { std::slice::from_raw_parts(first::<T>(d), d.width as usize * d.height as usize) })
    }
}

impl<T: TilePixel> TileMut<'_, T> {
    /// The tile's pixels row after row, when its rows are adjacent in memory and the image is not
    /// aliased with an input; else `None` — go row by row ([`row_mut`](Self::row_mut)).
    pub fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        let d = self.d;
        if self.is_aliased() || !adjacent::<T>(d) {
            return None;
        }
        // SAFETY: the tile's rows are adjacent (checked), so the span is exactly the tile, which
        // only this view accesses; &mut self makes the slice unique.
        Some(unsafe { std::slice::from_raw_parts_mut(first::<T>(d), d.width as usize * d.height as usize) })
    }
}

impl<T: TilePixel> InPlace<'_, T> {
    /// The whole tile for a dense kernel (see [`InPlaceRow`]), when the rows of both images are
    /// adjacent in memory; else `None` — go row by row ([`rows`](Self::rows)). Use it or the
    /// row methods for a tile, not both.
    pub fn as_slices(&mut self) -> Option<InPlaceRow<'_, T>> {
        let (s, d) = (self.src, self.dst);
        if !adjacent::<T>(d) || !(self.aliased || adjacent::<T>(s)) || s.tile_y != d.tile_y || s.height != d.height {
            return None;
        }
        let n = d.width as usize * d.height as usize;
        // SAFETY: both tiles' rows are adjacent (checked), so each span is exactly its tile; as in
        // `rows`: the output tile is this view's alone, and when not aliased the input tile
        // (readable, written by nobody during the node) does not overlap it.
        unsafe {
            let out = std::slice::from_raw_parts_mut(first::<T>(d), n);
            Some(if self.aliased {
                InPlaceRow::Same(out)
            } else {
                InPlaceRow::Apart(std::slice::from_raw_parts(first::<T>(s), n), out)
            })
        }
    }
}
