#!/usr/bin/env python3
"""Delta-debugging reducer for the differential tester's findings.

    reduce.py FINDING_DIR                 a folder difftest.py wrote (program, data, log.txt)
    reduce.py FILE.tl --target T --kind KIND [--match TEXT]

KIND is the failure's kind as difftest.py names it: tlc-crash, tlc-internal, tlc-rejects (tlc
refuses on T what it takes on cpu), cxx-rejects (emitted code g++ rejects), mismatch, crash,
simt-deadlock, hang, launcher-refuses. The reducer repeatedly removes statements and blocks,
unused parameters, shrinks sizes and tile parameters and simplifies expressions, keeping each
change after which the program still fails the same way (same kind on the same target, and the
same first diagnostic line for tlc errors, or TEXT when given). It writes the smallest program
with its JSON and data to OUT (default FINDING_DIR/reduced/) with a repro.sh.

Programs must be in gen.py's layout (one statement per line, `{` ending a block's first line,
`}` alone on its last), which is what makes line-based reduction valid most of the time; a
candidate tlc rejects is simply not the same failure.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import difftest  # noqa: E402
import gen  # noqa: E402


# ---------------------------------------------------------------------------------------------
# A candidate: the program's text, its metadata and its input data.
# ---------------------------------------------------------------------------------------------


class Candidate:
    def __init__(self, text, meta, data):
        self.text, self.meta, self.data = text, meta, data  # data: {name: [values]}

    def copy(self, text=None):
        return Candidate(self.text if text is None else text, json.loads(json.dumps(self.meta)),
                         {k: list(v) for k, v in self.data.items()})

    def write(self, folder):
        os.makedirs(folder, exist_ok=True)
        seed = self.meta["seed"]
        base = os.path.join(folder, f"p{seed}")
        with open(base + ".tl", "w") as f:
            f.write(self.text)
        with open(base + ".json", "w") as f:
            json.dump(self.meta, f, indent=1)
        gen.write_bin(base + ".in.bin", [(q["name"], self.data[q["name"]]) for q in self.meta["params"]])
        return base + ".tl"

    def size(self):
        return len(self.text)


def load(tl):
    base = tl[:-3]
    meta = json.load(open(base + ".json"))
    data = dict(gen.read_bin(base + ".in.bin"))
    return Candidate(open(tl).read(), meta, data)


# ---------------------------------------------------------------------------------------------
# The failure check.
# ---------------------------------------------------------------------------------------------


def first_diag(text):
    for l in text.splitlines():
        if "internal error" in l.lower() or "error:" in l:
            # Without places and names, which change as the program shrinks.
            l = re.sub(r"\S+\.(tl|cpp|cu|hip|h):\d+(:\d+)?", "", l)
            return re.sub(r"'[^']*'", "'_'", l).strip()
    return ""


class Checker:
    def __init__(self, args, target, kind, match, original):
        self.args, self.target, self.kind, self.match = args, target, kind, match
        self.dargs = difftest.make_args(args.build_dir, args.ref, cpu_flags=args.cpu_flags)
        self.work = tempfile.mkdtemp(prefix="difftest-reduce-")
        self.tries = 0
        self.signature = None
        ok, detail = self.fails(original, learn=True)
        if not ok:
            raise SystemExit(f"reduce: the original program does not fail as {kind} on {target}:\n{detail}")

    def tlc_only(self):
        return self.kind in ("tlc-crash", "tlc-internal", "tlc-rejects")

    def fails(self, cand, learn=False):
        """(whether cand fails the same way, detail)."""
        self.tries += 1
        folder = os.path.join(self.work, f"t{self.tries}")
        tl = cand.write(folder)
        try:
            if self.tlc_only():
                return self.fails_tlc(cand, tl, learn)
            res, _ = difftest.check_one(self.dargs, tl, self.target, os.path.join(folder, "w"))
            same = res.status == "fail" and res.kind == self.kind
            if same and self.kind in ("cxx-rejects",):
                sig = first_diag(res.detail)
                if learn and not self.match:
                    self.signature = sig
                same = (self.match in res.detail) if self.match else sig == self.signature
            return same, f"{res.status} {res.kind}: {res.detail[:2000]}"
        finally:
            if not learn:
                shutil.rmtree(folder, ignore_errors=True)

    def fails_tlc(self, cand, tl, learn):
        out = os.path.join(os.path.dirname(tl), "out.cpp")
        cmd = [self.dargs.tlc, tl, f"--target={self.target}", *["-D" + d for d in cand.meta["dflags"]], "-o", out]
        rc, text = difftest.run(cmd, difftest.TLC_TIMEOUT)
        if self.kind == "tlc-rejects":
            # Fails on the target, compiles for cpu.
            rc2, _ = difftest.run(cmd[:2] + ["--target=cpu"] + cmd[3:], difftest.TLC_TIMEOUT)
            bad = rc == 1 and rc2 == 0
        else:
            bad = difftest.internal_error(rc, text)
        sig = (rc, first_diag(text))
        if learn:
            self.signature = sig
        if self.match:
            return bad and self.match in text, text
        return bad and sig == self.signature, text


# ---------------------------------------------------------------------------------------------
# Edits. Each yields candidate texts/metadata; the driver keeps the first that still fails.
# ---------------------------------------------------------------------------------------------


def units(lines):
    """Removable units: (start, end) line ranges of statements and of whole blocks, inside the
    kernel body (never the kernel's or the grid's own braces)."""
    out = []
    stack = []
    for i, l in enumerate(lines):
        s = l.strip()
        if s.endswith("{") and not s.startswith("kernel") and not s.startswith("grid(") and s != "{":
            stack.append(i)
        elif s == "}" or s.startswith("} else"):
            if s == "}" and stack:
                start = stack.pop()
                out.append((start, i))
        elif s.endswith(";") and stack is not None:
            depth_ok = any(lines[j].strip().startswith("grid(") for j in range(i))
            if depth_ok:
                out.append((i, i))
    # Big units first: removing a block is worth more than one line.
    out.sort(key=lambda u: -(u[1] - u[0]))
    return out


def unwraps(lines):
    """Blocks whose head and closing brace may go, keeping the body (loops, ifs, whiles)."""
    out = []
    stack = []
    for i, l in enumerate(lines):
        s = l.strip()
        if s.endswith("{") and (s.startswith("for ") or s.startswith("if ") or s.startswith("while ")):
            stack.append(i)
        elif s.endswith("{"):
            stack.append(None)
        elif s == "}" and stack:
            start = stack.pop()
            if start is not None:
                out.append((start, i))
    return out


def drop_unused_params(cand):
    """Parameters no statement mentions any more leave the signature and the data."""
    text = cand.text
    body = text[text.index("{"):]
    keep = []
    changed = False
    for q in cand.meta["params"]:
        if re.search(r"\b" + re.escape(q["name"]) + r"\b", body):
            keep.append(q)
        else:
            changed = True
    if not changed or not keep:
        return None
    c = cand.copy()
    gone = {q["name"] for q in cand.meta["params"]} - {q["name"] for q in keep}
    # gen.py writes one parameter a line: "    NAME: dtype[...]," and the last ends with ")".
    lines = text.split("\n")
    out = []
    for l in lines:
        m = re.match(r"\s+(\w+): .*[,)]$", l)
        if m and m.group(1) in gone and not l.strip().startswith("kernel"):
            if l.endswith(")") and out and out[-1].endswith(","):
                out[-1] = out[-1][:-1] + ")"
            continue
        out.append(l)
    c.text = "\n".join(out)
    c.meta["params"] = keep
    for n in gone:
        c.data.pop(n, None)
        c.meta.get("tolerance", {}).pop(n, None)
    return c


def tparam_value(cand, name):
    for d in cand.meta["dflags"]:
        if d.startswith(name + "="):
            return int(d.split("=", 1)[1])
    m = re.search(r"\b" + re.escape(name) + r" = (\d+)", cand.text.split("(")[0])
    return int(m.group(1)) if m else None


def set_tparam(cand, name, value):
    c = cand.copy()
    c.meta["dflags"] = [d for d in c.meta["dflags"] if not d.startswith(name + "=")]
    head, sep, rest = c.text.partition("(")
    head = re.sub(r"\b" + re.escape(name) + r" = \d+", f"{name} = {value}", head)
    c.text = head + sep + rest
    return refresh_sizes(c)


def refresh_sizes(c):
    """Derived sizes follow their sources; extents and data follow the sizes."""
    for s, (src, tp) in c.meta.get("derived", {}).items():
        v = tparam_value(c, tp)
        if v and src in c.meta["sizes"]:
            c.meta["sizes"][s] = -(-c.meta["sizes"][src] // v)
    # Row strides stay at least the extent they pad (gen.py's stride_min): rows must not overlap.
    for st, (src, pad) in c.meta.get("stride_min", {}).items():
        if st in c.meta["sizes"] and src in c.meta["sizes"]:
            c.meta["sizes"][st] = max(c.meta["sizes"][st], c.meta["sizes"][src] + pad) \
                if c.meta["sizes"][st] < c.meta["sizes"][src] else c.meta["sizes"][st]
    rng = random.Random(c.meta["seed"])
    for q in c.meta["params"]:
        if q["kind"] != "tensor":
            continue
        ext = [gen.eval_size_expr(d, c.meta["sizes"]) for d in q["shape"]]
        n = gen.storage_count(q["shape"], q.get("strides"), c.meta["sizes"])
        if q.get("strides"):
            q["stride_values"] = [gen.eval_size_expr(d, c.meta["sizes"]) for d in q["strides"]]
            q["storage"] = n
        if ext != q["extents"] or len(c.data[q["name"]]) != n:
            q["extents"] = ext
            vals = q.get("values") or sorted(set(c.data[q["name"]]))
            new = [float(rng.choice(vals)) for _ in range(n)]
            if all(v == 0 for v in new) and any(v != 0 for v in vals):
                new[0] = float(next(v for v in vals if v != 0))
            c.data[q["name"]] = new
    return c


def size_edits(cand):
    for s, v in cand.meta["sizes"].items():
        if s in cand.meta.get("derived", {}):
            continue
        for nv in sorted({1, 16, v // 2, v - 16, v - 1}):
            if 0 < nv < v:
                c = cand.copy()
                c.meta["sizes"][s] = nv
                yield f"size {s} {v} -> {nv}", refresh_sizes(c)


def tparam_edits(cand):
    for name in ("threads", "bm", "bn", "bk"):
        v = tparam_value(cand, name)
        if v is None:
            continue
        for nv in sorted({v // 2, 16, 32}, reverse=True):
            if 0 < nv < v:
                yield f"{name} {v} -> {nv}", set_tparam(cand, name, nv)


def expr_edits(cand):
    """Right-hand sides of element stores become simpler: one of their element reads, a
    constant; literals become 1.0 / 0.5."""
    lines = cand.text.split("\n")
    for i, l in enumerate(lines):
        m = re.match(r"(\s*\S.*?\] = )(\w+)\((.*)\);$", l)
        if not m:
            continue
        head, castname, rhs = m.groups()
        options = re.findall(r"\w+\[[^\[\]]*\]", rhs) + ["1.0", "f32(i)"]
        for o in options:
            # Only strictly simpler: shorter than what it replaces (no cycles between options).
            if len(o) >= len(rhs):
                continue
            new = lines[:i] + [f"{head}{castname}({o});"] + lines[i + 1:]
            yield f"line {i + 1}: rhs -> {o}", cand.copy("\n".join(new))


# ---------------------------------------------------------------------------------------------


def reduce(cand, checker, log):
    changed = True
    while changed:
        changed = False
        # Statements and blocks.
        i = 0
        while True:
            lines = cand.text.split("\n")
            us = units(lines)
            if i >= len(us):
                break
            a, b = us[i]
            c = cand.copy("\n".join(lines[:a] + lines[b + 1:]))
            c = drop_unused_params(c) or c
            ok, _ = checker.fails(c)
            if ok:
                log(f"removed lines {a + 1}-{b + 1}: {lines[a].strip()[:60]}")
                cand, changed = c, True
            else:
                i += 1
        for a, b in unwraps(cand.text.split("\n")):
            lines = cand.text.split("\n")
            if b >= len(lines) or lines[b].strip() != "}":
                continue
            c = cand.copy("\n".join(lines[:a] + [l[4:] for l in lines[a + 1:b]] + lines[b + 1:]))
            ok, _ = checker.fails(c)
            if ok:
                log(f"unwrapped {lines[a].strip()[:60]}")
                cand, changed = c, True
                break
        c = drop_unused_params(cand)
        if c and checker.fails(c)[0]:
            log("dropped unused parameters")
            cand, changed = c, True
        for edits in (tparam_edits, size_edits, expr_edits):
            progress = True
            while progress:
                progress = False
                for what, c in edits(cand):
                    if checker.fails(c)[0]:
                        log(what)
                        cand, changed, progress = c, True, True
                        break
    return cand


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", help="a finding folder, or a .tl with its .json and .in.bin beside it")
    ap.add_argument("--target")
    ap.add_argument("--kind")
    ap.add_argument("--match", default="", help="a text the failure's output must contain")
    ap.add_argument("--ref", default="auto", choices=["auto", "eval", "cpu"])
    ap.add_argument("--cpu-flags", default="", help="more g++ flags for the cpu output, as difftest.py's")
    ap.add_argument("--build-dir", default=os.environ.get("TLC_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--out", help="folder for the reduced program (default: FINDING_DIR/reduced)")
    a = ap.parse_args()
    if os.path.isdir(a.what):
        tl = next(os.path.join(a.what, f) for f in sorted(os.listdir(a.what)) if f.endswith(".tl"))
        log_txt = open(os.path.join(a.what, "log.txt")).readline()
        m = re.match(r"seed \d+ target (\S+): (\S+)", log_txt)
        a.target = a.target or m.group(1)
        a.kind = a.kind or m.group(2)
        out = a.out or os.path.join(a.what, "reduced")
    else:
        tl = a.what
        out = a.out or os.path.join(os.path.dirname(os.path.abspath(tl)), "reduced")
    if not a.target or not a.kind:
        sys.exit("reduce: --target and --kind are needed for a .tl file")
    cand = load(tl)
    checker = Checker(a, a.target, a.kind, a.match, cand)
    before = cand.text.count("\n")
    cand = reduce(cand, checker, lambda s: print(f"reduce: {s}", flush=True))
    tl_out = cand.write(out)
    seed = cand.meta["seed"]
    with open(os.path.join(out, "repro.sh"), "w") as f:
        if checker.tlc_only():
            flags = " ".join("-D" + d for d in cand.meta["dflags"])
            f.write(f"#!/bin/sh\n# {a.kind} on {a.target}\ncd \"$(dirname \"$0\")\" && "
                    f"exec \"{checker.dargs.tlc}\" p{seed}.tl --target={a.target} {flags} -o /tmp/difftest-repro.out\n")
        else:
            f.write(f"#!/bin/sh\n# {a.kind} on {a.target}\ncd \"$(dirname \"$0\")\" && exec python3 "
                    f"\"{os.path.join(HERE, 'difftest.py')}\" --program p{seed}.tl --targets {a.target} "
                    f"--ref {checker.dargs.ref} --build-dir \"{checker.dargs.build_dir}\" -v \"$@\"\n")
    os.chmod(os.path.join(out, "repro.sh"), 0o755)
    shutil.rmtree(checker.work, ignore_errors=True)
    print(f"reduce: {before} -> {cand.text.count(chr(10))} lines in {checker.tries} tries; {tl_out}")
    print(cand.text)


if __name__ == "__main__":
    main()
