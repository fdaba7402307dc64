//! The edge pipeline of the README demo (Gaussian → Sobel → magnitude → threshold, vx_filters
//! loaded as a module) at 1080p processes with zero heap allocations per frame in the runtime, at 1,
//! 2 and 4 threads. A counting global allocator counts the host's allocations on every thread (the
//! module's own std has its own allocator entry points; its kernels allocate nothing either, by
//! construction). Alone in its binary so no other test allocates meanwhile. The same graph
//! pipelined (fused: one coordinator job) allocates nothing per streamed frame either.

use vx::*;
use vx_tests::{build_module, plugin_dir};

#[path = "../../vx-core/tests/common/counting.rs"]
mod counting;

use counting::{Counting, allocations, sites};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_1080p_edge_pipeline_allocates_nothing_per_frame_at_1_2_and_4_threads() {
    let lib = build_module("vx-filters", &[]);
    let dir = plugin_dir("zero-alloc", &[("vx_filters", &lib)]);
    let (w, h) = (1920, 1080);
    let px: Vec<u8> = (0..w as u64 * h as u64).map(|i| ((i * 7919) % 253) as u8).collect();
    for threads in [1, 2, 4] {
        let ctx = Context::builder().threads(threads).build().unwrap();
        ctx.add_module_dir(&dir);
        ctx.load_module("vx_filters").unwrap();
        let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
        let g = Graph::new(&ctx).unwrap();
        let src = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        src.copy_from(Rect::full(w, h), 0, &px).unwrap();
        let v = || Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        let (blur, gx, gy, mag) = (v(), v(), v(), v());
        let level = Scalar::new(&ctx, ScalarValue::Uint8(60)).unwrap();
        let edges = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        g.add_node(&k("gaussian3x3"), [&src, &blur]).unwrap();
        g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap();
        g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
        g.add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&level), Reference::from(&edges)]).unwrap();
        for _ in 0..3 {
            g.process().unwrap(); // warm-up: verification, first-use thread-locals
        }
        let counted = allocations(|| {
            for _ in 0..10 {
                g.process().unwrap();
            }
        });
        assert_eq!(counted, 0, "{counted} allocations in 10 frames at {threads} thread(s); first:\n{}", sites());
        assert!(edges.to_vec::<u8>().unwrap().contains(&255), "the pipeline found edges");
    }
    // Pipelined (queue mode, depth 2), fused: the group is one job of the coordinator; a steady
    // stream of enqueue / dequeue allocates nothing either.
    for threads in [1, 2] {
        let ctx = Context::builder().threads(threads).build().unwrap();
        ctx.add_module_dir(&dir);
        ctx.load_module("vx_filters").unwrap();
        let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
        let g = Graph::new(&ctx).unwrap();
        let img = || Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        let (ins, outs) = ([img(), img()], [img(), img()]);
        for i in &ins {
            i.copy_from(Rect::full(w, h), 0, &px).unwrap();
        }
        let v = || Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        let (blur, gx, gy, mag) = (v(), v(), v(), v());
        let level = Scalar::new(&ctx, ScalarValue::Uint8(60)).unwrap();
        let first = g.add_node(&k("gaussian3x3"), [&ins[0], &blur]).unwrap();
        g.add_node(&k("sobel3x3"), [&blur, &gx, &gy]).unwrap();
        g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
        let last = g
            .add_node(&k("threshold"), [Reference::from(&mag), Reference::from(&level), Reference::from(&outs[0])])
            .unwrap();
        let (p_in, p_out) = (g.add_parameter(&first, 0).unwrap(), g.add_parameter(&last, 2).unwrap());
        g.set_schedule_config(
            ScheduleConfig::queue_auto().depth(2).queue(p_in, ins.clone()).queue(p_out, outs.clone()),
        )
        .unwrap();
        g.verify().unwrap();
        assert_eq!(g.fusion_report().unwrap().groups.len(), 1, "{}", g.fusion_report().unwrap());
        for (i, o) in ins.iter().zip(&outs) {
            g.enqueue(p_in, i).unwrap();
            g.enqueue(p_out, o).unwrap();
        }
        let cycle = |frames: usize| {
            for _ in 0..frames {
                let out = g.dequeue(p_out).unwrap();
                out.result.as_ref().unwrap();
                let input = g.dequeue(p_in).unwrap();
                g.enqueue(p_in, input.reference).unwrap();
                g.enqueue(p_out, out.reference).unwrap();
            }
        };
        cycle(6); // warm-up: the coordinator's bookkeeping, the queues' capacity
        let counted = allocations(|| cycle(10));
        assert_eq!(
            counted,
            0,
            "{counted} allocations in 10 pipelined frames at {threads} thread(s); first:\n{}",
            sites()
        );
        g.wait().unwrap();
        for _ in 0..2 {
            g.dequeue(p_in).unwrap();
            g.dequeue(p_out).unwrap();
        }
        assert!(outs[0].to_vec::<u8>().unwrap().contains(&255), "the pipeline found edges");
    }
    // The counter does see allocations (the test can fail).
    assert!(allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}
