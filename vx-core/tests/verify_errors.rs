//! Bad graphs and bad objects: each is refused with the right error kind and a message that names
//! the graph, node, kernel and parameter concerned — and nothing panics.

mod common;

use std::sync::Arc;

use common::*;
use vx::*;

fn inc(x: u8) -> u8 {
    x.wrapping_add(1)
}

#[test]
fn cycle_is_refused_with_the_nodes_named() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::with_name(&ctx, "loop").unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let n1 = g.add_node(&k, [&a, &b]).unwrap();
    let n2 = g.add_node(&k, [&b, &a]).unwrap();
    n1.set_name("first").unwrap();
    n2.set_name("second").unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidGraph, "{e}");
    assert_eq!(e.context().graph.as_deref(), Some("loop"));
    let msg = e.to_string();
    assert!(msg.contains("cycle") && msg.contains("'first'") && msg.contains("'second'"), "{msg}");
    // Processing does not run anything either.
    assert_eq!(g.process().unwrap_err().kind(), ErrorKind::InvalidGraph);
    assert_eq!(g.state().unwrap(), GraphState::Unverified);
}

#[test]
fn node_reading_its_own_output_is_a_cycle() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::new(&ctx).unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a, &a]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidGraph);
    assert_eq!(e.context().parameter, Some(0));
}

#[test]
fn two_writers_are_refused() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::with_name(&ctx, "writers").unwrap();
    let a = u8_image(&ctx, 8, 8, |_, _| 0);
    let b = u8_image(&ctx, 8, 8, |_, _| 0);
    let out = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a, &out]).unwrap();
    g.add_node(&k, [&b, &out]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MultipleWriters);
    assert_eq!(e.status(), Status::MultipleWriters);
    assert_eq!(e.context().node.as_deref(), Some("inc#1"));
    assert!(e.to_string().contains("also written by node 'inc#0' parameter 1"), "{e}");
}

#[test]
fn writers_of_overlapping_rois_conflict_but_disjoint_rois_do_not() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let src = u8_image(&ctx, 8, 8, |x, _| x as u8);
    let out = Image::new(&ctx, 16, 8, ImageFormat::U8).unwrap();
    let left = out.roi(Rect::new(0, 0, 8, 8)).unwrap();
    let right = out.roi(Rect::new(8, 0, 16, 8)).unwrap();
    let middle = out.roi(Rect::new(4, 0, 12, 8)).unwrap();

    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&src, &left]).unwrap();
    g.add_node(&k, [&src, &right]).unwrap();
    g.process().unwrap();
    let row: Vec<u8> = out.to_vec::<u8>().unwrap()[..16].to_vec();
    assert_eq!(row, [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8]);

    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&src, &left]).unwrap();
    g.add_node(&k, [&src, &middle]).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::MultipleWriters);
}

#[test]
fn missing_required_parameter_is_refused() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::with_name(&ctx, "g").unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert_eq!(e.context().parameter, Some(1));
    assert_eq!(e.context().kernel.as_deref(), Some("test.inc"));
    assert_eq!(
        e.to_string(),
        "graph 'g', node 'inc#0' (kernel 'test.inc'), parameter 1: a required parameter is not set: expected output \
         image [VX_ERROR_INVALID_PARAMETERS (-10)]"
    );
}

#[test]
fn wrong_parameter_type_is_refused_at_node_creation_and_replacement() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::new(&ctx).unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let s = Scalar::new(&ctx, ScalarValue::Uint8(3)).unwrap();
    let e = g.add_node(&k, [Reference::from(&a), Reference::from(&s)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType);
    assert_eq!(e.context().parameter, Some(1));
    assert_eq!((e.context().expected.as_deref(), e.context().found.as_deref()), (Some("image"), Some("scalar")));
    assert_eq!(g.num_nodes().unwrap(), 0, "a refused node is not added");

    let b = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let n = g.add_node(&k, [&a, &b]).unwrap();
    assert_eq!(n.set_parameter(0, &s).unwrap_err().kind(), ErrorKind::InvalidType);
    assert!(
        n.parameter(0).unwrap().unwrap().same_object(&Reference::from(&a)),
        "a refused replacement changes nothing"
    );
    assert_eq!(n.set_parameter(0, None).unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn wrong_input_format_is_reported_by_the_validator_with_context() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::with_name(&ctx, "fmt").unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::S16).unwrap();
    let b = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a, &b]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert_eq!(e.context().node.as_deref(), Some("inc#0"));
    assert_eq!((e.context().expected.as_deref(), e.context().found.as_deref()), (Some("U8"), Some("S16")));
}

#[test]
fn output_meta_mismatch_is_refused() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();

    let g = Graph::new(&ctx).unwrap();
    let wrong_format = Image::new(&ctx, 8, 8, ImageFormat::S16).unwrap();
    g.add_node(&k, [&a, &wrong_format]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert_eq!(e.context().parameter, Some(1));
    assert_eq!(e.context().expected.as_deref(), Some("image U8 8x8"));
    assert_eq!(e.context().found.as_deref(), Some("image S16 8x8"));

    let g = Graph::new(&ctx).unwrap();
    let wrong_size = Image::new(&ctx, 8, 9, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a, &wrong_size]).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::InvalidDimension);

    // A virtual output declared with a conflicting format is refused too.
    let g = Graph::new(&ctx).unwrap();
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::S16).unwrap();
    let out = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a, &v]).unwrap();
    g.add_node(&k, [&v, &out]).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::InvalidFormat);
}

#[test]
fn validator_leaving_an_output_unset_is_refused() {
    let ctx = ctx();
    let k = ctx.user_kernel("test.lazy", 7, 2).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&a, &b]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.message().contains("did not set the image format"), "{e}");
}

#[test]
fn virtual_objects_need_a_writer_and_stay_in_their_graph() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::new(&ctx).unwrap();
    let v = Image::new_virtual(&g, 8, 8, ImageFormat::U8).unwrap();
    let out = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&v, &out]).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::InvalidGraph);

    let other = Graph::new(&ctx).unwrap();
    let e = other.add_node(&k, [&v, &out]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidScope);
}

#[test]
fn objects_from_another_context_are_refused() {
    let ctx1 = ctx();
    let ctx2 = ctx();
    let k = map_kernel(&ctx1, "test.inc", Arc::default(), inc);
    let g = Graph::new(&ctx1).unwrap();
    let a = Image::new(&ctx2, 8, 8, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx1, 8, 8, ImageFormat::U8).unwrap();
    assert_eq!(g.add_node(&k, [&a, &b]).unwrap_err().kind(), ErrorKind::InvalidReference);
    let g2 = Graph::new(&ctx2).unwrap();
    assert_eq!(g2.add_node(&k, [&a, &b]).unwrap_err().kind(), ErrorKind::InvalidReference);
}

#[test]
fn zero_sized_and_absurd_images_are_refused() {
    let ctx = ctx();
    for (w, h) in [(0, 8), (8, 0), (0, 0)] {
        let e = Image::new(&ctx, w, h, ImageFormat::U8).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidDimension, "{w}x{h}");
    }
    // width * height * 4 overflows 64 bits.
    assert_eq!(Image::new(&ctx, u32::MAX, u32::MAX, ImageFormat::U32).unwrap_err().kind(), ErrorKind::InvalidDimension);
    // A row of 2^32 bytes does not fit the i32 stride of vx_imagepatch_addressing_t.
    let e = Image::new(&ctx, 1 << 30, 1, ImageFormat::Rgbx).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidDimension);
    assert!(e.to_string().contains("RGBX 1073741824x1"), "{e}");
    // The virtual format is not a buffer format.
    assert_eq!(Image::new(&ctx, 8, 8, ImageFormat::Virtual).unwrap_err().kind(), ErrorKind::InvalidFormat);
    // Nothing was counted for the refused objects.
    assert_eq!(ctx.usage(ResourceKind::DataObjects).current, 0);
}

#[test]
fn too_large_to_allocate_is_an_error_not_an_abort() {
    let ctx = ctx();
    // 2^30 x 2^30 bytes (1 EiB) is a valid layout (strides fit i32) but cannot be allocated.
    let img = Image::new(&ctx, 1 << 30, 1 << 30, ImageFormat::U8).unwrap();
    let e = img.map::<u8>(Rect::new(0, 0, 1, 1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoMemory, "{e}");
    assert!(!img.is_allocated());
}

#[test]
fn empty_graph_is_refused() {
    let ctx = ctx();
    let g = Graph::new(&ctx).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::InvalidGraph);
}

#[test]
fn kernel_registration_errors() {
    let ctx = ctx();
    let k = ctx.user_kernel("test.sig", 1, 2).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap();
    // Bidirectional is refused.
    let e = k.add_parameter(0, ParamDirection::Bidirectional, DataType::Image, ParamState::Required).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    // Index out of range.
    let e = k.add_parameter(2, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    // Same index twice.
    assert!(k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).is_err());
    // Finalize refuses an incomplete signature and names the missing index.
    let e = k.finalize().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert_eq!(e.context().found.as_deref(), Some("missing indices 1"));
    assert!(!k.is_finalized());
    // Tiling attributes are refused on a user kernel.
    let e = k.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(-1, 1, -1, 1))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    // Attributes and parameters are frozen after finalize.
    assert_eq!(k.set_local_data_size(4).unwrap_err().kind(), ErrorKind::NotSupported);
    assert_eq!(
        k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap_err().kind(),
        ErrorKind::NotSupported
    );
    assert_eq!(k.finalize().unwrap_err().kind(), ErrorKind::NotSupported);

    // A duplicate name is refused (the Khronos sample accepts it silently).
    let e = ctx.user_kernel("test.sig", 2, 1).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.to_string().contains("already exists"), "{e}");
    // So is a duplicate enumeration.
    let e = ctx.user_kernel("test.other", 1, 1).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap_err();
    assert!(e.to_string().contains("already used by") || e.to_string().contains("already used"), "{e}");
    // Missing callbacks and bad names.
    assert!(ctx.user_kernel("test.noproc", 3, 1).validate(|_, _| Ok(())).add().is_err());
    assert!(ctx.user_kernel("test.novalidate", 4, 1).process(|_| Ok(())).add().is_err());
    assert!(ctx.user_kernel("", 5, 1).validate(|_, _| Ok(())).process(|_| Ok(())).add().is_err());
    // No parameters (the Khronos sample refuses this too).
    let e = ctx.user_kernel("test.none", 6, 0).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.to_string().contains("at least one parameter"), "{e}");
    assert_eq!(ctx.kernel_count(), 1);
    // A removed kernel cannot be removed twice or used.
    let again = ctx.kernel_by_name("test.sig").unwrap();
    drop(k);
    again.clone().remove().unwrap_err(); // `again` itself is a second handle
    let handle = again;
    handle.remove().unwrap();
    assert_eq!(ctx.kernel_count(), 0);
}

#[test]
fn context_limits_are_enforced_and_released() {
    let ctx =
        Context::builder().threads(1).max_graphs(1).max_data_objects(2).max_kernels(1).max_nodes(1).build().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let e = Graph::new(&ctx).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResources);
    assert!(e.to_string().contains("limit of 1 graphs"), "{e}");
    drop(g);
    let g = Graph::new(&ctx).unwrap();

    let a = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    assert_eq!(Scalar::new(&ctx, ScalarValue::Bool(true)).unwrap_err().kind(), ErrorKind::NoResources);
    let u = ctx.usage(ResourceKind::DataObjects);
    assert_eq!((u.current, u.peak, u.max), (2, 2, 2));

    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    assert!(ctx.user_kernel("test.two", 9, 1).validate(|_, _| Ok(())).process(|_| Ok(())).add().is_err());
    g.add_node(&k, [&a, &b]).unwrap();
    assert_eq!(g.add_node(&k, [&a, &b]).unwrap_err().kind(), ErrorKind::NoResources);
    assert!(Context::builder().threads(0).build().is_err());
}

#[test]
fn alias_hints_are_recorded_checked_and_never_honoured_yet() {
    let ctx = ctx();
    let k = ctx.user_kernel("test.alias", 1, 3).validate(|_, _| Ok(())).process(|p| {
        // The runtime does not alias buffers (yet): the extension's minimal compliance.
        assert!(!p.is_parameter_aliased(0, 1));
        Ok(())
    });
    let k = k.add().unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(2, ParamDirection::Input, DataType::Image, ParamState::Optional).unwrap();
    assert_eq!(k.alias_parameter_index_hint(0, 3, AliasKind::Dense).unwrap_err().kind(), ErrorKind::InvalidParameters);
    assert_eq!(k.alias_parameter_index_hint(1, 1, AliasKind::Dense).unwrap_err().kind(), ErrorKind::InvalidParameters);
    k.alias_parameter_index_hint(0, 1, AliasKind::Sparse).unwrap();
    k.alias_parameter_index_hint(1, 0, AliasKind::Sparse).unwrap(); // same pair: recorded once
    assert_eq!(k.alias_hints(), [AliasHint { a: 0, b: 1, kind: AliasKind::Sparse }]);
    // Two inputs cannot alias: refused at finalize, naming both.
    k.alias_parameter_index_hint(0, 2, AliasKind::Dense).unwrap();
    let e = k.finalize().unwrap_err();
    assert_eq!(e.context().found.as_deref(), Some("parameters 0 and 2 are both inputs"));
}
