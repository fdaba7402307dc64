//! Pass `nodes` and the node passes `validate`, `tiling` and `init`: the spec's action sequence for
//! one node — (re-verification: deinit, reset local data) or (first: initialize local data), then
//! the validator, [meta formats applied by `meta`], the tiling plan, init, and the local data init
//! asked for.
//! Cost: O(nodes + parameters) for the walk (inputs changed: `overlap.rs` queries), plus the
//! validators and inits of the nodes re-verified.

use std::sync::Arc;

use crate::data::types::Direction;
use crate::error::Result;
use crate::graph::verify::{NODE_PASSES, NodeVerification, Verification, pass_times};
use crate::graph::{GraphBody, NodeSlot};
use crate::kernel::callbacks::KernelFunctions;
use crate::kernel::contexts::ValidateContext;
use crate::kernel::local_data::Phase;
use crate::kernel::meta_format::{MetaFormat, MetaFormats};
use crate::support::sync::lock;
use crate::support::unwind::call_guarded;

/// Graph pass `nodes`: the node passes, in order, on each node in schedule order — on every node
/// in a full verification, else on the nodes never verified, with a trigger, or whose inputs' meta
/// data changed in this verification (passes marked `always` run on every node).
pub(super) fn run(v: &mut Verification<'_>, body: &mut GraphBody) -> Result<()> {
    for n in v.order() {
        if v.preverified.get(n).copied().unwrap_or(false) {
            continue;
        }
        let s = body.nodes[n].as_mut().expect("scheduled nodes are live");
        let inputs_changed = s.params.iter().enumerate().any(|(p, r)| {
            s.spec(p).direction == Direction::Input && r.as_ref().is_some_and(|r| v.changed.any_overlapping(r))
        });
        let reverify = v.full || !s.initialized || s.dirty || inputs_changed;
        let mut nv = NodeVerification { node: n, ..Default::default() };
        let _node = tracing::debug_span!("verify_node", node = %s.name).entered();
        for pass in NODE_PASSES.iter().filter(|p| reverify || p.always) {
            let _pass = tracing::trace_span!("node_pass", pass = pass.name).entered();
            let timer = pass_times::start("nodes/", pass.name);
            (pass.run)(v, s, &mut nv)?;
            pass_times::stop(timer);
        }
    }
    Ok(())
}

/// Node pass `validate`: the spec's local-data steps before validation, then the validator.
pub(super) fn validate(v: &mut Verification<'_>, s: &mut NodeSlot, nv: &mut NodeVerification) -> Result<()> {
    if let Some(st) = crate::graph::stale(s, &v.gname) {
        // Once per verification of the node (see `Graph::stale_nodes`).
        tracing::warn!(
            graph = %v.gname,
            node = %s.name,
            kernel = %s.kernel.name,
            "node '{}' runs kernel '{}' ({}), which is no longer published (a forced reload dropped it, or its module \
             was unloaded): it keeps the old code until it is removed",
            s.name,
            s.kernel.name,
            match (&st.module, &st.version) {
                (Some(m), Some(ver)) => format!("module '{m}' version {ver}"),
                _ => "not from a module".to_owned(),
            },
        );
    }
    local_data_before_validate(v, s)?;
    let kernel = Arc::clone(&s.kernel);
    let fin = kernel.final_().expect("nodes are created from finalized kernels");
    let mut metas = MetaFormats {
        metas: fin
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.direction == Direction::Output).then(|| MetaFormat::new(i as u32, p.data_type)))
            .collect(),
    };
    let vc = ValidateContext { node: s.key, node_name: &s.name, params: &s.params, border: s.border, aliased: &[] };
    call_guarded("validate", || (kernel.validate)(&vc, &mut metas)).map_err(|e| v.at(s, e))?;
    nv.metas = Some(metas);
    Ok(())
}

/// The spec's local-data steps before a node's validator: on re-verification deinit, then reset
/// the local data (kernel size 0) or allocate the kernel's size; on first verification, initialize
/// them.
pub(super) fn local_data_before_validate(v: &Verification<'_>, s: &mut NodeSlot) -> Result<()> {
    let fin = s.kernel.final_().expect("nodes are created from finalized kernels");
    let ks = fin.attrs.local_data_size;
    let resources = &v.graph.ctx.inner.shared.resources;
    if s.initialized {
        // Re-verification step 1: deinit; step 2: reset local data if the kernel size is 0.
        s.deinit(&v.graph.ctx.inner.shared).map_err(|e| e.in_graph(&v.gname))?;
        let mut run = lock(&s.run);
        if ks == 0 {
            run.local.reset();
        } else if !run.local.is_framework() {
            run.local.allocate(ks, resources).map_err(|e| v.at(s, e))?;
        }
    } else {
        // First verification step 1: initialize local data attributes.
        let mut run = lock(&s.run);
        if ks == 0 {
            run.local.reset();
        } else {
            run.local.allocate(ks, resources).map_err(|e| v.at(s, e))?;
        }
    }
    Ok(())
}

/// Node pass `tiling`: tiling nodes get the extension's checks, the tile plan and the tile-memory
/// arenas; other nodes nothing.
pub(super) fn tiling(v: &mut Verification<'_>, s: &mut NodeSlot, _: &mut NodeVerification) -> Result<()> {
    let kernel = Arc::clone(&s.kernel);
    let KernelFunctions::Tiling { fast, flexible, .. } = &kernel.functions else { return Ok(()) };
    let fin = kernel.final_().expect("nodes are created from finalized kernels");
    let ctx = &v.graph.ctx;
    let state = crate::graph::tiling::prepare(
        s,
        fin,
        fast.is_some(),
        flexible.is_some(),
        &ctx.config().tiling,
        ctx.threads(),
        &ctx.inner.shared.resources,
    )
    .map_err(|e| v.at(s, e))?;
    if let Some((safe, aligned)) = state.lost {
        warn_unprocessed(v, s, fin.attrs.block_size, state.size, safe, aligned);
    }
    if let Some(old) = &s.tiling {
        state.inherit(old);
    }
    s.tiling = Some(state);
    Ok(())
}

/// Say, once per verification of the node, that a fast-only tiling kernel leaves pixels of the
/// safe region unprocessed (its tile blocks do not divide it) and that its outputs' valid
/// rectangles exclude them.
fn warn_unprocessed(
    v: &Verification<'_>,
    s: &NodeSlot,
    block: vx_plugin_abi::TileBlockSize,
    (w, h): (u32, u32),
    safe: vx_plugin_abi::Rect,
    aligned: vx_plugin_abi::Rect,
) {
    let mut strips = Vec::new();
    if aligned.is_empty() {
        strips.push(format!("all of {safe}"));
    } else {
        if aligned.start_x > safe.start_x {
            strips.push(format!("columns {}..{}", safe.start_x, aligned.start_x));
        }
        if aligned.end_x < safe.end_x {
            strips.push(format!("columns {}..{}", aligned.end_x, safe.end_x));
        }
        if aligned.start_y > safe.start_y {
            strips.push(format!("rows {}..{}", safe.start_y, aligned.start_y));
        }
        if aligned.end_y < safe.end_y {
            strips.push(format!("rows {}..{}", aligned.end_y, safe.end_y));
        }
    }
    tracing::warn!(
        graph = %v.gname,
        node = %s.name,
        kernel = %s.kernel.name,
        "tiling kernel '{}' has no flexible function and its {}x{} tile blocks do not divide the {w}x{h} output \
         (within its neighborhood): {} not processed; the output's valid rectangle excludes them (processed: {aligned})",
        s.kernel.name,
        block.width,
        block.height,
        strips.join(", "),
    );
}

/// Node pass `targets`: where the node runs (its target and the implementation it runs there).
pub(super) fn targets(v: &mut Verification<'_>, s: &mut NodeSlot, _: &mut NodeVerification) -> Result<()> {
    let placement =
        crate::graph::targets::place(&s.kernel, s.requested_target.as_deref(), &v.graph.ctx.inner.shared.targets)
            .map_err(|e| v.at(s, e))?;
    s.placement = Some(placement);
    Ok(())
}

/// Node pass `init`: the kernel's init (or its target implementation's create), on the node's
/// target, then the local data it asked for (size set, no pointer); then the node's control port.
pub(super) fn init(v: &mut Verification<'_>, s: &mut NodeSlot, nv: &mut NodeVerification) -> Result<()> {
    let shared = &v.graph.ctx.inner.shared;
    let result = match s.executor().cloned() {
        // TIOVX: create runs on the node's target (a device handle is made on the thread that
        // will use it); nodes one by one, as verification visits them.
        Some(ex) => ex.run_sync(|| init_here(shared, s)).and_then(|r| r),
        None => init_here(shared, s),
    };
    result.map_err(|e| e.in_graph(&v.gname))?;
    s.initialized = true;
    // Only nodes that can take commands get a port (nothing allocated for the others).
    let port = match s.control_fn() {
        Some(control) => Some(s.open_port(control, &shared.targets).map_err(|e| v.at(s, e))?),
        None => None,
    };
    let mut ports = crate::support::sync::lock(&v.graph.ports);
    if ports.len() <= nv.node {
        if port.is_none() {
            return Ok(());
        }
        ports.resize(nv.node + 1, None);
    }
    ports[nv.node] = port;
    Ok(())
}

fn init_here(shared: &Arc<crate::shared::ContextShared>, s: &NodeSlot) -> Result<()> {
    let ks = s.kernel.final_().map_or(0, |f| f.attrs.local_data_size);
    let init = s.init_fn();
    let mut run = lock(&s.run);
    let run = &mut *run;
    if let Some(init) = init {
        let mut lc = s.lifecycle(run, Phase::Init, &shared.resources);
        if let Err(e) = call_guarded("init", || init(&mut lc)) {
            // A failed init gets no deinit (TIOVX: a failed create gets no delete): what it
            // allocated goes back now, and the next init numbers its blocks from 0 again.
            run.memory.reclaim();
            run.instance.clear();
            return Err(e.in_kernel(&s.kernel.name).in_node(&s.name));
        }
    }
    if ks == 0 && run.local.size != 0 && run.local.ptr().is_null() {
        let size = run.local.size;
        run.local.allocate(size, &shared.resources).map_err(|e| e.in_node(&s.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::graph::verify::testkit::{image, run_until, same_size_u8, u8_kernel};
    use crate::{Context, ErrorKind, Graph};

    /// A copy kernel counting validate, init and deinit calls; its validator refuses when `refuse`.
    fn counted(ctx: &Context, refuse: bool) -> (crate::Kernel, Arc<[AtomicUsize; 3]>) {
        let calls: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
        let (c0, c1, c2) = (Arc::clone(&calls), Arc::clone(&calls), Arc::clone(&calls));
        let k = u8_kernel(ctx, "test.counted", move |b| {
            b.validate(move |v, metas| {
                c0[0].fetch_add(1, Ordering::SeqCst);
                if refuse {
                    return Err(crate::Error::new(ErrorKind::InvalidFormat, "no"));
                }
                same_size_u8(v, metas).map(|_| ())
            })
            .init(move |_| {
                c1[1].fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
            .deinit(move |_| {
                c2[2].fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        });
        (k, calls)
    }

    fn counts(c: &[AtomicUsize; 3]) -> [usize; 3] {
        [c[0].load(Ordering::SeqCst), c[1].load(Ordering::SeqCst), c[2].load(Ordering::SeqCst)]
    }

    #[test]
    fn first_verification_validates_then_inits_and_reverification_deinits_first() {
        let ctx = Context::builder().threads(1).build().unwrap();
        let (k, calls) = counted(&ctx, false);
        let g = Graph::new(&ctx).unwrap();
        g.add_node(&k, [&image(&ctx), &image(&ctx)]).unwrap();
        run_until(&g, "nodes").unwrap();
        assert_eq!(counts(&calls), [1, 1, 0]);
        run_until(&g, "nodes").unwrap();
        assert_eq!(counts(&calls), [2, 2, 1]);
    }

    #[test]
    fn a_refusing_validator_stops_before_init() {
        let ctx = Context::builder().threads(1).build().unwrap();
        let (k, calls) = counted(&ctx, true);
        let g = Graph::new(&ctx).unwrap();
        g.add_node(&k, [&image(&ctx), &image(&ctx)]).unwrap();
        let e = run_until(&g, "nodes").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidFormat);
        assert_eq!(e.context().kernel.as_deref(), Some("test.counted"));
        assert_eq!(counts(&calls), [1, 0, 0]);
    }
}
