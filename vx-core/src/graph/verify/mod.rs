//! Graph verification (`vxVerifyGraph`) as a list of named passes (OpenCV G-API's compiler idea).
//!
//! Graph passes run in order over the whole graph; the `nodes` pass runs the node passes, in order,
//! on each node in schedule order (a node's validator sees the meta data its producers completed):
//!
//! | graph pass | file | what |
//! |---|---|---|
//! | `parameters` | `params.rs` | required parameters present; type, context and scope right |
//! | `dataflow` | `dataflow.rs` | one writer per object; edges writer → reader; levels (Kahn), cycles named |
//! | `alias candidates` | `aliasing.rs` | topology rules of buffer aliasing per hint; a changed verdict re-verifies the node |
//! | `nodes` | `nodes.rs` | the node passes below, for each node that needs it |
//! | `scratch arenas` | `scratch.rs` | one scratch arena per executor, as large as any node's requests |
//! | `alias binding` | `aliasing.rs` | each aliased chain's virtual images bound to one storage |
//! | `fusion` | `fusion.rs` | tiling nodes joined by virtual images grouped to run with line buffers; the schedule re-levelled by group |
//! | `memory plan` | `memory_plan.rs` (+ `run_order.rs`) | virtual images placed in one arena; two share bytes only when the executor orders all their uses |
//! | `buffers` | `buffers.rs` | every buffer the graph touches allocated |
//! | `frame slots` | `frames.rs` | pipelined graphs: per frame in flight, its virtual objects and parameter table |
//!
//! | node pass | file | what |
//! |---|---|---|
//! | `validate` | `nodes.rs` | the spec's local-data sequence (re-verification: deinit first), the validator |
//! | `meta` | `meta.rs` | meta formats applied: virtual outputs completed, real ones checked |
//! | `aliasing` | `aliasing.rs` | the node's alias hints decided (same meta; sparse before dense) |
//! | `tiling` | `nodes.rs` | tiling nodes: the extension's checks, the tile plan and arenas |
//! | `targets` | `nodes.rs` | where the node runs: its target, the implementation it runs there |
//! | `init` | `nodes.rs` | the kernel's init (or create), on the node's target; then its local data and control port |
//! | `valid regions` | `valid_regions.rs` | output valid rectangles (every node, re-verified or not) |
//!
//! Adding a pass is one file and one line in [`GRAPH_PASSES`] or [`NODE_PASSES`]. Verification is
//! full (explicit `verify`: every node) or incremental (automatic at process: only nodes never
//! verified, with a re-verification trigger, or whose inputs' meta data changed in this run). After
//! a module reload and nothing else, `rebound.rs` re-verifies only the rebound nodes and runs the
//! graph passes only if what they read changed.

mod aliasing;
mod buffers;
mod dataflow;
mod frames;
mod fusion;
mod memory_plan;
mod meta;
mod nodes;
mod overlap;
mod params;
pub(crate) mod pass_times;
mod rebound;
mod run_order;
mod scratch;
mod valid_regions;

use crate::data::reference::Reference;
use crate::error::{Error, Result};
use crate::graph::{ActiveGuard, Graph, GraphBody, GraphInner, GraphState, NodeSlot};
use crate::kernel::meta_format::MetaFormats;

pub use aliasing::AliasDecision;
pub(crate) use frames::FrameSlots;
pub(crate) use memory_plan::PlanState;
pub use memory_plan::{MemoryPlan, PlannedBuffer};
pub use rebound::check_always;
pub(crate) use rebound::{Products, Rebound, check_in_place_rebind, note_input_replaced, reverify_rebound};
pub use scratch::{KernelMemoryUse, NodeMemoryUse};

/// A pass over the whole graph.
pub(super) struct GraphPass {
    /// The pass's name (in logs and tests).
    pub(super) name: &'static str,
    pub(super) run: fn(&mut Verification<'_>, &mut GraphBody) -> Result<()>,
}

/// A pass over one node, run by the `nodes` graph pass in schedule order.
pub(super) struct NodePass {
    /// The pass's name (in logs and tests).
    pub(super) name: &'static str,
    /// Also run on nodes that are not re-verified in an incremental verification.
    pub(super) always: bool,
    pub(super) run: fn(&mut Verification<'_>, &mut NodeSlot, &mut NodeVerification) -> Result<()>,
}

/// The graph passes, in order.
pub(super) const GRAPH_PASSES: &[GraphPass] = &[
    GraphPass { name: "parameters", run: params::run },
    GraphPass { name: "dataflow", run: dataflow::run },
    GraphPass { name: "alias candidates", run: aliasing::candidates },
    GraphPass { name: "nodes", run: nodes::run },
    GraphPass { name: "scratch arenas", run: scratch::run },
    GraphPass { name: "alias binding", run: aliasing::bind },
    GraphPass { name: "fusion", run: fusion::run },
    GraphPass { name: "memory plan", run: memory_plan::run },
    GraphPass { name: "buffers", run: buffers::run },
    GraphPass { name: "frame slots", run: frames::run },
];

/// The node passes, in order.
pub(super) const NODE_PASSES: &[NodePass] = &[
    NodePass { name: "validate", always: false, run: nodes::validate },
    NodePass { name: "meta", always: false, run: meta::run },
    NodePass { name: "aliasing", always: true, run: aliasing::decide },
    NodePass { name: "tiling", always: false, run: nodes::tiling },
    NodePass { name: "targets", always: false, run: nodes::targets },
    NodePass { name: "init", always: false, run: nodes::init },
    NodePass { name: "valid regions", always: true, run: valid_regions::run },
];

/// What the passes of one verification share.
pub(super) struct Verification<'g> {
    pub(super) graph: &'g GraphInner,
    /// The graph's name, for errors.
    pub(super) gname: String,
    /// Re-verify every node (explicit `verify`), not only those that need it.
    pub(super) full: bool,
    /// Indices of the graph's live nodes, in creation order.
    pub(super) live: Vec<usize>,
    /// Every output parameter: (node, parameter index, object) — from `dataflow`.
    pub(super) writers: Vec<(usize, usize, Reference)>,
    /// `writers` by overlap: the position in `writers` of each — from `dataflow`.
    writer_index: overlap::OverlapIndex<usize>,
    /// Node indices by level: every node's producers are in earlier levels — from `dataflow`.
    pub(super) schedule: Vec<Vec<usize>>,
    /// Per node index, the nodes it reads from in a frame (the dataflow edges into it) — from `dataflow`.
    pub(super) producers: Vec<Vec<usize>>,
    /// Objects whose meta data changed in this verification (their readers are re-verified).
    changed: overlap::OverlapIndex<()>,
    /// The topology verdicts on each node's alias hints, by node index (empty: no hints) — from
    /// `alias candidates`.
    pub(super) alias_topology: Vec<aliasing::Topology>,
    /// By node index: already verified in this verification (`rebound.rs`); the `nodes` pass
    /// skips them. Empty: none.
    pub(super) preverified: Vec<bool>,
}

/// Where a verification starts when another path already verified some nodes (`rebound.rs`).
struct Seed {
    /// Objects whose meta data changed (their readers are re-verified).
    changed: overlap::OverlapIndex<()>,
    /// By node index: verified already.
    preverified: Vec<bool>,
}

/// What the node passes of one node share.
#[derive(Default)]
pub(super) struct NodeVerification {
    /// The node's index in the graph.
    pub(super) node: usize,
    /// The meta formats the validator filled (one per output) — from `validate`.
    pub(super) metas: Option<MetaFormats>,
}

impl<'g> Verification<'g> {
    /// A verification of `body` starting from nothing (`live`: list the live nodes, which every
    /// graph pass needs).
    pub(super) fn new(graph: &'g GraphInner, body: &GraphBody, full: bool, live: bool) -> Self {
        Verification {
            graph,
            gname: graph.name(),
            full,
            live: if live {
                body.nodes.iter().enumerate().filter_map(|(i, n)| n.as_ref().map(|_| i)).collect()
            } else {
                Vec::new()
            },
            writers: Vec::new(),
            writer_index: Default::default(),
            schedule: Vec::new(),
            producers: Vec::new(),
            changed: Default::default(),
            alias_topology: Default::default(),
            preverified: Vec::new(),
        }
    }

    /// What the next proportional re-verification reuses.
    pub(super) fn into_products(self) -> Products {
        Products {
            writers: self.writers,
            writer_index: self.writer_index,
            producers: self.producers,
            alias_topology: self.alias_topology,
        }
    }

    /// `e` with the node's kernel, node and graph named.
    pub(super) fn at(&self, slot: &NodeSlot, e: Error) -> Error {
        e.in_kernel(&slot.kernel.name).in_node(&slot.name).in_graph(&self.gname)
    }

    /// The nodes in schedule order.
    pub(super) fn order(&self) -> Vec<usize> {
        self.schedule.iter().flatten().copied().collect()
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

/// Verify the graph: every pass of [`GRAPH_PASSES`] in order. `full`: re-verify every node
/// (explicit `verify`); otherwise only the nodes that need it (automatic re-verification).
pub(super) fn verify_body(g: &GraphInner, body: &mut GraphBody, full: bool) -> Result<()> {
    verify_until(g, body, full, None, None)
}

/// Run the graph passes up to and including the one named `last` (all of them when `None`),
/// starting from `seed` if another path verified some nodes already.
fn verify_until(
    g: &GraphInner,
    body: &mut GraphBody,
    full: bool,
    last: Option<&str>,
    seed: Option<Seed>,
) -> Result<()> {
    let _active = ActiveGuard::enter(g.id);
    body.invalidate();
    let mut v = Verification::new(g, body, full, true);
    if let Some(seed) = seed {
        v.changed = seed.changed;
        v.preverified = seed.preverified;
    }
    let _span = tracing::info_span!("verify", graph = %v.gname, full).entered();
    for pass in GRAPH_PASSES {
        let _pass = tracing::debug_span!("verify_pass", pass = pass.name).entered();
        let timer = pass_times::start("", pass.name);
        (pass.run)(&mut v, body)?;
        pass_times::stop(timer);
        if last == Some(pass.name) {
            body.schedule = std::mem::take(&mut v.schedule);
            return Ok(());
        }
    }
    body.schedule = std::mem::take(&mut v.schedule);
    for n in body.nodes.iter_mut().flatten() {
        n.dirty = false;
    }
    body.verified = true;
    body.state = GraphState::Verified;
    tracing::debug!(graph = %v.gname, nodes = v.live.len(), levels = body.schedule.len(), "graph verified");
    body.products = Some(v.into_products());
    Ok(())
}

#[cfg(test)]
pub(super) mod testkit {
    //! Small graphs for the passes' unit tests: kernels with a U8 input and a U8 output image.

    use crate::{
        Context, DataType, Graph, Image, ImageFormat, Kernel, KernelBuilder, MetaFormat, MetaFormats, ParamDirection,
        ParamState, Result, ValidateContext,
    };

    /// The usual validator: input 0 is U8; output 1 is U8 of its size. Returns the output's meta
    /// format, for callers that add to it.
    pub(super) fn same_size_u8<'m>(v: &ValidateContext<'_>, metas: &'m mut MetaFormats) -> Result<&'m mut MetaFormat> {
        let i = v.expect_image_format(0, ImageFormat::U8)?;
        metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())
    }

    /// A finalized kernel `name` (U8 image in at 0, out at 1) with what `build` adds (a validator,
    /// init, …) and a process that does nothing.
    pub(super) fn u8_kernel(
        ctx: &Context,
        name: &str,
        build: impl for<'c> FnOnce(KernelBuilder<'c>) -> KernelBuilder<'c>,
    ) -> Kernel {
        u8_kernel_hinted(ctx, name, build, None)
    }

    /// Like [`u8_kernel`] with the usual validator and an alias hint (0, 1) of `kind`.
    pub(super) fn u8_kernel_with_hint(ctx: &Context, name: &str, kind: crate::AliasKind) -> Kernel {
        u8_kernel_hinted(ctx, name, |b| b.validate(|v, metas| same_size_u8(v, metas).map(|_| ())), Some(kind))
    }

    fn u8_kernel_hinted(
        ctx: &Context,
        name: &str,
        build: impl for<'c> FnOnce(KernelBuilder<'c>) -> KernelBuilder<'c>,
        hint: Option<crate::AliasKind>,
    ) -> Kernel {
        let b = ctx.user_kernel(name, ctx.allocate_user_kernel_id().expect("id"), 2).process(|_| Ok(()));
        let k = build(b).add().expect("kernel");
        k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).expect("p0");
        k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).expect("p1");
        if let Some(kind) = hint {
            k.alias_parameter_index_hint(0, 1, kind).expect("hint");
        }
        k.finalize().expect("finalize");
        k
    }

    /// A one-thread context with a finalized `test.copy` kernel.
    pub(super) fn copy_kernel() -> (Context, Kernel) {
        let ctx = Context::builder().threads(1).build().expect("context");
        let k = u8_kernel(&ctx, "test.copy", |b| b.validate(|v, metas| same_size_u8(v, metas).map(|_| ())));
        (ctx, k)
    }

    /// `image → k → virtual → k → image` in `g`; returns the virtual image.
    pub(super) fn virtual_chain(ctx: &Context, g: &Graph, k: &Kernel) -> Image {
        let v = Image::new_virtual(g, 0, 0, ImageFormat::Virtual).expect("virtual");
        g.add_node(k, [&image(ctx), &v]).expect("node 0");
        g.add_node(k, [&v, &image(ctx)]).expect("node 1");
        v
    }

    /// Run the graph passes of `graph` up to and including `last`.
    pub(super) fn run_until(graph: &Graph, last: &str) -> Result<()> {
        let mut body = graph.inner.lock()?;
        super::verify_until(&graph.inner, &mut body, true, Some(last), None)
    }

    /// An 8×8 U8 image.
    pub(super) fn image(ctx: &Context) -> Image {
        Image::new(ctx, 8, 8, ImageFormat::U8).expect("image")
    }
}
