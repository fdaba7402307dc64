//! Virtual objects of every fixed-layout kind between two stages of a pipelined graph (issue 28,
//! "every type everywhere"): each frame in flight gets its own copy (`ObjectKind::frame_copy`),
//! so the frames' results are those of processing them one by one; a container and its part both
//! in a pipelined graph are refused by name.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use vx::*;

const W: u32 = 16;
const H: u32 = 4;
/// Elements of every payload object.
const N: usize = 15;

fn frame_pixels(f: usize) -> Vec<u8> {
    (0..W * H).map(|i| (i as usize * 7 + f * 31) as u8).collect()
}

/// One kind under test: a real exemplar, a virtual object of the graph, and the kernel-side writes
/// and reads of its `N` elements (as bytes).
struct Payload {
    name: &'static str,
    exemplar: fn(&Context) -> Reference,
    virtual_: fn(&Graph) -> Reference,
    write: fn(&ProcessContext<'_>, u32, &[u8]) -> Result<()>,
    read: fn(&ProcessContext<'_>, u32) -> Result<Vec<u8>>,
}

fn payloads() -> Vec<Payload> {
    vec![
        Payload {
            name: "lut",
            exemplar: |c| Lut::new(c, ScalarType::Uint8, N).unwrap().into(),
            virtual_: |g| Lut::new_virtual(g, ScalarType::Uint8, N).unwrap().into(),
            write: |p, i, v| p.object::<Lut>(i)?.copy_from::<u8>(v),
            read: |p, i| {
                let mut out = vec![0u8; N];
                p.object::<Lut>(i)?.copy_to::<u8>(&mut out)?;
                Ok(out)
            },
        },
        Payload {
            name: "matrix",
            exemplar: |c| Matrix::new(c, ScalarType::Int32, 5, 3).unwrap().into(),
            virtual_: |g| Matrix::new_virtual(g, ScalarType::Int32, 5, 3).unwrap().into(),
            write: |p, i, v| p.object::<Matrix>(i)?.copy_from::<i32>(&v.iter().map(|&b| b as i32).collect::<Vec<_>>()),
            read: |p, i| {
                let mut out = vec![0i32; N];
                p.object::<Matrix>(i)?.copy_to::<i32>(&mut out)?;
                Ok(out.into_iter().map(|x| x as u8).collect())
            },
        },
        Payload {
            name: "distribution",
            exemplar: |c| Distribution::new(c, N, 0, 255).unwrap().into(),
            virtual_: |g| Distribution::new_virtual(g, N, 0, 255).unwrap().into(),
            write: |p, i, v| p.object::<Distribution>(i)?.copy_from(&v.iter().map(|&b| b as u32).collect::<Vec<_>>()),
            read: |p, i| {
                let mut out = vec![0u32; N];
                p.object::<Distribution>(i)?.copy_to(&mut out)?;
                Ok(out.into_iter().map(|x| x as u8).collect())
            },
        },
        Payload {
            name: "user data object",
            exemplar: |c| UserDataObject::new(c, "payload", N).unwrap().into(),
            virtual_: |g| UserDataObject::new_virtual(g, "payload", N).unwrap().into(),
            write: |p, i, v| p.object::<UserDataObject>(i)?.copy_from(0, v),
            read: |p, i| {
                let mut out = vec![0u8; N];
                p.object::<UserDataObject>(i)?.copy_to(0, &mut out)?;
                Ok(out)
            },
        },
        Payload {
            name: "convolution",
            exemplar: |c| Convolution::new(c, 5, 3).unwrap().into(),
            virtual_: |g| Convolution::new_virtual(g, 5, 3).unwrap().into(),
            write: |p, i, v| p.object::<Convolution>(i)?.copy_from(&v.iter().map(|&b| b as i16).collect::<Vec<_>>()),
            read: |p, i| {
                let mut out = vec![0i16; N];
                p.object::<Convolution>(i)?.copy_to(&mut out)?;
                Ok(out.into_iter().map(|x| x as u8).collect())
            },
        },
    ]
}

fn image_param(k: &Kernel, i: u32, dir: ParamDirection) {
    k.add_parameter(i, dir, DataType::Image, ParamState::Required).unwrap();
}

/// Stage A: image → payload (its first `N` pixels), after a pause so frames overlap.
fn produce(ctx: &Context, p: &Payload, n: usize) -> Kernel {
    let exemplar = (p.exemplar)(ctx);
    let ty = exemplar.data_type();
    let write = p.write;
    let k = ctx
        .user_kernel(&format!("pk.produce{n}"), ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(move |_, metas| {
            metas.get(1)?.set_from_reference(&exemplar)?;
            Ok(())
        })
        .process(move |pc| {
            std::thread::sleep(Duration::from_millis(2));
            let img = pc.image(0)?;
            let pixels = img.map::<u8>(img.full_rect(), 0)?.row(0).to_vec();
            write(pc, 1, &pixels[..N])
        })
        .add()
        .unwrap();
    image_param(&k, 0, ParamDirection::Input);
    k.add_parameter(1, ParamDirection::Output, ty, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

/// Stage B: payload → image (pixel `i` = element `i mod N` + 1).
fn consume(ctx: &Context, p: &Payload, n: usize) -> Kernel {
    let ty = (p.exemplar)(ctx).data_type();
    let read = p.read;
    let k = ctx
        .user_kernel(&format!("pk.consume{n}"), ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|_, metas| {
            metas.get(1)?.set_image(ImageFormat::U8, W, H)?;
            Ok(())
        })
        .process(move |pc| {
            let v = read(pc, 0)?;
            let img = pc.image(1)?;
            let mut out = img.map_mut::<u8>(img.full_rect(), 0)?;
            for y in 0..H {
                for (x, px) in out.row_mut(y).iter_mut().enumerate() {
                    *px = v[(y as usize * W as usize + x) % N].wrapping_add(1);
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, ty, ParamState::Required).unwrap();
    image_param(&k, 1, ParamDirection::Output);
    k.finalize().unwrap();
    k
}

fn expected(f: usize) -> Vec<u8> {
    let px = frame_pixels(f);
    (0..(W * H) as usize).map(|i| px[i % N].wrapping_add(1)).collect()
}

#[test]
fn every_fixed_layout_kind_flows_between_pipelined_stages_frame_by_frame() {
    let ctx =
        Context::builder().threads(2).target(TargetConfig::new("a")).target(TargetConfig::new("b")).build().unwrap();
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let mut covered = 0;
    for p in payloads() {
        let n = COUNT.fetch_add(1, SeqCst);
        let g = Graph::new(&ctx).unwrap();
        let (input, output) =
            (Image::new(&ctx, W, H, ImageFormat::U8).unwrap(), Image::new(&ctx, W, H, ImageFormat::U8).unwrap());
        let payload = (p.virtual_)(&g);
        let a = g.add_node(&produce(&ctx, &p, n), [Reference::from(&input), payload.clone()]).unwrap();
        let b = g.add_node(&consume(&ctx, &p, n), [payload.clone(), Reference::from(&output)]).unwrap();
        a.set_target("a").unwrap();
        b.set_target("b").unwrap();
        let p_in = g.add_parameter(&a, 0).unwrap();
        let p_out = g.add_parameter(&b, 1).unwrap();
        let ins: Vec<Image> = (0..3).map(|_| Image::new(&ctx, W, H, ImageFormat::U8).unwrap()).collect();
        let outs: Vec<Image> = (0..3).map(|_| Image::new(&ctx, W, H, ImageFormat::U8).unwrap()).collect();
        g.set_schedule_config(
            ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        for (f, (i, o)) in ins.iter().zip(&outs).enumerate() {
            i.copy_from(Rect::full(W, H), 0, &frame_pixels(f)).unwrap();
            g.enqueue(p_in, i).unwrap();
            g.enqueue(p_out, o).unwrap();
        }
        for f in 0..3 {
            let done = g.dequeue(p_out).unwrap();
            done.result.clone().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(done.frame, f as u64);
            assert_eq!(done.reference.as_image().unwrap().to_vec::<u8>().unwrap(), expected(f), "{} frame {f}", p.name);
        }
        g.wait().unwrap();
        covered += 1;
    }
    assert_eq!(covered, 5);
}

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
