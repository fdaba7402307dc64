//! Node pass `meta`: the meta formats the validator filled are applied to the node's outputs — a
//! virtual output is completed from its meta (and recorded as changed, so its readers are
//! re-verified), a real one is checked against it (each type's rule: `ObjectKind::apply`); each
//! output's valid-rectangle callback is kept.
//! Cost: O(outputs of the node).

use crate::data::kind::Applied;
use crate::data::reference::{ObjectMeta, Reference};
use crate::error::Result;
use crate::graph::NodeSlot;
use crate::graph::verify::overlap::OverlapIndex;
use crate::graph::verify::{NodeVerification, Verification};

pub(super) fn run(v: &mut Verification<'_>, s: &mut NodeSlot, nv: &mut NodeVerification) -> Result<()> {
    let Some(metas) = nv.metas.take() else { return Ok(()) };
    s.valid_rect_fns = vec![None; s.params.len()];
    for (p, m) in metas.metas.iter().enumerate() {
        let (Some(m), Some(r)) = (m, &s.params[p]) else { continue };
        let meta = m.resolve().map_err(|e| v.at(s, e))?;
        apply_meta(r, meta, &mut v.changed).map_err(|e| v.at(s, e.at_parameter(p as u32).on_object(&r.name())))?;
        s.valid_rect_fns[p] = m.valid_rect.clone();
    }
    Ok(())
}

/// Complete a virtual output from `meta` (recorded as changed), or check a real one against it.
fn apply_meta(r: &Reference, meta: ObjectMeta, changed: &mut OverlapIndex<()>) -> Result<()> {
    if r.any().apply_meta(&meta)? == Applied::Completed {
        changed.push(r.clone(), ());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{copy_kernel, image, run_until, virtual_chain};
    use crate::{ErrorKind, Graph, Image, ImageFormat};

    #[test]
    fn a_virtual_output_is_completed() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let v = virtual_chain(&ctx, &g, &k);
        run_until(&g, "nodes").unwrap();
        assert_eq!((v.format(), v.width(), v.height()), (ImageFormat::U8, 8, 8));
    }

    #[test]
    fn a_real_output_of_another_format_is_refused() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let out = Image::new(&ctx, 8, 8, ImageFormat::S16).unwrap();
        g.add_node(&k, [&image(&ctx), &out]).unwrap();
        let e = run_until(&g, "nodes").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidFormat);
        assert_eq!(e.context().parameter, Some(1));
    }

    /// Images of the YUV formats through a graph: a graph parameter, a virtual image of unknown
    /// format and one of a declared format, completed at verify; every plane flows through.
    #[test]
    fn yuv_images_flow_through_graph_parameters_and_virtual_images() {
        use crate::{DataType, KernelImage, ParamDirection, ParamState, Pixel, Rect, Reference, Result};
        fn copy_plane<T: Pixel>(src: &KernelImage<'_>, dst: &KernelImage<'_>, plane: usize) -> Result<()> {
            let i = src.map::<T>(src.full_rect(), plane)?;
            let mut o = dst.map_mut::<T>(dst.full_rect(), plane)?;
            for y in 0..i.height() {
                o.row_mut(y).copy_from_slice(i.row(y));
            }
            Ok(())
        }
        let (ctx, _) = copy_kernel();
        let k = ctx
            .user_kernel("test.copy.planes", ctx.allocate_user_kernel_id().unwrap(), 2)
            .validate(|v, metas| {
                metas.get(1)?.set_from_reference(v.param(0)?)?;
                Ok(())
            })
            .process(|pc| {
                let (src, dst) = (pc.image(0)?, pc.image(1)?);
                for (plane, p) in src.image().format().planes().iter().enumerate() {
                    match p.bytes_per_element {
                        2 => copy_plane::<[u8; 2]>(&src, &dst, plane)?,
                        _ => copy_plane::<u8>(&src, &dst, plane)?,
                    }
                }
                Ok(())
            })
            .add()
            .unwrap();
        k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
        k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
        k.finalize().unwrap();
        // Every plane's bytes, through byte maps (any plane, any format).
        let bytes = |img: &Image| -> Vec<Vec<u8>> {
            (0..img.planes())
                .map(|p| {
                    let full = Rect::full(img.width(), img.height());
                    match img.format().planes()[p].bytes_per_element {
                        2 => img
                            .map_plane::<[u8; 2]>(full, p)
                            .map(|m| (0..m.height()).flat_map(|y| m.row(y).concat()).collect()),
                        _ => img
                            .map_plane::<u8>(full, p)
                            .map(|m| (0..m.height()).flat_map(|y| m.row(y).to_vec()).collect()),
                    }
                    .unwrap()
                })
                .collect()
        };
        let filled = |f: ImageFormat, seed: u8| {
            let img = Image::new(&ctx, 6, 5, f).unwrap();
            for (plane, p) in f.planes().iter().enumerate() {
                let full = Rect::full(6, 5);
                let n = (6u32.div_ceil(p.subsample_x) * 5u32.div_ceil(p.subsample_y)) as usize;
                let v = |i: usize| seed.wrapping_mul(plane as u8 + 1).wrapping_add(i as u8);
                match p.bytes_per_element {
                    2 => img.copy_from(full, plane, &(0..n).map(|i| [v(i), !v(i)]).collect::<Vec<_>>()).unwrap(),
                    _ => img.copy_from(full, plane, &(0..n).map(v).collect::<Vec<_>>()).unwrap(),
                }
            }
            img
        };
        for f in [ImageFormat::Nv21, ImageFormat::Uyvy, ImageFormat::Yuyv, ImageFormat::Iyuv, ImageFormat::Yuv4] {
            let g = Graph::new(&ctx).unwrap();
            let (input, out) = (filled(f, 3), Image::new(&ctx, 6, 5, f).unwrap());
            let unknown = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
            let declared = Image::new_virtual(&g, 6, 5, f).unwrap();
            let first = g.add_node(&k, [&input, &unknown]).unwrap();
            g.add_node(&k, [&unknown, &declared]).unwrap();
            g.add_node(&k, [&declared, &out]).unwrap();
            assert_eq!(g.add_parameter(&first, 0).unwrap(), 0);
            g.process().unwrap();
            assert_eq!((unknown.format(), unknown.width(), unknown.height()), (f, 6, 5));
            assert_eq!(unknown.planes(), f.plane_count());
            assert_eq!(bytes(&out), bytes(&input), "{f}");
            // Another image as the graph parameter.
            let next = filled(f, 77);
            g.set_parameter_by_index(0, Reference::from(&next)).unwrap();
            g.process().unwrap();
            assert_eq!(bytes(&out), bytes(&next), "{f}");
            assert_ne!(bytes(&next), bytes(&input));
            // A virtual image declared of another format refuses the producer's.
            let g = Graph::new(&ctx).unwrap();
            let other = if f == ImageFormat::Nv21 { ImageFormat::Nv12 } else { ImageFormat::Nv21 };
            let wrong = Image::new_virtual(&g, 0, 0, other).unwrap();
            g.add_node(&k, [&input, &wrong]).unwrap();
            g.add_node(&k, [&wrong, &out]).unwrap();
            assert_eq!(run_until(&g, "nodes").unwrap_err().kind(), ErrorKind::InvalidFormat);
        }
    }

    #[test]
    fn a_real_output_of_another_size_is_refused() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let out = Image::new(&ctx, 4, 8, ImageFormat::U8).unwrap();
        g.add_node(&k, [&image(&ctx), &out]).unwrap();
        assert_eq!(run_until(&g, "nodes").unwrap_err().kind(), ErrorKind::InvalidDimension);
    }
}
