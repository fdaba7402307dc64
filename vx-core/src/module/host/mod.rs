//! The host side of the module ABI: the vtables a module calls during `publish` / `unpublish`, in
//! its validators and in its process functions, and the wrappers that turn a module's `extern "C"`
//! functions into ordinary kernel callbacks. Each wrapper keeps the module's library alive (the
//! kernel's keep-alive), copies every string it receives, and turns an `AbiError` into an `Error`.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::abi_stable::std_types::{RResult, RStr};
use vx_plugin_abi::module_abi::{
    AbiError, AbiResult, ArrayInfo, Host, HostVtable, HostVtableRef, KernelAttr, KernelDesc, Lifecycle,
    LifecycleVtable, LifecycleVtableRef, LocalData, MappedImage, ParamMeta, Processor, ProcessorVtable,
    ProcessorVtableRef, ScalarBits, Validator, ValidatorVtable, ValidatorVtableRef, data_type, direction, param_state,
};
use vx_plugin_abi::{BorderMode, ImageFormat, Neighborhood, Status, TileBlockSize, TileError};

use crate::context::Context;
use crate::data_type::{DataType, ParamState, ScalarType, ScalarValue};
use crate::error::{Error, ErrorKind, Result};
use crate::image::PlaneLease;
use crate::kernel::{KernelAttribute, KernelInner, ParamDirection};
use crate::kernel_context::{ProcessContext, ValidateContext};
use crate::meta_format::MetaFormats;
use crate::module_library::ModuleLibrary;
use crate::reference::Reference;

pub(crate) fn to_error(e: AbiError) -> Error {
    let status = Status::from_code(e.status).unwrap_or(Status::Failure);
    Error::new(ErrorKind::from_status(status), e.message.into_string())
}

fn to_abi(e: Error) -> AbiError {
    AbiError::new(e.status(), e.to_string())
}

fn abi<T>(r: Result<T>) -> AbiResult<T> {
    match r {
        Ok(v) => RResult::ROk(v),
        Err(e) => RResult::RErr(to_abi(e)),
    }
}

/// What `publish` / `unpublish` operate on.
pub(crate) struct PublishCtx<'a> {
    pub(crate) ctx: &'a Context,
    /// The module's library (kept alive by its kernels); `None` for in-process kernels.
    pub(crate) library: Option<Arc<ModuleLibrary>>,
    /// Kernels added by this publish, in order (rolled back if it fails).
    pub(crate) added: RefCell<Vec<crate::kernel::Kernel>>,
    /// Names `unpublish` asked to remove.
    pub(crate) removed: RefCell<Vec<String>>,
    /// Reload: build kernels without registering them (swapped in after publish succeeds).
    pub(crate) staged: bool,
}

fn publish_ctx<'a>(host: &'a Host) -> &'a PublishCtx<'a> {
    // SAFETY: the host built this Host with `ctx` = the address of a PublishCtx that lives for the
    // whole publish/unpublish call, and modules only receive it during that call.
    unsafe { &*(host.ctx as *const PublishCtx<'a>) }
}

fn kernel_of(p: &PublishCtx<'_>, id: u64) -> Result<crate::kernel::Kernel> {
    p.added.borrow().get(id as usize).cloned().ok_or_else(|| {
        Error::new(ErrorKind::InvalidReference, "no kernel with this handle was added by this publish").found(id)
    })
}

extern "C" fn host_add_kernel(host: &Host, desc: &KernelDesc<'_>) -> AbiResult<u64> {
    let p = publish_ctx(host);
    abi((|| {
        let name = desc.name.as_str().to_owned();
        let validate = desc.validate;
        let tiling = desc.fast.is_some() || desc.flexible.is_some();
        // Enumeration 0: let the host allocate one (what the kernel macros ask for by default).
        let enumeration = if desc.enumeration == 0 { p.ctx.allocate_user_kernel_id()? } else { desc.enumeration };
        let mut b = if tiling {
            p.ctx.tiling_kernel(&name, enumeration, desc.num_params)
        } else {
            p.ctx.user_kernel(&name, enumeration, desc.num_params)
        };
        if let Some(lib) = &p.library {
            let lib: Arc<dyn std::any::Any + Send + Sync> = lib.clone();
            b = b.keep_alive(lib);
        }
        b = b.validate(move |v, metas| call_validate(validate, v, metas));
        if p.staged {
            b = b.staged();
        }
        if let Some(f) = desc.fast {
            b = b.fast(move |args| call_tiling(f, args));
        }
        if let Some(f) = desc.flexible {
            b = b.flexible(move |args| call_tiling(f, args));
        }
        if let Some(f) = desc.process {
            b = b.process(move |pc| call_process(f, pc));
        }
        if let Some(f) = desc.init {
            b = b.init(move |lc| call_lifecycle(f, lc));
        }
        if let Some(f) = desc.deinit {
            b = b.deinit(move |lc| call_lifecycle(f, lc));
        }
        let k = b.add()?;
        let mut added = p.added.borrow_mut();
        added.push(k);
        Ok(added.len() as u64 - 1)
    })())
}

extern "C" fn host_add_parameter(host: &Host, kernel: u64, index: u32, dir: u32, ty: u32, state: u32) -> AbiResult<()> {
    let p = publish_ctx(host);
    abi((|| {
        let k = kernel_of(p, kernel)?;
        let direction = match dir {
            direction::INPUT => ParamDirection::Input,
            direction::OUTPUT => ParamDirection::Output,
            direction::BIDIRECTIONAL => ParamDirection::Bidirectional,
            other => return Err(Error::new(ErrorKind::InvalidParameters, "unknown parameter direction").found(other)),
        };
        let data_type = match ty {
            data_type::IMAGE => DataType::Image,
            data_type::SCALAR => DataType::Scalar,
            data_type::ARRAY => DataType::Array,
            data_type::USER_DATA_OBJECT => DataType::UserDataObject,
            other => {
                return Err(Error::new(ErrorKind::InvalidType, "unknown parameter type").found(format!("{other:#x}")));
            }
        };
        let state = if state == param_state::OPTIONAL { ParamState::Optional } else { ParamState::Required };
        k.add_parameter(index, direction, data_type, state)
    })())
}

extern "C" fn host_set_attribute(host: &Host, kernel: u64, attribute: KernelAttr) -> AbiResult<()> {
    let p = publish_ctx(host);
    abi((|| {
        let k = kernel_of(p, kernel)?;
        let a = match attribute {
            KernelAttr::LocalDataSize(n) => KernelAttribute::LocalDataSize(n as usize),
            KernelAttr::InputNeighborhood(l, r, t, b) => {
                KernelAttribute::InputNeighborhood(Neighborhood::new(l, r, t, b))
            }
            KernelAttr::OutputTileBlockSize(w, h) => {
                KernelAttribute::OutputTileBlockSize(TileBlockSize { width: w, height: h })
            }
            KernelAttr::Border(0) => KernelAttribute::Border(BorderMode::Undefined),
            KernelAttr::Border(1) => KernelAttribute::Border(BorderMode::Self_),
            KernelAttr::Border(other) => {
                return Err(Error::new(ErrorKind::NotSupported, "unknown border code").expected_found("0 or 1", other));
            }
            KernelAttr::TileMemorySize(n) => KernelAttribute::TileMemorySize(n as usize),
        };
        k.set_attribute(a)
    })())
}

extern "C" fn host_alias_hint(host: &Host, kernel: u64, a: u32, b: u32, kind: u32) -> AbiResult<()> {
    let p = publish_ctx(host);
    let kind = if kind == 1 { crate::kernel::AliasKind::Sparse } else { crate::kernel::AliasKind::Dense };
    abi(kernel_of(p, kernel).and_then(|k| k.alias_parameter_index_hint(a, b, kind)))
}

extern "C" fn host_finalize(host: &Host, kernel: u64) -> AbiResult<()> {
    let p = publish_ctx(host);
    abi(kernel_of(p, kernel).and_then(|k| k.finalize()))
}

extern "C" fn host_remove_kernel(host: &Host, name: RStr<'_>) -> AbiResult<()> {
    let p = publish_ctx(host);
    p.removed.borrow_mut().push(name.as_str().to_owned());
    RResult::ROk(())
}

pub(crate) fn host_vtable() -> HostVtableRef {
    static V: OnceLock<HostVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        HostVtable {
            add_kernel: host_add_kernel,
            add_parameter: host_add_parameter,
            set_attribute: host_set_attribute,
            alias_hint: host_alias_hint,
            finalize: host_finalize,
            remove_kernel: host_remove_kernel,
        }
        .leak_into_prefix()
    })
}

// ---------------------------------------------------------------- validators

struct ValidateCall<'a, 'b> {
    v: &'a ValidateContext<'b>,
    metas: &'a mut MetaFormats,
}

fn validate_call<'a, 'b>(v: &Validator) -> &'a mut ValidateCall<'a, 'b> {
    // SAFETY: `call_validate` built this Validator with `ctx` = the address of a ValidateCall that
    // lives (and is borrowed by nobody else) for the whole validator call.
    unsafe { &mut *(v.ctx as *mut ValidateCall<'a, 'b>) }
}

extern "C" fn val_num_params(v: &Validator) -> u32 {
    validate_call(v).v.params().len() as u32
}

extern "C" fn val_param_meta(v: &Validator, index: u32) -> AbiResult<ParamMeta> {
    let c = validate_call(v);
    abi((|| {
        let params = c.v.params();
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
            Some(Reference::Array(_)) => m.data_type = data_type::ARRAY,
            Some(Reference::UserDataObject(_)) => m.data_type = data_type::USER_DATA_OBJECT,
        }
        Ok(m)
    })())
}

extern "C" fn val_set_output_image(v: &Validator, index: u32, format: u32, width: u32, height: u32) -> AbiResult<()> {
    let c = validate_call(v);
    abi((|| {
        let f = ImageFormat::from_fourcc(format).ok_or_else(|| {
            Error::new(ErrorKind::InvalidFormat, "unknown image format code").found(format!("{format:#x}"))
        })?;
        c.metas.get(index)?.set_image(f, width, height)?;
        Ok(())
    })())
}

extern "C" fn val_set_output_array(v: &Validator, index: u32, scalar_type: u32, capacity: u64) -> AbiResult<()> {
    let c = validate_call(v);
    abi((|| {
        let t = ScalarType::ALL.into_iter().find(|t| t.code() as u32 == scalar_type).ok_or_else(|| {
            Error::new(ErrorKind::InvalidType, "unknown scalar type code").found(format!("{scalar_type:#x}"))
        })?;
        c.metas
            .get(index)?
            .set_array_item_type(crate::array::ArrayItemType::Scalar(t))?
            .set_array_capacity(capacity as usize)?;
        Ok(())
    })())
}

fn validator_vtable() -> ValidatorVtableRef {
    static V: OnceLock<ValidatorVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        ValidatorVtable {
            num_params: val_num_params,
            param_meta: val_param_meta,
            set_output_image: val_set_output_image,
            set_output_array: val_set_output_array,
        }
        .leak_into_prefix()
    })
}

fn call_validate(
    f: extern "C" fn(&Validator) -> AbiResult<()>,
    v: &ValidateContext<'_>,
    metas: &mut MetaFormats,
) -> Result<()> {
    let mut call = ValidateCall { v, metas };
    let handle = Validator { vtable: validator_vtable(), ctx: &mut call as *mut ValidateCall<'_, '_> as usize };
    f(&handle).into_result().map_err(to_error)
}

// ---------------------------------------------------------------- tiling functions

fn call_tiling(
    f: extern "C" fn(*const vx_plugin_abi::TileParam, u32, *mut u8, usize) -> AbiResult<()>,
    args: &mut vx_plugin_abi::TileArgs<'_>,
) -> std::result::Result<(), TileError> {
    let (params, n, mem, size) = args.as_raw();
    match f(params, n, mem, size) {
        RResult::ROk(()) => Ok(()),
        RResult::RErr(e) => {
            Err(TileError::new(Status::from_code(e.status).unwrap_or(Status::Failure), e.message.into_string()))
        }
    }
}

// ---------------------------------------------------------------- user kernels

const MAX_MAPS: usize = 16;

struct ProcessCall<'a, 'b> {
    p: &'a mut ProcessContext<'b>,
    maps: [Option<PlaneLease<'b>>; MAX_MAPS],
}

fn process_call<'a, 'b>(p: &Processor) -> &'a mut ProcessCall<'a, 'b> {
    // SAFETY: `call_process` built this Processor with `ctx` = the address of a ProcessCall that
    // lives (and is borrowed by nobody else) for the whole process call.
    unsafe { &mut *(p.ctx as *mut ProcessCall<'a, 'b>) }
}

extern "C" fn proc_map_image(
    p: &Processor,
    index: u32,
    rect: vx_plugin_abi::Rect,
    write: bool,
) -> AbiResult<MappedImage> {
    let c = process_call(p);
    abi((|| {
        let img = c.p.image(index)?.image();
        let full = vx_plugin_abi::Rect::full(img.width(), img.height());
        let rect = if rect.is_empty() { full } else { rect };
        if !full.contains(&rect) {
            return Err(Error::new(ErrorKind::InvalidParameters, "the patch must lie inside the image")
                .at_parameter(index)
                .expected_found(format!("inside {full}"), rect));
        }
        let slot =
            c.maps.iter().position(Option::is_none).ok_or_else(|| {
                Error::new(ErrorKind::NoResources, "too many images mapped at once").expected(MAX_MAPS)
            })?;
        let lease = img.lease_plane0(write).map_err(|e| e.at_parameter(index))?;
        let offset = rect.start_y as usize * lease.stride_y + rect.start_x as usize * lease.stride_x;
        let m = MappedImage {
            // SAFETY: rect lies inside the image, so the offset stays inside the leased plane.
            base: unsafe { lease.base.add(offset) },
            dim_x: rect.width(),
            dim_y: rect.height(),
            stride_x: lease.stride_x as i32,
            stride_y: lease.stride_y as i32,
            token: slot as u64,
        };
        c.maps[slot] = Some(lease);
        Ok(m)
    })())
}

extern "C" fn proc_unmap_image(p: &Processor, token: u64) {
    if let Some(slot) = process_call(p).maps.get_mut(token as usize) {
        *slot = None;
    }
}

extern "C" fn proc_read_scalar(p: &Processor, index: u32) -> AbiResult<ScalarBits> {
    let c = process_call(p);
    abi(c.p.scalar(index).map(|s| {
        let v = s.value();
        ScalarBits { type_code: v.scalar_type().code() as u32, bytes: v.to_ne_bytes() }
    }))
}

extern "C" fn proc_write_scalar(p: &Processor, index: u32, value: ScalarBits) -> AbiResult<()> {
    let c = process_call(p);
    abi((|| {
        let s = c.p.scalar(index)?;
        let ty = ScalarType::ALL
            .into_iter()
            .find(|t| t.code() as u32 == value.type_code)
            .ok_or_else(|| Error::new(ErrorKind::InvalidType, "unknown scalar type code").found(value.type_code))?;
        s.set_value(ScalarValue::from_ne_bytes(ty, value.bytes))
    })())
}

extern "C" fn proc_array_info(p: &Processor, index: u32) -> AbiResult<ArrayInfo> {
    let c = process_call(p);
    abi(c.p.array(index).map(|a| ArrayInfo {
        item_size: a.item_size() as u64,
        capacity: a.capacity() as u64,
        num_items: a.num_items() as u64,
    }))
}

extern "C" fn proc_array_add(p: &Processor, index: u32, items: *const u8, count: u64) -> AbiResult<()> {
    let c = process_call(p);
    abi((|| {
        let a = c.p.array(index)?;
        let len = (count as usize)
            .checked_mul(a.item_size())
            .ok_or_else(|| Error::new(ErrorKind::InvalidValue, "item count overflows"))?;
        // SAFETY: the module passes `count` items of the array's item size at `items` (ABI contract).
        let bytes = unsafe { std::slice::from_raw_parts(items, len) };
        a.add_raw(bytes)
    })())
}

extern "C" fn proc_array_read(p: &Processor, index: u32, out: *mut u8, capacity: u64) -> AbiResult<u64> {
    let c = process_call(p);
    abi((|| {
        let a = c.p.array(index)?;
        let len = (capacity as usize)
            .checked_mul(a.item_size())
            .ok_or_else(|| Error::new(ErrorKind::InvalidValue, "capacity overflows"))?;
        // SAFETY: the module passes room for `capacity` items of the array's item size at `out`.
        let dst = unsafe { std::slice::from_raw_parts_mut(out, len) };
        a.read_raw(dst).map(|n| n as u64)
    })())
}

extern "C" fn proc_array_truncate(p: &Processor, index: u32, count: u64) -> AbiResult<()> {
    let c = process_call(p);
    abi(c.p.array(index).and_then(|a| a.truncate(count as usize)))
}

extern "C" fn proc_local_data(p: &Processor) -> LocalData {
    let c = process_call(p);
    LocalData { ptr: c.p.local_data_ptr() as usize, size: c.p.local_data_size() as u64 }
}

extern "C" fn proc_is_aliased(p: &Processor, a: u32, b: u32) -> bool {
    process_call(p).p.is_parameter_aliased(a, b)
}

fn processor_vtable() -> ProcessorVtableRef {
    static V: OnceLock<ProcessorVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        ProcessorVtable {
            map_image: proc_map_image,
            unmap_image: proc_unmap_image,
            read_scalar: proc_read_scalar,
            write_scalar: proc_write_scalar,
            array_info: proc_array_info,
            array_add: proc_array_add,
            array_read: proc_array_read,
            array_truncate: proc_array_truncate,
            local_data: proc_local_data,
            is_aliased: proc_is_aliased,
        }
        .leak_into_prefix()
    })
}

fn call_process(f: extern "C" fn(&Processor) -> AbiResult<()>, pc: &mut ProcessContext<'_>) -> Result<()> {
    let mut call = ProcessCall { p: pc, maps: Default::default() };
    let handle = Processor { vtable: processor_vtable(), ctx: &mut call as *mut ProcessCall<'_, '_> as usize };
    let r = f(&handle).into_result().map_err(to_error);
    drop(call); // unmaps whatever the module left mapped
    r
}

// ---------------------------------------------------------------- init / deinit

fn lifecycle_call<'a, 'b>(l: &Lifecycle) -> &'a mut crate::kernel_context::LifecycleContext<'b> {
    // SAFETY: `call_lifecycle` built this Lifecycle with `ctx` = the address of the
    // LifecycleContext it was given, borrowed by nobody else for the whole callback.
    unsafe { &mut *(l.ctx as *mut crate::kernel_context::LifecycleContext<'b>) }
}

extern "C" fn life_local_data(l: &Lifecycle) -> LocalData {
    let c = lifecycle_call(l);
    LocalData { ptr: c.local_data_ptr() as usize, size: c.local_data_size() as u64 }
}

extern "C" fn life_set_size(l: &Lifecycle, size: u64) -> AbiResult<()> {
    abi(lifecycle_call(l).set_local_data_size(size as usize))
}

extern "C" fn life_set_ptr(l: &Lifecycle, ptr: usize) -> AbiResult<()> {
    abi(lifecycle_call(l).set_local_data_ptr(ptr as *mut std::ffi::c_void))
}

extern "C" fn life_is_aliased(l: &Lifecycle, a: u32, b: u32) -> bool {
    lifecycle_call(l).is_parameter_aliased(a, b)
}

fn lifecycle_vtable() -> LifecycleVtableRef {
    static V: OnceLock<LifecycleVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        LifecycleVtable {
            local_data: life_local_data,
            set_local_data_size: life_set_size,
            set_local_data_ptr: life_set_ptr,
            is_aliased: life_is_aliased,
        }
        .leak_into_prefix()
    })
}

fn call_lifecycle(
    f: extern "C" fn(&Lifecycle) -> AbiResult<()>,
    lc: &mut crate::kernel_context::LifecycleContext<'_>,
) -> Result<()> {
    let handle =
        Lifecycle { vtable: lifecycle_vtable(), ctx: lc as *mut crate::kernel_context::LifecycleContext<'_> as usize };
    f(&handle).into_result().map_err(to_error)
}

/// Run a module's `publish` with a host handle over `p`.
pub(crate) fn run_entry(p: &PublishCtx<'_>, entry: extern "C" fn(&Host) -> AbiResult<()>) -> Result<()> {
    let host = Host { vtable: host_vtable(), ctx: p as *const PublishCtx<'_> as usize };
    entry(&host).into_result().map_err(to_error)
}

/// Kernels of a module for bookkeeping (no handle, so no context cycle).
pub(crate) fn kernel_inner(k: &crate::kernel::Kernel) -> Arc<KernelInner> {
    Arc::clone(&k.inner)
}
