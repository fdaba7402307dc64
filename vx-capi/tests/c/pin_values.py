#!/usr/bin/env python3
# Copyright The vx-rs developers
# SPDX-License-Identifier: Apache-2.0
"""Writes header_pins.c: compile-time pins of the Khronos OpenVX 1.3.1 headers.

    python3 vx-capi/tests/c/pin_values.py --from-git /work/.mirror/KhronosGroup+OpenVX-api-docs/repo
    python3 vx-capi/tests/c/pin_values.py DIR      # DIR/VX/*.h (or DIR/*.h) are the Khronos headers

Everything is read from the Khronos headers and every value comes from a C compiler run
against them (nothing is evaluated here). header_pins.c, compiled against vx-capi's own
headers (header_pins.sh), then fails to compile if any pinned fact differs:

  - each integer macro and enumerator: its value; each macro: its type and that it is a
    macro; each enumerator: that it is not a macro;
  - other object-like macros: floats (value, type), strings (bytes), brace initialisers
    (element count), type aliases (the type), empty macros (empty);
  - function-like macros: defined, and for integer ones the value at two sets of arguments;
  - each enum tag: its size and underlying type;
  - each typedef: the type, as the Khronos header spells it, and its size;
  - each struct / union: size, alignment, tag, and per field: offset, size and type;
  - each function: the pointer type, as the Khronos header spells it.

Needs a gcc-compatible compiler ($CC or cc): it uses -fdirectives-only, __typeof__,
__builtin_types_compatible_p, __builtin_classify_type and __builtin_strcmp. Standard
library only.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HEADERS = [
    "vx.h", "vx_types.h", "vx_vendors.h", "vx_kernels.h", "vx_api.h", "vx_nodes.h",
    "vxu.h", "vx_compatibility.h", "vx_khr_user_data_object.h", "vx_khr_pipelining.h",
    "vx_khr_nn.h",
]
# What a program includes; vx.h brings in the other core headers.
INCLUDES = ["vx.h", "vxu.h", "vx_compatibility.h", "vx_khr_user_data_object.h", "vx_khr_pipelining.h",
            "vx_khr_nn.h"]
# The feature flags the OpenVX CTS builds with.
CTS_FLAGS = ["-DOPENVX_USE_USER_DATA_OBJECT", "-DOPENVX_USE_PIPELINING", "-DOPENVX_USE_STREAMING",
             "-DOPENVX_CONFORMANCE_VISION", "-DOPENVX_USE_ENHANCED_VISION"]
# Sample arguments for integer function-like macros.
SAMPLE_ARGS = [[1, 2, 3, 4, 5, 6], [0xABC, 0xDE, 0x5A, 0x31, 0x7F, 0x80]]

C_KEYWORDS = set("""auto break case char const continue default do double else enum extern float for
goto if inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Bool _Complex _Alignof _Alignas _Generic _Static_assert
__typeof__ __attribute__""".split())

TYPE_NAME = ('_Generic((x), _Bool: "_Bool", char: "char", signed char: "signed char", '
             'unsigned char: "unsigned char", short: "short", unsigned short: "unsigned short", '
             'int: "int", unsigned int: "unsigned int", long: "long", unsigned long: "unsigned long", '
             'long long: "long long", unsigned long long: "unsigned long long", float: "float", '
             'double: "double", long double: "long double", default: "?")')


def die(msg):
    sys.stderr.write("pin_values.py: %s\n" % msg)
    sys.exit(1)


def strip_comments(text):
    """Removes C comments (keeping line structure), leaving strings and char literals alone."""
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
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def split_top(s, sep=","):
    """Splits at `sep` outside (), [] and {}."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, **kw)


class Model:
    """What the Khronos headers declare, per header, in declaration order."""

    def __init__(self):
        self.items = {h: [] for h in HEADERS}   # header -> [(kind, data)]
        self.macros = {}                         # name -> (header, params or None, body)
        self.enumerators = {}                    # name -> header
        self.functions = {}                      # name -> header
        self.typedefs = {}                       # name -> header
        self.tags = {}                           # "struct X" / "union X" / "enum X" -> header
        self.notes = []                          # things not pinned, with the reason
        self.tested = set()                      # identifiers the headers test in #if / #ifdef
        self.guards = set()                      # include guards


def parse(cc, khr_dir, work):
    model = Model()
    strip_dir = os.path.join(work, "stripped", "VX")
    os.makedirs(strip_dir)
    for h in HEADERS:
        raw = open(os.path.join(khr_dir, "VX", h), encoding="utf-8", errors="replace").read()
        text = strip_comments(raw)
        directives = [l.strip() for l in text.split("\n") if l.strip().startswith("#")]
        for line in directives:
            m = re.match(r"#\s*(if|ifdef|ifndef|elif)\b(.*)", line)
            if m:
                model.tested |= set(re.findall(r"[A-Za-z_]\w*", m.group(2))) - {"defined"}
        # The include guard: a leading `#ifndef X` / `#define X`.
        if len(directives) > 1:
            g1 = re.match(r"#\s*ifndef\s+(\w+)", directives[0])
            g2 = re.match(r"#\s*define\s+(\w+)", directives[1])
            if g1 and g2 and g1.group(1) == g2.group(1):
                model.guards.add(g1.group(1))
        open(os.path.join(strip_dir, h), "w").write(text)
    driver = os.path.join(work, "driver.c")
    open(driver, "w").write("".join("#include <VX/%s>\n" % h for h in INCLUDES))
    r = run([cc, "-E", "-fdirectives-only", "-dD", *CTS_FLAGS, "-I", os.path.dirname(strip_dir), driver])
    if r.returncode:
        die("preprocessing the Khronos headers failed:\n" + r.stderr)
    code = {h: [] for h in HEADERS}
    cur = None
    for line in r.stdout.split("\n"):
        m = re.match(r'#\s*\d+\s+"([^"]*)"', line)
        if m:
            path = m.group(1)
            cur = os.path.basename(path) if os.path.dirname(path).endswith("stripped/VX") else None
            continue
        if cur is None:
            continue
        m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$", line)
        if m:
            name, params, body = m.group(1), m.group(3), m.group(4).strip()
            params = None if m.group(2) is None else [p.strip() for p in params.split(",") if p.strip()]
            model.macros[name] = (cur, params, body)
            model.items[cur].append(("macro", name))
            code[cur].append(" ")
            continue
        if re.match(r"\s*#", line):
            if not re.match(r"\s*#\s*undef\b", line):
                model.notes.append("%s: directive left in preprocessed text: %s" % (cur, line.strip()))
            continue
        code[cur].append(line)
    seen = set(h for h in HEADERS if code[h] or model.items[h])
    missing = [h for h in HEADERS if h not in seen]
    if missing:
        die("these headers were not reached from %s: %s" % (INCLUDES, missing))
    for h in HEADERS:
        parse_code(model, h, "\n".join(code[h]))
    return model


def parse_code(model, header, text):
    for stmt in split_top(text, ";"):
        s = norm(stmt)
        if not s:
            continue
        try:
            parse_stmt(model, header, s)
        except ValueError as e:
            model.notes.append("%s: not pinned (%s): %s" % (header, e, s[:100]))


def parse_stmt(model, header, s):
    m = re.match(r"(typedef )?enum (\w+)? ?\{(.*)\} ?(\w+)?$", s)
    if m:
        tag = m.group(2)
        if tag:
            model.tags["enum " + tag] = header
            model.items[header].append(("enum_tag", tag))
        for item in split_top(m.group(3)):
            item = item.strip()
            if not item:
                continue
            name = re.match(r"([A-Za-z_]\w*)", item).group(1)
            model.enumerators[name] = header
            model.items[header].append(("enumerator", name))
        if m.group(1) and m.group(4):
            model.typedefs[m.group(4)] = header
            model.items[header].append(("typedef", (m.group(4), "enum " + tag if tag else None)))
        return
    m = re.match(r"(typedef )?(struct|union) (\w+)? ?\{(.*)\} ?(\w+)?$", s)
    if m:
        kind, tag, body, name = m.group(2), m.group(3), m.group(4), m.group(5)
        fields = []
        for f in split_top(body, ";"):
            f = norm(f)
            if not f:
                continue
            if len(split_top(f)) > 1 or "(" in f or ":" in f:
                raise ValueError("field form not handled: %s" % f)
            fm = re.match(r"(.*?)\b([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", f)
            if not fm:
                raise ValueError("field not understood: %s" % f)
            ftype = norm(fm.group(1) + " " + fm.group(3))
            fields.append((fm.group(2), ftype))
        if tag:
            model.tags["%s %s" % (kind, tag)] = header
        if m.group(1) and name:
            model.typedefs[name] = header
        model.items[header].append(("aggregate", (kind, tag, name if m.group(1) else None, fields)))
        return
    if s.startswith("typedef "):
        rest = s[len("typedef "):]
        fm = re.match(r"(.*\(\s*(?:\w+\s+)?\*\s*)(\w+)(\s*\).*)$", rest)
        if fm and "(" in rest:
            name, ty = fm.group(2), norm(fm.group(1) + fm.group(3))
        else:
            fm = re.match(r"(.*?)\b([A-Za-z_]\w*)$", rest)
            if not fm:
                raise ValueError("typedef not understood")
            name, ty = fm.group(2), norm(fm.group(1))
        model.typedefs[name] = header
        model.items[header].append(("typedef", (name, ty)))
        tm = re.match(r"(struct|union|enum) (\w+)\b", ty)
        if tm and ("%s %s" % (tm.group(1), tm.group(2))) not in model.tags and tm.group(1) != "enum":
            model.tags["%s %s" % (tm.group(1), tm.group(2))] = header
        return
    m = re.match(r"VX_API_ENTRY (.*?)\s*\bVX_API_CALL (\w+) ?\((.*)\)$", s)
    if m:
        ret, name, params = norm(m.group(1)), m.group(2), norm(m.group(3))
        model.functions[name] = header
        model.items[header].append(("function", (name, ret, params)))
        return
    raise ValueError("declaration form not handled")


def c_string(b):
    out = []
    for ch in b:
        if ch in (0x22, 0x5C):
            out.append("\\" + chr(ch))
        elif 0x20 <= ch < 0x7F and ch != 0x3F:
            out.append(chr(ch))
        else:
            out.append("\\%03o" % ch)
    return '"' + "".join(out) + '"'


def free_identifiers(model, body, seen=None, params=()):
    """Identifiers a macro body depends on that none of the headers in HEADERS defines."""
    seen = set() if seen is None else seen
    seen |= set(params)
    free = set()
    for ident in re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"'(\\.|[^'])*'|\"(\\.|[^\"])*\"", "", body)):
        if ident in seen or ident in C_KEYWORDS:
            continue
        seen.add(ident)
        if ident in model.macros:
            free |= free_identifiers(model, model.macros[ident][2], set(seen), model.macros[ident][1] or ())
        elif (ident in model.enumerators or ident in model.typedefs or ident in model.functions
              or any(t.split(" ", 1)[1] == ident for t in model.tags) or ident.startswith("__")):
            continue
        elif re.match(r"u?int\d+_t$|u?intptr_t$|size_t$", ident):
            continue
        else:
            free.add(ident)
    return free


def probe_compile(cc, khr_inc, work, probes):
    """probes: list of (key, text). Returns the keys whose text compiles against the Khronos
    headers, dropping failing probes until the rest compiles cleanly."""
    live = list(probes)
    for _ in range(50):
        lines, owner = [], {}
        lines.append("#include <stddef.h>")
        lines += ["#include <VX/%s>" % h for h in INCLUDES]
        lines.append("#define PIN_STR_(x) #x")
        lines.append("#define PIN_STR(x) PIN_STR_(x)")
        for idx, (key, text) in enumerate(live):
            # Each probe in its own block, so a failed tag probe cannot poison the others.
            lines.append("static void pin_probe_%d(void) {" % idx)
            for t in text.split("\n"):
                lines.append(t)
                owner[len(lines)] = idx
            lines.append("}")
        src = os.path.join(work, "probe.c")
        open(src, "w").write("\n".join(lines) + "\n")
        r = run([cc, "-std=c11", "-pedantic-errors", "-fsyntax-only", "-w", "-ftrack-macro-expansion=0", *CTS_FLAGS, "-I", khr_inc, src])
        if r.returncode == 0:
            return set(k for k, _ in live)
        # An error inside a macro expansion is reported at the macro's definition, with
        # the probe line in a following note: blame every probe line of the diagnostic.
        bad, in_error = set(), False
        for dl in r.stderr.split("\n"):
            if re.search(r": (fatal )?error:", dl):
                in_error = True
            elif re.search(r": warning:", dl):
                in_error = False
            if in_error:
                for ln in re.findall(r"probe\.c:(\d+):", dl):
                    if int(ln) in owner:
                        bad.add(owner[int(ln)])
        if not bad:
            die("probe compile failed outside the probes:\n" + r.stderr[:4000])
        live = [p for i, p in enumerate(live) if i not in bad]
    die("probe compile did not converge")


def wrap_free(free, text):
    if not free:
        return text
    pre = "\n".join("#define %s 1" % f for f in sorted(free))
    post = "\n".join("#undef %s" % f for f in sorted(free))
    return pre + "\n" + text + "\n" + post


def classify(cc, khr_inc, work, model):
    """Returns {macro: (kind, free_identifiers)} for the macros of the headers in HEADERS."""
    probes = []
    free_of = {}
    for name, (header, params, body) in model.macros.items():
        free = free_identifiers(model, body, params=params or ())
        free_of[name] = free
        pid = re.sub(r"\W", "_", name)
        if params is None:
            if body == "":
                continue
            ints = ("enum { pin_i_%s = (%s) != 0 }; _Static_assert(__builtin_classify_type(%s) >= 1 && "
                    "__builtin_classify_type(%s) <= 4, \"\");" % (pid, name, name, name))
            probes.append(((name, "int"), wrap_free(free, ints)))
            probes.append(((name, "float"), wrap_free(free, "_Static_assert(__builtin_classify_type(%s) == 8, \"\"); "
                                              "static const double pin_f_%s = %s;" % (name, pid, name))))
            probes.append(((name, "string"), "static const char pin_s_%s[] = \"\" %s \"\";" % (pid, name)))
            probes.append(((name, "init"), "static const long long pin_l_%s[] = %s;" % (pid, name)))
            if re.match(r"[A-Za-z_]\w*$", body):
                for kw in ("", "enum ", "struct ", "union "):
                    probes.append(((name, "type:" + kw), "typedef %s%s pin_t_%s_%s; _Static_assert(sizeof(%s%s) > 0, \"\");"
                                   % (kw, name, pid, kw.strip() or "t", kw, name)))
        else:
            for si, args in enumerate(SAMPLE_ARGS):
                call = "%s(%s)" % (name, ", ".join(hex(a) for a in args[:len(params)]))
                probes.append(((name, "fn%d" % si), wrap_free(
                    free, "enum { pin_fn%d_%s = (%s) != 0 }; _Static_assert(__builtin_classify_type(%s) >= 1 && "
                          "__builtin_classify_type(%s) <= 4, \"\");" % (si, pid, call, call, call))))
    ok = probe_compile(cc, khr_inc, work, probes)
    result = {}
    for name, (header, params, body) in model.macros.items():
        if params is not None:
            kinds = [k for k in ("fn0", "fn1") if (name, k) in ok]
            result[name] = ("fn" if kinds == ["fn0", "fn1"] else "defined", free_of[name])
            continue
        if body == "":
            result[name] = ("empty", set())
            continue
        for kind in ("int", "float", "string", "init", "type:", "type:enum ", "type:struct ", "type:union "):
            if (name, kind) in ok:
                result[name] = (kind, free_of[name] if kind in ("int", "float") else set())
                break
        else:
            result[name] = ("defined", set())
    return result


def measure(cc, khr_inc, work, model, kinds):
    """Compiles and runs a program against the Khronos headers; returns {key: value-string}."""
    out = ["#include <stdio.h>", "#include <stddef.h>"]
    out += ["#include <VX/%s>" % h for h in INCLUDES]
    out.append("#define TN(x) " + TYPE_NAME)
    out.append("static void str(const char *k, const char *s, size_t n) { size_t i; printf(\"%s \", k); "
               "for (i = 0; i < n; i++) printf(\"%02x\", (unsigned char)s[i]); printf(\"\\n\"); }")
    out.append("int main(void) {")

    def p_int(key, expr):
        out.append('  printf("%%s %%lld %%s\\n", "%s", (long long)(%s), TN(%s));' % (key, expr, expr))

    for h in HEADERS:
        for kind, data in model.items[h]:
            if kind == "macro":
                name = data
                mk, free = kinds[name]
                pre = ["#define %s 1" % f for f in sorted(free)]
                post = ["#undef %s" % f for f in sorted(free)]
                out.extend(pre)
                if mk == "int":
                    p_int("macro:" + name, name)
                elif mk == "float":
                    out.append('  printf("%%s %%a %%s\\n", "macro:%s", (double)(%s), TN(%s));' % (name, name, name))
                elif mk == "string":
                    out.append('  str("macro:%s", %s, sizeof(%s));' % (name, name, name))
                elif mk == "init":
                    out.append('  printf("%%s %%d\\n", "macro:%s", (int)(sizeof((long long[])%s) / sizeof(long long)));'
                               % (name, name))
                elif mk == "fn":
                    params = model.macros[name][1]
                    for si, args in enumerate(SAMPLE_ARGS):
                        p_int("fn%d:%s" % (si, name), "%s(%s)" % (name, ", ".join(hex(a) for a in args[:len(params)])))
                out.extend(post)
            elif kind == "enumerator":
                p_int("enum:" + data, data)
            elif kind == "enum_tag":
                out.append('  printf("%%s %%d %%s\\n", "tag:%s", (int)sizeof(enum %s), TN((enum %s)0));' % (data, data, data))
            elif kind == "typedef":
                name = data[0]
                out.append('  printf("%%s %%d\\n", "typedef:%s", (int)sizeof(%s));' % (name, name))
            elif kind == "aggregate":
                ak, tag, name, fields = data
                ty = name or "%s %s" % (ak, tag)
                out.append('  printf("%%s %%d %%d\\n", "agg:%s", (int)sizeof(%s), (int)_Alignof(%s));' % (ty, ty, ty))
                for f, _ in fields:
                    out.append('  printf("%%s %%d %%d\\n", "field:%s.%s", (int)offsetof(%s, %s), (int)sizeof(((%s *)0)->%s));'
                               % (ty, f, ty, f, ty, f))
    out.append("  return 0;\n}")
    src = os.path.join(work, "measure.c")
    exe = os.path.join(work, "measure")
    open(src, "w").write("\n".join(out) + "\n")
    r = run([cc, "-std=c11", "-w", *CTS_FLAGS, "-I", khr_inc, src, "-o", exe])
    if r.returncode:
        die("measuring program failed to compile against the Khronos headers:\n" + r.stderr[:4000])
    r = run([exe])
    if r.returncode:
        die("measuring program failed")
    vals = {}
    for line in r.stdout.split("\n"):
        if line:
            k, v = line.split(" ", 1)
            vals[k] = v
    return vals


def lit(v):
    return "%dLL" % int(v)


def emit(model, kinds, vals):
    P = []       # pin lines
    counts = {"constants": 0, "macros_other": 0, "fn_macros": 0, "enum_tags": 0, "typedefs": 0,
              "aggregates": 0, "fields": 0, "functions": 0, "asserts": 0}
    skipped = []

    def A(expr, msg):
        P.append('_Static_assert(%s, "%s");' % (expr, msg.replace('"', '\\"')))
        counts["asserts"] += 1

    def tc(a, b):
        return "__builtin_types_compatible_p(%s, %s)" % (a, b)

    for h in HEADERS:
        P.append("")
        P.append("/* ---- %s ---- */" % h)
        for kind, data in model.items[h]:
            if kind == "macro":
                name = data
                header, params, body = model.macros[name]
                mk, free = kinds[name]
                P.append("#ifndef %s" % name)
                P.append('#error "%s: a macro in the Khronos headers"' % name)
                P.append("#endif")
                counts["asserts"] += 1
                pre = ["#define %s 1  /* not defined by these headers; a sample value */" % f for f in sorted(free)]
                post = ["#undef %s" % f for f in sorted(free)]
                if mk == "int":
                    v, t = vals["macro:" + name].split(" ", 1)
                    P.extend(pre)
                    A("(long long)(%s) == %s" % (name, lit(v)), name)
                    A(tc("__typeof__(%s)" % name, t), name + ": type " + t)
                    P.extend(post)
                    counts["constants"] += 1
                elif mk == "float":
                    v, t = vals["macro:" + name].split(" ", 1)
                    P.extend(pre)
                    A("(%s) == %s%s" % (name, v, "f" if t == "float" else ""), name)
                    A(tc("__typeof__(%s)" % name, t), name + ": type " + t)
                    P.extend(post)
                    counts["macros_other"] += 1
                elif mk == "string":
                    b = bytes.fromhex(vals["macro:" + name])
                    s = c_string(b[:-1])
                    A("sizeof(%s) == %d" % (name, len(b)), name + ": length")
                    A("__builtin_strcmp(%s, %s) == 0" % (name, s), name + ": " + s.replace("\\", "\\\\").replace('"', "'"))
                    counts["macros_other"] += 1
                elif mk == "init":
                    n = int(vals["macro:" + name])
                    A("sizeof((long long[])%s) / sizeof(long long) == %d" % (name, n), name + ": element count")
                    counts["macros_other"] += 1
                elif mk.startswith("type:"):
                    kw = mk[len("type:"):]
                    A(tc(kw + name, kw + body), "%s: the type %s%s" % (name, kw, body))
                    counts["macros_other"] += 1
                elif mk == "empty":
                    A("sizeof(PIN_STR(%s)) == 1" % name, name + ": empty")
                    counts["macros_other"] += 1
                elif mk == "fn":
                    P.extend(pre)
                    for si, args in enumerate(SAMPLE_ARGS):
                        v, t = vals["fn%d:%s" % (si, name)].split(" ", 1)
                        call = "%s(%s)" % (name, ", ".join(hex(a) for a in args[:len(params)]))
                        A("(long long)(%s) == %s" % (call, lit(v)), call)
                        A(tc("__typeof__(%s)" % call, t), call + ": type " + t)
                    P.extend(post)
                    counts["fn_macros"] += 1
                else:
                    why = ("function-like, not an integer expression" if params is not None
                           else "does not expand to an expression, string, initialiser or type")
                    skipped.append("%s (%s): only pinned as defined; %s: %s%s" % (
                        name, h, why, name + ("(%s)" % ", ".join(params) if params is not None else ""),
                        (" " + body) if body else ""))
            elif kind == "enumerator":
                v, t = vals["enum:" + data].split(" ", 1)
                P.append("#ifdef %s" % data)
                P.append('#error "%s: an enumerator, not a macro, in the Khronos headers"' % data)
                P.append("#endif")
                A("(long long)(%s) == %s" % (data, lit(v)), data)
                counts["constants"] += 1
            elif kind == "enum_tag":
                size, t = vals["tag:" + data].split(" ", 1)
                A("sizeof(enum %s) == %s" % (data, size), "enum %s: size" % data)
                A(tc("enum " + data, t), "enum %s: underlying type %s" % (data, t))
                counts["enum_tags"] += 1
            elif kind == "typedef":
                name, ty = data
                if ty:
                    A(tc(name, ty), "%s: %s" % (name, ty))
                A("sizeof(%s) == %s" % (name, vals["typedef:" + name]), name + ": size")
                counts["typedefs"] += 1
            elif kind == "aggregate":
                ak, tag, name, fields = data
                ty = name or "%s %s" % (ak, tag)
                size, align = vals["agg:" + ty].split()
                A("sizeof(%s) == %s" % (ty, size), ty + ": size")
                A("_Alignof(%s) == %s" % (ty, align), ty + ": alignment")
                if name and tag:
                    A(tc(name, "%s %s" % (ak, tag)), "%s: %s %s" % (name, ak, tag))
                for f, ftype in fields:
                    off, fsize = vals["field:%s.%s" % (ty, f)].split()
                    A("offsetof(%s, %s) == %s" % (ty, f, off), "%s.%s: offset" % (ty, f))
                    A("sizeof(((%s *)0)->%s) == %s" % (ty, f, fsize), "%s.%s: size" % (ty, f))
                    A(tc("__typeof__(((%s *)0)->%s)" % (ty, f), ftype), "%s.%s: %s" % (ty, f, ftype))
                    counts["fields"] += 1
                counts["aggregates"] += 1
                if name:
                    counts["typedefs"] += 1
            elif kind == "function":
                name, ret, params = data
                A(tc("__typeof__(&%s)" % name, "%s (VX_API_CALL *)(%s)" % (ret, params)), name)
                if params == "void":
                    # A `()` declaration would be compatible with `(void)`; this tells them apart.
                    A("!" + tc("__typeof__(&%s)" % name, "%s (VX_API_CALL *)(int)" % ret), name + ": a prototype")
                counts["functions"] += 1
    return P, counts, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("khronos", nargs="?", help="directory holding VX/*.h (or the VX directory itself)")
    ap.add_argument("--from-git", metavar="GITDIR", help="read include/VX/*.h from this git repository")
    ap.add_argument("--rev", default="HEAD", help="revision for --from-git (default HEAD)")
    ap.add_argument("--commit", help="commit to name in the output (default: from --from-git, or git -C DIR)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "header_pins.c"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = ap.parse_args()
    if bool(args.khronos) == bool(args.from_git):
        ap.error("give either a directory or --from-git")
    work = tempfile.mkdtemp(prefix="vx-pins-")
    try:
        commit = args.commit
        if args.from_git:
            khr_inc = os.path.join(work, "khronos")
            os.makedirs(os.path.join(khr_inc, "VX"))
            for h in HEADERS:
                r = run(["git", "-C", args.from_git, "show", "%s:include/VX/%s" % (args.rev, h)])
                if r.returncode:
                    die("git show %s:include/VX/%s: %s" % (args.rev, h, r.stderr.strip()))
                open(os.path.join(khr_inc, "VX", h), "w").write(r.stdout)
            if not commit:
                commit = run(["git", "-C", args.from_git, "rev-parse", args.rev]).stdout.strip()
            source = "KhronosGroup/OpenVX-api-docs include/VX at %s" % commit
        else:
            d = os.path.abspath(args.khronos)
            khr_inc = os.path.dirname(d) if os.path.basename(d) == "VX" else d
            if not commit:
                r = run(["git", "-C", khr_inc, "rev-parse", "HEAD"])
                commit = r.stdout.strip() if r.returncode == 0 else "unknown"
            source = "Khronos OpenVX headers from a directory, commit %s" % commit
        for h in HEADERS:
            if not os.path.isfile(os.path.join(khr_inc, "VX", h)):
                die("missing %s" % os.path.join(khr_inc, "VX", h))
        model = parse(args.cc, khr_inc, work)
        kinds = classify(args.cc, os.path.join(work, "stripped"), work, model)
        vals = measure(args.cc, khr_inc, work, model, kinds)
        pins, counts, skipped = emit(model, kinds, vals)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    tested = model.tested - model.guards
    cts_tested = [f for f in CTS_FLAGS if f[2:] in tested]
    for name, (kind, free) in sorted(kinds.items()):
        if free:
            skipped.append("%s (%s): pinned with %s defined as 1, as none of the %d headers defines %s"
                           % (name, model.macros[name][0], ", ".join(sorted(free)), len(HEADERS),
                              "it" if len(free) == 1 else "them"))
    argv = ["python3", "vx-capi/tests/c/pin_values.py"] + sys.argv[1:]
    head = []
    head.append("/*")
    head.append(" * GENERATED by vx-capi/tests/c/pin_values.py; do not edit. Regenerate with:")
    head.append(" *   " + " ".join(shlex.quote(a) for a in argv))
    head.append(" * Source: " + source)
    head.append(" * Values from running a program built with `%s` against those headers" % args.cc)
    head.append(" * on this machine (%s)." % (os.uname().machine if hasattr(os, "uname") else "?"))
    head.append(" *")
    head.append(" * Copyright The vx-rs developers")
    head.append(" * SPDX-License-Identifier: Apache-2.0")
    head.append(" *")
    head.append(" * Compile-only (gcc/clang extensions; nothing here needs linking), against vx-capi's")
    head.append(" * headers; it fails to compile if they differ from the Khronos headers in any pinned")
    head.append(" * fact. See header_pins.sh:")
    head.append(" *   $CC -std=c11 -Wall -Wextra -Werror -c -Ivx-capi/include %s \\" % " ".join(CTS_FLAGS))
    head.append(" *       vx-capi/tests/c/header_pins.c -o header_pins.o")
    head.append(" *")
    head.append(" * Pinned: %d integer constants (%d enumerators + %d macros), %d other object-like"
                % (counts["constants"], len(model.enumerators), counts["constants"] - len(model.enumerators),
                   counts["macros_other"]))
    head.append(" * macros, %d integer function-like macros, %d enum tags, %d typedefs, %d structs / unions"
                % (counts["fn_macros"], counts["enum_tags"], counts["typedefs"], counts["aggregates"]))
    head.append(" * (%d fields), %d functions; %d assertions."
                % (counts["fields"], counts["functions"], counts["asserts"]))
    head.append(" *")
    head.append(" * Feature flags: built with the CTS's %s;" % " ".join(CTS_FLAGS))
    head.append(" * the Khronos headers test %s of them. Conditions they do test: %s."
                % ("none" if not cts_tested else ", ".join(cts_tested), ", ".join(sorted(tested))))
    head.append(" * Declarations under a condition this build does not meet (e.g. vx_float16, under")
    head.append(" * EXPERIMENTAL_PLATFORM_SUPPORTS_16_FLOAT; the _WIN32 values of VX_FMT_REF / VX_FMT_SIZE)")
    head.append(" * are not pinned.")
    if skipped or model.notes:
        head.append(" *")
        head.append(" * Not pinned by value:")
        for s in skipped + model.notes:
            s = s.replace("*/", "* /")
            head.append(" *   - " + s)
    head.append(" */")
    body = ["", "#include <stddef.h>"]
    body += ["#include <VX/%s>" % h for h in INCLUDES]
    body += ["", "#define PIN_STR_(x) #x", "#define PIN_STR(x) PIN_STR_(x)"]
    body += pins
    body += ["", "/* So the file is a translation unit with a definition; nothing calls it. */",
             "int vx_header_pins(void);", "int vx_header_pins(void) { return 0; }", ""]
    open(args.out, "w").write("\n".join(head + body))
    sys.stderr.write("wrote %s: %s\n" % (args.out, ", ".join("%s %d" % kv for kv in counts.items())))


if __name__ == "__main__":
    main()
