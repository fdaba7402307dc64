#!/usr/bin/env python3
"""OpenCV side of `cargo bench -p vx-tests --bench showcase`: times OpenCV's equivalent of each
vx_filters kernel on the same images (raw U8 files written by the Rust bench), at the requested
thread count, and prints {"op": median seconds, ...} as JSON.

Every output is preallocated once and passed as `dst=` (OpenCV allocates a fresh array per call
otherwise, and the timing would measure page faults of new 2-16 MB buffers, not the filter), the
same as the vx side, whose graphs own their outputs from verify on.

usage: opencv_bench.py A_RAW B_RAW WIDTH HEIGHT THREADS ROUNDS
       opencv_bench.py --serve     (see `serve`)
"""
import json
import sys
import time

import cv2
import numpy as np


def make_ops(a, b, w, h):
    """OpenCV's equivalent of each vx_filters kernel on images a and b, every output preallocated."""
    u8 = lambda: np.empty((h, w), np.uint8)
    s16 = lambda: np.empty((h, w), np.int16)
    f32 = lambda: np.empty((h, w), np.float32)
    d8, d16, gx, gy = u8(), s16(), s16(), s16()
    cv2.spatialGradient(a, dx=gx, dy=gy)
    fx, fy, fm, m8 = f32(), f32(), f32(), u8()
    blur, pgx, pgy, pfx, pfy, pfm, pm, pout = u8(), s16(), s16(), f32(), f32(), f32(), u8(), u8()
    lut = np.array([(v & 0xF0) | (v >> 4) for v in range(256)], np.uint8)

    def magnitude(gx, gy, fx, fy, fm, out):
        # OpenCV has no S16,S16 -> U8 magnitude: conversion to float, magnitude, rounding and
        # saturating conversion, every step into a preallocated array.
        np.copyto(fx, gx)
        np.copyto(fy, gy)
        cv2.magnitude(fx, fy, magnitude=fm)
        cv2.convertScaleAbs(fm, dst=out)

    def pipeline():
        cv2.GaussianBlur(a, (3, 3), 0, dst=blur)
        cv2.spatialGradient(blur, dx=pgx, dy=pgy)
        magnitude(pgx, pgy, pfx, pfy, pfm, pm)
        cv2.threshold(pm, 100, 255, cv2.THRESH_BINARY, dst=pout)

    ops = {
        "copy": lambda: np.copyto(d8, a),
        "gaussian3x3": lambda: cv2.GaussianBlur(a, (3, 3), 0, dst=d8),
        "box3x3": lambda: cv2.blur(a, (3, 3), dst=d8),
        "sobel3x3": lambda: cv2.spatialGradient(a, dx=gx, dy=gy),
        "magnitude": lambda: magnitude(gx, gy, fx, fy, fm, m8),
        "add": lambda: cv2.add(a, b, dst=d16, dtype=cv2.CV_16S),
        "subtract": lambda: cv2.subtract(a, b, dst=d16, dtype=cv2.CV_16S),
        "posterize": lambda: cv2.LUT(a, lut, dst=d8),
        "threshold": lambda: cv2.threshold(a, 100, 255, cv2.THRESH_BINARY, dst=d8),
        "threshold_range": lambda: cv2.inRange(a, 100, 180, dst=d8),
        "not": lambda: cv2.bitwise_not(a, dst=d8),
        "pipeline": pipeline,
    }
    return ops


def main():
    if sys.argv[1:2] == ["--serve"]:
        return serve()
    a_path, b_path = sys.argv[1], sys.argv[2]
    w, h, threads, rounds = (int(v) for v in sys.argv[3:7])
    cv2.setNumThreads(threads)
    a = np.fromfile(a_path, np.uint8).reshape(h, w)
    b = np.fromfile(b_path, np.uint8).reshape(h, w)
    ops = make_ops(a, b, w, h)
    # Calls per timed round: about 4 Mpixel of work, as the Rust side does.
    calls = max(1, 4_000_000 // (w * h))
    out = {}
    for name, op in ops.items():
        for _ in range(3):
            op()
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(calls):
                op()
            times.append((time.perf_counter() - t) / calls)
        times.sort()
        out[name] = times[len(times) // 2]
    out["opencv_version"] = cv2.__version__
    print(json.dumps(out))


def serve():
    """`--serve`: the OpenCV side of `cargo bench -p vx-tests --bench performance`, one long-lived
    process whose rounds the Rust side interleaves with its own. One command per stdin line, one
    answer line:
      load W H A_PATH B_PATH   -> ok            (the images; every output preallocated)
      time OP THREADS CALLS    -> seconds/call  (one untimed call first, then CALLS timed back to back)
      version                  -> OpenCV's version
    """
    ops = {}
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "load":
            w, h = int(cmd[1]), int(cmd[2])
            a = np.fromfile(cmd[3], np.uint8).reshape(h, w)
            b = np.fromfile(cmd[4], np.uint8).reshape(h, w)
            ops = make_ops(a, b, w, h)
            print("ok", flush=True)
        elif cmd[0] == "time":
            op, threads, calls = ops[cmd[1]], int(cmd[2]), int(cmd[3])
            cv2.setNumThreads(threads)
            op()
            t = time.perf_counter()
            for _ in range(calls):
                op()
            print((time.perf_counter() - t) / calls, flush=True)
        elif cmd[0] == "version":
            print(cv2.__version__, flush=True)
        else:
            print("error: unknown command " + cmd[0], flush=True)


if __name__ == "__main__":
    main()
