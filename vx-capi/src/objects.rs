//! The data objects besides images and scalars: arrays (and user structs), matrices,
//! convolutions, LUTs, distributions, thresholds, remaps, pyramids, object arrays, tensors and
//! user data objects; and the image functions beyond create/query/map (uniform images, ROIs,
//! patch copies, valid regions, patch addresses).
//!
//! Copies and maps go through the object's bytes mapped as a [`vx::BytesMap`]: a copy maps,
//! copies with the caller's layout and unmaps; a map keeps the mapping under its map id until the
//! unmap (or, for a kernel's process callback mapping one of its own parameters, until the end of
//! the callback: `frames.rs` keeps it, and the kernel may map virtual objects). Map ids are counted
//! from [`MAP_ID_BASE`], apart from the image maps of `data.rs` (counted from 1), so that no
//! unmap ever finds another object's mapping.
//!
//! The caller's sizes are checked before anything is written to its memory or reserved for it:
//! attribute sizes by `ffi::put` / `ffi::take`, ranges against the object's own size (an array's
//! capacity, a tensor's dimensions, a remap's destination) before a byte is copied.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

use vx::{
    ArrayItemType, BytesMap, Coordinates2d, DataObject, ImageFormat, MatrixPattern, ProcessContext, Rect, Reference,
    ScalarType, ThresholdType,
};

use crate::context::{CContext, context_of, error_object};
use crate::data::{created, scalar_type_of};
use crate::ffi::{self, fail, guard, guard_ref, put, take};
use crate::frames;
use crate::graph::{data_of, graph_of};
use crate::handle::{self, Entry, Object};
use crate::sys::consts::*;
use crate::sys::*;

// The handle types of the headers this file takes (all `vx_reference` underneath).
#[allow(non_camel_case_types)]
type vx_array = vx_reference;
#[allow(non_camel_case_types)]
type vx_matrix = vx_reference;
#[allow(non_camel_case_types)]
type vx_convolution = vx_reference;
#[allow(non_camel_case_types)]
type vx_lut = vx_reference;
#[allow(non_camel_case_types)]
type vx_distribution = vx_reference;
#[allow(non_camel_case_types)]
type vx_threshold = vx_reference;
#[allow(non_camel_case_types)]
type vx_remap = vx_reference;
#[allow(non_camel_case_types)]
type vx_pyramid = vx_reference;
#[allow(non_camel_case_types)]
type vx_object_array = vx_reference;
#[allow(non_camel_case_types)]
type vx_tensor = vx_reference;
#[allow(non_camel_case_types)]
type vx_user_data_object = vx_reference;

// ---- Shared helpers -----------------------------------------------------------------------

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The object of type `T` behind handle `r` (a live handle of `T`'s type), with its entry.
fn object_of<T: DataObject>(r: vx_reference) -> Result<(T, Arc<Entry>), vx_status> {
    let e = handle::get(r, T::TYPE.code())?;
    let t = match &e.object {
        Object::Data(d) => d.get::<T>().cloned().ok_or(VX_ERROR_INVALID_REFERENCE)?,
        _ => return Err(VX_ERROR_INVALID_REFERENCE),
    };
    Ok((t, e))
}

/// The data object of an entry [`object_of`] returned.
fn reference(e: &Entry) -> &Reference {
    match &e.object {
        Object::Data(d) => d,
        _ => unreachable!("object_of returns data entries only"),
    }
}

/// The handle of a newly made object, or the error object of its failure (logged).
/// Log `text` against `at` and return the error object of `status`.
fn refused(cc: &Arc<CContext>, at: vx_reference, status: vx_status, text: &str) -> vx_reference {
    cc.log(at, status, text);
    error_object(Some(cc), status)
}

/// A create function on a context: `f` with the context behind `context`.
fn on_context(context: vx_context, f: impl FnOnce(&Arc<CContext>) -> vx_reference) -> vx_reference {
    guard_ref(context, || match context_of(context) {
        Ok(cc) => f(&cc),
        Err(s) => error_object(None, s),
    })
}

/// A create function on a graph (virtual objects): `f` with the graph and its context.
fn on_graph(graph: vx_graph, f: impl FnOnce(&vx::Graph, &Arc<CContext>) -> vx_reference) -> vx_reference {
    guard_ref(graph, || match graph_of(graph) {
        Ok((g, cc)) => f(&g, &cc),
        Err(s) => error_object(None, s),
    })
}

/// A function on an object of type `T`: `f` with the object and its entry.
fn on<T: DataObject>(r: vx_reference, f: impl FnOnce(&T, &Arc<Entry>) -> vx_status) -> vx_status {
    guard(r, || match object_of::<T>(r) {
        Ok((t, e)) => f(&t, &e),
        Err(s) => s,
    })
}

/// `VX_SUCCESS`, or the status of vx-rs's error (logged against `r`).
fn status_of(e: &Entry, r: vx_reference, res: vx::Result<()>) -> vx_status {
    match res {
        Ok(()) => VX_SUCCESS,
        Err(err) => fail(e.ctx.as_ref(), r, &err),
    }
}

/// The scalar type with `vx_type_e` value `code`.
/// The image format `code`, or the status refusing it (logged against `at`): formats vx-rs does
/// not have are `VX_ERROR_NOT_SUPPORTED`, codes that are no format `VX_ERROR_INVALID_FORMAT`.
/// `VX_DF_IMAGE_VIRT` only when `virt` (virtual objects).
fn format_of(
    cc: &CContext,
    at: vx_reference,
    what: &str,
    code: vx_df_image,
    virt: bool,
) -> Result<ImageFormat, vx_status> {
    if code == VX_DF_IMAGE_VIRT as u32 {
        if virt {
            return Ok(ImageFormat::Virtual);
        }
        cc.log(at, VX_ERROR_INVALID_FORMAT, &format!("{what}: VX_DF_IMAGE_VIRT is for virtual objects only"));
        return Err(VX_ERROR_INVALID_FORMAT);
    }
    if let Some(f) = ImageFormat::from_fourcc(code) {
        return Ok(f);
    }
    let lacking = [(VX_DF_IMAGE_U1, "U1")];
    if let Some((_, name)) = lacking.iter().find(|(c, _)| *c as u32 == code) {
        cc.log(at, VX_ERROR_NOT_SUPPORTED, &format!("{what}: vx-rs has no {name} images (not supported)"));
        return Err(VX_ERROR_NOT_SUPPORTED);
    }
    cc.log(at, VX_ERROR_INVALID_FORMAT, &format!("{what}: {code:#010x} is not an image format"));
    Err(VX_ERROR_INVALID_FORMAT)
}

/// What a copy or map does with the object's bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Usage {
    Read,
    Write,
    ReadWrite,
}

impl Usage {
    fn writes(self) -> bool {
        self != Usage::Read
    }
}

/// The usage of a copy (`map`: false; `VX_READ_ONLY` or `VX_WRITE_ONLY`) or a map (also
/// `VX_READ_AND_WRITE`), in host memory; `VX_ERROR_INVALID_PARAMETERS` (logged) otherwise.
fn usage_of(
    e: &Entry,
    r: vx_reference,
    what: &str,
    usage: vx_enum,
    mem_type: vx_enum,
    map: bool,
) -> Result<Usage, vx_status> {
    if mem_type != VX_MEMORY_TYPE_HOST {
        return Err(ffi::refuse(
            e,
            r,
            VX_ERROR_INVALID_PARAMETERS,
            &format!("{what}: only VX_MEMORY_TYPE_HOST memory"),
        ));
    }
    match usage {
        VX_READ_ONLY => Ok(Usage::Read),
        VX_WRITE_ONLY => Ok(Usage::Write),
        VX_READ_AND_WRITE if map => Ok(Usage::ReadWrite),
        _ => Err(ffi::refuse(
            e,
            r,
            VX_ERROR_INVALID_PARAMETERS,
            &format!(
                "{what}: usage {usage:#x} is not {}",
                if map { "VX_READ_ONLY, VX_WRITE_ONLY or VX_READ_AND_WRITE" } else { "VX_READ_ONLY or VX_WRITE_ONLY" }
            ),
        )),
    }
}

/// `VX_ERROR_OPTIMIZED_AWAY` (logged) for a virtual object, unless a process callback running here
/// has it as a parameter (its kernel may): checked before the arguments, whose ranges a virtual
/// object may not know yet.
fn reachable(e: &Entry, r: vx_reference, what: &str) -> Result<(), vx_status> {
    let d = reference(e);
    if d.is_virtual() && frames::kernel_param(d, |_, _| ()).is_none() {
        return Err(ffi::refuse(
            e,
            r,
            VX_ERROR_OPTIMIZED_AWAY,
            &format!("{what}: a virtual object is accessed by the kernels of its graph only"),
        ));
    }
    Ok(())
}

/// `VX_ERROR_INVALID_PARAMETERS` (logged) for a NULL pointer the function needs.
fn need(e: &Entry, r: vx_reference, what: &str, ptrs: &[(*const c_void, &str)]) -> Result<(), vx_status> {
    match ptrs.iter().find(|(p, _)| p.is_null()) {
        Some((_, name)) => {
            Err(ffi::refuse(e, r, VX_ERROR_INVALID_PARAMETERS, &format!("{what}: {name} must not be NULL")))
        }
        None => Ok(()),
    }
}

/// Copy `n` bytes between the object's mapped memory and the caller's (`to_user`: out of the
/// object).
///
/// # Safety
/// `object` must hold `n` bytes of a live mapping (written only when `!to_user`, with a write
/// mapping) and `user` `n` bytes of the caller's memory (the function's contract).
unsafe fn copy(object: *mut u8, user: *mut u8, n: usize, to_user: bool) {
    // SAFETY: both ranges hold `n` bytes (the contract); they do not overlap (the object's memory
    // is the runtime's, the caller's its own).
    unsafe {
        if to_user {
            std::ptr::copy_nonoverlapping(object, user, n)
        } else {
            std::ptr::copy_nonoverlapping(user, object, n)
        }
    }
}

// ---- Byte maps ----------------------------------------------------------------------------

/// The objects whose bytes are mapped whole ([`vx::BytesMap`]): as the application, or as the
/// kernel of a running process callback that has the object as parameter `index`.
trait Bytes: DataObject {
    fn app_bytes(&self, write: bool) -> vx::Result<BytesMap>;
    fn kernel_bytes(pc: &ProcessContext<'static>, index: u32, write: bool) -> vx::Result<BytesMap>;
}

macro_rules! bytes_objects {
    ($($t:ty),*) => {$(
        impl Bytes for $t {
            fn app_bytes(&self, write: bool) -> vx::Result<BytesMap> {
                self.map_bytes(write)
            }
            fn kernel_bytes(pc: &ProcessContext<'static>, index: u32, write: bool) -> vx::Result<BytesMap> {
                pc.object::<$t>(index)?.map_bytes(write)
            }
        }
    )*};
}
bytes_objects!(
    vx::Matrix,
    vx::Convolution,
    vx::Lut,
    vx::Distribution,
    vx::Remap,
    vx::UserDataObject,
    vx::Array,
    vx::Tensor
);

/// `t`'s bytes mapped: as its kernel when a process callback running here has it as a
/// parameter (the flag: true), else as the application (virtual objects refused).
fn bytes_as<T: Bytes>(t: &T, e: &Entry, write: bool) -> (vx::Result<BytesMap>, bool) {
    match frames::kernel_param(reference(e), |pc, i| T::kernel_bytes(pc, i, write)) {
        Some(m) => (m, true),
        None => (t.app_bytes(write), false),
    }
}

/// [`bytes_as`], for a copy (the mapping goes when the copy is done).
fn bytes<T: Bytes>(t: &T, e: &Entry, write: bool) -> vx::Result<BytesMap> {
    bytes_as(t, e, write).0
}

/// Map ids of this file start here: the image maps of `data.rs` count from 1 and never get here.
const MAP_ID_BASE: usize = 1 << 47;
static NEXT_MAP: AtomicUsize = AtomicUsize::new(MAP_ID_BASE);

/// A mapping the application holds until its unmap.
struct AppMap {
    /// The mapped object's id (an unmap must name the object it mapped).
    object: u64,
    map: BytesMap,
}

static APP_MAPS: LazyLock<Mutex<HashMap<usize, AppMap>>> = LazyLock::new(Default::default);

/// Map `t`'s bytes under a new map id (a kernel's mapping of its parameter kept by its frame, at
/// most until the callback returns; the application's here, until its unmap): the id and the
/// mapping's first byte and length.
fn map_new<T: Bytes>(t: &T, e: &Entry, write: bool) -> vx::Result<(vx_map_id, *mut u8, usize)> {
    let (m, kernel) = bytes_as(t, e, write);
    let m = m?;
    let id = NEXT_MAP.fetch_add(1, Ordering::Relaxed);
    let out = (id, m.ptr(), m.len());
    // Moving the mapping keeps its memory where it is.
    let m = if kernel { frames::keep(id, reference(e).id(), m).err() } else { Some(m) };
    if let Some(m) = m {
        lock(&APP_MAPS).insert(id, AppMap { object: reference(e).id(), map: m });
    }
    Ok(out)
}

/// `vxUnmap*`: give back mapping `map_id` of the object behind `r`, of type `T`.
fn unmap<T: DataObject>(r: vx_reference, map_id: vx_map_id, what: &str) -> vx_status {
    on::<T>(r, |_, e| {
        if frames::unmap(map_id, reference(e).id()) {
            return VX_SUCCESS;
        }
        let gone = {
            let mut maps = lock(&APP_MAPS);
            match maps.get(&map_id) {
                Some(m) if m.object == reference(e).id() => maps.remove(&map_id),
                _ => None,
            }
        };
        match gone {
            Some(m) => {
                drop(m.map); // outside the lock: the mapping's handle may be the object's last
                VX_SUCCESS
            }
            None => ffi::refuse(
                e,
                r,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{what}: map id {map_id:#x} is not a mapping of this object"),
            ),
        }
    })
}

/// The common body of the whole-object maps (`vxMapLUT`, `vxMapDistribution`, …).
///
/// # Safety
/// `map_id` and `ptr` must be NULL or valid for writing.
unsafe fn map_whole<T: Bytes>(
    r: vx_reference,
    what: &str,
    map_id: *mut vx_map_id,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
) -> vx_status {
    on::<T>(r, |t, e| {
        if let Err(s) = need(e, r, what, &[(map_id as *const c_void, "map_id"), (ptr as *const c_void, "ptr")]) {
            return s;
        }
        let u = match usage_of(e, r, what, usage, mem_type, true) {
            Ok(u) => u,
            Err(s) => return s,
        };
        match map_new(t, e, u.writes()) {
            Ok((id, p, _)) => {
                // SAFETY: valid out-pointers (the contract; NULL refused above).
                unsafe {
                    *map_id = id;
                    *ptr = p as *mut c_void;
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), r, &err),
        }
    })
}

/// The common body of the whole-object copies (`vxCopyLUT`, `vxCopyMatrix`, …).
///
/// # Safety
/// `user_ptr` must be NULL or hold as many bytes as the object.
unsafe fn copy_whole<T: Bytes>(
    r: vx_reference,
    what: &str,
    user_ptr: *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
) -> vx_status {
    on::<T>(r, |t, e| {
        if let Err(s) = need(e, r, what, &[(user_ptr as *const c_void, "user_ptr")]) {
            return s;
        }
        let u = match usage_of(e, r, what, usage, mem_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        match bytes(t, e, u.writes()) {
            Ok(m) => {
                // SAFETY: the mapping holds m.len() bytes, the object's size, which the caller's
                // memory holds too (the contract).
                unsafe { copy(m.ptr(), user_ptr as *mut u8, m.len(), u == Usage::Read) };
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), r, &err),
        }
    })
}

// ---- User structs -------------------------------------------------------------------------

/// A context's user structs (`vxRegisterUserStruct*`) and the C item type of the arrays whose
/// vx-rs item type does not name it (user structs and `VX_TYPE_BOOL`, an `int` in C: both a
/// [`ArrayItemType::User`] of their size to vx-rs). Kept here per context, dropped with it.
struct UserStructs {
    ctx: Weak<CContext>,
    /// Struct `VX_TYPE_USER_STRUCT_START + i`: its size and name.
    structs: Vec<(usize, Option<String>)>,
    /// Array id → its C item type (entries of released arrays stay until the context goes).
    array_types: HashMap<u64, vx_enum>,
}

static USER_STRUCTS: LazyLock<Mutex<HashMap<usize, UserStructs>>> = LazyLock::new(Default::default);

/// Run `f` on the user structs of `cc`.
fn user_structs<R>(cc: &Arc<CContext>, f: impl FnOnce(&mut UserStructs) -> R) -> R {
    let mut all = lock(&USER_STRUCTS);
    // Forget the contexts that are gone: a live entry at this address is then `cc`'s.
    all.retain(|_, s| s.ctx.strong_count() > 0);
    let s = all.entry(Arc::as_ptr(cc) as usize).or_insert_with(|| UserStructs {
        ctx: Arc::downgrade(cc),
        structs: Vec::new(),
        array_types: HashMap::new(),
    });
    f(s)
}

/// The most user structs a context registers.
const MAX_USER_STRUCTS: usize = (VX_TYPE_USER_STRUCT_END - VX_TYPE_USER_STRUCT_START + 1) as usize;

fn register_struct(context: vx_context, size: vx_size, name: Option<&str>) -> vx_enum {
    ffi::guard_value(context, VX_TYPE_INVALID, || {
        let Ok(cc) = context_of(context) else { return VX_TYPE_INVALID };
        if size == 0 {
            cc.log(context, VX_ERROR_INVALID_PARAMETERS, "vxRegisterUserStruct: a user struct needs a size");
            return VX_TYPE_INVALID;
        }
        if name.is_some_and(|n| n.len() >= VX_MAX_REFERENCE_NAME as usize) {
            cc.log(
                context,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("vxRegisterUserStructWithName: the name must be shorter than {VX_MAX_REFERENCE_NAME} bytes"),
            );
            return VX_TYPE_INVALID;
        }
        // Logged after the table's lock is released (a log callback may call back in).
        let registered = user_structs(&cc, |s| {
            if let Some(n) = name
                && s.structs.iter().any(|(_, m)| m.as_deref() == Some(n))
            {
                return Err((
                    VX_ERROR_INVALID_PARAMETERS,
                    format!("vxRegisterUserStructWithName: a user struct is already called '{n}'"),
                ));
            }
            if s.structs.len() >= MAX_USER_STRUCTS {
                return Err((
                    VX_ERROR_NO_RESOURCES,
                    format!("vxRegisterUserStruct: at most {MAX_USER_STRUCTS} user structs"),
                ));
            }
            s.structs.push((size, name.map(str::to_owned)));
            Ok(VX_TYPE_USER_STRUCT_START + s.structs.len() as vx_enum - 1)
        });
        registered.unwrap_or_else(|(status, text)| {
            cc.log(context, status, &text);
            VX_TYPE_INVALID
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxRegisterUserStruct(context: vx_context, size: vx_size) -> vx_enum {
    register_struct(context, size, None)
}

/// # Safety
/// `type_name` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxRegisterUserStructWithName(
    context: vx_context,
    size: vx_size,
    type_name: *const vx_char,
) -> vx_enum {
    if type_name.is_null() {
        return register_struct(context, size, None);
    }
    // SAFETY: forwarded contract.
    match unsafe { ffi::text(type_name) } {
        Some(n) => register_struct(context, size, Some(n)),
        None => VX_TYPE_INVALID,
    }
}

/// # Safety
/// `type_name` must be NULL or point to `name_size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxGetUserStructNameByEnum(
    context: vx_context,
    user_struct_type: vx_enum,
    type_name: *mut vx_char,
    name_size: vx_size,
) -> vx_status {
    guard(context, || {
        let Ok(cc) = context_of(context) else { return VX_ERROR_INVALID_PARAMETERS };
        let found = user_structs(&cc, |s| {
            let i = user_struct_type.checked_sub(VX_TYPE_USER_STRUCT_START)?;
            s.structs.get(usize::try_from(i).ok()?).map(|(_, n)| n.clone().unwrap_or_default())
        });
        let Some(name) = found else { return VX_FAILURE };
        if name_size <= name.len() {
            return VX_ERROR_NO_MEMORY;
        }
        if type_name.is_null() {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        // SAFETY: `name_size` writable bytes (the contract), more than the name's length.
        unsafe { ffi::put_text(type_name as *mut c_void, name_size, &name) }
    })
}

/// # Safety
/// `type_name` must be NULL or a NUL-terminated string; `user_struct_type` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxGetUserStructEnumByName(
    context: vx_context,
    type_name: *const vx_char,
    user_struct_type: *mut vx_enum,
) -> vx_status {
    guard(context, || {
        let Ok(cc) = context_of(context) else { return VX_ERROR_INVALID_PARAMETERS };
        // SAFETY: forwarded contract.
        let Some(name) = (unsafe { ffi::text(type_name) }) else { return VX_FAILURE };
        let found = user_structs(&cc, |s| s.structs.iter().position(|(_, n)| n.as_deref() == Some(name)));
        let Some(i) = found else { return VX_FAILURE };
        if user_struct_type.is_null() {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        // SAFETY: a writable vx_enum (the contract; NULL refused above).
        unsafe { user_struct_type.write_unaligned(VX_TYPE_USER_STRUCT_START + i as vx_enum) };
        VX_SUCCESS
    })
}

// ---- Arrays -------------------------------------------------------------------------------

/// The vx-rs item type of C item type `code` (and whether it must be remembered per array:
/// vx-rs knows user structs and C's `vx_bool` by their size only).
fn item_type_of(cc: &Arc<CContext>, code: vx_enum) -> Option<(ArrayItemType, bool)> {
    Some(match code {
        VX_TYPE_RECTANGLE => (ArrayItemType::Rectangle, false),
        VX_TYPE_KEYPOINT => (ArrayItemType::Keypoint, false),
        VX_TYPE_COORDINATES2D => (ArrayItemType::Coordinates2d, false),
        VX_TYPE_COORDINATES2DF => (ArrayItemType::Coordinates2dF, false),
        VX_TYPE_COORDINATES3D => (ArrayItemType::Coordinates3d, false),
        VX_TYPE_BOOL => (ArrayItemType::User { size: size_of::<vx_bool>() }, true),
        VX_TYPE_USER_STRUCT_START..=VX_TYPE_USER_STRUCT_END => {
            let i = (code - VX_TYPE_USER_STRUCT_START) as usize;
            let size = user_structs(cc, |s| s.structs.get(i).map(|(size, _)| *size))?;
            (ArrayItemType::User { size }, true)
        }
        _ => (ArrayItemType::Scalar(scalar_type_of(code)?), false),
    })
}

/// `VX_ARRAY_ITEMTYPE` of `a`: the C type it was made with, else the type its vx-rs item type
/// names (a user struct of that size: the first registered).
fn item_code(ctx: Option<&Arc<CContext>>, a: &vx::Array, id: u64) -> vx_enum {
    match a.item_type() {
        None => VX_TYPE_INVALID,
        Some(ArrayItemType::Scalar(t)) => t.code(),
        Some(ArrayItemType::Rectangle) => VX_TYPE_RECTANGLE,
        Some(ArrayItemType::Keypoint) => VX_TYPE_KEYPOINT,
        Some(ArrayItemType::Coordinates2d) => VX_TYPE_COORDINATES2D,
        Some(ArrayItemType::Coordinates2dF) => VX_TYPE_COORDINATES2DF,
        Some(ArrayItemType::Coordinates3d) => VX_TYPE_COORDINATES3D,
        Some(ArrayItemType::User { size }) => ctx
            .and_then(|cc| {
                user_structs(cc, |s| {
                    s.array_types.get(&id).copied().or_else(|| {
                        let i = s.structs.iter().position(|(n, _)| *n == size)?;
                        Some(VX_TYPE_USER_STRUCT_START + i as vx_enum)
                    })
                })
            })
            .unwrap_or(VX_TYPE_INVALID),
    }
}

/// Remember the C item type of the arrays vx-rs knows by size only.
fn remember_item_type(cc: &Arc<CContext>, h: vx_reference, code: vx_enum) {
    if let Ok(r) = data_of(h) {
        user_structs(cc, |s| s.array_types.insert(r.id(), code));
    }
}

fn array_item_type(
    cc: &Arc<CContext>,
    at: vx_reference,
    what: &str,
    code: vx_enum,
) -> Result<(ArrayItemType, bool), vx_reference> {
    item_type_of(cc, code).ok_or_else(|| {
        refused(
            cc,
            at,
            VX_ERROR_INVALID_TYPE,
            &format!("{what}: {code:#x} is not an item type (or an unregistered user struct)"),
        )
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateArray(context: vx_context, item_type: vx_enum, capacity: vx_size) -> vx_array {
    on_context(context, |cc| {
        let (t, remember) = match array_item_type(cc, context, "vxCreateArray", item_type) {
            Ok(x) => x,
            Err(h) => return h,
        };
        let h = created(cc, context, vx::Array::new(&cc.ctx, t, capacity).map(Reference::Array));
        if remember {
            remember_item_type(cc, h, item_type);
        }
        h
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualArray(graph: vx_graph, item_type: vx_enum, capacity: vx_size) -> vx_array {
    on_graph(graph, |g, cc| {
        let (t, remember) = if item_type == VX_TYPE_INVALID {
            (None, false)
        } else {
            match array_item_type(cc, graph, "vxCreateVirtualArray", item_type) {
                Ok((t, r)) => (Some(t), r),
                Err(h) => return h,
            }
        };
        let h = created(cc, graph, vx::Array::new_virtual(g, t, capacity).map(Reference::Array));
        if remember {
            remember_item_type(cc, h, item_type);
        }
        h
    })
}

/// # Safety
/// `arr` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseArray(arr: *mut vx_array) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(arr, VX_TYPE_ARRAY) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryArray(arr: vx_array, attribute: vx_enum, ptr: *mut c_void, size: vx_size) -> vx_status {
    on::<vx::Array>(arr, |a, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_ARRAY_ITEMTYPE => put(ptr, size, item_code(e.ctx.as_ref(), a, reference(e).id())),
                VX_ARRAY_NUMITEMS => put(ptr, size, a.num_items() as vx_size),
                VX_ARRAY_CAPACITY => put(ptr, size, a.capacity() as vx_size),
                VX_ARRAY_ITEMSIZE => put(ptr, size, a.item_size() as vx_size),
                _ => ffi::refuse(
                    e,
                    arr,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryArray: {attribute:#x} is not an array attribute"),
                ),
            }
        }
    })
}

/// # Safety
/// `ptr` must be NULL or hold `count` items `stride` bytes apart.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxAddArrayItems(
    arr: vx_array,
    count: vx_size,
    ptr: *const c_void,
    stride: vx_size,
) -> vx_status {
    on::<vx::Array>(arr, |a, e| {
        const WHAT: &str = "vxAddArrayItems";
        if let Err(s) = reachable(e, arr, WHAT) {
            return s;
        }
        if count == 0 {
            return VX_SUCCESS;
        }
        if let Err(s) = need(e, arr, WHAT, &[(ptr, "ptr")]) {
            return s;
        }
        let item = a.item_size();
        if item == 0 {
            return ffi::refuse(
                e,
                arr,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: the array's item type is not known yet"),
            );
        }
        if stride < item {
            return ffi::refuse(
                e,
                arr,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: the stride ({stride}) is smaller than the item size ({item})"),
            );
        }
        // Checked against the array's own room before anything is read or reserved.
        let room = a.capacity().saturating_sub(a.num_items());
        if count > room {
            return ffi::refuse(
                e,
                arr,
                VX_FAILURE,
                &format!("{WHAT}: the array is full ({count} items, room for {room})"),
            );
        }
        let Some(span) = (count - 1).checked_mul(stride).and_then(|b| b.checked_add(item)) else {
            return ffi::refuse(e, arr, VX_ERROR_INVALID_PARAMETERS, &format!("{WHAT}: count × stride overflows"));
        };
        // SAFETY: the caller's `count` items `stride` bytes apart span `span` readable bytes (the
        // contract).
        let src = unsafe { std::slice::from_raw_parts(ptr as *const u8, span) };
        let packed: std::borrow::Cow<'_, [u8]> = if stride == item {
            src.into()
        } else {
            // count <= the array's room: bounded by its capacity, not by the caller.
            src.chunks(stride).flat_map(|c| &c[..item]).copied().collect::<Vec<u8>>().into()
        };
        let res = match frames::kernel_param(reference(e), |pc, i| pc.object::<vx::Array>(i)?.add_bytes(&packed)) {
            Some(r) => r,
            None => a.add_bytes(&packed),
        };
        status_of(e, arr, res)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxTruncateArray(arr: vx_array, new_num_items: vx_size) -> vx_status {
    on::<vx::Array>(arr, |a, e| {
        let res = match frames::kernel_param(reference(e), |pc, i| pc.object::<vx::Array>(i)?.truncate(new_num_items)) {
            Some(r) => r,
            None => a.truncate(new_num_items),
        };
        status_of(e, arr, res)
    })
}

/// `range_start..range_end` of `a`: a non-empty range of its items (`VX_ERROR_INVALID_PARAMETERS`
/// otherwise, logged); returns the item size.
fn array_range(
    a: &vx::Array,
    e: &Entry,
    r: vx_reference,
    what: &str,
    start: vx_size,
    end: vx_size,
) -> Result<usize, vx_status> {
    let n = a.num_items();
    if start >= end || end > n {
        return Err(ffi::refuse(
            e,
            r,
            VX_ERROR_INVALID_PARAMETERS,
            &format!("{what}: the range {start}..{end} is not a non-empty range of the array's {n} items"),
        ));
    }
    Ok(a.item_size())
}

/// # Safety
/// `user_ptr` must be NULL or hold `range_end - range_start` items `user_stride` bytes apart.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyArrayRange(
    array: vx_array,
    range_start: vx_size,
    range_end: vx_size,
    user_stride: vx_size,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    on::<vx::Array>(array, |a, e| {
        const WHAT: &str = "vxCopyArrayRange";
        if let Err(s) = reachable(e, array, WHAT) {
            return s;
        }
        if let Err(s) = need(e, array, WHAT, &[(user_ptr, "user_ptr")]) {
            return s;
        }
        let u = match usage_of(e, array, WHAT, usage, user_mem_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let item = match array_range(a, e, array, WHAT, range_start, range_end) {
            Ok(i) => i,
            Err(s) => return s,
        };
        if user_stride < item {
            return ffi::refuse(
                e,
                array,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: the stride ({user_stride}) is smaller than the item size ({item})"),
            );
        }
        match bytes(a, e, u.writes()) {
            Ok(m) => {
                for (k, i) in (range_start..range_end).enumerate() {
                    // SAFETY: item i < num_items <= capacity lies in the mapping (capacity × item
                    // bytes); the caller's item k lies at k × stride (the contract).
                    unsafe {
                        copy(m.ptr().add(i * item), (user_ptr as *mut u8).add(k * user_stride), item, u == Usage::Read)
                    };
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), array, &err),
        }
    })
}

/// # Safety
/// `map_id`, `stride` and `ptr` must be NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapArrayRange(
    array: vx_array,
    range_start: vx_size,
    range_end: vx_size,
    map_id: *mut vx_map_id,
    stride: *mut vx_size,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
    _flags: vx_uint32,
) -> vx_status {
    on::<vx::Array>(array, |a, e| {
        const WHAT: &str = "vxMapArrayRange";
        if let Err(s) = reachable(e, array, WHAT) {
            return s;
        }
        let outs =
            [(map_id as *const c_void, "map_id"), (stride as *const c_void, "stride"), (ptr as *const c_void, "ptr")];
        if let Err(s) = need(e, array, WHAT, &outs) {
            return s;
        }
        let u = match usage_of(e, array, WHAT, usage, mem_type, true) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let item = match array_range(a, e, array, WHAT, range_start, range_end) {
            Ok(i) => i,
            Err(s) => return s,
        };
        match map_new(a, e, u.writes()) {
            Ok((id, p, _)) => {
                // SAFETY: valid out-pointers (the contract; NULL refused above); item
                // range_start < num_items lies in the mapping.
                unsafe {
                    *map_id = id;
                    *stride = item;
                    *ptr = p.add(range_start * item) as *mut c_void;
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), array, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapArrayRange(array: vx_array, map_id: vx_map_id) -> vx_status {
    unmap::<vx::Array>(array, map_id, "vxUnmapArrayRange")
}

// ---- Matrices -----------------------------------------------------------------------------

fn matrix_type(cc: &Arc<CContext>, at: vx_reference, what: &str, code: vx_enum) -> Result<ScalarType, vx_reference> {
    scalar_type_of(code).ok_or_else(|| {
        refused(cc, at, VX_ERROR_INVALID_TYPE, &format!("{what}: {code:#x} is not a matrix element type"))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateMatrix(c: vx_context, data_type: vx_enum, columns: vx_size, rows: vx_size) -> vx_matrix {
    on_context(c, |cc| match matrix_type(cc, c, "vxCreateMatrix", data_type) {
        Ok(t) => created(cc, c, vx::Matrix::new(&cc.ctx, t, columns, rows).map(Reference::Matrix)),
        Err(h) => h,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualMatrix(
    graph: vx_graph,
    data_type: vx_enum,
    columns: vx_size,
    rows: vx_size,
) -> vx_matrix {
    on_graph(graph, |g, cc| match matrix_type(cc, graph, "vxCreateVirtualMatrix", data_type) {
        Ok(t) => created(cc, graph, vx::Matrix::new_virtual(g, t, columns, rows).map(Reference::Matrix)),
        Err(h) => h,
    })
}

fn pattern_of(code: vx_enum) -> Option<MatrixPattern> {
    Some(match code {
        VX_PATTERN_BOX => MatrixPattern::Box,
        VX_PATTERN_CROSS => MatrixPattern::Cross,
        VX_PATTERN_DISK => MatrixPattern::Disk,
        VX_PATTERN_OTHER => MatrixPattern::Other,
        _ => return None,
    })
}

fn pattern_code(p: MatrixPattern) -> vx_enum {
    match p {
        MatrixPattern::Box => VX_PATTERN_BOX,
        MatrixPattern::Cross => VX_PATTERN_CROSS,
        MatrixPattern::Disk => VX_PATTERN_DISK,
        MatrixPattern::Other => VX_PATTERN_OTHER,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateMatrixFromPattern(
    context: vx_context,
    pattern: vx_enum,
    columns: vx_size,
    rows: vx_size,
) -> vx_matrix {
    vxCreateMatrixFromPatternAndOrigin(context, pattern, columns, rows, columns / 2, rows / 2)
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateMatrixFromPatternAndOrigin(
    context: vx_context,
    pattern: vx_enum,
    columns: vx_size,
    rows: vx_size,
    origin_col: vx_size,
    origin_row: vx_size,
) -> vx_matrix {
    on_context(context, |cc| {
        let Some(p) = pattern_of(pattern) else {
            return refused(
                cc,
                context,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("vxCreateMatrixFromPattern: {pattern:#x} is not a pattern"),
            );
        };
        let m = vx::Matrix::from_pattern_and_origin(&cc.ctx, p, columns, rows, (origin_col, origin_row));
        created(cc, context, m.map(Reference::Matrix))
    })
}

/// # Safety
/// `mat` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseMatrix(mat: *mut vx_matrix) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(mat, VX_TYPE_MATRIX) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryMatrix(
    mat: vx_matrix,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Matrix>(mat, |m, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_MATRIX_TYPE => put(ptr, size, m.element_type().code()),
                VX_MATRIX_ROWS => put(ptr, size, m.rows() as vx_size),
                VX_MATRIX_COLUMNS => put(ptr, size, m.columns() as vx_size),
                VX_MATRIX_SIZE => put(ptr, size, m.size() as vx_size),
                VX_MATRIX_ORIGIN => {
                    let (x, y) = m.origin();
                    put(ptr, size, Coordinates2d { x: x as u32, y: y as u32 })
                }
                VX_MATRIX_PATTERN => put(ptr, size, pattern_code(m.pattern())),
                _ => ffi::refuse(
                    e,
                    mat,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryMatrix: {attribute:#x} is not a matrix attribute"),
                ),
            }
        }
    })
}

/// # Safety
/// `user_ptr` must be NULL or hold the matrix's `VX_MATRIX_SIZE` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyMatrix(
    matrix: vx_matrix,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { copy_whole::<vx::Matrix>(matrix, "vxCopyMatrix", user_ptr, usage, user_mem_type) }
}

/// # Safety
/// `array` must be NULL or hold the matrix's `VX_MATRIX_SIZE` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReadMatrix(mat: vx_matrix, array: *mut c_void) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { copy_whole::<vx::Matrix>(mat, "vxReadMatrix", array, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) }
}

/// # Safety
/// `array` must be NULL or hold the matrix's `VX_MATRIX_SIZE` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxWriteMatrix(mat: vx_matrix, array: *const c_void) -> vx_status {
    // SAFETY: forwarded contract (the bytes are only read: a write copy reads the caller's memory).
    unsafe { copy_whole::<vx::Matrix>(mat, "vxWriteMatrix", array as *mut c_void, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST) }
}

// ---- Convolutions -------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateConvolution(context: vx_context, columns: vx_size, rows: vx_size) -> vx_convolution {
    on_context(context, |cc| {
        created(cc, context, vx::Convolution::new(&cc.ctx, columns, rows).map(Reference::Convolution))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualConvolution(graph: vx_graph, columns: vx_size, rows: vx_size) -> vx_convolution {
    on_graph(graph, |g, cc| {
        created(cc, graph, vx::Convolution::new_virtual(g, columns, rows).map(Reference::Convolution))
    })
}

/// # Safety
/// `conv` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseConvolution(conv: *mut vx_convolution) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(conv, VX_TYPE_CONVOLUTION) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryConvolution(
    conv: vx_convolution,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Convolution>(conv, |c, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_CONVOLUTION_ROWS => put(ptr, size, c.rows() as vx_size),
                VX_CONVOLUTION_COLUMNS => put(ptr, size, c.columns() as vx_size),
                VX_CONVOLUTION_SCALE => put(ptr, size, c.scale() as vx_uint32),
                VX_CONVOLUTION_SIZE => put(ptr, size, c.size() as vx_size),
                _ => ffi::refuse(
                    e,
                    conv,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryConvolution: {attribute:#x} is not a convolution attribute"),
                ),
            }
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetConvolutionAttribute(
    conv: vx_convolution,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Convolution>(conv, |c, e| match attribute {
        // SAFETY: forwarded contract.
        VX_CONVOLUTION_SCALE => match unsafe { take::<vx_uint32>(ptr, size) } {
            Ok(s) => status_of(e, conv, c.set_scale(s)),
            Err(s) => s,
        },
        VX_CONVOLUTION_ROWS | VX_CONVOLUTION_COLUMNS | VX_CONVOLUTION_SIZE => ffi::refuse(
            e,
            conv,
            VX_ERROR_NOT_SUPPORTED,
            "vxSetConvolutionAttribute: only VX_CONVOLUTION_SCALE can be set",
        ),
        _ => ffi::refuse(
            e,
            conv,
            VX_ERROR_NOT_SUPPORTED,
            &format!("vxSetConvolutionAttribute: {attribute:#x} is not a convolution attribute"),
        ),
    })
}

/// # Safety
/// `user_ptr` must be NULL or hold `rows × columns` `vx_int16`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyConvolutionCoefficients(
    conv: vx_convolution,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { copy_whole::<vx::Convolution>(conv, "vxCopyConvolutionCoefficients", user_ptr, usage, user_mem_type) }
}

/// # Safety
/// `array` must be NULL or hold `rows × columns` writable `vx_int16`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReadConvolutionCoefficients(conv: vx_convolution, array: *mut vx_int16) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe {
        copy_whole::<vx::Convolution>(
            conv,
            "vxReadConvolutionCoefficients",
            array.cast(),
            VX_READ_ONLY,
            VX_MEMORY_TYPE_HOST,
        )
    }
}

/// # Safety
/// `array` must be NULL or hold `rows × columns` `vx_int16`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxWriteConvolutionCoefficients(conv: vx_convolution, array: *const vx_int16) -> vx_status {
    // SAFETY: forwarded contract (a write copy only reads the caller's memory).
    unsafe {
        copy_whole::<vx::Convolution>(
            conv,
            "vxWriteConvolutionCoefficients",
            array as *mut c_void,
            VX_WRITE_ONLY,
            VX_MEMORY_TYPE_HOST,
        )
    }
}

// ---- LUTs ---------------------------------------------------------------------------------

fn lut_type(cc: &Arc<CContext>, at: vx_reference, what: &str, code: vx_enum) -> Result<ScalarType, vx_reference> {
    scalar_type_of(code)
        .ok_or_else(|| refused(cc, at, VX_ERROR_INVALID_TYPE, &format!("{what}: {code:#x} is not a LUT entry type")))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateLUT(context: vx_context, data_type: vx_enum, count: vx_size) -> vx_lut {
    on_context(context, |cc| match lut_type(cc, context, "vxCreateLUT", data_type) {
        Ok(t) => created(cc, context, vx::Lut::new(&cc.ctx, t, count).map(Reference::Lut)),
        Err(h) => h,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualLUT(graph: vx_graph, data_type: vx_enum, count: vx_size) -> vx_lut {
    on_graph(graph, |g, cc| match lut_type(cc, graph, "vxCreateVirtualLUT", data_type) {
        Ok(t) => created(cc, graph, vx::Lut::new_virtual(g, t, count).map(Reference::Lut)),
        Err(h) => h,
    })
}

/// # Safety
/// `lut` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseLUT(lut: *mut vx_lut) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(lut, VX_TYPE_LUT) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryLUT(lut: vx_lut, attribute: vx_enum, ptr: *mut c_void, size: vx_size) -> vx_status {
    on::<vx::Lut>(lut, |l, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_LUT_TYPE => put(ptr, size, l.element_type().code()),
                VX_LUT_COUNT => put(ptr, size, l.count() as vx_size),
                VX_LUT_SIZE => put(ptr, size, l.size() as vx_size),
                VX_LUT_OFFSET => put(ptr, size, l.offset() as vx_uint32),
                _ => ffi::refuse(
                    e,
                    lut,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryLUT: {attribute:#x} is not a LUT attribute"),
                ),
            }
        }
    })
}

/// # Safety
/// `user_ptr` must be NULL or hold the LUT's `VX_LUT_SIZE` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyLUT(
    lut: vx_lut,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { copy_whole::<vx::Lut>(lut, "vxCopyLUT", user_ptr, usage, user_mem_type) }
}

/// # Safety
/// `map_id` and `ptr` must be NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapLUT(
    lut: vx_lut,
    map_id: *mut vx_map_id,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
    _flags: vx_bitfield,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { map_whole::<vx::Lut>(lut, "vxMapLUT", map_id, ptr, usage, mem_type) }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapLUT(lut: vx_lut, map_id: vx_map_id) -> vx_status {
    unmap::<vx::Lut>(lut, map_id, "vxUnmapLUT")
}

// ---- Distributions ------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateDistribution(
    context: vx_context,
    numBins: vx_size,
    offset: vx_int32,
    range: vx_uint32,
) -> vx_distribution {
    on_context(context, |cc| {
        created(cc, context, vx::Distribution::new(&cc.ctx, numBins, offset, range).map(Reference::Distribution))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualDistribution(
    graph: vx_graph,
    numBins: vx_size,
    offset: vx_int32,
    range: vx_uint32,
) -> vx_distribution {
    on_graph(graph, |g, cc| {
        created(cc, graph, vx::Distribution::new_virtual(g, numBins, offset, range).map(Reference::Distribution))
    })
}

/// # Safety
/// `distribution` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseDistribution(distribution: *mut vx_distribution) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(distribution, VX_TYPE_DISTRIBUTION) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryDistribution(
    distribution: vx_distribution,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Distribution>(distribution, |d, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_DISTRIBUTION_DIMENSIONS => put(ptr, size, 1 as vx_size),
                VX_DISTRIBUTION_OFFSET => put(ptr, size, d.offset()),
                VX_DISTRIBUTION_RANGE => put(ptr, size, d.range()),
                VX_DISTRIBUTION_BINS => put(ptr, size, d.bins() as vx_size),
                VX_DISTRIBUTION_WINDOW => put(ptr, size, d.window()),
                VX_DISTRIBUTION_SIZE => put(ptr, size, d.size() as vx_size),
                _ => ffi::refuse(
                    e,
                    distribution,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryDistribution: {attribute:#x} is not a distribution attribute"),
                ),
            }
        }
    })
}

/// # Safety
/// `user_ptr` must be NULL or hold the distribution's `VX_DISTRIBUTION_SIZE` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyDistribution(
    distribution: vx_distribution,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { copy_whole::<vx::Distribution>(distribution, "vxCopyDistribution", user_ptr, usage, user_mem_type) }
}

/// # Safety
/// `map_id` and `ptr` must be NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapDistribution(
    distribution: vx_distribution,
    map_id: *mut vx_map_id,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
    _flags: vx_bitfield,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { map_whole::<vx::Distribution>(distribution, "vxMapDistribution", map_id, ptr, usage, mem_type) }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapDistribution(distribution: vx_distribution, map_id: vx_map_id) -> vx_status {
    unmap::<vx::Distribution>(distribution, map_id, "vxUnmapDistribution")
}

// ---- Thresholds ---------------------------------------------------------------------------

fn threshold_type_of(
    cc: &Arc<CContext>,
    at: vx_reference,
    what: &str,
    code: vx_enum,
) -> Result<ThresholdType, vx_reference> {
    match code {
        VX_THRESHOLD_TYPE_BINARY => Ok(ThresholdType::Binary),
        VX_THRESHOLD_TYPE_RANGE => Ok(ThresholdType::Range),
        _ => Err(refused(cc, at, VX_ERROR_INVALID_TYPE, &format!("{what}: {code:#x} is not a threshold type"))),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateThresholdForImage(
    context: vx_context,
    thresh_type: vx_enum,
    input_format: vx_df_image,
    output_format: vx_df_image,
) -> vx_threshold {
    const WHAT: &str = "vxCreateThresholdForImage";
    on_context(context, |cc| {
        let t = match threshold_type_of(cc, context, WHAT, thresh_type) {
            Ok(t) => t,
            Err(h) => return h,
        };
        let formats = format_of(cc, context, WHAT, input_format, false)
            .and_then(|i| format_of(cc, context, WHAT, output_format, false).map(|o| (i, o)));
        match formats {
            Ok((i, o)) => created(cc, context, vx::Threshold::for_image(&cc.ctx, t, i, o).map(Reference::Threshold)),
            Err(s) => error_object(Some(cc), s),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualThresholdForImage(
    graph: vx_graph,
    thresh_type: vx_enum,
    input_format: vx_df_image,
    output_format: vx_df_image,
) -> vx_threshold {
    const WHAT: &str = "vxCreateVirtualThresholdForImage";
    on_graph(graph, |g, cc| {
        let t = match threshold_type_of(cc, graph, WHAT, thresh_type) {
            Ok(t) => t,
            Err(h) => return h,
        };
        let formats = format_of(cc, graph, WHAT, input_format, false)
            .and_then(|i| format_of(cc, graph, WHAT, output_format, false).map(|o| (i, o)));
        match formats {
            Ok((i, o)) => {
                created(cc, graph, vx::Threshold::new_virtual_for_image(g, t, i, o).map(Reference::Threshold))
            }
            Err(s) => error_object(Some(cc), s),
        }
    })
}

/// `vxCreateThreshold` (OpenVX 1.1, `vx_compatibility.h`): a threshold over values of
/// `data_type` writing U8.
#[unsafe(no_mangle)]
pub extern "C" fn vxCreateThreshold(c: vx_context, thresh_type: vx_enum, data_type: vx_enum) -> vx_threshold {
    on_context(c, |cc| {
        let t = match threshold_type_of(cc, c, "vxCreateThreshold", thresh_type) {
            Ok(t) => t,
            Err(h) => return h,
        };
        let Some(d) = scalar_type_of(data_type) else {
            return refused(
                cc,
                c,
                VX_ERROR_INVALID_TYPE,
                &format!("vxCreateThreshold: {data_type:#x} is not a data type"),
            );
        };
        created(cc, c, vx::Threshold::new(&cc.ctx, t, d).map(Reference::Threshold))
    })
}

/// # Safety
/// `thresh` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseThreshold(thresh: *mut vx_threshold) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(thresh, VX_TYPE_THRESHOLD) }
}

/// The OpenVX 1.1 attributes of `vx_compatibility.h` (values as `vx_int32`).
const THRESHOLD_BASE: vx_enum = VX_THRESHOLD_TYPE;
const THRESHOLD_VALUE: vx_enum = THRESHOLD_BASE + 1;
const THRESHOLD_LOWER: vx_enum = THRESHOLD_BASE + 2;
const THRESHOLD_UPPER: vx_enum = THRESHOLD_BASE + 3;
const THRESHOLD_TRUE_VALUE: vx_enum = THRESHOLD_BASE + 4;
const THRESHOLD_FALSE_VALUE: vx_enum = THRESHOLD_BASE + 5;
const THRESHOLD_DATA_TYPE: vx_enum = THRESHOLD_BASE + 6;

/// The threshold's values, as its kernel when a process callback running here has it as a
/// parameter.
fn threshold_values(t: &vx::Threshold, e: &Entry) -> vx::Result<vx::ThresholdValues> {
    match frames::kernel_param(reference(e), |pc, i| pc.object::<vx::Threshold>(i)?.values()) {
        Some(v) => v,
        None => t.values(),
    }
}

/// Set the threshold's values (`which`: the binary value, the range, or the output values).
fn set_threshold(t: &vx::Threshold, e: &Entry, which: ThresholdSet) -> vx::Result<()> {
    let set = |k: vx::KernelView<'_, vx::Threshold>| match which {
        ThresholdSet::Value(v) => k.set_value(v),
        ThresholdSet::Range(l, u) => k.set_range(l, u),
        ThresholdSet::Output(tv, fv) => k.set_output(tv, fv),
    };
    match frames::kernel_param(reference(e), |pc, i| pc.object::<vx::Threshold>(i).and_then(set)) {
        Some(r) => r,
        None => match which {
            ThresholdSet::Value(v) => t.set_value(v),
            ThresholdSet::Range(l, u) => t.set_range(l, u),
            ThresholdSet::Output(tv, fv) => t.set_output(tv, fv),
        },
    }
}

#[derive(Clone, Copy)]
enum ThresholdSet {
    Value(i64),
    Range(i64, i64),
    Output(i64, i64),
}

/// The 1.1 `VX_THRESHOLD_DATA_TYPE` of an input format.
fn data_type_of(f: ImageFormat) -> vx_enum {
    match f {
        ImageFormat::U8 => VX_TYPE_UINT8,
        ImageFormat::U16 => VX_TYPE_UINT16,
        ImageFormat::S16 => VX_TYPE_INT16,
        ImageFormat::U32 => VX_TYPE_UINT32,
        ImageFormat::S32 => VX_TYPE_INT32,
        _ => VX_TYPE_INVALID,
    }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryThreshold(
    thresh: vx_threshold,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Threshold>(thresh, |t, e| {
        let value = |f: fn(&vx::ThresholdValues) -> i64| match threshold_values(t, e) {
            // SAFETY: forwarded contract.
            Ok(v) => unsafe { put(ptr, size, f(&v) as vx_int32) },
            Err(err) => fail(e.ctx.as_ref(), thresh, &err),
        };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_THRESHOLD_TYPE => put(
                    ptr,
                    size,
                    match t.threshold_type() {
                        ThresholdType::Binary => VX_THRESHOLD_TYPE_BINARY,
                        ThresholdType::Range => VX_THRESHOLD_TYPE_RANGE,
                    },
                ),
                VX_THRESHOLD_INPUT_FORMAT => put(ptr, size, t.input_format().fourcc()),
                VX_THRESHOLD_OUTPUT_FORMAT => put(ptr, size, t.output_format().fourcc()),
                THRESHOLD_DATA_TYPE => put(ptr, size, data_type_of(t.input_format())),
                THRESHOLD_VALUE => value(|v| v.value),
                THRESHOLD_LOWER => value(|v| v.lower),
                THRESHOLD_UPPER => value(|v| v.upper),
                THRESHOLD_TRUE_VALUE => value(|v| v.true_value),
                THRESHOLD_FALSE_VALUE => value(|v| v.false_value),
                _ => ffi::refuse(
                    e,
                    thresh,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryThreshold: {attribute:#x} is not a threshold attribute"),
                ),
            }
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetThresholdAttribute(
    thresh: vx_threshold,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Threshold>(thresh, |t, e| {
        if !matches!(attribute, THRESHOLD_VALUE..=THRESHOLD_FALSE_VALUE) {
            return ffi::refuse(
                e,
                thresh,
                VX_ERROR_NOT_SUPPORTED,
                &format!(
                    "vxSetThresholdAttribute: {attribute:#x} cannot be set (the values are set with vxCopyThreshold*, \
                     or the OpenVX 1.1 value attributes)"
                ),
            );
        }
        // SAFETY: forwarded contract.
        let v = match unsafe { take::<vx_int32>(ptr, size) } {
            Ok(v) => v as i64,
            Err(s) => return s,
        };
        let now = match threshold_values(t, e) {
            Ok(n) => n,
            Err(err) => return fail(e.ctx.as_ref(), thresh, &err),
        };
        let which = match attribute {
            THRESHOLD_VALUE => ThresholdSet::Value(v),
            THRESHOLD_LOWER => ThresholdSet::Range(v, now.upper),
            THRESHOLD_UPPER => ThresholdSet::Range(now.lower, v),
            THRESHOLD_TRUE_VALUE => ThresholdSet::Output(v, now.false_value),
            _ => ThresholdSet::Output(now.true_value, v),
        };
        status_of(e, thresh, set_threshold(t, e, which))
    })
}

/// A value of format `f` from a `vx_pixel_value_t` (the field of the format).
fn pixel_in(p: &vx_pixel_value_t, f: ImageFormat) -> i64 {
    // SAFETY: every field of the union is plain bytes of its first bytes: any bit pattern is a
    // valid value of each.
    unsafe {
        match f {
            ImageFormat::U8 => p.U8 as i64,
            ImageFormat::U16 => p.U16 as i64,
            ImageFormat::S16 => p.S16 as i64,
            ImageFormat::U32 => p.U32 as i64,
            _ => p.S32 as i64,
        }
    }
}

/// A `vx_pixel_value_t` holding `v` of format `f`, readable through the format's field (and the
/// 32-bit field of its signedness).
fn pixel_out(v: i64, f: ImageFormat) -> vx_pixel_value_t {
    let mut p = vx_pixel_value_t { reserved: [0; 16] };
    match f {
        ImageFormat::S16 | ImageFormat::S32 => p.S32 = v as i32,
        _ => p.U32 = v as u32,
    }
    p
}

/// The common body of the threshold copies: `a` (and `b`), pixel values of format `f`, read
/// from or written to the threshold; NULL pointers are skipped, but not both.
///
/// # Safety
/// `a` and `b` must be NULL or point to a `vx_pixel_value_t`.
#[allow(clippy::too_many_arguments)]
unsafe fn copy_threshold(
    thresh: vx_threshold,
    what: &str,
    a: *mut vx_pixel_value_t,
    b: *mut vx_pixel_value_t,
    usage: vx_enum,
    mem_type: vx_enum,
    part: fn(&vx::Threshold, &vx::ThresholdValues) -> (i64, i64, ImageFormat),
    set: fn(i64, i64) -> ThresholdSet,
) -> vx_status {
    on::<vx::Threshold>(thresh, |t, e| {
        if a.is_null() && b.is_null() {
            return ffi::refuse(
                e,
                thresh,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{what}: the value pointers are NULL"),
            );
        }
        let u = match usage_of(e, thresh, what, usage, mem_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let now = match threshold_values(t, e) {
            Ok(n) => n,
            Err(err) => return fail(e.ctx.as_ref(), thresh, &err),
        };
        let (va, vb, f) = part(t, &now);
        if u == Usage::Read {
            for (p, v) in [(a, va), (b, vb)] {
                if !p.is_null() {
                    // SAFETY: a valid vx_pixel_value_t (the contract; NULL skipped).
                    unsafe { p.write_unaligned(pixel_out(v, f)) };
                }
            }
            return VX_SUCCESS;
        }
        let read = |p: *mut vx_pixel_value_t, old: i64| {
            if p.is_null() {
                return old;
            }
            // SAFETY: a valid vx_pixel_value_t (the contract; NULL skipped).
            pixel_in(&unsafe { p.read_unaligned() }, f)
        };
        status_of(e, thresh, set_threshold(t, e, set(read(a, va), read(b, vb))))
    })
}

/// # Safety
/// `value_ptr` must be NULL or point to a `vx_pixel_value_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyThresholdValue(
    thresh: vx_threshold,
    value_ptr: *mut vx_pixel_value_t,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe {
        copy_threshold(
            thresh,
            "vxCopyThresholdValue",
            value_ptr,
            std::ptr::null_mut(),
            usage,
            user_mem_type,
            |t, v| (v.value, 0, t.input_format()),
            |a, _| ThresholdSet::Value(a),
        )
    }
}

/// # Safety
/// `lower_value_ptr` and `upper_value_ptr` must be NULL or point to a `vx_pixel_value_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyThresholdRange(
    thresh: vx_threshold,
    lower_value_ptr: *mut vx_pixel_value_t,
    upper_value_ptr: *mut vx_pixel_value_t,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe {
        copy_threshold(
            thresh,
            "vxCopyThresholdRange",
            lower_value_ptr,
            upper_value_ptr,
            usage,
            user_mem_type,
            |t, v| (v.lower, v.upper, t.input_format()),
            ThresholdSet::Range,
        )
    }
}

/// # Safety
/// `true_value_ptr` and `false_value_ptr` must be NULL or point to a `vx_pixel_value_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyThresholdOutput(
    thresh: vx_threshold,
    true_value_ptr: *mut vx_pixel_value_t,
    false_value_ptr: *mut vx_pixel_value_t,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe {
        copy_threshold(
            thresh,
            "vxCopyThresholdOutput",
            true_value_ptr,
            false_value_ptr,
            usage,
            user_mem_type,
            |t, v| (v.true_value, v.false_value, t.output_format()),
            ThresholdSet::Output,
        )
    }
}

// ---- Remaps -------------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateRemap(
    context: vx_context,
    src_width: vx_uint32,
    src_height: vx_uint32,
    dst_width: vx_uint32,
    dst_height: vx_uint32,
) -> vx_remap {
    on_context(context, |cc| {
        let r = vx::Remap::new(&cc.ctx, src_width, src_height, dst_width, dst_height);
        created(cc, context, r.map(Reference::Remap))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualRemap(
    graph: vx_graph,
    src_width: vx_uint32,
    src_height: vx_uint32,
    dst_width: vx_uint32,
    dst_height: vx_uint32,
) -> vx_remap {
    on_graph(graph, |g, cc| {
        let r = vx::Remap::new_virtual(g, src_width, src_height, dst_width, dst_height);
        created(cc, graph, r.map(Reference::Remap))
    })
}

/// # Safety
/// `table` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseRemap(table: *mut vx_remap) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(table, VX_TYPE_REMAP) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryRemap(
    table: vx_remap,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Remap>(table, |m, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_REMAP_SOURCE_WIDTH => put(ptr, size, m.source_width()),
                VX_REMAP_SOURCE_HEIGHT => put(ptr, size, m.source_height()),
                VX_REMAP_DESTINATION_WIDTH => put(ptr, size, m.destination_width()),
                VX_REMAP_DESTINATION_HEIGHT => put(ptr, size, m.destination_height()),
                _ => ffi::refuse(
                    e,
                    table,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryRemap: {attribute:#x} is not a remap attribute"),
                ),
            }
        }
    })
}

/// The bytes of one remap point (`vx_coordinates2df_t`).
const POINT: usize = size_of::<vx::Coordinates2dF>();

/// The caller's rectangle of the remap's destination (non-empty, inside), and the coordinate type
/// `VX_TYPE_COORDINATES2DF`; `VX_ERROR_INVALID_PARAMETERS` (logged) otherwise.
///
/// # Safety
/// `rect` must be NULL or point to a `vx_rectangle_t`.
unsafe fn remap_rect(
    m: &vx::Remap,
    e: &Entry,
    r: vx_reference,
    what: &str,
    rect: *const vx_rectangle_t,
    coordinate_type: vx_enum,
) -> Result<Rect, vx_status> {
    if rect.is_null() {
        return Err(ffi::refuse(e, r, VX_ERROR_INVALID_PARAMETERS, &format!("{what}: rect must not be NULL")));
    }
    if coordinate_type != VX_TYPE_COORDINATES2DF {
        return Err(ffi::refuse(
            e,
            r,
            VX_ERROR_INVALID_PARAMETERS,
            &format!("{what}: the coordinate type must be VX_TYPE_COORDINATES2DF, not {coordinate_type:#x}"),
        ));
    }
    // SAFETY: a valid rectangle (the contract; NULL refused above).
    let rc = unsafe { rect.read_unaligned() };
    let rr = Rect::new(rc.start_x, rc.start_y, rc.end_x, rc.end_y);
    let full = Rect::full(m.destination_width(), m.destination_height());
    if rc.start_x >= rc.end_x || rc.start_y >= rc.end_y || !full.contains(&rr) {
        return Err(ffi::refuse(
            e,
            r,
            VX_ERROR_INVALID_PARAMETERS,
            &format!("{what}: the patch must be a non-empty rectangle inside the destination {full}"),
        ));
    }
    Ok(rr)
}

/// # Safety
/// `rect` must be NULL or point to a `vx_rectangle_t`; `user_ptr` NULL or hold the patch's rows
/// `user_stride_y` bytes apart.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyRemapPatch(
    remap: vx_remap,
    rect: *const vx_rectangle_t,
    user_stride_y: vx_size,
    user_ptr: *mut c_void,
    user_coordinate_type: vx_enum,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    on::<vx::Remap>(remap, |m, e| {
        const WHAT: &str = "vxCopyRemapPatch";
        if let Err(s) = reachable(e, remap, WHAT) {
            return s;
        }
        // SAFETY: forwarded contract.
        let rr = match unsafe { remap_rect(m, e, remap, WHAT, rect, user_coordinate_type) } {
            Ok(r) => r,
            Err(s) => return s,
        };
        if let Err(s) = need(e, remap, WHAT, &[(user_ptr, "user_ptr")]) {
            return s;
        }
        let u = match usage_of(e, remap, WHAT, usage, user_mem_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let row = rr.width() as usize * POINT;
        if user_stride_y < row {
            return ffi::refuse(
                e,
                remap,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: the stride ({user_stride_y}) is smaller than a row of the patch ({row} bytes)"),
            );
        }
        let w = m.destination_width() as usize;
        match bytes(m, e, u.writes()) {
            Ok(map) => {
                for (k, y) in (rr.start_y..rr.end_y).enumerate() {
                    let at = (y as usize * w + rr.start_x as usize) * POINT;
                    // SAFETY: the row lies inside the destination (checked), so inside the
                    // mapping; the caller's row k lies at k × stride (the contract).
                    unsafe {
                        copy(map.ptr().add(at), (user_ptr as *mut u8).add(k * user_stride_y), row, u == Usage::Read)
                    };
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), remap, &err),
        }
    })
}

/// # Safety
/// `rect` must be NULL or point to a `vx_rectangle_t`; `map_id`, `stride_y` and `ptr` NULL or
/// valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapRemapPatch(
    remap: vx_remap,
    rect: *const vx_rectangle_t,
    map_id: *mut vx_map_id,
    stride_y: *mut vx_size,
    ptr: *mut *mut c_void,
    coordinate_type: vx_enum,
    usage: vx_enum,
    mem_type: vx_enum,
) -> vx_status {
    on::<vx::Remap>(remap, |m, e| {
        const WHAT: &str = "vxMapRemapPatch";
        if let Err(s) = reachable(e, remap, WHAT) {
            return s;
        }
        // SAFETY: forwarded contract.
        let rr = match unsafe { remap_rect(m, e, remap, WHAT, rect, coordinate_type) } {
            Ok(r) => r,
            Err(s) => return s,
        };
        let outs = [
            (map_id as *const c_void, "map_id"),
            (stride_y as *const c_void, "stride_y"),
            (ptr as *const c_void, "ptr"),
        ];
        if let Err(s) = need(e, remap, WHAT, &outs) {
            return s;
        }
        let u = match usage_of(e, remap, WHAT, usage, mem_type, true) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let w = m.destination_width() as usize;
        match map_new(m, e, u.writes()) {
            Ok((id, p, _)) => {
                // SAFETY: valid out-pointers (the contract; NULL refused above); the patch's
                // first point lies inside the destination, so inside the mapping.
                unsafe {
                    *map_id = id;
                    *stride_y = w * POINT;
                    *ptr = p.add((rr.start_y as usize * w + rr.start_x as usize) * POINT) as *mut c_void;
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), remap, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapRemapPatch(remap: vx_remap, map_id: vx_map_id) -> vx_status {
    unmap::<vx::Remap>(remap, map_id, "vxUnmapRemapPatch")
}

/// `vxSetRemapPoint` (OpenVX 1.1, `vx_compatibility.h`).
#[unsafe(no_mangle)]
pub extern "C" fn vxSetRemapPoint(
    table: vx_remap,
    dst_x: vx_uint32,
    dst_y: vx_uint32,
    src_x: vx_float32,
    src_y: vx_float32,
) -> vx_status {
    let mut p = vx::Coordinates2dF { x: src_x, y: src_y };
    let rect = vx_rectangle_t {
        start_x: dst_x,
        start_y: dst_y,
        end_x: dst_x.saturating_add(1),
        end_y: dst_y.saturating_add(1),
    };
    // SAFETY: a rectangle and one point of this frame.
    unsafe {
        vxCopyRemapPatch(
            table,
            &rect,
            POINT,
            (&raw mut p).cast(),
            VX_TYPE_COORDINATES2DF,
            VX_WRITE_ONLY,
            VX_MEMORY_TYPE_HOST,
        )
    }
}

/// `vxGetRemapPoint` (OpenVX 1.1, `vx_compatibility.h`).
///
/// # Safety
/// `src_x` and `src_y` must be NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxGetRemapPoint(
    table: vx_remap,
    dst_x: vx_uint32,
    dst_y: vx_uint32,
    src_x: *mut vx_float32,
    src_y: *mut vx_float32,
) -> vx_status {
    if object_of::<vx::Remap>(table).is_err() {
        return VX_ERROR_INVALID_REFERENCE;
    }
    if src_x.is_null() || src_y.is_null() {
        return VX_ERROR_INVALID_PARAMETERS;
    }
    let mut p = vx::Coordinates2dF::default();
    let rect = vx_rectangle_t {
        start_x: dst_x,
        start_y: dst_y,
        end_x: dst_x.saturating_add(1),
        end_y: dst_y.saturating_add(1),
    };
    // SAFETY: a rectangle and one point of this frame.
    let s = unsafe {
        vxCopyRemapPatch(
            table,
            &rect,
            POINT,
            (&raw mut p).cast(),
            VX_TYPE_COORDINATES2DF,
            VX_READ_ONLY,
            VX_MEMORY_TYPE_HOST,
        )
    };
    if s == VX_SUCCESS {
        // SAFETY: valid out-pointers (the contract; NULL refused above).
        unsafe {
            src_x.write_unaligned(p.x);
            src_y.write_unaligned(p.y);
        }
    }
    s
}

// ---- Pyramids -----------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn vxCreatePyramid(
    context: vx_context,
    levels: vx_size,
    scale: vx_float32,
    width: vx_uint32,
    height: vx_uint32,
    format: vx_df_image,
) -> vx_pyramid {
    on_context(context, |cc| match format_of(cc, context, "vxCreatePyramid", format, false) {
        Ok(f) => {
            created(cc, context, vx::Pyramid::new(&cc.ctx, levels, scale, width, height, f).map(Reference::Pyramid))
        }
        Err(s) => error_object(Some(cc), s),
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualPyramid(
    graph: vx_graph,
    levels: vx_size,
    scale: vx_float32,
    width: vx_uint32,
    height: vx_uint32,
    format: vx_df_image,
) -> vx_pyramid {
    on_graph(graph, |g, cc| match format_of(cc, graph, "vxCreateVirtualPyramid", format, true) {
        Ok(f) => {
            created(cc, graph, vx::Pyramid::new_virtual(g, levels, scale, width, height, f).map(Reference::Pyramid))
        }
        Err(s) => error_object(Some(cc), s),
    })
}

/// # Safety
/// `pyr` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleasePyramid(pyr: *mut vx_pyramid) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(pyr, VX_TYPE_PYRAMID) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryPyramid(
    pyr: vx_pyramid,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Pyramid>(pyr, |p, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_PYRAMID_LEVELS => put(ptr, size, p.levels() as vx_size),
                VX_PYRAMID_SCALE => put(ptr, size, p.scale()),
                VX_PYRAMID_WIDTH => put(ptr, size, p.width()),
                VX_PYRAMID_HEIGHT => put(ptr, size, p.height()),
                VX_PYRAMID_FORMAT => put(ptr, size, p.format().fourcc()),
                _ => ffi::refuse(
                    e,
                    pyr,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryPyramid: {attribute:#x} is not a pyramid attribute"),
                ),
            }
        }
    })
}

/// The handle of a part of a container (a pyramid level, an object array item): one handle per
/// part, as for any object; or the error object of `res`'s failure.
fn part_handle(e: &Entry, at: vx_reference, res: vx::Result<Reference>) -> vx_reference {
    let Some(cc) = e.ctx.as_ref() else { return error_object(None, VX_ERROR_INVALID_REFERENCE) };
    created(cc, at, res)
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetPyramidLevel(pyr: vx_pyramid, index: vx_uint32) -> vx_image {
    guard_ref(pyr, || match object_of::<vx::Pyramid>(pyr) {
        Ok((p, e)) => part_handle(&e, pyr, p.level(index as usize).map(Reference::Image)),
        Err(s) => error_object(None, s),
    })
}

// ---- Object arrays ------------------------------------------------------------------------

/// An object array made from `exemplar`: the items of an array of user structs (or C booleans)
/// remember the exemplar's C item type.
fn object_array(
    cc: &Arc<CContext>,
    at: vx_reference,
    exemplar: vx_reference,
    make: impl FnOnce(Reference) -> vx::Result<vx::ObjectArray>,
) -> vx_reference {
    let Ok(ex) = data_of(exemplar) else {
        return refused(cc, at, VX_ERROR_INVALID_REFERENCE, "vxCreateObjectArray: the exemplar is not a data object");
    };
    let code = match &ex {
        Reference::Array(a) if matches!(a.item_type(), Some(ArrayItemType::User { .. })) => {
            Some(item_code(Some(cc), a, ex.id()))
        }
        _ => None,
    };
    let made = make(ex);
    if let (Ok(oa), Some(code)) = (&made, code) {
        user_structs(cc, |s| {
            for item in oa.items() {
                s.array_types.insert(item.id(), code);
            }
        });
    }
    created(cc, at, made.map(Reference::ObjectArray))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateObjectArray(context: vx_context, exemplar: vx_reference, count: vx_size) -> vx_object_array {
    on_context(context, |cc| object_array(cc, context, exemplar, |ex| vx::ObjectArray::new(&cc.ctx, ex, count)))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateVirtualObjectArray(
    graph: vx_graph,
    exemplar: vx_reference,
    count: vx_size,
) -> vx_object_array {
    on_graph(graph, |g, cc| object_array(cc, graph, exemplar, |ex| vx::ObjectArray::new_virtual(g, ex, count)))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetObjectArrayItem(arr: vx_object_array, index: vx_uint32) -> vx_reference {
    guard_ref(arr, || match object_of::<vx::ObjectArray>(arr) {
        Ok((oa, e)) => part_handle(&e, arr, oa.item(index as usize)),
        Err(s) => error_object(None, s),
    })
}

/// # Safety
/// `arr` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseObjectArray(arr: *mut vx_object_array) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(arr, VX_TYPE_OBJECT_ARRAY) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryObjectArray(
    arr: vx_object_array,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::ObjectArray>(arr, |oa, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_OBJECT_ARRAY_ITEMTYPE => put(ptr, size, oa.item_type().code()),
                VX_OBJECT_ARRAY_NUMITEMS => put(ptr, size, oa.count() as vx_size),
                _ => ffi::refuse(
                    e,
                    arr,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryObjectArray: {attribute:#x} is not an object array attribute"),
                ),
            }
        }
    })
}

// ---- Tensors ------------------------------------------------------------------------------

/// The caller's `n` sizes at `p` (`n` checked first: 1 to 6, as many as a tensor has at most).
///
/// # Safety
/// `p` must be NULL or hold `n` `vx_size`s.
unsafe fn sizes<'a>(p: *const vx_size, n: vx_size) -> Option<&'a [usize]> {
    if p.is_null() || n == 0 || n > vx::MAX_TENSOR_DIMS {
        return None;
    }
    // SAFETY: `n` sizes at `p` (the contract), n <= 6.
    Some(unsafe { std::slice::from_raw_parts(p, n) })
}

fn dims_refused(cc: &Arc<CContext>, at: vx_reference, what: &str, n: vx_size) -> vx_reference {
    refused(
        cc,
        at,
        VX_ERROR_INVALID_DIMENSION,
        &format!("{what}: {n} dimensions (1 to {} and a dimension array are needed)", vx::MAX_TENSOR_DIMS),
    )
}

/// # Safety
/// `dims` must be NULL or hold `number_of_dims` sizes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateTensor(
    context: vx_context,
    number_of_dims: vx_size,
    dims: *const vx_size,
    data_type: vx_enum,
    fixed_point_position: vx_int8,
) -> vx_tensor {
    const WHAT: &str = "vxCreateTensor";
    on_context(context, |cc| {
        // SAFETY: forwarded contract.
        let Some(d) = (unsafe { sizes(dims, number_of_dims) }) else {
            return dims_refused(cc, context, WHAT, number_of_dims);
        };
        let Some(t) = scalar_type_of(data_type) else {
            return refused(
                cc,
                context,
                VX_ERROR_INVALID_TYPE,
                &format!("{WHAT}: {data_type:#x} is not a tensor data type"),
            );
        };
        created(cc, context, vx::Tensor::new(&cc.ctx, d, t, fixed_point_position).map(Reference::Tensor))
    })
}

/// # Safety
/// `dims` must be NULL or hold `number_of_dims` sizes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateVirtualTensor(
    graph: vx_graph,
    number_of_dims: vx_size,
    dims: *const vx_size,
    data_type: vx_enum,
    fixed_point_position: vx_int8,
) -> vx_tensor {
    const WHAT: &str = "vxCreateVirtualTensor";
    on_graph(graph, |g, cc| {
        // Dimensions and type may be left to the producer: 0 dimensions (or NULL), VX_TYPE_INVALID.
        let d: &[usize] = if number_of_dims == 0 || dims.is_null() {
            &[]
        } else {
            // SAFETY: forwarded contract.
            match unsafe { sizes(dims, number_of_dims) } {
                Some(d) => d,
                None => return dims_refused(cc, graph, WHAT, number_of_dims),
            }
        };
        let t = if data_type == VX_TYPE_INVALID {
            None
        } else {
            match scalar_type_of(data_type) {
                Some(t) => Some(t),
                None => {
                    return refused(
                        cc,
                        graph,
                        VX_ERROR_INVALID_TYPE,
                        &format!("{WHAT}: {data_type:#x} is not a tensor data type"),
                    );
                }
            }
        };
        created(cc, graph, vx::Tensor::new_virtual(g, d, t, fixed_point_position).map(Reference::Tensor))
    })
}

/// # Safety
/// `view_start` and `view_end` must be NULL or hold `number_of_dims` sizes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateTensorFromView(
    tensor: vx_tensor,
    number_of_dims: vx_size,
    view_start: *const vx_size,
    view_end: *const vx_size,
) -> vx_tensor {
    const WHAT: &str = "vxCreateTensorFromView";
    guard_ref(tensor, || {
        let (t, e) = match object_of::<vx::Tensor>(tensor) {
            Ok(x) => x,
            Err(s) => return error_object(None, s),
        };
        let Some(cc) = e.ctx.as_ref() else { return error_object(None, VX_ERROR_INVALID_REFERENCE) };
        // SAFETY: forwarded contract.
        let (Some(s), Some(end)) =
            (unsafe { sizes(view_start, number_of_dims) }, unsafe { sizes(view_end, number_of_dims) })
        else {
            return refused(
                cc,
                tensor,
                VX_ERROR_INVALID_PARAMETERS,
                &format!(
                    "{WHAT}: {number_of_dims} dimensions (1 to {}, with start and end arrays)",
                    vx::MAX_TENSOR_DIMS
                ),
            );
        };
        created(cc, tensor, t.view(s, end).map(Reference::Tensor))
    })
}

/// # Safety
/// `tensor` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseTensor(tensor: *mut vx_tensor) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(tensor, VX_TYPE_TENSOR) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryTensor(
    tensor: vx_tensor,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Tensor>(tensor, |t, e| {
        let m = t.meta();
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_TENSOR_NUMBER_OF_DIMS => put(ptr, size, m.num_dims as vx_size),
                VX_TENSOR_DIMS => {
                    let d = m.dims();
                    if ptr.is_null() || size < std::mem::size_of_val(d) || !size.is_multiple_of(size_of::<vx_size>()) {
                        return VX_ERROR_INVALID_PARAMETERS;
                    }
                    for (i, v) in d.iter().enumerate() {
                        // SAFETY: `size` >= dims × vx_size writable bytes (checked above).
                        (ptr as *mut vx_size).add(i).write_unaligned(*v);
                    }
                    VX_SUCCESS
                }
                VX_TENSOR_DATA_TYPE => put(ptr, size, m.data_type.map_or(VX_TYPE_INVALID, ScalarType::code)),
                VX_TENSOR_FIXED_POINT_POSITION => put(ptr, size, m.fixed_point_position),
                _ => ffi::refuse(
                    e,
                    tensor,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryTensor: {attribute:#x} is not a tensor attribute"),
                ),
            }
        }
    })
}

/// The caller's patch of `t`: `n` dimensions (1 to the tensor's), `start[d] < end[d] <= dims[d]`;
/// the dimensions past `n` at index 0 (start 0, end 1). `VX_ERROR_INVALID_PARAMETERS` (logged)
/// otherwise. Returns start and end (six entries each) and the element size.
///
/// # Safety
/// `start` and `end` must be NULL or hold `n` sizes.
unsafe fn tensor_patch(
    t: &vx::Tensor,
    e: &Entry,
    r: vx_reference,
    what: &str,
    n: vx_size,
    start: *const vx_size,
    end: *const vx_size,
) -> Result<([usize; 6], [usize; 6], usize), vx_status> {
    let m = t.meta();
    let bad = |text: String| ffi::refuse(e, r, VX_ERROR_INVALID_PARAMETERS, &format!("{what}: {text}"));
    let Some(elem) = m.data_type.map(ScalarType::size) else {
        return Err(bad("the tensor's data type is not known yet".into()));
    };
    if n == 0 || n > m.num_dims {
        return Err(bad(format!("{n} dimensions for a tensor of {}", m.num_dims)));
    }
    // SAFETY: forwarded contract (n <= 6).
    let (Some(s), Some(en)) = (unsafe { sizes(start, n) }, unsafe { sizes(end, n) }) else {
        return Err(bad("view_start and view_end must not be NULL".into()));
    };
    let (mut s6, mut e6) = ([0usize; 6], [1usize; 6]);
    for d in 0..n {
        if s[d] >= en[d] || en[d] > m.dims[d] {
            return Err(bad(format!(
                "dimension {d}: {}..{} is not a non-empty range of 0..{}",
                s[d], en[d], m.dims[d]
            )));
        }
        (s6[d], e6[d]) = (s[d], en[d]);
    }
    Ok((s6, e6, elem))
}

/// Visit the elements of the box `start..end` (6 dimensions) in runs along dimension 0: `f` gets
/// each run's byte offset from the box's first element with strides `a` and with strides `b`.
fn runs(start: &[usize; 6], end: &[usize; 6], a: &[usize; 6], b: &[usize; 6], mut f: impl FnMut(usize, usize)) {
    let mut idx = *start;
    loop {
        let off = |s: &[usize; 6]| (1..6).map(|d| (idx[d] - start[d]) * s[d]).sum::<usize>();
        f(off(a), off(b));
        let mut d = 1;
        loop {
            if d == 6 {
                return;
            }
            idx[d] += 1;
            if idx[d] < end[d] {
                break;
            }
            idx[d] = start[d];
            d += 1;
        }
    }
}

/// # Safety
/// `view_start`, `view_end` and `user_stride` must be NULL or hold `number_of_dims` sizes;
/// `user_ptr` NULL or hold the patch laid out with `user_stride`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyTensorPatch(
    tensor: vx_tensor,
    number_of_dims: vx_size,
    view_start: *const vx_size,
    view_end: *const vx_size,
    user_stride: *const vx_size,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_memory_type: vx_enum,
) -> vx_status {
    on::<vx::Tensor>(tensor, |t, e| {
        const WHAT: &str = "vxCopyTensorPatch";
        if let Err(s) = reachable(e, tensor, WHAT) {
            return s;
        }
        // SAFETY: forwarded contract.
        let (start, end, elem) = match unsafe { tensor_patch(t, e, tensor, WHAT, number_of_dims, view_start, view_end) }
        {
            Ok(x) => x,
            Err(s) => return s,
        };
        if let Err(s) = need(e, tensor, WHAT, &[(user_ptr, "user_ptr")]) {
            return s;
        }
        // SAFETY: forwarded contract (number_of_dims checked <= 6).
        let Some(us) = (unsafe { sizes(user_stride, number_of_dims) }) else {
            return ffi::refuse(
                e,
                tensor,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: user_stride must not be NULL"),
            );
        };
        if us[0] < elem {
            return ffi::refuse(
                e,
                tensor,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: user_stride[0] ({}) is smaller than an element ({elem} bytes)", us[0]),
            );
        }
        let u = match usage_of(e, tensor, WHAT, usage, user_memory_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let mut user = [0usize; 6];
        user[..number_of_dims].copy_from_slice(us);
        let obj = t.strides();
        match bytes(t, e, u.writes()) {
            Ok(m) => {
                let first = (0..6).map(|d| start[d] * obj[d]).sum::<usize>();
                let n0 = end[0] - start[0];
                runs(&start, &end, &obj, &user, |o, p| {
                    for i in 0..n0 {
                        // SAFETY: element (start + idx) lies inside the tensor (the box is checked
                        // against its dimensions), so inside the mapping; the caller's element at
                        // the offset its strides give (the contract).
                        unsafe {
                            copy(
                                m.ptr().add(first + o + i * obj[0]),
                                (user_ptr as *mut u8).add(p + i * user[0]),
                                elem,
                                u == Usage::Read,
                            )
                        };
                    }
                });
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), tensor, &err),
        }
    })
}

/// # Safety
/// `view_start` and `view_end` must be NULL or hold `number_of_dims` sizes; `stride` NULL or
/// `number_of_dims` writable sizes; `map_id` and `ptr` NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapTensorPatch(
    tensor: vx_tensor,
    number_of_dims: vx_size,
    view_start: *const vx_size,
    view_end: *const vx_size,
    map_id: *mut vx_map_id,
    stride: *mut vx_size,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
) -> vx_status {
    on::<vx::Tensor>(tensor, |t, e| {
        const WHAT: &str = "vxMapTensorPatch";
        if let Err(s) = reachable(e, tensor, WHAT) {
            return s;
        }
        // SAFETY: forwarded contract.
        let (start, _, _) = match unsafe { tensor_patch(t, e, tensor, WHAT, number_of_dims, view_start, view_end) } {
            Ok(x) => x,
            Err(s) => return s,
        };
        let outs =
            [(map_id as *const c_void, "map_id"), (stride as *const c_void, "stride"), (ptr as *const c_void, "ptr")];
        if let Err(s) = need(e, tensor, WHAT, &outs) {
            return s;
        }
        let u = match usage_of(e, tensor, WHAT, usage, mem_type, true) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let obj = t.strides();
        match map_new(t, e, u.writes()) {
            Ok((id, p, _)) => {
                let first = (0..6).map(|d| start[d] * obj[d]).sum::<usize>();
                // SAFETY: valid out-pointers, `stride` with number_of_dims (<= 6) entries (the
                // contract; NULL refused above); the patch's first element lies in the mapping.
                unsafe {
                    for (d, s) in obj.iter().enumerate().take(number_of_dims) {
                        stride.add(d).write_unaligned(*s);
                    }
                    *map_id = id;
                    *ptr = p.add(first) as *mut c_void;
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), tensor, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapTensorPatch(tensor: vx_tensor, map_id: vx_map_id) -> vx_status {
    unmap::<vx::Tensor>(tensor, map_id, "vxUnmapTensorPatch")
}

// ---- User data objects --------------------------------------------------------------------

/// The type name of a user data object: NULL is the empty name.
///
/// # Safety
/// `type_name` must be NULL or a NUL-terminated string.
unsafe fn type_name_of<'a>(type_name: *const vx_char) -> Option<&'a str> {
    if type_name.is_null() {
        return Some("");
    }
    // SAFETY: forwarded contract.
    unsafe { ffi::text(type_name) }
}

/// # Safety
/// `type_name` must be NULL or a NUL-terminated string; `ptr` NULL or hold `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateUserDataObject(
    context: vx_context,
    type_name: *const vx_char,
    size: vx_size,
    ptr: *const c_void,
) -> vx_user_data_object {
    on_context(context, |cc| {
        // SAFETY: forwarded contract.
        let Some(name) = (unsafe { type_name_of(type_name) }) else {
            return refused(
                cc,
                context,
                VX_ERROR_INVALID_PARAMETERS,
                "vxCreateUserDataObject: the type name is not UTF-8",
            );
        };
        let made = vx::UserDataObject::new(&cc.ctx, name, size).and_then(|u| {
            if !ptr.is_null() {
                let m = u.map_bytes(true)?;
                // SAFETY: the new object's `size` bytes are mapped for writing; the caller's
                // `size` bytes at `ptr` (the contract).
                unsafe { copy(m.ptr(), ptr as *mut u8, m.len(), false) };
            }
            Ok(Reference::UserDataObject(u))
        });
        created(cc, context, made)
    })
}

/// # Safety
/// `type_name` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateVirtualUserDataObject(
    graph: vx_graph,
    type_name: *const vx_char,
    size: vx_size,
) -> vx_user_data_object {
    on_graph(graph, |g, cc| {
        // SAFETY: forwarded contract.
        let Some(name) = (unsafe { type_name_of(type_name) }) else {
            return refused(
                cc,
                graph,
                VX_ERROR_INVALID_PARAMETERS,
                "vxCreateVirtualUserDataObject: the type name is not UTF-8",
            );
        };
        created(cc, graph, vx::UserDataObject::new_virtual(g, name, size).map(Reference::UserDataObject))
    })
}

/// # Safety
/// `user_data_object` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseUserDataObject(user_data_object: *mut vx_user_data_object) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(user_data_object, VX_TYPE_USER_DATA_OBJECT) }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryUserDataObject(
    user_data_object: vx_user_data_object,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::UserDataObject>(user_data_object, |u, e| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_USER_DATA_OBJECT_NAME => ffi::put_text(ptr, size, u.type_name()),
                VX_USER_DATA_OBJECT_SIZE => put(ptr, size, u.size() as vx_size),
                _ => ffi::refuse(
                    e,
                    user_data_object,
                    VX_ERROR_NOT_SUPPORTED,
                    &format!("vxQueryUserDataObject: {attribute:#x} is not a user data object attribute"),
                ),
            }
        }
    })
}

/// `offset..offset + size` of `u` (`size` 0: to the end): inside the object
/// (`VX_ERROR_INVALID_PARAMETERS`, logged, otherwise). Returns the byte count.
fn user_data_range(
    u: &vx::UserDataObject,
    e: &Entry,
    r: vx_reference,
    what: &str,
    offset: vx_size,
    size: vx_size,
) -> Result<usize, vx_status> {
    let total = u.size();
    let n = if size == 0 { total.saturating_sub(offset) } else { size };
    if n == 0 || offset.checked_add(n).is_none_or(|end| end > total) {
        return Err(ffi::refuse(
            e,
            r,
            VX_ERROR_INVALID_PARAMETERS,
            &format!("{what}: {offset} + {size} bytes is not inside the object's {total} bytes"),
        ));
    }
    Ok(n)
}

/// # Safety
/// `user_ptr` must be NULL or hold the bytes copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyUserDataObject(
    user_data_object: vx_user_data_object,
    offset: vx_size,
    size: vx_size,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    on::<vx::UserDataObject>(user_data_object, |u, e| {
        const WHAT: &str = "vxCopyUserDataObject";
        if let Err(s) = reachable(e, user_data_object, WHAT) {
            return s;
        }
        let r = user_data_object;
        if let Err(s) = need(e, r, WHAT, &[(user_ptr, "user_ptr")]) {
            return s;
        }
        let us = match usage_of(e, r, WHAT, usage, user_mem_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        let n = match user_data_range(u, e, r, WHAT, offset, size) {
            Ok(n) => n,
            Err(s) => return s,
        };
        match bytes(u, e, us.writes()) {
            Ok(m) => {
                // SAFETY: offset + n lies inside the object (checked), so inside the mapping;
                // the caller's n bytes (the contract).
                unsafe { copy(m.ptr().add(offset), user_ptr as *mut u8, n, us == Usage::Read) };
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), r, &err),
        }
    })
}

/// # Safety
/// `map_id` and `ptr` must be NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxMapUserDataObject(
    user_data_object: vx_user_data_object,
    offset: vx_size,
    size: vx_size,
    map_id: *mut vx_map_id,
    ptr: *mut *mut c_void,
    usage: vx_enum,
    mem_type: vx_enum,
    _flags: vx_uint32,
) -> vx_status {
    on::<vx::UserDataObject>(user_data_object, |u, e| {
        const WHAT: &str = "vxMapUserDataObject";
        if let Err(s) = reachable(e, user_data_object, WHAT) {
            return s;
        }
        let r = user_data_object;
        if let Err(s) = need(e, r, WHAT, &[(map_id as *const c_void, "map_id"), (ptr as *const c_void, "ptr")]) {
            return s;
        }
        let us = match usage_of(e, r, WHAT, usage, mem_type, true) {
            Ok(u) => u,
            Err(s) => return s,
        };
        if let Err(s) = user_data_range(u, e, r, WHAT, offset, size) {
            return s;
        }
        match map_new(u, e, us.writes()) {
            Ok((id, p, _)) => {
                // SAFETY: valid out-pointers (the contract; NULL refused above); `offset` lies
                // inside the object.
                unsafe {
                    *map_id = id;
                    *ptr = p.add(offset) as *mut c_void;
                }
                VX_SUCCESS
            }
            Err(err) => fail(e.ctx.as_ref(), r, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxUnmapUserDataObject(user_data_object: vx_user_data_object, map_id: vx_map_id) -> vx_status {
    unmap::<vx::UserDataObject>(user_data_object, map_id, "vxUnmapUserDataObject")
}

// ---- Images: the functions beyond data.rs --------------------------------------------------

/// The bytes of each plane of a uniform image of format `f` holding `v`, repeated along its rows:
/// one element, or for UYVY and YUYV the two pixels of a U, V pair.
fn uniform_elements(f: ImageFormat, v: &vx_pixel_value_t) -> Vec<Vec<u8>> {
    // SAFETY: every field of the union is plain bytes: any bit pattern is valid.
    unsafe {
        match f {
            ImageFormat::U8 => vec![vec![v.U8]],
            ImageFormat::U16 => vec![v.U16.to_ne_bytes().to_vec()],
            ImageFormat::S16 => vec![v.S16.to_ne_bytes().to_vec()],
            ImageFormat::U32 => vec![v.U32.to_ne_bytes().to_vec()],
            ImageFormat::S32 => vec![v.S32.to_ne_bytes().to_vec()],
            ImageFormat::Rgb => vec![v.RGB.to_vec()],
            ImageFormat::Rgbx => vec![v.RGBX.to_vec()],
            ImageFormat::Nv12 => vec![vec![v.YUV[0]], vec![v.YUV[1], v.YUV[2]]],
            ImageFormat::Nv21 => vec![vec![v.YUV[0]], vec![v.YUV[2], v.YUV[1]]],
            ImageFormat::Uyvy => vec![vec![v.YUV[1], v.YUV[0], v.YUV[2], v.YUV[0]]],
            ImageFormat::Yuyv => vec![vec![v.YUV[0], v.YUV[1], v.YUV[0], v.YUV[2]]],
            ImageFormat::Iyuv | ImageFormat::Yuv4 => vec![vec![v.YUV[0]], vec![v.YUV[1]], vec![v.YUV[2]]],
            ImageFormat::Virtual => Vec::new(),
        }
    }
}

/// # Safety
/// `value` must be NULL or point to a `vx_pixel_value_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateUniformImage(
    context: vx_context,
    width: vx_uint32,
    height: vx_uint32,
    color: vx_df_image,
    value: *const vx_pixel_value_t,
) -> vx_image {
    const WHAT: &str = "vxCreateUniformImage";
    on_context(context, |cc| {
        if value.is_null() {
            return refused(cc, context, VX_ERROR_INVALID_PARAMETERS, &format!("{WHAT}: value must not be NULL"));
        }
        let f = match format_of(cc, context, WHAT, color, false) {
            Ok(f) => f,
            Err(s) => return error_object(Some(cc), s),
        };
        // SAFETY: a valid pixel value (the contract; NULL refused above).
        let v = unsafe { value.read_unaligned() };
        let made = vx::Image::new(&cc.ctx, width, height, f).and_then(|img| {
            fill_image(&img, &v)?;
            Ok(Reference::Image(img))
        });
        created(cc, context, made)
    })
}

/// Every pixel of `img` set to `v` (each plane's elements from `uniform_elements`; an ROI of a
/// UYVY or YUYV image starts on an even x, so its pixel pairs are the parent's).
fn fill_image(img: &vx::Image, v: &vx_pixel_value_t) -> vx::Result<()> {
    let (w, h) = (img.width(), img.height());
    for (plane, run) in uniform_elements(img.format(), v).iter().enumerate() {
        let m = img.map_bytes(Rect::full(w, h), plane, true)?;
        let a = m.addressing();
        let elem = a.stride_x as usize;
        for y in 0..a.dim_y as usize {
            for x in 0..a.dim_x as usize {
                let at = y * a.stride_y as usize + x * elem;
                let from = run[(x * elem) % run.len()..].as_ptr();
                // SAFETY: element (x, y) of the mapped plane, whose addressing the mapping gives;
                // `run` holds whole elements of the plane's size (`stride_x`), so `from` starts
                // `elem` bytes of it.
                unsafe { copy(m.ptr().add(at), from as *mut u8, elem, false) };
            }
        }
    }
    Ok(())
}

/// `vxSetImagePixelValues`: every pixel of the image (every plane) set to `pixel_value`.
///
/// # Safety
/// `pixel_value` must be NULL or point to a `vx_pixel_value_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetImagePixelValues(image: vx_image, pixel_value: *const vx_pixel_value_t) -> vx_status {
    on::<vx::Image>(image, |img, e| {
        if pixel_value.is_null() {
            return ffi::refuse(e, image, VX_ERROR_INVALID_PARAMETERS, "vxSetImagePixelValues: the value is NULL");
        }
        // SAFETY: a valid pixel value (the contract; NULL refused above).
        let v = unsafe { pixel_value.read_unaligned() };
        status_of(e, image, fill_image(img, &v))
    })
}

fn image_of(r: vx_image) -> Result<(vx::Image, Arc<Entry>), vx_status> {
    object_of::<vx::Image>(r)
}

/// # Safety
/// `rect` must be NULL or point to a `vx_rectangle_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCreateImageFromROI(img: vx_image, rect: *const vx_rectangle_t) -> vx_image {
    guard_ref(img, || {
        let (i, e) = match image_of(img) {
            Ok(x) => x,
            Err(s) => return error_object(None, s),
        };
        let Some(cc) = e.ctx.as_ref() else { return error_object(None, VX_ERROR_INVALID_REFERENCE) };
        if rect.is_null() {
            return refused(cc, img, VX_ERROR_INVALID_PARAMETERS, "vxCreateImageFromROI: rect must not be NULL");
        }
        // SAFETY: a valid rectangle (the contract; NULL refused above).
        let rc = unsafe { rect.read_unaligned() };
        created(cc, img, i.roi(Rect::new(rc.start_x, rc.start_y, rc.end_x, rc.end_y)).map(Reference::Image))
    })
}

/// # Safety
/// `image_rect` and `user_addr` must be NULL or valid; `user_ptr` NULL or hold the patch laid out
/// as `user_addr` says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxCopyImagePatch(
    image: vx_image,
    image_rect: *const vx_rectangle_t,
    image_plane_index: vx_uint32,
    user_addr: *const vx_imagepatch_addressing_t,
    user_ptr: *mut c_void,
    usage: vx_enum,
    user_mem_type: vx_enum,
) -> vx_status {
    guard(image, || {
        const WHAT: &str = "vxCopyImagePatch";
        let (img, e) = match image_of(image) {
            Ok(x) => x,
            Err(s) => return s,
        };
        if let Err(s) = reachable(&e, image, WHAT) {
            return s;
        }
        let ptrs = [
            (image_rect as *const c_void, "image_rect"),
            (user_addr as *const c_void, "user_addr"),
            (user_ptr as *const c_void, "user_ptr"),
        ];
        if let Err(s) = need(&e, image, WHAT, &ptrs) {
            return s;
        }
        let u = match usage_of(&e, image, WHAT, usage, user_mem_type, false) {
            Ok(u) => u,
            Err(s) => return s,
        };
        // SAFETY: valid rectangle and addressing (the contract; NULL refused above).
        let (rc, ua) = unsafe { (image_rect.read_unaligned(), user_addr.read_unaligned()) };
        let rr = Rect::new(rc.start_x, rc.start_y, rc.end_x, rc.end_y);
        let plane = image_plane_index as usize;
        let Some(info) = img.format().planes().get(plane).copied() else {
            return ffi::refuse(
                &e,
                image,
                VX_ERROR_INVALID_PARAMETERS,
                &format!("{WHAT}: the image has no plane {plane}"),
            );
        };
        let elem = info.bytes_per_element as usize;
        if ua.stride_x <= 0
            || (ua.stride_x as usize) < elem
            || ua.stride_y <= 0
            || ua.dim_x < rr.width().div_ceil(info.subsample_x)
            || ua.dim_y < rr.height().div_ceil(info.subsample_y)
        {
            return ffi::refuse(
                &e,
                image,
                VX_ERROR_INVALID_PARAMETERS,
                &format!(
                    "{WHAT}: the user addressing (dim {}x{}, strides {}, {}) does not hold the {}x{} patch of {elem}-byte elements",
                    ua.dim_x,
                    ua.dim_y,
                    ua.stride_x,
                    ua.stride_y,
                    rr.width(),
                    rr.height()
                ),
            );
        }
        let write = u.writes();
        let id = NEXT_MAP.fetch_add(1, Ordering::Relaxed);
        // The application's mapping, held until the copy is done (a kernel's is in its frame).
        let mut app: Option<vx::ImageBytesMap> = None;
        let mapped = match frames::map_for_kernel(reference(&e), rr, plane, write, id) {
            Some(m) => m,
            None => img.map_bytes(rr, plane, write).map(|m| {
                let out = (m.ptr(), m.addressing());
                app = Some(m);
                out
            }),
        };
        let (base, a) = match mapped {
            Ok(m) => m,
            Err(err) => return fail(e.ctx.as_ref(), image, &err),
        };
        for y in 0..a.dim_y as usize {
            for x in 0..a.dim_x as usize {
                let at = y * a.stride_y as usize + x * a.stride_x as usize;
                let user = y * ua.stride_y as usize + x * ua.stride_x as usize;
                // SAFETY: element (x, y) of the mapped patch (its addressing); the caller's element
                // at its strides, inside the dims it gave (checked to cover the patch).
                unsafe { copy(base.add(at), (user_ptr as *mut u8).add(user), elem, u == Usage::Read) };
            }
        }
        frames::unmap(id, reference(&e).id());
        drop(app);
        VX_SUCCESS
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetImageAttribute(
    image: vx_image,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    on::<vx::Image>(image, |img, e| match attribute {
        VX_IMAGE_SPACE => {
            // SAFETY: forwarded contract.
            let space = match unsafe { take::<vx_enum>(ptr, size) } {
                Ok(s) => s,
                Err(s) => return s,
            };
            let space = match space {
                VX_COLOR_SPACE_NONE => vx::ColorSpace::None,
                VX_COLOR_SPACE_BT601_525 => vx::ColorSpace::Bt601_525,
                VX_COLOR_SPACE_BT601_625 => vx::ColorSpace::Bt601_625,
                VX_COLOR_SPACE_BT709 => vx::ColorSpace::Bt709,
                _ => {
                    return ffi::refuse(
                        e,
                        image,
                        VX_ERROR_INVALID_VALUE,
                        &format!("vxSetImageAttribute: {space:#x} is not a color space"),
                    );
                }
            };
            img.set_color_space(space);
            VX_SUCCESS
        }
        _ => ffi::refuse(
            e,
            image,
            VX_ERROR_NOT_SUPPORTED,
            &format!("vxSetImageAttribute: {attribute:#x} cannot be set (only VX_IMAGE_SPACE)"),
        ),
    })
}

/// # Safety
/// `rect` must be NULL or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxGetValidRegionImage(image: vx_image, rect: *mut vx_rectangle_t) -> vx_status {
    on::<vx::Image>(image, |img, e| {
        if let Err(s) = need(e, image, "vxGetValidRegionImage", &[(rect as *const c_void, "rect")]) {
            return s;
        }
        let r = img.valid_region();
        // SAFETY: a writable rectangle (the contract; NULL refused above).
        unsafe {
            rect.write_unaligned(vx_rectangle_t {
                start_x: r.start_x,
                start_y: r.start_y,
                end_x: r.end_x,
                end_y: r.end_y,
            })
        };
        VX_SUCCESS
    })
}

/// # Safety
/// `rect` must be NULL or point to a `vx_rectangle_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetImageValidRectangle(image: vx_image, rect: *const vx_rectangle_t) -> vx_status {
    on::<vx::Image>(image, |img, e| {
        let r = if rect.is_null() {
            None
        } else {
            // SAFETY: a valid rectangle (the contract; NULL is the whole image).
            let rc = unsafe { rect.read_unaligned() };
            Some(Rect::new(rc.start_x, rc.start_y, rc.end_x, rc.end_y))
        };
        status_of(e, image, img.set_valid_rectangle(r))
    })
}

/// The byte offset of pixel (x, y) of a patch (the specification's `vxComputePatchOffset`).
fn patch_offset(x: u32, y: u32, a: &vx_imagepatch_addressing_t) -> isize {
    let sx = (a.scale_x as u64 * x as u64 / VX_SCALE_UNITY as u64) as isize;
    let sy = (a.scale_y as u64 * y as u64 / VX_SCALE_UNITY as u64) as isize;
    a.stride_y as isize * sy + a.stride_x as isize * sx
}

/// # Safety
/// `addr` must be NULL or point to the addressing of the patch mapped at `ptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxFormatImagePatchAddress1d(
    ptr: *mut c_void,
    index: vx_uint32,
    addr: *const vx_imagepatch_addressing_t,
) -> *mut c_void {
    ffi::guard_value(std::ptr::null_mut(), std::ptr::null_mut(), || {
        if ptr.is_null() || addr.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: a valid addressing (the contract; NULL refused above).
        let a = unsafe { addr.read_unaligned() };
        if a.dim_x == 0 || index as u64 >= a.dim_x as u64 * a.dim_y as u64 {
            return std::ptr::null_mut();
        }
        let off = patch_offset(index % a.dim_x, index / a.dim_x, &a);
        (ptr as *mut u8).wrapping_offset(off) as *mut c_void
    })
}

/// # Safety
/// `addr` must be NULL or point to the addressing of the patch mapped at `ptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxFormatImagePatchAddress2d(
    ptr: *mut c_void,
    x: vx_uint32,
    y: vx_uint32,
    addr: *const vx_imagepatch_addressing_t,
) -> *mut c_void {
    ffi::guard_value(std::ptr::null_mut(), std::ptr::null_mut(), || {
        if ptr.is_null() || addr.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: a valid addressing (the contract; NULL refused above).
        let a = unsafe { addr.read_unaligned() };
        if x >= a.dim_x || y >= a.dim_y {
            return std::ptr::null_mut();
        }
        (ptr as *mut u8).wrapping_offset(patch_offset(x, y, &a)) as *mut c_void
    })
}
