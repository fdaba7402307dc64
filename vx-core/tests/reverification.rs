//! Virtual-object completion and the spec's re-verification triggers: border changed, parameter
//! replaced by an object with different meta, optional parameter set or cleared; automatic
//! re-verification at the next process (only the nodes that need it), explicit verify re-verifies
//! every node.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

use common::*;
use vx::*;

fn double(x: u8) -> u8 {
    x.wrapping_mul(2)
}
fn inc(x: u8) -> u8 {
    x.wrapping_add(1)
}

#[test]
fn virtual_image_is_completed_from_the_producer_meta() {
    let ctx = ctx();
    let k = map_kernel(&ctx, "test.inc", Arc::default(), inc);
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 13, 7, |x, y| (x + 10 * y) as u8);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 13, 7, ImageFormat::U8).unwrap();
    assert_eq!((v.width(), v.height(), v.format()), (0, 0, ImageFormat::Virtual));
    assert!(!v.is_allocated());
    // The application cannot touch a virtual image.
    assert_eq!(v.map::<u8>(Rect::new(0, 0, 1, 1)).unwrap_err().kind(), ErrorKind::OptimizedAway);
    g.add_node(&k, [&src, &v]).unwrap();
    g.add_node(&k, [&v, &dst]).unwrap();
    g.verify().unwrap();
    assert_eq!((v.width(), v.height(), v.format()), (13, 7, ImageFormat::U8));
    assert!(v.is_allocated() && dst.is_allocated());
    g.process().unwrap();
    let want: Vec<u8> = (0..7).flat_map(|y| (0..13).map(move |x| (x + 10 * y + 2) as u8)).collect();
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);
}

#[test]
fn virtual_array_is_completed_from_the_producer_meta() {
    let ctx = ctx();
    // Producer: writes the histogram-ish list of the first row's pixels into an array of u8.
    let producer = ctx
        .user_kernel("test.row_to_array", 100, 2)
        .validate(|v, metas| {
            let w = v.image(0)?.width();
            metas
                .get(1)?
                .set_array_item_type(ArrayItemType::Scalar(ScalarType::Uint8))?
                .set_array_capacity(w as usize)?;
            Ok(())
        })
        .process(|p| {
            let img = p.image(0)?;
            let patch = img.map::<u8>(Rect::new(0, 0, img.width(), 1), 0)?;
            let out = p.array(1)?;
            out.truncate(0)?;
            out.add_items(patch.row(0))
        })
        .add()
        .unwrap();
    producer.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    producer.add_parameter(1, ParamDirection::Output, DataType::Array, ParamState::Required).unwrap();
    producer.finalize().unwrap();
    let consumer = ctx
        .user_kernel("test.sum_array", 101, 2)
        .validate(|v, metas| {
            if v.array(0)?.item_type() != Some(ArrayItemType::Scalar(ScalarType::Uint8)) {
                return Err(Error::new(ErrorKind::InvalidType, "want u8 items").at_parameter(0));
            }
            metas.get(1)?.set_scalar_type(ScalarType::Uint32)?;
            Ok(())
        })
        .process(|p| {
            let items: Vec<u8> = p.array(0)?.read_items()?;
            p.scalar(1)?.set(items.iter().map(|&x| x as u32).sum::<u32>())
        })
        .add()
        .unwrap();
    consumer.add_parameter(0, ParamDirection::Input, DataType::Array, ParamState::Required).unwrap();
    consumer.add_parameter(1, ParamDirection::Output, DataType::Scalar, ParamState::Required).unwrap();
    consumer.finalize().unwrap();

    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 5, 2, |x, _| x as u8 * 3);
    let arr = Array::new_virtual(&g, None, 0).unwrap();
    let sum = Scalar::new(&ctx, ScalarValue::Uint32(0)).unwrap();
    g.add_node(&producer, [Reference::from(&src), Reference::from(&arr)]).unwrap();
    g.add_node(&consumer, [Reference::from(&arr), Reference::from(&sum)]).unwrap();
    g.process().unwrap();
    assert_eq!(arr.item_type(), Some(ArrayItemType::Scalar(ScalarType::Uint8)));
    assert_eq!(arr.capacity(), 5);
    assert_eq!(sum.get::<u32>().unwrap(), 3 + 6 + 9 + 12);
    assert_eq!(arr.read_items::<u8>().unwrap_err().kind(), ErrorKind::OptimizedAway);
}

#[test]
fn border_change_reverifies_only_that_node_at_next_process() {
    let ctx = ctx();
    let (c1, c2) = (Arc::new(Calls::default()), Arc::new(Calls::default()));
    let k1 = map_kernel(&ctx, "test.first", c1.clone(), inc);
    let k2 = map_kernel(&ctx, "test.second", c2.clone(), inc);
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 4, 4, |_, _| 1);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    let n1 = g.add_node(&k1, [&src, &v]).unwrap();
    let _n2 = g.add_node(&k2, [&v, &dst]).unwrap();
    g.process().unwrap(); // first verification happens automatically
    assert_eq!(c1.counts(), (1, 1, 0, 1));
    assert_eq!(c2.counts(), (1, 1, 0, 1));

    // Setting the same border is not a change.
    n1.set_border(BorderMode::Undefined).unwrap();
    assert_eq!(g.state().unwrap(), GraphState::Completed);
    n1.set_border(BorderMode::Replicate).unwrap();
    assert!(n1.needs_reverification().unwrap());
    assert_eq!(g.state().unwrap(), GraphState::Unverified);
    g.process().unwrap();
    // n1: deinit, validate, init, process. n2 untouched apart from process.
    assert_eq!(c1.counts(), (2, 2, 1, 2));
    assert_eq!(c2.counts(), (1, 1, 0, 2));
    assert!(!n1.needs_reverification().unwrap());

    // An explicit verify re-verifies every node.
    g.verify().unwrap();
    assert_eq!(c1.counts(), (3, 3, 2, 2));
    assert_eq!(c2.counts(), (2, 2, 1, 2));
}

#[test]
fn replacing_a_parameter_with_same_meta_does_not_rerun_callbacks_but_is_used() {
    let ctx = ctx();
    let c = Arc::new(Calls::default());
    let k = map_kernel(&ctx, "test.double", c.clone(), double);
    let g = Graph::new(&ctx).unwrap();
    let a = u8_image(&ctx, 4, 4, |_, _| 3);
    let b = u8_image(&ctx, 4, 4, |_, _| 5);
    let out = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    let n = g.add_node(&k, [&a, &out]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![6; 16]);

    n.set_parameter(0, &b).unwrap();
    assert!(!n.needs_reverification().unwrap(), "same meta data: no trigger");
    g.process().unwrap();
    assert_eq!(c.counts(), (1, 1, 0, 2), "no callback re-ran");
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![10; 16], "the new input was used");
}

#[test]
fn replacing_a_parameter_with_different_meta_reverifies_downstream() {
    let ctx = ctx();
    let (c1, c2) = (Arc::new(Calls::default()), Arc::new(Calls::default()));
    let k1 = map_kernel(&ctx, "test.first", c1.clone(), inc);
    let k2 = map_kernel(&ctx, "test.second", c2.clone(), inc);
    let g = Graph::new(&ctx).unwrap();
    let small = u8_image(&ctx, 4, 4, |_, _| 0);
    let big = u8_image(&ctx, 8, 6, |_, _| 10);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let sink = map_kernel(&ctx, "test.sink", Arc::default(), inc);
    let out = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    let n1 = g.add_node(&k1, [&small, &v]).unwrap();
    g.add_node(&k2, [&v, &dst]).unwrap();
    let n3 = g.add_node(&sink, [&dst, &out]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![3; 16]);

    n1.set_parameter(0, &big).unwrap();
    assert!(n1.needs_reverification().unwrap());
    // The virtual images follow, but the real output is now the wrong size: refused, named.
    let e = g.process().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidDimension);
    assert_eq!(e.context().node.as_deref(), Some("sink#2"));
    assert_eq!(c2.counts().0, 2, "the downstream node was re-validated because its input changed");

    let out2 = Image::new(&ctx, 8, 6, ImageFormat::U8).unwrap();
    n3.set_parameter(1, &out2).unwrap();
    g.process().unwrap();
    assert_eq!((v.width(), v.height()), (8, 6));
    assert_eq!(out2.to_vec::<u8>().unwrap(), vec![13; 48]);
}

#[test]
fn setting_or_clearing_an_optional_parameter_triggers_reverification() {
    let ctx = ctx();
    let c = Arc::new(Calls::default());
    let (cv, cp) = (c.clone(), c.clone());
    let k = ctx
        .user_kernel("test.optional", 200, 3)
        .validate(move |v, metas| {
            cv.validate.fetch_add(1, SeqCst);
            let i = v.image(0)?;
            metas.get(1)?.set_from_reference(&Reference::from(i))?;
            Ok(())
        })
        .process(move |p| {
            cp.process.fetch_add(1, SeqCst);
            let add = match p.params()[2].as_ref() {
                Some(r) => r.as_scalar().expect("typed").get::<u8>()?,
                None => 0,
            };
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                    *o = i + add;
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.add_parameter(2, ParamDirection::Input, DataType::Scalar, ParamState::Optional).unwrap();
    k.finalize().unwrap();

    let g = Graph::new(&ctx).unwrap();
    let a = u8_image(&ctx, 2, 2, |_, _| 1);
    let out = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    let n = g.add_node(&k, [&a, &out]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![1; 4]);
    assert_eq!(c.validate.load(SeqCst), 1);

    let s = Scalar::new(&ctx, ScalarValue::Uint8(4)).unwrap();
    n.set_parameter(2, &s).unwrap();
    assert!(n.needs_reverification().unwrap());
    g.process().unwrap();
    assert_eq!(c.validate.load(SeqCst), 2);
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![5; 4]);

    n.set_parameter(2, None).unwrap();
    assert!(n.needs_reverification().unwrap());
    g.process().unwrap();
    assert_eq!(c.validate.load(SeqCst), 3);
    assert_eq!(out.to_vec::<u8>().unwrap(), vec![1; 4]);
}

#[test]
fn removing_a_node_runs_deinit_and_reverifies() {
    let ctx = ctx();
    let c = Arc::new(Calls::default());
    let k = map_kernel(&ctx, "test.inc", c.clone(), inc);
    let g = Graph::new(&ctx).unwrap();
    let a = u8_image(&ctx, 2, 2, |_, _| 1);
    let b = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    let d = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    let n1 = g.add_node(&k, [&a, &b]).unwrap();
    let n2 = g.add_node(&k, [&a, &d]).unwrap();
    g.verify().unwrap();
    g.remove_node(&n2).unwrap();
    assert_eq!(c.deinit.load(SeqCst), 1);
    assert_eq!(g.num_nodes().unwrap(), 1);
    assert_eq!(n2.name().unwrap_err().kind(), ErrorKind::InvalidReference);
    assert_eq!(g.remove_node(&n2).unwrap_err().kind(), ErrorKind::InvalidReference);
    g.process().unwrap();
    assert_eq!(b.to_vec::<u8>().unwrap(), vec![2; 4]);
    drop(g);
    assert_eq!(c.deinit.load(SeqCst), 2);
    assert_eq!(n1.name().unwrap_err().kind(), ErrorKind::InvalidReference, "graph released");
}
