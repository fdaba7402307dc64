//! Pipelined graphs (OpenVX pipelining queue modes, TIOVX pipeline depth): frames in flight across
//! targets give the results of sequential processing frame by frame; stages really overlap at depth
//! 3 and never at depth 1; shared objects, failing frames, manual mode, every refusal, and a graph
//! dropped with frames in flight.

mod common;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use common::u8_kernel as kernel;
use vx::*;

const W: u32 = 16;
const H: u32 = 4;

fn ctx_with(targets: &[&str]) -> Context {
    let mut b = Context::builder().threads(2);
    for t in targets {
        b = b.target(TargetConfig::new(t));
    }
    b.build().unwrap()
}

fn image(ctx: &Context) -> Image {
    Image::new(ctx, W, H, ImageFormat::U8).unwrap()
}

/// Frame `f`'s input pixels.
fn frame_pixels(f: usize) -> Vec<u8> {
    (0..W * H).map(|i| (i as usize * 7 + f * 31) as u8).collect()
}

/// A node's process: output = input.
fn copy(p: &mut ProcessContext<'_>) -> Result<()> {
    let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
    for y in 0..i.height() {
        o.row_mut(y).copy_from_slice(i.row(y));
    }
    Ok(())
}

/// Put `g` in the queue mode of `config`, input and output queued with their images.
fn queue(g: &Graph, config: ScheduleConfig, (p_in, ins): (u32, &[Image]), (p_out, outs): (u32, &[Image])) {
    g.set_schedule_config(config.queue(p_in, ins.to_vec()).queue(p_out, outs.to_vec())).unwrap();
}

/// Enqueue every input with its output: one frame per pair.
fn enqueue_all(g: &Graph, (p_in, ins): (u32, &[Image]), (p_out, outs): (u32, &[Image])) {
    for (i, o) in ins.iter().zip(outs) {
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    }
}

/// How many stage calls run at once, and the most seen.
#[derive(Default)]
struct Overlap {
    now: AtomicUsize,
    most: AtomicUsize,
}

impl Overlap {
    fn enter(&self) {
        let n = self.now.fetch_add(1, SeqCst) + 1;
        self.most.fetch_max(n, SeqCst);
    }
    fn leave(&self) {
        self.now.fetch_sub(1, SeqCst);
    }
}

/// Stage `k`: out = in × 3 + k + (frames this node saw before) — the count makes a node's frame
/// order visible in the output. Sleeps `work` so stages last long enough to overlap.
fn stage(ctx: &Context, k: u8, work: Duration, overlap: Arc<Overlap>) -> Kernel {
    static KERNELS: AtomicUsize = AtomicUsize::new(0);
    let seen = Arc::new(AtomicU32::new(0));
    kernel(ctx, &format!("pipe.stage{k}_{}", KERNELS.fetch_add(1, SeqCst)), move |b| {
        b.process(move |p| {
            overlap.enter();
            std::thread::sleep(work);
            let count = seen.fetch_add(1, SeqCst) as u8;
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                    *o = i.wrapping_mul(3).wrapping_add(k).wrapping_add(count);
                }
            }
            overlap.leave();
            Ok(())
        })
    })
}

/// `input → stage1 → v1 → stage2 → v2 → stage3 → output`, node `k` on `targets[k]`; returns the
/// graph, its input and output graph parameters and the exemplar images.
fn three_stages(ctx: &Context, targets: [&str; 3], work: Duration, overlap: &Arc<Overlap>) -> (Graph, u32, u32) {
    let g = Graph::new(ctx).unwrap();
    let (input, output) = (image(ctx), image(ctx));
    let v1 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let v2 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let mut nodes = Vec::new();
    for (k, (i, o)) in [(&input, &v1), (&v1, &v2), (&v2, &output)].into_iter().enumerate() {
        let n = g.add_node(&stage(ctx, k as u8 + 1, work, overlap.clone()), [i, o]).unwrap();
        n.set_target(targets[k]).unwrap();
        nodes.push(n);
    }
    let p_in = g.add_parameter(&nodes[0], 0).unwrap();
    let p_out = g.add_parameter(&nodes[2], 1).unwrap();
    (g, p_in, p_out)
}

/// Stream `frames` through a pipelined graph with `n_refs` input and output images, refilling
/// inputs as they come back; the outputs in dequeue order, each checked to be the next frame.
fn stream(g: &Graph, p_in: u32, p_out: u32, ins: &[Image], outs: &[Image], frames: usize) -> Vec<Vec<u8>> {
    let mut free_in: VecDeque<Image> = ins.iter().cloned().collect();
    let mut free_out: VecDeque<Image> = outs.iter().cloned().collect();
    let (mut next, mut results) = (0, Vec::new());
    while results.len() < frames {
        while next < frames && !free_in.is_empty() && !free_out.is_empty() {
            let i = free_in.pop_front().unwrap();
            i.copy_from(Rect::full(W, H), 0, &frame_pixels(next)).unwrap();
            g.enqueue(p_in, &i).unwrap();
            g.enqueue(p_out, free_out.pop_front().unwrap()).unwrap();
            next += 1;
        }
        let done = g.dequeue(p_out).unwrap();
        done.result.clone().unwrap();
        let first = results.len() as u64;
        let out = done.reference.as_image().unwrap().clone();
        assert!(done.frame >= first, "frames come back in order");
        results.push(out.to_vec::<u8>().unwrap());
        free_out.push_back(out);
        free_in.push_back(g.dequeue(p_in).unwrap().reference.as_image().unwrap().clone());
    }
    g.wait().unwrap();
    results
}

/// The same frames processed one by one by a graph in normal mode.
fn sequential(ctx: &Context, targets: [&str; 3], frames: usize) -> Vec<Vec<u8>> {
    let (g, p_in, p_out) = three_stages(ctx, targets, Duration::ZERO, &Arc::default());
    let (input, output) = (g.parameter_by_index(p_in).unwrap(), g.parameter_by_index(p_out).unwrap());
    (0..frames)
        .map(|f| {
            input.as_image().unwrap().copy_from(Rect::full(W, H), 0, &frame_pixels(f)).unwrap();
            g.process().unwrap();
            output.as_image().unwrap().to_vec::<u8>().unwrap()
        })
        .collect()
}

fn images(ctx: &Context, n: usize) -> Vec<Image> {
    (0..n).map(|_| image(ctx)).collect()
}

#[test]
fn three_stages_on_three_targets_give_the_sequential_results_frame_by_frame_and_overlap_at_depth_3() {
    let ctx = ctx_with(&["a", "b", "c"]);
    const FRAMES: usize = 12;
    let expected = sequential(&ctx, ["a", "b", "c"], FRAMES);
    for depth in [1, 3] {
        let overlap = Arc::new(Overlap::default());
        let (g, p_in, p_out) = three_stages(&ctx, ["a", "b", "c"], Duration::from_millis(3), &overlap);
        let (ins, outs) = (images(&ctx, 3), images(&ctx, 3));
        queue(&g, ScheduleConfig::queue_auto().depth(depth), (p_in, &ins), (p_out, &outs));
        let got = stream(&g, p_in, p_out, &ins, &outs, FRAMES);
        assert_eq!(got, expected, "depth {depth}: outputs differ from sequential processing");
        let most = overlap.most.load(SeqCst);
        if depth == 1 {
            assert_eq!(most, 1, "depth 1 runs one stage at a time");
        } else {
            assert!(most >= 2, "depth 3: stages of different frames overlap (most at once: {most})");
        }
        assert_eq!(g.state().unwrap(), GraphState::Completed);
    }
}

#[test]
fn host_nodes_and_a_tiling_node_pipeline_too() {
    let ctx = ctx_with(&["dsp"]);
    let invert = common::tiling_kernel_with(&ctx, "pipe.invert", |args| {
        let (src, mut dst) = (args.input::<u8>(0)?, args.output::<u8>(1)?);
        for y in 0..dst.height() {
            for x in 0..dst.width() {
                dst.set(x, y, 255 - src.pixel(x, y, 0, 0));
            }
        }
        Ok(())
    });
    invert.finalize().unwrap();
    let plus = kernel(&ctx, "pipe.plus1", |b| {
        b.process(|p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                    *o = i.wrapping_add(1);
                }
            }
            Ok(())
        })
    });
    let g = Graph::new(&ctx).unwrap();
    let (input, output) = (image(&ctx), image(&ctx));
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let n0 = g.add_node(&invert, [&input, &v]).unwrap();
    let n1 = g.add_node(&plus, [&v, &output]).unwrap();
    n1.set_target("dsp").unwrap();
    let (p_in, p_out) = (g.add_parameter(&n0, 0).unwrap(), g.add_parameter(&n1, 1).unwrap());
    let (ins, outs) = (images(&ctx, 2), images(&ctx, 2));
    queue(&g, ScheduleConfig::queue_auto().depth(2), (p_in, &ins), (p_out, &outs));
    let got = stream(&g, p_in, p_out, &ins, &outs, 6);
    for (f, out) in got.iter().enumerate() {
        let want: Vec<u8> = frame_pixels(f).iter().map(|p| (255 - p).wrapping_add(1)).collect();
        assert_eq!(out, &want, "frame {f}");
    }
}

#[test]
fn a_shared_image_written_inside_the_graph_is_not_overwritten_before_its_reader_is_done() {
    // Stage 1 writes a real image (not queued: shared by every frame) that stage 2 reads after a
    // sleep. Frame f + 1's stage 1 must wait for frame f's stage 2, or stage 2 would see f + 1.
    let ctx = ctx_with(&["a", "b"]);
    let napping_copy = |name: &str, nap: u64| {
        kernel(&ctx, name, move |b| {
            b.process(move |p| {
                std::thread::sleep(Duration::from_millis(nap));
                copy(p)
            })
        })
    };
    let (fast, slow) = (napping_copy("pipe.fast", 0), napping_copy("pipe.slow", 5));
    let g = Graph::new(&ctx).unwrap();
    let (input, shared, output) = (image(&ctx), image(&ctx), image(&ctx));
    let n0 = g.add_node(&fast, [&input, &shared]).unwrap();
    let n1 = g.add_node(&slow, [&shared, &output]).unwrap();
    n0.set_target("a").unwrap();
    n1.set_target("b").unwrap();
    let (p_in, p_out) = (g.add_parameter(&n0, 0).unwrap(), g.add_parameter(&n1, 1).unwrap());
    let (ins, outs) = (images(&ctx, 4), images(&ctx, 4));
    queue(&g, ScheduleConfig::queue_auto().depth(4), (p_in, &ins), (p_out, &outs));
    let got = stream(&g, p_in, p_out, &ins, &outs, 8);
    for (f, out) in got.iter().enumerate() {
        assert_eq!(out, &frame_pixels(f), "frame {f} saw another frame's shared image");
    }
    // After the stream, the shared image holds the last frame's pixels.
    assert_eq!(shared.to_vec::<u8>().unwrap(), frame_pixels(7));
}

#[test]
fn a_failing_frame_is_dequeued_with_its_error_and_later_frames_work() {
    let ctx = ctx_with(&["t"]);
    let ran_after = Arc::new(AtomicU32::new(0));
    let fails = kernel(&ctx, "pipe.fails_on_99", |b| {
        b.process(|p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            if i.row(0)[0] == 99 {
                return Err(Error::new(ErrorKind::InvalidValue, "pixel 99 refused"));
            }
            for y in 0..i.height() {
                o.row_mut(y).copy_from_slice(i.row(y));
            }
            Ok(())
        })
    });
    let r = ran_after.clone();
    let after = kernel(&ctx, "pipe.after", move |b| {
        b.process(move |p| {
            r.fetch_add(1, SeqCst);
            copy(p)
        })
    });
    let g = Graph::with_name(&ctx, "failing").unwrap();
    let (input, output) = (image(&ctx), image(&ctx));
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let n0 = g.add_node(&fails, [&input, &v]).unwrap();
    let n1 = g.add_node(&after, [&v, &output]).unwrap();
    n0.set_target("t").unwrap();
    let (p_in, p_out) = (g.add_parameter(&n0, 0).unwrap(), g.add_parameter(&n1, 1).unwrap());
    let (ins, outs) = (images(&ctx, 3), images(&ctx, 3));
    queue(&g, ScheduleConfig::queue_auto().depth(3), (p_in, &ins), (p_out, &outs));
    for (f, (i, o)) in ins.iter().zip(&outs).enumerate() {
        i.copy_from(Rect::full(W, H), 0, &vec![if f == 1 { 99 } else { f as u8 }; (W * H) as usize]).unwrap();
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    }
    let done: Vec<Dequeued> = (0..3).map(|_| g.dequeue(p_out).unwrap()).collect();
    assert_eq!(done.iter().map(|d| d.frame).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(done[0].result.is_ok() && done[2].result.is_ok());
    let e = done[1].result.clone().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(e.context().node.as_deref(), Some(n0.name().unwrap().as_str()), "{e}");
    assert_eq!(ran_after.load(SeqCst), 2, "the failed frame's later node is skipped");
    assert_eq!(done[2].reference.as_image().unwrap().to_vec::<u8>().unwrap()[0], 2);
    // The inputs come back too, the failed frame's with its error.
    let inputs: Vec<Dequeued> = (0..3).map(|_| g.dequeue(p_in).unwrap()).collect();
    assert!(inputs[1].result.is_err() && inputs[0].result.is_ok());
    // `wait` reports the frame's error once.
    assert_eq!(g.wait().unwrap_err().kind(), ErrorKind::InvalidValue);
    g.wait().unwrap();
}

#[test]
fn manual_mode_starts_frames_at_schedule() {
    let ctx = ctx_with(&[]);
    let overlap = Arc::new(Overlap::default());
    let (g, p_in, p_out) = three_stages(&ctx, [HOST_TARGET; 3], Duration::ZERO, &overlap);
    let (ins, outs) = (images(&ctx, 2), images(&ctx, 2));
    queue(&g, ScheduleConfig::queue_manual().depth(2), (p_in, &ins), (p_out, &outs));
    assert_eq!(g.schedule_mode(), ScheduleMode::QueueManual);
    assert_eq!(g.schedule().unwrap_err().kind(), ErrorKind::Failure, "nothing enqueued yet");
    enqueue_all(&g, (p_in, &ins), (p_out, &outs));
    // Not scheduled: nothing runs, and waiting for an output is refused at once (no hang).
    let e = g.dequeue(p_out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Failure);
    assert!(e.message().contains("manual mode"), "{e}");
    assert_eq!(overlap.most.load(SeqCst), 0);
    g.schedule().unwrap();
    assert_eq!(g.dequeue(p_out).unwrap().frame, 0);
    assert_eq!(g.dequeue(p_out).unwrap().frame, 1);
    g.wait().unwrap();
    assert_eq!(g.check_done(p_in).unwrap(), 2);
}

#[test]
fn every_misuse_is_refused_with_a_clear_error_and_nothing_changes() {
    let ctx = ctx_with(&[]);
    let overlap = Arc::new(Overlap::default());
    let (g, p_in, p_out) = three_stages(&ctx, [HOST_TARGET; 3], Duration::ZERO, &overlap);
    let (ins, outs) = (images(&ctx, 2), images(&ctx, 2));
    let kind = |r: Result<()>| r.unwrap_err().kind();

    // Before a queue mode.
    assert_eq!(kind(g.enqueue(p_in, &ins[0])), ErrorKind::NotSupported);
    assert_eq!(g.dequeue(p_out).unwrap_err().kind(), ErrorKind::NotSupported);
    // Bad configs.
    let cfg = || ScheduleConfig::queue_auto().queue(p_in, ins.clone()).queue(p_out, outs.clone());
    assert_eq!(kind(g.set_schedule_config(cfg().depth(0))), ErrorKind::InvalidParameters);
    assert_eq!(kind(g.set_schedule_config(cfg().depth(MAX_PIPELINE_DEPTH + 1))), ErrorKind::InvalidParameters);
    assert_eq!(kind(g.set_schedule_config(ScheduleConfig::queue_auto())), ErrorKind::InvalidParameters);
    assert_eq!(kind(g.set_schedule_config(cfg().queue(7, ins.clone()))), ErrorKind::InvalidParameters);
    assert_eq!(kind(g.set_schedule_config(cfg().queue(p_in, ins.clone()))), ErrorKind::InvalidParameters);
    let big = Image::new(&ctx, W * 2, H, ImageFormat::U8).unwrap();
    let e = g.set_schedule_config(ScheduleConfig::queue_auto().queue(p_in, [big])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.message().contains("meta data") && e.to_string().contains("32x4"), "{e}");
    let twice = ScheduleConfig::queue_auto().queue(p_in, [ins[0].clone(), ins[0].clone()]);
    assert_eq!(kind(g.set_schedule_config(twice)), ErrorKind::InvalidParameters);
    let virt = Image::new_virtual(&g, W, H, ImageFormat::U8).unwrap();
    assert_eq!(
        kind(g.set_schedule_config(ScheduleConfig::queue_auto().queue(p_in, [virt]))),
        ErrorKind::InvalidParameters
    );
    assert_eq!(g.schedule_mode(), ScheduleMode::Normal, "a refused config changes nothing");
    // A node of another graph is refused.
    let other = Graph::new(&ctx).unwrap();
    let k = kernel(&ctx, "pipe.other", |b| b.process(|_| Ok(())));
    let foreign = other.add_node(&k, [&image(&ctx), &image(&ctx)]).unwrap();
    assert_eq!(g.add_parameter(&foreign, 0).unwrap_err().kind(), ErrorKind::InvalidReference);

    g.set_schedule_config(cfg()).unwrap();
    assert_eq!(kind(g.process()), ErrorKind::NotSupported);
    assert_eq!(kind(g.schedule()), ErrorKind::NotSupported, "auto mode starts frames by itself");
    let stranger = image(&ctx);
    assert_eq!(kind(g.enqueue(p_in, &stranger)), ErrorKind::InvalidReference);
    assert_eq!(kind(g.enqueue(9, &ins[0])), ErrorKind::InvalidParameters);
    // An input without an output: nothing can start; dequeue says which parameter lacks a reference.
    g.enqueue(p_in, &ins[0]).unwrap();
    assert_eq!(kind(g.enqueue(p_in, &ins[0])), ErrorKind::InvalidParameters, "enqueued twice");
    let e = g.dequeue(p_out).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Failure);
    assert!(e.message().contains(&format!("graph parameter {p_out} has no reference")), "{e}");
    assert_eq!(kind(g.set_schedule_config(cfg().depth(2))), ErrorKind::GraphScheduled);
    // Completing the set runs the frame.
    g.enqueue(p_out, &outs[0]).unwrap();
    assert_eq!(g.dequeue(p_out).unwrap().frame, 0);
    g.wait().unwrap();
    // Back to normal mode: process works again.
    g.set_schedule_config(ScheduleConfig::normal()).unwrap();
    g.process().unwrap();
}

#[test]
fn dropping_a_pipelined_graph_with_frames_in_flight_releases_everything() {
    let ctx = ctx_with(&["a", "b", "c"]);
    let deinits = Arc::new(AtomicU32::new(0));
    let d = deinits.clone();
    let k = kernel(&ctx, "pipe.slow_counted", move |b| {
        b.process(|p| {
            std::thread::sleep(Duration::from_millis(5));
            copy(p)
        })
        .deinit(move |_| {
            d.fetch_add(1, SeqCst);
            Ok(())
        })
    });
    {
        let g = Graph::new(&ctx).unwrap();
        let (input, output) = (image(&ctx), image(&ctx));
        let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        let n0 = g.add_node(&k, [&input, &v]).unwrap();
        let n1 = g.add_node(&k, [&v, &output]).unwrap();
        n0.set_target("a").unwrap();
        n1.set_target("b").unwrap();
        let (p_in, p_out) = (g.add_parameter(&n0, 0).unwrap(), g.add_parameter(&n1, 1).unwrap());
        let (ins, outs) = (images(&ctx, 3), images(&ctx, 3));
        queue(&g, ScheduleConfig::queue_auto().depth(3), (p_in, &ins), (p_out, &outs));
        g.verify().unwrap();
        enqueue_all(&g, (p_in, &ins), (p_out, &outs));
    }
    // The frames in flight finish (those not started are dropped), then the graph is released:
    // its nodes' deinit run.
    let deadline = Instant::now() + Duration::from_secs(10);
    while deinits.load(SeqCst) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(deinits.load(SeqCst), 2, "both nodes deinitialized");
    let stat = |name: &str| ctx.resource_stat(name).unwrap().used;
    let deadline = Instant::now() + Duration::from_secs(10);
    while (stat("max_graphs") > 0 || stat("max_nodes") > 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!((stat("max_graphs"), stat("max_nodes")), (0, 0));
    // The context still works.
    assert_eq!(sequential(&ctx, ["a", "b", "c"], 2).len(), 2);
}

#[test]
fn while_frames_stream_graph_calls_are_refused_not_blocked_and_commands_still_arrive() {
    let ctx = ctx_with(&["t"]);
    let gain = Arc::new(AtomicU32::new(1));
    let g2 = gain.clone();
    let k = kernel(&ctx, "pipe.slow_gain", move |b| {
        b.process(|p| {
            std::thread::sleep(Duration::from_millis(30));
            copy(p)
        })
        .control(move |c| {
            g2.store(c.command(), SeqCst);
            Ok(())
        })
    });
    let g = Graph::new(&ctx).unwrap();
    let (ins, outs) = (images(&ctx, 4), images(&ctx, 4));
    let n = g.add_node(&k, [&ins[0], &outs[0]]).unwrap();
    n.set_target("t").unwrap();
    let (p_in, p_out) = (g.add_parameter(&n, 0).unwrap(), g.add_parameter(&n, 1).unwrap());
    queue(&g, ScheduleConfig::queue_auto().depth(2), (p_in, &ins), (p_out, &outs));
    g.verify().unwrap();
    enqueue_all(&g, (p_in, &ins), (p_out, &outs));
    // Four frames of 30 ms: the stream runs for about 120 ms; meanwhile the state reads `Running`
    // and a query that needs the graph is refused.
    let t0 = Instant::now();
    while g.state().unwrap() != GraphState::Running {
        assert!(t0.elapsed() < Duration::from_secs(5), "the stream never started");
        std::thread::yield_now();
    }
    let refused = g.num_nodes().unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::GraphScheduled, "{refused}");
    assert!(t0.elapsed() < Duration::from_secs(1), "refused at once, not after the stream");
    assert_eq!(n.name().unwrap_err().kind(), ErrorKind::GraphScheduled);
    // A command reaches the node between two of its frames.
    n.send_command(7, &[], Duration::from_secs(10)).unwrap();
    assert_eq!(gain.load(SeqCst), 7);
    for _ in 0..4 {
        g.dequeue(p_out).unwrap().result.unwrap();
    }
    g.wait().unwrap();
    assert_eq!(g.state().unwrap(), GraphState::Completed);
    assert_eq!(n.perf().unwrap().num, 4);
}

/// Issue 26's reproduction: the memory plan must follow the order the pipeline coordinator runs a
/// frame's nodes in (dataflow), not schedule levels. `n1` (on a target) reads `img1` slowly while
/// `n2 → n3 → n4` run on the host; a plan by levels lets `img4` (levels 3–4) take `img1`'s bytes
/// (levels 0–1), and half of `img2` came out wrong in every frame.
#[test]
fn a_slow_reader_of_a_virtual_image_keeps_its_bytes_while_later_levels_run_by_dataflow() {
    const W: u32 = 64;
    const H: u32 = 16;
    let ctx = Context::builder().threads(1).target(TargetConfig::new("t0")).build().unwrap();
    let add = |k: u8| {
        kernel(&ctx, &format!("repro.add{k}"), move |b| {
            b.process(move |p| {
                let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
                for y in 0..i.height() {
                    for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                        *o = i.wrapping_add(k);
                    }
                }
                Ok(())
            })
        })
    };
    let slow_copy = kernel(&ctx, "repro.slow_copy", |b| {
        b.process(|p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                if y == i.height() / 2 {
                    std::thread::sleep(Duration::from_millis(50));
                }
                o.row_mut(y).copy_from_slice(i.row(y));
            }
            Ok(())
        })
    });
    let g = Graph::new(&ctx).unwrap();
    let real = || Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let virt = || Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let (img0, img2, img5) = (real(), real(), real());
    let (img1, img3, img4) = (virt(), virt(), virt());
    let n0 = g.add_node(&add(1), [&img0, &img1]).unwrap();
    let n1 = g.add_node(&slow_copy, [&img1, &img2]).unwrap();
    n1.set_target("t0").unwrap();
    g.add_node(&add(2), [&img1, &img3]).unwrap();
    g.add_node(&add(3), [&img3, &img4]).unwrap();
    let n4 = g.add_node(&add(4), [&img4, &img5]).unwrap();
    let p_in = g.add_parameter(&n0, 0).unwrap();
    let p_copy = g.add_parameter(&n1, 1).unwrap();
    let p_out = g.add_parameter(&n4, 1).unwrap();
    g.set_schedule_config(
        ScheduleConfig::queue_auto()
            .depth(1)
            .queue(p_in, [img0.clone()])
            .queue(p_copy, [img2.clone()])
            .queue(p_out, [img5.clone()]),
    )
    .unwrap();
    for f in 0..3u8 {
        let px: Vec<u8> = (0..W * H).map(|i| (i as u8).wrapping_mul(7).wrapping_add(f * 31)).collect();
        img0.copy_from(Rect::full(W, H), 0, &px).unwrap();
        for (p, r) in [(p_in, &img0), (p_copy, &img2), (p_out, &img5)] {
            g.enqueue(p, r).unwrap();
        }
        for p in [p_out, p_copy, p_in] {
            g.dequeue(p).unwrap().result.unwrap();
        }
        let wrong = |img: &Image, k: u8| {
            img.to_vec::<u8>().unwrap().iter().zip(&px).filter(|(o, i)| **o != i.wrapping_add(k)).count()
        };
        assert_eq!(wrong(&img2, 1), 0, "frame {f}: pixels of img2 overwritten while n1 read img1");
        assert_eq!(wrong(&img5, 10), 0, "frame {f}: img5");
    }
    g.wait().unwrap();
    // Nothing orders n1 (a reader of img1) against n3 or n4: img1 shares bytes with neither img3
    // nor img4.
    let plan = g.memory_plan().unwrap();
    let offset = |name: &str| plan.buffers.iter().find(|b| b.objects.iter().any(|o| o == name)).map(|b| b.offset);
    let bytes = (W * H) as usize;
    for other in [&img3, &img4] {
        let (a, b) = (offset(&img1.name()).unwrap(), offset(&other.name()).unwrap());
        assert!(a + bytes <= b || b + bytes <= a, "img1 and {} overlap in {plan:?}", other.name());
    }
}

/// Issue 26 (6): errors knowable at `schedule` / `enqueue` are returned there, not at `wait`.
#[test]
fn schedule_and_enqueue_return_verification_errors_themselves() {
    let ctx = ctx_with(&[]);
    // An empty graph, and one whose virtual input nobody writes.
    let empty = Graph::new(&ctx).unwrap();
    let e = empty.schedule().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidGraph, "{e}");
    assert_eq!(empty.wait().unwrap_err().kind(), ErrorKind::Failure, "nothing was scheduled");
    let k = kernel(&ctx, "pipe.copy_errors", |b| b.process(copy));
    let g = Graph::new(&ctx).unwrap();
    let unwritten = Image::new_virtual(&g, W, H, ImageFormat::U8).unwrap();
    g.add_node(&k, [&unwritten, &image(&ctx)]).unwrap();
    assert_eq!(g.schedule().unwrap_err().kind(), ErrorKind::InvalidGraph);
    assert_eq!(g.wait().unwrap_err().kind(), ErrorKind::Failure, "nothing was scheduled");
    // A pipelined graph failing verification: the first enqueue says so, and no frame starts.
    let g = Graph::new(&ctx).unwrap();
    let (i, o) = (image(&ctx), image(&ctx));
    let n = g.add_node(&k, [&i, &o]).unwrap();
    let bad = Image::new_virtual(&g, W, H, ImageFormat::U8).unwrap();
    g.add_node(&k, [&bad, &image(&ctx)]).unwrap();
    let p = g.add_parameter(&n, 0).unwrap();
    g.set_schedule_config(ScheduleConfig::queue_manual().queue(p, [i.clone()])).unwrap();
    let e = g.enqueue(p, &i).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidGraph, "{e}");
    assert_eq!(g.check_done(p).unwrap(), 0);
    let e = g.schedule().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidGraph, "{e}");
    g.wait().unwrap();
}

/// Stage `k` of the stress test: out = in × 3 + k (+ calls so far when `counts`); fails (after
/// counting) when `fails` says so of its input's first pixel.
fn counting_stage(ctx: &Context, name: &str, k: u8, counts: bool, fails: fn(u8) -> bool) -> Kernel {
    let calls = Arc::new(AtomicU32::new(0));
    kernel(ctx, name, move |b| {
        b.process(move |p| {
            let count = if counts { calls.fetch_add(1, SeqCst) as u8 } else { 0 };
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            if fails(i.row(0)[0]) {
                return Err(Error::new(ErrorKind::InvalidValue, "refused by the stress test"));
            }
            for y in 0..i.height() {
                for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                    *o = i.wrapping_mul(3).wrapping_add(k).wrapping_add(count);
                }
            }
            Ok(())
        })
    })
}

fn stage_px(px: &[u8], k: u8, count: u32) -> Vec<u8> {
    px.iter().map(|i| i.wrapping_mul(3).wrapping_add(k).wrapping_add(count as u8)).collect()
}

/// The hand-off protocol under stress (`VX_PIPE_STRESS_RUNS` runs, 12 by default): two pipelined
/// graphs stream at once over the same two targets, whose queues hold one job each (so the coordinators
/// often wait for space, and several of a graph's completions are settled together), plus host nodes:
/// `in → A(t1) → v1 → B(t2) → v2 → D(t1) → out1` and `v1 → C(host) → v3 → E(t2) → out2`. B fails
/// now and then (D is then skipped; C and E too unless they ran already); depths 1 to 4; the
/// application sometimes lets the pipeline run dry between frames. A, B and D count their calls
/// into their outputs, so every frame's pixels show that they saw the frames once each and in
/// order.
#[test]
fn the_hand_off_protocol_holds_under_stress() {
    let runs: usize = std::env::var("VX_PIPE_STRESS_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    const FRAMES: usize = 60;
    fn b_fails(px: u8) -> bool {
        px % 7 == 3
    }
    fn never(_: u8) -> bool {
        false
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for run in 0..runs {
        let ctx = Context::builder()
            .threads(2)
            .target(TargetConfig::new("t1").queue_depth(1))
            .target(TargetConfig::new("t2").queue_depth(1))
            .build()
            .unwrap();
        let plans: Vec<(usize, usize, bool)> =
            (0..2).map(|_| (1 + rnd(4) as usize, 1 + rnd(4) as usize, rnd(3) == 0)).collect();
        std::thread::scope(|sc| {
            for (gi, &(depth, extra, dry)) in plans.iter().enumerate() {
                let ctx = &ctx;
                sc.spawn(move || {
                    let k = |name: &str, k: u8, counts: bool, fails: fn(u8) -> bool| {
                        counting_stage(ctx, &format!("stress.{name}{gi}"), k, counts, fails)
                    };
                    let g = Graph::new(ctx).unwrap();
                    let v = || Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
                    let (v1, v2, v3) = (v(), v(), v());
                    let refs = depth + extra;
                    let (ins, out1, out2) = (images(ctx, refs), images(ctx, refs), images(ctx, refs));
                    let a = g.add_node(&k("a", 1, true, never), [&ins[0], &v1]).unwrap();
                    let b = g.add_node(&k("b", 2, true, b_fails), [&v1, &v2]).unwrap();
                    let d = g.add_node(&k("d", 4, true, never), [&v2, &out1[0]]).unwrap();
                    let _c = g.add_node(&k("c", 3, false, never), [&v1, &v3]).unwrap();
                    let e = g.add_node(&k("e", 5, false, never), [&v3, &out2[0]]).unwrap();
                    for (n, t) in [(&a, "t1"), (&b, "t2"), (&d, "t1"), (&e, "t2")] {
                        n.set_target(t).unwrap();
                    }
                    let p_in = g.add_parameter(&a, 0).unwrap();
                    let p1 = g.add_parameter(&d, 1).unwrap();
                    let p2 = g.add_parameter(&e, 1).unwrap();
                    g.set_schedule_config(
                        ScheduleConfig::queue_auto()
                            .depth(depth)
                            .queue(p_in, ins.clone())
                            .queue(p1, out1.clone())
                            .queue(p2, out2.clone()),
                    )
                    .unwrap();
                    // The model: each node's calls so far.
                    let (mut na, mut nb, mut nd) = (0u32, 0u32, 0u32);
                    let mut free: VecDeque<usize> = (0..refs).collect();
                    let (mut next, mut got, mut last_failed) = (0usize, 0usize, false);
                    let mut lcg = (run * 2 + gi) as u64 + 1;
                    while got < FRAMES {
                        while next < FRAMES && !free.is_empty() {
                            let r = free.pop_front().unwrap();
                            ins[r].copy_from(Rect::full(W, H), 0, &frame_pixels(next)).unwrap();
                            g.enqueue(p_in, &ins[r]).unwrap();
                            g.enqueue(p1, &out1[r]).unwrap();
                            g.enqueue(p2, &out2[r]).unwrap();
                            next += 1;
                            lcg = lcg.wrapping_mul(6364136223846793005).wrapping_add(1);
                            if dry && (lcg >> 40).is_multiple_of(3) {
                                break;
                            }
                        }
                        let d1 = g.dequeue(p1).unwrap();
                        let d2 = g.dequeue(p2).unwrap();
                        let di = g.dequeue(p_in).unwrap();
                        assert_eq!((d1.frame, d2.frame, di.frame), (got as u64, got as u64, got as u64), "run {run}");
                        let r = ins.iter().position(|i| Reference::from(i).same_object(&di.reference)).unwrap();
                        assert!(Reference::from(&out1[r]).same_object(&d1.reference), "run {run}");
                        // The model of frame `got`.
                        let pa = stage_px(&frame_pixels(got), 1, na);
                        na += 1;
                        let failed = b_fails(pa[0]);
                        last_failed = failed;
                        nb += 1;
                        if failed {
                            let e = d1.result.clone().unwrap_err();
                            assert_eq!(e.kind(), ErrorKind::InvalidValue, "run {run}: {e}");
                            assert!(d2.result.is_err() && di.result.is_err());
                        } else {
                            d1.result.clone().unwrap();
                            let pd = stage_px(&stage_px(&pa, 2, nb - 1), 4, nd);
                            nd += 1;
                            assert_eq!(out1[r].to_vec::<u8>().unwrap(), pd, "run {run}, graph {gi}, frame {got}: out1");
                            let pe = stage_px(&stage_px(&pa, 3, 0), 5, 0);
                            assert_eq!(out2[r].to_vec::<u8>().unwrap(), pe, "run {run}, graph {gi}, frame {got}: out2");
                        }
                        free.push_back(r);
                        got += 1;
                    }
                    let waited = g.wait();
                    assert!(waited.is_ok() || waited.unwrap_err().kind() == ErrorKind::InvalidValue);
                    g.wait().unwrap();
                    let state = if last_failed { GraphState::Abandoned } else { GraphState::Completed };
                    assert_eq!(g.state().unwrap(), state, "run {run}: the last frame's state");
                });
            }
        });
    }
}
