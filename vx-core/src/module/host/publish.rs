//! The host vtable: what a module calls during `publish` / `unpublish` to add, describe, finalize
//! and remove kernels, and the runs of those entry points.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};

use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::abi_stable::std_types::{RResult, RStr};
use vx_plugin_abi::module_abi::{AbiResult, FusionDesc, Host, HostVtable, HostVtableRef, KernelAttr, KernelDesc};
use vx_plugin_abi::{BorderMode, Neighborhood, TileBlockSize, wire};

use crate::data::types::{DataType, ParamState};
use crate::error::{Error, ErrorKind, Result};
use crate::kernel::builder::KernelBuilder;
use crate::kernel::callbacks::{RowFn, TargetKernel};
use crate::kernel::fusion::{FusionSupport, RowFill};
use crate::kernel::handle::Kernel;
use crate::kernel::signature::{AliasKind, KernelAttribute, ParamDirection};
use crate::kernel::table::KernelTable;
use crate::module::host::control::call_control;
use crate::module::host::lifecycle::call_lifecycle;
use crate::module::host::processor::call_process;
use crate::module::host::tiling::{call_rows, call_tiling};
use crate::module::host::validator::{ValidatorOwner, call_validate};
use crate::module::host::{abi, catch, catch_or, to_error};
use crate::module::library::ModuleLibrary;

/// What `publish` / `unpublish` operate on.
pub(crate) struct PublishCtx<'a> {
    pub(crate) kernels: &'a Arc<KernelTable>,
    /// The module's library (kept alive by its kernels); `None` for in-process kernels.
    pub(in crate::module) library: Option<Arc<ModuleLibrary>>,
    /// Kernels added by this publish, in order (rolled back if it fails).
    pub(crate) added: RefCell<Vec<Kernel>>,
    /// Names `unpublish` asked to remove.
    pub(crate) removed: RefCell<Vec<String>>,
    /// Reload: build kernels without registering them (swapped in after publish succeeds).
    pub(crate) staged: bool,
}

fn publish_ctx<'a>(host: &'a Host) -> &'a PublishCtx<'a> {
    // SAFETY: the host built this Host with `ctx` = the address of a PublishCtx that lives for the
    // whole publish/unpublish call, and modules only receive it during that call.
    unsafe { &*(host.ctx() as *const PublishCtx<'a>) }
}

fn kernel_of(p: &PublishCtx<'_>, id: u64) -> Result<Kernel> {
    p.added.borrow().get(id as usize).cloned().ok_or_else(|| {
        Error::new(ErrorKind::InvalidReference, "no kernel with this handle was added by this publish").found(id)
    })
}

unsafe extern "C" fn host_add_kernel(host: &Host, desc: &KernelDesc<'_>) -> AbiResult<u64> {
    catch("add kernel", || {
        let p = publish_ctx(host);
        abi((|| {
            let name = desc.name.as_str().to_owned();
            let validate = desc.validate;
            let tiling = desc.fast.is_some() || desc.flexible.is_some();
            // Enumeration 0 (what the kernel macros ask for by default): the host allocates one from
            // the id pool, owned by the kernel (back to the pool when it leaves); a reload's successor
            // keeps its predecessor's, so clients that look kernels up by enumeration keep finding it.
            let (enumeration, owned) = if desc.enumeration != 0 {
                (desc.enumeration, false)
            } else {
                let mut registry = p.kernels.registry();
                match registry.by_name(&name).filter(|old| p.staged && old.owns_enumeration) {
                    Some(old) => (old.enumeration, true),
                    None => (registry.allocate_kernel_id()?, true),
                }
            };
            let mut b = KernelBuilder::new(p.kernels, &name, enumeration, desc.num_params, tiling);
            if owned {
                b = b.owns_enumeration();
            }
            let library = p.library.clone().map(|lib| -> Arc<dyn std::any::Any + Send + Sync> { lib });
            if let Some(lib) = &library {
                b = b.keep_alive(Arc::clone(lib));
            }
            let owner = ValidatorOwner { kernel: name.clone(), library };
            b = b.validate(move |v, metas| call_validate(validate, v, metas, &owner)).validator_key(desc.validator_key);
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
            if let Some(f) = desc.control {
                b = b.control(move |cc| call_control(f, cc));
            }
            for t in desc.targets.iter() {
                let process = t.process;
                let mut imp = TargetKernel::new(move |pc| call_process(process, pc));
                if let Some(f) = t.create {
                    imp = imp.create(move |lc| call_lifecycle(f, lc));
                }
                if let Some(f) = t.delete {
                    imp = imp.delete(move |lc| call_lifecycle(f, lc));
                }
                if let Some(f) = t.control {
                    imp = imp.control(move |cc| call_control(f, cc));
                }
                b = b.target(t.target.as_str(), imp);
            }
            let k = b.add()?;
            let mut added = p.added.borrow_mut();
            added.push(k);
            Ok(added.len() as u64 - 1)
        })())
    })
}

unsafe extern "C" fn host_add_parameter(
    host: &Host,
    kernel: u64,
    index: u32,
    dir: u32,
    ty: u32,
    state: u32,
) -> AbiResult<()> {
    catch("add parameter", || {
        let p = publish_ctx(host);
        abi((|| {
            let k = kernel_of(p, kernel)?;
            let direction = match dir {
                wire::direction::INPUT => ParamDirection::Input,
                wire::direction::OUTPUT => ParamDirection::Output,
                wire::direction::BIDIRECTIONAL => ParamDirection::Bidirectional,
                other => {
                    return Err(Error::new(ErrorKind::InvalidParameters, "unknown parameter direction").found(other));
                }
            };
            let data_type = DataType::from_code(ty).ok_or_else(|| {
                Error::new(ErrorKind::InvalidType, "unknown parameter type").found(format!("{ty:#x}"))
            })?;
            let state = if state == wire::param_state::OPTIONAL { ParamState::Optional } else { ParamState::Required };
            k.add_parameter(index, direction, data_type, state)
        })())
    })
}

unsafe extern "C" fn host_set_attribute(host: &Host, kernel: u64, attribute: KernelAttr) -> AbiResult<()> {
    catch("set attribute", || {
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
                KernelAttr::Border(wire::border::UNDEFINED) => KernelAttribute::Border(BorderMode::Undefined),
                KernelAttr::Border(wire::border::SELF) => KernelAttribute::Border(BorderMode::Self_),
                KernelAttr::Border(other) => {
                    return Err(Error::new(ErrorKind::NotSupported, "unknown border code").expected_found(
                        format!("{} (Undefined) or {} (Self_)", wire::border::UNDEFINED, wire::border::SELF),
                        other,
                    ));
                }
                KernelAttr::TileMemorySize(n) => KernelAttribute::TileMemorySize(n as usize),
            };
            k.set_attribute(a)
        })())
    })
}

unsafe extern "C" fn host_alias_hint(host: &Host, kernel: u64, a: u32, b: u32, kind: u32) -> AbiResult<()> {
    catch("alias hint", || {
        let p = publish_ctx(host);
        let kind = if kind == 1 { AliasKind::Sparse } else { AliasKind::Dense };
        abi(kernel_of(p, kernel).and_then(|k| k.alias_parameter_index_hint(a, b, kind)))
    })
}

unsafe extern "C" fn host_finalize(host: &Host, kernel: u64) -> AbiResult<()> {
    catch("finalize", || {
        let p = publish_ctx(host);
        abi(kernel_of(p, kernel).and_then(|k| k.finalize()))
    })
}

unsafe extern "C" fn host_remove_kernel(host: &Host, name: RStr<'_>) -> AbiResult<()> {
    catch("remove kernel", || {
        let p = publish_ctx(host);
        p.removed.borrow_mut().push(name.as_str().to_owned());
        RResult::ROk(())
    })
}

unsafe extern "C" fn host_describe_kernel(host: &Host, kernel: u64, summary: RStr<'_>) -> AbiResult<()> {
    catch("describe kernel", || {
        let p = publish_ctx(host);
        abi(kernel_of(p, kernel).and_then(|k| k.set_summary(summary.as_str())))
    })
}

unsafe extern "C" fn host_describe_parameter(
    host: &Host,
    kernel: u64,
    index: u32,
    name: RStr<'_>,
    element: RStr<'_>,
) -> AbiResult<()> {
    catch("describe parameter", || {
        let p = publish_ctx(host);
        abi(kernel_of(p, kernel).and_then(|k| k.describe_parameter(index, name.as_str(), element.as_str())))
    })
}

unsafe extern "C" fn host_declare_fusion(host: &Host, kernel: u64, desc: &FusionDesc) -> AbiResult<()> {
    catch("declare fusion", || {
        let p = publish_ctx(host);
        abi((|| {
            let k = kernel_of(p, kernel)?;
            let fill = match desc.fill {
                wire::row_fill::NONE => None,
                code => Some(RowFill::from_code(code).ok_or_else(|| {
                    Error::new(ErrorKind::NotSupported, "unknown row fill code").in_kernel(&k.inner.name).found(code)
                })?),
            };
            let known = wire::fusion::VIEWS_BOUNDED;
            if desc.flags & !known != 0 {
                return Err(Error::new(ErrorKind::NotSupported, "unknown fusion flags")
                    .in_kernel(&k.inner.name)
                    .found(format!("{:#x}", desc.flags & !known)));
            }
            let support =
                FusionSupport { fill, rows_n: desc.rows_n, bounded: desc.flags & wire::fusion::VIEWS_BOUNDED != 0 };
            // The closure lives in the kernel, which keeps the module's library mapped.
            let rows =
                desc.rows.map(|f| -> std::sync::Arc<RowFn> { std::sync::Arc::new(move |args| call_rows(f, args)) });
            k.declare_fusion(support, rows)
        })())
    })
}

/// Log lines and caught panics from module code, as `tracing` events of target `vx::module`
/// (the module-side `source` path a field). A caught panic (`source` the SDK's `PANIC_SOURCE`) is
/// also the error the module's call returned: its event is that error's echo, with an `error`
/// field as the host's own echoes have, so `vx` (which prints the error) does not show it twice.
/// Any thread, any time: it uses no publish state.
unsafe extern "C" fn host_log(level: u32, source: RStr<'_>, message: RStr<'_>) {
    catch_or("log", (), || {
        let (source, message) = (source.as_str(), message.as_str());
        match level {
            wire::log_level::ERROR if source == vx_plugin_abi::log::PANIC_SOURCE => {
                tracing::error!(target: "vx::module", source, error = %message, "module code panicked")
            }
            wire::log_level::ERROR => tracing::error!(target: "vx::module", source, "{message}"),
            wire::log_level::WARN => tracing::warn!(target: "vx::module", source, "{message}"),
            wire::log_level::INFO => tracing::info!(target: "vx::module", source, "{message}"),
            wire::log_level::DEBUG => tracing::debug!(target: "vx::module", source, "{message}"),
            _ => tracing::trace!(target: "vx::module", source, "{message}"),
        }
    })
}

pub(super) fn host_vtable() -> HostVtableRef {
    static V: OnceLock<HostVtableRef> = OnceLock::new();
    *V.get_or_init(|| {
        HostVtable {
            add_kernel: host_add_kernel,
            add_parameter: host_add_parameter,
            set_attribute: host_set_attribute,
            alias_hint: host_alias_hint,
            finalize: host_finalize,
            remove_kernel: host_remove_kernel,
            describe_kernel: host_describe_kernel,
            describe_parameter: host_describe_parameter,
            log: host_log,
            declare_fusion: host_declare_fusion,
        }
        .leak_into_prefix()
    })
}

/// Run a module's `publish` with a host handle over `p`.
pub(crate) fn run_entry(p: &PublishCtx<'_>, entry: extern "C" fn(&Host) -> AbiResult<()>) -> Result<()> {
    // SAFETY: `p` is the PublishCtx the host vtable's functions expect, alive and used by nobody
    // else for the whole call; the module receives the handle for this call only.
    let host = unsafe { Host::from_raw(host_vtable(), p as *const PublishCtx<'_> as *const c_void) };
    entry(&host).into_result().map_err(to_error)
}

/// Run this binary's own kernel records (`publish_in_process`) with a host handle over `p`.
pub(crate) fn run_records(p: &PublishCtx<'_>) -> Result<()> {
    // SAFETY: as in `run_entry`.
    let host = unsafe { Host::from_raw(host_vtable(), p as *const PublishCtx<'_> as *const c_void) };
    vx_plugin_abi::kernel_record::publish_records(&host).into_result().map_err(to_error)
}
