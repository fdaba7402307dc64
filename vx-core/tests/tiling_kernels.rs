//! Tiling kernels: registration rules, verify-time checks, node-level overrides, scalars passed by
//! value, errors and panics inside tile functions.

mod common;

use common::spec_kernels::*;
use common::{image_in_out, parallel_tiling_ctx, tiling_kernel_with};
use vx::*;

fn ctx() -> Context {
    Context::builder().threads(2).build().unwrap()
}

fn copy_flexible(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    for y in 0..out.height() {
        for x in 0..out.width() {
            // Under Self_, the kernel handles the border itself: replicate.
            let nb = input.neighborhood();
            let v = input.get(x, y, nb.left, 0).unwrap_or_else(|| input.pixel(x, y, 0, 0));
            out.set(x, y, v);
        }
    }
    Ok(())
}

fn u8_kernel(ctx: &Context, name: &str, fast: bool, flexible: bool) -> Kernel {
    let mut b = ctx.tiling_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2).validate(|v, metas| {
        let i = v.image(0)?;
        metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
        Ok(())
    });
    if fast {
        b = b.fast(copy_flexible);
    }
    if flexible {
        b = b.flexible(copy_flexible);
    }
    let k = b.add().unwrap();
    image_in_out(&k);
    k
}

#[test]
fn self_border_without_flexible_fails_verify_whatever_the_size() {
    let ctx = ctx();
    let k = u8_kernel(&ctx, "t.fast", true, false);
    k.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize { width: 4, height: 4 })).unwrap();
    k.set_attribute(KernelAttribute::Border(BorderMode::Self_)).unwrap();
    k.finalize().unwrap();
    // 16x16, divisible by the block, zero neighborhood: the fast function could do everything, and
    // still the spec says verification fails.
    let g = Graph::with_name(&ctx, "self").unwrap();
    let (a, b) =
        (Image::new(&ctx, 16, 16, ImageFormat::U8).unwrap(), Image::new(&ctx, 16, 16, ImageFormat::U8).unwrap());
    let n = g.add_node(&k, [&a, &b]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert_eq!(e.context().kernel.as_deref(), Some("t.fast"));
    assert!(e.message().contains("Self_ requires a flexible function"), "{e}");
    // The node border can override the kernel's.
    n.set_border(BorderMode::Undefined).unwrap();
    g.verify().unwrap();
}

#[test]
fn multi_plane_and_mismatched_images_are_refused_at_verify() {
    let ctx = ctx();
    let k = u8_kernel(&ctx, "t.flex", false, true);
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let nv12 = Image::new(&ctx, 8, 8, ImageFormat::Nv12).unwrap();
    let out = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    g.add_node(&k, [&nv12, &out]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert_eq!(e.context().parameter, Some(0));
    assert_eq!(e.context().found.as_deref(), Some("NV12"));

    // Two inputs of different sizes.
    let add = add_kernel(&ctx);
    let g = Graph::new(&ctx).unwrap();
    let a = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx, 8, 9, ImageFormat::U8).unwrap();
    let s = Image::new(&ctx, 8, 8, ImageFormat::S16).unwrap();
    g.add_node(&add, [&a, &b, &s]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidDimension);
    assert_eq!(e.context().parameter, Some(1));
}

#[test]
fn tiling_kernel_registration_rules() {
    let ctx = ctx();
    // No function at all; a process function on a tiling kernel; fast on a user kernel.
    assert!(ctx.tiling_kernel("t.none", 1, 2).validate(|_, _| Ok(())).add().is_err());
    assert!(ctx.tiling_kernel("t.proc", 2, 2).validate(|_, _| Ok(())).process(|_| Ok(())).add().is_err());
    assert!(
        ctx.user_kernel("t.user", 3, 2).validate(|_, _| Ok(())).process(|_| Ok(())).fast(copy_flexible).add().is_err()
    );
    let too_many = ctx.tiling_kernel("t.many", 4, 17).validate(|_, _| Ok(())).fast(copy_flexible).add();
    assert_eq!(too_many.unwrap_err().kind(), ErrorKind::InvalidParameters);

    let k = ctx.tiling_kernel("t.k", 5, 3).validate(|_, _| Ok(())).fast(copy_flexible).add().unwrap();
    // Only images and input scalars.
    let e = k.add_parameter(0, ParamDirection::Output, DataType::Scalar, ParamState::Required).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(k.add_parameter(0, ParamDirection::Input, DataType::Array, ParamState::Required).is_err());
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Input, DataType::Scalar, ParamState::Required).unwrap();
    // Neighborhoods in the spec's order with the right signs; blocks of at least 1x1; two borders.
    let e = k.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(1, -1, 0, 0))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(e.context().found.as_deref(), Some("(1, -1, 0, 0)"));
    let e = k.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize { width: 0, height: 1 })).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    let e = k.set_attribute(KernelAttribute::Border(BorderMode::Replicate)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    k.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(-2, 1, 0, 3))).unwrap();
    k.set_attribute(KernelAttribute::TileMemorySize(64)).unwrap();
    let attrs = k.attributes();
    assert_eq!(attrs.neighborhood, Neighborhood::new(-2, 1, 0, 3));
    assert_eq!(attrs.tile_memory_size, 64);
}

#[test]
fn node_overrides_neighborhood_and_border() {
    let ctx = ctx();
    let k = u8_kernel(&ctx, "t.both", true, true);
    k.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(-1, 0, 0, 0))).unwrap();
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let px: Vec<u8> = (0..12).collect();
    let a = Image::new(&ctx, 6, 2, ImageFormat::U8).unwrap();
    a.copy_from(Rect::full(6, 2), 0, &px).unwrap();
    let b = Image::new(&ctx, 6, 2, ImageFormat::U8).unwrap();
    b.copy_from(Rect::full(6, 2), 0, &[99u8; 12]).unwrap();
    let n = g.add_node(&k, [&a, &b]).unwrap();
    assert_eq!(n.neighborhood().unwrap(), Neighborhood::new(-1, 0, 0, 0));
    g.process().unwrap();
    // Undefined: column 0 needs x-1 and is not processed; others copy their left neighbor.
    assert_eq!(b.to_vec::<u8>().unwrap(), [99, 0, 1, 2, 3, 4, 99, 6, 7, 8, 9, 10]);

    assert_eq!(n.set_border(BorderMode::Constant(0)).unwrap_err().kind(), ErrorKind::NotSupported);
    n.set_border(BorderMode::Self_).unwrap();
    assert!(n.needs_reverification().unwrap());
    g.process().unwrap();
    assert_eq!(b.to_vec::<u8>().unwrap(), [0, 0, 1, 2, 3, 4, 6, 6, 7, 8, 9, 10]);

    assert_eq!(n.set_neighborhood(Neighborhood::new(0, 0, 1, 0)).unwrap_err().kind(), ErrorKind::InvalidValue);
    n.set_neighborhood(Neighborhood::new(-2, 0, 0, 0)).unwrap();
    n.set_border(BorderMode::Undefined).unwrap();
    b.copy_from(Rect::full(6, 2), 0, &[99u8; 12]).unwrap();
    g.process().unwrap();
    assert_eq!(b.to_vec::<u8>().unwrap(), [99, 99, 0, 1, 2, 3, 99, 99, 6, 7, 8, 9]);
}

#[test]
fn scalars_arrive_by_value() {
    let ctx = ctx();
    let k = ctx
        .tiling_kernel("t.threshold", 1, 3)
        .validate(|v, metas| {
            let i = v.expect_image_format(0, ImageFormat::U8)?;
            if v.scalar(1)?.scalar_type() != ScalarType::Uint8 {
                return Err(Error::new(ErrorKind::InvalidType, "threshold must be u8").at_parameter(1));
            }
            metas.get(2)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .flexible(|args| {
            let t: u8 = args.scalar(1)?;
            let input = args.input::<u8>(0)?;
            let mut out = args.output::<u8>(2)?;
            for y in 0..out.height() {
                for x in 0..out.width() {
                    out.set(x, y, if input.pixel(x, y, 0, 0) > t { 255 } else { 0 });
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Input, DataType::Scalar, ParamState::Required).unwrap();
    k.add_parameter(2, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let a = Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
    a.copy_from(Rect::full(4, 1), 0, &[10u8, 50, 100, 200]).unwrap();
    let t = Scalar::new(&ctx, ScalarValue::Uint8(60)).unwrap();
    let out = Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [Reference::from(&a), Reference::from(&t), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [0, 0, 255, 255]);
    t.set(150u8).unwrap();
    g.process().unwrap();
    assert_eq!(out.to_vec::<u8>().unwrap(), [0, 0, 0, 255], "the new value is passed at the next process");
}

#[test]
fn tile_function_errors_and_panics_are_node_errors() {
    vx_plugin_abi::expect_panics("pixel value 2 is cursed");
    vx_plugin_abi::expect_panics("outside the readable rectangle");
    let ctx = ctx();
    let k = ctx
        .tiling_kernel("t.picky", 1, 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .flexible(|args| {
            let input = args.input::<u8>(0)?;
            let _out = args.output::<u8>(1)?;
            match input.pixel(0, 0, 0, 0) {
                1 => Err(TileError::new(Status::InvalidValue, "pixel value 1 is not allowed")),
                2 => panic!("pixel value 2 is cursed"),
                // Reading outside the readable rectangle panics too.
                3 => {
                    std::hint::black_box(input.pixel(0, 0, 0, -1));
                    Ok(())
                }
                _ => Ok(()),
            }
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    let g = Graph::with_name(&ctx, "picky").unwrap();
    let a = Image::new(&ctx, 3, 2, ImageFormat::U8).unwrap();
    let b = Image::new(&ctx, 3, 2, ImageFormat::U8).unwrap();
    let n = g.add_node(&k, [&a, &b]).unwrap();

    a.copy_from(Rect::new(0, 0, 1, 1), 0, &[1u8]).unwrap();
    let e = g.process().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(e.context().node.as_deref(), Some("picky#0"));
    assert!(e.message().starts_with("pixel value 1 is not allowed (tile {0,0,3,2}, flexible function)"), "{e}");
    assert_eq!(n.status().unwrap(), Status::InvalidValue);

    a.copy_from(Rect::new(0, 0, 1, 1), 0, &[2u8]).unwrap();
    let e = g.process().unwrap_err();
    assert_eq!(e.status(), Status::Failure);
    assert!(e.message().contains("panicked") && e.message().contains("cursed"), "{e}");

    a.copy_from(Rect::new(0, 0, 1, 1), 0, &[3u8]).unwrap();
    let e = g.process().unwrap_err();
    assert!(e.message().contains("outside the readable rectangle"), "{e}");

    a.copy_from(Rect::new(0, 0, 1, 1), 0, &[0u8]).unwrap();
    g.process().unwrap();
    assert_eq!(n.status().unwrap(), Status::Success);
}

#[test]
fn tiles_run_in_parallel_on_the_caller_and_the_context_pool() {
    use std::collections::HashSet;
    use std::sync::Mutex;
    let ctx = parallel_tiling_ctx();
    let names: &'static Mutex<HashSet<String>> = Box::leak(Box::default());
    let k = tiling_kernel_with(&ctx, "t.where", move |args| {
        names.lock().unwrap().insert(std::thread::current().name().unwrap_or("?").to_string());
        let _ = args.output::<u8>(1)?;
        std::thread::sleep(std::time::Duration::from_millis(2));
        Ok(())
    });
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let (a, b) =
        (Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap(), Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap());
    g.add_node(&k, [&a, &b]).unwrap();
    g.process().unwrap();
    // The calling thread takes tiles too; with 2 threads configured, at most 2 threads compute and
    // at least one of them is a pool worker of this context.
    let names = names.lock().unwrap();
    assert_eq!(names.len(), 2, "two threads ran tiles: {names:?}");
    assert!(names.iter().any(|n| n.starts_with("vx-ctx")), "{names:?}");
}

#[test]
fn tiles_with_tile_memory_run_in_parallel_too() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let ctx = parallel_tiling_ctx();
    // How many tile calls are inside the function at once, and the most seen.
    let inside: &'static AtomicUsize = Box::leak(Box::default());
    let most: &'static AtomicUsize = Box::leak(Box::default());
    let k = tiling_kernel_with(&ctx, "t.memory", move |args| {
        let now = inside.fetch_add(1, SeqCst) + 1;
        most.fetch_max(now, SeqCst);
        args.tile_memory().fill(7); // each call has the arena to itself
        std::thread::sleep(std::time::Duration::from_millis(3));
        inside.fetch_sub(1, SeqCst);
        Ok(())
    });
    k.set_attribute(KernelAttribute::TileMemorySize(16)).unwrap();
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let (a, b) =
        (Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap(), Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap());
    g.add_node(&k, [&a, &b]).unwrap();
    g.process().unwrap();
    assert_eq!(most.load(SeqCst), 2, "the caller and the pool worker used arenas of their own, at once");
}
