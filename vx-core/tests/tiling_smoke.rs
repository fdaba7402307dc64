mod common;
use common::spec_kernels::*;
use vx_core::*;
#[test]
fn smoke() {
    let ctx = Context::builder().threads(2).build().unwrap();
    let k = gaussian_kernel(&ctx, "g", false);
    let kp = gaussian_kernel(&ctx, "gp", true);
    let (w, h) = (37u32, 23u32);
    let src = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..w * h).map(|i| (i * 37 % 251) as u8).collect();
    src.copy_from(Rect::full(w, h), 0, &px).unwrap();
    let (d1, d2) = (Image::new(&ctx, w, h, ImageFormat::U8).unwrap(), Image::new(&ctx, w, h, ImageFormat::U8).unwrap());
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [&src, &d1]).unwrap();
    g.add_node(&kp, [&src, &d2]).unwrap();
    g.process().unwrap();
    let (a, b) = (d1.to_vec::<u8>().unwrap(), d2.to_vec::<u8>().unwrap());
    assert_eq!(a, b);
    assert!(a[(w + 1) as usize] != 0);
    assert_eq!(a[0], 0);
}
