//! Re-verification after a module reload (or an input replaced by one of the same meta data),
//! proportional to the change.
//!
//! A reload rebinds nodes to their kernels' new versions (`graph/body.rs`); the graph was verified
//! before and nothing else changed. A node whose new version differs in code alone (one shape, one
//! nonzero validator key, no init/deinit/control/local data/targets) moved in place there, its
//! verified state intact, and is not visited here at all. The full path would rerun every graph pass over the whole graph
//! (dataflow, alias candidates, scratch, alias binding, memory plan, buffers, frame slots) and the
//! `always` node passes on every node. Here only the rebound nodes are visited, in schedule order:
//!
//! 1. A node whose new version differs in *shape* (`KernelShape`: parameters, attributes, alias
//!    hints, functions, targets) gives up at once: the full path runs (nothing of this one has run).
//! 2. A node whose old and new versions have one nonzero validator key (a kernel macro's generated
//!    validator, a pure function of the declared signature) and no valid-rectangle callback is
//!    *kept*: its validator would return what it returned, so its metas, alias decisions, tile plan
//!    (its `TilingState` is handed back) and valid rectangles stand; only the local data steps, the
//!    `targets` pass and `init` (the new code's) run.
//! 3. Any other node runs every node pass, as a re-verified node does.
//!
//! Then the graph passes' inputs are compared with what they were: no object's meta data changed,
//! and each visited node's alias decisions, placement, scratch request and output valid rectangles
//! are as before. If so, every graph pass would reproduce its last result: the graph is verified,
//! reusing the products the last complete verification kept ([`Products`]). If not, the graph
//! passes run after all (`verify_until` with the visited nodes counted as verified in this run and
//! the changed objects seeded, so their readers are re-verified): the same result as the full path.
//!
//! Exactness is checked, not assumed: with `VX_VERIFY_CHECK=1` (or the test hook
//! `vx::__verify_check_always()`, which the randomized graph test calls) a successful proportional
//! re-verification, and every move in place, is followed by a complete verification (every node's
//! passes rerun, as `Graph::verify` does), and any difference in the graph's verified state
//! ([`digest`]) is an error. Not by default, not even in debug builds: that verification calls
//! every validator, init and deinit once more, which an application would see.
//!
//! Cost: O(rebound nodes × their parameters) + the validators and inits of the nodes not kept; no
//! pass visits the other nodes.

use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::data::reference::Reference;
use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::tiling::TilingState;
use crate::graph::{ActiveGuard, GraphBody, GraphInner, GraphState, NodeSlot};
use crate::kernel::record::KernelInner;

use super::{NODE_PASSES, NodeVerification, Seed, Verification, nodes, verify_until};

/// A node rebound by a reload, or whose input was replaced by an object of the same meta data,
/// since the graph's last verification.
pub(crate) struct Rebound {
    pub(crate) node: usize,
    /// Rebound by a reload.
    pub(crate) reloaded: bool,
    /// An input replaced by an object of the same meta data.
    pub(crate) inputs_replaced: bool,
    /// The version it was verified with (held until this re-verification: its shape is compared).
    pub(crate) verified_with: Arc<KernelInner>,
    /// It had a valid-rectangle callback from that version's validator.
    pub(crate) had_valid_rect_fn: bool,
    /// Its tile plan from that verification (handed back when the node is kept).
    pub(crate) tiling: Option<TilingState>,
}

/// What the graph passes of the last complete verification produced that the node passes read.
pub(crate) struct Products {
    pub(super) writers: Vec<(usize, usize, Reference)>,
    pub(super) writer_index: super::overlap::OverlapIndex<usize>,
    pub(super) producers: Vec<Vec<usize>>,
    pub(super) alias_topology: Vec<super::aliasing::Topology>,
}

/// Set by [`check_always`].
static FORCED: AtomicBool = AtomicBool::new(false);

/// Whether to follow each proportional re-verification (and each move in place) with a complete
/// verification and compare: `VX_VERIFY_CHECK=1`, or [`check_always`] called. Off by default in
/// every build: the complete verification calls every validator, init and deinit once more, which
/// an application would see.
fn check_enabled() -> bool {
    static CHECK: OnceLock<bool> = OnceLock::new();
    FORCED.load(Ordering::Relaxed) || *CHECK.get_or_init(|| std::env::var("VX_VERIFY_CHECK").as_deref() == Ok("1"))
}

/// Test hook: from now on, in this process, check every proportional re-verification and every
/// move in place against a complete verification (as `VX_VERIFY_CHECK=1` does).
#[doc(hidden)]
pub fn check_always() {
    FORCED.store(true, Ordering::Relaxed);
}

/// Output images compared by value; a node with more counts as changed (the graph passes run).
const COMPARED_OUTPUTS: usize = 8;

/// What a visited node's verification feeds the graph passes, to compare before and after
/// (without allocating: this runs twice per rebound node).
#[derive(PartialEq, Debug)]
struct NodeInputs {
    aliased: Vec<(u32, u32)>,
    target: Option<*const ()>,
    scratch: usize,
    valid: [Option<vx_plugin_abi::Rect>; COMPARED_OUTPUTS],
    /// More output images than `valid` holds.
    overflow: bool,
}

fn node_inputs(s: &NodeSlot) -> NodeInputs {
    let mut valid = [None; COMPARED_OUTPUTS];
    let mut count = 0;
    for (p, r) in s.params.iter().enumerate() {
        let Some(img) = r.as_ref().and_then(Reference::as_image) else { continue };
        if s.spec(p).direction == Direction::Output {
            if let Some(v) = valid.get_mut(count) {
                *v = Some(img.valid_region());
            }
            count += 1;
        }
    }
    NodeInputs {
        aliased: s.aliased.clone(),
        target: s.placement.as_ref().map(|p| p.identity()),
        scratch: crate::support::sync::lock(&s.run).memory.scratch_bytes,
        valid,
        overflow: count > COMPARED_OUTPUTS,
    }
}

/// Re-verify a graph whose only changes since its last verification are reload rebinds. Returns
/// false (nothing done) when the proportional path does not apply; then the caller verifies.
pub(crate) fn reverify_rebound(g: &GraphInner, body: &mut GraphBody) -> Result<bool> {
    if body.rebound.is_empty() || body.products.is_none() {
        return Ok(false);
    }
    let mut rebound = std::mem::take(&mut body.rebound);
    for r in &rebound {
        body.nodes[r.node].as_mut().expect("noted nodes are live").noted = None;
    }
    // Most rebound nodes share one (old, new) pair of versions: compare each pair once.
    let mut same_shape: Option<(*const KernelInner, *const KernelInner)> = None;
    for r in &rebound {
        let s = body.nodes[r.node].as_ref().expect("rebound nodes are live");
        let pair = (Arc::as_ptr(&r.verified_with), Arc::as_ptr(&s.kernel));
        if same_shape == Some(pair) {
            continue;
        }
        match (r.verified_with.shape(), s.kernel.shape()) {
            (Some(old), Some(new)) if old == new => same_shape = Some(pair),
            // Another shape: the full path (the nodes are dirty; their tile plans are dropped).
            _ => return Ok(false),
        }
    }
    let _active = ActiveGuard::enter(g.id);
    let products = body.products.take().expect("checked");
    // `live` stays empty: no pass run here reads it, and filling it would visit every node.
    let mut v = Verification::new(g, body, false, false);
    v.writers = products.writers;
    v.writer_index = products.writer_index;
    v.producers = products.producers;
    v.alias_topology = products.alias_topology;
    v.schedule = std::mem::take(&mut body.schedule);
    let _span = tracing::info_span!("verify", graph = %v.gname, proportional = rebound.len()).entered();
    // Schedule order: a node's validator sees what its (rebound) producers completed.
    let mut position = vec![usize::MAX; body.nodes.len()];
    for (i, &n) in v.schedule.iter().flatten().enumerate() {
        position[n] = i;
    }
    rebound.sort_by_key(|r| position[r.node]);
    let mut same = true;
    let mut visited = vec![false; body.nodes.len()];
    for r in &mut rebound {
        let s = body.nodes[r.node].as_mut().expect("rebound nodes are live");
        visited[r.node] = true;
        let before = node_inputs(s);
        // What this verification changed upstream (in schedule order) reaches this node as it
        // would a re-verified one.
        let inputs_changed = s.params.iter().enumerate().any(|(p, x)| {
            s.spec(p).direction == Direction::Input && x.as_ref().is_some_and(|x| v.changed.any_overlapping(x))
        });
        let upstream_changed = !same || !v.changed.is_empty();
        let keep = !inputs_changed
            && r.reloaded
            && s.kernel.validator_key != 0
            && !r.had_valid_rect_fn
            && r.tiling.is_some() == s.tiling_kernel();
        let mut nv = NodeVerification { node: r.node, ..Default::default() };
        // Its hints with a real input are refused by the input's name: an input replaced, a new name.
        super::aliasing::refresh_real_input_verdicts(&mut v, s, r.node);
        let always = |v: &mut Verification<'_>, s: &mut NodeSlot, nv: &mut NodeVerification| {
            NODE_PASSES.iter().filter(|p| p.always).try_for_each(|pass| (pass.run)(v, s, nv))
        };
        let result = if keep {
            // The validator would return what it returned (same key, same input metas): its
            // metas and tile plan stand; the new code's local data, target and init are done.
            s.tiling = r.tiling.take();
            // The passes every node gets read only what is unchanged, unless an input was replaced
            // or something upstream changed.
            nodes::local_data_before_validate(&v, s)
                .and_then(|()| nodes::targets(&mut v, s, &mut nv))
                .and_then(|()| nodes::init(&mut v, s, &mut nv))
                .and_then(|()| if r.inputs_replaced || upstream_changed { always(&mut v, s, &mut nv) } else { Ok(()) })
        } else if r.reloaded || s.dirty || inputs_changed {
            NODE_PASSES.iter().try_for_each(|pass| (pass.run)(&mut v, s, &mut nv))
        } else {
            // An input replaced by one of the same meta data: no trigger, the passes every node
            // gets (its alias decisions, its valid rectangles).
            always(&mut v, s, &mut nv)
        }
        // What the `buffers` pass does for the node's objects (a replacing input is new).
        .and_then(|()| s.params.iter().flatten().try_for_each(Reference::ensure_allocated));
        if let Err(e) = result {
            body.schedule = std::mem::take(&mut v.schedule);
            return Err(e);
        }
        let after = node_inputs(s);
        same &= after == before && !after.overflow;
    }
    same &= v.changed.is_empty();
    if !same {
        // Something the graph passes read changed: run them, the visited nodes done.
        body.schedule = std::mem::take(&mut v.schedule);
        let seed = Seed { changed: std::mem::take(&mut v.changed), preverified: visited };
        drop(v);
        verify_until(g, body, false, None, Some(seed))?;
        return compare_with_complete(g, body, "the re-verification of the rebound nodes and their readers")
            .map(|()| true);
    }
    body.schedule = std::mem::take(&mut v.schedule);
    body.products = Some(v.into_products());
    // Only visited nodes can be dirty: nothing else changed since the last verification.
    for r in &rebound {
        body.nodes[r.node].as_mut().expect("rebound nodes are live").dirty = false;
    }
    body.verified = true;
    body.state = GraphState::Verified;
    tracing::debug!(graph = %g.name(), nodes = rebound.len(), "graph re-verified after a reload (rebound nodes only)");
    compare_with_complete(g, body, "the re-verification of the rebound nodes")?;
    Ok(true)
}

/// In check mode (see [`check_enabled`]): a complete verification (every node's passes, as
/// `Graph::verify`) after `what` left the graph verified, and an error if the verified states
/// differ. Nothing otherwise.
fn compare_with_complete(g: &GraphInner, body: &mut GraphBody, what: &str) -> Result<()> {
    if !check_enabled() {
        return Ok(());
    }
    let kept = digest(body);
    verify_until(g, body, true, None, None)?;
    let full = digest(body);
    if kept != full {
        return Err(Error::new(
            ErrorKind::Failure,
            format!("internal: {what} differs from a complete verification\n--- {what}\n{kept}\n--- complete\n{full}"),
        )
        .in_graph(&g.name()));
    }
    Ok(())
}

/// In check mode (see [`check_enabled`]), after nodes moved to new versions in place with the
/// graph left verified (`graph/body.rs::rebind_replaced`): the full path, compared with what the
/// graph kept. Nothing otherwise.
pub(crate) fn check_in_place_rebind(g: &GraphInner, body: &mut GraphBody) -> Result<()> {
    compare_with_complete(g, body, "the state kept by nodes rebound in place to a reloaded kernel")
}

/// Node `node`'s input `param` was replaced by an object of the same meta data (no re-verification
/// trigger). If what the graph passes read cannot have changed — both objects real and written by
/// no node, the graph sequential and its last complete verification's products kept — the node is
/// noted for a proportional re-verification and true returned; else false (the caller invalidates
/// the graph). Its alias hints' verdicts are refreshed at the re-verification (a real input is
/// refused by name).
pub(crate) fn note_input_replaced(
    body: &mut GraphBody,
    node: usize,
    param: usize,
    old: &Reference,
    new: &Reference,
) -> bool {
    let Some(products) = &body.products else { return false };
    if body.pipeline.is_some() || old.is_virtual() || new.is_virtual() {
        return false;
    }
    if products.writer_index.any_overlapping(old) || products.writer_index.any_overlapping(new) {
        return false;
    }
    let s = body.nodes[node].as_mut().expect("live node");
    if s.spec(param).direction != Direction::Input {
        return false;
    }
    if let Some(k) = s.noted {
        body.rebound[k].inputs_replaced = true;
    } else {
        s.noted = Some(body.rebound.len());
        body.rebound.push(Rebound {
            node,
            reloaded: false,
            inputs_replaced: true,
            verified_with: Arc::clone(&s.kernel),
            had_valid_rect_fn: false,
            tiling: None,
        });
    }
    body.verified = false;
    body.state = GraphState::Unverified;
    true
}

/// The verified state of a graph, as text: what a verification decides, node by node and for the
/// graph (for comparing two ways of reaching it).
pub(super) fn digest(body: &GraphBody) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "schedule {:?}", body.schedule);
    for (i, s) in body.nodes.iter().enumerate() {
        let Some(s) = s else { continue };
        let _ = writeln!(
            out,
            "node {i} '{}' kernel '{}' initialized {} aliased {:?} candidates {:?} decisions {:?} target {:?} scratch {}",
            s.name,
            s.kernel.name,
            s.initialized,
            s.aliased,
            s.alias_candidates,
            s.alias_decisions,
            s.placement.as_ref().map(|p| p.name()),
            crate::support::sync::lock(&s.run).memory.scratch_bytes,
        );
        if let Some(t) = &s.tiling {
            let _ = writeln!(out, "  tiles {:?} processed {} size {:?}", t.tiles, t.processed, t.size);
        }
        for (p, r) in s.params.iter().enumerate() {
            let Some(r) = r else { continue };
            let _ = write!(out, "  param {p} '{}' {}", r.name(), r.meta());
            if let Some(img) = r.as_image() {
                let _ = write!(out, " valid {}", img.valid_region());
            }
            out.push('\n');
        }
    }
    let _ = writeln!(out, "memory {:?}", body.memory.plan);
    let _ = writeln!(
        out,
        "scratch {:?}",
        body.scratch.iter().map(|a| crate::support::sync::lock(a).len()).collect::<Vec<_>>()
    );
    let f = &body.frames;
    let _ = writeln!(
        out,
        "frames {} sites {:?} successors {:?} producers {:?}",
        f.slots.len(),
        f.sites,
        f.successors,
        f.producers
    );
    out
}
