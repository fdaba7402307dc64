//! The validator vtable: what a module's validator may ask about the node's parameters and how it
//! sets its outputs' meta formats.

use std::any::Any;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};

use vx_plugin_abi::Rect;
use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::abi_stable::std_types::{RSlice, RSliceMut};
use vx_plugin_abi::module_abi::{AbiResult, ValidRectFnPtr, Validator, ValidatorVtable, ValidatorVtableRef};
use vx_plugin_abi::object_meta::{ObjectMeta as WireMeta, ParamPath};

use crate::data::kinds::{MetaAttribute, ObjectMeta};
use crate::error::{Error, Result};
use crate::kernel::contexts::ValidateContext;
use crate::kernel::meta_format::MetaFormats;
use crate::module::host::objects::wire_meta;
use crate::module::host::{abi, catch, catch_or, to_error};

/// What a module kernel's validator runs with, besides the call: the kernel's name (for errors)
/// and its library, which a valid-rectangle function the validator gives keeps mapped (`None`:
/// an in-process kernel, whose functions live as long as the program).
pub(super) struct ValidatorOwner {
    pub(super) kernel: String,
    pub(super) library: Option<Arc<dyn Any + Send + Sync>>,
}

struct ValidateCall<'a, 'b> {
    v: &'a ValidateContext<'b>,
    metas: &'a mut MetaFormats,
    owner: &'a ValidatorOwner,
}

fn validate_call<'a, 'b>(v: &Validator) -> &'a mut ValidateCall<'a, 'b> {
    // SAFETY: `call_validate` built this Validator with `ctx` = the address of a ValidateCall that
    // lives (and is borrowed by nobody else) for the whole validator call.
    unsafe { &mut *(v.ctx() as *mut ValidateCall<'a, 'b>) }
}

unsafe extern "C" fn val_num_params(v: &Validator) -> u32 {
    catch_or("num params", 0, || validate_call(v).v.params().len() as u32)
}

unsafe extern "C" fn val_object_meta(v: &Validator, path: ParamPath) -> AbiResult<WireMeta> {
    catch("object meta", || abi(wire_meta(validate_call(v).v.params(), path)))
}

unsafe extern "C" fn val_set_output_meta(v: &Validator, index: u32, meta: &WireMeta) -> AbiResult<()> {
    catch("set output meta", || {
        let c = validate_call(v);
        abi((|| {
            let m = ObjectMeta::from_wire(meta).map_err(|e| e.at_parameter(index))?;
            c.metas.get(index)?.set_from_meta(m)?;
            Ok(())
        })())
    })
}

unsafe extern "C" fn val_set_output_attribute(
    v: &Validator,
    index: u32,
    code: u32,
    value: RSlice<'_, u8>,
) -> AbiResult<()> {
    catch("set output attribute", || {
        let c = validate_call(v);
        abi((|| {
            let meta = c.metas.get(index)?;
            meta.set(MetaAttribute::from_code(code, value.as_slice()).map_err(|e| e.at_parameter(index))?)?;
            Ok(())
        })())
    })
}

/// A module's valid-rectangle function with its context: code and data of the module, kept next to
/// the `Arc` that keeps the module's library mapped.
struct ModuleValidRect {
    f: ValidRectFnPtr,
    ctx: *const c_void,
    kernel: String,
    _library: Option<Arc<dyn Any + Send + Sync>>,
}

// SAFETY: `ctx` is only passed back to `f`, which the module's SDK makes callable from any thread
// (`Validator::set_output_valid_rect_raw`'s contract); the rest is Send + Sync.
unsafe impl Send for ModuleValidRect {}
// SAFETY: as for Send: calling `f(ctx, ..)` from several threads at once is in the same contract.
unsafe impl Sync for ModuleValidRect {}

impl ModuleValidRect {
    fn call(&self, index: u32, inputs: &[Rect], outputs: &mut [Rect]) -> Result<()> {
        // SAFETY: `f` and `ctx` came together from the module, which is still mapped (`_library`);
        // the slices are valid for the call.
        let r =
            unsafe { (self.f.func)(self.ctx, index, RSlice::from_slice(inputs), RSliceMut::from_mut_slice(outputs)) };
        r.into_result().map_err(|e| {
            let e = to_error(e);
            Error::new(
                e.kind(),
                format!("module kernel '{}': its valid rectangle function failed: {}", self.kernel, e.message()),
            )
            .at_parameter(index)
        })
    }
}

unsafe extern "C" fn val_set_output_valid_rect(
    v: &Validator,
    index: u32,
    f: ValidRectFnPtr,
    ctx: *const c_void,
) -> AbiResult<()> {
    catch("set output valid rect", || {
        let c = validate_call(v);
        let cb = ModuleValidRect { f, ctx, kernel: c.owner.kernel.clone(), _library: c.owner.library.clone() };
        abi(c
            .metas
            .get(index)
            .and_then(|m| m.set_valid_rect_callback(move |i, ins, outs| cb.call(i, ins, outs)))
            .map(|_| ()))
    })
}

fn validator_vtable() -> ValidatorVtableRef {
    static V: OnceLock<ValidatorVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        ValidatorVtable {
            num_params: val_num_params,
            object_meta: val_object_meta,
            set_output_meta: val_set_output_meta,
            set_output_attribute: val_set_output_attribute,
            set_output_valid_rect: val_set_output_valid_rect,
        }
        .leak_into_prefix()
    })
}

pub(super) fn call_validate(
    f: extern "C" fn(&Validator) -> AbiResult<()>,
    v: &ValidateContext<'_>,
    metas: &mut MetaFormats,
    owner: &ValidatorOwner,
) -> Result<()> {
    let mut call = ValidateCall { v, metas, owner };
    // SAFETY: `call` is the ValidateCall the validator vtable's functions expect, borrowed by nobody
    // else for the whole call; the module receives the handle for this call only.
    let handle =
        unsafe { Validator::from_raw(validator_vtable(), &mut call as *mut ValidateCall<'_, '_> as *mut c_void) };
    f(&handle).into_result().map_err(to_error)
}
