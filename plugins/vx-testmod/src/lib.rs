//! `vx_testmod`: the kernel module of the loader tests, written by hand against the module ABI
//! (on purpose: the macros would not let it build broken descriptors).
//!
//! Kernels: `testmod.invert` (tiling, flexible; v1: 255 - p, v2: 255 - p + 1), `testmod.panicky`
//! (tiling; panics on a pixel of 13), `testmod.scale` (user kernel: out = in * scalar, saturating),
//! `testmod.histogram` (user kernel with init/deinit, host-allocated local data and an array output).
//! Features select broken variants for the failure tests (see Cargo.toml).

use abi_stable::export_root_module;
use vx_plugin_abi::abi_stable::prefix_type::PrefixTypeTrait;
use vx_plugin_abi::abi_stable::std_types::RStr;
use vx_plugin_abi::module_abi::{
    ABI_VERSION, AbiError, AbiResult, Host, HostApi, KernelAttr, KernelDesc, Lifecycle, Processor, Validator, VxModule,
    VxModuleRef, data_type, direction, guard, param_state, run_tiling,
};
use vx_plugin_abi::{ImageFormat, Rect, Status, TileArgs, TileError, TileParam};

const VERSION: &str = if cfg!(feature = "v2") { "2.0.0" } else { "1.0.0" };
const KERNELS: [&str; 4] = ["testmod.invert", "testmod.panicky", "testmod.scale", "testmod.histogram"];

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

extern "C" fn invert_tiles(p: *const TileParam, n: u32, mem: *mut u8, size: usize) -> AbiResult<()> {
    // SAFETY: forwarded unchanged from the host's call.
    unsafe { run_tiling(p, n, mem, size, invert) }
}

fn panicky(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    if input.pixel(0, 0, 0, 0) == 13 {
        panic!("pixel 13 is unlucky");
    }
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, input.pixel(x, y, 0, 0));
        }
    }
    Ok(())
}

extern "C" fn panicky_tiles(p: *const TileParam, n: u32, mem: *mut u8, size: usize) -> AbiResult<()> {
    // SAFETY: forwarded unchanged from the host's call.
    unsafe { run_tiling(p, n, mem, size, panicky) }
}

/// U8 image in (0) → U8 image of the same size out (the last parameter).
extern "C" fn validate_u8_same_size(v: &Validator) -> AbiResult<()> {
    guard("validate", || {
        let input = v.param(0)?;
        if input.format != ImageFormat::U8.fourcc() {
            return Err(AbiError::new(Status::InvalidFormat, "parameter 0 must be a U8 image"));
        }
        let last = (v.vtable.num_params())(v) - 1;
        v.set_output_image(last, ImageFormat::U8, input.width, input.height)
    })
}

extern "C" fn scale_process(p: &Processor) -> AbiResult<()> {
    guard("process", || {
        let factor = (p.vtable.read_scalar())(p, 1).into_result()?.bytes[0];
        let src = (p.vtable.map_image())(p, 0, Rect::default(), false).into_result()?;
        let dst = (p.vtable.map_image())(p, 2, Rect::default(), true).into_result()?;
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
                *o = i.saturating_mul(factor);
            }
        }
        (p.vtable.unmap_image())(p, src.token);
        (p.vtable.unmap_image())(p, dst.token);
        Ok(())
    })
}

/// `vx_type_e` of u32.
const UINT32: u32 = 0x007;

/// Histogram: U8 image in → array of 4 u32 bucket counts (pixel >> 6).
extern "C" fn histogram_validate(v: &Validator) -> AbiResult<()> {
    guard("validate", || {
        if v.param(0)?.format != ImageFormat::U8.fourcc() {
            return Err(AbiError::new(Status::InvalidFormat, "parameter 0 must be a U8 image"));
        }
        v.set_output_array(1, UINT32, 4)
    })
}

/// Ask for 16 bytes of node local data (the host allocates them after init).
extern "C" fn histogram_init(l: &Lifecycle) -> AbiResult<()> {
    guard("init", || (l.vtable.set_local_data_size())(l, 16).into_result())
}

/// The local data was the host's: deinit must not be able to replace the pointer.
extern "C" fn histogram_deinit(l: &Lifecycle) -> AbiResult<()> {
    guard("deinit", || match (l.vtable.set_local_data_ptr())(l, 0).into_result() {
        Ok(()) => Err(AbiError::new(Status::Failure, "deinit could replace a host-allocated local data pointer")),
        Err(_) => Ok(()),
    })
}

extern "C" fn histogram_process(p: &Processor) -> AbiResult<()> {
    guard("process", || {
        if (p.vtable.is_aliased())(p, 0, 1) {
            return Err(AbiError::new(Status::Failure, "the host aliased an image with an array"));
        }
        let local = (p.vtable.local_data())(p);
        if local.ptr == 0 || local.size != 16 {
            return Err(AbiError::new(Status::Failure, "expected 16 bytes of host-allocated local data"));
        }
        // SAFETY: the host hands this node 16 bytes of local data (checked above), u32-aligned
        // (host buffers are 64-byte aligned), used by this node's process only.
        let counts = unsafe { std::slice::from_raw_parts_mut(local.ptr as *mut u32, 4) };
        counts.fill(0);
        let whole = (p.vtable.map_image())(p, 0, Rect::default(), false).into_result()?;
        let (w, h) = (whole.dim_x, whole.dim_y);
        (p.vtable.unmap_image())(p, whole.token);
        // Map it again as an explicit patch: the left half, then the right half.
        for part in [Rect::new(0, 0, w / 2, h), Rect::new(w / 2, 0, w, h)] {
            let img = (p.vtable.map_image())(p, 0, part, false).into_result()?;
            for y in 0..img.dim_y as usize {
                // SAFETY: the patch is mapped until unmap; its row y holds dim_x pixels at base + y*stride_y.
                let row =
                    unsafe { std::slice::from_raw_parts(img.base.add(y * img.stride_y as usize), img.dim_x as usize) };
                for &px in row {
                    counts[(px >> 6) as usize] += 1;
                }
            }
            (p.vtable.unmap_image())(p, img.token);
        }
        let info = (p.vtable.array_info())(p, 1).into_result()?;
        if info.item_size != 4 || info.capacity < 4 {
            return Err(AbiError::new(Status::InvalidDimension, "the histogram array holds 4 u32 items"));
        }
        (p.vtable.array_truncate())(p, 1, 0).into_result()?;
        (p.vtable.array_add())(p, 1, counts.as_ptr() as *const u8, 4).into_result()?;
        let mut back = [0u32; 4];
        let n = (p.vtable.array_read())(p, 1, back.as_mut_ptr() as *mut u8, 4).into_result()?;
        if n != 4 || back != *counts {
            return Err(AbiError::new(Status::Failure, "the array did not read back what was written"));
        }
        Ok(())
    })
}

fn image_in_out(api: &HostApi<'_>, k: u64) -> Result<(), AbiError> {
    api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
    api.add_parameter(k, 1, direction::OUTPUT, data_type::IMAGE, param_state::REQUIRED)
}

extern "C" fn publish(host: &Host) -> AbiResult<()> {
    guard("publish", || {
        let api = HostApi::new(host);
        let k = api.add_kernel(&KernelDesc::tiling(
            KERNELS[0],
            0x7E57_0001,
            2,
            validate_u8_same_size,
            None,
            Some(invert_tiles),
        ))?;
        image_in_out(&api, k)?;
        api.set_attribute(k, KernelAttr::OutputTileBlockSize(1, 1))?;
        api.alias_hint(k, 0, 1, false)?;
        api.finalize(k)?;
        if cfg!(feature = "publish-fails") {
            // Index 7 of a 2-parameter kernel: the host refuses, and publish reports it.
            let k2 = api.add_kernel(&KernelDesc::tiling(
                KERNELS[1],
                0x7E57_0002,
                2,
                validate_u8_same_size,
                None,
                Some(panicky_tiles),
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
            Some(panicky_tiles),
        ))?;
        image_in_out(&api, k)?;
        api.finalize(k)?;
        let k = api.add_kernel(&KernelDesc::user(KERNELS[2], 0x7E57_0003, 3, validate_u8_same_size, scale_process))?;
        api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
        api.add_parameter(k, 1, direction::INPUT, data_type::SCALAR, param_state::REQUIRED)?;
        api.add_parameter(k, 2, direction::OUTPUT, data_type::IMAGE, param_state::REQUIRED)?;
        api.finalize(k)?;
        let desc = KernelDesc::user(KERNELS[3], 0x7E57_0004, 2, histogram_validate, histogram_process)
            .with_lifecycle(Some(histogram_init), Some(histogram_deinit));
        let k = api.add_kernel(&desc)?;
        api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
        api.add_parameter(k, 1, direction::OUTPUT, data_type::ARRAY, param_state::REQUIRED)?;
        api.finalize(k)
    })
}

extern "C" fn unpublish(host: &Host) -> AbiResult<()> {
    guard("unpublish", || {
        let api = HostApi::new(host);
        KERNELS.iter().try_for_each(|k| api.remove_kernel(k))
    })
}

/// The module's root descriptor.
#[export_root_module]
#[allow(clippy::useless_conversion)] // u32 -> u64 under the layout-mismatch feature
pub fn vx_module_root() -> VxModuleRef {
    VxModule {
        abi_version: (if cfg!(feature = "abi-mismatch") { ABI_VERSION + 1 } else { ABI_VERSION }).into(),
        name: RStr::from_str("vx_testmod"),
        version: RStr::from_str(VERSION),
        publish,
        unpublish,
    }
    .leak_into_prefix()
}
