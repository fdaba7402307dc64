//! A container and its part both virtual in a pipelined graph are refused by name (issue 28). That
//! every kind's virtual objects get a copy per frame in flight (`ObjectKind::frame_copy`) is
//! `tests/tests/object_kinds.rs::pipelined`, over the whole list (it replaced this file's loop over
//! the five fixed-layout kinds).

use vx::*;

const W: u32 = 16;
const H: u32 = 4;

#[test]
fn a_container_and_its_part_both_virtual_in_a_pipelined_graph_are_refused_by_name() {
    let ctx = Context::builder().threads(2).build().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let exemplar = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let arr = ObjectArray::new_virtual(&g, &exemplar, 2).unwrap();
    let item = arr.item(0).unwrap();
    let copy = |name: &str, ty_in: DataType, ty_out: DataType, out: Reference| {
        let k = ctx
            .user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
            .validate(move |_, metas| {
                metas.get(1)?.set_from_reference(&out)?;
                Ok(())
            })
            .process(|_| Ok(()))
            .add()
            .unwrap();
        k.add_parameter(0, ParamDirection::Input, ty_in, ParamState::Required).unwrap();
        k.add_parameter(1, ParamDirection::Output, ty_out, ParamState::Required).unwrap();
        k.finalize().unwrap();
        k
    };
    let input = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let output = Image::new(&ctx, W, H, ImageFormat::U8).unwrap();
    let real_arr = ObjectArray::new(&ctx, &exemplar, 2).unwrap();
    let fill = copy("pk.fill", DataType::Image, DataType::ObjectArray, Reference::from(&real_arr));
    let read = copy("pk.read", DataType::Image, DataType::Image, Reference::from(&exemplar));
    let a = g.add_node(&fill, [Reference::from(&input), Reference::from(&arr)]).unwrap();
    let b = g.add_node(&read, [item.clone(), Reference::from(&output)]).unwrap();
    let p_in = g.add_parameter(&a, 0).unwrap();
    let p_out = g.add_parameter(&b, 1).unwrap();
    let e = g
        .set_schedule_config(
            ScheduleConfig::queue_auto().depth(2).queue(p_in, [input.clone()]).queue(p_out, [output.clone()]),
        )
        .and_then(|()| g.verify())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains(&arr.name()) && e.to_string().contains(&item.name()), "{e}");
}
