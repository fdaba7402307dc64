//! Kernels and helpers shared by vx-rs's integration tests.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use vx::*;

/// Counts of callback invocations.
#[derive(Default)]
pub(crate) struct Calls {
    pub validate: AtomicU32,
    pub init: AtomicU32,
    pub deinit: AtomicU32,
    pub process: AtomicU32,
}

impl Calls {
    pub(crate) fn counts(&self) -> (u32, u32, u32, u32) {
        (self.validate.load(SeqCst), self.init.load(SeqCst), self.deinit.load(SeqCst), self.process.load(SeqCst))
    }
}

pub(crate) fn ctx() -> Context {
    Context::builder().threads(2).build().unwrap()
}

/// A two-thread context whose tiling nodes run in parallel whatever their size, in small tiles.
pub(crate) fn parallel_tiling_ctx() -> Context {
    Context::builder()
        .threads(2)
        .tiling_policy(TilingPolicy {
            cache_budget_bytes: 1024,
            min_tiles_per_thread: 4,
            min_tile_pixels: 1,
            min_parallel_pixels: 0,
            split_by_cost: false,
            ..TilingPolicy::default()
        })
        .build()
        .unwrap()
}

/// A tiling kernel `image in → U8 image out` of the input's size, its validator set: the caller
/// adds the tile functions, then `add` and [`image_in_out`].
pub(crate) fn u8_tiling_builder<'c>(ctx: &'c Context, name: &str) -> KernelBuilder<'c> {
    ctx.tiling_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2).validate(|v, metas| {
        let i = v.image(0)?;
        metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
        Ok(())
    })
}

/// A tile function copying U8 input 0 to U8 output 1, row by row (unaliased tiles).
pub(crate) fn copy_tile(args: &mut TileArgs<'_>) -> std::result::Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    for y in 0..out.height() {
        let src = input.row(y as i32).expect("unaliased tiles have rows").to_vec();
        out.row_mut(y).expect("unaliased tiles have rows").copy_from_slice(&src);
    }
    Ok(())
}

/// A finalized tiling kernel `image in → U8 image out` (one size) whose fast function is `fast`.
pub(crate) fn tiling_kernel_with(
    ctx: &Context,
    name: &str,
    fast: impl Fn(&mut TileArgs<'_>) -> std::result::Result<(), TileError> + Send + Sync + 'static,
) -> Kernel {
    let k = u8_tiling_builder(ctx, name).fast(fast).add().unwrap();
    image_in_out(&k);
    k
}

/// A finalized kernel `in: image(fmt_in) → out: image(fmt_out)` of the same size whose process
/// applies `f` per pixel (u8 → u8) and counts its callbacks.
pub(crate) fn map_kernel(ctx: &Context, name: &str, calls: Arc<Calls>, f: fn(u8) -> u8) -> Kernel {
    let (cv, ci, cd, cp) = (calls.clone(), calls.clone(), calls.clone(), calls);
    let k = ctx
        .user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(move |v, metas| {
            cv.validate.fetch_add(1, SeqCst);
            let i = v.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .init(move |_| {
            ci.init.fetch_add(1, SeqCst);
            Ok(())
        })
        .deinit(move |_| {
            cd.deinit.fetch_add(1, SeqCst);
            Ok(())
        })
        .process(move |p| {
            cp.process.fetch_add(1, SeqCst);
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
                    *o = f(*i);
                }
            }
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    k
}

pub(crate) mod spec_kernels;

/// The usual two-parameter signature: image in (0), image out (1), both required.
pub(crate) fn image_in_out(k: &Kernel) {
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
}

/// A U8 → U8 user kernel of the input's size (validator included), with what `build` adds
/// (process, init, deinit, target implementations, …).
pub(crate) fn u8_kernel(
    ctx: &Context,
    name: &str,
    build: impl for<'c> FnOnce(KernelBuilder<'c>) -> KernelBuilder<'c>,
) -> Kernel {
    let b = ctx.user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2).validate(|v, metas| {
        let i = v.expect_image_format(0, ImageFormat::U8)?;
        metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
        Ok(())
    });
    let k = build(b).add().unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    k
}

pub(crate) fn u8_image(ctx: &Context, w: u32, h: u32, f: impl Fn(u32, u32) -> u8) -> Image {
    let img = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| f(x, y)).collect();
    img.copy_from(Rect::full(w, h), 0, &px).unwrap();
    img
}
