#!/usr/bin/env python3
"""GEMM on a GPU: tlc's emitted kernel against torch.matmul (cuBLAS), checked and timed.

    python3 bench/gpu/gemm_bench.py --tlc build/tlc --target sm90 [--arch sm_90a] [--dtype f16|bf16|e4m3]
                                    [-D block_N=256 -D threads=384 ...] [--sweep]

Builds samples/gemm.tl (f16 in, f32 accumulate, f16 out), samples/gemm_bf16.tl or
samples/gemm_fp8.tl (e4m3 in, B given as [N, K], f16 out) with tlc and nvcc into a shared
library, calls its extern "C" launcher through ctypes on PyTorch's device pointers, checks the
result against an f32 matmul of the same inputs on random data, then times it and cuBLAS
(torch.matmul; torch._scaled_mm with unit scales for e4m3) with CUDA events (warm-up, median of
--iters runs). -D passes tile parameters to tlc; --sweep builds each configuration of SWEEP
(the sample's own first) and prints one table per configuration, to find the one the sample
should default to. Needs a CUDA GPU and PyTorch; prints Markdown tables for bench/RESULTS.md.
"""
import argparse
import ctypes
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (16, 8192, 8192)]


SAMPLES = {"f16": "gemm", "bf16": "gemm_bf16", "e4m3": "gemm_fp8"}
# nvcc's -arch for each CUDA target (sm90's wgmma and setmaxnreg need the "a" variant).
NVCC_ARCH = {"sm80": "sm_80", "sm86": "sm_86", "sm89": "sm_89", "sm90": "sm_90a"}
# Hopper-sized tiles to try (-D overrides of the samples' parameters): one or two consumer
# warpgroups, 64-byte or 128-byte K rows, three or four stages.
SWEEP = [
    (),
    ("block_N=256", "block_K=64", "threads=256", "stages=3"),
    ("block_N=256", "block_K=64", "threads=256", "stages=4"),
    ("block_M=128", "block_N=128", "block_K=64", "threads=256", "stages=4"),
    ("block_N=256", "block_K=32", "threads=256", "stages=4"),
]


def build(tlc, sample, target, arch, workdir, defines=(), name="gemm"):
    """samples/<sample>.tl through tlc (with -D NAME=VALUE for each define) and nvcc: a ctypes library."""
    cu = os.path.join(workdir, name + ".cu")
    cmd = [tlc, os.path.join(ROOT, "samples", sample + ".tl"), f"--target={target}", "-o", cu]
    for d in defines:
        cmd += ["-D", d]
    subprocess.run(cmd, check=True)
    lib = os.path.join(workdir, "lib" + name + ".so")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    subprocess.run([nvcc, "-O3", "-std=c++17", f"-arch={arch}", "-shared", "-Xcompiler", "-fPIC", cu, "-o", lib],
                   check=True)
    return ctypes.CDLL(lib)


def median_ms(torch, fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tlc", default=os.path.join(ROOT, "build", "tlc"))
    parser.add_argument("--target", default="sm90")
    parser.add_argument("--arch", default=None)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--dtype", choices=sorted(SAMPLES), default="f16")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                        help="a tile parameter for tlc (repeatable)")
    parser.add_argument("--sweep", action="store_true", help="time every configuration of SWEEP")
    args = parser.parse_args()
    import torch

    arch = args.arch or NVCC_ARCH[args.target]
    configs = [tuple(args.defines) + c for c in SWEEP] if args.sweep else [tuple(args.defines)]
    for defines in configs:
        bench_config(torch, args, arch, defines)


def bench_config(torch, args, arch, defines):
    with tempfile.TemporaryDirectory() as tmp:
        sample = SAMPLES[args.dtype]
        try:
            lib = build(args.tlc, sample, args.target, arch, tmp, defines)
        except subprocess.CalledProcessError as e:
            print(f"\n{' '.join(defines) or '(defaults)'}: not built ({e})\n")
            return
        launch = getattr(lib, "tl_" + sample)  # (A, B, C, M, K, N, stream): sizes in order of first appearance
        fp8 = args.dtype == "e4m3"
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}[args.dtype]
        launch.restype = ctypes.c_int
        launch.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3 + [ctypes.c_void_p]
        print(f"\nDevice: {torch.cuda.get_device_name()}, {args.dtype}, tlc --target={args.target} "
              f"{' '.join('-D' + d for d in defines)} (nvcc -arch={arch})\n")
        baseline = "torch._scaled_mm" if fp8 else "torch.matmul"
        print(f"| M | N | K | max rel. error | tlc (ms) | {baseline} (ms) | tlc TFLOP/s | tlc / cuBLAS |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for M, N, K in SHAPES:
            torch.manual_seed(0)
            a = torch.randn(M, K, device="cuda").to(dtype)
            # gemm_fp8 takes B as [N, K]; the 16-bit samples as [K, N].
            b = torch.randn(N, K, device="cuda").to(dtype) if fp8 else torch.randn(K, N, device="cuda").to(dtype)
            c = torch.empty(M, N, device="cuda", dtype=torch.float16 if fp8 else dtype)
            stream = torch.cuda.current_stream().cuda_stream

            def run():
                status = launch(a.data_ptr(), b.data_ptr(), c.data_ptr(), M, K, N, stream)
                if status != 0:
                    raise RuntimeError(f"tl_{sample} returned {status}")

            run()
            ref = a.float() @ (b.float().t() if fp8 else b.float())
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            ours = median_ms(torch, run, args.iters)
            if fp8:
                one = torch.ones((), device="cuda")
                # b.t() of a row-major [N, K] is the column-major [K, N] _scaled_mm wants.
                theirs = median_ms(torch, lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                                                    out_dtype=torch.float16), args.iters)
            else:
                theirs = median_ms(torch, lambda: torch.matmul(a, b), args.iters)
            tflops = 2 * M * N * K / ours / 1e9
            print(f"| {M} | {N} | {K} | {err:.2e} | {ours:.3f} | {theirs:.3f} | {tflops:.1f} | {theirs / ours:.2f} |")


if __name__ == "__main__":
    main()
