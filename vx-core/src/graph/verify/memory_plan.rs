//! Pass `memory plan`: the buffers of a graph's virtual objects placed by lifetime in one arena,
//! so two virtual objects that are never live at once share memory (TIOVX allocates data buffers
//! at verify; vx-rs also reuses them across the schedule).
//!
//! Rules:
//!
//! - **What is planned**: every virtual object that is one buffer, asked through
//!   `ObjectKind::plan_storage` — the pass iterates node parameters and never names a kind. A kind
//!   declares its buffer once: the blob kinds (matrix, convolution, LUT, distribution, remap, user
//!   data object, raw image) all through `blob_object!` (the blob, whole); an array its item
//!   buffer, capacity × item size (its item count is state beside the bytes, not in them); a
//!   tensor its root storage (a view shares its root's buffer, and no view of a virtual tensor
//!   exists, so a virtual tensor is always a root); an image its effective storage (an aliased
//!   chain of virtual images is one buffer — the aliasing passes already bound it to one storage,
//!   and the plan groups by that storage).
//! - **What is not** (a buffer of its own, or none): non-virtual objects, which are the
//!   application's; a virtual image that buffer aliasing bound to a non-virtual one (its pixels
//!   *are* the application's image); scalars and thresholds, values rather than buffers (the
//!   kind's `plan_storage` gives nothing); parts of containers (a pyramid level, an object-array
//!   item, an ROI: `Reference::is_standalone_virtual`) and so the containers themselves (pyramids
//!   and object arrays give nothing). A container could be planned as one group of its parts'
//!   buffers, but its parts are objects of their own that nodes use alone (a level, an item), so
//!   the group's lifetime would be the union over the container and every part, found through
//!   `ObjectHeader::ancestors`, and a pipelined graph refuses a container and its part both
//!   virtual anyway (`frames.rs`); left for when a graph needs it.
//! - **When two buffers may share bytes**: only when every use of one is over before any use of
//!   the other starts, in the order the graph's executor enforces (`run_order.rs`: a plan
//!   serves an executor). A sequential graph runs level by level, so buffers whose *levels*
//!   (first to last level of the schedule in which a node uses them) do not overlap may share; two
//!   buffers used in one level never do, even if one node only reads the first and another only
//!   writes the second. A pipelined graph runs a frame's nodes by dataflow, so every user of one
//!   buffer must reach every writer of the other along dataflow edges: a slow reader on a target
//!   keeps its input's bytes while later levels run beside it. Frames in flight never share: each
//!   frame slot ≥ 1 has an arena of its own, in which `frames.rs` places every planned object's
//!   per-frame copy at the original's offset (any kind: `AnyObject::place_planned`). Debug builds
//!   check every placement against that order by brute force (`check_plan`), independently of the
//!   placement and its tables, whatever the kinds.
//! - **Kept out**: an object whose size is not known (`plan_storage` gives no bytes: a virtual
//!   image, array or tensor the meta pass did not complete; the `buffers` pass reports it). User
//!   kernels have no bidirectional parameters, so no virtual object's contents must outlive a
//!   frame: every virtual object is written by a node before any node of the same frame reads it
//!   (`dataflow`).
//! - **Placement**: greedy by size (largest first; ties by first use, then first appearance): each
//!   buffer goes to the lowest 64-byte aligned offset that overlaps no placed buffer whose lifetime
//!   overlaps its own. The arena is one block; its size is reported with the lower bound (the most
//!   bytes live in any one level), which no placement can beat.
//! - **Contents**: a planned object's bytes are undefined at the start of the node that writes it
//!   (another object used them before) — as the specification says of virtual data outside the
//!   graph, and as any kernel must assume of an output. The application cannot map virtual objects.
//!
//! Re-verification re-plans; the arena is kept when its size does not change.
//! `ContextBuilder::memory_plan(false)` gives every virtual object a buffer of its own.
//! Cost: grouping O(object parameters); placement, sequential graphs: O(groups × (levels a group
//! spans + groups it meets)) through per-level lists; pipelined graphs: O(groups²) (every placed
//! group is a candidate) — and `run_order.rs`'s reach table; the lower bound O(levels + groups).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::data::buffer::{BUFFER_ALIGN, RawBuf};
use crate::data::reference::Reference;
use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::verify::Verification;
use crate::graph::verify::run_order::RunOrder;
use crate::graph::{Graph, GraphBody};

/// One buffer of a graph's memory plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedBuffer {
    /// The names of the virtual objects whose bytes are in this buffer, of any planned kind
    /// (images, arrays, tensors, matrices, …; more than one: an aliased chain of images).
    pub objects: Vec<String>,
    /// Where the buffer starts in the graph's arena.
    pub offset: usize,
    /// Its size in bytes.
    pub bytes: usize,
    /// The first and the last level of the schedule in which a node uses it (a sequential graph's
    /// lifetime; a pipelined graph's buffers share by dataflow order, see the module docs).
    pub levels: (usize, usize),
}

/// Where a graph's virtual objects live ([`Graph::memory_plan`](crate::Graph::memory_plan)): every
/// kind with a buffer (the module doc of `graph/verify/memory_plan.rs` lists which).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryPlan {
    /// The planned buffers, by offset.
    pub buffers: Vec<PlannedBuffer>,
    /// Bytes of the arena holding them all.
    pub arena_bytes: usize,
    /// Bytes the same buffers take without a plan (one block each).
    pub unplanned_bytes: usize,
    /// The most bytes of planned buffers live in any one level: no placement needs less.
    pub lower_bound_bytes: usize,
    /// Virtual objects of planned kinds kept out of the plan, with the reason (kinds never planned,
    /// such as scalars, are not listed).
    pub excluded: Vec<(String, &'static str)>,
}

impl Graph {
    /// The memory plan of the last verification: where each planned virtual object lives (images,
    /// arrays, tensors and the fixed-layout kinds), the arena's size,
    /// what the same buffers take without a plan, and the lower bound for this schedule.
    pub fn memory_plan(&self) -> Result<MemoryPlan> {
        Ok(self.inner.lock()?.memory.plan.clone())
    }
}

/// A candidate buffer: the virtual objects sharing one storage (more than one: images aliased
/// into one chain).
struct Group {
    objects: Vec<Reference>,
    levels: (usize, usize),
    bytes: usize,
    excluded: Option<&'static str>,
    /// The nodes using one of its objects, and those writing one (node indices, each once).
    accessors: Vec<usize>,
    writers: Vec<usize>,
}

impl Group {
    /// May `self` and `other` share bytes: is every use of one over before any use of the other
    /// starts, in the order the executor enforces?
    fn ordered_with(&self, other: &Group, order: &RunOrder) -> bool {
        order.before(&self.accessors, &other.accessors, &other.writers)
            || order.before(&other.accessors, &self.accessors, &self.writers)
    }
}

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let previous = std::mem::take(&mut body.memory.placed);
    if !v.graph.ctx.inner.shared.config.memory_plan {
        previous.iter().for_each(|r| r.any().unplace_planned());
        body.memory = Default::default();
        return Ok(());
    }
    // Groups by effective storage, in order of first appearance. Every kind is asked through
    // `ObjectKind::plan_storage`: kinds that have no buffer to plan answer nothing.
    let mut groups: Vec<Group> = Vec::new();
    let mut by_storage: HashMap<usize, usize> = HashMap::new();
    let mut app_storages: HashSet<usize> = HashSet::new();
    // (group, object id) pairs seen: each object once in its group.
    let mut in_group: HashSet<(usize, u64)> = HashSet::new();
    // Fused images (pass `fusion`) take no buffer: listed as excluded.
    let mut fused_seen: HashSet<u64> = HashSet::new();
    let mut fused_images: Vec<String> = Vec::new();
    for (level, nodes) in v.schedule.iter().enumerate() {
        for &n in nodes {
            let s = body.nodes[n].as_ref().expect("scheduled nodes are live");
            for (p, r) in s.params.iter().enumerate() {
                let Some(r) = r else { continue };
                let Some((key, _)) = r.any().plan_bytes() else { continue };
                if body.fusion.is_fused(r) {
                    if fused_seen.insert(r.id()) {
                        fused_images.push(r.name());
                    }
                    continue;
                }
                // Real objects and the parts of pyramids and object arrays keep their own memory.
                if !r.is_standalone_virtual() {
                    app_storages.insert(key);
                    continue;
                }
                let g = *by_storage.entry(key).or_insert_with(|| {
                    groups.push(Group {
                        objects: Vec::new(),
                        levels: (level, level),
                        bytes: 0,
                        excluded: None,
                        accessors: Vec::new(),
                        writers: Vec::new(),
                    });
                    groups.len() - 1
                });
                let fresh = in_group.insert((g, r.id()));
                let g = &mut groups[g];
                if fresh {
                    g.objects.push(r.clone());
                }
                g.levels.1 = level;
                // A fused group's member uses its objects for the group's whole run: it counts as
                // the group's unit (its leader, `graph/fusion`), in the same level.
                let u = body.fusion.unit(n);
                if g.accessors.last() != Some(&u) {
                    g.accessors.push(u);
                }
                // Nodes come one at a time (schedule order; a group's members together): each
                // unit once, O(1).
                if s.spec(p).direction == Direction::Output && g.writers.last() != Some(&u) {
                    g.writers.push(u);
                }
            }
        }
    }
    for (key, &g) in &by_storage {
        let g = &mut groups[g];
        if app_storages.contains(key) {
            g.excluded.get_or_insert("aliasing placed it in a non-virtual image");
        }
        match g.objects[0].any().plan_bytes().and_then(|(_, bytes)| bytes) {
            Some(b) => g.bytes = b,
            None => {
                g.excluded.get_or_insert("its size is not known");
            }
        }
    }

    // The order the executor of this graph enforces (`run_order.rs`): two buffers share bytes
    // only when every use of one is over before any use of the other starts.
    let pipelined = body.pipeline.is_some();
    // Dataflow between units: the coordinator runs a fused group as one job.
    let producers = if pipelined { body.fusion.unit_producers(&v.producers) } else { Vec::new() };
    let run_order = if pipelined {
        let heads: Vec<usize> = groups.iter().flat_map(|g| g.writers.iter().copied()).collect();
        RunOrder::dataflow(&v.schedule, &producers, &heads)
    } else {
        RunOrder::levels(&v.schedule, body.nodes.len())
    };

    // Greedy by size.
    let mut order: Vec<usize> = (0..groups.len()).filter(|&g| groups[g].excluded.is_none()).collect();
    order.sort_by_key(|&g| (std::cmp::Reverse(groups[g].bytes), groups[g].levels.0, g));
    // Candidates for a conflict: under the level order only groups whose levels meet (kept per
    // level: O(levels spanned + groups met) a group); under the dataflow order every placed group.
    let mut offsets: Vec<Option<usize>> = vec![None; groups.len()];
    let mut placed_at_level: Vec<Vec<usize>> = vec![Vec::new(); if pipelined { 0 } else { v.schedule.len() }];
    let mut seen_for: Vec<usize> = vec![usize::MAX; groups.len()];
    let mut placed_so_far: Vec<usize> = Vec::new();
    for (k, &g) in order.iter().enumerate() {
        let (l0, l1) = groups[g].levels;
        let mut met = Vec::new();
        let candidates: &[usize] = if pipelined {
            &placed_so_far
        } else {
            for at_level in &placed_at_level[l0..=l1] {
                for &o in at_level {
                    if seen_for[o] != k {
                        seen_for[o] = k;
                        met.push(o);
                    }
                }
            }
            &met
        };
        let mut taken: Vec<(usize, usize)> = candidates
            .iter()
            .filter_map(|&o| offsets[o].map(|off| (o, off)))
            .filter(|&(o, _)| !groups[o].ordered_with(&groups[g], &run_order))
            .map(|(o, off)| (off, off + groups[o].bytes))
            .collect();
        taken.sort_unstable();
        let mut at = 0;
        for (start, end) in taken {
            if at + groups[g].bytes <= start {
                break;
            }
            at = at.max(end.next_multiple_of(BUFFER_ALIGN));
        }
        offsets[g] = Some(at);
        if pipelined {
            placed_so_far.push(g);
        } else {
            placed_at_level[l0..=l1].iter_mut().for_each(|at_level| at_level.push(g));
        }
    }
    if cfg!(debug_assertions) {
        let producers = if pipelined { &producers } else { &v.producers };
        check_plan(v, producers, &groups, &offsets, pipelined).map_err(|e| e.in_graph(&v.gname))?;
    }
    let arena_bytes = order.iter().map(|&g| offsets[g].unwrap_or(0) + groups[g].bytes).max().unwrap_or(0);
    // Buffers used in one level are in use at once under either order: a lower bound for both.
    // Bytes live per level by a difference array: O(levels + groups).
    let mut delta = vec![0isize; v.schedule.len() + 1];
    for &g in &order {
        delta[groups[g].levels.0] += groups[g].bytes as isize;
        delta[groups[g].levels.1 + 1] -= groups[g].bytes as isize;
    }
    let lower_bound_bytes = delta
        .iter()
        .scan(0isize, |live, d| {
            *live += d;
            Some(*live as usize)
        })
        .max()
        .unwrap_or(0);

    // The arena: kept when the size is the same, else a new one (the old one goes with its last
    // placement).
    let arena = match (&body.memory.arena, arena_bytes) {
        (_, 0) => None,
        (Some(a), n) if a.len() == n => Some(Arc::clone(a)),
        (_, n) => Some(Arc::new(RawBuf::new(n, &v.graph.ctx.inner.shared.resources)?)),
    };
    let mut placed = Vec::new();
    let mut buffers = Vec::new();
    for &g in &order {
        let (g, offset) = (&groups[g], offsets[g].expect("placed above"));
        let arena = arena.as_ref().expect("a planned buffer means a non-empty arena");
        g.objects[0].any().place_planned(arena, offset, g.bytes).map_err(|e| e.in_graph(&v.gname))?;
        placed.push(g.objects[0].clone());
        buffers.push(PlannedBuffer {
            objects: g.objects.iter().map(Reference::name).collect(),
            offset,
            bytes: g.bytes,
            levels: g.levels,
        });
    }
    let key = |r: &Reference| r.any().plan_bytes().map(|(key, _)| key);
    let kept: HashSet<usize> = placed.iter().filter_map(key).collect();
    for old in &previous {
        if key(old).is_none_or(|k| !kept.contains(&k)) {
            old.any().unplace_planned();
        }
    }
    buffers.sort_by_key(|b| b.offset);
    let plan = MemoryPlan {
        unplanned_bytes: buffers.iter().map(|b| b.bytes).sum(),
        buffers,
        arena_bytes,
        lower_bound_bytes,
        excluded: groups
            .iter()
            .filter_map(|g| g.excluded.map(|why| g.objects.iter().map(move |r| (r.name(), why))))
            .flatten()
            .chain(fused_images.into_iter().map(|name| (name, "fused: it lives in its group's line buffers")))
            .collect(),
    };
    tracing::debug!(
        graph = %v.gname,
        arena = plan.arena_bytes,
        unplanned = plan.unplanned_bytes,
        lower_bound = plan.lower_bound_bytes,
        buffers = plan.buffers.len(),
        "memory planned"
    );
    body.memory = PlanState { plan, arena, placed };
    Ok(())
}

/// The plan checked against the executor's order by brute force, independently of the placement
/// and of [`RunOrder`]'s tables (debug builds and tests): any two placed buffers whose bytes overlap
/// must have every use of one ordered before every use of the other — by level for a sequential
/// graph, by a dataflow path (depth-first search) for a pipelined one.
fn check_plan(
    v: &Verification<'_>,
    producers: &[Vec<usize>],
    groups: &[Group],
    offsets: &[Option<usize>],
    pipelined: bool,
) -> Result<()> {
    let mut level = vec![usize::MAX; producers.len()];
    for (l, nodes) in v.schedule.iter().enumerate() {
        nodes.iter().for_each(|&n| level[n] = l);
    }
    let path = |a: usize, b: usize| {
        let mut stack = vec![b];
        let mut seen = vec![false; producers.len()];
        while let Some(x) = stack.pop() {
            for &p in &producers[x] {
                if p == a {
                    return true;
                }
                if !std::mem::replace(&mut seen[p], true) {
                    stack.push(p);
                }
            }
        }
        false
    };
    let runs_before = |a: usize, b: usize| if pipelined { path(a, b) } else { level[a] < level[b] };
    let all_before = |x: &Group, y: &Group| x.accessors.iter().all(|&a| y.accessors.iter().all(|&b| runs_before(a, b)));
    let placed: Vec<(usize, usize)> = offsets.iter().enumerate().filter_map(|(g, o)| o.map(|o| (g, o))).collect();
    for (i, &(a, oa)) in placed.iter().enumerate() {
        for &(b, ob) in &placed[i + 1..] {
            let bytes_overlap = oa < ob + groups[b].bytes && ob < oa + groups[a].bytes;
            if bytes_overlap && !all_before(&groups[a], &groups[b]) && !all_before(&groups[b], &groups[a]) {
                return Err(Error::new(
                    ErrorKind::Failure,
                    format!(
                        "memory plan check: '{}' and '{}' share bytes but may be in use at once",
                        groups[a].objects[0].name(),
                        groups[b].objects[0].name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What a graph keeps of its memory plan between verifications.
#[derive(Default)]
pub(crate) struct PlanState {
    pub(super) plan: MemoryPlan,
    arena: Option<Arc<RawBuf>>,
    /// One object per placed buffer (its storage is the buffer's).
    placed: Vec<Reference>,
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{copy_kernel, image, run_until, u8_kernel_with_hint};
    use crate::{AliasKind, Context, DataType, Graph, Image, ImageFormat, Kernel, PlannedBuffer, Reference};

    /// One 8×8 U8 image: rows padded to the 64-byte stride.
    const FRAME: usize = 8 * 64;

    fn virt(g: &Graph) -> Image {
        Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap()
    }

    /// `a → v[0] → v[1] → … → out`, one copy node per link: level i writes v[i].
    fn chain(ctx: &Context, g: &Graph, k: &Kernel, n: usize) -> Vec<Image> {
        let v: Vec<Image> = (0..n).map(|_| virt(g)).collect();
        g.add_node(k, [&image(ctx), &v[0]]).unwrap();
        for w in v.windows(2) {
            g.add_node(k, [&w[0], &w[1]]).unwrap();
        }
        g.add_node(k, [&v[n - 1], &image(ctx)]).unwrap();
        v
    }

    /// Buffers live in a common level never share a byte.
    fn assert_sound(plan: &crate::MemoryPlan) {
        for (i, a) in plan.buffers.iter().enumerate() {
            for b in &plan.buffers[i + 1..] {
                let live_together = a.levels.0 <= b.levels.1 && b.levels.0 <= a.levels.1;
                let bytes_overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
                assert!(!(live_together && bytes_overlap), "{a:?} and {b:?}");
            }
            assert!(a.offset + a.bytes <= plan.arena_bytes);
        }
    }

    #[test]
    fn images_never_live_at_once_share_bytes_and_others_do_not() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let v = chain(&ctx, &g, &k, 4);
        run_until(&g, "memory plan").unwrap();
        // v0 lives in levels 0–1, v1 in 1–2, v2 in 2–3, v3 in 3–4: two buffers alternate.
        let (p0, p1, p2, p3) = (v[0].placement(), v[1].placement(), v[2].placement(), v[3].placement());
        assert!(p0.is_some() && p1.is_some());
        assert_eq!(p0, p2, "v0 and v2 are never live at once");
        assert_eq!(p1, p3);
        assert_ne!(p0, p1, "v0 and v1 are both used in level 1");
        let plan = g.memory_plan().unwrap();
        assert_eq!((plan.arena_bytes, plan.unplanned_bytes, plan.lower_bound_bytes), (2 * FRAME, 4 * FRAME, 2 * FRAME));
        assert_eq!(plan.buffers.len(), 4);
        assert_sound(&plan);
        assert!(plan.excluded.is_empty());
        run_until(&g, "buffers").unwrap();
        assert_eq!(ctx.buffer_bytes().current, 2 * FRAME + 2 * FRAME, "the arena and the two application images");
    }

    #[test]
    fn readers_in_one_level_keep_their_buffers_apart() {
        // a → v0; v0 → v1 and v0 → v2 (one level); v1 → out, v2 → out2.
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let (v0, v1, v2) = (virt(&g), virt(&g), virt(&g));
        g.add_node(&k, [&image(&ctx), &v0]).unwrap();
        g.add_node(&k, [&v0, &v1]).unwrap();
        g.add_node(&k, [&v0, &v2]).unwrap();
        g.add_node(&k, [&v1, &image(&ctx)]).unwrap();
        g.add_node(&k, [&v2, &image(&ctx)]).unwrap();
        run_until(&g, "memory plan").unwrap();
        let offsets: Vec<_> = [&v0, &v1, &v2].iter().map(|i| i.placement().unwrap().1).collect();
        assert_eq!(offsets, [0, FRAME, 2 * FRAME], "all three are live in level 1");
        let plan = g.memory_plan().unwrap();
        assert_eq!(plan.arena_bytes, plan.lower_bound_bytes);
        assert_sound(&plan);
    }

    #[test]
    fn a_small_image_fits_where_a_large_one_was_and_sizes_decide_the_order() {
        // a (8×8) → big (8×64, levels 0–1) → small1 (8×8, 1–2) → small2 (8×8, 2–3) → out.
        let ctx = Context::builder().threads(1).build().unwrap();
        let any_u8 = |ctx: &Context, name: &str, h: u32| {
            crate::graph::verify::testkit::u8_kernel(ctx, name, move |b| {
                b.validate(move |v, metas| {
                    let i = v.image(0)?;
                    metas.get(1)?.set_image(ImageFormat::U8, i.width(), h).map(|_| ())
                })
            })
        };
        let (tall, short) = (any_u8(&ctx, "test.tall", 64), any_u8(&ctx, "test.short", 8));
        let g = Graph::new(&ctx).unwrap();
        let (big, s1, s2) = (virt(&g), virt(&g), virt(&g));
        g.add_node(&tall, [&image(&ctx), &big]).unwrap();
        g.add_node(&short, [&big, &s1]).unwrap();
        g.add_node(&short, [&s1, &s2]).unwrap();
        g.add_node(&short, [&s2, &image(&ctx)]).unwrap();
        run_until(&g, "memory plan").unwrap();
        // The largest goes first, at 0; s1 overlaps it (level 1) and goes after; s2 fits at 0.
        assert_eq!(big.placement().unwrap().1, 0);
        assert_eq!(s1.placement().unwrap().1, 8 * FRAME);
        assert_eq!(s2.placement().unwrap().1, 0);
        let plan = g.memory_plan().unwrap();
        assert_eq!(
            (plan.arena_bytes, plan.unplanned_bytes, plan.lower_bound_bytes),
            (9 * FRAME, 10 * FRAME, 9 * FRAME)
        );
        assert_sound(&plan);
    }

    #[test]
    fn an_aliased_chain_is_one_buffer_and_one_bound_to_an_application_image_is_left_out() {
        let (ctx, k) = copy_kernel();
        let inplace = u8_kernel_with_hint(&ctx, "test.inplace", AliasKind::Dense);
        let g = Graph::new(&ctx).unwrap();
        // a → copy → v0 → inplace → v1 → copy → v2 → inplace → out.
        let (v0, v1, v2) = (virt(&g), virt(&g), virt(&g));
        let out = image(&ctx);
        g.add_node(&k, [&image(&ctx), &v0]).unwrap();
        g.add_node(&inplace, [&v0, &v1]).unwrap();
        g.add_node(&k, [&v1, &v2]).unwrap();
        g.add_node(&inplace, [&v2, &out]).unwrap();
        run_until(&g, "memory plan").unwrap();
        let plan = g.memory_plan().unwrap();
        assert_eq!(plan.buffers.len(), 1, "{plan:?}");
        assert_eq!(plan.buffers[0].objects, [v0.name(), v1.name()], "the chain v0 = v1 is one buffer");
        assert_eq!(plan.buffers[0].levels, (0, 2));
        assert_eq!(plan.excluded, [(v2.name(), "aliasing placed it in a non-virtual image")]);
        assert_eq!(v2.effective_storage_key(), out.storage_key());
    }

    /// `a → n0 → v0`, `v0 → n1 → out` (a side reader), `v0 → n2 → v1 → n3 → v2 → n4 → out2`.
    fn side_reader(ctx: &Context, g: &Graph, k: &Kernel) -> (crate::Node, [Image; 3]) {
        let (v0, v1, v2) = (virt(g), virt(g), virt(g));
        let n0 = g.add_node(k, [&image(ctx), &v0]).unwrap();
        g.add_node(k, [&v0, &image(ctx)]).unwrap();
        g.add_node(k, [&v0, &v1]).unwrap();
        g.add_node(k, [&v1, &v2]).unwrap();
        g.add_node(k, [&v2, &image(ctx)]).unwrap();
        (n0, [v0, v1, v2])
    }

    #[test]
    fn a_sequential_plan_shares_by_level_and_a_pipelined_one_only_along_dataflow_paths() {
        let (ctx, k) = copy_kernel();
        // Sequential: v0 is used in levels 0–1 and v2 in 2–3, so they share.
        let g = Graph::new(&ctx).unwrap();
        let (_, [v0, v1, v2]) = side_reader(&ctx, &g, &k);
        run_until(&g, "memory plan").unwrap();
        assert_eq!(v0.placement(), v2.placement());
        assert_ne!(v0.placement(), v1.placement());
        assert_eq!(g.memory_plan().unwrap().arena_bytes, 2 * FRAME);
        // Pipelined: nothing orders the side reader against n3 (which writes v2): three buffers.
        let g = Graph::new(&ctx).unwrap();
        let (n0, [v0, v1, v2]) = side_reader(&ctx, &g, &k);
        let p = g.add_parameter(&n0, 0).unwrap();
        let input = n0.parameter(0).unwrap().unwrap();
        g.set_schedule_config(crate::ScheduleConfig::queue_auto().queue(p, [input])).unwrap();
        run_until(&g, "memory plan").unwrap();
        let offsets: Vec<_> = [&v0, &v1, &v2].iter().map(|i| i.placement().unwrap().1).collect();
        assert_eq!(offsets, [0, FRAME, 2 * FRAME]);
        assert_eq!(g.memory_plan().unwrap().arena_bytes, 3 * FRAME);
        // A longer chain behind the same graph still shares along the path: v3 after v1.
        let v3 = virt(&g);
        g.add_node(&k, [&v2, &v3]).unwrap();
        g.add_node(&k, [&v3, &image(&ctx)]).unwrap();
        run_until(&g, "memory plan").unwrap();
        assert_eq!(v3.placement(), v1.placement(), "v1's users (n2, n3) both reach the writer of v3");
    }

    #[test]
    fn without_a_plan_each_virtual_image_has_its_own_buffer() {
        let ctx = Context::builder().threads(1).memory_plan(false).build().unwrap();
        let k = crate::graph::verify::testkit::u8_kernel(&ctx, "test.copy", |b| {
            b.validate(|v, m| crate::graph::verify::testkit::same_size_u8(v, m).map(|_| ()))
        });
        let g = Graph::new(&ctx).unwrap();
        let v = chain(&ctx, &g, &k, 4);
        run_until(&g, "buffers").unwrap();
        assert!(v.iter().all(|i| i.placement().is_none()));
        assert_eq!(g.memory_plan().unwrap(), Default::default());
        assert_eq!(ctx.buffer_bytes().current, 6 * FRAME);
    }

    #[test]
    fn re_verification_re_plans_frees_the_old_arena_and_keeps_an_unchanged_one() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let v = chain(&ctx, &g, &k, 2);
        g.verify().unwrap();
        let before = g.memory_plan().unwrap();
        assert_eq!(before.arena_bytes, 2 * FRAME, "v0 and v1 are both used in level 1");
        let arena = v[0].placement().unwrap().0;
        // Another reader of v0 in level 1 (through `mid`), and v1 read again in level 2 (into v2):
        // three buffers live in level 1, so the arena grows; v2 (levels 2–3) can share with v0.
        let (v2, mid) = (virt(&g), virt(&g));
        g.add_node(&k, [&v[1], &v2]).unwrap();
        g.add_node(&k, [&v2, &image(&ctx)]).unwrap();
        g.add_node(&k, [&v[0], &mid]).unwrap();
        g.add_node(&k, [&mid, &image(&ctx)]).unwrap();
        g.verify().unwrap();
        let after = g.memory_plan().unwrap();
        assert_eq!(after.arena_bytes, 3 * FRAME, "{after:?}");
        assert_ne!(v[0].placement().unwrap().0, arena, "a larger arena replaced the old one");
        assert_eq!(v2.placement(), v[0].placement(), "v0 (levels 0–1) and v2 (2–3) share");
        assert_sound(&after);
        assert_eq!(ctx.buffer_bytes().current, 3 * FRAME + 4 * FRAME, "the new arena and 4 application images");
        // Verified again unchanged: the same arena.
        let arena = v[0].placement().unwrap().0;
        g.verify().unwrap();
        assert_eq!(v[0].placement().unwrap().0, arena);
        assert_eq!(g.memory_plan().unwrap(), after);
    }

    #[test]
    fn images_that_leave_the_plan_are_unplaced_and_the_plan_shrinks_to_one_buffer() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        // a → n0 → v0 → n1 → v1 → n2 → v2 → n3 → out, and a side branch b → m0 → s0 → m1 → s1 → m2 → c.
        let (a, out, b, c) = (image(&ctx), image(&ctx), image(&ctx), image(&ctx));
        let (v0, v1, v2, s0, s1) = (virt(&g), virt(&g), virt(&g), virt(&g), virt(&g));
        let n0 = g.add_node(&k, [&a, &v0]).unwrap();
        let n1 = g.add_node(&k, [&v0, &v1]).unwrap();
        let n2 = g.add_node(&k, [&v1, &v2]).unwrap();
        let n3 = g.add_node(&k, [&v2, &out]).unwrap();
        let m = [
            g.add_node(&k, [&b, &s0]).unwrap(),
            g.add_node(&k, [&s0, &s1]).unwrap(),
            g.add_node(&k, [&s1, &c]).unwrap(),
        ];
        g.verify().unwrap();
        // Level 1 uses v0, v1, s0 and s1: four buffers.
        assert_eq!(g.memory_plan().unwrap().arena_bytes, 4 * FRAME);
        assert!([&v0, &v1, &v2, &s0, &s1].iter().all(|i| i.placement().is_some()));
        assert_eq!(ctx.buffer_bytes().current, 4 * FRAME + 4 * FRAME, "the arena and a, out, b, c");
        // The side branch goes: s0 and s1 leave the plan (three images stay, in two buffers).
        for n in &m {
            g.remove_node(n).unwrap();
        }
        g.verify().unwrap();
        let plan = g.memory_plan().unwrap();
        assert_eq!((plan.buffers.len(), plan.arena_bytes), (3, 2 * FRAME), "{plan:?}");
        assert_sound(&plan);
        assert_eq!((s0.placement(), s1.placement()), (None, None), "images out of the graph are out of the plan");
        assert!([&v0, &v1, &v2].iter().all(|i| i.placement().is_some()));
        assert_eq!(v0.placement(), v2.placement());
        // The old arena went with its last placement.
        assert_eq!(ctx.buffer_bytes().current, 2 * FRAME + 4 * FRAME, "the new arena and a, out, b, c");
        // Down to one virtual image: a → n0 → v0 → n4 → out.
        for n in [&n1, &n2, &n3] {
            g.remove_node(n).unwrap();
        }
        g.add_node(&k, [&v0, &out]).unwrap();
        g.verify().unwrap();
        let plan = g.memory_plan().unwrap();
        assert_eq!(plan.buffers.len(), 1, "{plan:?}");
        assert_eq!((plan.buffers[0].objects.as_slice(), plan.arena_bytes), (&[v0.name()][..], FRAME));
        assert_eq!(v0.placement().map(|p| p.1), Some(0), "the one image left stays placed");
        assert_eq!((v1.placement(), v2.placement()), (None, None));
        assert_eq!(ctx.buffer_bytes().current, FRAME + 4 * FRAME);
        drop(n0);
    }

    #[test]
    fn an_image_aliasing_binds_to_an_application_image_on_re_verification_leaves_the_plan() {
        let (ctx, k) = copy_kernel();
        let inplace = u8_kernel_with_hint(&ctx, "test.inplace", AliasKind::Dense);
        let g = Graph::new(&ctx).unwrap();
        // a → copy → v0 → inplace → out; a second reader of v0 (→ out2) refuses the hint.
        let (a, out, out2, v0) = (image(&ctx), image(&ctx), image(&ctx), virt(&g));
        g.add_node(&k, [&a, &v0]).unwrap();
        g.add_node(&inplace, [&v0, &out]).unwrap();
        let reader = g.add_node(&k, [&v0, &out2]).unwrap();
        g.verify().unwrap();
        assert_eq!(g.memory_plan().unwrap().arena_bytes, FRAME);
        assert!(v0.placement().is_some());
        assert_eq!(ctx.buffer_bytes().current, FRAME + 3 * FRAME);
        // The reader goes: v0 is bound to out, out of the plan, and the arena is freed.
        g.remove_node(&reader).unwrap();
        g.verify().unwrap();
        let plan = g.memory_plan().unwrap();
        assert_eq!((plan.buffers.len(), plan.arena_bytes), (0, 0), "{plan:?}");
        assert_eq!(plan.excluded, [(v0.name(), "aliasing placed it in a non-virtual image")]);
        assert_eq!(v0.effective_storage_key(), out.storage_key());
        assert_eq!(ctx.buffer_bytes().current, 3 * FRAME, "a, out and out2: no arena");
    }

    /// `check_plan` on hand-made groups: the placement's independent check must refuse what the
    /// executor's order does not allow (no placement the pass makes is wrong, so only this shows
    /// that the check checks).
    #[test]
    fn the_brute_force_check_refuses_buffers_sharing_bytes_while_both_may_be_in_use() {
        let (ctx, _) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        // 0 → 1 → 3 and 0 → 2: levels 0 | 1 2 | 3.
        let v = super::Verification {
            graph: &g.inner,
            gname: "g".into(),
            full: true,
            live: vec![0, 1, 2, 3],
            writers: Vec::new(),
            writer_index: Default::default(),
            schedule: vec![vec![0], vec![1, 2], vec![3]],
            producers: vec![vec![], vec![0], vec![0], vec![1]],
            changed: Default::default(),
            alias_topology: Default::default(),
            preverified: Vec::new(),
        };
        let group = |accessors: Vec<usize>| super::Group {
            objects: vec![virt(&g).into()],
            levels: (0, 0),
            bytes: FRAME,
            excluded: None,
            writers: accessors[..1].to_vec(),
            accessors,
        };
        let check = |a: Vec<usize>, b: Vec<usize>, offsets: [usize; 2], pipelined: bool| {
            let groups = [group(a), group(b)];
            super::check_plan(&v, &v.producers, &groups, &[Some(offsets[0]), Some(offsets[1])], pipelined).is_ok()
        };
        // Used in one level (node 1 uses both): refused at one offset, fine apart or adjacent.
        assert!(!check(vec![0, 1], vec![1, 3], [0, 0], false));
        assert!(!check(vec![0, 1], vec![1, 3], [0, FRAME - 1], false));
        assert!(!check(vec![0, 1], vec![1, 3], [FRAME - 1, 0], false));
        assert!(check(vec![0, 1], vec![1, 3], [0, FRAME], false));
        assert!(check(vec![0, 1], vec![1, 3], [FRAME, 0], false));
        // Levels 0–1 then 2: ordered for the sequential executor, in either group order.
        assert!(check(vec![0, 2], vec![3], [0, 0], false));
        assert!(check(vec![3], vec![0, 2], [0, 0], false));
        // Two nodes of one level (1 and 2) are not ordered.
        assert!(!check(vec![0, 1], vec![2, 3], [0, 0], false));
        // Pipelined: node 2 has no path to node 3, so they may run at once; 0 → 1 → 3 is a path.
        assert!(!check(vec![0, 2], vec![3], [0, 0], true));
        assert!(!check(vec![3], vec![0, 2], [0, 0], true));
        assert!(check(vec![0, 1], vec![3], [0, 0], true));
        assert!(check(vec![3], vec![0, 1], [0, 0], true));
        assert!(!check(vec![0, 1], vec![1, 3], [0, 0], true), "node 1 uses both");
        let e = super::check_plan(&v, &v.producers, &[group(vec![0, 2]), group(vec![3])], &[Some(0), Some(0)], true)
            .unwrap_err();
        assert!(e.to_string().contains("share bytes but may be in use at once"), "{e}");
    }

    /// Every kind, through `ObjectKind::plan_storage` (issue 28 step 6): one real object of each
    /// (an exhaustive match: a new kind does not compile until it is here), a virtual twin in `g`,
    /// and whether the plan places it.
    mod kinds {
        use crate::data::object::Access;
        use crate::*;

        pub(super) fn real(ctx: &Context, t: DataType) -> Reference {
            let image = || Image::new(ctx, 8, 8, ImageFormat::U8).unwrap();
            match t {
                DataType::Image => image().into(),
                DataType::Scalar => Scalar::new(ctx, ScalarValue::Int32(-3)).unwrap().into(),
                DataType::Array => Array::new(ctx, ArrayItemType::Coordinates2d, 7).unwrap().into(),
                DataType::UserDataObject => UserDataObject::new(ctx, "payload", 100).unwrap().into(),
                DataType::Matrix => Matrix::new(ctx, ScalarType::Int32, 5, 3).unwrap().into(),
                DataType::Convolution => Convolution::new(ctx, 3, 5).unwrap().into(),
                DataType::Lut => Lut::new(ctx, ScalarType::Int16, 300).unwrap().into(),
                DataType::Distribution => Distribution::new(ctx, 16, 2, 200).unwrap().into(),
                DataType::Threshold => Threshold::new(ctx, ThresholdType::Range, ScalarType::Uint8).unwrap().into(),
                DataType::Pyramid => Pyramid::new(ctx, 3, PYRAMID_SCALE_HALF, 16, 8, ImageFormat::U8).unwrap().into(),
                DataType::Remap => Remap::new(ctx, 8, 4, 16, 8).unwrap().into(),
                DataType::ObjectArray => ObjectArray::new(ctx, image(), 2).unwrap().into(),
                DataType::Tensor => Tensor::new(ctx, &[2, 3, 5], ScalarType::Int16, 0).unwrap().into(),
                DataType::RawImage => crate::data::raw_image::sample(ctx),
            }
        }

        /// A virtual object of `g` with `exemplar`'s type, its meta data left open where the kind
        /// allows (completed by the copy kernel's validator).
        pub(super) fn virtual_like(g: &Graph, exemplar: &Reference) -> Reference {
            match exemplar {
                Reference::Image(_) => Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap().into(),
                Reference::Scalar(s) => Scalar::new_virtual(g, s.scalar_type()).unwrap().into(),
                Reference::Array(_) => Array::new_virtual(g, None, 0).unwrap().into(),
                Reference::UserDataObject(u) => UserDataObject::new_virtual(g, "payload", u.size()).unwrap().into(),
                Reference::Matrix(_) => Matrix::new_virtual(g, ScalarType::Int32, 5, 3).unwrap().into(),
                Reference::Convolution(_) => Convolution::new_virtual(g, 3, 5).unwrap().into(),
                Reference::Lut(_) => Lut::new_virtual(g, ScalarType::Int16, 300).unwrap().into(),
                Reference::Distribution(_) => Distribution::new_virtual(g, 16, 2, 200).unwrap().into(),
                Reference::Threshold(t) => {
                    let m = t.meta();
                    Threshold::new_virtual_for_image(g, m.threshold_type, m.input_format, m.output_format)
                        .unwrap()
                        .into()
                }
                Reference::Pyramid(_) => {
                    Pyramid::new_virtual(g, 3, PYRAMID_SCALE_HALF, 0, 0, ImageFormat::Virtual).unwrap().into()
                }
                Reference::Remap(_) => Remap::new_virtual(g, 8, 4, 16, 8).unwrap().into(),
                Reference::ObjectArray(a) => ObjectArray::new_virtual(g, a.item(0).unwrap(), a.count()).unwrap().into(),
                Reference::Tensor(_) => Tensor::new_virtual(g, &[], None, 0).unwrap().into(),
                Reference::RawImage(r) => RawImage::new_virtual(g, &r.meta()).unwrap().into(),
            }
        }

        /// True for the kinds the plan places (the module doc's rules).
        pub(super) fn planned(t: DataType) -> bool {
            match t {
                DataType::Image
                | DataType::Array
                | DataType::UserDataObject
                | DataType::Matrix
                | DataType::Convolution
                | DataType::Lut
                | DataType::Distribution
                | DataType::Remap
                | DataType::Tensor
                | DataType::RawImage => true,
                DataType::Scalar | DataType::Threshold | DataType::Pyramid | DataType::ObjectArray => false,
            }
        }

        /// The contents of a planned kind's object (`None` for the others), read as a kernel
        /// would (virtual objects included).
        pub(super) fn contents(r: &Reference, pc: Option<&ProcessContext<'_>>, i: u32) -> Result<Option<Vec<u8>>> {
            if let Reference::Image(img) = r {
                let Some(pc) = pc else { return img.to_vec::<u8>().map(Some) };
                let k = pc.image(i)?;
                let patch = k.map::<u8>(k.full_rect(), 0)?;
                return Ok(Some((0..img.height()).flat_map(|y| patch.row(y).to_vec()).collect()));
            }
            if let Reference::Array(a) = r {
                let mut out = vec![0u8; a.capacity() * a.item_size()];
                let n = a.read_raw(&mut out, Access::Kernel)?;
                out.truncate(n * a.item_size());
                return Ok(Some(out));
            }
            let Some(map) = r.any().map_raw(false) else { return Ok(None) };
            let map = map?;
            // SAFETY: the read lease keeps writers away while it lives; `offset + bytes` lies in
            // the lease (`RawMap`'s contract).
            let bytes = unsafe { std::slice::from_raw_parts(map.lease.ptr.add(map.offset), map.bytes) };
            Ok(Some(bytes.to_vec()))
        }

        /// Write `src` (as [`contents`] gives it) into `r`; nothing for kinds without contents here.
        pub(super) fn set_contents(r: &Reference, pc: Option<&ProcessContext<'_>>, i: u32, src: &[u8]) -> Result<()> {
            if let Reference::Image(img) = r {
                let Some(pc) = pc else {
                    return img.copy_from(vx_plugin_abi::Rect::full(img.width(), img.height()), 0, src);
                };
                let k = pc.image(i)?;
                let mut patch = k.map_mut::<u8>(k.full_rect(), 0)?;
                let w = img.width() as usize;
                for y in 0..img.height() {
                    patch.row_mut(y).copy_from_slice(&src[y as usize * w..][..w]);
                }
                return Ok(());
            }
            if let Reference::Array(a) = r {
                a.truncate_impl(0, Access::Kernel)?;
                return a.add_raw(src, Access::Kernel);
            }
            let Some(map) = r.any().map_raw(true) else { return Ok(()) };
            let map = map?;
            assert_eq!(map.bytes, src.len());
            // SAFETY: the write lease is the only mapping while it lives; `offset + bytes` lies in
            // the lease; `src` is another object's copy (a separate allocation).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), map.lease.ptr.add(map.offset), src.len()) };
            Ok(())
        }

        /// Seeded bytes for `r` (an array: full).
        pub(super) fn pattern(r: &Reference, seed: u64) -> Option<Vec<u8>> {
            let n = match r {
                Reference::Array(a) => a.capacity() * a.item_size(),
                _ => contents(r, None, 0).unwrap()?.len(),
            };
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            Some(
                (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect(),
            )
        }

        /// `kind.copy.<code>`: output 1 takes input 0's meta data and contents.
        pub(super) fn copy_kernel(ctx: &Context, t: DataType) -> Kernel {
            let k = ctx
                .user_kernel(&format!("test.copy.{:#x}", t.code()), ctx.allocate_user_kernel_id().unwrap(), 2)
                .validate(|v, metas| {
                    metas.get(1)?.set_from_reference(v.param(0)?)?;
                    Ok(())
                })
                .process(|pc| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    if let Some(bytes) = contents(pc.param(0)?, Some(pc), 0)? {
                        set_contents(pc.param(1)?, Some(pc), 1, &bytes)?;
                    }
                    Ok(())
                })
                .add()
                .unwrap();
            k.add_parameter(0, ParamDirection::Input, t, ParamState::Required).unwrap();
            k.add_parameter(1, ParamDirection::Output, t, ParamState::Required).unwrap();
            k.finalize().unwrap();
            k
        }
    }

    /// Every kind (`DataType::ALL`): `in → A → mid → B → out` beside `in2 → C → out2`. A (levels
    /// 0–1) and C (0–1) are live at once, B (2–3) after A: a planned kind's A and B share bytes,
    /// A and C do not; the outputs are the inputs, byte for byte. Kinds not planned are in no
    /// buffer of the plan and have no placement.
    #[test]
    fn virtual_objects_of_every_kind_with_a_buffer_are_planned_and_keep_their_contents() {
        let mut covered = 0;
        for t in DataType::ALL {
            let ctx = Context::builder().threads(1).build().unwrap();
            let k = kinds::copy_kernel(&ctx, t);
            let g = Graph::new(&ctx).unwrap();
            let (input, mid, out) = (kinds::real(&ctx, t), kinds::real(&ctx, t), kinds::real(&ctx, t));
            let (input2, out2) = (kinds::real(&ctx, t), kinds::real(&ctx, t));
            let [a, b, c] = [(); 3].map(|_| kinds::virtual_like(&g, &input));
            g.add_node(&k, [&input, &a]).unwrap();
            g.add_node(&k, [&a, &mid]).unwrap();
            g.add_node(&k, [&mid, &b]).unwrap();
            g.add_node(&k, [&b, &out]).unwrap();
            g.add_node(&k, [&input2, &c]).unwrap();
            g.add_node(&k, [&c, &out2]).unwrap();
            let (p1, p2) = (kinds::pattern(&input, 1), kinds::pattern(&input2, 2));
            if let (Some(p1), Some(p2)) = (&p1, &p2) {
                kinds::set_contents(&input, None, 0, p1).unwrap();
                kinds::set_contents(&input2, None, 0, p2).unwrap();
            }
            g.verify().unwrap_or_else(|e| panic!("{t}: {e}"));
            let plan = g.memory_plan().unwrap();
            assert_sound(&plan);
            let find = |r: &Reference| plan.buffers.iter().find(|p| p.objects.contains(&r.name())).cloned();
            if kinds::planned(t) {
                let [pa, pb, pc] = [&a, &b, &c].map(|r| find(r).unwrap_or_else(|| panic!("{t}: {plan:?}")));
                assert!(pa.bytes > 0);
                assert_eq!((pa.levels, pb.levels, pc.levels), ((0, 1), (2, 3), (0, 1)), "{t}");
                let overlap = |x: &PlannedBuffer, y: &PlannedBuffer| {
                    x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes
                };
                assert!(overlap(&pa, &pb), "{t}: A and B never live at once share bytes: {plan:?}");
                assert!(!overlap(&pa, &pc), "{t}: A and C are live at once: {plan:?}");
                assert_eq!(plan.arena_bytes, pa.bytes.next_multiple_of(64) + pa.bytes, "{t}");
                assert_eq!(a.any().planned_at(), b.any().planned_at(), "{t}");
                assert!(plan.excluded.is_empty(), "{t}: {plan:?}");
            } else {
                assert!(plan.buffers.is_empty(), "{t}: {plan:?}");
                assert!([&a, &b, &c].iter().all(|r| r.any().planned_at().is_none()), "{t}");
            }
            g.process().unwrap_or_else(|e| panic!("{t}: {e}"));
            g.process().unwrap_or_else(|e| panic!("{t}: {e}"));
            if let (Some(p1), Some(p2)) = (p1, p2) {
                assert!(kinds::planned(t), "{t}: contents are compared for planned kinds");
                assert_eq!(kinds::contents(&out, None, 0).unwrap().unwrap(), p1, "{t}: out");
                assert_eq!(kinds::contents(&out2, None, 0).unwrap().unwrap(), p2, "{t}: out2");
                assert_eq!(kinds::contents(&mid, None, 0).unwrap().unwrap(), p1, "{t}: mid");
            }
            covered += 1;
        }
        assert_eq!(covered, DataType::ALL.len());
    }

    /// Every planned kind, pipelined (depth 3, 6 frames of their own contents):
    /// `in → A → mid → B → out`, with A and B sharing bytes in every frame slot's arena; the
    /// slots' copies are placed at the plan's offsets in arenas of their own, and each frame's
    /// output is its own input.
    #[test]
    fn pipelined_frames_of_every_planned_kind_have_arenas_of_their_own() {
        let mut covered = 0;
        for t in DataType::ALL.into_iter().filter(|t| kinds::planned(*t)) {
            let ctx = Context::builder()
                .threads(2)
                .target(crate::TargetConfig::new("a"))
                .target(crate::TargetConfig::new("b"))
                .build()
                .unwrap();
            let k = kinds::copy_kernel(&ctx, t);
            let g = Graph::new(&ctx).unwrap();
            let (input, mid, out) = (kinds::real(&ctx, t), kinds::real(&ctx, t), kinds::real(&ctx, t));
            let [a, b] = [(); 2].map(|_| kinds::virtual_like(&g, &input));
            let n0 = g.add_node(&k, [&input, &a]).unwrap();
            let n1 = g.add_node(&k, [&a, &mid]).unwrap();
            let n2 = g.add_node(&k, [&mid, &b]).unwrap();
            let n3 = g.add_node(&k, [&b, &out]).unwrap();
            for (n, target) in [(&n0, "a"), (&n1, "b"), (&n2, "a"), (&n3, "b")] {
                n.set_target(target).unwrap();
            }
            let (p_in, p_out) = (g.add_parameter(&n0, 0).unwrap(), g.add_parameter(&n3, 1).unwrap());
            let ins: Vec<Reference> = (0..3).map(|_| kinds::real(&ctx, t)).collect();
            let outs: Vec<Reference> = (0..3).map(|_| kinds::real(&ctx, t)).collect();
            g.set_schedule_config(
                crate::ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()),
            )
            .unwrap();
            g.verify().unwrap_or_else(|e| panic!("{t}: {e}"));
            let plan = g.memory_plan().unwrap();
            let (pa, pb) = (a.any().planned_at().unwrap(), b.any().planned_at().unwrap());
            assert_eq!(pa, pb, "{t}: A's users reach B's writer through mid: {plan:?}");
            {
                let body = g.inner.lock().unwrap();
                let mut arenas = vec![pa.0];
                for slot in &body.frames.slots[1..] {
                    let table = slot.params.read().unwrap();
                    let (ca, cb) = (table[0][1].clone().unwrap(), table[3][0].clone().unwrap());
                    assert!(!ca.same_object(&a) && !cb.same_object(&b), "{t}: slot copies");
                    let (qa, qb) = (ca.any().planned_at().unwrap(), cb.any().planned_at().unwrap());
                    assert_eq!((qa.1, qb.1), (pa.1, pb.1), "{t}: the plan's offsets");
                    assert_eq!(qa.0, qb.0);
                    arenas.push(qa.0);
                }
                arenas.sort_unstable();
                arenas.dedup();
                assert_eq!(arenas.len(), 3, "{t}: one arena per frame slot");
            }
            let frames = 6;
            let patterns: Vec<Vec<u8>> = (0..frames).map(|f| kinds::pattern(&input, 10 + f).unwrap()).collect();
            for f in 0..frames as usize {
                let (i, o) = (&ins[f % 3], &outs[f % 3]);
                if f >= 3 {
                    let done = g.dequeue(p_out).unwrap();
                    done.result.clone().unwrap_or_else(|e| panic!("{t}: {e}"));
                    assert_eq!(done.frame, (f - 3) as u64);
                    let got = kinds::contents(&done.reference, None, 0).unwrap().unwrap();
                    assert_eq!(got, patterns[f - 3], "{t}: frame {}", f - 3);
                    g.dequeue(p_in).unwrap();
                }
                kinds::set_contents(i, None, 0, &patterns[f]).unwrap();
                g.enqueue(p_in, i).unwrap();
                g.enqueue(p_out, o).unwrap();
            }
            for (f, want) in patterns.iter().enumerate().skip(frames as usize - 3) {
                let done = g.dequeue(p_out).unwrap();
                done.result.clone().unwrap_or_else(|e| panic!("{t}: {e}"));
                assert_eq!(done.frame, f as u64);
                let got = kinds::contents(&done.reference, None, 0).unwrap().unwrap();
                assert_eq!(&got, want, "{t}: frame {f}");
            }
            g.wait().unwrap();
            covered += 1;
        }
        assert_eq!(covered, DataType::ALL.into_iter().filter(|t| kinds::planned(*t)).count());
        assert!(covered >= 10);
    }

    /// Re-verification re-plans other kinds too: a virtual array completed again with a larger
    /// capacity is placed at its new size (the arena grows), its contents still exact; without a
    /// plan, each virtual array has a buffer of its own.
    #[test]
    fn a_virtual_array_re_completed_larger_is_re_placed_and_no_plan_means_own_buffers() {
        let array = |ctx: &Context, n: usize| -> Reference {
            crate::Array::new(ctx, crate::ArrayItemType::Coordinates2d, n).unwrap().into()
        };
        let ctx = Context::builder().threads(1).build().unwrap();
        let k = kinds::copy_kernel(&ctx, DataType::Array);
        let g = Graph::new(&ctx).unwrap();
        let (input, out) = (array(&ctx, 4), array(&ctx, 64));
        let [a, b] = [(); 2].map(|_| kinds::virtual_like(&g, &input));
        let n0 = g.add_node(&k, [&input, &a]).unwrap();
        g.add_node(&k, [&a, &b]).unwrap();
        g.add_node(&k, [&b, &out]).unwrap();
        g.verify().unwrap();
        let plan = g.memory_plan().unwrap();
        assert_eq!(plan.buffers.iter().map(|p| p.bytes).collect::<Vec<_>>(), [32, 32], "{plan:?}");
        assert_eq!(plan.arena_bytes, 64 + 32);
        // A larger input: both virtual arrays are completed again with capacity 40 (320 bytes).
        let input = array(&ctx, 40);
        let p = kinds::pattern(&input, 7).unwrap();
        kinds::set_contents(&input, None, 0, &p).unwrap();
        n0.set_parameter(0, input.clone()).unwrap();
        g.process().unwrap();
        let plan = g.memory_plan().unwrap();
        assert_eq!(plan.buffers.iter().map(|p| p.bytes).collect::<Vec<_>>(), [320, 320], "{plan:?}");
        assert_eq!(plan.arena_bytes, 320_usize.next_multiple_of(64) + 320);
        assert_sound(&plan);
        assert_eq!(kinds::contents(&out, None, 0).unwrap().unwrap(), p);

        let ctx = Context::builder().threads(1).memory_plan(false).build().unwrap();
        let k = kinds::copy_kernel(&ctx, DataType::Array);
        let g = Graph::new(&ctx).unwrap();
        let (input, out) = (array(&ctx, 4), array(&ctx, 4));
        let [a, b] = [(); 2].map(|_| kinds::virtual_like(&g, &input));
        g.add_node(&k, [&input, &a]).unwrap();
        g.add_node(&k, [&a, &b]).unwrap();
        g.add_node(&k, [&b, &out]).unwrap();
        g.process().unwrap();
        assert_eq!(g.memory_plan().unwrap(), Default::default());
        assert!(a.any().planned_at().is_none() && b.any().planned_at().is_none());
    }
}
