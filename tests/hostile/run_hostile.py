#!/usr/bin/env python3
"""Hostile-input tests for tlc.

Each case is an input that tlc must reject cleanly: a diagnostic on stderr in
`FILE:LINE:COL: error:` form, exit code 1, within the time limit, and no crash
(exit code >= 128, a signal, or a sanitizer report all count as crashes).

Usage: run_hostile.py --tlc build/tlc [--keep DIR] [--only NAME] [--time-limit 1.0]

The inputs are generated here, deterministically (fixed seeds), so that a failure
can be reproduced with --keep DIR, which leaves every input file in DIR.
"""
import argparse
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

VALID_KERNEL = """\
kernel k{n}<block = 64, N = 256, threads = 128>(A: f32[M, N], B: f32[M, N]) {{
    grid(ceildiv(M, block), threads = threads) as (bx) {{
        let t = alloc_fragment([block, N], f32);
        copy(A[bx * block, 0], t);
        for (i, j) in parallel(block, N) {{ t[i, j] = t[i, j] * 2.0 + 1.0; }}
        copy(t, B[bx * block, 0]);
    }}
}}
"""

TOKENS = ["kernel", "let", "var", "for", "in", "if", "else", "grid", "as", "auto", "true", "false",
          "strides", "x", "A", "f16", "copy", "gemm", "0", "1", "42", "1.5", "\"s\"", "(", ")", "[",
          "]", "{", "}", "<", ">", "=", "==", "+", "-", "*", "/", "%", "?", ":", ";", ",", "&&", "||",
          "!", "~", "+=", "<<", ">>", "&", "|", "^", ".", "@", "#", "$", "\\", "'"]


def kernel_body(stmt):
    return "kernel k(A: f32[M]) {\n    grid(1, threads = 32) as (bx) {\n        " + stmt + "\n    }\n}\n"


def cases():
    """(name, bytes, expected line or None, expected message regex or None)."""
    out = []
    out.append(("empty-file", b"", 1, r"no kernel"))
    out.append(("only-whitespace", b"  \n\n\t \n", 1, r"no kernel"))
    out.append(("only-comment", b"// nothing here\n/* nor here */\n", 1, r"no kernel"))
    for seed in (1, 2, 3, 4, 5):
        rng = random.Random(seed)
        out.append((f"random-bytes-{seed}", bytes(rng.randrange(256) for _ in range(4096)), None, None))
    for seed in (6, 7, 8):
        rng = random.Random(seed)
        text = "".join(chr(rng.randrange(32, 127)) if rng.random() > 0.05 else "\n" for _ in range(8192))
        out.append((f"random-ascii-{seed}", text.encode(), None, None))
    for seed in (9, 10, 11):
        rng = random.Random(seed)
        text = " ".join(rng.choice(TOKENS) for _ in range(4000))
        out.append((f"random-tokens-{seed}", text.encode(), None, None))

    # About 1 MB of valid kernels, then one error on the last line: all of it must be read.
    parts, size, n = [], 0, 0
    while size < 1 << 20:
        parts.append(VALID_KERNEL.format(n=n))
        size += len(parts[-1])
        n += 1
    valid = "".join(parts)
    text = valid + "kernel broken( {\n"
    # Parsing 1 MB is itself most of a second of CPU time on a slow machine: what this case
    # checks is that the error costs little on top of that, so its limit scales with the time the
    # valid part alone takes on this machine (BASELINES).
    out.append(("1mb-valid-then-error", text.encode(), text.count("\n"), r"unexpected"))
    BASELINES["1mb-valid-then-error"] = valid.encode()

    rng = random.Random(12)
    text = []
    size = 0
    while size < 1 << 20:
        t = rng.choice(TOKENS)
        text.append(t)
        size += len(t) + 1
    out.append(("1mb-garbage-tokens", " ".join(text).encode(), None, None))
    out.append(("1mb-one-identifier", (kernel_body("let x = " + "a" * (1 << 20) + " +;")).encode(), 3, None))

    out.append(("nested-parens-10000", kernel_body("let x = " + "(" * 10000 + "1" + ")" * 10000 + ";").encode(),
                3, r"nested more than"))
    out.append(("nested-parens-unclosed", kernel_body("let x = " + "(" * 10000).encode(), 3, r"nested more than"))
    out.append(("nested-brackets-10000", kernel_body("let x = " + "[" * 10000 + "]" * 10000 + ";").encode(),
                3, r"nested more than"))
    out.append(("nested-braces-10000", ("kernel k() " + "{" * 10000 + "}" * 10000 + "\n").encode(), 1,
                r"nested more than"))
    out.append(("nested-braces-10000-lines", ("kernel k()\n" + "{\n" * 10000 + "}\n" * 10000).encode(), 258,
                r"nested more than"))
    out.append(("nested-index-10000", kernel_body("let x = a" + "[0" * 10000 + "]" * 10000 + ";").encode(), 3,
                r"nested more than"))
    out.append(("nested-calls-10000", kernel_body("let x = " + "f(" * 10000 + ")" * 10000 + ";").encode(), 3,
                r"nested more than"))
    out.append(("unterminated-comment", b"kernel k() {\n/* this never ends\n\n", 2, r"unterminated /\* comment"))
    out.append(("unterminated-comment-1mb", b"kernel k() {\n/*" + b"*" * (1 << 20), 2, r"unterminated"))
    # Every "/*" opens a comment that never closes: lexing from each of them to the end is quadratic.
    out.append(("unterminated-comments-repeated", b"kernel k() {\n" + b"/* " * 300000, 2, r"unterminated"))
    out.append(("comment-markers-in-strings", b'kernel k() {\n assert(true, "/*");\n "*/ #\n}\n', 3,
                r"unterminated string"))
    out.append(("unterminated-string", kernel_body('assert(true, "no end);').encode(), 3, r"unterminated string"))
    out.append(("unterminated-string-eof", b'kernel k() { assert(true, "', 1, r"unterminated string"))
    out.append(("huge-integer", kernel_body("let x = " + "9" * 5000 + ";").encode(), 3, r"does not fit"))
    out.append(("huge-hex-integer", kernel_body("let x = 0x" + "f" * 100 + ";").encode(), 3, r"does not fit"))
    out.append(("int64-overflow-by-one", kernel_body("let x = 9223372036854775808;").encode(), 3, r"does not fit"))
    out.append(("huge-float", kernel_body("let x = 1e999999;").encode(), 3, r"floating-point"))
    out.append(("huge-float-digits", kernel_body("let x = " + "9" * 5000 + ".0;").encode(), 3, r"floating-point"))
    long_line = "kernel k() { grid(1, threads = 32) as (bx) { " + " ".join(
        f"let v{i} = {i};" for i in range(60000)) + " # } }\n"
    out.append(("very-long-line", long_line.encode(), 1, r"invalid character '#'"))
    out.append(("nul-bytes", b"kernel k() {\n  let x = 1;\x00\x00\x00\n}\n", 2, r"invalid character '\\x00'"))
    out.append(("nul-only", b"\x00" * 1000, 1, r"invalid character"))
    out.append(("invalid-utf8", b"kernel k() {\n  // caf\xe9\n}\n", 2, r"UTF-8"))
    out.append(("overlong-utf8", b"kernel k() {\n  let x = \xc0\xaf;\n}\n", 2, r"UTF-8"))
    out.append(("non-ascii-identifier", "kernel k() {\n  let caf\u00e9 = 1;\n}\n".encode(), 2, r"invalid character"))
    out.append(("bom-then-garbage", b"\xef\xbb\xbfkernel k( {\n", 1, None))
    out.append(("control-characters", b"kernel k() {\x01\x02\x1b[31m }\n", 1, r"invalid character"))
    out.append(("cr-only-line-endings", b"kernel k() {\r  let x = ;\r}\r", None, None))
    # Near the per-statement token limit (20000): 9999 '+' between 10000 operands.
    out.append(("deep-add-chain", kernel_body("let x = " + "+".join(["a"] * 10000) + " +;").encode(), 3, None))
    out.append(("add-chain-over-limit", kernel_body("let x = " + "+".join(["a"] * 20001) + ";").encode(), 3,
                r"more than \d+ tokens"))
    out.append(("deep-unary-chain", kernel_body("let x = " + "-" * 19990 + "a +;").encode(), 3, None))
    out.append(("deep-not-chain", kernel_body("let x = " + "!" * 19990 + "a +;").encode(), 3, None))
    out.append(("deep-ternary-chain", kernel_body("let x = " + "a ? a : " * 4900 + "a +;").encode(), 3, None))
    out.append(("deep-assign-chain", kernel_body("x = " + "a = " * 9000 + "1;").encode(), 3, None))
    out.append(("deep-else-if", ("kernel k() {\n  if a { }" + " else if a { }" * 5000 + " else ;\n}\n").encode(), 2,
                None))
    out.append(("many-statements-errors", ("kernel k() {\n" + "  let = ;\n" * 20000 + "}\n").encode(), 2, None))
    out.append(("many-kernels-errors", ("kernel () {}\n" * 20000).encode(), 1, None))
    for count, msg in ((1000, r"invalid character"), (5000, r"more than \d+ tokens")):
        out.append((f"template-params-{count}",
                    ("kernel k<" + ", ".join(f"p{i} = {i}" for i in range(count)) + ">() { # }\n").encode(), 1,
                    msg))
        out.append((f"params-{count}",
                    ("kernel k(" + ", ".join(f"p{i}: f32[M]" for i in range(count)) + ") { # }\n").encode(), 1,
                    msg))
    # Products of sums nested 200 deep in a region's bounds: symbolic extents distribute products
    # over sums, which repeats each factor in several terms; without a bound on the expanded
    # text this grew exponentially with the depth (sema/Polynomial.h, kMaxTextBytes).
    nested = "bx"
    for i in range(200):
        nested = f"({nested} + {i}) * (n{i % 4} + 1)"
    out.append(("nested-products-of-sums",
                ("kernel k(A: f32[M], n0: i32, n1: i32, n2: i32, n3: i32) {\n"
                 "    grid(M, threads = 32) as (bx) {\n        let t = alloc_shared([64], f32);\n"
                 f"        copy(A[{nested} : {nested} + 64], t);\n        let x = zz;\n    }}\n}}\n").encode(),
                5, r"unknown name 'zz'"))
    out.append(("lone-kernel-keyword", b"kernel", 1, r"unexpected end of file"))
    out.append(("lone-quote", b'"', 1, r"unterminated string"))
    out.append(("lone-slash-star", b"/*", 1, r"unterminated"))
    out.append(("star-slash", b"*/", 1, None))
    out.append(("backslash-eof-in-string", b'kernel k() { assert(true, "\\', 1, r"unterminated string"))
    return out


# Cases whose time limit is relative: name -> a valid input of the same size. The case may take at
# most BASELINE_FACTOR times the CPU time `tlc --syntax-only` needs for that input (or the plain
# limit, if larger).
BASELINES = {}
BASELINE_FACTOR = 2.0


def baseline_cpu(tlc, path, extra_args):
    """CPU seconds tlc takes for a valid input (the fastest of two runs); it must succeed."""
    best = None
    for _ in range(2):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run([tlc, path] + extra_args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise RuntimeError(f"baseline input {path} failed: {proc.stderr[-600:].decode(errors='replace')}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = cpu if best is None else min(best, cpu)
    return best


DIAG_RE = re.compile(rb"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>[^\n]*)$", re.M)
SANITIZER_RE = re.compile(rb"(AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|LeakSanitizer)")


def run_case(tlc, path, expected_line, expected_msg, extra_args, time_limit):
    """None when the run behaved, else a description of what went wrong. A run that only took
    too long is repeated once: on a loaded machine CPU time, too, varies by tens of percent, and
    what this limit catches (quadratic behaviour, hangs) is slow every time."""
    result = run_once(tlc, path, expected_line, expected_msg, extra_args, time_limit)
    if isinstance(result, tuple):  # (message, only_slow)
        message, only_slow = result
        if only_slow:
            again = run_once(tlc, path, expected_line, expected_msg, extra_args, time_limit)
            if not isinstance(again, tuple):
                return again
            message += "\n    and again: " + again[0]
        return message
    return result


def run_once(tlc, path, expected_line, expected_msg, extra_args, time_limit):
    cmd = [tlc, path] + extra_args
    start = time.monotonic()
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=max(10 * time_limit, 10))
    except subprocess.TimeoutExpired:
        return (f"hung (killed after {max(10 * time_limit, 10)} s)", False)
    wall = time.monotonic() - start
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time, not wall-clock time: the suite runs beside other tests (ctest -j) on a busy machine.
    elapsed = (usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)
    problems = []
    slow = False
    if proc.returncode < 0 or proc.returncode >= 128:
        problems.append(f"crashed (exit code {proc.returncode})")
    elif proc.returncode != 1:
        problems.append(f"exit code {proc.returncode}, expected 1")
    if SANITIZER_RE.search(proc.stderr):
        problems.append("sanitizer report")
    if elapsed > time_limit:
        slow = True
        problems.append(f"took {elapsed:.2f} s of CPU time (limit {time_limit} s; {wall:.2f} s wall)")
    diags = list(DIAG_RE.finditer(proc.stderr))
    if not diags:
        problems.append("no 'FILE:LINE:COL: error:' diagnostic on stderr")
    else:
        first = diags[0]
        if first.group("file").decode(errors="replace") != path:
            problems.append(f"diagnostic names file {first.group('file')!r}, expected {path!r}")
        if expected_line is not None and int(first.group("line")) != expected_line:
            problems.append(f"first error on line {int(first.group('line'))}, expected line {expected_line}")
        if expected_msg is not None and not re.search(expected_msg.encode(), first.group("msg")):
            problems.append(f"first error {first.group('msg')!r} does not match /{expected_msg}/")
    if len(proc.stderr) > 64 * 1024:
        problems.append(f"{len(proc.stderr)} bytes of diagnostics (error recovery is not bounded)")
    if not problems:
        return elapsed
    tail = proc.stderr[-600:].decode(errors="replace")
    message = "; ".join(problems) + f"\n    command: {' '.join(cmd)}\n    stderr tail: {tail!r}"
    return (message, slow and len(problems) == 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--keep", help="write the inputs into this directory and keep them")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--time-limit", type=float, default=1.0,
                    help="CPU seconds per run (default 1.0); a run is killed after 10x that (at least 10 s) of wall time")
    args = ap.parse_args()

    workdir = args.keep or tempfile.mkdtemp(prefix="tlc-hostile-")
    os.makedirs(workdir, exist_ok=True)
    # Two ways in: the front end alone, and a full compile with a target and an output file.
    modes = [["--syntax-only"], ["--target=sm90", "-o", os.path.join(workdir, "out", "k.cu")]]
    failures = 0
    total = 0
    try:
        for name, data, line, msg in cases():
            if args.only and args.only not in name:
                continue
            path = os.path.join(workdir, name + ".tl")
            with open(path, "wb") as f:
                f.write(data)
            for mode in modes:
                total += 1
                limit = args.time_limit
                if name in BASELINES:
                    base_path = os.path.join(workdir, name + ".baseline.tl")
                    with open(base_path, "wb") as f:
                        f.write(BASELINES[name])
                    # The front end alone: a syntax error stops a full compile before code generation.
                    limit = max(limit, BASELINE_FACTOR * baseline_cpu(args.tlc, base_path, ["--syntax-only"]))
                problem = run_case(args.tlc, path, line, msg, mode, limit)
                label = f"{name} [{' '.join(mode[:1])}]"
                if not isinstance(problem, str):
                    print(f"ok   {label} ({problem:.2f} s)")
                    continue
                if problem:
                    failures += 1
                    print(f"FAIL {label}: {problem}")
                else:
                    print(f"ok   {label}")
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{total - failures} of {total} hostile-input runs passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
