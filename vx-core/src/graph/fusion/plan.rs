//! The fusion planner: which rows each member of a fused group computes, when, and how many rows
//! each ring must hold (`docs/design/fusion.md` §3, §5.1). Pure functions over plain data — a
//! [`GroupGeometry`] (members in topological order, the group's images), a band of the sinks' rows
//! and `k`, the sinks' rows per call — so every rule is testable without a graph.
//!
//! - [`member_rows`] (§3.2, §3.3): per member, the rows `R_n` it computes for a band: backwards
//!   from the sinks, the hull of the rows its in-group readers' windows resolve to (through each
//!   reader's border fill: the *sources*, not the window), aligned to its block height inside its
//!   aligned region, clipped to its processed region. O(members + edges · neighbourhood) per band.
//! - [`plan_band`] (§3.4): the step table of a band: step `j` gives every member the rows
//!   `[from, to)` it computes once the sinks have reached row `Y0 + (j + 1)·k`, each member just in
//!   time for its readers. O(steps · (members + edges · neighbourhood)) per band.
//! - [`ring_needs`], [`ring_capacities`] (§5.1): the rows a fused image's ring must hold, the span
//!   from the lowest row still to be read to the highest row written, at its widest; the
//!   capacities are the widest over the bands, a multiple of `k` when a descriptor member reads or
//!   writes the ring. O(steps · edges · neighbourhood) per band, O(H / k · (members + edges ·
//!   neighbourhood)) for a whole image.
//! - [`BandLayout`]: bands of `[0, H)`, each a multiple of `L` (the lcm of the members' block
//!   heights) except the last. O(1) per band.
//! - [`row_pieces`] (§4.2): the pieces of a row chunk of a descriptor member and the function
//!   that processes each, exactly as `tiling::plan::plan` would. O(1).
//!
//! Ring slots are absolute: row `r` of a ring of `cap` rows lives in slot `r mod cap`
//! ([`ring_slot`]), so wrap points are multiples of `cap`, hence of `k` and of every block
//! height, and a descriptor chunk split at a wrap stays block-aligned.

use std::ops::Range;

use vx_plugin_abi::tile::{BorderFill, border_source};
use vx_plugin_abi::{Neighborhood, Rect, TileBlockSize};

use crate::graph::tiling::plan::{TileFunction, TileRegions, TileRequest, processed_in, regions};

/// How a row kernel makes up rows outside the image (the SDK's `BorderFill` without the constant's
/// value, which the host never needs: a constant row is the module's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum RowFill {
    /// `… 2 1 | 0 1 2 … n-2 n-1 | n-2 n-3 …` (OpenCV's `BORDER_REFLECT_101`).
    Reflect101,
    /// `… 0 0 | 0 1 … n-1 | n-1 n-1 …`.
    Replicate,
    /// A constant: rows outside the image read no image row.
    Constant,
}

/// Where row `y` of an image `height` rows high reads from under `fill` (`None`: the constant):
/// the SDK's own rule ([`border_source`]), which the module applies to the same rows.
pub(super) fn source_row(y: i64, height: i64, fill: RowFill) -> Option<i64> {
    let fill = match fill {
        RowFill::Reflect101 => BorderFill::Reflect101,
        RowFill::Replicate => BorderFill::Replicate,
        RowFill::Constant => BorderFill::Constant(0u8),
    };
    border_source(y, height, fill)
}

/// How the runner calls a member, which decides how its window rows resolve to image rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum MemberCalls {
    /// A row kernel's row entry: window row `y` reads [`source_row`]`(y, H, fill)`.
    RowEntry(RowFill),
    /// Tile descriptors (a generic kernel): window row `y` reads row `y` when inside the image,
    /// nothing outside. Reading a fused image this way needs `top == bottom == 0` (a ring is not
    /// linearly addressable).
    Descriptors,
}

impl MemberCalls {
    /// The image row window row `y` reads, `None` when it reads none.
    pub(super) fn source(self, y: i64, height: i64) -> Option<i64> {
        match self {
            MemberCalls::RowEntry(fill) => source_row(y, height, fill),
            MemberCalls::Descriptors => (0..height).contains(&y).then_some(y),
        }
    }
}

/// What the planner needs to know about a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MemberGeometry {
    /// The node's neighbourhood (`top ≤ 0 ≤ bottom`).
    pub(super) neighborhood: Neighborhood,
    /// The kernel's tile block.
    pub(super) block: TileBlockSize,
    /// `P_n`: the pixels some function processes (`tiling::plan::processed`).
    pub(super) processed: Rect,
    /// `A_n`: the block-aligned region, whose row chunks are whole blocks.
    pub(super) aligned: Rect,
    /// How the runner calls it.
    pub(super) calls: MemberCalls,
    /// It writes an image outside the group's list that must hold every processed row (a real
    /// image, or one read outside the group): each band owes its band rows, as a sink's.
    pub(super) complete: bool,
}

impl MemberGeometry {
    /// The geometry of a member from its tile request, as the tiling pass plans it.
    pub(super) fn from_request(req: &TileRequest, calls: MemberCalls, complete: bool) -> MemberGeometry {
        let r = regions(req);
        MemberGeometry {
            neighborhood: req.neighborhood,
            block: req.block,
            processed: processed_in(&r, req.has_fast, req.has_flexible),
            aligned: r.aligned,
            calls,
            complete,
        }
    }

    /// The rows of `P_n`, `[p0, p1)`.
    fn processed_rows(&self) -> (i64, i64) {
        rows_of(&self.processed)
    }

    /// `lo` rounded down to the block grid when it lies in `A_n`'s rows.
    fn align_down(&self, lo: i64) -> i64 {
        let (a0, a1) = rows_of(&self.aligned);
        let bh = self.block.height.max(1) as i64;
        if a0 <= lo && lo < a1 { lo.div_euclid(bh) * bh } else { lo }
    }

    /// An exclusive end `hi` rounded up to the block grid when it lies in `(a0, a1]`.
    fn align_up(&self, hi: i64) -> i64 {
        let (a0, a1) = rows_of(&self.aligned);
        let bh = self.block.height.max(1) as i64;
        if a0 < hi && hi <= a1 { (hi + bh - 1).div_euclid(bh) * bh } else { hi }
    }
}

/// The rows of a rectangle (`(0, 0)` when it is empty).
fn rows_of(r: &Rect) -> (i64, i64) {
    if r.is_empty() { (0, 0) } else { (r.start_y as i64, r.end_y as i64) }
}

/// An image of the group: written by one member, read by others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GroupImage {
    /// The member that writes it.
    pub(super) producer: usize,
    /// The members that read it (in-group readers only).
    pub(super) readers: Vec<usize>,
    /// It lives in a ring (a fused image); otherwise it is materialized (a real buffer, read in
    /// the same row order but never overwritten within a band).
    pub(super) fused: bool,
}

/// A group checked for the planner: one image height, members in topological order.
#[derive(Clone, Debug)]
pub(super) struct GroupGeometry {
    height: u32,
    members: Vec<MemberGeometry>,
    images: Vec<GroupImage>,
    /// Per member, the images it reads (indices into `images`, each once).
    inputs: Vec<Vec<usize>>,
    /// Per member, whether each band owes its band rows (a sink, a `complete` member or the writer
    /// of a materialized image).
    owes_band: Vec<bool>,
    /// `L`: the lcm of the members' block heights, at most [`MAX_BLOCK_LCM`].
    block_lcm: u32,
}

impl GroupGeometry {
    /// Check a group: every edge goes forward in `members` (topological order), neighbourhoods
    /// have `top ≤ 0 ≤ bottom`, and a descriptor member reading a fused image has no vertical
    /// neighbourhood. O(members + edges).
    pub(super) fn new(
        height: u32,
        members: Vec<MemberGeometry>,
        mut images: Vec<GroupImage>,
    ) -> Result<GroupGeometry, String> {
        let m = members.len();
        let mut inputs = vec![Vec::new(); m];
        let mut read = vec![false; m];
        let mut owes_band: Vec<bool> = members.iter().map(|mem| mem.complete).collect();
        for (n, mem) in members.iter().enumerate() {
            let nb = mem.neighborhood;
            if nb.top > 0 || nb.bottom < 0 {
                return Err(format!("member {n}: neighbourhood rows {}..={} do not hold row 0", nb.top, nb.bottom));
            }
        }
        let Some(l) = block_lcm(members.iter().map(|m| m.block.height)) else {
            let heights: Vec<u32> = members.iter().map(|m| m.block.height).collect();
            return Err(format!(
                "the members' block heights {heights:?} have a least common multiple above {MAX_BLOCK_LCM} rows"
            ));
        };
        for (i, img) in images.iter_mut().enumerate() {
            img.readers.sort_unstable();
            img.readers.dedup();
            if img.producer >= m {
                return Err(format!("image {i}: producer {} is not a member", img.producer));
            }
            owes_band[img.producer] |= !img.fused;
            for &c in &img.readers {
                if c >= m || c <= img.producer {
                    return Err(format!("image {i}: reader {c} does not follow its producer {}", img.producer));
                }
                let nb = members[c].neighborhood;
                if img.fused && members[c].calls == MemberCalls::Descriptors && (nb.top, nb.bottom) != (0, 0) {
                    return Err(format!("member {c} reads fused image {i} through descriptors with vertical rows"));
                }
                inputs[c].push(i);
                read[img.producer] = true;
            }
        }
        for (owes, read) in owes_band.iter_mut().zip(&read) {
            *owes |= !read;
        }
        Ok(GroupGeometry { height, members, images, inputs, owes_band, block_lcm: l })
    }

    /// The image height shared by every member.
    pub(super) fn height(&self) -> u32 {
        self.height
    }

    /// The members, in topological order.
    pub(super) fn members(&self) -> &[MemberGeometry] {
        &self.members
    }

    /// The group's images.
    pub(super) fn images(&self) -> &[GroupImage] {
        &self.images
    }

    /// Whether each band owes member `n`'s band rows (a sink, `complete`, or the writer of a
    /// materialized image).
    pub(super) fn owes_band(&self, n: usize) -> bool {
        self.owes_band[n]
    }

    /// `L`: the lcm of the members' block heights; band starts and `k` are multiples of it.
    pub(super) fn block_lcm(&self) -> u32 {
        self.block_lcm
    }

    /// Whether a descriptor member writes or reads image `i` (its ring capacity is then a multiple
    /// of `k`, §5.1).
    fn touched_by_descriptors(&self, i: usize) -> bool {
        let img = &self.images[i];
        std::iter::once(img.producer)
            .chain(img.readers.iter().copied())
            .any(|n| self.members[n].calls == MemberCalls::Descriptors)
    }

    /// The rows of producer `p`'s processed region that member `n` reads when it computes rows
    /// `[lo, hi)`, as an inclusive hull (the sources of its windows, an interval: every fill is
    /// 1-Lipschitz). O(neighbourhood).
    fn reads(&self, n: usize, (lo, hi): (i64, i64), p: usize) -> Option<(i64, i64)> {
        let mem = &self.members[n];
        let (a, b) = (lo + mem.neighborhood.top as i64, hi - 1 + mem.neighborhood.bottom as i64);
        let (s0, s1) = source_hull(mem.calls, a, b, self.height as i64)?;
        let (p0, p1) = self.members[p].processed_rows();
        let (s0, s1) = (s0.max(p0), s1.min(p1 - 1));
        (s0 <= s1).then_some((s0, s1))
    }
}

/// The largest `L` a group may have (its block heights' lcm): steps and bands are multiples of it
/// in u32 arithmetic, with room to add a step to it (coprime heights near 2¹⁶ have an lcm near
/// 2³²). The fusion pass leaves the members of a group above it unfused
/// ([`FusionRefusal::BlockHeights`](super::FusionRefusal::BlockHeights)).
pub(in crate::graph) const MAX_BLOCK_LCM: u32 = 1 << 30;

/// `L` for members of these block heights (0 counts as 1), computed in u64; `None` above
/// [`MAX_BLOCK_LCM`].
pub(in crate::graph) fn block_lcm(heights: impl IntoIterator<Item = u32>) -> Option<u32> {
    let mut l: u64 = 1;
    for h in heights {
        let h = h.max(1) as u64;
        l = l / gcd(l, h) * h;
        if l > MAX_BLOCK_LCM as u64 {
            return None;
        }
    }
    Some(l as u32)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The hull of the rows window rows `a ..= b` read through `calls` (`None`: none). Only the rows
/// outside the image are resolved one by one: O(rows outside).
pub(super) fn source_hull(calls: MemberCalls, a: i64, b: i64, height: i64) -> Option<(i64, i64)> {
    if a > b || height <= 0 {
        return None;
    }
    let mut hull: Option<(i64, i64)> = None;
    let (in0, in1) = (a.max(0), b.min(height - 1));
    if in0 <= in1 {
        hull = Some((in0, in1));
    }
    for y in (a..=b.min(-1)).chain(a.max(height)..=b) {
        if let Some(s) = calls.source(y, height) {
            hull = Some(hull.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s))));
        }
    }
    hull
}

/// `acc ∪= (lo, hi)` for inclusive hulls.
fn widen(acc: &mut Option<(i64, i64)>, (lo, hi): (i64, i64)) {
    *acc = Some(acc.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
}

/// `R_n` for every member (§3.2): for the band `[Y0, Y1)` of the sinks' rows, backwards from the
/// sinks, `R_n = align_n(hull(band rows if owed, the sources its readers' windows read)) ∩ P_n`.
/// An empty range means the member computes nothing in this band. O(members + edges ·
/// neighbourhood).
pub(super) fn member_rows(group: &GroupGeometry, band: Range<u32>) -> Vec<Range<u32>> {
    let m = group.members.len();
    let mut need: Vec<Option<(i64, i64)>> = vec![None; m];
    let mut rows = vec![0..0; m];
    for n in (0..m).rev() {
        let mem = &group.members[n];
        let (p0, p1) = mem.processed_rows();
        if group.owes_band[n] {
            let (lo, hi) = ((band.start as i64).max(p0), (band.end as i64).min(p1));
            if lo < hi {
                widen(&mut need[n], (lo, hi - 1));
            }
        }
        let Some((lo, hi)) = need[n] else { continue };
        let (lo, hi) = (mem.align_down(lo).max(p0), mem.align_up(hi + 1).min(p1));
        if lo >= hi {
            continue;
        }
        rows[n] = lo as u32..hi as u32;
        for &i in &group.inputs[n] {
            let p = group.images[i].producer;
            if let Some(h) = group.reads(n, (lo, hi), p) {
                widen(&mut need[p], h);
            }
        }
    }
    rows
}

/// A band's plan: every member's rows and the step table (§3.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct BandPlan {
    /// The band of the sinks' rows.
    pub(super) band: Range<u32>,
    /// The sinks' rows per step.
    pub(super) k: u32,
    /// `R_n` per member ([`member_rows`]).
    pub(super) rows: Vec<Range<u32>>,
    /// Step-major: `steps[j · members + n]` is what member `n` computes at step `j`.
    steps: Vec<Range<u32>>,
}

impl BandPlan {
    /// The number of steps, `⌈band / k⌉`.
    pub(super) fn step_count(&self) -> usize {
        self.steps.len().checked_div(self.rows.len()).unwrap_or(0)
    }

    /// The rows each member computes at step `j`, by member (run them in this order).
    pub(super) fn step(&self, j: usize) -> &[Range<u32>] {
        let m = self.rows.len();
        &self.steps[j * m..(j + 1) * m]
    }
}

/// The step table of a band (§3.4). Step `j` takes the sinks (and every member owing band rows)
/// to row `Y0 + (j + 1)·k`; backwards, every other member to just past the last source row its
/// readers' windows read by then, block-aligned, within `R_n`. Each member's steps are consecutive
/// pieces of `R_n` (every row once), a reader's rows at a step read only rows its producers
/// computed at that step or before, and members run in topological order. `k` must be a multiple
/// of [`GroupGeometry::block_lcm`], `band.start` too. O(steps · (members + edges · neighbourhood)).
pub(super) fn plan_band(group: &GroupGeometry, band: Range<u32>, k: u32) -> BandPlan {
    let l = group.block_lcm();
    debug_assert!(k > 0 && k.is_multiple_of(l), "k = {k} is not a multiple of L = {l}");
    debug_assert!(band.start.is_multiple_of(l), "band {band:?} does not start on a multiple of L = {l}");
    let m = group.members.len();
    let rows = member_rows(group, band.clone());
    let count = band.len().div_ceil(k.max(1) as usize);
    let mut steps = Vec::with_capacity(count * m);
    let mut done: Vec<i64> = rows.iter().map(|r| r.start as i64).collect();
    let mut demand = vec![i64::MIN; m];
    let mut target = vec![0i64; m];
    for j in 0..count {
        let sinks_end = (band.start as i64 + (j as i64 + 1) * k as i64).min(band.end as i64);
        demand.fill(i64::MIN);
        for n in (0..m).rev() {
            let (lo, hi) = (rows[n].start as i64, rows[n].end as i64);
            if group.owes_band[n] {
                demand[n] = demand[n].max(sinks_end);
            }
            let t = if demand[n] == i64::MIN { lo } else { group.members[n].align_up(demand[n]).clamp(lo, hi) };
            target[n] = t;
            if t <= lo {
                continue;
            }
            for &i in &group.inputs[n] {
                let p = group.images[i].producer;
                if let Some((_, s1)) = group.reads(n, (lo, t), p) {
                    demand[p] = demand[p].max(s1 + 1);
                }
            }
        }
        for n in 0..m {
            debug_assert!(target[n] >= done[n], "member {n}'s rows go backwards at step {j}");
            steps.push(done[n] as u32..target[n] as u32);
            done[n] = target[n];
        }
    }
    debug_assert!(done.iter().zip(&rows).all(|(&d, r)| d == r.end as i64), "a band's last step ends every R_n");
    BandPlan { band, k, rows, steps }
}

/// Per image of the group, the rows its ring must hold in this band (§5.1): the widest span, over
/// the steps, from the lowest row a reader reads at this or a later step to the end of what the
/// producer has written by the end of this step. 0 for a materialized image or one nobody reads.
/// O(steps · edges · neighbourhood).
pub(super) fn ring_needs(group: &GroupGeometry, plan: &BandPlan) -> Vec<u32> {
    let mut needs = vec![0u32; group.images.len()];
    for (i, img) in group.images.iter().enumerate() {
        if !img.fused {
            continue;
        }
        let mut min_live = i64::MAX;
        let mut need = 0i64;
        for j in (0..plan.step_count()).rev() {
            let step = plan.step(j);
            for &c in &img.readers {
                let r = &step[c];
                if r.is_empty() {
                    continue;
                }
                if let Some((s0, _)) = group.reads(c, (r.start as i64, r.end as i64), img.producer) {
                    min_live = min_live.min(s0);
                }
            }
            if min_live != i64::MAX {
                need = need.max(step[img.producer].end as i64 - min_live);
            }
        }
        needs[i] = need as u32;
    }
    needs
}

/// The ring capacity of every image of the group (0 for materialized ones): the widest
/// [`ring_needs`] over the bands of `layout` at `k` rows per step, at least 1, rounded up to a
/// multiple of `k` when a descriptor member writes or reads the ring (§5.1). O(H / k · (members +
/// edges · neighbourhood)).
pub(super) fn ring_capacities(group: &GroupGeometry, layout: &BandLayout, k: u32) -> Vec<u32> {
    let mut caps = vec![0u32; group.images.len()];
    for band in layout.bands() {
        let plan = plan_band(group, band, k);
        for (cap, need) in caps.iter_mut().zip(ring_needs(group, &plan)) {
            *cap = (*cap).max(need);
        }
    }
    for (i, cap) in caps.iter_mut().enumerate() {
        if !group.images[i].fused {
            continue;
        }
        *cap = (*cap).max(1);
        if group.touched_by_descriptors(i) {
            *cap = cap.div_ceil(k) * k;
        }
    }
    caps
}

/// The slot of row `row` in a ring of `capacity` rows.
pub(super) fn ring_slot(row: u32, capacity: u32) -> u32 {
    row % capacity
}

/// Bands of the sinks' rows `[0, H)`: `[i·B, min((i + 1)·B, H))`, `B` a multiple of `L`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BandLayout {
    /// `H`.
    pub(super) height: u32,
    /// `B`, a multiple of `L`.
    pub(super) band_rows: u32,
}

impl BandLayout {
    /// Bands of `band_rows` rows (at most the height: a policy's `u32::MAX` is one band) rounded
    /// up to a multiple of `block_lcm` (`L`, at most `MAX_BLOCK_LCM`: `GroupGeometry::new`).
    pub(super) fn new(height: u32, band_rows: u32, block_lcm: u32) -> BandLayout {
        let l = block_lcm.max(1) as u64;
        let rows = (band_rows.clamp(1, height.max(1)) as u64).div_ceil(l) * l;
        BandLayout { height, band_rows: u32::try_from(rows).unwrap_or(u32::MAX) }
    }

    /// The number of bands, `⌈H / B⌉`.
    pub(super) fn count(&self) -> u32 {
        self.height.div_ceil(self.band_rows)
    }

    /// Band `i`.
    pub(super) fn band(&self, i: u32) -> Range<u32> {
        let start = i.saturating_mul(self.band_rows).min(self.height);
        start..start.saturating_add(self.band_rows).min(self.height)
    }

    /// Every band, top to bottom.
    pub(super) fn bands(&self) -> impl Iterator<Item = Range<u32>> + '_ {
        (0..self.count()).map(|i| self.band(i))
    }
}

/// The pieces of a descriptor member's row chunk, each with its function: at most five (rows
/// above `A`, `A`'s part with its left and right strips, rows below `A`).
#[derive(Clone, Copy, Debug)]
pub(super) struct RowPieces {
    pieces: [(Rect, TileFunction); 5],
    len: usize,
}

impl RowPieces {
    fn push(&mut self, rect: Rect, function: TileFunction) {
        if !rect.is_empty() {
            self.pieces[self.len] = (rect, function);
            self.len += 1;
        }
    }

    /// The pieces, disjoint.
    pub(super) fn as_slice(&self) -> &[(Rect, TileFunction)] {
        &self.pieces[..self.len]
    }
}

/// The pieces of rows `rows` a member's functions process, as `tiling::plan::plan` assigns them
/// (§4.2): a flexible-only kernel of 1×1 blocks gets `D` whole; otherwise `A` goes to the fast
/// function (else the flexible one) and `D \ A` to the flexible one when there is one. Rows in
/// `A` must start and end on its block grid (as [`plan_band`]'s steps do). O(1).
pub(super) fn row_pieces(
    regions: &TileRegions,
    block: TileBlockSize,
    has_fast: bool,
    has_flexible: bool,
    rows: Range<u32>,
) -> RowPieces {
    let mut out = RowPieces { pieces: [(Rect::default(), TileFunction::Flexible); 5], len: 0 };
    let band = |r: &Rect, y0: u32, y1: u32| {
        Rect::new(r.start_x, y0.max(r.start_y), r.end_x, y1.min(r.end_y).max(y0.max(r.start_y)))
    };
    let (d, a) = (regions.flexible_domain, regions.aligned);
    if !has_fast && has_flexible && block.width <= 1 && block.height <= 1 {
        out.push(band(&d, rows.start, rows.end), TileFunction::Flexible);
        return out;
    }
    if has_fast || has_flexible {
        let f = if has_fast { TileFunction::Fast } else { TileFunction::Flexible };
        out.push(band(&a, rows.start, rows.end), f);
    }
    if has_flexible && !d.is_empty() {
        let flex = TileFunction::Flexible;
        if a.is_empty() {
            out.push(band(&d, rows.start, rows.end), flex);
        } else {
            out.push(band(&d, rows.start, rows.end.min(a.start_y)), flex);
            let mid = band(&a, rows.start, rows.end);
            out.push(Rect::new(d.start_x, mid.start_y, a.start_x, mid.end_y), flex);
            out.push(Rect::new(a.end_x, mid.start_y, d.end_x, mid.end_y), flex);
            out.push(band(&d, rows.start.max(a.end_y), rows.end), flex);
        }
    }
    out
}
