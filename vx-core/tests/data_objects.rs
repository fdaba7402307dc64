//! Data objects: lazy allocation, attributes, ROIs sharing memory, NV12 planes, map/unmap rules,
//! copies, scalars of every type, arrays and user data objects.

use vx::*;

fn ctx() -> Context {
    Context::builder().threads(1).build().unwrap()
}

#[test]
fn nothing_is_allocated_at_creation() {
    let ctx = ctx();
    let img = Image::new(&ctx, 640, 480, ImageFormat::U8).unwrap();
    let arr = Array::new(&ctx, ArrayItemType::Rectangle, 100).unwrap();
    let udo = UserDataObject::new(&ctx, "my_struct", 32).unwrap();
    assert!(!img.is_allocated() && !arr.is_allocated() && !udo.is_allocated());
    assert_eq!(ctx.buffer_bytes().current, 0);
    // First access allocates (TIOVX: map/copy before verify allocates).
    drop(img.map::<u8>(Rect::new(0, 0, 1, 1)).unwrap());
    assert!(img.is_allocated());
    assert_eq!(ctx.buffer_bytes().current, 640 * 480);
    arr.add_items(&[Rect::new(0, 0, 1, 1)]).unwrap();
    assert_eq!(ctx.buffer_bytes().current, 640 * 480 + 16 * 100);
    drop((img, arr, udo));
    assert_eq!(ctx.buffer_bytes().current, 0, "buffers freed with their objects");
    assert_eq!(ctx.buffer_bytes().peak, 640 * 480 + 1600);
}

#[test]
fn image_attributes_for_every_format() {
    let ctx = ctx();
    for f in ImageFormat::CONCRETE {
        let img = Image::new(&ctx, 6, 4, f).unwrap();
        assert_eq!((img.width(), img.height(), img.format()), (6, 4, f));
        let planes = match f {
            ImageFormat::Nv12 | ImageFormat::Nv21 => 2,
            ImageFormat::Iyuv | ImageFormat::Yuv4 => 3,
            _ => 1,
        };
        assert_eq!(img.planes(), planes, "{f}");
        assert_eq!(img.valid_region(), Rect::full(6, 4));
        assert!(!img.is_virtual());
    }
}

#[test]
fn typed_maps_check_the_element_type() {
    let ctx = ctx();
    let s16 = Image::new(&ctx, 4, 4, ImageFormat::S16).unwrap();
    let e = s16.map::<u16>(Rect::full(4, 4)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidFormat);
    assert_eq!(e.context().found.as_deref(), Some("u16"));
    let mut p = s16.map_mut::<i16>(Rect::full(4, 4)).unwrap();
    p.row_mut(3)[3] = -7;
    drop(p);
    assert_eq!(s16.to_vec::<i16>().unwrap()[15], -7);

    let rgb = Image::new(&ctx, 2, 1, ImageFormat::Rgb).unwrap();
    rgb.copy_from(Rect::full(2, 1), 0, &[[1u8, 2, 3], [4, 5, 6]]).unwrap();
    assert_eq!(rgb.to_vec::<[u8; 3]>().unwrap(), [[1, 2, 3], [4, 5, 6]]);
    let p = rgb.map::<[u8; 3]>(Rect::full(2, 1)).unwrap();
    assert_eq!(p.addressing().stride_x, 3);
    assert_eq!(p.addressing().stride_y % 64, 0);
}

#[test]
fn patches_are_bounded_and_exclusive_for_writers() {
    let ctx = ctx();
    let img = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    assert_eq!(img.map::<u8>(Rect::new(4, 4, 9, 8)).unwrap_err().kind(), ErrorKind::InvalidParameters);
    assert_eq!(img.map::<u8>(Rect::new(4, 4, 4, 8)).unwrap_err().kind(), ErrorKind::InvalidParameters);
    assert_eq!(img.map_plane::<u8>(Rect::full(8, 8), 1).unwrap_err().kind(), ErrorKind::InvalidParameters);

    let r1 = img.map::<u8>(Rect::full(8, 8)).unwrap();
    let r2 = img.map::<u8>(Rect::new(0, 0, 2, 2)).unwrap();
    assert!(img.map_mut::<u8>(Rect::full(8, 8)).is_err(), "no writer while readers exist");
    assert!(r1.get_row(8).is_none());
    drop((r1, r2));
    let w = img.map_mut::<u8>(Rect::full(8, 8)).unwrap();
    assert!(img.map::<u8>(Rect::full(8, 8)).is_err(), "no reader while a writer exists");
    drop(w);
    img.map::<u8>(Rect::full(8, 8)).unwrap();
}

#[test]
fn patch_addresses_a_sub_rectangle() {
    let ctx = ctx();
    let img = Image::new(&ctx, 10, 6, ImageFormat::U16).unwrap();
    let px: Vec<u16> = (0..60).collect();
    img.copy_from(Rect::full(10, 6), 0, &px).unwrap();
    let p = img.map::<u16>(Rect::new(3, 2, 7, 5)).unwrap();
    assert_eq!((p.addressing().dim_x, p.addressing().dim_y), (4, 3));
    assert_eq!(p.row(0), [23, 24, 25, 26]);
    assert_eq!(p.row(2), [43, 44, 45, 46]);
    let mut out = vec![0u16; 12];
    drop(p);
    img.copy_to(Rect::new(3, 2, 7, 5), 0, &mut out).unwrap();
    assert_eq!(&out[..4], [23, 24, 25, 26]);
    assert_eq!(img.copy_to(Rect::new(3, 2, 7, 5), 0, &mut [0u16; 5]).unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn roi_shares_the_parent_memory() {
    let ctx = ctx();
    let parent = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..64).collect();
    parent.copy_from(Rect::full(8, 8), 0, &px).unwrap();
    let roi = parent.roi(Rect::new(2, 3, 6, 5)).unwrap();
    assert!(roi.is_roi());
    assert_eq!((roi.width(), roi.height()), (4, 2));
    assert_eq!(roi.to_vec::<u8>().unwrap(), [26, 27, 28, 29, 34, 35, 36, 37]);
    // Writes through the ROI show in the parent …
    roi.copy_from(Rect::new(1, 1, 2, 2), 0, &[200u8]).unwrap();
    assert_eq!(parent.to_vec::<u8>().unwrap()[4 * 8 + 3], 200);
    // … and an ROI of an ROI is offset twice.
    let inner = roi.roi(Rect::new(1, 1, 3, 2)).unwrap();
    assert_eq!(inner.to_vec::<u8>().unwrap(), [200, 36]);
    // The ROI keeps the memory alive after the parent handle is gone.
    drop(parent);
    assert_eq!(roi.to_vec::<u8>().unwrap()[5], 200);
    assert_eq!(roi.roi(Rect::new(0, 0, 5, 1)).unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn nv12_has_two_planes_with_a_subsampled_uv_plane() {
    let ctx = ctx();
    let img = Image::new(&ctx, 6, 4, ImageFormat::Nv12).unwrap();
    let y: Vec<u8> = (0..24).collect();
    img.copy_from(Rect::full(6, 4), 0, &y).unwrap();
    let uv: Vec<[u8; 2]> = (0..6).map(|i| [i, 100 + i]).collect();
    img.copy_from(Rect::full(6, 4), 1, &uv).unwrap();
    let p = img.map_plane::<[u8; 2]>(Rect::full(6, 4), 1).unwrap();
    assert_eq!((p.addressing().dim_x, p.addressing().dim_y, p.addressing().stride_x), (3, 2, 2));
    assert_eq!(p.row(1), [[3, 103], [4, 104], [5, 105]]);
    drop(p);
    // Plane 0 of NV12 is u8, plane 1 is [u8; 2].
    assert!(img.map_plane::<u8>(Rect::full(6, 4), 1).is_err());
    // An ROI at even coordinates sees the matching UV samples.
    let roi = img.roi(Rect::new(2, 2, 6, 4)).unwrap();
    let p = roi.map_plane::<[u8; 2]>(Rect::full(4, 2), 1).unwrap();
    assert_eq!(p.row(0), [[4, 104], [5, 105]]);
    assert_eq!(img.roi(Rect::new(1, 0, 3, 2)).unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn valid_rectangle_is_checked() {
    let ctx = ctx();
    let img = Image::new(&ctx, 8, 8, ImageFormat::U8).unwrap();
    img.set_valid_rectangle(Some(Rect::new(1, 1, 7, 7))).unwrap();
    assert_eq!(img.valid_region(), Rect::new(1, 1, 7, 7));
    assert_eq!(img.set_valid_rectangle(Some(Rect::new(0, 0, 9, 1))).unwrap_err().kind(), ErrorKind::InvalidParameters);
    assert_eq!(img.valid_region(), Rect::new(1, 1, 7, 7), "a refused rectangle changes nothing");
    img.set_valid_rectangle(None).unwrap();
    assert_eq!(img.valid_region(), Rect::full(8, 8));
}

#[test]
fn scalars_of_every_type_round_trip() {
    let ctx = ctx();
    for t in ScalarType::ALL {
        let s = Scalar::new(&ctx, ScalarValue::zero(t)).unwrap();
        assert_eq!(s.scalar_type(), t);
        assert_eq!(s.value().unwrap(), ScalarValue::zero(t));
    }
    let s = Scalar::new(&ctx, ScalarValue::Float32(1.5)).unwrap();
    s.set(2.25f32).unwrap();
    assert_eq!(s.get::<f32>().unwrap(), 2.25);
    let e = s.get::<i32>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType);
    assert_eq!((e.context().expected.as_deref(), e.context().found.as_deref()), (Some("Int32"), Some("Float32")));
    assert_eq!(s.set_value(ScalarValue::Bool(true)).unwrap_err().kind(), ErrorKind::InvalidType);
    assert_eq!(s.get::<f32>().unwrap(), 2.25, "a refused write changes nothing");
    let d = Scalar::new(&ctx, ScalarValue::DfImage(ImageFormat::U8.fourcc())).unwrap();
    assert_eq!(d.value().unwrap(), ScalarValue::DfImage(0x3830_3055));
}

#[test]
fn arrays_add_read_truncate_and_refuse_overflow() {
    let ctx = ctx();
    let a = Array::new(&ctx, ArrayItemType::Coordinates2d, 3).unwrap();
    assert_eq!((a.capacity(), a.num_items(), a.item_size()), (3, 0, 8));
    a.add_items(&[Coordinates2d { x: 1, y: 2 }, Coordinates2d { x: 3, y: 4 }]).unwrap();
    let e = a.add_items(&[Coordinates2d::default(); 2]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoResources);
    assert_eq!(a.num_items(), 2, "a refused add changes nothing");
    assert_eq!(a.add_items(&[1u32]).unwrap_err().kind(), ErrorKind::InvalidType);
    assert_eq!(a.read_items::<Coordinates2d>().unwrap(), [Coordinates2d { x: 1, y: 2 }, Coordinates2d { x: 3, y: 4 }]);
    a.truncate(1).unwrap();
    assert_eq!(a.num_items(), 1);
    assert!(a.truncate(2).is_err());
    assert!(Array::new(&ctx, ArrayItemType::Rectangle, 0).is_err());
    assert_eq!(
        Array::new(&ctx, ArrayItemType::User { size: 1 << 40 }, 1 << 40).unwrap_err().kind(),
        ErrorKind::InvalidDimension
    );
}

#[test]
fn user_data_objects_copy_in_and_out() {
    let ctx = ctx();
    let u = UserDataObject::new(&ctx, "calibration", 8).unwrap();
    assert_eq!((u.type_name(), u.size()), ("calibration", 8));
    u.copy_from(2, &[1, 2, 3]).unwrap();
    let mut out = [9u8; 8];
    u.copy_to(0, &mut out).unwrap();
    assert_eq!(out, [0, 0, 1, 2, 3, 0, 0, 0]);
    assert_eq!(u.copy_from(6, &[1, 2, 3]).unwrap_err().kind(), ErrorKind::InvalidParameters);
    assert!(UserDataObject::new(&ctx, "x", 0).is_err());
    assert!(UserDataObject::new(&ctx, &"n".repeat(64), 4).is_err());
}

#[test]
fn context_and_handles_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Context>();
    check::<Graph>();
    check::<Node>();
    check::<Kernel>();
    check::<Image>();
    check::<Scalar>();
    check::<Array>();
    check::<UserDataObject>();
    check::<Error>();
}

#[test]
fn disjoint_regions_map_for_writing_at_once() {
    let ctx = ctx();
    let img = Image::new(&ctx, 16, 4, ImageFormat::U8).unwrap();
    let (left, right) = (img.roi(Rect::new(0, 0, 8, 4)).unwrap(), img.roi(Rect::new(8, 0, 16, 4)).unwrap());
    let mut l = left.map_mut::<u8>(Rect::full(8, 4)).unwrap();
    let mut r = right.map_mut::<u8>(Rect::full(8, 4)).unwrap();
    // Also disjoint patches of the parent itself.
    let mut low = img.map_mut::<u8>(Rect::new(0, 0, 16, 4)).map(|_| ()).unwrap_err();
    assert_eq!(low.kind(), ErrorKind::NotSupported, "overlaps both writers");
    l.fill(1);
    r.fill(2);
    drop(l);
    // Left is free again: the parent's left half can be read while the right half is still written.
    let left_again = img.map::<u8>(Rect::new(0, 0, 8, 4)).unwrap();
    assert_eq!(left_again.row(3), [1; 8]);
    low = img.map::<u8>(Rect::new(7, 0, 9, 1)).map(|_| ()).unwrap_err();
    assert!(low.message().contains("mapped for writing"), "{low}");
    drop((left_again, r));
    assert_eq!(img.to_vec::<u8>().unwrap()[..16], [1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2]);
}

/// Issue 26 (8): storage is reserved lazily. A 65536×65536 U8 image (4 GiB) created and one pixel
/// written takes a page, not the image: its bytes are an anonymous mapping whose zero pages the OS
/// commits on first touch. Arrays and memory-plan arenas use the same blocks.
#[test]
fn a_huge_image_costs_what_is_touched() {
    let resident_kib = || -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4
    };
    let ctx = Context::builder().threads(1).build().unwrap();
    let before = resident_kib();
    let t0 = std::time::Instant::now();
    let img = Image::new(&ctx, 65536, 65536, ImageFormat::U8).unwrap();
    img.copy_from(Rect::new(40_000, 50_000, 40_001, 50_001), 0, &[42u8]).unwrap();
    let took = t0.elapsed();
    let grew = resident_kib().saturating_sub(before);
    let mut px = [0u8; 2];
    img.copy_to(Rect::new(39_999, 50_000, 40_001, 50_001), 0, &mut px).unwrap();
    assert_eq!(px, [0, 42], "untouched bytes read as zero");
    assert_eq!(ctx.buffer_bytes().current, 65536 * 65536, "accounted in full");
    println!("65536² U8 image: created and one pixel written in {took:?}, +{grew} KiB resident");
    assert!(grew < 64 * 1024, "{grew} KiB resident after one pixel");
    // Zeroing 4 GiB would take seconds (and show in the resident size above); the bound is loose
    // so a loaded machine does not fail it.
    assert!(took < std::time::Duration::from_secs(1), "{took:?}");
    drop(img);
    assert_eq!(ctx.buffer_bytes().current, 0);
}
