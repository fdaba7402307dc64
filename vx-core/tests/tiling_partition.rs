//! Property tests of the tiling extension's two tables.
//!
//! An independent per-pixel model of the spec (written here, not shared with the runtime) says for
//! every output pixel which function must process it: none, fast or flexible. The planner's tiles
//! and a real graph run are checked against it over random image sizes (1×1, primes, smaller than the
//! neighborhood), block sizes, asymmetric neighborhoods, both border modes and the three function
//! combinations: no pixel processed twice, fast tiles on the block grid with whole blocks, flexible
//! tiles under `Undefined` never needing pixels outside the image, tile memory as specified.

use proptest::prelude::*;
use vx::tile_plan::{TileFunction, TileRequest, TilingPolicy, plan};
use vx::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    None,
    Fast,
    Flexible,
}

#[derive(Clone, Copy, Debug)]
struct Case {
    w: u32,
    h: u32,
    bw: u32,
    bh: u32,
    nb: Neighborhood,
    self_border: bool,
    fast: bool,
    flexible: bool,
}

/// The spec, pixel by pixel. A pixel is *safe* when its whole neighborhood is inside the image; it
/// is in the *aligned subset* when every pixel of its tile block is safe.
fn model(c: &Case, x: u32, y: u32) -> Expect {
    let (w, h) = (c.w as i64, c.h as i64);
    let safe = |x: i64, y: i64| {
        x + c.nb.left as i64 >= 0
            && x + (c.nb.right as i64) < w
            && y + c.nb.top as i64 >= 0
            && y + (c.nb.bottom as i64) < h
    };
    let (bx0, by0) = ((x / c.bw * c.bw) as i64, (y / c.bh * c.bh) as i64);
    let (bx1, by1) = (bx0 + c.bw as i64 - 1, by0 + c.bh as i64 - 1);
    let block_safe = safe(bx0, by0) && safe(bx1, by1) && bx1 < w && by1 < h;
    if block_safe && c.fast {
        Expect::Fast
    } else if c.flexible && (c.self_border || safe(x as i64, y as i64)) {
        Expect::Flexible
    } else {
        Expect::None
    }
}

fn case() -> impl Strategy<Value = Case> {
    let dims = prop_oneof![Just(1u32), Just(2), Just(3), Just(7), Just(13), Just(31), 1u32..=70];
    let block = prop_oneof![Just(1u32), Just(4), Just(16), 1u32..=9];
    (dims.clone(), dims, block.clone(), block, -3i32..=0, 0i32..=3, -3i32..=0, 0i32..=3, any::<bool>(), 0u8..3)
        .prop_map(|(w, h, bw, bh, l, r, t, b, self_border, funcs)| Case {
            w,
            h,
            bw,
            bh,
            nb: Neighborhood::new(l, r, t, b),
            self_border,
            fast: funcs != 1,
            flexible: funcs != 0,
        })
}

fn border(c: &Case) -> BorderMode {
    if c.self_border { BorderMode::Self_ } else { BorderMode::Undefined }
}

fn is_prohibited(c: &Case) -> bool {
    c.self_border && !c.flexible
}

/// Check a list of (rect, function, blocks, tile memory seen) against the model.
fn check_tiles(c: &Case, tiles: &[(Rect, Expect, u64)]) -> Result<(), TestCaseError> {
    let mut seen = vec![Expect::None; (c.w * c.h) as usize];
    let mut count = vec![0u8; (c.w * c.h) as usize];
    for &(r, f, blocks) in tiles {
        prop_assert!(!r.is_empty() && r.end_x <= c.w && r.end_y <= c.h, "tile {r} outside the image");
        prop_assert_eq!(blocks, r.width().div_ceil(c.bw) as u64 * r.height().div_ceil(c.bh) as u64);
        if f == Expect::Fast {
            prop_assert!(
                r.start_x % c.bw == 0 && r.start_y % c.bh == 0 && r.width() % c.bw == 0 && r.height() % c.bh == 0,
                "fast tile {r} off the {}x{} block grid",
                c.bw,
                c.bh
            );
        }
        let needs_outside = (r.start_x as i64 + (c.nb.left as i64)) < 0
            || r.end_x as i64 + c.nb.right as i64 > c.w as i64
            || (r.start_y as i64 + (c.nb.top as i64)) < 0
            || r.end_y as i64 + c.nb.bottom as i64 > c.h as i64;
        if f == Expect::Fast || !c.self_border {
            prop_assert!(!needs_outside, "{f:?} tile {r} reads outside the image under {:?}", border(c));
        }
        for y in r.start_y..r.end_y {
            for x in r.start_x..r.end_x {
                let i = (y * c.w + x) as usize;
                count[i] += 1;
                seen[i] = f;
            }
        }
    }
    for y in 0..c.h {
        for x in 0..c.w {
            let i = (y * c.w + x) as usize;
            prop_assert!(count[i] <= 1, "pixel ({x},{y}) processed {} times", count[i]);
            prop_assert_eq!(seen[i], model(c, x, y), "pixel ({}, {})", x, y);
        }
    }
    Ok(())
}

proptest! {
    // 30 000 cases (about 5 s in a debug build): fast tiles off the block grid in `cut` (the split
    // row's width, the parallel and the minimum tile height not in whole blocks) were each caught
    // within a second at this count and missed at 1 500 (issue 36). About one case in six is
    // fast-only under `Self_` and rejected.
    #![proptest_config(ProptestConfig { cases: 30_000, max_global_rejects: 30_000, ..ProptestConfig::default() })]

    #[test]
    fn planner_matches_the_spec_tables(c in case(), budget in 16usize..4096, per_thread in 1usize..6, min_px in 1usize..64, threads in 1usize..4) {
        prop_assume!(!is_prohibited(&c));
        let req = TileRequest {
            width: c.w, height: c.h,
            block: TileBlockSize { width: c.bw, height: c.bh },
            neighborhood: c.nb, border: border(&c), has_fast: c.fast, has_flexible: c.flexible,
            input_bytes_per_pixel: 1, output_bytes_per_pixel: 2, threads,
        };
        let policy = TilingPolicy { cache_budget_bytes: budget, min_tiles_per_thread: per_thread, min_tile_pixels: min_px, min_parallel_pixels: 0, split_by_cost: false, ..TilingPolicy::default() };
        let p = plan(&req, &policy);
        let tiles: Vec<(Rect, Expect, u64)> = p.tiles.iter().map(|t| (t.rect, match t.function {
            TileFunction::Fast => Expect::Fast,
            TileFunction::Flexible => Expect::Flexible,
        }, t.blocks)).collect();
        check_tiles(&c, &tiles)?;
    }
}

/// Tag functions for a real run: the fast function adds 1 to each output pixel of its tile, the
/// flexible one adds 16 (so a pixel processed twice would read 2, 17 or 32). Both check what the
/// spec promises them and fail the node otherwise.
fn tagging_kernel(ctx: &Context, c: &Case, tile_memory: usize) -> Kernel {
    let cc = *c;
    let check = move |args: &mut TileArgs<'_>, fast: bool| -> Result<(), TileError> {
        let mem = args.tile_memory_size();
        let input = args.input::<u8>(0)?;
        let mut out = args.output::<u8>(1)?;
        let fail = |m: &'static str| Err(TileError::new(Status::Failure, m));
        let blocks = out.width().div_ceil(cc.bw) as usize * out.height().div_ceil(cc.bh) as usize;
        if mem != tile_memory * blocks {
            return fail("tile memory size is not tile_memory_size x blocks");
        }
        if fast
            && (out.x() % cc.bw != 0 || out.y() % cc.bh != 0 || out.width() % cc.bw != 0 || out.height() % cc.bh != 0)
        {
            return fail("fast tile off the block grid");
        }
        // Under Undefined (and always for fast tiles) the whole neighborhood must be readable.
        let need = cc.self_border && !fast;
        for (x, y, ox, oy) in
            [(0, 0, cc.nb.left, cc.nb.top), (out.width() - 1, out.height() - 1, cc.nb.right, cc.nb.bottom)]
        {
            if !need && input.get(x, y, ox, oy).is_none() {
                return fail("the neighborhood of a tile lies outside the image");
            }
        }
        let add = if fast { 1 } else { 16 };
        for y in 0..out.height() {
            for x in 0..out.width() {
                let v = out.get(x, y);
                out.set(x, y, v + add);
            }
        }
        Ok(())
    };
    let (c1, c2) = (check, check);
    let mut b = ctx.tiling_kernel("test.tag", 1, 2).validate(|v, metas| {
        let i = v.image(0)?;
        metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
        Ok(())
    });
    if c.fast {
        b = b.fast(move |a| c1(a, true));
    }
    if c.flexible {
        b = b.flexible(move |a| c2(a, false));
    }
    let k = b.add().unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize { width: c.bw, height: c.bh })).unwrap();
    k.set_attribute(KernelAttribute::InputNeighborhood(c.nb)).unwrap();
    k.set_attribute(KernelAttribute::Border(border(c))).unwrap();
    k.set_attribute(KernelAttribute::TileMemorySize(tile_memory)).unwrap();
    k.finalize().unwrap();
    k
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn graph_runs_match_the_spec_tables(c in case(), tile_memory in prop_oneof![Just(0usize), 1usize..40], budget in 64usize..2048) {
        let ctx = Context::builder()
            .threads(2)
            .tiling_policy(TilingPolicy { cache_budget_bytes: budget, min_tiles_per_thread: 3, min_tile_pixels: 8, min_parallel_pixels: 0, split_by_cost: false, ..TilingPolicy::default() })
            .build()
            .unwrap();
        let k = tagging_kernel(&ctx, &c, tile_memory);
        let src = Image::new(&ctx, c.w, c.h, ImageFormat::U8).unwrap();
        let dst = Image::new(&ctx, c.w, c.h, ImageFormat::U8).unwrap();
        dst.copy_from(Rect::full(c.w, c.h), 0, &vec![0u8; (c.w * c.h) as usize]).unwrap();
        let g = Graph::new(&ctx).unwrap();
        g.add_node(&k, [&src, &dst]).unwrap();
        let result = g.process();
        if is_prohibited(&c) {
            // Fast only with Self_: verification fails whatever the image size.
            let e = result.unwrap_err();
            prop_assert_eq!(e.kind(), ErrorKind::NotSupported);
            return Ok(());
        }
        result.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let out = dst.to_vec::<u8>().unwrap();
        for y in 0..c.h {
            for x in 0..c.w {
                let want = match model(&c, x, y) { Expect::None => 0, Expect::Fast => 1, Expect::Flexible => 16 };
                prop_assert_eq!(out[(y * c.w + x) as usize], want, "pixel ({}, {}) of {:?}", x, y, c);
            }
        }
    }
}

#[test]
fn the_model_agrees_with_the_spec_examples() {
    // 14×8, 4×1 block, 3×3 neighborhood (the spec's border example).
    let c = Case {
        w: 14,
        h: 8,
        bw: 4,
        bh: 1,
        nb: Neighborhood::new(-1, 1, -1, 1),
        self_border: false,
        fast: true,
        flexible: true,
    };
    assert_eq!(model(&c, 0, 3), Expect::None, "edge pixel under Undefined");
    assert_eq!(model(&c, 1, 3), Expect::Flexible, "safe but in a block that is not");
    assert_eq!(model(&c, 4, 3), Expect::Fast);
    assert_eq!(model(&c, 12, 3), Expect::Flexible);
    assert_eq!(model(&c, 13, 3), Expect::None);
    let s = Case { self_border: true, ..c };
    assert_eq!(model(&s, 0, 0), Expect::Flexible);
    assert_eq!(model(&s, 4, 0), Expect::Flexible, "aligned but needs the row above the image");
}
