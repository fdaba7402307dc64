#!/usr/bin/env python3
"""Golden outputs for the tiling extension's example kernels, computed with OpenCV.

    pip install opencv-python-headless numpy
    python3 vx-core/tests/golden/make_golden.py

Every file is raw, row-major, little-endian: `<what>_<W>x<H>.<u8|s16>`.

- `input_a`, `input_b`: seeded random U8 inputs.
- `gaussian`: the spec's Gaussian 3x3 arithmetic, sum(w * p) >> 4 with weights 1 2 1 / 2 4 2 / 1 2 1
  (truncating, as the spec's C example does): OpenCV's filter2D computes the integer sums (exact in
  float32), the shift truncates. Only interior pixels are meaningful: with a fast-only kernel and
  border Undefined the border is not processed.
- `add`: cv2.add(a, b, dtype=CV_16S), the spec's u8 + u8 -> s16 (saturation at INT16_MAX never bites).
- `posterize`: cv2.LUT with (v & 0xF0) | (v >> 4), the spec's posterize.
"""
import pathlib

import cv2
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent
SIZES = [(37, 23), (64, 48), (14, 6), (12, 6), (5, 3), (1, 1)]


def save(name, array):
    (OUT / name).write_bytes(array.astype(array.dtype.newbyteorder("<")).tobytes())


def main():
    rng = np.random.default_rng(20261122)
    kernel = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32)
    lut = np.array([(v & 0xF0) | (v >> 4) for v in range(256)], np.uint8)
    for w, h in SIZES:
        a = rng.integers(0, 256, (h, w), dtype=np.uint8)
        b = rng.integers(0, 256, (h, w), dtype=np.uint8)
        save(f"input_a_{w}x{h}.u8", a)
        save(f"input_b_{w}x{h}.u8", b)
        sums = cv2.filter2D(a.astype(np.float32), cv2.CV_32F, kernel, borderType=cv2.BORDER_REPLICATE)
        save(f"gaussian_{w}x{h}.u8", (sums.astype(np.int32) >> 4).astype(np.uint8))
        save(f"add_{w}x{h}.s16", cv2.add(a, b, dtype=cv2.CV_16S))
        save(f"posterize_{w}x{h}.u8", cv2.LUT(a, lut))
    print(f"wrote {len(SIZES) * 5} files to {OUT} with OpenCV {cv2.__version__}")


if __name__ == "__main__":
    main()
