#!/usr/bin/env python3
"""Checks the PTX nvcc makes of tlc's output for the instructions the target should use (and,
with --absent, for those it should not), and that ptxas reports no register spills (nor
wgmma it fenced or serialised: ptxas_report.py).

    ptx_check.py --tlc build/tlc --work DIR [--absent INSTRUCTION]... [-D NAME=VALUE]... SAMPLE.tl TARGET ARCH
                 INSTRUCTION...

e.g. ptx_check.py --tlc build/tlc --work /tmp/p samples/gemm.tl sm80 sm_80 mma.sync.aligned.m16n8k16

-D passes a kernel parameter to tlc (its outputs then carry a suffix naming the values).

A .cu file instead of a .tl sample is compiled as it is (no tlc; TARGET only names the outputs),
with -I for each --include; --werror compiles warning-free as the compile layer does
(-Xcompiler -Wall,-Werror -Werror all-warnings).
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ptxas_report  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tlc")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--werror", action="store_true")
    parser.add_argument("--absent", action="append", default=[], help="an instruction the PTX must not contain")
    parser.add_argument("--work", required=True)
    parser.add_argument("-D", dest="defines", action="append", default=[], help="a kernel parameter, NAME=VALUE")
    parser.add_argument("sample")
    parser.add_argument("target")
    parser.add_argument("arch")
    parser.add_argument("instructions", nargs="+")
    args = parser.parse_args()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    os.makedirs(args.work, exist_ok=True)
    name = os.path.splitext(os.path.basename(args.sample))[0]
    suffix = "".join("_" + d.replace("=", "") for d in args.defines)
    flags = ["-std=c++17", f"-arch={args.arch}"] + [f"-I{d}" for d in args.include]
    if args.werror:
        flags += ["-Xcompiler", "-Wall,-Werror", "-Werror", "all-warnings"]
    if args.sample.endswith(".cu"):
        cu = args.sample
        base = os.path.join(args.work, f"{name}_{args.target}")
    else:
        if not args.tlc:
            sys.exit("ptx_check.py: --tlc is needed for a .tl sample")
        cu = os.path.join(args.work, f"{name}{suffix}_{args.target}.cu")
        defines = [x for d in args.defines for x in ("-D", d)]
        subprocess.run([args.tlc, args.sample, f"--target={args.target}", *defines, "-o", cu], check=True)
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
    # No spills, and no wgmma that ptxas fenced or serialised (ptxas_report.py); a stack frame is
    # allowed here (ptxas_sweep.py checks those for every kernel).
    for name, kernel in sorted(ptxas_report.parse(compiled.stderr).items()):
        found = ptxas_report.problems(kernel, allow_stack=True)
        print(f"{'FAIL' if found else 'ok  '} ptxas on {ptxas_report.short_name(name)}: {kernel['registers']} registers"
              f"{': ' + '; '.join(found) if found else ''}")
        failed |= bool(found)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
