//! The `vx_filters` module, loaded for real, against OpenCV goldens (`tests/golden/filters/`,
//! made by `tests/golden/make_filters_golden.py`): exact on every pixel, image edges included.

use vx::*;
use vx_tests::{build_module, plugin_dir, workspace_root};

// 521 wide: rows of three 256-column chunks (the last ragged) in the row kernels.
const SIZES: [(u32, u32); 6] = [(37, 23), (64, 48), (13, 7), (2, 2), (1, 1), (521, 97)];

fn golden(name: &str) -> Vec<u8> {
    let p = workspace_root().join("tests/golden/filters").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn s16(bytes: Vec<u8>) -> Vec<i16> {
    bytes.chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect()
}

fn ctx() -> Context {
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(plugin_dir("filters", &[("vx_filters", &build_module("vx-filters", &[]))]));
    ctx.load_module("vx_filters").unwrap();
    ctx
}

#[test]
fn every_filter_matches_opencv() {
    let ctx = ctx();
    assert_eq!(
        ctx.module_kernels("vx_filters"),
        [
            "filters.add",
            "filters.box3x3",
            "filters.gaussian3x3",
            "filters.magnitude",
            "filters.not",
            "filters.posterize",
            "filters.sobel3x3",
            "filters.subtract",
            "filters.threshold",
            "filters.threshold_range",
            "filters.truncate"
        ]
    );
    let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
    for (w, h) in SIZES {
        let img = |fmt| Image::new(&ctx, w, h, fmt).unwrap();
        let a = img(ImageFormat::U8);
        a.copy_from(Rect::full(w, h), 0, &golden(&format!("a_{w}x{h}.u8"))).unwrap();
        let b = img(ImageFormat::U8);
        b.copy_from(Rect::full(w, h), 0, &golden(&format!("b_{w}x{h}.u8"))).unwrap();
        let (gauss, boxed, post, thr, not, trunc) = (
            img(ImageFormat::U8),
            img(ImageFormat::U8),
            img(ImageFormat::U8),
            img(ImageFormat::U8),
            img(ImageFormat::U8),
            img(ImageFormat::U8),
        );
        let (gx, gy, mag) = (img(ImageFormat::S16), img(ImageFormat::S16), img(ImageFormat::U8));
        let (sum, diff) = (img(ImageFormat::S16), img(ImageFormat::S16));
        let level = Scalar::new(&ctx, ScalarValue::Uint8(100)).unwrap();
        let g = Graph::new(&ctx).unwrap();
        g.add_node(&k("gaussian3x3"), [&a, &gauss]).unwrap();
        g.add_node(&k("box3x3"), [&a, &boxed]).unwrap();
        g.add_node(&k("sobel3x3"), [&a, &gx, &gy]).unwrap();
        g.add_node(&k("magnitude"), [&gx, &gy, &mag]).unwrap();
        g.add_node(&k("add"), [&a, &b, &sum]).unwrap();
        g.add_node(&k("subtract"), [&a, &b, &diff]).unwrap();
        g.add_node(&k("posterize"), [&a, &post]).unwrap();
        g.add_node(&k("threshold"), [Reference::from(&a), Reference::from(&level), Reference::from(&thr)]).unwrap();
        g.add_node(&k("not"), [&a, &not]).unwrap();
        let top = Scalar::new(&ctx, ScalarValue::Uint8(200)).unwrap();
        g.add_node(&k("truncate"), [Reference::from(&a), Reference::from(&trunc), Reference::from(&top)]).unwrap();
        g.process().unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
        let sz = format!("{w}x{h}");
        assert_eq!(gauss.to_vec::<u8>().unwrap(), golden(&format!("gaussian_{sz}.u8")), "gaussian {sz}");
        assert_eq!(boxed.to_vec::<u8>().unwrap(), golden(&format!("box_{sz}.u8")), "box {sz}");
        assert_eq!(gx.to_vec::<i16>().unwrap(), s16(golden(&format!("sobel_x_{sz}.s16"))), "sobel x {sz}");
        assert_eq!(gy.to_vec::<i16>().unwrap(), s16(golden(&format!("sobel_y_{sz}.s16"))), "sobel y {sz}");
        assert_eq!(mag.to_vec::<u8>().unwrap(), golden(&format!("magnitude_{sz}.u8")), "magnitude {sz}");
        assert_eq!(sum.to_vec::<i16>().unwrap(), s16(golden(&format!("add_{sz}.s16"))), "add {sz}");
        assert_eq!(diff.to_vec::<i16>().unwrap(), s16(golden(&format!("subtract_{sz}.s16"))), "subtract {sz}");
        assert_eq!(post.to_vec::<u8>().unwrap(), golden(&format!("posterize_{sz}.u8")), "posterize {sz}");
        assert_eq!(thr.to_vec::<u8>().unwrap(), golden(&format!("threshold_{sz}.u8")), "threshold {sz}");
        assert_eq!(not.to_vec::<u8>().unwrap(), golden(&format!("not_{sz}.u8")), "not {sz}");
        assert_eq!(trunc.to_vec::<u8>().unwrap(), golden(&format!("truncate_{sz}.u8")), "truncate {sz}");
    }
}

/// The range threshold (OpenVX `VX_THRESHOLD_TYPE_RANGE`, OpenCV `inRange`): 255 where
/// `lower <= a <= upper`, else 0, against that rule per pixel on the golden inputs, bounds included
/// and an empty range.
#[test]
fn threshold_range_matches_the_openvx_rule() {
    let ctx = ctx();
    let k = ctx.kernel_by_name("filters.threshold_range").unwrap();
    assert_eq!(k.alias_hints(), []);
    for (w, h) in SIZES {
        let a = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        let px = golden(&format!("a_{w}x{h}.u8"));
        a.copy_from(Rect::full(w, h), 0, &px).unwrap();
        for (lower, upper) in [(100u8, 180u8), (0, 255), (0, 0), (255, 255), (77, 77), (200, 100)] {
            let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
            let g = Graph::new(&ctx).unwrap();
            let (lo, hi) = (
                Scalar::new(&ctx, ScalarValue::Uint8(lower)).unwrap(),
                Scalar::new(&ctx, ScalarValue::Uint8(upper)).unwrap(),
            );
            g.add_node(&k, [Reference::from(&a), Reference::from(&lo), Reference::from(&hi), Reference::from(&out)])
                .unwrap();
            g.process().unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
            let want: Vec<u8> = px.iter().map(|&p| if (lower..=upper).contains(&p) { 255 } else { 0 }).collect();
            assert_eq!(out.to_vec::<u8>().unwrap(), want, "{w}x{h} [{lower}, {upper}]");
        }
    }
}

/// The golden test again at every SIMD level this CPU runs, forced with `VX_FILTERS_SIMD` (the
/// module reads it once per process: each level in a child process running this binary).
#[test]
fn goldens_hold_at_every_forced_simd_level() {
    vx_tests::at_every_forced_simd_level(&["every_filter_matches_opencv", "threshold_range_matches_the_openvx_rule"]);
}

#[test]
fn alias_hints_of_truncate_and_not() {
    let ctx = ctx();
    assert_eq!(ctx.kernel_by_name("filters.threshold").unwrap().alias_hints(), []);
    assert_eq!(
        ctx.kernel_by_name("filters.truncate").unwrap().alias_hints(),
        [AliasHint { a: 0, b: 1, kind: AliasKind::Sparse }]
    );
    assert_eq!(
        ctx.kernel_by_name("filters.not").unwrap().alias_hints(),
        [AliasHint { a: 0, b: 1, kind: AliasKind::Dense }]
    );
}

/// A module's in-place kernels in a chain of virtual images: both hints honoured (the chain lives
/// in the output's buffer), and the pixels equal the same graph's with aliasing disabled and an
/// independent per-pixel model of blur → truncate → NOT.
#[test]
fn in_place_module_kernels_alias_a_virtual_chain() {
    let dir = plugin_dir("filters-alias", &[("vx_filters", &build_module("vx-filters", &[]))]);
    let run = |aliasing: bool| {
        let ctx = Context::builder().threads(2).aliasing(aliasing).fusion(false).build().unwrap(); // fusion off: this compares aliasing alone
        ctx.add_module_dir(&dir);
        ctx.load_module("vx_filters").unwrap();
        let k = |n: &str| ctx.kernel_by_name(&format!("filters.{n}")).unwrap();
        let (w, h) = (521, 97);
        let a = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        a.copy_from(Rect::full(w, h), 0, &golden(&format!("a_{w}x{h}.u8"))).unwrap();
        let g = Graph::new(&ctx).unwrap();
        let (blur, clipped) = (
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
        );
        let out = Image::new(&ctx, w, h, ImageFormat::U8).unwrap();
        let top = Scalar::new(&ctx, ScalarValue::Uint8(150)).unwrap();
        g.add_node(&k("gaussian3x3"), [&a, &blur]).unwrap();
        g.add_node(&k("truncate"), [Reference::from(&blur), Reference::from(&clipped), Reference::from(&top)]).unwrap();
        g.add_node(&k("not"), [&clipped, &out]).unwrap();
        g.process().unwrap();
        let aliased: Vec<bool> = g.alias_decisions().unwrap().iter().map(|d| d.aliased).collect();
        (aliased, out.to_vec::<u8>().unwrap(), ctx.buffer_bytes().current)
    };
    let (on, off) = (run(true), run(false));
    assert_eq!(on.0, [true, true]);
    assert_eq!(off.0, [false, false]);
    assert_eq!(on.1, off.1);
    let model: Vec<u8> = golden("gaussian_521x97.u8").iter().map(|&v| !v.min(150)).collect();
    assert_eq!(on.1, model);
    // Input and output only, against input, output and the two intermediates.
    assert_eq!(on.2 * 2, off.2);
}
