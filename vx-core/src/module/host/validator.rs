//! The validator vtable: what a module's validator may ask about the node's parameters and how it
//! sets its outputs' meta formats.

use std::ffi::c_void;
use std::sync::OnceLock;

use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::abi_stable::std_types::RSlice;
use vx_plugin_abi::module_abi::{AbiResult, Validator, ValidatorVtable, ValidatorVtableRef};
use vx_plugin_abi::object_meta::{ObjectMeta as WireMeta, ParamPath};

use crate::data::kinds::{MetaAttribute, ObjectMeta};
use crate::error::Result;
use crate::kernel::contexts::ValidateContext;
use crate::kernel::meta_format::MetaFormats;
use crate::module::host::objects::wire_meta;
use crate::module::host::{abi, catch, catch_or, to_error};

struct ValidateCall<'a, 'b> {
    v: &'a ValidateContext<'b>,
    metas: &'a mut MetaFormats,
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

fn validator_vtable() -> ValidatorVtableRef {
    static V: OnceLock<ValidatorVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        ValidatorVtable {
            num_params: val_num_params,
            object_meta: val_object_meta,
            set_output_meta: val_set_output_meta,
            set_output_attribute: val_set_output_attribute,
        }
        .leak_into_prefix()
    })
}

pub(super) fn call_validate(
    f: extern "C" fn(&Validator) -> AbiResult<()>,
    v: &ValidateContext<'_>,
    metas: &mut MetaFormats,
) -> Result<()> {
    let mut call = ValidateCall { v, metas };
    // SAFETY: `call` is the ValidateCall the validator vtable's functions expect, borrowed by nobody
    // else for the whole call; the module receives the handle for this call only.
    let handle =
        unsafe { Validator::from_raw(validator_vtable(), &mut call as *mut ValidateCall<'_, '_> as *mut c_void) };
    f(&handle).into_result().map_err(to_error)
}
