//! A fused group as verify builds it ([`FusedGroup::build`]): from its members' specs (node, tile
//! request, row entry rule, the role of each parameter) and its fused images, the planner's step
//! table for one band of the whole image, `k` by size, the ring of each fused image and the
//! pointer pools the runner fills per call. Everything the runner touches is allocated here, none
//! of it per frame.

use std::sync::{Arc, Mutex};

use vx_plugin_abi::{MAX_TILING_PARAMS, Neighborhood, Rect, TileBlockSize};

use super::plan::{
    BandLayout, BandPlan, GroupGeometry, GroupImage, MemberCalls, MemberGeometry, RowFill, plan_band, ring_capacities,
};
use crate::data::buffer::RawBuf;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::tiling::plan::{TileRegions, TileRequest, regions};
use crate::graph::tiling::split::{Split, WorkKey};
use crate::kernel::fusion::RowFill as KernelRowFill;
use crate::shared::{Resources, TilingPolicy};

/// Outside images (real, or virtual and read outside) one group run maps at most.
pub(crate) const MAX_OUTSIDE_IMAGES: usize = 64;

/// The line buffers' bytes one step aims at: `k` is the most rows of every fused image that fit.
/// Measured on the edge pipeline (`TilingPolicy::fusion_rows` sweeps, `docs/book/src/fusion.md`):
/// each call costs a few hundred ns of fixed overhead on both sides of the module ABI, so fewer,
/// longer calls win while the rings stay in the core's L2 (192 KiB over the edge pipeline's 6 bytes
/// of fused images per pixel: 4K → 8 rows, 1080p → 17, VGA → 32, the most, `MAX_K`).
const STEP_BYTES: usize = 192 * 1024;

/// The most rows a step takes (`k`), whatever the size.
const MAX_K: u32 = 32;

/// What one parameter of a member is to the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamRole {
    /// Not set.
    Absent,
    /// A value (a scalar), read once per run.
    Value,
    /// An image outside the group's rings, mapped once per run into slot `slot`.
    Outside { slot: usize, output: bool },
    /// A fused image (index into the group's images).
    Fused { image: usize, output: bool },
    /// A materialized image between members (index into the group's images): it keeps its buffer,
    /// mapped once per run into slot `slot`, and members read its rows as they are written.
    Materialized { slot: usize, image: usize, output: bool },
}

impl ParamRole {
    pub(super) fn is_output(self) -> bool {
        matches!(
            self,
            ParamRole::Outside { output: true, .. }
                | ParamRole::Fused { output: true, .. }
                | ParamRole::Materialized { output: true, .. }
        )
    }

    /// An image the group maps from outside (an outside or a materialized image): its slot.
    pub(super) fn mapped_slot(self) -> Option<(usize, bool)> {
        match self {
            ParamRole::Outside { slot, output } | ParamRole::Materialized { slot, output, .. } => Some((slot, output)),
            _ => None,
        }
    }

    /// The member writes rows of an image outside the rings.
    fn writes_outside(self) -> bool {
        matches!(self, ParamRole::Outside { output: true, .. } | ParamRole::Materialized { output: true, .. })
    }
}

/// A member as the pass found it.
#[derive(Clone, PartialEq)]
pub(in crate::graph) struct MemberSpec {
    /// The node's index.
    pub(in crate::graph) node: usize,
    /// The tile request of its tiling state (size, block, neighbourhood, border, functions).
    pub(in crate::graph) request: TileRequest,
    /// Its row entry's rule (`None`: called through tile descriptors).
    pub(in crate::graph) fill: Option<KernelRowFill>,
    /// Per parameter, its role.
    pub(in crate::graph) params: Vec<ParamRole>,
}

/// A fused image as the pass found it.
#[derive(Clone, PartialEq)]
pub(in crate::graph) struct ImageSpec {
    /// The image's id and name.
    pub(in crate::graph) id: u64,
    pub(in crate::graph) name: String,
    /// Bytes per pixel and FourCC of its (single-plane) format.
    pub(in crate::graph) bytes_per_pixel: usize,
    pub(in crate::graph) fourcc: u32,
    /// The member writing it and those reading it (indices into the members).
    pub(in crate::graph) producer: usize,
    pub(in crate::graph) readers: Vec<usize>,
    /// A materialized image's outside slot (`None`: fused, in a ring).
    pub(in crate::graph) slot: Option<usize>,
}

/// What the runner needs of one member.
pub(super) struct Member {
    pub(super) node: usize,
    pub(super) calls: MemberCalls,
    pub(super) neighborhood: Neighborhood,
    pub(super) block: TileBlockSize,
    pub(super) regions: TileRegions,
    /// `P_n`: the pixels its functions process (the safe region under `Undefined`, the aligned
    /// region of a fast-only kernel); a row entry is called on these columns only.
    pub(super) processed: Rect,
    pub(super) has_fast: bool,
    pub(super) has_flexible: bool,
    pub(super) params: Vec<ParamRole>,
}

/// A fused image's ring (or, for a materialized image, no ring: capacity 0).
pub(super) struct Ring {
    pub(super) id: u64,
    pub(super) name: String,
    /// A materialized image: it lives in its own buffer, not here.
    pub(super) materialized: bool,
    pub(super) bytes_per_pixel: usize,
    pub(super) fourcc: u32,
    /// Rows it holds; row `r` lives in slot `r mod capacity`.
    pub(super) capacity: u32,
    /// Bytes from one slot to the next (a multiple of 64).
    pub(super) pitch: usize,
    /// The rows its writer processes, `[from, to)`: a row outside them is written by nobody, its
    /// pixels undefined in both modes (`docs/design/fusion.md` §4.3); a reader is handed the
    /// group's row of zeros for it (a materialized image's own row, as unfused).
    pub(super) written: (u32, u32),
}

impl Ring {
    /// Whether a band that has written rows `produced` (`from..end`) of this materialized image
    /// may read its rows `r0..r1`: each of them its writer processes was written by this band (a
    /// row it never processes is nobody's to write during the run, and keeps its bytes, as
    /// unfused).
    pub(super) fn may_read(&self, (from, end): (u32, u32), r0: u32, r1: u32) -> bool {
        let (a, b) = (r0.max(self.written.0), r1.min(self.written.1));
        a >= b || (from <= a && b <= end)
    }
}

/// What one thread running the group writes: the rings and the pointer pools (one set per
/// executing thread: the calling thread's and each crew helper's).
pub(super) struct GroupScratch {
    pub(super) rings: Vec<RawBuf>,
    /// Row pointers of the input tables of one call.
    pub(super) tables: Vec<*const u8>,
    /// Row pointers of the output rows of one call.
    pub(super) sinks: Vec<*mut u8>,
    /// Per fused image, the rows written so far in this band, `from..end` (`0..0`: none).
    pub(super) produced: Vec<(u32, u32)>,
}

// SAFETY: the pointer pools hold addresses into the rings (owned here) and into images mapped for
// one run; they are written and read only by the thread holding the group's scratch lock, and
// never dereferenced outside a run.
unsafe impl Send for GroupScratch {}

/// The rows of `r`, `[start_y, end_y)` (`(0, 0)` when it is empty).
fn rows_of(r: &Rect) -> (u32, u32) {
    if r.is_empty() { (0, 0) } else { (r.start_y, r.end_y) }
}

/// A verified fused group.
pub(crate) struct FusedGroup {
    nodes: Vec<usize>,
    pub(super) members: Vec<Member>,
    pub(super) rings: Vec<Ring>,
    pub(super) width: u32,
    pub(super) height: u32,
    /// The step table of the one band `[0, height)` (a run alone).
    pub(super) whole: BandPlan,
    /// The step tables of the bands threads share (empty: the group never splits).
    pub(super) bands: Vec<BandPlan>,
    /// One set per executing thread: crew helper `i` uses `sets[i]`, any other thread the last.
    pub(super) sets: Vec<Mutex<GroupScratch>>,
    /// One row of zeros as wide as the widest ring row, never written, when some fused image's
    /// writer leaves rows unprocessed: what a row table hands for such a row (undefined; zeros
    /// make a run repeatable, where a ring slot would hold whatever that thread computed last).
    pub(super) zero_row: Option<RawBuf>,
    /// Per member and parameter (`member * MAX_TILING_PARAMS + i`), a scalar's bytes and type
    /// code, read once per run.
    pub(super) scalars: Mutex<Vec<([u8; 8], u32)>>,
    /// Whether a run shares its bands with the crew (the tiling nodes' cost model).
    pub(super) split: Split,
    /// See [`split_dropped`](Self::split_dropped).
    split_dropped: bool,
    /// What the cost model's estimates are estimates of: each member's work (its node's
    /// [`WorkKey`]), in `nodes` order.
    work: Vec<WorkKey>,
    /// What [`build`](Self::build) built it from: a verification that finds the same (and the
    /// same work) takes this group as it is ([`built_from`](Self::built_from)).
    inputs: (Vec<MemberSpec>, Vec<ImageSpec>, usize, TilingPolicy),
}

impl FusedGroup {
    /// Build a group of `members` (topological order) joined by `images`, all of one size; the
    /// rings are allocated (zeroed) and accounted in `resources`. `work`: each member's
    /// [`WorkKey`] (its tiling state's). `threads`: the context's; `policy`: its tiling policy
    /// (`split_by_cost`, `fusion_rows`, `fusion_band_rows`).
    pub(in crate::graph) fn build(
        members: Vec<MemberSpec>,
        images: Vec<ImageSpec>,
        work: Vec<WorkKey>,
        resources: &Arc<Resources>,
        threads: usize,
        policy: &TilingPolicy,
    ) -> Result<Self> {
        let inputs = (members.clone(), images.clone(), threads, *policy);
        let (width, height) = (members[0].request.width, members[0].request.height);
        let geometry = GroupGeometry::new(
            height,
            members
                .iter()
                .map(|m| {
                    let calls = match m.fill {
                        Some(KernelRowFill::Reflect101) => MemberCalls::RowEntry(RowFill::Reflect101),
                        Some(KernelRowFill::Replicate) => MemberCalls::RowEntry(RowFill::Replicate),
                        Some(KernelRowFill::Constant) => MemberCalls::RowEntry(RowFill::Constant),
                        None => MemberCalls::Descriptors,
                    };
                    let complete = m.params.iter().any(|p| p.writes_outside());
                    MemberGeometry::from_request(&m.request, calls, complete)
                })
                .collect(),
            images
                .iter()
                .map(|i| GroupImage { producer: i.producer, readers: i.readers.clone(), fused: i.slot.is_none() })
                .collect(),
        )
        .map_err(|e| Error::new(ErrorKind::InvalidGraph, format!("fused group: {e}")))?;
        let l = geometry.block_lcm();
        let row_bytes: usize =
            images.iter().filter(|i| i.slot.is_none()).map(|i| width as usize * i.bytes_per_pixel).sum();
        let k = match policy.fusion_rows {
            0 => ((STEP_BYTES / row_bytes.max(1)) as u32).clamp(1, MAX_K),
            k => k.min(height.max(1)),
        };
        let k = (k / l).max(1) * l;
        let whole = plan_band(&geometry, 0..height, k);
        let mut caps = ring_capacities(&geometry, &BandLayout::new(height, height, l), k);
        // Bands for several threads: about four per thread, at least 16 rows, each a multiple of L.
        // A band whose members would write rows of an outside image beyond the band (a member
        // both written out and read inside, recomputing overlap rows) would race with its
        // neighbour: such a group never splits.
        let mut bands = Vec::new();
        let mut split_dropped = false;
        if threads > 1 {
            let rows = match policy.fusion_band_rows {
                0 => (height / (threads as u32 * 4)).max(16),
                b => b,
            };
            let layout = BandLayout::new(height, rows, l);
            if layout.count() > 1 {
                bands = layout.bands().map(|b| plan_band(&geometry, b, k)).collect();
                // Members whose rows leave some band, and among them writers of materialized images.
                let leaves = |n: usize| {
                    bands.iter().any(|p| {
                        let r = &p.rows[n];
                        !r.is_empty() && (r.start < p.band.start || r.end > p.band.end)
                    })
                };
                let writes = |m: &MemberSpec, materialized: bool| {
                    m.params.iter().any(|r| match r {
                        ParamRole::Materialized { output: true, .. } => true,
                        ParamRole::Outside { output: true, .. } => !materialized,
                        _ => false,
                    })
                };
                let races = members.iter().enumerate().any(|(n, m)| writes(m, false) && leaves(n));
                if races {
                    split_dropped = members.iter().enumerate().any(|(n, m)| writes(m, true) && leaves(n));
                    bands.clear();
                } else {
                    for (cap, banded) in caps.iter_mut().zip(ring_capacities(&geometry, &layout, k)) {
                        *cap = (*cap).max(banded);
                    }
                }
            }
        }
        let mut rings = Vec::with_capacity(images.len());
        for (img, &cap) in images.iter().zip(&caps) {
            let pitch = (width as usize * img.bytes_per_pixel).div_ceil(64) * 64;
            pitch.checked_mul(cap as usize).ok_or_else(|| {
                Error::new(ErrorKind::NoMemory, "a fused group's line buffer overflows the address space")
            })?;
            rings.push(Ring {
                id: img.id,
                name: img.name.clone(),
                materialized: img.slot.is_some(),
                bytes_per_pixel: img.bytes_per_pixel,
                fourcc: img.fourcc,
                capacity: cap,
                pitch,
                written: rows_of(&geometry.members()[img.producer].processed),
            });
        }
        // The longest call of each member, and the pools one call needs at most.
        let mut longest = vec![0u32; members.len()];
        for plan in std::iter::once(&whole).chain(&bands) {
            for j in 0..plan.step_count() {
                for (l, r) in longest.iter_mut().zip(plan.step(j)) {
                    *l = (*l).max(r.len() as u32);
                }
            }
        }
        let (mut tables, mut sinks) = (0usize, 0usize);
        for (m, spec) in members.iter().enumerate() {
            let nb = spec.request.neighborhood;
            let window = longest[m] as usize + (nb.bottom as i64 - nb.top as i64) as usize;
            let images = spec.params.iter().filter(|p| !matches!(p, ParamRole::Absent | ParamRole::Value));
            let outs = images.clone().filter(|p| p.is_output()).count();
            let ins = images.count() - outs;
            tables = tables.max(ins * window);
            sinks = sinks.max(outs * longest[m] as usize);
        }
        let set_count = if bands.is_empty() { 1 } else { threads + 1 };
        let mut sets = Vec::with_capacity(set_count);
        for _ in 0..set_count {
            let rings =
                rings.iter().map(|r| RawBuf::new(r.pitch * r.capacity as usize, resources)).collect::<Result<_>>()?;
            sets.push(Mutex::new(GroupScratch {
                rings,
                tables: vec![std::ptr::null(); tables],
                sinks: vec![std::ptr::null_mut(); sinks],
                produced: vec![(0, 0); images.len()],
            }));
        }
        let zero_row = if rings.iter().any(|r| !r.materialized && r.written != (0, height)) {
            Some(RawBuf::new(rings.iter().map(|r| r.pitch).max().unwrap_or(0), resources)?)
        } else {
            None
        };
        let scalars = Mutex::new(vec![([0; 8], 0); members.len() * MAX_TILING_PARAMS]);
        let split = Split::new(!bands.is_empty(), policy.split_by_cost, threads);
        let members: Vec<Member> = members
            .into_iter()
            .zip(geometry.members())
            .map(|(m, g)| Member {
                node: m.node,
                calls: g.calls,
                neighborhood: m.request.neighborhood,
                block: m.request.block,
                regions: regions(&m.request),
                processed: g.processed,
                has_fast: m.request.has_fast,
                has_flexible: m.request.has_flexible,
                params: m.params,
            })
            .collect();
        Ok(FusedGroup {
            nodes: members.iter().map(|m| m.node).collect(),
            members,
            rings,
            width,
            height,
            whole,
            bands,
            sets,
            zero_row,
            scalars,
            split,
            split_dropped,
            work,
            inputs,
        })
    }

    /// Whether [`build`](Self::build) would build this very group from these inputs, for members
    /// whose work is `work`: then a re-verification takes it as it is (its rings, tables and the
    /// cost model's estimates). What a run leaves in its rings is read by the next only where
    /// it would be by a second run of the same group: a descriptor member reading a ring row its
    /// writer never processes (undefined pixels, outside every valid region; `run.rs`).
    pub(in crate::graph) fn built_from(
        &self,
        members: &[MemberSpec],
        images: &[ImageSpec],
        (threads, policy): (usize, &TilingPolicy),
        work: &[WorkKey],
    ) -> bool {
        let (m, i, t, p) = &self.inputs;
        m[..] == *members && i[..] == *images && *t == threads && p == policy && self.work == work
    }

    /// Take over `old`'s cost-model estimates when it ran the same work: the same members with the
    /// same work keys, the same size and the same band and step tables' heights. What a
    /// re-verification that changed nothing of the group keeps (`tiling/split.rs`).
    pub(in crate::graph) fn inherit(&self, old: &FusedGroup) {
        let shape = |g: &FusedGroup| (g.width, g.height, g.bands.len(), g.band_rows(), g.rows_per_step());
        if self.nodes == old.nodes && self.work == old.work && shape(self) == shape(old) {
            self.split.inherit(&old.split);
        }
    }

    /// Threads could have shared the group's rows, but the writer of a materialized image
    /// computes rows beyond its band (the bands were dropped: it runs on one thread).
    pub(crate) fn split_dropped(&self) -> bool {
        self.split_dropped
    }

    /// The materialized images' names (images between members that keep their buffer).
    pub(crate) fn materialized_image_names(&self) -> Vec<String> {
        self.rings.iter().filter(|r| r.materialized).map(|r| r.name.clone()).collect()
    }

    /// The members' node indices, in the order each step runs them.
    pub(crate) fn nodes(&self) -> &[usize] {
        &self.nodes
    }

    /// The ids of the fused images.
    pub(super) fn fused_image_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.rings.iter().filter(|r| !r.materialized).map(|r| r.id)
    }

    /// The fused images' names.
    pub(crate) fn fused_image_names(&self) -> Vec<String> {
        self.rings.iter().filter(|r| !r.materialized).map(|r| r.name.clone()).collect()
    }

    /// The sinks' rows per step.
    pub(crate) fn rows_per_step(&self) -> u32 {
        self.whole.k
    }

    /// Rows per band when threads share the group (the height when it never splits).
    pub(crate) fn band_rows(&self) -> u32 {
        self.bands.first().map_or(self.height, |b| b.band.len() as u32)
    }

    /// Threads that may share a run.
    pub(crate) fn threads(&self) -> usize {
        if self.bands.is_empty() { 1 } else { self.sets.len() - 1 }
    }

    /// The bytes of the group's rings.
    pub(crate) fn line_buffer_bytes(&self) -> usize {
        self.rings.iter().map(|r| r.pitch * r.capacity as usize).sum()
    }
}
