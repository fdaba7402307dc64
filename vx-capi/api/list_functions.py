#!/usr/bin/env python3
# Copyright The vx-rs developers
# SPDX-License-Identifier: Apache-2.0
"""Writes vx-capi/api/functions.txt: every function the crate's OpenVX headers declare.

    python3 vx-capi/api/list_functions.py            # rewrites vx-capi/api/functions.txt
    python3 vx-capi/api/list_functions.py --check    # exit 1 if the file is out of date
    python3 vx-capi/api/list_functions.py --include DIR --out -   # other headers, to stdout

One line per function: header, return type, name and the whole prototype on one line,
separated by tabs, sorted by header then name. Read from vx-capi/include/VX (not from the
Khronos headers), so the list is what libopenvx.so has to export. Standard library only.
"""
import argparse
import os
import re
import sys

HEADERS = [
    "vx.h", "vx_types.h", "vx_vendors.h", "vx_kernels.h", "vx_api.h", "vx_nodes.h",
    "vxu.h", "vx_compatibility.h", "vx_khr_user_data_object.h", "vx_khr_pipelining.h",
    "vx_khr_nn.h",
]

HERE = os.path.dirname(os.path.abspath(__file__))


def strip_comments(text):
    """Removes C comments and preprocessor lines, leaving strings alone."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    text = "".join(out).replace("\\\n", " ")
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))


def functions(include):
    rows = []
    for h in HEADERS:
        path = os.path.join(include, "VX", h)
        text = strip_comments(open(path, encoding="utf-8").read())
        for m in re.finditer(r"\bVX_API_ENTRY\b([^;{}]*);", text):
            proto = re.sub(r"\s+", " ", "VX_API_ENTRY" + m.group(1)).strip()
            proto = re.sub(r"\( ", "(", re.sub(r" \)", ")", proto)) + ";"
            pm = re.match(r"VX_API_ENTRY (.*?) ?\bVX_API_CALL (\w+) ?\(", proto)
            if not pm:
                sys.exit("list_functions.py: %s: not understood: %s" % (h, proto))
            rows.append((h, pm.group(1).strip(), pm.group(2), proto))
    names = [r[2] for r in rows]
    dups = sorted(set(n for n in names if names.count(n) > 1))
    if dups:
        sys.exit("list_functions.py: declared more than once: %s" % ", ".join(dups))
    rows.sort(key=lambda r: (r[0], r[2]))
    return "".join("\t".join(r) + "\n" for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--include", default=os.path.join(HERE, "..", "include"), help="directory holding VX/*.h")
    ap.add_argument("--out", default=os.path.join(HERE, "functions.txt"), help="output file, or - for stdout")
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = ap.parse_args()
    text = functions(args.include)
    if args.check:
        old = open(args.out, encoding="utf-8").read() if os.path.exists(args.out) else ""
        if old != text:
            sys.exit("list_functions.py: %s is out of date; rerun vx-capi/api/list_functions.py" % args.out)
        return
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        sys.stderr.write("wrote %s: %d functions\n" % (args.out, text.count("\n")))


if __name__ == "__main__":
    main()
