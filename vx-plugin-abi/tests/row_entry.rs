//! The row entry across the ABI (v8): `module_api::row_trampoline` over a `RowFunction` builds
//! `RowArgs` from the raw parameters and computes what `for_rows_from_table` computes; what does
//! not match the contract's shapes (another kind, another format, an output taken twice, a scalar
//! of another type) is an error, and a panic in the kernel is an error, not an unwind across the
//! boundary.

use std::ffi::c_void;

use vx_plugin_abi::geometry::Neighborhood;
use vx_plugin_abi::module_abi::{RowFnPtr, RowSinkDesc, RowSourceDesc};
use vx_plugin_abi::module_api::{RowFunction, row_trampoline};
use vx_plugin_abi::tile::for_rows_from_table;
use vx_plugin_abi::{BorderFill, ImageFormat, RowArgs, RowRegion, Status, TileError, TileParam, TileParamKind, wire};

/// A 1×3 vertical sum plus a scalar, with the replicate rule.
struct VerticalSum;

impl RowFunction for VerticalSum {
    fn call(args: &RowArgs<'_>) -> Result<(), TileError> {
        let input = args.input::<u8>(0)?;
        let add = args.scalar::<u8>(1)?;
        let mut out = args.output::<u16>(2)?;
        let nb = Neighborhood::new(0, 0, -1, 1);
        for_rows_from_table::<u8, u16, 3>(&input, &mut out, args.region(), nb, BorderFill::Replicate, |rows, o| {
            for (x, v) in o.iter_mut().enumerate() {
                *v = rows.iter().map(|r| r[x] as u16).sum::<u16>() + add as u16;
            }
        })
    }
}

/// Takes its output twice.
struct Greedy;

impl RowFunction for Greedy {
    fn call(args: &RowArgs<'_>) -> Result<(), TileError> {
        let _a = args.output::<u16>(2)?;
        let _b = args.output::<u16>(2)?;
        Ok(())
    }
}

struct Panics;

impl RowFunction for Panics {
    fn call(_: &RowArgs<'_>) -> Result<(), TileError> {
        panic!("a row entry panics on purpose")
    }
}

/// Call `entry` on a 4×3 image (rows `pixels`) with output rows `out`, the parameters edited by
/// `edit` first.
fn call(entry: RowFnPtr, out: &mut [u16; 12], edit: impl FnOnce(&mut [TileParam; 3])) -> Result<(), (i32, String)> {
    let pixels: [u8; 12] = [1, 2, 3, 4, 10, 20, 30, 40, 100, 101, 102, 103];
    let table: Vec<*const u8> = (0..3).map(|y| pixels[y * 4..].as_ptr()).collect();
    let source = RowSourceDesc { first_row: 0, rows: table.as_ptr(), len: 3, format: ImageFormat::U8.fourcc() };
    let sink_rows: Vec<*mut u8> = out.chunks_mut(4).map(|r| r.as_mut_ptr().cast::<u8>()).collect();
    let sink = RowSinkDesc { rows: sink_rows.as_ptr(), format: ImageFormat::U16.fourcc() };
    let add = 5u8;
    let mut params = [
        TileParam {
            kind: TileParamKind::InputRows,
            type_code: ImageFormat::U8.fourcc(),
            ptr: &source as *const RowSourceDesc as *mut c_void,
        },
        TileParam {
            kind: TileParamKind::Scalar,
            type_code: wire::scalar_type::UINT8,
            ptr: &add as *const u8 as *mut c_void,
        },
        TileParam {
            kind: TileParamKind::OutputRows,
            type_code: ImageFormat::U16.fourcc(),
            ptr: &sink as *const RowSinkDesc as *mut c_void,
        },
    ];
    edit(&mut params);
    let region = RowRegion { y0: 0, count: 3, x0: 0, x1: 4, image_width: 4, image_height: 3 };
    // SAFETY: the entries the edits leave point to what their kinds say: the table's rows are 4 u8
    // pixels of `pixels` (not written), the sink's 3 rows 4 u16 of `out` (nothing else's), the
    // scalar a u8; an edited kind or code is refused before anything is read through it.
    unsafe { entry(params.as_ptr(), 3, &region) }.into_result().map_err(|e| (e.status, e.message.into_string()))
}

#[test]
fn the_trampoline_computes_the_table_path() {
    let mut out = [0u16; 12];
    call(row_trampoline::<VerticalSum>, &mut out, |_| {}).unwrap();
    // Replicate: row -1 is row 0, row 3 is row 2.
    let col = |x: usize| {
        let p = [1u16 + x as u16, 10 * (x as u16 + 1), 100 + x as u16];
        [p[0] + p[0] + p[1] + 5, p[0] + p[1] + p[2] + 5, p[1] + p[2] + p[2] + 5]
    };
    for y in 0..3 {
        for x in 0..4 {
            assert_eq!(out[y * 4 + x], col(x)[y], "({x}, {y})");
        }
    }
}

/// An edit of the parameters before the call.
type Edit = dyn FnOnce(&mut [TileParam; 3]);

#[test]
fn misshapen_parameters_are_errors() {
    let mut out = [0u16; 12];
    let invalid = Status::InvalidParameters.code();
    let cases: [(&str, Box<Edit>, i32, &str); 4] = [
        ("tile kind", Box::new(|p| p[0].kind = TileParamKind::InputImage), invalid, "not InputRows"),
        (
            "format",
            Box::new(|p| p[0].type_code = ImageFormat::U16.fourcc()),
            Status::InvalidFormat.code(),
            "pixel type",
        ),
        ("scalar type", Box::new(|p| p[1].type_code = wire::scalar_type::INT8), Status::InvalidType.code(), "scalar"),
        ("output kind", Box::new(|p| p[2].kind = TileParamKind::InputRows), invalid, "not OutputRows"),
    ];
    for (what, edit, status, text) in cases {
        let (s, m) = call(row_trampoline::<VerticalSum>, &mut out, edit).unwrap_err();
        assert_eq!(s, status, "{what}: {m}");
        assert!(m.contains(text), "{what}: {m}");
    }
    assert_eq!(out, [0; 12], "nothing written");
    let (s, m) = call(row_trampoline::<Greedy>, &mut out, |_| {}).unwrap_err();
    assert_eq!((s, m.as_str()), (invalid, "output 2 was taken already"));
}

#[test]
fn a_panicking_row_entry_is_an_error() {
    vx_plugin_abi::expect_panics("panics on purpose");
    let mut out = [0u16; 12];
    let (s, m) = call(row_trampoline::<Panics>, &mut out, |_| {}).unwrap_err();
    assert_eq!(s, Status::Failure.code());
    assert!(m.contains("a row entry panicked in the module") && m.contains("panics on purpose"), "{m}");
}
