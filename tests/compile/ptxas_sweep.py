#!/usr/bin/env python3
"""Every kernel of the given .tl files through tlc --target=sm90 and ptxas for sm_90a: fails when a
kernel spills, keeps an array in local memory (a stack frame) unless allowed, or gets an
advisory that ptxas fenced or serialised its wgmma (C7510, C7519, C7520; see ptxas_report.py).

    ptxas_sweep.py --tlc build/tlc --work DIR [-j N] [--include-dir D]... [--allow-stack NAME]...
                   [--config NAME FILE FLAGS]... FILE_OR_DIR...

Each .tl is checked as written (named FOLDER/FILE: corpus/gqa_fwd_bshd) and once more per "// corpus-variant: NAME
-D x=y ..." line; --config adds a configuration of FILE with FLAGS (one string, split on spaces),
such as the tiles TileLang's examples launch. Files whose "// compile-check: not ..." line names
sm90 are skipped (tlc refuses them there; compile-corpus checks that). nvcc compiles device
code only (-cubin): ptxas is what is checked, and the full compile is compile-samples' and the
GPU kit's. --table FILE writes the registers, stack, spills and advisories of every kernel as a
Markdown table.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxas_report  # noqa: E402


def configurations(paths):
    """[(name, file, flags)] for the .tl files (directories: their *.tl, sorted)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".tl"))
        else:
            files.append(p)
    configs = []
    for f in files:
        lines = open(f, encoding="utf-8").read().splitlines()
        if any(l.startswith("// compile-check: not") and "sm90" in l.split()[3:] for l in lines):
            continue
        # Named folder/file: a sample and a corpus port may share a file name.
        folder = os.path.basename(os.path.dirname(os.path.abspath(f)))
        configs.append((f"{folder}/{os.path.splitext(os.path.basename(f))[0]}", f, []))
        for l in lines:
            if l.startswith("// corpus-variant:"):
                name, *flags = l[len("// corpus-variant:"):].split()
                configs.append((f"{folder}/{name}", f, flags))
    return configs


def check(config, tlc, nvcc, work, includes):
    """(name, {kernel: ptxas entry} or None, error text)."""
    name, source, flags = config
    cu = os.path.join(work, name.replace("/", "__") + ".cu")
    run = subprocess.run([tlc, source, "--target=sm90", *flags, "-o", cu], capture_output=True, text=True)
    if run.returncode != 0:
        return name, None, f"tlc failed:\n{run.stderr}"
    run = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90a", "-cubin", "-Xptxas", "-v", *[f"-I{d}" for d in includes],
                          cu, "-o", cu[:-len(".cu")] + ".cubin"], capture_output=True, text=True)
    if run.returncode != 0:
        return name, None, f"nvcc failed:\n{run.stderr[-3000:]}"
    return name, ptxas_report.parse(run.stderr), ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tlc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--include-dir", action="append", default=[])
    parser.add_argument("--allow-stack", action="append", default=[],
                        help="a configuration whose kernels may keep arrays in local memory (by design)")
    parser.add_argument("--allow-advisory", action="append", default=[], metavar="KERNEL=CODE",
                        help="a wgmma advisory accepted for one kernel (tl_kernels::NAME), a known limit")
    parser.add_argument("--config", nargs=3, action="append", default=[], metavar=("NAME", "FILE", "FLAGS"))
    parser.add_argument("--table")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        print("ptxas_sweep.py: no nvcc; skipped")
        return 77
    os.makedirs(args.work, exist_ok=True)
    configs = configurations(args.paths) + [(n, f, flags.split()) for n, f, flags in args.config]
    names = [c[0] for c in configs]
    if len(set(names)) != len(names):
        sys.exit(f"ptxas_sweep.py: configuration names repeat: {sorted(n for n in set(names) if names.count(n) > 1)}")
    failed, rows = 0, []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda c: check(c, os.path.abspath(args.tlc), nvcc, args.work, args.include_dir), configs)
        for name, kernels, error in results:
            if kernels is None:
                print(f"FAIL {name}: {error}")
                failed += 1
                continue
            for mangled, k in sorted(kernels.items()):
                if k["registers"] is None:
                    continue  # a function ptxas only mentioned (no entry of this unit)
                kernel = ptxas_report.short_name(mangled).split("::")[-1]
                allowed = [a.split("=", 1)[1] for a in args.allow_advisory if a.split("=", 1)[0] == kernel]
                found = ptxas_report.problems(k, allow_stack=name in args.allow_stack, allow_codes=allowed)
                failed += bool(found)
                codes = " ".join(sorted(k["codes"])) or "-"
                print(f"{'FAIL' if found else 'ok  '} {name} {ptxas_report.short_name(mangled)}: {k['registers']} "
                      f"registers, {k['stack']} bytes stack, {k['spill_stores']}/{k['spill_loads']} bytes spilled, "
                      f"advisories {codes}{': ' + '; '.join(found) if found else ''}")
                rows.append((name, ptxas_report.short_name(mangled).split("::")[-1], k, codes))
    if args.table:
        with open(args.table, "w") as out:
            out.write("| configuration | kernel | registers | stack | spill st/ld | advisories |\n| --- | --- | ---: | ---: | ---: | --- |\n")
            for name, kernel, k, codes in rows:
                out.write(f"| {name} | {kernel} | {k['registers']} | {k['stack']} | {k['spill_stores']}/{k['spill_loads']} "
                          f"| {codes} |\n")
    print(f"{len(configs)} configurations, {failed} failing")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
