//! Buffer aliasing (the `vx_khr_buffer_aliasing` extension): which of the kernels' alias hints the
//! graph honours, decided with the whole graph in view, in three passes:
//!
//! - graph pass `alias candidates` (after `dataflow`): the topology rules below for every hint of
//!   every node. A node whose set of candidates changed is re-verified (its init must see the new
//!   decision), so re-verification re-arbitrates.
//! - node pass `aliasing` (after `meta`, before `tiling` and `init`): the meta rule, then the
//!   competition between a node's own hints: sparse before dense (the extension's priority
//!   example), then the order the kernel declared them. The node's `aliased` pairs are what
//!   `is_parameter_aliased` answers in init, process, tiles and modules.
//! - graph pass `alias binding` (before `buffers`): aliased pairs form chains (A → in-place B →
//!   in-place C); each chain's virtual images are bound to one storage, the chain's non-virtual
//!   member if it has one, else its first image. Every other virtual image gets its own again.
//!
//! A hint `(input, output)` is honoured only when it cannot change any result:
//!
//! 1. both parameters are given and are images (only images are aliased);
//! 2. the input is **virtual**: a non-virtual input is the application's, and in-place processing
//!    would overwrite data the application can read after the graph ran. The output may be
//!    non-virtual — the chain then lives in the application's output buffer, which holds the
//!    intermediate data while the graph runs (OpenVX leaves objects of a running graph to the
//!    graph) and its final pixels when `process` returns. This is vx-rs's answer to the
//!    extension's "if the parameters are virtual objects or not";
//! 3. the input is not also passed to another parameter of the same node;
//! 4. every other node reading the input runs before this one (it is an ancestor in the
//!    dataflow), never after or concurrently;
//! 5. neither image shares pixels with an ROI (the output is not an ROI and has none);
//! 6. a tiling node has a zero neighborhood (with a neighborhood, a tile would read pixels that
//!    neighboring tiles, running concurrently, have already overwritten);
//! 7. (node pass) input and output have the same format, width and height;
//! 8. (node pass) each parameter is in at most one honoured hint.
//!
//! Every decision is kept with a one-line reason for refusals ([`Graph::alias_decisions`]) and
//! logged as a `tracing` event.
//! Cost: `alias candidates` O(parameters + hints × (other readers of the input + the producers
//! walked to order them)), readers found through `overlap.rs`; `alias binding` O(pairs) (union-find
//! over storages in a hash map); the node pass `aliasing` O(hints of the node).

use std::collections::HashMap;

use crate::data::image::Image;
use crate::data::reference::Reference;
use crate::data::types::Direction;
use crate::error::Result;
use crate::graph::verify::overlap::OverlapIndex;
use crate::graph::verify::{NodeVerification, Verification};
use crate::graph::{Graph, GraphBody, NodeSlot};
use crate::kernel::signature::{AliasHint, AliasKind};

/// The decision on one alias hint of one node at the last verification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasDecision {
    /// The node's name.
    pub node: String,
    /// The kernel's name.
    pub kernel: String,
    /// The input parameter of the hint.
    pub input: u32,
    /// The output parameter of the hint.
    pub output: u32,
    /// The processing type the kernel declared.
    pub kind: AliasKind,
    /// True when the two parameters share one buffer.
    pub aliased: bool,
    /// Why the hint was not honoured (`None` when it was).
    pub reason: Option<String>,
}

impl std::fmt::Display for AliasDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            AliasKind::Dense => "dense",
            AliasKind::Sparse => "sparse",
        };
        write!(f, "node '{}' ({}) {} → {} ({kind}): ", self.node, self.kernel, self.input, self.output)?;
        match &self.reason {
            None => write!(f, "aliased"),
            Some(r) => write!(f, "not aliased: {r}"),
        }
    }
}

impl Graph {
    /// The buffer-aliasing decisions of the last verification: one per alias hint of each node,
    /// in node order, each refused one with its reason.
    pub fn alias_decisions(&self) -> Result<Vec<AliasDecision>> {
        let body = self.inner.lock()?;
        Ok(body.nodes.iter().flatten().flat_map(|s| s.alias_decisions.iter().cloned()).collect())
    }
}

/// A hint as (input, output) (the kernel may have named them in either order).
fn oriented(s: &NodeSlot, h: &AliasHint) -> (u32, u32) {
    if s.spec(h.a as usize).direction == Direction::Output { (h.b, h.a) } else { (h.a, h.b) }
}

/// The topology verdict on each hint of a node (in the kernel's order): `None` = a candidate.
pub(super) type Topology = Vec<(AliasHint, Option<String>)>;

/// Graph pass `alias candidates`.
pub(super) fn candidates(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let enabled = v.graph.ctx.inner.shared.config.aliasing;
    let pipelined = body.pipeline.is_some();
    // Every input parameter by overlap, for "who else reads this" (O(inputs) to build).
    let mut readers: OverlapIndex<usize> = OverlapIndex::default();
    readers.reserve(v.live.len());
    for &n in &v.live {
        let s = body.nodes[n].as_ref().expect("live");
        for (p, r) in s.params.iter().enumerate() {
            let (Direction::Input, Some(r)) = (s.spec(p).direction, r) else { continue };
            readers.push(r.clone(), n);
        }
    }
    // The producers of each node (writers of what it reads) are dataflow's.
    let preds = &v.producers;
    let runs_before = |a: usize, b: usize| -> bool {
        // Is `a` an ancestor of `b`? Depth-first over producers (the graph is acyclic: dataflow);
        // asked only for another reader of an aliased input, O(ancestors of b).
        let mut stack = vec![b];
        let mut seen = std::collections::HashSet::from([b]);
        while let Some(x) = stack.pop() {
            for &p in &preds[x] {
                if p == a {
                    return true;
                }
                if seen.insert(p) {
                    stack.push(p);
                }
            }
        }
        false
    };
    // A reader's name only for a refusal's reason (no map of every node's name).
    let name_of = |n: usize| body.nodes[n].as_ref().map_or_else(|| "?".to_owned(), |s| s.name.clone());
    // By node index, visited in `live` order: no hash order over thousands of node slots.
    let mut topology: Vec<Topology> = Vec::new();
    topology.resize_with(body.nodes.len(), Topology::new);
    for &n in &v.live {
        let s = body.nodes[n].as_ref().expect("live");
        let Some(hints) = s.kernel.final_().map(|f| &f.alias_hints).filter(|h| !h.is_empty()) else { continue };
        let mut verdicts = Topology::with_capacity(hints.len());
        for &h in hints {
            let (i, o) = oriented(s, &h);
            let verdict = if enabled {
                topology_rule(s, n, i, o, &readers, &name_of, &runs_before).or_else(|| pipelined_rule(s, o, pipelined))
            } else {
                Some("aliasing is disabled in this context (ContextConfig::aliasing)".to_string())
            };
            verdicts.push((h, verdict));
        }
        topology[n] = verdicts;
    }
    for &n in &v.live {
        let s = body.nodes[n].as_mut().expect("live");
        let verdicts = &topology[n];
        if verdicts.is_empty() && s.alias_candidates.is_empty() {
            continue;
        }
        let cands: Vec<(u32, u32)> = verdicts.iter().filter(|(_, r)| r.is_none()).map(|(h, _)| (h.a, h.b)).collect();
        if cands != s.alias_candidates {
            s.alias_candidates = cands;
            s.dirty = true;
        }
    }
    v.alias_topology = topology;
    Ok(())
}

/// Node `n`'s topology verdicts again for the hints whose input is a real (non-virtual) object, after
/// an input was replaced by another real object (`rebound.rs`): such a hint is refused before any
/// rule that looks at other nodes, so its verdict depends on this node alone (the reason names the
/// input).
pub(super) fn refresh_real_input_verdicts(v: &mut Verification<'_>, s: &NodeSlot, n: usize) {
    let enabled = v.graph.ctx.inner.shared.config.aliasing;
    let Some(verdicts) = v.alias_topology.get_mut(n) else { return };
    let nobody = OverlapIndex::default();
    for (h, verdict) in verdicts.iter_mut() {
        let (i, o) = oriented(s, h);
        let real = s.params.get(i as usize).and_then(Option::as_ref).is_some_and(|r| !r.is_virtual());
        if enabled && real {
            // Returns at "not virtual" (or earlier): neither `readers` nor `runs_before` is asked.
            *verdict = topology_rule(s, n, i, o, &nobody, &|_| String::new(), &|_, _| false);
        }
    }
}

/// Rules 1–6 for hint (input `i`, output `o`) of node `n`; `Some(reason)` refuses it.
fn topology_rule(
    s: &NodeSlot,
    n: usize,
    i: u32,
    o: u32,
    readers: &OverlapIndex<usize>,
    name_of: &dyn Fn(usize) -> String,
    runs_before: &dyn Fn(usize, usize) -> bool,
) -> Option<String> {
    let param = |p: u32| s.params.get(p as usize).and_then(Option::as_ref);
    let (Some(input), Some(output)) = (param(i), param(o)) else {
        return Some(format!("parameter {} is not given", if param(i).is_none() { i } else { o }));
    };
    let (Some(inp), Some(out)) = (input.as_image(), output.as_image()) else {
        return Some(format!(
            "only images are aliased (parameters are {} and {})",
            input.data_type(),
            output.data_type()
        ));
    };
    if !inp.is_virtual() {
        return Some(format!(
            "input '{}' is not virtual: in-place processing would overwrite the application's data",
            inp.name()
        ));
    }
    if let Some(part) = [inp, out].into_iter().find(|img| img.is_virtual() && !img.is_standalone_virtual()) {
        return Some(format!("'{}' is part of a pyramid or object array, whose memory is its own", part.name()));
    }
    if let Some((p, _)) = s.params.iter().enumerate().find(|(p, r)| {
        *p != i as usize && r.as_ref().is_some_and(|r| r.overlaps(input) && s.spec(*p).direction == Direction::Input)
    }) {
        return Some(format!("input '{}' is also parameter {p} of this node", inp.name()));
    }
    if let Some(&rn) = readers.find_overlapping(input, |&rn| rn != n && !runs_before(rn, n)) {
        return Some(format!(
            "input '{}' is also read by node '{}', which does not run before this one",
            inp.name(),
            name_of(rn)
        ));
    }
    if let Some(img) = [inp, out].into_iter().find(|im| im.shares_pixels()) {
        return Some(format!("image '{}' shares its pixels with an ROI", img.name()));
    }
    let nb = s.neighborhood;
    if s.kernel.functions.is_tiling() && (nb.left, nb.right, nb.top, nb.bottom) != (0, 0, 0, 0) {
        return Some(format!(
            "the tiling node reads a neighborhood ({}, {}, {}, {}): a tile would read pixels other tiles overwrote",
            nb.left, nb.right, nb.top, nb.bottom
        ));
    }
    None
}

/// In a pipelined graph (queue modes) every frame in flight has its own virtual images, and a
/// non-virtual image is either shared by all frames or a different queued reference each frame:
/// an input bound to it could not follow. So only virtual outputs are aliased there.
fn pipelined_rule(s: &NodeSlot, o: u32, pipelined: bool) -> Option<String> {
    let out = s.params.get(o as usize)?.as_ref()?.as_image()?;
    (pipelined && !out.is_virtual()).then(|| {
        format!(
            "output '{}' is not virtual and the graph is pipelined: each frame in flight needs its own buffer",
            out.name()
        )
    })
}

/// Node pass `aliasing`: rules 7 and 8 on the node's candidates; the node's decisions.
pub(super) fn decide(v: &mut Verification<'_>, s: &mut NodeSlot, nv: &mut NodeVerification) -> Result<()> {
    let verdicts = v.alias_topology.get(nv.node).map_or(&[][..], Vec::as_slice);
    let mut decisions: Vec<AliasDecision> = verdicts
        .iter()
        .map(|(h, topo)| {
            let (i, o) = oriented(s, h);
            let reason = topo.clone().or_else(|| meta_rule(s, i, o));
            AliasDecision {
                node: s.name.clone(),
                kernel: s.kernel.name.clone(),
                input: i,
                output: o,
                kind: h.kind,
                aliased: false,
                reason,
            }
        })
        .collect();
    // Rule 8: sparse first, then declaration order; a parameter joins at most one pair.
    let mut order: Vec<usize> = (0..decisions.len()).collect();
    order.sort_by_key(|&k| (decisions[k].kind != AliasKind::Sparse, k));
    let mut taken: Vec<(u32, usize)> = Vec::new();
    for k in order {
        if decisions[k].reason.is_some() {
            continue;
        }
        let (i, o) = (decisions[k].input, decisions[k].output);
        if let Some(&(p, by)) = taken.iter().find(|(p, _)| *p == i || *p == o) {
            let winner = &decisions[by];
            let how = if winner.kind == AliasKind::Sparse { "the sparse hint" } else { "the earlier hint" };
            decisions[k].reason =
                Some(format!("parameter {p} is already aliased by {how} ({} → {})", winner.input, winner.output));
            continue;
        }
        decisions[k].aliased = true;
        taken.push((i, k));
        taken.push((o, k));
    }
    let aliased: Vec<(u32, u32)> = decisions.iter().filter(|d| d.aliased).map(|d| (d.input, d.output)).collect();
    for d in &decisions {
        tracing::debug!(graph = %v.gname, node = %d.node, input = d.input, output = d.output, aliased = d.aliased,
            reason = d.reason.as_deref().unwrap_or(""), "alias hint decided");
    }
    s.aliased = aliased;
    s.alias_decisions = decisions;
    Ok(())
}

/// Rule 7: one format and size.
fn meta_rule(s: &NodeSlot, i: u32, o: u32) -> Option<String> {
    let img = |p: u32| s.params.get(p as usize).and_then(Option::as_ref).and_then(Reference::as_image);
    let (a, b) = (img(i)?, img(o)?);
    let (ma, mb) = (a.meta(), b.meta());
    if (ma.format, ma.width, ma.height) != (mb.format, mb.width, mb.height) {
        return Some(format!(
            "input '{}' is {} {}x{} and output '{}' is {} {}x{}: one buffer needs one format and size",
            a.name(),
            ma.format,
            ma.width,
            ma.height,
            b.name(),
            mb.format,
            mb.width,
            mb.height
        ));
    }
    None
}

/// Graph pass `alias binding`: every aliased chain's virtual images bound to one storage, every
/// other virtual image to its own.
pub(super) fn bind(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    // Union-find over the images of aliased pairs, keyed by their own storage: O(pairs · α).
    let mut images: Vec<Image> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut position: HashMap<usize, usize> = HashMap::new();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut index_of = |img: &Image, images: &mut Vec<Image>, parent: &mut Vec<usize>| -> usize {
        *position.entry(img.storage_key()).or_insert_with(|| {
            images.push(img.clone());
            parent.push(parent.len());
            images.len() - 1
        })
    };
    // Chains follow schedule order, so each pair's input was seen before its output.
    for n in v.order() {
        let s = body.nodes[n].as_ref().expect("scheduled nodes are live");
        for &(i, o) in &s.aliased {
            let img = |p: u32| s.params[p as usize].as_ref().and_then(Reference::as_image).cloned();
            let (Some(a), Some(b)) = (img(i), img(o)) else { continue };
            let (ka, kb) = (index_of(&a, &mut images, &mut parent), index_of(&b, &mut images, &mut parent));
            let (ra, rb) = (find(&mut parent, ka), find(&mut parent, kb));
            // The root is the chain's owner: a non-virtual member if any, else the first image.
            if images[rb].is_virtual() {
                parent[rb] = ra;
            } else {
                parent[ra] = rb;
            }
        }
    }
    let owner_of: Vec<Option<usize>> = (0..images.len())
        .map(|k| {
            let r = find(&mut parent, k);
            (r != k).then_some(r)
        })
        .collect();
    // Every virtual image of the graph: bound to its chain's owner, or to its own storage.
    for &n in &v.live {
        let s = body.nodes[n].as_ref().expect("live");
        for img in s.params.iter().flatten().filter_map(Reference::as_image) {
            if !img.is_standalone_virtual() {
                continue;
            }
            let target = position.get(&img.storage_key()).and_then(|&k| owner_of[k]);
            img.bind_storage(target.map(|r| &images[r]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{copy_kernel, image, run_until, same_size_u8, u8_kernel, u8_kernel_with_hint};
    use crate::{AliasKind, Context, DataType, Graph, Image, ImageFormat, Kernel, ParamDirection, ParamState};

    #[test]
    fn a_virtual_chain_is_aliased_and_bound_to_one_buffer() {
        let ctx = Context::builder().threads(1).build().unwrap();
        let k = u8_kernel(&ctx, "test.copy", |b| b.validate(|v, m| same_size_u8(v, m).map(|_| ())));
        let k2 = u8_kernel_with_hint(&ctx, "test.inplace", AliasKind::Dense);
        let g = Graph::new(&ctx).unwrap();
        let (a, out) = (image(&ctx), image(&ctx));
        let v1 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        let v2 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        g.add_node(&k, [&a, &v1]).unwrap();
        g.add_node(&k2, [&v1, &v2]).unwrap();
        g.add_node(&k2, [&v2, &out]).unwrap();
        run_until(&g, "alias binding").unwrap();
        let d = g.alias_decisions().unwrap();
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|d| d.aliased), "{d:?}");
        // The chain v1 → v2 → out lives in the application's output buffer.
        assert_eq!(v1.effective_storage_key(), out.storage_key());
        assert_eq!(v2.effective_storage_key(), out.storage_key());
        run_until(&g, "buffers").unwrap();
        assert_eq!(ctx.buffer_bytes().current, 2 * 8 * 64, "a and out only");
    }

    fn virt(g: &Graph) -> Image {
        Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap()
    }

    /// Inputs 0 and 1, output 2 of input 0's size; hint (0, 2).
    fn two_inputs(ctx: &Context) -> Kernel {
        let k = ctx
            .user_kernel("test.two_in", ctx.allocate_user_kernel_id().unwrap(), 3)
            .process(|_| Ok(()))
            .validate(|v, metas| {
                let i = v.expect_image_format(0, ImageFormat::U8)?;
                metas.get(2)?.set_image(ImageFormat::U8, i.width(), i.height()).map(|_| ())
            })
            .add()
            .unwrap();
        k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
        k.add_parameter(1, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
        k.add_parameter(2, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
        k.alias_parameter_index_hint(0, 2, AliasKind::Dense).unwrap();
        k.finalize().unwrap();
        k
    }

    fn decisions(g: &Graph) -> Vec<(bool, String)> {
        g.alias_decisions().unwrap().into_iter().map(|d| (d.aliased, d.reason.unwrap_or_default())).collect()
    }

    #[test]
    fn a_reader_that_runs_before_through_several_steps_leaves_the_hint_honoured() {
        // a → v1; v1 → r1 → w1 → r2 → w2 → r3 → w3; (v1, w3) → join → out, hint v1 → out.
        // The other reader of v1 (r1) is an ancestor of join three producers up.
        let (ctx, copy) = copy_kernel();
        let join = two_inputs(&ctx);
        let g = Graph::new(&ctx).unwrap();
        let (v1, w1, w2, w3, o) = (virt(&g), virt(&g), virt(&g), virt(&g), virt(&g));
        g.add_node(&copy, [&image(&ctx), &v1]).unwrap();
        g.add_node(&copy, [&v1, &w1]).unwrap();
        g.add_node(&copy, [&w1, &w2]).unwrap();
        g.add_node(&copy, [&w2, &w3]).unwrap();
        g.add_node(&join, [&v1, &w3, &o]).unwrap();
        g.add_node(&copy, [&o, &image(&ctx)]).unwrap();
        run_until(&g, "alias binding").unwrap();
        assert_eq!(decisions(&g), [(true, String::new())]);
        assert_eq!(o.effective_storage_key(), v1.effective_storage_key());
        // A reader of v1 that runs after join (two steps down) refuses it.
        let (x1, x2) = (virt(&g), virt(&g));
        g.add_node(&copy, [&o, &x1]).unwrap();
        g.add_node(&copy, [&x1, &x2]).unwrap();
        let late = g.add_node(&join, [&x2, &v1, &image(&ctx)]).unwrap();
        late.set_name("late").unwrap();
        run_until(&g, "alias binding").unwrap();
        let d = decisions(&g);
        assert!(!d[0].0 && d[0].1.contains("also read by node 'late', which does not run before"), "{d:?}");
        assert_ne!(o.effective_storage_key(), v1.effective_storage_key());
    }

    #[test]
    fn in_a_pipelined_graph_only_virtual_outputs_are_aliased() {
        // a → copy → v1 → inplace → v2 → inplace → out.
        let build = |ctx: &Context, pipelined: bool| {
            let (copy, inplace) = (
                u8_kernel(ctx, "test.copy", |b| b.validate(|v, m| same_size_u8(v, m).map(|_| ()))),
                u8_kernel_with_hint(ctx, "test.inplace", AliasKind::Dense),
            );
            let g = Graph::new(ctx).unwrap();
            let (v1, v2, out) = (virt(&g), virt(&g), image(ctx));
            out.set_name("out");
            let n0 = g.add_node(&copy, [&image(ctx), &v1]).unwrap();
            g.add_node(&inplace, [&v1, &v2]).unwrap();
            g.add_node(&inplace, [&v2, &out]).unwrap();
            if pipelined {
                let p = g.add_parameter(&n0, 0).unwrap();
                let input = n0.parameter(0).unwrap().unwrap();
                g.set_schedule_config(crate::ScheduleConfig::queue_auto().queue(p, [input])).unwrap();
            }
            run_until(&g, "alias binding").unwrap();
            (g, v1, v2, out)
        };
        let ctx = Context::builder().threads(1).build().unwrap();
        let (g, v1, v2, out) = build(&ctx, false);
        assert_eq!(decisions(&g), [(true, String::new()), (true, String::new())]);
        assert_eq!(v1.effective_storage_key(), out.storage_key());
        assert_eq!(v2.effective_storage_key(), out.storage_key());
        let ctx = Context::builder().threads(1).build().unwrap();
        let (g, v1, v2, out) = build(&ctx, true);
        let d = decisions(&g);
        assert_eq!(d[0], (true, String::new()), "{d:?}");
        assert!(!d[1].0, "{d:?}");
        assert_eq!(
            d[1].1,
            "output 'out' is not virtual and the graph is pipelined: each frame in flight needs its own buffer"
        );
        assert_eq!(v2.effective_storage_key(), v1.effective_storage_key(), "v1 → v2 is one buffer");
        assert_ne!(v2.effective_storage_key(), out.storage_key());
        // As logged and shown to users.
        let shown: Vec<String> = g.alias_decisions().unwrap().iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "node 'inplace#1' (test.inplace) 0 → 1 (dense): aliased".to_string(),
                "node 'inplace#2' (test.inplace) 0 → 1 (dense): not aliased: output 'out' is not virtual and \
                 the graph is pipelined: each frame in flight needs its own buffer"
                    .to_string()
            ]
        );
    }

    #[test]
    fn only_a_node_whose_candidates_changed_is_marked_for_re_verification() {
        let (ctx, copy) = copy_kernel();
        let inplace = u8_kernel_with_hint(&ctx, "test.inplace", AliasKind::Dense);
        let g = Graph::new(&ctx).unwrap();
        let v1 = virt(&g);
        let n0 = g.add_node(&copy, [&image(&ctx), &v1]).unwrap();
        let n1 = g.add_node(&inplace, [&v1, &image(&ctx)]).unwrap();
        g.verify().unwrap();
        let marked = || (n0.needs_reverification().unwrap(), n1.needs_reverification().unwrap());
        // The same candidates again: nobody is marked.
        run_until(&g, "alias candidates").unwrap();
        assert_eq!(marked(), (false, false));
        // A second reader of v1 takes n1's candidate away: n1 (only) is marked.
        let reader = g.add_node(&copy, [&v1, &image(&ctx)]).unwrap();
        run_until(&g, "alias candidates").unwrap();
        assert_eq!(marked(), (false, true));
        assert!(reader.needs_reverification().unwrap(), "never verified");
    }

    #[test]
    fn a_tiling_node_without_a_neighborhood_is_aliased_and_one_with_a_neighborhood_is_not() {
        let (ctx, copy) = copy_kernel();
        let tiled = |name: &str, nb: Option<crate::Neighborhood>| {
            let k = ctx
                .tiling_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
                .validate(|v, m| same_size_u8(v, m).map(|_| ()))
                .flexible(|args| {
                    let input = args.input::<u8>(0)?;
                    let mut out = args.output::<u8>(1)?;
                    for y in 0..out.height() {
                        for x in 0..out.width() {
                            out.set(x, y, input.pixel(x, y, 0, 0).wrapping_add(1));
                        }
                    }
                    Ok(())
                })
                .add()
                .unwrap();
            k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
            k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
            if let Some(nb) = nb {
                k.set_attribute(crate::KernelAttribute::InputNeighborhood(nb)).unwrap();
                k.set_attribute(crate::KernelAttribute::Border(crate::BorderMode::Self_)).unwrap();
            }
            k.alias_parameter_index_hint(0, 1, AliasKind::Dense).unwrap();
            k.finalize().unwrap();
            k
        };
        let (point, area) =
            (tiled("test.tiled_inc", None), tiled("test.tiled_blur", Some(crate::Neighborhood::new(-1, 1, 0, 0))));
        for (k, honoured) in [(&point, true), (&area, false)] {
            let g = Graph::new(&ctx).unwrap();
            let (v1, v2) = (virt(&g), virt(&g));
            g.add_node(&copy, [&image(&ctx), &v1]).unwrap();
            g.add_node(k, [&v1, &v2]).unwrap();
            g.add_node(&copy, [&v2, &image(&ctx)]).unwrap();
            run_until(&g, "alias binding").unwrap();
            let d = decisions(&g);
            assert_eq!(d[0].0, honoured, "{d:?}");
            assert_eq!(v1.effective_storage_key() == v2.effective_storage_key(), honoured);
            if !honoured {
                assert!(d[0].1.contains("the tiling node reads a neighborhood (-1, 1, 0, 0)"), "{d:?}");
            }
        }
    }
}
