//! `vx_delay`: the C API over [`vx::Delay`]. A delay's slot objects get handles when it is made,
//! held (internal counts) as long as the delay: `vxGetReferenceFromDelay` hands them out without
//! a count of the caller's, as the specification has it. Setting a node parameter to a slot
//! object binds it to that slot's index (`graph.rs`), so aging rebinds it.

use std::ffi::c_void;
use std::sync::{Arc, Weak};

use crate::context::{CContext, context_of, error_object};
use crate::ffi::{self, fail, guard, guard_ref, put};
use crate::graph::{data_handle, data_of, graph_of};
use crate::handle::{self, Entry, Object};
use crate::sys::consts::*;
use crate::sys::*;

/// A delay and the handles of its slot objects.
pub(crate) struct CDelay {
    pub(crate) delay: vx::Delay,
    slots: Vec<usize>,
    ctx: Weak<CContext>,
}

impl Drop for CDelay {
    fn drop(&mut self) {
        if let Some(cc) = self.ctx.upgrade() {
            cc.delays.lock().unwrap_or_else(|p| p.into_inner()).retain(|d| !d.same_delay(&self.delay));
        }
        let mut gone = Vec::new();
        for &h in &self.slots {
            if let Ok(Some(e)) = handle::release(h as vx_reference, VX_TYPE_REFERENCE, false) {
                gone.push(e);
            }
        }
        drop(gone);
    }
}

fn delay_of(d: vx_reference) -> Result<(Arc<Entry>, vx::Delay), vx_status> {
    let e = handle::get(d, VX_TYPE_DELAY)?;
    match &e.object {
        Object::Delay(cd) => {
            let delay = cd.delay.clone();
            Ok((e, delay))
        }
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateDelay(context: vx_context, exemplar: vx_reference, num_slots: vx_size) -> vx_reference {
    guard_ref(context, || {
        let Ok(cc) = context_of(context) else { return std::ptr::null_mut() };
        let ex = match data_of(exemplar) {
            Ok(r) => r,
            Err(s) => {
                cc.log(context, s, "vxCreateDelay: the exemplar is not a live data object");
                return error_object(Some(&cc), s);
            }
        };
        match vx::Delay::new(&ex, num_slots) {
            Ok(delay) => {
                let slots = (0..num_slots as i32)
                    .map(|i| data_handle(&cc, &delay.get(-i).expect("in range"), false) as usize)
                    .collect();
                cc.delays.lock().unwrap_or_else(|p| p.into_inner()).push(delay.clone());
                let cd = CDelay { delay, slots, ctx: Arc::downgrade(&cc) };
                handle::register(Entry::new(VX_TYPE_DELAY, Some(Arc::clone(&cc)), Object::Delay(cd)), true)
            }
            Err(e) => {
                fail(Some(&cc), context, &e);
                error_object(Some(&cc), e.status().code())
            }
        }
    })
}

/// # Safety
/// `delay` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseDelay(delay: *mut vx_reference) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(delay, VX_TYPE_DELAY) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryDelay(
    delay: vx_reference,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(delay, || {
        let (_, d) = match delay_of(delay) {
            Ok(x) => x,
            Err(s) => return s,
        };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_DELAY_TYPE => put(ptr, size, d.data_type().code()),
                VX_DELAY_SLOTS => put(ptr, size, d.slots() as vx_size),
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetReferenceFromDelay(delay: vx_reference, index: vx_int32) -> vx_reference {
    guard_ref(delay, || {
        let (e, d) = match delay_of(delay) {
            Ok(x) => x,
            Err(_) => return std::ptr::null_mut(),
        };
        let Some(cc) = e.ctx.clone() else { return std::ptr::null_mut() };
        match d.get(index) {
            Ok(r) => {
                // The delay holds the slot handles; lend this one without a count of the caller's.
                let h = data_handle(&cc, &r, false);
                drop(handle::release(h, VX_TYPE_REFERENCE, false));
                h
            }
            Err(err) => {
                fail(Some(&cc), delay, &err);
                error_object(Some(&cc), err.status().code())
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxAgeDelay(delay: vx_reference) -> vx_status {
    guard(delay, || match delay_of(delay) {
        Ok((e, d)) => match d.age() {
            Ok(()) => VX_SUCCESS,
            Err(err) => fail(e.ctx.as_ref(), delay, &err),
        },
        Err(s) => s,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxRegisterAutoAging(graph: vx_graph, delay: vx_reference) -> vx_status {
    guard(graph, || {
        let (g, cc) = match graph_of(graph) {
            Ok(x) => x,
            Err(s) => return s,
        };
        let (_, d) = match delay_of(delay) {
            Ok(x) => x,
            Err(s) => return s,
        };
        match g.register_auto_aging(&d) {
            Ok(()) => VX_SUCCESS,
            Err(e) => fail(Some(&cc), graph, &e),
        }
    })
}
