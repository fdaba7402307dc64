//! The tiling extension's example kernels, ported to Rust tiling functions: Gaussian 3×3 (fast),
//! add u8 + u8 → s16 (16×16 fast + flexible), posterize (4×1 fast). Shared by the golden tests and
//! the benchmark.
#![allow(dead_code)]

use vx::*;

/// One output row of the spec's Gaussian 3×3 (`sum >> 4`, no rounding) from three input rows that
/// each extend one pixel left and right of the output row.
#[inline]
pub(crate) fn gaussian_row(a: &[u8], b: &[u8], c: &[u8], out: &mut [u8]) {
    let n = out.len();
    let (a, b, c) = (&a[..n + 2], &b[..n + 2], &c[..n + 2]);
    for x in 0..n {
        let top = a[x] as u16 + 2 * a[x + 1] as u16 + a[x + 2] as u16;
        let mid = b[x] as u16 + 2 * b[x + 1] as u16 + b[x + 2] as u16;
        let bot = c[x] as u16 + 2 * c[x + 1] as u16 + c[x + 2] as u16;
        out[x] = ((top + 2 * mid + bot) >> 4) as u8;
    }
}

/// Gaussian 3×3 as a fast function over row slices.
pub(crate) fn gaussian3x3_fast(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    let missing = || TileError::new(Status::Failure, "fast tile without its neighborhood rows");
    for y in 0..out.height() {
        let yi = y as i32;
        let (a, b, c) = (
            input.row(yi - 1).ok_or_else(missing)?,
            input.row(yi).ok_or_else(missing)?,
            input.row(yi + 1).ok_or_else(missing)?,
        );
        gaussian_row(a, b, c, out.row_mut(y).ok_or_else(missing)?);
    }
    Ok(())
}

/// Gaussian 3×3 written exactly like the spec's C example: `vxImagePixel` per neighbor.
pub(crate) fn gaussian3x3_pixelwise(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    let mut y = 0;
    while y < out.height() {
        let mut x = 0;
        while x < out.width() {
            let p = |ox, oy| input.pixel(x, y, ox, oy) as u32;
            let mut sum = p(-1, -1) + (p(0, -1) << 1) + p(1, -1);
            sum += (p(-1, 0) << 1) + (p(0, 0) << 2) + (p(1, 0) << 1);
            sum += p(-1, 1) + (p(0, 1) << 1) + p(1, 1);
            out.set(x, y, (sum >> 4).min(255) as u8);
            x += out.block_width();
        }
        y += out.block_height();
    }
    Ok(())
}

/// Add u8 + u8 → s16, fast function for 16×16 tile blocks.
pub(crate) fn add_fast(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let (a, b) = (args.input::<u8>(0)?, args.input::<u8>(1)?);
    let mut out = args.output::<i16>(2)?;
    let missing = || TileError::new(Status::Failure, "fast tile without rows");
    for y in 0..out.height() {
        let (ra, rb) = (a.row(y as i32).ok_or_else(missing)?, b.row(y as i32).ok_or_else(missing)?);
        for ((o, &x), &z) in out.row_mut(y).ok_or_else(missing)?.iter_mut().zip(ra).zip(rb) {
            *o = (x as i16).saturating_add(z as i16); // the spec clamps at INT16_MAX
        }
    }
    Ok(())
}

/// Add u8 + u8 → s16, flexible function: one pixel at a time, any tile.
pub(crate) fn add_flexible(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let (a, b) = (args.input::<u8>(0)?, args.input::<u8>(1)?);
    let mut out = args.output::<i16>(2)?;
    for y in 0..out.height() {
        for x in 0..out.width() {
            let v = a.pixel(x, y, 0, 0) as u16 + b.pixel(x, y, 0, 0) as u16;
            out.set(x, y, v.min(i16::MAX as u16) as i16);
        }
    }
    Ok(())
}

/// Posterize `(p & 0xF0) | (p >> 4)`, fast function for a 4×1 block: four pixels as one `u32`.
pub(crate) fn posterize_fast(args: &mut TileArgs<'_>) -> Result<(), TileError> {
    let input = args.input::<u8>(0)?;
    let mut out = args.output::<u8>(1)?;
    let missing = || TileError::new(Status::Failure, "fast tile without rows");
    for y in 0..out.height() {
        let src = input.row(y as i32).ok_or_else(missing)?;
        let dst = out.row_mut(y).ok_or_else(missing)?;
        for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            let v = u32::from_ne_bytes([s[0], s[1], s[2], s[3]]);
            let p = (v & 0xF0F0_F0F0) | ((v >> 4) & 0x0F0F_0F0F);
            d.copy_from_slice(&p.to_ne_bytes());
        }
    }
    Ok(())
}

fn signature(k: &Kernel, images: &[(u32, ParamDirection)]) {
    for &(i, dir) in images {
        k.add_parameter(i, dir, DataType::Image, ParamState::Required).unwrap();
    }
}

/// The Gaussian kernel: U8 → U8, neighborhood (-1,1,-1,1), block 1×1, fast only.
pub(crate) fn gaussian_kernel(ctx: &Context, name: &str, pixelwise: bool) -> Kernel {
    let b = ctx.tiling_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2).validate(|v, metas| {
        let i = v.expect_image_format(0, ImageFormat::U8)?;
        metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
        Ok(())
    });
    let k = if pixelwise { b.fast(gaussian3x3_pixelwise) } else { b.fast(gaussian3x3_fast) }.add().unwrap();
    signature(&k, &[(0, ParamDirection::Input), (1, ParamDirection::Output)]);
    k.set_attribute(KernelAttribute::InputNeighborhood(Neighborhood::new(-1, 1, -1, 1))).unwrap();
    k.finalize().unwrap();
    k
}

/// The add kernel: U8, U8 → S16, block 16×16, fast + flexible.
pub(crate) fn add_kernel(ctx: &Context) -> Kernel {
    let k = ctx
        .tiling_kernel("spec.add", ctx.allocate_user_kernel_id().unwrap(), 3)
        .validate(|v, metas| {
            let a = v.expect_image_format(0, ImageFormat::U8)?;
            v.expect_image_format(1, ImageFormat::U8)?;
            metas.get(2)?.set_image(ImageFormat::S16, a.width(), a.height())?;
            Ok(())
        })
        .fast(add_fast)
        .flexible(add_flexible)
        .add()
        .unwrap();
    signature(&k, &[(0, ParamDirection::Input), (1, ParamDirection::Input), (2, ParamDirection::Output)]);
    k.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize { width: 16, height: 16 })).unwrap();
    k.finalize().unwrap();
    k
}

/// The posterize kernel: U8 → U8, block 4×1, fast only.
pub(crate) fn posterize_kernel(ctx: &Context) -> Kernel {
    let k = ctx
        .tiling_kernel("spec.posterize", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?;
            Ok(())
        })
        .fast(posterize_fast)
        .add()
        .unwrap();
    signature(&k, &[(0, ParamDirection::Input), (1, ParamDirection::Output)]);
    k.set_attribute(KernelAttribute::OutputTileBlockSize(TileBlockSize { width: 4, height: 1 })).unwrap();
    k.finalize().unwrap();
    k
}
