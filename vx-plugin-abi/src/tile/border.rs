//! Border handling as an SDK capability: the input rows of a tile's neighborhood, extended past the
//! image edge by a border rule, so a kernel writes its row computation once and runs the same
//! (vectorized) code on interior tiles and on the tiles that touch the image edge.
//!
//! This is what border `Self_` asks of a tiling kernel (it is responsible for out-of-image pixels);
//! [`Tile::for_rows`] makes that cheap. A tile is served row by row. Where an output row's
//! neighborhood lies inside the image horizontally, its input rows are slices of the image itself
//! (a row above or below the image is another image row under reflect-101 and replicate: still no
//! copy; under a constant rule, a stack row of the constant). The columns whose neighborhood crosses
//! the left or right edge (at most 32, rounded up to 16 for SIMD) form edge pieces served from a
//! ring of `N` extended rows on the stack: each input row is copied once, the few pixels past the
//! edge made up by the rule from a table computed once per tile, and the kernel's code runs on
//! whole rows of the piece. A tile at most 1024 wide that touches an edge is one piece per row (one
//! call; the copy is cheaper than three calls on short rows). No heap, no tile memory, no
//! per-pixel border code in kernels.
//!
//! `serve` takes its image rows from a [`RowSupply`]: the image itself ([`Tile`]) or a table of row
//! pointers (`RowTable`, fused execution), so one piece of code makes the fill values in both modes.

use std::mem::MaybeUninit;

use crate::geometry::Neighborhood;
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

/// Output columns per call where rows of a constant are handed out (above or below the image
/// under `Constant`): the width of that stack row.
pub const ROW_CHUNK: usize = 1024;

/// Edge pieces are whole multiples of this many output columns (a SIMD block of 16-bit lanes), so
/// a kernel's vector loop covers them without a ragged end.
const EDGE_BLOCK: u32 = 16;

/// A tile at most this wide that touches the left or right edge is served as one piece per row
/// (one call, the row copied once into the ring: cheaper than three calls on short rows); a wider
/// one as a middle straight from the image between edge pieces of at most `EDGE_PIECE` columns.
const WHOLE_ROW: usize = 1024;

/// The widest edge piece of a tile wider than `WHOLE_ROW`: `MAX_NEIGHBORHOOD_WIDTH` rounded up to
/// `EDGE_BLOCK`.
const EDGE_PIECE: usize = 32;

/// The widest neighborhood (`right - left`) [`Tile::with_rows`] serves.
pub const MAX_NEIGHBORHOOD_WIDTH: usize = 32;

/// Where coordinate `i` of a line of `n > 0` pixels (a row or a column of an image) reads from under
/// `fill`: `i` itself inside, the image coordinate the rule maps it to outside, `None` for the
/// constant. The one statement of the rules: the SDK's row serving and the host's planning of which
/// rows a fused row kernel reads both use it.
#[inline]
pub fn border_source(i: i64, n: i64, fill: BorderFill<impl Copy>) -> Option<i64> {
    if (0..n).contains(&i) {
        return Some(i);
    }
    match fill {
        BorderFill::Constant(_) => None,
        BorderFill::Replicate => Some(i.clamp(0, n - 1)),
        BorderFill::Reflect101 if n == 1 => Some(0),
        // One reflection reaches inside (every neighborhood narrower than the image).
        BorderFill::Reflect101 if i < 0 && -i < n => Some(-i),
        BorderFill::Reflect101 if i >= n && i < 2 * n - 1 => Some(2 * n - 2 - i),
        BorderFill::Reflect101 => {
            let period = 2 * (n - 1);
            let m = i.rem_euclid(period);
            Some(if m < n { m } else { period - m })
        }
    }
}

/// Where the pixels of an edge strip's extended rows come from, the same for every row: elements
/// `inside` are image columns from `image_start` on; the others (at most the neighborhood's width)
/// read column `sources[k]` (`usize::MAX`: the constant), in element order.
struct StripEdges {
    inside: std::ops::Range<usize>,
    image_start: usize,
    sources: [usize; MAX_NEIGHBORHOOD_WIDTH],
}

impl StripEdges {
    /// Rows of `len` elements starting at image column `x0` of an image `iw` wide.
    fn new<T: Copy>(x0: i64, len: usize, iw: i64, fill: BorderFill<T>) -> StripEdges {
        let (in0, in1) = (x0.clamp(0, iw), (x0 + len as i64).clamp(0, iw));
        let a = (in0 - x0).clamp(0, len as i64) as usize;
        let b = ((in1 - x0).max(0) as usize).clamp(a, len);
        let mut sources = [usize::MAX; MAX_NEIGHBORHOOD_WIDTH];
        for (k, j) in (0..a).chain(b..len).enumerate() {
            sources[k] = border_source(x0 + j as i64, iw, fill).map_or(usize::MAX, |sx| sx as usize);
        }
        StripEdges { inside: a..b, image_start: in0 as usize, sources }
    }
}

/// Where [`serve`] gets the image's rows.
pub(super) trait RowSupply<'a, T> {
    /// All `image_width` pixels of image row `sy` (`0 <= sy < image_height`), or why not (a row
    /// missing from a row table, an aliased image): an error, never a read of something else.
    fn row(&self, sy: i64) -> Result<&'a [T], TileError>;
}

/// The output rectangle [`serve`] serves, in image coordinates, and the kernel's neighborhood.
#[derive(Clone, Copy, Debug)]
pub(super) struct ServedArea {
    /// Image column of output column 0.
    pub(super) x: i64,
    /// Image row of output row 0.
    pub(super) y: i64,
    /// Output columns.
    pub(super) width: u32,
    pub(super) image_width: u32,
    pub(super) image_height: u32,
    pub(super) neighborhood: Neighborhood,
}

/// `N` is the neighborhood's height (at least 1) and the neighborhood is at most
/// [`MAX_NEIGHBORHOOD_WIDTH`] wide.
pub(super) fn check_neighborhood<const N: usize>(nb: Neighborhood) -> Result<(), TileError> {
    let (height, ext) = (nb.bottom as i64 - nb.top as i64 + 1, nb.right as i64 - nb.left as i64);
    if N == 0 || height != N as i64 {
        return Err(TileError::new(
            Status::InvalidParameters,
            format!("with_rows::<{N}> on a neighborhood {height} rows high"),
        ));
    }
    if !(0..=MAX_NEIGHBORHOOD_WIDTH as i64).contains(&ext) {
        return Err(TileError::new(
            Status::NotSupported,
            format!("with_rows serves neighborhoods up to {MAX_NEIGHBORHOOD_WIDTH} wide, this one is {ext}"),
        ));
    }
    Ok(())
}

impl<'a, T: TilePixel> Tile<'a, T> {
    /// Call `f(x, n, rows)` for output row `y` of this tile: `rows` are the `N` input rows of the
    /// neighborhood (top to bottom), each covering output columns `x .. x + n` extended by the
    /// neighborhood (`n + right - left` pixels, the first one at column `x + left`), with pixels
    /// outside the image made up by `fill`. `N` must be the neighborhood's height
    /// (`bottom - top + 1`). For every row of a tile, [`for_rows`](Self::for_rows) is cheaper (an
    /// edge strip's input rows are extended once, not once per output row).
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
        serve::<T, N>(self, &self.served_area(), y, y + 1, fill, &mut |_, x, n, rows| f(x, n, rows))
    }

    /// [`with_rows`](Self::with_rows) for every row of the tile, top to bottom: `f(y, x, n, rows)`,
    /// strip by strip (one call per output row when the tile is at most [`ROW_CHUNK`] wide).
    pub fn for_rows<const N: usize>(
        &self,
        fill: BorderFill<T>,
        mut f: impl FnMut(u32, u32, u32, [&[T]; N]),
    ) -> Result<(), TileError> {
        self.check_rows::<N>()?;
        serve::<T, N>(self, &self.served_area(), 0, self.d.height, fill, &mut f)
    }

    fn check_rows<const N: usize>(&self) -> Result<(), TileError> {
        check_neighborhood::<N>(self.d.neighborhood)?;
        if self.is_aliased() {
            return Err(TileError::new(
                Status::NotSupported,
                "with_rows reads row slices, and this input shares memory with an output: read pixels by value",
            ));
        }
        Ok(())
    }

    fn served_area(&self) -> ServedArea {
        let d = self.d;
        ServedArea {
            x: d.tile_x as i64,
            y: d.tile_y as i64,
            width: d.width,
            image_width: d.image_width,
            image_height: d.image_height,
            neighborhood: d.neighborhood,
        }
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

/// The image serves its own rows.
impl<'a, T: TilePixel> RowSupply<'a, T> for Tile<'a, T> {
    #[inline]
    fn row(&self, sy: i64) -> Result<&'a [T], TileError> {
        self.span(sy, 0, self.d.image_width as i64)
    }
}

/// Output rows `y0 .. y1` of `area` (counted from its top), row by row, each in up to three pieces
/// (see the module doc), the input rows from `input`: `f(y, x, n, rows)` with `y`, `x` relative to
/// `area`. The neighborhood must have passed [`check_neighborhood::<N>`].
pub(super) fn serve<'a, T: TilePixel, const N: usize>(
    input: &impl RowSupply<'a, T>,
    area: &ServedArea,
    y0: u32,
    y1: u32,
    fill: BorderFill<T>,
    f: &mut impl FnMut(u32, u32, u32, [&[T]; N]),
) -> Result<(), TileError> {
    if y0 >= y1 {
        return Ok(());
    }
    let nb = area.neighborhood;
    let ext = (nb.right - nb.left) as usize;
    let (iw, ih) = (area.image_width as i64, area.image_height as i64);
    let (tx, ty, w) = (area.x, area.y, area.width);
    // Image row of neighborhood row `i` of output row `y`, and image column of an output
    // column's first neighbor.
    let image_row = |y: u32, i: usize| ty + y as i64 + nb.top as i64 + i as i64;
    let first_col = |x: u32| tx + x as i64 + nb.left as i64;
    // Output columns whose neighborhood crosses the left / right image edge, rounded up to
    // whole SIMD blocks; the rest of the row is served straight from the image.
    let round = |c: i64| (c.max(0) as u32).div_ceil(EDGE_BLOCK) * EDGE_BLOCK;
    let (left, right) = if w as usize <= WHOLE_ROW {
        let touches = first_col(0) < 0 || first_col(w) + ext as i64 > iw;
        (if touches { w } else { 0 }, 0)
    } else {
        let l = round(-first_col(0)).min(w);
        let r = round(first_col(w) + ext as i64 - iw).min(w - l);
        (l, r)
    };
    let pieces = [(0, left), (w - right, right)];
    let edges = pieces.map(|(x, n)| StripEdges::new(first_col(x), n as usize + ext, iw, fill));
    // Uninitialized: clearing them per tile cost more than the border itself on small images.
    // The left (or whole-row) piece's ring, and the right piece's.
    let mut ring_left = [[MaybeUninit::<T>::uninit(); WHOLE_ROW + MAX_NEIGHBORHOOD_WIDTH]; N];
    let mut ring_right = [[MaybeUninit::<T>::uninit(); EDGE_PIECE + MAX_NEIGHBORHOOD_WIDTH]; N];
    let constant_row = match fill {
        BorderFill::Constant(v) if image_row(y0, 0) < 0 || image_row(y1 - 1, N - 1) >= ih => {
            Some([v; ROW_CHUNK + MAX_NEIGHBORHOOD_WIDTH])
        }
        _ => None,
    };
    for y in y0..y1 {
        // The middle, straight from the image: an out-of-image row is another image row
        // (reflect-101, replicate) or, under a constant rule, the constant in chunks.
        let (mx, mn) = (left, w - left - right);
        if mn > 0 {
            let (x0, len) = (first_col(mx) as usize, mn as usize + ext);
            let mut rows: [Option<&[T]>; N] = [None; N];
            for (i, r) in rows.iter_mut().enumerate() {
                if let Some(sy) = border_source(image_row(y, i), ih, fill) {
                    *r = Some(&supplied_row(input, sy, iw)?[x0..x0 + len]);
                }
            }
            match &constant_row {
                Some(c) if rows.iter().any(Option::is_none) => {
                    let mut cx = 0;
                    while cx < mn {
                        let cn = (mn - cx).min(ROW_CHUNK as u32);
                        let span = cx as usize..(cx + cn) as usize + ext;
                        f(y, mx + cx, cn, rows.map(|r| r.map_or(&c[..span.len()], |r| &r[span.clone()])));
                        cx += cn;
                    }
                }
                _ => f(y, mx, mn, rows.map(|r| r.unwrap_or_default())),
            }
        }
        // The edge pieces: a ring of N extended rows each, input row `r` (counted from the
        // first window's top) in slot `r % N`, each made once.
        for (k, &(px, pn)) in pieces.iter().enumerate() {
            if pn == 0 {
                continue;
            }
            let len = pn as usize + ext;
            let mut ring: [&mut [MaybeUninit<T>]; N] = if k == 0 {
                ring_left.each_mut().map(|r| &mut r[..len])
            } else {
                ring_right.each_mut().map(|r| &mut r[..len])
            };
            let new = if y == y0 { 0 } else { N - 1 };
            for i in new..N {
                let slot = (y - y0) as usize + i;
                extend_row(input, image_row(y, i), (iw, ih), &edges[k], ring[slot % N], fill)?;
            }
            let ring = &mut ring;
            f(
                y,
                px,
                pn,
                std::array::from_fn(|i| {
                    let slot = &ring[((y - y0) as usize + i) % N];
                    // SAFETY: every slot of the window had `..len` written for this piece
                    // before this call (all N at the first row, then each row's new one;
                    // `extend_row` writes every element it is given); MaybeUninit<T> has T's
                    // layout.
                    unsafe { std::slice::from_raw_parts(slot.as_ptr() as *const T, len) }
                }),
            );
        }
    }
    Ok(())
}

/// `buf` = image row `iy` (of an `iw`×`ih` image) extended as `edges` says (a row outside the
/// image maps to an image row or to the constant). Writes every element of `buf`, or fails before
/// writing any. Out of line on purpose: it runs once per row of an edge strip, and a profile then
/// shows what the border costs (`extend_row`).
#[inline(never)]
fn extend_row<'a, T: TilePixel>(
    input: &impl RowSupply<'a, T>,
    iy: i64,
    (iw, ih): (i64, i64),
    edges: &StripEdges,
    buf: &mut [MaybeUninit<T>],
    fill: BorderFill<T>,
) -> Result<(), TileError> {
    let Some(sy) = border_source(iy, ih, fill) else {
        buf.iter_mut().for_each(|p| {
            p.write(constant(fill));
        });
        return Ok(());
    };
    let row = supplied_row(input, sy, iw)?;
    let (a, b) = (edges.inside.start, edges.inside.end);
    if a < b {
        let src = &row[edges.image_start..edges.image_start + (b - a)];
        let dst = &mut buf[a..b];
        assert_eq!(src.len(), dst.len());
        // SAFETY: both spans have `src.len()` elements (asserted), `dst` is the caller's ring
        // (not image memory, so they do not overlap), and MaybeUninit<T> has T's layout.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr() as *mut T, src.len()) };
    }
    let c = constant(fill);
    let (left, right) = buf.split_at_mut(b);
    for (p, &sx) in left[..a].iter_mut().zip(&edges.sources[..a]) {
        p.write(if sx == usize::MAX { c } else { row[sx] });
    }
    for (p, &sx) in right.iter_mut().zip(&edges.sources[a..]) {
        p.write(if sx == usize::MAX { c } else { row[sx] });
    }
    Ok(())
}

/// Image row `sy` from `input`, checked to be `iw` pixels long (every column `serve` reads is inside
/// the image, so indexing it cannot fail).
#[inline]
fn supplied_row<'a, T>(input: &impl RowSupply<'a, T>, sy: i64, iw: i64) -> Result<&'a [T], TileError> {
    let row = input.row(sy)?;
    if row.len() as i64 != iw {
        return Err(TileError::new(
            Status::Failure,
            format!("row {sy} holds {} pixels, the image is {iw} wide", row.len()),
        ));
    }
    Ok(row)
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
        let at = |fill, n| (-4..n + 4).map(|i| border_source(i, n, fill)).collect::<Vec<_>>();
        let r101: Vec<_> = at(BorderFill::<u8>::Reflect101, 5).into_iter().map(Option::unwrap).collect();
        assert_eq!(r101, [4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0]);
        let rep: Vec<_> = at(BorderFill::<u8>::Replicate, 5).into_iter().map(Option::unwrap).collect();
        assert_eq!(rep, [0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 4]);
        assert_eq!(
            at(BorderFill::Constant(7u8), 2),
            [None, None, None, None, Some(0), Some(1), None, None, None, None]
        );
        assert!(at(BorderFill::<u8>::Reflect101, 1).iter().all(|s| *s == Some(0)));
        assert_eq!(border_source(-1, 2, BorderFill::<u8>::Reflect101), Some(1));
        assert_eq!(border_source(-3, 2, BorderFill::<u8>::Reflect101), Some(1));
    }
}
