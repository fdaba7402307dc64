//! The validator vtable: what a module's validator may ask about the node's parameters and how it
//! sets its outputs' meta formats.

use std::ffi::c_void;
use std::sync::OnceLock;

use vx_plugin_abi::ImageFormat;
use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::abi_stable::std_types::RSlice;
use vx_plugin_abi::module_abi::{AbiResult, ParamMeta, Validator, ValidatorVtable, ValidatorVtableRef};
use vx_plugin_abi::object_meta::{ObjectMeta as WireMeta, ParamPath};
use vx_plugin_abi::wire::data_type;

use crate::data::items::ArrayItemType;
use crate::data::kinds::{MetaAttribute, ObjectMeta};
use crate::data::reference::Reference;
use crate::data::types::ScalarType;
use crate::error::{Error, ErrorKind, Result};
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

unsafe extern "C" fn val_param_meta(v: &Validator, index: u32) -> AbiResult<ParamMeta> {
    catch("param meta", || abi(param_meta(validate_call(v).v.params(), index)))
}

/// What parameter `index` of `params` is, as the module ABI describes it (validators, init, deinit).
pub(super) fn param_meta(params: &[Option<Reference>], index: u32) -> Result<ParamMeta> {
    let slot = params.get(index as usize).ok_or_else(|| {
        Error::new(ErrorKind::InvalidParameters, "no such parameter")
            .expected_found(format!("index < {}", params.len()), index)
    })?;
    let mut m = ParamMeta { present: slot.is_some(), data_type: 0, format: 0, width: 0, height: 0, scalar_type: 0 };
    match slot {
        None => {}
        Some(Reference::Image(i)) => {
            m.data_type = data_type::IMAGE;
            m.format = i.format().fourcc();
            m.width = i.width();
            m.height = i.height();
        }
        Some(Reference::Scalar(s)) => {
            m.data_type = data_type::SCALAR;
            m.scalar_type = s.scalar_type().code() as u32;
        }
        // The other types are named; their meta data does not cross the ABI yet.
        Some(other) => m.data_type = other.data_type().code() as u32,
    }
    Ok(m)
}

unsafe extern "C" fn val_set_output_image(
    v: &Validator,
    index: u32,
    format: u32,
    width: u32,
    height: u32,
) -> AbiResult<()> {
    catch("set output image", || {
        let c = validate_call(v);
        abi((|| {
            let f = ImageFormat::from_fourcc(format).ok_or_else(|| {
                Error::new(ErrorKind::InvalidFormat, "unknown image format code").found(format!("{format:#x}"))
            })?;
            c.metas.get(index)?.set_image(f, width, height)?;
            Ok(())
        })())
    })
}

unsafe extern "C" fn val_set_output_array(v: &Validator, index: u32, scalar_type: u32, capacity: u64) -> AbiResult<()> {
    catch("set output array", || {
        let c = validate_call(v);
        abi((|| {
            let t = ScalarType::ALL.into_iter().find(|t| t.code() as u32 == scalar_type).ok_or_else(|| {
                Error::new(ErrorKind::InvalidType, "unknown scalar type code").found(format!("{scalar_type:#x}"))
            })?;
            c.metas.get(index)?.set_array_item_type(ArrayItemType::Scalar(t))?.set_array_capacity(capacity as usize)?;
            Ok(())
        })())
    })
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
            param_meta: val_param_meta,
            set_output_image: val_set_output_image,
            set_output_array: val_set_output_array,
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
