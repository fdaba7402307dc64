//! Runtime support for the code `#[tiling_kernel]` generates (not a public API; the macros' output
//! calls these so that it stays small and readable).

use crate::image_format::ImageFormat;
use crate::module_abi::{AbiError, Validator, data_type};
use crate::status::Status;
use crate::tile::TileError;

/// What one parameter of a generated kernel is.
#[derive(Clone, Copy, Debug)]
pub enum ParamSig {
    /// `&Tile<T>`: an input image of this FourCC.
    InputImage { format: u32, optional: bool },
    /// `&mut TileMut<T>`: an output image of this FourCC.
    OutputImage { format: u32, optional: bool },
    /// A scalar by value of this `vx_type_e`.
    InputScalar { type_code: u32, optional: bool },
}

fn format_name(code: u32) -> String {
    ImageFormat::from_fourcc(code).map_or_else(|| format!("{code:#x}"), |f| f.to_string())
}

/// The generated validator: input formats match the Rust types, image parameters have one size
/// (unless `same_size` is false), every output image gets the first input image's size and its
/// own type's format.
pub fn validate_tiling(v: &Validator, sig: &[ParamSig], same_size: bool) -> Result<(), AbiError> {
    let mut size: Option<(u32, u32, usize)> = None;
    for (i, s) in sig.iter().enumerate() {
        let m = v.param(i as u32)?;
        let (optional, is_input_image) = match *s {
            ParamSig::InputImage { optional, .. } => (optional, true),
            ParamSig::OutputImage { optional, .. } => (optional, false),
            ParamSig::InputScalar { optional, .. } => (optional, false),
        };
        if !m.present {
            if optional {
                continue;
            }
            return Err(AbiError::new(Status::InvalidParameters, format!("parameter {i} is required")));
        }
        match *s {
            ParamSig::InputImage { format, .. } => {
                if m.data_type != data_type::IMAGE || m.format != format {
                    return Err(AbiError::new(
                        Status::InvalidFormat,
                        format!(
                            "parameter {i} must be a {} image (the kernel takes &Tile of its pixel type), found {}",
                            format_name(format),
                            if m.data_type == data_type::IMAGE { format_name(m.format) } else { "another type".into() }
                        ),
                    ));
                }
            }
            ParamSig::InputScalar { type_code, .. } => {
                if m.data_type != data_type::SCALAR || m.scalar_type != type_code {
                    return Err(AbiError::new(
                        Status::InvalidType,
                        format!("parameter {i} must be a scalar of type {type_code:#x}, found {:#x}", m.scalar_type),
                    ));
                }
            }
            ParamSig::OutputImage { .. } => {}
        }
        if is_input_image {
            match size {
                None => size = Some((m.width, m.height, i)),
                Some((w, h, first)) if same_size && (w, h) != (m.width, m.height) => {
                    return Err(AbiError::new(
                        Status::InvalidDimension,
                        format!(
                            "parameter {i} is {}x{} but parameter {first} is {w}x{h}: the kernel's images must have one size",
                            m.width, m.height
                        ),
                    ));
                }
                Some(_) => {}
            }
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
