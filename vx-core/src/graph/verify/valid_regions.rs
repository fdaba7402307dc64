//! Node pass `valid regions` (runs on every node): each output image's valid rectangle — an
//! image, each level of a pyramid, each image in an object array (`ObjectKind::valid_rect_parts`) —
//! is the kernel's callback over the inputs' valid rectangles (in parameter order), or the whole
//! image when there is no callback; a rectangle outside the output is refused. A tiling node's
//! outputs are then cut to the pixels its tiles cover (a fast-only kernel whose blocks do not divide
//! the image, or the border under `Undefined`, leaves pixels unwritten).
//! Cost: O(parameters of the node) (+ the node's valid-rectangle callbacks).

use std::sync::Arc;

use vx_plugin_abi::Rect;

use crate::data::types::Direction;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::NodeSlot;
use crate::graph::verify::{NodeVerification, Verification};
use crate::support::unwind::call_guarded;

pub(super) fn run(v: &mut Verification<'_>, s: &mut NodeSlot, _: &mut NodeVerification) -> Result<()> {
    let mut inputs: Vec<Rect> = Vec::new();
    for (p, r) in s.params.iter().enumerate() {
        if let (Direction::Input, Some(r)) = (s.spec(p).direction, r) {
            r.valid_rect_parts(&mut |part| inputs.push(part.valid()));
        }
    }
    for (p, r) in s.params.iter().enumerate() {
        let (Direction::Output, Some(r)) = (s.spec(p).direction, r) else { continue };
        let mut full: Vec<Rect> = Vec::new();
        r.valid_rect_parts(&mut |part| {
            let (w, h) = part.size();
            full.push(Rect::full(w, h));
        });
        if full.is_empty() {
            continue;
        }
        let mut rects = full.clone();
        if let Some(f) = &s.valid_rect_fns[p] {
            let f = Arc::clone(f);
            call_guarded("valid rectangle callback", || f(p as u32, &inputs, &mut rects))
                .map_err(|e| v.at(s, e.at_parameter(p as u32)))?;
            for (part, (full, rect)) in full.iter().zip(&rects).enumerate() {
                if !full.contains(rect) {
                    let what = if rects.len() > 1 { format!(" (part {part})") } else { String::new() };
                    return Err(v.at(
                        s,
                        Error::new(
                            ErrorKind::InvalidValue,
                            format!("the valid rectangle callback returned a rectangle outside the output{what}"),
                        )
                        .at_parameter(p as u32)
                        .expected_found(format!("inside {full}"), rect),
                    ));
                }
            }
        }
        // A tiling node writes only the pixels its tiles cover: the rest is not valid, whatever
        // the callback says.
        let processed = s.tiling.as_ref().map(|t| t.processed);
        let mut next = rects.into_iter();
        r.valid_rect_parts(&mut |part| {
            if let Some(rect) = next.next() {
                part.set_valid(processed.map_or(rect, |p| rect.intersect(&p)));
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::graph::verify::testkit::{image, run_until, same_size_u8, u8_kernel};
    use crate::{Context, ErrorKind, Graph, Rect};

    #[test]
    fn valid_rectangles_propagate_along_a_chain() {
        let ctx = Context::builder().threads(1).build().unwrap();
        // Output valid = input valid shrunk by one pixel on each side.
        let k = u8_kernel(&ctx, "test.shrink", |b| {
            b.validate(|v, metas| {
                same_size_u8(v, metas)?.set_valid_rect_callback(|_, inputs, out| {
                    let r = inputs[0];
                    out[0] = Rect::new(r.start_x + 1, r.start_y + 1, r.end_x - 1, r.end_y - 1);
                    Ok(())
                })?;
                Ok(())
            })
        });
        let g = Graph::new(&ctx).unwrap();
        let (a, b, c) = (image(&ctx), image(&ctx), image(&ctx));
        g.add_node(&k, [&a, &b]).unwrap();
        g.add_node(&k, [&b, &c]).unwrap();
        run_until(&g, "nodes").unwrap();
        assert_eq!(b.valid_region(), Rect::new(1, 1, 7, 7));
        assert_eq!(c.valid_region(), Rect::new(2, 2, 6, 6));
    }

    #[test]
    fn a_rectangle_outside_the_output_is_refused() {
        let ctx = Context::builder().threads(1).build().unwrap();
        let k = u8_kernel(&ctx, "test.outside", |b| {
            b.validate(|v, metas| {
                same_size_u8(v, metas)?.set_valid_rect_callback(|_, _, out| {
                    out[0] = Rect::new(0, 0, 9, 9);
                    Ok(())
                })?;
                Ok(())
            })
        });
        let g = Graph::new(&ctx).unwrap();
        g.add_node(&k, [&image(&ctx), &image(&ctx)]).unwrap();
        let e = run_until(&g, "nodes").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert_eq!(e.context().parameter, Some(1));
    }
}
