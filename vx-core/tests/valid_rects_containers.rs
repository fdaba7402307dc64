//! Valid rectangles through containers (issue 28, "every type everywhere"): an object array of
//! images gets one rectangle per item from a validator's callback, and a reader of the array sees
//! them, item by item, as its callback's inputs — like a pyramid's levels.

use std::sync::{Arc, Mutex};

use vx::*;

const W: u32 = 8;
const H: u32 = 6;

#[test]
fn an_object_array_of_images_gets_and_passes_on_a_rectangle_per_item() {
    let ctx = Context::builder().threads(1).build().unwrap();
    let exemplar = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let real = ObjectArray::new(&ctx, &exemplar, 3).unwrap();
    // image → object array of 3 images; item i's valid rectangle is the input's shrunk by i + 1.
    let split = ctx
        .user_kernel("vr.split", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(move |_, metas| {
            metas.get(1)?.set_from_reference(&Reference::from(&real))?.set_valid_rect_callback(|_, inputs, out| {
                assert_eq!(out.len(), 3, "one rectangle per item");
                let r = inputs[0];
                for (i, o) in out.iter_mut().enumerate() {
                    let d = i as u32 + 1;
                    *o = Rect::new(r.start_x + d, r.start_y + d, r.end_x - d, r.end_y - d);
                }
                Ok(())
            })?;
            Ok(())
        })
        .process(|_| Ok(()))
        .add()
        .unwrap();
    split.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    split.add_parameter(1, ParamDirection::Output, DataType::ObjectArray, ParamState::Required).unwrap();
    split.finalize().unwrap();
    // object array → image; the callback records the rectangles it is given.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let join = ctx
        .user_kernel("vr.join", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(move |_, metas| {
            let seen = seen2.clone();
            metas.get(1)?.set_image(ImageFormat::U8, W, H)?.set_valid_rect_callback(move |_, inputs, out| {
                *seen.lock().unwrap() = inputs.to_vec();
                out[0] = inputs[2];
                Ok(())
            })?;
            Ok(())
        })
        .process(|_| Ok(()))
        .add()
        .unwrap();
    join.add_parameter(0, ParamDirection::Input, DataType::ObjectArray, ParamState::Required).unwrap();
    join.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    join.finalize().unwrap();

    let g = Graph::new(&ctx).unwrap();
    let input = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let arr = ObjectArray::new_virtual(&g, &exemplar, 3).unwrap();
    let out = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    g.add_node(&split, [Reference::from(&input), Reference::from(&arr)]).unwrap();
    g.add_node(&join, [Reference::from(&arr), Reference::from(&out)]).unwrap();
    g.verify().unwrap();
    let want: Vec<Rect> = (1..=3).map(|d| Rect::new(d, d, W - d, H - d)).collect();
    let items: Vec<Rect> = (0..3).map(|i| arr.item_as::<Image>(i).unwrap().valid_region()).collect();
    assert_eq!(items, want);
    assert_eq!(*seen.lock().unwrap(), want);
    assert_eq!(out.valid_region(), want[2]);
}
