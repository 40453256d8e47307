#!/usr/bin/env python3
"""How long tlc takes per sample and target, against the backend compiler on tlc's output.

    python3 bench/compile_time.py --tlc build/tlc [--repeat 5] [--markdown]

tlc is timed as the median of --repeat runs writing to a temporary directory; the backend
compiler (nvcc -c, hipcc -c, g++ -c) once, on the file tlc wrote. Backends that are not
installed are reported as such. Prints a Markdown table with --markdown (for bench/RESULTS.md).
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = ["vector_add", "reduce_sum", "softmax", "rmsnorm", "gemm", "flash_attention", "gemm_auto"]
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
BACKENDS = {
    "sm80": ([NVCC, "-std=c++17", "-arch=sm_80", "-c"], ".cu"),
    "sm90": ([NVCC, "-std=c++17", "-arch=sm_90a", "-c"], ".cu"),
    "gfx90a": (["hipcc", "-std=c++17", "--offload-arch=gfx90a", "-c"], ".hip"),
    "cpu": (["g++", "-std=c++17", "-O2", "-fopenmp", "-c"], ".cpp"),
}


def timed(cmd):
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tlc", default=os.path.join(ROOT, "build", "tlc"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--samples", default=",".join(SAMPLES), help="comma-separated sample names")
    parser.add_argument("--targets", default=",".join(BACKENDS))
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.targets.split(","):
            backend, ext = BACKENDS[target]
            available = os.path.exists(backend[0]) or shutil.which(backend[0]) is not None
            for sample in args.samples.split(","):
                out = os.path.join(tmp, f"{sample}_{target}{ext}")
                src = os.path.join(ROOT, "samples", f"{sample}.tl")
                times = []
                for _ in range(args.repeat):
                    seconds, result = timed([args.tlc, src, f"--target={target}", "-o", out])
                    if result.returncode != 0:
                        sys.exit(f"tlc failed on {sample} for {target}:\n{result.stderr}")
                    times.append(seconds)
                tlc_ms = statistics.median(times) * 1000
                backend_ms = None
                if available:
                    seconds, result = timed(backend + [out, "-o", out + ".o"])
                    if result.returncode != 0:
                        sys.exit(f"{backend[0]} failed on {sample} for {target}:\n{result.stderr}")
                    backend_ms = seconds * 1000
                rows.append((sample, target, tlc_ms, backend_ms, os.path.basename(backend[0])))

    if args.markdown:
        print(f"Machine: {platform.node()} ({os.cpu_count()} cores), {platform.platform()}")
        print()
        print("| sample | target | tlc (ms) | backend | backend (ms) | tlc / backend |")
        print("|---|---|---:|---|---:|---:|")
        for sample, target, t, b, name in rows:
            ratio = f"{t / b:.3f}" if b else "-"
            bstr = f"{b:.0f}" if b else "not installed"
            print(f"| {sample} | {target} | {t:.1f} | {name} | {bstr} | {ratio} |")
    else:
        for sample, target, t, b, name in rows:
            bstr = f"{b:8.0f} ms" if b else "   (none)"
            print(f"{sample:16} {target:7} tlc {t:7.1f} ms   {name:6} {bstr}")


if __name__ == "__main__":
    main()
