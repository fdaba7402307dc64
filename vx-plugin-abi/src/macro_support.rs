//! Runtime support for the code `#[tiling_kernel]` and `#[user_kernel]` generate (not a public API;
//! the macros' output calls these so that it stays small and readable): the generated validator over
//! a parameter signature, scalar reads. (The typed image views of user kernels, `ImageIn` and
//! `ImageOut`, are the image view's, in `views/image.rs`.)

use crate::image_format::ImageFormat;
use crate::module_abi::{AbiError, Validator};
use crate::object_meta::{ObjectMeta, ParamPath};
use crate::status::Status;
use crate::tile::TileError;
use crate::views::ViewKind;
use crate::wire::data_type;

/// Output columns `x .. x + n` of row `y` of an output tile: what a row kernel (`Rows<T, N>` input)
/// writes. An error when the output shares memory with the input (no slices then).
pub fn row_span<'o, T: crate::tile::TilePixel>(
    out: &'o mut crate::tile::TileMut<'_, T>,
    y: u32,
    x: u32,
    n: u32,
) -> Result<&'o mut [T], TileError> {
    out.row_mut(y).and_then(|r| r.get_mut(x as usize..(x + n) as usize)).ok_or_else(|| {
        TileError::new(Status::NotSupported, "a row kernel's output shares memory with its input: no row slices")
    })
}

/// What one parameter of a generated kernel is.
#[derive(Clone, Copy, Debug)]
pub enum ParamSig {
    /// `&Tile<T>`: an input image of this FourCC.
    InputImage { format: u32, optional: bool },
    /// `&mut TileMut<T>`: an output image of this FourCC.
    OutputImage { format: u32, optional: bool },
    /// A scalar by value of this `vx_type_e`.
    InputScalar { type_code: u32, optional: bool },
    /// A typed view of any object ([`crate::views`]): `&View` an input, `&mut View` an output.
    Object {
        /// The object's [`crate::wire::data_type`].
        data_type: u32,
        /// `&mut`: an output.
        output: bool,
        optional: bool,
        /// The view's check of an input's meta ([`ViewKind::check`]).
        check: fn(&ObjectMeta) -> Result<(), String>,
        /// An output's meta from the first input of its type ([`ViewKind::output_meta`]).
        output_meta: fn(Option<&ObjectMeta>) -> Option<ObjectMeta>,
    },
}

impl ParamSig {
    /// The entry of a typed view parameter `V` (`output`: taken by `&mut`).
    pub const fn object<V: ViewKind>(output: bool, optional: bool) -> ParamSig {
        ParamSig::Object { data_type: V::DATA_TYPE, output, optional, check: V::check, output_meta: V::output_meta }
    }
}

/// How the generated validator's messages name one parameter: its registered name (what
/// `vx inspect` and graph files show) and the kernel's view type as written.
#[derive(Clone, Copy, Debug)]
pub struct ParamLabel {
    /// The parameter's registered name (`input`, `strength`; `io (in)` for an in-place half).
    pub name: &'static str,
    /// The argument's type as written: `Rows<u8, 3>`, `&Tile<u8>`, `&mut [u8]`, `&mut InPlace<u8>`, ….
    pub view: &'static str,
}

/// ``parameter 0 (`input`)``: parameter `i` by index and registered name (by index alone without
/// a label).
fn param_ref(labels: &[ParamLabel], i: usize) -> String {
    match labels.get(i) {
        Some(l) => format!("parameter {i} (`{}`)", l.name),
        None => format!("parameter {i}"),
    }
}

/// `` (the kernel takes `Rows<u8, 3>`)``, or nothing without a label.
fn view_of(labels: &[ParamLabel], i: usize) -> String {
    labels.get(i).map_or_else(String::new, |l| format!(" (the kernel takes `{}`)", l.view))
}

fn format_name(code: u32) -> String {
    ImageFormat::from_fourcc(code).map_or_else(|| format!("{code:#x}"), |f| f.to_string())
}

/// The generated validator (tiling and user kernels): input formats match the Rust types, image
/// parameters have one size (unless `same_size` is false), every output image gets the first input
/// image's size and its own type's format. Its messages name each parameter by index and by its
/// `labels` entry (name and view type), e.g. ``parameter 0 (`input`) must be a U8 image (the kernel
/// takes `Rows<u8, 3>`), found S16``.
pub fn validate_signature(
    v: &Validator,
    sig: &[ParamSig],
    labels: &[ParamLabel],
    same_size: bool,
) -> Result<(), AbiError> {
    let at = |i: usize| param_ref(labels, i);
    let mut size: Option<(u32, u32, usize)> = None;
    for (i, s) in sig.iter().enumerate() {
        let m = v.param(i as u32)?;
        let (optional, is_input_image) = match *s {
            ParamSig::InputImage { optional, .. } => (optional, true),
            ParamSig::OutputImage { optional, .. } => (optional, false),
            ParamSig::InputScalar { optional, .. } => (optional, false),
            ParamSig::Object { optional, .. } => (optional, false),
        };
        if !m.present {
            if optional {
                continue;
            }
            return Err(AbiError::new(
                Status::InvalidParameters,
                format!("{} is required{}", at(i), view_of(labels, i)),
            ));
        }
        match *s {
            ParamSig::InputImage { format, .. } => {
                if m.data_type != data_type::IMAGE || m.format != format {
                    return Err(AbiError::new(
                        Status::InvalidFormat,
                        format!(
                            "{} must be a {} image{}, found {}",
                            at(i),
                            format_name(format),
                            view_of(labels, i),
                            if m.data_type == data_type::IMAGE {
                                format_name(m.format)
                            } else {
                                format!("an object of type {:#x}", m.data_type)
                            }
                        ),
                    ));
                }
            }
            ParamSig::InputScalar { type_code, .. } => {
                if m.data_type != data_type::SCALAR || m.scalar_type != type_code {
                    return Err(AbiError::new(
                        Status::InvalidType,
                        format!(
                            "{} must be a scalar of type {}{}, found {}",
                            at(i),
                            crate::wire::scalar_type::name(type_code),
                            view_of(labels, i),
                            if m.data_type == data_type::SCALAR {
                                format!("a scalar of type {}", crate::wire::scalar_type::name(m.scalar_type))
                            } else {
                                format!("an object of type {:#x}", m.data_type)
                            }
                        ),
                    ));
                }
            }
            ParamSig::Object { data_type, output: false, check, .. } => {
                let meta = v.meta(i as u32)?;
                if meta.data_type() != data_type {
                    return Err(AbiError::new(
                        Status::InvalidType,
                        format!(
                            "{} must be an object of type {data_type:#x}{}, found type {:#x}",
                            at(i),
                            view_of(labels, i),
                            meta.data_type()
                        ),
                    ));
                }
                check(&meta).map_err(|e| AbiError::new(Status::InvalidType, format!("{} is {e}", at(i))))?;
            }
            ParamSig::OutputImage { .. } | ParamSig::Object { output: true, .. } => {}
        }
        if is_input_image {
            match size {
                None => size = Some((m.width, m.height, i)),
                Some((w, h, first)) if same_size && (w, h) != (m.width, m.height) => {
                    return Err(AbiError::new(
                        Status::InvalidDimension,
                        format!(
                            "{} is {}x{} but {} is {w}x{h}: the kernel's images must have one size",
                            at(i),
                            m.width,
                            m.height,
                            at(first)
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    for (i, s) in sig.iter().enumerate() {
        if let ParamSig::Object { data_type, output: true, output_meta, .. } = *s {
            if !v.param(i as u32)?.present {
                continue;
            }
            let exemplar = sig.iter().enumerate().find_map(|(k, o)| match *o {
                ParamSig::Object { data_type: d, output: false, .. } if d == data_type => Some(k as u32),
                _ => None,
            });
            let exemplar = match exemplar {
                Some(k) => Some(v.meta(k)?).filter(|m| *m != ObjectMeta::Absent),
                None => None,
            };
            let meta = output_meta(exemplar.as_ref()).ok_or_else(|| {
                AbiError::new(
                    Status::InvalidParameters,
                    format!(
                        "{} takes its meta data from an input of its type, and none is set: give the kernel a validator (`validate = path`)",
                        at(i)
                    ),
                )
            })?;
            v.set_output_meta(i as u32, &meta)?;
        }
    }
    for (i, s) in sig.iter().enumerate() {
        if let ParamSig::OutputImage { format, .. } = *s {
            let Some((w, h, _)) = size else {
                return Err(AbiError::new(
                    Status::InvalidParameters,
                    "an output's size comes from the first input image, and there is none",
                ));
            };
            if v.param(i as u32)?.present {
                v.set_output_image(i as u32, ImageFormat::from_fourcc(format).unwrap_or(ImageFormat::U8), w, h)?;
            }
        }
    }
    Ok(())
}

/// What a kernel function may return: `()` or `Result<(), TileError>`.
pub trait IntoTileResult {
    fn into_tile_result(self) -> Result<(), TileError>;
}

impl IntoTileResult for () {
    fn into_tile_result(self) -> Result<(), TileError> {
        Ok(())
    }
}

impl IntoTileResult for Result<(), TileError> {
    fn into_tile_result(self) -> Result<(), TileError> {
        self
    }
}

// ------------------------------------------------------------------ user kernels

use crate::module_abi::Processor;
use crate::tile::TileScalar;

pub use crate::views::{ImageIn, ImageOut};

/// Read input scalar `index` of a user kernel.
pub fn read_scalar<T: TileScalar>(p: &Processor, index: u32) -> Result<T, AbiError> {
    let bits = p.read_scalar(ParamPath::param(index))?;
    if bits.type_code != T::TYPE_CODE {
        return Err(AbiError::new(
            Status::InvalidType,
            format!(
                "parameter {index}: a scalar of type {}, not the kernel's {}",
                crate::wire::scalar_type::name(bits.type_code),
                crate::wire::scalar_type::name(T::TYPE_CODE)
            ),
        ));
    }
    // SAFETY: the bytes hold a value of T's scalar type (type code checked) at their start.
    Ok(unsafe { (bits.bytes.as_ptr() as *const T).read_unaligned() })
}

/// What a user kernel's process may return: `()` or `Result<(), AbiError>`.
pub trait IntoAbiResult {
    fn into_abi_result(self) -> Result<(), AbiError>;
}

impl IntoAbiResult for () {
    fn into_abi_result(self) -> Result<(), AbiError> {
        Ok(())
    }
}

impl IntoAbiResult for Result<(), AbiError> {
    fn into_abi_result(self) -> Result<(), AbiError> {
        self
    }
}

/// The element count of a memory request in `#[user_kernel(scratch(name = COUNT), persistent(..))]`:
/// a `usize` expression, or a function of the node (`fn(&Lifecycle) -> Result<usize, AbiError>`,
/// e.g. reading an image's width with [`Lifecycle::param`](crate::module_abi::Lifecycle::param)),
/// evaluated in init.
pub trait MemCount {
    /// The count for this node.
    fn count(&self, l: &crate::module_abi::Lifecycle) -> Result<usize, AbiError>;
}

impl MemCount for usize {
    fn count(&self, _: &crate::module_abi::Lifecycle) -> Result<usize, AbiError> {
        Ok(*self)
    }
}

impl<F: Fn(&crate::module_abi::Lifecycle) -> Result<usize, AbiError>> MemCount for F {
    fn count(&self, l: &crate::module_abi::Lifecycle) -> Result<usize, AbiError> {
        self(l)
    }
}
