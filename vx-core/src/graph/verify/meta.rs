//! Node pass `meta`: the meta formats the validator filled are applied to the node's outputs — a
//! virtual output is completed from its meta (and recorded as changed, so its readers are
//! re-verified), a real one is checked against it; each output's valid-rectangle callback is kept.
//! Cost: O(outputs of the node).

use vx_plugin_abi::ImageFormat;

use crate::data::reference::{ObjectMeta, Reference};
use crate::error::{Error, ErrorKind, Result};
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

fn mismatch(kind: ErrorKind, want: &ObjectMeta, have: &ObjectMeta) -> Error {
    Error::new(kind, "the output object does not match the validator's meta format").expected_found(want, have)
}

/// Complete a virtual output from `meta`, or check a real one against it.
fn apply_meta(r: &Reference, meta: ObjectMeta, changed: &mut OverlapIndex<()>) -> Result<()> {
    let have = r.meta();
    let fail = |kind| Err(mismatch(kind, &meta, &have));
    match (r, &meta) {
        (Reference::Image(img), &ObjectMeta::Image { format, width, height }) => {
            let (df, dw, dh) = if img.is_virtual() {
                img.obj.body.declared
            } else {
                match have {
                    ObjectMeta::Image { format, width, height } => (format, width, height),
                    _ => unreachable!("an image has image meta"),
                }
            };
            if df != ImageFormat::Virtual && df != format {
                return fail(ErrorKind::InvalidFormat);
            }
            if (dw != 0 && dw != width) || (dh != 0 && dh != height) {
                return fail(ErrorKind::InvalidDimension);
            }
            if img.is_virtual() && img.complete_virtual(format, width, height)? {
                changed.push(r.clone(), ());
            }
        }
        (Reference::Array(a), &ObjectMeta::Array { item_type, capacity }) => {
            let (dt, dc) = a.obj.body.declared;
            if a.is_virtual() {
                if dt.is_some_and(|t| Some(t) != item_type) || (dc != 0 && dc < capacity) {
                    return fail(ErrorKind::NotCompatible);
                }
                let item = item_type.expect("resolved meta has an item type");
                if a.complete_virtual(item, if dc != 0 { dc } else { capacity })? {
                    changed.push(r.clone(), ());
                }
            } else if dt != item_type {
                return fail(ErrorKind::InvalidType);
            } else if dc < capacity {
                return fail(ErrorKind::InvalidDimension);
            }
        }
        (Reference::Scalar(_), ObjectMeta::Scalar { .. }) if meta != have => return fail(ErrorKind::InvalidType),
        (Reference::Scalar(_), ObjectMeta::Scalar { .. }) => {}
        (Reference::UserDataObject(u), ObjectMeta::UserDataObject { type_name, size }) => {
            if !type_name.is_empty() && type_name != u.type_name() {
                return fail(ErrorKind::InvalidType);
            }
            if *size != u.size() {
                return fail(ErrorKind::InvalidDimension);
            }
        }
        (Reference::Matrix(m), ObjectMeta::Matrix(w)) => {
            let h = m.meta();
            if h.element != w.element {
                return fail(ErrorKind::InvalidType);
            }
            if (h.columns, h.rows) != (w.columns, w.rows) {
                return fail(ErrorKind::InvalidDimension);
            }
        }
        (Reference::Convolution(c), ObjectMeta::Convolution(w)) if c.meta() != *w => {
            return fail(ErrorKind::InvalidDimension);
        }
        (Reference::Lut(l), ObjectMeta::Lut(w)) => {
            if l.element_type() != w.element {
                return fail(ErrorKind::InvalidType);
            }
            if l.count() != w.count {
                return fail(ErrorKind::InvalidDimension);
            }
        }
        (Reference::Distribution(d), ObjectMeta::Distribution(w)) if d.meta() != *w => {
            return fail(ErrorKind::InvalidDimension);
        }
        (Reference::Threshold(t), ObjectMeta::Threshold(w)) => {
            let h = t.meta();
            if h.threshold_type != w.threshold_type {
                return fail(ErrorKind::InvalidType);
            }
            let differs = |want: ImageFormat, have: ImageFormat| want != ImageFormat::Virtual && want != have;
            if differs(w.input_format, h.input_format) || differs(w.output_format, h.output_format) {
                return fail(ErrorKind::InvalidFormat);
            }
        }
        (Reference::Remap(m), ObjectMeta::Remap(w)) if m.meta() != *w => return fail(ErrorKind::InvalidDimension),
        (Reference::ObjectArray(o), &ObjectMeta::ObjectArray { item_type, count }) => {
            if o.item_type() != item_type {
                return fail(ErrorKind::InvalidType);
            }
            if o.count() != count {
                return fail(ErrorKind::InvalidDimension);
            }
        }
        (Reference::Pyramid(p), ObjectMeta::Pyramid(w)) => {
            let d = if p.is_virtual() { p.obj.body.declared } else { p.meta() };
            if d.levels != w.levels || d.scale != w.scale {
                return fail(ErrorKind::InvalidDimension);
            }
            if d.format != ImageFormat::Virtual && d.format != w.format {
                return fail(ErrorKind::InvalidFormat);
            }
            if (d.width != 0 && d.width != w.width) || (d.height != 0 && d.height != w.height) {
                return fail(ErrorKind::InvalidDimension);
            }
            if p.is_virtual() && p.complete_virtual(w.format, w.width, w.height)? {
                changed.push(r.clone(), ());
            }
        }
        (Reference::Tensor(t), ObjectMeta::Tensor(w)) => {
            let d = if t.is_virtual() { t.obj.body.declared } else { t.meta() };
            if d.data_type.is_some_and(|dt| Some(dt) != w.data_type) {
                return fail(ErrorKind::InvalidType);
            }
            let dims_differ = d.num_dims != 0
                && (d.num_dims != w.num_dims || d.dims().iter().zip(w.dims()).any(|(a, b)| *a != 0 && a != b));
            if dims_differ {
                return fail(ErrorKind::InvalidDimension);
            }
            if d.fixed_point_position != w.fixed_point_position {
                return fail(ErrorKind::InvalidValue);
            }
            if t.is_virtual() && t.complete_virtual(*w)? {
                changed.push(r.clone(), ());
            }
        }
        (
            Reference::Convolution(_) | Reference::Distribution(_) | Reference::Remap(_),
            ObjectMeta::Convolution(_) | ObjectMeta::Distribution(_) | ObjectMeta::Remap(_),
        ) if r.data_type() == meta.data_type() => {}
        _ => return fail(ErrorKind::InvalidType),
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

    #[test]
    fn a_real_output_of_another_size_is_refused() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let out = Image::new(&ctx, 4, 8, ImageFormat::U8).unwrap();
        g.add_node(&k, [&image(&ctx), &out]).unwrap();
        assert_eq!(run_until(&g, "nodes").unwrap_err().kind(), ErrorKind::InvalidDimension);
    }
}
