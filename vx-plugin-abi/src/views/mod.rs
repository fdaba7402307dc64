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
//!
//! One file per kind (`views/<kind>.rs`, its wire side in `kinds/<kind>.rs`), gathered from the
//! list; this file holds what they share.

pub use crate::kinds::ViewKind;

macro_rules! views {
    ($($T:ident { code: $code:ident, module: $m:ident, view: $v:ident, label: $label:literal }),* $(,)?) => {
        $(mod $m;)*
        $(pub use self::$m::$v;)*
    };
}
crate::for_each_kind!(views);
// The macro's original image arguments (`&ImageIn<T>`, `&mut ImageOut<T>`), image views too.
pub use self::image::{ImageIn, ImageOut};

use crate::image_format::ImageFormat;
use crate::kinds::ObjectMeta;
use crate::memory::Plain;
use crate::module_abi::{AbiError, Processor};
use crate::object_meta::{MappedData, ParamPath};
use crate::status::Status;
use crate::tile::TileScalar;
use crate::wire::scalar_type;

/// Numbers a view's elements may be: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`,
/// `f32`, `f64` (plain data with an OpenVX type code).
pub trait Element: Plain + TileScalar {}
impl<T: Plain + TileScalar> Element for T {}

/// A view made from the processor for one object.
#[diagnostic::on_unimplemented(message = "`{Self}` is not a view of a data object", label = "not a data-object view")]
pub trait ParamView<'a>: Sized {
    /// Map the object at `path` (for writing when `write`).
    fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Self, AbiError>;
}

pub(crate) fn err(path: ParamPath, status: Status, msg: impl std::fmt::Display) -> AbiError {
    AbiError::new(status, format!("{path}: {msg}"))
}

pub(crate) fn element_check<T: TileScalar>(what: &str, code: u32) -> Result<(), String> {
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
pub(crate) fn meta_for<K: ViewKind>(p: &Processor, path: ParamPath) -> Result<ObjectMeta, AbiError> {
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
pub(crate) fn assert_writable(writable: bool) {
    assert!(writable, "the object is mapped for reading: take the parameter as `&mut` to write it");
}

/// A fixed-layout object's memory, mapped until dropped.
pub(crate) struct Data<'a> {
    p: &'a Processor,
    pub(crate) m: MappedData,
    writable: bool,
}

impl<'a> Data<'a> {
    pub(crate) fn map(p: &'a Processor, path: ParamPath, write: bool) -> Result<Data<'a>, AbiError> {
        Ok(Data { p, m: p.map_data(path, write)?, writable: write })
    }
    pub(crate) fn slice<T: Plain>(&self) -> &[T] {
        // SAFETY: the host mapped `bytes` bytes at `base` (64-byte aligned) until unmapped in Drop;
        // the views check the element type against the object's meta before calling this, and
        // every bit pattern is a valid `T: Plain`. Read access needs no more than the read lease.
        unsafe { std::slice::from_raw_parts(self.m.base as *const T, self.m.bytes as usize / size_of::<T>()) }
    }
    #[track_caller]
    pub(crate) fn slice_mut<T: Plain>(&mut self) -> &mut [T] {
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

pub(crate) fn fourcc(code: u32) -> String {
    ImageFormat::from_fourcc(code).map_or_else(|| format!("{code:#x}"), |f| f.to_string())
}

/// Zero of an element type (no `Default` bound on [`Element`]'s scalars).
pub(crate) trait Zero {
    fn default_zero() -> Self;
}
impl<T: Plain> Zero for T {
    fn default_zero() -> T {
        // SAFETY: every bit pattern, all zeros included, is a valid `T: Plain`.
        unsafe { std::mem::zeroed() }
    }
}

macro_rules! data_view {
    ($(#[$doc:meta])* $name:ident<$($t:ident: $b:ident)?>, $elem:ty, $dt:expr, |$m:ident| $check:expr) => {
        $(#[$doc])*
        pub struct $name<'a $(, $t: $b)?> {
            data: $crate::views::Data<'a>,
            meta: $crate::kinds::ObjectMeta,
            $(_t: std::marker::PhantomData<$t>,)?
        }

        impl<'a $(, $t: $b)?> $crate::views::ParamView<'a> for $name<'a $(, $t)?> {
            fn map(p: &'a $crate::module_abi::Processor, path: $crate::object_meta::ParamPath, write: bool) -> Result<Self, $crate::module_abi::AbiError> {
                let meta = $crate::views::meta_for::<Self>(p, path)?;
                Ok($name { data: $crate::views::Data::map(p, path, write)?, meta $(, _t: std::marker::PhantomData::<$t>)? })
            }
        }

        impl<$($t: $b)?> $crate::kinds::ViewKind for $name<'_ $(, $t)?> {
            type At<'a> = $name<'a $(, $t)?>;
            const DATA_TYPE: u32 = $dt;
            fn check($m: &$crate::kinds::ObjectMeta) -> Result<(), String> {
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
            pub fn meta(&self) -> &$crate::kinds::ObjectMeta {
                &self.meta
            }
        }
    };
}

pub(crate) use data_view;

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
pub(crate) use dims;
