//! Tile view tests over hand-built descriptors (no runtime), including the aliased case where an
//! input and an output are the same buffer. These exercise every `unsafe` block of `tile.rs`; run
//! them under Miri with `cargo +nightly miri test -p vx-plugin-abi`.

use super::*;

const W: u32 = 8;
const H: u32 = 6;

fn desc(base: *mut u8, fmt: ImageFormat, bpp: i32, stride: i32, tile: Rect, nb: Neighborhood, flags: u32) -> TileDesc {
    desc_in(base, fmt, bpp, stride, tile, nb, flags, (W, H))
}

#[allow(clippy::too_many_arguments)]
fn desc_in(
    base: *mut u8,
    fmt: ImageFormat,
    bpp: i32,
    stride: i32,
    tile: Rect,
    nb: Neighborhood,
    flags: u32,
    (w, h): (u32, u32),
) -> TileDesc {
    let readable = Rect::new(
        (tile.start_x as i64 + nb.left as i64).max(0) as u32,
        (tile.start_y as i64 + nb.top as i64).max(0) as u32,
        (tile.end_x as i64 + nb.right as i64).min(w as i64) as u32,
        (tile.end_y as i64 + nb.bottom as i64).min(h as i64) as u32,
    );
    TileDesc {
        base,
        format: fmt.fourcc(),
        tile_x: tile.start_x,
        tile_y: tile.start_y,
        width: tile.width(),
        height: tile.height(),
        stride_x: bpp,
        stride_y: stride,
        block: TileBlockSize { width: 1, height: 1 },
        neighborhood: nb,
        image_width: w,
        image_height: h,
        readable,
        flags,
    }
}

fn image_u8() -> Vec<u8> {
    (0..W * H).map(|i| i as u8).collect()
}

#[test]
fn input_pixel_and_rows_follow_vx_image_pixel() {
    let mut src = image_u8();
    let mut dst = vec![0i16; (W * H) as usize];
    let nb = Neighborhood::new(-1, 1, -1, 1);
    let tile = Rect::new(2, 1, 6, 4);
    let din = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, tile, nb, 0);
    let dout = desc(dst.as_mut_ptr() as *mut u8, ImageFormat::S16, 2, 2 * W as i32, tile, Neighborhood::default(), 0);
    let params = [
        TileParam {
            kind: TileParamKind::InputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &din as *const _ as *mut _,
        },
        TileParam {
            kind: TileParamKind::OutputImage,
            type_code: ImageFormat::S16.fourcc(),
            ptr: &dout as *const _ as *mut _,
        },
    ];
    // SAFETY: descriptors point into live vectors of the described size; one output view.
    let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    let input = args.input::<u8>(0).unwrap();
    assert_eq!((input.x(), input.y(), input.width(), input.height()), (2, 1, 4, 3));
    // vxImagePixel(u8, in, 0, x, y, ox, oy) = image[(tile_y + y + oy) * W + tile_x + x + ox]
    assert_eq!(input.pixel(0, 0, 0, 0), (W + 2) as u8);
    assert_eq!(input.pixel(0, 0, -1, -1), 1);
    assert_eq!(input.pixel(3, 2, 1, 1), (4 * W + 6) as u8);
    assert_eq!(input.get(0, 0, -1, -2), None, "outside the neighborhood");
    assert_eq!(input.row(-1).unwrap(), &src[1..7]);
    assert_eq!(input.row(2).unwrap(), &src[(3 * W + 1) as usize..(3 * W + 7) as usize]);
    assert!(input.row(4).is_none());

    let mut out = args.output::<i16>(1).unwrap();
    assert!(args.output::<i16>(1).is_err(), "one view per output");
    for y in 0..out.height() {
        let (a, b, c) =
            (input.row(y as i32 - 1).unwrap(), input.row(y as i32).unwrap(), input.row(y as i32 + 1).unwrap());
        let row = out.row_mut(y).unwrap();
        for x in 0..row.len() {
            row[x] = a[x + 1] as i16 + b[x + 1] as i16 + c[x + 1] as i16 - 3 * b[x + 1] as i16;
        }
    }
    out.set(0, 0, 7);
    assert_eq!(out.get(0, 0), 7);
    assert!(out.row_mut(3).is_none());
    assert_eq!(dst[(W + 2) as usize], 7);
    // Tile-relative (1, 1) = image (3, 2): rows 1..=3 of column 3, minus three times the centre.
    assert_eq!(dst[(2 * W + 3) as usize], (W + 3) as i16 + (3 * W + 3) as i16 - 2 * (2 * W + 3) as i16);
    assert_eq!(dst[0], 0, "nothing written outside the tile");
}

#[test]
fn type_and_kind_mismatches_are_errors() {
    let mut src = image_u8();
    let d = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, Rect::new(0, 0, 2, 2), Neighborhood::default(), 0);
    let value = 42u32;
    let params = [
        TileParam {
            kind: TileParamKind::InputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &d as *const _ as *mut _,
        },
        TileParam { kind: TileParamKind::Scalar, type_code: u32::TYPE_CODE, ptr: &value as *const u32 as *mut _ },
        TileParam::ABSENT,
    ];
    // SAFETY: as above.
    let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    assert_eq!(args.input::<i16>(0).unwrap_err().status, Status::InvalidFormat);
    assert_eq!(args.output::<u8>(0).unwrap_err().status, Status::InvalidParameters);
    assert_eq!(args.scalar::<u32>(1).unwrap(), 42);
    assert_eq!(args.scalar::<i32>(1).unwrap_err().status, Status::InvalidType);
    assert_eq!(args.input::<u8>(5).unwrap_err().status, Status::InvalidParameters);
    assert!(!args.is_present(2) && args.is_present(1));
}

#[test]
fn strays_panic_instead_of_touching_foreign_memory() {
    crate::unwind::expect_panics("outside the readable rectangle");
    crate::unwind::expect_panics("tile write at");
    let mut src = image_u8();
    let d = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, Rect::new(0, 0, 2, 2), Neighborhood::default(), 0);
    let params = [
        TileParam {
            kind: TileParamKind::InputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &d as *const _ as *mut _,
        },
        TileParam {
            kind: TileParamKind::OutputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &d as *const _ as *mut _,
        },
    ];
    // SAFETY: as above; input and output describe the same memory but only by-value access is used
    // (no slices), which stays sound even without the aliased flag.
    let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    let input = args.input::<u8>(0).unwrap();
    assert!(crate::unwind::catch_panic(|| input.pixel(0, 0, -1, 0)).is_err());
    let mut out = args.output::<u8>(1).unwrap();
    assert!(crate::unwind::catch_panic(|| out.set(2, 0, 1)).is_err());
}

#[test]
fn a_stray_read_names_its_reach_the_neighborhood_and_its_caller() {
    crate::unwind::expect_panics("reads 2 rows below");
    let mut src = image_u8();
    // The interior tile of a 3x3 kernel on the 8x6 image: columns 1..7, rows 1..5.
    let nb = Neighborhood::new(-1, 1, -1, 1);
    let d = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, Rect::new(1, 1, 7, 5), nb, 0);
    let here = std::panic::Location::caller();
    let message = |at: [u32; 2], offset: [i32; 2]| stray_read_message(&d, at, offset, here);
    assert_eq!(
        message([2, 3], [0, 2]),
        format!(
            "Tile::pixel(2, 3, 0, 2) reads 2 rows below the tile {{1,1,7,5}}, outside the readable rectangle \
             {{0,0,8,6}}: the kernel declares `nbhd = (-1, 1, -1, 1)` (left, right, top, bottom); read within it or \
             declare a larger one (at {here})"
        )
    );
    assert!(message([0, 0], [-2, -3]).contains("reads 2 columns left of and 3 rows above the tile {1,1,7,5}"));
    assert!(message([5, 0], [2, 0]).contains("reads 2 columns right of the tile"));

    // Within the neighborhood, past the image's edge (a flexible function's edge tile).
    let edge = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, Rect::new(0, 0, 4, 6), nb, 0);
    assert_eq!(
        stray_read_message(&edge, [0, 0], [-1, 0], here),
        format!(
            "Tile::pixel(0, 0, -1, 0) reads pixel (-1, 0), past the edge of the 8x6 image and outside the readable \
             rectangle {{0,0,5,6}}: there a flexible function reads only what exists (`Tile::get` gives `None` past \
             the edge) (at {here})"
        )
    );
    // No neighborhood declared.
    let none = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, Rect::new(2, 2, 4, 4), Neighborhood::default(), 0);
    assert!(stray_read_message(&none, [1, 0], [1, -1], here).contains(
        "reads 1 column right of and 1 row above the tile {2,2,4,4}, outside the readable rectangle {2,2,4,4}: the \
         kernel declares `nbhd = (0, 0, 0, 0)` (left, right, top, bottom, the default when it declares none)"
    ));

    // The panic itself is at the line that called `pixel` (`#[track_caller]` all the way).
    let params = [TileParam {
        kind: TileParamKind::InputImage,
        type_code: ImageFormat::U8.fourcc(),
        ptr: &d as *const _ as *mut _,
    }];
    // SAFETY: the descriptor points into a live vector of the described size; no output.
    let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    let input = args.input::<u8>(0).unwrap();
    let line = line!() + 1;
    let payload = crate::unwind::catch_panic(|| input.pixel(2, 3, 0, 2)).unwrap_err();
    let text = crate::unwind::panic_message(&*payload);
    assert!(text.contains(&format!("(at {}:{line}:", file!())), "{text}");
}

#[test]
fn aliased_views_give_no_slices_and_work_in_place() {
    // Input and output are the same buffer: a NOT done in place through by-value access.
    let mut img = image_u8();
    let base = img.as_mut_ptr();
    let tile = Rect::new(0, 2, W, 4);
    let din = desc(base, ImageFormat::U8, 1, W as i32, tile, Neighborhood::default(), TILE_ALIASED);
    let dout = desc(base, ImageFormat::U8, 1, W as i32, tile, Neighborhood::default(), TILE_ALIASED);
    let params = [
        TileParam {
            kind: TileParamKind::InputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &din as *const _ as *mut _,
        },
        TileParam {
            kind: TileParamKind::OutputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &dout as *const _ as *mut _,
        },
    ];
    // SAFETY: both descriptors describe `img`, flagged aliased; nothing else touches it.
    let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    let input = args.input::<u8>(0).unwrap();
    let mut out = args.output::<u8>(1).unwrap();
    assert!(input.is_aliased() && out.is_aliased());
    assert!(input.row(0).is_none(), "no shared slice of an aliased image");
    assert!(out.row_mut(0).is_none(), "no unique slice of an aliased image");
    for y in 0..out.height() {
        for x in 0..out.width() {
            let v = input.pixel(x, y, 0, 0);
            out.set(x, y, !v);
        }
    }
    let want: Vec<u8> = (0..W * H).map(|i| if (2 * W..4 * W).contains(&i) { !(i as u8) } else { i as u8 }).collect();
    assert_eq!(img, want);
}

#[test]
fn tile_memory_is_the_given_block() {
    let mut mem = [0u8; 24];
    let params: [TileParam; 0] = [];
    // SAFETY: mem is valid for 24 bytes and used by nobody else.
    let mut args = unsafe { TileArgs::new(&params, mem.as_mut_ptr(), mem.len()) };
    assert_eq!(args.tile_memory_size(), 24);
    args.tile_memory()[23] = 9;
    assert_eq!(mem[23], 9);
    // SAFETY: null with size 0 is allowed.
    let mut none = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    assert!(none.tile_memory().is_empty());
}

/// The pixel a border rule gives at `(ix, iy)` of a `w`×`h` image: an independent per-pixel model
/// (reflect-101 mirrors step by step until inside).
fn border_model(src: &[u8], (w, h): (u32, u32), ix: i64, iy: i64, fill: BorderFill<u8>) -> u8 {
    let map = |i: i64, n: i64| -> Option<i64> {
        if (0..n).contains(&i) {
            return Some(i);
        }
        match fill {
            BorderFill::Constant(_) => None,
            BorderFill::Replicate => Some(i.clamp(0, n - 1)),
            BorderFill::Reflect101 if n == 1 => Some(0),
            BorderFill::Reflect101 => {
                let mut i = i;
                while !(0..n).contains(&i) {
                    i = if i < 0 { -i } else { 2 * (n - 1) - i };
                }
                Some(i)
            }
        }
    };
    match (map(ix, w as i64), map(iy, h as i64)) {
        (Some(x), Some(y)) => src[(y * w as i64 + x) as usize],
        _ => match fill {
            BorderFill::Constant(v) => v,
            _ => unreachable!(),
        },
    }
}

/// Every row `with_rows` and `for_rows` hand out for `tile` of a `size` image equals the model, and
/// every output column of every row is served exactly once.
fn check_rows_served(src: &mut [u8], size: (u32, u32), tile: Rect, nb: Neighborhood, fill: BorderFill<u8>) {
    let d = desc_in(src.as_mut_ptr(), ImageFormat::U8, 1, size.0 as i32, tile, nb, 0, size);
    let param = [TileParam {
        kind: TileParamKind::InputImage,
        type_code: ImageFormat::U8.fourcc(),
        ptr: &d as *const _ as *mut _,
    }];
    // SAFETY: the descriptor points into a live slice of the described size.
    let args = unsafe { TileArgs::new(&param, std::ptr::null_mut(), 0) };
    let t = args.input::<u8>(0).unwrap();
    let src: &[u8] = src;
    let (tw, th) = (tile.width() as usize, tile.height() as usize);
    let check = |y: u32, x: u32, n: u32, rows: &[&[u8]]| {
        assert_eq!(rows.len() as i32, nb.bottom - nb.top + 1);
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.len() as i32, n as i32 + nb.right - nb.left);
            for (j, &px) in row.iter().enumerate() {
                let ix = tile.start_x as i64 + x as i64 + nb.left as i64 + j as i64;
                let iy = tile.start_y as i64 + y as i64 + nb.top as i64 + i as i64;
                let want = border_model(src, size, ix, iy, fill);
                assert_eq!(px, want, "{nb:?} {fill:?} tile {tile} of {size:?}, row {y} ({ix},{iy})");
            }
        }
    };
    let mut seen = vec![0u8; tw * th];
    let mut mark = |y: u32, x: u32, n: u32| {
        seen[y as usize * tw + x as usize..y as usize * tw + (x + n) as usize].iter_mut().for_each(|s| *s += 1)
    };
    macro_rules! both {
        ($n:literal) => {{
            for y in 0..th as u32 {
                t.with_rows::<$n>(y, fill, |x, n, rows| {
                    check(y, x, n, &rows);
                    mark(y, x, n);
                })
                .unwrap();
            }
            t.for_rows::<$n>(fill, |y, x, n, rows| {
                check(y, x, n, &rows);
                mark(y, x, n);
            })
            .unwrap();
        }};
    }
    match nb.bottom - nb.top + 1 {
        1 => both!(1),
        3 => both!(3),
        4 => both!(4),
        _ => unreachable!(),
    }
    assert!(seen.iter().all(|&s| s == 2), "every output pixel served once by each of with_rows and for_rows");
    // The wrong row count is an error, not a panic.
    assert!(t.with_rows::<2>(0, fill, |_, _, _| ()).is_err());
    assert!(t.for_rows::<2>(fill, |_, _, _, _| ()).is_err());
}

/// `with_rows` and `for_rows` hand out, for every tile position, exactly the rows a per-pixel
/// border rule gives (an independent model): tiles at every edge and corner, inside, the whole
/// image, images smaller than the neighborhood, and tiles wider than a strip (`ROW_CHUNK`).
#[test]
fn rows_are_extended_by_the_border_rule_everywhere() {
    let nbs = [
        Neighborhood::new(-1, 1, -1, 1),
        Neighborhood::new(-2, 0, 0, 2),
        Neighborhood::new(0, 3, -3, 0),
        Neighborhood::new(-1, 1, 0, 0),
    ];
    let fills = [BorderFill::Reflect101, BorderFill::Replicate, BorderFill::Constant(200u8)];
    let mut src = image_u8();
    for nb in nbs {
        for fill in fills {
            for tile in [
                Rect::new(0, 0, 3, 2),
                Rect::new(5, 4, 8, 6),
                Rect::new(0, 0, 8, 6),
                Rect::new(3, 2, 5, 4),
                Rect::new(7, 0, 8, 6),
                Rect::new(0, 5, 8, 6),
            ] {
                check_rows_served(&mut src, (W, H), tile, nb, fill);
            }
        }
    }
    // Tiny images (the neighborhood reaches past both edges) and wide ones (several strips).
    let wide = ROW_CHUNK as u32 * 2 + 37;
    for (w, h, tiles) in [
        (1u32, 1u32, vec![Rect::new(0, 0, 1, 1)]),
        (2, 3, vec![Rect::new(0, 0, 2, 3), Rect::new(1, 1, 2, 2)]),
        (
            wide,
            5,
            vec![Rect::new(0, 0, wide, 5), Rect::new(3, 1, wide - 2, 4), Rect::new(ROW_CHUNK as u32 - 5, 0, wide, 2)],
        ),
    ] {
        let mut src: Vec<u8> = (0..w * h).map(|i| (i * 7 + i / w) as u8).collect();
        for nb in nbs {
            for fill in fills {
                for &tile in &tiles {
                    check_rows_served(&mut src, (w, h), tile, nb, fill);
                }
            }
        }
    }
}

#[test]
fn with_rows_refuses_an_aliased_input_instead_of_handing_out_slices() {
    let mut src = image_u8();
    let nb = Neighborhood::new(-1, 1, -1, 1);
    let d = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, Rect::new(0, 0, 2, 2), nb, TILE_ALIASED);
    let param = [TileParam {
        kind: TileParamKind::InputImage,
        type_code: ImageFormat::U8.fourcc(),
        ptr: &d as *const _ as *mut _,
    }];
    // SAFETY: the descriptor points into a live vector of the described size.
    let args = unsafe { TileArgs::new(&param, std::ptr::null_mut(), 0) };
    let e = args.input::<u8>(0).unwrap().with_rows::<3>(0, BorderFill::Reflect101, |_, _, _| ()).unwrap_err();
    assert_eq!(e.status, Status::NotSupported);
}

/// Two views over `src` / `dst` with the descriptors given, handed to `f`.
fn with_pair(din: &TileDesc, dout: &TileDesc, f: impl FnOnce(&TileArgs<'_>)) {
    let params = [
        TileParam {
            kind: TileParamKind::InputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: din as *const _ as *mut _,
        },
        TileParam {
            kind: TileParamKind::OutputImage,
            type_code: ImageFormat::U8.fourcc(),
            ptr: dout as *const _ as *mut _,
        },
    ];
    // SAFETY: the callers' descriptors point into live vectors of the described size; one output
    // view (or one in-place view) is taken.
    let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
    f(&args);
}

#[test]
fn whole_tiles_of_unpadded_images_are_one_slice_and_others_are_not() {
    let mut src = image_u8();
    let mut dst = vec![0u8; (W * H) as usize];
    let none = Neighborhood::default();
    // Full-width rows 1..4 of unpadded images: rows 1, 2, 3 as one slice of 3 × W.
    let band = Rect::new(0, 1, W, 4);
    let din = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, band, none, 0);
    let dout = desc(dst.as_mut_ptr(), ImageFormat::U8, 1, W as i32, band, none, 0);
    with_pair(&din, &dout, |args| {
        let input = args.input::<u8>(0).unwrap();
        let mut out = args.output::<u8>(1).unwrap();
        let s = input.as_slice().expect("adjacent rows");
        assert_eq!(s, &(W..4 * W).map(|i| i as u8).collect::<Vec<u8>>()[..]);
        let o = out.as_mut_slice().expect("adjacent rows");
        assert_eq!(o.len(), (3 * W) as usize);
        o.iter_mut().zip(s).for_each(|(o, s)| *o = !s);
    });
    assert!(dst[..W as usize].iter().all(|&p| p == 0), "row 0 untouched");
    assert_eq!(dst[W as usize..(4 * W) as usize], (W..4 * W).map(|i| !(i as u8)).collect::<Vec<u8>>()[..]);
    assert!(dst[(4 * W) as usize..].iter().all(|&p| p == 0), "rows 4.. untouched");

    // Not whole rows, padded rows, or aliased: no slice.
    let part = Rect::new(1, 1, W, 4);
    let (pin, pout) = (
        desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, part, none, 0),
        desc(dst.as_mut_ptr(), ImageFormat::U8, 1, W as i32, part, none, 0),
    );
    with_pair(&pin, &pout, |args| {
        assert!(args.input::<u8>(0).unwrap().as_slice().is_none(), "a tile not starting at column 0");
        assert!(args.output::<u8>(1).unwrap().as_mut_slice().is_none());
    });
    let narrow = Rect::new(0, 0, W / 2, 2);
    let (nin, nout) = (
        desc_in(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, narrow, none, 0, (W / 2, 2)),
        desc_in(dst.as_mut_ptr(), ImageFormat::U8, 1, W as i32, narrow, none, 0, (W / 2, 2)),
    );
    with_pair(&nin, &nout, |args| {
        assert!(args.input::<u8>(0).unwrap().as_slice().is_none(), "rows padded (stride > width)");
        assert!(args.output::<u8>(1).unwrap().as_mut_slice().is_none());
    });
    let base = src.as_mut_ptr();
    let (ain, aout) = (
        desc(base, ImageFormat::U8, 1, W as i32, band, none, TILE_ALIASED),
        desc(base, ImageFormat::U8, 1, W as i32, band, none, TILE_ALIASED),
    );
    with_pair(&ain, &aout, |args| {
        assert!(args.input::<u8>(0).unwrap().as_slice().is_none(), "aliased");
        assert!(args.output::<u8>(1).unwrap().as_mut_slice().is_none(), "aliased");
    });
}

#[test]
fn in_place_views_give_the_whole_tile_shared_or_apart() {
    let none = Neighborhood::default();
    let band = Rect::new(0, 2, W, 5);
    // Aliased: one slice, the input's pixels, written in place.
    let mut img = image_u8();
    let base = img.as_mut_ptr();
    let (din, dout) = (
        desc(base, ImageFormat::U8, 1, W as i32, band, none, TILE_ALIASED),
        desc(base, ImageFormat::U8, 1, W as i32, band, none, TILE_ALIASED),
    );
    with_pair(&din, &dout, |args| {
        let mut io = args.in_place::<u8>(0, 1).unwrap();
        match io.as_slices() {
            Some(InPlaceRow::Same(all)) => all.iter_mut().for_each(|p| *p = !*p),
            _ => panic!("an aliased whole tile is one shared slice"),
        }
    });
    let want: Vec<u8> = (0..W * H).map(|i| if (2 * W..5 * W).contains(&i) { !(i as u8) } else { i as u8 }).collect();
    assert_eq!(img, want);
    // Apart: the input slice and the output slice.
    let mut src = image_u8();
    let mut dst = vec![0u8; (W * H) as usize];
    let (din, dout) = (
        desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, band, none, 0),
        desc(dst.as_mut_ptr(), ImageFormat::U8, 1, W as i32, band, none, 0),
    );
    with_pair(&din, &dout, |args| {
        let mut io = args.in_place::<u8>(0, 1).unwrap();
        match io.as_slices() {
            Some(InPlaceRow::Apart(i, o)) => o.iter_mut().zip(i).for_each(|(o, i)| *o = !i),
            _ => panic!("a whole tile apart is two slices"),
        }
    });
    assert_eq!(dst[(2 * W) as usize..(5 * W) as usize], want[(2 * W) as usize..(5 * W) as usize]);
}

#[test]
fn the_run_thread_count_is_read_from_the_flags_beside_the_other_bits() {
    assert_eq!(tile_run_threads_flags(1), 1 << 8);
    assert_eq!(tile_run_threads_flags(2), 2 << 8);
    assert_eq!(tile_run_threads_flags(255), TILE_RUN_THREADS_MASK);
    assert_eq!(tile_run_threads_flags(100_000), TILE_RUN_THREADS_MASK, "saturated");
    let mut src = image_u8();
    let mut dst = image_u8();
    let tile = Rect::new(0, 0, W, H);
    for (flags, threads, line_buffer) in [
        (0, 1, false),
        (TILE_LINE_BUFFER, 1, true),
        (tile_run_threads_flags(2), 2, false),
        (tile_run_threads_flags(7) | TILE_LINE_BUFFER | TILE_ALIASED, 7, true),
    ] {
        let din = desc(src.as_mut_ptr(), ImageFormat::U8, 1, W as i32, tile, Neighborhood::default(), flags);
        let dout = desc(dst.as_mut_ptr(), ImageFormat::U8, 1, W as i32, tile, Neighborhood::default(), flags);
        let params = [
            TileParam {
                kind: TileParamKind::InputImage,
                type_code: ImageFormat::U8.fourcc(),
                ptr: &din as *const _ as *mut _,
            },
            TileParam {
                kind: TileParamKind::OutputImage,
                type_code: ImageFormat::U8.fourcc(),
                ptr: &dout as *const _ as *mut _,
            },
        ];
        // SAFETY: descriptors point into live vectors of the described size; one output view.
        let args = unsafe { TileArgs::new(&params, std::ptr::null_mut(), 0) };
        assert_eq!(args.input::<u8>(0).unwrap().run_threads(), threads, "{flags:#x}");
        let out = args.output::<u8>(1).unwrap();
        assert_eq!((out.run_threads(), out.is_line_buffer()), (threads, line_buffer), "{flags:#x}");
    }
}
