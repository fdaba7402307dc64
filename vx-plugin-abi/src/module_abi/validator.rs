//! The host's side of one validator call ([`Validator`]): what the parameters are, what the
//! outputs will be.

use std::ffi::c_void;

use abi_stable::StableAbi;
use abi_stable::std_types::{RSlice, RSliceMut};

use super::error::{AbiError, AbiResult};
use super::handle::handle;
use crate::geometry::Rect;
use crate::memory::Plain;
use crate::object_meta::{ObjectMeta, ParamPath};

handle!(
    /// The host's side of one validator call.
    Validator,
    ValidatorVtableRef,
    *mut c_void
);

/// What a validator learns about one parameter, in a flat form (made from its [`ObjectMeta`]; no
/// longer a wire type: the ABI carries [`ObjectMeta`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamMeta {
    /// False for an unset optional parameter.
    pub present: bool,
    /// A [`crate::wire::data_type`] code.
    pub data_type: u32,
    /// Image FourCC (0 otherwise).
    pub format: u32,
    /// Image width (0 otherwise).
    pub width: u32,
    /// Image height (0 otherwise).
    pub height: u32,
    /// A [`crate::wire::scalar_type`] code (0 otherwise).
    pub scalar_type: u32,
}

impl ParamMeta {
    /// `meta` in the flat form (type code; an image's format and size, a scalar's type: each
    /// kind's part is read in its view's file).
    pub fn of(meta: &ObjectMeta) -> ParamMeta {
        let (format, width, height) = ParamMeta::image_part(meta).unwrap_or_default();
        ParamMeta {
            present: *meta != ObjectMeta::Absent,
            data_type: meta.data_type(),
            format,
            width,
            height,
            scalar_type: ParamMeta::scalar_part(meta).unwrap_or_default(),
        }
    }
}

/// Functions a validator may call. Each trusts the handle's host pointer; call them through the
/// [`Validator`] methods.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = ValidatorVtableRef)))]
#[sabi(missing_field(panic))]
pub struct ValidatorVtable {
    /// The node's parameter count.
    pub num_params: unsafe extern "C" fn(v: &Validator) -> u32,
    /// What the object at `path` is (ABI 5).
    #[sabi(last_prefix_field)]
    pub object_meta: unsafe extern "C" fn(v: &Validator, path: ParamPath) -> AbiResult<ObjectMeta>,
    /// Set output `index`'s whole meta format (`vxSetMetaFormatFromReference`; ABI 5).
    pub set_output_meta: unsafe extern "C" fn(v: &Validator, index: u32, meta: &ObjectMeta) -> AbiResult<()>,
    /// Set one attribute of output `index`'s meta format (`vxSetMetaFormatAttribute`: a
    /// [`crate::wire::attribute`] code and the value's bytes; ABI 5).
    pub set_output_attribute:
        unsafe extern "C" fn(v: &Validator, index: u32, attribute: u32, value: RSlice<'_, u8>) -> AbiResult<()>,
    /// Give output `index` (an image, a pyramid, an object array of them) a valid-rectangle
    /// function (`VX_VALID_RECT_CALLBACK`): the host calls `f(ctx, index, inputs, outputs)` when it
    /// verifies the graph, for as long as it keeps the node's verification (the module stays
    /// loaded meanwhile). ABI 7.
    pub set_output_valid_rect:
        unsafe extern "C" fn(v: &Validator, index: u32, f: ValidRectFnPtr, ctx: *const c_void) -> AbiResult<()>,
}

/// A module's valid-rectangle function as the host calls it (`vx_kernel_image_valid_rectangle_f`):
/// `ctx` as given to [`ValidatorVtable::set_output_valid_rect`], the output parameter's index, the
/// valid rectangles of the node's input images (in parameter order; a pyramid gives one per level,
/// an object array one per image), and the output's rectangles to fill (one per image it holds),
/// each filled with the whole image beforehand. Write it with
/// [`Validator::set_output_valid_rect`](crate::module_abi::Validator::set_output_valid_rect) (a
/// plain `fn`; the trampoline is [`crate::module_api::valid_rect_trampoline`]).
///
/// A wrapper (abi_stable checks no function pointer inside a function pointer's parameters).
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy)]
pub struct ValidRectFnPtr {
    /// The function.
    pub func: unsafe extern "C" fn(
        ctx: *const c_void,
        index: u32,
        inputs: RSlice<'_, Rect>,
        outputs: RSliceMut<'_, Rect>,
    ) -> AbiResult<()>,
}

impl Validator {
    /// The node's parameter count.
    pub fn num_params(&self) -> u32 {
        // SAFETY: only the host makes a Validator (`from_raw`'s contract).
        unsafe { (self.vtable.num_params())(self) }
    }
    /// Meta data of parameter `index`, in the flat form ([`Self::meta`] has every type's).
    pub fn param(&self, index: u32) -> Result<ParamMeta, AbiError> {
        self.meta(index).map(|m| ParamMeta::of(&m))
    }
    /// What parameter `index` is: any type, with a scalar's value and an array's item count.
    pub fn meta(&self, index: u32) -> Result<ObjectMeta, AbiError> {
        self.meta_at(ParamPath::param(index))
    }
    /// What the object at `path` is (an object array's item, a pyramid's level).
    pub fn meta_at(&self, path: ParamPath) -> Result<ObjectMeta, AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.object_meta())(self, path) }.into_result()
    }
    /// Output `index` will look like `meta` (`vxSetMetaFormatFromReference` with an exemplar's
    /// meta; values such as a scalar's are ignored, a convolution's scale is required unless 0).
    pub fn set_output_meta(&self, index: u32, meta: &ObjectMeta) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.set_output_meta())(self, index, meta) }.into_result()
    }
    /// `vxSetMetaFormatAttribute`: one attribute of output `index` (a [`crate::wire::attribute`]
    /// code; `value` is the attribute's C type: `&3usize` for a `vx_size`, `&fourcc` for a
    /// `vx_df_image`, `&code` (`i32`) for a `vx_enum`).
    pub fn set_output_attribute<T: Plain>(&self, index: u32, attribute: u32, value: &T) -> Result<(), AbiError> {
        // SAFETY: `T: Plain` is a number type: its bytes are initialised.
        let bytes = unsafe { std::slice::from_raw_parts(value as *const T as *const u8, std::mem::size_of::<T>()) };
        self.set_output_attribute_bytes(index, attribute, bytes)
    }
    /// Give output `index` the valid-rectangle function `f` with context `ctx` (the raw form of
    /// [`Self::set_output_valid_rect`], for modules written against the ABI by hand).
    ///
    /// # Safety
    ///
    /// `f(ctx, ..)` must be sound to call from any thread, at any time while the module is loaded
    /// (`ctx` lives as long as the module: a static, or null).
    pub unsafe fn set_output_valid_rect_raw(
        &self,
        index: u32,
        f: ValidRectFnPtr,
        ctx: *const c_void,
    ) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`; `f` and `ctx` are the caller's contract.
        unsafe { (self.vtable.set_output_valid_rect())(self, index, f, ctx) }.into_result()
    }
    /// [`Self::set_output_attribute`] with the value's bytes (a tensor's dimensions, a user data
    /// object's type name).
    pub fn set_output_attribute_bytes(&self, index: u32, attribute: u32, value: &[u8]) -> Result<(), AbiError> {
        // SAFETY: as in `num_params`.
        unsafe { (self.vtable.set_output_attribute())(self, index, attribute, RSlice::from_slice(value)) }.into_result()
    }
}
