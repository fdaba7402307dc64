//! The conformance type loop (`UserNode.testUserKernel`, `testUserKernelObjectArray`) from a real
//! kernel module: `plugins/vx-typeloop`, built and loaded, has a copy kernel for each of ten data
//! object types × {meta from the exemplar, attribute by attribute} × {no local data,
//! framework-allocated, kernel-allocated}, written with the SDK's typed views over module ABI 5.
//! Checked as in process (`vx-core/tests/user_kernel_types.rs`, same application side): callback
//! counts per phase (read from the module through its `typeloop.counts` kernel), the local-data
//! rules, the output's meta, the data copied; then every type inside object arrays of 20.

use vx::*;
use vx_tests::{build_module, plugin_dir};

#[path = "../../vx-core/tests/common/type_loop.rs"]
mod type_loop;
use type_loop::{KINDS, Kind, fill, snapshot};

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Image => "image",
        Kind::Array => "array",
        Kind::Pyramid => "pyramid",
        Kind::Scalar => "scalar",
        Kind::Distribution => "distribution",
        Kind::Matrix => "matrix",
        Kind::Threshold => "threshold",
        Kind::Lut => "lut",
        Kind::Remap => "remap",
        Kind::Convolution => "convolution",
    }
}

const LOCALS: [&str; 3] = ["none", "framework", "kernel"];

/// The module's counter slot of a case (`plugins/vx-typeloop`: `kind * 12 + from_ref * 6 +
/// local * 2 + in_array`, kinds in `KINDS` order).
fn slot(kind: Kind, from_ref: bool, local: usize, in_array: bool) -> u32 {
    let k = KINDS.iter().position(|x| *x == kind).unwrap();
    (k * 12 + from_ref as usize * 6 + local * 2 + in_array as usize) as u32
}

/// A context that loaded `vx_typeloop` (each context maps its own copy: counters start at 0).
fn loaded() -> Context {
    let lib = build_module("vx-typeloop", &[]);
    let dir = plugin_dir("typeloop", &[("vx_typeloop", &lib)]);
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("vx_typeloop").unwrap();
    ctx
}

/// (validate, init, deinit, process, init's local-data sets accepted, deinit's) of a case, read
/// from the module by its `typeloop.counts` kernel.
fn counts(ctx: &Context, slot: u32) -> [u32; 6] {
    let k = ctx.kernel_by_name("typeloop.counts").unwrap();
    let s = Scalar::new(ctx, ScalarValue::Uint32(slot)).unwrap();
    let out = Array::new(ctx, ArrayItemType::Scalar(ScalarType::Uint32), 6).unwrap();
    let g = Graph::new(ctx).unwrap();
    g.add_node(&k, [Reference::from(&s), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    out.read_items::<u32>().unwrap().try_into().unwrap()
}

fn calls(ctx: &Context, slot: u32) -> (u32, u32, u32, u32) {
    let c = counts(ctx, slot);
    (c[0], c[1], c[2], c[3])
}

fn check_local(local: usize, node: &Node) {
    let (size, ptr) = (node.local_data_size().unwrap(), node.local_data_ptr().unwrap());
    if local == 0 {
        assert_eq!((size, ptr.is_null()), (0, true));
    } else {
        assert_eq!((size, ptr.is_null()), (10, false));
    }
}

#[test]
fn every_type_from_a_module_with_meta_from_the_exemplar_or_by_attribute_under_every_local_data_mode() {
    let ctx = loaded();
    for kind in KINDS {
        for (from_ref, mode) in [(true, "ref"), (false, "attr")] {
            for (local, lname) in LOCALS.iter().enumerate() {
                let name = format!("typeloop.{}.{mode}.{lname}", kind_name(kind));
                let slot = slot(kind, from_ref, local, false);
                let kernel = ctx.kernel_by_name(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
                let (src, dst) = (kind.make(&ctx), kind.make(&ctx));
                fill(kind, &src, 1);
                if let Reference::Convolution(c) = &dst {
                    // The scale is an attribute, not data a kernel maps: only the coefficients cross.
                    c.set_scale(8).unwrap();
                }
                let graph = Graph::new(&ctx).unwrap();
                let node = graph.add_node(&kernel, [&src, &dst]).unwrap();

                graph.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(calls(&ctx, slot), (1, 1, 0, 0), "{name}");
                check_local(local, &node);
                graph.verify().unwrap();
                assert_eq!(calls(&ctx, slot), (2, 2, 1, 0), "{name}");
                check_local(local, &node);
                let c = counts(&ctx, slot);
                let sets_allowed = (local != 1) as u32;
                assert_eq!((c[4], c[5]), (sets_allowed, sets_allowed), "{name}: local-data sets in init/deinit");

                assert_ne!(snapshot(&src), snapshot(&dst), "{name}: the output starts different");
                graph.process().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(calls(&ctx, slot), (2, 2, 1, 1), "{name}");
                assert_eq!(snapshot(&src), snapshot(&dst), "{name}: the module's copy arrived");
                assert_eq!(src.meta(), dst.meta(), "{name}");

                drop(node);
                drop(graph);
                assert_eq!(calls(&ctx, slot), (2, 2, 2, 1), "{name}: releasing the graph deinitializes");
            }
        }
    }
}

#[test]
fn every_type_inside_object_arrays_from_a_module() {
    let ctx = loaded();
    for kind in KINDS {
        for (from_ref, mode) in [(true, "ref"), (false, "attr")] {
            let name = format!("typeloop.objarray.{}.{mode}", kind_name(kind));
            let kernel = ctx.kernel_by_name(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let exemplar = kind.make(&ctx);
            let src = ObjectArray::new(&ctx, exemplar.clone(), 20).unwrap();
            let dst = ObjectArray::new(&ctx, exemplar, 20).unwrap();
            for (i, item) in src.items().iter().enumerate() {
                fill(kind, item, i as u8);
            }
            if kind == Kind::Convolution {
                for item in dst.items() {
                    Convolution::from_reference(item).unwrap().set_scale(8).unwrap();
                }
            }
            let graph = Graph::new(&ctx).unwrap();
            graph.add_node(&kernel, [&src, &dst]).unwrap();
            graph.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
            graph.process().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (s, d) = (Reference::from(&src), Reference::from(&dst));
            assert_eq!(snapshot(&s), snapshot(&d), "{name}: every item copied");
            drop(graph);
            assert_eq!(calls(&ctx, slot(kind, from_ref, 0, true)), (1, 1, 1, 1), "{name}");
        }
    }
}

#[test]
fn a_module_kernel_given_another_type_is_refused_with_both_named() {
    let ctx = loaded();
    let kernel = ctx.kernel_by_name("typeloop.matrix.ref.none").unwrap();
    // A LUT where the kernel expects a matrix: refused when the node is made, with both types.
    let (a, b) = (Lut::new(&ctx, ScalarType::Uint8, 100).unwrap(), Lut::new(&ctx, ScalarType::Uint8, 100).unwrap());
    let graph = Graph::new(&ctx).unwrap();
    let e = graph.add_node(&kernel, [&a, &b]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType, "{e}");
    assert_eq!((e.context().expected.as_deref(), e.context().found.as_deref()), (Some("matrix"), Some("LUT")));
    // A matrix of another element type: the module's validator refuses it, naming it.
    let kernel = ctx.kernel_by_name("typeloop.matrix.attr.none").unwrap();
    let (a, b) =
        (Matrix::new(&ctx, ScalarType::Int16, 5, 5).unwrap(), Matrix::new(&ctx, ScalarType::Uint8, 5, 5).unwrap());
    let graph = Graph::new(&ctx).unwrap();
    graph.add_node(&kernel, [&a, &b]).unwrap();
    let e = graph.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters, "{e}");
    assert!(e.to_string().contains("unexpected input"), "{e}");
}

// Object kinds, step 7: a valid-rectangle function and a convolution's scale across the module ABI
// (`plugins/vx-typeloop/src/across.rs`).

/// `typeloop.shrink`'s counter slot: validate calls, valid-rectangle calls, then the last call's
/// input count, first input's `start_x` and `end_x`, and output index.
const SHRINK: u32 = 120;

/// `src → kernel → mid (virtual) → kernel → dst`, 16×16 U8 images.
fn shrink_chain(ctx: &Context, kernel: &str) -> (Graph, Image, Image) {
    let k = ctx.kernel_by_name(kernel).unwrap();
    let g = Graph::new(ctx).unwrap();
    let src = Image::new(ctx, 16, 16, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(16, 16), 0, &(0..256).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
    let mid = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(ctx, 16, 16, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &mid]).unwrap();
    g.add_node(&k, [&mid, &dst]).unwrap();
    (g, src, dst)
}

#[test]
fn a_module_valid_rect_function_shrinks_each_output_by_one() {
    let ctx = loaded();
    let (g, src, dst) = shrink_chain(&ctx, "typeloop.shrink");
    g.verify().unwrap();
    // Two nodes, one call each; the second saw the first's output (1..15), as output 1.
    assert_eq!(counts(&ctx, SHRINK), [2, 2, 1, 1, 15, 1]);
    g.process().unwrap();
    assert_eq!(dst.valid_region(), Rect::new(2, 2, 14, 14));
    assert_eq!(src.valid_region(), Rect::full(16, 16), "inputs keep theirs");
    assert_eq!(dst.to_vec::<u8>().unwrap(), src.to_vec::<u8>().unwrap(), "and the pixels were copied");
    assert_eq!(counts(&ctx, SHRINK)[1], 2, "process calls no valid-rectangle function");
}

#[test]
fn valid_rect_attribute_of_user_kernel_gives_the_outputs_the_function() {
    let ctx = loaded();
    let (g, _, dst) = shrink_chain(&ctx, "typeloop.shrink_attr");
    g.process().unwrap();
    assert_eq!(dst.valid_region(), Rect::new(2, 2, 14, 14));
    let c = counts(&ctx, SHRINK);
    assert_eq!((c[0], c[1]), (0, 2), "the generated validator, then the function once per node");
}

#[test]
fn a_panicking_module_valid_rect_function_is_an_error_naming_kernel_and_parameter() {
    let ctx = loaded();
    let (g, _, _) = shrink_chain(&ctx, "typeloop.shrink_panics");
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Failure, "{e}");
    assert_eq!(e.context().parameter, Some(1), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("module kernel 'typeloop.shrink_panics'"), "{msg}");
    assert!(msg.contains("valid rectangle function panicked in the module"), "{msg}");
    assert!(msg.contains("panics on purpose"), "{msg}");
    // The host is fine: the same context still runs the module's kernels.
    assert_eq!(counts(&ctx, SHRINK)[1], 0);
}

#[test]
fn unloading_the_module_keeps_a_verified_graphs_valid_rect_function_callable() {
    let ctx = loaded();
    let (g, src, dst) = shrink_chain(&ctx, "typeloop.shrink");
    g.verify().unwrap();
    ctx.unload_module("vx_typeloop").unwrap();
    assert!(matches!(ctx.module_state("vx_typeloop"), Some(ModuleState::Draining { .. })));
    // Processing, and verifying again (the validator and the valid-rectangle function run once
    // more), still reach the module: the graph keeps it mapped.
    g.process().unwrap();
    src.set_valid_rectangle(Some(Rect::new(4, 4, 12, 12))).unwrap();
    g.verify().unwrap();
    g.process().unwrap();
    assert_eq!(dst.valid_region(), Rect::new(6, 6, 10, 10));
    drop(g);
    assert_eq!(ctx.module_state("vx_typeloop"), Some(ModuleState::Unloaded), "closed once the graph went");
}

/// `typeloop.<kernel>` over a 5×3 convolution (scale 1) with `scale` asked of output `out`.
fn conv_scale_graph(ctx: &Context, kernel: &str, scale: u32, out: &Convolution) -> Graph {
    let k = ctx.kernel_by_name(kernel).unwrap();
    let g = Graph::new(ctx).unwrap();
    let src = Convolution::new(ctx, 5, 3).unwrap();
    src.copy_from(&(0..15).collect::<Vec<i16>>()).unwrap();
    let s = Scalar::new(ctx, ScalarValue::Uint32(scale)).unwrap();
    g.add_node(&k, [Reference::from(&src), Reference::from(&s), Reference::from(out)]).unwrap();
    g
}

#[test]
fn a_module_gives_a_virtual_convolution_its_scale_and_a_module_downstream_reads_it() {
    let ctx = loaded();
    for kernel in ["typeloop.conv_scale", "typeloop.conv_scale_attr"] {
        let k = ctx.kernel_by_name(kernel).unwrap();
        let read = ctx.kernel_by_name("typeloop.conv_read_scale").unwrap();
        let g = Graph::new(&ctx).unwrap();
        let src = Convolution::new(&ctx, 5, 3).unwrap();
        let s = Scalar::new(&ctx, ScalarValue::Uint32(4)).unwrap();
        let mid = Convolution::new_virtual(&g, 5, 3).unwrap();
        let out = Scalar::new(&ctx, ScalarValue::Uint32(0)).unwrap();
        g.add_node(&k, [Reference::from(&src), Reference::from(&s), Reference::from(&mid)]).unwrap();
        g.add_node(&read, [Reference::from(&mid), Reference::from(&out)]).unwrap();
        g.process().unwrap_or_else(|e| panic!("{kernel}: {e}"));
        assert_eq!(out.value().unwrap(), ScalarValue::Uint32(4), "{kernel}");
        assert_eq!(src.scale(), 1, "{kernel}: the input keeps its own");
    }
}

#[test]
fn a_real_convolution_of_another_scale_is_refused_and_of_the_same_accepted() {
    let ctx = loaded();
    for kernel in ["typeloop.conv_scale", "typeloop.conv_scale_attr"] {
        let out = Convolution::new(&ctx, 5, 3).unwrap();
        out.set_scale(2).unwrap();
        let g = conv_scale_graph(&ctx, kernel, 8, &out);
        let e = g.verify().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue, "{kernel}: {e}");
        assert_eq!(e.context().parameter, Some(2), "{kernel}: {e}");
        assert!(e.to_string().contains("scale 8"), "{kernel}: the wanted scale is named: {e}");
        out.set_scale(8).unwrap();
        g.verify().unwrap_or_else(|e| panic!("{kernel}: {e}"));
        g.process().unwrap();
        assert_eq!(out.scale(), 8, "{kernel}");
    }
}

#[test]
fn a_convolution_scale_that_is_no_power_of_two_is_refused() {
    let ctx = loaded();
    for kernel in ["typeloop.conv_scale", "typeloop.conv_scale_attr"] {
        let out = Convolution::new(&ctx, 5, 3).unwrap();
        let e = conv_scale_graph(&ctx, kernel, 3, &out).verify().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue, "{kernel}: {e}");
        // Refused while the module's validator runs: the parameter crosses back in the message.
        assert!(e.to_string().contains("parameter 2"), "{kernel}: {e}");
        assert!(e.to_string().contains("power of two"), "{kernel}: {e}");
    }
}

/// Issue 28 step 9: a raw image through a module's kernel (`typeloop.raw_image.copy`, written
/// with the SDK's `RawImage<u16>` view over the shared layout) and a virtual raw image between two
/// of its nodes: every exposure's pixels plus 2, meta rows as they were, separate exposures and
/// line-interleaved; a raw image of another container refused at verify by the view's check.
#[test]
fn a_raw_image_through_a_module_kernel_and_a_virtual_raw_image() {
    let ctx = loaded();
    let kernel = ctx.kernel_by_name("typeloop.raw_image.copy").unwrap();
    let f16 = RawImageFormat::BIT16;
    for meta in [
        RawImageMeta::new(10, 3, f16).exposures(&[f16, f16, f16]).meta_rows(1, 2),
        RawImageMeta::new(8, 2, f16).exposures(&[f16, f16]).line_interleaved(true).meta_rows(0, 1),
    ] {
        let g = Graph::new(&ctx).unwrap();
        let (input, output) = (RawImage::new(&ctx, &meta).unwrap(), RawImage::new(&ctx, &meta).unwrap());
        let mid = RawImage::new_virtual(&g, &meta).unwrap();
        g.add_node(&kernel, [Reference::from(&input), Reference::from(&mid)]).unwrap();
        g.add_node(&kernel, [Reference::from(&mid), Reference::from(&output)]).unwrap();
        let bytes: Vec<u8> = (0..input.size()).map(|i| (i * 7 % 251) as u8).collect();
        input.copy_bytes_from(&bytes).unwrap();
        g.verify().unwrap();
        g.process().unwrap();
        let full = RawImageBuffer::Pixels(Rect::full(meta.width, meta.height));
        for e in 0..meta.num_exposures {
            let n = (meta.width * meta.height * 2) as usize;
            let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
            input.copy_patch_to(e, full, &mut a).unwrap();
            output.copy_patch_to(e, full, &mut b).unwrap();
            let plus2: Vec<u8> = a
                .chunks_exact(2)
                .flat_map(|p| u16::from_ne_bytes([p[0], p[1]]).wrapping_add(2).to_ne_bytes())
                .collect();
            assert_eq!(b, plus2, "{meta} exposure {e}");
            for (buffer, rows) in [
                (RawImageBuffer::MetaBefore, meta.meta_height_before),
                (RawImageBuffer::MetaAfter, meta.meta_height_after),
            ] {
                let n = (rows * meta.width * 2) as usize;
                let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
                input.copy_patch_to(e, buffer, &mut a).unwrap();
                output.copy_patch_to(e, buffer, &mut b).unwrap();
                assert_eq!(a, b, "{meta} exposure {e} {buffer:?}");
            }
        }
    }
    let g = Graph::new(&ctx).unwrap();
    let p12 = RawImageMeta::new(8, 2, RawImageFormat::P12);
    let (input, output) = (RawImage::new(&ctx, &p12).unwrap(), RawImage::new(&ctx, &p12).unwrap());
    g.add_node(&kernel, [Reference::from(&input), Reference::from(&output)]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType, "{e}");
    assert!(e.to_string().contains("TIVX_RAW_IMAGE_P12_BIT"), "{e}");
}

/// The same two module nodes pipelined (depth 3, 6 frames): each frame's virtual raw image is
/// its own, so each output is its own frame's input, pixels plus 2.
#[test]
fn a_raw_image_through_module_kernels_pipelined() {
    let ctx = loaded();
    let kernel = ctx.kernel_by_name("typeloop.raw_image.copy").unwrap();
    let f16 = RawImageFormat::BIT16;
    let meta = RawImageMeta::new(6, 2, f16).exposures(&[f16, f16]).meta_rows(1, 1);
    let g = Graph::new(&ctx).unwrap();
    let mid = RawImage::new_virtual(&g, &meta).unwrap();
    let (i0, o0) = (RawImage::new(&ctx, &meta).unwrap(), RawImage::new(&ctx, &meta).unwrap());
    let a = g.add_node(&kernel, [Reference::from(&i0), Reference::from(&mid)]).unwrap();
    let b = g.add_node(&kernel, [Reference::from(&mid), Reference::from(&o0)]).unwrap();
    let (p_in, p_out) = (g.add_parameter(&a, 0).unwrap(), g.add_parameter(&b, 1).unwrap());
    const FRAMES: usize = 6;
    let ins: Vec<RawImage> = (0..FRAMES).map(|_| RawImage::new(&ctx, &meta).unwrap()).collect();
    let outs: Vec<RawImage> = (0..FRAMES).map(|_| RawImage::new(&ctx, &meta).unwrap()).collect();
    g.set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()))
        .unwrap();
    let full = RawImageBuffer::Pixels(Rect::full(6, 2));
    let pixels = |f: usize, e: u32| -> Vec<u8> {
        (0..12u16).flat_map(|i| (i * 100 + f as u16 * 7 + e as u16).to_ne_bytes()).collect()
    };
    for (f, (i, o)) in ins.iter().zip(&outs).enumerate() {
        for e in 0..2 {
            i.copy_patch_from(e, full, &pixels(f, e)).unwrap();
        }
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    }
    for f in 0..FRAMES {
        let done = g.dequeue(p_out).unwrap();
        done.result.clone().unwrap();
        assert_eq!(done.frame, f as u64);
        let out = done.reference.get::<RawImage>().unwrap();
        for e in 0..2 {
            let mut got = vec![0u8; 24];
            out.copy_patch_to(e, full, &mut got).unwrap();
            let want: Vec<u8> =
                (0..12u16).flat_map(|i| (i * 100 + f as u16 * 7 + e as u16 + 2).to_ne_bytes()).collect();
            assert_eq!(got, want, "frame {f} exposure {e}");
        }
    }
    g.wait().unwrap();
}
