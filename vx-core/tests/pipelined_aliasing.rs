//! Buffer aliasing in pipelined graphs (queue modes): each frame in flight has its own copies of
//! the virtual images, so a hint between virtual images is honoured per frame slot, and a hint into
//! a non-virtual (queued) output is refused — that output is a different reference every frame.
//! Checked on the decisions, on what the kernels see, and pixel by pixel over frames in flight at
//! depth 3 against the same graph processed frame by frame.

mod common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::image_in_out;
use vx::*;

const W: u32 = 24;
const H: u32 = 6;
const FRAMES: usize = 12;

fn ctx() -> Context {
    let mut b = Context::builder().threads(2);
    for t in ["a", "b", "c", "d"] {
        b = b.target(TargetConfig::new(t));
    }
    b.build().unwrap()
}

/// How many stage calls run at once, and the most seen.
#[derive(Default)]
struct Overlap {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// What the stages saw: (kernel name, aliased) per process call.
type Seen = Arc<Mutex<Vec<(String, bool)>>>;

/// A U8 → U8 stage applying `op` to every pixel: in place when the runtime aliased its (0, 1)
/// hint (if it has one), input → output otherwise. Sleeps a little so frames overlap.
fn stage(ctx: &Context, name: &str, op: fn(u8) -> u8, hint: bool, overlap: &Arc<Overlap>, seen: &Seen) -> Kernel {
    static KERNELS: AtomicUsize = AtomicUsize::new(0);
    let (overlap, seen, kname) = (Arc::clone(overlap), Arc::clone(seen), name.to_string());
    let unique = format!("pa.{name}.{}", KERNELS.fetch_add(1, SeqCst));
    let k = ctx
        .user_kernel(&unique, ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .process(move |p| {
            let n = overlap.now.fetch_add(1, SeqCst) + 1;
            overlap.most.fetch_max(n, SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            let aliased = p.is_parameter_aliased(0, 1);
            seen.lock().unwrap().push((kname.clone(), aliased));
            if aliased {
                let mut io = p.map_in_place::<u8>(0, 1)?;
                for y in 0..io.height() {
                    io.row_mut(y).iter_mut().for_each(|v| *v = op(*v));
                }
            } else {
                let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
                for y in 0..i.height() {
                    o.row_mut(y).iter_mut().zip(i.row(y)).for_each(|(o, &v)| *o = op(v));
                }
            }
            overlap.now.fetch_sub(1, SeqCst);
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    if hint {
        k.alias_parameter_index_hint(0, 1, AliasKind::Dense).unwrap();
    }
    k.finalize().unwrap();
    k
}

fn plus1(v: u8) -> u8 {
    v.wrapping_add(1)
}
fn invert(v: u8) -> u8 {
    !v
}
fn scramble(v: u8) -> u8 {
    (v ^ 0x5a).wrapping_mul(3)
}
fn plus7(v: u8) -> u8 {
    v.wrapping_add(7)
}

/// Frame `f`'s input pixels.
fn frame_pixels(f: usize) -> Vec<u8> {
    (0..W * H).map(|i| (i as usize * 7 + f * 31) as u8).collect()
}

fn image(ctx: &Context, name: &str) -> Image {
    let i = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    i.set_name(name);
    i
}

fn virt(g: &Graph, name: &str) -> Image {
    let v = Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap();
    v.set_name(name);
    v
}

/// A stage of a chain: name, pixel function, whether it has an alias hint (0, 1).
type Stage = (&'static str, fn(u8) -> u8, bool);

/// A chain of stages `(name, op, hint)` from a new input image to a new output image through
/// virtual images, stage `k` on target `"abcd"[k]`; returns the graph, its input and output
/// parameters, the nodes and the per-pixel function of the whole chain.
struct Chain {
    graph: Graph,
    p_in: u32,
    p_out: u32,
    ops: Vec<fn(u8) -> u8>,
}

fn chain(ctx: &Context, stages: &[Stage], overlap: &Arc<Overlap>, seen: &Seen) -> Chain {
    let g = Graph::new(ctx).unwrap();
    let n = stages.len();
    let mut images = vec![image(ctx, "in")];
    images.extend((1..n).map(|k| virt(&g, &format!("v{k}"))));
    images.push(image(ctx, "out"));
    let mut nodes = Vec::new();
    for (k, &(name, op, hint)) in stages.iter().enumerate() {
        let kernel = stage(ctx, name, op, hint, overlap, seen);
        let node = g.add_node(&kernel, [&images[k], &images[k + 1]]).unwrap();
        node.set_name(name).unwrap();
        node.set_target(["a", "b", "c", "d"][k]).unwrap();
        nodes.push(node);
    }
    let p_in = g.add_parameter(&nodes[0], 0).unwrap();
    let p_out = g.add_parameter(&nodes[n - 1], 1).unwrap();
    Chain { graph: g, p_in, p_out, ops: stages.iter().map(|s| s.1).collect() }
}

impl Chain {
    fn expected(&self, f: usize) -> Vec<u8> {
        frame_pixels(f).into_iter().map(|v| self.ops.iter().fold(v, |v, op| op(v))).collect()
    }

    /// (node, input, output, aliased, reason)
    fn decisions(&self) -> Vec<(String, u32, u32, bool, String)> {
        let d = self.graph.alias_decisions().unwrap();
        d.into_iter().map(|d| (d.node, d.input, d.output, d.aliased, d.reason.unwrap_or_default())).collect()
    }

    /// Frame by frame with `process` (normal mode): each output checked.
    fn run_sequential(&self) {
        let (input, output) =
            (self.graph.parameter_by_index(self.p_in).unwrap(), self.graph.parameter_by_index(self.p_out).unwrap());
        for f in 0..FRAMES {
            input.as_image().unwrap().copy_from(Rect::full(W, H), 0, &frame_pixels(f)).unwrap();
            self.graph.process().unwrap();
            assert_eq!(output.as_image().unwrap().to_vec::<u8>().unwrap(), self.expected(f), "sequential frame {f}");
        }
    }

    /// Queue mode at `depth` with 3 input and 3 output images, `FRAMES` frames streamed (inputs
    /// refilled as they come back), each output checked pixel by pixel against its frame.
    fn run_pipelined(&self, ctx: &Context, depth: usize) {
        let ins: Vec<Image> = (0..3).map(|k| image(ctx, &format!("in{k}"))).collect();
        let outs: Vec<Image> = (0..3).map(|k| image(ctx, &format!("out{k}"))).collect();
        let config =
            ScheduleConfig::queue_auto().depth(depth).queue(self.p_in, ins.clone()).queue(self.p_out, outs.clone());
        self.graph.set_schedule_config(config).unwrap();
        let (mut free_in, mut free_out): (VecDeque<Image>, VecDeque<Image>) = (ins.into(), outs.into());
        let (mut next, mut done_frames, mut first) = (0, 0, None);
        while done_frames < FRAMES {
            while next < FRAMES && !free_in.is_empty() && !free_out.is_empty() {
                let i = free_in.pop_front().unwrap();
                i.copy_from(Rect::full(W, H), 0, &frame_pixels(next)).unwrap();
                // Garbage in the output, so a frame that does not write it is seen.
                let o = free_out.pop_front().unwrap();
                o.copy_from(Rect::full(W, H), 0, &vec![0xeeu8; (W * H) as usize]).unwrap();
                self.graph.enqueue(self.p_in, &i).unwrap();
                self.graph.enqueue(self.p_out, &o).unwrap();
                next += 1;
            }
            let done = self.graph.dequeue(self.p_out).unwrap();
            done.result.clone().unwrap();
            // Frame numbers count from the graph's first pipelined frame, across runs.
            let base = *first.get_or_insert(done.frame);
            assert_eq!(done.frame, base + done_frames as u64, "frames come back in order");
            let out = done.reference.as_image().unwrap().clone();
            assert_eq!(out.to_vec::<u8>().unwrap(), self.expected(done_frames), "pipelined frame {done_frames}");
            done_frames += 1;
            free_out.push_back(out);
            free_in.push_back(self.graph.dequeue(self.p_in).unwrap().reference.as_image().unwrap().clone());
        }
        self.graph.wait().unwrap();
    }
}

/// The (kernel, aliased) pairs seen since the last call, counted per kernel.
fn seen_counts(seen: &Seen) -> Vec<(String, bool, usize)> {
    let mut counts: Vec<(String, bool, usize)> = Vec::new();
    for (k, a) in std::mem::take(&mut *seen.lock().unwrap()) {
        match counts.iter_mut().find(|(k2, a2, _)| *k2 == k && *a2 == a) {
            Some(c) => c.2 += 1,
            None => counts.push((k, a, 1)),
        }
    }
    counts.sort();
    counts
}

#[test]
fn a_hint_into_a_queued_output_is_refused_and_one_between_virtual_images_honoured() {
    let ctx = ctx();
    let (overlap, seen): (Arc<Overlap>, Seen) = Default::default();
    let stages: [Stage; 3] = [("plus1", plus1, false), ("invert", invert, true), ("scramble", scramble, true)];
    // Sequential: both hints honoured (v1 = v2 = out, the chain in the application's output).
    let seq = chain(&ctx, &stages, &overlap, &seen);
    seq.graph.verify().unwrap();
    let d = seq.decisions();
    assert_eq!(
        d.iter().map(|d| (d.0.as_str(), d.1, d.2, d.3)).collect::<Vec<_>>(),
        [("invert", 0, 1, true), ("scramble", 0, 1, true)],
        "{d:?}"
    );
    seq.run_sequential();
    seen_counts(&seen);
    // Pipelined: the hint into the queued output is refused, the one between virtual images kept.
    let pipe = chain(&ctx, &stages, &overlap, &seen);
    let (ins, outs) =
        ((0..3).map(|_| image(&ctx, "i")).collect::<Vec<_>>(), (0..3).map(|_| image(&ctx, "o")).collect::<Vec<_>>());
    pipe.graph
        .set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(pipe.p_in, ins).queue(pipe.p_out, outs))
        .unwrap();
    pipe.graph.verify().unwrap();
    let d = pipe.decisions();
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!((d[0].0.as_str(), d[0].3, d[0].4.as_str()), ("invert", true, ""), "{d:?}");
    assert_eq!((d[1].0.as_str(), d[1].1, d[1].2, d[1].3), ("scramble", 0, 1, false), "{d:?}");
    assert!(
        d[1].4.contains(
            "output 'out' is not virtual and the graph is pipelined: each frame in flight needs its own buffer"
        ),
        "{}",
        d[1].4
    );
    seen_counts(&seen);
    overlap.most.store(0, SeqCst);
    pipe.run_pipelined(&ctx, 3);
    assert_eq!(
        seen_counts(&seen),
        [("invert".into(), true, FRAMES), ("plus1".into(), false, FRAMES), ("scramble".into(), false, FRAMES)]
    );
    assert!(overlap.most.load(SeqCst) >= 2, "frames in flight overlap (most at once: {})", overlap.most.load(SeqCst));
}

#[test]
fn an_aliased_chain_of_virtual_images_has_its_own_buffer_in_every_frame_in_flight() {
    let ctx = ctx();
    let (overlap, seen): (Arc<Overlap>, Seen) = Default::default();
    // in → plus1 → v1 → invert (in place) → v2 → scramble (in place) → v3 → plus7 → out:
    // v1 = v2 = v3 in one buffer per frame slot. Frames sharing it would mix their pixels.
    let stages: [Stage; 4] =
        [("plus1", plus1, false), ("invert", invert, true), ("scramble", scramble, true), ("plus7", plus7, false)];
    let c = chain(&ctx, &stages, &overlap, &seen);
    for depth in [3, 1, 3] {
        c.run_pipelined(&ctx, depth);
        let d = c.decisions();
        assert!(d.len() == 2 && d.iter().all(|d| d.3), "depth {depth}: {d:?}");
        assert_eq!(
            seen_counts(&seen),
            [
                ("invert".into(), true, FRAMES),
                ("plus1".into(), false, FRAMES),
                ("plus7".into(), false, FRAMES),
                ("scramble".into(), true, FRAMES)
            ],
            "depth {depth}"
        );
        if depth == 3 {
            assert!(overlap.most.swap(0, SeqCst) >= 2, "frames in flight overlap");
        }
    }
}

#[test]
fn a_pipelined_graph_returned_to_normal_mode_honours_the_output_hint_again() {
    let ctx = ctx();
    let (overlap, seen): (Arc<Overlap>, Seen) = Default::default();
    let stages: [Stage; 2] = [("plus1", plus1, false), ("invert", invert, true)];
    let c = chain(&ctx, &stages, &overlap, &seen);
    c.run_pipelined(&ctx, 3);
    assert!(c.decisions()[0].4.contains("pipelined"), "{:?}", c.decisions());
    seen_counts(&seen);
    c.graph.set_schedule_config(ScheduleConfig::normal()).unwrap();
    c.run_sequential();
    assert!(c.decisions()[0].3, "{:?}", c.decisions());
    assert_eq!(seen_counts(&seen), [("invert".into(), true, FRAMES), ("plus1".into(), false, FRAMES)]);
}
