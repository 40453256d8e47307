#!/usr/bin/env python3
"""Checks the PTX nvcc makes of tlc's output for the instructions the target should use (and,
with --absent, for those it should not), and that ptxas reports no register spills (nor
serialised wgmma).

    ptx_check.py --tlc build/tlc --work DIR [--absent INSTRUCTION]... SAMPLE.tl TARGET ARCH INSTRUCTION...

e.g. ptx_check.py --tlc build/tlc --work /tmp/p samples/gemm.tl sm80 sm_80 mma.sync.aligned.m16n8k16

A .cu file instead of a .tl sample is compiled as it is (no tlc; TARGET only names the outputs),
with -I for each --include; --werror compiles warning-free as the compile layer does
(-Xcompiler -Wall,-Werror -Werror all-warnings).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tlc")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--werror", action="store_true")
    parser.add_argument("--absent", action="append", default=[], help="an instruction the PTX must not contain")
    parser.add_argument("--work", required=True)
    parser.add_argument("sample")
    parser.add_argument("target")
    parser.add_argument("arch")
    parser.add_argument("instructions", nargs="+")
    args = parser.parse_args()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    os.makedirs(args.work, exist_ok=True)
    name = os.path.splitext(os.path.basename(args.sample))[0]
    flags = ["-std=c++17", f"-arch={args.arch}"] + [f"-I{d}" for d in args.include]
    if args.werror:
        flags += ["-Xcompiler", "-Wall,-Werror", "-Werror", "all-warnings"]
    if args.sample.endswith(".cu"):
        cu = args.sample
        base = os.path.join(args.work, f"{name}_{args.target}")
    else:
        if not args.tlc:
            sys.exit("ptx_check.py: --tlc is needed for a .tl sample")
        cu = os.path.join(args.work, f"{name}_{args.target}.cu")
        subprocess.run([args.tlc, args.sample, f"--target={args.target}", "-o", cu], check=True)
        base = cu[:-3]
    ptx = base + ".ptx"
    subprocess.run([nvcc, *flags, "--ptx", cu, "-o", ptx], check=True)
    text = open(ptx).read()
    failed = False
    for instruction in args.instructions:
        count = text.count(instruction)
        print(f"{'ok  ' if count else 'FAIL'} {instruction}: {count} in the PTX of {name} for {args.target}")
        failed |= count == 0
    for instruction in args.absent:
        count = text.count(instruction)
        print(f"{'FAIL' if count else 'ok  '} no {instruction}: {count} in the PTX of {name} for {args.target}")
        failed |= count != 0
    compiled = subprocess.run([nvcc, *flags, "-c", cu, "-o", base + ".o", "-Xptxas", "-v"], capture_output=True,
                              text=True)
    if compiled.returncode != 0:
        sys.exit(f"FAIL nvcc -c {cu}:\n{compiled.stderr}")
    verbose = compiled.stderr
    spills = [int(n) for n in re.findall(r"(\d+) bytes spill stores", verbose)]
    print(f"{'ok  ' if not any(spills) else 'FAIL'} spill stores: {spills}")
    failed |= any(spills)
    # ptxas serialises wgmma (waits after each) when it cannot prove the asynchronous
    # accumulators safe, and says so: correct but slow.
    serialized = "wgmma.mma_async instructions are serialized" in verbose
    print(f"{'FAIL' if serialized else 'ok  '} wgmma not serialized by ptxas")
    failed |= serialized
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
