//! The application side of the conformance type loop (`UserNode.testUserKernel`), shared by the
//! in-process port (`vx-core/tests/user_kernel_types.rs`) and the module port
//! (`tests/tests/module_data_objects.rs`): the ten kinds, objects of the conformance test's sizes,
//! distinct contents in, a comparable snapshot out.
#![allow(dead_code)]

use vx::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    Image,
    Array,
    Pyramid,
    Scalar,
    Distribution,
    Matrix,
    Threshold,
    Lut,
    Remap,
    Convolution,
}

pub(crate) const KINDS: [Kind; 10] = [
    Kind::Image,
    Kind::Array,
    Kind::Pyramid,
    Kind::Scalar,
    Kind::Distribution,
    Kind::Matrix,
    Kind::Threshold,
    Kind::Lut,
    Kind::Remap,
    Kind::Convolution,
];

impl Kind {
    pub(crate) fn data_type(self) -> DataType {
        match self {
            Kind::Image => DataType::Image,
            Kind::Array => DataType::Array,
            Kind::Pyramid => DataType::Pyramid,
            Kind::Scalar => DataType::Scalar,
            Kind::Distribution => DataType::Distribution,
            Kind::Matrix => DataType::Matrix,
            Kind::Threshold => DataType::Threshold,
            Kind::Lut => DataType::Lut,
            Kind::Remap => DataType::Remap,
            Kind::Convolution => DataType::Convolution,
        }
    }

    /// An object of the conformance test's sizes: 128×128 U8 images, 20 U8 items, 8 HALF levels,
    /// 36 bins over 0..360, 5×5 U8 matrices, binary U8 thresholds, 100 U8 entries, 128² → 256²
    /// remaps (and 5×3 convolutions, which the conformance test does not cover).
    pub(crate) fn make(self, ctx: &Context) -> Reference {
        match self {
            Kind::Image => Image::new(ctx, 128, 128, ImageFormat::U8).unwrap().into(),
            Kind::Array => Array::new(ctx, ArrayItemType::Scalar(ScalarType::Uint8), 20).unwrap().into(),
            Kind::Pyramid => Pyramid::new(ctx, 8, PYRAMID_SCALE_HALF, 128, 128, ImageFormat::U8).unwrap().into(),
            Kind::Scalar => Scalar::new(ctx, ScalarValue::Uint8(0)).unwrap().into(),
            Kind::Distribution => Distribution::new(ctx, 36, 0, 360).unwrap().into(),
            Kind::Matrix => Matrix::new(ctx, ScalarType::Uint8, 5, 5).unwrap().into(),
            Kind::Threshold => Threshold::new(ctx, ThresholdType::Binary, ScalarType::Uint8).unwrap().into(),
            Kind::Lut => Lut::new(ctx, ScalarType::Uint8, 100).unwrap().into(),
            Kind::Remap => Remap::new(ctx, 128, 128, 256, 256).unwrap().into(),
            Kind::Convolution => Convolution::new(ctx, 5, 3).unwrap().into(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The application side: distinct contents in, a comparable snapshot out.

pub(crate) fn fill(kind: Kind, r: &Reference, seed: u8) {
    let f = |i: usize| (i as u8).wrapping_mul(7).wrapping_add(seed);
    match (kind, r) {
        (Kind::Image, Reference::Image(i)) => {
            let px: Vec<u8> = (0..128 * 128).map(f).collect();
            i.copy_from(Rect::full(128, 128), 0, &px).unwrap();
        }
        (Kind::Array, Reference::Array(a)) => a.add_items(&(0..17).map(f).collect::<Vec<u8>>()).unwrap(),
        (Kind::Pyramid, Reference::Pyramid(p)) => {
            for l in 0..p.levels() {
                let img = p.level(l).unwrap();
                let px: Vec<u8> = (0..(img.width() * img.height()) as usize).map(|i| f(i + l)).collect();
                img.copy_from(Rect::full(img.width(), img.height()), 0, &px).unwrap();
            }
        }
        (Kind::Scalar, Reference::Scalar(s)) => s.set(seed.wrapping_add(42)).unwrap(),
        (Kind::Distribution, Reference::Distribution(d)) => {
            d.copy_from(&(0..36).map(|i| f(i) as u32 * 1000).collect::<Vec<_>>()).unwrap()
        }
        (Kind::Matrix, Reference::Matrix(m)) => m.copy_from(&(0..25).map(f).collect::<Vec<u8>>()).unwrap(),
        (Kind::Threshold, Reference::Threshold(t)) => {
            t.set_value(f(1) as i64).unwrap();
            t.set_range(10, 10 + seed as i64).unwrap();
            t.set_output(200, 3).unwrap();
        }
        (Kind::Lut, Reference::Lut(l)) => l.copy_from(&(0..100).map(f).collect::<Vec<u8>>()).unwrap(),
        (Kind::Remap, Reference::Remap(m)) => {
            let pts: Vec<Coordinates2dF> =
                (0..256 * 256).map(|i| Coordinates2dF { x: (i % 256) as f32 * 0.5, y: f(i) as f32 }).collect();
            m.copy_patch_from(Rect::full(256, 256), &pts).unwrap();
        }
        (Kind::Convolution, Reference::Convolution(c)) => {
            c.copy_from(&(0..15).map(|i| f(i) as i16 - 100).collect::<Vec<_>>()).unwrap();
            c.set_scale(8).unwrap();
        }
        (k, r) => panic!("{k:?} cannot fill {r:?}"),
    }
}

/// Everything the kernel is expected to have copied, printed.
pub(crate) fn snapshot(r: &Reference) -> String {
    match r {
        Reference::Image(i) => format!("{:?}", i.to_vec::<u8>().unwrap()),
        Reference::Array(a) => format!("{:?}", a.read_items::<u8>().unwrap()),
        Reference::Pyramid(p) => (0..p.levels()).map(|l| snapshot(&p.level(l).unwrap().into())).collect(),
        Reference::Scalar(s) => format!("{:?}", s.value().unwrap()),
        Reference::Distribution(d) => format!("{:?}", &*d.map().unwrap()),
        Reference::Matrix(m) => {
            let mut v = vec![0u8; 25];
            m.copy_to(&mut v).unwrap();
            format!("{v:?}")
        }
        Reference::Threshold(t) => format!("{:?}", t.values().unwrap()),
        Reference::Lut(l) => format!("{:?}", &*l.map::<u8>().unwrap()),
        Reference::Remap(m) => {
            let mut v = vec![Coordinates2dF::default(); 256 * 256];
            m.copy_patch_to(Rect::full(256, 256), &mut v).unwrap();
            format!("{v:?}")
        }
        Reference::Convolution(c) => {
            let mut v = vec![0i16; 15];
            c.copy_to(&mut v).unwrap();
            format!("{v:?} / {}", c.scale())
        }
        Reference::ObjectArray(o) => o.items().iter().map(snapshot).collect::<Vec<_>>().join("|"),
        other => panic!("no snapshot for {other:?}"),
    }
}
