//! `vx_filters`: image filters as a kernel module, written only with `#[tiling_kernel]` and
//! `vx_module!`.
//!
//! 3×3 filters take border `Self_` and one function for every tile: it runs its row code (the
//! compiler vectorizes the inner loops) on the input rows `Tile::with_rows` serves — straight from
//! the image inside it, extended by OpenCV's default border (reflect-101: `… 2 1 | 0 1 2 … w-2 w-1 |
//! w-2 w-3 …`) at its edges — so results match OpenCV everywhere, edges at interior speed. Point
//! operations are flexible-only kernels of 1×1 blocks: full-width bands of rows, one row function
//! per row. Every row loop runs at the SIMD level `simd::level()` picks at run time (AVX-512, AVX2,
//! SSE2 or portable; `VX_FILTERS_SIMD` caps it).

mod avx2;
mod avx512;
mod filters3x3;
mod point;
mod rows;
mod simd;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86;

vx_plugin_abi::vx_module!(name = "vx_filters");
