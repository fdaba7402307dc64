//! Typed views of every data object for a module's user kernel: what `#[user_kernel]` functions
//! take (`&Matrix<f32>` to read, `&mut Pyramid<u8>` to write, `&ObjectArray<Image<u8>>`, …) and
//! what hand-written process functions build with [`ParamView::map`]. Each view maps its object
//! through the [`Processor`] when made and unmaps it when dropped; the element type is checked
//! against the object's meta data (an error naming both, never a reinterpretation). A view taken
//! by `&` is mapped for reading; its writing methods panic (the SDK's trampoline turns a panic
//! into an error), so a kernel that writes takes `&mut`.
//!
//! [`ViewKind`] says what the generated validator checks for each view and what meta an output
//! gets: the meta of the first input parameter of the same view (an exemplar, as
//! `vxSetMetaFormatFromReference`), or for a scalar output its own type.

use std::marker::PhantomData;

use crate::geometry::Rect;
use crate::image_format::ImageFormat;
use crate::memory::Plain;
use crate::module_abi::{AbiError, MappedImage, Processor};
use crate::object_meta::{MappedData, ObjectMeta, ParamPath, ScalarBits, ThresholdBits};
use crate::status::Status;
use crate::tile::{TilePixel, TileScalar};
use crate::wire::{data_type, scalar_type};

/// Numbers a view's elements may be: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`,
/// `f32`, `f64` (plain data with an OpenVX type code).
pub trait Element: Plain + TileScalar {}
impl<T: Plain + TileScalar> Element for T {}

/// A view made from the processor for one object.
pub trait ParamView<'a>: Sized {
    /// Map the object at `path` (for writing when `write`).
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError>;
}

/// What a view type is, whatever its lifetime: its object type, the check of an input's meta,
/// and the meta of an output.
pub trait ViewKind {
    /// The view at lifetime `'a`.
    type At<'a>: ParamView<'a>;
    /// The object's [`crate::wire::data_type`].
    const DATA_TYPE: u32;
    /// Why `meta` does not suit this view (element type, …), if it does not.
    fn check(meta: &ObjectMeta) -> Result<(), String>;
    /// An output's meta, given the meta of the first input of this view (`None`: there is none).
    fn output_meta(exemplar: Option<&ObjectMeta>) -> Option<ObjectMeta> {
        exemplar.cloned()
    }
}

fn err(path: ParamPath, status: Status, msg: impl std::fmt::Display) -> AbiError {
    AbiError::new(status, format!("{path}: {msg}"))
}

fn element_check<T: TileScalar>(what: &str, code: u32) -> Result<(), String> {
    if code == T::TYPE_CODE {
        Ok(())
    } else {
        Err(format!(
            "a {what} of {} elements, not the kernel's {}",
            scalar_type::name(code),
            scalar_type::name(T::TYPE_CODE)
        ))
    }
}

/// The meta of the object at `path`, checked to suit view `K`.
fn meta_for<K: ViewKind>(p: &Processor, path: ParamPath) -> Result<ObjectMeta, AbiError> {
    let m = p.meta_at(path)?;
    if m.data_type() != K::DATA_TYPE {
        return Err(err(
            path,
            Status::InvalidType,
            format!("not the object type the kernel takes ({:#x})", K::DATA_TYPE),
        ));
    }
    K::check(&m).map_err(|e| err(path, Status::InvalidType, e))?;
    Ok(m)
}

#[track_caller]
fn assert_writable(writable: bool) {
    assert!(writable, "the object is mapped for reading: take the parameter as `&mut` to write it");
}

/// A fixed-layout object's memory, mapped until dropped.
struct Data<'a> {
    p: &'a Processor,
    m: MappedData,
    writable: bool,
}

impl<'a> Data<'a> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Data<'a>, AbiError> {
        Ok(Data { p, m: p.map_data(path, write)?, writable: write })
    }
    fn slice<T: Plain>(&self) -> &[T] {
        // SAFETY: the host mapped `bytes` bytes at `base` (64-byte aligned) until unmapped in Drop;
        // the views check the element type against the object's meta before calling this, and
        // every bit pattern is a valid `T: Plain`. Read access needs no more than the read lease.
        unsafe { std::slice::from_raw_parts(self.m.base as *const T, self.m.bytes as usize / size_of::<T>()) }
    }
    #[track_caller]
    fn slice_mut<T: Plain>(&mut self) -> &mut [T] {
        assert_writable(self.writable);
        // SAFETY: as in `slice`; the host leased the memory for writing to this view alone (one
        // writer per object), and &mut self makes the slice unique.
        unsafe { std::slice::from_raw_parts_mut(self.m.base as *mut T, self.m.bytes as usize / size_of::<T>()) }
    }
}

impl Drop for Data<'_> {
    fn drop(&mut self) {
        self.p.unmap_image(self.m.token);
    }
}

// ------------------------------------------------------------------------------------ images

/// An image, a pyramid level or an object-array item that is one: rows of `T`.
pub struct Image<'a, T: TilePixel> {
    p: &'a Processor,
    m: MappedImage,
    writable: bool,
    _t: PhantomData<&'a mut [T]>,
}

impl<'a, T: TilePixel> ParamView<'a> for Image<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        meta_for::<Self>(p, path)?;
        Image::map_unchecked(p, path, write)
    }
}

impl<'a, T: TilePixel> Image<'a, T> {
    /// Map without checking the format against the meta data (a validator did), only the pixel
    /// size: what `ImageIn` / `ImageOut` do.
    pub(crate) fn map_unchecked(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let m = p.map_image(path, Rect::default(), write)?;
        if m.stride_x as usize != size_of::<T>() {
            p.unmap_image(m.token);
            return Err(err(
                path,
                Status::InvalidFormat,
                format!("{}-byte pixels, not the kernel's {}", m.stride_x, size_of::<T>()),
            ));
        }
        Ok(Image { p, m, writable: write, _t: PhantomData })
    }
}

impl<T: TilePixel> ViewKind for Image<'_, T> {
    type At<'a> = Image<'a, T>;
    const DATA_TYPE: u32 = data_type::IMAGE;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Image { format, .. } if *format != T::FORMAT.fourcc() => {
                Err(format!("a {} image, not the kernel's {}", fourcc(*format), T::FORMAT))
            }
            _ => Ok(()),
        }
    }
}

fn fourcc(code: u32) -> String {
    ImageFormat::from_fourcc(code).map_or_else(|| format!("{code:#x}"), |f| f.to_string())
}

impl<T: TilePixel> Image<'_, T> {
    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.m.dim_x
    }
    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.m.dim_y
    }
    /// Row `y`. Panics past the last row.
    pub fn row(&self, y: u32) -> &[T] {
        assert!(y < self.m.dim_y, "row {y} outside an image of {} rows", self.m.dim_y);
        // SAFETY: the host mapped the whole plane (dim_x × dim_y pixels of size_of::<T>() bytes,
        // checked at map) until unmapped in Drop; rows are stride_y apart; T-aligned.
        unsafe {
            std::slice::from_raw_parts(
                self.m.base.add(y as usize * self.m.stride_y as usize) as *const T,
                self.m.dim_x as usize,
            )
        }
    }
    /// Row `y` for writing. Panics past the last row, or when mapped for reading.
    #[track_caller]
    pub fn row_mut(&mut self, y: u32) -> &mut [T] {
        assert_writable(self.writable);
        assert!(y < self.m.dim_y, "row {y} outside an image of {} rows", self.m.dim_y);
        // SAFETY: as in `row`; mapped for writing by this view alone, &mut self makes it unique.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.m.base.add(y as usize * self.m.stride_y as usize) as *mut T,
                self.m.dim_x as usize,
            )
        }
    }
}

impl<T: TilePixel> Drop for Image<'_, T> {
    fn drop(&mut self) {
        self.p.unmap_image(self.m.token);
    }
}

// ------------------------------------------------------------------------------------ scalars

/// A scalar of type `T`: read its value; `&mut` writes it.
pub struct Scalar<'a, T: TileScalar> {
    p: &'a Processor,
    path: ParamPath,
    value: T,
    writable: bool,
}

fn scalar_value<T: TileScalar>(bits: ScalarBits) -> T {
    // SAFETY: the bytes hold a value of T's scalar type (type code checked by the caller) at
    // their start; read_unaligned makes no alignment assumption.
    unsafe { (bits.bytes.as_ptr() as *const T).read_unaligned() }
}

impl<'a, T: TileScalar> ParamView<'a> for Scalar<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        meta_for::<Self>(p, path)?;
        let bits = p.read_scalar(path)?;
        Ok(Scalar { p, path, value: scalar_value(bits), writable: write })
    }
}

impl<T: TileScalar> ViewKind for Scalar<'_, T> {
    type At<'a> = Scalar<'a, T>;
    const DATA_TYPE: u32 = data_type::SCALAR;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Scalar { scalar_type, .. } => element_check::<T>("scalar", *scalar_type),
            _ => Ok(()),
        }
    }
    fn output_meta(_: Option<&ObjectMeta>) -> Option<ObjectMeta> {
        Some(ObjectMeta::Scalar {
            scalar_type: T::TYPE_CODE,
            value: ScalarBits { type_code: T::TYPE_CODE, bytes: [0; 8] },
        })
    }
}

impl<T: TileScalar> Scalar<'_, T> {
    /// The value.
    pub fn get(&self) -> T {
        self.value
    }
    /// Write the value. Panics when mapped for reading.
    #[track_caller]
    pub fn set(&mut self, value: T) -> Result<(), AbiError> {
        assert_writable(self.writable);
        let mut bytes = [0u8; 8];
        // SAFETY: T is at most 8 bytes (the scalar types); written unaligned at the start.
        unsafe { (bytes.as_mut_ptr() as *mut T).write_unaligned(value) };
        self.p.write_scalar(self.path, ScalarBits { type_code: T::TYPE_CODE, bytes })?;
        self.value = value;
        Ok(())
    }
}

// ------------------------------------------------------------------------------------ arrays

/// An array of `T` items: read them, and with `&mut` append and truncate.
pub struct Array<'a, T: Element> {
    p: &'a Processor,
    path: ParamPath,
    writable: bool,
    _t: PhantomData<T>,
}

impl<'a, T: Element> ParamView<'a> for Array<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        meta_for::<Self>(p, path)?;
        Ok(Array { p, path, writable: write, _t: PhantomData })
    }
}

impl<T: Element> ViewKind for Array<'_, T> {
    type At<'a> = Array<'a, T>;
    const DATA_TYPE: u32 = data_type::ARRAY;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Array { item_type, .. } if *item_type != 0 => element_check::<T>("array", *item_type),
            _ => Ok(()),
        }
    }
}

impl<T: Element> Array<'_, T> {
    /// Items now.
    pub fn len(&self) -> Result<usize, AbiError> {
        Ok(self.p.array_info(self.path)?.num_items as usize)
    }
    /// Whether it holds no item.
    pub fn is_empty(&self) -> Result<bool, AbiError> {
        Ok(self.len()? == 0)
    }
    /// Most items.
    pub fn capacity(&self) -> Result<usize, AbiError> {
        Ok(self.p.array_info(self.path)?.capacity as usize)
    }
    /// Every item.
    pub fn items(&self) -> Result<Vec<T>, AbiError> {
        let n = self.len()?;
        let mut out = vec![T::default_zero(); n];
        // SAFETY: `out` holds n initialised T; viewed as its bytes for the copy.
        let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, n * size_of::<T>()) };
        let got = self.p.array_read(self.path, bytes)? as usize;
        out.truncate(got);
        Ok(out)
    }
    /// Append `items`. Panics when mapped for reading.
    #[track_caller]
    pub fn extend(&mut self, items: &[T]) -> Result<(), AbiError> {
        assert_writable(self.writable);
        // SAFETY: T: Plain: its bytes are initialised.
        let bytes = unsafe { std::slice::from_raw_parts(items.as_ptr() as *const u8, size_of_val(items)) };
        self.p.array_add(self.path, bytes)
    }
    /// Keep the first `n` items. Panics when mapped for reading.
    #[track_caller]
    pub fn truncate(&mut self, n: usize) -> Result<(), AbiError> {
        assert_writable(self.writable);
        self.p.array_truncate(self.path, n as u64)
    }
}

/// Zero of an element type (no `Default` bound on [`Element`]'s scalars).
trait Zero {
    fn default_zero() -> Self;
}
impl<T: Plain> Zero for T {
    fn default_zero() -> T {
        // SAFETY: every bit pattern, all zeros included, is a valid `T: Plain`.
        unsafe { std::mem::zeroed() }
    }
}

// --------------------------------------------------------------------- fixed-layout objects

macro_rules! data_view {
    ($(#[$doc:meta])* $name:ident<$($t:ident: $b:ident)?>, $elem:ty, $dt:expr, |$m:ident| $check:expr) => {
        $(#[$doc])*
        pub struct $name<'a $(, $t: $b)?> {
            data: Data<'a>,
            meta: ObjectMeta,
            $(_t: PhantomData<$t>,)?
        }

        impl<'a $(, $t: $b)?> ParamView<'a> for $name<'a $(, $t)?> {
            fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
                let meta = meta_for::<Self>(p, path)?;
                Ok($name { data: Data::map(p, path, write)?, meta $(, _t: PhantomData::<$t>)? })
            }
        }

        impl<$($t: $b)?> ViewKind for $name<'_ $(, $t)?> {
            type At<'a> = $name<'a $(, $t)?>;
            const DATA_TYPE: u32 = $dt;
            fn check($m: &ObjectMeta) -> Result<(), String> {
                $check
            }
        }

        impl<$($t: $b)?> $name<'_ $(, $t)?> {
            /// The elements.
            pub fn as_slice(&self) -> &[$elem] {
                self.data.slice()
            }
            /// The elements for writing. Panics when mapped for reading.
            #[track_caller]
            pub fn as_mut_slice(&mut self) -> &mut [$elem] {
                self.data.slice_mut()
            }
            /// The object's meta data.
            pub fn meta(&self) -> &ObjectMeta {
                &self.meta
            }
        }
    };
}

data_view!(
    /// A matrix of `T`, row-major.
    Matrix<T: Element>, T, data_type::MATRIX, |m| match m {
        ObjectMeta::Matrix { element, .. } => element_check::<T>("matrix", *element),
        _ => Ok(()),
    }
);
data_view!(
    /// A convolution's S16 coefficients, row-major.
    Convolution<>, i16, data_type::CONVOLUTION, |_m| Ok(())
);
data_view!(
    /// A LUT of `T` (`u8` or `i16`).
    Lut<T: Element>, T, data_type::LUT, |m| match m {
        ObjectMeta::Lut { element, .. } => element_check::<T>("LUT", *element),
        _ => Ok(()),
    }
);
data_view!(
    /// A distribution's U32 counts.
    Distribution<>, u32, data_type::DISTRIBUTION, |_m| Ok(())
);
data_view!(
    /// A remap's destination points `[x, y]` (source coordinates), row-major.
    Remap<>, [f32; 2], data_type::REMAP, |_m| Ok(())
);
data_view!(
    /// A user data object's bytes.
    UserData<>, u8, data_type::USER_DATA_OBJECT, |_m| Ok(())
);

macro_rules! dims {
    ($name:ident { $($f:ident: $t:ty => $pat:pat => $e:expr),* }) => {
        impl $name<'_> {
            $(
                #[doc = concat!("`", stringify!($f), "` from the meta data.")]
                pub fn $f(&self) -> $t {
                    match &self.meta { $pat => $e, _ => unreachable!("checked at map") }
                }
            )*
        }
    };
}
dims!(Convolution {
    rows: usize => ObjectMeta::Convolution { rows, .. } => *rows as usize,
    columns: usize => ObjectMeta::Convolution { columns, .. } => *columns as usize,
    scale: u32 => ObjectMeta::Convolution { scale, .. } => *scale
});
dims!(Distribution {
    bins: usize => ObjectMeta::Distribution { bins, .. } => *bins as usize,
    offset: i32 => ObjectMeta::Distribution { offset, .. } => *offset,
    range: u32 => ObjectMeta::Distribution { range, .. } => *range,
    window: u32 => ObjectMeta::Distribution { window, .. } => *window
});
dims!(UserData {
    size: usize => ObjectMeta::UserDataObject { size, .. } => *size as usize,
    type_name: &str => ObjectMeta::UserDataObject { type_name, .. } => type_name.as_str()
});

impl<T: Element> Matrix<'_, T> {
    /// Rows.
    pub fn rows(&self) -> usize {
        match &self.meta {
            ObjectMeta::Matrix { rows, .. } => *rows as usize,
            _ => unreachable!("checked at map"),
        }
    }
    /// Columns.
    pub fn columns(&self) -> usize {
        match &self.meta {
            ObjectMeta::Matrix { columns, .. } => *columns as usize,
            _ => unreachable!("checked at map"),
        }
    }
    /// Element at `row`, `column`. Panics outside the matrix.
    pub fn get(&self, row: usize, column: usize) -> T {
        assert!(column < self.columns(), "column {column} outside a matrix of {} columns", self.columns());
        self.as_slice()[row * self.columns() + column]
    }
}

impl<T: Element> Lut<'_, T> {
    /// `VX_LUT_OFFSET`: the entry of input value 0.
    pub fn offset(&self) -> usize {
        match &self.meta {
            ObjectMeta::Lut { offset, .. } => *offset as usize,
            _ => unreachable!("checked at map"),
        }
    }
}

// ------------------------------------------------------------------------------------ tensors

/// A tensor (or a view of one) of `T`: elements by index, `strides()` bytes apart per dimension.
pub struct Tensor<'a, T: Element> {
    data: Data<'a>,
    meta: ObjectMeta,
    _t: PhantomData<T>,
}

impl<'a, T: Element> ParamView<'a> for Tensor<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        Ok(Tensor { data: Data::map(p, path, write)?, meta, _t: PhantomData })
    }
}

impl<T: Element> ViewKind for Tensor<'_, T> {
    type At<'a> = Tensor<'a, T>;
    const DATA_TYPE: u32 = data_type::TENSOR;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Tensor { data_type, .. } if *data_type != 0 => element_check::<T>("tensor", *data_type),
            _ => Ok(()),
        }
    }
}

impl<T: Element> Tensor<'_, T> {
    /// The sizes, dimension 0 first.
    pub fn dims(&self) -> &[u64] {
        match &self.meta {
            ObjectMeta::Tensor { num_dims, dims, .. } => &dims[..*num_dims as usize],
            _ => unreachable!("checked at map"),
        }
    }
    /// Byte strides per dimension.
    pub fn strides(&self) -> &[u64] {
        &self.data.m.strides[..self.dims().len()]
    }
    /// `VX_TENSOR_FIXED_POINT_POSITION`.
    pub fn fixed_point_position(&self) -> i8 {
        match &self.meta {
            ObjectMeta::Tensor { fixed_point_position, .. } => *fixed_point_position,
            _ => unreachable!("checked at map"),
        }
    }
    fn offset(&self, index: &[usize]) -> usize {
        let dims = self.dims();
        assert!(
            index.len() == dims.len() && index.iter().zip(dims).all(|(i, d)| (*i as u64) < *d),
            "index {index:?} outside a tensor of {dims:?}"
        );
        index.iter().zip(self.strides()).map(|(i, s)| i * *s as usize).sum::<usize>() / size_of::<T>()
    }
    /// The element at `index` (one entry per dimension). Panics outside the tensor.
    pub fn get(&self, index: &[usize]) -> T {
        self.data.slice::<T>()[self.offset(index)]
    }
    /// Write the element at `index`. Panics outside the tensor or when mapped for reading.
    #[track_caller]
    pub fn set(&mut self, index: &[usize], value: T) {
        let o = self.offset(index);
        self.data.slice_mut::<T>()[o] = value;
    }
}

// ------------------------------------------------------------------------------- thresholds

/// A threshold: its type, formats and values; `&mut` sets the values.
pub struct Threshold<'a> {
    p: &'a Processor,
    path: ParamPath,
    meta: ObjectMeta,
    values: ThresholdBits,
    writable: bool,
}

impl<'a> ParamView<'a> for Threshold<'a> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        Ok(Threshold { p, path, meta, values: p.threshold_values(path)?, writable: write })
    }
}

impl ViewKind for Threshold<'_> {
    type At<'a> = Threshold<'a>;
    const DATA_TYPE: u32 = data_type::THRESHOLD;
    fn check(_: &ObjectMeta) -> Result<(), String> {
        Ok(())
    }
}

impl Threshold<'_> {
    /// The threshold's meta data (type and formats).
    pub fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    /// The values as read when mapped (or last set).
    pub fn values(&self) -> ThresholdBits {
        self.values
    }
    /// Set every value (binary value, range, outputs). Panics when mapped for reading.
    #[track_caller]
    pub fn set_values(&mut self, values: ThresholdBits) -> Result<(), AbiError> {
        assert_writable(self.writable);
        self.p.set_threshold_values(self.path, values)?;
        self.values = values;
        Ok(())
    }
}

// -------------------------------------------------------------------------------- containers

/// A pyramid of `T` images: its levels as [`Image`] views, mapped when asked for.
pub struct Pyramid<'a, T: TilePixel> {
    p: &'a Processor,
    path: ParamPath,
    meta: ObjectMeta,
    writable: bool,
    _t: PhantomData<T>,
}

impl<'a, T: TilePixel> ParamView<'a> for Pyramid<'a, T> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let meta = meta_for::<Self>(p, path)?;
        Ok(Pyramid { p, path, meta, writable: write, _t: PhantomData })
    }
}

impl<T: TilePixel> ViewKind for Pyramid<'_, T> {
    type At<'a> = Pyramid<'a, T>;
    const DATA_TYPE: u32 = data_type::PYRAMID;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::Pyramid { format, .. }
                if *format != T::FORMAT.fourcc() && *format != ImageFormat::Virtual.fourcc() =>
            {
                Err(format!("a pyramid of {} images, not the kernel's {}", fourcc(*format), T::FORMAT))
            }
            _ => Ok(()),
        }
    }
}

impl<'a, T: TilePixel> Pyramid<'a, T> {
    /// Levels.
    pub fn levels(&self) -> usize {
        match &self.meta {
            ObjectMeta::Pyramid { levels, .. } => *levels as usize,
            _ => unreachable!("checked at map"),
        }
    }
    /// The pyramid's meta data.
    pub fn meta(&self) -> &ObjectMeta {
        &self.meta
    }
    /// Level `index`, mapped as this pyramid is (for writing when taken by `&mut`).
    pub fn level(&self, index: usize) -> Result<Image<'a, T>, AbiError> {
        Image::map(self.p, self.path.level(index as u32), self.writable)
    }
}

/// An object array whose items are `V` views (`ObjectArray<Image<u8>>`,
/// `ObjectArray<Matrix<f32>>`, …), mapped when asked for.
pub struct ObjectArray<'a, V: ViewKind> {
    p: &'a Processor,
    path: ParamPath,
    count: usize,
    writable: bool,
    _v: PhantomData<fn() -> V>,
}

impl<'a, V: ViewKind> ParamView<'a> for ObjectArray<'a, V> {
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError> {
        let count = match meta_for::<Self>(p, path)? {
            ObjectMeta::ObjectArray { count, .. } => count as usize,
            _ => unreachable!("meta_for checked the type"),
        };
        Ok(ObjectArray { p, path, count, writable: write, _v: PhantomData })
    }
}

impl<V: ViewKind> ViewKind for ObjectArray<'_, V> {
    type At<'a> = ObjectArray<'a, V>;
    const DATA_TYPE: u32 = data_type::OBJECT_ARRAY;
    fn check(meta: &ObjectMeta) -> Result<(), String> {
        match meta {
            ObjectMeta::ObjectArray { item_type, .. } if *item_type != V::DATA_TYPE => {
                Err(format!("an object array of type {item_type:#x} items, not the kernel's {:#x}", V::DATA_TYPE))
            }
            _ => Ok(()),
        }
    }
}

impl<'a, V: ViewKind> ObjectArray<'a, V> {
    /// Items.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether it has no item.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Item `index`, mapped as this array is (for writing when taken by `&mut`).
    pub fn item(&self, index: usize) -> Result<V::At<'a>, AbiError> {
        if index >= self.count {
            return Err(err(self.path, Status::InvalidParameters, format!("no item {index} in {} items", self.count)));
        }
        <V::At<'a> as ParamView<'a>>::map(self.p, self.path.item(index as u32), self.writable)
    }
}
