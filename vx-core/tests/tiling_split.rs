//! The tiling cost model (`graph/tiling/split.rs`) with the default policy, end to end: a node whose
//! work per thread dwarfs a helper's wake-up is shared with the crew's helpers, with the same output.
//! (Nodes too small to share are pinned by the model's unit tests: timing them here would flake.)
//! The model's measurements survive a re-verification that changes no work (a `process` loop that
//! gives each frame its own output through `set_parameter`), for tiling nodes and fused groups.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use vx::*;

/// Copy input 0 to output 1 (U8, row by row), record the calling thread in `threads`, then sleep
/// `pause`.
fn recorded_copy(
    args: &mut TileArgs<'_>,
    threads: &Mutex<HashSet<std::thread::ThreadId>>,
    pause: Duration,
) -> Result<(), TileError> {
    threads.lock().unwrap().insert(std::thread::current().id());
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    for y in 0..out.height() {
        let src = input.row(y as i32).expect("unaliased tiles have rows").to_vec();
        out.row_mut(y).expect("unaliased tiles have rows").copy_from_slice(&src);
    }
    std::thread::sleep(pause);
    Ok(())
}

/// A U8 copy kernel whose tiles record the thread they ran on and then sleep `pause`.
fn recording_kernel(ctx: &Context, threads: Arc<Mutex<HashSet<std::thread::ThreadId>>>, pause: Duration) -> Kernel {
    let k = tiling_kernel_with(ctx, "test.recording_copy", move |args| recorded_copy(args, &threads, pause));
    k.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize { width: 1, height: 1 })).unwrap();
    k.finalize().unwrap();
    k
}

/// Process a 512×512 copy `frames` times on a 2-thread default context; the threads its tiles ran
/// on, and whether every output was the input.
fn run(pause: Duration, frames: usize) -> (usize, bool) {
    let ctx = Context::builder().threads(2).build().unwrap();
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let k = recording_kernel(&ctx, seen.clone(), pause);
    let (w, h) = (512, 512);
    let pixels: Vec<u8> = (0..w * h).map(|i| (i * 7 % 251) as u8).collect();
    let src = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(w, h), 0, &pixels).unwrap();
    let dst = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    let mut exact = true;
    for _ in 0..frames {
        g.process().unwrap();
        exact &= dst.to_vec::<u8>().unwrap() == pixels;
    }
    let n = seen.lock().unwrap().len();
    (n, exact)
}

#[test]
fn a_node_with_milliseconds_of_work_is_shared_with_a_helper() {
    // Each tile sleeps 1 ms: the node's work is several ms per thread, far above any wake-up.
    let (threads, exact) = run(Duration::from_millis(1), 12);
    assert!(exact);
    assert_eq!(threads, 2, "the tiles never ran on a helper");
}

/// A fusable U8 copy kernel (a flexible function, fed row by row when fused) whose calls record
/// the thread they ran on and then sleep `pause`.
fn recording_row_kernel(ctx: &Context, threads: Arc<Mutex<HashSet<std::thread::ThreadId>>>, pause: Duration) -> Kernel {
    let k = ctx
        .tiling_kernel("test.recording_row_copy", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .flexible(move |args| recorded_copy(args, &threads, pause))
        .fusable()
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

/// `frames` frames of a 512×512 graph of two `kernel` nodes over a virtual image on a 2-thread
/// context (fused when `fusion` and the kernel is fusable), each frame read from the other of two
/// equal inputs and written to the other of two outputs through `set_parameter` (so each frame
/// re-verifies the graph: `process` verifies the nodes that changed, and `Graph::verify`, when
/// `verify`, every node); with `rename`, the virtual image also gets a new name every frame (a
/// fused group is then built anew, its work unchanged). Whether every output was the input, and
/// the fusion report.
fn alternating_outputs(
    kernel: &dyn Fn(&Context) -> Kernel,
    fusion: bool,
    verify: bool,
    rename: bool,
    frames: usize,
) -> (bool, FusionReport) {
    let ctx = Context::builder().threads(2).fusion(fusion).build().unwrap();
    let k = kernel(&ctx);
    let (w, h) = (512, 512);
    let pixels: Vec<u8> = (0..w * h).map(|i| (i * 7 % 251) as u8).collect();
    let image = || Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    let ins = [0, 1].map(|_| image());
    for i in &ins {
        i.copy_from(Rect::full(w, h), 0, &pixels).unwrap();
    }
    let outs = [0, 1].map(|_| image());
    let g = Graph::new(&ctx).unwrap();
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let first = g.add_node(&k, [&ins[0], &v]).unwrap();
    let last = g.add_node(&k, [&v, &outs[0]]).unwrap();
    let mut exact = true;
    for f in 0..frames {
        let out = &outs[f % 2];
        first.set_parameter(0, Reference::from(&ins[f % 2])).unwrap();
        if rename {
            v.set_name(&format!("between{f}"));
        }
        last.set_parameter(1, Reference::from(out)).unwrap();
        if verify {
            g.verify().unwrap();
        }
        g.process().unwrap();
        exact &= out.to_vec::<u8>().unwrap() == pixels;
    }
    (exact, g.fusion_report().unwrap())
}

/// [`alternating_outputs`] of 12 frames with a recording kernel (`fused`: the fusable row
/// kernel, 300 µs per call, in a fusing context; else the tile kernel, 1 ms per tile, fusion off):
/// also the number of threads the kernel ran on.
fn threads_seen(fused: bool, verify: bool, rename: bool) -> (bool, FusionReport, usize) {
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let s = seen.clone();
    let kernel = move |ctx: &Context| {
        if fused {
            recording_row_kernel(ctx, s.clone(), Duration::from_micros(300))
        } else {
            recording_kernel(ctx, s.clone(), Duration::from_millis(1))
        }
    };
    let (exact, report) = alternating_outputs(&kernel, fused, verify, rename, 12);
    let n = seen.lock().unwrap().len();
    (exact, report, n)
}

#[test]
fn a_node_re_verified_every_frame_with_the_same_work_is_still_shared() {
    // Before the estimates outlived a re-verification, every frame after `Graph::verify` was a
    // freshly verified node's first run: alone, measuring, so the tiles never reached a helper.
    let (exact, report, threads) = threads_seen(false, true, false);
    assert!(report.groups.is_empty(), "{report}");
    assert!(exact);
    assert_eq!(threads, 2, "the tiles never ran on a helper");
}

#[test]
fn a_fused_group_re_verified_every_frame_with_the_same_work_is_still_shared() {
    // `process` alone re-verifies here, and still re-forms the group every frame (the `fusion`
    // pass runs over the whole graph).
    let (exact, report, threads) = threads_seen(true, false, false);
    assert!(exact);
    assert_eq!(report.groups.len(), 1, "{report}");
    assert_eq!(report.groups[0].threads, 2, "{report}");
    assert_eq!(threads, 2, "the group's bands never ran on a helper");
}

#[test]
fn a_fused_group_built_anew_with_the_same_work_is_still_shared() {
    // A new name for the fused image: the group is built anew (not taken as it was), over the same
    // work, so it keeps the cost model's estimates (`FusedGroup::inherit`).
    let (exact, report, threads) = threads_seen(true, true, true);
    assert!(exact);
    assert_eq!(report.groups.len(), 1, "{report}");
    assert_eq!(report.groups[0].fused_images, ["between11"], "{report}");
    assert_eq!(threads, 2, "the group's bands never ran on a helper");
}
