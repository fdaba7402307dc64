//! Data objects from C: references in general (`vxQueryReference`, `vxRetainReference`,
//! `vxReleaseReference`, `vxSetReferenceName`), images (create, virtual, query, map/unmap) and
//! scalars (create, query, copy). The other data types are listed as not implemented yet
//! (`unimplemented.rs`).

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use vx::{ImageBytesMap, ImageFormat, Rect, Reference, ScalarType, ScalarValue};

use crate::context::{CContext, context_of, error_object};
use crate::ffi::{self, fail, guard, guard_ref, put};
use crate::frames;
use crate::graph::{data_handle, data_of, graph_of};
use crate::handle::{self, Object};
use crate::sys::consts::*;
use crate::sys::*;

#[unsafe(no_mangle)]
pub extern "C" fn vxRetainReference(r: vx_reference) -> vx_status {
    guard(r, || handle::retain(r))
}

/// # Safety
/// `r` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseReference(r: *mut vx_reference) -> vx_status {
    // SAFETY: forwarded contract.
    let h = unsafe { ffi::deref(r) };
    if handle::get(h, VX_TYPE_CONTEXT).is_ok() {
        // SAFETY: forwarded contract.
        return unsafe { crate::context::vxReleaseContext(r) };
    }
    // SAFETY: forwarded contract.
    unsafe { ffi::release(r, VX_TYPE_REFERENCE) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryReference(
    r: vx_reference,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(r, || {
        let e = match handle::get(r, VX_TYPE_REFERENCE) {
            Ok(e) => e,
            Err(s) => return s,
        };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_REFERENCE_COUNT => {
                    let (ext, int) = handle::counts(r).unwrap_or((0, 0));
                    // The runtime's own holds (a node's parameters, a graph's) count too.
                    let held = match &e.object {
                        Object::Data(d) => d.reference_count().saturating_sub(1) as u32,
                        _ => 0,
                    };
                    put(ptr, size, ext + int + held)
                }
                VX_REFERENCE_TYPE => put(ptr, size, e.kind),
                VX_REFERENCE_NAME => {
                    let names = e.name.lock().unwrap_or_else(|p| p.into_inner());
                    put(ptr, size, names.last().map_or(std::ptr::null(), |n| n.as_ptr()))
                }
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// # Safety
/// `name` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetReferenceName(r: vx_reference, name: *const vx_char) -> vx_status {
    guard(r, || {
        let e = match handle::get(r, VX_TYPE_REFERENCE) {
            Ok(e) => e,
            Err(s) => return s,
        };
        // SAFETY: forwarded contract.
        let Some(text) = (unsafe { ffi::text(name) }) else { return VX_ERROR_INVALID_PARAMETERS };
        let name = CString::new(text).unwrap_or_default();
        let mut names = e.name.lock().unwrap_or_else(|p| p.into_inner());
        if names.last() != Some(&name) {
            names.push(name);
        }
        drop(names);
        match &e.object {
            Object::Graph(g) => g.set_name(text),
            Object::Node(n) => {
                let _ = n.set_name(text);
            }
            Object::Data(Reference::Image(i)) => i.set_name(text),
            Object::Data(Reference::Scalar(s)) => s.set_name(text),
            _ => {}
        }
        VX_SUCCESS
    })
}

/// The handle of a new object, or the error object of why it was not made (logged).
pub(crate) fn created(cc: &Arc<CContext>, at: vx_reference, r: vx::Result<Reference>) -> vx_reference {
    match r {
        Ok(r) => data_handle(cc, &r, true),
        Err(e) => {
            fail(Some(cc), at, &e);
            error_object(Some(cc), e.status().code())
        }
    }
}

fn format_of(cc: &Arc<CContext>, at: vx_reference, color: vx_df_image) -> Option<ImageFormat> {
    let f = ImageFormat::from_fourcc(color);
    if f.is_none() {
        cc.log(at, VX_ERROR_INVALID_FORMAT, &format!("the image format {color:#010x} is not one vx-rs has"));
    }
    f
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateImage(
    context: vx_context,
    width: vx_uint32,
    height: vx_uint32,
    color: vx_df_image,
) -> vx_image {
    guard_ref(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        if color == VX_DF_IMAGE_VIRT as u32 {
            cc.log(context, VX_ERROR_INVALID_FORMAT, "vxCreateImage: VX_DF_IMAGE_VIRT is for virtual images only");
            return error_object(Some(&cc), VX_ERROR_INVALID_FORMAT);
        }
        let Some(f) = format_of(&cc, context, color) else { return error_object(Some(&cc), VX_ERROR_INVALID_FORMAT) };
        if width == 0 || height == 0 {
            cc.log(
                context,
                VX_ERROR_INVALID_DIMENSION,
                &format!("vxCreateImage: {width}x{height}: an image needs a width and a height"),
            );
            return error_object(Some(&cc), VX_ERROR_INVALID_DIMENSION);
        }
        created(&cc, context, vx::Image::new(&cc.ctx, width, height, f).map(Reference::Image))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualImage(
    graph: vx_graph,
    width: vx_uint32,
    height: vx_uint32,
    color: vx_df_image,
) -> vx_image {
    guard_ref(graph, || {
        let (g, cc) = match graph_of(graph) {
            Ok(x) => x,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        let f = if color == VX_DF_IMAGE_VIRT as u32 {
            ImageFormat::Virtual
        } else {
            match format_of(&cc, graph, color) {
                Some(f) => f,
                None => return error_object(Some(&cc), VX_ERROR_INVALID_FORMAT),
            }
        };
        created(&cc, graph, vx::Image::new_virtual(&g, width, height, f).map(Reference::Image))
    })
}

/// # Safety
/// `image` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseImage(image: *mut vx_image) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(image, VX_TYPE_IMAGE) }
}

fn image_of(r: vx_image) -> Result<(vx::Image, Option<Arc<CContext>>), vx_status> {
    let e = handle::get(r, VX_TYPE_IMAGE)?;
    match &e.object {
        Object::Data(Reference::Image(i)) => Ok((i.clone(), e.ctx.clone())),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

fn rect_t(r: Rect) -> vx_rectangle_t {
    vx_rectangle_t { start_x: r.start_x, start_y: r.start_y, end_x: r.end_x, end_y: r.end_y }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryImage(
    image: vx_image,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(image, || {
        let (img, _) = match image_of(image) {
            Ok(x) => x,
            Err(s) => return s,
        };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_IMAGE_WIDTH => put(ptr, size, img.width()),
                VX_IMAGE_HEIGHT => put(ptr, size, img.height()),
                VX_IMAGE_FORMAT => put(ptr, size, img.format().fourcc()),
                VX_IMAGE_PLANES => put(ptr, size, img.planes() as vx_size),
                VX_IMAGE_SPACE => put(
                    ptr,
                    size,
                    match img.color_space() {
                        vx::ColorSpace::None => VX_COLOR_SPACE_NONE,
                        vx::ColorSpace::Bt601_525 => VX_COLOR_SPACE_BT601_525,
                        vx::ColorSpace::Bt601_625 => VX_COLOR_SPACE_BT601_625,
                        vx::ColorSpace::Bt709 => VX_COLOR_SPACE_BT709,
                    } as vx_enum,
                ),
                VX_IMAGE_RANGE => put(ptr, size, VX_CHANNEL_RANGE_FULL as vx_enum),
                VX_IMAGE_MEMORY_TYPE => put(ptr, size, VX_MEMORY_TYPE_NONE as vx_enum),
                VX_IMAGE_IS_UNIFORM => put(ptr, size, VX_FALSE),
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// Patches the application mapped (map id → mapping).
/// (the image's id, the mapping) by map id.
static APP_MAPS: LazyLock<Mutex<HashMap<usize, (u64, ImageBytesMap)>>> = LazyLock::new(Default::default);
static NEXT_MAP: AtomicUsize = AtomicUsize::new(1);

/// # Safety
/// The pointers must be NULL or valid for what the specification says the function writes or reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapImagePatch(
    image: vx_image,
    rect: *const vx_rectangle_t,
    plane_index: vx_uint32,
    map_id: *mut vx_map_id,
    addr: *mut vx_imagepatch_addressing_t,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
    _flags: vx_uint32,
) -> vx_status {
    guard(image, || {
        let e = match handle::get(image, VX_TYPE_IMAGE) {
            Ok(e) => e,
            Err(s) => return s,
        };
        let Object::Data(r @ Reference::Image(img)) = &e.object else { return VX_ERROR_INVALID_REFERENCE };
        if rect.is_null() || map_id.is_null() || addr.is_null() || ptr.is_null() {
            return ffi::refuse(
                &e,
                image,
                VX_ERROR_INVALID_PARAMETERS,
                "vxMapImagePatch: rect, map_id, addr and ptr must not be NULL",
            );
        }
        if mem_type != VX_MEMORY_TYPE_HOST {
            return ffi::refuse(
                &e,
                image,
                VX_ERROR_INVALID_PARAMETERS,
                "vxMapImagePatch: only VX_MEMORY_TYPE_HOST memory",
            );
        }
        let write = match usage {
            VX_READ_ONLY => false,
            VX_WRITE_ONLY | VX_READ_AND_WRITE => true,
            _ => {
                return ffi::refuse(
                    &e,
                    image,
                    VX_ERROR_INVALID_PARAMETERS,
                    &format!("vxMapImagePatch: usage {usage:#x} is not a map usage"),
                );
            }
        };
        // SAFETY: a valid rectangle (the contract; NULL refused above).
        let rc = unsafe { *rect };
        let rr = Rect::new(rc.start_x, rc.start_y, rc.end_x, rc.end_y);
        let id = NEXT_MAP.fetch_add(1, Ordering::Relaxed);
        let plane = plane_index as usize;
        let mapped = match frames::map_for_kernel(r, rr, plane, write, id) {
            Some(m) => m,
            None => img.map_bytes(rr, plane, write).map(|m| {
                let out = (m.ptr(), m.addressing());
                APP_MAPS.lock().unwrap_or_else(|p| p.into_inner()).insert(id, (r.id(), m));
                out
            }),
        };
        match mapped {
            Ok((p, a)) => {
                let info = img.format().planes()[plane];
                // SAFETY: valid out-pointers (the contract; NULL refused above).
                unsafe {
                    *addr = vx_imagepatch_addressing_t {
                        dim_x: rr.width(),
                        dim_y: rr.height(),
                        stride_x: a.stride_x,
                        stride_y: a.stride_y,
                        scale_x: VX_SCALE_UNITY as u32 / info.subsample_x,
                        scale_y: VX_SCALE_UNITY as u32 / info.subsample_y,
                        step_x: info.subsample_x,
                        step_y: info.subsample_y as u16,
                        stride_x_bits: (a.stride_x * 8) as u16,
                    };
                    *ptr = p as *mut c_void;
                    *map_id = id;
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), image, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapImagePatch(image: vx_image, map_id: vx_map_id) -> vx_status {
    guard(image, || {
        let Ok((img, ctx)) = image_of(image) else { return VX_ERROR_INVALID_REFERENCE };
        let id = Reference::Image(img).id();
        if frames::unmap(map_id, id) {
            return VX_SUCCESS;
        }
        let gone = {
            let mut maps = APP_MAPS.lock().unwrap_or_else(|p| p.into_inner());
            match maps.get(&map_id) {
                Some((object, _)) if *object == id => maps.remove(&map_id),
                _ => None,
            }
        };
        match gone {
            Some(m) => {
                drop(m); // outside the lock
                VX_SUCCESS
            }
            None => {
                if let Some(c) = ctx {
                    c.log(
                        image,
                        VX_ERROR_INVALID_PARAMETERS,
                        &format!("vxUnmapImagePatch: map id {map_id} is not a mapping of this image"),
                    );
                }
                VX_ERROR_INVALID_PARAMETERS
            }
        }
    })
}

/// The scalar type of a `vx_type_e` code.
pub(crate) fn scalar_type_of(code: vx_enum) -> Option<ScalarType> {
    ScalarType::ALL.into_iter().find(|t| t.code() == code)
}

/// The C size of a scalar type's value (`vx_bool` is an `int` in C).
fn c_size(t: ScalarType) -> usize {
    match t {
        ScalarType::Bool => size_of::<vx_bool>(),
        t => t.size(),
    }
}

fn value_from(t: ScalarType, ptr: *const c_void) -> ScalarValue {
    let mut bytes = [0u8; 8];
    let n = t.size();
    if t == ScalarType::Bool {
        // SAFETY: the caller's value holds a vx_bool (the contract of the callers).
        let b = unsafe { (ptr as *const vx_bool).read_unaligned() };
        bytes[0] = (b != VX_FALSE) as u8;
    } else {
        // SAFETY: the caller's value holds `n` bytes (the contract of the callers).
        unsafe { std::ptr::copy_nonoverlapping(ptr as *const u8, bytes.as_mut_ptr(), n) };
    }
    ScalarValue::from_ne_bytes(t, bytes)
}

fn value_to(v: &ScalarValue, ptr: *mut c_void) {
    let t = v.scalar_type();
    let bytes = v.to_ne_bytes();
    if t == ScalarType::Bool {
        // SAFETY: the caller's buffer holds a vx_bool (the contract of the callers).
        unsafe { (ptr as *mut vx_bool).write_unaligned(if bytes[0] != 0 { VX_TRUE } else { VX_FALSE }) };
    } else {
        // SAFETY: the caller's buffer holds the type's bytes (the contract of the callers).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, t.size()) };
    }
}

/// # Safety
/// `ptr` must be NULL or point to a value of the C type of `data_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateScalar(context: vx_context, data_type: vx_enum, ptr: *const c_void) -> vx_scalar {
    guard_ref(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        let Some(t) = scalar_type_of(data_type) else {
            cc.log(context, VX_ERROR_INVALID_TYPE, &format!("vxCreateScalar: {data_type:#x} is not a scalar type"));
            return error_object(Some(&cc), VX_ERROR_INVALID_TYPE);
        };
        let v = if ptr.is_null() { ScalarValue::zero(t) } else { value_from(t, ptr) };
        created(&cc, context, vx::Scalar::new(&cc.ctx, v).map(Reference::Scalar))
    })
}

/// # Safety
/// `scalar` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseScalar(scalar: *mut vx_scalar) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(scalar, VX_TYPE_SCALAR) }
}

fn scalar_of(r: vx_scalar) -> Result<(vx::Scalar, Option<Arc<CContext>>), vx_status> {
    let e = handle::get(r, VX_TYPE_SCALAR)?;
    match &e.object {
        Object::Data(Reference::Scalar(s)) => Ok((s.clone(), e.ctx.clone())),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryScalar(
    scalar: vx_scalar,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(scalar, || {
        let (s, _) = match scalar_of(scalar) {
            Ok(x) => x,
            Err(st) => return st,
        };
        match attribute {
            // SAFETY: forwarded contract.
            VX_SCALAR_TYPE => unsafe { put(ptr, size, s.scalar_type().code()) },
            _ => VX_ERROR_NOT_SUPPORTED,
        }
    })
}

/// # Safety
/// `user_ptr` must be NULL or point to a value of the scalar's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyScalar(
    scalar: vx_scalar,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    copy_scalar(scalar, None, user_ptr, usage, user_mem_type)
}

/// # Safety
/// `user_ptr` must be NULL or point to `size` bytes (or a value of the scalar's C type when
/// called from `vxCopyScalar`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyScalarWithSize(
    scalar: vx_scalar,
    size: vx_size,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    copy_scalar(scalar, Some(size), user_ptr, usage, user_mem_type)
}

/// `vxCopyScalar` (`size` `None`: the value is of the scalar's C type) and `vxCopyScalarWithSize`.
fn copy_scalar(
    scalar: vx_scalar,
    size: Option<vx_size>,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    guard(scalar, || {
        let (s, ctx) = match scalar_of(scalar) {
            Ok(x) => x,
            Err(st) => return st,
        };
        let t = s.scalar_type();
        if user_ptr.is_null() || user_mem_type != VX_MEMORY_TYPE_HOST || size.is_some_and(|n| n != c_size(t)) {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        match usage {
            VX_READ_ONLY => match s.value() {
                Ok(v) => {
                    value_to(&v, user_ptr);
                    VX_SUCCESS
                }
                Err(e) => fail(ctx.as_ref(), scalar, &e),
            },
            VX_WRITE_ONLY => match s.set_value(value_from(t, user_ptr)) {
                Ok(()) => VX_SUCCESS,
                Err(e) => fail(ctx.as_ref(), scalar, &e),
            },
            _ => VX_ERROR_INVALID_PARAMETERS,
        }
    })
}

#[allow(dead_code)]
fn _rect(r: Rect) -> vx_rectangle_t {
    rect_t(r)
}

#[allow(dead_code)]
fn _data(r: vx_reference) -> Result<Reference, vx_status> {
    data_of(r)
}

/// The application's memory lent to an image (`vxCreateImageFromHandle`): an address and a
/// length it promises stay valid while the image has them.
struct CMemory {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the memory is the application's, lent to the image for its whole use; the image (not
// a thread) owns the loan, and every access goes through the image's own lease protocol.
unsafe impl Send for CMemory {}

impl vx::ExternalMemory for CMemory {
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the application lent `len` bytes at `ptr` (checked non-NULL and sized from its
        // own addressing) for as long as the image holds this handle.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// The handle over plane 0 at `ptr` with `addr`'s rows, checked: `VX_ERROR_INVALID_PARAMETERS`
/// for a NULL pointer, a stride_x that is not the pixel size, or a size that overflows.
fn c_handle(
    format: ImageFormat,
    addr: &vx_imagepatch_addressing_t,
    ptr: *mut c_void,
) -> Result<vx::ImageHandle, String> {
    if ptr.is_null() {
        return Err("the plane pointer is NULL".into());
    }
    let px = format.planes()[0].bytes_per_element as i64;
    let row = px * addr.dim_x as i64;
    if addr.stride_x as i64 != px
        || (addr.stride_y as i64) < row
        || addr.stride_y <= 0
        || addr.dim_x == 0
        || addr.dim_y == 0
    {
        return Err(format!(
            "plane 0 needs dim_x, dim_y > 0, stride_x = {px} and stride_y >= {px} x dim_x; found stride_x {} stride_y {} dim {}x{}",
            addr.stride_x, addr.stride_y, addr.dim_x, addr.dim_y
        ));
    }
    let len = (addr.stride_y as u64)
        .checked_mul(addr.dim_y as u64)
        .filter(|&n| n <= isize::MAX as u64)
        .ok_or("the plane's size overflows")? as usize;
    Ok(vx::ImageHandle::new(CMemory { ptr: ptr as *mut u8, len }, addr.stride_y as usize))
}

/// # Safety
/// `addrs` and `ptrs` must be NULL or hold one entry per plane of `color`; the memory must stay
/// valid while the image has it (until `vxSwapImageHandle` or the release).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateImageFromHandle(
    context: vx_context,
    color: vx_df_image,
    addrs: *const vx_imagepatch_addressing_t,
    ptrs: *const *mut c_void,
    memory_type: vx_enum,
) -> vx_image {
    guard_ref(context, || {
        let Ok(cc) = context_of(context) else { return std::ptr::null_mut() };
        let refuse = |status, why: &str| {
            cc.log(context, status, &format!("vxCreateImageFromHandle: {why}"));
            error_object(Some(&cc), status)
        };
        let Some(f) = format_of(&cc, context, color).filter(|f| *f != ImageFormat::Virtual) else {
            return refuse(VX_ERROR_INVALID_FORMAT, "not an image format vx-rs has");
        };
        if memory_type != VX_MEMORY_TYPE_HOST {
            return refuse(VX_ERROR_INVALID_PARAMETERS, "only VX_MEMORY_TYPE_HOST memory");
        }
        if addrs.is_null() || ptrs.is_null() {
            return refuse(VX_ERROR_INVALID_PARAMETERS, "addrs and ptrs must not be NULL");
        }
        if f.plane_count() != 1 {
            return refuse(VX_ERROR_NOT_SUPPORTED, "images from the application's memory have one plane in vx-rs");
        }
        // SAFETY: one entry per plane (the contract; NULL refused above).
        let (addr, ptr) = unsafe { (*addrs, *ptrs) };
        let h = match c_handle(f, &addr, ptr) {
            Ok(h) => h,
            Err(why) => return refuse(VX_ERROR_INVALID_PARAMETERS, &why),
        };
        created(&cc, context, vx::Image::from_handle(&cc.ctx, addr.dim_x, addr.dim_y, f, h).map(Reference::Image))
    })
}

/// # Safety
/// `new_ptrs` and `prev_ptrs` must be NULL or hold `num_planes` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSwapImageHandle(
    image: vx_image,
    new_ptrs: *const *mut c_void,
    prev_ptrs: *mut *mut c_void,
    num_planes: vx_size,
) -> vx_status {
    guard(image, || {
        let (img, ctx) = match image_of(image) {
            Ok(x) => x,
            Err(s) => return s,
        };
        if num_planes != img.planes() {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        let new = if new_ptrs.is_null() {
            None
        } else {
            // SAFETY: `num_planes` (= 1, checked) entries (the contract).
            let ptr = unsafe { *new_ptrs };
            let Some(stride) = img.row_stride() else { return VX_ERROR_INVALID_PARAMETERS };
            let addr = vx_imagepatch_addressing_t {
                dim_x: img.width(),
                dim_y: img.height(),
                stride_x: img.format().planes()[0].bytes_per_element as i32,
                stride_y: stride as i32,
                ..Default::default()
            };
            match c_handle(img.format(), &addr, ptr) {
                Ok(h) => Some(h),
                Err(why) => {
                    if let Some(c) = &ctx {
                        c.log(image, VX_ERROR_INVALID_PARAMETERS, &format!("vxSwapImageHandle: {why}"));
                    }
                    return VX_ERROR_INVALID_PARAMETERS;
                }
            }
        };
        match img.swap_handle(new) {
            Ok(old) => {
                if !prev_ptrs.is_null() {
                    let p = old.map_or(std::ptr::null_mut(), |h| h.as_ptr() as *mut c_void);
                    // SAFETY: `num_planes` entries (the contract).
                    unsafe { *prev_ptrs = p };
                }
                VX_SUCCESS
            }
            Err(e) => fail(ctx.as_ref(), image, &e),
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateScalarWithSize(
    context: vx_context,
    data_type: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_scalar {
    guard_ref(context, || {
        let Ok(cc) = context_of(context) else { return std::ptr::null_mut() };
        let Some(t) = scalar_type_of(data_type) else {
            cc.log(
                context,
                VX_ERROR_INVALID_TYPE,
                &format!("vxCreateScalarWithSize: {data_type:#x} is not a scalar type vx-rs has"),
            );
            return error_object(Some(&cc), VX_ERROR_INVALID_TYPE);
        };
        if size != c_size(t) {
            cc.log(
                context,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("vxCreateScalarWithSize: a {t:?} is {} bytes, not {size}", c_size(t)),
            );
            return error_object(Some(&cc), VX_ERROR_INVALID_PARAMETERS);
        }
        let v = if ptr.is_null() { ScalarValue::zero(t) } else { value_from(t, ptr) };
        created(&cc, context, vx::Scalar::new(&cc.ctx, v).map(Reference::Scalar))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualScalar(graph: vx_graph, data_type: vx_enum) -> vx_scalar {
    guard_ref(graph, || {
        let Ok((g, cc)) = graph_of(graph) else { return std::ptr::null_mut() };
        let Some(t) = scalar_type_of(data_type) else {
            cc.log(
                graph,
                VX_ERROR_INVALID_TYPE,
                &format!("vxCreateVirtualScalar: {data_type:#x} is not a scalar type vx-rs has"),
            );
            return error_object(Some(&cc), VX_ERROR_INVALID_TYPE);
        };
        created(&cc, graph, vx::Scalar::new_virtual(&g, t).map(Reference::Scalar))
    })
}
