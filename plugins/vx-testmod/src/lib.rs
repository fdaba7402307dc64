//! `vx_testmod`: the kernel module of the loader tests, written by hand against the module ABI
//! (on purpose: the macros would not let it build broken descriptors).
//!
//! Kernels: `testmod.invert` (tiling, flexible; v1: 255 - p, v2: 255 - p + 1), `testmod.panicky`
//! (tiling; panics on a pixel of 13), `testmod.scale` (user kernel: out = in * scalar + frames so far,
//! saturating, through a scratch row, with a persistent frame counter — kernel memory through the ABI),
//! `testmod.histogram` (user kernel with init/deinit, host-allocated local data and an array output);
//! with the `target-kernel` feature, `testmod.gain` (a target kernel on `tm_dsp` only: out = in × gain
//! (+ 1 in v2), the gain in a typed state made by create, set by control from a scalar reference).
//! Features select broken variants for the failure tests (see Cargo.toml).

// The loader static that `#[export_root_module]` generates carries no doc comment.
#![allow(missing_docs)]

use abi_stable::export_root_module;
use vx_plugin_abi::abi_stable::prefix_type::WithMetadata;
use vx_plugin_abi::abi_stable::std_types::RStr;
use vx_plugin_abi::module_abi::TargetDesc;
use vx_plugin_abi::module_abi::{
    ABI_VERSION, AbiError, AbiResult, Host, KernelAttr, KernelDesc, Lifecycle, Processor, Validator, VxModule,
    VxModuleRef,
};
use vx_plugin_abi::module_api::{
    StateHooks, StatefulControl, StatefulProcess, TilingFunction, deinit_trampoline, guard, init_trampoline,
    stateful_control_trampoline, stateful_process_trampoline, tiling_trampoline,
};
use vx_plugin_abi::wire::{alias_kind, data_type, direction, param_state, scalar_type};
use vx_plugin_abi::{ImageFormat, MemBlock, MemRegion, ParamPath, Rect, Status, TileArgs, TileError};

const VERSION: &str = if cfg!(feature = "v2") { "2.0.0" } else { "1.0.0" };
/// The declared module name: `vx_testmod`, or the one the tests build it under (a module is loaded by
/// its declared name; each test uses a module of its own).
const NAME: &str = match option_env!("VX_TESTMOD_NAME") {
    Some(n) => n,
    None => "vx_testmod",
};
/// The invert kernel's name (`rename-invert`: another name, as if renamed in a new version).
const INVERT: &str = if cfg!(feature = "rename-invert") { "testmod.inverted" } else { "testmod.invert" };
const KERNELS: &[&str] = if cfg!(feature = "target-kernel") {
    &[INVERT, "testmod.panicky", "testmod.scale", "testmod.histogram", "testmod.gain"]
} else {
    &[INVERT, "testmod.panicky", "testmod.scale", "testmod.histogram"]
};

/// Whether this variant publishes `kernel` (`drop-scale` leaves out the scale kernel).
fn published(kernel: &str) -> bool {
    !(cfg!(feature = "drop-scale") && kernel == KERNELS[2])
}

/// The gain target kernel's node state (its instance context): made by create on the target.
struct Gain {
    gain: u8,
    /// The OS thread create ran on (the module's own `std` does not know the host's thread names).
    thread: String,
}

/// The calling OS thread (`<pid>/task/<tid>`).
fn os_thread() -> String {
    std::fs::read_link("/proc/thread-self").map(|p| p.display().to_string()).unwrap_or_default()
}

impl Default for Gain {
    fn default() -> Self {
        Gain { gain: 1, thread: os_thread() }
    }
}

struct GainKernel;
impl StateHooks for GainKernel {
    type State = Gain;
}
impl StatefulProcess for GainKernel {
    fn process(p: &Processor, state: &mut Gain) -> Result<(), AbiError> {
        let src = p.map_image(ParamPath::param(0), Rect::default(), false)?;
        let dst = p.map_image(ParamPath::param(1), Rect::default(), true)?;
        for y in 0..src.dim_y as usize {
            // SAFETY: the host mapped both images whole (dim_x × dim_y, strides as given) until
            // unmap; rows of distinct images do not overlap.
            let (s, d) = unsafe {
                (
                    std::slice::from_raw_parts(src.base.add(y * src.stride_y as usize), src.dim_x as usize),
                    std::slice::from_raw_parts_mut(dst.base.add(y * dst.stride_y as usize), dst.dim_x as usize),
                )
            };
            for (o, i) in d.iter_mut().zip(s) {
                let v = i.saturating_mul(state.gain);
                *o = if cfg!(feature = "v2") { v.saturating_add(1) } else { v };
            }
        }
        p.unmap_image(src.token);
        p.unmap_image(dst.token);
        Ok(())
    }
}
impl StatefulControl for GainKernel {
    fn control(c: &vx_plugin_abi::module_abi::Controller, state: &mut Gain) -> Result<(), AbiError> {
        match c.command() {
            // Set the gain from the command's first reference, a U8 scalar.
            1 => {
                let v = c.ref_scalar(0)?;
                if v.type_code != scalar_type::UINT8 {
                    return Err(AbiError::new(Status::InvalidType, "the gain is a U8 scalar"));
                }
                state.gain = v.bytes[0];
                Ok(())
            }
            // Fail unless create ran on this thread: control runs on the node's target, so create did
            // too (not on the thread that verified the graph).
            2 => {
                let here = os_thread();
                if state.thread == here && !here.is_empty() {
                    Ok(())
                } else {
                    Err(AbiError::new(Status::Failure, format!("create ran on {}, control on {here}", state.thread)))
                }
            }
            other => Err(AbiError::new(Status::NotSupported, format!("unknown command {other}"))),
        }
    }
}

fn invert(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    for y in 0..out.height() {
        for x in 0..out.width() {
            let v = 255 - input.pixel(x, y, 0, 0);
            out.set(x, y, if cfg!(feature = "v2") { v.wrapping_add(1) } else { v });
        }
    }
    Ok(())
}

struct Invert;
impl TilingFunction for Invert {
    fn call(args: &mut TileArgs<'_>) -> Result<(), TileError> {
        invert(args)
    }
}

fn panicky(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    if input.pixel(0, 0, 0, 0) == 13 {
        vx_plugin_abi::log::warn!("a tile starts with pixel 13");
        panic!("pixel 13 is unlucky");
    }
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, input.pixel(x, y, 0, 0));
        }
    }
    Ok(())
}

struct Panicky;
impl TilingFunction for Panicky {
    fn call(args: &mut TileArgs<'_>) -> Result<(), TileError> {
        panicky(args)
    }
}

/// U8 image in (0) → U8 image of the same size out (the last parameter).
extern "C" fn validate_u8_same_size(v: &Validator) -> AbiResult<()> {
    guard("validate", || {
        let input = v.param(0)?;
        if input.format != ImageFormat::U8.fourcc() {
            return Err(AbiError::new(Status::InvalidFormat, "parameter 0 must be a U8 image"));
        }
        let last = v.num_params() - 1;
        v.set_output_image(last, ImageFormat::U8, input.width, input.height)
    })
}

/// The scale kernel's blocks (allocated in this order by `scale_init`).
const FRAMES: MemBlock<u32> = MemBlock::nth(MemRegion::Persistent, 0);
const ROW: MemBlock<u8> = MemBlock::nth(MemRegion::Scratch, 0);
/// The widest row the scratch row holds.
const MAX_ROW: usize = 4096;

/// A persistent frame counter and a scratch row (TIOVX's create: the only place to allocate).
extern "C" fn scale_init(l: &Lifecycle) -> AbiResult<()> {
    guard("init", || {
        let frames = l.alloc::<u32>(MemRegion::Persistent, 1)?;
        l.block(frames)?[0] = 0;
        let row = l.alloc::<u8>(MemRegion::Scratch, MAX_ROW)?;
        if (frames, row) != (FRAMES, ROW) || l.block(frames).is_ok() {
            return Err(AbiError::new(Status::Failure, "blocks numbered wrongly, or handed out twice in one call"));
        }
        Ok(())
    })
}

/// Frees the counter; the `leak` feature forgets to (the host reports it).
extern "C" fn scale_deinit(l: &Lifecycle) -> AbiResult<()> {
    guard("deinit", || {
        if l.alloc::<u8>(MemRegion::Persistent, 1).is_ok() {
            return Err(AbiError::new(Status::Failure, "the host let deinit allocate"));
        }
        if cfg!(feature = "leak") { Ok(()) } else { l.free(FRAMES) }
    })
}

extern "C" fn scale_process(p: &Processor) -> AbiResult<()> {
    guard("process", || {
        if let Ok(i) = p.alloc_bytes(MemRegion::Persistent, 8) {
            return Err(AbiError::new(Status::Failure, format!("the host let process allocate (block {i})")));
        }
        let factor = p.read_scalar(ParamPath::param(1))?.bytes[0];
        let frames = {
            let f = p.block(FRAMES)?;
            f[0] += 1;
            f[0] - 1
        };
        let row = p.block(ROW)?;
        let src = p.map_image(ParamPath::param(0), Rect::default(), false)?;
        let dst = p.map_image(ParamPath::param(2), Rect::default(), true)?;
        if src.dim_x as usize > MAX_ROW {
            return Err(AbiError::new(Status::InvalidDimension, "rows wider than the scratch row"));
        }
        for y in 0..src.dim_y as usize {
            // SAFETY: the host mapped both images whole (dim_x × dim_y, strides as given) until
            // unmap; rows of distinct images do not overlap.
            let (s, d) = unsafe {
                (
                    std::slice::from_raw_parts(src.base.add(y * src.stride_y as usize), src.dim_x as usize),
                    std::slice::from_raw_parts_mut(dst.base.add(y * dst.stride_y as usize), dst.dim_x as usize),
                )
            };
            let tmp = &mut row[..s.len()];
            for (t, i) in tmp.iter_mut().zip(s) {
                *t = i.saturating_mul(factor).saturating_add(frames as u8);
            }
            d.copy_from_slice(tmp);
        }
        p.unmap_image(src.token);
        p.unmap_image(dst.token);
        Ok(())
    })
}

/// Histogram: U8 image in → array of 4 u32 bucket counts (pixel >> 6).
extern "C" fn histogram_validate(v: &Validator) -> AbiResult<()> {
    guard("validate", || {
        if v.param(0)?.format != ImageFormat::U8.fourcc() {
            return Err(AbiError::new(Status::InvalidFormat, "parameter 0 must be a U8 image"));
        }
        v.set_output_array(1, scalar_type::UINT32, 4)
    })
}

/// Ask for 16 bytes of node local data (the host allocates them after init).
extern "C" fn histogram_init(l: &Lifecycle) -> AbiResult<()> {
    guard("init", || l.set_local_data_size(16))
}

/// The local data was the host's: deinit must not be able to replace the pointer.
extern "C" fn histogram_deinit(l: &Lifecycle) -> AbiResult<()> {
    guard("deinit", || match l.set_local_data_ptr(0) {
        Ok(()) => Err(AbiError::new(Status::Failure, "deinit could replace a host-allocated local data pointer")),
        Err(_) => Ok(()),
    })
}

extern "C" fn histogram_process(p: &Processor) -> AbiResult<()> {
    guard("process", || {
        if p.is_aliased(0, 1) {
            return Err(AbiError::new(Status::Failure, "the host aliased an image with an array"));
        }
        let local = p.local_data();
        if local.ptr == 0 || local.size != 16 {
            return Err(AbiError::new(Status::Failure, "expected 16 bytes of host-allocated local data"));
        }
        // SAFETY: the host hands this node 16 bytes of local data (checked above), u32-aligned
        // (host buffers are 64-byte aligned), used by this node's process only.
        let counts = unsafe { std::slice::from_raw_parts_mut(local.ptr as *mut u32, 4) };
        counts.fill(0);
        let whole = p.map_image(ParamPath::param(0), Rect::default(), false)?;
        let (w, h) = (whole.dim_x, whole.dim_y);
        p.unmap_image(whole.token);
        // Map it again as an explicit patch: the left half, then the right half.
        for part in [Rect::new(0, 0, w / 2, h), Rect::new(w / 2, 0, w, h)] {
            let img = p.map_image(ParamPath::param(0), part, false)?;
            for y in 0..img.dim_y as usize {
                // SAFETY: the patch is mapped until unmap; its row y holds dim_x pixels at base + y*stride_y.
                let row =
                    unsafe { std::slice::from_raw_parts(img.base.add(y * img.stride_y as usize), img.dim_x as usize) };
                for &px in row {
                    counts[(px >> 6) as usize] += 1;
                }
            }
            p.unmap_image(img.token);
        }
        let info = p.array_info(ParamPath::param(1))?;
        if info.item_size != 4 || info.capacity < 4 {
            return Err(AbiError::new(Status::InvalidDimension, "the histogram array holds 4 u32 items"));
        }
        p.array_truncate(ParamPath::param(1), 0)?;
        let bytes: Vec<u8> = counts.iter().flat_map(|c| c.to_ne_bytes()).collect();
        p.array_add(ParamPath::param(1), &bytes)?;
        let mut back = [0u8; 16];
        let n = p.array_read(ParamPath::param(1), &mut back)?;
        let back: Vec<u32> = back.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().expect("4 bytes"))).collect();
        if n != 4 || back != *counts {
            return Err(AbiError::new(Status::Failure, "the array did not read back what was written"));
        }
        Ok(())
    })
}

fn image_in_out(api: &Host, k: u64) -> Result<(), AbiError> {
    api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
    api.add_parameter(k, 1, direction::OUTPUT, data_type::IMAGE, param_state::REQUIRED)
}

extern "C" fn publish(host: &Host) -> AbiResult<()> {
    // Log lines and caught panics go to the host's subscriber from now on.
    vx_plugin_abi::log::connect(host);
    guard("publish", || {
        let api = host;
        vx_plugin_abi::log::info!("publishing version {VERSION}");
        let k = api.add_kernel(&KernelDesc::tiling(
            KERNELS[0],
            0x7E57_0001,
            2,
            validate_u8_same_size,
            None,
            Some(tiling_trampoline::<Invert>),
        ))?;
        image_in_out(api, k)?;
        api.set_attribute(k, KernelAttr::OutputTileBlockSize(1, 1))?;
        api.alias_hint(k, 0, 1, alias_kind::DENSE)?;
        api.finalize(k)?;
        if cfg!(feature = "publish-fails") {
            // Index 7 of a 2-parameter kernel: the host refuses, and publish reports it.
            let k2 = api.add_kernel(&KernelDesc::tiling(
                KERNELS[1],
                0x7E57_0002,
                2,
                validate_u8_same_size,
                None,
                Some(tiling_trampoline::<Panicky>),
            ))?;
            api.add_parameter(k2, 7, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
        }
        if cfg!(feature = "publish-panics") {
            panic!("publish is broken on purpose");
        }
        let k = api.add_kernel(&KernelDesc::tiling(
            KERNELS[1],
            0x7E57_0002,
            2,
            validate_u8_same_size,
            None,
            Some(tiling_trampoline::<Panicky>),
        ))?;
        image_in_out(api, k)?;
        api.finalize(k)?;
        if published(KERNELS[2]) {
            let desc = KernelDesc::user(KERNELS[2], 0x7E57_0003, 3, validate_u8_same_size, scale_process)
                .with_lifecycle(Some(scale_init), Some(scale_deinit));
            let k = api.add_kernel(&desc)?;
            api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
            api.add_parameter(k, 1, direction::INPUT, data_type::SCALAR, param_state::REQUIRED)?;
            api.add_parameter(k, 2, direction::OUTPUT, data_type::IMAGE, param_state::REQUIRED)?;
            api.finalize(k)?;
        }
        let desc = KernelDesc::user(KERNELS[3], 0x7E57_0004, 2, histogram_validate, histogram_process)
            .with_lifecycle(Some(histogram_init), Some(histogram_deinit));
        let k = api.add_kernel(&desc)?;
        api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
        api.add_parameter(k, 1, direction::OUTPUT, data_type::ARRAY, param_state::REQUIRED)?;
        api.finalize(k)?;
        if cfg!(feature = "target-kernel") {
            let targets = [TargetDesc {
                target: RStr::from_str("tm_dsp"),
                process: stateful_process_trampoline::<GainKernel>,
                create: Some(init_trampoline::<GainKernel>),
                delete: Some(deinit_trampoline::<GainKernel>),
                control: Some(stateful_control_trampoline::<GainKernel>),
            }];
            let desc = KernelDesc::target_only(KERNELS[4], 0x7E57_0005, 2, validate_u8_same_size, &targets);
            let k = api.add_kernel(&desc)?;
            image_in_out(api, k)?;
            api.finalize(k)?;
        }
        Ok(())
    })
}

extern "C" fn unpublish(host: &Host) -> AbiResult<()> {
    guard("unpublish", || KERNELS.iter().filter(|k| published(k)).try_for_each(|k| host.remove_kernel(k)))
}

/// The ABI version this build declares: the SDK's, one more (`abi-mismatch`), or 7 (`abi-v7`, like
/// a module built for the ABI before the SDK's 8).
const DECLARED_ABI_VERSION: u32 = if cfg!(feature = "abi-mismatch") {
    ABI_VERSION + 1
} else if cfg!(feature = "abi-v7") {
    7
} else {
    ABI_VERSION
};

/// The ABI version the host reads before anything else (`ABI_VERSION_SYMBOL`); absent in the
/// `abi-v1` variant, like in every module built against ABI version 1.
#[cfg(not(feature = "abi-v1"))]
#[unsafe(export_name = "vx_rs_module_abi_version")]
pub static MODULE_ABI_VERSION: u32 = DECLARED_ABI_VERSION;

/// The root descriptor, static (nothing allocated per load).
const ROOT: &WithMetadata<VxModule> = &WithMetadata::new(VxModule {
    abi_version: DECLARED_ABI_VERSION as _,
    name: RStr::from_str(NAME),
    version: RStr::from_str(VERSION),
    publish,
    unpublish,
});

/// The module's root descriptor.
#[export_root_module]
pub fn vx_module_root() -> VxModuleRef {
    vx_plugin_abi::module_api::install_panic_hook();
    VxModuleRef(ROOT.static_as_prefix())
}
