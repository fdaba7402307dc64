//! The controller vtable: what a module's control callback may call (the command, its references'
//! scalar values, the node's local data, persistent kernel memory). Nothing allocates.

use std::ffi::c_void;
use std::sync::OnceLock;

use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::module_abi::{
    AbiResult, Controller, ControllerVtable, ControllerVtableRef, LocalData, MemBlockInfo, ScalarBits,
};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::contexts::ControlContext;
use crate::module::host::objects::scalar_bits;
use crate::module::host::processor::region;
use crate::module::host::{abi, catch, catch_or, to_error};

fn control_call<'a, 'b>(c: &Controller) -> &'a mut ControlContext<'b> {
    // SAFETY: `call_control` built this Controller with `ctx` = the address of a ControlContext
    // that lives (and is borrowed by nobody else) for the whole callback.
    unsafe { &mut *(c.ctx() as *mut ControlContext<'b>) }
}

unsafe extern "C" fn ctl_command(c: &Controller) -> u32 {
    catch_or("command", 0, || control_call(c).command())
}

unsafe extern "C" fn ctl_num_refs(c: &Controller) -> u32 {
    catch_or("num refs", 0, || control_call(c).refs().len() as u32)
}

unsafe extern "C" fn ctl_ref_scalar(c: &Controller, index: u32) -> AbiResult<ScalarBits> {
    catch("ref scalar", || {
        let cc = control_call(c);
        abi((|| {
            let refs = cc.refs();
            let r = refs.get(index as usize).ok_or_else(|| {
                Error::new(ErrorKind::InvalidParameters, "no such reference in the command")
                    .expected_found(format!("index < {}", refs.len()), index)
            })?;
            let s = r.as_scalar().ok_or_else(|| {
                Error::new(ErrorKind::InvalidType, "the command's reference is not a scalar")
                    .expected_found("scalar", r.data_type())
            })?;
            Ok(scalar_bits(s.read()))
        })())
    })
}

unsafe extern "C" fn ctl_local_data(c: &Controller) -> LocalData {
    catch_or("local data", LocalData { ptr: 0, size: 0 }, || {
        let cc = control_call(c);
        LocalData { ptr: cc.local_data_ptr() as usize, size: cc.local_data_size() as u64 }
    })
}

unsafe extern "C" fn ctl_mem_block(c: &Controller, region_code: u32, index: u32) -> AbiResult<MemBlockInfo> {
    catch("memory block", || {
        let cc = control_call(c);
        abi((|| {
            let region = region(region_code)?;
            let (ptr, bytes) = cc.raw_block(region, index)?;
            Ok(MemBlockInfo { ptr: ptr as usize, bytes: bytes as u64 })
        })())
    })
}

fn controller_vtable() -> ControllerVtableRef {
    static V: OnceLock<ControllerVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        ControllerVtable {
            command: ctl_command,
            num_refs: ctl_num_refs,
            ref_scalar: ctl_ref_scalar,
            local_data: ctl_local_data,
            mem_block: ctl_mem_block,
        }
        .leak_into_prefix()
    })
}

pub(super) fn call_control(f: extern "C" fn(&Controller) -> AbiResult<()>, cc: &mut ControlContext<'_>) -> Result<()> {
    // SAFETY: `cc` is the ControlContext the controller vtable's functions expect, borrowed by
    // nobody else for the whole callback; the module receives the handle for this call only.
    let handle = unsafe { Controller::from_raw(controller_vtable(), cc as *mut ControlContext<'_> as *mut c_void) };
    f(&handle).into_result().map_err(to_error)
}
