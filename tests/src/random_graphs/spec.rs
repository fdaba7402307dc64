//! The description of one random graph: context, images, nodes, execution. Pure data, printable;
//! the generator makes it, the runner builds it in vx-rs, the reference interprets it.

use std::fmt;

use vx::AliasKind;

/// Index of an image in [`GraphSpec::images`].
pub type ImgId = usize;

/// What a node computes (every image is U8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `out = in + c` (wrapping), `c` a U8 scalar: parameters (in, c, out).
    AddC,
    /// `out = in`: (in, out).
    Copy,
    /// `out = a ^ b`: (a, b, out).
    Xor,
    /// `out = (a + b + 1) / 2`: (a, b, out).
    Avg,
    /// `out = Σ in(x+dx, y+dy) · w(dx, dy)` (wrapping) over the node's neighborhood: (in, out).
    /// Weights `w = 2·(dx − left) + 3·(dy − top) + 1`. Plain user kernels and tiling nodes with
    /// border `Self_` replicate the edge (clamp), row kernels with `Self_` apply their
    /// [`Fill`]; border `Undefined` leaves pixels whose neighborhood leaves the image unprocessed
    /// (undefined).
    Stencil,
    /// `out(x, y) = in(y, x)`, output `h × w`: (in, out). Plain user kernels only.
    Transpose,
}

impl Op {
    /// Image inputs.
    pub fn num_inputs(self) -> usize {
        match self {
            Op::Xor | Op::Avg => 2,
            _ => 1,
        }
    }
    /// Kernel parameters.
    pub fn num_params(self) -> u32 {
        match self {
            Op::AddC | Op::Xor | Op::Avg => 3,
            _ => 2,
        }
    }
    /// Parameter index of image input `k`.
    pub fn input_param(self, k: usize) -> u32 {
        k as u32
    }
    /// Parameter index of the output.
    pub fn output_param(self) -> u32 {
        self.num_params() - 1
    }
    /// Parameter index of the scalar.
    pub fn scalar_param(self) -> Option<u32> {
        (self == Op::AddC).then_some(1)
    }
    /// Short name.
    pub fn short(self) -> &'static str {
        match self {
            Op::AddC => "addc",
            Op::Copy => "copy",
            Op::Xor => "xor",
            Op::Avg => "avg",
            Op::Stencil => "stencil",
            Op::Transpose => "transpose",
        }
    }
}

/// Tiling border modes vx-rs supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    /// `VX_BORDER_UNDEFINED`.
    Undefined,
    /// `VX_BORDER_MODE_SELF`.
    SelfMode,
}

impl Border {
    /// The vx-rs value.
    pub fn mode(self) -> vx::BorderMode {
        match self {
            Border::Undefined => vx::BorderMode::Undefined,
            Border::SelfMode => vx::BorderMode::Self_,
        }
    }
}

/// How a row kernel makes up rows and columns past the image edge under border `Self_` (the
/// SDK's `BorderFill`; the reference states the rules itself, `reference::fill_source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// `dcb|abcd|cba`.
    Reflect101,
    /// `aaa|abcd|ddd`.
    Replicate,
    /// A constant pixel value.
    Constant(u8),
}

/// A tiling kernel's functions and attributes.
#[derive(Clone, Debug)]
pub struct Tiling {
    /// A fast function is given.
    pub fast: bool,
    /// A flexible function is given.
    pub flexible: bool,
    /// Output tile block (width, height).
    pub block: (u32, u32),
    /// The kernel's border attribute.
    pub kernel_border: Border,
    /// A node-level border override (`Node::set_border`).
    pub node_border: Option<Border>,
    /// Tile memory bytes per tile block.
    pub tile_memory: usize,
    /// A row kernel (stencils with a vertical neighborhood, issue 34): its flexible function reads
    /// its neighborhood through `Tile::for_rows` with this fill (border `Self_` then means the
    /// fill, not the edge replicated), and it has a row entry (`KernelBuilder::rows`) doing the
    /// same from row tables, so it fuses.
    pub rows: Option<Fill>,
}

impl Tiling {
    /// A fast function alone on 1×1 blocks, border `Undefined`: every pixel processed, none by a
    /// flexible function.
    pub fn fast_only() -> Tiling {
        Tiling {
            fast: true,
            flexible: false,
            block: (1, 1),
            kernel_border: Border::Undefined,
            node_border: None,
            tile_memory: 0,
            rows: None,
        }
    }

    /// The border the node runs with.
    pub fn border(&self) -> Border {
        self.node_border.unwrap_or(self.kernel_border)
    }
}

/// An input neighborhood in the spec's order (left ≤ 0, right ≥ 0, top ≤ 0, bottom ≥ 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Nb {
    /// Left.
    pub l: i32,
    /// Right.
    pub r: i32,
    /// Top.
    pub t: i32,
    /// Bottom.
    pub b: i32,
}

impl Nb {
    /// True for (0, 0, 0, 0).
    pub fn is_zero(&self) -> bool {
        *self == Nb::default()
    }
}

/// An alias hint of a node's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// Input parameter.
    pub a: u32,
    /// Output parameter.
    pub b: u32,
    /// Processing type.
    pub kind: AliasKind,
}

/// One node (each node has a kernel of its own, made from this description).
#[derive(Clone, Debug)]
pub struct NodeSpec {
    /// Node (and kernel) name.
    pub name: String,
    /// What it computes.
    pub op: Op,
    /// Tiling kernel attributes (`None`: a plain user kernel).
    pub tiling: Option<Tiling>,
    /// Neighborhood (stencil; zero for the others).
    pub nb: Nb,
    /// The kernel's alias hints.
    pub hints: Vec<Hint>,
    /// Microseconds slept or spun at the start of each process (the first tile of tiling nodes).
    pub sleep_us: u32,
    /// Spin instead of sleeping.
    pub spin: bool,
    /// Image inputs in parameter order.
    pub inputs: Vec<ImgId>,
    /// The scalar (AddC).
    pub scalar: Option<usize>,
    /// The output image.
    pub output: ImgId,
    /// Target name (`None`: not set, the default placement).
    pub target: Option<String>,
    /// Removed from the graph.
    pub removed: bool,
}

impl NodeSpec {
    /// The border the node runs with (tiling nodes).
    pub fn border(&self) -> Option<Border> {
        self.tiling.as_ref().map(Tiling::border)
    }
    /// The image at kernel parameter `p`, if it is an image parameter.
    pub fn image_param(&self, p: u32) -> Option<ImgId> {
        if p == self.op.output_param() {
            Some(self.output)
        } else if Some(p) == self.op.scalar_param() {
            None
        } else {
            self.inputs.get(p as usize).copied()
        }
    }
}

/// How a virtual image is declared at creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declared {
    /// `(0, 0, Virtual)`.
    Nothing,
    /// `(0, 0, U8)`.
    Format,
    /// `(w, h, U8)`.
    Full,
}

/// What an image is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImgKind {
    /// The application's input (non-virtual, written by no node).
    Input,
    /// Non-virtual, written by a node.
    Real,
    /// Virtual.
    Virtual(Declared),
    /// An ROI `(x, y, w, h)` of `parent` (input or output depending on whether a node writes it).
    Roi {
        /// The parent image.
        parent: ImgId,
        /// Left column in the parent.
        x: u32,
        /// Top row in the parent.
        y: u32,
    },
    /// An image holding ROIs; never a node parameter itself.
    Parent,
}

/// One image.
#[derive(Clone, Debug)]
pub struct ImgSpec {
    /// Name (unique in the graph).
    pub name: String,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
    /// Kind.
    pub kind: ImgKind,
}

/// How the graph is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exec {
    /// `Graph::process` per frame.
    Process,
    /// `Graph::schedule` + `Graph::wait` per frame.
    ScheduleWait,
    /// A queue mode.
    Pipelined {
        /// `queue_manual` (else `queue_auto`).
        manual: bool,
        /// Pipeline depth.
        depth: usize,
    },
}

/// A queued graph parameter.
#[derive(Clone, Debug)]
pub struct QueueSpec {
    /// The node whose parameter becomes the graph parameter.
    pub node: usize,
    /// Its parameter index.
    pub param: u32,
    /// The image (exemplar) there.
    pub img: ImgId,
    /// References in the queue.
    pub refs: usize,
    /// The exemplar itself is one of the references.
    pub with_exemplar: bool,
}

/// An illegal construct tried on the graph: it must be refused with an error (no panic, no hang),
/// and undoing it must leave a graph that works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Illegal {
    /// A second node writing an image that already has a writer.
    SecondWriter,
    /// A node writing an input that an upstream node reads (a cycle).
    Cycle,
    /// A node reading its own output.
    SelfLoop,
    /// Two inputs of different sizes to a two-input kernel.
    SizeMismatch,
    /// A U16 image given to a U8 kernel.
    WrongFormat,
    /// A virtual image that nothing writes, read by a node.
    UnwrittenVirtual,
    /// A virtual image of another graph.
    ForeignVirtual,
    /// Border `Self_` on a tiling node with no flexible function.
    SelfBorderWithoutFlexible,
    /// A target the context does not have.
    UnknownTarget,
    /// A required parameter left unset.
    MissingParameter,
    /// A virtual output declared with a size other than the validator's.
    WrongVirtualSize,
    /// Alias hints naming parameters the kernel does not have (or one parameter twice).
    BadHint,
    /// Pipelining misuse: depth 0 / above the maximum, a reference of other meta data, a virtual
    /// reference, enqueuing a foreign reference.
    BadQueue,
}

/// A payload chain (issue 28 step 8): an object of a kind drawn from `DataType::ALL` (or an
/// object array of it), copied from a real input through `copies` generic copy nodes
/// (`vx_tests::kinds::copy_kernel`) into a real output, beside the graph's images. The reference
/// models it by its digest: every object of the chain holds the input's contents.
#[derive(Clone, Debug)]
pub struct PayloadSpec {
    /// The kind.
    pub kind: vx::DataType,
    /// The chain's objects are object arrays (2 items) of `kind`.
    pub in_array: bool,
    /// Whether each intermediate object (between copy `k` and `k + 1`) is virtual
    /// (`copies - 1` of them).
    pub virtual_mid: Vec<bool>,
    /// Each copy node's target (`None`: default placement).
    pub targets: Vec<Option<String>>,
    /// Pipelined graphs: the input and the output are queued graph parameters (else shared).
    pub queued: bool,
}

impl PayloadSpec {
    /// Copy nodes.
    pub fn copies(&self) -> usize {
        self.virtual_mid.len() + 1
    }
    /// The data type of the chain's objects.
    pub fn data_type(&self) -> vx::DataType {
        if self.in_array { vx::DataType::ObjectArray } else { self.kind }
    }
    /// How messages name it: the kind's label.
    pub fn label(&self) -> String {
        if self.in_array { format!("object array of {}", self.kind) } else { self.kind.to_string() }
    }
}

/// One random graph and how to run it.
#[derive(Clone, Debug)]
pub struct GraphSpec {
    /// The seed it came from.
    pub seed: u64,
    /// Context threads.
    pub threads: usize,
    /// Named targets: (name, threads).
    pub targets: Vec<(String, usize)>,
    /// Memory plan on.
    pub memory_plan: bool,
    /// Aliasing on.
    pub aliasing: bool,
    /// Cross-node fusion on (`ContextBuilder::fusion`, issue 34); drawn from a stream of its own
    /// (4), like the generator's bias toward fusable chains when it is on, so a seed's graph with
    /// fusion off is the graph it had before fusion existed.
    pub fusion: bool,
    /// Small tiles, parallel whatever the size.
    pub small_tiles: bool,
    /// Images.
    pub images: Vec<ImgSpec>,
    /// Scalar values (U8).
    pub scalars: Vec<u8>,
    /// Nodes.
    pub nodes: Vec<NodeSpec>,
    /// Execution.
    pub exec: Exec,
    /// Queued graph parameters (pipelined).
    pub queues: Vec<QueueSpec>,
    /// Frames per run.
    pub frames: usize,
    /// Call `Graph::verify` before the first run.
    pub explicit_verify: bool,
    /// Re-verification steps after the first run.
    pub steps: usize,
    /// An illegal construct to try.
    pub illegal: Option<Illegal>,
    /// Payload chains (drawn from a stream of their own: the images are those of the seed
    /// without them).
    pub payloads: Vec<PayloadSpec>,
}

impl GraphSpec {
    /// True for a queue mode.
    pub fn pipelined(&self) -> bool {
        matches!(self.exec, Exec::Pipelined { .. })
    }

    /// Live nodes, in index order.
    pub fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&n| !self.nodes[n].removed)
    }

    /// The live node writing `img`.
    pub fn writer(&self, img: ImgId) -> Option<usize> {
        self.live().find(|&n| self.nodes[n].output == img)
    }

    /// Live nodes reading `img` (each once).
    pub fn readers(&self, img: ImgId) -> Vec<usize> {
        self.live().filter(|&n| self.nodes[n].inputs.contains(&img)).collect()
    }

    /// True for a virtual image.
    pub fn is_virtual(&self, img: ImgId) -> bool {
        matches!(self.images[img].kind, ImgKind::Virtual(_))
    }

    /// The root (non-ROI) image holding `img`'s pixels and `img`'s offset in it.
    pub fn root_of(&self, img: ImgId) -> (ImgId, u32, u32) {
        match self.images[img].kind {
            ImgKind::Roi { parent, x, y } => (parent, x, y),
            _ => (img, 0, 0),
        }
    }

    /// Images some live node uses.
    pub fn used_images(&self) -> Vec<ImgId> {
        let mut v: Vec<ImgId> =
            self.live().flat_map(|n| self.nodes[n].inputs.iter().copied().chain([self.nodes[n].output])).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Live nodes in a dependency order (writers before readers); `None` if there is a cycle.
    pub fn topo(&self) -> Option<Vec<usize>> {
        let live: Vec<usize> = self.live().collect();
        let mut indeg = vec![0usize; self.nodes.len()];
        for &n in &live {
            for &i in &self.nodes[n].inputs {
                if self.writer(i).is_some() {
                    indeg[n] += 1;
                }
            }
        }
        let mut ready: Vec<usize> = live.iter().copied().filter(|&n| indeg[n] == 0).collect();
        ready.reverse();
        let mut order = Vec::new();
        while let Some(n) = ready.pop() {
            order.push(n);
            for &m in &live {
                let uses = self.nodes[m].inputs.iter().filter(|&&i| i == self.nodes[n].output).count();
                if uses > 0 {
                    indeg[m] -= uses;
                    if indeg[m] == 0 {
                        ready.push(m);
                    }
                }
            }
        }
        (order.len() == live.len()).then_some(order)
    }

    /// `reach[n]` has bit `m` when a dataflow path leads from node `n` to node `m` (`n ≠ m`).
    pub fn reach(&self) -> Vec<u64> {
        let order = self.topo().unwrap_or_default();
        let mut reach = vec![0u64; self.nodes.len()];
        for &n in order.iter().rev() {
            let out = self.nodes[n].output;
            for m in self.readers(out) {
                if m != n {
                    reach[n] |= (1 << m) | reach[m];
                }
            }
        }
        reach
    }

    /// The unit of each node when the fused `groups` (node indices) each run as one unit: a bit
    /// mask of the group's nodes, or of the node alone.
    fn units(&self, groups: &[Vec<usize>]) -> Vec<u64> {
        let mut unit: Vec<u64> = (0..self.nodes.len()).map(|n| 1u64 << n).collect();
        for g in groups {
            let mask = g.iter().fold(0u64, |m, &n| m | 1 << n);
            for &n in g {
                unit[n] = mask;
            }
        }
        unit
    }

    /// [`reach`](Self::reach) with each fused group of `groups` contracted to one unit (its
    /// members interleave row by row, so none finishes before another starts): bit `m` of
    /// `reach[n]` when a path of units leads from `n`'s unit to `m`'s, another unit.
    pub fn reach_grouped(&self, groups: &[Vec<usize>]) -> Vec<u64> {
        let unit = self.units(groups);
        let mut reach = vec![0u64; self.nodes.len()];
        // The quotient graph is acyclic (groups are convex): a fixed point in at most N rounds.
        loop {
            let mut changed = false;
            for n in self.live() {
                let mut r = reach[n];
                for m in self.live().filter(|&m| unit[m] & 1 << n != 0) {
                    for k in self.readers(self.nodes[m].output) {
                        if unit[k] != unit[n] {
                            r |= unit[k] | reach[k];
                        }
                    }
                }
                if r != reach[n] {
                    reach[n] = r;
                    changed = true;
                }
            }
            if !changed {
                return reach;
            }
        }
    }

    /// Schedule levels (as soon as possible): 0 for nodes whose inputs no node writes, else one
    /// more than the highest level of their inputs' writers.
    pub fn levels(&self) -> Vec<usize> {
        self.levels_grouped(&[])
    }

    /// [`levels`](Self::levels) with each fused group contracted to one unit (the runtime
    /// re-levels its schedule so: the members of a group share the level of the unit, as soon as
    /// possible in the quotient graph).
    pub fn levels_grouped(&self, groups: &[Vec<usize>]) -> Vec<usize> {
        let unit = self.units(groups);
        let mut level = vec![0usize; self.nodes.len()];
        let order = self.topo().unwrap_or_default();
        // Longest paths in the quotient graph: relax until stable (acyclic, at most N rounds).
        loop {
            let mut changed = false;
            for &n in &order {
                let mut l = 0;
                for m in order.iter().copied().filter(|&m| unit[m] == unit[n]) {
                    for w in self.nodes[m].inputs.iter().filter_map(|&i| self.writer(i)) {
                        if unit[w] != unit[n] {
                            l = l.max(level[w] + 1);
                        }
                    }
                }
                if l != level[n] {
                    level[n] = l;
                    changed = true;
                }
            }
            if !changed {
                return level;
            }
        }
    }

    /// `before[n]` has bit `m` when node `n` finishes before node `m` starts in every run: a
    /// dataflow path from `n` to `m`; outside queue modes (where the runtime runs the schedule one
    /// level after the other) also `n` in an earlier level than `m`. `strict`: dataflow only.
    pub fn happens_before(&self, strict: bool) -> Vec<u64> {
        self.happens_before_grouped(strict, &[])
    }

    /// [`happens_before`](Self::happens_before) when the fused `groups` each run as one unit
    /// (paths and levels of units; two members of one group are never ordered).
    pub fn happens_before_grouped(&self, strict: bool, groups: &[Vec<usize>]) -> Vec<u64> {
        let mut before = self.reach_grouped(groups);
        if !strict && !self.pipelined() {
            let level = self.levels_grouped(groups);
            for n in self.live() {
                for m in self.live() {
                    if level[n] < level[m] {
                        before[n] |= 1 << m;
                    }
                }
            }
        }
        before
    }

    /// A short description of how the graph runs (for summaries).
    pub fn mode(&self) -> String {
        let exec = match self.exec {
            Exec::Process => "process".to_string(),
            Exec::ScheduleWait => "schedule+wait".to_string(),
            Exec::Pipelined { manual, depth } => {
                format!("pipelined({}, depth {depth})", if manual { "manual" } else { "auto" })
            }
        };
        format!(
            "{exec}, memory plan {}, aliasing {}, fusion {}, {} thread(s), {} target(s){}",
            if self.memory_plan { "on" } else { "off" },
            if self.aliasing { "on" } else { "off" },
            if self.fusion { "on" } else { "off" },
            self.threads,
            self.targets.len(),
            if self.small_tiles { ", small tiles" } else { "" }
        )
    }

    fn img_label(&self, i: ImgId) -> String {
        let im = &self.images[i];
        format!("{}({}x{})", im.name, im.w, im.h)
    }
}

impl fmt::Display for GraphSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "graph of seed {}: {}", self.seed, self.mode())?;
        if !self.targets.is_empty() {
            let t: Vec<String> = self.targets.iter().map(|(n, k)| format!("{n} ({k} thread(s))")).collect();
            writeln!(f, "  targets: {}", t.join(", "))?;
        }
        writeln!(
            f,
            "  frames per run {}, explicit verify {}, steps {}, illegal {:?}",
            self.frames, self.explicit_verify, self.steps, self.illegal
        )?;
        writeln!(f, "  images:")?;
        for (i, im) in self.images.iter().enumerate() {
            let kind = match im.kind {
                ImgKind::Input => "input".to_string(),
                ImgKind::Real => "real (non-virtual, written by a node)".to_string(),
                ImgKind::Virtual(d) => format!("virtual, declared {d:?}"),
                ImgKind::Roi { parent, x, y } => format!("ROI at ({x}, {y}) of {}", self.images[parent].name),
                ImgKind::Parent => "parent of ROIs".to_string(),
            };
            let w = self.writer(i).map(|n| format!(", written by {}", self.nodes[n].name)).unwrap_or_default();
            writeln!(f, "    {} {}x{}: {kind}{w}", im.name, im.w, im.h)?;
        }
        if !self.scalars.is_empty() {
            let s: Vec<String> = self.scalars.iter().enumerate().map(|(i, v)| format!("s{i}={v}")).collect();
            writeln!(f, "  scalars: {}", s.join(", "))?;
        }
        writeln!(f, "  nodes:")?;
        for n in &self.nodes {
            let ins: Vec<String> = n.inputs.iter().map(|&i| self.img_label(i)).collect();
            let mut extra = Vec::new();
            if let Some(s) = n.scalar {
                extra.push(format!("scalar s{s}"));
            }
            match &n.tiling {
                Some(t) => extra.push(format!(
                    "tiling fast={} flexible={} block {}x{} border {:?}{} tile memory {}{}",
                    t.fast,
                    t.flexible,
                    t.block.0,
                    t.block.1,
                    t.kernel_border,
                    t.node_border.map(|b| format!(" (node: {b:?})")).unwrap_or_default(),
                    t.tile_memory,
                    t.rows.map(|f| format!(" row entry, fill {f:?}")).unwrap_or_default()
                )),
                None => extra.push("user kernel".into()),
            }
            if n.op == Op::Stencil {
                extra.push(format!("nbhd ({}, {}, {}, {})", n.nb.l, n.nb.r, n.nb.t, n.nb.b));
            }
            for h in &n.hints {
                extra.push(format!("hint ({}, {}, {:?})", h.a, h.b, h.kind));
            }
            if n.sleep_us > 0 {
                extra.push(format!("{} {} us", if n.spin { "spins" } else { "sleeps" }, n.sleep_us));
            }
            if let Some(t) = &n.target {
                extra.push(format!("target {t}"));
            }
            if n.removed {
                extra.push("REMOVED".into());
            }
            writeln!(
                f,
                "    {}: {}({}) -> {}  [{}]",
                n.name,
                n.op.short(),
                ins.join(", "),
                self.img_label(n.output),
                extra.join("; ")
            )?;
        }
        for (i, p) in self.payloads.iter().enumerate() {
            let mids: Vec<&str> = p.virtual_mid.iter().map(|&v| if v { "virtual" } else { "real" }).collect();
            let targets: Vec<String> = p.targets.iter().map(|t| t.clone().unwrap_or_else(|| "-".into())).collect();
            writeln!(
                f,
                "  payload p{i}: {} through {} copy node(s), intermediates [{}], targets [{}]{}",
                p.label(),
                p.copies(),
                mids.join(", "),
                targets.join(", "),
                if p.queued { ", input and output queued" } else { "" }
            )?;
        }
        for q in &self.queues {
            writeln!(
                f,
                "  queue: {} parameter {} ({}), {} reference(s){}",
                self.nodes[q.node].name,
                q.param,
                self.images[q.img].name,
                q.refs,
                if q.with_exemplar { " including the exemplar" } else { "" }
            )?;
        }
        Ok(())
    }
}
