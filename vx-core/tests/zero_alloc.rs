//! Steady-state `process` of a verified graph performs zero heap allocations in the runtime.
//!
//! A counting global allocator counts every allocation on every thread while a flag is up. The
//! graph is a three-node chain through virtual images whose kernels map patches and compute but
//! allocate nothing themselves, so any allocation counted is the runtime's. The kernels reach
//! kernel memory (a persistent block and a scratch row) in every process; the virtual images are
//! placed by the memory plan. This binary holds a
//! single test so no other test allocates concurrently.

use vx::*;
use vx_plugin_abi::BorderFill;

#[path = "common/counting.rs"]
mod counting;

use counting::{Counting, allocations, sites};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn add_kernel(ctx: &Context, name: &str, delta: u8) -> Kernel {
    let k = ctx
        .user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        // Kernel memory: a persistent frame counter and a scratch row, reached in every process.
        .init(|l| {
            l.alloc::<u32>(MemRegion::Persistent, 1)?;
            l.alloc::<u8>(MemRegion::Scratch, 64).map(|_| ())
        })
        .deinit(|l| l.free(MemBlock::<u32>::nth(MemRegion::Persistent, 0)))
        .process(move |p| {
            p.block(MemBlock::<u32>::nth(MemRegion::Persistent, 0))?[0] += 1;
            let row = p.block(MemBlock::<u8>::nth(MemRegion::Scratch, 0))?;
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                let tmp = &mut row[..i.width() as usize];
                for (t, i) in tmp.iter_mut().zip(i.row(y)) {
                    *t = i.wrapping_add(delta);
                }
                o.row_mut(y).copy_from_slice(tmp);
            }
            if let Some(local) = p.local_data() {
                local[0] = local[0].wrapping_add(1);
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.set_local_data_size(16).unwrap();
    k.finalize().unwrap();
    k
}

#[test]
fn steady_state_process_allocates_nothing() {
    let ctx = Context::builder().threads(2).build().unwrap();
    let k1 = add_kernel(&ctx, "alloc.one", 1);
    let k2 = add_kernel(&ctx, "alloc.two", 2);
    let k3 = add_kernel(&ctx, "alloc.three", 3);
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 64, 48, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(64, 48), 0, &vec![10u8; 64 * 48]).unwrap();
    let v1 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let v2 = Image::new_virtual(&g, 64, 48, ImageFormat::U8).unwrap();
    let dst = Image::new(&ctx, 64, 48, ImageFormat::U8).unwrap();
    g.add_node(&k1, [&src, &v1]).unwrap();
    g.add_node(&k2, [&v1, &v2]).unwrap();
    g.add_node(&k3, [&v2, &dst]).unwrap();
    g.verify().unwrap();
    // Warm-up: first-use initialisation of thread-locals and the like.
    for _ in 0..3 {
        g.process().unwrap();
    }

    let counted = allocations(|| {
        for _ in 0..200 {
            g.process().unwrap();
        }
    });

    assert_eq!(dst.to_vec::<u8>().unwrap(), vec![16u8; 64 * 48]);
    assert_eq!(counted, 0, "process allocated {counted} times in 200 runs; first:\n{}", sites());

    // A graph with a level of two independent nodes: the calling thread and the context's crew
    // share the level, allocating nothing.
    let g2 = Graph::new(&ctx).unwrap();
    let a = Image::new(&ctx, 64, 48, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx, 64, 48, ImageFormat::U8).unwrap();
    g2.add_node(&k1, [&src, &a]).unwrap();
    g2.add_node(&k2, [&src, &b]).unwrap();
    for _ in 0..3 {
        g2.process().unwrap();
    }
    const RUNS: usize = 630;
    let parallel = allocations(|| {
        for _ in 0..RUNS {
            g2.process().unwrap();
        }
    });
    assert_eq!(parallel, 0, "parallel levels allocated {parallel} times in {RUNS} runs; first:\n{}", sites());
    assert_eq!(b.to_vec::<u8>().unwrap(), vec![12u8; 64 * 48]);

    // A tiling node: the tile descriptors live on the stack, tile memory comes from the arenas sized
    // at verify, and a node large enough to run in parallel shares its tiles with the crew.
    let gauss = ctx
        .tiling_kernel("alloc.gauss", 999, 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .fast(|args| {
            let mem = args.tile_memory().len();
            let input = args.input::<u8>(0)?;
            let mut out = args.output::<u8>(1)?;
            for y in 0..out.height() {
                let (a, b, c) =
                    (input.row(y as i32 - 1).unwrap(), input.row(y as i32).unwrap(), input.row(y as i32 + 1).unwrap());
                for (x, o) in out.row_mut(y).unwrap().iter_mut().enumerate() {
                    *o = ((a[x + 1] as usize + b[x] as usize + b[x + 2] as usize + c[x + 1] as usize + mem) / 4) as u8;
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    gauss.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    gauss.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    gauss.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(-1, 1, -1, 1))).unwrap();
    gauss.set_attribute(KernelAttribute::TileMemorySize(8)).unwrap();
    gauss.finalize().unwrap();
    let g3 = Graph::new(&ctx).unwrap();
    let big = Image::new(&ctx, 1280, 720, ImageFormat::U8).unwrap();
    let blurred = Image::new(&ctx, 1280, 720, ImageFormat::U8).unwrap();
    g3.add_node(&gauss, [&big, &blurred]).unwrap();
    // A small tiling node runs on the calling thread and allocates nothing at all.
    let (small, small_out) =
        (Image::new(&ctx, 64, 48, ImageFormat::U8).unwrap(), Image::new(&ctx, 64, 48, ImageFormat::U8).unwrap());
    let g4 = Graph::new(&ctx).unwrap();
    g4.add_node(&gauss, [&small, &small_out]).unwrap();
    for _ in 0..3 {
        g4.process().unwrap();
    }
    let small_node = allocations(|| {
        for _ in 0..200 {
            g4.process().unwrap();
        }
    });
    assert_eq!(small_node, 0, "a small tiling node allocated; first:\n{}", sites());
    for _ in 0..3 {
        g3.process().unwrap();
    }
    const TILE_RUNS: usize = 126;
    let tiling = allocations(|| {
        for _ in 0..TILE_RUNS {
            g3.process().unwrap();
        }
    });
    assert_eq!(tiling, 0, "a parallel tiling node allocated {tiling} times in {TILE_RUNS} runs; first:\n{}", sites());

    // Nodes on named targets: each queued on its target's FIFO as a job of two words, the level
    // waiting on a latch on the stack; nothing allocated. The chain spans the host and two targets.
    let tctx = Context::builder()
        .threads(2)
        .target(TargetConfig::new("dsp1"))
        .target(TargetConfig::new("dsp2"))
        .build()
        .unwrap();
    let (t1, t2, t3) =
        (add_kernel(&tctx, "alloc.t1", 1), add_kernel(&tctx, "alloc.t2", 2), add_kernel(&tctx, "alloc.t3", 3));
    let g5 = Graph::new(&tctx).unwrap();
    let tsrc = Image::new(&tctx, 64, 48, ImageFormat::U8).unwrap();
    tsrc.copy_from(Rect::full(64, 48), 0, &vec![10u8; 64 * 48]).unwrap();
    let (tv1, tv2) = (
        Image::new_virtual(&g5, 0, 0, ImageFormat::Virtual).unwrap(),
        Image::new_virtual(&g5, 0, 0, ImageFormat::Virtual).unwrap(),
    );
    let tdst = Image::new(&tctx, 64, 48, ImageFormat::U8).unwrap();
    g5.add_node(&t1, [&tsrc, &tv1]).unwrap().set_target("dsp1").unwrap();
    g5.add_node(&t2, [&tv1, &tv2]).unwrap().set_target("dsp2").unwrap();
    g5.add_node(&t3, [&tv2, &tdst]).unwrap();
    for _ in 0..3 {
        g5.process().unwrap();
    }
    let on_targets = allocations(|| {
        for _ in 0..200 {
            g5.process().unwrap();
        }
    });
    assert_eq!(on_targets, 0, "nodes on targets allocated {on_targets} times in 200 runs; first:\n{}", sites());
    assert_eq!(tdst.to_vec::<u8>().unwrap(), vec![16u8; 64 * 48]);

    // The same chain pipelined (depth 3, queued input and output): a steady stream — dequeue a
    // frame's references, enqueue them again — allocates nothing, on the application's thread,
    // the coordinator or the targets, whether or not the pipeline runs dry between frames.
    let g6 = Graph::new(&tctx).unwrap();
    let (pv1, pv2) = (
        Image::new_virtual(&g6, 0, 0, ImageFormat::Virtual).unwrap(),
        Image::new_virtual(&g6, 0, 0, ImageFormat::Virtual).unwrap(),
    );
    let ins: Vec<Image> = (0..3)
        .map(|k| {
            let i = Image::new(&tctx, 64, 48, ImageFormat::U8).unwrap();
            i.copy_from(Rect::full(64, 48), 0, &vec![k as u8 * 10; 64 * 48]).unwrap();
            i
        })
        .collect();
    let outs: Vec<Image> = (0..3).map(|_| Image::new(&tctx, 64, 48, ImageFormat::U8).unwrap()).collect();
    let n0 = g6.add_node(&t1, [&ins[0], &pv1]).unwrap();
    n0.set_target("dsp1").unwrap();
    g6.add_node(&t2, [&pv1, &pv2]).unwrap().set_target("dsp2").unwrap();
    let n2 = g6.add_node(&t3, [&pv2, &outs[0]]).unwrap();
    let (p_in, p_out) = (g6.add_parameter(&n0, 0).unwrap(), g6.add_parameter(&n2, 1).unwrap());
    g6.set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()))
        .unwrap();
    let cycle = |frames: usize| {
        for _ in 0..frames {
            let out = g6.dequeue(p_out).unwrap();
            let input = g6.dequeue(p_in).unwrap();
            assert!(out.result.is_ok());
            g6.enqueue(p_in, input.reference).unwrap();
            g6.enqueue(p_out, out.reference).unwrap();
        }
    };
    for (i, o) in ins.iter().zip(&outs) {
        g6.enqueue(p_in, i).unwrap();
        g6.enqueue(p_out, o).unwrap();
    }
    cycle(30);
    let pipelined = allocations(|| {
        cycle(200);
    });
    for _ in 0..3 {
        g6.dequeue(p_out).unwrap();
        g6.dequeue(p_in).unwrap();
    }
    g6.wait().unwrap();
    assert_eq!(pipelined, 0, "a pipelined stream allocated {pipelined} times in 200 frames; first:\n{}", sites());
    for o in &outs {
        let first = o.to_vec::<u8>().unwrap()[0];
        assert!([6, 16, 26].contains(&first), "output {first}");
    }

    // A fused group (issue 34): a row kernel, a point kernel and the row kernel again over virtual
    // images, run step by step with line buffers and shared in bands with the crew; the rings, the
    // pointer pools and the step tables are made at verify.
    let fctx = Context::builder()
        .threads(2)
        .tiling_policy(TilingPolicy { split_by_cost: false, ..TilingPolicy::default() })
        .fusion(true)
        .build()
        .unwrap();
    let nb = Neighborhood::new(0, 0, -1, 1);
    let vsum = fctx
        .tiling_kernel("alloc.vsum", 997, 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .flexible(|args| {
            let input = args.input::<u8>(0)?;
            let mut out = args.output::<u8>(1)?;
            input.for_rows::<3>(BorderFill::Reflect101, |y, x, n, [a, b, c]| {
                if let Some(row) = out.row_mut(y) {
                    for i in 0..n as usize {
                        row[x as usize + i] = a[i] / 4 + b[i] / 2 + c[i] / 4;
                    }
                }
            })
        })
        .rows(RowFill::Reflect101, 3, move |args| {
            let input = args.input::<u8>(0)?;
            let mut out = args.output::<u8>(1)?;
            vx_plugin_abi::tile::for_rows_from_table::<u8, u8, 3>(
                &input,
                &mut out,
                args.region(),
                nb,
                BorderFill::Reflect101,
                |[a, b, c], o| {
                    for (i, v) in o.iter_mut().enumerate() {
                        *v = a[i] / 4 + b[i] / 2 + c[i] / 4;
                    }
                },
            )
        })
        .add()
        .unwrap();
    vsum.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    vsum.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    vsum.set_attribute(KernelAttribute::InputNeighborhood(nb)).unwrap();
    vsum.set_attribute(KernelAttribute::Border(BorderMode::Self_)).unwrap();
    vsum.finalize().unwrap();
    let inc = fctx
        .tiling_kernel("alloc.inc", 996, 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .flexible(|args| {
            let input = args.input::<u8>(0)?;
            let mut out = args.output::<u8>(1)?;
            for y in 0..out.height() {
                let src = input.row(y as i32).unwrap();
                for (o, &i) in out.row_mut(y).unwrap().iter_mut().zip(src) {
                    *o = i.wrapping_add(1);
                }
            }
            Ok(())
        })
        .fusable()
        .add()
        .unwrap();
    inc.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    inc.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    inc.finalize().unwrap();
    let (fw, fh) = (640u32, 480u32);
    let fsrc = Image::new(&fctx, fw, fh, ImageFormat::U8).unwrap();
    let pattern: Vec<u8> = (0..fw * fh).map(|i| (i * 7 + i / fw) as u8).collect();
    fsrc.copy_from(Rect::full(fw, fh), 0, &pattern).unwrap();
    let fused_graph = |fusion: bool| {
        let g = Graph::new(&fctx).unwrap();
        g.set_fusion(Some(fusion)).unwrap();
        let (v1, v2) = (
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
        );
        let out = Image::new(&fctx, fw, fh, ImageFormat::U8).unwrap();
        g.add_node(&vsum, [&fsrc, &v1]).unwrap();
        g.add_node(&inc, [&v1, &v2]).unwrap();
        g.add_node(&vsum, [&v2, &out]).unwrap();
        (g, out)
    };
    let (g6, fout) = fused_graph(true);
    let (g7, plain_out) = fused_graph(false);
    g7.process().unwrap();
    for _ in 0..3 {
        g6.process().unwrap();
    }
    let report = g6.fusion_report().unwrap();
    assert_eq!(report.groups.len(), 1, "{report}");
    assert_eq!(report.groups[0].threads, 2, "{report}");
    let fused = allocations(|| {
        for _ in 0..200 {
            g6.process().unwrap();
        }
    });
    assert_eq!(fused, 0, "a fused group allocated {fused} times in 200 runs; first:\n{}", sites());
    assert_eq!(fout.to_vec::<u8>().unwrap(), plain_out.to_vec::<u8>().unwrap(), "fused = unfused");

    // The counter does see allocations (the test can fail).
    assert!(allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) > 0);
}
