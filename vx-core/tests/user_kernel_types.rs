//! The type loop of the Khronos conformance tests for user nodes (`UserNode.testUserKernel` and
//! `testUserKernelObjectArray`), written fresh against vx-rs: a two-parameter user kernel (input
//! and output of one type) for each of ten data object types, its output meta set attribute by
//! attribute or from the input as exemplar, under three local-data modes; verified twice (the
//! second is a re-verification), processed once. Checked: the callback counts of each phase, the
//! local-data rules, the output's meta, the data the kernel copied through, valid rectangles
//! (images and each level of pyramids); then the same inside object arrays of every type.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::SeqCst};

use vx::*;

#[path = "common/type_loop.rs"]
mod type_loop;
use type_loop::{KINDS, Kind, fill, snapshot};

// ---------------------------------------------------------------------------------------------
// Validators: meta from the input (exemplar) or attribute by attribute, after checking the
// input's attributes as the conformance test does.

fn wrong(what: &str) -> Error {
    Error::new(ErrorKind::InvalidParameters, format!("unexpected input {what}"))
}

/// Check the input's attributes; then either copy them or set them one by one.
fn validate_one(kind: Kind, input: &Reference, meta: &mut MetaFormat, from_ref: bool) -> Result<()> {
    macro_rules! attrs {
        ($($a:expr),* $(,)?) => { vec![$(MetaAttribute::from($a)),*] };
    }
    let attrs: Vec<MetaAttribute> = match (kind, input) {
        (Kind::Image, Reference::Image(i)) => {
            if (i.format(), i.width(), i.height()) != (ImageFormat::U8, 128, 128) {
                return Err(wrong("image"));
            }
            meta.set_valid_rect_callback(|_, inputs, out| {
                let r = inputs[0];
                out[0] = Rect::new(r.start_x + 2, r.start_y + 2, r.end_x - 2, r.end_y - 2);
                Ok(())
            })?;
            attrs![ImageAttr::Format(ImageFormat::U8), ImageAttr::Width(128), ImageAttr::Height(128)]
        }
        (Kind::Array, Reference::Array(a)) => {
            if (a.item_type(), a.capacity()) != (Some(ArrayItemType::Scalar(ScalarType::Uint8)), 20) {
                return Err(wrong("array"));
            }
            attrs![ArrayAttr::ItemType(ArrayItemType::Scalar(ScalarType::Uint8)), ArrayAttr::Capacity(20)]
        }
        (Kind::Pyramid, Reference::Pyramid(p)) => {
            let m = p.meta();
            if (m.format, m.width, m.height, m.levels, m.scale) != (ImageFormat::U8, 128, 128, 8, PYRAMID_SCALE_HALF) {
                return Err(wrong("pyramid"));
            }
            // One rectangle per level: each shrunk by one pixel (but the 1×1 level).
            meta.set_valid_rect_callback(|_, inputs, out| {
                assert_eq!((inputs.len(), out.len()), (8, 8), "a pyramid gives and takes one rectangle per level");
                for (o, i) in out.iter_mut().zip(inputs) {
                    *o = if i.width() > 2 {
                        Rect::new(i.start_x + 1, i.start_y + 1, i.end_x - 1, i.end_y - 1)
                    } else {
                        *i
                    };
                }
                Ok(())
            })?;
            attrs![
                PyramidAttr::Format(ImageFormat::U8),
                PyramidAttr::Width(128),
                PyramidAttr::Height(128),
                PyramidAttr::Levels(8),
                PyramidAttr::Scale(PYRAMID_SCALE_HALF),
            ]
        }
        (Kind::Scalar, Reference::Scalar(s)) => {
            if s.scalar_type() != ScalarType::Uint8 {
                return Err(wrong("scalar"));
            }
            attrs![ScalarAttr::Type(ScalarType::Uint8)]
        }
        (Kind::Distribution, Reference::Distribution(d)) => {
            if (d.bins(), d.offset(), d.range()) != (36, 0, 360) {
                return Err(wrong("distribution"));
            }
            attrs![DistributionAttr::Bins(36), DistributionAttr::Offset(0), DistributionAttr::Range(360)]
        }
        (Kind::Matrix, Reference::Matrix(m)) => {
            if (m.element_type(), m.rows(), m.columns()) != (ScalarType::Uint8, 5, 5) {
                return Err(wrong("matrix"));
            }
            attrs![MatrixAttr::Type(ScalarType::Uint8), MatrixAttr::Rows(5), MatrixAttr::Columns(5)]
        }
        (Kind::Threshold, Reference::Threshold(t)) => {
            if t.threshold_type() != ThresholdType::Binary {
                return Err(wrong("threshold"));
            }
            attrs![ThresholdAttr::Type(ThresholdType::Binary)]
        }
        (Kind::Lut, Reference::Lut(l)) => {
            if (l.element_type(), l.count()) != (ScalarType::Uint8, 100) {
                return Err(wrong("LUT"));
            }
            attrs![LutAttr::Type(ScalarType::Uint8), LutAttr::Count(100)]
        }
        (Kind::Remap, Reference::Remap(r)) => {
            let m = r.meta();
            if (m.source_width, m.source_height, m.destination_width, m.destination_height) != (128, 128, 256, 256) {
                return Err(wrong("remap"));
            }
            attrs![
                RemapAttr::SourceWidth(128),
                RemapAttr::SourceHeight(128),
                RemapAttr::DestinationWidth(256),
                RemapAttr::DestinationHeight(256),
            ]
        }
        (Kind::Convolution, Reference::Convolution(c)) => {
            if (c.columns(), c.rows()) != (5, 3) {
                return Err(wrong("convolution"));
            }
            attrs![ConvolutionAttr::Columns(5), ConvolutionAttr::Rows(3)]
        }
        (k, r) => return Err(wrong(&format!("type: {k:?} kernel got a {}", r.data_type()))),
    };
    if from_ref {
        meta.set_from_reference(input)?;
    } else {
        for a in attrs {
            meta.set(a)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Process: the kernel copies its input to its output through the kernel-side views.

/// Where a kernel finds the pair of objects to copy: the node's parameters or an item of two
/// object arrays.
trait Pair<'a> {
    fn view<T: DataObject>(&self, side: usize) -> Result<KernelView<'a, T>>;
}

struct Params<'p, 'a>(&'p ProcessContext<'a>);
impl<'a> Pair<'a> for Params<'_, 'a> {
    fn view<T: DataObject>(&self, side: usize) -> Result<KernelView<'a, T>> {
        self.0.object::<T>(side as u32)
    }
}

struct Items<'a>([KernelView<'a, ObjectArray>; 2], usize);
impl<'a> Pair<'a> for Items<'a> {
    fn view<T: DataObject>(&self, side: usize) -> Result<KernelView<'a, T>> {
        self.0[side].item::<T>(self.1)
    }
}

fn copy_image(a: KernelView<'_, Image>, b: KernelView<'_, Image>) -> Result<()> {
    let src = a.map::<u8>(a.full_rect(), 0)?;
    let mut dst = b.map_mut::<u8>(b.full_rect(), 0)?;
    for y in 0..src.height() {
        dst.row_mut(y).copy_from_slice(src.row(y));
    }
    Ok(())
}

fn copy_pair<'a>(kind: Kind, p: &impl Pair<'a>) -> Result<()> {
    match kind {
        Kind::Image => copy_image(p.view(0)?, p.view(1)?),
        Kind::Array => {
            let (a, b) = (p.view::<Array>(0)?, p.view::<Array>(1)?);
            let items = KernelArrayOf(a).read()?;
            KernelArrayOf(b).replace(&items)
        }
        Kind::Pyramid => {
            let (a, b) = (p.view::<Pyramid>(0)?, p.view::<Pyramid>(1)?);
            (0..a.levels()).try_for_each(|l| copy_image(a.level(l)?, b.level(l)?))
        }
        Kind::Scalar => {
            let (a, b) = (p.view::<Scalar>(0)?, p.view::<Scalar>(1)?);
            b.set_value(a.value()?)
        }
        Kind::Distribution => {
            let (a, b) = (p.view::<Distribution>(0)?, p.view::<Distribution>(1)?);
            b.map_mut()?.copy_from_slice(&a.map()?);
            Ok(())
        }
        Kind::Matrix => {
            let (a, b) = (p.view::<Matrix>(0)?, p.view::<Matrix>(1)?);
            let mut v = vec![0u8; a.columns() * a.rows()];
            a.copy_to(&mut v)?;
            b.copy_from(&v)
        }
        Kind::Threshold => {
            let (a, b) = (p.view::<Threshold>(0)?, p.view::<Threshold>(1)?);
            let v = a.values()?;
            b.set_value(v.value)?;
            b.set_range(v.lower, v.upper)?;
            b.set_output(v.true_value, v.false_value)
        }
        Kind::Lut => {
            let (a, b) = (p.view::<Lut>(0)?, p.view::<Lut>(1)?);
            b.map_mut::<u8>()?.copy_from_slice(&a.map::<u8>()?);
            Ok(())
        }
        Kind::Remap => {
            let (a, b) = (p.view::<Remap>(0)?, p.view::<Remap>(1)?);
            let full = Rect::full(a.destination_width(), a.destination_height());
            let mut pts = vec![Coordinates2dF::default(); (full.width() * full.height()) as usize];
            a.copy_patch_to(full, &mut pts)?;
            b.copy_patch_from(full, &pts)
        }
        Kind::Convolution => {
            let (a, b) = (p.view::<Convolution>(0)?, p.view::<Convolution>(1)?);
            let mut c = vec![0i16; a.columns() * a.rows()];
            a.copy_to(&mut c)?;
            b.copy_from(&c)?;
            b.set_scale(a.scale())
        }
    }
}

/// Arrays through the kernel view of the process context's `array` accessor.
struct KernelArrayOf<'a>(KernelView<'a, Array>);
impl KernelArrayOf<'_> {
    fn read(&self) -> Result<Vec<u8>> {
        self.0.read_items::<u8>()
    }
    fn replace(&self, items: &[u8]) -> Result<()> {
        self.0.truncate(0)?;
        self.0.add_items(items)
    }
}

// ---------------------------------------------------------------------------------------------
// The kernel and its bookkeeping.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Local {
    /// No local data.
    None,
    /// `VX_KERNEL_LOCAL_DATA_SIZE` = 10: the framework allocates; init and deinit may not change it.
    Framework,
    /// Size 0 on the kernel; init allocates 10 bytes and sets size and pointer, deinit frees them.
    Kernel,
}

#[derive(Default)]
struct Calls {
    validate: AtomicU32,
    init: AtomicU32,
    deinit: AtomicU32,
    process: AtomicU32,
    init_sets_accepted: AtomicBool,
    deinit_sets_accepted: AtomicBool,
}

impl Calls {
    fn counts(&self) -> (u32, u32, u32, u32) {
        (self.validate.load(SeqCst), self.init.load(SeqCst), self.deinit.load(SeqCst), self.process.load(SeqCst))
    }
}

const KERNEL: &str = "org.khronos.openvx.test.own_user";

/// The conformance kernel for `kind` (or object arrays of `kind` when `in_array`).
fn add_kernel(ctx: &Context, kind: Kind, in_array: bool, from_ref: bool, local: Local, calls: Arc<Calls>) -> Kernel {
    let id = ctx.allocate_user_kernel_id().unwrap();
    let (cv, ci, cd, cp) = (calls.clone(), calls.clone(), calls.clone(), calls);
    let b = ctx.user_kernel(KERNEL, id, 2).validate(move |v, metas| {
        cv.validate.fetch_add(1, SeqCst);
        let (input, output) = (v.param(0)?, v.param(1)?);
        let meta = metas.get(1)?;
        if !in_array {
            assert_eq!(output.data_type(), kind.data_type());
            return validate_one(kind, input, meta, from_ref);
        }
        let (a, o) = (v.get::<ObjectArray>(0)?, v.get::<ObjectArray>(1)?);
        if (a.item_type(), a.count(), o.item_type()) != (kind.data_type(), 20, kind.data_type()) {
            return Err(wrong("object array"));
        }
        if from_ref {
            meta.set_from_reference(input)?;
        } else {
            meta.set(ObjectArrayAttr::ItemType(kind.data_type()))?.set(ObjectArrayAttr::Count(20))?;
        }
        Ok(())
    });
    let b = b
        .init(move |lc| {
            ci.init.fetch_add(1, SeqCst);
            let (size, ptr) = if local == Local::Kernel {
                (10, Box::into_raw(Box::new([0u8; 10])) as *mut std::ffi::c_void)
            } else {
                (0, std::ptr::null_mut())
            };
            let a = lc.set_local_data_size(size).is_ok();
            let b = lc.set_local_data_ptr(ptr).is_ok();
            ci.init_sets_accepted.store(a && b, SeqCst);
            Ok(())
        })
        .deinit(move |lc| {
            cd.deinit.fetch_add(1, SeqCst);
            let ptr = lc.local_data_ptr();
            if local == Local::Kernel && !ptr.is_null() {
                // SAFETY: init leaked exactly this Box<[u8; 10]> and set it as the pointer; the
                // framework never frees a kernel-set pointer, so it is reclaimed once, here.
                drop(unsafe { Box::from_raw(ptr as *mut [u8; 10]) });
            }
            let a = lc.set_local_data_size(0).is_ok();
            let b = lc.set_local_data_ptr(std::ptr::null_mut()).is_ok();
            cd.deinit_sets_accepted.store(a && b, SeqCst);
            Ok(())
        })
        .process(move |p| {
            cp.process.fetch_add(1, SeqCst);
            if !in_array {
                return copy_pair(kind, &Params(p));
            }
            let arrays = [p.object::<ObjectArray>(0)?, p.object::<ObjectArray>(1)?];
            (0..arrays[0].count()).try_for_each(|i| copy_pair(kind, &Items(arrays, i)))
        });
    let k = b.add().unwrap();
    let t = if in_array { DataType::ObjectArray } else { kind.data_type() };
    k.add_parameter(0, ParamDirection::Input, t, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, t, ParamState::Required).unwrap();
    if local == Local::Framework {
        k.set_local_data_size(10).unwrap();
    }
    k.finalize().unwrap();
    k
}

fn check_local(local: Local, node: &Node) {
    let (size, ptr) = (node.local_data_size().unwrap(), node.local_data_ptr().unwrap());
    if local == Local::None {
        assert_eq!((size, ptr.is_null()), (0, true));
    } else {
        assert_eq!((size, ptr.is_null()), (10, false));
    }
}

fn user_kernel_case(kind: Kind, from_ref: bool, local: Local) {
    let case = format!("{kind:?} from_ref={from_ref} {local:?}");
    let ctx = Context::builder().threads(1).build().unwrap();
    let calls = Arc::new(Calls::default());
    let kernel = add_kernel(&ctx, kind, false, from_ref, local, calls.clone());
    let (src, dst) = (kind.make(&ctx), kind.make(&ctx));
    fill(kind, &src, 1);
    let graph = Graph::new(&ctx).unwrap();
    let node = graph.add_node(&kernel, [&src, &dst]).unwrap();

    // First verification, then a re-verification (deinit first).
    graph.verify().unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(calls.counts(), (1, 1, 0, 0), "{case}");
    check_local(local, &node);
    graph.verify().unwrap();
    assert_eq!(calls.counts(), (2, 2, 1, 0), "{case}");
    check_local(local, &node);
    // Init and deinit may set local data only when the kernel declared no size.
    assert_eq!(calls.init_sets_accepted.load(SeqCst), local != Local::Framework, "{case}");
    assert_eq!(calls.deinit_sets_accepted.load(SeqCst), local != Local::Framework, "{case}");
    // Not from outside a callback.
    assert!(node.set_local_data_size(10).is_err() && node.set_local_data_ptr(std::ptr::null_mut()).is_err());

    // Process: only the kernel function; the data passed through.
    assert_ne!(snapshot(&src), snapshot(&dst), "{case}: the output starts different");
    graph.process().unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(calls.counts(), (2, 2, 1, 1), "{case}");
    assert_eq!(snapshot(&src), snapshot(&dst), "{case}: the kernel's copy arrived");
    assert_eq!(src.meta(), dst.meta(), "{case}");

    // Valid rectangles through the callback: images shrink by 2, every pyramid level by 1.
    match (&src, &dst) {
        (Reference::Image(_), Reference::Image(d)) => assert_eq!(d.valid_region(), Rect::new(2, 2, 126, 126)),
        (Reference::Pyramid(_), Reference::Pyramid(d)) => {
            for l in 0..8 {
                let img = d.level(l).unwrap();
                let (w, h) = (img.width(), img.height());
                assert_eq!((w, h), (128 >> l, 128 >> l));
                let want = if w > 2 { Rect::new(1, 1, w - 1, h - 1) } else { Rect::full(w, h) };
                assert_eq!(img.valid_region(), want, "{case} level {l}");
            }
        }
        _ => {}
    }

    drop(node);
    drop(graph);
    assert_eq!(calls.counts(), (2, 2, 2, 1), "{case}: releasing the graph deinitializes");
    kernel.remove().unwrap();
}

#[test]
fn every_type_with_meta_from_the_exemplar_or_by_attribute_under_every_local_data_mode() {
    for kind in KINDS {
        for from_ref in [true, false] {
            for local in [Local::None, Local::Framework, Local::Kernel] {
                user_kernel_case(kind, from_ref, local);
            }
        }
    }
}

#[test]
fn every_type_inside_object_arrays() {
    for kind in KINDS {
        for from_ref in [true, false] {
            let case = format!("object array of {kind:?} from_ref={from_ref}");
            let ctx = Context::builder().threads(1).build().unwrap();
            let calls = Arc::new(Calls::default());
            let kernel = add_kernel(&ctx, kind, true, from_ref, Local::None, calls.clone());
            let exemplar = kind.make(&ctx);
            let src = ObjectArray::new(&ctx, exemplar.clone(), 20).unwrap();
            let dst = ObjectArray::new(&ctx, exemplar.clone(), 20).unwrap();
            assert_eq!((src.item_type(), src.count()), (kind.data_type(), 20));
            for (i, item) in src.items().iter().enumerate() {
                assert_eq!(item.meta(), exemplar.meta(), "{case}: items are made like the exemplar");
                fill(kind, item, i as u8);
            }
            let graph = Graph::new(&ctx).unwrap();
            graph.add_node(&kernel, [&src, &dst]).unwrap();
            graph.verify().unwrap_or_else(|e| panic!("{case}: {e}"));
            graph.process().unwrap_or_else(|e| panic!("{case}: {e}"));
            let (s, d) = (Reference::from(&src), Reference::from(&dst));
            assert_eq!(snapshot(&s), snapshot(&d), "{case}: every item copied");
            drop(graph);
            assert_eq!(calls.counts(), (1, 1, 1, 1), "{case}");
            kernel.remove().unwrap();
        }
    }
}
