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

    #[test]
    fn a_real_output_of_another_size_is_refused() {
        let (ctx, k) = copy_kernel();
        let g = Graph::new(&ctx).unwrap();
        let out = Image::new(&ctx, 4, 8, ImageFormat::U8).unwrap();
        g.add_node(&k, [&image(&ctx), &out]).unwrap();
        assert_eq!(run_until(&g, "nodes").unwrap_err().kind(), ErrorKind::InvalidDimension);
    }
}
