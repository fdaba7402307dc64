//! The tile plan of a tiling node: which pixels the fast function processes, which the flexible
//! one, which none — exactly the two tables of the tiling extension — cut into tiles sized for the
//! cache and for parallelism.
//!
//! Regions, for a `W × H` output, tile block `bw × bh` and neighborhood `(l, r, t, b)`:
//!
//! - **safe** `S = [-l, W-r) × [-t, H-b)`: pixels whose neighborhood lies inside the image;
//! - **aligned** `A`: the largest block-grid-aligned rectangle inside `S`
//!   (`[⌈-l/bw⌉·bw, ⌊(W-r)/bw⌋·bw) × …`);
//! - **flexible domain** `D`: `S` under `Undefined`, the whole image under `Self_`.
//!
//! `A` goes to the fast function when there is one, else to the flexible function (still in
//! block-aligned tiles, as the spec recommends); `D \ A` goes to the flexible function when there is
//! one; everything else is not processed. Fast-only with `Self_` is refused before planning. A
//! flexible-only kernel of 1×1 blocks gets `D` cut as one region (full-width bands: every tile is
//! trivially block-aligned, and row kernels get whole rows instead of one-pixel edge columns).
//!
//! Tile size policy ([`TilingPolicy`]): tiles span the region's full width (long rows vectorize and
//! stream) unless one block row exceeds the cache budget; their height is as many rows as fit the
//! budget (every image's row bytes, inputs including their neighborhood rows), rounded to the block
//! height in `A`, then reduced so the plan has at least `threads × min_tiles_per_thread` tiles when
//! the image is large enough, but never below `min_tile_pixels` pixels per tile. Whether a run shares
//! the tiles between threads is the cost model's choice at process (`split.rs`).

use vx_plugin_abi::{BorderMode, Neighborhood, Rect, TileBlockSize};

pub use crate::shared::TilingPolicy;

/// Which user function a tile goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileFunction {
    /// The fast function: block-aligned tiles whose neighborhood is inside the image.
    Fast,
    /// The flexible function: any tile, border pixels included under `Self_`.
    Flexible,
}

/// One tile of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedTile {
    /// Output pixels of the tile.
    pub rect: Rect,
    /// The function that processes it.
    pub function: TileFunction,
    /// Tile blocks in the tile: `⌈w/bw⌉ · ⌈h/bh⌉` (tile memory = this × the kernel's tile memory size).
    pub blocks: u64,
}

/// What the planner needs to know about a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRequest {
    /// Output width in pixels.
    pub width: u32,
    /// Output height in pixels.
    pub height: u32,
    /// The kernel's output tile block size.
    pub block: TileBlockSize,
    /// The node's input neighborhood.
    pub neighborhood: Neighborhood,
    /// `Undefined` or `Self_`.
    pub border: BorderMode,
    /// The kernel has a fast function.
    pub has_fast: bool,
    /// The kernel has a flexible function.
    pub has_flexible: bool,
    /// Bytes per pixel summed over the node's input images.
    pub input_bytes_per_pixel: usize,
    /// Bytes per pixel summed over the node's output images.
    pub output_bytes_per_pixel: usize,
    /// Threads the tiles will run on.
    pub threads: usize,
}

/// The regions of the spec's tables for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRegions {
    /// Pixels whose neighborhood is inside the image (possibly empty).
    pub safe: Rect,
    /// The block-aligned part of `safe` (possibly empty).
    pub aligned: Rect,
    /// Where the flexible function may run.
    pub flexible_domain: Rect,
}

/// A node's tiles, disjoint, covering exactly the pixels some function processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilePlan {
    /// The spec's regions the tiles were cut from.
    pub regions: TileRegions,
    /// The tiles, each with its function.
    pub tiles: Vec<PlannedTile>,
}

fn rect_i64(x0: i64, y0: i64, x1: i64, y1: i64) -> Rect {
    if x1 <= x0 || y1 <= y0 {
        return Rect::default();
    }
    Rect::new(x0 as u32, y0 as u32, x1 as u32, y1 as u32)
}

/// The spec's regions for `req`.
pub fn regions(req: &TileRequest) -> TileRegions {
    let (w, h) = (req.width as i64, req.height as i64);
    let nb = req.neighborhood;
    let (sx0, sx1) = ((-(nb.left as i64)).max(0), w - (nb.right as i64).max(0));
    let (sy0, sy1) = ((-(nb.top as i64)).max(0), h - (nb.bottom as i64).max(0));
    let safe = rect_i64(sx0, sy0, sx1.min(w), sy1.min(h));
    let (bw, bh) = (req.block.width.max(1) as i64, req.block.height.max(1) as i64);
    let aligned = if safe.is_empty() {
        Rect::default()
    } else {
        rect_i64((sx0 + bw - 1) / bw * bw, (sy0 + bh - 1) / bh * bh, sx1.div_euclid(bw) * bw, sy1.div_euclid(bh) * bh)
    };
    let flexible_domain = match req.border {
        BorderMode::Self_ => Rect::full(req.width, req.height),
        _ => safe,
    };
    TileRegions { safe, aligned, flexible_domain }
}

/// The pixels some function processes, which the plan's tiles cover exactly: the whole flexible
/// domain when there is a flexible function, the aligned region when there is only a fast one,
/// nothing when there is neither. Always one rectangle (the aligned region lies inside the domain).
pub fn processed(req: &TileRequest) -> Rect {
    processed_in(&regions(req), req.has_fast, req.has_flexible)
}

/// [`processed`] from the regions already computed.
pub fn processed_in(regions: &TileRegions, has_fast: bool, has_flexible: bool) -> Rect {
    if has_flexible {
        regions.flexible_domain
    } else if has_fast {
        regions.aligned
    } else {
        Rect::default()
    }
}

/// The pixels a missing flexible function leaves unprocessed although their neighborhood lies
/// inside the image: `safe` minus `aligned` for a fast-only kernel whose tile blocks do not fit the
/// safe region (`None` when there are none). Border pixels under `Undefined` are not counted: the
/// spec leaves them unprocessed whatever the functions.
pub fn unprocessed_for_lack_of_flexible(req: &TileRequest) -> Option<(Rect, Rect)> {
    let r = regions(req);
    let lost = req.has_fast && !req.has_flexible && r.safe != r.aligned && !r.safe.is_empty();
    lost.then_some((r.safe, r.aligned))
}

/// `domain` minus `hole` (which lies inside it) as at most four disjoint bands.
fn minus(domain: Rect, hole: Rect) -> Vec<Rect> {
    if domain.is_empty() {
        return Vec::new();
    }
    if hole.is_empty() {
        return vec![domain];
    }
    let bands = [
        Rect::new(domain.start_x, domain.start_y, domain.end_x, hole.start_y),
        Rect::new(domain.start_x, hole.end_y, domain.end_x, domain.end_y),
        Rect::new(domain.start_x, hole.start_y, hole.start_x, hole.end_y),
        Rect::new(hole.end_x, hole.start_y, domain.end_x, hole.end_y),
    ];
    bands.into_iter().filter(|r| !r.is_empty()).collect()
}

/// Cut `region` into tiles for `function`; `aligned` keeps tile sizes multiples of the block.
#[allow(clippy::too_many_arguments)]
fn cut(
    region: Rect,
    function: TileFunction,
    aligned: bool,
    req: &TileRequest,
    policy: &TilingPolicy,
    want_tiles: usize,
    out: &mut Vec<PlannedTile>,
) {
    if region.is_empty() {
        return;
    }
    let (bw, bh) = (req.block.width.max(1) as u64, req.block.height.max(1) as u64);
    let (uw, uh) = if aligned { (bw, bh) } else { (1, 1) };
    let (w, h) = (region.width() as u64, region.height() as u64);
    let nb = req.neighborhood;
    let nb_w = (nb.right as i64 - nb.left as i64).max(0) as u64;
    let nb_h = (nb.bottom as i64 - nb.top as i64).max(0) as u64;
    // Saturating throughout: the request's fields are public (`vx::tile_plan`), and a neighbourhood
    // or a byte count near its type's end must give a plan, not an overflow or a division by 0.
    let in_bytes = req.input_bytes_per_pixel as u64;
    let px_bytes = in_bytes.saturating_add(req.output_bytes_per_pixel as u64).max(1);
    let budget = policy.cache_budget_bytes.max(1) as u64;

    // Width: the whole region unless one block row of it exceeds the budget.
    let mut tw = w;
    if px_bytes.saturating_mul(w.saturating_add(nb_w)).saturating_mul(uh) > budget {
        tw = ((budget / px_bytes.saturating_mul(uh)).saturating_sub(nb_w) / uw * uw).max(uw).min(w);
    }
    let cols = w.div_ceil(tw);
    // Height: rows that fit the budget (inputs also read their neighborhood rows).
    let row_bytes = px_bytes.saturating_mul(tw.saturating_add(nb_w));
    let halo_bytes = nb_h.saturating_mul(in_bytes).saturating_mul(tw.saturating_add(nb_w));
    let fit = budget.saturating_sub(halo_bytes) / row_bytes;
    let mut th = (fit / uh * uh).max(uh);
    // Parallelism: enough tiles, but not tiny ones.
    let want_rows = (want_tiles as u64).div_ceil(cols).max(1);
    // Even heights in whole blocks; when rounding up leaves fewer tiles than wanted (600 rows, 26
    // wanted: 24 rows gave 25 tiles), the largest height that still gives them, if blocks allow.
    let mut par_th = h.div_ceil(want_rows).div_ceil(uh) * uh;
    if want_rows > 1 && h.div_ceil(par_th) < want_rows {
        par_th = ((h - 1) / (want_rows - 1) / uh * uh).max(uh);
    }
    let min_th = (policy.min_tile_pixels as u64).div_ceil(tw).div_ceil(uh) * uh;
    th = th.min(par_th.max(min_th)).max(uh).min(h.div_ceil(uh) * uh);

    let mut y = 0;
    while y < h {
        let hh = th.min(h - y);
        let mut x = 0;
        while x < w {
            let ww = tw.min(w - x);
            let rect = Rect::new(
                region.start_x + x as u32,
                region.start_y + y as u32,
                region.start_x + (x + ww) as u32,
                region.start_y + (y + hh) as u32,
            );
            out.push(PlannedTile { rect, function, blocks: ww.div_ceil(bw) * hh.div_ceil(bh) });
            x += ww;
        }
        y += hh;
    }
}

/// Plan the tiles of a node. The caller has refused fast-only with `Self_` and a request with no
/// function at all.
pub fn plan(req: &TileRequest, policy: &TilingPolicy) -> TilePlan {
    let regions = regions(req);
    let mut tiles = Vec::new();
    let want = req.threads.max(1).saturating_mul(policy.min_tiles_per_thread.max(1));
    let one_block = req.block.width <= 1 && req.block.height <= 1;
    if !req.has_fast && req.has_flexible && one_block {
        // A flexible-only kernel of 1×1 blocks processes its whole domain with one function and
        // every tile is block-aligned: full-width bands of the domain, edge columns included, so a
        // row kernel gets whole rows (the SDK's `Tile::with_rows` serves their edges) instead of
        // one-pixel-wide edge tiles.
        cut(regions.flexible_domain, TileFunction::Flexible, true, req, policy, want, &mut tiles);
        return TilePlan { regions, tiles };
    }
    let aligned_fn =
        if req.has_fast { Some(TileFunction::Fast) } else { req.has_flexible.then_some(TileFunction::Flexible) };
    if let Some(f) = aligned_fn {
        cut(regions.aligned, f, true, req, policy, want, &mut tiles);
    }
    if req.has_flexible {
        for band in minus(regions.flexible_domain, regions.aligned) {
            cut(band, TileFunction::Flexible, false, req, policy, want / 4 + 1, &mut tiles);
        }
    }
    TilePlan { regions, tiles }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A request of `w`×`h` over U8 images on 2 threads (also the fusion planner's tests' fixture).
    pub(crate) fn req(
        w: u32,
        h: u32,
        block: (u32, u32),
        nb: (i32, i32, i32, i32),
        border: BorderMode,
        fast: bool,
        flex: bool,
    ) -> TileRequest {
        TileRequest {
            width: w,
            height: h,
            block: TileBlockSize { width: block.0, height: block.1 },
            neighborhood: Neighborhood::new(nb.0, nb.1, nb.2, nb.3),
            border,
            has_fast: fast,
            has_flexible: flex,
            input_bytes_per_pixel: 1,
            output_bytes_per_pixel: 1,
            threads: 2,
        }
    }

    #[test]
    fn requests_at_the_ends_of_their_types_give_a_plan_not_an_overflow() {
        // `vx::tile_plan` is public with public fields: byte counts and neighbourhoods near their
        // types' ends once made a row's bytes wrap to 0 and a division by it panic.
        let policy = TilingPolicy { min_tiles_per_thread: usize::MAX, ..TilingPolicy::default() };
        for (inb, outb, nb) in [
            (1usize << 63, 0usize, (0, 0, 0, 0)),
            (usize::MAX, usize::MAX, (0, 0, 0, 0)),
            (2, 1, (i32::MIN, i32::MAX, i32::MIN, i32::MAX)),
        ] {
            let r = TileRequest {
                input_bytes_per_pixel: inb,
                output_bytes_per_pixel: outb,
                threads: usize::MAX,
                ..req(64, 16, (1, 1), nb, BorderMode::Undefined, true, true)
            };
            let p = plan(&r, &policy);
            let area: u64 = p.tiles.iter().map(|t| t.rect.width() as u64 * t.rect.height() as u64).sum();
            let done = processed(&r);
            assert_eq!(area, done.width() as u64 * done.height() as u64, "{inb} {outb} {nb:?}");
        }
    }

    #[test]
    fn spec_example_12x6_posterize_is_all_fast() {
        let p = plan(&req(12, 6, (4, 1), (0, 0, 0, 0), BorderMode::Undefined, true, false), &TilingPolicy::default());
        assert_eq!(p.regions.aligned, Rect::full(12, 6));
        assert!(p.tiles.iter().all(|t| t.function == TileFunction::Fast));
        assert_eq!(p.tiles.iter().map(|t| t.rect.width() as u64 * t.rect.height() as u64).sum::<u64>(), 72);
    }

    #[test]
    fn spec_example_14x6_leaves_a_2_wide_strip() {
        let fast_only =
            plan(&req(14, 6, (4, 1), (0, 0, 0, 0), BorderMode::Undefined, true, false), &TilingPolicy::default());
        assert_eq!(fast_only.regions.aligned, Rect::new(0, 0, 12, 6));
        assert!(fast_only.tiles.iter().all(|t| t.rect.end_x <= 12));
        let both = plan(&req(14, 6, (4, 1), (0, 0, 0, 0), BorderMode::Undefined, true, true), &TilingPolicy::default());
        let flex: Vec<Rect> =
            both.tiles.iter().filter(|t| t.function == TileFunction::Flexible).map(|t| t.rect).collect();
        assert_eq!(flex, [Rect::new(12, 0, 14, 6)]);
    }

    #[test]
    fn spec_example_14x8_with_neighborhood() {
        // 4x1 block, 3x3 neighborhood. Undefined: safe [1,13)x[1,7), aligned [4,12)x[1,7).
        let r = regions(&req(14, 8, (4, 1), (-1, 1, -1, 1), BorderMode::Undefined, true, true));
        assert_eq!(r.safe, Rect::new(1, 1, 13, 7));
        assert_eq!(r.aligned, Rect::new(4, 1, 12, 7));
        assert_eq!(r.flexible_domain, r.safe);
        let r = regions(&req(14, 8, (4, 1), (-1, 1, -1, 1), BorderMode::Self_, true, true));
        assert_eq!(r.flexible_domain, Rect::full(14, 8));
    }

    /// A policy with no thread floor: `min_parallel_pixels` does not concern the planner.
    fn policy(budget: usize, per_thread: usize, min_px: usize) -> TilingPolicy {
        TilingPolicy {
            cache_budget_bytes: budget,
            min_tiles_per_thread: per_thread,
            min_tile_pixels: min_px,
            min_parallel_pixels: 0,
            split_by_cost: false,
            ..TilingPolicy::default()
        }
    }

    /// The tiles of `f` in plan order.
    fn tiles_of(p: &TilePlan, f: TileFunction) -> Vec<Rect> {
        p.tiles.iter().filter(|t| t.function == f).map(|t| t.rect).collect()
    }

    /// Every fast tile starts on the block grid and holds whole blocks.
    fn assert_on_grid(p: &TilePlan, (bw, bh): (u32, u32)) {
        for t in tiles_of(p, TileFunction::Fast) {
            assert!(
                t.start_x % bw == 0 && t.start_y % bh == 0 && t.width() % bw == 0 && t.height() % bh == 0,
                "fast tile {t} off the {bw}x{bh} grid"
            );
        }
    }

    /// A grid of tiles: `xs` and `ys` are the (start, length) of the columns and rows.
    fn grid(xs: &[(u32, u32)], ys: &[(u32, u32)]) -> Vec<Rect> {
        ys.iter().flat_map(|&(y, h)| xs.iter().map(move |&(x, w)| Rect::new(x, y, x + w, y + h))).collect()
    }

    #[test]
    fn a_split_row_is_cut_in_whole_blocks() {
        // 1000 wide, 4×2 blocks, 2 bytes a pixel, budget 1000: one block row (4000 bytes) exceeds
        // it, so tiles are 1000 / (2·2) = 250 → 248 pixels wide (whole blocks), 2 rows high
        // (496 bytes a row: 2 rows fit, one block).
        let mut r = req(1000, 8, (4, 2), (0, 0, 0, 0), BorderMode::Undefined, true, false);
        r.threads = 1;
        let p = plan(&r, &policy(1000, 1, 1));
        let cols = [(0, 248), (248, 248), (496, 248), (744, 248), (992, 8)];
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&cols, &[(0, 2), (2, 2), (4, 2), (6, 2)]));
        assert_on_grid(&p, (4, 2));
        assert!(p.tiles.iter().all(|t| t.blocks == (t.rect.width() / 4 * t.rect.height() / 2) as u64));
    }

    #[test]
    fn a_split_row_with_a_neighborhood_leaves_room_for_it_and_stays_on_the_grid() {
        // 1000×10, neighborhood (-2, 2, -1, 1) under Undefined: safe [2, 998) × [1, 9), aligned to
        // 4×2 blocks [4, 996) × [2, 8). A tile row reads 4 more columns: (1000 / 4 − 4) = 246 → 244
        // wide; the two halo rows of input (2 · 248 bytes) leave one row of 496 bytes: one block.
        let mut r = req(1000, 10, (4, 2), (-2, 2, -1, 1), BorderMode::Undefined, true, false);
        r.threads = 1;
        let p = plan(&r, &policy(1000, 1, 1));
        assert_eq!(p.regions.aligned, Rect::new(4, 2, 996, 8));
        let cols = [(4, 244), (248, 244), (492, 244), (736, 244), (980, 16)];
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&cols, &[(2, 2), (4, 2), (6, 2)]));
        assert_on_grid(&p, (4, 2));
    }

    #[test]
    fn a_tiny_budget_still_gives_one_block_per_tile() {
        let mut r = req(40, 6, (4, 3), (0, 0, 0, 0), BorderMode::Undefined, true, false);
        r.threads = 1;
        let p = plan(&r, &policy(1, 1, 1));
        let cols: Vec<(u32, u32)> = (0..10).map(|i| (i * 4, 4)).collect();
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&cols, &[(0, 3), (3, 3)]));
        assert!(p.tiles.iter().all(|t| t.blocks == 1));
    }

    #[test]
    fn the_cache_budget_sets_the_height_in_whole_blocks() {
        // 16 wide, 2 bytes a pixel: 32 bytes a row; 224 bytes fit 7 rows, 6 in 4×2 blocks.
        let mut r = req(16, 32, (4, 2), (0, 0, 0, 0), BorderMode::Undefined, true, false);
        r.threads = 1;
        let p = plan(&r, &policy(224, 1, 1));
        let rows = [(0, 6), (6, 6), (12, 6), (18, 6), (24, 6), (30, 2)];
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&[(0, 16)], &rows));
        assert_on_grid(&p, (4, 2));
    }

    #[test]
    fn the_parallel_height_is_rounded_up_to_whole_blocks() {
        // 2×4 blocks, 3 threads × 1 tile: 32 / 3 = 11 rows → 12.
        let mut r = req(16, 32, (2, 4), (0, 0, 0, 0), BorderMode::Undefined, true, false);
        r.threads = 3;
        let p = plan(&r, &policy(1 << 20, 1, 1));
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&[(0, 16)], &[(0, 12), (12, 12), (24, 8)]));
        assert_on_grid(&p, (2, 4));
    }

    #[test]
    fn the_minimum_tile_height_is_rounded_up_to_whole_blocks() {
        // 4 threads × 4 tiles would want 2 rows (→ 4, one block); 100 pixels need 7 rows of 16 → 8.
        let mut r = req(16, 32, (2, 4), (0, 0, 0, 0), BorderMode::Undefined, true, false);
        r.threads = 4;
        let p = plan(&r, &policy(1 << 20, 4, 100));
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&[(0, 16)], &[(0, 8), (8, 8), (16, 8), (24, 8)]));
        // Without the floor: one block row per tile, 8 tiles.
        let p = plan(&r, &policy(1 << 20, 4, 1));
        assert_eq!(p.tiles.len(), 8);
        assert_on_grid(&p, (2, 4));
    }

    #[test]
    fn edge_bands_get_a_quarter_of_the_tiles_plus_one() {
        // 66×64, 4×4 blocks, fast and flexible: aligned [0, 64)², a 2-wide flexible band on the
        // right. 4 threads × 4 = 16 tiles of 64×4; the band wants 16 / 4 + 1 = 5: 64 / 5 → 13 rows.
        let mut r = req(66, 64, (4, 4), (0, 0, 0, 0), BorderMode::Undefined, true, true);
        r.threads = 4;
        let p = plan(&r, &policy(1 << 20, 4, 1));
        let rows: Vec<(u32, u32)> = (0..16).map(|i| (i * 4, 4)).collect();
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&[(0, 64)], &rows));
        let band = [(0, 13), (13, 13), (26, 13), (39, 13), (52, 12)];
        assert_eq!(tiles_of(&p, TileFunction::Flexible), grid(&[(64, 2)], &band));
    }

    #[test]
    fn flexible_only_one_by_one_blocks_get_full_width_bands_and_others_do_not() {
        // Self_ with a 3×3 neighborhood: the whole image in full-width bands, 2 threads × 2 tiles.
        let p = plan(&req(20, 12, (1, 1), (-1, 1, -1, 1), BorderMode::Self_, false, true), &policy(1 << 20, 2, 1));
        assert_eq!(p.tiles.iter().map(|t| t.function).collect::<Vec<_>>(), [TileFunction::Flexible; 4]);
        assert_eq!(tiles_of(&p, TileFunction::Flexible), grid(&[(0, 20)], &[(0, 3), (3, 3), (6, 3), (9, 3)]));
        // Under Undefined: bands of the safe region.
        let p = plan(&req(20, 12, (1, 1), (-1, 1, -1, 1), BorderMode::Undefined, false, true), &policy(1 << 20, 2, 1));
        assert_eq!(tiles_of(&p, TileFunction::Flexible), grid(&[(1, 18)], &[(1, 3), (4, 3), (7, 3), (10, 1)]));
        // Blocks of 1×2 or 2×1: the aligned part, then the edge bands (one-pixel edge columns).
        for block in [(1, 2), (2, 1)] {
            let p = plan(&req(20, 12, block, (-1, 1, -1, 1), BorderMode::Self_, false, true), &policy(1 << 20, 2, 1));
            assert!(p.tiles.iter().any(|t| t.rect.width() < 20), "{block:?}: {:?}", p.tiles);
        }
        // With a fast function too, the aligned part goes to it.
        let p = plan(&req(20, 12, (1, 1), (-1, 1, -1, 1), BorderMode::Self_, true, true), &policy(1 << 20, 2, 1));
        assert_eq!(p.regions.aligned, Rect::new(1, 1, 19, 11));
        assert!(tiles_of(&p, TileFunction::Fast).iter().all(|t| t.start_x == 1 && t.end_x == 19));
        assert_eq!(tiles_of(&p, TileFunction::Fast).len(), 4);
        assert!(tiles_of(&p, TileFunction::Flexible).iter().any(|t| t.width() == 1));
        // Fast only, 1×1 blocks: all fast.
        let p = plan(&req(20, 12, (1, 1), (0, 0, 0, 0), BorderMode::Undefined, true, false), &policy(1 << 20, 2, 1));
        assert_eq!(tiles_of(&p, TileFunction::Fast), grid(&[(0, 20)], &[(0, 3), (3, 3), (6, 3), (9, 3)]));
        assert!(tiles_of(&p, TileFunction::Flexible).is_empty());
    }
}
