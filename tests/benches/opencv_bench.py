#!/usr/bin/env python3
"""OpenCV side of `cargo bench -p vx-tests --bench showcase`: times OpenCV's equivalent of each
vx_filters kernel on the same images (raw U8 files written by the Rust bench), at the requested
thread count, and prints {"op": median seconds, ...} as JSON.

usage: opencv_bench.py A_RAW B_RAW WIDTH HEIGHT THREADS ROUNDS
"""
import json
import sys
import time

import cv2
import numpy as np


def main():
    a_path, b_path, w, h, threads, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    cv2.setNumThreads(threads)
    a = np.fromfile(a_path, np.uint8).reshape(h, w)
    b = np.fromfile(b_path, np.uint8).reshape(h, w)
    gx, gy = cv2.spatialGradient(a)
    lut = np.array([(v & 0xF0) | (v >> 4) for v in range(256)], np.uint8)

    def magnitude():
        # OpenCV has no S16,S16 -> U8 magnitude: float conversion, magnitude, saturating conversion.
        m = cv2.magnitude(gx.astype(np.float32), gy.astype(np.float32))
        return cv2.convertScaleAbs(m)

    ops = {
        "gaussian3x3": lambda: cv2.GaussianBlur(a, (3, 3), 0),
        "box3x3": lambda: cv2.blur(a, (3, 3)),
        "sobel3x3": lambda: cv2.spatialGradient(a),
        "magnitude": magnitude,
        "add": lambda: cv2.add(a, b, dtype=cv2.CV_16S),
        "subtract": lambda: cv2.subtract(a, b, dtype=cv2.CV_16S),
        "posterize": lambda: cv2.LUT(a, lut),
        "threshold": lambda: cv2.threshold(a, 100, 255, cv2.THRESH_BINARY),
        "not": lambda: cv2.bitwise_not(a),
    }
    out = {}
    for name, op in ops.items():
        for _ in range(3):
            op()
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            op()
            times.append(time.perf_counter() - t)
        times.sort()
        out[name] = times[len(times) // 2]
    out["opencv_version"] = cv2.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
