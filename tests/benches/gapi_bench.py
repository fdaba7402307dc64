#!/usr/bin/env python3
"""G-API Fluid side of the 4-node edge pipeline in `cargo bench -p vx-tests --bench performance`
(issue 34, `VX_PERF_GAPI=1`): gaussian 3×3 → Sobel 3×3 → magnitude → threshold at 100, the same
arithmetic as vx_filters (and as `halide_bench.py`, whose docstring spells it out), as one OpenCV
G-API graph compiled for the Fluid backend. Needs `opencv-contrib-python-headless` (the plain
`opencv-python-headless` 5 wheels have no `cv2.gapi`; the two install the same `cv2` package, so a
venv holds one or the other, never both).

The graph (`GAPI_BLUR=exact`, the default), u8 input, u8 binary output, every border reflect-101:
  s    = sepFilter(a, CV_16S, [1 2 1], [1 2 1])         the unnormalized 3×3 sum, 0..4080
  blur = convertTo(s, CV_8U, alpha=1/16, beta=1/32)     = (s + 8) >> 4, vx's rounding (below)
  gx, gy = SobelXY(blur, CV_16S, order 1, ksize 3)
  mag  = convertTo(sqrt(add(mul(gx, gx, 1, CV_32F), mul(gy, gy, 1, CV_32F))), CV_8U)
  out  = threshold(mag, 100, 255, THRESH_BINARY)
All nine operations run in Fluid, in one Fluid island: sepFilter, convertTo (×2), SobelXY, mul
(×2, S16 × S16 → F32), add, sqrt, threshold from `cv2.gapi.{core,imgproc}.fluid.kernels()`, passed
(combined) as the only compile argument. (Converting gx and gy to F32 first, two more operations,
was 8 % slower: 4.63 against 4.27 ms at 1920×1080, 18.5 against 17.1 at 3840×2160; G-API's own
`gaussianBlur` instead of sepFilter + convertTo was no faster.)

Fluid, checked: G-API silently falls back to its CPU (OpenCV) kernels for an operation the package
lacks, so a compile error would prove nothing. Instead `load` compiles with OpenCV's log at INFO and
reads the Fluid backend's own lines: exactly one `GFluidExecutable` with 11 fluid buffers (the
input, the 9 intermediates, the output) and one compilation per size (the first `apply` of a size
compiles; G-API reuses the compiled graph while the input's metadata stays the same). Anything else
and `load` answers an error. (Tried: `equalizeHist`, which has no Fluid kernel, between two Fluid
`bitwise_not`s compiles and runs without a word, in G-API's CPU backend; the log then shows two
Fluid islands of 2 buffers each, and this check rejects it.) The Fluid island's line buffers
("internal buffers" in that log): 40.7 KB at 640×480, 122 KB at 1920×1080, 244 KB at 3840×2160.

Exactness (checked against vx's output by `check`, and on noise by the Rust bench):
- blur: G-API's own `gaussianBlur(a, (3,3), 0)` in Fluid does *not* round like vx, or like
  `cv2.GaussianBlur`: on uniform noise it differs from both in 83 % of the pixels, by up to 6
  (reflect-101), although its kernel is [1/4 1/2 1/4]. The exact graph therefore sums with integer
  weights (`sepFilter` to S16, the weights [1 2 1] exact) and rounds with `convertTo`, which computes
  saturate_cast<u8>(s·alpha + beta), rounding to nearest (even): s/16 + 1/32 is exact in f32 and is
  never halfway, and it rounds to floor((s + 8) / 16) for every s in 0..4080 (`--selftest` checks
  all 4081). `GAPI_BLUR=gaussian` uses `gaussianBlur` instead (one op fewer, no faster, not exact:
  on 640×480 noise 6612 of the 307200 output pixels differ, i.e. are edges on one side only; `check`
  then answers `inexact: N of M pixels differ (U where G-API is higher, D lower; max difference
  255), first at …`, and the bench prints that in its report instead of stopping).
- Sobel: integer weights in an S16 result, exact.
- magnitude: vx computes u8_saturate(sqrt(f32(gx² + gy²)) + 0.5), rounding halves up; convertTo
  rounds halves to even. gx² + gy² ≤ 2·1020² < 2^24 is exact in f32 (so are the F32 products and
  their sum here), and sqrt of an integer n is never within 0.25 / (2·sqrt(n) + 1) of a half, far
  more than f32's rounding below 256: the two roundings agree on every pixel (checked on noise).
- threshold: mag > 100 → 255, else 0, as vx.

Threads: G-API's Fluid backend in this build runs on the calling thread only. `time OP N CALLS`
sets `cv2.setNumThreads(N)` anyway (for OpenCV code under the kernels), but measured the pipeline
takes the same time at 1 and 2, with the process's CPU time equal to the wall time (1.00) at 2. The
Fluid parallel-for compile arguments (`GFluidParallelOutputRois`, `GFluidParallelFor`) and the
threaded executor are not in the Python bindings (`GCompileArg` takes only kernel packages, network
packages, queue capacity and tracker parameters). So the bench's 2-thread G-API cells are serial.

Outputs: the Python bindings have no `GCompiled` and no output arguments (`GComputation.apply`
takes the inputs and compile arguments and returns new arrays): every call allocates the output
and the binding copies it into a new numpy array. That cost is in the times: a one-operation Fluid
graph (`bitwise_not`) takes 0.32 ms per 1920×1080 frame against 0.15 for `cv2.bitwise_not(dst=)`,
1.26 against 0.66 at 3840×2160 — about 4 % of the pipeline's 4.3 / 17.1 ms (measured standalone on
the bench's 2-vCPU machine, 2026-11-26).

usage: gapi_bench.py --serve          the line protocol of `pipeline_server.py`:
         load W H A_PATH B_PATH   -> ok        (compiles the graph for W×H, checks it is Fluid)
         time OP THREADS CALLS    -> seconds/call   (OP: pipeline)
         version                  -> OpenCV's version, the wheel, the backend and the blur
         fluid                    -> what `load` found: one Fluid island, its buffers
         check PATH               -> ok | inexact: ... (GAPI_BLUR=gaussian) | mismatch ...
                                     (G-API's output against the raw U8 W×H image at PATH)
       gapi_bench.py --check A_RAW W H EXPECTED_RAW    one-shot `check`; exit status 0 when ok
                                                       (or inexact, with GAPI_BLUR=gaussian)
       gapi_bench.py --selftest   Fluid check, the blur's rounding for all 4081 sums, and the
                                  graph against a numpy model of vx's arithmetic on noise
"""
import os
import re
import sys
import tempfile

import cv2
import numpy as np
from pipeline_server import compare, serve  # this folder: the shared protocol

LEVEL = 100
BORDER = cv2.BORDER_REFLECT_101
BLUR = os.environ.get("GAPI_BLUR", "exact")


def fluid_package():
    """Every Fluid kernel of OpenCV's G-API (core and imgproc), as one package."""
    g = cv2.gapi
    return g.combine(g.core.fluid.kernels(), g.imgproc.fluid.kernels())


def build(blur_kind=BLUR):
    """The edge pipeline as a G-API computation (u8 in, u8 out) and its number of data objects
    (input, intermediates, output: one Fluid buffer each when the graph is one Fluid island)."""
    g = cv2.gapi
    a = cv2.GMat()
    if blur_kind == "exact":
        w = np.array([1, 2, 1], np.float32)
        s = g.sepFilter(a, cv2.CV_16S, w, w, (-1, -1), (0, 0, 0, 0), BORDER)
        blur = g.convertTo(s, cv2.CV_8U, 1 / 16, 1 / 32)
        data = 2
    elif blur_kind == "gaussian":
        blur = g.gaussianBlur(a, (3, 3), 0, 0, BORDER)
        data = 1
    else:
        raise SystemExit(f"GAPI_BLUR: unknown blur {blur_kind} (exact, gaussian)")
    gx, gy = g.SobelXY(blur, cv2.CV_16S, 1, 3, 1, 0, BORDER)
    sq = g.add(g.mul(gx, gx, 1.0, cv2.CV_32F), g.mul(gy, gy, 1.0, cv2.CV_32F))
    mag = g.convertTo(g.sqrt(sq), cv2.CV_8U)
    out = g.threshold(mag, cv2.GScalar(float(LEVEL)), cv2.GScalar(255.0), cv2.THRESH_BINARY)
    return cv2.GComputation(a, out), data + 9  # a, gx, gy, gx², gy², sum, sqrt, mag, out


class Captured:
    """OpenCV's log at INFO into a string, while in the block. OpenCV writes INFO lines to stdout
    (warnings and errors to stderr): both file descriptors go to a temporary file meanwhile, which
    also keeps the log out of the `--serve` protocol's answers."""

    def __enter__(self):
        self.level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_INFO)
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = [os.dup(1), os.dup(2)]
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        cv2.utils.logging.setLogLevel(self.level)
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()


class Pipeline:
    """The compiled pipeline over one input image."""

    def __init__(self, a):
        self.a = np.ascontiguousarray(a)
        self.comp, self.buffers = build()
        self.args = [cv2.GCompileArg(fluid_package())]
        with Captured() as log:
            self.out = self.comp.apply([self.a], args=self.args)  # compiles
            self.out = self.comp.apply([self.a], args=self.args)  # reuses
        self.fluid = fluid_report(log.text, self.buffers)

    def run(self):
        # The bindings return a new array per call (see the docstring: no output arguments).
        self.out = self.comp.apply([self.a], args=self.args)


def fluid_report(log, buffers):
    """What OpenCV's INFO log says about the compilation; raises unless it is all one Fluid island
    (one Fluid buffer per data object) compiled once."""
    compiled = log.count("All compiler passes are successful")
    islands = re.findall(r"GFluidExecutable Initializing (\d+) fluid buffer", log)
    internal = re.findall(r"GFluidExecutable Internal buffers: ([0-9.]+ KB)", log)
    if compiled != 1 or islands != [str(buffers)]:
        raise RuntimeError(
            f"not one Fluid island compiled once: {compiled} compilations, Fluid islands with {islands} "
            f"buffers (want one with {buffers})"
        )
    return f"one Fluid island, {buffers} buffers, internal buffers {internal[0] if internal else '?'}"


def check(p, want):
    """G-API's output at 1 and 2 threads (`cv2.setNumThreads`) against `want`."""
    for threads in (1, 2):
        cv2.setNumThreads(threads)
        p.run()
        r = compare("G-API", p.out, want, inexact=BLUR == "gaussian")
        if r != "ok":
            return f"{r} (GAPI_BLUR={BLUR}, cv2.setNumThreads({threads}))"
    return "ok"


def version():
    try:
        from importlib.metadata import version as v

        wheel = "opencv-contrib-python-headless " + v("opencv-contrib-python-headless")
    except Exception:
        wheel = "cv2 with G-API"
    return f"{cv2.__version__} ({wheel}; Fluid backend; GAPI_BLUR={BLUR})"


def model(a):
    """vx_filters' arithmetic in numpy (the reference of `--selftest`)."""
    p = np.pad(a.astype(np.int32), 1, mode="reflect")  # numpy's reflect is reflect-101
    v = p[:-2] + 2 * p[1:-1] + p[2:]
    blur = (v[:, :-2] + 2 * v[:, 1:-1] + v[:, 2:] + 8) >> 4
    b = np.pad(blur, 1, mode="reflect")
    s, d = b[:-2] + 2 * b[1:-1] + b[2:], b[2:] - b[:-2]
    gx, gy = s[:, 2:] - s[:, :-2], d[:, :-2] + 2 * d[:, 1:-1] + d[:, 2:]
    mag = np.minimum(np.sqrt((gx * gx + gy * gy).astype(np.float32)) + np.float32(0.5), 255).astype(np.uint8)
    return np.where(mag > LEVEL, 255, 0).astype(np.uint8)


def selftest():
    # The blur's rounding: convertTo(s, u8, 1/16, 1/32) == (s + 8) >> 4 for every sum, in Fluid.
    g = cv2.gapi
    s_in = cv2.GMat()
    c = cv2.GComputation(s_in, g.convertTo(s_in, cv2.CV_8U, 1 / 16, 1 / 32))
    s = np.arange(4081, dtype=np.int16).reshape(1, -1)
    got = c.apply([s], args=[cv2.GCompileArg(fluid_package())])
    want = ((s.astype(np.int32) + 8) >> 4).astype(np.uint8)
    assert np.array_equal(got, want), "convertTo's rounding is not (s + 8) >> 4"
    print("blur rounding: convertTo(s, CV_8U, 1/16, 1/32) == (s + 8) >> 4 for s in 0..4080")
    rng = np.random.default_rng(34)
    for w, h in [(640, 480), (301, 203), (64, 3)]:
        a = rng.integers(0, 256, (h, w), dtype=np.uint8)
        p = Pipeline(a)
        want = model(a)
        r = check(p, want)
        edges = int((want == 255).sum())
        print(f"{w}x{h} noise ({edges} edge pixels): {r}; {p.fluid}")
        if r != "ok" and not r.startswith("inexact"):
            sys.exit(1)


class Side:
    """This process's side of `pipeline_server.serve`."""

    name = "G-API"

    def __init__(self):
        self.p = None
        self.extra = {"fluid": lambda: self.p.fluid}

    def load(self, a):
        self.p = None
        self.p = Pipeline(a)

    def refuse(self, threads):
        return None

    def run(self, threads):
        cv2.setNumThreads(threads)
        self.p.run()

    def check(self, want):
        return check(self.p, want)

    def version(self):
        return version()


def main():
    if sys.argv[1:2] == ["--serve"]:
        return serve(Side())
    if sys.argv[1:2] == ["--selftest"]:
        return selftest()
    if sys.argv[1:2] == ["--check"]:
        a_path, w, h, want_path = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        p = Pipeline(np.fromfile(a_path, np.uint8).reshape(h, w))
        r = check(p, np.fromfile(want_path, np.uint8).reshape(h, w))
        print(f"{r}; {p.fluid}")
        sys.exit(0 if r == "ok" or r.startswith("inexact") else 1)
    print(__doc__, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
