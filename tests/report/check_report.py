#!/usr/bin/env python3
"""Structure checks of the kernel report (tlc --report=FILE, docs/report.md).

For each (kernel file, target) pair this compiles the file with --report and checks the page:

  - every kernel has each of the seven sections (source, launch, dataflow, layouts, pipeline,
    resources, choices);
  - every fragment grid's cells agree with --emit=layouts for that kernel: the layout line's
    formula, evaluated here at each cell's thread and register slot, gives the cell's element
    (and the grid's shape, threads and slots per thread are the line's);
  - every in-page link (href="#...") names an element that exists; every source line's link
    lands on an output line that maps back to it;
  - nothing is loaded from elsewhere: no http(s) reference, no <link>, no external script;
  - the emitted source and --explain's decisions are the same with and without --report (the
    report only watches).

  check_report.py --tlc build/tlc [--work DIR] FILE.tl:TARGET...
"""
import argparse
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile

SECTIONS = ["source", "launch", "dataflow", "layouts", "pipeline", "resources", "choices"]


class Page(html.parser.HTMLParser):
    """The ids, links, kernels, fragment grids and source/output lines of a report."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []           # href values starting with '#'
        self.external = []        # anything that would load or link elsewhere
        self.kernels = []         # (id, name)
        self.fragments = []       # dicts: kernel id, buffer, shape, threads, locals, cells
        self.figures = {}         # fragment figure id -> (kernel id, buffer)
        self.same = []            # fragments drawn once elsewhere: kernel id, buffer, the figure's id
        self.lines = {}           # id -> attrs of .ln divs
        self.kernel = None
        self.fragment = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src", "xlink:href", "action", "data"):
            v = a.get(key)
            if v is None:
                continue
            if v.startswith("#"):
                if key == "href":
                    self.links.append(v[1:])
            else:
                self.external.append(f"<{tag} {key}={v}>")
        if tag in ("link", "iframe", "object", "embed", "img", "base"):
            self.external.append(f"<{tag}>")
        if tag == "section" and "kernel" in a.get("class", ""):
            self.kernel = a["id"]
            self.kernels.append((a["id"], a["data-kernel"]))
        if tag == "figure" and a.get("class") == "fragment-same":
            self.same.append({"kernel": self.kernel, "buffer": a["data-buffer"], "ref": a["data-ref"]})
        if tag == "figure" and a.get("class") == "fragment":
            self.figures[a["id"]] = (self.kernel, a["data-buffer"])
            self.fragment = {"kernel": self.kernel, "buffer": a["data-buffer"],
                             "shape": [int(x) for x in a["data-shape"].split(",") if x],
                             "threads": int(a["data-threads"]), "locals": int(a["data-locals"]), "cells": []}
            self.fragments.append(self.fragment)
        if tag == "g" and a.get("class") == "cell" and self.fragment is not None:
            e = [int(x) for x in a["data-e"].split(",") if x]
            self.fragment["cells"].append((e, int(a["data-t"]), int(a["data-l"])))
        if tag == "div" and "ln" in a.get("class", "").split() and "id" in a:
            self.lines[a["id"]] = a

    def handle_endtag(self, tag):
        if tag == "figure":
            self.fragment = None


LAYOUT_LINE = re.compile(r"^  (\S+): \[([\d, ]*)\] over (\d+) threads?, (\d+) per thread(?:, \d+ replicas)?: (.*)$")


def parse_layouts(text):
    """--emit=layouts -> {kernel: {buffer: (shape, threads, locals, [formula per dim])}}."""
    out, kernel = {}, None
    for line in text.splitlines():
        m = re.match(r"^kernel (\S+) \(", line)
        if m:
            kernel = m.group(1)
            out[kernel] = {}
            continue
        m = LAYOUT_LINE.match(line)
        if m and kernel:
            shape = [int(x) for x in m.group(2).split(",") if x.strip()]
            dims = [d.strip() for d in m.group(5).split(";") if d.strip()]
            formulas = []
            for d in dims:
                name, expr = d.split("=", 1)
                expr = expr.strip()
                if not re.fullmatch(r"[0-9txl+*/%() ]*", expr):
                    raise ValueError(f"unexpected layout formula {expr!r}")
                formulas.append(expr.replace("/", "//"))
            out[kernel][m.group(1)] = (shape, int(m.group(3)), int(m.group(4)), formulas)
    return out


def evaluate(formula, tx, l):
    return eval(formula, {"__builtins__": {}}, {"tx": tx, "l": l}) if formula else 0


def check(tlc, tl, target, work, extra):
    errors = []
    base = os.path.join(work, f"{os.path.basename(tl)[:-3]}-{target}")
    report, out = base + ".html", base + ".out"
    cmd = [tlc, tl, f"--target={target}", "-o", out + ".cu", f"--report={report}"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-2000:]}"]
    # The same output name in another directory: the source includes its header by name.
    plain_dir = os.path.join(work, "plain")
    os.makedirs(plain_dir, exist_ok=True)
    plain = os.path.join(plain_dir, os.path.basename(out) + ".cu")
    ptxas = "--report-ptxas" in extra
    extra = [e for e in extra if e != "--report-ptxas"]
    subprocess.run([tlc, tl, f"--target={target}", "-o", plain] + extra, capture_output=True, text=True, check=True)
    with open(out + ".cu") as a, open(plain) as b:
        if a.read() != b.read():
            errors.append("the emitted source differs with --report")
    # ... and what --explain says was chosen (the recommender's search is the same).
    explain = [subprocess.run([tlc, tl, f"--target={target}", "--explain"] + extra + more, capture_output=True,
                              text=True).stdout for more in ([], [f"--report={base}.explain.html"])]
    if explain[0] != explain[1]:
        errors.append("--explain differs with --report")
    layouts = parse_layouts(subprocess.run([tlc, tl, f"--target={target}", "--emit=layouts"] + extra,
                                           capture_output=True, text=True, check=True).stdout)
    with open(report, encoding="utf-8") as f:
        text = f.read()
    page = Page()
    page.feed(text)

    if re.search(r"https?://", text):
        errors.append("an http(s) reference: " + re.search(r".{0,60}https?://.{0,40}", text).group(0))
    if re.search(r"@import|url\((?!#)", text):
        errors.append("a stylesheet import or url() outside the page")
    if page.external:
        errors.append(f"external references: {page.external[:5]}")
    if "<script src" in text:
        errors.append("an external script")
    if not page.kernels:
        errors.append("no kernel section")
    for kid, name in page.kernels:
        for s in SECTIONS:
            if f"{kid}-{s}" not in page.ids:
                errors.append(f"kernel {name}: no {s} section")
    missing = sorted({l for l in page.links if l not in page.ids})
    if missing:
        errors.append(f"{len(missing)} links resolve to nothing: {missing[:5]}")

    # Source lines link to output lines that map back to them.
    mapped = sum(1 for a in page.lines.values() if "data-out" in a)
    back = {}
    for oa in page.lines.values():
        if "data-src" in oa:
            back[(oa["data-k"], oa["data-src"])] = back.get((oa["data-k"], oa["data-src"]), 0) + 1
    for lid, a in page.lines.items():
        if "data-out" not in a:
            continue
        n = back.get((a["data-k"], a["data-line"]), 0)
        if n != int(a["data-out"]):
            errors.append(f"{lid}: says {a['data-out']} output lines, {n} map back to it")
    if mapped == 0:
        errors.append("no source line maps to an output line")

    # --report-ptxas: every kernel's registers from ptxas where nvcc is at hand, else the estimate
    # and the reason.
    if ptxas:
        sources = re.findall(r'<table class="registers" data-source="(\w+)"', text)
        nvcc = shutil.which("nvcc") or os.access("/usr/local/cuda/bin/nvcc", os.X_OK)
        if not sources:
            errors.append("--report-ptxas: no registers table")
        elif nvcc and set(sources) != {"ptxas"}:
            errors.append(f"--report-ptxas with nvcc: registers from {sources}, not all from ptxas")
        elif not nvcc and "nvcc was not found" not in text:
            errors.append("--report-ptxas without nvcc: the page does not say so")

    # Fragment grids against --emit=layouts.
    names = dict(page.kernels)
    grids = 0
    for frag in page.fragments:
        kernel = names[frag["kernel"]]
        lay = layouts.get(kernel) or layouts.get(re.sub(r"_general$", "", kernel))
        if lay is None or frag["buffer"] not in lay:
            errors.append(f"{kernel}: fragment {frag['buffer']} is not in --emit=layouts")
            continue
        shape, threads, locals_, formulas = lay[frag["buffer"]]
        if (frag["shape"], frag["threads"], frag["locals"]) != (shape, threads, locals_):
            errors.append(f"{kernel}.{frag['buffer']}: grid says {frag['shape']}/{frag['threads']}/{frag['locals']}, "
                          f"--emit=layouts {shape}/{threads}/{locals_}")
        if not frag["cells"]:
            errors.append(f"{kernel}.{frag['buffer']}: an empty grid")
        for e, tx, l in frag["cells"]:
            want = [evaluate(f, tx, l) for f in formulas] or [0]
            if want != (e or [0]):
                errors.append(f"{kernel}.{frag['buffer']}: cell {e} says T{tx} r{l}, which holds {want}")
                break
        grids += 1
    # A fragment drawn elsewhere on the page has the layout it points to.
    def listed(kid, buffer):
        kernel = names[kid]
        lay = layouts.get(kernel) or layouts.get(re.sub(r"_general$", "", kernel)) or {}
        return lay.get(buffer)
    for same in page.same:
        if same["ref"] not in page.figures:
            errors.append(f"{names[same['kernel']]}.{same['buffer']}: points to no drawn layout")
            continue
        mine, theirs = listed(same["kernel"], same["buffer"]), listed(*page.figures[same["ref"]])
        if mine is None or mine != theirs:
            errors.append(f"{names[same['kernel']]}.{same['buffer']}: --emit=layouts gives {mine}, the layout it "
                          f"points to is {theirs}")
    expected = sum(len(v) for k, v in layouts.items())
    if expected and grids == 0:
        errors.append("--emit=layouts lists fragments, the report draws none")
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--work")
    ap.add_argument("cases", nargs="+", help="FILE.tl:TARGET[:extra flag,...]")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="tlc-report-")
    os.makedirs(work, exist_ok=True)
    failed = 0
    for case in args.cases:
        tl, target, *extra = case.split(":")
        extra = extra[0].split(",") if extra else []
        errors = check(args.tlc, tl, target, work, extra)
        print(f"{'FAIL' if errors else 'ok  '} {os.path.basename(tl)} {target} {' '.join(extra)}")
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    print(f"{len(args.cases) - failed} of {len(args.cases)} reports pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
