//! The randomized differential test: random groups (chains, fan-in, fan-out; 1–6 members, heights
//! 1..70, lopsided neighbourhoods, blocks 1..4, every fill, `k` up to 8 or `L`, band heights
//! multiples of `L`) planned by the planner, then run row by row by an independent model: a ring
//! per fused image whose slot is poisoned when overwritten, a set of computed rows per
//! materialized image, every row a reader's window resolves to (by the model's own fill rules)
//! checked present when read, every row computed once per band, `R_n` recomputed by brute force,
//! and every capacity the smallest that works (one less, or `k` less when it must be a multiple of
//! `k`, fails in some band).
//!
//! `VX_FUSION_PLAN_CASES` sets the number of cases (default 3000, a few seconds in debug).

use std::ops::Range;

use vx_plugin_abi::{BorderMode, Rect};

use super::super::plan::{
    BandLayout, BandPlan, GroupGeometry, GroupImage, MemberCalls, MemberGeometry, RowFill, plan_band, ring_capacities,
    ring_slot, row_pieces,
};
use super::req;
use crate::graph::tiling::plan::{TileFunction, TileRequest, regions};

/// SplitMix64: a tiny deterministic generator.
pub(super) struct SplitMix(pub(super) u64);

impl SplitMix {
    pub(super) fn below(&mut self, n: u32) -> u32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as u32
    }

    pub(super) fn one_in(&mut self, n: u32) -> bool {
        self.below(n) == 0
    }
}

/// A random group with its members' tile requests and a run's `k` and bands.
struct Case {
    reqs: Vec<TileRequest>,
    group: GroupGeometry,
    k: u32,
    layout: BandLayout,
}

fn random_case(rng: &mut SplitMix) -> Case {
    let (h, w) = (1 + rng.below(70), 1 + rng.below(24));
    let m = 1 + rng.below(6) as usize;
    let mut images: Vec<GroupImage> = Vec::new();
    let mut outputs: Vec<Vec<usize>> = Vec::new();
    for n in 0..m {
        outputs.push((0..1 + rng.below(2)).map(|i| images.len() + i as usize).collect());
        for _ in 0..outputs[n].len() {
            images.push(GroupImage { producer: n, readers: Vec::new(), fused: !rng.one_in(5) });
        }
        if n > 0 {
            // A chain link most of the time, then fan-in from any earlier member.
            for e in 0..1 + rng.below(n.min(3) as u32) {
                let p = if e == 0 && !rng.one_in(3) { n - 1 } else { rng.below(n as u32) as usize };
                let i = outputs[p][rng.below(outputs[p].len() as u32) as usize];
                images[i].readers.push(n);
            }
        }
    }
    let fills = [RowFill::Reflect101, RowFill::Replicate, RowFill::Constant];
    let mut reqs = Vec::new();
    let mut members = Vec::new();
    for n in 0..m {
        let reads_ring = images.iter().any(|i| i.fused && i.readers.contains(&n));
        let (l, r) = (-(rng.below(3) as i32), rng.below(3) as i32);
        let (calls, r) = if rng.one_in(2) {
            let (t, b) = (-(rng.below(5) as i32), rng.below(5) as i32);
            let border = if rng.one_in(4) { BorderMode::Undefined } else { BorderMode::Self_ };
            let calls = MemberCalls::RowEntry(fills[rng.below(3) as usize]);
            (calls, req(w, h, (1, 1), (l, r, t, b), border, (false, true)))
        } else {
            let (t, b) = if reads_ring { (0, 0) } else { (-(rng.below(3) as i32), rng.below(3) as i32) };
            let fns = [(true, false), (false, true), (true, true)][rng.below(3) as usize];
            let border = if fns.1 && rng.one_in(2) { BorderMode::Self_ } else { BorderMode::Undefined };
            let block = (1 + rng.below(4), 1 + rng.below(4));
            (MemberCalls::Descriptors, req(w, h, block, (l, r, t, b), border, fns))
        };
        members.push(MemberGeometry::from_request(&r, calls, rng.one_in(5)));
        reqs.push(r);
    }
    let group = GroupGeometry::new(h, members, images).unwrap();
    let l = group.block_lcm();
    let k = l * (1 + rng.below((8 / l).max(1)));
    let layout = BandLayout::new(h, l * (1 + rng.below(h.div_ceil(l) + 1)), l);
    Case { reqs, group, k, layout }
}

/// The image row window row `y` reads, by the model's own rules (reflections walked one by one).
fn model_source(calls: MemberCalls, y: i64, h: i64) -> Option<i64> {
    let inside = |y: i64| (0..h).contains(&y);
    match calls {
        MemberCalls::Descriptors | MemberCalls::RowEntry(RowFill::Constant) => inside(y).then_some(y),
        MemberCalls::RowEntry(RowFill::Replicate) => Some(y.max(0).min(h - 1)),
        MemberCalls::RowEntry(RowFill::Reflect101) if h == 1 => Some(0),
        MemberCalls::RowEntry(RowFill::Reflect101) => {
            let mut y = y;
            while !inside(y) {
                y = if y < 0 { -y } else { 2 * (h - 1) - y };
            }
            Some(y)
        }
    }
}

fn rows(r: &Rect) -> Range<u32> {
    if r.is_empty() { 0..0 } else { r.start_y..r.end_y }
}

/// What the model knows of a case, derived from the case's data without the planner.
struct Model<'a> {
    case: &'a Case,
    /// Per member, the images it reads and writes.
    inputs: Vec<Vec<usize>>,
    outputs: Vec<Vec<usize>>,
    /// Per member: no in-group reader.
    sink: Vec<bool>,
    /// Per member: each band owes its band rows.
    owes: Vec<bool>,
}

impl<'a> Model<'a> {
    fn new(case: &'a Case) -> Model<'a> {
        let m = case.reqs.len();
        let images = case.group.images();
        let inputs = (0..m).map(|n| (0..images.len()).filter(|&i| images[i].readers.contains(&n)).collect()).collect();
        let outputs: Vec<Vec<usize>> =
            (0..m).map(|n| (0..images.len()).filter(|&i| images[i].producer == n).collect()).collect();
        let sink: Vec<bool> = outputs.iter().map(|o| o.iter().all(|&i| images[i].readers.is_empty())).collect();
        let owes = (0..m)
            .map(|n| sink[n] || case.group.members()[n].complete || outputs[n].iter().any(|&i| !images[i].fused))
            .collect();
        Model { case, inputs, outputs, sink, owes }
    }

    fn member(&self, n: usize) -> &MemberGeometry {
        &self.case.group.members()[n]
    }

    /// The rows of producer `p`'s processed region row `y` of member `n` reads.
    fn reads(&self, n: usize, y: u32) -> impl Iterator<Item = (usize, u32)> + '_ {
        let mem = self.member(n);
        let h = self.case.group.height() as i64;
        let window = y as i64 + mem.neighborhood.top as i64..=y as i64 + mem.neighborhood.bottom as i64;
        self.inputs[n].iter().flat_map(move |&i| {
            let p = self.case.group.images()[i].producer;
            let prows = rows(&self.member(p).processed);
            window
                .clone()
                .filter_map(move |w| model_source(mem.calls, w, h))
                .map(move |s| (i, s as u32))
                .filter(move |&(_, s)| prows.contains(&s))
        })
    }

    /// `R_n` by brute force: the rows needed, each block of `A_n` they touch whole, their hull.
    fn member_rows(&self, band: Range<u32>) -> Vec<Range<u32>> {
        let (h, m) = (self.case.group.height() as usize, self.case.reqs.len());
        let mut need = vec![vec![false; h]; m];
        let mut out = vec![0..0; m];
        for n in (0..m).rev() {
            let mem = self.member(n);
            let p = rows(&mem.processed);
            if self.owes[n] {
                band.clone().filter(|y| p.contains(y)).for_each(|y| need[n][y as usize] = true);
            }
            let (a, bh) = (rows(&mem.aligned), mem.block.height.max(1));
            let in_a: Vec<u32> = (0..h as u32).filter(|&y| need[n][y as usize] && a.contains(&y)).collect();
            for y in in_a {
                (y / bh * bh..y / bh * bh + bh).for_each(|z| need[n][z as usize] = true);
            }
            let (Some(lo), Some(hi)) = (need[n].iter().position(|&x| x), need[n].iter().rposition(|&x| x)) else {
                continue;
            };
            out[n] = lo as u32..hi as u32 + 1;
            for y in out[n].clone() {
                for (i, s) in self.reads(n, y) {
                    need[self.case.group.images()[i].producer][s as usize] = true;
                }
            }
        }
        out
    }

    /// Run one band of `plan` with rings of `caps` rows; the rows each member computed.
    fn run_band(&self, plan: &BandPlan, caps: &[u32]) -> Result<Vec<Vec<bool>>, String> {
        let g = &self.case.group;
        let (h, m, k) = (g.height() as usize, self.case.reqs.len(), self.case.k);
        let mut computed = vec![vec![false; h]; m];
        let mut ring: Vec<Vec<Option<u32>>> = caps.iter().map(|&c| vec![None; c as usize]).collect();
        let mut done: Vec<u32> = plan.rows.iter().map(|r| r.start).collect();
        for j in 0..plan.step_count() {
            for n in 0..m {
                let chunk = plan.step(j)[n].clone();
                if chunk.start != done[n] || chunk.end < chunk.start {
                    return Err(format!("step {j}: member {n} computes {chunk:?} after {}", done[n]));
                }
                done[n] = chunk.end;
                let sinks_rows = plan.band.start + j as u32 * k..plan.band.start + (j as u32 + 1) * k;
                if self.sink[n] && !chunk.is_empty() && (chunk.start < sinks_rows.start || chunk.end > sinks_rows.end) {
                    return Err(format!("step {j}: sink {n} computes {chunk:?}, not in {sinks_rows:?}"));
                }
                self.check_alignment(n, &chunk, caps)?;
                for y in chunk {
                    if !rows(&self.member(n).processed).contains(&y) || computed[n][y as usize] {
                        return Err(format!("step {j}: member {n} computes row {y} twice or outside P_n"));
                    }
                    for (i, s) in self.reads(n, y) {
                        let img = &g.images()[i];
                        let present = if img.fused {
                            ring[i][ring_slot(s, caps[i]) as usize] == Some(s)
                        } else {
                            computed[img.producer][s as usize]
                        };
                        if !present {
                            return Err(format!("step {j}: member {n} row {y} reads row {s} of image {i}: absent"));
                        }
                    }
                    computed[n][y as usize] = true;
                    for &i in self.outputs[n].iter().filter(|&&i| g.images()[i].fused) {
                        ring[i][ring_slot(y, caps[i]) as usize] = Some(y);
                    }
                }
            }
        }
        if done.iter().zip(&plan.rows).any(|(&d, r)| d != r.end) {
            return Err(format!("the steps end at {done:?}, R_n at {:?}", plan.rows));
        }
        Ok(computed)
    }

    /// A descriptor member's chunk, split at the wrap points of the rings it reads or writes: the
    /// pieces' boundaries inside `A_n`'s rows are on its block grid, and so are its fast pieces.
    fn check_alignment(&self, n: usize, chunk: &Range<u32>, caps: &[u32]) -> Result<(), String> {
        let mem = self.member(n);
        if mem.calls != MemberCalls::Descriptors || chunk.is_empty() {
            return Ok(());
        }
        let g = &self.case.group;
        let mut cuts: Vec<u32> = vec![chunk.start, chunk.end];
        for &i in self.inputs[n].iter().chain(&self.outputs[n]).filter(|&&i| g.images()[i].fused) {
            cuts.extend((chunk.start + 1..chunk.end).filter(|y| y.is_multiple_of(caps[i])));
        }
        cuts.sort_unstable();
        cuts.dedup();
        let (a, bh) = (rows(&mem.aligned), mem.block.height.max(1));
        if let Some(q) = cuts.iter().find(|&&q| a.start <= q && q <= a.end && !q.is_multiple_of(bh)) {
            return Err(format!("member {n}: chunk {chunk:?} cut at {q}, off its {bh}-row grid in A {a:?}"));
        }
        let r = &self.case.reqs[n];
        for piece in cuts.windows(2) {
            for &(rect, f) in
                row_pieces(&regions(r), r.block, r.has_fast, r.has_flexible, piece[0]..piece[1]).as_slice()
            {
                if f == TileFunction::Fast && (!rect.start_y.is_multiple_of(bh) || !rect.height().is_multiple_of(bh)) {
                    return Err(format!("member {n}: fast piece {rect} off the grid"));
                }
            }
        }
        Ok(())
    }

    /// Every band with rings of `caps` rows; the first failure.
    fn run(&self, caps: &[u32]) -> Result<(), String> {
        let (g, h) = (&self.case.group, self.case.group.height());
        let mut count = vec![vec![0u32; h as usize]; self.case.reqs.len()];
        for band in self.case.layout.bands() {
            let plan = plan_band(g, band.clone(), self.case.k);
            if plan.step_count() != band.len().div_ceil(self.case.k as usize) {
                return Err(format!("band {band:?}: {} steps", plan.step_count()));
            }
            let want = self.member_rows(band.clone());
            if plan.rows != want {
                return Err(format!("band {band:?}: R_n {:?}, the model's {want:?}", plan.rows));
            }
            let computed = self.run_band(&plan, caps).map_err(|e| format!("band {band:?}: {e}"))?;
            for (n, rows_n) in computed.iter().enumerate() {
                let got: Vec<u32> = (0..h).filter(|&y| rows_n[y as usize]).collect();
                if got != plan.rows[n].clone().collect::<Vec<_>>() {
                    return Err(format!("band {band:?}: member {n} computed {got:?}, R_n {:?}", plan.rows[n]));
                }
                let p = rows(&self.member(n).processed);
                for y in band.clone().filter(|y| p.contains(y)) {
                    count[n][y as usize] += 1;
                }
                if self.owes[n] && band.clone().any(|y| p.contains(&y) && !rows_n[y as usize]) {
                    return Err(format!("band {band:?}: member {n} owes its band rows, computed {got:?}"));
                }
                if self.sink[n] && got.iter().any(|y| !band.contains(y)) {
                    return Err(format!("band {band:?}: sink {n} computed {got:?}"));
                }
            }
        }
        // Over the bands, each processed row of a member is in exactly one band.
        if let Some(n) = (0..count.len()).find(|&n| {
            let p = rows(&self.member(n).processed);
            (0..h).any(|y| count[n][y as usize] != u32::from(p.contains(&y)))
        }) {
            return Err(format!("member {n}'s bands do not partition P_n"));
        }
        Ok(())
    }
}

/// What the random cases exercised, so a generator that drifts into trivial cases fails.
#[derive(Debug, Default)]
struct Coverage {
    multi_member: u64,
    multi_band: u64,
    rings_wider_than_k: u64,
    short_rings_caught: u64,
    short_rings_caught_by_k: u64,
    lopsided_reflect_readers: u64,
    blocked_descriptor_members: u64,
}

impl Coverage {
    fn note(&mut self, case: &Case) {
        let g = &case.group;
        self.multi_member += u64::from(g.members().len() > 1);
        self.multi_band += u64::from(case.layout.count() > 1);
        self.lopsided_reflect_readers += g
            .images()
            .iter()
            .flat_map(|i| &i.readers)
            .filter(|&&c| {
                let m = &g.members()[c];
                m.calls == MemberCalls::RowEntry(RowFill::Reflect101) && m.neighborhood.top != -m.neighborhood.bottom
            })
            .count() as u64;
        self.blocked_descriptor_members += g
            .members()
            .iter()
            .filter(|m| m.calls == MemberCalls::Descriptors && m.block.height > 1 && !m.aligned.is_empty())
            .count() as u64;
    }
}

fn check_case(case: &Case, rng: &mut SplitMix, cov: &mut Coverage) -> Result<(), String> {
    cov.note(case);
    let model = Model::new(case);
    let g = &case.group;
    if let Some(n) = (0..model.owes.len()).find(|&n| model.owes[n] != g.owes_band(n)) {
        return Err(format!("member {n}: owes its band rows {}, the model says {}", g.owes_band(n), model.owes[n]));
    }
    let caps = ring_capacities(g, &case.layout, case.k);
    for (i, img) in g.images().iter().enumerate() {
        let descriptors = std::iter::once(img.producer)
            .chain(img.readers.iter().copied())
            .any(|n| g.members()[n].calls == MemberCalls::Descriptors);
        let ok =
            if !img.fused { caps[i] == 0 } else { caps[i] >= 1 && (!descriptors || caps[i].is_multiple_of(case.k)) };
        if !ok {
            return Err(format!("image {i}: capacity {} (k = {}, descriptors {descriptors})", caps[i], case.k));
        }
    }
    model.run(&caps)?;
    cov.rings_wider_than_k += caps.iter().filter(|&&c| c > case.k).count() as u64;
    // One ring a row (or k rows) short must fail somewhere: the capacity is the peak.
    let smaller: Vec<(usize, u32)> = (0..caps.len())
        .filter(|&i| g.images()[i].fused)
        .map(|i| {
            let img = &g.images()[i];
            let descriptors =
                img.readers.iter().chain([&img.producer]).any(|&n| g.members()[n].calls == MemberCalls::Descriptors);
            (i, if descriptors { case.k } else { 1 })
        })
        .filter(|&(i, unit)| caps[i] > unit)
        .collect();
    if !smaller.is_empty() {
        let (i, unit) = smaller[rng.below(smaller.len() as u32) as usize];
        let mut short = caps.clone();
        short[i] -= unit;
        if model.run(&short).is_ok() {
            return Err(format!("image {i}: capacity {} is not the peak ({} works)", caps[i], short[i]));
        }
        cov.short_rings_caught += 1;
        cov.short_rings_caught_by_k += u64::from(unit > 1);
    }
    Ok(())
}

#[test]
fn the_planner_agrees_with_a_per_row_model_on_random_groups() {
    let cases: u64 = std::env::var("VX_FUSION_PLAN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let mut rng = SplitMix(0);
    let mut cov = Coverage::default();
    for seed in 0..cases {
        let mut case_rng = SplitMix(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 34);
        let case = random_case(&mut case_rng);
        if let Err(e) = check_case(&case, &mut rng, &mut cov) {
            panic!("case {seed}: {e}\nk = {}, {:?}\nrequests {:#?}\n{:#?}", case.k, case.layout, case.reqs, case.group);
        }
    }
    eprintln!("{cases} cases: {cov:?}");
    // Each kind of case is common (a few percent of cases at least).
    let floor = cases / 50;
    let c = &cov;
    for (what, n) in [
        ("multi-member groups", c.multi_member),
        ("multi-band runs", c.multi_band),
        ("rings wider than k", c.rings_wider_than_k),
        ("short rings caught", c.short_rings_caught),
        ("short rings caught by k rows", c.short_rings_caught_by_k),
        ("lopsided reflect-101 readers", c.lopsided_reflect_readers),
        ("descriptor members with tall blocks", c.blocked_descriptor_members),
    ] {
        assert!(n >= floor, "only {n} {what} in {cases} cases: {cov:?}");
    }
}

#[test]
fn the_model_catches_a_short_ring() {
    // The test of the test: the design's pipeline with the blur ring one row short.
    let case = Case {
        reqs: super::edge_pipeline_requests(16, 40).to_vec(),
        group: super::edge_pipeline(16, 40),
        k: 1,
        layout: BandLayout::new(40, 8, 1),
    };
    let model = Model::new(&case);
    let caps = ring_capacities(&case.group, &case.layout, 1);
    assert_eq!(caps, [3, 1, 1, 1]);
    assert_eq!(model.run(&caps), Ok(()));
    let err = model.run(&[2, 1, 1, 1]).unwrap_err();
    assert!(err.contains("image 0: absent"), "{err}");
}
