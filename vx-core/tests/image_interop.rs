//! `image` crate interop (feature `image`) and images over the application's memory
//! (`vxCreateImageFromHandle` / `vxSwapImageHandle`): copies round-trip exactly for every pixel type
//! that maps; an imported buffer is processed in place by a graph — the kernel sees the
//! application's own pointer, nothing is copied in or out — and swapped per frame; misuse is refused
//! leaving the image as it was.

use std::sync::{Arc, Mutex};

use image::{GrayImage, ImageBuffer, Luma, Rgb, RgbImage, Rgba, RgbaImage};
use vx::*;

fn ctx() -> Context {
    Context::builder().threads(2).build().unwrap()
}

fn pattern(w: u32, h: u32, seed: u32) -> GrayImage {
    GrayImage::from_fn(w, h, |x, y| Luma([((x * 7 + y * 13 + seed) % 251) as u8]))
}

#[test]
fn copies_round_trip_for_every_pixel_type_that_maps() {
    let ctx = ctx();
    let gray = pattern(37, 23, 1);
    let img = Image::from_image(&ctx, &gray).unwrap();
    assert_eq!((img.width(), img.height(), img.format()), (37, 23, ImageFormat::U8));
    assert_eq!(img.to_image::<Luma<u8>>().unwrap(), gray);

    let g16 = ImageBuffer::<Luma<u16>, Vec<u16>>::from_fn(19, 5, |x, y| Luma([(x * 3000 + y * 7) as u16]));
    let img = Image::from_image(&ctx, &g16).unwrap();
    assert_eq!(img.format(), ImageFormat::U16);
    assert_eq!(img.to_vec::<u16>().unwrap(), g16.as_raw().clone());
    assert_eq!(img.to_image::<Luma<u16>>().unwrap(), g16);

    let rgb = RgbImage::from_fn(11, 7, |x, y| Rgb([x as u8, y as u8, (x * y) as u8]));
    let img = Image::from_image(&ctx, &rgb).unwrap();
    assert_eq!(img.format(), ImageFormat::Rgb);
    assert_eq!(img.to_image::<Rgb<u8>>().unwrap(), rgb);

    let rgba = RgbaImage::from_fn(9, 4, |x, y| Rgba([x as u8, y as u8, 7, 200]));
    let img = Image::from_image(&ctx, &rgba).unwrap();
    assert_eq!(img.format(), ImageFormat::Rgbx);
    assert_eq!(img.to_image::<Rgba<u8>>().unwrap(), rgba);

    // The wrong pixel type is refused, naming both formats.
    let e = img.to_image::<Luma<u8>>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert!(e.to_string().contains("U8") && e.to_string().contains("RGBX"), "{e}");
}

/// `out = 255 - in`, recording the addresses of the rows it read and wrote.
fn invert(ctx: &Context, seen: Arc<Mutex<Vec<(usize, usize)>>>) -> Kernel {
    let k = ctx
        .user_kernel("t.invert", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .process(move |p| {
            let (src, dst) = (p.image(0)?, p.image(1)?);
            let src = src.map::<u8>(src.full_rect(), 0)?;
            let mut dst = dst.map_mut::<u8>(dst.full_rect(), 0)?;
            seen.lock().unwrap().push((src.row(0).as_ptr() as usize, dst.row(0).as_ptr() as usize));
            for y in 0..src.addressing().dim_y {
                for (o, &v) in dst.row_mut(y).iter_mut().zip(src.row(y)) {
                    *o = 255 - v;
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

#[test]
fn imported_frames_are_processed_in_place_and_swapped_per_frame() {
    let ctx = ctx();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let k = invert(&ctx, Arc::clone(&seen));
    let (w, h) = (64, 40);

    // Frame 1 and the output buffer: the application's memory.
    let frame1 = pattern(w, h, 1);
    let out_buf = GrayImage::new(w, h);
    let (p_in, p_out) = (frame1.as_ptr() as usize, out_buf.as_ptr() as usize);
    let input = Image::from_image_buffer(&ctx, frame1).unwrap();
    let output = Image::from_image_buffer(&ctx, out_buf).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    graph.add_node(&k, [&input, &output]).unwrap();
    graph.verify().unwrap();
    graph.process().unwrap();
    // The kernel read and wrote the application's buffers themselves.
    assert_eq!(seen.lock().unwrap().last().copied(), Some((p_in, p_out)));

    // Frame 2 swapped in; frame 1 comes back, the very same allocation, unchanged.
    let frame2 = pattern(w, h, 2);
    let p_in2 = frame2.as_ptr() as usize;
    let old = input.swap_handle(Some(ImageHandle::new(frame2, w as usize))).unwrap().unwrap();
    assert_eq!(old.as_ptr() as usize, p_in);
    let frame1 = old.into_inner::<GrayImage>().unwrap();
    assert_eq!(frame1.as_ptr() as usize, p_in);
    assert_eq!(frame1, pattern(w, h, 1));
    graph.process().unwrap();
    assert_eq!(seen.lock().unwrap().last().copied(), Some((p_in2, p_out)));

    // The output buffer back: the frame-2 result, written in place.
    let out = output.swap_handle(None).unwrap().unwrap().into_inner::<GrayImage>().unwrap();
    assert_eq!(out.as_ptr() as usize, p_out);
    let expect = GrayImage::from_fn(w, h, |x, y| Luma([255 - pattern(w, h, 2).get_pixel(x, y)[0]]));
    assert_eq!(out, expect);
    // Without memory the graph cannot run, and says why (VX_ERROR_NO_MEMORY, as the OpenVX
    // conformance tests have it for a map after a swap with NULL).
    let e = graph.process().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoMemory);
    assert!(e.to_string().contains("took it back"), "{e}");
}

#[test]
fn misuse_is_refused_and_leaves_the_image_as_it_was() {
    let ctx = ctx();
    // Too small, a stride that cannot hold a row, a stride not a multiple of the pixel size.
    let e = Image::from_handle(&ctx, 10, 10, ImageFormat::U8, ImageHandle::new(vec![0u8; 99], 10)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.to_string().contains("100 bytes"), "{e}");
    let e = Image::from_handle(&ctx, 10, 10, ImageFormat::U8, ImageHandle::new(vec![0u8; 100], 9)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    let e = Image::from_handle(&ctx, 10, 1, ImageFormat::U16, ImageHandle::new(vec![0u16; 20], 21)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    // NV12 has two planes.
    let e = Image::from_handle(&ctx, 4, 4, ImageFormat::Nv12, ImageHandle::new(vec![0u8; 24], 4)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);

    // A padded stride works; swaps must keep it.
    let img = Image::from_handle(&ctx, 10, 3, ImageFormat::U8, ImageHandle::new(vec![7u8; 48], 16)).unwrap();
    assert_eq!(img.to_vec::<u8>().unwrap(), vec![7u8; 30]);
    let e = img.swap_handle(Some(ImageHandle::new(vec![0u8; 30], 10))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert_eq!(img.to_vec::<u8>().unwrap(), vec![7u8; 30], "a refused swap changes nothing");

    // Mapped: refused; after unmapping, fine.
    {
        let _m = img.map::<u8>(Rect::full(10, 3)).unwrap();
        let e = img.swap_handle(Some(ImageHandle::new(vec![1u8; 48], 16))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotSupported);
    }
    let old = img.swap_handle(Some(ImageHandle::new(vec![1u8; 48], 16))).unwrap().unwrap();
    assert_eq!(old.into_inner::<Vec<u8>>().unwrap(), vec![7u8; 48]);
    // The wrong owner type gives the handle back.
    let h = img.swap_handle(None).unwrap().unwrap();
    let h = h.into_inner::<GrayImage>().unwrap_err();
    assert_eq!(h.into_inner::<Vec<u8>>().unwrap(), vec![1u8; 48]);

    // Not imported, or an ROI: refused.
    let own = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    assert_eq!(own.swap_handle(None).unwrap_err().kind(), ErrorKind::InvalidParameters);
    let img = Image::from_handle(&ctx, 4, 4, ImageFormat::U8, ImageHandle::new(vec![0u8; 16], 4)).unwrap();
    let roi = img.roi(Rect::new(0, 0, 2, 2)).unwrap();
    assert_eq!(roi.swap_handle(None).unwrap_err().kind(), ErrorKind::InvalidParameters);
}
