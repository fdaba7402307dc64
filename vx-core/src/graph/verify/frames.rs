//! Pass `frame slots`: what a pipelined graph (queue modes, `graph/pipeline/`) needs to keep
//! several frames in flight. A graph of pipeline depth *D* gets *D* frame slots; each slot has its
//! own parameter table (every node's parameters as that frame sees them):
//!
//! - **virtual objects** get a copy per slot (slot 0 keeps the originals), with the same meta data,
//!   bound by aliasing like the originals, and placed at the memory plan's offsets in an arena of
//!   the slot's own — so frame *f* + 1 writes its intermediates while frame *f* still reads its own;
//! - **queued graph parameters** are filled in at admission with the frame's enqueued reference, at
//!   every node parameter that holds the graph parameter's object (its *sites*);
//! - **other objects** (the application's, not queued) are shared by all slots. A node writing one
//!   must not run frame *f* + 1 before the nodes reading it have run frame *f*: those readers are
//!   the node's *hazards*, which the coordinator waits for;
//! - **fused images** (pass `fusion`) are not copied: they have no buffer, and a fused group runs
//!   as one unit. The dependencies (successors, producers, hazards) are between units: a group's
//!   leader stands for the group, its followers have none.
//!
//! Sequential graphs (no schedule config) get no slots.
//! Cost: O(parameters × pipeline depth + queue sites × parameters); dataflow edges through
//! `overlap.rs`.

use std::sync::{Arc, RwLock};

use crate::data::buffer::RawBuf;
use crate::data::reference::Reference;
use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::GraphBody;
use crate::graph::verify::Verification;

/// The frame slots of a pipelined graph (empty for a sequential one).
#[derive(Default)]
pub(crate) struct FrameSlots {
    pub(crate) slots: Vec<FrameSlot>,
    /// Per queued graph parameter (the schedule config's order): every (node, parameter) holding
    /// its object.
    pub(crate) sites: Vec<Vec<(usize, usize)>>,
    /// Per node index: its consumers in the same frame (the dataflow edges out of it).
    pub(crate) successors: Vec<Vec<usize>>,
    /// Per node index: how many producers it waits for in a frame.
    pub(crate) producers: Vec<u32>,
    /// Per node index: nodes reading a shared object it writes (its frame *f* waits for their
    /// frame *f* − 1).
    pub(crate) hazards: Vec<Vec<usize>>,
}

/// One frame in flight's view of the graph.
pub(crate) struct FrameSlot {
    /// Per node index, the parameters this frame's node sees (empty for removed nodes). Written
    /// only when the slot is admitted a frame (no job of the slot runs then).
    pub(crate) params: RwLock<Vec<Vec<Option<Reference>>>>,
    /// The slot's memory-plan arena (slots ≥ 1; slot 0 uses the graph's).
    _arena: Option<Arc<RawBuf>>,
}

pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    let Some(config) = body.pipeline.clone() else {
        body.frames = FrameSlots::default();
        return Ok(());
    };
    let n_nodes = body.nodes.len();
    let order = v.order();
    let param = |n: usize| &body.nodes[n].as_ref().expect("scheduled nodes are live").params;
    let direction = |n: usize, p: usize| body.nodes[n].as_ref().expect("live").spec(p).direction;

    // Queued graph parameters: their sites; the enqueueable references allocated now (TIOVX
    // allocates at verify), so admission never allocates.
    let mut sites = Vec::with_capacity(config.queues.len());
    for q in &config.queues {
        let (n, p) = crate::graph::parameters::graph_param(body, q.param).map_err(|e| e.in_graph(&v.gname))?;
        let object = param(n)[p].clone().expect("graph parameters stay set");
        sites.push(crate::graph::parameters::sites_of(body, &object));
        for r in &q.refs {
            r.ensure_allocated().map_err(|e| e.in_graph(&v.gname))?;
        }
    }
    let queued =
        |r: &Reference| sites.iter().flatten().any(|&(n, p)| param(n)[p].as_ref().is_some_and(|o| o.overlaps(r)));

    // Dataflow edges and hazards, between units: a fused group is one unit, its leader
    // (`graph/fusion`), and edges inside it are none of the coordinator's business.
    let unit = |n: usize| body.fusion.unit(n);
    let mut successors = vec![Vec::new(); n_nodes];
    let mut producers = vec![0u32; n_nodes];
    let mut hazards = vec![Vec::new(); n_nodes];
    for &n in &order {
        let un = unit(n);
        for (p, r) in param(n).iter().enumerate() {
            let (Direction::Input, Some(r)) = (direction(n, p), r) else { continue };
            for hit in v.writer_index.overlapping(r) {
                let (w, _, written) = &v.writers[hit];
                let uw = unit(*w);
                if uw == un {
                    continue;
                }
                if !successors[uw].contains(&un) {
                    successors[uw].push(un);
                    producers[un] += 1;
                }
                if !written.is_virtual() && !queued(written) && !hazards[uw].contains(&un) {
                    hazards[uw].push(un);
                }
            }
        }
    }

    // Per-slot copies of the virtual objects, keyed by the original's own identity.
    let plan_arena = body.memory.plan.arena_bytes;
    let mut slots = Vec::with_capacity(config.depth);
    for k in 0..config.depth {
        let mut table: Vec<Vec<Option<Reference>>> =
            body.nodes.iter().map(|s| s.as_ref().map_or_else(Vec::new, |s| s.params.clone())).collect();
        let mut arena = None;
        if k > 0 {
            let mut copies: Vec<(Reference, Reference)> = Vec::new();
            for row in table.iter_mut() {
                for r in row.iter_mut().flatten() {
                    // A fused image has no buffer in any frame: it lives in its group's line
                    // buffers, which one frame at a time uses (a group is one unit).
                    if !r.is_virtual() || body.fusion.is_fused(r) {
                        continue;
                    }
                    let copy = match copies.iter().find(|(o, _)| o.same_object(r)) {
                        Some((_, c)) => c.clone(),
                        None => {
                            let c = r.frame_copy(k).map_err(|e| e.in_graph(&v.gname))?;
                            copies.push((r.clone(), c.clone()));
                            c
                        }
                    };
                    *r = copy;
                }
            }
            // A container and a part of it (a pyramid and its level, an object array and its
            // item, a tensor and its view) copied apart would no longer share their elements.
            for (a, _) in copies.iter().filter(|(o, _)| o.as_image().is_none()) {
                if let Some((b, _)) = copies.iter().find(|(b, _)| !b.same_object(a) && a.overlaps(b)) {
                    return Err(Error::new(
                        ErrorKind::NotSupported,
                        format!(
                            "a pipelined graph cannot copy virtual '{}' for each frame apart from '{}', which shares its elements: use one of them",
                            a.name(),
                            b.name()
                        ),
                    )
                    .in_graph(&v.gname));
                }
            }
            // Aliasing: a copy is bound to the copy of its original's chain owner.
            for (orig, copy) in &copies {
                let (Some(o), Some(c)) = (orig.as_image(), copy.as_image()) else { continue };
                if o.effective_storage_key() == o.storage_key() {
                    continue;
                }
                let owner = copies.iter().find_map(|(oo, cc)| {
                    (oo.as_image().is_some_and(|i| i.storage_key() == o.effective_storage_key())).then_some(cc)
                });
                match owner.and_then(Reference::as_image) {
                    Some(owner) => c.bind_storage(Some(owner)),
                    None => {
                        return Err(Error::new(
                            ErrorKind::InvalidGraph,
                            "a virtual image of a pipelined graph is aliased to an image outside the graph's virtual objects",
                        )
                        .on_object(&o.name())
                        .in_graph(&v.gname));
                    }
                }
            }
            // The memory plan's layout, repeated in an arena of the slot's own: every planned
            // original's copy at the original's offset (an image bound to its owner's copy places
            // the owner's buffer, at the same offset and size: placing it again changes nothing).
            if plan_arena > 0 {
                let a = Arc::new(RawBuf::new(plan_arena, &v.graph.ctx.inner.shared.resources)?);
                for (orig, copy) in &copies {
                    let o = orig.any();
                    let (Some((_, offset)), Some((_, Some(bytes)))) = (o.planned_at(), o.plan_bytes()) else {
                        continue;
                    };
                    copy.any().place_planned(&a, offset, bytes).map_err(|e| e.in_graph(&v.gname))?;
                }
                arena = Some(a);
            }
            for (_, copy) in &copies {
                copy.ensure_allocated().map_err(|e| e.in_graph(&v.gname))?;
            }
        }
        slots.push(FrameSlot { params: RwLock::new(table), _arena: arena });
    }
    tracing::debug!(graph = %v.gname, depth = config.depth, queues = sites.len(), "frame slots built");
    body.frames = FrameSlots { slots, sites, successors, producers, hazards };
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{copy_kernel, image, run_until};
    use crate::{Graph, Image, ImageFormat, ScheduleConfig};

    #[test]
    fn each_slot_has_its_own_virtual_images_and_shares_the_rest() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let (input, output) = (image(&ctx), image(&ctx));
        let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        let n0 = g.add_node(&k, [&input, &v]).unwrap();
        g.add_node(&k, [&v, &output]).unwrap();
        let first = g.add_parameter(&n0, 0).unwrap();
        let spare = image(&ctx);
        g.set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(first, [input.clone(), spare])).unwrap();
        run_until(&g, "frame slots").unwrap();
        let body = g.inner.lock().unwrap();
        let f = &body.frames;
        assert_eq!(f.slots.len(), 3);
        let table = |k: usize| f.slots[k].params.read().unwrap().clone();
        let (t0, t1, t2) = (table(0), table(1), table(2));
        // Node 0 writes the virtual image node 1 reads: slot 0 keeps it, slots 1 and 2 have copies.
        let v0 = t0[0][1].clone().unwrap();
        let (v1, v2) = (t1[0][1].clone().unwrap(), t2[0][1].clone().unwrap());
        assert!(v0.same_object(&body.nodes[0].as_ref().unwrap().params[1].clone().unwrap()));
        assert!(!v1.same_object(&v0) && !v2.same_object(&v0) && !v1.same_object(&v2));
        assert!(v1.same_object(t1[1][0].as_ref().unwrap()), "a slot's writer and reader share its copy");
        assert_eq!(v1.meta(), v0.meta());
        // The application's output is shared by every slot.
        assert!(t2[1][1].as_ref().unwrap().same_object(&output.clone().into()));
        // Node 0 feeds node 1; the queued input's sites are node 0's parameter 0.
        assert_eq!(f.successors[0], vec![1]);
        assert_eq!(f.producers[1], 1);
        assert_eq!(f.sites, vec![vec![(0, 0)]]);
        // Nobody reads the shared output inside the graph: no hazards.
        assert!(f.hazards.iter().all(Vec::is_empty));
    }
}
