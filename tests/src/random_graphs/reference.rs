//! The reference interpreter: each image a `Vec<u8>` with a defined-pixel mask, each node's
//! semantics written from the specs (tiling tables for which pixels a tiling node computes), no
//! vx-rs involved.

use std::collections::HashMap;

use super::spec::*;

/// One image's pixels and which of them are defined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plane {
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
    /// Row-major pixels.
    pub px: Vec<u8>,
    /// Defined pixels.
    pub def: Vec<bool>,
}

impl Plane {
    /// All pixels undefined.
    pub fn undefined(w: u32, h: u32) -> Plane {
        let n = (w * h) as usize;
        Plane { w, h, px: vec![0; n], def: vec![false; n] }
    }
    /// All pixels defined.
    pub fn defined(w: u32, h: u32, px: Vec<u8>) -> Plane {
        assert_eq!(px.len(), (w * h) as usize);
        let n = px.len();
        Plane { w, h, px, def: vec![true; n] }
    }
    fn at(&self, x: u32, y: u32) -> (u8, bool) {
        let i = (y * self.w + x) as usize;
        (self.px[i], self.def[i])
    }
    fn set(&mut self, x: u32, y: u32, (v, d): (u8, bool)) {
        let i = (y * self.w + x) as usize;
        self.px[i] = v;
        self.def[i] = d;
    }
}

/// The rectangle `[x0, x1) × [y0, y1)` of output pixels a node computes (empty when
/// `x0 >= x1 || y0 >= y1`), per the tiling extension's two tables:
///
/// - plain user kernels and border `Self_`: every pixel;
/// - border `Undefined` with a flexible function: the pixels whose neighborhood lies inside;
/// - border `Undefined`, fast function only: the tile blocks (a grid from the top-left corner)
///   whose every pixel's neighborhood lies inside — the largest aligned subset.
pub fn processed(tiling: Option<&Tiling>, nb: Nb, w: u32, h: u32) -> (u32, u32, u32, u32) {
    let Some(t) = tiling else { return (0, 0, w, h) };
    if t.border() == Border::SelfMode {
        return (0, 0, w, h);
    }
    let (w, h) = (w as i64, h as i64);
    let (xa, xb) = (-(nb.l as i64), w - nb.r as i64);
    let (ya, yb) = (-(nb.t as i64), h - nb.b as i64);
    let (x0, x1, y0, y1) = if t.flexible {
        (xa, xb, ya, yb)
    } else {
        let (bw, bh) = (t.block.0 as i64, t.block.1 as i64);
        let up = |v: i64, b: i64| (v + b - 1).div_euclid(b) * b;
        let down = |v: i64, b: i64| v.div_euclid(b) * b;
        (up(xa, bw), down(xb, bw), up(ya, bh), down(yb, bh))
    };
    let c = |v: i64, hi: i64| v.clamp(0, hi) as u32;
    let (x0, x1, y0, y1) = (c(x0, w), c(x1, w), c(y0, h), c(y1, h));
    if x0 >= x1 || y0 >= y1 { (0, 0, 0, 0) } else { (x0, y0, x1, y1) }
}

/// Where coordinate `i` of a line of `n` pixels reads from under `fill` (`None`: the constant),
/// written from the rules' pictures: replicate `aaa|abcd|ddd`, reflect-101 `dcb|abcd|cba` (folded
/// at the first and last pixel, again and again for a line shorter than the reach; a one-pixel line
/// is its only pixel).
pub fn fill_source(i: i64, n: i64, fill: Fill) -> Option<i64> {
    if (0..n).contains(&i) {
        return Some(i);
    }
    match fill {
        Fill::Constant(_) => None,
        Fill::Replicate => Some(if i < 0 { 0 } else { n - 1 }),
        Fill::Reflect101 if n == 1 => Some(0),
        Fill::Reflect101 => {
            let mut j = i;
            while !(0..n).contains(&j) {
                j = if j < 0 { -j } else { 2 * (n - 1) - j };
            }
            Some(j)
        }
    }
}

/// The stencil weight of offset `(dx, dy)`.
pub fn weight(nb: Nb, dx: i32, dy: i32) -> u8 {
    (2 * (dx - nb.l) + 3 * (dy - nb.t) + 1) as u8
}

/// The reference state of one frame: the pixels of every root (non-ROI) image.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// By root image.
    pub roots: HashMap<ImgId, Plane>,
}

impl State {
    /// Image `img` (a window of its root for an ROI).
    pub fn read(&self, spec: &GraphSpec, img: ImgId) -> Plane {
        let (root, ox, oy) = spec.root_of(img);
        let (w, h) = (spec.images[img].w, spec.images[img].h);
        let r = &self.roots[&root];
        let mut p = Plane::undefined(w, h);
        for y in 0..h {
            for x in 0..w {
                p.set(x, y, r.at(x + ox, y + oy));
            }
        }
        p
    }

    /// Write `plane` into image `img`.
    pub fn write(&mut self, spec: &GraphSpec, img: ImgId, plane: &Plane) {
        let (root, ox, oy) = spec.root_of(img);
        let r = self.roots.get_mut(&root).expect("root");
        for y in 0..plane.h {
            for x in 0..plane.w {
                r.set(x + ox, y + oy, plane.at(x, y));
            }
        }
    }
}

/// Run node `n` on the state. With `plant`, AddC is deliberately off by one (the test of the test).
/// With `keep`, the pixels the node does not compute keep their previous value (the tiling tables:
/// "not processed"); otherwise they become undefined.
pub fn run_node(spec: &GraphSpec, n: usize, state: &mut State, plant: bool, keep: bool) {
    let node = &spec.nodes[n];
    let ins: Vec<Plane> = node.inputs.iter().map(|&i| state.read(spec, i)).collect();
    let out_spec = &spec.images[node.output];
    let (w, h) = (out_spec.w, out_spec.h);
    let mut out = if keep { state.read(spec, node.output) } else { Plane::undefined(w, h) };
    let (x0, y0, x1, y1) = processed(node.tiling.as_ref(), node.nb, w, h);
    for y in y0..y1 {
        for x in x0..x1 {
            let v = match node.op {
                Op::AddC => {
                    let c = spec.scalars[node.scalar.expect("scalar")];
                    let (p, d) = ins[0].at(x, y);
                    (p.wrapping_add(c).wrapping_add(plant as u8), d)
                }
                Op::Copy => ins[0].at(x, y),
                Op::Xor => {
                    let ((a, da), (b, db)) = (ins[0].at(x, y), ins[1].at(x, y));
                    (a ^ b, da && db)
                }
                Op::Avg => {
                    let ((a, da), (b, db)) = (ins[0].at(x, y), ins[1].at(x, y));
                    (((a as u16 + b as u16 + 1) >> 1) as u8, da && db)
                }
                Op::Transpose => ins[0].at(y, x),
                Op::Stencil => {
                    let i = &ins[0];
                    let (mut sum, mut def) = (0u8, true);
                    for dy in node.nb.t..=node.nb.b {
                        for dx in node.nb.l..=node.nb.r {
                            // Inside the processed rectangle of an Undefined border every read is
                            // inside; elsewhere (user kernels, Self_) the edge is replicated, or
                            // made up by a row kernel's fill.
                            let fill = node.tiling.as_ref().and_then(|t| t.rows).unwrap_or(Fill::Replicate);
                            let sx = fill_source(x as i64 + dx as i64, i.w as i64, fill);
                            let sy = fill_source(y as i64 + dy as i64, i.h as i64, fill);
                            let (p, d) = match (sx, sy) {
                                (Some(sx), Some(sy)) => i.at(sx as u32, sy as u32),
                                _ => {
                                    let Fill::Constant(c) = fill else { unreachable!("only a constant has no source") };
                                    (c, true)
                                }
                            };
                            sum = sum.wrapping_add(p.wrapping_mul(weight(node.nb, dx, dy)));
                            def &= d;
                        }
                    }
                    (sum, def)
                }
            };
            out.set(x, y, v);
        }
    }
    state.write(spec, node.output, &out);
}

/// Evaluate one frame. `content(root)` gives the pixels of every application root the application
/// fills (inputs, input parents) and the initial pixels of the others (real images, output
/// parents). Virtual images start undefined. With `prev` (sequential frames), real images and
/// output parents start with the previous frame's pixels and keep the pixels their writer does not
/// compute, unless the writer's output is aliased (`aliased`: its bytes are another image's too);
/// without, those pixels are undefined.
pub fn eval(
    spec: &GraphSpec,
    content: &dyn Fn(ImgId) -> Vec<u8>,
    plant: bool,
    prev: Option<&State>,
    aliased: &dyn Fn(ImgId) -> bool,
) -> State {
    let mut state = State::default();
    let written_parent = |p: ImgId| {
        (0..spec.images.len()).any(|c| {
            matches!(spec.images[c].kind, ImgKind::Roi { parent, .. } if parent == p) && spec.writer(c).is_some()
        })
    };
    for (i, im) in spec.images.iter().enumerate() {
        let carried = prev.and_then(|p| p.roots.get(&i)).cloned();
        let plane = match im.kind {
            ImgKind::Input => Plane::defined(im.w, im.h, content(i)),
            ImgKind::Parent if !written_parent(i) => Plane::defined(im.w, im.h, content(i)),
            ImgKind::Parent | ImgKind::Real => match (prev, carried) {
                (Some(_), Some(p)) => p,
                (Some(_), None) => Plane::defined(im.w, im.h, content(i)),
                (None, _) => Plane::undefined(im.w, im.h),
            },
            ImgKind::Virtual(_) => Plane::undefined(im.w, im.h),
            ImgKind::Roi { .. } => continue,
        };
        state.roots.insert(i, plane);
    }
    for n in spec.topo().expect("a legal graph is acyclic") {
        let out = spec.nodes[n].output;
        let keep = prev.is_some() && !spec.is_virtual(out) && !aliased(out);
        run_node(spec, n, &mut state, plant, keep);
    }
    state
}

/// A payload chain's objects as the reference sees them: digests (`vx_tests::kinds::digest`). A
/// copy node gives its output the contents of its input, so every object of the chain (the
/// intermediates, the output) holds the input's digest of the frame.
pub fn payload(chain: &PayloadSpec, input: u64) -> Vec<u64> {
    vec![input; chain.copies() + 1]
}

/// Per live node whose output lives in a fused group's line buffers (`fused`: the names of the
/// images that do), the output rows some reader needs (`None` for every other node): walking each
/// group's members backwards (`groups`: node indices in the order their steps run them), a node
/// whose output is kept whole needs its processed rows; a member's needed rows ∩ its processed rows
/// need, of each fused input's writer, the rows its windows read (through its row kernel's fill,
/// else directly), ∩ that writer's processed rows. The fused runner computes at least these rows
/// of a member and at most its processed ones.
pub fn fused_needed_rows(spec: &GraphSpec, groups: &[Vec<usize>], fused: &[String]) -> Vec<Option<Vec<bool>>> {
    let mut need: Vec<Option<Vec<bool>>> = vec![None; spec.nodes.len()];
    let rows_of = |n: usize| {
        let node = &spec.nodes[n];
        let out = &spec.images[node.output];
        let (_, y0, _, y1) = processed(node.tiling.as_ref(), node.nb, out.w, out.h);
        y0..y1.max(y0)
    };
    for group in groups {
        for &n in group {
            if fused.contains(&spec.images[spec.nodes[n].output].name) {
                need[n] = Some(vec![false; spec.images[spec.nodes[n].output].h as usize]);
            }
        }
        for &n in group.iter().rev() {
            let node = &spec.nodes[n];
            let mine: Vec<u32> = match &need[n] {
                Some(rows) => rows_of(n).filter(|&y| rows[y as usize]).collect(),
                None => rows_of(n).collect(),
            };
            for &img in &node.inputs {
                let Some(p) = group.iter().copied().find(|&p| spec.nodes[p].output == img) else { continue };
                if need[p].is_none() {
                    continue;
                }
                let h = spec.images[img].h as i64;
                let fill = node.tiling.as_ref().and_then(|t| t.rows);
                let theirs = rows_of(p);
                for &y in &mine {
                    for dy in node.nb.t..=node.nb.b {
                        let src = match fill {
                            Some(fill) => fill_source(y as i64 + dy as i64, h, fill),
                            None => Some(y as i64 + dy as i64).filter(|s| (0..h).contains(s)),
                        };
                        if let Some(s) = src.filter(|&s| theirs.contains(&(s as u32))) {
                            need[p].as_mut().expect("checked above")[s as usize] = true;
                        }
                    }
                }
            }
        }
    }
    need
}
