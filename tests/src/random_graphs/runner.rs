//! Build a [`GraphSpec`] in vx-rs, run it frame by frame (or pipelined), re-verify it through
//! random steps, try its illegal construct, and compare everything with the reference.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use vx::*;

use super::checks;
use super::kernels::{self, NodeCounters, Shared};
use super::reference::{self, Plane, processed};
use super::rng::{self, Rng};
use super::spec::*;
use super::{Options, Progress, Stats};
use crate::kinds;

/// Why a seed failed: where (the step) and what.
#[derive(Debug)]
pub struct Fail {
    /// The step or frame.
    pub step: String,
    /// What went wrong.
    pub what: String,
}

type R<T> = std::result::Result<T, Fail>;

/// Turn a vx-rs error of a legal operation into a failure.
trait Ctx<T> {
    fn at(self, step: &str, what: &str) -> R<T>;
}

impl<T> Ctx<T> for Result<T> {
    fn at(self, step: &str, what: &str) -> R<T> {
        self.map_err(|e| Fail { step: step.to_string(), what: format!("{what} failed on a legal graph: {e}") })
    }
}

fn fail<T>(step: &str, what: String) -> R<T> {
    Err(Fail { step: step.to_string(), what })
}

/// A payload chain built in vx-rs.
struct LivePayload {
    /// Input, intermediates, output.
    objects: Vec<Reference>,
    /// The copy nodes.
    nodes: Vec<Node>,
    /// Queued (pipelined): the input's and the output's graph parameters and references.
    queues: Option<PayloadQueues>,
}

struct PayloadQueues {
    gp_in: u32,
    gp_out: u32,
    ins: Vec<Reference>,
    outs: Vec<Reference>,
}

struct LiveQueue {
    gparam: u32,
    img: ImgId,
    refs: Vec<Image>,
    input: bool,
}

/// A graph built in vx-rs from its spec.
pub struct Runner {
    spec: GraphSpec,
    plant: bool,
    strict: bool,
    rng: Rng,
    ctx: Context,
    graph: Graph,
    images: Vec<Option<Image>>,
    scalars: Vec<Scalar>,
    nodes: Vec<Option<Node>>,
    counters: Vec<Arc<NodeCounters>>,
    /// Validator keys set by reloads (node → key; otherwise `kernels::build`'s).
    keys: std::collections::HashMap<usize, u64>,
    shared: Arc<Shared>,
    queues: Vec<LiveQueue>,
    payloads: Vec<LivePayload>,
    /// The generic copy kernel of each data type (payload chains).
    copy_kernels: std::collections::HashMap<DataType, Kernel>,
    /// Graph parameters added by replacement steps: (node, parameter) → graph parameter.
    gparams: Vec<((usize, u32), u32)>,
    /// The reference state after the last sequential frame (pixels carried to the next).
    carry: Option<reference::State>,
    /// Frame keys so far (inputs differ in every frame).
    key: u64,
    /// The next pipelined frame number expected from `dequeue`.
    frame_no: u64,
    progress: Arc<Mutex<Progress>>,
    /// The most nodes fused in one run of the graph so far, and the groups they formed then.
    fused: (u64, u64, u64),
    /// Groups on a named target, materialized images and members leaving pixels unprocessed
    /// (the run with the most).
    fused_more: (u64, u64, u64),
    /// Statistics.
    pub stats: Stats,
}

/// How a pixel mismatch names a writer of the image that ran in a fused group (the binary counts
/// them).
pub const FUSED_WRITER: &str = "ran fused, in group";

const OUTPUT_PARENT_KEY: u64 = 0xFFFF_FFFF;
/// The key of real images' initial pixels.
const REAL_INIT_KEY: u64 = 0xAB_CDEF;

impl Runner {
    fn log(&self, line: String) {
        self.progress.lock().unwrap_or_else(|p| p.into_inner()).log.push(line);
    }

    /// Pixels of application root `root` in frame `key` (output parents: constant).
    fn content(&self, root: ImgId, key: u64) -> Vec<u8> {
        let im = &self.spec.images[root];
        let key = if self.is_output_parent(root) { OUTPUT_PARENT_KEY } else { key };
        rng::pixels(self.spec.seed, ((root as u64) << 32) | key, (im.w * im.h) as usize)
    }

    fn is_output_parent(&self, p: ImgId) -> bool {
        (0..self.spec.images.len()).any(|c| {
            matches!(self.spec.images[c].kind, ImgKind::Roi { parent, .. } if parent == p)
                && self.spec.writer(c).is_some()
        })
    }

    fn new_image(&mut self, w: u32, h: u32, kind: ImgKind) -> ImgId {
        let id = self.spec.images.len();
        self.spec.images.push(ImgSpec { name: format!("img{id}"), w, h, kind });
        self.images.push(None);
        id
    }

    fn image(&self, i: ImgId) -> &Image {
        self.images[i].as_ref().expect("image created")
    }

    /// Create image `i` in vx-rs (and fill it when it is the application's).
    fn create_image(&mut self, i: ImgId) -> Result<()> {
        let im = self.spec.images[i].clone();
        let img = match im.kind {
            ImgKind::Input | ImgKind::Parent | ImgKind::Real => {
                let img = Image::new(&self.ctx, im.w, im.h, ImageFormat::U8)?;
                let key = if im.kind == ImgKind::Real { REAL_INIT_KEY } else { self.key };
                img.copy_from(Rect::full(im.w, im.h), 0, &self.content(i, key))?;
                img
            }
            ImgKind::Virtual(d) => match d {
                Declared::Nothing => Image::new_virtual(&self.graph, 0, 0, ImageFormat::Virtual)?,
                Declared::Format => Image::new_virtual(&self.graph, 0, 0, ImageFormat::U8)?,
                Declared::Full => Image::new_virtual(&self.graph, im.w, im.h, ImageFormat::U8)?,
            },
            ImgKind::Roi { parent, x, y } => self.image(parent).roi(Rect::new(x, y, x + im.w, y + im.h))?,
        };
        img.set_name(&im.name);
        self.images[i] = Some(img);
        Ok(())
    }

    /// Build the kernel and node of spec node `n` (already in the spec).
    fn create_node(&mut self, n: usize) -> Result<Node> {
        let node = self.spec.nodes[n].clone();
        let out = &self.spec.images[node.output];
        while self.counters.len() <= n {
            self.counters.push(Arc::default());
        }
        let kernel = kernels::build(
            &self.ctx,
            &format!("rg{}", self.spec.seed),
            n,
            &node,
            (out.w, out.h),
            self.shared.clone(),
            self.counters[n].clone(),
        )?;
        let params: Vec<Reference> = (0..node.op.num_params())
            .map(|p| match node.image_param(p) {
                Some(img) => Reference::from(self.image(img)),
                None => Reference::from(&self.scalars[node.scalar.expect("scalar")]),
            })
            .collect();
        let v = self.graph.add_node(&kernel, params)?;
        v.set_name(&node.name)?;
        if let Some(t) = &node.target {
            v.set_target(t)?;
        }
        if let Some(b) = node.tiling.as_ref().and_then(|t| t.node_border) {
            v.set_border(b.mode())?;
        }
        while self.nodes.len() <= n {
            self.nodes.push(None);
        }
        self.nodes[n] = Some(v.clone());
        Ok(v)
    }

    /// Context, images, scalars, kernels, nodes.
    pub fn new(spec: GraphSpec, options: Options, progress: Arc<Mutex<Progress>>) -> R<Runner> {
        let mut b = Context::builder()
            .threads(spec.threads)
            .memory_plan(spec.memory_plan)
            .aliasing(spec.aliasing)
            .fusion(spec.fusion);
        for (name, threads) in &spec.targets {
            b = b.target(TargetConfig::new(name).threads(*threads));
        }
        if spec.small_tiles {
            b = b.tiling_policy(TilingPolicy {
                cache_budget_bytes: 512,
                min_tiles_per_thread: 4,
                min_tile_pixels: 1,
                min_parallel_pixels: 0,
                split_by_cost: false,
                ..TilingPolicy::default()
            });
        }
        let ctx = b.build().at("build", "Context::build")?;
        let graph = Graph::with_name(&ctx, &format!("random graph {}", spec.seed)).at("build", "Graph::new")?;
        let n_images = spec.images.len();
        let mut r = Runner {
            rng: Rng::new(spec.seed, 2),
            spec,
            plant: options.plant,
            strict: options.strict_plan,
            ctx,
            graph,
            images: vec![None; n_images],
            scalars: Vec::new(),
            nodes: Vec::new(),
            counters: Vec::new(),
            keys: Default::default(),
            shared: Arc::default(),
            queues: Vec::new(),
            payloads: Vec::new(),
            copy_kernels: Default::default(),
            gparams: Vec::new(),
            carry: None,
            key: 0,
            frame_no: 0,
            progress,
            fused: (0, 0, 0),
            fused_more: (0, 0, 0),
            stats: Stats::default(),
        };
        for i in 0..n_images {
            r.create_image(i).at("build", &format!("creating image {}", r.spec.images[i].name))?;
        }
        for &v in &r.spec.scalars.clone() {
            r.scalars.push(Scalar::new(&r.ctx, ScalarValue::Uint8(v)).at("build", "Scalar::new")?);
        }
        for n in 0..r.spec.nodes.len() {
            r.create_node(n).at("build", &format!("creating node {}", r.spec.nodes[n].name))?;
        }
        for p in 0..r.spec.payloads.len() {
            let label = format!("creating payload p{p} ({})", r.spec.payloads[p].label());
            r.create_payload(p).at("build", &label)?;
        }
        Ok(r)
    }

    /// An object of payload chain `p`'s type: real, or virtual in the graph.
    fn payload_object(&self, p: usize, virtual_: bool) -> Result<Reference> {
        let chain = &self.spec.payloads[p];
        Ok(match (chain.in_array, virtual_) {
            (false, false) => kinds::sample(&self.ctx, chain.kind),
            (false, true) => kinds::sample_virtual(&self.graph, chain.kind),
            (true, false) => ObjectArray::new(&self.ctx, kinds::sample(&self.ctx, chain.kind), 2)?.into(),
            (true, true) => ObjectArray::new_virtual(&self.graph, kinds::sample(&self.ctx, chain.kind), 2)?.into(),
        })
    }

    /// Objects, copy kernel and copy nodes of payload chain `p`.
    fn create_payload(&mut self, p: usize) -> Result<()> {
        let chain = self.spec.payloads[p].clone();
        let t = chain.data_type();
        let kernel = match self.copy_kernels.get(&t) {
            Some(k) => k.clone(),
            None => {
                let name = format!("rg{}.payload_copy.{:#x}", self.spec.seed, t.code());
                let k = kinds::copy_kernel(&self.ctx, &name, t)?;
                self.copy_kernels.insert(t, k.clone());
                k
            }
        };
        let mut objects = vec![self.payload_object(p, false)?];
        for &v in &chain.virtual_mid {
            objects.push(self.payload_object(p, v)?);
        }
        objects.push(self.payload_object(p, false)?);
        let mut nodes = Vec::new();
        for k in 0..chain.copies() {
            let node = self.graph.add_node(&kernel, [objects[k].clone(), objects[k + 1].clone()])?;
            node.set_name(&format!("p{p}_copy{k}"))?;
            if let Some(t) = &chain.targets[k] {
                node.set_target(t)?;
            }
            nodes.push(node);
        }
        self.payloads.push(LivePayload { objects, nodes, queues: None });
        self.stats.payload_chains += 1;
        let index = DataType::ALL.iter().position(|&k| k == chain.kind).expect("a listed kind");
        self.stats.payload_kinds |= 1 << index;
        Ok(())
    }

    /// The seed of payload chain `p`'s input contents in frame `key`.
    fn payload_seed(&self, p: usize, key: u64) -> u64 {
        rng::mix(self.spec.seed ^ rng::mix(((p as u64) << 40) ^ key ^ 0x7061_796C))
    }

    /// Fill the (shared) input of every payload chain but the queued ones for frame `key`: the
    /// digests the reference gives each chain's objects.
    fn fill_payloads(&self, label: &str, key: u64) -> R<Vec<Vec<u64>>> {
        let mut wants = Vec::new();
        for (p, live) in self.payloads.iter().enumerate() {
            let chain = &self.spec.payloads[p];
            if live.queues.is_some() {
                wants.push(Vec::new());
                continue;
            }
            let d = kinds::fill(&live.objects[0], self.payload_seed(p, key))
                .at(label, &format!("filling payload p{p} ({})", chain.label()))?;
            wants.push(reference::payload(chain, d));
        }
        Ok(wants)
    }

    /// Compare the real objects of every payload chain with `wants` (the reference's digests; a
    /// chain without is skipped); queued chains only when `queued_too`, and then not their input
    /// and output (the queues' references are compared as they are dequeued).
    fn check_payloads(&mut self, label: &str, wants: &[Vec<u64>], queued_too: bool) -> R<()> {
        for (p, live) in self.payloads.iter().enumerate() {
            let chain = &self.spec.payloads[p];
            let queued = live.queues.is_some();
            if queued && !queued_too || wants[p].is_empty() {
                continue;
            }
            for (j, o) in live.objects.iter().enumerate() {
                let end = j == 0 || j == live.objects.len() - 1;
                if o.is_virtual() || queued && end {
                    continue;
                }
                let got = kinds::digest(o).at(label, &format!("reading payload p{p} ({})", chain.label()))?;
                if got != wants[p][j] {
                    return fail(
                        label,
                        format!(
                            "payload p{p} ({}, {} copy node(s)): object {j} ('{}') holds other contents than the \
                             chain's input (digest {got:#x}, want {:#x})",
                            chain.label(),
                            chain.copies(),
                            o.name(),
                            wants[p][j]
                        ),
                    );
                }
                self.stats.payload_digests += 1;
            }
        }
        Ok(())
    }

    /// The names of each payload chain's objects, input first (for the memory plan check).
    fn payload_names(&self) -> Vec<Vec<String>> {
        self.payloads.iter().map(|l| l.objects.iter().map(Reference::name).collect()).collect()
    }

    /// The whole scenario of the seed.
    pub fn run(mut self) -> R<Stats> {
        if self.spec.pipelined() {
            self.setup_queues()?;
        } else if let Some(kind) = self.spec.illegal {
            self.illegal(kind)?;
        }
        if self.spec.explicit_verify {
            self.graph.verify().at("verify", "Graph::verify")?;
        }
        self.run_frames("initial run")?;
        for s in 0..self.spec.steps {
            let label = self.step(s)?;
            self.run_frames(&label)?;
        }
        self.stats.graphs += 1;
        if self.spec.fusion {
            self.stats.fusion_graphs += 1;
        }
        if self.fused.0 > 0 {
            self.stats.fused_graphs += 1;
            self.stats.fused_nodes += self.fused.0;
            self.stats.fused_groups += self.fused.1;
            self.stats.fused_row_nodes += self.fused.2;
            self.stats.fused_pipelined_graphs += u64::from(self.spec.pipelined());
            self.stats.fused_groups_on_targets += self.fused_more.0;
            self.stats.materialized_images += self.fused_more.1;
            self.stats.fused_unprocessed += self.fused_more.2;
        }
        self.stats.row_entry_calls += self.shared.row_calls.load(std::sync::atomic::Ordering::SeqCst);
        Ok(self.stats)
    }

    fn setup_queues(&mut self) -> R<()> {
        let Exec::Pipelined { manual, depth } = self.spec.exec else { return Ok(()) };
        let mut config =
            if manual { ScheduleConfig::queue_manual() } else { ScheduleConfig::queue_auto() }.depth(depth);
        for q in self.spec.queues.clone() {
            let node = self.nodes[q.node].clone().expect("node");
            let gparam = self.graph.add_parameter(&node, q.param).at("queues", "Graph::add_parameter")?;
            let im = self.spec.images[q.img].clone();
            let mut refs = Vec::new();
            for k in 0..q.refs {
                if k == 0 && q.with_exemplar {
                    refs.push(self.image(q.img).clone());
                } else {
                    let r = Image::new(&self.ctx, im.w, im.h, ImageFormat::U8).at("queues", "Image::new")?;
                    r.set_name(&format!("{}_ref{k}", im.name));
                    refs.push(r);
                }
            }
            config = config.queue(gparam, refs.clone());
            self.queues.push(LiveQueue { gparam, img: q.img, refs, input: im.kind == ImgKind::Input });
        }
        for p in 0..self.payloads.len() {
            if !self.spec.payloads[p].queued {
                continue;
            }
            let label = format!("queues of payload p{p} ({})", self.spec.payloads[p].label());
            let (first, last) =
                (self.payloads[p].nodes[0].clone(), self.payloads[p].nodes.last().expect("a node").clone());
            let gp_in = self.graph.add_parameter(&first, 0).at(&label, "Graph::add_parameter")?;
            let gp_out = self.graph.add_parameter(&last, 1).at(&label, "Graph::add_parameter")?;
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            for _ in 0..depth {
                ins.push(self.payload_object(p, false).at(&label, "a queued reference")?);
                outs.push(self.payload_object(p, false).at(&label, "a queued reference")?);
            }
            config = config.queue(gp_in, ins.clone()).queue(gp_out, outs.clone());
            self.payloads[p].queues = Some(PayloadQueues { gp_in, gp_out, ins, outs });
        }
        if self.spec.illegal == Some(Illegal::BadQueue) {
            self.bad_queue()?;
        }
        self.graph.set_schedule_config(config).at("queues", "Graph::set_schedule_config")?;
        if self.spec.illegal == Some(Illegal::BadQueue) {
            let im = &self.spec.images[self.queues[0].img];
            let stranger = Image::new(&self.ctx, im.w, im.h, ImageFormat::U8).at("queues", "Image::new")?;
            if self.graph.enqueue(self.queues[0].gparam, &stranger).is_ok() {
                return fail("illegal: pipelining misuse", "enqueue accepted a reference not in the queue".into());
            }
            self.stats.illegal_refused += 1;
        }
        Ok(())
    }

    /// Application roots compared after a frame: inputs (unchanged), real outputs, parents.
    fn observable_roots(&self) -> Vec<ImgId> {
        let mut roots: Vec<ImgId> = self
            .spec
            .used_images()
            .into_iter()
            .map(|i| self.spec.root_of(i).0)
            .filter(|&r| !self.spec.is_virtual(r))
            .filter(|&r| !self.queues.iter().any(|q| q.img == r))
            .collect();
        roots.sort_unstable();
        roots.dedup();
        roots
    }

    /// Application roots the application fills each frame.
    fn input_roots(&self) -> Vec<ImgId> {
        self.observable_roots()
            .into_iter()
            .filter(|&r| match self.spec.images[r].kind {
                ImgKind::Input => true,
                ImgKind::Parent => !self.is_output_parent(r),
                _ => false,
            })
            .collect()
    }

    fn compare(&self, label: &str, img: ImgId, got: &[u8], want: &Plane) -> R<()> {
        let im = &self.spec.images[img];
        if got.len() != want.px.len() {
            return fail(label, format!("{} has {} pixels, want {}", im.name, got.len(), want.px.len()));
        }
        let mut first = None;
        let mut bad = 0usize;
        for (i, (&g, (&w, &d))) in got.iter().zip(want.px.iter().zip(&want.def)).enumerate() {
            if d && g != w {
                bad += 1;
                first.get_or_insert((i as u32 % want.w, i as u32 / want.w, g, w));
            }
        }
        if let Some((x, y, g, w)) = first {
            let defined = want.def.iter().filter(|&&d| d).count();
            // The writers of the image's pixels: its own, or (a parent) those of its ROIs.
            let writers: Vec<String> = self
                .spec
                .live()
                .filter(|&n| self.spec.root_of(self.spec.nodes[n].output).0 == img)
                .map(|n| self.spec.nodes[n].name.clone())
                .collect();
            let writer = if writers.is_empty() { "no node".to_string() } else { writers.join(", ") };
            return fail(
                label,
                format!(
                    "pixel mismatch in {} ({}x{}, {:?}, written by {writer}): first at ({x}, {y}): got {g}, want {w}; \
                     {bad} of {defined} defined pixels differ{}",
                    im.name,
                    im.w,
                    im.h,
                    im.kind,
                    self.fusion_note(&writers)
                ),
            );
        }
        Ok(())
    }

    /// For a failure message: the graph's fused groups, if any, and whether one of `writers` is in
    /// one.
    fn fusion_note(&self, writers: &[String]) -> String {
        let Ok(report) = self.graph.fusion_report() else { return String::new() };
        if report.groups.is_empty() {
            return String::new();
        }
        let groups: Vec<String> = report
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| format!("g{i}: {} (fused images {})", g.nodes.join(" -> "), g.fused_images.join(", ")))
            .collect();
        let at = report.groups.iter().position(|g| g.nodes.iter().any(|n| writers.contains(n)));
        format!(
            "; fusion: {} group(s) [{}], a writer {}",
            groups.len(),
            groups.join("; "),
            at.map_or("not fused".to_string(), |i| format!("{FUSED_WRITER} g{i}"))
        )
    }

    /// Images written through an honoured alias hint (their bytes are also an input's).
    fn aliased_outputs(&self, label: &str) -> R<Vec<ImgId>> {
        let decisions = self.graph.alias_decisions().at(label, "Graph::alias_decisions")?;
        Ok(decisions
            .iter()
            .filter(|d| d.aliased)
            .filter_map(|d| {
                let n = self.spec.live().find(|&n| self.spec.nodes[n].name == d.node)?;
                self.spec.nodes[n].image_param(d.output)
            })
            .collect())
    }

    fn read(&self, label: &str, img: &Image) -> R<Vec<u8>> {
        img.to_vec::<u8>().at(label, "Image::to_vec")
    }

    fn reset_counters(&self) {
        for c in &self.counters {
            c.runs.store(0, std::sync::atomic::Ordering::SeqCst);
            c.area.store(0, std::sync::atomic::Ordering::SeqCst);
            c.rows.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        self.shared.seen.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.shared.violations.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// After a run of `frames` frames: no kernel saw a broken promise, every node ran once per
    /// frame and computed each of its pixels once (a member whose output lives in rings: each row
    /// its readers need once, others at most once; bands: up to three times), alias decisions and
    /// memory plan are sound.
    fn after_run(&mut self, label: &str, frames: u64) -> R<()> {
        let v = self.shared.violations.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(first) = v.first() {
            return fail(label, format!("a kernel saw a broken promise: {first} ({} in all)", v.len()));
        }
        // Nodes of fused groups that threads share in bands: each band recomputes the few rows
        // where it meets the next, so such a node computes its pixels at least once (and, with
        // bands of at least 16 rows, not three times over).
        let fused_report = self.graph.fusion_report().at(label, "Graph::fusion_report")?;
        let banded: Vec<&str> = fused_report
            .groups
            .iter()
            .filter(|g| g.threads > 1)
            .flat_map(|g| g.nodes.iter().map(String::as_str))
            .collect();
        // A member whose output lives in line buffers computes only the rows its readers need (at
        // least those, at most its processed rows): the rest of a fused image nobody can see.
        let index = |name: &str| self.spec.live().find(|&n| self.spec.nodes[n].name == name);
        let groups: Vec<Vec<usize>> =
            fused_report.groups.iter().map(|g| g.nodes.iter().filter_map(|m| index(m)).collect()).collect();
        let fused_images: Vec<String> = fused_report.groups.iter().flat_map(|g| g.fused_images.clone()).collect();
        let needed = reference::fused_needed_rows(&self.spec, &groups, &fused_images);
        for n in self.spec.live().collect::<Vec<_>>() {
            let node = &self.spec.nodes[n];
            let c = &self.counters[n];
            let out = &self.spec.images[node.output];
            if node.tiling.is_some() {
                let (x0, y0, x1, y1) = processed(node.tiling.as_ref(), node.nb, out.w, out.h);
                let want = (x1 - x0) as u64 * (y1 - y0) as u64 * frames;
                let least = match &needed[n] {
                    Some(rows) => (x1 - x0) as u64 * rows.iter().filter(|&&r| r).count() as u64 * frames,
                    None => want,
                };
                let got = c.area.load(std::sync::atomic::Ordering::SeqCst);
                let in_bands = banded.contains(&node.name.as_str());
                let right = if in_bands { (least..=3 * want).contains(&got) } else { (least..=want).contains(&got) };
                // Row by row for a member whose output lives in rings: every row its readers need
                // computed, none outside its processed rows, and on one band each row it computes
                // once per frame (bands recompute the rows where they meet: at most three times).
                if let (Some(need), true) = (&needed[n], right) {
                    let rows = c.rows.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    let once = (x1 - x0) as u64 * frames;
                    for y in 0..out.h {
                        let got = rows.get(y as usize).copied().unwrap_or(0);
                        let inside = (y0..y1).contains(&y);
                        let ok = if !inside {
                            got == 0
                        } else if need[y as usize] {
                            if in_bands { (once..=3 * once).contains(&got) } else { got == once }
                        } else if in_bands {
                            got <= 3 * once
                        } else {
                            got == 0 || got == once
                        };
                        if !ok {
                            return fail(
                                label,
                                format!(
                                    "fused node {} computed {got} pixels of its row {y} over {frames} frame(s): \
                                     its processed rows are [{y0}, {y1}), {} per frame, {}needed by its readers{}",
                                    node.name,
                                    x1 - x0,
                                    if need[y as usize] { "" } else { "not " },
                                    if in_bands { " (bands)" } else { "" }
                                ),
                            );
                        }
                    }
                }
                if !right {
                    return fail(
                        label,
                        format!(
                            "tiling node {} computed {got} output pixels over {frames} frame(s), the tiling tables \
                             say {want} ([{x0}, {x1}) x [{y0}, {y1}) per frame){}",
                            node.name,
                            if least < want { format!(", of which its readers need {least}") } else { String::new() }
                        ),
                    );
                }
            } else {
                let got = c.runs.load(std::sync::atomic::Ordering::SeqCst);
                if got != frames {
                    return fail(label, format!("node {} ran {got} time(s) in {frames} frame(s)", node.name));
                }
            }
        }
        let decisions = self.graph.alias_decisions().at(label, "Graph::alias_decisions")?;
        let plan = self.graph.memory_plan().at(label, "Graph::memory_plan")?;
        let report = self.graph.fusion_report().at(label, "Graph::fusion_report")?;
        let groups = checks::fusion_report(&self.spec, &report, &decisions, &plan)
            .map_err(|e| Fail { step: label.to_string(), what: format!("fusion report: {e}\n  report: {report}") })?;
        self.stats.fusion_reports_checked += 1;
        let fused_nodes = groups.iter().map(Vec::len).sum::<usize>() as u64;
        let row_nodes = groups
            .iter()
            .flatten()
            .filter(|&&n| self.spec.nodes[n].tiling.as_ref().is_some_and(|t| t.rows.is_some()))
            .count() as u64;
        self.fused = self.fused.max((fused_nodes, groups.len() as u64, row_nodes));
        let on_target = |n: usize| self.spec.nodes[n].target.as_deref().is_some_and(|t| t != vx::HOST_TARGET);
        let targeted = groups.iter().filter(|g| on_target(g[0])).count() as u64;
        let materialized = report.groups.iter().map(|g| g.materialized_images.len() as u64).sum::<u64>();
        let unprocessed = groups
            .iter()
            .flatten()
            .filter(|&&n| {
                let node = &self.spec.nodes[n];
                let out = &self.spec.images[node.output];
                processed(node.tiling.as_ref(), node.nb, out.w, out.h) != (0, 0, out.w, out.h)
            })
            .count() as u64;
        self.fused_more =
            (self.fused_more.0.max(targeted), self.fused_more.1.max(materialized), self.fused_more.2.max(unprocessed));
        let seen = self.shared.seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match checks::alias_decisions(&self.spec, &decisions, &seen, self.strict, &groups) {
            Ok(n) => self.stats.alias_decisions_checked += n as u64,
            Err(e) => return fail(label, e),
        }
        checks::memory_plan(&self.spec, &plan, &decisions, self.strict, &self.payload_names(), &groups)
            .map_err(|e| Fail { step: label.to_string(), what: format!("memory plan: {e}\n  plan: {plan:?}") })?;
        self.stats.plans_checked += 1;
        Ok(())
    }

    fn run_frames(&mut self, label: &str) -> R<()> {
        self.log(format!("run: {label}"));
        self.reset_counters();
        let frames = self.spec.frames;
        if self.spec.pipelined() {
            self.stream(label, frames)?;
        } else {
            for f in 0..frames {
                self.key += 1;
                let fl = format!("{label}, frame {f}");
                let payload_wants = self.fill_payloads(&fl, self.key)?;
                for r in self.input_roots() {
                    let im = &self.spec.images[r];
                    self.image(r)
                        .copy_from(Rect::full(im.w, im.h), 0, &self.content(r, self.key))
                        .at(&fl, "copy_from")?;
                }
                match self.spec.exec {
                    Exec::ScheduleWait => {
                        self.graph.schedule().at(&fl, "Graph::schedule")?;
                        self.graph.wait().at(&fl, "Graph::wait")?;
                    }
                    _ => self.graph.process().at(&fl, "Graph::process")?,
                }
                let key = self.key;
                let aliased_outputs = self.aliased_outputs(&fl)?;
                let carry = self.carry.take().unwrap_or_default();
                let state = reference::eval(
                    &self.spec,
                    &|r| self.content(r, if self.spec.images[r].kind == ImgKind::Real { REAL_INIT_KEY } else { key }),
                    self.plant,
                    Some(&carry),
                    &|o| aliased_outputs.contains(&o),
                );
                for r in self.observable_roots() {
                    let got = self.read(&fl, self.image(r))?;
                    self.compare(&fl, r, &got, &state.roots[&r])?;
                    self.stats.pixels_compared += got.len() as u64;
                }
                self.check_payloads(&fl, &payload_wants, true)?;
                self.carry = Some(state);
                self.stats.frames += 1;
            }
        }
        self.after_run(label, frames as u64)
    }

    /// Stream `frames` frames through the queues, comparing every dequeued output with its frame's
    /// reference, then the shared (unqueued) outputs with the last frame's.
    fn stream(&mut self, label: &str, frames: usize) -> R<()> {
        let Exec::Pipelined { manual, .. } = self.spec.exec else { unreachable!() };
        // Unqueued inputs are the same in every frame of the stream.
        self.key += 1;
        let base = self.key;
        for r in self.input_roots() {
            let im = &self.spec.images[r];
            self.image(r).copy_from(Rect::full(im.w, im.h), 0, &self.content(r, base)).at(label, "copy_from")?;
        }
        let shared_wants = self.fill_payloads(label, base)?;
        let mut free: Vec<VecDeque<usize>> = self.queues.iter().map(|q| (0..q.refs.len()).collect()).collect();
        // Free references of each queued payload chain (none for the others).
        let mut pfree: Vec<VecDeque<usize>> = self
            .payloads
            .iter()
            .map(|l| l.queues.as_ref().map(|q| (0..q.ins.len()).collect()).unwrap_or_default())
            .collect();
        let queued_payloads: Vec<usize> =
            (0..self.payloads.len()).filter(|&p| self.payloads[p].queues.is_some()).collect();
        // Per frame: key, image queue references, and per queued payload (reference, want digests).
        type Flight = (u64, Vec<usize>, Vec<(usize, Vec<u64>)>);
        let mut in_flight: VecDeque<Flight> = VecDeque::new();
        let mut last_payload_wants: Vec<Vec<u64>> = vec![Vec::new(); self.payloads.len()];
        let (mut next, mut done) = (0usize, 0usize);
        let mut last_key = base;
        while done < frames {
            let mut admitted = false;
            while next < frames
                && free.iter().all(|f| !f.is_empty())
                && queued_payloads.iter().all(|&p| !pfree[p].is_empty())
            {
                self.key += 1;
                let key = self.key;
                let fl = format!("{label}, enqueue frame {next}");
                let mut idxs = Vec::new();
                for (qi, q) in self.queues.iter().enumerate() {
                    let idx = free[qi].pop_front().expect("free");
                    if q.input {
                        let im = &self.spec.images[q.img];
                        q.refs[idx]
                            .copy_from(Rect::full(im.w, im.h), 0, &self.content(q.img, key))
                            .at(&fl, "copy_from")?;
                    }
                    self.graph.enqueue(q.gparam, &q.refs[idx]).at(&fl, "Graph::enqueue")?;
                    idxs.push(idx);
                }
                let mut pidx = Vec::new();
                for &p in &queued_payloads {
                    let idx = pfree[p].pop_front().expect("free");
                    let q = self.payloads[p].queues.as_ref().expect("queued");
                    let chain = &self.spec.payloads[p];
                    let d = kinds::fill(&q.ins[idx], self.payload_seed(p, key))
                        .at(&fl, &format!("filling payload p{p} ({})", chain.label()))?;
                    self.graph.enqueue(q.gp_in, &q.ins[idx]).at(&fl, "Graph::enqueue (payload input)")?;
                    self.graph.enqueue(q.gp_out, &q.outs[idx]).at(&fl, "Graph::enqueue (payload output)")?;
                    pidx.push((idx, reference::payload(chain, d)));
                }
                in_flight.push_back((key, idxs, pidx));
                next += 1;
                admitted = true;
            }
            if manual && admitted {
                self.graph.schedule().at(label, "Graph::schedule (manual mode)")?;
            }
            let (key, idxs, pidx) = in_flight.pop_front().expect("a frame in flight");
            let fl = format!("{label}, frame {done} (pipelined frame number {})", self.frame_no);
            let queued_inputs: Vec<ImgId> = self.queues.iter().filter(|q| q.input).map(|q| q.img).collect();
            let state = reference::eval(
                &self.spec,
                &|r| if queued_inputs.contains(&r) { self.content(r, key) } else { self.content(r, base) },
                self.plant,
                None,
                &|_| true,
            );
            // Outputs first, then inputs.
            let mut order: Vec<usize> = (0..self.queues.len()).filter(|&q| !self.queues[q].input).collect();
            order.extend((0..self.queues.len()).filter(|&q| self.queues[q].input));
            for qi in order {
                let q = &self.queues[qi];
                let d = self.graph.dequeue(q.gparam).at(&fl, "Graph::dequeue")?;
                if d.frame != self.frame_no {
                    return fail(&fl, format!("dequeued frame number {}, want {}", d.frame, self.frame_no));
                }
                if let Err(e) = &d.result {
                    return fail(&fl, format!("the frame failed on a legal graph: {e}"));
                }
                let want_ref = &q.refs[idxs[qi]];
                let Some(got_img) = d.reference.as_image() else {
                    return fail(&fl, "dequeued a reference that is no image".into());
                };
                if !d.reference.same_object(&Reference::from(want_ref)) {
                    return fail(
                        &fl,
                        format!(
                            "dequeued {} from graph parameter {}, want {} (FIFO)",
                            got_img.name(),
                            q.gparam,
                            want_ref.name()
                        ),
                    );
                }
                let got = self.read(&fl, got_img)?;
                if q.input {
                    let want = Plane::defined(got_img.width(), got_img.height(), self.content(q.img, key));
                    self.compare(&format!("{fl}, queued input"), q.img, &got, &want)?;
                } else {
                    self.compare(&fl, q.img, &got, &state.roots[&q.img])?;
                    self.stats.pixels_compared += got.len() as u64;
                }
                free[qi].push_back(idxs[qi]);
            }
            for (&p, (idx, want)) in queued_payloads.iter().zip(pidx) {
                let q = self.payloads[p].queues.as_ref().expect("queued");
                let chain = &self.spec.payloads[p];
                let what = format!("payload p{p} ({}, {} copy node(s))", chain.label(), chain.copies());
                for (gp, refs, input) in [(q.gp_out, &q.outs, false), (q.gp_in, &q.ins, true)] {
                    let d = self.graph.dequeue(gp).at(&fl, &format!("Graph::dequeue of {what}"))?;
                    if d.frame != self.frame_no {
                        return fail(&fl, format!("{what}: dequeued frame number {}, want {}", d.frame, self.frame_no));
                    }
                    if let Err(e) = &d.result {
                        return fail(&fl, format!("{what}: the frame failed on a legal graph: {e}"));
                    }
                    if !d.reference.same_object(&refs[idx]) {
                        return fail(
                            &fl,
                            format!("{what}: dequeued {}, want {} (FIFO)", d.reference.name(), refs[idx].name()),
                        );
                    }
                    let got = kinds::digest(&d.reference).at(&fl, &format!("reading {what}"))?;
                    let j = if input { 0 } else { want.len() - 1 };
                    if got != want[j] {
                        return fail(
                            &fl,
                            format!(
                                "{what}: the dequeued {} holds other contents than the frame's input (digest {got:#x}, want {:#x})",
                                if input { "input" } else { "output" },
                                want[j]
                            ),
                        );
                    }
                    self.stats.payload_digests += 1;
                }
                last_payload_wants[p] = want;
                pfree[p].push_back(idx);
            }
            self.frame_no += 1;
            done += 1;
            last_key = key;
            self.stats.frames += 1;
            self.stats.pipelined_frames += 1;
        }
        self.graph.wait().at(label, "Graph::wait after the stream")?;
        // Shared outputs hold the last frame's pixels; shared inputs are unchanged.
        let queued_inputs: Vec<ImgId> = self.queues.iter().filter(|q| q.input).map(|q| q.img).collect();
        let state = reference::eval(
            &self.spec,
            &|r| if queued_inputs.contains(&r) { self.content(r, last_key) } else { self.content(r, base) },
            self.plant,
            None,
            &|_| true,
        );
        let fl = format!("{label}, shared objects after the stream");
        for r in self.observable_roots() {
            let got = self.read(&fl, self.image(r))?;
            self.compare(&fl, r, &got, &state.roots[&r])?;
        }
        // Shared payload chains hold their input; queued ones' real intermediates the last frame's.
        self.check_payloads(&fl, &shared_wants, false)?;
        self.check_payloads(&fl, &last_payload_wants, true)?;
        Ok(())
    }

    /// One random re-verification step; returns its label.
    fn step(&mut self, s: usize) -> R<String> {
        for _ in 0..8 {
            let label = match self.rng.below(7) {
                0 => self.scalar_change(),
                1 => self.add_remove_node()?,
                2 => self.replace_param()?,
                3 => self.border_flip()?,
                4 => self.retarget()?,
                5 => self.reload()?,
                _ => self.scalar_change(),
            };
            if let Some(l) = label {
                self.stats.steps += 1;
                let l = format!("step {s}: {l}");
                self.log(l.clone());
                return Ok(l);
            }
        }
        Ok(format!("step {s}: nothing applicable"))
    }

    /// A module reload, in process: new versions of some nodes' kernels (same code) swapped in, with
    /// the validator key kept (the rebound nodes are re-verified alone, kept), dropped (validated
    /// again) or changed (another shape: the full path). Outputs must not change.
    fn reload(&mut self) -> R<Option<String>> {
        let live: Vec<usize> = (0..self.spec.nodes.len()).filter(|&n| self.nodes[n].is_some()).collect();
        if live.is_empty() {
            return Ok(None);
        }
        let mut chosen: Vec<usize> = live.iter().copied().filter(|_| self.rng.chance(1, 2)).collect();
        if chosen.is_empty() {
            chosen.push(*self.rng.pick(&live));
        }
        let prefix = format!("rg{}", self.spec.seed);
        let mut what = Vec::new();
        for n in chosen {
            let node = self.spec.nodes[n].clone();
            let name = format!("{prefix}.{}", node.name);
            let old = self.ctx.kernel_by_name(&name).at("reload", "Context::kernel_by_name")?;
            let built = if n.is_multiple_of(2) { kernels::validator_key(node.op) } else { 0 };
            let current = self.keys.get(&n).copied().unwrap_or(built);
            let key = match self.rng.below(4) {
                0 | 1 => current,
                2 => 0,
                _ => kernels::validator_key(node.op).wrapping_add(1),
            };
            let out = &self.spec.images[node.output];
            let new = kernels::build_version(
                &self.ctx,
                &prefix,
                n,
                &node,
                (out.w, out.h),
                self.shared.clone(),
                self.counters[n].clone(),
                key,
                Some(&old),
            )
            .at("reload", "building a successor kernel")?;
            old.__replace_in_process(&new).at("reload", "Kernel::__replace_in_process")?;
            self.keys.insert(n, key);
            what.push(format!("{}{}", node.name, if key == current { "" } else { " (validator key changed)" }));
        }
        self.stats.reloads += 1;
        Ok(Some(format!("reload of {}", what.join(", "))))
    }

    fn scalar_change(&mut self) -> Option<String> {
        if self.scalars.is_empty() {
            return None;
        }
        let s = self.rng.below(self.scalars.len() as u64) as usize;
        let v = self.rng.byte();
        self.scalars[s].set(v).ok()?;
        self.spec.scalars[s] = v;
        Some(format!("scalar s{s} set to {v}"))
    }

    /// Add a copy node reading an image of the graph into a new real image, run it, remove it.
    fn add_remove_node(&mut self) -> R<Option<String>> {
        let used: Vec<ImgId> = self.spec.used_images();
        let src = *self.rng.pick(&used);
        let (w, h) = (self.spec.images[src].w, self.spec.images[src].h);
        let out = self.new_image(w, h, ImgKind::Real);
        self.create_image(out).at("add node", "Image::new")?;
        let n = self.spec.nodes.len();
        let tiling = self.rng.chance(1, 2).then_some(Tiling {
            fast: false,
            flexible: true,
            block: (1, 1),
            kernel_border: Border::Undefined,
            node_border: None,
            tile_memory: 0,
            rows: None,
        });
        let target = if !self.spec.targets.is_empty() && self.rng.chance(1, 2) {
            Some(self.rng.pick(&self.spec.targets).0.clone())
        } else {
            None
        };
        self.spec.nodes.push(NodeSpec {
            name: format!("n{n}_added_copy"),
            op: Op::Copy,
            tiling,
            nb: Nb::default(),
            hints: Vec::new(),
            sleep_us: self.rng.range(0, 300),
            spin: false,
            inputs: vec![src],
            scalar: None,
            output: out,
            target,
            removed: false,
        });
        let label = format!(
            "node {} added (copy of {} into {})",
            self.spec.nodes[n].name, self.spec.images[src].name, self.spec.images[out].name
        );
        self.log(label.clone());
        let node = self.create_node(n).at(&label, "adding a node")?;
        self.run_frames(&label)?;
        self.graph.remove_node(&node).at(&label, "Graph::remove_node")?;
        self.spec.nodes[n].removed = true;
        self.nodes[n] = None;
        Ok(Some(format!("node {} added, run, removed", self.spec.nodes[n].name)))
    }

    /// Replace an input by a new input of the same meta data (Node::set_parameter, or
    /// Graph::set_parameter_by_index at every node holding it), or a real sink output by a new image.
    fn replace_param(&mut self) -> R<Option<String>> {
        let queued: Vec<ImgId> = self.queues.iter().map(|q| q.img).collect();
        let mut cands = Vec::new();
        for n in self.spec.live() {
            let node = &self.spec.nodes[n];
            for (k, &i) in node.inputs.iter().enumerate() {
                if self.spec.images[i].kind == ImgKind::Input && !queued.contains(&i) {
                    cands.push((n, node.op.input_param(k), i));
                }
            }
            let o = node.output;
            if self.spec.images[o].kind == ImgKind::Real && self.spec.readers(o).is_empty() && !queued.contains(&o) {
                cands.push((n, node.op.output_param(), o));
            }
        }
        if cands.is_empty() {
            return Ok(None);
        }
        let (n, p, old) = *self.rng.pick(&cands);
        let (w, h, kind) = (self.spec.images[old].w, self.spec.images[old].h, self.spec.images[old].kind);
        let new = self.new_image(w, h, kind);
        self.create_image(new).at("replace", "Image::new")?;
        let via_graph = kind == ImgKind::Input && !self.spec.pipelined() && self.rng.chance(1, 2);
        let node = self.nodes[n].clone().expect("node");
        let label = if via_graph {
            let label = format!(
                "{} replaced by {} at every node (Graph::set_parameter_by_index)",
                self.spec.images[old].name, self.spec.images[new].name
            );
            let gp = match self.gparams.iter().find(|(np, _)| *np == (n, p)) {
                Some(&(_, gp)) => gp,
                None => {
                    let gp = self.graph.add_parameter(&node, p).at(&label, "Graph::add_parameter")?;
                    self.gparams.push(((n, p), gp));
                    gp
                }
            };
            self.graph.set_parameter_by_index(gp, self.image(new)).at(&label, "Graph::set_parameter_by_index")?;
            for m in self.spec.live().collect::<Vec<_>>() {
                let nm = &mut self.spec.nodes[m];
                nm.inputs.iter_mut().filter(|i| **i == old).for_each(|i| *i = new);
            }
            label
        } else {
            let label = format!(
                "parameter {p} of {} ({}) replaced by {} (Node::set_parameter)",
                self.spec.nodes[n].name, self.spec.images[old].name, self.spec.images[new].name
            );
            node.set_parameter(p, self.image(new)).at(&label, "Node::set_parameter")?;
            if p == self.spec.nodes[n].op.output_param() {
                self.spec.nodes[n].output = new;
            } else {
                self.spec.nodes[n].inputs[p as usize] = new;
            }
            label
        };
        Ok(Some(label))
    }

    /// Flip the border of a tiling node with a flexible function (Undefined ↔ Self_). A
    /// fast-only node asked for Self_ must fail verification, and work again once set back.
    fn border_flip(&mut self) -> R<Option<String>> {
        let cands: Vec<usize> = self.spec.live().filter(|&n| self.spec.nodes[n].tiling.is_some()).collect();
        if cands.is_empty() {
            return Ok(None);
        }
        let n = *self.rng.pick(&cands);
        let t = self.spec.nodes[n].tiling.clone().expect("tiling");
        let node = self.nodes[n].clone().expect("node");
        let name = self.spec.nodes[n].name.clone();
        if !t.flexible {
            if self.spec.pipelined() {
                return Ok(None);
            }
            let label = format!("border Self_ on fast-only {name} (illegal), then back");
            node.set_border(BorderMode::Self_).at(&label, "Node::set_border")?;
            match self.graph.verify() {
                Ok(()) => {
                    return fail(
                        &label,
                        "verify accepted border Self_ on a tiling node without flexible function".into(),
                    );
                }
                Err(_) => self.stats.illegal_refused += 1,
            }
            node.set_border(t.border().mode()).at(&label, "Node::set_border")?;
            return Ok(Some(label));
        }
        let b = if t.border() == Border::SelfMode { Border::Undefined } else { Border::SelfMode };
        node.set_border(b.mode()).at("border", "Node::set_border")?;
        self.spec.nodes[n].tiling.as_mut().expect("tiling").node_border = Some(b);
        self.counters[n].set_border(b);
        Ok(Some(format!("border of {name} set to {b:?}")))
    }

    fn retarget(&mut self) -> R<Option<String>> {
        let live: Vec<usize> = self.spec.live().collect();
        let n = *self.rng.pick(&live);
        let mut targets: Vec<String> = self.spec.targets.iter().map(|t| t.0.clone()).collect();
        targets.push(HOST_TARGET.to_string());
        let t = self.rng.pick(&targets).clone();
        let label = format!("{} moved to target {t}", self.spec.nodes[n].name);
        self.nodes[n].as_ref().expect("node").set_target(&t).at(&label, "Node::set_target")?;
        self.spec.nodes[n].target = Some(t);
        Ok(Some(label))
    }

    /// Pipelining misuse before the real configuration: each refused, nothing changed.
    fn bad_queue(&mut self) -> R<()> {
        let (gp, img) = (self.queues[0].gparam, self.queues[0].img);
        let im = self.spec.images[img].clone();
        let label = "illegal: pipelining misuse";
        let good = Image::new(&self.ctx, im.w, im.h, ImageFormat::U8).at(label, "Image::new")?;
        let other = Image::new(&self.ctx, im.w + 1, im.h, ImageFormat::U8).at(label, "Image::new")?;
        let virt = Image::new_virtual(&self.graph, im.w, im.h, ImageFormat::U8).at(label, "Image::new_virtual")?;
        let attempts: Vec<(&str, ScheduleConfig)> = vec![
            ("depth 0", ScheduleConfig::queue_auto().depth(0).queue(gp, [good.clone()])),
            (
                "depth above the maximum",
                ScheduleConfig::queue_auto().depth(MAX_PIPELINE_DEPTH + 1).queue(gp, [good.clone()]),
            ),
            ("a reference of other meta data", ScheduleConfig::queue_auto().queue(gp, [other])),
            ("a virtual reference", ScheduleConfig::queue_auto().queue(gp, [virt])),
            ("a reference given twice", ScheduleConfig::queue_auto().queue(gp, [good.clone(), good.clone()])),
            ("an unknown graph parameter", ScheduleConfig::queue_auto().queue(gp + 100, [good.clone()])),
        ];
        for (what, config) in attempts {
            match self.graph.set_schedule_config(config) {
                Ok(()) => return fail(label, format!("set_schedule_config accepted {what}")),
                Err(_) => self.stats.illegal_refused += 1,
            }
        }
        if self.graph.schedule_mode() != ScheduleMode::Normal {
            return fail(label, "a refused schedule config changed the schedule mode".into());
        }
        if self.graph.enqueue(gp, &good).is_ok() {
            return fail(label, "enqueue accepted before a queue mode".into());
        }
        self.stats.illegal_refused += 1;
        self.log(format!("{label}: every misuse refused"));
        Ok(())
    }

    /// Try one illegal construct on a normal-mode graph; it must be refused; undo it.
    fn illegal(&mut self, kind: Illegal) -> R<()> {
        let label = format!("illegal: {kind:?}");
        self.log(label.clone());
        let used = self.spec.used_images();
        let any = *self.rng.pick(&used);
        let (w, h) = (self.spec.images[any].w, self.spec.images[any].h);
        // A scratch copy kernel for extra nodes.
        let copy = |r: &mut Runner, tiling: Option<Tiling>| -> R<(usize, Kernel)> {
            let n = r.spec.nodes.len();
            let spec = NodeSpec {
                name: format!("n{n}_illegal"),
                op: Op::Copy,
                tiling,
                nb: Nb::default(),
                hints: Vec::new(),
                sleep_us: 0,
                spin: false,
                inputs: vec![any],
                scalar: None,
                output: any,
                target: None,
                removed: true,
            };
            r.spec.nodes.push(spec.clone());
            r.counters.push(Arc::default());
            r.nodes.push(None);
            let k = kernels::build(
                &r.ctx,
                &format!("rg{}", r.spec.seed),
                n,
                &spec,
                (w, h),
                r.shared.clone(),
                r.counters[n].clone(),
            )
            .at(&label, "building a kernel")?;
            Ok((n, k))
        };
        // Add a node with `params`; the graph must refuse it at add_node or verify; remove it.
        let refused = |r: &mut Runner, k: &Kernel, params: Vec<Option<Reference>>, what: &str| -> R<()> {
            match r.graph.add_node(k, params) {
                Err(_) => {}
                Ok(node) => {
                    if r.graph.verify().is_ok() {
                        return fail(&label, format!("verify accepted {what}"));
                    }
                    r.graph.remove_node(&node).at(&label, "Graph::remove_node")?;
                }
            }
            r.stats.illegal_refused += 1;
            Ok(())
        };
        let img = |r: &Runner, i: ImgId| Some(Reference::from(r.image(i)));
        match kind {
            Illegal::SecondWriter => {
                let written: Vec<ImgId> = used.iter().copied().filter(|&i| self.spec.writer(i).is_some()).collect();
                let target = *self.rng.pick(&written);
                let (tw, th) = (self.spec.images[target].w, self.spec.images[target].h);
                let src = self.new_image(tw, th, ImgKind::Input);
                self.create_image(src).at(&label, "Image::new")?;
                let (_, k) = copy(self, None)?;
                refused(self, &k, vec![img(self, src), img(self, target)], "a second writer")?;
            }
            Illegal::Cycle => {
                // An input read by a node A, written by a copy of an image downstream of A.
                let reach = self.spec.reach();
                let mut found = None;
                for &i in &used {
                    if self.spec.images[i].kind != ImgKind::Input {
                        continue;
                    }
                    for a in self.spec.readers(i) {
                        let outs = self.spec.live().filter(|&m| m == a || reach[a] & (1 << m) != 0);
                        for m in outs.collect::<Vec<_>>() {
                            let o = self.spec.nodes[m].output;
                            if (self.spec.images[o].w, self.spec.images[o].h)
                                == (self.spec.images[i].w, self.spec.images[i].h)
                            {
                                found = Some((o, i));
                            }
                        }
                    }
                }
                let Some((o, i)) = found else { return self.illegal(Illegal::SelfLoop) };
                let (_, k) = copy(self, None)?;
                refused(self, &k, vec![img(self, o), img(self, i)], "a cycle")?;
            }
            Illegal::SelfLoop => {
                let x = self.new_image(w, h, ImgKind::Real);
                self.create_image(x).at(&label, "Image::new")?;
                let (_, k) = copy(self, None)?;
                refused(self, &k, vec![img(self, x), img(self, x)], "a node reading its own output")?;
            }
            Illegal::SizeMismatch => {
                let other = self.new_image(w + 1, h, ImgKind::Input);
                let out = self.new_image(w, h, ImgKind::Real);
                self.create_image(other).at(&label, "Image::new")?;
                self.create_image(out).at(&label, "Image::new")?;
                let n = self.spec.nodes.len();
                let spec = NodeSpec {
                    name: format!("n{n}_illegal_xor"),
                    op: Op::Xor,
                    tiling: None,
                    nb: Nb::default(),
                    hints: Vec::new(),
                    sleep_us: 0,
                    spin: false,
                    inputs: vec![any, other],
                    scalar: None,
                    output: out,
                    target: None,
                    removed: true,
                };
                self.spec.nodes.push(spec.clone());
                self.counters.push(Arc::default());
                self.nodes.push(None);
                let k = kernels::build(
                    &self.ctx,
                    &format!("rg{}", self.spec.seed),
                    n,
                    &spec,
                    (w, h),
                    self.shared.clone(),
                    self.counters[n].clone(),
                )
                .at(&label, "building a kernel")?;
                refused(self, &k, vec![img(self, any), img(self, other), img(self, out)], "inputs of different sizes")?;
            }
            Illegal::WrongFormat => {
                let u16img = Image::new(&self.ctx, w, h, ImageFormat::U16).at(&label, "Image::new")?;
                let out = self.new_image(w, h, ImgKind::Real);
                self.create_image(out).at(&label, "Image::new")?;
                let (_, k) = copy(self, None)?;
                refused(self, &k, vec![Some(Reference::from(&u16img)), img(self, out)], "a U16 input to a U8 kernel")?;
            }
            Illegal::UnwrittenVirtual | Illegal::ForeignVirtual => {
                let other_graph = Graph::new(&self.ctx).at(&label, "Graph::new")?;
                let scope_graph = if kind == Illegal::ForeignVirtual { &other_graph } else { &self.graph };
                let v = Image::new_virtual(scope_graph, w, h, ImageFormat::U8).at(&label, "Image::new_virtual")?;
                let out = self.new_image(w, h, ImgKind::Real);
                self.create_image(out).at(&label, "Image::new")?;
                let (_, k) = copy(self, None)?;
                refused(self, &k, vec![Some(Reference::from(&v)), img(self, out)], "that virtual image")?;
            }
            Illegal::SelfBorderWithoutFlexible => {
                let out = self.new_image(w, h, ImgKind::Real);
                self.create_image(out).at(&label, "Image::new")?;
                let t = Tiling::fast_only();
                let (n, _) = copy(self, Some(t.clone()))?;
                // This one stays in the graph once its border is legal again.
                self.spec.nodes[n] = NodeSpec {
                    name: format!("n{n}_fast_only_copy"),
                    inputs: vec![any],
                    output: out,
                    removed: false,
                    ..self.spec.nodes[n].clone()
                };
                self.counters[n] = Arc::default();
                let node = self.create_node(n).at(&label, "adding a fast-only copy")?;
                node.set_border(BorderMode::Self_).at(&label, "Node::set_border")?;
                if self.graph.verify().is_ok() {
                    return fail(
                        &label,
                        "verify accepted border Self_ on a tiling node without flexible function".into(),
                    );
                }
                self.stats.illegal_refused += 1;
                node.set_border(BorderMode::Undefined).at(&label, "Node::set_border")?;
            }
            Illegal::UnknownTarget => {
                let n = self.spec.live().next().expect("a node");
                if self.nodes[n].as_ref().expect("node").set_target("no-such-target").is_ok() {
                    return fail(&label, "set_target accepted a target the context does not have".into());
                }
                self.stats.illegal_refused += 1;
            }
            Illegal::MissingParameter => {
                let (_, k) = copy(self, None)?;
                refused(self, &k, vec![img(self, any), None], "a required parameter left unset")?;
            }
            Illegal::WrongVirtualSize => {
                let v = Image::new_virtual(&self.graph, w + 1, h, ImageFormat::U8).at(&label, "Image::new_virtual")?;
                let out = self.new_image(w + 1, h, ImgKind::Real);
                self.create_image(out).at(&label, "Image::new")?;
                let (_, k1) = copy(self, None)?;
                let n2 = match self.graph.add_node(&k1, vec![img(self, any), Some(Reference::from(&v))]) {
                    Ok(n) => n,
                    Err(_) => {
                        self.stats.illegal_refused += 1;
                        return Ok(());
                    }
                };
                let (_, k2) = copy(self, None)?;
                let reader = self.graph.add_node(&k2, vec![Some(Reference::from(&v)), img(self, out)]);
                if self.graph.verify().is_ok() {
                    return fail(&label, "verify accepted a virtual output declared with another size".into());
                }
                self.stats.illegal_refused += 1;
                if let Ok(reader) = reader {
                    self.graph.remove_node(&reader).at(&label, "Graph::remove_node")?;
                }
                self.graph.remove_node(&n2).at(&label, "Graph::remove_node")?;
            }
            Illegal::BadHint => {
                let k = self
                    .ctx
                    .user_kernel("rg.bad_hint", self.ctx.allocate_user_kernel_id().at(&label, "kernel id")?, 3)
                    .validate(|_, _| Ok(()))
                    .process(|_| Ok(()))
                    .add()
                    .at(&label, "adding a kernel")?;
                for p in 0..3 {
                    let dir = if p == 2 { ParamDirection::Output } else { ParamDirection::Input };
                    k.add_parameter(p, dir, DataType::Image, ParamState::Required).at(&label, "add_parameter")?;
                }
                if k.alias_parameter_index_hint(0, 7, AliasKind::Dense).is_ok() {
                    return fail(
                        &label,
                        "an alias hint naming parameter 7 of a 3-parameter kernel was accepted".into(),
                    );
                }
                self.stats.illegal_refused += 1;
                // Undefined by the spec (accepted or refused), but never a panic:
                let _ = k.alias_parameter_index_hint(1, 1, AliasKind::Sparse);
                let _ = k.alias_parameter_index_hint(0, 1, AliasKind::Dense);
                let _ = k.alias_parameter_index_hint(2, 0, AliasKind::Sparse);
                let _ = k.finalize();
                let _ = k.remove();
            }
            Illegal::BadQueue => unreachable!("pipelined graphs only"),
        }
        Ok(())
    }
}
