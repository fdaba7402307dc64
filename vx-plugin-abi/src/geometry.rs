//! Plain geometry shared by host and modules: rectangles, border modes, tile block sizes and
//! input neighborhoods, laid out like their OpenVX C counterparts.

use std::fmt;

use abi_stable::StableAbi;

/// `vx_rectangle_t`: the half-open pixel rectangle `[start_x, end_x) × [start_y, end_y)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, StableAbi)]
pub struct Rect {
    /// First column.
    pub start_x: u32,
    /// First row.
    pub start_y: u32,
    /// One past the last column.
    pub end_x: u32,
    /// One past the last row.
    pub end_y: u32,
}

impl Rect {
    /// The rectangle `[start_x, end_x) × [start_y, end_y)`.
    pub const fn new(start_x: u32, start_y: u32, end_x: u32, end_y: u32) -> Rect {
        Rect { start_x, start_y, end_x, end_y }
    }

    /// The whole of a `width × height` image.
    pub const fn full(width: u32, height: u32) -> Rect {
        Rect::new(0, 0, width, height)
    }

    /// Width in pixels (0 for an inverted rectangle).
    pub const fn width(&self) -> u32 {
        self.end_x.saturating_sub(self.start_x)
    }

    /// Height in pixels (0 for an inverted rectangle).
    pub const fn height(&self) -> u32 {
        self.end_y.saturating_sub(self.start_y)
    }

    /// True when the rectangle holds no pixel.
    pub const fn is_empty(&self) -> bool {
        self.width() == 0 || self.height() == 0
    }

    /// True when `other` lies entirely inside `self`.
    pub const fn contains(&self, other: &Rect) -> bool {
        other.start_x >= self.start_x
            && other.start_y >= self.start_y
            && other.end_x <= self.end_x
            && other.end_y <= self.end_y
            && other.start_x <= other.end_x
            && other.start_y <= other.end_y
    }

    /// The common part of two rectangles (possibly empty).
    pub fn intersect(&self, other: &Rect) -> Rect {
        let start_x = self.start_x.max(other.start_x);
        let start_y = self.start_y.max(other.start_y);
        Rect {
            start_x,
            start_y,
            end_x: self.end_x.min(other.end_x).max(start_x),
            end_y: self.end_y.min(other.end_y).max(start_y),
        }
    }

    /// True when the two rectangles share at least one pixel.
    pub fn overlaps(&self, other: &Rect) -> bool {
        !self.intersect(other).is_empty()
    }
}

impl fmt::Display for Rect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{},{},{},{}}}", self.start_x, self.start_y, self.end_x, self.end_y)
    }
}

/// `vx_border_e` as far as vx-rs supports it.
///
/// User kernels see the node's border as an attribute; tiling kernels accept only `Undefined` and
/// `Self_` (the tiling extension's `VX_BORDER_MODE_SELF`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BorderMode {
    /// `VX_BORDER_UNDEFINED`: pixels whose neighborhood leaves the image are not computed.
    #[default]
    Undefined,
    /// `VX_BORDER_CONSTANT` with the given constant value.
    Constant(u32),
    /// `VX_BORDER_REPLICATE`.
    Replicate,
    /// `VX_BORDER_MODE_SELF` (tiling extension): the kernel's flexible function handles the border.
    Self_,
}

/// `vx_tile_block_size_t`: the output tile block, in pixels.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, StableAbi)]
pub struct TileBlockSize {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Default for TileBlockSize {
    fn default() -> Self {
        TileBlockSize { width: 1, height: 1 }
    }
}

/// `vx_neighborhood_size_t`: offsets of the input neighborhood relative to the output pixel, in the
/// spec's order (left, right, top, bottom); a 3×3 filter is `(-1, 1, -1, 1)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, StableAbi)]
pub struct Neighborhood {
    /// Pixels to the left (≤ 0).
    pub left: i32,
    /// Pixels to the right (≥ 0).
    pub right: i32,
    /// Pixels above (≤ 0).
    pub top: i32,
    /// Pixels below (≥ 0).
    pub bottom: i32,
}

impl Neighborhood {
    /// A neighborhood in the spec's order: left, right, top, bottom.
    pub const fn new(left: i32, right: i32, top: i32, bottom: i32) -> Neighborhood {
        Neighborhood { left, right, top, bottom }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_arithmetic() {
        let a = Rect::new(2, 2, 10, 8);
        assert_eq!((a.width(), a.height()), (8, 6));
        assert!(a.contains(&Rect::new(2, 2, 10, 8)));
        assert!(!a.contains(&Rect::new(1, 2, 10, 8)));
        assert_eq!(a.intersect(&Rect::new(8, 0, 20, 3)), Rect::new(8, 2, 10, 3));
        assert!(a.intersect(&Rect::new(10, 0, 20, 3)).is_empty());
        assert!(!a.overlaps(&Rect::new(10, 2, 11, 3)));
        assert_eq!(a.to_string(), "{2,2,10,8}");
    }
}
