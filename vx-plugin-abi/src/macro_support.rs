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

/// The generated validator (tiling and user kernels): input formats match the Rust types, image parameters have one size
/// (unless `same_size` is false), every output image gets the first input image's size and its
/// own type's format.
pub fn validate_signature(v: &Validator, sig: &[ParamSig], same_size: bool) -> Result<(), AbiError> {
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

// ------------------------------------------------------------------ user kernels

use std::marker::PhantomData;

use crate::module_abi::{AbiResult, Lifecycle, MappedImage, Processor};
use crate::tile::{TilePixel, TileScalar};

/// An input image of a `#[user_kernel]`, mapped whole for reading; unmapped when dropped.
pub struct ImageIn<'a, T: TilePixel> {
    p: &'a Processor,
    m: MappedImage,
    _t: PhantomData<&'a [T]>,
}

/// An output image of a `#[user_kernel]`, mapped whole for writing; unmapped when dropped.
pub struct ImageOut<'a, T: TilePixel> {
    p: &'a Processor,
    m: MappedImage,
    _t: PhantomData<&'a mut [T]>,
}

fn map<T: TilePixel>(p: &Processor, index: u32, write: bool) -> Result<MappedImage, AbiError> {
    let m = (p.vtable.map_image())(p, index, crate::Rect::default(), write).into_result()?;
    if m.stride_x as usize != std::mem::size_of::<T>() {
        (p.vtable.unmap_image())(p, m.token);
        return Err(AbiError::new(
            Status::InvalidFormat,
            format!(
                "parameter {index}: {}-byte pixels, not the kernel's {}-byte type",
                m.stride_x,
                std::mem::size_of::<T>()
            ),
        ));
    }
    Ok(m)
}

macro_rules! image_view {
    ($ty:ident) => {
        impl<T: TilePixel> $ty<'_, T> {
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
                // SAFETY: the host mapped the whole plane (dim_x × dim_y pixels of size_of::<T>()
                // bytes — checked at map) until unmap in Drop; rows are stride_y apart; the base
                // is T-aligned (64-aligned buffers, strides multiple of the pixel size).
                unsafe {
                    std::slice::from_raw_parts(
                        self.m.base.add(y as usize * self.m.stride_y as usize) as *const T,
                        self.m.dim_x as usize,
                    )
                }
            }
        }
        impl<T: TilePixel> Drop for $ty<'_, T> {
            fn drop(&mut self) {
                (self.p.vtable.unmap_image())(self.p, self.m.token);
            }
        }
    };
}
image_view!(ImageIn);
image_view!(ImageOut);

impl<'a, T: TilePixel> ImageIn<'a, T> {
    #[doc(hidden)]
    pub fn map(p: &'a Processor, index: u32) -> Result<Self, AbiError> {
        Ok(ImageIn { p, m: map::<T>(p, index, false)?, _t: PhantomData })
    }
}

impl<'a, T: TilePixel> ImageOut<'a, T> {
    #[doc(hidden)]
    pub fn map(p: &'a Processor, index: u32) -> Result<Self, AbiError> {
        Ok(ImageOut { p, m: map::<T>(p, index, true)?, _t: PhantomData })
    }
    /// Row `y` for writing. Panics past the last row.
    pub fn row_mut(&mut self, y: u32) -> &mut [T] {
        assert!(y < self.m.dim_y, "row {y} outside an image of {} rows", self.m.dim_y);
        // SAFETY: as for `row`; the output image is mapped for writing by this view alone (the
        // graph has one writer per image and no node reads its own output), and &mut self makes
        // the slice unique.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.m.base.add(y as usize * self.m.stride_y as usize) as *mut T,
                self.m.dim_x as usize,
            )
        }
    }
}

/// Read input scalar `index` of a user kernel.
pub fn read_scalar<T: TileScalar>(p: &Processor, index: u32) -> Result<T, AbiError> {
    let bits = (p.vtable.read_scalar())(p, index).into_result()?;
    if bits.type_code != T::TYPE_CODE {
        return Err(AbiError::new(
            Status::InvalidType,
            format!("parameter {index}: scalar of type {:#x}, not the kernel's {:#x}", bits.type_code, T::TYPE_CODE),
        ));
    }
    // SAFETY: the bytes hold a value of T's scalar type (type code checked) at their start.
    Ok(unsafe { (bits.bytes.as_ptr() as *const T).read_unaligned() })
}

/// The typed local data a generated init placed behind the node's local-data pointer.
///
/// # Safety
///
/// Call at most once per process call (the generated code does): the returned reference is the
/// only one to the node's state for the call's duration.
#[allow(clippy::mut_from_ref)]
pub unsafe fn local<L: 'static>(p: &Processor) -> Result<&mut L, AbiError> {
    let d = (p.vtable.local_data())(p);
    if d.ptr == 0 || d.size as usize != std::mem::size_of::<L>() {
        return Err(AbiError::new(
            Status::NotAllocated,
            "the node's local data is not this kernel's state (was init run?)",
        ));
    }
    // SAFETY: the generated init stored a Box<L> (size checked) here; the node runs one process at
    // a time and the caller takes this reference once per call, so it is unique.
    Ok(unsafe { &mut *(d.ptr as *mut L) })
}

/// A kernel's own init or deinit over its typed local data.
pub type StateHook<L> = fn(&mut L) -> Result<(), AbiError>;

/// Generated init: box a default `L` as the node's local data, then run the kernel's own init.
pub fn init_local<L: Default + 'static>(l: &Lifecycle, user: Option<StateHook<L>>) -> AbiResult<()> {
    crate::module_abi::guard("init", || {
        let mut state = Box::new(L::default());
        if let Some(f) = user {
            f(&mut state)?;
        }
        (l.vtable.set_local_data_size())(l, std::mem::size_of::<L>() as u64).into_result()?;
        let ptr = Box::into_raw(state);
        if let Err(e) = (l.vtable.set_local_data_ptr())(l, ptr as usize).into_result() {
            // SAFETY: ptr came from Box::into_raw just above and was not handed out.
            drop(unsafe { Box::from_raw(ptr) });
            return Err(e);
        }
        Ok(())
    })
}

/// Generated deinit: run the kernel's own deinit, then drop the boxed `L` and clear the pointer.
pub fn deinit_local<L: 'static>(l: &Lifecycle, user: Option<StateHook<L>>) -> AbiResult<()> {
    crate::module_abi::guard("deinit", || {
        let d = (l.vtable.local_data())(l);
        if d.ptr == 0 {
            return Ok(());
        }
        // SAFETY: the generated init stored Box::into_raw(Box<L>) here and nothing else owns it;
        // it is reclaimed exactly once (the pointer is cleared below).
        let mut state = unsafe { Box::from_raw(d.ptr as *mut L) };
        let r = user.map_or(Ok(()), |f| f(&mut state));
        drop(state);
        (l.vtable.set_local_data_ptr())(l, 0).into_result()?;
        r
    })
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
