"""What the two long-lived peer processes of `cargo bench -p vx-tests --bench performance`
(`halide_bench.py`, `gapi_bench.py`) share: the `--serve` line protocol and the comparison of an
output with vx's. Each answers one line per command, whatever happens:

  load W H A_PATH B_PATH   -> ok                the pipeline over the raw U8 W×H image at A_PATH
  time OP THREADS CALLS    -> seconds/call      (OP: pipeline; one untimed call first)
  version                  -> the side's version line
  check PATH               -> ok | ...          its output against the raw U8 W×H image at PATH
  <extra>                  -> the side's own commands (e.g. `fluid`)

A side is an object with `name`, `load(a)` (a H×W uint8 array), `refuse(threads)` (None, or why
it cannot run with that many), `run(threads)`, `check(want)`, `version()` and `extra` (command →
function of no argument returning the answer).
"""
import sys
import time

import numpy as np


def compare(name, got, want, inexact=False):
    """'ok', or where and how `got` differs from `want`: 'mismatch: …', or 'inexact: …' (with the
    count of higher and lower pixels and the largest difference) for a side that is not exact by
    design."""
    if want.shape != got.shape:
        return f"mismatch: shape {got.shape} against {want.shape}"
    diff = np.argwhere(got != want)
    if len(diff) == 0:
        return "ok"
    y, x = diff[0]
    up, down = int((got > want).sum()), int((got < want).sum())
    dmax = int(np.abs(got.astype(np.int16) - want.astype(np.int16)).max())
    return (
        f"{'inexact' if inexact else 'mismatch'}: {len(diff)} of {got.size} pixels differ ({up} where {name} is "
        f"higher, {down} lower; max difference {dmax}), first at x={x} y={y}: {name} {got[y, x]}, expected "
        f"{want[y, x]}"
    )


def serve(side):
    """Answer the protocol on stdin / stdout until stdin ends."""
    shape = None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == "load":
                w, h = int(cmd[1]), int(cmd[2])
                shape = None
                side.load(np.fromfile(cmd[3], np.uint8).reshape(h, w))
                shape = (h, w)
                print("ok", flush=True)
            elif cmd[0] == "time":
                op, threads, calls = cmd[1], int(cmd[2]), int(cmd[3])
                why = f"{side.name} has only pipeline, not {op}" if op != "pipeline" else side.refuse(threads)
                if why:
                    print(f"error: {why}", flush=True)
                    continue
                side.run(threads)
                t = time.perf_counter()
                for _ in range(calls):
                    side.run(threads)
                print((time.perf_counter() - t) / calls, flush=True)
            elif cmd[0] == "check":
                print(side.check(np.fromfile(cmd[1], np.uint8).reshape(shape)), flush=True)
            elif cmd[0] == "version":
                print(side.version(), flush=True)
            elif cmd[0] in side.extra:
                print(side.extra[cmd[0]](), flush=True)
            else:
                print("error: unknown command " + cmd[0], flush=True)
        except Exception as e:  # one answer line per command, whatever happens
            print(f"error: {type(e).__name__}: {e}".replace("\n", " "), flush=True)
