//! `#[user_kernel]` functions taking the SDK's typed views of every object kind (`&Matrix<f32>`,
//! `&mut Pyramid<u8>`, `&ObjectArray<Image<u8>>`, `&mut Scalar<u32>`, a tensor view), published
//! in-process through the same host interface a module uses: results computed independently here,
//! the generated validator's element-type checks, outputs given their input's meta.

use vx::*;
use vx_plugin_abi::module_abi::AbiError;
use vx_plugin_abi::user_kernel;
// The macro knows views by their name (the last path segment): `views::Matrix` keeps them apart
// from vx-rs's objects of the same names.
use vx_plugin_abi::views;

/// `out = k · m`.
#[user_kernel(name = "views.scale_matrix")]
fn scale_matrix(m: &views::Matrix<f32>, k: f32, out: &mut views::Matrix<f32>) {
    for (o, v) in out.as_mut_slice().iter_mut().zip(m.as_slice()) {
        *o = v * k;
    }
}

/// Every level inverted.
#[user_kernel(name = "views.invert_pyramid")]
fn invert_pyramid(p: &views::Pyramid<u8>, out: &mut views::Pyramid<u8>) -> Result<(), AbiError> {
    for l in 0..p.levels() {
        let (a, mut b) = (p.level(l)?, out.level(l)?);
        for y in 0..a.height() {
            for (o, v) in b.row_mut(y).iter_mut().zip(a.row(y)) {
                *o = 255 - v;
            }
        }
    }
    Ok(())
}

/// Each output level's valid rectangle: the input level's, one pixel smaller on each side.
fn shrink_levels(_index: u32, inputs: &[Rect], outputs: &mut [Rect]) -> Result<(), AbiError> {
    for (o, i) in outputs.iter_mut().zip(inputs) {
        *o = Rect::new(i.start_x + 1, i.start_y + 1, i.end_x - 1, i.end_y - 1);
    }
    Ok(())
}

/// [`invert_pyramid`] whose output levels get [`shrink_levels`] (`valid_rect = path`).
#[user_kernel(name = "views.invert_pyramid_shrunk", valid_rect = shrink_levels)]
fn invert_pyramid_shrunk(p: &views::Pyramid<u8>, out: &mut views::Pyramid<u8>) -> Result<(), AbiError> {
    invert_pyramid(p, out)
}

/// The sum of every pixel of every item.
#[user_kernel(name = "views.sum_items")]
fn sum_items(items: &views::ObjectArray<views::Image<u8>>, total: &mut views::Scalar<u32>) -> Result<(), AbiError> {
    let mut s = 0u32;
    for i in 0..items.len() {
        let img = items.item(i)?;
        s += (0..img.height()).flat_map(|y| img.row(y).iter().map(|v| *v as u32)).sum::<u32>();
    }
    total.set(s)
}

/// `out[i, j] = t[j, i]` over a (possibly strided) tensor view.
#[user_kernel(name = "views.transpose")]
fn transpose(t: &views::Tensor<i16>, out: &mut views::Tensor<i16>) {
    let d = t.dims().to_vec();
    for i in 0..d[0] as usize {
        for j in 0..d[1] as usize {
            out.set(&[j, i], t.get(&[i, j]));
        }
    }
}

/// Transposes need their own validator (the output's dims are not the input's).
fn transpose_validate(v: &vx_plugin_abi::module_abi::Validator) -> Result<(), AbiError> {
    let mut m = v.meta(0)?;
    if let vx_plugin_abi::ObjectMeta::Tensor(vx_plugin_abi::kinds::tensor::Wire { dims, .. }) = &mut m {
        dims.swap(0, 1);
    }
    v.set_output_meta(1, &m)
}

#[user_kernel(name = "views.transpose_checked", validate = transpose_validate)]
fn transpose_checked(t: &views::Tensor<i16>, out: &mut views::Tensor<i16>) {
    transpose(t, out)
}

fn published() -> Context {
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.publish_in_process().unwrap();
    ctx
}

#[test]
fn a_matrix_view_reads_and_writes_and_its_element_type_is_checked() {
    let ctx = published();
    let k = ctx.kernel_by_name("views.scale_matrix").unwrap();
    let m = Matrix::new(&ctx, ScalarType::Float32, 3, 2).unwrap();
    let vals: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
    m.copy_from(&vals).unwrap();
    let out = Matrix::new(&ctx, ScalarType::Float32, 3, 2).unwrap();
    let kk = Scalar::new(&ctx, ScalarValue::Float32(-4.0)).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&m), Reference::from(&kk), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    let mut got = vec![0f32; 6];
    out.copy_to(&mut got).unwrap();
    assert_eq!(got, vals.iter().map(|v| v * -4.0).collect::<Vec<_>>());

    // A U8 matrix where the kernel takes F32: the generated validator names both.
    let m8 = Matrix::new(&ctx, ScalarType::Uint8, 3, 2).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&m8), Reference::from(&kk), Reference::from(&out)]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType, "{e}");
    assert!(e.to_string().contains("parameter 0 (`m`) is a matrix of U8 elements, not the kernel's F32"), "{e}");
}

#[test]
fn a_pyramid_view_maps_each_level_for_reading_and_writing() {
    let ctx = published();
    let k = ctx.kernel_by_name("views.invert_pyramid").unwrap();
    let p = Pyramid::new(&ctx, 4, PYRAMID_SCALE_HALF, 32, 24, ImageFormat::U8).unwrap();
    for l in 0..4 {
        let img = p.level(l).unwrap();
        let px: Vec<u8> = (0..img.width() * img.height()).map(|i| (i * 3 + l as u32) as u8).collect();
        img.copy_from(Rect::full(img.width(), img.height()), 0, &px).unwrap();
    }
    let out = Pyramid::new(&ctx, 4, PYRAMID_SCALE_HALF, 32, 24, ImageFormat::U8).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&p), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    for l in 0..4 {
        let (a, b) = (p.level(l).unwrap().to_vec::<u8>().unwrap(), out.level(l).unwrap().to_vec::<u8>().unwrap());
        assert_eq!(b, a.iter().map(|v| 255 - v).collect::<Vec<_>>(), "level {l}");
    }
}

#[test]
fn valid_rect_attribute_gives_every_pyramid_level_its_rectangle() {
    let ctx = published();
    let k = ctx.kernel_by_name("views.invert_pyramid_shrunk").unwrap();
    let p = Pyramid::new(&ctx, 3, PYRAMID_SCALE_HALF, 32, 24, ImageFormat::U8).unwrap();
    let out = Pyramid::new(&ctx, 3, PYRAMID_SCALE_HALF, 32, 24, ImageFormat::U8).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&p), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    for (l, (w, h)) in [(32, 24), (16, 12), (8, 6)].into_iter().enumerate() {
        assert_eq!(out.level(l).unwrap().valid_region(), Rect::new(1, 1, w - 1, h - 1), "level {l}");
        assert_eq!(p.level(l).unwrap().valid_region(), Rect::full(w, h), "input level {l}");
    }
}

#[test]
fn an_object_array_view_maps_items_and_a_scalar_output_gets_its_type() {
    let ctx = published();
    let k = ctx.kernel_by_name("views.sum_items").unwrap();
    let arr = ObjectArray::new(&ctx, Reference::from(Image::new(&ctx, 8, 4, ImageFormat::U8).unwrap()), 5).unwrap();
    let mut want = 0u32;
    for (i, item) in arr.items().iter().enumerate() {
        let px: Vec<u8> = (0..32).map(|p| (p * (i + 1)) as u8).collect();
        want += px.iter().map(|v| *v as u32).sum::<u32>();
        Image::from_reference(item).unwrap().copy_from(Rect::full(8, 4), 0, &px).unwrap();
    }
    let total = Scalar::new(&ctx, ScalarValue::Uint32(0)).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&arr), Reference::from(&total)]).unwrap();
    g.process().unwrap();
    assert_eq!(total.value().unwrap(), ScalarValue::Uint32(want));

    // An object array of matrices where the kernel takes images: refused, naming the item type.
    let mats = ObjectArray::new(&ctx, Reference::from(Matrix::new(&ctx, ScalarType::Uint8, 2, 2).unwrap()), 2).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&mats), Reference::from(&total)]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType, "{e}");
    assert!(e.to_string().contains("object array of type 0x80b items"), "{e}");
}

#[test]
fn a_tensor_view_of_a_view_follows_its_strides() {
    let ctx = published();
    let k = ctx.kernel_by_name("views.transpose_checked").unwrap();
    // A 6×5 tensor; the kernel sees the 3×4 view starting at (2, 1): strided, not packed.
    let t = Tensor::new(&ctx, &[6, 5], ScalarType::Int16, 0).unwrap();
    let all: Vec<i16> = (0..30).map(|i| i * 10 - 7).collect();
    t.copy_patch_from(&[0, 0], &[6, 5], &all).unwrap();
    let view = t.view(&[2, 1], &[5, 5]).unwrap();
    let out = Tensor::new(&ctx, &[4, 3], ScalarType::Int16, 0).unwrap();
    let g = Graph::new(&ctx).unwrap();
    g.add_node(&k, [Reference::from(&view), Reference::from(&out)]).unwrap();
    g.process().unwrap();
    let mut got = vec![0i16; 12];
    out.copy_patch_to(&[0, 0], &[4, 3], &mut got).unwrap();
    // out[j, i] = t[2 + i, 1 + j]; dimension 0 fastest: element (x, y) of a W-wide tensor is x + W·y.
    for j in 0..4 {
        for i in 0..3 {
            assert_eq!(got[j + 4 * i], all[(2 + i) + 6 * (1 + j)], "out[{j}, {i}]");
        }
    }
}
