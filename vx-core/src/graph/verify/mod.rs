//! Graph verification (`vxVerifyGraph`): parameter checks, single writer per object, topological
//! order with cycle detection, the validators with meta formats (completing virtual objects and
//! checking real ones), valid-region propagation, the spec's exact local-data action sequence for
//! first verification and re-verification, and buffer allocation.

use std::sync::Arc;

use vx_plugin_abi::{ImageFormat, Rect};

use crate::data::reference::{ObjectMeta, Reference};
use crate::data::types::{Direction, ParamState};
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{ActiveGuard, Graph, GraphBody, GraphInner, GraphState, NodeSlot};
use crate::kernel::callbacks::KernelFunctions;
use crate::kernel::contexts::{LifecycleContext, ValidateContext};
use crate::kernel::local_data::Phase;
use crate::kernel::meta_format::{MetaFormat, MetaFormats};
use crate::support::sync::get_mut;
use crate::support::unwind::call_guarded;

/// True when writing `a` may change what reading `b` sees (same object, or images sharing pixels).
pub(crate) fn overlaps(a: &Reference, b: &Reference) -> bool {
    if a.same_object(b) {
        // Checked first: a virtual image of unknown size covers an empty rectangle.
        return true;
    }
    match (a, b) {
        (Reference::Image(x), Reference::Image(y)) => {
            x.storage_key() == y.storage_key() && x.rect_in_storage().overlaps(&y.rect_in_storage())
        }
        _ => false,
    }
}

impl Graph {
    /// `vxVerifyGraph`: a complete verification. Every node is (re-)verified: on re-verification
    /// its deinit runs first, then validate and init, following the spec's local-data sequence.
    pub fn verify(&self) -> Result<()> {
        let mut body = self.inner.lock()?;
        verify_body(&self.inner, &mut body, true)
    }
}

struct Ctx<'a> {
    g: &'a GraphInner,
    gname: String,
}

impl Ctx<'_> {
    fn at(&self, slot: &NodeSlot, e: Error) -> Error {
        e.in_kernel(&slot.kernel.name).in_node(&slot.name).in_graph(&self.gname)
    }
}

/// Verify the graph. `full`: re-verify every node (explicit `verify`); otherwise only nodes that
/// were never verified, had a re-verification trigger, or whose inputs' meta data changed in this
/// pass (automatic re-verification at process).
pub(crate) fn verify_body(g: &GraphInner, body: &mut GraphBody, full: bool) -> Result<()> {
    let _active = ActiveGuard::enter(g.id);
    body.verified = false;
    body.state = GraphState::Unverified;
    let cx = Ctx { g, gname: g.name() };
    let live: Vec<usize> = body.nodes.iter().enumerate().filter_map(|(i, n)| n.as_ref().map(|_| i)).collect();
    if live.is_empty() {
        return Err(Error::new(ErrorKind::InvalidGraph, "the graph has no nodes").in_graph(&cx.gname));
    }
    let node = |i: usize| body.nodes[i].as_ref().expect("live");

    // 1. Parameters: present when required, right type, right context and scope.
    for &n in &live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            let spec = s.spec(p);
            match r {
                None if spec.state == ParamState::Required => {
                    return Err(cx.at(
                        s,
                        Error::new(ErrorKind::InvalidParameters, "a required parameter is not set")
                            .at_parameter(p as u32)
                            .expected(format!("{} {}", spec.direction, spec.data_type)),
                    ));
                }
                None => {}
                Some(r) => crate::graph::check_param(g, &s.kernel, p, spec, r).map_err(|e| cx.at(s, e))?,
            }
        }
    }

    // 2. Writers: every output object has one writer.
    let mut writers: Vec<(usize, usize, &Reference)> = Vec::new();
    for &n in &live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            if let (Direction::Output, Some(r)) = (s.spec(p).direction, r) {
                if let Some((wn, wp, _)) = writers.iter().find(|(_, _, w)| overlaps(w, r)) {
                    let other = node(*wn);
                    return Err(cx.at(
                        s,
                        Error::new(ErrorKind::MultipleWriters, "two nodes write the same object")
                            .at_parameter(p as u32)
                            .on_object(&r.name())
                            .expected("one writer")
                            .found(format!("also written by node '{}' parameter {wp}", other.name)),
                    ));
                }
                writers.push((n, p, r));
            }
        }
    }

    // 3. Edges writer → reader; virtual inputs need a writer.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); body.nodes.len()];
    for &n in &live {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            let (Direction::Input, Some(r)) = (s.spec(p).direction, r) else { continue };
            let mut written = false;
            for (wn, _, w) in &writers {
                if overlaps(w, r) {
                    written = true;
                    if *wn == n {
                        return Err(cx.at(
                            s,
                            Error::new(ErrorKind::InvalidGraph, "the node reads its own output (a cycle)")
                                .at_parameter(p as u32)
                                .on_object(&r.name()),
                        ));
                    }
                    if !preds[n].contains(wn) {
                        preds[n].push(*wn);
                    }
                }
            }
            if !written && r.is_virtual() {
                return Err(cx.at(
                    s,
                    Error::new(
                        ErrorKind::InvalidGraph,
                        "the virtual object is read but no node of the graph writes it",
                    )
                    .at_parameter(p as u32)
                    .on_object(&r.name()),
                ));
            }
        }
    }

    // 4. Topological order by levels (Kahn); leftovers form a cycle.
    let mut level: Vec<Option<usize>> = vec![None; body.nodes.len()];
    let mut order = Vec::with_capacity(live.len());
    loop {
        let ready: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&n| level[n].is_none() && preds[n].iter().all(|&p| level[p].is_some()))
            .collect();
        if ready.is_empty() {
            break;
        }
        for &n in &ready {
            level[n] = Some(preds[n].iter().map(|&p| level[p].expect("ready") + 1).max().unwrap_or(0));
            order.push(n);
        }
    }
    if order.len() < live.len() {
        let stuck: Vec<String> =
            live.iter().filter(|&&n| level[n].is_none()).map(|&n| format!("'{}'", node(n).name)).collect();
        return Err(Error::new(ErrorKind::InvalidGraph, "the graph has a cycle")
            .in_graph(&cx.gname)
            .found(format!("nodes {} depend on each other", stuck.join(", "))));
    }
    order.sort_by_key(|&n| (level[n], n));
    let depth = order.iter().map(|&n| level[n].expect("ordered")).max().unwrap_or(0) + 1;
    let mut schedule: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for &n in &order {
        schedule[level[n].expect("ordered")].push(n);
    }

    // 5. Validate/init in order; complete virtual objects; propagate valid regions.
    let mut changed: Vec<Reference> = Vec::new();
    for &n in &order {
        let s = body.nodes[n].as_mut().expect("live");
        let inputs_changed = s.params.iter().enumerate().any(|(p, r)| {
            s.spec(p).direction == Direction::Input
                && r.as_ref().is_some_and(|r| changed.iter().any(|c| overlaps(c, r)))
        });
        if full || !s.initialized || s.dirty || inputs_changed {
            verify_node(&cx, s, &mut changed)?;
        }
        propagate_valid_rects(&cx, s)?;
    }

    // 6. Allocate every buffer the graph touches.
    let node = |i: usize| body.nodes[i].as_ref().expect("live");
    for &n in &order {
        let s = node(n);
        for (p, r) in s.params.iter().enumerate() {
            if let Some(r) = r {
                r.ensure_allocated().map_err(|e| cx.at(s, e.at_parameter(p as u32)))?;
            }
        }
    }

    body.schedule = schedule;
    for n in body.nodes.iter_mut().flatten() {
        n.dirty = false;
    }
    body.verified = true;
    body.state = GraphState::Verified;
    tracing::debug!(graph = %cx.gname, nodes = live.len(), levels = depth, "graph verified");
    Ok(())
}

/// The spec's action sequence for one node: (re-verification: deinit, reset) or (first: initialize
/// local data), then validate, apply meta formats, init, provide the requested buffer.
fn verify_node(cx: &Ctx<'_>, s: &mut NodeSlot, changed: &mut Vec<Reference>) -> Result<()> {
    let kernel = Arc::clone(&s.kernel);
    let fin = kernel.final_().expect("finalized");
    let ks = fin.attrs.local_data_size;
    let resources = Arc::clone(&cx.g.ctx.inner.shared.resources);
    if s.initialized {
        // Re-verification step 1: deinit; step 2: reset local data if the kernel size is 0.
        s.deinit().map_err(|e| e.in_graph(&cx.gname))?;
        let run = get_mut(&mut s.run);
        if ks == 0 {
            run.local.reset();
        } else if !run.local.is_framework() {
            run.local.allocate(ks, &resources).map_err(|e| cx.at(s, e))?;
        }
    } else {
        // First verification step 1: initialize local data attributes.
        let run = get_mut(&mut s.run);
        if ks == 0 {
            run.local.reset();
        } else {
            run.local.allocate(ks, &resources).map_err(|e| cx.at(s, e))?;
        }
    }

    // Validate.
    let mut metas = MetaFormats {
        metas: fin
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.direction == Direction::Output).then(|| MetaFormat::new(i as u32, p.data_type)))
            .collect(),
    };
    {
        let vc = ValidateContext { node_name: &s.name, params: &s.params, border: s.border };
        let validate = Arc::clone(&s.kernel.validate);
        call_guarded("validate", || validate(&vc, &mut metas)).map_err(|e| cx.at(s, e))?;
    }

    // Apply meta formats to outputs.
    s.valid_rect_fns = vec![None; s.params.len()];
    for (p, m) in metas.metas.iter().enumerate() {
        let (Some(m), Some(r)) = (m, &s.params[p]) else { continue };
        let meta = m.resolve().map_err(|e| cx.at(s, e))?;
        apply_meta(r, meta, changed).map_err(|e| cx.at(s, e.at_parameter(p as u32).on_object(&r.name())))?;
        s.valid_rect_fns[p] = m.valid_rect.clone();
    }

    // Tiling nodes: the extension's checks, the tile plan and the tile-memory arenas.
    if let KernelFunctions::Tiling { fast, flexible } = &kernel.functions {
        let ctx = &cx.g.ctx;
        let state = crate::graph::tiling::prepare(
            s,
            fin,
            fast.is_some(),
            flexible.is_some(),
            &ctx.config().tiling,
            ctx.threads(),
            &resources,
        )
        .map_err(|e| cx.at(s, e))?;
        s.tiling = Some(state);
    }

    // Init, then provide the buffer the node asked for.
    let run = get_mut(&mut s.run);
    if let Some(init) = s.kernel.init.clone() {
        let mut lc = LifecycleContext {
            node_name: &s.name,
            params: &s.params,
            border: s.border,
            phase: Phase::Init,
            kernel_local_size: ks,
            local: &mut run.local,
        };
        call_guarded("init", || init(&mut lc))
            .map_err(|e| e.in_kernel(&s.kernel.name).in_node(&s.name).in_graph(&cx.gname))?;
    }
    if ks == 0 && run.local.size != 0 && run.local.ptr().is_null() {
        let size = run.local.size;
        run.local.allocate(size, &resources).map_err(|e| e.in_node(&s.name).in_graph(&cx.gname))?;
    }
    s.initialized = true;
    Ok(())
}

fn mismatch(kind: ErrorKind, want: ObjectMeta, have: ObjectMeta) -> Error {
    Error::new(kind, "the output object does not match the validator's meta format").expected_found(want, have)
}

/// Complete a virtual output from `meta`, or check a real one against it.
fn apply_meta(r: &Reference, meta: ObjectMeta, changed: &mut Vec<Reference>) -> Result<()> {
    let have = r.meta();
    match (r, meta) {
        (Reference::Image(img), ObjectMeta::Image { format, width, height }) => {
            let (df, dw, dh) = if img.is_virtual() {
                img.obj.declared
            } else {
                match have {
                    ObjectMeta::Image { format, width, height } => (format, width, height),
                    _ => unreachable!("an image has image meta"),
                }
            };
            if df != ImageFormat::Virtual && df != format {
                return Err(mismatch(ErrorKind::InvalidFormat, meta, have));
            }
            if (dw != 0 && dw != width) || (dh != 0 && dh != height) {
                return Err(mismatch(ErrorKind::InvalidDimension, meta, have));
            }
            if img.is_virtual() && img.complete_virtual(format, width, height)? {
                changed.push(r.clone());
            }
        }
        (Reference::Array(a), ObjectMeta::Array { item_type, capacity }) => {
            let (dt, dc) = a.obj.declared;
            if a.is_virtual() {
                if dt.is_some_and(|t| Some(t) != item_type) || (dc != 0 && dc < capacity) {
                    return Err(mismatch(ErrorKind::NotCompatible, meta, have));
                }
                let item = item_type.expect("resolved meta has an item type");
                if a.complete_virtual(item, if dc != 0 { dc } else { capacity })? {
                    changed.push(r.clone());
                }
            } else if dt != item_type {
                return Err(mismatch(ErrorKind::InvalidType, meta, have));
            } else if dc < capacity {
                return Err(mismatch(ErrorKind::InvalidDimension, meta, have));
            }
        }
        (Reference::Scalar(_), m @ ObjectMeta::Scalar { .. }) if m == have => {}
        (Reference::Scalar(_), m) => return Err(mismatch(ErrorKind::InvalidType, m, have)),
        (Reference::UserDataObject(_), m @ ObjectMeta::UserDataObject { .. }) if m == have => {}
        (Reference::UserDataObject(_), m) => return Err(mismatch(ErrorKind::InvalidDimension, m, have)),
        (_, m) => return Err(mismatch(ErrorKind::InvalidType, m, have)),
    }
    Ok(())
}

/// Set each output image's valid rectangle: the kernel's callback over the input images' valid
/// rectangles (in parameter order), or the whole image when there is no callback.
fn propagate_valid_rects(cx: &Ctx<'_>, s: &NodeSlot) -> Result<()> {
    let mut inputs: Vec<Rect> = Vec::new();
    for (p, r) in s.params.iter().enumerate() {
        if let (Direction::Input, Some(Reference::Image(img))) = (s.spec(p).direction, r) {
            inputs.push(img.valid_region());
        }
    }
    for (p, r) in s.params.iter().enumerate() {
        let (Direction::Output, Some(Reference::Image(img))) = (s.spec(p).direction, r) else { continue };
        let full = Rect::full(img.width(), img.height());
        let rect = match &s.valid_rect_fns[p] {
            Some(f) => {
                let f = Arc::clone(f);
                let rect = call_guarded("valid rectangle callback", || f(p as u32, &inputs))
                    .map_err(|e| cx.at(s, e.at_parameter(p as u32)))?;
                if !full.contains(&rect) {
                    return Err(cx.at(
                        s,
                        Error::new(
                            ErrorKind::InvalidValue,
                            "the valid rectangle callback returned a rectangle outside the output",
                        )
                        .at_parameter(p as u32)
                        .expected_found(format!("inside {full}"), rect),
                    ));
                }
                rect
            }
            None => full,
        };
        img.set_valid_unchecked(rect);
    }
    Ok(())
}
