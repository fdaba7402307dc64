//! Checks of what the runtime reports: alias decisions against the aliasing rules (an aliased
//! pair must be safe under dataflow ordering), memory plans against overlap of buffers whose
//! accesses are not ordered by a dataflow path.

use std::collections::HashMap;

use vx::{AliasDecision, MemoryPlan};

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
) -> Result<usize, String> {
    let by_name = node_by_name(spec);
    let mut expected: Vec<(usize, u32, u32)> =
        spec.live().flat_map(|n| spec.nodes[n].hints.iter().map(move |h| (n, h.a, h.b))).collect();
    let before = spec.happens_before(strict);
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
    let mut order = spec.happens_before(strict);
    let mut level = spec.levels();
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
