//! Kernel memory regions (TIOVX `tivxMemAlloc` with persistent and scratch regions): two nodes'
//! scratch requests share one executor arena, a persistent block survives across frames and is
//! freed at deinit, a block deinit leaves is freed and reported with the node's name, allocation
//! outside init is refused, and the byte limits name their config key.

mod common;

use std::sync::{Arc, Mutex};

use common::u8_kernel as kernel;
use vx::*;

const W: u32 = 16;
const H: u32 = 4;

/// Adds `add` to every pixel through a scratch block of a whole frame (input → scratch → output),
/// recording the scratch block's address.
fn through_scratch(ctx: &Context, name: &str, add: u8, seen: Arc<Mutex<Vec<usize>>>) -> Kernel {
    kernel(ctx, name, move |b| {
        b.init(|l| l.alloc::<u8>(MemRegion::Scratch, (W * H) as usize).map(|_| ())).process(move |p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            let (rows, w) = (i.height() as usize, i.width() as usize);
            let tmp = p.block(MemBlock::<u8>::nth(MemRegion::Scratch, 0))?;
            seen.lock().unwrap().push(tmp.as_ptr() as usize);
            for y in 0..rows {
                for (t, s) in tmp[y * w..(y + 1) * w].iter_mut().zip(i.row(y as u32)) {
                    *t = s.wrapping_add(add);
                }
            }
            for y in 0..rows {
                o.row_mut(y as u32).copy_from_slice(&tmp[y * w..(y + 1) * w]);
            }
            Ok(())
        })
    })
}

/// Writes the frame count into every pixel: a persistent counter, freed in deinit.
fn frame_counter(ctx: &Context, free_in_deinit: bool) -> Kernel {
    kernel(ctx, "t.counter", move |b| {
        b.init(|l| {
            let block = l.alloc::<u32>(MemRegion::Persistent, 1)?;
            l.block(block)?[0] = 0;
            Ok(())
        })
        .deinit(move |l| if free_in_deinit { l.free(MemBlock::<u32>::nth(MemRegion::Persistent, 0)) } else { Ok(()) })
        .process(|p| {
            let c = p.block(MemBlock::<u32>::nth(MemRegion::Persistent, 0))?;
            c[0] += 1;
            let n = c[0];
            let (_, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..o.height() {
                o.row_mut(y).fill(n as u8);
            }
            Ok(())
        })
    })
}

fn input(ctx: &Context) -> Image {
    let a = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..W * H).map(|i| (i * 7) as u8).collect();
    a.copy_from(Rect::full(W, H), 0, &px).unwrap();
    a
}

#[test]
fn two_nodes_share_one_scratch_arena_and_a_persistent_block_lives_across_frames() {
    let ctx = Context::builder().threads(1).build().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (plus1, plus2) =
        (through_scratch(&ctx, "t.plus1", 1, seen.clone()), through_scratch(&ctx, "t.plus2", 2, seen.clone()));
    let counter = frame_counter(&ctx, true);
    let g = Graph::new(&ctx).unwrap();
    let a = input(&ctx);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let (out, count) =
        (Image::new(&ctx, W, H, ImageFormat::U8).unwrap(), Image::new(&ctx, W, H, ImageFormat::U8).unwrap());
    g.add_node(&plus1, [&a, &v]).unwrap().set_name("plus1").unwrap();
    g.add_node(&plus2, [&v, &out]).unwrap().set_name("plus2").unwrap();
    g.add_node(&counter, [&a, &count]).unwrap().set_name("counter").unwrap();
    g.verify().unwrap();
    // One executor (one thread): one arena of one frame, not two.
    assert_eq!(ctx.usage(ResourceKind::ScratchBytes).current, (W * H) as usize);
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 4, "the counter's u32");
    let mem = g.kernel_memory().unwrap();
    assert_eq!((mem.scratch_arena_bytes, mem.scratch_arenas), ((W * H) as usize, 1));
    let per_node: Vec<(&str, usize, usize)> =
        mem.nodes.iter().map(|n| (n.node.as_str(), n.persistent_bytes, n.scratch_bytes)).collect();
    assert_eq!(per_node, [("plus1", 0, (W * H) as usize), ("plus2", 0, (W * H) as usize), ("counter", 4, 0)]);
    for frame in 1..=3u8 {
        g.process().unwrap();
        let want: Vec<u8> = a.to_vec::<u8>().unwrap().iter().map(|p| p.wrapping_add(3)).collect();
        assert_eq!(out.to_vec::<u8>().unwrap(), want, "frame {frame}: +1 then +2 through scratch");
        assert!(count.to_vec::<u8>().unwrap().iter().all(|&c| c == frame), "frame {frame}: the counter persisted");
    }
    let addrs = seen.lock().unwrap().clone();
    assert_eq!(addrs.len(), 6);
    assert!(addrs.iter().all(|&p| p == addrs[0]), "both nodes' scratch at the same address: {addrs:x?}");
    drop(g);
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 0, "freed at deinit");
    assert_eq!(ctx.usage(ResourceKind::ScratchBytes).current, 0, "arenas freed with the graph");
    assert!(ctx.memory_leaks().is_empty());
}

#[test]
fn persistent_memory_deinit_leaves_is_freed_and_reported_with_the_node_name() {
    let ctx = Context::builder().threads(1).build().unwrap();
    let k = frame_counter(&ctx, false);
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&input(&ctx), &Image::new(&ctx, W, H, ImageFormat::U8).unwrap()])
        .unwrap()
        .set_name("leaky")
        .unwrap();
    g.process().unwrap();
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 4);
    drop(g);
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 0, "the runtime freed it");
    assert_eq!(
        ctx.memory_leaks(),
        [MemoryLeak { node: "leaky".into(), kernel: "t.counter".into(), blocks: 1, bytes: 4 }]
    );
}

#[test]
fn allocation_outside_init_and_a_block_taken_twice_are_refused() {
    let ctx = Context::builder().threads(1).build().unwrap();
    let errors = Arc::new(Mutex::new(Vec::new()));
    let (e1, e2) = (errors.clone(), errors.clone());
    let k = kernel(&ctx, "t.greedy", move |b| {
        b.init(|l| l.alloc::<f32>(MemRegion::Persistent, 8).map(|_| ()))
            .deinit(move |l| {
                e1.lock().unwrap().push(l.alloc::<u8>(MemRegion::Scratch, 1).unwrap_err());
                l.free(MemBlock::<f32>::nth(MemRegion::Persistent, 0))
            })
            .process(move |p| {
                let block = MemBlock::<f32>::nth(MemRegion::Persistent, 0);
                assert_eq!(p.block(block)?.len(), 8);
                e2.lock().unwrap().push(p.block(block).unwrap_err());
                e2.lock().unwrap().push(p.block(MemBlock::<u8>::nth(MemRegion::Scratch, 0)).unwrap_err());
                Ok(())
            })
    });
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&input(&ctx), &Image::new(&ctx, W, H, ImageFormat::U8).unwrap()])
        .unwrap()
        .set_name("greedy")
        .unwrap();
    g.process().unwrap();
    drop(g);
    let errors = errors.lock().unwrap();
    assert_eq!(errors.len(), 3);
    assert_eq!(errors[0].kind(), ErrorKind::InvalidParameters);
    assert!(errors[0].message().contains("persistent block #0 is already in use in this callback"), "{}", errors[0]);
    assert!(errors[1].message().contains("no scratch block #0"), "{}", errors[1]);
    assert_eq!(errors[2].kind(), ErrorKind::NotSupported);
    assert!(errors[2].message().contains("allocated in init only"), "{}", errors[2]);
    assert!(errors[2].message().contains("node 'greedy'"), "{}", errors[2]);
    assert!(ctx.memory_leaks().is_empty(), "deinit freed its block");
}

#[test]
fn a_byte_limit_reached_names_the_limit_and_its_key() {
    let ctx = Context::builder().threads(1).max_persistent_bytes(16).build().unwrap();
    let k =
        kernel(&ctx, "t.big", |b| b.init(|l| l.alloc::<u8>(MemRegion::Persistent, 17).map(|_| ())).process(|_| Ok(())));
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&input(&ctx), &Image::new(&ctx, W, H, ImageFormat::U8).unwrap()]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResources);
    assert!(e.message().contains("limit of 16 persistent bytes"), "{e}");
    assert!(e.message().contains("`max_persistent_bytes`"), "{e}");
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 0, "nothing taken");
}

#[test]
fn a_failed_init_gives_its_blocks_back_and_the_next_init_numbers_from_zero() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let ctx = Context::builder().threads(1).build().unwrap();
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = attempts.clone();
    let k = kernel(&ctx, "t.flaky", move |b| {
        b.init(move |l| {
            let block = l.alloc::<u32>(MemRegion::Persistent, 16)?;
            assert_eq!(block, MemBlock::nth(MemRegion::Persistent, 0), "numbered from 0 on every init");
            if seen.fetch_add(1, SeqCst) == 0 {
                return Err(Error::new(ErrorKind::Failure, "the device is not ready"));
            }
            Ok(())
        })
        .deinit(|l| l.free(MemBlock::<u32>::nth(MemRegion::Persistent, 0)))
        .process(|_| Ok(()))
    });
    let g = Graph::new(&ctx).unwrap();
    let (a, out) = (input(&ctx), Image::new(&ctx, W, H, ImageFormat::U8).unwrap());
    g.add_node(&k, [&a, &out]).unwrap().set_name("flaky").unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Failure);
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 0, "a failed init gets no deinit: blocks taken back");
    g.verify().unwrap();
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 64);
    drop(g);
    assert_eq!(ctx.usage(ResourceKind::PersistentBytes).current, 0);
    assert!(ctx.memory_leaks().is_empty(), "a failed init is not a leak: {:?}", ctx.memory_leaks());
}
