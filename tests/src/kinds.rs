//! Every data-object kind through the public API, for the tests over the list of kinds (issue 28
//! §5): a small real sample of each kind (and a virtual one of the same meta data, and one whose
//! meta data differs), its contents as canonical bytes read and written by the application or by
//! a kernel of the graph, a seeded fill, a content digest, and one generic copy kernel that copies
//! any kind (meta data from its input, contents through `KernelView`).
//!
//! The one place that names the kinds is `by_kind!`, an exhaustive `match` over [`DataType`]:
//! a kind added to the list (`for_each_kind!`) fails to compile here until it has a sample and a
//! [`Contents`] impl, so the list tests and the random graphs cover it the day it is declared.
//! (vx-core has no kind-generic "copy the contents of any object" in its public API; this kit
//! builds one from each kind's typed copies.)
//!
//! Canonical contents (fixed length for a given meta): an image's plane-0 rows (U8 only); a
//! scalar's value, little-endian; an array's item count (u32) then `capacity` items, zeros past
//! the count; a threshold's five values (i64 each); a pyramid's levels; an object array's items in
//! order; every other kind its elements in their order, little-endian.

use vx::*;

/// `$f::<K>($args)` for the handle type `K` of data type `$t` (the one exhaustive match).
macro_rules! by_kind {
    ($t:expr, $f:ident ( $($a:expr),* )) => {
        match $t {
            DataType::Image => $f::<Image>($($a),*),
            DataType::Scalar => $f::<Scalar>($($a),*),
            DataType::Array => $f::<Array>($($a),*),
            DataType::UserDataObject => $f::<UserDataObject>($($a),*),
            DataType::Matrix => $f::<Matrix>($($a),*),
            DataType::Convolution => $f::<Convolution>($($a),*),
            DataType::Lut => $f::<Lut>($($a),*),
            DataType::Distribution => $f::<Distribution>($($a),*),
            DataType::Threshold => $f::<Threshold>($($a),*),
            DataType::Pyramid => $f::<Pyramid>($($a),*),
            DataType::Remap => $f::<Remap>($($a),*),
            DataType::ObjectArray => $f::<ObjectArray>($($a),*),
            DataType::Tensor => $f::<Tensor>($($a),*),
            DataType::RawImage => $f::<RawImage>($($a),*),
        }
    };
}

/// A kind's sample metas: `sample` (real), `virtual_` (same meta, virtual), `other` (real, meta
/// differs), `other_virtual`.
pub trait Samples: DataObject + Into<Reference> {
    /// A small real object.
    fn sample(ctx: &Context) -> Self;
    /// A virtual object of `sample`'s meta data.
    fn sample_virtual(g: &Graph) -> Self;
    /// A real object whose meta data differs from `sample`'s.
    fn other(ctx: &Context) -> Self;
    /// A virtual object of `other`'s meta data.
    fn other_virtual(g: &Graph) -> Self;
}

const W: u32 = 8;
const H: u32 = 4;

fn raw_meta(h: u32) -> RawImageMeta {
    RawImageMeta::new(W, h, RawImageFormat::BIT8)
}

macro_rules! samples {
    ($($T:ty { sample: |$c:ident| $s:expr, virtual: |$g:ident| $v:expr, other: |$c2:ident| $o:expr, other_virtual: |$g2:ident| $ov:expr })*) => {$(
        impl Samples for $T {
            fn sample($c: &Context) -> Self { $s.unwrap() }
            fn sample_virtual($g: &Graph) -> Self { $v.unwrap() }
            fn other($c2: &Context) -> Self { $o.unwrap() }
            fn other_virtual($g2: &Graph) -> Self { $ov.unwrap() }
        }
    )*};
}

samples! {
    Image {
        sample: |c| Image::new(c, W, H, ImageFormat::U8),
        virtual: |g| Image::new_virtual(g, W, H, ImageFormat::U8),
        other: |c| Image::new(c, W, H + 1, ImageFormat::U8),
        other_virtual: |g| Image::new_virtual(g, W, H + 1, ImageFormat::U8)
    }
    Scalar {
        sample: |c| Scalar::new(c, ScalarValue::Int16(-3)),
        virtual: |g| Scalar::new_virtual(g, ScalarType::Int16),
        other: |c| Scalar::new(c, ScalarValue::Int32(7)),
        other_virtual: |g| Scalar::new_virtual(g, ScalarType::Int32)
    }
    Array {
        sample: |c| Array::new(c, ArrayItemType::Scalar(ScalarType::Uint16), 6),
        virtual: |g| Array::new_virtual(g, Some(ArrayItemType::Scalar(ScalarType::Uint16)), 6),
        other: |c| Array::new(c, ArrayItemType::Scalar(ScalarType::Uint16), 3),
        other_virtual: |g| Array::new_virtual(g, Some(ArrayItemType::Scalar(ScalarType::Uint16)), 3)
    }
    UserDataObject {
        sample: |c| UserDataObject::new(c, "pair", 16),
        virtual: |g| UserDataObject::new_virtual(g, "pair", 16),
        other: |c| UserDataObject::new(c, "pair", 8),
        other_virtual: |g| UserDataObject::new_virtual(g, "pair", 8)
    }
    Matrix {
        sample: |c| Matrix::new(c, ScalarType::Int32, 3, 2),
        virtual: |g| Matrix::new_virtual(g, ScalarType::Int32, 3, 2),
        other: |c| Matrix::new(c, ScalarType::Int32, 2, 2),
        other_virtual: |g| Matrix::new_virtual(g, ScalarType::Int32, 2, 2)
    }
    Convolution {
        sample: |c| Convolution::new(c, 3, 3),
        virtual: |g| Convolution::new_virtual(g, 3, 3),
        other: |c| Convolution::new(c, 5, 3),
        other_virtual: |g| Convolution::new_virtual(g, 5, 3)
    }
    Lut {
        sample: |c| Lut::new(c, ScalarType::Uint8, 256),
        virtual: |g| Lut::new_virtual(g, ScalarType::Uint8, 256),
        other: |c| Lut::new(c, ScalarType::Uint8, 128),
        other_virtual: |g| Lut::new_virtual(g, ScalarType::Uint8, 128)
    }
    Distribution {
        sample: |c| Distribution::new(c, 16, 0, 256),
        virtual: |g| Distribution::new_virtual(g, 16, 0, 256),
        other: |c| Distribution::new(c, 8, 0, 256),
        other_virtual: |g| Distribution::new_virtual(g, 8, 0, 256)
    }
    Threshold {
        sample: |c| Threshold::for_image(c, ThresholdType::Range, ImageFormat::U8, ImageFormat::U8),
        virtual: |g| Threshold::new_virtual_for_image(g, ThresholdType::Range, ImageFormat::U8, ImageFormat::U8),
        other: |c| Threshold::for_image(c, ThresholdType::Binary, ImageFormat::U8, ImageFormat::U8),
        other_virtual: |g| Threshold::new_virtual_for_image(g, ThresholdType::Binary, ImageFormat::U8, ImageFormat::U8)
    }
    Pyramid {
        sample: |c| Pyramid::new(c, 2, PYRAMID_SCALE_HALF, W, H, ImageFormat::U8),
        virtual: |g| Pyramid::new_virtual(g, 2, PYRAMID_SCALE_HALF, W, H, ImageFormat::U8),
        other: |c| Pyramid::new(c, 3, PYRAMID_SCALE_HALF, W, H, ImageFormat::U8),
        other_virtual: |g| Pyramid::new_virtual(g, 3, PYRAMID_SCALE_HALF, W, H, ImageFormat::U8)
    }
    Remap {
        sample: |c| Remap::new(c, W, H, W, H),
        virtual: |g| Remap::new_virtual(g, W, H, W, H),
        other: |c| Remap::new(c, W, H, W / 2, H),
        other_virtual: |g| Remap::new_virtual(g, W, H, W / 2, H)
    }
    ObjectArray {
        sample: |c| ObjectArray::new(c, Image::new(c, W, H, ImageFormat::U8).unwrap(), 2),
        virtual: |g| ObjectArray::new_virtual(g, Image::new(g, W, H, ImageFormat::U8).unwrap(), 2),
        other: |c| ObjectArray::new(c, Image::new(c, W, H, ImageFormat::U8).unwrap(), 3),
        other_virtual: |g| ObjectArray::new_virtual(g, Image::new(g, W, H, ImageFormat::U8).unwrap(), 3)
    }
    Tensor {
        sample: |c| Tensor::new(c, &[2, 3, 4], ScalarType::Int8, 0),
        virtual: |g| Tensor::new_virtual(g, &[2, 3, 4], Some(ScalarType::Int8), 0),
        other: |c| Tensor::new(c, &[2, 3, 5], ScalarType::Int8, 0),
        other_virtual: |g| Tensor::new_virtual(g, &[2, 3, 5], Some(ScalarType::Int8), 0)
    }
    RawImage {
        sample: |c| RawImage::new(c, &raw_meta(H)),
        virtual: |g| RawImage::new_virtual(g, &raw_meta(H)),
        other: |c| RawImage::new(c, &raw_meta(H + 2)),
        other_virtual: |g| RawImage::new_virtual(g, &raw_meta(H + 2))
    }
}

fn sample_as<K: Samples>(ctx: &Context) -> Reference {
    K::sample(ctx).into()
}
fn sample_virtual_as<K: Samples>(g: &Graph) -> Reference {
    K::sample_virtual(g).into()
}
fn other_as<K: Samples>(ctx: &Context) -> Reference {
    K::other(ctx).into()
}
fn other_virtual_as<K: Samples>(g: &Graph) -> Reference {
    K::other_virtual(g).into()
}

/// A small real object of kind `t`.
pub fn sample(ctx: &Context, t: DataType) -> Reference {
    by_kind!(t, sample_as(ctx))
}
/// A virtual object of kind `t` in `g`, of the same meta data as [`sample`].
pub fn sample_virtual(g: &Graph, t: DataType) -> Reference {
    by_kind!(t, sample_virtual_as(g))
}
/// A real object of kind `t` whose meta data differs from [`sample`]'s.
pub fn sample_other(ctx: &Context, t: DataType) -> Reference {
    by_kind!(t, other_as(ctx))
}
/// A virtual object of kind `t` in `g` whose meta data differs from [`sample`]'s.
pub fn sample_other_virtual(g: &Graph, t: DataType) -> Reference {
    by_kind!(t, other_virtual_as(g))
}

/// A kind's contents as canonical bytes, read and written by the application (`&Self`, refused
/// when virtual) or by a kernel of the graph (`KernelView`).
pub trait Contents: Samples {
    /// The application's read (refused when virtual).
    fn read(o: &Self) -> Result<Vec<u8>>;
    /// The application's write (refused when virtual).
    fn write(o: &Self, b: &[u8]) -> Result<()>;
    /// A kernel's read.
    fn kread(o: KernelView<'_, Self>) -> Result<Vec<u8>>;
    /// A kernel's write.
    fn kwrite(o: KernelView<'_, Self>, b: &[u8]) -> Result<()>;
    /// Bytes of the canonical contents.
    fn len(o: &Self) -> usize;
    /// Valid canonical contents drawn from `rng`.
    fn random(o: &Self, rng: &mut Rng) -> Vec<u8> {
        rng.bytes(Self::len(o))
    }
}

/// splitmix64.
pub struct Rng(pub u64);

impl Rng {
    /// The next draw.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// `n` drawn bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// Little-endian bytes of element types.
trait Le: Sized + Copy + Default {
    const N: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}
macro_rules! le {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const N: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()); }
            fn get(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().expect("element bytes")) }
        }
    )*};
}
le!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

fn encode<T: Le>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * T::N);
    v.iter().for_each(|x| x.put(&mut out));
    out
}
fn decode<T: Le>(b: &[u8]) -> Vec<T> {
    b.chunks_exact(T::N).map(T::get).collect()
}

/// `$body` with `$E` the Rust type of element type `$st` (the integer and float types).
macro_rules! typed {
    ($st:expr, $E:ident => $body:expr) => {
        match $st {
            ScalarType::Uint8 => {
                type $E = u8;
                $body
            }
            ScalarType::Int8 => {
                type $E = i8;
                $body
            }
            ScalarType::Uint16 => {
                type $E = u16;
                $body
            }
            ScalarType::Int16 => {
                type $E = i16;
                $body
            }
            ScalarType::Uint32 => {
                type $E = u32;
                $body
            }
            ScalarType::Int32 => {
                type $E = i32;
                $body
            }
            ScalarType::Uint64 => {
                type $E = u64;
                $body
            }
            ScalarType::Int64 => {
                type $E = i64;
                $body
            }
            ScalarType::Float32 => {
                type $E = f32;
                $body
            }
            ScalarType::Float64 => {
                type $E = f64;
                $body
            }
            other => Err(Error::new(ErrorKind::NotSupported, format!("test kit: element type {other}"))),
        }
    };
}

/// `Contents` for kinds whose application and kernel copies have the same names: `read`/`write`
/// bodies over `$o` (a `&T` or a `KernelView<T>`).
macro_rules! same_both_sides {
    ($T:ty, len |$l:ident| $len:expr, read |$o:ident| $read:expr, write |$w:ident, $b:ident| $write:expr $(, random |$ro:ident, $rng:ident| $random:expr)?) => {
        // `&o` is a `&&T` on the application's side and the `&T` of a `KernelView` on the kernel's.
        #[allow(clippy::needless_borrow)]
        impl Contents for $T {
            fn read($o: &Self) -> Result<Vec<u8>> { $read }
            fn write($w: &Self, $b: &[u8]) -> Result<()> { $write }
            fn kread($o: KernelView<'_, Self>) -> Result<Vec<u8>> { $read }
            fn kwrite($w: KernelView<'_, Self>, $b: &[u8]) -> Result<()> { $write }
            fn len($l: &Self) -> usize { $len }
            $(fn random($ro: &Self, $rng: &mut Rng) -> Vec<u8> { $random })?
        }
    };
}

fn u8_image(img: &Image) -> Result<()> {
    if img.format() != ImageFormat::U8 {
        return Err(Error::new(ErrorKind::NotSupported, format!("test kit: image format {}", img.format())));
    }
    Ok(())
}

impl Contents for Image {
    fn read(o: &Self) -> Result<Vec<u8>> {
        u8_image(o)?;
        o.to_vec::<u8>()
    }
    fn write(o: &Self, b: &[u8]) -> Result<()> {
        u8_image(o)?;
        o.copy_from(Rect::full(o.width(), o.height()), 0, b)
    }
    fn kread(o: KernelView<'_, Self>) -> Result<Vec<u8>> {
        u8_image(&o)?;
        let p = o.map::<u8>(o.full_rect(), 0)?;
        Ok((0..o.height()).flat_map(|y| p.row(y).to_vec()).collect())
    }
    fn kwrite(o: KernelView<'_, Self>, b: &[u8]) -> Result<()> {
        u8_image(&o)?;
        let mut p = o.map_mut::<u8>(o.full_rect(), 0)?;
        let w = o.width() as usize;
        for y in 0..o.height() {
            p.row_mut(y).copy_from_slice(&b[y as usize * w..][..w]);
        }
        Ok(())
    }
    fn len(o: &Self) -> usize {
        (o.width() * o.height()) as usize
    }
}

fn scalar_bytes(v: ScalarValue) -> Vec<u8> {
    match v {
        ScalarValue::Char(x) | ScalarValue::Uint8(x) => vec![x],
        ScalarValue::Int8(x) => encode(&[x]),
        ScalarValue::Int16(x) => encode(&[x]),
        ScalarValue::Uint16(x) => encode(&[x]),
        ScalarValue::Int32(x) | ScalarValue::Enum(x) => encode(&[x]),
        ScalarValue::Uint32(x) | ScalarValue::DfImage(x) => encode(&[x]),
        ScalarValue::Int64(x) => encode(&[x]),
        ScalarValue::Uint64(x) => encode(&[x]),
        ScalarValue::Size(x) => encode(&[x as u64]),
        ScalarValue::Float32(x) => encode(&[x]),
        ScalarValue::Float64(x) => encode(&[x]),
        ScalarValue::Bool(x) => vec![x as u8],
    }
}

fn scalar_value(t: ScalarType, b: &[u8]) -> ScalarValue {
    match t {
        ScalarType::Char => ScalarValue::Char(b[0]),
        ScalarType::Uint8 => ScalarValue::Uint8(b[0]),
        ScalarType::Int8 => ScalarValue::Int8(i8::get(b)),
        ScalarType::Int16 => ScalarValue::Int16(i16::get(b)),
        ScalarType::Uint16 => ScalarValue::Uint16(u16::get(b)),
        ScalarType::Int32 => ScalarValue::Int32(i32::get(b)),
        ScalarType::Enum => ScalarValue::Enum(i32::get(b)),
        ScalarType::Uint32 => ScalarValue::Uint32(u32::get(b)),
        ScalarType::DfImage => ScalarValue::DfImage(u32::get(b)),
        ScalarType::Int64 => ScalarValue::Int64(i64::get(b)),
        ScalarType::Uint64 => ScalarValue::Uint64(u64::get(b)),
        ScalarType::Size => ScalarValue::Size(u64::get(b) as usize),
        ScalarType::Float32 => ScalarValue::Float32(f32::get(b)),
        ScalarType::Float64 => ScalarValue::Float64(f64::get(b)),
        ScalarType::Bool => ScalarValue::Bool(b[0] != 0),
    }
}

same_both_sides!(
    Scalar,
    len | o | o.scalar_type().size(),
    read | o | o.value().map(scalar_bytes),
    write | o,
    b | o.set_value(scalar_value(o.scalar_type(), b)),
    random | o,
    rng | {
        let small = (rng.next_u64() % 100) as i64 - 50;
        match o.scalar_type() {
            ScalarType::Bool => vec![(small & 1) as u8],
            ScalarType::Float32 => encode(&[small as f32]),
            ScalarType::Float64 => encode(&[small as f64]),
            _ => rng.bytes(o.scalar_type().size()),
        }
    }
);

fn array_item(o: &Array) -> Result<ScalarType> {
    match o.item_type() {
        Some(ArrayItemType::Scalar(t)) => Ok(t),
        other => Err(Error::new(ErrorKind::NotSupported, format!("test kit: array items {other:?}"))),
    }
}

same_both_sides!(
    Array,
    len | o | 4 + o.capacity() * o.item_size(),
    read | o | {
        let t = array_item(&o)?;
        let mut out = encode(&[o.num_items() as u32]);
        typed!(t, E => { out.extend(encode(&o.read_items::<E>()?)); Ok(()) })?;
        out.resize(4 + o.capacity() * o.item_size(), 0);
        Ok(out)
    },
    write | o,
    b | {
        let t = array_item(&o)?;
        let n = u32::get(&b[..4]) as usize;
        o.truncate(0)?;
        typed!(t, E => o.add_items::<E>(&decode::<E>(&b[4..])[..n]))
    },
    random | o,
    rng | {
        let n = (rng.next_u64() % (o.capacity() as u64 + 1)) as usize;
        let mut out = encode(&[n as u32]);
        out.extend(rng.bytes(n * o.item_size()));
        out.resize(4 + o.capacity() * o.item_size(), 0);
        out
    }
);

same_both_sides!(
    UserDataObject,
    len | o | o.size(),
    read | o | {
        let mut out = vec![0u8; o.size()];
        o.copy_to(0, &mut out)?;
        Ok(out)
    },
    write | o,
    b | o.copy_from(0, b)
);

/// `rows × columns` elements of `t`, through `copy_to`/`copy_from` of element type `E`.
macro_rules! elements {
    ($o:ident, $t:expr, $n:expr) => {{
        typed!($t, E => {
            let mut out = vec![E::default(); $n];
            $o.copy_to::<E>(&mut out)?;
            Ok(encode(&out))
        })
    }};
}

same_both_sides!(
    Matrix,
    len | o | o.rows() * o.columns() * o.element_type().size(),
    read | o | elements!(o, o.element_type(), o.rows() * o.columns()),
    write | o,
    b | typed!(o.element_type(), E => o.copy_from::<E>(&decode::<E>(b))),
    random | o,
    rng | {
        let n = o.rows() * o.columns();
        match o.element_type() {
            ScalarType::Float32 => encode(&(0..n).map(|_| (rng.next_u64() % 1000) as f32).collect::<Vec<_>>()),
            t => rng.bytes(n * t.size()),
        }
    }
);

same_both_sides!(
    Convolution,
    len | o | o.rows() * o.columns() * 2,
    read | o | {
        let mut out = vec![0i16; o.rows() * o.columns()];
        o.copy_to(&mut out)?;
        Ok(encode(&out))
    },
    write | o,
    b | o.copy_from(&decode::<i16>(b))
);

same_both_sides!(
    Lut,
    len | o | o.count() * o.element_type().size(),
    read | o | elements!(o, o.element_type(), o.count()),
    write | o,
    b | typed!(o.element_type(), E => o.copy_from::<E>(&decode::<E>(b)))
);

same_both_sides!(
    Distribution,
    len | o | o.bins() * 4,
    read | o | {
        let mut out = vec![0u32; o.bins()];
        o.copy_to(&mut out)?;
        Ok(encode(&out))
    },
    write | o,
    b | o.copy_from(&decode::<u32>(b))
);

same_both_sides!(
    Threshold,
    len | _o | 40,
    read | o | {
        let v = o.values()?;
        Ok(encode(&[v.value, v.lower, v.upper, v.true_value, v.false_value]))
    },
    write | o,
    b | {
        let v = decode::<i64>(b);
        o.set_value(v[0])?;
        o.set_range(v[1], v[2])?;
        o.set_output(v[3], v[4])
    },
    random | _o,
    rng | {
        // In U8 range (the samples' formats), lower <= upper.
        let mut v: Vec<i64> = (0..5).map(|_| (rng.next_u64() % 256) as i64).collect();
        if v[1] > v[2] {
            v.swap(1, 2);
        }
        encode(&v)
    }
);

fn remap_rect(o: &Remap) -> Rect {
    Rect::full(o.destination_width(), o.destination_height())
}

same_both_sides!(
    Remap,
    len | o | (o.destination_width() * o.destination_height()) as usize * 8,
    read | o | {
        let mut pts =
            vec![Coordinates2dF { x: 0.0, y: 0.0 }; (o.destination_width() * o.destination_height()) as usize];
        o.copy_patch_to(remap_rect(&o), &mut pts)?;
        Ok(encode(&pts.iter().flat_map(|p| [p.x, p.y]).collect::<Vec<f32>>()))
    },
    write | o,
    b | {
        let v = decode::<f32>(b);
        let pts: Vec<Coordinates2dF> = v.chunks_exact(2).map(|p| Coordinates2dF { x: p[0], y: p[1] }).collect();
        o.copy_patch_from(remap_rect(&o), &pts)
    },
    random | o,
    rng | {
        let n = (o.destination_width() * o.destination_height()) as usize * 2;
        encode(&(0..n).map(|_| (rng.next_u64() % 64) as f32 / 4.0).collect::<Vec<f32>>())
    }
);

fn tensor_type(o: &Tensor) -> Result<ScalarType> {
    o.data_type().ok_or_else(|| Error::new(ErrorKind::InvalidParameters, "test kit: a tensor without data type"))
}

same_both_sides!(
    Tensor,
    len | o | o.dims().iter().product::<usize>() * o.data_type().map_or(0, |t| t.size()),
    read | o | {
        let (dims, t) = (o.dims(), tensor_type(&o)?);
        let start = vec![0; dims.len()];
        typed!(t, E => {
            let mut out = vec![E::default(); dims.iter().product()];
            o.copy_patch_to::<E>(&start, &dims, &mut out)?;
            Ok(encode(&out))
        })
    },
    write | o,
    b | {
        let (dims, t) = (o.dims(), tensor_type(&o)?);
        let start = vec![0; dims.len()];
        typed!(t, E => o.copy_patch_from::<E>(&start, &dims, &decode::<E>(b)))
    },
    random | o,
    rng | {
        let n = o.dims().iter().product::<usize>();
        match o.data_type() {
            Some(ScalarType::Float32) => encode(&(0..n).map(|_| (rng.next_u64() % 1000) as f32).collect::<Vec<_>>()),
            t => rng.bytes(n * t.map_or(0, |t| t.size())),
        }
    }
);

same_both_sides!(
    RawImage,
    len | o | o.size(),
    read | o | {
        let mut out = vec![0u8; o.size()];
        o.copy_bytes_to(&mut out)?;
        Ok(out)
    },
    write | o,
    b | o.copy_bytes_from(b)
);

impl Contents for Pyramid {
    fn read(o: &Self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for l in 0..o.levels() {
            out.extend(Image::read(&o.level(l)?)?);
        }
        Ok(out)
    }
    fn write(o: &Self, b: &[u8]) -> Result<()> {
        let mut at = 0;
        for l in 0..o.levels() {
            let level = o.level(l)?;
            let n = Image::len(&level);
            Image::write(&level, &b[at..at + n])?;
            at += n;
        }
        Ok(())
    }
    fn kread(o: KernelView<'_, Self>) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for l in 0..o.levels() {
            out.extend(Image::kread(o.level(l)?)?);
        }
        Ok(out)
    }
    fn kwrite(o: KernelView<'_, Self>, b: &[u8]) -> Result<()> {
        let mut at = 0;
        for l in 0..o.levels() {
            let level = o.level(l)?;
            let n = Image::len(&level);
            Image::kwrite(level, &b[at..at + n])?;
            at += n;
        }
        Ok(())
    }
    fn len(o: &Self) -> usize {
        o.meta().level_sizes().iter().map(|&(w, h)| (w * h) as usize).sum()
    }
}

fn item_len_as<K: Contents>(r: &Reference) -> usize {
    K::len(K::from_reference(r).expect("the item's kind"))
}
fn item_read_as<K: Contents>(r: &Reference) -> Result<Vec<u8>> {
    K::read(K::from_reference(r).expect("the item's kind"))
}
fn item_write_as<K: Contents>(r: &Reference, b: &[u8]) -> Result<()> {
    K::write(K::from_reference(r).expect("the item's kind"), b)
}
fn item_random_as<K: Contents>(r: &Reference, rng: &mut Rng) -> Vec<u8> {
    K::random(K::from_reference(r).expect("the item's kind"), rng)
}
fn item_kread_as<K: Contents>(a: KernelView<'_, ObjectArray>, j: usize) -> Result<Vec<u8>> {
    K::kread(a.item::<K>(j)?)
}
fn item_kwrite_as<K: Contents>(a: KernelView<'_, ObjectArray>, j: usize, b: &[u8]) -> Result<()> {
    K::kwrite(a.item::<K>(j)?, b)
}

impl Contents for ObjectArray {
    fn read(o: &Self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for r in o.items() {
            out.extend(by_kind!(o.item_type(), item_read_as(r))?);
        }
        Ok(out)
    }
    fn write(o: &Self, b: &[u8]) -> Result<()> {
        let mut at = 0;
        for r in o.items() {
            let n = by_kind!(o.item_type(), item_len_as(r));
            by_kind!(o.item_type(), item_write_as(r, &b[at..at + n]))?;
            at += n;
        }
        Ok(())
    }
    fn kread(o: KernelView<'_, Self>) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for j in 0..o.count() {
            out.extend(by_kind!(o.item_type(), item_kread_as(o, j))?);
        }
        Ok(out)
    }
    fn kwrite(o: KernelView<'_, Self>, b: &[u8]) -> Result<()> {
        let mut at = 0;
        for (j, r) in o.items().iter().enumerate() {
            let n = by_kind!(o.item_type(), item_len_as(r));
            by_kind!(o.item_type(), item_kwrite_as(o, j, &b[at..at + n]))?;
            at += n;
        }
        Ok(())
    }
    fn len(o: &Self) -> usize {
        o.items().iter().map(|r| by_kind!(o.item_type(), item_len_as(r))).sum()
    }
    fn random(o: &Self, rng: &mut Rng) -> Vec<u8> {
        o.items().iter().flat_map(|r| by_kind!(o.item_type(), item_random_as(r, rng))).collect()
    }
}

/// The application's view of `r`'s contents (refused with `OptimizedAway` when virtual).
pub fn contents(r: &Reference) -> Result<Vec<u8>> {
    by_kind!(r.data_type(), item_read_as(r))
}
/// Write canonical contents `b` into `r` as the application.
pub fn write(r: &Reference, b: &[u8]) -> Result<()> {
    by_kind!(r.data_type(), item_write_as(r, b))
}
/// Valid canonical contents for `r`, drawn from `seed`.
pub fn random_contents(r: &Reference, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed ^ 0x6A09_E667_F3BC_C908);
    by_kind!(r.data_type(), item_random_as(r, &mut rng))
}
/// Fill `r` (as the application) with contents drawn from `seed`; gives their digest.
pub fn fill(r: &Reference, seed: u64) -> Result<u64> {
    let b = random_contents(r, seed);
    write(r, &b)?;
    Ok(digest_bytes(r.data_type(), &b))
}
/// The digest of canonical contents `b` of an object of kind `t` (FNV-1a 64).
pub fn digest_bytes(t: DataType, b: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ t.code() as u64;
    for &x in b.iter().chain(&(b.len() as u64).to_le_bytes()) {
        h = (h ^ x as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}
/// The digest of `r`'s contents, read by the application.
pub fn digest(r: &Reference) -> Result<u64> {
    contents(r).map(|b| digest_bytes(r.data_type(), &b))
}

fn kread_param_as<K: Contents>(pc: &ProcessContext<'_>, i: u32) -> Result<Vec<u8>> {
    K::kread(pc.object::<K>(i)?)
}
fn kwrite_param_as<K: Contents>(pc: &ProcessContext<'_>, i: u32, b: &[u8]) -> Result<()> {
    K::kwrite(pc.object::<K>(i)?, b)
}

/// A kernel's read of parameter `i`'s contents (virtual or not).
pub fn kernel_contents(pc: &ProcessContext<'_>, i: u32) -> Result<Vec<u8>> {
    by_kind!(pc.param(i)?.data_type(), kread_param_as(pc, i))
}
/// A kernel's write of parameter `i`'s contents.
pub fn kernel_write(pc: &ProcessContext<'_>, i: u32, b: &[u8]) -> Result<()> {
    by_kind!(pc.param(i)?.data_type(), kwrite_param_as(pc, i, b))
}

/// The generic copy: parameter 0 (input, kind `t`) → parameter 1 (output, kind `t`). Its
/// validator gives the output the input's meta data (`set_from_reference`), so a virtual output
/// of unknown sizes is completed and a real or fixed one of other meta data is refused; process
/// copies the contents through `KernelView`.
pub fn copy_kernel(ctx: &Context, name: &str, t: DataType) -> Result<Kernel> {
    let k = ctx
        .user_kernel(name, ctx.allocate_user_kernel_id()?, 2)
        .validate(|v, metas| {
            let input = v.param(0)?.clone();
            metas.get(1)?.set_from_reference(&input)?;
            Ok(())
        })
        .process(|pc| {
            let b = kernel_contents(pc, 0)?;
            kernel_write(pc, 1, &b)
        })
        .add()?;
    k.add_parameter(0, ParamDirection::Input, t, ParamState::Required)?;
    k.add_parameter(1, ParamDirection::Output, t, ParamState::Required)?;
    k.finalize()?;
    Ok(k)
}
