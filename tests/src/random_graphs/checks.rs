//! Checks of what the runtime reports: alias decisions against the aliasing rules (an aliased
//! pair must be safe under dataflow ordering), memory plans against overlap of buffers whose
//! accesses are not ordered by a dataflow path, fusion reports against the candidate rules of
//! `vx-core/src/graph/verify/fusion.rs` restated from the spec. With fused groups, orders and
//! levels are those of the graph with each group contracted to one unit (its members interleave
//! row by row).

use std::collections::{HashMap, HashSet};

use vx::{AliasDecision, FusionRefusal, FusionReport, MemoryPlan};

use super::spec::*;

/// Node index by name (live nodes).
fn node_by_name(spec: &GraphSpec) -> HashMap<&str, usize> {
    spec.live().map(|n| (spec.nodes[n].name.as_str(), n)).collect()
}

/// Alias decisions: one per hint of each live node, each aliased one legal, and the same answer
/// the kernel saw (`seen`: (node, a, b) → (saw aliased, saw not aliased)). Returns how many were
/// checked.
pub fn alias_decisions(
    spec: &GraphSpec,
    decisions: &[AliasDecision],
    seen: &super::kernels::Seen,
    strict: bool,
    groups: &[Vec<usize>],
) -> Result<usize, String> {
    let by_name = node_by_name(spec);
    let mut expected: Vec<(usize, u32, u32)> =
        spec.live().flat_map(|n| spec.nodes[n].hints.iter().map(move |h| (n, h.a, h.b))).collect();
    let before = spec.happens_before_grouped(strict, groups);
    let mut aliased_out: HashMap<ImgId, usize> = HashMap::new();
    let mut aliased_in: HashMap<ImgId, usize> = HashMap::new();
    for d in decisions {
        let Some(&n) = by_name.get(d.node.as_str()) else {
            return Err(format!("alias decision for unknown node '{}': {d:?}", d.node));
        };
        let Some(pos) = expected.iter().position(|&e| e == (n, d.input, d.output)) else {
            return Err(format!("alias decision for a hint the node does not have (or reported twice): {d:?}"));
        };
        expected.remove(pos);
        let node = &spec.nodes[n];
        let hint = node.hints.iter().find(|h| (h.a, h.b) == (d.input, d.output)).expect("hint");
        if d.kind != hint.kind {
            return Err(format!("alias decision with kind {:?}, the kernel declared {:?}: {d:?}", d.kind, hint.kind));
        }
        if let Some(&(yes, no)) = seen.get(&(n, d.input, d.output)) {
            if yes && no {
                return Err(format!(
                    "node '{}' saw parameters {} and {} both aliased and not",
                    d.node, d.input, d.output
                ));
            }
            if yes != d.aliased {
                return Err(format!(
                    "node '{}' saw is_parameter_aliased({}, {}) = {yes}, the graph reports {d:?}",
                    d.node, d.input, d.output
                ));
            }
        }
        if !d.aliased {
            if d.reason.as_deref().unwrap_or("").is_empty() {
                return Err(format!("a refused alias hint without a reason: {d:?}"));
            }
            continue;
        }
        if d.reason.is_some() {
            return Err(format!("an honoured alias hint with a reason: {d:?}"));
        }
        if !spec.aliasing {
            return Err(format!("aliasing is disabled in the context, yet {d:?}"));
        }
        let (i, o) = (node.image_param(d.input).expect("image"), node.image_param(d.output).expect("image"));
        let (ii, oi) = (&spec.images[i], &spec.images[o]);
        let bad = |why: String| {
            Err(format!("illegal aliasing of {} and {} by node '{}': {why} ({d:?})", ii.name, oi.name, d.node))
        };
        if !spec.is_virtual(i) {
            return bad(format!("the input {} is not virtual: the application's pixels would be overwritten", ii.name));
        }
        if (ii.w, ii.h) != (oi.w, oi.h) {
            return bad(format!("sizes differ ({}x{} vs {}x{})", ii.w, ii.h, oi.w, oi.h));
        }
        if matches!(oi.kind, ImgKind::Roi { .. }) {
            return bad("the output is an ROI".into());
        }
        if node.inputs.iter().filter(|&&x| x == i).count() > 1 {
            return bad("the input is on two parameters of the node".into());
        }
        if node.tiling.is_some() && !node.nb.is_zero() {
            return bad("a tiling node with a neighborhood".into());
        }
        if spec.pipelined() && !spec.is_virtual(o) {
            return bad("a non-virtual output in a pipelined graph".into());
        }
        for r in spec.readers(i) {
            if r != n && before[r] & (1 << n) == 0 {
                return bad(format!(
                    "input {} is also read by node '{}', which is not ordered before '{}'",
                    ii.name, spec.nodes[r].name, node.name
                ));
            }
        }
        if let Some(prev) = aliased_out.insert(o, n) {
            return bad(format!("output already aliased by node '{}'", spec.nodes[prev].name));
        }
        if let Some(prev) = aliased_in.insert(i, n) {
            return bad(format!("input already aliased by node '{}'", spec.nodes[prev].name));
        }
    }
    if let Some(&(n, a, b)) = expected.first() {
        return Err(format!("no alias decision for hint ({a}, {b}) of node '{}'", spec.nodes[n].name));
    }
    Ok(decisions.len())
}

fn find(parent: &mut [usize], x: usize) -> usize {
    let mut r = x;
    while parent[r] != r {
        r = parent[r];
    }
    parent[x] = r;
    r
}

/// The memory plan: off → empty; on → every planned object a virtual image of the graph, planned
/// once, in a buffer large enough, inside the arena; objects sharing a buffer joined by honoured
/// alias hints; two buffers whose bytes overlap accessed in an order every dataflow path
/// guarantees (all accesses of one before all accesses of the other; outside queue modes, the
/// level-by-level schedule orders too unless `strict`); each buffer's levels the first and last
/// level of the nodes using it.
///
/// `payloads`: the names of each payload chain's objects, input first (`spec.payloads`): a
/// planned one must be one of its virtual intermediates, alone in its buffer, and ordered against
/// every buffer it overlaps like an image (the chain's copy nodes come after the image nodes in
/// the bit masks, node `k` of a chain at schedule level `k`). A payload's virtual object need not
/// be planned (the plan covers images; other kinds as the memory plan grows).
pub fn memory_plan(
    spec: &GraphSpec,
    plan: &MemoryPlan,
    decisions: &[AliasDecision],
    strict: bool,
    payloads: &[Vec<String>],
    groups: &[Vec<usize>],
) -> Result<(), String> {
    if !spec.memory_plan {
        return if plan.buffers.is_empty() { Ok(()) } else { Err(format!("memory plan off, yet a plan: {plan:?}")) };
    }
    let used = spec.used_images();
    let by_name: HashMap<&str, ImgId> = used.iter().map(|&i| (spec.images[i].name.as_str(), i)).collect();
    // Payload objects by name: (chain, position), and the chains' copy nodes as node indices after
    // the image nodes.
    let payload_at: HashMap<&str, (usize, usize)> = payloads
        .iter()
        .enumerate()
        .flat_map(|(p, names)| names.iter().enumerate().map(move |(j, n)| (n.as_str(), (p, j))))
        .collect();
    let mut base = Vec::new();
    let mut total = spec.nodes.len();
    for p in &spec.payloads {
        base.push(total);
        total += p.copies();
    }
    if total > 64 {
        return Err(format!("{total} nodes: more than the checker's 64-bit masks hold"));
    }
    // Alias groups from the decisions.
    let mut parent: Vec<usize> = (0..spec.images.len()).collect();
    let nodes = node_by_name(spec);
    for d in decisions.iter().filter(|d| d.aliased) {
        if let Some(&n) = nodes.get(d.node.as_str()) {
            let node = &spec.nodes[n];
            if let (Some(i), Some(o)) = (node.image_param(d.input), node.image_param(d.output)) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, o));
                parent[a] = b;
            }
        }
    }
    let mut planned: HashMap<ImgId, usize> = HashMap::new();
    for (bi, b) in plan.buffers.iter().enumerate() {
        if b.objects.is_empty() {
            return Err(format!("an empty planned buffer: {b:?}"));
        }
        if b.offset + b.bytes > plan.arena_bytes {
            return Err(format!("buffer past the arena ({} bytes): {b:?}", plan.arena_bytes));
        }
        if b.levels.0 > b.levels.1 {
            return Err(format!("buffer with levels reversed: {b:?}"));
        }
        let mut group = None;
        for name in &b.objects {
            if let Some(&(p, j)) = payload_at.get(name.as_str()) {
                let chain = &spec.payloads[p];
                if j == 0 || j > chain.virtual_mid.len() || !chain.virtual_mid[j - 1] {
                    return Err(format!("planned payload object '{name}' ({}) is not virtual: {b:?}", chain.label()));
                }
                if b.objects.len() != 1 {
                    return Err(format!("payload object '{name}' ({}) shares a buffer: {b:?}", chain.label()));
                }
                continue;
            }
            let Some(&img) = by_name.get(name.as_str()) else {
                return Err(format!("planned object '{name}' is no image of the graph: {b:?}"));
            };
            let im = &spec.images[img];
            if !spec.is_virtual(img) {
                return Err(format!("planned object '{name}' is not virtual: {b:?}"));
            }
            if b.bytes < (im.w * im.h) as usize {
                return Err(format!("buffer of {} bytes for {name} ({}x{}): {b:?}", b.bytes, im.w, im.h));
            }
            if planned.insert(img, bi).is_some() {
                return Err(format!("'{name}' planned twice: {plan:?}"));
            }
            let g = find(&mut parent, img);
            if *group.get_or_insert(g) != g {
                return Err(format!("buffer shared by images no honoured alias hint joins: {b:?}"));
            }
        }
    }
    for (name, why) in &plan.excluded {
        if payload_at.contains_key(name.as_str()) {
            continue;
        }
        match by_name.get(name.as_str()) {
            Some(&img) if planned.contains_key(&img) => {
                return Err(format!("'{name}' both planned and excluded ({why})"));
            }
            Some(_) => {}
            None => return Err(format!("excluded object '{name}' is no image of the graph")),
        }
    }
    // Every virtual image is planned, excluded, or aliased to a non-virtual image.
    for &img in &used {
        if !spec.is_virtual(img) || planned.contains_key(&img) {
            continue;
        }
        let name = &spec.images[img].name;
        if plan.excluded.iter().any(|(n, _)| n == name) {
            continue;
        }
        let g = find(&mut parent, img);
        let bound = used.iter().any(|&o| !spec.is_virtual(o) && find(&mut parent, o) == g);
        if !bound {
            return Err(format!(
                "virtual image {name} is neither planned nor excluded nor aliased to an application image"
            ));
        }
    }
    if plan.lower_bound_bytes > plan.arena_bytes {
        return Err(format!("lower bound {} above the arena {}", plan.lower_bound_bytes, plan.arena_bytes));
    }
    // Overlapping buffers must be ordered (payload nodes included).
    let mut order = spec.happens_before_grouped(strict, groups);
    let mut level = spec.levels_grouped(groups);
    order.resize(total, 0);
    level.resize(total, 0);
    for (p, chain) in spec.payloads.iter().enumerate() {
        for k in 0..chain.copies() {
            level[base[p] + k] = k;
            for later in k + 1..chain.copies() {
                order[base[p] + k] |= 1 << (base[p] + later);
            }
        }
    }
    if !strict && !spec.pipelined() {
        let nodes: Vec<usize> = spec.live().chain(spec.nodes.len()..total).collect();
        for &n in &nodes {
            for &m in &nodes {
                if level[n] < level[m] {
                    order[n] |= 1 << m;
                }
            }
        }
    }
    let node_name = |n: usize| -> String {
        match base.iter().rposition(|&b| b <= n) {
            Some(p) if n >= spec.nodes.len() => format!("p{p}_copy{}", n - base[p]),
            _ => spec.nodes[n].name.clone(),
        }
    };
    let access = |b: &vx::PlannedBuffer| -> u64 {
        let mut m = 0u64;
        for name in &b.objects {
            if let Some(&(p, j)) = payload_at.get(name.as_str()) {
                // Written by copy node j - 1, read by copy node j (j is an intermediate).
                m |= (1 << (base[p] + j - 1)) | (1 << (base[p] + j));
                continue;
            }
            let img = by_name[name.as_str()];
            for n in spec.writer(img).into_iter().chain(spec.readers(img)) {
                m |= 1 << n;
            }
        }
        m
    };
    let before = |a: u64, b: u64| -> bool {
        // Every node of `a` reaches every node of `b`.
        (0..64).filter(|&n| a & (1 << n) != 0).all(|n| order[n] & b == b)
    };
    for b in &plan.buffers {
        let acc = access(b);
        let lv = (0..64).filter(|&n| acc & (1 << n) != 0).map(|n| level[n]);
        let want = (lv.clone().min().unwrap_or(0), lv.max().unwrap_or(0));
        if b.levels != want {
            return Err(format!(
                "buffer {:?} reported at levels {:?}, its nodes use it in levels {want:?}",
                b.objects, b.levels
            ));
        }
    }
    for (i, x) in plan.buffers.iter().enumerate() {
        for y in &plan.buffers[i + 1..] {
            if x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes {
                let (ax, ay) = (access(x), access(y));
                if !before(ax, ay) && !before(ay, ax) {
                    let names =
                        |m: u64| -> Vec<String> { (0..64).filter(|&n| m & (1 << n) != 0).map(node_name).collect() };
                    return Err(format!(
                        "buffers {:?} (bytes {}..{}, used by {:?}) and {:?} (bytes {}..{}, used by {:?}) overlap, \
                         but nothing orders their accesses ({}): a node of one may run while a node of the \
                         other still uses the bytes",
                        x.objects,
                        x.offset,
                        x.offset + x.bytes,
                        names(ax),
                        y.objects,
                        y.offset,
                        y.offset + y.bytes,
                        names(ay),
                        if strict || spec.pipelined() { "dataflow paths only" } else { "dataflow or schedule levels" }
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Why node `n` cannot be a fusion candidate by the rules of `vx-core/src/graph/verify/fusion.rs`
/// (restated: a tiling node — every kernel here declares `fusable` —, no aliased pair, no vertical neighborhood unless a row entry (row kernels),
/// no tile memory); `None` for a candidate or a node that is no tiling node. The reason is the first in the
/// runtime's order.
fn not_candidate(spec: &GraphSpec, n: usize, decisions: &[AliasDecision]) -> Option<FusionRefusal> {
    let node = &spec.nodes[n];
    let t = node.tiling.as_ref()?;
    if decisions.iter().any(|d| d.aliased && d.node == node.name) {
        Some(FusionRefusal::Aliased)
    } else if (node.nb.t != 0 || node.nb.b != 0) && t.rows.is_none() {
        Some(FusionRefusal::VerticalNeighbourhoodWithoutRowEntry)
    } else if t.tile_memory > 0 {
        Some(FusionRefusal::TileMemory)
    } else {
        None
    }
}

/// The named target node `n` runs on (`None`: the host).
fn target_of(spec: &GraphSpec, n: usize) -> Option<&str> {
    spec.nodes[n].target.as_deref().filter(|&t| t != vx::HOST_TARGET)
}

/// The fusion report of the last verification, checked: fusion off → disabled, no group, every
/// tiling node "fusion off"; on (sequential or pipelined) →
/// every live tiling node either in exactly one group or reported once with a reason; a group's
/// nodes (two or more) fusion candidates by the rules restated in `not_candidate`, of one size and
/// one target,
/// joined by its fused images; a fused image a virtual image a member writes and only members of
/// the group read, excluded from the memory plan (when on); an image between two members fused;
/// an unfused node refused for a candidate's reason exactly when it is not a candidate,
/// "across targets" only when a virtual image joins it to a candidate on another target, and
/// "nothing to fuse with" only when no virtual image joins it to another candidate (every reader
/// of a virtual image a candidate writes a candidate on the writer's target) nor to one on another
/// target. Returns the groups as node indices.
pub fn fusion_report(
    spec: &GraphSpec,
    report: &FusionReport,
    decisions: &[AliasDecision],
    plan: &MemoryPlan,
) -> Result<Vec<Vec<usize>>, String> {
    let by_name = node_by_name(spec);
    let tiling: Vec<usize> = spec.live().filter(|&n| spec.nodes[n].tiling.is_some()).collect();
    if !spec.fusion {
        let (enabled, why) = (false, FusionRefusal::FusionOff);
        if report.enabled != enabled || !report.groups.is_empty() {
            return Err(format!("fusion {}, yet the report is {report:?}", spec.mode()));
        }
        if let Some(u) = report.unfused.iter().find(|u| u.reason != why) {
            return Err(format!("fusion {}: unfused node with reason {:?}, want {why:?}: {u}", spec.mode(), u.reason));
        }
        if report.unfused.len() != tiling.len() {
            return Err(format!(
                "{} unfused nodes reported, the graph has {} tiling nodes: {report:?}",
                report.unfused.len(),
                tiling.len()
            ));
        }
        return Ok(Vec::new());
    }
    if !report.enabled {
        return Err(format!("fusion on, yet the report says off: {report:?}"));
    }
    let img_by_name: HashMap<&str, ImgId> =
        spec.used_images().into_iter().map(|i| (spec.images[i].name.as_str(), i)).collect();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    let mut groups = Vec::new();
    let mut fused_all: HashSet<ImgId> = HashSet::new();
    for (gi, g) in report.groups.iter().enumerate() {
        if g.nodes.len() < 2 {
            return Err(format!("group g{gi} of fewer than two nodes: {g:?}"));
        }
        let mut members = Vec::new();
        for name in &g.nodes {
            let Some(&n) = by_name.get(name.as_str()) else {
                return Err(format!("group g{gi} names '{name}', no live node of the graph: {g:?}"));
            };
            if spec.nodes[n].tiling.is_none() {
                return Err(format!("group g{gi} holds {name}, not a tiling node: {g:?}"));
            }
            if let Some(prev) = group_of.insert(n, gi) {
                return Err(format!("node {name} in groups g{prev} and g{gi}: {report:?}"));
            }
            if let Some(why) = not_candidate(spec, n, decisions) {
                return Err(format!("group g{gi} holds {name}, which cannot fuse ({why:?}): {g:?}"));
            }
            members.push(n);
        }
        let size = |n: usize| (spec.images[spec.nodes[n].output].w, spec.images[spec.nodes[n].output].h);
        if members.iter().any(|&n| size(n) != size(members[0])) {
            return Err(format!("group g{gi} holds nodes of different sizes: {g:?}"));
        }
        if members.iter().any(|&n| target_of(spec, n) != target_of(spec, members[0])) {
            return Err(format!("group g{gi} holds nodes of different targets: {g:?}"));
        }
        // Fused images, and the members they join.
        let mut parent: HashMap<usize, usize> = members.iter().map(|&n| (n, n)).collect();
        fn root(p: &mut HashMap<usize, usize>, mut x: usize) -> usize {
            while p[&x] != x {
                x = p[&x];
            }
            x
        }
        if g.fused_images.is_empty() {
            return Err(format!("group g{gi} without a fused image: {g:?}"));
        }
        for name in &g.fused_images {
            let Some(&img) = img_by_name.get(name.as_str()) else {
                return Err(format!("group g{gi} fuses '{name}', no image of the graph: {g:?}"));
            };
            if !spec.is_virtual(img) || !fused_all.insert(img) {
                return Err(format!("group g{gi} fuses {name}, not virtual or fused twice: {report:?}"));
            }
            let w = spec.writer(img).filter(|w| members.contains(w));
            let readers = spec.readers(img);
            let (Some(w), false) = (w, readers.is_empty()) else {
                return Err(format!("group g{gi} fuses {name}, which no member writes or nothing reads: {g:?}"));
            };
            for r in readers {
                if !members.contains(&r) {
                    return Err(format!(
                        "group g{gi} fuses {name}, also read by {} outside the group: {g:?}",
                        spec.nodes[r].name
                    ));
                }
                let (a, b) = (root(&mut parent, w), root(&mut parent, r));
                parent.insert(a, b);
            }
            if spec.memory_plan && !plan.excluded.iter().any(|(n, _)| n == name) {
                return Err(format!("fused image {name} not excluded from the memory plan: {:?}", plan.excluded));
            }
        }
        let r0 = root(&mut parent, members[0]);
        if members.iter().any(|&m| root(&mut parent, m) != r0) {
            return Err(format!("group g{gi}'s fused images do not join all its nodes: {g:?}"));
        }
        // An image between two members is fused, or materialized: kept whole because it is real or
        // some reader is not a member of the group.
        for &m in &members {
            let o = spec.nodes[m].output;
            let name = &spec.images[o].name;
            let between = spec.readers(o).iter().any(|r| members.contains(r));
            let (is_fused, is_materialized) = (g.fused_images.contains(name), g.materialized_images.contains(name));
            if between && !is_fused && !is_materialized {
                return Err(format!(
                    "{name} joins two members of group g{gi} but is neither fused nor materialized: {g:?}"
                ));
            }
            if is_materialized {
                let kept = !spec.is_virtual(o) || spec.readers(o).iter().any(|r| !members.contains(r));
                if is_fused || !between || !kept {
                    return Err(format!(
                        "group g{gi} materializes {name}, which is fused, joins no two members, or could live in a ring: {g:?}"
                    ));
                }
                if spec.memory_plan && plan.excluded.iter().any(|(n, why)| n == name && why.starts_with("fused")) {
                    return Err(format!(
                        "materialized {name} left out of the memory plan as fused: {:?}",
                        plan.excluded
                    ));
                }
            }
        }
        if let Some(name) = g
            .materialized_images
            .iter()
            .find(|n| img_by_name.get(n.as_str()).and_then(|&i| spec.writer(i)).is_none_or(|w| !members.contains(&w)))
        {
            return Err(format!("group g{gi} materializes {name}, which no member writes: {g:?}"));
        }
        groups.push(members);
    }
    // With each group contracted to one unit, the graph is acyclic (each group convex is not
    // enough: two groups may each need the other).
    let unit = |n: usize| groups.iter().find(|g| g.contains(&n)).map_or(n, |g| g[0]);
    let live: Vec<usize> = spec.live().collect();
    let mut indegree: HashMap<usize, usize> = HashMap::new();
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for &n in &live {
        for &i in &spec.nodes[n].inputs {
            if let Some(w) = spec.writer(i).filter(|&w| unit(w) != unit(n)) {
                edges.push((unit(w), unit(n)));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for &(_, b) in &edges {
        *indegree.entry(b).or_default() += 1;
    }
    let mut ready: Vec<usize> = live.iter().map(|&n| unit(n)).filter(|u| !indegree.contains_key(u)).collect();
    ready.sort_unstable();
    ready.dedup();
    let mut done = 0;
    while let Some(u) = ready.pop() {
        done += 1;
        for &(a, b) in &edges {
            if a == u {
                let d = indegree.get_mut(&b).expect("counted");
                *d -= 1;
                if *d == 0 {
                    ready.push(b);
                }
            }
        }
    }
    let units = {
        let mut u: Vec<usize> = live.iter().map(|&n| unit(n)).collect();
        u.sort_unstable();
        u.dedup();
        u.len()
    };
    if done != units {
        return Err(format!("the groups, contracted, leave a cycle in the graph: {report:?}"));
    }
    // Unfused nodes: each live tiling node once, grouped or reported.
    let mut reported: HashSet<usize> = HashSet::new();
    let candidate = |n: usize| spec.nodes[n].tiling.is_some() && not_candidate(spec, n, decisions).is_none();
    for u in &report.unfused {
        let Some(&n) = by_name.get(u.node.as_str()) else {
            return Err(format!("unfused node '{}' is no live node of the graph", u.node));
        };
        if spec.nodes[n].tiling.is_none() || group_of.contains_key(&n) || !reported.insert(n) {
            return Err(format!("unfused {u}: not a tiling node, grouped, or reported twice: {report:?}"));
        }
        let mine = not_candidate(spec, n, decisions);
        let group_level = matches!(
            u.reason,
            FusionRefusal::NothingToFuseWith
                | FusionRefusal::AcrossTargets
                | FusionRefusal::GroupCycle
                | FusionRefusal::WouldNotBeConvex
                | FusionRefusal::MaterializedInsideGroup
                | FusionRefusal::TooManyImages
                | FusionRefusal::BlockHeights
        );
        match mine {
            Some(want) if want != u.reason => {
                return Err(format!("unfused {u}: the spec says it cannot fuse because {want:?}"));
            }
            None if !group_level => {
                return Err(format!("unfused {u}: by the spec a fusion candidate ({:?})", u.reason));
            }
            _ => {}
        }
        // A virtual image every reader of which is a candidate, some on another target than its
        // writer, with this node its writer or one of its readers?
        let across = |img: ImgId| {
            let Some(w) = spec.writer(img).filter(|&w| candidate(w)) else { return false };
            let readers = spec.readers(img);
            spec.is_virtual(img)
                && (w == n || readers.contains(&n))
                && readers.iter().all(|&r| candidate(r))
                && readers.iter().any(|&r| target_of(spec, r) != target_of(spec, w))
        };
        let node = &spec.nodes[n];
        let across_any = node.inputs.iter().chain([&node.output]).any(|&i| across(i));
        if u.reason == FusionRefusal::BlockHeights {
            // The group's block heights have an lcm above 2^30 rows: then so do those of every
            // tiling node of the graph.
            let mut l: u64 = 1;
            for t in spec.live().filter_map(|m| spec.nodes[m].tiling.as_ref()) {
                let bh = u64::from(t.block.1.max(1));
                l = l / gcd(l, bh) * bh;
                if l > 1 << 30 {
                    break;
                }
            }
            if l <= 1 << 30 {
                return Err(format!("unfused {u}, yet the graph's block heights have an lcm of {l} rows"));
            }
        }
        if u.reason == FusionRefusal::AcrossTargets && !across_any {
            return Err(format!("unfused {u}, yet no virtual image joins it to a candidate on another target"));
        }
        if u.reason == FusionRefusal::NothingToFuseWith && across_any {
            return Err(format!("unfused {u}, yet a virtual image joins it to a candidate on another target"));
        }
        if u.reason == FusionRefusal::NothingToFuseWith {
            // A virtual image joining it to another candidate, every reader a candidate on the
            // writer's target?
            let joins = |img: ImgId| {
                let readers = spec.readers(img);
                spec.is_virtual(img)
                    && !readers.is_empty()
                    && spec.writer(img).is_some_and(candidate)
                    && readers.iter().all(|&r| {
                        candidate(r) && spec.writer(img).is_some_and(|w| target_of(spec, r) == target_of(spec, w))
                    })
            };
            if let Some(&img) = node.inputs.iter().chain([&node.output]).find(|&&i| joins(i)) {
                return Err(format!(
                    "unfused {u}, yet the virtual image {} joins it to other candidates (writer {}, readers {:?})",
                    spec.images[img].name,
                    spec.nodes[spec.writer(img).expect("writer")].name,
                    spec.readers(img).iter().map(|&r| spec.nodes[r].name.as_str()).collect::<Vec<_>>()
                ));
            }
        }
    }
    if let Some(&n) = tiling.iter().find(|&&n| !group_of.contains_key(&n) && !reported.contains(&n)) {
        return Err(format!("tiling node {} neither grouped nor reported unfused: {report:?}", spec.nodes[n].name));
    }
    Ok(groups)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
