//! Border handling as an SDK capability: the input rows of a tile's neighborhood, extended past the
//! image edge by a border rule, so a kernel writes its row computation once and runs the same
//! (vectorized) code on interior tiles and on the tiles that touch the image edge.
//!
//! This is what border `Self_` asks of a tiling kernel (it is responsible for out-of-image pixels);
//! [`Tile::with_rows`] makes that cheap: rows inside the image are handed out as they are (no copy),
//! and only the rows of an edge tile are assembled, in chunks of [`ROW_CHUNK`] columns in a stack
//! buffer, copying the in-image span and making up only the pixels past the edge. No heap, no tile
//! memory.

use crate::status::Status;
use crate::tile::{Tile, TileError, TilePixel};

/// How pixels outside the image are made up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BorderFill<T> {
    /// `… 2 1 | 0 1 2 … n-2 n-1 | n-2 n-3 …`: OpenCV's `BORDER_REFLECT_101`, its default.
    Reflect101,
    /// `… 0 0 | 0 1 2 … n-1 | n-1 n-1 …`: `VX_BORDER_REPLICATE`.
    Replicate,
    /// A constant value: `VX_BORDER_CONSTANT`.
    Constant(T),
}

/// The `N` input rows of a row kernel's neighborhood, top to bottom, each covering the output span
/// extended by the neighborhood (`n + right - left` pixels, the first at column `x + left`), pixels
/// past the image edge made up by the kernel's border rule. What a `#[tiling_kernel]` function
/// taking `Rows<T, N>` receives (destructure it in the argument: `[a, b, c]: Rows<u8, 3>`).
pub type Rows<'a, T, const N: usize> = [&'a [T]; N];

/// Output columns assembled at a time for an edge tile (the stack buffer's width).
pub const ROW_CHUNK: usize = 256;

/// The widest neighborhood (`right - left`) [`Tile::with_rows`] serves.
pub const MAX_NEIGHBORHOOD_WIDTH: usize = 32;

/// Where coordinate `i` of a line of `n` pixels reads from under `fill` (`None`: the constant).
fn source(i: i64, n: i64, fill: BorderFill<impl Copy>) -> Option<i64> {
    if (0..n).contains(&i) {
        return Some(i);
    }
    match fill {
        BorderFill::Constant(_) => None,
        BorderFill::Replicate => Some(i.clamp(0, n - 1)),
        BorderFill::Reflect101 if n == 1 => Some(0),
        BorderFill::Reflect101 => {
            let period = 2 * (n - 1);
            let m = i.rem_euclid(period);
            Some(if m < n { m } else { period - m })
        }
    }
}

impl<'a, T: TilePixel> Tile<'a, T> {
    /// Call `f(x, n, rows)` for output row `y` of this tile: `rows` are the `N` input rows of the
    /// neighborhood (top to bottom), each covering output columns `x .. x + n` extended by the
    /// neighborhood (`n + right - left` pixels, the first one at column `x + left`), with pixels
    /// outside the image made up by `fill`. An interior row comes in one call straight from the
    /// image; an edge row in chunks of at most [`ROW_CHUNK`] columns. `N` must be the neighborhood's
    /// height (`bottom - top + 1`).
    ///
    /// ```ignore
    /// for y in 0..out.height() {
    ///     let o = out.row_mut(y).unwrap();
    ///     input.with_rows::<3>(y, BorderFill::Reflect101, |x, n, [a, b, c]| {
    ///         gaussian_row(a, b, c, &mut o[x as usize..(x + n) as usize])
    ///     })?;
    /// }
    /// ```
    pub fn with_rows<const N: usize>(
        &self,
        y: u32,
        fill: BorderFill<T>,
        mut f: impl FnMut(u32, u32, [&[T]; N]),
    ) -> Result<(), TileError> {
        self.check_rows::<N>()?;
        if y >= self.d.height {
            return Err(TileError::new(
                Status::InvalidParameters,
                format!("row {y} outside a tile of {} rows", self.d.height),
            ));
        }
        let mut bufs = None;
        self.serve_row(y, fill, &mut bufs, &mut f)
    }

    /// [`with_rows`](Self::with_rows) for every row of the tile, top to bottom: `f(y, x, n, rows)`.
    /// The buffer for edge rows is set up once per tile, so thin edge tiles (one column wide, as
    /// the plan cuts them) cost little per row.
    pub fn for_rows<const N: usize>(
        &self,
        fill: BorderFill<T>,
        mut f: impl FnMut(u32, u32, u32, [&[T]; N]),
    ) -> Result<(), TileError> {
        self.check_rows::<N>()?;
        let mut bufs = None;
        for y in 0..self.d.height {
            self.serve_row(y, fill, &mut bufs, &mut |x, n, rows| f(y, x, n, rows))?;
        }
        Ok(())
    }

    fn check_rows<const N: usize>(&self) -> Result<(), TileError> {
        let nb = self.d.neighborhood;
        let (height, ext) = ((nb.bottom - nb.top + 1) as usize, (nb.right - nb.left) as usize);
        if height != N {
            return Err(TileError::new(
                Status::InvalidParameters,
                format!("with_rows::<{N}> on a neighborhood {height} rows high"),
            ));
        }
        if ext > MAX_NEIGHBORHOOD_WIDTH {
            return Err(TileError::new(
                Status::NotSupported,
                format!("with_rows serves neighborhoods up to {MAX_NEIGHBORHOOD_WIDTH} wide, this one is {ext}"),
            ));
        }
        Ok(())
    }

    /// One output row: straight from the image when every row of its neighborhood is readable
    /// whole, else assembled in `bufs` (made on first need) chunk by chunk.
    #[allow(clippy::type_complexity)]
    fn serve_row<const N: usize>(
        &self,
        y: u32,
        fill: BorderFill<T>,
        bufs: &mut Option<[[T; ROW_CHUNK + MAX_NEIGHBORHOOD_WIDTH]; N]>,
        f: &mut impl FnMut(u32, u32, [&[T]; N]),
    ) -> Result<(), TileError> {
        let nb = self.d.neighborhood;
        let direct: [Option<&'a [T]>; N] = std::array::from_fn(|i| self.row(y as i32 + nb.top + i as i32));
        if direct.iter().all(Option::is_some) {
            f(0, self.d.width, direct.map(|r| r.unwrap_or_default()));
            return Ok(());
        }
        let (iw, ih) = (self.d.image_width as i64, self.d.image_height as i64);
        let (tx, w) = (self.d.tile_x as i64, self.d.width);
        // Every row of the neighborhood inside the image (only the columns at the left or right
        // edge need making up): the middle straight from the image, the edge columns assembled.
        let rows_inside =
            (0..N).all(|i| (0..ih).contains(&(self.d.tile_y as i64 + y as i64 + nb.top as i64 + i as i64)));
        if rows_inside && !self.is_aliased() {
            let lo = (-(tx + nb.left as i64)).clamp(0, w as i64) as u32;
            let hi = (iw - nb.right as i64 - tx).clamp(lo as i64, w as i64) as u32;
            if lo < hi {
                let (x0, x1) = (tx + lo as i64 + nb.left as i64, tx + hi as i64 + nb.right as i64);
                let iy0 = self.d.tile_y as i64 + y as i64 + nb.top as i64;
                let mut rows: [&[T]; N] = [&[]; N];
                for (i, r) in rows.iter_mut().enumerate() {
                    *r = self.span(iy0 + i as i64, x0, x1)?;
                }
                f(lo, hi - lo, rows);
            }
            self.assemble(y, 0, lo, fill, bufs, f)?;
            return self.assemble(y, hi.max(lo), w, fill, bufs, f);
        }
        self.assemble(y, 0, w, fill, bufs, f)
    }

    /// Output columns `[from, to)` of row `y`, assembled in `bufs` chunk by chunk.
    #[allow(clippy::type_complexity)]
    fn assemble<const N: usize>(
        &self,
        y: u32,
        from: u32,
        to: u32,
        fill: BorderFill<T>,
        bufs: &mut Option<[[T; ROW_CHUNK + MAX_NEIGHBORHOOD_WIDTH]; N]>,
        f: &mut impl FnMut(u32, u32, [&[T]; N]),
    ) -> Result<(), TileError> {
        let nb = self.d.neighborhood;
        let ext = (nb.right - nb.left) as usize;
        let (iw, ih) = (self.d.image_width as i64, self.d.image_height as i64);
        let bufs = bufs.get_or_insert_with(|| [[T::default(); ROW_CHUNK + MAX_NEIGHBORHOOD_WIDTH]; N]);
        let mut x = from;
        while x < to {
            let n = (to - x).min(ROW_CHUNK as u32);
            let len = n as usize + ext;
            let x0 = self.d.tile_x as i64 + x as i64 + nb.left as i64; // image column of buf[0]
            for (i, buf) in bufs.iter_mut().enumerate() {
                let iy = self.d.tile_y as i64 + y as i64 + nb.top as i64 + i as i64;
                let buf = &mut buf[..len];
                let Some(sy) = source(iy, ih, fill) else {
                    buf.fill(constant(fill));
                    continue;
                };
                // One checked slice of the whole source row, then plain indexing: edge chunks are
                // mostly a single output column, where per-call overhead is what counts.
                let row = self.span(sy, 0, iw)?;
                for (j, px) in buf.iter_mut().enumerate() {
                    let ix = x0 + j as i64;
                    *px = if (0..iw).contains(&ix) {
                        row[ix as usize]
                    } else {
                        match source(ix, iw, fill) {
                            Some(sx) => row[sx as usize],
                            None => constant(fill),
                        }
                    };
                }
            }
            f(x, n, std::array::from_fn(|i| &bufs[i][..len]));
            x += n;
        }
        Ok(())
    }

    /// Pixels `[x0, x1)` of image row `iy`, anywhere inside the image (a reflected pixel may lie
    /// past the readable rectangle of a small tile with a lopsided neighborhood). Refused for a view
    /// that shares memory with an output (aliased), which hands out no slices at all.
    fn span(&self, iy: i64, x0: i64, x1: i64) -> Result<&'a [T], TileError> {
        if self.is_aliased() {
            return Err(TileError::new(
                Status::NotSupported,
                "with_rows reads row slices, and this input shares memory with an output: read pixels by value",
            ));
        }
        let in_image = (0..self.d.image_height as i64).contains(&iy) && x0 >= 0 && x1 <= self.d.image_width as i64;
        if x1 <= x0 || !in_image {
            return Err(TileError::new(
                Status::Failure,
                format!("border fill reads row {iy} columns {x0}..{x1}, outside the image"),
            ));
        }
        // SAFETY: [x0, x1) of row iy lies inside the input image, which nothing writes while the
        // node runs (the graph has one writer per image, no node writes its own input, and this view
        // is not aliased with an output); T-aligned as in `get`.
        Ok(unsafe { std::slice::from_raw_parts(self.addr(x0, iy) as *const T, (x1 - x0) as usize) })
    }
}

fn constant<T: Copy + Default>(fill: BorderFill<T>) -> T {
    match fill {
        BorderFill::Constant(v) => v,
        _ => T::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_follow_opencv_border_rules() {
        let at = |fill, n| (-4..n + 4).map(|i| source(i, n, fill)).collect::<Vec<_>>();
        let r101: Vec<_> = at(BorderFill::<u8>::Reflect101, 5).into_iter().map(Option::unwrap).collect();
        assert_eq!(r101, [4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0]);
        let rep: Vec<_> = at(BorderFill::<u8>::Replicate, 5).into_iter().map(Option::unwrap).collect();
        assert_eq!(rep, [0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 4]);
        assert_eq!(
            at(BorderFill::Constant(7u8), 2),
            [None, None, None, None, Some(0), Some(1), None, None, None, None]
        );
        assert!(at(BorderFill::<u8>::Reflect101, 1).iter().all(|s| *s == Some(0)));
        assert_eq!(source(-1, 2, BorderFill::<u8>::Reflect101), Some(1));
        assert_eq!(source(-3, 2, BorderFill::<u8>::Reflect101), Some(1));
    }
}
