//! `vx_kernel`, `vx_meta_format` and user kernels from C: `vxAddUserKernel` with C validate,
//! init, deinit and process callbacks over a vx-rs [`KernelBuilder`](vx::KernelBuilder). Each
//! callback runs through one trampoline ([`call`]) that lends handles for the node, its
//! parameters and (validators) its meta formats, inside a frame (`frames.rs`), and turns the
//! status it returns into a vx-rs error naming the callback.

use std::ffi::c_void;
use std::sync::{Arc, OnceLock, Weak};

use vx::{Error, ErrorKind, Kernel, NodeKey, Reference, Status, WeakKernel};

use crate::context::{CContext, context_of, error_object};
use crate::ffi::{self, fail, guard, guard_ref, put};
use crate::frames::{self, Lent};
use crate::graph::node_handle;
use crate::handle::{self, Entry, Ident, Lend, Object, Parameter};
use crate::sys::consts::*;
use crate::sys::*;

/// The kernel behind handle `k`.
pub(crate) fn kernel_of(k: vx_kernel) -> Result<Kernel, vx_status> {
    match &handle::get(k, VX_TYPE_KERNEL)?.object {
        Object::Kernel(k) => k.lock().unwrap_or_else(|p| p.into_inner()).clone().ok_or(VX_ERROR_INVALID_REFERENCE),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

fn kernel_handle(cc: &Arc<CContext>, k: Kernel) -> vx_kernel {
    handle::handle_for(cc, Ident::Kernel(k.id()), true, || {
        Entry::new(VX_TYPE_KERNEL, Some(Arc::clone(cc)), Object::Kernel(std::sync::Mutex::new(Some(k))))
    })
}

fn found(cc: &Arc<CContext>, context: vx_context, k: vx::Result<Kernel>) -> vx_kernel {
    match k {
        Ok(k) => kernel_handle(cc, k),
        Err(e) => {
            fail(Some(cc), context, &e);
            error_object(Some(cc), e.status().code())
        }
    }
}

/// # Safety
/// `name` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxGetKernelByName(context: vx_context, name: *const vx_char) -> vx_kernel {
    guard_ref(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        // SAFETY: forwarded contract.
        let Some(name) = (unsafe { ffi::text(name) }) else {
            return error_object(Some(&cc), VX_ERROR_INVALID_PARAMETERS);
        };
        found(&cc, context, cc.ctx.kernel_by_name(name))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetKernelByEnum(context: vx_context, kernel: vx_enum) -> vx_kernel {
    guard_ref(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        found(&cc, context, cc.ctx.kernel_by_enum(kernel))
    })
}

/// # Safety
/// `kernel` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseKernel(kernel: *mut vx_kernel) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(kernel, VX_TYPE_KERNEL) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryKernel(
    kernel: vx_kernel,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(kernel, || {
        let k = match kernel_of(kernel) {
            Ok(k) => k,
            Err(s) => return s,
        };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_KERNEL_PARAMETERS => put(ptr, size, k.num_params()),
                VX_KERNEL_NAME => {
                    if size < VX_MAX_KERNEL_NAME as usize && size <= k.name().len() {
                        return VX_ERROR_INVALID_PARAMETERS;
                    }
                    ffi::put_text(ptr, size, k.name())
                }
                VX_KERNEL_ENUM => put(ptr, size, k.enumeration()),
                VX_KERNEL_LOCAL_DATA_SIZE => put(ptr, size, k.local_data_size()),
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// What a C callback returns, as a vx-rs result naming the callback.
fn status_result(what: &str, kernel: &str, status: vx_status) -> vx::Result<()> {
    if status == VX_SUCCESS {
        return Ok(());
    }
    let kind = Status::from_code(status).map_or(ErrorKind::Failure, ErrorKind::from_status);
    let name = Status::from_code(status).map_or_else(|| status.to_string(), |s| s.c_name().to_owned());
    Err(Error::new(kind, format!("the kernel's {what} callback returned {name}")).in_kernel(kernel))
}

/// The handles a callback is lent: its node, each parameter (NULL where unset) and, for a
/// validator, each output's meta format. Released (internal counts) when dropped.
struct Lending {
    node: vx_node,
    params: Vec<vx_reference>,
    metas: Vec<vx_meta_format>,
}

impl Lending {
    fn new(cc: &Arc<CContext>, key: NodeKey, params: &[Option<Reference>]) -> Lending {
        let node = cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).get(&key).cloned();
        let lent =
            std::iter::once(node.as_ref().map(Lend::Node)).chain(params.iter().map(|p| p.as_ref().map(Lend::Data)));
        let mut handles = handle::lend_all(cc, lent);
        let node = handles.remove(0);
        Lending { node, params: handles, metas: Vec::new() }
    }
}

impl Drop for Lending {
    fn drop(&mut self) {
        let mut lent = Vec::with_capacity(1 + self.params.len() + self.metas.len());
        lent.push(self.node);
        lent.extend_from_slice(&self.params);
        lent.extend_from_slice(&self.metas);
        let gone = handle::release_lent(&lent);
        drop(gone); // outside the table's lock
    }
}

/// A C user kernel's functions and what its trampolines need.
struct CKernel {
    ctx: Weak<CContext>,
    name: String,
    kernel: OnceLock<WeakKernel>,
    process: vx_kernel_f,
    validate: vx_kernel_validate_f,
    init: vx_kernel_initialize_f,
    deinit: vx_kernel_deinitialize_f,
}

impl CKernel {
    fn context(&self) -> vx::Result<Arc<CContext>> {
        self.ctx
            .upgrade()
            .ok_or_else(|| Error::new(ErrorKind::InvalidReference, "the C context was released").in_kernel(&self.name))
    }
    fn kernel(&self) -> vx::Result<WeakKernel> {
        self.kernel.get().cloned().ok_or_else(|| {
            Error::new(ErrorKind::InvalidReference, "the kernel is not registered").in_kernel(&self.name)
        })
    }

    /// Run C callback `f` (process, init or deinit) for node `key` with `params`.
    fn call(
        &self,
        what: &str,
        f: vx_kernel_f,
        key: NodeKey,
        params: &[Option<Reference>],
        lent: Lent,
    ) -> vx::Result<()> {
        let Some(f) = f else { return Ok(()) };
        let cc = self.context()?;
        let lending = Lending::new(&cc, key, params);
        let status = frames::with_frame(key, self.kernel()?, lent, |_| {
            // SAFETY: the application registered `f` with this signature; the handles are alive
            // (lent) for the call, and the array holds `num` of them.
            unsafe { f(lending.node, lending.params.as_ptr(), lending.params.len() as u32) }
        });
        drop(lending);
        status_result(what, &self.name, status)
    }
}

// SAFETY: the C function pointers are plain addresses the application promises are callable from
// any thread (the spec lets the runtime call kernels from any thread); the rest is Send + Sync.
unsafe impl Send for CKernel {}
// SAFETY: as above.
unsafe impl Sync for CKernel {}

/// # Safety
/// `name` must be NULL or a NUL-terminated string; the callbacks must have the C signatures.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxAddUserKernel(
    context: vx_context,
    name: *const vx_char,
    enumeration: vx_enum,
    func_ptr: vx_kernel_f,
    num_params: vx_uint32,
    validate: vx_kernel_validate_f,
    init: vx_kernel_initialize_f,
    deinit: vx_kernel_deinitialize_f,
) -> vx_kernel {
    guard_ref(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        // SAFETY: forwarded contract.
        let Some(name) = (unsafe { ffi::text(name) }) else {
            cc.log(context, VX_ERROR_INVALID_PARAMETERS, "vxAddUserKernel: the name is NULL or not UTF-8");
            return error_object(Some(&cc), VX_ERROR_INVALID_PARAMETERS);
        };
        if func_ptr.is_none() {
            cc.log(
                context,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("vxAddUserKernel: kernel '{name}' has no process function"),
            );
            return error_object(Some(&cc), VX_ERROR_INVALID_PARAMETERS);
        }
        let ck = Arc::new(CKernel {
            ctx: Arc::downgrade(&cc),
            name: name.to_owned(),
            kernel: OnceLock::new(),
            process: func_ptr,
            validate,
            init,
            deinit,
        });
        let (p, i, d) = (Arc::clone(&ck), Arc::clone(&ck), Arc::clone(&ck));
        let mut b = cc
            .ctx
            .user_kernel(name, enumeration, num_params)
            .process(move |pc| {
                let (key, params) = (pc.node_key(), pc.params());
                let lent = Lent::Process(std::ptr::from_mut(pc).cast());
                p.call("process", p.process, key, params, lent)
            })
            .init(move |lc| {
                let (key, params) = (lc.node_key(), lc.params());
                let lent = Lent::Lifecycle(std::ptr::from_mut(lc).cast());
                i.call("init", i.init, key, params, lent)
            })
            .deinit(move |lc| {
                let (key, params) = (lc.node_key(), lc.params());
                let lent = Lent::Lifecycle(std::ptr::from_mut(lc).cast());
                d.call("deinit", d.deinit, key, params, lent)
            });
        if validate.is_some() {
            let v = Arc::clone(&ck);
            b = b.validate(move |vc, metas| validate_trampoline(&v, vc, metas));
        }
        match b.add() {
            Ok(k) => {
                let _ = ck.kernel.set(k.downgrade());
                kernel_handle(&cc, k)
            }
            Err(e) => {
                fail(Some(&cc), context, &e);
                error_object(Some(&cc), e.status().code())
            }
        }
    })
}

fn validate_trampoline(ck: &CKernel, vc: &vx::ValidateContext<'_>, metas: &mut vx::MetaFormats) -> vx::Result<()> {
    let Some(f) = ck.validate else { return Ok(()) };
    let cc = ck.context()?;
    let key = vc.node_key();
    let mut lending = Lending::new(&cc, key, vc.params());
    let outputs: Vec<bool> = (0..vc.params().len() as u32).map(|i| metas.get(i).is_ok()).collect();
    let lent = Lent::Validate { vc: std::ptr::from_ref(vc).cast(), metas: std::ptr::from_mut(metas) };
    let status = frames::with_frame(key, ck.kernel()?, lent, |frame| {
        lending.metas = outputs
            .iter()
            .enumerate()
            .map(|(i, &out)| {
                if !out {
                    return std::ptr::null_mut();
                }
                handle::register(
                    Entry::new(
                        VX_TYPE_META_FORMAT,
                        Some(Arc::clone(&cc)),
                        Object::MetaFormat { frame, index: i as u32 },
                    ),
                    false,
                )
            })
            .collect();
        // SAFETY: the application registered `f` with this signature; the handles are alive
        // (lent) for the call; both arrays hold `num` entries.
        unsafe { f(lending.node, lending.params.as_ptr(), lending.params.len() as u32, lending.metas.as_ptr()) }
    });
    drop(lending);
    status_result("validate", &ck.name, status)
}

#[unsafe(no_mangle)]
pub extern "C" fn vxAddParameterToKernel(
    kernel: vx_kernel,
    index: vx_uint32,
    dir: vx_enum,
    data_type: vx_enum,
    state: vx_enum,
) -> vx_status {
    guard(kernel, || {
        let k = match kernel_of(kernel) {
            Ok(k) => k,
            Err(s) => return s,
        };
        let e = handle::lookup(kernel).expect("found above");
        let direction = match dir {
            VX_INPUT => vx::ParamDirection::Input,
            VX_OUTPUT => vx::ParamDirection::Output,
            _ => {
                return ffi::refuse(
                    &e,
                    kernel,
                    VX_ERROR_INVALID_PARAMETERS,
                    &format!(
                        "vxAddParameterToKernel: parameter {index}: direction {dir:#x} is not VX_INPUT or VX_OUTPUT"
                    ),
                );
            }
        };
        let Some(t) = u32::try_from(data_type).ok().and_then(vx::DataType::from_code) else {
            return ffi::refuse(
                &e,
                kernel,
                VX_ERROR_INVALID_PARAMETERS,
                &format!(
                    "vxAddParameterToKernel: parameter {index}: type {data_type:#x} is not a data object type vx-rs has"
                ),
            );
        };
        let state = match state {
            VX_PARAMETER_STATE_REQUIRED => vx::ParamState::Required,
            VX_PARAMETER_STATE_OPTIONAL => vx::ParamState::Optional,
            _ => {
                return ffi::refuse(
                    &e,
                    kernel,
                    VX_ERROR_INVALID_PARAMETERS,
                    &format!("vxAddParameterToKernel: parameter {index}: state {state:#x} is not required or optional"),
                );
            }
        };
        match k.add_parameter(index, direction, t, state) {
            Ok(()) => VX_SUCCESS,
            Err(err) => fail(e.ctx.as_ref(), kernel, &err),
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetKernelAttribute(
    kernel: vx_kernel,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    guard(kernel, || {
        let k = match kernel_of(kernel) {
            Ok(k) => k,
            Err(s) => return s,
        };
        let e = handle::lookup(kernel).expect("found above");
        let a = match attribute {
            // SAFETY: forwarded contract.
            VX_KERNEL_LOCAL_DATA_SIZE => match unsafe { ffi::take::<vx_size>(ptr, size) } {
                Ok(n) => vx::KernelAttribute::LocalDataSize(n),
                Err(s) => return s,
            },
            _ => return VX_ERROR_NOT_SUPPORTED,
        };
        match k.set_attribute(a) {
            Ok(()) => VX_SUCCESS,
            Err(err) => fail(e.ctx.as_ref(), kernel, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxFinalizeKernel(kernel: vx_kernel) -> vx_status {
    guard(kernel, || {
        let k = match kernel_of(kernel) {
            Ok(k) => k,
            Err(s) => return s,
        };
        let e = handle::lookup(kernel).expect("found above");
        match k.finalize() {
            Ok(()) => VX_SUCCESS,
            Err(err) => fail(e.ctx.as_ref(), kernel, &err),
        }
    })
}

/// `vxRemoveKernel`: removes the kernel from the context and releases the handle.
#[unsafe(no_mangle)]
pub extern "C" fn vxRemoveKernel(kernel: vx_kernel) -> vx_status {
    guard(kernel, || {
        let k = match kernel_of(kernel) {
            Ok(k) => k,
            Err(s) => return s,
        };
        drop(k);
        let e = handle::lookup(kernel).expect("found above");
        let Object::Kernel(slot) = &e.object else { return VX_ERROR_INVALID_REFERENCE };
        // The handle's own `Kernel` goes into the removal (any other is a reference that refuses it).
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        let Some(own) = slot.take() else { return VX_ERROR_INVALID_REFERENCE };
        match own.try_remove() {
            Ok(()) => {
                drop(slot);
                // Another handle to it may live on (refused with INVALID_REFERENCE from now on);
                // a new kernel of the same record address must get a new handle.
                handle::forget_identity(kernel);
                drop(handle::release(kernel, VX_TYPE_KERNEL, true));
                VX_SUCCESS
            }
            Err((err, own)) => {
                *slot = Some(own);
                drop(slot);
                fail(e.ctx.as_ref(), kernel, &err)
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetKernelParameterByIndex(kernel: vx_kernel, index: vx_uint32) -> vx_parameter {
    guard_ref(kernel, || {
        let e = match handle::get(kernel, VX_TYPE_KERNEL) {
            Ok(e) => e,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        let Ok(k) = kernel_of(kernel) else { return error_object(e.ctx.as_ref(), VX_ERROR_INVALID_REFERENCE) };
        let k = &k;
        if index >= k.num_params() {
            return error_object(e.ctx.as_ref(), VX_ERROR_INVALID_PARAMETERS);
        }
        handle::register(
            Entry::new(
                VX_TYPE_PARAMETER,
                e.ctx.clone(),
                Object::Parameter(Parameter::Kernel { kernel: k.clone(), index }),
            ),
            true,
        )
    })
}

/// `vxAllocateUserKernelId` / `vxAllocateUserKernelLibraryId`: `allocate`'s id into `*id`.
fn allocate_id(context: vx_context, id: *mut vx_enum, allocate: fn(&vx::Context) -> vx::Result<i32>) -> vx_status {
    guard(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(s) => return s,
        };
        if id.is_null() {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        match allocate(&cc.ctx) {
            Ok(v) => {
                // SAFETY: a valid vx_enum variable (the callers' contract; NULL refused above).
                unsafe { id.write_unaligned(v) };
                VX_SUCCESS
            }
            Err(e) => fail(Some(&cc), context, &e),
        }
    })
}

/// # Safety
/// `id` must be NULL or point to a `vx_enum`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxAllocateUserKernelId(context: vx_context, id: *mut vx_enum) -> vx_status {
    allocate_id(context, id, vx::Context::allocate_user_kernel_id)
}

/// # Safety
/// `id` must be NULL or point to a `vx_enum`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxAllocateUserKernelLibraryId(context: vx_context, id: *mut vx_enum) -> vx_status {
    allocate_id(context, id, vx::Context::allocate_user_kernel_library_id)
}

/// A C valid-rectangle callback (`VX_VALID_RECT_CALLBACK`) called for output `index` of node
/// `key`: the rectangles as arrays of pointers, as the C type has them.
fn valid_rect_trampoline(
    ctx: &Weak<CContext>,
    key: Option<NodeKey>,
    f: unsafe extern "C" fn(vx_node, vx_uint32, *const *const vx_rectangle_t, *const *mut vx_rectangle_t) -> vx_status,
    index: u32,
    inputs: &[vx::Rect],
    outputs: &mut [vx::Rect],
) -> vx::Result<()> {
    let cc = ctx.upgrade().ok_or_else(|| Error::new(ErrorKind::InvalidReference, "the C context was released"))?;
    let rect = |r: &vx::Rect| vx_rectangle_t { start_x: r.start_x, start_y: r.start_y, end_x: r.end_x, end_y: r.end_y };
    let ins: Vec<vx_rectangle_t> = inputs.iter().map(rect).collect();
    let mut outs: Vec<vx_rectangle_t> = outputs.iter().map(rect).collect();
    let in_ptrs: Vec<*const vx_rectangle_t> = ins.iter().map(|r| r as *const _).collect();
    let out_ptrs: Vec<*mut vx_rectangle_t> = outs.iter_mut().map(|r| r as *mut _).collect();
    let node = key
        .and_then(|k| cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).get(&k).cloned())
        .map_or(std::ptr::null_mut(), |n| node_handle(&cc, &n, false));
    // SAFETY: the application gave `f` as a `vx_kernel_image_valid_rectangle_f`; both arrays
    // hold one valid pointer per rectangle and outlive the call; the node handle is lent.
    let status = unsafe { f(node, index, in_ptrs.as_ptr(), out_ptrs.as_ptr()) };
    if !node.is_null() {
        drop(handle::release(node, VX_TYPE_NODE, false));
    }
    status_result("valid-rectangle", "", status)?;
    for (o, r) in outputs.iter_mut().zip(&outs) {
        *o = vx::Rect::new(r.start_x, r.start_y, r.end_x, r.end_y);
    }
    Ok(())
}

fn meta_frame(meta: vx_meta_format) -> Result<(u64, u32, Arc<Entry>), vx_status> {
    let e = handle::get(meta, VX_TYPE_META_FORMAT)?;
    match e.object {
        Object::MetaFormat { frame, index } => Ok((frame, index, Arc::clone(&e))),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetMetaFormatAttribute(
    meta: vx_meta_format,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    guard(meta, || {
        let (frame, index, e) = match meta_frame(meta) {
            Ok(x) => x,
            Err(s) => return s,
        };
        if ptr.is_null() {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        if attribute == VX_VALID_RECT_CALLBACK {
            // SAFETY: forwarded contract (a `vx_kernel_image_valid_rectangle_f`).
            let f = match unsafe { ffi::take::<vx_kernel_image_valid_rectangle_f>(ptr, size) } {
                Ok(Some(f)) => f,
                Ok(None) => return VX_ERROR_INVALID_PARAMETERS,
                Err(s) => return s,
            };
            let Some(cc) = e.ctx.clone() else { return VX_ERROR_INVALID_REFERENCE };
            let key = frames::frame_node(frame);
            let ctx = Arc::downgrade(&cc);
            let res = frames::with_metas(frame, |m| {
                m.get(index).and_then(|mf| {
                    mf.set_valid_rect_callback(move |out, inputs, outputs| {
                        valid_rect_trampoline(&ctx, key, f, out, inputs, outputs)
                    })
                    .map(|_| ())
                })
            });
            return match res {
                None => VX_ERROR_INVALID_REFERENCE,
                Some(Ok(())) => VX_SUCCESS,
                Some(Err(err)) => fail(e.ctx.as_ref(), meta, &err),
            };
        }
        // No meta-format attribute's value is larger than this; a larger size is a caller's error
        // (and a slice longer than isize::MAX would be undefined behaviour).
        const MAX_ATTRIBUTE_BYTES: usize = 4096;
        if size > MAX_ATTRIBUTE_BYTES {
            return ffi::refuse(
                &e,
                meta,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("vxSetMetaFormatAttribute: size {size} is larger than any attribute"),
            );
        }
        // SAFETY: `size` (bounded above) readable bytes at `ptr` (the contract).
        let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, size) };
        let attr = match vx::MetaAttribute::from_code(attribute as u32, bytes) {
            Ok(a) => a,
            Err(err) => return fail(e.ctx.as_ref(), meta, &err.at_parameter(index)),
        };
        let res = frames::with_metas(frame, |m| m.get(index).and_then(|mf| mf.set(attr).map(|_| ())));
        match res {
            None => VX_ERROR_INVALID_REFERENCE,
            Some(Ok(())) => VX_SUCCESS,
            Some(Err(err)) => fail(e.ctx.as_ref(), meta, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxSetMetaFormatFromReference(meta: vx_meta_format, exemplar: vx_reference) -> vx_status {
    guard(meta, || {
        let (frame, index, e) = match meta_frame(meta) {
            Ok(x) => x,
            Err(s) => return s,
        };
        let ex = match crate::graph::data_of(exemplar) {
            Ok(r) => r,
            Err(s) => return s,
        };
        match frames::with_metas(frame, |m| m.get(index).and_then(|mf| mf.set_from_reference(&ex).map(|_| ()))) {
            None => VX_ERROR_INVALID_REFERENCE,
            Some(Ok(())) => VX_SUCCESS,
            Some(Err(err)) => fail(e.ctx.as_ref(), meta, &err),
        }
    })
}
