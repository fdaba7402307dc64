//! The tile-size policy as documented on [`TilingPolicy`] and in `vx::tile_plan`: tiles span
//! the region's full width unless one block row exceeds the cache budget; their height is the rows
//! that fit the budget (inputs with their neighborhood rows), in whole blocks, reduced so there are
//! at least `threads × min_tiles_per_thread` tiles when the image is large enough, but never below
//! `min_tile_pixels`; a flexible-only kernel of 1×1 blocks gets full-width bands of its domain.
//! Sizes are asserted exactly on fixed cases (the property test in `tiling_partition.rs` checks
//! coverage and the block grid, not sizes).

use vx::tile_plan::{PlannedTile, TileFunction, TilePlan, TileRequest, TilingPolicy, plan};
use vx::{BorderMode, Neighborhood, Rect, TileBlockSize};

/// A fast-only request without neighborhood, `bpp` bytes in and out.
fn request(w: u32, h: u32, block: (u32, u32), bpp: usize, threads: usize) -> TileRequest {
    TileRequest {
        width: w,
        height: h,
        block: TileBlockSize { width: block.0, height: block.1 },
        neighborhood: Neighborhood::new(0, 0, 0, 0),
        border: BorderMode::Undefined,
        has_fast: true,
        has_flexible: false,
        input_bytes_per_pixel: bpp,
        output_bytes_per_pixel: bpp,
        threads,
    }
}

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

/// The distinct tile widths and the tile heights down the first column, in plan order.
fn shape(p: &TilePlan) -> (Vec<u32>, Vec<u32>) {
    let first_x = p.tiles.first().map_or(0, |t| t.rect.start_x);
    let first_y = p.tiles.first().map_or(0, |t| t.rect.start_y);
    let widths = p.tiles.iter().filter(|t| t.rect.start_y == first_y).map(|t| t.rect.width()).collect();
    let heights = p.tiles.iter().filter(|t| t.rect.start_x == first_x).map(|t| t.rect.height()).collect();
    (widths, heights)
}

/// `n` times `v`, then `last` (if any).
fn runs(v: u32, n: usize, last: Option<u32>) -> Vec<u32> {
    let mut out = vec![v; n];
    out.extend(last);
    out
}

/// The tiles cover `area` exactly once.
fn assert_covers(tiles: &[PlannedTile], area: Rect) {
    let mut seen = vec![0u8; (area.width() * area.height()) as usize];
    for t in tiles {
        for y in t.rect.start_y..t.rect.end_y {
            for x in t.rect.start_x..t.rect.end_x {
                assert!(x >= area.start_x && x < area.end_x && y >= area.start_y && y < area.end_y, "{t:?}");
                seen[((y - area.start_y) * area.width() + x - area.start_x) as usize] += 1;
            }
        }
    }
    assert!(seen.iter().all(|&c| c == 1), "tiles do not cover {area} once");
}

#[test]
fn the_documented_defaults() {
    let d = TilingPolicy::default();
    assert_eq!(
        TilingPolicy { min_parallel_pixels: 16 * 1024, split_by_cost: true, ..policy(256 * 1024, 4, 16 * 1024) },
        d
    );
}

#[test]
fn full_width_tiles_with_the_default_policy_at_1080p() {
    // 1920 × 2 bytes = 3840 bytes a row: 68 rows fit 256 KiB. 4 threads × 4 tiles want
    // ⌈1080 / 16⌉ = 68 rows as well (and 68 × 1920 ≥ 16 Ki pixels): 16 tiles, 15 of 68 rows.
    let p = plan(&request(1920, 1080, (1, 1), 1, 4), &TilingPolicy::default());
    assert_eq!(shape(&p), (vec![1920], runs(68, 15, Some(60))));
    assert!(p.tiles.iter().all(|t| t.function == TileFunction::Fast && t.rect.width() == 1920));
    assert_covers(&p.tiles, Rect::full(1920, 1080));
    // One thread: the cache budget alone decides (16 tiles, more than 1 × 4).
    assert_eq!(plan(&request(1920, 1080, (1, 1), 1, 1), &TilingPolicy::default()).tiles.len(), 16);
    // 8 threads × 4 tiles: ⌈1080 / 32⌉ = 34 rows.
    let p = plan(&request(1920, 1080, (1, 1), 1, 8), &TilingPolicy::default());
    assert_eq!(shape(&p), (vec![1920], runs(34, 31, Some(26))));
}

#[test]
fn a_row_over_the_budget_is_split_into_block_multiples() {
    // 100 000 pixels × 8 bytes: a row is 800 000 bytes, over 256 KiB. Tiles are 262 144 / 8 =
    // 32 768 wide, one row high.
    let p = plan(&request(100_000, 4, (1, 1), 4, 2), &TilingPolicy::default());
    assert_eq!(shape(&p), (vec![32_768, 32_768, 32_768, 1696], vec![1; 4]));
    assert_covers(&p.tiles, Rect::full(100_000, 4));
    // The same with 3×2 blocks: 262 144 / (8·2) = 16 384 → 16 383 (a multiple of 3), two rows.
    let p = plan(&request(99_999, 4, (3, 2), 4, 2), &TilingPolicy::default());
    let (widths, heights) = shape(&p);
    assert_eq!(widths, [16_383, 16_383, 16_383, 16_383, 16_383, 16_383, 1_701]);
    assert_eq!(heights, [2, 2]);
    assert!(p.tiles.iter().all(|t| t.rect.start_x % 3 == 0 && t.rect.width() % 3 == 0));
    // A block row decides, not a pixel row: 100 × 2 bytes fit 500, 4 rows of them (2×4 blocks) do
    // not; 500 / (2·4) = 62 wide, 4 rows high.
    let p = plan(&request(100, 8, (2, 4), 1, 1), &policy(500, 1, 1));
    assert_eq!(shape(&p), (vec![62, 38], vec![4, 4]));
    // A row that just fits is not split.
    let p = plan(&request(100, 4, (1, 1), 1, 1), &policy(200, 1, 1));
    assert_eq!(shape(&p), (vec![100], vec![1; 4]));
    let p = plan(&request(100, 4, (1, 1), 1, 1), &policy(199, 1, 1));
    assert_eq!(shape(&p).0, [99, 1]);
}

#[test]
fn the_height_is_the_rows_that_fit_inputs_with_their_neighborhood_rows() {
    // 1024 wide, 1 + 1 bytes, 64 KiB: 32 rows of 2048 bytes fit.
    let mut r = request(1024, 256, (1, 1), 1, 1);
    let p = plan(&r, &policy(64 * 1024, 1, 1));
    assert_eq!(shape(&p), (vec![1024], runs(32, 8, None)));
    // A 3×3 neighborhood (Undefined): the region is [1, 1023) × [1, 255); a tile row touches
    // 1024 columns (2048 bytes) and the input's two extra rows take 2048 bytes: 31 rows.
    r.neighborhood = Neighborhood::new(-1, 1, -1, 1);
    let p = plan(&r, &policy(64 * 1024, 1, 1));
    assert_eq!(p.regions.aligned, Rect::new(1, 1, 1023, 255));
    assert_eq!(shape(&p), (vec![1022], runs(31, 8, Some(6))));
    assert_covers(&p.tiles, Rect::new(1, 1, 1023, 255));
    // Heavier inputs read more halo bytes: 3 bytes in, 1 out → rows of 4096, halo 6144: 14 rows.
    r.input_bytes_per_pixel = 3;
    let p = plan(&r, &policy(64 * 1024, 1, 1));
    assert_eq!(shape(&p).1, runs(14, 18, Some(2)));
    // In whole blocks: 4×4 blocks round the rows that fit down (31 → 28 under a 2-row halo of
    // 1 + 1 bytes; aligned region [4, 1020) × [4, 252)).
    r.input_bytes_per_pixel = 1;
    r.block = TileBlockSize { width: 4, height: 4 };
    let p = plan(&r, &policy(64 * 1024, 1, 1));
    assert_eq!(p.regions.aligned, Rect::new(4, 4, 1020, 252));
    assert_eq!(shape(&p), (vec![1016], runs(28, 8, Some(24))));
}

#[test]
fn at_least_threads_times_min_tiles_per_thread_when_the_image_is_large_enough() {
    for threads in 1..=6 {
        for per_thread in 1..=5 {
            let want = threads * per_thread;
            let p = plan(&request(512, 600, (1, 1), 1, threads), &policy(1 << 30, per_thread, 1));
            // The budget fits the whole image: parallelism alone sets the height, ⌈600 / want⌉.
            let th = 600u32.div_ceil(want as u32);
            assert_eq!(p.tiles.len(), 600usize.div_ceil(th as usize), "{threads} × {per_thread}");
            assert!(p.tiles.len() >= want, "{threads} × {per_thread}: {} tiles", p.tiles.len());
            assert!(p.tiles.iter().all(|t| t.rect.width() == 512 && t.rect.height() <= th));
            assert_covers(&p.tiles, Rect::full(512, 600));
        }
    }
    // Zero tiles per thread or zero threads count as one.
    assert_eq!(plan(&request(512, 600, (1, 1), 1, 0), &policy(1 << 30, 0, 1)).tiles.len(), 1);
    // Not large enough: 5 rows cannot make 16 tiles; one row each.
    assert_eq!(plan(&request(512, 5, (1, 1), 1, 4), &policy(1 << 30, 4, 1)).tiles.len(), 5);
}

#[test]
fn never_below_min_tile_pixels() {
    // 256² with 4 threads × 4 tiles would be 16 rows (4096 pixels); 16 Ki pixels need 64 rows.
    let p = plan(&request(256, 256, (1, 1), 1, 4), &TilingPolicy::default());
    assert_eq!(shape(&p), (vec![256], runs(64, 4, None)));
    // 128² is one tile of exactly 16 Ki pixels.
    let p = plan(&request(128, 128, (1, 1), 1, 4), &TilingPolicy::default());
    assert_eq!(shape(&p), (vec![128], vec![128]));
    // Smaller than min_tile_pixels: still one tile, never none.
    let p = plan(&request(100, 3, (1, 1), 1, 4), &TilingPolicy::default());
    assert_eq!(shape(&p), (vec![100], vec![3]));
    // Rounded up to whole blocks: 1000 pixels of a 100-wide image are 10 rows → 12 in 2×3 blocks.
    let p = plan(&request(100, 60, (2, 3), 1, 4), &policy(1 << 30, 4, 1000));
    assert_eq!(shape(&p), (vec![100], runs(12, 5, None)));
    // A floor above the image: one tile of the whole (block-aligned) height, never more.
    let p = plan(&request(100, 60, (2, 3), 1, 4), &policy(1 << 30, 4, 1 << 20));
    assert_eq!(shape(&p), (vec![100], vec![60]));
    // But the cache budget wins over min_tile_pixels: 100 × 2 bytes × 6 rows = 1200 bytes.
    let p = plan(&request(100, 60, (2, 3), 1, 4), &policy(1200, 4, 10_000));
    assert_eq!(shape(&p), (vec![100], runs(6, 10, None)));
}

#[test]
fn a_flexible_only_kernel_of_one_pixel_blocks_gets_full_width_bands() {
    // A row kernel: 1×1 blocks, border Self_, 5×5 neighborhood.
    let r = TileRequest {
        neighborhood: Neighborhood::new(-2, 2, -2, 2),
        border: BorderMode::Self_,
        has_fast: false,
        has_flexible: true,
        ..request(640, 480, (1, 1), 1, 2)
    };
    let p = plan(&r, &TilingPolicy::default());
    assert_eq!(p.regions.flexible_domain, Rect::full(640, 480));
    // 640 × 2 bytes (+4 columns) = 1288 bytes a row; the 4 halo rows take 2576: 201 rows fit;
    // 2 threads × 4 tiles want 60 rows (38 400 pixels ≥ 16 Ki).
    assert_eq!(shape(&p), (vec![640], runs(60, 8, None)));
    assert!(p.tiles.iter().all(|t| t.function == TileFunction::Flexible && t.blocks == 640 * 60));
    assert_covers(&p.tiles, Rect::full(640, 480));
    // Under Undefined: full-width bands of the safe region.
    let p = plan(&TileRequest { border: BorderMode::Undefined, ..r }, &TilingPolicy::default());
    assert_eq!(shape(&p).0, [636]);
    assert_covers(&p.tiles, Rect::new(2, 2, 638, 478));
    // With 2×1 blocks the edge columns are tiles of their own.
    let p = plan(&TileRequest { block: TileBlockSize { width: 2, height: 1 }, ..r }, &TilingPolicy::default());
    assert!(p.tiles.iter().any(|t| t.rect.width() == 2), "{:?}", p.tiles);
    assert_covers(&p.tiles, Rect::full(640, 480));
}

#[test]
fn at_least_the_wanted_tiles_for_every_count_the_rows_allow() {
    // The documented promise ("at least threads × min_tiles_per_thread tiles when the image is large
    // enough") for every count up to the image's rows. Rounding the rows per tile up (⌈600 / 26⌉ =
    // 24 rows, so 25 tiles) broke it; they are rounded down now (23 rows: 27 tiles).
    for want in 1..=600usize {
        let p = plan(&request(512, 600, (1, 1), 1, want), &policy(1 << 30, 1, 1));
        assert!(p.tiles.len() >= want, "{want} wanted, {} tiles", p.tiles.len());
    }
}
