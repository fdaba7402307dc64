#!/usr/bin/env python3
"""Halide side of the 4-node edge pipeline in `cargo bench -p vx-tests --bench performance`
(issue 34; `docs/design/fusion.md` §8): gaussian 3×3 → Sobel 3×3 → magnitude → threshold, the same
arithmetic as vx_filters, JIT-compiled with the `halide` Python package (`pip install halide`).

The stages, bit for bit as `plugins/vx-filters/src`:
  blur = (v(x-1) + 2 v(x) + v(x+1) + 8) >> 4,  v = a(y-1) + 2 a(y) + a(y+1)   (u16; reflect-101 input)
  gx   = s(x+1) - s(x-1),  s = b(y-1) + 2 b(y) + b(y+1);  gy = d(x-1) + 2 d(x) + d(x+1), d = b(y+1) - b(y-1)
  mag  = u8_saturate(sqrt(f32(gx² + gy²)) + 0.5)   (rows::mag: round half up, saturated)
  out  = mag > 100 ? 255 : 0                        (pipeline_graph's threshold level)
Sobel's border is reflect-101 of the *blur* image. The blur, evaluated with the same formula one
pixel outside the image (on the reflect-101 input), equals that border exactly: the kernel is
symmetric, so blur(-1) = a(-2) + 2a(-1) + a(0) = a(2) + 2a(1) + a(0) = blur(1), and likewise at w
and h. So only the input carries a boundary condition (`BoundaryConditions.mirror_interior`).

Schedules (env `HALIDE_SCHEDULE`, default `line`):
  line   output in strips of 16 rows (`split(y, yo, yi, 16)`, `parallel(yo)` with 2+ threads); the
         blur a sliding window: `store_at(out, yo).compute_at(out, yi)`, one new blur row per output
         row in a 3-row (folded) line buffer; Sobel, magnitude and threshold inline; everything
         vectorized at the natural vector size of u8 (64 lanes on AVX-512, 32 on AVX2).
  strip  as `line`, but the blur of the whole strip (18 rows) computed at once per strip
         (`compute_at(out, yo)`), no sliding window.
  tile   output in 256×32 tiles (parallel over tile rows), the blur of a tile (258×34) per tile.
In all three the mirrored input (`a`) is a row buffer of its own, 16 lanes wide (see EDGE_LANES).
Measured 2026-11-26 in `cargo bench -p vx-tests --bench performance` (2-core AVX-512 Xeon, shared
and noisy; medians, ms per frame, 1 / 2 threads): line 0.26 / 0.19 at 640×480, 1.40 / 0.78 at
1920×1080, 5.30 / 2.83 at 3840×2160; strip 0.27 / 0.17, 1.38 / 0.78, 5.33 / 2.87 (the same within
the noise); tile 0.87 / 0.46, 2.76 / 1.37, 8.11 / 4.08. `line` stays the default, as issue 34 asks.
Needs at least 256×32 pixels (tile) or 64×16 (the vector width, the strip height) for the others.

Threads: Halide's thread pool reads `HL_NUM_THREADS` once, when the JIT runtime starts, so this
process sets it (default 2, the most the Rust bench asks for) before the first realize, and compiles
each schedule twice: serial for `time OP 1 CALLS` (no `parallel`, the pool is not used) and parallel
for `time OP N CALLS` with N == HL_NUM_THREADS (any other N answers an error).

usage: halide_bench.py --serve          the line protocol of `pipeline_server.py`:
         load W H A_PATH B_PATH   -> ok
         time OP THREADS CALLS    -> seconds/call   (OP: pipeline)
         version                  -> Halide's version and schedule
         check PATH               -> ok | mismatch ...  (Halide's pipeline output, 1 and N threads,
                                     against the raw U8 W×H image at PATH: vx's output)
       halide_bench.py --check A_RAW W H EXPECTED_RAW    one-shot `check`; exit status 0 when equal
"""
import os
import sys

os.environ.setdefault("HL_NUM_THREADS", "2")

import halide as hl  # noqa: E402  (HL_NUM_THREADS first)
import numpy as np  # noqa: E402
from pipeline_server import compare, serve  # noqa: E402  (this folder: the shared protocol)

LEVEL = 100
# Vector lanes of the bordered input row (`a`). Its first and last vectors straddle the mirrored
# border, where Halide's loop partitioning leaves a vector select of indices, compiled as a gather
# (one scalar load per lane): at 64 lanes (AVX-512's natural u8 vector) those edge vectors made the
# 1-thread VGA frame 0.36 ms against 0.25 at 16 lanes; reading the mirrored input straight from the
# blur (no `a` row) made it 1.07 ms (nine such gathers per edge vector).
EDGE_LANES = 16
POOL = int(os.environ["HL_NUM_THREADS"])


def build(schedule, parallel):
    """The pipeline under `schedule`, compiled to a callable (input buffer, output buffer)."""
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    x, y = hl.Var("x"), hl.Var("y")
    a = hl.BoundaryConditions.mirror_interior(inp)
    u16, i16, i32 = hl.UInt(16), hl.Int(16), hl.Int(32)

    v = hl.Func("v")
    v[x, y] = hl.cast(u16, a[x, y - 1]) + 2 * hl.cast(u16, a[x, y]) + hl.cast(u16, a[x, y + 1])
    blur = hl.Func("blur")
    blur[x, y] = hl.cast(hl.UInt(8), (v[x - 1, y] + 2 * v[x, y] + v[x + 1, y] + 8) >> 4)

    b = lambda dx, dy: hl.cast(i16, blur[x + dx, y + dy])  # noqa: E731
    s = lambda dx: b(dx, -1) + 2 * b(dx, 0) + b(dx, 1)  # noqa: E731
    d = lambda dx: b(dx, 1) - b(dx, -1)  # noqa: E731
    gx = hl.Func("gx")
    gx[x, y] = s(1) - s(-1)
    gy = hl.Func("gy")
    gy[x, y] = d(-1) + 2 * d(0) + d(1)

    mag = hl.Func("mag")
    sq = hl.cast(i32, gx[x, y]) * hl.cast(i32, gx[x, y]) + hl.cast(i32, gy[x, y]) * hl.cast(i32, gy[x, y])
    mag[x, y] = hl.cast(hl.UInt(8), hl.min(hl.sqrt(hl.cast(hl.Float(32), sq)) + 0.5, 255.0))

    out = hl.Func("out")
    out[x, y] = hl.select(mag[x, y] > LEVEL, hl.u8(255), hl.u8(0))

    target = hl.get_jit_target_from_environment()
    vec = target.natural_vector_size(hl.UInt(8))
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    ax = a.args()[0]
    if schedule == "line":
        out.split(y, yo, yi, 16).vectorize(x, vec)
        if parallel:
            out.parallel(yo)
        blur.store_at(out, yo).compute_at(out, yi).vectorize(x, vec)
        a.store_at(out, yo).compute_at(out, yi).vectorize(ax, EDGE_LANES)
    elif schedule == "strip":
        out.split(y, yo, yi, 16).vectorize(x, vec)
        if parallel:
            out.parallel(yo)
        blur.compute_at(out, yo).vectorize(x, vec)
        a.store_at(out, yo).compute_at(blur, y).vectorize(ax, EDGE_LANES)
    elif schedule == "tile":
        out.tile(x, y, xo, yo, xi, yi, 256, 32).vectorize(xi, vec)
        if parallel:
            out.parallel(yo)
        blur.compute_at(out, xo).vectorize(x, vec)
        a.compute_at(out, xo).vectorize(ax, EDGE_LANES)
    else:
        raise SystemExit(f"HALIDE_SCHEDULE: unknown schedule {schedule} (line, strip, tile)")
    return out.compile_to_callable([inp], target)


class Pipeline:
    """The compiled pipeline (serial and parallel) over one input image, output preallocated."""

    def __init__(self, a, schedule):
        h, w = a.shape
        self.a = hl.Buffer(np.ascontiguousarray(a))  # numpy (h, w) -> Halide (x = w, y = h)
        self.out_np = np.zeros((h, w), np.uint8)
        self.out = hl.Buffer(self.out_np)
        self.serial = build(schedule, False)
        self.parallel = build(schedule, True)

    def run(self, threads):
        f = self.serial if threads == 1 else self.parallel
        f(self.a, self.out)


def check_all(p, want):
    """Halide's output at 1 thread and at the pool's size against `want`."""
    for threads in sorted({1, POOL}):
        p.out_np.fill(0x5A)
        p.run(threads)
        r = compare("Halide", p.out_np, want)
        if r != "ok":
            return f"{r} ({threads} threads)"
    return "ok"


def version():
    """The installed `halide` package's version (the module has no `__version__`)."""
    try:
        from importlib.metadata import version as v

        return v("halide")
    except Exception:
        return "unknown"


class Side:
    """This process's side of `pipeline_server.serve`."""

    name = "Halide"

    def __init__(self, schedule):
        self.schedule, self.p, self.extra = schedule, None, {}

    def load(self, a):
        self.p = None
        self.p = Pipeline(a, self.schedule)

    def refuse(self, threads):
        return None if threads in (1, POOL) else f"{threads} threads, but HL_NUM_THREADS is {POOL}"

    def run(self, threads):
        self.p.run(threads)

    def check(self, want):
        return check_all(self.p, want)

    def version(self):
        return f"{version()} ({self.schedule} schedule, HL_NUM_THREADS={POOL})"


def main():
    schedule = os.environ.get("HALIDE_SCHEDULE", "line")
    if sys.argv[1:2] == ["--serve"]:
        return serve(Side(schedule))
    if sys.argv[1:2] == ["--check"]:
        a_path, w, h, want_path = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        p = Pipeline(np.fromfile(a_path, np.uint8).reshape(h, w), schedule)
        r = check_all(p, np.fromfile(want_path, np.uint8).reshape(h, w))
        print(r)
        sys.exit(0 if r == "ok" else 1)
    print(__doc__, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
