//! The lifecycle vtable: what a module's init and deinit may call (node local data under the spec's
//! rules, alias decisions, parameter metas, kernel memory).

use std::ffi::c_void;
use std::sync::OnceLock;

use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::module_abi::{AbiResult, Lifecycle, LifecycleVtable, LifecycleVtableRef, LocalData, MemBlockInfo};
use vx_plugin_abi::object_meta::{ObjectMeta as WireMeta, ParamPath};

use crate::error::{Error, ErrorKind, Result};
use crate::kernel::contexts::LifecycleContext;
use crate::kernel::memory::Taken;
use crate::module::host::objects::wire_meta;
use crate::module::host::processor::region;
use crate::module::host::{abi, catch, catch_or, to_error};

struct LifecycleCall<'a, 'b> {
    lc: &'a mut LifecycleContext<'b>,
    /// Kernel memory blocks handed out in this call (each once).
    taken: Taken,
}

fn call_state<'a, 'b>(l: &Lifecycle) -> &'a mut LifecycleCall<'a, 'b> {
    // SAFETY: `call_lifecycle` built this Lifecycle with `ctx` = the address of a LifecycleCall
    // that lives (and is borrowed by nobody else) for the whole callback.
    unsafe { &mut *(l.ctx() as *mut LifecycleCall<'a, 'b>) }
}

fn lifecycle_call<'a, 'b>(l: &Lifecycle) -> &'a mut LifecycleContext<'b> {
    call_state(l).lc
}

unsafe extern "C" fn life_mem_alloc(l: &Lifecycle, region_code: u32, bytes: u64) -> AbiResult<u32> {
    catch("memory alloc", || abi(region(region_code).and_then(|r| lifecycle_call(l).alloc_bytes(r, bytes as usize))))
}

unsafe extern "C" fn life_mem_free(l: &Lifecycle, region_code: u32, index: u32) -> AbiResult<()> {
    catch("memory free", || {
        let c = call_state(l);
        abi((|| {
            let region = region(region_code)?;
            // A block handed out in this call may still be in use as a slice: freeing it would
            // leave that slice dangling.
            if c.taken.is_taken(region, index) {
                return Err(Error::new(
                    ErrorKind::InvalidParameters,
                    format!("{region} block #{index} was handed out in this callback and cannot be freed in it"),
                ));
            }
            c.lc.memory.free(region, index)
        })())
    })
}

unsafe extern "C" fn life_mem_block(l: &Lifecycle, region_code: u32, index: u32) -> AbiResult<MemBlockInfo> {
    catch("memory block", || {
        let c = call_state(l);
        abi((|| {
            let region = region(region_code)?;
            let (ptr, bytes) = c.lc.memory.locate(region, index, (std::ptr::null_mut(), 0))?;
            c.taken.take(region, index)?;
            Ok(MemBlockInfo { ptr: ptr as usize, bytes: bytes as u64 })
        })())
    })
}

unsafe extern "C" fn life_object_meta(l: &Lifecycle, path: ParamPath) -> AbiResult<WireMeta> {
    catch("object meta", || abi(wire_meta(lifecycle_call(l).params(), path)))
}

unsafe extern "C" fn life_local_data(l: &Lifecycle) -> LocalData {
    catch_or("local data", LocalData { ptr: 0, size: 0 }, || {
        let c = lifecycle_call(l);
        LocalData { ptr: c.local_data_ptr() as usize, size: c.local_data_size() as u64 }
    })
}

unsafe extern "C" fn life_set_size(l: &Lifecycle, size: u64) -> AbiResult<()> {
    catch("set size", || abi(lifecycle_call(l).set_local_data_size(size as usize)))
}

unsafe extern "C" fn life_set_ptr(l: &Lifecycle, ptr: usize) -> AbiResult<()> {
    catch("set ptr", || abi(lifecycle_call(l).set_local_data_ptr(ptr as *mut std::ffi::c_void)))
}

unsafe extern "C" fn life_is_aliased(l: &Lifecycle, a: u32, b: u32) -> bool {
    catch_or("is aliased", false, || lifecycle_call(l).is_parameter_aliased(a, b))
}

fn lifecycle_vtable() -> LifecycleVtableRef {
    static V: OnceLock<LifecycleVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        LifecycleVtable {
            local_data: life_local_data,
            set_local_data_size: life_set_size,
            set_local_data_ptr: life_set_ptr,
            is_aliased: life_is_aliased,
            mem_alloc: life_mem_alloc,
            mem_free: life_mem_free,
            mem_block: life_mem_block,
            object_meta: life_object_meta,
        }
        .leak_into_prefix()
    })
}

pub(super) fn call_lifecycle(
    f: extern "C" fn(&Lifecycle) -> AbiResult<()>,
    lc: &mut LifecycleContext<'_>,
) -> Result<()> {
    let mut call = LifecycleCall { lc, taken: Taken::default() };
    // SAFETY: `call` is the LifecycleCall the lifecycle vtable's functions expect, borrowed by
    // nobody else for the whole callback; the module receives the handle for this call only.
    let handle =
        unsafe { Lifecycle::from_raw(lifecycle_vtable(), &mut call as *mut LifecycleCall<'_, '_> as *mut c_void) };
    f(&handle).into_result().map_err(to_error)
}
