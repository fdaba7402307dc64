//! Buffer aliasing: the arbitration table (every legality rule with a graph that breaks it, the
//! expected decision and reason), outputs bit-identical to the same graph with aliasing disabled,
//! re-verification re-arbitrating, and the decision as kernels see it in init and process.

mod common;

use std::sync::{Arc, Mutex};

use common::image_in_out;
use vx::*;

const W: u32 = 37;
const H: u32 = 23;

fn ctx(aliasing: bool) -> Context {
    Context::builder().threads(2).aliasing(aliasing).build().unwrap()
}

fn same_size_as_0(format: ImageFormat) -> impl Fn(&ValidateContext<'_>, &mut MetaFormats) -> Result<()> {
    move |v, metas| {
        let i = v.image(0)?;
        let out = (0..v.params().len() as u32).rev().find(|&p| metas.get(p).is_ok()).unwrap_or(1);
        metas.get(out)?.set_image(format, i.width(), i.height())?;
        Ok(())
    }
}

/// A one-input, one-output user kernel `name` whose output is the input's size in `format`, with
/// what `build` adds (process, init) and an alias hint (0, 1) of `hint`.
fn pair_kernel(
    ctx: &Context,
    name: &str,
    format: ImageFormat,
    hint: Option<AliasKind>,
    build: impl for<'c> FnOnce(KernelBuilder<'c>) -> KernelBuilder<'c>,
) -> Kernel {
    let b = ctx.user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2).validate(same_size_as_0(format));
    let k = build(b).add().unwrap();
    image_in_out(&k);
    if let Some(kind) = hint {
        k.alias_parameter_index_hint(0, 1, kind).unwrap();
    }
    k.finalize().unwrap();
    k
}

/// Dense in-place inversion, hint (0, 1, dense): in place when aliased, input → output when not.
fn invert(ctx: &Context, seen: Arc<Mutex<Vec<(String, bool)>>>) -> Kernel {
    let init_seen = Arc::clone(&seen);
    pair_kernel(ctx, "t.invert", ImageFormat::U8, Some(AliasKind::Dense), |b| {
        b.init(move |l| {
            init_seen.lock().unwrap().push((format!("init {}", l.node_name()), l.is_parameter_aliased(0, 1)));
            Ok(())
        })
        .process(move |p| {
            let aliased = p.is_parameter_aliased(1, 0);
            seen.lock().unwrap().push((format!("process {}", p.node_name()), aliased));
            if aliased {
                let mut io = p.map_in_place::<u8>(0, 1)?;
                for y in 0..io.height() {
                    io.row_mut(y).iter_mut().for_each(|v| *v = !*v);
                }
            } else {
                let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
                for y in 0..i.height() {
                    o.row_mut(y).iter_mut().zip(i.row(y)).for_each(|(o, &v)| *o = !v);
                }
            }
            Ok(())
        })
    })
}

/// Sparse: values above 200 become 200 (map_in_place copies first when not aliased).
fn truncate(ctx: &Context) -> Kernel {
    pair_kernel(ctx, "t.truncate", ImageFormat::U8, Some(AliasKind::Sparse), |b| {
        b.process(|p| {
            let mut io = p.map_in_place::<u8>(0, 1)?;
            for y in 0..io.height() {
                io.row_mut(y).iter_mut().filter(|v| **v > 200).for_each(|v| *v = 200);
            }
            Ok(())
        })
    })
}

/// A plain copy-plus-one (no hint), used as producer and as a second reader.
fn bump(ctx: &Context) -> Kernel {
    pair_kernel(ctx, "t.bump", ImageFormat::U8, None, |b| {
        b.process(|p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                o.row_mut(y).iter_mut().zip(i.row(y)).for_each(|(o, &v)| *o = v.wrapping_add(1));
            }
            Ok(())
        })
    })
}

/// out = a - b (wrapping), hints (0, 2, dense) and (1, 2, sparse): they compete for the output.
fn diff(ctx: &Context) -> Kernel {
    let k = ctx
        .user_kernel("t.diff", ctx.allocate_user_kernel_id().unwrap(), 3)
        .validate(same_size_as_0(ImageFormat::U8))
        .process(|p| {
            // In place on whichever input was aliased with the output; the other read apart.
            let (io_in, other) = if p.is_parameter_aliased(1, 2) { (1, 0) } else { (0, 1) };
            let b = p.image(other)?;
            let b = b.map::<u8>(b.full_rect(), 0)?;
            let mut io = p.map_in_place::<u8>(io_in, 2)?;
            for y in 0..io.height() {
                for (o, &v) in io.row_mut(y).iter_mut().zip(b.row(y)) {
                    *o = if io_in == 0 { o.wrapping_sub(v) } else { v.wrapping_sub(*o) };
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(2, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.alias_parameter_index_hint(0, 2, AliasKind::Dense).unwrap();
    k.alias_parameter_index_hint(1, 2, AliasKind::Sparse).unwrap();
    k.finalize().unwrap();
    k
}

/// U8 → S16 widening with a hint (0, 1): never legal (formats differ).
fn widen(ctx: &Context) -> Kernel {
    pair_kernel(ctx, "t.widen", ImageFormat::S16, Some(AliasKind::Dense), |b| {
        b.process(|p| {
            let (i, mut o) = p.map_pair::<u8, i16>(0, 1)?;
            for y in 0..i.height() {
                o.row_mut(y).iter_mut().zip(i.row(y)).for_each(|(o, &v)| *o = v as i16 * 3);
            }
            Ok(())
        })
    })
}

/// A tiling box filter (neighborhood ±1) with a hint (0, 1): refused (a tile would read pixels
/// neighboring tiles overwrote).
fn tiled_blur(ctx: &Context) -> Kernel {
    let k = ctx
        .tiling_kernel("t.blur", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(same_size_as_0(ImageFormat::U8))
        .flexible(|args| {
            let input = args.input::<u8>(0)?;
            let mut out = args.output::<u8>(1)?;
            for y in 0..out.height() {
                for x in 0..out.width() {
                    let mut s = 0u32;
                    for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1), (0, 0)] {
                        s += input.get(x, y, dx, dy).unwrap_or_else(|| input.pixel(x, y, 0, 0)) as u32;
                    }
                    out.set(x, y, (s / 5) as u8);
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(-1, 1, -1, 1))).unwrap();
    k.set_attribute(KernelAttribute::Border(BorderMode::Self_)).unwrap();
    k.alias_parameter_index_hint(0, 1, AliasKind::Dense).unwrap();
    k.finalize().unwrap();
    k
}

struct Kernels {
    invert: Kernel,
    truncate: Kernel,
    bump: Kernel,
    diff: Kernel,
    widen: Kernel,
    blur: Kernel,
}

fn kernels(ctx: &Context, seen: Arc<Mutex<Vec<(String, bool)>>>) -> Kernels {
    Kernels {
        invert: invert(ctx, seen),
        truncate: truncate(ctx),
        bump: bump(ctx),
        diff: diff(ctx),
        widen: widen(ctx),
        blur: tiled_blur(ctx),
    }
}

fn input(ctx: &Context) -> Image {
    let a = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..W * H).map(|i| (i * 37 % 251) as u8).collect();
    a.copy_from(Rect::full(W, H), 0, &px).unwrap();
    a.set_name("a");
    a
}

fn virt(g: &Graph, name: &str) -> Image {
    let v = Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap();
    v.set_name(name);
    v
}

fn out(ctx: &Context, name: &str, format: ImageFormat) -> Image {
    let o = Image::new(ctx, W, H, format).unwrap();
    o.set_name(name);
    o
}

/// One row of the table: builds its graph, returns it with the images to compare.
type Build = fn(&Context, &Kernels) -> (Graph, Vec<Image>);

/// (case, graph, expected: (node name, input, output, aliased, reason substring)).
#[allow(clippy::type_complexity)]
fn table() -> Vec<(&'static str, Build, Vec<(&'static str, u32, u32, bool, &'static str)>)> {
    vec![
        (
            "a chain of in-place nodes shares one buffer",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, v2, o) = (virt(&g, "v1"), virt(&g, "v2"), out(c, "out", ImageFormat::U8));
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.invert, [&v1, &v2]).unwrap().set_name("invert").unwrap();
                g.add_node(&k.truncate, [&v2, &o]).unwrap().set_name("truncate").unwrap();
                (g, vec![o])
            },
            vec![("invert", 0, 1, true, ""), ("truncate", 0, 1, true, "")],
        ),
        (
            "two consumers in the same level",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, o1, o2) = (virt(&g, "v1"), out(c, "o1", ImageFormat::U8), out(c, "o2", ImageFormat::U8));
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.invert, [&v1, &o1]).unwrap().set_name("invert").unwrap();
                g.add_node(&k.bump, [&v1, &o2]).unwrap().set_name("reader").unwrap();
                (g, vec![o1, o2])
            },
            vec![("invert", 0, 1, false, "input 'v1' is also read by node 'reader', which does not run before")],
        ),
        (
            "another consumer that runs before the in-place node",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, w, o) = (virt(&g, "v1"), virt(&g, "w"), out(c, "out", ImageFormat::U8));
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.bump, [&v1, &w]).unwrap().set_name("reader").unwrap();
                g.add_node(&k.diff, [&v1, &w, &o]).unwrap().set_name("diff").unwrap();
                (g, vec![o])
            },
            // Both hints are legal; the sparse one (w → out) wins, the dense one loses to it.
            vec![
                ("diff", 0, 2, false, "parameter 2 is already aliased by the sparse hint (1 → 2)"),
                ("diff", 1, 2, true, ""),
            ],
        ),
        (
            "a non-virtual input",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let o = out(c, "out", ImageFormat::U8);
                g.add_node(&k.invert, [&input(c), &o]).unwrap().set_name("invert").unwrap();
                (g, vec![o])
            },
            vec![("invert", 0, 1, false, "input 'a' is not virtual")],
        ),
        (
            "different formats",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, o) = (virt(&g, "v1"), out(c, "out", ImageFormat::S16));
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.widen, [&v1, &o]).unwrap().set_name("widen").unwrap();
                (g, vec![o])
            },
            vec![("widen", 0, 1, false, "one buffer needs one format and size")],
        ),
        (
            "an output that is an ROI",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let big = Image::new(c, W + 8, H + 8, ImageFormat::U8).unwrap();
                let o = big.roi(Rect::new(4, 4, 4 + W, 4 + H)).unwrap();
                o.set_name("roi");
                let v1 = virt(&g, "v1");
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.invert, [&v1, &o]).unwrap().set_name("invert").unwrap();
                (g, vec![o])
            },
            vec![("invert", 0, 1, false, "image 'roi' shares its pixels with an ROI")],
        ),
        (
            "dense and sparse hints competing for one output",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, v2, o) = (virt(&g, "v1"), virt(&g, "v2"), out(c, "out", ImageFormat::U8));
                let a = input(c);
                g.add_node(&k.bump, [&a, &v1]).unwrap().set_name("bump1").unwrap();
                g.add_node(&k.invert, [&a, &v2]).unwrap().set_name("invert").unwrap();
                g.add_node(&k.diff, [&v1, &v2, &o]).unwrap().set_name("diff").unwrap();
                (g, vec![o])
            },
            vec![
                ("invert", 0, 1, false, "not virtual"),
                ("diff", 0, 2, false, "already aliased by the sparse hint (1 → 2)"),
                ("diff", 1, 2, true, ""),
            ],
        ),
        (
            "one input on two parameters of the node",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, o) = (virt(&g, "v1"), out(c, "out", ImageFormat::U8));
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.diff, [&v1, &v1, &o]).unwrap().set_name("diff").unwrap();
                (g, vec![o])
            },
            vec![
                ("diff", 0, 2, false, "input 'v1' is also parameter 1 of this node"),
                ("diff", 1, 2, false, "input 'v1' is also parameter 0 of this node"),
            ],
        ),
        (
            "a tiling node with a neighborhood",
            |c, k| {
                let g = Graph::new(c).unwrap();
                let (v1, o) = (virt(&g, "v1"), out(c, "out", ImageFormat::U8));
                g.add_node(&k.bump, [&input(c), &v1]).unwrap().set_name("bump").unwrap();
                g.add_node(&k.blur, [&v1, &o]).unwrap().set_name("blur").unwrap();
                (g, vec![o])
            },
            vec![("blur", 0, 1, false, "reads a neighborhood (-1, 1, -1, 1)")],
        ),
    ]
}

fn decisions(g: &Graph) -> Vec<(String, u32, u32, bool, String)> {
    g.alias_decisions()
        .unwrap()
        .into_iter()
        .map(|d| (d.node, d.input, d.output, d.aliased, d.reason.unwrap_or_default()))
        .collect()
}

#[test]
fn arbitration_table_decisions_reasons_and_identical_outputs() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (on, off) = (ctx(true), ctx(false));
    let (kon, koff) = (kernels(&on, Arc::clone(&seen)), kernels(&off, Arc::clone(&seen)));
    for (case, build, expected) in table() {
        let (g, outs) = build(&on, &kon);
        g.verify().unwrap_or_else(|e| panic!("{case}: {e}"));
        let got = decisions(&g);
        assert_eq!(got.len(), expected.len(), "{case}: {got:?}");
        for (d, (node, i, o, aliased, reason)) in got.iter().zip(&expected) {
            assert_eq!((d.0.as_str(), d.1, d.2, d.3), (*node, *i, *o, *aliased), "{case}: {got:?}");
            assert!(d.4.contains(reason), "{case}: reason '{}' lacks '{reason}'", d.4);
        }
        g.process().unwrap_or_else(|e| panic!("{case}: {e}"));
        // The same graph with aliasing disabled: every hint refused, the same pixels.
        let (g2, outs2) = build(&off, &koff);
        g2.process().unwrap_or_else(|e| panic!("{case} (no aliasing): {e}"));
        assert!(decisions(&g2).iter().all(|d| !d.3 && d.4.contains("disabled")), "{case}");
        for (a, b) in outs.iter().zip(&outs2) {
            assert_eq!(a.format(), b.format());
            if a.format() == ImageFormat::S16 {
                assert_eq!(a.to_vec::<i16>().unwrap(), b.to_vec::<i16>().unwrap(), "{case}: {}", a.name());
            } else {
                assert_eq!(a.to_vec::<u8>().unwrap(), b.to_vec::<u8>().unwrap(), "{case}: {}", a.name());
            }
        }
    }
}

#[test]
fn an_aliased_chain_needs_fewer_buffer_bytes() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut peaks = Vec::new();
    for aliasing in [true, false] {
        let c = ctx(aliasing);
        let k = kernels(&c, Arc::clone(&seen));
        let (g, _outs) = (table()[0].1)(&c, &k);
        g.process().unwrap();
        peaks.push(c.buffer_bytes().current);
    }
    // a, out (+ v1, v2 without aliasing): each a 37x23 U8 image with 64-byte rows.
    let frame = 64 * H as usize;
    assert_eq!(peaks, [2 * frame, 4 * frame]);
}

#[test]
fn reverification_rearbitrates_and_init_and_process_see_the_decision() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let c = ctx(true);
    let k = kernels(&c, Arc::clone(&seen));
    let g = Graph::new(&c).unwrap();
    let (v1, o, o2) = (virt(&g, "v1"), out(&c, "out", ImageFormat::U8), out(&c, "o2", ImageFormat::U8));
    g.add_node(&k.bump, [&input(&c), &v1]).unwrap();
    let invert = g.add_node(&k.invert, [&v1, &o]).unwrap();
    invert.set_name("invert").unwrap();
    g.process().unwrap();
    let first = o.to_vec::<u8>().unwrap();
    assert!(decisions(&g)[0].3);
    assert_eq!(
        std::mem::take(&mut *seen.lock().unwrap()),
        [("init invert".to_string(), true), ("process invert".to_string(), true)]
    );
    // A second reader of v1 appears: the next (automatic) verification refuses the hint, and the
    // node is re-initialized to see it.
    let reader = g.add_node(&k.bump, [&v1, &o2]).unwrap();
    reader.set_name("reader").unwrap();
    g.process().unwrap();
    let d = decisions(&g);
    assert!(!d[0].3 && d[0].4.contains("also read by node 'reader'"), "{d:?}");
    assert_eq!(
        std::mem::take(&mut *seen.lock().unwrap()),
        [("init invert".to_string(), false), ("process invert".to_string(), false)]
    );
    assert_eq!(o.to_vec::<u8>().unwrap(), first);
    // It goes away again: aliased again.
    g.remove_node(&reader).unwrap();
    g.process().unwrap();
    assert!(decisions(&g)[0].3);
    assert_eq!(o.to_vec::<u8>().unwrap(), first);
    // A parameter change: the output becomes an ROI of a larger image. Refused, same pixels.
    let big = Image::new(&c, W + 2, H + 2, ImageFormat::U8).unwrap();
    let roi = big.roi(Rect::new(1, 1, W + 1, H + 1)).unwrap();
    invert.set_parameter(1, Reference::from(&roi)).unwrap();
    g.process().unwrap();
    let d = decisions(&g);
    assert!(!d[0].3 && d[0].4.contains("shares its pixels with an ROI"), "{d:?}");
    assert_eq!(roi.to_vec::<u8>().unwrap(), first);
}
