//! A row kernel served from a table of row pointers computes exactly what it computes served from
//! the image (`Tile::for_rows`): random images (U8, S16, U16), neighborhoods 1, 3 and 5 rows high
//! and up to `MAX_NEIGHBORHOOD_WIDTH` wide, every border rule, random output regions; the table's
//! rows at shuffled slots of a separate buffer (a line buffer's ring), only the rows the windows
//! need present, the outputs written through shuffled row pointers too. A per-pixel reference
//! written from the rules' definitions (not from `border_source`) checks a share of the cases. A
//! row missing from the table is an error, never a read.
//!
//! `VX_ROWS_CASES` sets the number of random cases (default 3000), `VX_ROWS_SEED` the first seed.

use std::collections::BTreeSet;

use vx_plugin_abi::geometry::{Neighborhood, Rect, TileBlockSize};
use vx_plugin_abi::tile::{MAX_NEIGHBORHOOD_WIDTH, RowRegion, RowSink, RowTable, border_source, for_rows_from_table};
use vx_plugin_abi::{BorderFill, Status, TileArgs, TileDesc, TileParam, TileParamKind, TilePixel};

/// xorshift64*: the cases are reproducible from a seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo ..= hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.range(0, v.len() as i64 - 1) as usize]
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.range(0, i as i64) as usize);
        }
    }
}

/// The pixel types under test, with a way to make one and to read it as a number.
trait Pixel: TilePixel + PartialEq + std::fmt::Debug {
    fn from_bits(bits: u64) -> Self;
    fn value(self) -> i64;
}

macro_rules! pixel {
    ($($t:ty),*) => {$(
        impl Pixel for $t {
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
            fn value(self) -> i64 {
                self as i64
            }
        }
    )*};
}
pixel!(u8, u16, i16);

/// One random case: the image, the region, the neighborhood, the rule and the kernel's weights.
#[derive(Debug)]
struct Case<T> {
    size: (u32, u32),
    image: Vec<T>,
    region: RowRegion,
    nb: Neighborhood,
    fill: BorderFill<T>,
    weights: Vec<i64>,
}

impl<T: Pixel> Case<T> {
    fn random(rng: &mut Rng) -> Case<T> {
        let w = if rng.range(0, 19) == 0 {
            rng.pick(&[15, 16, 17, 31, 32, 33, 48, 1023, 1024, 1025, 1040, 1041, 1056, 1100, 2085])
        } else {
            rng.range(1, 70) as u32
        };
        let h = if w > 256 { rng.range(1, 9) } else { rng.range(1, 40) } as u32;
        let n = rng.pick(&[1, 3, 5]);
        let top = rng.range(-(n - 1), 0) as i32;
        let ext = if rng.range(0, 3) == 0 {
            rng.pick(&[0, 1, 2, 15, 16, 17, MAX_NEIGHBORHOOD_WIDTH as i64])
        } else {
            rng.range(0, MAX_NEIGHBORHOOD_WIDTH as i64)
        };
        let left = rng.range(-ext, 0) as i32;
        let nb = Neighborhood::new(left, left + ext as i32, top, top + n as i32 - 1);
        let span = |rng: &mut Rng, len: u32| match rng.range(0, 3) {
            0 => (0, len),
            1 => (0, rng.range(1, len as i64) as u32),
            2 => (rng.range(0, len as i64 - 1) as u32, len),
            _ => {
                let a = rng.range(0, len as i64 - 1) as u32;
                (a, rng.range(a as i64 + 1, len as i64) as u32)
            }
        };
        let (x0, x1) = span(rng, w);
        let (y0, y1) = span(rng, h);
        let fill = match rng.range(0, 2) {
            0 => BorderFill::Reflect101,
            1 => BorderFill::Replicate,
            _ => BorderFill::Constant(T::from_bits(rng.next())),
        };
        let image = (0..w as usize * h as usize).map(|_| T::from_bits(rng.next())).collect();
        let weights = (0..n as usize * (ext as usize + 1)).map(|_| rng.range(-9, 9)).collect();
        let region = RowRegion { y0, count: y1 - y0, x0, x1, image_width: w, image_height: h };
        Case { size: (w, h), image, region, nb, fill, weights }
    }

    fn n(&self) -> usize {
        (self.nb.bottom - self.nb.top + 1) as usize
    }

    fn ext(&self) -> usize {
        (self.nb.right - self.nb.left) as usize
    }

    /// The test's row kernel, written naively: each output pixel the weighted sum of its window.
    fn kernel(&self, rows: &[&[T]], out: &mut [u32]) {
        let ext = self.ext();
        for (j, o) in out.iter_mut().enumerate() {
            let mut sum = 0i64;
            for (i, row) in rows.iter().enumerate() {
                for k in 0..=ext {
                    sum += self.weights[i * (ext + 1) + k] * row[j + k].value();
                }
            }
            *o = sum as u32;
        }
    }

    /// The region's output through `Tile::for_rows` on a tile over the region of a plain image.
    fn through_image(&self) -> Vec<u32> {
        let r = self.region;
        let tile = Rect::new(r.x0, r.y0, r.x1, r.y0 + r.count);
        let (w, h) = self.size;
        let nb = self.nb;
        let d = TileDesc {
            base: self.image.as_ptr() as *mut u8,
            format: T::FORMAT.fourcc(),
            tile_x: tile.start_x,
            tile_y: tile.start_y,
            width: tile.width(),
            height: tile.height(),
            stride_x: size_of::<T>() as i32,
            stride_y: (w as usize * size_of::<T>()) as i32,
            block: TileBlockSize { width: 1, height: 1 },
            neighborhood: nb,
            image_width: w,
            image_height: h,
            readable: Rect::new(
                (tile.start_x as i64 + nb.left as i64).max(0) as u32,
                (tile.start_y as i64 + nb.top as i64).max(0) as u32,
                (tile.end_x as i64 + nb.right as i64).min(w as i64) as u32,
                (tile.end_y as i64 + nb.bottom as i64).min(h as i64) as u32,
            ),
            flags: 0,
        };
        let param = [TileParam {
            kind: TileParamKind::InputImage,
            type_code: T::FORMAT.fourcc(),
            ptr: &d as *const _ as *mut _,
        }];
        // SAFETY: the descriptor describes `self.image` (alive, not written during the call); no
        // output view is taken.
        let args = unsafe { TileArgs::new(&param, std::ptr::null_mut(), 0) };
        let input = args.input::<T>(0).unwrap();
        let tw = tile.width() as usize;
        let mut out = vec![0u32; tw * tile.height() as usize];
        macro_rules! run {
            ($n:literal) => {
                input.for_rows::<$n>(self.fill, |y, x, n, rows| {
                    let o = y as usize * tw + x as usize;
                    self.kernel(&rows, &mut out[o..o + n as usize]);
                })
            };
        }
        match self.n() {
            1 => run!(1),
            3 => run!(3),
            5 => run!(5),
            _ => unreachable!(),
        }
        .unwrap();
        out
    }

    /// The image rows the windows of the region resolve to (`border_source` of every window row).
    fn rows_needed(&self) -> BTreeSet<i64> {
        let r = self.region;
        let h = self.size.1 as i64;
        (r.y0 as i64..(r.y0 + r.count) as i64)
            .flat_map(|y| (self.nb.top as i64..=self.nb.bottom as i64).map(move |dy| y + dy))
            .filter_map(|iy| border_source(iy, h, self.fill))
            .collect()
    }

    /// The region's output through `for_rows_from_table`: the rows in `present` copied to shuffled
    /// slots of a ring (padded rows, garbage in the unused slots and padding), the table spanning
    /// `first_row ..= last_row` with null for the rows left out; outputs at shuffled slots too.
    /// Checks that nothing outside the region's columns of the output rows is written.
    fn through_table(
        &self,
        rng: &mut Rng,
        present: &BTreeSet<i64>,
        span: (i64, i64),
    ) -> Result<Vec<u32>, vx_plugin_abi::TileError> {
        let (w, _) = self.size;
        let r = self.region;
        let pitch = w as usize + rng.range(0, 5) as usize;
        let slots = present.len() + rng.range(0, 3) as usize;
        let mut order: Vec<usize> = (0..slots).collect();
        rng.shuffle(&mut order);
        let mut ring: Vec<T> = (0..slots * pitch).map(|_| T::from_bits(rng.next())).collect();
        let mut at = vec![None; (span.1 - span.0 + 1).max(0) as usize];
        for (&sy, &slot) in present.iter().zip(&order) {
            let src = &self.image[sy as usize * w as usize..(sy as usize + 1) * w as usize];
            ring[slot * pitch..slot * pitch + w as usize].copy_from_slice(src);
            at[(sy - span.0) as usize] = Some(slot);
        }
        let table: Vec<*const u8> =
            at.iter().map(|s| s.map_or(std::ptr::null(), |slot| ring[slot * pitch..].as_ptr() as *const u8)).collect();

        let (count, out_pitch) = (r.count as usize, w as usize + 3);
        let sentinel = 0xDEAD_BEEF_u32;
        let mut out_order: Vec<usize> = (0..count).collect();
        rng.shuffle(&mut out_order);
        let mut outputs = vec![sentinel; count.max(1) * out_pitch];
        let base = outputs.as_mut_ptr();
        // Pointers made from one base pointer, so the rows' provenance is the whole buffer.
        let sink_rows: Vec<*mut u8> =
            out_order.iter().map(|&slot| base.wrapping_add(slot * out_pitch) as *mut u8).collect();
        // SAFETY: the table's non-null entries point to `w` pixels of `ring` (each slot holds a
        // whole row, `pitch >= w`), alive and unwritten during the call; the sink's to `w` of the
        // `out_pitch` pixels of distinct slots of `outputs`, a separate buffer only the sink touches.
        let result = unsafe {
            let input = RowTable::<T>::from_raw(span.0, table.as_ptr(), table.len() as u32, w);
            let mut sink = RowSink::<u32>::from_raw(sink_rows.as_ptr(), r.count, w);
            macro_rules! run {
                ($n:literal) => {
                    for_rows_from_table::<T, u32, $n>(&input, &mut sink, r, self.nb, self.fill, |rows, out| {
                        self.kernel(&rows, out)
                    })
                };
            }
            match self.n() {
                1 => run!(1),
                3 => run!(3),
                5 => run!(5),
                _ => unreachable!(),
            }
        };
        result?;
        let width = (r.x1 - r.x0) as usize;
        let mut out = Vec::with_capacity(count * width);
        for &slot in &out_order {
            let row = &outputs[slot * out_pitch..(slot + 1) * out_pitch];
            let outside = row[..r.x0 as usize].iter().chain(&row[r.x1 as usize..]);
            assert!(outside.into_iter().all(|&p| p == sentinel), "written outside the region's columns: {self:?}");
            out.extend_from_slice(&row[r.x0 as usize..r.x1 as usize]);
        }
        Ok(out)
    }

    /// The region's output computed pixel by pixel from the rules' definitions.
    fn reference(&self) -> Vec<u32> {
        let (w, h) = (self.size.0 as i64, self.size.1 as i64);
        // Where coordinate `i` of a line of `n` reads from: reflect-101 mirrors about the end pixels
        // one step at a time until inside (`… 2 1 | 0 1 2 … n-1 | n-2 …`), replicate takes the
        // nearest end pixel.
        let map = |mut i: i64, n: i64| -> Option<i64> {
            match self.fill {
                _ if (0..n).contains(&i) => Some(i),
                BorderFill::Constant(_) => None,
                BorderFill::Replicate => Some(if i < 0 { 0 } else { n - 1 }),
                BorderFill::Reflect101 if n == 1 => Some(0),
                BorderFill::Reflect101 => {
                    while !(0..n).contains(&i) {
                        i = if i < 0 { -i } else { 2 * (n - 1) - i };
                    }
                    Some(i)
                }
            }
        };
        let pixel = |ix: i64, iy: i64| match (map(ix, w), map(iy, h), self.fill) {
            (Some(x), Some(y), _) => self.image[(y * w + x) as usize],
            (_, _, BorderFill::Constant(v)) => v,
            _ => unreachable!(),
        };
        let r = self.region;
        let ext = self.ext();
        let mut out = Vec::new();
        for y in r.y0 as i64..(r.y0 + r.count) as i64 {
            for x in r.x0 as i64..r.x1 as i64 {
                let mut sum = 0i64;
                for i in 0..self.n() {
                    for k in 0..=ext {
                        let p = pixel(x + self.nb.left as i64 + k as i64, y + self.nb.top as i64 + i as i64);
                        sum += self.weights[i * (ext + 1) + k] * p.value();
                    }
                }
                out.push(sum as u32);
            }
        }
        out
    }
}

/// One random case of pixel type `T`: image path ≡ table path (≡ the reference when
/// `with_reference`); a table without one of the needed rows fails.
fn check_case<T: Pixel>(seed: u64, with_reference: bool) {
    let mut rng = Rng::new(seed);
    let case = Case::<T>::random(&mut rng);
    let via_image = case.through_image();
    let needed = case.rows_needed();
    let span = match (needed.first(), needed.last()) {
        (Some(&a), Some(&b)) => (a - rng.range(0, 2), b + rng.range(0, 2)),
        _ => (rng.range(-3, 3), rng.range(-5, 2)),
    };
    let via_table = case.through_table(&mut rng, &needed, span).unwrap_or_else(|e| panic!("seed {seed}: {e} {case:?}"));
    assert_eq!(via_table.len(), via_image.len());
    if let Some(i) = (0..via_image.len()).find(|&i| via_table[i] != via_image[i]) {
        let width = (case.region.x1 - case.region.x0) as usize;
        panic!(
            "seed {seed}: output ({}, {}) differs: table {} image {}; {case:?}",
            case.region.x0 as usize + i % width,
            case.region.y0 as usize + i / width,
            via_table[i],
            via_image[i]
        );
    }
    if with_reference {
        assert!(case.reference() == via_image, "seed {seed}: the image path differs from the reference: {case:?}");
    }
    // Leave one needed row out: an error naming it, no panic, nothing read in its place.
    if let Some(&missing) = needed.iter().nth(rng.range(0, needed.len() as i64 - 1).max(0) as usize) {
        let mut fewer = needed.clone();
        fewer.remove(&missing);
        let e = case.through_table(&mut rng, &fewer, span).expect_err("a needed row is missing");
        assert_eq!(e.status, Status::Failure, "seed {seed}");
        assert!(e.message.contains(&format!("row {missing} ")), "seed {seed}: {e}");
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The differential test proper; `VX_ROWS_CASES` cases per run, split over U8, S16 and U16.
#[test]
fn table_path_equals_image_path_for_random_cases() {
    let (cases, first) = (env("VX_ROWS_CASES", 3000), env("VX_ROWS_SEED", 1));
    let start = std::time::Instant::now();
    for seed in first..first + cases {
        let with_reference = seed % 4 == 0;
        match seed % 3 {
            0 => check_case::<u8>(seed, with_reference),
            1 => check_case::<i16>(seed, with_reference),
            _ => check_case::<u16>(seed, with_reference),
        }
    }
    eprintln!("row tables: {cases} random cases from seed {first} in {:.1?}", start.elapsed());
}

/// The edge cases named: 1-row and 1-column images, widths around the SIMD block, the widest
/// neighborhood and the whole-row limit, under every rule, the whole image as the region.
#[test]
fn table_path_equals_image_path_at_the_named_sizes() {
    let mut rng = Rng::new(7);
    for (w, h) in [(1, 1), (1, 9), (9, 1), (16, 3), (32, 2), (33, 5), (1024, 3), (1025, 2), (1040, 4), (2085, 2)] {
        for n in [1, 3, 5] {
            for (left, ext) in [(0, 0), (-1, 2), (-16, 32), (0, 32), (-32, 32)] {
                for fill in [BorderFill::Reflect101, BorderFill::Replicate, BorderFill::Constant(77u8)] {
                    let case = Case {
                        size: (w, h),
                        image: (0..w * h).map(|_| rng.next() as u8).collect(),
                        region: RowRegion { y0: 0, count: h, x0: 0, x1: w, image_width: w, image_height: h },
                        nb: Neighborhood::new(left, left + ext, -(n / 2), n / 2),
                        fill,
                        weights: (0..(n * (ext + 1)) as usize).map(|_| rng.range(-9, 9)).collect(),
                    };
                    let needed = case.rows_needed();
                    let span = (*needed.first().unwrap(), *needed.last().unwrap());
                    let via_table = case.through_table(&mut rng, &needed, span).unwrap();
                    assert!(via_table == case.through_image(), "{w}x{h} {:?} {fill:?}", case.nb);
                    if w * h <= 2 * 1040 {
                        assert!(via_table == case.reference(), "{w}x{h} {:?} {fill:?}", case.nb);
                    }
                }
            }
        }
    }
}

/// Misuse is an error, not a panic: a row before the table, a table of another width, a region
/// outside the image, the wrong `N`, a sink too short.
#[test]
fn misuse_of_the_table_entry_is_an_error() {
    let (w, h) = (8u32, 4u32);
    let image: Vec<u8> = (0..w * h).map(|i| i as u8).collect();
    let rows: Vec<*const u8> = (0..h).map(|y| image[(y * w) as usize..].as_ptr()).collect();
    let mut outputs = vec![0u8; (w * h) as usize];
    let base = outputs.as_mut_ptr();
    let sink_rows: Vec<*mut u8> = (0..h as usize).map(|y| base.wrapping_add(y * w as usize)).collect();
    let nb = Neighborhood::new(-1, 1, -1, 1);
    let all = RowRegion { y0: 0, count: h, x0: 0, x1: w, image_width: w, image_height: h };
    let copy = |[_, b, _]: [&[u8]; 3], out: &mut [u8]| out.copy_from_slice(&b[1..b.len() - 1]);
    // SAFETY: the tables point to rows of `image` and of `outputs`, separate live buffers of `w`
    // pixels a row; only the sinks touch `outputs`.
    unsafe {
        let table = RowTable::<u8>::from_raw(0, rows.as_ptr(), h, w);
        let mut sink = RowSink::<u8>::from_raw(sink_rows.as_ptr(), h, w);
        for_rows_from_table(&table, &mut sink, all, nb, BorderFill::Reflect101, copy).unwrap();
        assert_eq!(outputs, image, "the centre row, copied");

        // Rows 1.. only: row 0 (and row 1 reflected above it) is needed for output row 0.
        let late = RowTable::<u8>::from_raw(1, rows[1..].as_ptr(), h - 1, w);
        let e = for_rows_from_table(&late, &mut sink, all, nb, BorderFill::Replicate, copy).unwrap_err();
        assert!(e.message.contains("row 0 is not in the row table"), "{e}");
        let empty = RowTable::<u8>::from_raw(0, std::ptr::null(), 0, w);
        assert!(for_rows_from_table(&empty, &mut sink, all, nb, BorderFill::Reflect101, copy).is_err());
        let constant = RowTable::<u8>::from_raw(0, rows.as_ptr(), 1, w);
        let one = RowRegion { count: 1, ..all };
        assert!(
            for_rows_from_table(
                &constant,
                &mut sink,
                one,
                Neighborhood::new(-1, 1, 0, 0),
                BorderFill::Constant(0),
                |[a], o| o.copy_from_slice(&a[1..a.len() - 1])
            )
            .is_ok(),
            "under a constant rule, a 1-row window on row 0 needs only row 0"
        );

        let narrow = RowTable::<u8>::from_raw(0, rows.as_ptr(), h, w - 1);
        let e = for_rows_from_table(&narrow, &mut sink, all, nb, BorderFill::Reflect101, copy).unwrap_err();
        assert_eq!(e.status, Status::InvalidParameters);
        let outside = RowRegion { count: h + 1, ..all };
        assert!(for_rows_from_table(&table, &mut sink, outside, nb, BorderFill::Reflect101, copy).is_err());
        let outside = RowRegion { x1: w + 1, ..all };
        assert!(for_rows_from_table(&table, &mut sink, outside, nb, BorderFill::Reflect101, copy).is_err());
        let e = table.for_rows::<5>(all, nb, BorderFill::Reflect101, |_, _, _, _| ()).unwrap_err();
        assert_eq!(e.status, Status::InvalidParameters);
        let wide = Neighborhood::new(-20, 20, -1, 1);
        assert_eq!(
            table.for_rows::<3>(all, wide, BorderFill::Reflect101, |_, _, _, _| ()).unwrap_err().status,
            Status::NotSupported
        );

        let mut short = RowSink::<u8>::from_raw(sink_rows.as_ptr(), h - 1, w);
        let e = for_rows_from_table(&table, &mut short, all, nb, BorderFill::Reflect101, copy).unwrap_err();
        assert!(e.message.contains("output row 3"), "{e}");
        assert!(short.span(0, w - 2, 3).is_err(), "columns past the row");
        assert_eq!(short.span(0, w - 2, 2).unwrap().len(), 2);
    }
}
