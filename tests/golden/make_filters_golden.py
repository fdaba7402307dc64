#!/usr/bin/env python3
"""Golden outputs of the vx_filters module, computed with OpenCV.

    pip install opencv-python-headless numpy
    python3 tests/golden/make_filters_golden.py

Raw row-major little-endian files in tests/golden/filters/: `<what>_<W>x<H>.<u8|s16>`.
Borders: OpenCV's default BORDER_REFLECT_101, which vx_filters' flexible functions implement, so
every pixel is compared, edges included.

- gaussian: GaussianBlur(a, (3, 3), 0)
- box: blur(a, (3, 3))
- sobel_x / sobel_y: Sobel(a, CV_16S, 1, 0 / 0, 1, ksize=3)
- magnitude: magnitude(float gx, float gy), rounded, saturated to U8 (no ties can occur: sqrt of an
  integer is never k + 0.5)
- add / subtract: add / subtract(a, b, dtype=CV_16S)
- posterize: LUT with (v & 0xF0) | (v >> 4)
- threshold: threshold(a, 100, 255, THRESH_BINARY)
- not: bitwise_not(a)
- truncate: threshold(a, 200, 255, THRESH_TRUNC) (pixels above 200 become 200)
"""
import pathlib

import cv2
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "filters"
SIZES = [(37, 23), (64, 48), (13, 7), (2, 2), (1, 1), (521, 97)]


def save(name, array):
    (OUT / name).write_bytes(array.astype(array.dtype.newbyteorder("<")).tobytes())


def main():
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(6)
    lut = np.array([(v & 0xF0) | (v >> 4) for v in range(256)], np.uint8)
    for w, h in SIZES:
        # Smooth structure plus noise: edges for Sobel, values on both sides of the threshold.
        yy, xx = np.mgrid[0:h, 0:w]
        base = (128 + 100 * np.sin(xx / 3.0) * np.cos(yy / 4.0)).astype(np.int32)
        a = np.clip(base + rng.integers(-20, 21, (h, w)), 0, 255).astype(np.uint8)
        b = rng.integers(0, 256, (h, w), dtype=np.uint8)
        save(f"a_{w}x{h}.u8", a)
        save(f"b_{w}x{h}.u8", b)
        save(f"gaussian_{w}x{h}.u8", cv2.GaussianBlur(a, (3, 3), 0))
        save(f"box_{w}x{h}.u8", cv2.blur(a, (3, 3)))
        gx = cv2.Sobel(a, cv2.CV_16S, 1, 0, ksize=3)
        gy = cv2.Sobel(a, cv2.CV_16S, 0, 1, ksize=3)
        save(f"sobel_x_{w}x{h}.s16", gx)
        save(f"sobel_y_{w}x{h}.s16", gy)
        mag = cv2.magnitude(gx.astype(np.float32), gy.astype(np.float32))
        save(f"magnitude_{w}x{h}.u8", np.clip(np.round(mag), 0, 255).astype(np.uint8))
        save(f"add_{w}x{h}.s16", cv2.add(a, b, dtype=cv2.CV_16S))
        save(f"subtract_{w}x{h}.s16", cv2.subtract(a, b, dtype=cv2.CV_16S))
        save(f"posterize_{w}x{h}.u8", cv2.LUT(a, lut))
        save(f"threshold_{w}x{h}.u8", cv2.threshold(a, 100, 255, cv2.THRESH_BINARY)[1])
        save(f"not_{w}x{h}.u8", cv2.bitwise_not(a))
        save(f"truncate_{w}x{h}.u8", cv2.threshold(a, 200, 255, cv2.THRESH_TRUNC)[1])
    print(f"wrote goldens for {len(SIZES)} sizes to {OUT} with OpenCV {cv2.__version__}")


if __name__ == "__main__":
    main()
