//! `vx_sample`: a small kernel module written against the module ABI by hand (validators, tiling
//! functions through the SDK's generic trampoline, registration records; `#[tiling_kernel]` generates
//! all of these), exported with `vx_module!`.
//!
//! Used by `examples/hot_reload_service`: edit `LEVELS` or the threshold rule, `cargo build -p vx-sample`, and the running service picks the new build up.
//!
//! - `sample.posterize`: U8 → U8, keep the top bits (`LEVELS` levels), 4×1 fast function over row
//!   slices plus a flexible function for the rest.
//! - `sample.threshold`: U8, scalar u8 → U8, 255 above the threshold, 0 otherwise (flexible).

use vx_plugin_abi::kernel_record::inventory;
use vx_plugin_abi::module_abi::{AbiError, AbiResult, Host, KernelAttr, KernelDesc, Validator};
use vx_plugin_abi::module_api::{TilingFunction, guard, tiling_trampoline};
use vx_plugin_abi::wire::{data_type, direction, param_state};
use vx_plugin_abi::{ImageFormat, KernelRecord, Status, TileArgs, TileError, vx_module};

vx_module!(name = "vx_sample");

/// Posterize keeps this many levels (a power of two).
const LEVELS: u8 = 4;
const MASK: u8 = !(255 / LEVELS);

fn posterize_fast(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    let missing = || TileError::new(Status::Failure, "fast tile without rows");
    for y in 0..out.height() {
        let src = input.row(y as i32).ok_or_else(missing)?;
        for (o, &p) in out.row_mut(y).ok_or_else(missing)?.iter_mut().zip(src) {
            *o = p & MASK;
        }
    }
    Ok(())
}

fn posterize_flexible(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, input.pixel(x, y, 0, 0) & MASK);
        }
    }
    Ok(())
}

fn threshold(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let t: u8 = args.scalar(1)?;
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(2)?;
    for y in 0..out.height() {
        for x in 0..out.width() {
            out.set(x, y, if input.pixel(x, y, 0, 0) > t { 255 } else { 0 });
        }
    }
    Ok(())
}

struct PosterizeFast;
impl TilingFunction for PosterizeFast {
    fn call(args: &mut TileArgs<'_>) -> Result<(), TileError> {
        posterize_fast(args)
    }
}
struct PosterizeFlexible;
impl TilingFunction for PosterizeFlexible {
    fn call(args: &mut TileArgs<'_>) -> Result<(), TileError> {
        posterize_flexible(args)
    }
}
struct Threshold;
impl TilingFunction for Threshold {
    fn call(args: &mut TileArgs<'_>) -> Result<(), TileError> {
        threshold(args)
    }
}

/// Input 0 is a U8 image; the last parameter gets its size and format.
extern "C" fn validate_u8(v: &Validator) -> AbiResult<()> {
    guard("validate", || {
        let input = v.param(0)?;
        if input.format != ImageFormat::U8.fourcc() {
            return Err(AbiError::new(Status::InvalidFormat, "parameter 0 must be a U8 image"));
        }
        let last = v.num_params() - 1;
        v.set_output_image(last, ImageFormat::U8, input.width, input.height)
    })
}

fn register_posterize(api: &Host) -> Result<(), AbiError> {
    let k = api.add_kernel(&KernelDesc::tiling(
        "sample.posterize",
        0x5A3_0001,
        2,
        validate_u8,
        Some(tiling_trampoline::<PosterizeFast>),
        Some(tiling_trampoline::<PosterizeFlexible>),
    ))?;
    api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
    api.add_parameter(k, 1, direction::OUTPUT, data_type::IMAGE, param_state::REQUIRED)?;
    api.set_attribute(k, KernelAttr::OutputTileBlockSize(4, 1))?;
    api.finalize(k)
}

fn register_threshold(api: &Host) -> Result<(), AbiError> {
    let threshold = Some(tiling_trampoline::<Threshold> as _);
    let k = api.add_kernel(&KernelDesc::tiling("sample.threshold", 0x5A3_0002, 3, validate_u8, None, threshold))?;
    api.add_parameter(k, 0, direction::INPUT, data_type::IMAGE, param_state::REQUIRED)?;
    api.add_parameter(k, 1, direction::INPUT, data_type::SCALAR, param_state::REQUIRED)?;
    api.add_parameter(k, 2, direction::OUTPUT, data_type::IMAGE, param_state::REQUIRED)?;
    api.finalize(k)
}

inventory::submit! { KernelRecord { name: "sample.posterize", register: register_posterize } }
inventory::submit! { KernelRecord { name: "sample.threshold", register: register_threshold } }
