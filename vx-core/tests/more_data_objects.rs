//! Each of the data objects beyond images, scalars and arrays on its own: attributes, copy and map
//! ranges, nothing allocated at creation, bad input refused with the kind and a message naming the
//! problem, virtual objects closed to the application; pyramids and tensors completed at verify;
//! parts of containers ordered by dataflow; user data objects' type names checked.

use vx::*;

fn ctx() -> Context {
    Context::builder().threads(1).build().unwrap()
}

fn kind<T: std::fmt::Debug>(r: Result<T>) -> ErrorKind {
    r.unwrap_err().kind()
}

#[test]
fn matrices() {
    let ctx = ctx();
    let m = Matrix::new(&ctx, ScalarType::Int32, 3, 2).unwrap();
    assert_eq!((m.columns(), m.rows(), m.origin(), m.pattern(), m.size()), (3, 2, (1, 1), MatrixPattern::Other, 24));
    assert!(!m.is_allocated(), "nothing allocated at creation");
    m.copy_from(&[1i32, 2, 3, 4, 5, 6]).unwrap();
    let mut out = [0i32; 6];
    m.copy_to(&mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4, 5, 6]);
    assert_eq!(kind(m.copy_from(&[1u8; 6])), ErrorKind::InvalidType, "element type checked");
    let e = m.copy_to(&mut [0i32; 5]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.to_string().contains("6 elements"), "{e}");
    assert_eq!(kind(Matrix::new(&ctx, ScalarType::Bool, 3, 3)), ErrorKind::InvalidType);
    assert_eq!(kind(Matrix::new(&ctx, ScalarType::Uint8, 0, 3)), ErrorKind::InvalidDimension);

    // Patterns: a 5×5 cross has 9 set elements on the origin's row and column.
    let cross = Matrix::from_pattern(&ctx, MatrixPattern::Cross, 5, 5).unwrap();
    let mut v = [0u8; 25];
    cross.copy_to(&mut v).unwrap();
    assert_eq!(v.iter().filter(|x| **x == 255).count(), 9);
    assert!((0..5).all(|i| v[2 * 5 + i] == 255 && v[i * 5 + 2] == 255));
    let disk = Matrix::from_pattern(&ctx, MatrixPattern::Disk, 5, 5).unwrap();
    disk.copy_to(&mut v).unwrap();
    assert_eq!((v[0], v[12]), (0, 255), "corners out, centre in");
    let moved = Matrix::from_pattern_and_origin(&ctx, MatrixPattern::Box, 3, 3, (0, 2)).unwrap();
    assert_eq!((moved.origin(), moved.pattern()), ((0, 2), MatrixPattern::Box));
    assert_eq!(
        kind(Matrix::from_pattern_and_origin(&ctx, MatrixPattern::Box, 3, 3, (3, 0))),
        ErrorKind::InvalidParameters
    );
    assert_eq!(kind(Matrix::from_pattern(&ctx, MatrixPattern::Other, 3, 3)), ErrorKind::InvalidParameters);
}

#[test]
fn convolutions_luts_distributions() {
    let ctx = ctx();
    let c = Convolution::new(&ctx, 3, 5).unwrap();
    assert_eq!((c.columns(), c.rows(), c.scale(), c.size()), (3, 5, 1, 30));
    c.set_scale(16).unwrap();
    assert_eq!(kind(c.set_scale(3)), ErrorKind::InvalidValue);
    assert_eq!(c.scale(), 16, "a refused scale leaves the old one");
    for (w, h) in [(4, 3), (1, 3), (17, 3)] {
        assert_eq!(kind(Convolution::new(&ctx, w, h)), ErrorKind::InvalidDimension, "{w}x{h}");
    }

    let l = Lut::new(&ctx, ScalarType::Int16, 65536).unwrap();
    assert_eq!((l.count(), l.offset(), l.size()), (65536, 32768, 131072));
    assert!(!l.is_allocated());
    {
        let mut m = l.map_mut::<i16>().unwrap();
        m[l.offset() + 5] = -7;
        assert_eq!(kind(l.map::<i16>()), ErrorKind::NotSupported, "no read while mapped for writing");
    }
    assert_eq!(l.map::<i16>().unwrap()[32773], -7);
    assert_eq!(kind(l.map::<u8>()), ErrorKind::InvalidType);
    assert_eq!(kind(Lut::new(&ctx, ScalarType::Uint8, 257)), ErrorKind::InvalidParameters);
    assert_eq!(kind(Lut::new(&ctx, ScalarType::Float32, 10)), ErrorKind::InvalidType);
    assert_eq!(Lut::new(&ctx, ScalarType::Uint8, 256).unwrap().offset(), 0);

    let d = Distribution::new(&ctx, 16, -8, 256).unwrap();
    assert_eq!((d.bins(), d.offset(), d.range(), d.window(), d.size()), (16, -8, 256, 16, 64));
    d.map_mut().unwrap()[3] = 9;
    let mut counts = [0u32; 16];
    d.copy_to(&mut counts).unwrap();
    assert_eq!(counts[3], 9);
    assert_eq!(kind(Distribution::new(&ctx, 0, 0, 10)), ErrorKind::InvalidParameters);
    assert_eq!(kind(Distribution::new(&ctx, 11, 0, 10)), ErrorKind::InvalidParameters);
}

#[test]
fn thresholds() {
    let ctx = ctx();
    let t = Threshold::for_image(&ctx, ThresholdType::Range, ImageFormat::S16, ImageFormat::U8).unwrap();
    let v = t.values().unwrap();
    assert_eq!((v.true_value, v.false_value), (255, 0), "defaults: the output format's maximum and 0");
    t.set_range(-100, 300).unwrap();
    assert_eq!(kind(t.set_range(5, 4)), ErrorKind::InvalidValue);
    let e = t.set_output(256, 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert!(e.to_string().contains("true value"), "{e}");
    assert_eq!((t.values().unwrap().lower, t.values().unwrap().upper), (-100, 300));
    assert_eq!(kind(t.set_value(40000)), ErrorKind::InvalidValue, "outside S16");
    assert_eq!(
        kind(Threshold::for_image(&ctx, ThresholdType::Binary, ImageFormat::Rgb, ImageFormat::U8)),
        ErrorKind::InvalidFormat
    );
    let old = Threshold::new(&ctx, ThresholdType::Binary, ScalarType::Uint8).unwrap();
    assert_eq!((old.input_format(), old.output_format()), (ImageFormat::U8, ImageFormat::U8));
}

#[test]
fn remaps() {
    let ctx = ctx();
    let r = Remap::new(&ctx, 8, 8, 4, 2).unwrap();
    r.set_point(3, 1, Coordinates2dF { x: 6.5, y: 7.0 }).unwrap();
    assert_eq!(r.point(3, 1).unwrap(), Coordinates2dF { x: 6.5, y: 7.0 });
    let mut patch = [Coordinates2dF::default(); 2];
    r.copy_patch_to(Rect::new(2, 1, 4, 2), &mut patch).unwrap();
    assert_eq!(patch[1], Coordinates2dF { x: 6.5, y: 7.0 });
    assert_eq!(kind(r.point(4, 0)), ErrorKind::InvalidParameters, "outside the destination");
    assert_eq!(
        kind(r.copy_patch_to(Rect::new(0, 0, 2, 2), &mut patch)),
        ErrorKind::InvalidParameters,
        "4 points, 2 given"
    );
    assert_eq!(kind(Remap::new(&ctx, 0, 8, 4, 2)), ErrorKind::InvalidParameters);
}

#[test]
fn pyramids() {
    let ctx = ctx();
    let p = Pyramid::new(&ctx, 4, PYRAMID_SCALE_HALF, 33, 17, ImageFormat::U8).unwrap();
    let sizes: Vec<_> = (0..4).map(|l| (p.level(l).unwrap().width(), p.level(l).unwrap().height())).collect();
    assert_eq!(sizes, [(33, 17), (17, 9), (9, 5), (5, 3)], "each level rounds up");
    assert!(!p.level(0).unwrap().is_allocated());
    // A level is the same image each time: write through one handle, read through another.
    p.level(2).unwrap().copy_from(Rect::full(9, 5), 0, &[7u8; 45]).unwrap();
    assert_eq!(p.level(2).unwrap().to_vec::<u8>().unwrap(), vec![7u8; 45]);
    assert_eq!(kind(p.level(4)), ErrorKind::InvalidParameters);
    // ORB: every fourth level is half the one four before.
    let orb = Pyramid::new(&ctx, 5, PYRAMID_SCALE_ORB, 640, 480, ImageFormat::U8).unwrap();
    let w: Vec<u32> = (0..5).map(|l| orb.level(l).unwrap().width()).collect();
    assert_eq!(w, [640, 539, 453, 381, 320]);
    assert_eq!(kind(Pyramid::new(&ctx, 4, 0.7, 64, 64, ImageFormat::U8)), ErrorKind::InvalidParameters);
    assert_eq!(kind(Pyramid::new(&ctx, 0, 0.5, 64, 64, ImageFormat::U8)), ErrorKind::InvalidParameters);
    assert_eq!(kind(Pyramid::new(&ctx, 2, 0.5, 0, 64, ImageFormat::U8)), ErrorKind::InvalidParameters);
}

#[test]
fn tensors_and_views() {
    let ctx = ctx();
    let t = Tensor::new(&ctx, &[4, 3, 2], ScalarType::Int16, 8).unwrap();
    assert_eq!(
        (t.num_dims(), t.dims(), t.data_type(), t.fixed_point_position()),
        (3, vec![4, 3, 2], Some(ScalarType::Int16), 8)
    );
    let all: Vec<i16> = (0..24).collect();
    t.copy_patch_from(&[0, 0, 0], &[4, 3, 2], &all).unwrap();
    // A patch: x 1..3, y 1..3, z 1..2, packed x fastest.
    let mut p = [0i16; 4];
    t.copy_patch_to(&[1, 1, 1], &[3, 3, 2], &mut p).unwrap();
    assert_eq!(p, [12 + 4 + 1, 12 + 4 + 2, 12 + 8 + 1, 12 + 8 + 2]);
    // A view shares the memory.
    let v = t.view(&[2, 0, 1], &[4, 3, 2]).unwrap();
    assert_eq!(v.dims(), vec![2, 3, 1]);
    v.copy_patch_from(&[0, 0, 0], &[1, 1, 1], &[-1i16]).unwrap();
    let mut one = [0i16];
    t.copy_patch_to(&[2, 0, 1], &[3, 1, 2], &mut one).unwrap();
    assert_eq!(one, [-1]);
    assert_eq!(kind(t.view(&[0, 0, 0], &[5, 1, 1])), ErrorKind::InvalidParameters);
    assert_eq!(kind(t.copy_patch_to(&[0, 0, 0], &[1, 1, 1], &mut [0u8])), ErrorKind::InvalidType);
    assert_eq!(kind(Tensor::new(&ctx, &[1; 7], ScalarType::Uint8, 0)), ErrorKind::InvalidDimension);
    assert_eq!(kind(Tensor::new(&ctx, &[3, 0], ScalarType::Uint8, 0)), ErrorKind::InvalidDimension);
}

#[test]
fn object_arrays_and_user_data_objects() {
    let ctx = ctx();
    let ex = Matrix::new(&ctx, ScalarType::Float32, 2, 2).unwrap();
    ex.copy_from(&[1.0f32; 4]).unwrap();
    let a = ObjectArray::new(&ctx, &ex, 3).unwrap();
    assert_eq!((a.item_type(), a.count()), (DataType::Matrix, 3));
    let m = a.item_as::<Matrix>(1).unwrap();
    let mut v = [9.0f32; 4];
    m.copy_to(&mut v).unwrap();
    assert_eq!(v, [0.0; 4], "items copy the exemplar's meta data, not its values");
    assert_eq!(kind(a.item_as::<Lut>(0)), ErrorKind::InvalidType);
    assert_eq!(kind(a.item(3)), ErrorKind::InvalidParameters);
    assert_eq!(kind(ObjectArray::new(&ctx, &a, 2)), ErrorKind::InvalidType, "no arrays of object arrays");
    assert_eq!(kind(ObjectArray::new(&ctx, &ex, 0)), ErrorKind::InvalidParameters);

    let u = UserDataObject::new(&ctx, "calib", 8).unwrap();
    u.map_mut().unwrap().copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let mut b = [0u8; 3];
    u.copy_to(5, &mut b).unwrap();
    assert_eq!(b, [6, 7, 8]);
    assert_eq!(kind(u.copy_to(6, &mut b)), ErrorKind::InvalidParameters);
}

#[test]
fn virtual_objects_are_closed_to_the_application() {
    let ctx = ctx();
    let g = Graph::new(&ctx).unwrap();
    let m = Matrix::new_virtual(&g, ScalarType::Uint8, 3, 3).unwrap();
    assert_eq!(kind(m.copy_to(&mut [0u8; 9])), ErrorKind::OptimizedAway);
    let l = Lut::new_virtual(&g, ScalarType::Uint8, 256).unwrap();
    assert_eq!(kind(l.map::<u8>()), ErrorKind::OptimizedAway);
    let t = Threshold::new_virtual_for_image(&g, ThresholdType::Binary, ImageFormat::U8, ImageFormat::U8).unwrap();
    assert_eq!(kind(t.set_value(3)), ErrorKind::OptimizedAway);
    let u = UserDataObject::new_virtual(&g, "x", 4).unwrap();
    assert_eq!(kind(u.map()), ErrorKind::OptimizedAway);
    let p = Pyramid::new_virtual(&g, 3, PYRAMID_SCALE_HALF, 0, 0, ImageFormat::Virtual).unwrap();
    assert_eq!(kind(p.level(0).unwrap().to_vec::<u8>()), ErrorKind::OptimizedAway);
}

/// A user kernel with one input and one output of `t`, whose validator gives the output the
/// input's meta data and whose process runs `f`.
fn pass_through(
    ctx: &Context,
    name: &str,
    t: DataType,
    f: impl Fn(&mut ProcessContext<'_>) -> Result<()> + Send + Sync + 'static,
) -> Kernel {
    let k = ctx
        .user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            metas.get(1)?.set_from_reference(v.param(0)?)?;
            Ok(())
        })
        .process(f)
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, t, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, t, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

#[test]
fn a_virtual_pyramid_is_completed_and_its_levels_follow_their_writer() {
    let ctx = ctx();
    // Writes every level of the output pyramid with (level + 1) * 10.
    let make = pass_through(&ctx, "test.pyr", DataType::Pyramid, |p| {
        let out = p.object::<Pyramid>(1)?;
        for l in 0..out.levels() {
            let img = out.level(l)?;
            let mut m = img.map_mut::<u8>(img.full_rect(), 0)?;
            for y in 0..m.height() {
                m.row_mut(y).fill((l as u8 + 1) * 10);
            }
        }
        Ok(())
    });
    // Copies an image (here: level 1 of the virtual pyramid).
    let copy = pass_through(&ctx, "test.img", DataType::Image, |p| {
        let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
        for y in 0..i.height() {
            o.row_mut(y).copy_from_slice(i.row(y));
        }
        Ok(())
    });
    let g = Graph::new(&ctx).unwrap();
    let src = Pyramid::new(&ctx, 3, PYRAMID_SCALE_HALF, 16, 8, ImageFormat::U8).unwrap();
    let mid = Pyramid::new_virtual(&g, 3, PYRAMID_SCALE_HALF, 0, 0, ImageFormat::Virtual).unwrap();
    let out = Image::new(&ctx, 8, 4, ImageFormat::U8).unwrap();
    // Added reader first: dataflow, not insertion order, must put the pyramid's writer first.
    g.add_node(&copy, [&mid.level(1).unwrap(), &out]).unwrap();
    g.add_node(&make, [&src, &mid]).unwrap();
    g.process().unwrap();
    assert_eq!((mid.width(), mid.height(), mid.format()), (16, 8, ImageFormat::U8));
    assert_eq!(mid.level(2).unwrap().width(), 4);
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![20u8; 32]);

    // Two writers of one pyramid — the whole and a level — are refused.
    let g2 = Graph::new(&ctx).unwrap();
    let whole = Pyramid::new(&ctx, 3, PYRAMID_SCALE_HALF, 16, 8, ImageFormat::U8).unwrap();
    g2.add_node(&make, [&src, &whole]).unwrap();
    g2.add_node(&copy, [&out, &whole.level(1).unwrap()]).unwrap();
    assert_eq!(kind(g2.verify()), ErrorKind::MultipleWriters);

    // A real output pyramid of another size is refused with the dimension error.
    let g3 = Graph::new(&ctx).unwrap();
    let small = Pyramid::new(&ctx, 3, PYRAMID_SCALE_HALF, 8, 8, ImageFormat::U8).unwrap();
    g3.add_node(&make, [&src, &small]).unwrap();
    let e = g3.verify().unwrap_err();
    assert_eq!((e.kind(), e.context().parameter), (ErrorKind::InvalidDimension, Some(1)));
}

#[test]
fn a_virtual_tensor_is_completed_from_its_producer() {
    let ctx = ctx();
    let k = pass_through(&ctx, "test.tensor", DataType::Tensor, |p| {
        let (a, b) = (p.object::<Tensor>(0)?, p.object::<Tensor>(1)?);
        let dims = a.dims();
        let mut v = vec![0f32; dims.iter().product()];
        let zeros = vec![0; dims.len()];
        a.copy_patch_to(&zeros, &dims, &mut v)?;
        v.iter_mut().for_each(|x| *x *= 2.0);
        b.copy_patch_from(&zeros, &dims, &v)
    });
    let g = Graph::new(&ctx).unwrap();
    let a = Tensor::new(&ctx, &[3, 2], ScalarType::Float32, 0).unwrap();
    a.copy_patch_from(&[0, 0], &[3, 2], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let mid = Tensor::new_virtual(&g, &[], None, 0).unwrap();
    let out = Tensor::new(&ctx, &[3, 2], ScalarType::Float32, 0).unwrap();
    g.add_node(&k, [&a, &mid]).unwrap();
    g.add_node(&k, [&mid, &out]).unwrap();
    g.process().unwrap();
    assert_eq!((mid.dims(), mid.data_type()), (vec![3, 2], Some(ScalarType::Float32)));
    let mut v = [0f32; 6];
    out.copy_patch_to(&[0, 0], &[3, 2], &mut v).unwrap();
    assert_eq!(v, [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]);

    // A virtual tensor declared with another type is refused.
    let g2 = Graph::new(&ctx).unwrap();
    let wrong = Tensor::new_virtual(&g2, &[3, 2], Some(ScalarType::Int8), 0).unwrap();
    g2.add_node(&k, [&a, &wrong]).unwrap();
    g2.add_node(&k, [&wrong, &out]).unwrap();
    assert_eq!(kind(g2.verify()), ErrorKind::InvalidType);
}

#[test]
fn a_user_data_objects_type_name_is_part_of_its_meta() {
    let ctx = ctx();
    let k = pass_through(&ctx, "test.udo", DataType::UserDataObject, |_| Ok(()));
    let a = UserDataObject::new(&ctx, "calib", 16).unwrap();
    let same = UserDataObject::new(&ctx, "calib", 16).unwrap();
    let other = UserDataObject::new(&ctx, "pose", 16).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&a, &same]).unwrap();
    g.verify().unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&a, &other]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType);
    assert!(e.to_string().contains("'calib'") && e.to_string().contains("'pose'"), "{e}");
}
