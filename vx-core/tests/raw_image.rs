//! Raw images (TIOVX's `tivx_raw_image`, issue 28 step 9): creation refused by TIOVX's rules
//! with the error kinds named, the layout of every container and arrangement checked against
//! values computed by hand from TIOVX's rules (`ownInitRawImage`: a line is the row's bytes
//! rounded up to 16, times the exposures when line-interleaved; meta rows before, pixels, meta
//! rows after), copies and maps per exposure and buffer, and raw images flowing through graphs:
//! an in-process kernel through a virtual raw image, sequential and pipelined.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use vx::*;
use vx_plugin_abi::kinds::raw_image::{p12_get, p12_set};

const F8: RawImageFormat = RawImageFormat::BIT8;
const F16: RawImageFormat = RawImageFormat::BIT16;
const P12: RawImageFormat = RawImageFormat::P12;

fn region(offset: u64, stride: u64, rows: u64, row_bytes: u64) -> RawImageRegion {
    RawImageRegion { offset, stride, rows, row_bytes }
}

#[test]
fn creation_is_refused_by_each_of_tiovxs_rules_with_its_error_kind() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let fmt = |container, msb| RawImageFormat { container, msb };
    let cases: Vec<(&str, RawImageMeta, ErrorKind, &str)> = vec![
        ("odd width", RawImageMeta::new(9, 4, F8), ErrorKind::InvalidParameters, "width and/or height"),
        ("width 0", RawImageMeta::new(0, 4, F8), ErrorKind::InvalidParameters, "width and/or height"),
        ("height 0", RawImageMeta::new(8, 0, F8), ErrorKind::InvalidParameters, "width and/or height"),
        ("no exposure", RawImageMeta::new(8, 4, F8).exposures(&[]), ErrorKind::InvalidParameters, "num_exposures"),
        (
            "4 exposures",
            RawImageMeta { num_exposures: 4, ..RawImageMeta::new(8, 4, F8) },
            ErrorKind::InvalidParameters,
            "num_exposures",
        ),
        (
            "msb 16",
            RawImageMeta::new(8, 4, fmt(RawPixelContainer::Bit16, 16)),
            ErrorKind::InvalidParameters,
            "msb for exposure index 0",
        ),
        (
            "msb 8 in 8 bits",
            RawImageMeta::new(8, 4, F8).exposures(&[F8, fmt(RawPixelContainer::Bit8, 8)]),
            ErrorKind::InvalidParameters,
            "msb for exposure index 1",
        ),
        (
            "msb 12 in P12",
            RawImageMeta::new(8, 4, fmt(RawPixelContainer::P12, 12)),
            ErrorKind::InvalidParameters,
            "msb for exposure index 0",
        ),
        (
            "4 GiB × 4 GiB × 3 × 2 bytes",
            RawImageMeta::new(u32::MAX - 1, u32::MAX, F16).exposures(&[F16, F16, F16]),
            ErrorKind::InvalidDimension,
            "overflows",
        ),
    ];
    for (what, meta, kind, says) in &cases {
        for e in [RawImage::new(&ctx, meta).unwrap_err(), RawImage::new_virtual(&g, meta).unwrap_err()] {
            assert_eq!(e.kind(), *kind, "{what}: {e}");
            assert!(e.to_string().contains(says), "{what}: {e}");
        }
    }
    // A container code above TIVX_RAW_IMAGE_P12_BIT (the only way to name one: the enum has three).
    assert_eq!(RawPixelContainer::from_code(0x101003).unwrap_err().kind(), ErrorKind::InvalidParameters);
    assert_eq!(RawPixelContainer::from_code(0x101002).unwrap(), RawPixelContainer::P12);
    // Line-interleaved: only format[0] counts (a bad format[1] is ignored).
    let bad = fmt(RawPixelContainer::Bit8, 15);
    let m = RawImageMeta::new(8, 4, F16).exposures(&[F16, bad]).line_interleaved(true);
    RawImage::new(&ctx, &m).unwrap();
    assert_eq!(RawImage::new(&ctx, &m.line_interleaved(false)).unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn layouts_match_tiovxs_rules_computed_by_hand() {
    let ctx = Context::new().unwrap();
    let lay = |m: RawImageMeta| RawImage::new(&ctx, &m).unwrap().layout();

    // 8 bits, width 10: a row is 10 bytes, a line 16; 1 meta row before, 2 after, 3 pixel rows.
    let l = lay(RawImageMeta::new(10, 3, F8).meta_rows(1, 2));
    assert_eq!(l.num_exposures, 1);
    let x = l.exposure(0).unwrap();
    assert_eq!(x.meta_before, region(0, 16, 1, 10));
    assert_eq!(x.pixels, region(16, 16, 3, 10));
    assert_eq!(x.meta_after, region(64, 16, 2, 10));
    assert_eq!(l.total, 96);
    assert!(l.exposure(1).is_none());

    // 16 bits, width 10: 20 bytes, a line of 32.
    let l = lay(RawImageMeta::new(10, 3, F16));
    assert_eq!(l.exposure(0).unwrap().pixels, region(0, 32, 3, 20));
    assert_eq!(l.total, 96);

    // P12: 3 bytes per 2 pixels: width 10 → 15 bytes (line 16), width 12 → 18 bytes (line 32).
    assert_eq!(lay(RawImageMeta::new(10, 2, P12)).exposure(0).unwrap().pixels, region(0, 16, 2, 15));
    assert_eq!(lay(RawImageMeta::new(12, 2, P12)).exposure(0).unwrap().pixels, region(0, 32, 2, 18));

    // Separate exposures, each its own buffer one after the other: 8 bits (line 16) then
    // 16 bits (line 32), 2 pixel rows and 1 meta row after: 3 rows each.
    let l = lay(RawImageMeta::new(10, 2, F8).exposures(&[F8, F16]).meta_rows(0, 1));
    let (a, b) = (l.exposure(0).unwrap(), l.exposure(1).unwrap());
    assert_eq!((a.pixels, a.meta_after, a.meta_before.rows), (region(0, 16, 2, 10), region(32, 16, 1, 10), 0));
    assert_eq!((b.pixels, b.meta_after), (region(48, 32, 2, 20), region(112, 32, 1, 20)));
    assert_eq!(l.total, 48 + 96);

    // Line-interleaved, 2 exposures of 16 bits, width 10: a line of 32, stride_y 64; 1 meta row
    // before and after, so 4 strides of 64; exposure 1 starts a line (32 bytes) into each.
    let l = lay(RawImageMeta::new(10, 2, F16).exposures(&[F16, F16]).line_interleaved(true).meta_rows(1, 1));
    let (a, b) = (l.exposure(0).unwrap(), l.exposure(1).unwrap());
    assert_eq!(
        (a.meta_before, a.pixels, a.meta_after),
        (region(0, 64, 1, 20), region(64, 64, 2, 20), region(192, 64, 1, 20))
    );
    assert_eq!(
        (b.meta_before, b.pixels, b.meta_after),
        (region(32, 64, 1, 20), region(96, 64, 2, 20), region(224, 64, 1, 20))
    );
    assert_eq!(l.total, 256);

    // Three exposures, P12, interleaved: width 4 → 6 bytes, line 16, stride 48.
    let l = lay(RawImageMeta::new(4, 2, P12).exposures(&[P12, P12, P12]).line_interleaved(true));
    assert_eq!(l.exposure(2).unwrap().pixels, region(32, 48, 2, 6));
    assert_eq!(l.total, 96);
    let r = RawImage::new(&ctx, &RawImageMeta::new(4, 2, P12).exposures(&[P12, P12, P12]).line_interleaved(true));
    assert_eq!(r.unwrap().size(), 96);
}

#[test]
fn p12_packs_two_pixels_in_three_bytes_as_tiovx_does() {
    // Pixel pair (0xABC, 0x123): byte 0 = p0[7:0], byte 1 = p1[3:0] p0[11:8], byte 2 = p1[11:4].
    let mut row = [0u8; 6];
    assert!(p12_set(&mut row, 0, 0xABC) && p12_set(&mut row, 1, 0x123) && p12_set(&mut row, 3, 0xFFF));
    assert_eq!(row, [0xBC, 0x3A, 0x12, 0x00, 0xF0, 0xFF]);
    assert_eq!(
        (p12_get(&row, 0), p12_get(&row, 1), p12_get(&row, 2), p12_get(&row, 3)),
        (Some(0xABC), Some(0x123), Some(0), Some(0xFFF))
    );
    assert_eq!(p12_get(&row, 4), None);
    assert!(!p12_set(&mut row, 4, 1));
    // Past the row however far: None / false, never an overflow of the byte offset.
    for x in [usize::MAX, usize::MAX - 1, usize::MAX / 2, usize::MAX / 3 * 2] {
        assert_eq!(p12_get(&row, x), None, "{x}");
        assert!(!p12_set(&mut row, x, 1), "{x}");
    }
    assert_eq!(row, [0xBC, 0x3A, 0x12, 0x00, 0xF0, 0xFF]);
}

fn two_exposures(ctx: &Context) -> RawImage {
    RawImage::new(ctx, &RawImageMeta::new(8, 4, F8).exposures(&[F8, F16]).meta_rows(1, 2)).unwrap()
}

#[test]
fn patches_and_meta_rows_round_trip_per_exposure_by_copy_and_by_map() {
    let ctx = Context::new().unwrap();
    let r = two_exposures(&ctx);
    // Exposure 1 (16 bits): a 4×2 patch at (2, 1): 8 bytes a row.
    let patch: Vec<u8> = (0..16).collect();
    let rect = Rect::new(2, 1, 6, 3);
    r.copy_patch_from(1, RawImageBuffer::Pixels(rect), &patch).unwrap();
    let mut back = vec![0u8; 16];
    r.copy_patch_to(1, RawImageBuffer::Pixels(rect), &mut back).unwrap();
    assert_eq!(back, patch);
    // The whole exposure: zeros but the patch; exposure 0 untouched.
    let mut whole = vec![0u8; 4 * 16];
    r.copy_patch_to(1, RawImageBuffer::Pixels(Rect::full(8, 4)), &mut whole).unwrap();
    for y in 0..4 {
        for x in 0..16 {
            let want = if (1..3).contains(&y) && (4..12).contains(&x) { patch[(y - 1) * 8 + x - 4] } else { 0 };
            assert_eq!(whole[y * 16 + x], want, "row {y} byte {x}");
        }
    }
    let mut e0 = vec![1u8; 32];
    r.copy_patch_to(0, RawImageBuffer::Pixels(Rect::full(8, 4)), &mut e0).unwrap();
    assert_eq!(e0, vec![0; 32]);
    // Meta rows: 1 before and 2 after, each a row of the exposure's container (16 bytes).
    let before: Vec<u8> = (100..116).collect();
    let after: Vec<u8> = (0..32).map(|i| 200 - i).collect();
    r.copy_patch_from(1, RawImageBuffer::MetaBefore, &before).unwrap();
    r.copy_patch_from(1, RawImageBuffer::MetaAfter, &after).unwrap();
    let (mut b, mut a) = (vec![0u8; 16], vec![0u8; 32]);
    r.copy_patch_to(1, RawImageBuffer::MetaBefore, &mut b).unwrap();
    r.copy_patch_to(1, RawImageBuffer::MetaAfter, &mut a).unwrap();
    assert_eq!((b, a), (before.clone(), after.clone()));
    // The meta rows lie where the layout says, around the pixels, in the object's bytes.
    let l = r.layout();
    let mut bytes = vec![0u8; r.size()];
    r.copy_bytes_to(&mut bytes).unwrap();
    let x = l.exposure(1).unwrap();
    assert_eq!(&bytes[x.meta_before.offset as usize..][..16], &before[..]);
    assert_eq!(&bytes[x.meta_after.offset as usize + 16..][..16], &after[16..]);
    assert_eq!(&bytes[(x.pixels.offset + x.pixels.stride) as usize + 4..][..8], &patch[..8]);
    // Maps: the patch's rows in place; a write through a map is what a copy reads.
    {
        let m = r.map_patch(1, RawImageBuffer::Pixels(rect)).unwrap();
        assert_eq!((m.row(0).unwrap(), m.row(1).unwrap(), m.row(2)), (&patch[..8], &patch[8..], None));
        assert_eq!(m.region().stride, 16);
    }
    {
        let mut m = r.map_patch_mut(0, RawImageBuffer::MetaAfter).unwrap();
        m.row_mut(1).unwrap().copy_from_slice(&[7; 8]);
    }
    let mut a0 = vec![0u8; 16];
    r.copy_patch_to(0, RawImageBuffer::MetaAfter, &mut a0).unwrap();
    assert_eq!(a0, [[0; 8], [7; 8]].concat());
}

#[test]
fn bad_copies_are_refused_and_a_virtual_raw_image_is_the_graphs_alone() {
    let ctx = Context::new().unwrap();
    let r = two_exposures(&ctx);
    let mut out = vec![0u8; 8];
    let refused = |e: Error| e.kind();
    assert_eq!(
        refused(r.copy_patch_to(2, RawImageBuffer::MetaBefore, &mut out).unwrap_err()),
        ErrorKind::InvalidParameters
    );
    let outside = RawImageBuffer::Pixels(Rect::new(4, 0, 10, 1));
    assert_eq!(refused(r.copy_patch_to(0, outside, &mut out).unwrap_err()), ErrorKind::InvalidParameters);
    let empty = RawImageBuffer::Pixels(Rect::new(4, 0, 4, 1));
    assert_eq!(refused(r.copy_patch_to(0, empty, &mut out).unwrap_err()), ErrorKind::InvalidParameters);
    let short = RawImageBuffer::Pixels(Rect::new(0, 0, 4, 1));
    assert_eq!(refused(r.copy_patch_to(1, short, &mut out[..7]).unwrap_err()), ErrorKind::InvalidParameters);
    let p12 = RawImage::new(&ctx, &RawImageMeta::new(8, 2, P12)).unwrap();
    let odd = RawImageBuffer::Pixels(Rect::new(1, 0, 3, 1));
    assert_eq!(refused(p12.copy_patch_to(0, odd, &mut out[..3]).unwrap_err()), ErrorKind::InvalidParameters);
    p12.copy_patch_from(0, RawImageBuffer::Pixels(Rect::new(2, 1, 4, 2)), &[1, 2, 3]).unwrap();

    let g = Graph::new(&ctx).unwrap();
    let v = RawImage::new_virtual(&g, &RawImageMeta::new(8, 4, F8)).unwrap();
    assert!(v.is_virtual());
    assert_eq!(refused(v.copy_patch_to(0, RawImageBuffer::MetaBefore, &mut []).unwrap_err()), ErrorKind::OptimizedAway);
    assert_eq!(
        refused(v.map_patch(0, RawImageBuffer::Pixels(Rect::full(8, 4))).err().unwrap()),
        ErrorKind::OptimizedAway
    );
    assert_eq!(refused(v.copy_bytes_from(&[0; 64]).unwrap_err()), ErrorKind::OptimizedAway);
    assert_eq!(Reference::from(&v).data_type().to_string(), "raw image");
}

static KERNELS: AtomicUsize = AtomicUsize::new(0);

/// A copy kernel: raw image in, raw image out of the same meta data (from the input, as
/// `vxSetMetaFormatFromReference`), every byte copied and each exposure's pixel bytes plus `add`.
fn copy_kernel(ctx: &Context, add: u8) -> Kernel {
    let name = format!("raw.copy{}", KERNELS.fetch_add(1, SeqCst));
    let k = ctx
        .user_kernel(&name, ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let input = v.param(0)?.clone();
            metas.get(1)?.set_from_reference(&input)?;
            Ok(())
        })
        .process(move |pc| {
            let (src, dst) = (pc.object::<RawImage>(0)?, pc.object::<RawImage>(1)?);
            let mut bytes = vec![0u8; src.size()];
            src.copy_bytes_to(&mut bytes)?;
            dst.copy_bytes_from(&bytes)?;
            for e in 0..src.num_exposures() {
                let mut m = dst.map_patch_mut(e, RawImageBuffer::Pixels(Rect::full(src.width(), src.height())))?;
                for y in 0..src.height() {
                    m.row_mut(y).unwrap().iter_mut().for_each(|b| *b = b.wrapping_add(add));
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::RawImage, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::RawImage, ParamState::Required).unwrap();
    k.finalize().unwrap();
    k
}

/// Every byte of `r`'s layout, seeded: meta rows and padding included.
fn fill(r: &RawImage, seed: u8) -> Vec<u8> {
    let bytes: Vec<u8> = (0..r.size()).map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed)).collect();
    r.copy_bytes_from(&bytes).unwrap();
    bytes
}

/// What two copy kernels adding 1 then 2 make of `input`'s bytes: pixels + 3, the rest as is.
fn expected(r: &RawImage, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let l = r.layout();
    for e in 0..l.num_exposures {
        let p = l.exposure(e).unwrap().pixels;
        for y in 0..p.rows {
            out[p.row(y).unwrap()].iter_mut().for_each(|b| *b = b.wrapping_add(3));
        }
    }
    out
}

fn read(r: &RawImage) -> Vec<u8> {
    let mut out = vec![0u8; r.size()];
    r.copy_bytes_to(&mut out).unwrap();
    out
}

fn metas() -> [RawImageMeta; 3] {
    [
        RawImageMeta::new(10, 3, F8).exposures(&[F8, F16, P12]).meta_rows(1, 2),
        RawImageMeta::new(8, 4, F16).exposures(&[F16, F16]).line_interleaved(true).meta_rows(2, 0),
        RawImageMeta::new(6, 2, P12),
    ]
}

#[test]
fn an_in_process_kernel_copies_a_raw_image_through_a_virtual_one_byte_for_byte() {
    let ctx = Context::new().unwrap();
    for meta in metas() {
        let g = Graph::new(&ctx).unwrap();
        let (input, output) = (RawImage::new(&ctx, &meta).unwrap(), RawImage::new(&ctx, &meta).unwrap());
        let mid = RawImage::new_virtual(&g, &meta).unwrap();
        g.add_node(&copy_kernel(&ctx, 1), [Reference::from(&input), Reference::from(&mid)]).unwrap();
        g.add_node(&copy_kernel(&ctx, 2), [Reference::from(&mid), Reference::from(&output)]).unwrap();
        g.verify().unwrap();
        for seed in [0u8, 77] {
            let bytes = fill(&input, seed);
            g.process().unwrap();
            assert_eq!(read(&output), expected(&input, &bytes), "{meta}");
        }
    }
}

#[test]
fn a_virtual_raw_image_of_other_meta_data_than_the_kernels_is_refused_at_verify() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let [a, b, _] = metas();
    let input = RawImage::new(&ctx, &a).unwrap();
    let mid = RawImage::new_virtual(&g, &RawImageMeta { height: 5, ..a }).unwrap();
    g.add_node(&copy_kernel(&ctx, 1), [Reference::from(&input), Reference::from(&mid)]).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::InvalidDimension);
    let g = Graph::new(&ctx).unwrap();
    let mid = RawImage::new_virtual(&g, &RawImageMeta { width: a.width, height: a.height, ..b }).unwrap();
    g.add_node(&copy_kernel(&ctx, 1), [Reference::from(&input), Reference::from(&mid)]).unwrap();
    assert_eq!(g.verify().unwrap_err().kind(), ErrorKind::InvalidFormat);
}

#[test]
fn pipelined_each_frame_gets_its_own_virtual_raw_image() {
    let ctx =
        Context::builder().threads(2).target(TargetConfig::new("a")).target(TargetConfig::new("b")).build().unwrap();
    let meta = metas()[0];
    let g = Graph::new(&ctx).unwrap();
    let mid = RawImage::new_virtual(&g, &meta).unwrap();
    let (i0, o0) = (RawImage::new(&ctx, &meta).unwrap(), RawImage::new(&ctx, &meta).unwrap());
    let a = g.add_node(&copy_kernel(&ctx, 1), [Reference::from(&i0), Reference::from(&mid)]).unwrap();
    let b = g.add_node(&copy_kernel(&ctx, 2), [Reference::from(&mid), Reference::from(&o0)]).unwrap();
    a.set_target("a").unwrap();
    b.set_target("b").unwrap();
    let (p_in, p_out) = (g.add_parameter(&a, 0).unwrap(), g.add_parameter(&b, 1).unwrap());
    const FRAMES: usize = 6;
    let ins: Vec<RawImage> = (0..FRAMES).map(|_| RawImage::new(&ctx, &meta).unwrap()).collect();
    let outs: Vec<RawImage> = (0..FRAMES).map(|_| RawImage::new(&ctx, &meta).unwrap()).collect();
    g.set_schedule_config(ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()))
        .unwrap();
    let sent: Vec<Vec<u8>> = ins.iter().enumerate().map(|(f, i)| fill(i, f as u8 * 31)).collect();
    for (i, o) in ins.iter().zip(&outs) {
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    }
    for (f, bytes) in sent.iter().enumerate() {
        let done = g.dequeue(p_out).unwrap();
        done.result.clone().unwrap();
        assert_eq!(done.frame, f as u64);
        let out = done.reference.get::<RawImage>().unwrap();
        assert_eq!(read(out), expected(out, bytes), "frame {f}");
    }
    g.wait().unwrap();
}

#[test]
fn raw_images_are_object_array_items_and_say_what_they_are() {
    let ctx = Context::new().unwrap();
    let r = two_exposures(&ctx);
    let arr = ObjectArray::new(&ctx, &r, 3).unwrap();
    let item = arr.item(2).unwrap();
    assert_eq!(item.meta(), Reference::from(&r).meta());
    let item = item.get::<RawImage>().unwrap();
    fill(item, 5);
    assert_eq!(item.layout(), r.layout());
    assert!(format!("{r:?}").starts_with("RawImage("), "{r:?}");
    assert!(Reference::from(&r).meta().to_string().starts_with("raw image 8x4 exposures 2"));
}
