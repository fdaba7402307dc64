//! Tests of the fusion planner: the design's worked example (§3.5, §5.2), the tiling spec's
//! examples as single members and chains (every member's chunks give `tiling::plan::plan`'s
//! pixels and functions), and a randomized differential test against an independent per-row model
//! (rings that poison overwritten slots). `VX_FUSION_PLAN_CASES=100000` for a long run.

use std::ops::Range;

use vx_plugin_abi::{BorderMode, Rect};

use super::plan::{
    BandLayout, GroupGeometry, GroupImage, MemberCalls, MemberGeometry, RowFill, member_rows, plan_band,
    ring_capacities, ring_needs, row_pieces, source_row,
};
use crate::graph::tiling::plan::{TileFunction, TileRequest, TilingPolicy, plan, regions};

fn req(
    w: u32,
    h: u32,
    block: (u32, u32),
    nb: (i32, i32, i32, i32),
    border: BorderMode,
    (fast, flexible): (bool, bool),
) -> TileRequest {
    crate::graph::tiling::plan::tests::req(w, h, block, nb, border, fast, flexible)
}

fn ring(producer: usize, readers: &[usize]) -> GroupImage {
    GroupImage { producer, readers: readers.to_vec(), fused: true }
}

fn materialized(producer: usize, readers: &[usize]) -> GroupImage {
    GroupImage { producer, readers: readers.to_vec(), fused: false }
}

const REFLECT: MemberCalls = MemberCalls::RowEntry(RowFill::Reflect101);
const FLEX: (bool, bool) = (false, true);

#[test]
fn row_sources_follow_the_sdks_border_rules() {
    // The table of `vx_plugin_abi::tile::border`'s test of `source`, which this copies.
    let at = |fill, n| (-4..n + 4).map(|i| source_row(i, n, fill)).collect::<Vec<_>>();
    let r101: Vec<_> = at(RowFill::Reflect101, 5).into_iter().map(Option::unwrap).collect();
    assert_eq!(r101, [4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0]);
    let rep: Vec<_> = at(RowFill::Replicate, 5).into_iter().map(Option::unwrap).collect();
    assert_eq!(rep, [0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 4]);
    assert_eq!(at(RowFill::Constant, 2), [None, None, None, None, Some(0), Some(1), None, None, None, None]);
    assert!(at(RowFill::Reflect101, 1).iter().all(|s| *s == Some(0)));
    assert_eq!(source_row(-1, 2, RowFill::Reflect101), Some(1));
    assert_eq!(source_row(-3, 2, RowFill::Reflect101), Some(1));
    assert_eq!(source_row(-7, 3, RowFill::Reflect101), Some(1)); // periodic: … 1 0 1 2 1 0 1 …
}

/// §3.5's tile requests: gaussian3x3 (G) → sobel3x3 (S: gx, gy) → magnitude (M) → threshold (T).
fn edge_pipeline_requests(w: u32, h: u32) -> [TileRequest; 4] {
    let row3 = req(w, h, (1, 1), (-1, 1, -1, 1), BorderMode::Self_, FLEX);
    let point = req(w, h, (1, 1), (0, 0, 0, 0), BorderMode::Undefined, FLEX);
    [row3, row3, point, point]
}

/// §3.5's group: G, S row entries (reflect-101), M, T on descriptors; images blur, gx, gy, mag.
fn edge_pipeline(w: u32, h: u32) -> GroupGeometry {
    let calls = [REFLECT, REFLECT, MemberCalls::Descriptors, MemberCalls::Descriptors];
    let reqs = edge_pipeline_requests(w, h);
    let members = reqs.iter().zip(calls).map(|(r, c)| MemberGeometry::from_request(r, c, false)).collect();
    let images = vec![ring(0, &[1]), ring(1, &[2]), ring(1, &[2]), ring(2, &[3])];
    GroupGeometry::new(h, members, images).unwrap()
}

#[test]
fn worked_example_of_the_design() {
    let g = edge_pipeline(3840, 2160);
    assert_eq!(g.block_lcm(), 1);
    assert_eq!(member_rows(&g, 64..128), [63..129, 64..128, 64..128, 64..128]);
    assert_eq!(member_rows(&g, 0..64), [0..65, 0..64, 0..64, 0..64]);
    assert_eq!(member_rows(&g, 2112..2160), [2111..2160, 2112..2160, 2112..2160, 2112..2160]);
    // 34 bands of 64, the last 48; 2160 + 2·33 blur rows.
    let layout = BandLayout::new(2160, 64, g.block_lcm());
    assert_eq!(layout.count(), 34);
    assert_eq!(layout.band(33), 2112..2160);
    assert_eq!(layout.bands().map(|b| member_rows(&g, b)[0].len()).sum::<usize>(), 2226);

    // k = 1: the prologue computes blur rows 63, 64 and 65 (S's row 64 reads them all; the
    // design's "63 and 64" is one short), then blur row y + 1 with S, M, T row y.
    let p = plan_band(&g, 64..128, 1);
    assert_eq!(p.step_count(), 64);
    assert_eq!(p.step(0), [63..66, 64..65, 64..65, 64..65]);
    for j in 1..64u32 {
        let y = 64 + j;
        assert_eq!(p.step(j as usize), [y + 1..y + 2, y..y + 1, y..y + 1, y..y + 1], "step {j}");
    }
    // At the bottom G has no row H to compute: its last step is empty.
    let p = plan_band(&g, 2112..2160, 1);
    assert_eq!(p.step(47), [2160..2160, 2159..2160, 2159..2160, 2159..2160]);
    assert_eq!(plan_band(&g, 0..64, 1).step(0), [0..2, 0..1, 0..1, 0..1]);

    // §5.2: capacities and bytes per set at 4K (pitch = W · bpp, already a multiple of 64).
    let bpp = [1, 2, 2, 1];
    let bytes = |caps: &[u32]| caps.iter().zip(bpp).map(|(&c, b)| c as usize * 3840 * b).sum::<usize>();
    let caps = ring_capacities(&g, &layout, 1);
    assert_eq!(caps, [3, 1, 1, 1]);
    assert_eq!((caps[0] as usize * 3840, bytes(&caps)), (11_520, 30_720));
    let layout4 = BandLayout::new(2160, 64, 4);
    let caps = ring_capacities(&g, &layout4, 4);
    assert_eq!(caps, [6, 4, 4, 4]);
    assert_eq!(bytes(&caps), 99_840);
    // Interior closed form: cap = k + b − t of the widest reader window.
    assert_eq!(ring_needs(&g, &plan_band(&g, 64..128, 4))[0], 4 + 1 + 1);
}

#[test]
fn reflect_with_a_lopsided_neighbourhood_needs_the_sources_not_the_window() {
    // t = −2, b = 0, reflect-101: output row 0 reads rows 2, 1, 0 — outside [0 + t, 0 + b].
    let h = 10;
    let prod = MemberGeometry::from_request(
        &req(8, h, (1, 1), (0, 0, 0, 0), BorderMode::Undefined, FLEX),
        MemberCalls::Descriptors,
        false,
    );
    let cons = MemberGeometry::from_request(&req(8, h, (1, 1), (0, 0, -2, 0), BorderMode::Self_, FLEX), REFLECT, false);
    let g = GroupGeometry::new(h, vec![prod, cons], vec![ring(0, &[1])]).unwrap();
    assert_eq!(member_rows(&g, 0..1), [0..3, 0..1]);
    assert_eq!(plan_band(&g, 0..1, 1).step(0), [0..3, 0..1]);
    // Replicate reads row 0 only; Constant reads no row outside.
    for fill in [RowFill::Replicate, RowFill::Constant] {
        let mut g2 = vec![prod, cons];
        g2[1].calls = MemberCalls::RowEntry(fill);
        let g2 = GroupGeometry::new(h, g2, vec![ring(0, &[1])]).unwrap();
        assert_eq!(member_rows(&g2, 0..1), [0..1, 0..1], "{fill:?}");
    }
}

#[test]
fn groups_that_break_the_rules_are_refused() {
    let m = |nb, calls| MemberGeometry::from_request(&req(8, 8, (1, 1), nb, BorderMode::Self_, FLEX), calls, false);
    let point = m((0, 0, 0, 0), MemberCalls::Descriptors);
    let tall = m((0, 0, -1, 1), MemberCalls::Descriptors);
    assert!(GroupGeometry::new(8, vec![point, point], vec![ring(1, &[0])]).is_err());
    assert!(GroupGeometry::new(8, vec![point, tall], vec![ring(0, &[1])]).is_err());
    assert!(GroupGeometry::new(8, vec![point, tall], vec![materialized(0, &[1])]).is_ok());
    assert!(GroupGeometry::new(8, vec![point, m((0, 0, 1, 1), REFLECT)], vec![ring(0, &[1])]).is_err());
}

/// Each pixel's function over a member's chunks (`None`: not processed); a pixel processed twice
/// fails.
fn paint_chunks(r: &TileRequest, chunks: &[Range<u32>]) -> Vec<Option<TileFunction>> {
    let (w, regions) = (r.width as usize, regions(r));
    let mut px = vec![None; w * r.height as usize];
    for rows in chunks {
        for &(rect, f) in row_pieces(&regions, r.block, r.has_fast, r.has_flexible, rows.clone()).as_slice() {
            paint(&mut px, w, rect, f);
        }
    }
    px
}

fn paint(px: &mut [Option<TileFunction>], w: usize, rect: Rect, f: TileFunction) {
    for y in rect.start_y..rect.end_y {
        for x in rect.start_x..rect.end_x {
            let p = &mut px[y as usize * w + x as usize];
            assert!(p.is_none(), "pixel ({x}, {y}) processed twice");
            *p = Some(f);
        }
    }
}

/// Each pixel's function in the tiling planner's tiles.
fn paint_plan(r: &TileRequest) -> Vec<Option<TileFunction>> {
    let w = r.width as usize;
    let mut px = vec![None; w * r.height as usize];
    for t in plan(r, &TilingPolicy::default()).tiles {
        paint(&mut px, w, t.rect, t.function);
    }
    px
}

/// For a group whose members all compute every row of `P_n` in the band `[0, H)`: at every `k`,
/// each member's chunks give the tiling planner's pixels and functions, fast chunks on the block
/// grid; over bands, the sinks' rows are `P_n`'s, each once.
fn assert_like_the_tile_plan(reqs: &[TileRequest], g: &GroupGeometry) {
    let h = g.height();
    let l = g.block_lcm();
    for k in (1..=8).map(|i| i * l) {
        let p = plan_band(g, 0..h, k);
        for (n, r) in reqs.iter().enumerate() {
            let chunks: Vec<Range<u32>> = (0..p.step_count()).map(|j| p.step(j)[n].clone()).collect();
            assert_eq!(paint_chunks(r, &chunks), paint_plan(r), "member {n}, k = {k}");
            let rows = g.members()[n].processed;
            assert_eq!(p.rows[n], if rows.is_empty() { 0..0 } else { rows.start_y..rows.end_y }, "member {n}");
        }
        for band_rows in 1..=h {
            let layout = BandLayout::new(h, band_rows, l);
            let mut count = vec![vec![0u32; h as usize]; reqs.len()];
            for band in layout.bands() {
                for (n, r) in member_rows(g, band).iter().enumerate() {
                    r.clone().for_each(|y| count[n][y as usize] += 1);
                }
            }
            let sinks = (0..reqs.len()).filter(|&n| g.images().iter().all(|i| i.producer != n));
            for n in sinks {
                let p = g.members()[n].processed;
                let want: Vec<u32> =
                    (0..h).map(|y| u32::from(!p.is_empty() && (p.start_y..p.end_y).contains(&y))).collect();
                assert_eq!(count[n], want, "sink {n}, bands of {band_rows}");
            }
        }
    }
}

#[test]
fn the_spec_examples_alone_and_chained() {
    let (u, s) = (BorderMode::Undefined, BorderMode::Self_);
    let d = MemberCalls::Descriptors;
    let posterize = |w, h, fns| req(w, h, (4, 1), (0, 0, 0, 0), u, fns);
    let nb3 = |w, h, border| req(w, h, (4, 1), (-1, 1, -1, 1), border, (true, true));
    let geo = |reqs: &[TileRequest], calls: &[MemberCalls], images: Vec<GroupImage>| {
        let members = reqs.iter().zip(calls).map(|(r, &c)| MemberGeometry::from_request(r, c, false)).collect();
        GroupGeometry::new(reqs[0].height, members, images).unwrap()
    };
    // 12×6 posterize, 4×1 blocks, fast only: all fast. 14×6: a 2-wide strip, unprocessed or flexible.
    for r in [posterize(12, 6, (true, false)), posterize(14, 6, (true, false)), posterize(14, 6, (true, true))] {
        assert_like_the_tile_plan(&[r], &geo(&[r], &[d], vec![]));
        assert_like_the_tile_plan(&[r, r], &geo(&[r, r], &[d, d], vec![ring(0, &[1])]));
        let three = [r, posterize(r.width, 6, (false, true)), r];
        assert_like_the_tile_plan(&three, &geo(&three, &[d, d, d], vec![ring(0, &[1, 2]), ring(1, &[2])]));
    }
    // 14×8, 4×1 blocks, 3×3 neighbourhood, Undefined and Self_: alone, after a posterize through a
    // materialized image, and a row kernel's version fused between two posterizes.
    for border in [u, s] {
        let r = nb3(14, 8, border);
        assert_like_the_tile_plan(&[r], &geo(&[r], &[d], vec![]));
        let chain = [posterize(14, 8, (true, true)), r];
        assert_like_the_tile_plan(&chain, &geo(&chain, &[d, d], vec![materialized(0, &[1])]));
        let rows = req(14, 8, (1, 1), (-1, 1, -1, 1), border, FLEX);
        let chain = [posterize(14, 8, (true, true)), rows, posterize(14, 8, (true, true))];
        let g = geo(&chain, &[d, REFLECT, d], vec![ring(0, &[1]), ring(1, &[2])]);
        assert_like_the_tile_plan(&chain, &g);
    }
}

#[test]
fn row_chunks_of_random_members_give_the_tile_plans_pixels_and_functions() {
    let mut rng = model::SplitMix(7);
    for case in 0..3000 {
        let (w, h) = (1 + rng.below(24), 1 + rng.below(40));
        let block = (1 + rng.below(4), 1 + rng.below(4));
        let nb = (-(rng.below(3) as i32), rng.below(3) as i32, -(rng.below(3) as i32), rng.below(3) as i32);
        let fns = [(true, false), (false, true), (true, true)][rng.below(3) as usize];
        let border = if fns.1 && rng.one_in(2) { BorderMode::Self_ } else { BorderMode::Undefined };
        let r = req(w, h, block, nb, border, fns);
        let g = GroupGeometry::new(h, vec![MemberGeometry::from_request(&r, MemberCalls::Descriptors, false)], vec![])
            .unwrap();
        let k = block.1 * (1 + rng.below(4));
        let p = plan_band(&g, 0..h, k);
        let chunks: Vec<Range<u32>> = (0..p.step_count()).map(|j| p.step(j)[0].clone()).collect();
        assert_eq!(paint_chunks(&r, &chunks), paint_plan(&r), "case {case}: {r:?}, k = {k}");
    }
}

#[test]
fn band_layouts_are_multiples_of_l() {
    let l = BandLayout::new(10, 5, 4);
    assert_eq!(l.band_rows, 8);
    assert_eq!(l.bands().collect::<Vec<_>>(), [0..8, 8..10]);
    assert_eq!(BandLayout::new(0, 5, 1).count(), 0);
    let one = BandLayout::new(12, 12, 3);
    assert_eq!((one.count(), one.band(0)), (1, 0..12));
    // A policy's band height near u32::MAX is one band (rounding it up to L once overflowed to 0
    // bands' height, and the count divided by it).
    for l in [1, 2, 3, 64] {
        let huge = BandLayout::new(2160, u32::MAX, l);
        assert_eq!((huge.count(), huge.band(0)), (1, 0..2160), "L = {l}");
    }
}

#[test]
fn block_heights_whose_lcm_would_overflow_are_refused() {
    let m = |bh| {
        MemberGeometry::from_request(
            &req(8, 8, (1, bh), (0, 0, 0, 0), BorderMode::Self_, FLEX),
            MemberCalls::Descriptors,
            false,
        )
    };
    // 65537 and 65539 are coprime: their lcm (about 2^32) overflowed u32.
    let Err(e) = GroupGeometry::new(70000, vec![m(65537), m(65539)], vec![ring(0, &[1])]) else { panic!("refused") };
    assert!(e.contains("a least common multiple above 1073741824 rows"), "{e}");
    // An lcm above the image height is fine (a flexible kernel's strips): one step covers it.
    assert!(GroupGeometry::new(5, vec![m(4), m(6)], vec![ring(0, &[1])]).is_ok());
    assert!(GroupGeometry::new(5, vec![m(1 << 14), m((1 << 14) + 1)], vec![ring(0, &[1])]).is_ok());
}

mod model;
