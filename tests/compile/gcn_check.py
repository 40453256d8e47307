#!/usr/bin/env python3
"""Checks the AMDGPU assembly hipcc makes of tlc's HIP output: every kernel whose source has a
gemm uses matrix instructions (v_mfma_*), and no kernel uses scratch memory (register spills:
`ScratchSize` and the spill counts of the code object metadata must be 0).

    gcn_check.py --tlc build/tlc --work DIR --target gfx942 --arch gfx940 SOURCE...

A SOURCE is a .tl file (compiled by tlc for --target first) or a .hip/.cpp file compiled as it
is with -I for each --include. --expect INSTRUCTION (repeatable) names instructions that must
appear in the assembly of every source (a .hip self-test names the forms it calls); without it,
a .tl source with `gemm(` must contain v_mfma. A .tl file tlc refuses for the target ("//
compile-check: not TARGET" in it, as compile_check.py reads it) is skipped. Debian's LLVM does
not know gfx942: gfx940 stands in for it (the same instructions).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# The compile layer's reading of "// compile-check: not TARGET..." lines.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "emit"))
from compile_check import excluded_targets  # noqa: E402


def check(source, args):
    """Returns (ok, lines) for one source."""
    name = os.path.splitext(os.path.basename(source))[0]
    lines = []
    if source.endswith(".tl"):
        if args.target in excluded_targets(Path(source)):
            return True, [f"skip {name}: not meant for {args.target}"]
        hip = os.path.join(args.work, f"{name}_{args.target}.hip")
        run = subprocess.run([args.tlc, source, f"--target={args.target}", "-o", hip], capture_output=True, text=True)
        if run.returncode != 0:
            return False, [f"FAIL tlc {source} --target={args.target}:\n{run.stderr}"]
    else:
        hip = source
    asm = os.path.join(args.work, f"{name}_{args.target}.s")
    flags = ["-std=c++17", f"--offload-arch={args.arch}", "-O3", "--cuda-device-only", "-S", "-Wall", "-Werror",
             "-Wno-unused-command-line-argument"] + [f"-I{d}" for d in args.include] + args.flag
    # hipcc's rocm_agent_enumerator prints a traceback on machines without an AMD GPU; not ours.
    compiled = subprocess.run([args.hipcc, *flags, hip, "-o", asm], capture_output=True, text=True)
    if compiled.returncode != 0:
        return False, [f"FAIL hipcc -S {hip}:\n{compiled.stderr}"]
    text = open(asm, encoding="utf-8").read()
    ok = True
    wanted = args.expect or (["v_mfma"] if source.endswith(".tl") and "gemm(" in open(source).read() else [])
    for instruction in wanted:
        count = len(re.findall(r"^\s*" + re.escape(instruction), text, re.M))
        lines.append(f"{'ok  ' if count else 'FAIL'} {instruction}: {count} in the assembly of {name} for {args.arch}")
        ok &= count > 0
    scratch = [int(n) for n in re.findall(r"; ScratchSize: (\d+)", text)]
    spills = [int(n) for n in re.findall(r"\.(?:s|v)gpr_spill_count:\s+(\d+)", text)]
    clean = scratch and not any(scratch) and not any(spills)
    lines.append(f"{'ok  ' if clean else 'FAIL'} {name} for {args.arch}: scratch {scratch}, spills {spills}")
    return ok and bool(clean), lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tlc")
    parser.add_argument("--hipcc", default=os.environ.get("HIPCC", "hipcc"))
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--flag", action="append", default=[], help="another hipcc flag (-DNAME)")
    parser.add_argument("--work", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--arch", required=True)
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("sources", nargs="+")
    args = parser.parse_args()
    if not shutil.which(args.hipcc):
        sys.exit(f"gcn_check.py: {args.hipcc} not found")
    if any(s.endswith(".tl") for s in args.sources) and not args.tlc:
        sys.exit("gcn_check.py: --tlc is needed for .tl sources")
    os.makedirs(args.work, exist_ok=True)
    failed = False
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for ok, lines in pool.map(lambda s: check(s, args), args.sources):
            print("\n".join(lines))
            failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
