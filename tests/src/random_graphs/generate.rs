//! The seeded generator: a [`GraphSpec`] from a seed (pure: the same seed, the same graph).

use vx::AliasKind;

use super::rng::Rng;
use super::spec::*;

/// Awkward sizes: a pixel, long thin rows, tall thin columns, and small random ones.
fn base_size(rng: &mut Rng) -> (u32, u32) {
    match rng.below(8) {
        0 => (1, 1),
        1 => (1023, 3),
        2 => (5, 300),
        3 => (rng.range(1, 3), rng.range(1, 3)),
        4 => (rng.range(1, 64), 1),
        _ => (rng.range(1, 40), rng.range(1, 24)),
    }
}

struct Gen {
    rng: Rng,
    spec: GraphSpec,
    /// Images nodes may read, newest last.
    readable: Vec<ImgId>,
    /// Free ROI slots of output parents: (parent, x, y, w, h).
    slots: Vec<(ImgId, u32, u32, u32, u32)>,
    /// With fusion on, the stream of the bias toward fusable nodes (stream 4, so the graph of a
    /// seed with fusion off is the one it had without fusion).
    fusion: Option<Rng>,
}

impl Gen {
    fn image(&mut self, w: u32, h: u32, kind: ImgKind) -> ImgId {
        let id = self.spec.images.len();
        self.spec.images.push(ImgSpec { name: format!("img{id}"), w, h, kind });
        id
    }

    /// A new application input of `w × h`: a plain image, or an ROI of a larger input.
    fn input(&mut self, w: u32, h: u32, allow_roi: bool) -> ImgId {
        if allow_roi && self.rng.chance(1, 4) {
            let (dx, dy) = (self.rng.range(0, 3), self.rng.range(0, 3));
            let (pw, ph) = (w + dx + self.rng.range(0, 2), h + dy + self.rng.range(0, 2));
            let parent = self.image(pw, ph, ImgKind::Parent);
            self.image(w, h, ImgKind::Roi { parent, x: dx, y: dy })
        } else {
            self.image(w, h, ImgKind::Input)
        }
    }

    /// A new output image of `w × h`.
    fn output(&mut self, w: u32, h: u32, pipelined: bool) -> ImgId {
        let r = self.rng.below(100);
        if r < 60 {
            let declared = match self.rng.below(10) {
                0..=4 => Declared::Nothing,
                5..=6 => Declared::Format,
                _ => Declared::Full,
            };
            self.image(w, h, ImgKind::Virtual(declared))
        } else if r < 85 || pipelined && r < 90 {
            self.image(w, h, ImgKind::Real)
        } else if let Some(s) = self.slots.iter().position(|s| (s.3, s.4) == (w, h)) {
            // The free half of a parent another node writes the other half of.
            let (parent, x, y, _, _) = self.slots.remove(s);
            self.image(w, h, ImgKind::Roi { parent, x, y })
        } else {
            // An ROI of a larger image: alone, or with room for a sibling ROI (disjoint) that a
            // later node may write.
            let (dx, dy) = (self.rng.range(0, 2), self.rng.range(0, 2));
            let twin = self.rng.chance(2, 5);
            let pw = if twin { 2 * w + 1 + dx } else { w + dx + self.rng.range(0, 2) };
            let ph = h + dy + self.rng.range(0, 2);
            let parent = self.image(pw, ph, ImgKind::Parent);
            if twin {
                self.slots.push((parent, dx + w + 1, dy, w, h));
            }
            self.image(w, h, ImgKind::Roi { parent, x: dx, y: dy })
        }
    }

    /// A readable image to use as first input: often a recent one (deeper graphs).
    fn pick_input(&mut self) -> ImgId {
        let n = self.readable.len();
        let unread: Vec<ImgId> = self
            .readable
            .iter()
            .copied()
            .filter(|&i| self.spec.writer(i).is_some() && self.spec.readers(i).is_empty())
            .collect();
        if !unread.is_empty() && self.rng.chance(7, 10) {
            *self.rng.pick(&unread)
        } else if n > 1 && self.rng.chance(1, 2) {
            self.readable[n - 1 - self.rng.below(n.min(3) as u64) as usize]
        } else {
            *self.rng.pick(&self.readable)
        }
    }

    fn tiling(&mut self, op: Op) -> Option<Tiling> {
        if op == Op::Transpose || !self.rng.chance(11, 20) {
            return None;
        }
        let (fast, flexible) = match self.rng.below(20) {
            0..=7 => (true, true),
            8..=14 => (false, true),
            _ => (true, false),
        };
        let block = *self.rng.pick(&[(1, 1), (2, 1), (4, 1), (4, 2), (3, 3), (16, 1), (8, 4), (1, 5)]);
        let border = |g: &mut Gen| {
            if flexible && g.rng.chance(2, 5) { Border::SelfMode } else { Border::Undefined }
        };
        let kernel_border = border(self);
        let node_border = if self.rng.chance(1, 4) { Some(border(self)) } else { None };
        let tile_memory = if self.rng.chance(1, 4) { *self.rng.pick(&[1, 16, 100]) } else { 0 };
        Some(Tiling { fast, flexible, block, kernel_border, node_border, tile_memory, rows: None })
    }

    fn hints(&mut self, op: Op, tiling: bool) -> Vec<Hint> {
        let kind = |g: &mut Gen| if g.rng.chance(1, 2) { AliasKind::Dense } else { AliasKind::Sparse };
        let mut hints = Vec::new();
        match op {
            Op::AddC | Op::Transpose if self.rng.chance(2, 5) => {
                let k = kind(self);
                hints.push(Hint { a: 0, b: op.output_param(), kind: k })
            }
            Op::Copy if self.rng.chance(2, 5) => hints.push(Hint { a: 0, b: 1, kind: AliasKind::Sparse }),
            Op::Xor | Op::Avg => {
                for a in 0..2 {
                    if self.rng.chance(2, 5) {
                        let k = kind(self);
                        hints.push(Hint { a, b: 2, kind: k });
                    }
                }
            }
            // Only a tiling stencil gets a hint: the runtime must refuse it (a neighborhood).
            Op::Stencil if tiling && self.rng.chance(1, 4) => hints.push(Hint { a: 0, b: 1, kind: AliasKind::Dense }),
            _ => {}
        }
        hints
    }

    fn node(&mut self, index: usize, pipelined: bool) {
        let op = *self.rng.pick(&[
            Op::AddC,
            Op::AddC,
            Op::AddC,
            Op::Copy,
            Op::Copy,
            Op::Xor,
            Op::Xor,
            Op::Avg,
            Op::Avg,
            Op::Stencil,
            Op::Stencil,
            Op::Stencil,
            Op::Transpose,
        ]);
        let first = self.pick_input();
        let (w, h) = (self.spec.images[first].w, self.spec.images[first].h);
        let mut inputs = vec![first];
        if op.num_inputs() == 2 {
            let same: Vec<ImgId> = self
                .readable
                .iter()
                .copied()
                .filter(|&i| i != first && (self.spec.images[i].w, self.spec.images[i].h) == (w, h))
                .collect();
            let second = if self.rng.chance(1, 8) {
                first // one image twice in a node
            } else if !same.is_empty() && self.rng.chance(4, 5) {
                *self.rng.pick(&same)
            } else {
                let i = self.input(w, h, true);
                self.readable.push(i);
                i
            };
            inputs.push(second);
            if self.rng.chance(1, 2) {
                inputs.swap(0, 1);
            }
        }
        let nb = if op == Op::Stencil {
            let (l, r, t, b) = *self.rng.pick(&[
                (-1, 1, -1, 1),
                (-1, 1, -1, 1),
                (-1, 0, 0, 0),
                (0, 2, -1, 0),
                (-2, 2, 0, 0),
                (0, 0, 0, 1),
                (0, 0, 0, 0),
                (-3, 1, -2, 2),
            ]);
            Nb { l, r, t, b }
        } else {
            Nb::default()
        };
        let tiling = self.tiling(op);
        let hints = self.hints(op, tiling.is_some());
        let (ow, oh) = if op == Op::Transpose { (h, w) } else { (w, h) };
        let output = self.output(ow, oh, pipelined);
        let scalar = (op == Op::AddC).then(|| {
            if !self.spec.scalars.is_empty() && self.rng.chance(1, 4) {
                self.rng.below(self.spec.scalars.len() as u64) as usize
            } else {
                let v = self.rng.byte();
                self.spec.scalars.push(v);
                self.spec.scalars.len() - 1
            }
        });
        let (sleep_us, spin) =
            if self.rng.chance(2, 5) { (self.rng.range(50, 600), self.rng.chance(1, 2)) } else { (0, false) };
        let target = if !self.spec.targets.is_empty() && self.rng.chance(3, 5) {
            Some(self.rng.pick(&self.spec.targets).0.clone())
        } else if self.rng.chance(1, 6) {
            Some(vx::HOST_TARGET.to_string())
        } else {
            None
        };
        let mut node = NodeSpec {
            name: format!("n{index}_{}", op.short()),
            op,
            tiling,
            nb,
            hints,
            sleep_us,
            spin,
            inputs,
            scalar,
            output,
            target,
            removed: false,
        };
        self.fusable(&mut node);
        self.spec.nodes.push(node);
        self.readable.push(output);
    }

    /// With fusion on, make most nodes (three in four, not transposes) fusion candidates
    /// (`vx-core/src/graph/verify/fusion.rs`): tiling, no vertical neighborhood unless a row
    /// kernel, some leaving pixels unprocessed (border `Undefined`, fast-only remainders), no tile
    /// memory, on the
    /// host or their first input's writer's target, seldom an alias hint, their output virtual:
    /// chains of them over virtual images of one size then form fused groups (on the host or on a
    /// named target). The rest keep what the main stream drew.
    fn fusable(&mut self, node: &mut NodeSpec) {
        let Some(f) = self.fusion.as_mut() else { return };
        if node.op == Op::Transpose || !f.chance(3, 4) {
            return;
        }
        // A stencil with a vertical neighborhood: two in three a row kernel (a row entry), else flattened.
        let vertical = node.op == Op::Stencil && (node.nb.t != 0 || node.nb.b != 0);
        let rows = if vertical && f.chance(2, 3) {
            let c = f.byte();
            Some(*f.pick(&[Fill::Reflect101, Fill::Replicate, Fill::Constant(c)]))
        } else {
            if vertical {
                let (l, r) = *f.pick(&[(-1, 1), (-1, 0), (-2, 2), (0, 2), (-3, 1), (0, 0)]);
                node.nb = Nb { l, r, t: 0, b: 0 };
            }
            None
        };
        let blocks = [(1, 1), (2, 1), (4, 1), (4, 2), (3, 3), (16, 1), (8, 4), (1, 5)];
        node.tiling = Some(if node.nb.is_zero() && f.chance(1, 6) {
            // Fast only, 1x1 blocks: every pixel processed with border Undefined.
            Tiling::fast_only()
        } else {
            // Fast only (a remainder strip left unprocessed when the blocks do not divide the
            // image) one in five point operations; border `Undefined` (edges left unprocessed) two
            // in three point operations, one in three neighbourhoods.
            let fast_only = node.nb.is_zero() && f.chance(1, 5);
            let fast = fast_only || f.chance(1, 2);
            let block = *f.pick(&blocks);
            let self_border = !fast_only && if node.nb.is_zero() { f.chance(1, 3) } else { f.chance(2, 3) };
            let border = if self_border { Border::SelfMode } else { Border::Undefined };
            let (kernel_border, node_border) = if !fast_only && f.chance(1, 4) {
                (if self_border { Border::Undefined } else { Border::SelfMode }, Some(border))
            } else {
                (border, None)
            };
            Tiling { fast, flexible: !fast_only, block, kernel_border, node_border, tile_memory: 0, rows }
        });
        // Targets: a third keep what the main stream drew, a third take the target of their first
        // input's writer (chains on one named target fuse there), the rest run on the host.
        match f.range(0, 2) {
            0 => {}
            1 => {
                let writer = node.inputs.first().and_then(|&i| self.spec.nodes.iter().find(|n| n.output == i));
                node.target = writer.and_then(|w| w.target.clone());
            }
            _ => {
                if node.target.as_deref() != Some(vx::HOST_TARGET) {
                    node.target = None;
                }
            }
        }
        if !f.chance(1, 4) {
            node.hints.clear();
        }
        if self.spec.images[node.output].kind == ImgKind::Real && f.chance(4, 5) {
            self.spec.images[node.output].kind = ImgKind::Virtual(Declared::Nothing);
        }
    }
}

/// The graph of `seed`.
pub fn generate(seed: u64) -> GraphSpec {
    let mut rng = Rng::new(seed, 1);
    let pipelined = rng.chance(1, 3);
    let targets: Vec<(String, usize)> =
        (0..rng.below(3)).map(|i| (format!("t{i}"), if rng.chance(3, 10) { 2 } else { 1 })).collect();
    let exec = if pipelined {
        Exec::Pipelined { manual: rng.chance(2, 5), depth: rng.range(1, 4) as usize }
    } else if rng.chance(2, 5) {
        Exec::ScheduleWait
    } else {
        Exec::Process
    };
    let spec = GraphSpec {
        seed,
        threads: rng.range(1, 4) as usize,
        targets,
        memory_plan: rng.chance(2, 3),
        aliasing: rng.chance(4, 5),
        fusion: false,
        small_tiles: rng.chance(1, 2),
        images: Vec::new(),
        scalars: Vec::new(),
        nodes: Vec::new(),
        exec,
        queues: Vec::new(),
        frames: if pipelined { rng.range(3, 8) as usize } else { rng.range(1, 3) as usize },
        explicit_verify: rng.chance(1, 2),
        steps: rng.range(0, 3) as usize,
        illegal: None,
        payloads: Vec::new(),
    };
    let mut frng = Rng::new(seed, 4);
    let fusion = frng.chance(1, 2);
    let mut g = Gen { rng, spec, readable: Vec::new(), slots: Vec::new(), fusion: fusion.then_some(frng) };
    g.spec.fusion = fusion;
    let (w, h) = base_size(&mut g.rng);
    // The first input is plain (a pipelined graph queues it); more inputs, maybe ROIs.
    let first = g.image(w, h, ImgKind::Input);
    g.readable.push(first);
    for _ in 0..g.rng.below(3) {
        let i = g.input(w, h, true);
        g.readable.push(i);
    }
    let n_nodes = g.rng.range(2, 12) as usize;
    for i in 0..n_nodes {
        g.node(i, pipelined);
    }
    // Virtual images nobody reads become the application's (outputs to compare).
    for i in 0..g.spec.images.len() {
        if g.spec.is_virtual(i) && g.spec.readers(i).is_empty() {
            g.spec.images[i].kind = ImgKind::Real;
        }
    }
    if pipelined {
        queues(&mut g);
    }
    g.spec.illegal = illegal(&mut g);
    g.spec.payloads = payloads(&g.spec);
    g.spec
}

/// Payload chains for half the graphs, from a stream of their own (stream 3: the generator's
/// images use 1, the runner's steps 2), so a seed's images are those it had without payloads.
fn payloads(spec: &GraphSpec) -> Vec<PayloadSpec> {
    let mut rng = Rng::new(spec.seed, 3);
    if !rng.chance(1, 2) {
        return Vec::new();
    }
    let kinds = vx::DataType::ALL;
    (0..rng.range(1, 2))
        .map(|_| {
            let kind = *rng.pick(&kinds);
            let in_array = kind != vx::DataType::ObjectArray && rng.chance(1, 4);
            let copies = rng.range(1, 4) as usize;
            let virtual_mid = (1..copies).map(|_| rng.chance(2, 3)).collect();
            let targets = (0..copies)
                .map(|_| {
                    if !spec.targets.is_empty() && rng.chance(1, 2) {
                        Some(rng.pick(&spec.targets).0.clone())
                    } else {
                        None
                    }
                })
                .collect();
            let queued = spec.pipelined() && rng.chance(1, 2);
            PayloadSpec { kind, in_array, virtual_mid, targets, queued }
        })
        .collect()
}

/// Queue the first input and one or two plain real outputs (made real if there is none).
fn queues(g: &mut Gen) {
    let Exec::Pipelined { depth, .. } = g.spec.exec else { return };
    let spec = &mut g.spec;
    let mut outs: Vec<ImgId> = (0..spec.images.len()).filter(|&i| spec.images[i].kind == ImgKind::Real).collect();
    if outs.is_empty() {
        // The last node's output becomes a plain real image.
        let last = spec.nodes.last().expect("nodes").output;
        spec.images[last].kind = ImgKind::Real;
        outs.push(last);
    }
    let n_out = if outs.len() > 1 && g.rng.chance(1, 2) { 2 } else { 1 };
    let mut chosen = Vec::new();
    while chosen.len() < n_out {
        let o = *g.rng.pick(&outs);
        if !chosen.contains(&o) {
            chosen.push(o);
        }
    }
    // The first image (a plain input), when a node reads it.
    if !spec.readers(0).is_empty() {
        chosen.insert(0, 0);
    }
    for img in chosen {
        let (node, param) = match spec.writer(img) {
            Some(n) => (n, spec.nodes[n].op.output_param()),
            None => {
                let n = spec.readers(img)[0];
                (n, spec.nodes[n].inputs.iter().position(|&i| i == img).unwrap() as u32)
            }
        };
        let refs = g.rng.range(1, depth as u32 + 1) as usize;
        let with_exemplar = g.rng.chance(1, 3);
        spec.queues.push(QueueSpec { node, param, img, refs, with_exemplar });
    }
}

/// One illegal construct for about one graph in six.
fn illegal(g: &mut Gen) -> Option<Illegal> {
    if !g.rng.chance(1, 6) {
        return None;
    }
    if g.spec.pipelined() {
        return Some(Illegal::BadQueue);
    }
    Some(*g.rng.pick(&[
        Illegal::SecondWriter,
        Illegal::Cycle,
        Illegal::SelfLoop,
        Illegal::SizeMismatch,
        Illegal::WrongFormat,
        Illegal::UnwrittenVirtual,
        Illegal::ForeignVirtual,
        Illegal::SelfBorderWithoutFlexible,
        Illegal::UnknownTarget,
        Illegal::MissingParameter,
        Illegal::WrongVirtualSize,
        Illegal::BadHint,
    ]))
}
