//! The tiling extension's example kernels (Gaussian 3×3 fast, add u8+u8→s16 16×16 fast + flexible,
//! posterize 4×1 fast) through real graphs, against golden outputs computed by OpenCV
//! (`tests/golden/make_golden.py`). Pixels a kernel must not process keep a sentinel value.

mod common;

use std::path::PathBuf;

use common::spec_kernels::*;
use vx::*;

const SIZES: [(u32, u32); 6] = [(37, 23), (64, 48), (14, 6), (12, 6), (5, 3), (1, 1)];
const SENTINEL_U8: u8 = 0xAB;

fn golden(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn golden_s16(name: &str) -> Vec<i16> {
    golden(name).chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect()
}

fn image_from(ctx: &Context, w: u32, h: u32, px: &[u8]) -> Image {
    let img = Image::new(ctx, w, h, ImageFormat::U8).unwrap();
    img.copy_from(Rect::full(w, h), 0, px).unwrap();
    img
}

#[test]
fn example_kernels_match_opencv() {
    let ctx = Context::builder().threads(2).build().unwrap();
    let gaussian = gaussian_kernel(&ctx, "spec.gaussian3x3", false);
    let gaussian_spec_style = gaussian_kernel(&ctx, "spec.gaussian3x3.pixelwise", true);
    let add = add_kernel(&ctx);
    let posterize = posterize_kernel(&ctx);
    for (w, h) in SIZES {
        let n = (w * h) as usize;
        let a = image_from(&ctx, w, h, &golden(&format!("input_a_{w}x{h}.u8")));
        let b = image_from(&ctx, w, h, &golden(&format!("input_b_{w}x{h}.u8")));
        let g1 = image_from(&ctx, w, h, &vec![SENTINEL_U8; n]);
        let g2 = image_from(&ctx, w, h, &vec![SENTINEL_U8; n]);
        let sum = Image::new(&ctx, w, h, ImageFormat::S16).unwrap();
        sum.copy_from(Rect::full(w, h), 0, &vec![i16::MIN; n]).unwrap();
        let post = image_from(&ctx, w, h, &vec![SENTINEL_U8; n]);
        let graph = Graph::new(&ctx).unwrap();
        graph.add_node(&gaussian, [&a, &g1]).unwrap();
        graph.add_node(&gaussian_spec_style, [&a, &g2]).unwrap();
        graph.add_node(&add, [&a, &b, &sum]).unwrap();
        graph.add_node(&posterize, [&a, &post]).unwrap();
        graph.process().unwrap_or_else(|e| panic!("{w}x{h}: {e}"));

        // Gaussian, fast only, border Undefined: the interior matches, the one-pixel border is not
        // processed (the spec's first table).
        let want = golden(&format!("gaussian_{w}x{h}.u8"));
        for (name, img) in [("rows", &g1), ("vxImagePixel", &g2)] {
            let got = img.to_vec::<u8>().unwrap();
            for y in 0..h {
                for x in 0..w {
                    let i = (y * w + x) as usize;
                    let interior = x >= 1 && y >= 1 && x + 1 < w && y + 1 < h;
                    let expected = if interior { want[i] } else { SENTINEL_U8 };
                    assert_eq!(got[i], expected, "gaussian ({name}) {w}x{h} at ({x},{y})");
                }
            }
        }

        // Add, fast 16x16 + flexible: every pixel, whatever the size.
        assert_eq!(sum.to_vec::<i16>().unwrap(), golden_s16(&format!("add_{w}x{h}.s16")), "add {w}x{h}");

        // Posterize, fast only with a 4x1 block: the columns left of the last whole block are
        // processed; the strip on the right (14x6: 2 pixels wide) is not.
        let want = golden(&format!("posterize_{w}x{h}.u8"));
        let got = post.to_vec::<u8>().unwrap();
        let aligned_w = w / 4 * 4;
        for y in 0..h {
            for x in 0..w {
                let i = (y * w + x) as usize;
                let expected = if x < aligned_w { want[i] } else { SENTINEL_U8 };
                assert_eq!(got[i], expected, "posterize {w}x{h} at ({x},{y})");
            }
        }
    }
}
