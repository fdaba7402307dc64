//! Pass `fusion` (`docs/design/fusion.md` §2): tiling nodes joined by virtual images
//! form fused groups that run as one unit with line buffers; the schedule is re-levelled so a
//! group's members share one level (the executor runs the group when it reaches it, and the memory
//! plan, which reads the same levels, sees every image a member touches live for the group's whole
//! run). The fused images take no buffer (`buffers`, `memory plan` skip them).
//!
//! A node is a *candidate* when it is a tiling node whose kernel declared bounded views (or a row
//! entry), with no completion callback, no control callback (commands wait for a node's own run), no
//! aliased pair, no tile memory, and either a row entry
//! (its node neighbourhood the declared one) or no vertical neighbourhood. Pixels it leaves
//! unprocessed (border `Undefined`, fast-only remainders) stay unprocessed when fused. An image is *fused* when a candidate writes it, it is a standalone
//! virtual image, not a graph parameter, and every node reading it (any overlap) is a candidate
//! reading exactly it, on the same target (the host or one named target: a group is one job on one
//! executor). Groups are the connected components of the fused images' producers and
//! readers; a group is kept when it is convex (no path leaves and re-enters it: a forward walk
//! from its outside successors, capped), an image between two members that keeps its buffer is read whole (materialized), and it maps
//! at most [`MAX_OUTSIDE_IMAGES`] outside images; then groups are refused, latest first, until the
//! graph with every group contracted has no cycle (two convex groups may still need each other).
//! Every tiling node left unfused is reported with its reason.
//!
//! Cost: O(parameters · overlap lookups + edges) for the candidates, edges and components, plus the
//! capped walks (O(group size) each), plus the planner per group (O(H / k · members)).

use std::collections::{HashMap, HashSet};

use crate::data::reference::Reference;
use crate::data::types::Direction;
use crate::error::Result;
use crate::graph::fusion::plan::block_lcm;
use crate::graph::fusion::{
    FusedGroup, FusedGroupReport, FusionRefusal, FusionReport, FusionState, ImageSpec, MAX_OUTSIDE_IMAGES, MemberSpec,
    ParamRole, UnfusedNode,
};
use crate::graph::tiling::plan::TileRequest;
use crate::graph::{GraphBody, NodeSlot};
use crate::kernel::callbacks::KernelFunctions;
use crate::kernel::fusion::RowFill;

use super::Verification;

/// Why node `s` cannot be in a group (`Ok(fill)`: it can, with its row entry's rule if any;
/// `Err(None)`: it is not a tiling node, nothing to report).
fn candidate(s: &NodeSlot) -> std::result::Result<Option<RowFill>, Option<FusionRefusal>> {
    let KernelFunctions::Tiling { .. } = &s.kernel.functions else { return Err(None) };
    let Some(state) = s.tiling.as_ref() else { return Err(None) };
    let fin = s.kernel.final_().ok_or(None)?;
    let support = fin.fusion.ok_or(Some(FusionRefusal::NoFusionSupport))?;
    let row_entry = support.fill.filter(|_| s.kernel.functions.rows().is_some());
    if row_entry.is_none() && !support.bounded {
        return Err(Some(FusionRefusal::NoFusionSupport));
    }
    if s.callback.is_some() {
        return Err(Some(FusionRefusal::HasCallback));
    }
    if s.control_fn().is_some() {
        return Err(Some(FusionRefusal::TakesCommands));
    }
    if !s.aliased.is_empty() {
        return Err(Some(FusionRefusal::Aliased));
    }
    if row_entry.is_some() && s.neighborhood != fin.attrs.neighborhood {
        return Err(Some(FusionRefusal::NeighbourhoodOverridden));
    }
    if row_entry.is_none() && (s.neighborhood.top != 0 || s.neighborhood.bottom != 0) {
        return Err(Some(FusionRefusal::VerticalNeighbourhoodWithoutRowEntry));
    }
    if state.tile_memory_size > 0 {
        return Err(Some(FusionRefusal::TileMemory));
    }
    Ok(row_entry)
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let on = body.fusion_override.unwrap_or(v.graph.ctx.inner.shared.config.fusion);
    let order = v.order();
    let node = |n: usize| body.nodes[n].as_ref().expect("scheduled nodes are live");
    let off = |reason: FusionRefusal| {
        let unfused = order
            .iter()
            .filter(|&&n| node(n).tiling.is_some())
            .map(|&n| UnfusedNode { node: node(n).name.clone(), kernel: node(n).kernel.name.clone(), reason })
            .collect();
        FusionReport { enabled: on && reason != FusionRefusal::FusionOff, groups: Vec::new(), unfused }
    };
    if !on {
        body.fusion = FusionState::new(Vec::new(), body.nodes.len(), off(FusionRefusal::FusionOff));
        return Ok(());
    }
    let n_nodes = body.nodes.len();
    // The groups of the last verification: one this one forms again from the same inputs is taken
    // as it is, not built anew (a `process` loop that gives each frame its own images
    // re-verifies every frame). Until the end of the pass the graph has no group (a pass that
    // fails leaves none, and the last report).
    let last_report = body.fusion.report.clone();
    let previous = std::mem::replace(&mut body.fusion, FusionState::new(Vec::new(), n_nodes, last_report)).groups;
    // By first member (groups share no node): one lookup per group formed.
    let mut previous: HashMap<usize, FusedGroup> = previous.into_iter().map(|g| (g.nodes()[0], g)).collect();
    let mut pos = vec![usize::MAX; n_nodes];
    for (i, &n) in order.iter().enumerate() {
        pos[n] = i;
    }
    // Candidates.
    let mut verdict: Vec<std::result::Result<Option<RowFill>, Option<FusionRefusal>>> = vec![Err(None); n_nodes];
    for &n in &order {
        verdict[n] = candidate(node(n));
    }
    let is_cand = |n: usize| verdict[n].is_ok();
    // Images written by candidates, their readers, and those spoiled by any other reader.
    let graph_params: HashSet<u64> = body
        .graph_params
        .iter()
        .filter_map(|&(n, p)| body.nodes.get(n)?.as_ref()?.params.get(p as usize)?.as_ref().map(Reference::id))
        .collect();
    let mut readers: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut spoiled: HashSet<u64> = HashSet::new();
    // A group runs as one job on one executor: an image between candidates on two targets (or a
    // target and the host) is not fused. Those candidates, for the report.
    let same_target = |a: usize, b: usize| match (node(a).executor(), node(b).executor()) {
        (None, None) => true,
        (Some(x), Some(y)) => std::sync::Arc::ptr_eq(x, y),
        _ => false,
    };
    let mut cross: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    let mut hits = Vec::new();
    for &n in &order {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            let (Direction::Input, Some(r)) = (s.spec(p).direction, r) else { continue };
            hits.clear();
            v.writer_index.overlapping_into(r, &mut hits);
            for &hit in &hits {
                let (w, _, written) = &v.writers[hit];
                if *w == n {
                    continue;
                }
                let id = written.id();
                if is_cand(*w) && is_cand(n) && r.id() == id {
                    if !same_target(*w, n) {
                        cross.entry(id).or_default().push((*w, n));
                        continue;
                    }
                    let list = readers.entry(id).or_default();
                    if !list.contains(&n) {
                        list.push(n);
                    }
                } else {
                    spoiled.insert(id);
                }
            }
        }
    }
    // Fused images: (id, producer, the image). An image that would be fused but for readers on
    // another target than its writer is not; its writer and candidate readers are *across* targets.
    let mut fused: HashMap<u64, (usize, Reference)> = HashMap::new();
    let mut across: HashSet<usize> = HashSet::new();
    for (w, _, written) in &v.writers {
        let id = written.id();
        let fusable = is_cand(*w)
            && written.as_image().is_some()
            && written.is_standalone_virtual()
            && !graph_params.contains(&id)
            && !spoiled.contains(&id);
        if !fusable {
            continue;
        }
        if let Some(pairs) = cross.get(&id) {
            // The writer and every candidate reading it: none can fuse through this image.
            across.extend(pairs.iter().flat_map(|&(a, b)| [a, b]));
            across.extend(readers.get(&id).into_iter().flatten().copied());
        } else if readers.contains_key(&id) {
            fused.insert(id, (*w, written.clone()));
        }
    }
    // Components.
    let mut parent: Vec<usize> = (0..n_nodes).collect();
    for (id, (w, _)) in &fused {
        for &r in &readers[id] {
            let (a, b) = (find(&mut parent, *w), find(&mut parent, r));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut components: HashMap<usize, Vec<usize>> = HashMap::new();
    for &n in &order {
        if is_cand(n) {
            components.entry(find(&mut parent, n)).or_default().push(n);
        }
    }
    let mut successors = vec![Vec::new(); n_nodes];
    for &n in &order {
        for &p in &v.producers[n] {
            successors[p].push(n);
        }
    }
    let mut refused: Vec<Option<FusionRefusal>> = vec![None; n_nodes];
    let mut groups = Vec::new();
    let mut roots: Vec<usize> = components.keys().copied().collect();
    roots.sort_unstable_by_key(|&r| pos[components[&r][0]]);
    for root in roots {
        let mut members = components.remove(&root).expect("a component");
        if members.len() < 2 {
            let n = members[0];
            refused[n] =
                Some(if across.contains(&n) { FusionRefusal::AcrossTargets } else { FusionRefusal::NothingToFuseWith });
            continue;
        }
        members.sort_unstable_by_key(|&n| pos[n]);
        let in_group = |n: usize| find_in(&members, n, &pos);
        let checked = check_group(&members, &in_group, &successors, &fused, &v.writers, &v.writer_index, body);
        let materialized = match checked {
            Ok(materialized) => materialized,
            Err(reason) => {
                for &n in &members {
                    refused[n] = Some(reason);
                }
                continue;
            }
        };
        let ctx = &v.graph.ctx;
        let threads = (ctx.threads(), &ctx.config().tiling);
        let images = (&fused, &materialized);
        match build_group(&members, &verdict, images, body, &ctx.inner.shared.resources, threads, &mut previous)? {
            Ok(g) => groups.push(g),
            Err(reason) => {
                for &n in &members {
                    refused[n] = Some(reason);
                }
            }
        }
    }
    // Each group is convex, yet two groups can still need each other (a path from one into the
    // other and another one back): contracted, the graph would have a cycle. Refuse groups, the
    // latest formed among those on a cycle first, until it has none.
    while let Some(g) = group_on_a_cycle(v, &groups, &order) {
        for &n in groups.remove(g).nodes() {
            refused[n] = Some(FusionRefusal::GroupCycle);
        }
    }
    // The report.
    let mut report = FusionReport { enabled: true, groups: Vec::new(), unfused: Vec::new() };
    let mut grouped = vec![false; n_nodes];
    for g in &groups {
        let g: &FusedGroup = g;
        for &n in g.nodes() {
            grouped[n] = true;
        }
        report.groups.push(FusedGroupReport {
            nodes: g.nodes().iter().map(|&n| node(n).name.clone()).collect(),
            fused_images: g.fused_image_names(),
            materialized_images: g.materialized_image_names(),
            band_rows: g.band_rows(),
            rows_per_step: g.rows_per_step(),
            line_buffer_bytes_per_thread: g.line_buffer_bytes(),
            threads: g.threads(),
        });
    }
    for &n in &order {
        if grouped[n] {
            continue;
        }
        let reason = match verdict[n] {
            Err(None) => continue,
            Err(Some(r)) => r,
            Ok(_) => refused[n].unwrap_or(FusionRefusal::NothingToFuseWith),
        };
        report.unfused.push(UnfusedNode { node: node(n).name.clone(), kernel: node(n).kernel.name.clone(), reason });
    }
    if !groups.is_empty() {
        relevel(v, &groups, &pos)?;
    }
    tracing::debug!(graph = %v.gname, groups = groups.len(), "fusion");
    // A group built anew over members with the same work keeps the cost model's estimates.
    for g in &groups {
        if let Some(old) = previous.get(&g.nodes()[0]) {
            g.inherit(old);
        }
    }
    body.fusion = FusionState::new(groups, n_nodes, report);
    Ok(())
}

/// `n` is one of `members` (sorted by `pos`).
fn find_in(members: &[usize], n: usize, pos: &[usize]) -> bool {
    members.binary_search_by_key(&pos[n], |&m| pos[m]).is_ok()
}

/// Why the component `members` cannot run as one group, if it cannot; else the *materialized*
/// images between members (written by one, read whole by others, but real or also read outside
/// the group: they keep their buffer, and the members read the rows from it as they are written).
fn check_group(
    members: &[usize],
    in_group: &dyn Fn(usize) -> bool,
    successors: &[Vec<usize>],
    fused: &HashMap<u64, (usize, Reference)>,
    writers: &[(usize, usize, Reference)],
    writer_index: &super::overlap::OverlapIndex<usize>,
    body: &GraphBody,
) -> std::result::Result<HashSet<u64>, FusionRefusal> {
    // An image between two members outside the rings is materialized: the reader reads it whole
    // (not a part, not a region overlapping it) and the member writing it is the only writer.
    let mut hits = Vec::new();
    let mut outside: HashSet<u64> = HashSet::new();
    let mut materialized: HashSet<u64> = HashSet::new();
    for &n in members {
        let s = body.nodes[n].as_ref().expect("live");
        for (p, r) in s.params.iter().enumerate() {
            let Some(r) = r else { continue };
            if r.as_image().is_none() || fused.contains_key(&r.id()) {
                continue;
            }
            outside.insert(r.id());
            if s.spec(p).direction != Direction::Input {
                continue;
            }
            hits.clear();
            writer_index.overlapping_into(r, &mut hits);
            let inside = |h: &usize| writers[*h].0 != n && in_group(writers[*h].0);
            if hits.iter().any(inside) {
                if hits.len() != 1 || writers[hits[0]].2.id() != r.id() {
                    return Err(FusionRefusal::MaterializedInsideGroup);
                }
                materialized.insert(r.id());
            }
        }
    }
    if outside.len() > MAX_OUTSIDE_IMAGES {
        return Err(FusionRefusal::TooManyImages);
    }
    // Convex: no walk from an outside successor reaches a member (capped).
    let budget = 64 * members.len() + 4096;
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> =
        members.iter().flat_map(|&m| successors[m].iter().copied()).filter(|&x| !in_group(x)).collect();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if seen.len() > budget {
            return Err(FusionRefusal::WouldNotBeConvex);
        }
        for &y in &successors[x] {
            if in_group(y) {
                return Err(FusionRefusal::WouldNotBeConvex);
            }
            stack.push(y);
        }
    }
    Ok(materialized)
}

/// The group of `members` (topological order), or why it cannot be built.
fn build_group(
    members: &[usize],
    verdict: &[std::result::Result<Option<RowFill>, Option<FusionRefusal>>],
    (fused, materialized): (&HashMap<u64, (usize, Reference)>, &HashSet<u64>),
    body: &GraphBody,
    resources: &std::sync::Arc<crate::shared::Resources>,
    (threads, policy): (usize, &crate::shared::TilingPolicy),
    previous: &mut HashMap<usize, FusedGroup>,
) -> Result<std::result::Result<FusedGroup, FusionRefusal>> {
    let member_of = |n: usize| members.iter().position(|&m| m == n);
    let mut images: Vec<ImageSpec> = Vec::new();
    let mut image_index: HashMap<u64, usize> = HashMap::new();
    let mut slots: HashMap<u64, usize> = HashMap::new();
    let mut specs = Vec::with_capacity(members.len());
    // The member writing each image a member writes (a materialized image's producer).
    let mut writing: HashMap<u64, usize> = HashMap::new();
    for (mi, &n) in members.iter().enumerate() {
        let s = body.nodes[n].as_ref().expect("live");
        for (p, r) in s.params.iter().enumerate() {
            if let (Some(r), Direction::Output) = (r, s.spec(p).direction) {
                writing.insert(r.id(), mi);
            }
        }
    }
    for (mi, &n) in members.iter().enumerate() {
        let s = body.nodes[n].as_ref().expect("live");
        let state = s.tiling.as_ref().expect("candidates are tiling nodes");
        let KernelFunctions::Tiling { fast, flexible, .. } = &s.kernel.functions else {
            unreachable!("candidates are tiling nodes")
        };
        let fin = s.kernel.final_().expect("nodes are created from finalized kernels");
        let mut params = Vec::with_capacity(s.params.len());
        for (p, r) in s.params.iter().enumerate() {
            let output = s.spec(p).direction == Direction::Output;
            let role = match r {
                None => ParamRole::Absent,
                Some(r) if r.as_scalar().is_some() => ParamRole::Value,
                Some(r) => {
                    let Some(img) = r.as_image() else { return Ok(Err(FusionRefusal::NoFusionSupport)) };
                    // A fused image's ring, or a materialized image (an outside slot too).
                    let producer = match fused.get(&r.id()) {
                        Some(&(producer, _)) => member_of(producer),
                        None if materialized.contains(&r.id()) => writing.get(&r.id()).copied(),
                        None => None,
                    };
                    let next_slot = slots.len();
                    let slot = |slots: &mut HashMap<u64, usize>| *slots.entry(r.id()).or_insert(next_slot);
                    match producer {
                        Some(producer) => {
                            let next = images.len();
                            let image = *image_index.entry(r.id()).or_insert(next);
                            if image == next {
                                let f = img.format();
                                images.push(ImageSpec {
                                    id: r.id(),
                                    name: r.name(),
                                    bytes_per_pixel: f.planes()[0].bytes_per_element as usize,
                                    fourcc: f.fourcc(),
                                    producer,
                                    readers: Vec::new(),
                                    slot: materialized.contains(&r.id()).then(|| slot(&mut slots)),
                                });
                            }
                            if !output {
                                images[image].readers.push(mi);
                            }
                            match images[image].slot {
                                None => ParamRole::Fused { image, output },
                                Some(slot) => ParamRole::Materialized { slot, image, output },
                            }
                        }
                        None => ParamRole::Outside { slot: slot(&mut slots), output },
                    }
                }
            };
            params.push(role);
        }
        let Ok(fill) = verdict[n] else { unreachable!("members are candidates") };
        specs.push(MemberSpec {
            node: n,
            request: TileRequest {
                width: state.size.0,
                height: state.size.1,
                block: fin.attrs.block_size,
                neighborhood: s.neighborhood,
                border: s.border,
                has_fast: fast.is_some(),
                has_flexible: flexible.is_some(),
                input_bytes_per_pixel: 0,
                output_bytes_per_pixel: 0,
                threads: 1,
            },
            fill,
            params,
        });
    }
    if slots.len() > MAX_OUTSIDE_IMAGES {
        return Ok(Err(FusionRefusal::TooManyImages));
    }
    let size = (specs[0].request.width, specs[0].request.height);
    if specs.iter().any(|s| (s.request.width, s.request.height) != size) {
        return Ok(Err(FusionRefusal::MaterializedInsideGroup));
    }
    if block_lcm(specs.iter().map(|s| s.request.block.height)).is_none() {
        return Ok(Err(FusionRefusal::BlockHeights));
    }
    let work: Vec<_> = members
        .iter()
        .map(|&n| {
            body.nodes[n].as_ref().and_then(|s| s.tiling.as_ref()).expect("members are tiling nodes").work.clone()
        })
        .collect();
    if previous.get(&members[0]).is_some_and(|g| g.built_from(&specs, &images, (threads, policy), &work)) {
        return Ok(Ok(previous.remove(&members[0]).expect("just found")));
    }
    let group = FusedGroup::build(specs, images, work, resources, threads, policy)?;
    // A materialized image's writer computing rows beyond its band keeps the group on one thread;
    // its members unfused each share their own rows between threads instead.
    if !materialized.is_empty() && group.split_dropped() {
        return Ok(Err(FusionRefusal::MaterializedInsideGroup));
    }
    Ok(Ok(group))
}

/// With each group contracted to one unit, is the graph acyclic? If not, the index of the latest
/// formed group that lies on a cycle (or between two): what is left after peeling off, again and
/// again, units with no producer left and units with no consumer left. O(nodes + edges) a call.
fn group_on_a_cycle(v: &Verification<'_>, groups: &[FusedGroup], order: &[usize]) -> Option<usize> {
    if groups.len() < 2 {
        return None; // one convex group and plain nodes: no cycle
    }
    let n_nodes = v.producers.len();
    let unit = units(groups, n_nodes);
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n_nodes];
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n_nodes];
    for &n in order {
        for &p in &v.producers[n] {
            let (a, b) = (unit[p], unit[n]);
            if a != b {
                succ[a].push(b);
                pred[b].push(a);
            }
        }
    }
    let units: Vec<usize> = order.iter().copied().filter(|&n| unit[n] == n).collect();
    let mut alive = vec![false; n_nodes];
    units.iter().for_each(|&u| alive[u] = true);
    // Peel sources, then sinks (each edge counted once per direction).
    for (ins, outs) in [(&pred, &succ), (&succ, &pred)] {
        let mut left: Vec<usize> = vec![0; n_nodes];
        for &u in &units {
            left[u] = ins[u].iter().filter(|&&p| alive[p]).count();
        }
        let mut ready: Vec<usize> = units.iter().copied().filter(|&u| alive[u] && left[u] == 0).collect();
        while let Some(u) = ready.pop() {
            alive[u] = false;
            for &w in &outs[u] {
                if alive[w] {
                    left[w] -= 1;
                    if left[w] == 0 {
                        ready.push(w);
                    }
                }
            }
        }
    }
    (0..groups.len()).rev().find(|&g| alive[groups[g].nodes()[0]])
}

/// Per node index, the unit it runs in: its group's leader (first member), or itself.
fn units(groups: &[FusedGroup], n_nodes: usize) -> Vec<usize> {
    let mut unit: Vec<usize> = (0..n_nodes).collect();
    for g in groups {
        for &n in g.nodes() {
            unit[n] = g.nodes()[0];
        }
    }
    unit
}

/// Re-level the schedule with each group contracted to one unit (Kahn over the quotient graph,
/// acyclic once `group_on_a_cycle` found no group on a cycle); a group's members share its level,
/// in topological order.
fn relevel(v: &mut Verification<'_>, groups: &[FusedGroup], pos: &[usize]) -> Result<()> {
    let n_nodes = pos.len();
    let unit = units(groups, n_nodes);
    let order = v.order();
    let mut indegree = vec![0usize; n_nodes];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n_nodes];
    for &n in &order {
        for &p in &v.producers[n] {
            if unit[p] != unit[n] {
                succ[unit[p]].push(unit[n]);
                indegree[unit[n]] += 1;
            }
        }
    }
    let members_of: HashMap<usize, &[usize]> = groups.iter().map(|g| (g.nodes()[0], g.nodes())).collect();
    let mut current: Vec<usize> = order.iter().copied().filter(|&n| unit[n] == n && indegree[n] == 0).collect();
    let mut schedule = Vec::new();
    while !current.is_empty() {
        current.sort_unstable_by_key(|&u| pos[u]);
        let mut next = Vec::new();
        let mut level = Vec::new();
        for &u in &current {
            match members_of.get(&u) {
                Some(ms) => level.extend_from_slice(ms),
                None => level.push(u),
            }
            for &s in &succ[u] {
                indegree[s] -= 1;
                if indegree[s] == 0 {
                    next.push(s);
                }
            }
        }
        schedule.push(level);
        current = next;
    }
    // Never short (`group_on_a_cycle` leaves no cycle); checked anyway, as a node left out of the
    // schedule would silently not run.
    if schedule.iter().map(Vec::len).sum::<usize>() != order.len() {
        return Err(crate::error::Error::new(
            crate::error::ErrorKind::Failure,
            "fusion: the fused groups left a cycle in the schedule (a bug: please report it)",
        )
        .in_graph(&v.gname));
    }
    v.schedule = schedule;
    Ok(())
}
