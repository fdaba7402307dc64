//! `Tile::for_rows` cost per output row: a 3×3 Gaussian row function (the same arithmetic as
//! vx-filters' portable loop) served through `for_rows` under reflect-101 over every tile of an
//! image, as the runtime's tiles would be: 256×64 tiles and full-width 64-row bands of a 1920×1080
//! U8 image (wider than `WHOLE_ROW`: a middle from the image between edge pieces), and full-width
//! bands of a 640×480 one (at most `WHOLE_ROW` wide: every row of an edge tile copied into the
//! ring). The figure is what the border machinery plus the row function cost per row; compare it
//! across a change of `serve` on the same machine. A last line serves the 1920×1080 bands from row
//! tables (`for_rows_from_table`, as fused execution will) instead of the image.
//!
//! Times are the thread's time on a CPU (`/proc/thread-self/schedstat`, wall time where that is
//! missing), so a machine shared with other work still gives comparable figures.
//!
//! Run: `cargo bench -p vx-plugin-abi --bench for_rows`

use std::hint::black_box;
use std::time::{Duration, Instant};

use vx_plugin_abi::geometry::{Neighborhood, Rect, TileBlockSize};
use vx_plugin_abi::tile::{RowRegion, RowSink, RowTable, for_rows_from_table};
use vx_plugin_abi::{BorderFill, ImageFormat, TileArgs, TileDesc, TileParam, TileParamKind};

const ROUNDS: usize = 31;

/// Pixels per round (frames per round: this over the image's pixels).
const ROUND_PIXELS: u64 = 40_000_000;

/// Nanoseconds this thread has spent on a CPU (wall time since the first call where Linux's
/// schedstat is missing).
fn cpu_ns() -> u64 {
    let on_cpu = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|t| t.parse().ok()));
    on_cpu.unwrap_or_else(|| {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    })
}

/// One output row of a 3×3 Gaussian (1 2 1 / 2 4 2 / 1 2 1, rounded): `a`, `b`, `c` are `out.len() + 2` wide.
fn gaussian_row(a: &[u8], b: &[u8], c: &[u8], out: &mut [u8]) {
    let n = out.len();
    let (a, b, c) = (&a[..n + 2], &b[..n + 2], &c[..n + 2]);
    for (i, o) in out.iter_mut().enumerate() {
        let col = |j: usize| a[i + j] as u16 + 2 * b[i + j] as u16 + c[i + j] as u16;
        *o = ((col(0) + 2 * col(1) + col(2) + 8) >> 4) as u8;
    }
}

/// An input descriptor for `tile` of a `w`×`h` U8 image at `base`, neighborhood 3×3.
fn input_desc(base: *mut u8, (w, h): (u32, u32), tile: Rect) -> TileDesc {
    let nb = Neighborhood::new(-1, 1, -1, 1);
    TileDesc {
        base,
        format: ImageFormat::U8.fourcc(),
        tile_x: tile.start_x,
        tile_y: tile.start_y,
        width: tile.width(),
        height: tile.height(),
        stride_x: 1,
        stride_y: w as i32,
        block: TileBlockSize { width: 1, height: 1 },
        neighborhood: nb,
        image_width: w,
        image_height: h,
        readable: Rect::new(
            tile.start_x.saturating_sub(1),
            tile.start_y.saturating_sub(1),
            (tile.end_x + 1).min(w),
            (tile.end_y + 1).min(h),
        ),
        flags: 0,
    }
}

/// Every tile of a `w`×`h` image in `tw`×`th` tiles, row-major.
fn tiles((w, h): (u32, u32), (tw, th): (u32, u32)) -> Vec<Rect> {
    let mut v = Vec::new();
    for y in (0..h).step_by(th as usize) {
        for x in (0..w).step_by(tw as usize) {
            v.push(Rect::new(x, y, (x + tw).min(w), (y + th).min(h)));
        }
    }
    v
}

/// One frame: every tile through `for_rows`, the rows written into `dst`. Returns the rows served.
fn frame(src: &mut [u8], dst: &mut [u8], size: (u32, u32), tiles: &[Rect]) -> u64 {
    let base = src.as_mut_ptr();
    let w = size.0 as usize;
    let mut rows = 0;
    for &tile in tiles {
        let d = input_desc(base, size, tile);
        let param = [TileParam {
            kind: TileParamKind::InputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &d as *const _ as *mut _,
        }];
        // SAFETY: the descriptor describes `src`, alive and unwritten during the call; no output view.
        let args = unsafe { TileArgs::new(&param, std::ptr::null_mut(), 0) };
        let input = args.input::<u8>(0).expect("input");
        input
            .for_rows::<3>(BorderFill::Reflect101, |y, x, n, [a, b, c]| {
                let o = (tile.start_y + y) as usize * w + (tile.start_x + x) as usize;
                gaussian_row(a, b, c, &mut dst[o..o + n as usize]);
            })
            .expect("for_rows");
        rows += tile.height() as u64;
    }
    rows
}

/// One frame through row tables: every band of `tiles` (full width) from a table of all the input
/// rows into a sink of the band's output rows. Returns the rows served.
fn frame_from_table(src: &[u8], dst: &mut [u8], (w, h): (u32, u32), tiles: &[Rect]) -> u64 {
    let inputs: Vec<*const u8> = (0..h as usize).map(|y| src[y * w as usize..].as_ptr()).collect();
    let base = dst.as_mut_ptr();
    let outputs: Vec<*mut u8> = (0..h as usize).map(|y| base.wrapping_add(y * w as usize)).collect();
    let mut rows = 0;
    for &band in tiles {
        let region =
            RowRegion { y0: band.start_y, count: band.height(), x0: 0, x1: w, image_width: w, image_height: h };
        // SAFETY: the tables point to whole rows of `src` (read only) and of `dst` (written only
        // through this sink), separate live buffers.
        let (input, mut sink) = unsafe {
            (
                RowTable::<u8>::from_raw(0, inputs.as_ptr(), h, w),
                RowSink::<u8>::from_raw(outputs[band.start_y as usize..].as_ptr(), band.height(), w),
            )
        };
        let nb = Neighborhood::new(-1, 1, -1, 1);
        for_rows_from_table(&input, &mut sink, region, nb, BorderFill::Reflect101, |[a, b, c], out| {
            gaussian_row(a, b, c, out)
        })
        .expect("for_rows_from_table");
        rows += band.height() as u64;
    }
    rows
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    println!("Tile::for_rows, 3x3 Gaussian row function, reflect-101, median of {ROUNDS} rounds, on-CPU time");
    println!("{:<34} {:>12} {:>12}", "image / tiles", "ns per row", "ms/frame");
    let variants =
        [((1920, 1080), (256, 64), false), ((1920, 1080), (1920, 64), false), ((640, 480), (640, 64), false)];
    for (size, tile, from_table) in variants.into_iter().chain([((1920, 1080), (1920, 64), true)]) {
        let (w, h) = size;
        let mut src: Vec<u8> =
            (0..w as usize * h as usize).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let tiles = tiles(size, tile);
        let mut times = Vec::new();
        let mut rows = 0;
        for _ in 0..ROUNDS {
            let frames = (ROUND_PIXELS / (w as u64 * h as u64)).max(1) as u32;
            let t = cpu_ns();
            for _ in 0..frames {
                rows = if from_table {
                    frame_from_table(black_box(&src), &mut dst, size, &tiles)
                } else {
                    frame(black_box(&mut src), &mut dst, size, &tiles)
                };
            }
            times.push(Duration::from_nanos(cpu_ns() - t) / frames);
        }
        black_box(&dst);
        let t = median(times);
        println!(
            "{:<34} {:>12.1} {:>12.3}",
            format!("{w}x{h}, {}x{} {}", tile.0, tile.1, if from_table { "row tables" } else { "tiles" }),
            t.as_nanos() as f64 / rows as f64,
            t.as_secs_f64() * 1e3
        );
    }
}
