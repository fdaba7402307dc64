//! Tests over the list of data-object kinds (issue 28 §5.1): every kind of `DataType::ALL`, plain
//! and as the item type of an object array (an object array of object arrays stays refused), is
//! virtual, copied through a graph by one generic copy kernel, pipelined frame by frame, and
//! completed or refused by verify's meta pass. Each kind is reached through `vx_tests::kinds`,
//! whose one exhaustive match over `DataType` fails to compile until a new kind has a sample and
//! its contents; each test ends with `assert_eq!(covered, …)` so no kind is skipped silently, and
//! every failure names the kind's label.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use vx::*;
use vx_tests::kinds::{self, copy_kernel, digest, fill, sample, sample_other_virtual, sample_virtual};

/// One case of the list: a kind, plain or as the item type of an object array.
#[derive(Clone, Copy, Debug)]
struct Case {
    kind: DataType,
    in_array: bool,
}

impl Case {
    /// Every kind plain, then every kind but object arrays as an object array's item type.
    fn all() -> Vec<Case> {
        let plain = DataType::ALL.into_iter().map(|kind| Case { kind, in_array: false });
        let items = DataType::ALL.into_iter().filter(|&k| k != DataType::ObjectArray);
        plain.chain(items.map(|kind| Case { kind, in_array: true })).collect()
    }
    /// The data type of the graph's objects.
    fn data_type(self) -> DataType {
        if self.in_array { DataType::ObjectArray } else { self.kind }
    }
    fn real(self, ctx: &Context) -> Reference {
        let r = sample(ctx, self.kind);
        if self.in_array { ObjectArray::new(ctx, &r, 2).unwrap().into() } else { r }
    }
    fn virtual_(self, ctx: &Context, g: &Graph) -> Reference {
        if self.in_array {
            ObjectArray::new_virtual(g, sample(ctx, self.kind), 2).unwrap().into()
        } else {
            sample_virtual(g, self.kind)
        }
    }
}

impl std::fmt::Display for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.in_array { write!(f, "object array of {}", self.kind) } else { write!(f, "{}", self.kind) }
    }
}

/// Plain cases and object-array cases, as `covered` must count them.
fn expected_cases() -> usize {
    2 * DataType::ALL.len() - 1
}

/// The generic copy kernel of each data type, registered once per context.
struct Copies<'c> {
    ctx: &'c Context,
    kernels: HashMap<DataType, Kernel>,
}

static NAMES: AtomicUsize = AtomicUsize::new(0);

impl<'c> Copies<'c> {
    fn new(ctx: &'c Context) -> Copies<'c> {
        Copies { ctx, kernels: HashMap::new() }
    }
    fn of(&mut self, t: DataType) -> Kernel {
        let ctx = self.ctx;
        self.kernels
            .entry(t)
            .or_insert_with(|| {
                let name = format!("ok.copy.{:#x}.{}", t.code(), NAMES.fetch_add(1, SeqCst));
                copy_kernel(ctx, &name, t).unwrap_or_else(|e| panic!("{t}: copy kernel: {e}"))
            })
            .clone()
    }
}

#[test]
fn virtual_everywhere() {
    let ctx = Context::new().unwrap();
    let g = Graph::new(&ctx).unwrap();
    // What other virtual objects give the application: an image's.
    let image = Image::new_virtual(&g, 4, 4, ImageFormat::U8).unwrap();
    let refused = image.to_vec::<u8>().unwrap_err().kind();
    assert_eq!(refused, ErrorKind::OptimizedAway);
    let mut covered = 0;
    for case in Case::all() {
        let v = case.virtual_(&ctx, &g);
        assert_eq!(v.data_type(), case.data_type(), "{case}");
        assert!(v.is_virtual(), "{case}: not virtual");
        let real = case.real(&ctx);
        let contents = kinds::random_contents(&real, 1);
        let e = kinds::contents(&v).expect_err(&format!("{case}: the application read a virtual object"));
        assert_eq!(e.kind(), refused, "{case}: {e}");
        let e = kinds::write(&v, &contents).expect_err(&format!("{case}: the application wrote a virtual object"));
        assert_eq!(e.kind(), refused, "{case}: {e}");
        // A real one round-trips through the same functions.
        kinds::write(&real, &contents).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(kinds::contents(&real).unwrap(), contents, "{case}: contents changed on the way");
        if case.in_array {
            let a = ObjectArray::from_reference(&v).unwrap();
            let item = a.item(1).unwrap();
            assert!(item.is_virtual(), "{case}: an item of a virtual object array is not virtual");
            assert_eq!(kinds::contents(&item).unwrap_err().kind(), refused, "{case}: item read");
        }
        covered += 1;
    }
    assert_eq!(covered, expected_cases());
    // An object array of object arrays stays refused, real and virtual.
    let inner = sample(&ctx, DataType::ObjectArray);
    assert_eq!(ObjectArray::new(&ctx, &inner, 2).unwrap_err().kind(), ErrorKind::InvalidType);
    assert_eq!(ObjectArray::new_virtual(&g, &inner, 2).unwrap_err().kind(), ErrorKind::InvalidType);
}

/// `input → copy → mid → copy → output`; the nodes.
fn chain(
    g: &Graph,
    copies: &mut Copies<'_>,
    t: DataType,
    input: &Reference,
    mid: &Reference,
    output: &Reference,
) -> (Node, Node) {
    let k = copies.of(t);
    let a = g.add_node(&k, [input.clone(), mid.clone()]).unwrap();
    let b = g.add_node(&k, [mid.clone(), output.clone()]).unwrap();
    (a, b)
}

#[test]
fn copied_through_a_graph() {
    let ctx = Context::new().unwrap();
    let mut copies = Copies::new(&ctx);
    let mut covered = 0;
    for case in Case::all() {
        let g = Graph::new(&ctx).unwrap();
        let (input, output) = (case.real(&ctx), case.real(&ctx));
        let mid = case.virtual_(&ctx, &g);
        chain(&g, &mut copies, case.data_type(), &input, &mid, &output);
        g.verify().unwrap_or_else(|e| panic!("{case}: verify: {e}"));
        for seed in [3, 4] {
            let want = fill(&input, seed).unwrap_or_else(|e| panic!("{case}: fill: {e}"));
            assert_eq!(digest(&input).unwrap(), want, "{case}: fill and digest disagree");
            g.process().unwrap_or_else(|e| panic!("{case}: process: {e}"));
            assert_eq!(digest(&output).unwrap(), want, "{case}, seed {seed}: the output differs from the input");
        }
        covered += 1;
    }
    assert_eq!(covered, expected_cases());
}

#[test]
fn pipelined() {
    const FRAMES: u64 = 6;
    let ctx =
        Context::builder().threads(2).target(TargetConfig::new("a")).target(TargetConfig::new("b")).build().unwrap();
    let mut copies = Copies::new(&ctx);
    let mut covered = 0;
    for case in Case::all() {
        let g = Graph::new(&ctx).unwrap();
        let (input, output) = (case.real(&ctx), case.real(&ctx));
        let mid = case.virtual_(&ctx, &g);
        let (a, b) = chain(&g, &mut copies, case.data_type(), &input, &mid, &output);
        a.set_target("a").unwrap();
        b.set_target("b").unwrap();
        let (p_in, p_out) = (g.add_parameter(&a, 0).unwrap(), g.add_parameter(&b, 1).unwrap());
        let ins: Vec<Reference> = (0..FRAMES).map(|_| case.real(&ctx)).collect();
        let outs: Vec<Reference> = (0..FRAMES).map(|_| case.real(&ctx)).collect();
        g.set_schedule_config(
            ScheduleConfig::queue_auto().depth(3).queue(p_in, ins.clone()).queue(p_out, outs.clone()),
        )
        .unwrap_or_else(|e| panic!("{case}: schedule: {e}"));
        let mut want = Vec::new();
        for (f, (i, o)) in ins.iter().zip(&outs).enumerate() {
            want.push(fill(i, 100 + f as u64).unwrap_or_else(|e| panic!("{case}: fill: {e}")));
            g.enqueue(p_in, i).unwrap_or_else(|e| panic!("{case}: enqueue: {e}"));
            g.enqueue(p_out, o).unwrap();
        }
        for (f, want) in want.iter().enumerate() {
            let done = g.dequeue(p_out).unwrap();
            done.result.clone().unwrap_or_else(|e| panic!("{case}, frame {f}: {e}"));
            assert_eq!(done.frame, f as u64, "{case}");
            assert_eq!(
                digest(&done.reference).unwrap(),
                *want,
                "{case}, frame {f}: the output is not its frame's input"
            );
        }
        g.wait().unwrap();
        covered += 1;
    }
    assert_eq!(covered, expected_cases());
}

/// A virtual object of kind `t` whose meta data a validator completes (sizes, formats or types
/// left unknown), or `None` for kinds whose virtual objects have fixed meta data.
fn unknown_virtual(ctx: &Context, g: &Graph, t: DataType) -> Option<Reference> {
    let _ = ctx;
    Some(match t {
        DataType::Image => Image::new_virtual(g, 0, 0, ImageFormat::Virtual).unwrap().into(),
        DataType::Array => Array::new_virtual(g, None, 0).unwrap().into(),
        DataType::Pyramid => Pyramid::new_virtual(g, 2, PYRAMID_SCALE_HALF, 0, 0, ImageFormat::Virtual).unwrap().into(),
        DataType::Tensor => Tensor::new_virtual(g, &[2, 3, 4], None, 0).unwrap().into(),
        DataType::Scalar
        | DataType::UserDataObject
        | DataType::Matrix
        | DataType::Convolution
        | DataType::Lut
        | DataType::Distribution
        | DataType::Threshold
        | DataType::Remap
        | DataType::ObjectArray
        | DataType::RawImage => return None,
    })
}

/// The error kind verify's meta pass gives a virtual object of kind `t` whose declared meta data
/// differs from the validator's (`sample_other_virtual` against `sample`).
fn mismatch(t: DataType) -> ErrorKind {
    match t {
        DataType::Scalar | DataType::Threshold => ErrorKind::InvalidType,
        DataType::Array => ErrorKind::NotCompatible,
        DataType::Image
        | DataType::UserDataObject
        | DataType::Matrix
        | DataType::Convolution
        | DataType::Lut
        | DataType::Distribution
        | DataType::Pyramid
        | DataType::Remap
        | DataType::ObjectArray
        | DataType::Tensor
        | DataType::RawImage => ErrorKind::InvalidDimension,
    }
}

#[test]
fn completed() {
    let ctx = Context::new().unwrap();
    let mut copies = Copies::new(&ctx);
    let (mut covered, mut completable) = (0, 0);
    for t in DataType::ALL {
        covered += 1;
        let g = Graph::new(&ctx).unwrap();
        let Some(mid) = unknown_virtual(&ctx, &g, t) else { continue };
        completable += 1;
        let (input, output) = (sample(&ctx, t), sample(&ctx, t));
        chain(&g, &mut copies, t, &input, &mid, &output);
        g.verify().unwrap_or_else(|e| panic!("{t}: verify did not complete the virtual object: {e}"));
        assert_eq!(mid.meta(), input.meta(), "{t}: completed to other meta data");
        let want = fill(&input, 9).unwrap();
        g.process().unwrap_or_else(|e| panic!("{t}: process: {e}"));
        assert_eq!(digest(&output).unwrap(), want, "{t}: the output differs from the input");
    }
    assert_eq!(covered, DataType::ALL.len());
    assert_eq!(completable, 4, "image, array, pyramid, tensor");
}

#[test]
fn fixed() {
    let ctx = Context::new().unwrap();
    let mut copies = Copies::new(&ctx);
    let mut covered = 0;
    for case in Case::all() {
        let g = Graph::new(&ctx).unwrap();
        let input = case.real(&ctx);
        let other = if case.in_array {
            // An object array of another count: the array's own meta data.
            ObjectArray::new_virtual(&g, sample(&ctx, case.kind), 3).unwrap().into()
        } else {
            sample_other_virtual(&g, case.kind)
        };
        assert_ne!(other.meta(), input.meta(), "{case}: the other sample has the same meta data");
        g.add_node(&copies.of(case.data_type()), [input.clone(), other.clone()]).unwrap();
        let e = g.verify().expect_err(&format!("{case}: a mismatching virtual output was accepted"));
        let want = if case.in_array { ErrorKind::InvalidDimension } else { mismatch(case.kind) };
        assert_eq!(e.kind(), want, "{case}: {e}");
        covered += 1;
    }
    assert_eq!(covered, expected_cases());
}
