//! The tiling cost model (`graph/tiling/split.rs`) with the default policy, end to end: a node whose
//! work per thread dwarfs a helper's wake-up is shared with the crew's helpers, with the same output.
//! (Nodes too small to share are pinned by the model's unit tests: timing them here would flake.)

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use vx::*;

/// A U8 copy kernel whose tiles record the thread they ran on and then sleep `pause`.
fn recording_kernel(ctx: &Context, threads: Arc<Mutex<HashSet<std::thread::ThreadId>>>, pause: Duration) -> Kernel {
    let k = tiling_kernel_with(ctx, "test.recording_copy", move |args| {
        threads.lock().unwrap().insert(std::thread::current().id());
        let input = args.input::<u8>(0)?;
        let mut out = args.output::<u8>(1)?;
        for y in 0..out.height() {
            let src = input.row(y as i32).expect("fast tiles have rows").to_vec();
            out.row_mut(y).expect("fast tiles have rows").copy_from_slice(&src);
        }
        std::thread::sleep(pause);
        Ok(())
    });
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
