//! Virtual objects of every kind (issue 28): each kind of the list can be created virtual (an
//! exhaustive match over `DataType`, so a kind added to the list fails to compile here until it
//! has a virtual creator), the application may not read it; `Scalar::new_virtual`
//! (`vxCreateVirtualScalar`) carries a value from one node to the next, sequential and pipelined,
//! its type checked by verify's meta pass.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use vx::*;

/// A virtual object of kind `t` in `g`.
fn virtual_of(ctx: &Context, g: &Graph, t: DataType) -> Reference {
    let image = Image::new(ctx, 8, 4, ImageFormat::U8).unwrap();
    match t {
        DataType::Image => Image::new_virtual(g, 8, 4, ImageFormat::U8).unwrap().into(),
        DataType::Scalar => Scalar::new_virtual(g, ScalarType::Int16).unwrap().into(),
        DataType::Array => Array::new_virtual(g, Some(ArrayItemType::Keypoint), 5).unwrap().into(),
        DataType::UserDataObject => UserDataObject::new_virtual(g, "pair", 16).unwrap().into(),
        DataType::Matrix => Matrix::new_virtual(g, ScalarType::Float32, 3, 3).unwrap().into(),
        DataType::Convolution => Convolution::new_virtual(g, 3, 3).unwrap().into(),
        DataType::Lut => Lut::new_virtual(g, ScalarType::Uint8, 256).unwrap().into(),
        DataType::Distribution => Distribution::new_virtual(g, 16, 0, 256).unwrap().into(),
        DataType::Threshold => {
            Threshold::new_virtual_for_image(g, ThresholdType::Binary, ImageFormat::U8, ImageFormat::U8).unwrap().into()
        }
        DataType::Pyramid => Pyramid::new_virtual(g, 2, PYRAMID_SCALE_HALF, 8, 4, ImageFormat::U8).unwrap().into(),
        DataType::Remap => Remap::new_virtual(g, 8, 4, 8, 4).unwrap().into(),
        DataType::ObjectArray => ObjectArray::new_virtual(g, &image, 2).unwrap().into(),
        DataType::Tensor => Tensor::new_virtual(g, &[2, 3], Some(ScalarType::Int8), 0).unwrap().into(),
        DataType::RawImage => RawImage::new_virtual(g, &RawImageMeta::new(8, 4, RawImageFormat::BIT8)).unwrap().into(),
    }
}

#[test]
fn every_kind_can_be_created_virtual() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let mut covered = 0;
    for t in DataType::ALL {
        let r = virtual_of(&ctx, &g, t);
        assert_eq!(r.data_type(), t);
        assert!(r.is_virtual(), "{t}");
        covered += 1;
    }
    assert_eq!(covered, DataType::ALL.len());
}

#[test]
fn the_application_may_not_read_or_write_a_virtual_scalar() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let s = Scalar::new_virtual(&g, ScalarType::Uint8).unwrap();
    assert!(s.is_virtual());
    assert_eq!(s.scalar_type(), ScalarType::Uint8);
    assert_eq!(s.value().unwrap_err().kind(), ErrorKind::OptimizedAway);
    assert_eq!(s.get::<u8>().unwrap_err().kind(), ErrorKind::OptimizedAway);
    assert_eq!(s.set(3u8).unwrap_err().kind(), ErrorKind::OptimizedAway);
    assert_eq!(s.set_value(ScalarValue::Uint8(3)).unwrap_err().kind(), ErrorKind::OptimizedAway);
    // The same kind as any other virtual object's application access.
    let img = Image::new_virtual(&g, 4, 4, ImageFormat::U8).unwrap();
    assert_eq!(img.to_vec::<u8>().unwrap_err().kind(), ErrorKind::OptimizedAway);
    // A real scalar is unchanged.
    let r = Scalar::new(&ctx, ScalarValue::Uint8(9)).unwrap();
    assert_eq!(r.value().unwrap(), ScalarValue::Uint8(9));
}

static KERNELS: AtomicUsize = AtomicUsize::new(0);

fn kernel_name(what: &str) -> String {
    format!("vs.{what}{}", KERNELS.fetch_add(1, SeqCst))
}

const W: u32 = 8;
const H: u32 = 2;

/// Image → U8 scalar: the first pixel times 2, after a pause (so pipelined frames overlap). Its
/// validator gives the output's type (`out_type`).
fn produce(ctx: &Context, out_type: ScalarType) -> Kernel {
    let k = ctx
        .user_kernel(&kernel_name("produce"), ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(move |_, metas| {
            metas.get(1)?.set(ScalarAttr::Type(out_type))?;
            Ok(())
        })
        .process(|pc| {
            std::thread::sleep(Duration::from_millis(2));
            let img = pc.image(0)?;
            let first = img.map::<u8>(img.full_rect(), 0)?.row(0)[0];
            pc.object::<Scalar>(1)?.set(first.wrapping_mul(2))
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Scalar, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

/// U8 scalar → image: every pixel the scalar plus 1 (read through `ProcessContext::scalar`).
fn consume(ctx: &Context) -> Kernel {
    let k = ctx
        .user_kernel(&kernel_name("consume"), ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|_, metas| {
            metas.get(1)?.set_image(ImageFormat::U8, W, H)?;
            Ok(())
        })
        .process(|pc| {
            let v: u8 = pc.scalar(0)?.get::<u8>()?;
            let img = pc.image(1)?;
            let mut out = img.map_mut::<u8>(img.full_rect(), 0)?;
            for y in 0..H {
                out.row_mut(y).iter_mut().for_each(|p| *p = v.wrapping_add(1));
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Scalar, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

fn image_of(ctx: &Context, first: u8) -> Image {
    let i = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    i.copy_from(Rect::full(W, H), 0, &[first; (W * H) as usize]).unwrap();
    i
}

#[test]
fn a_virtual_scalar_carries_a_value_from_one_node_to_the_next() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let (input, output) = (image_of(&ctx, 0), image_of(&ctx, 0));
    let s = Scalar::new_virtual(&g, ScalarType::Uint8).unwrap();
    g.add_node(&produce(&ctx, ScalarType::Uint8), [Reference::from(&input), Reference::from(&s)]).unwrap();
    g.add_node(&consume(&ctx), [Reference::from(&s), Reference::from(&output)]).unwrap();
    g.verify().unwrap();
    for first in [5u8, 100] {
        input.copy_from(Rect::full(W, H), 0, &[first; (W * H) as usize]).unwrap();
        g.process().unwrap();
        assert_eq!(output.to_vec::<u8>().unwrap(), vec![first.wrapping_mul(2).wrapping_add(1); (W * H) as usize]);
    }
    assert_eq!(s.value().unwrap_err().kind(), ErrorKind::OptimizedAway);
}

#[test]
fn verify_checks_a_virtual_scalars_type_against_the_producers_meta() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let (input, output) = (image_of(&ctx, 0), image_of(&ctx, 0));
    let s = Scalar::new_virtual(&g, ScalarType::Int16).unwrap();
    g.add_node(&produce(&ctx, ScalarType::Uint8), [Reference::from(&input), Reference::from(&s)]).unwrap();
    g.add_node(&consume(&ctx), [Reference::from(&s), Reference::from(&output)]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType, "{e}");
}

#[test]
fn pipelined_each_frame_gets_its_own_virtual_scalar() {
    let ctx =
        Context::builder().threads(2).target(TargetConfig::new("a")).target(TargetConfig::new("b")).build().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let (i0, o0) = (image_of(&ctx, 0), image_of(&ctx, 0));
    let s = Scalar::new_virtual(&g, ScalarType::Uint8).unwrap();
    let a = g.add_node(&produce(&ctx, ScalarType::Uint8), [Reference::from(&i0), Reference::from(&s)]).unwrap();
    let b = g.add_node(&consume(&ctx), [Reference::from(&s), Reference::from(&o0)]).unwrap();
    a.set_target("a").unwrap();
    b.set_target("b").unwrap();
    let (p_in, p_out) = (g.add_parameter(&a, 0).unwrap(), g.add_parameter(&b, 1).unwrap());
    const FRAMES: usize = 6;
    let ins: Vec<Image> = (0..FRAMES).map(|f| image_of(&ctx, f as u8 * 7 + 3)).collect();
    let outs: Vec<Image> = (0..FRAMES).map(|_| image_of(&ctx, 0)).collect();
    g.set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()))
        .unwrap();
    for (i, o) in ins.iter().zip(&outs) {
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    }
    for f in 0..FRAMES {
        let done = g.dequeue(p_out).unwrap();
        done.result.clone().unwrap();
        assert_eq!(done.frame, f as u64);
        let want = (f as u8 * 7 + 3).wrapping_mul(2).wrapping_add(1);
        assert_eq!(
            done.reference.as_image().unwrap().to_vec::<u8>().unwrap(),
            vec![want; (W * H) as usize],
            "frame {f}"
        );
    }
    g.wait().unwrap();
}
