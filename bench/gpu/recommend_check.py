#!/usr/bin/env python3
"""Does the recommender pick well? samples/gemm_auto.tl's top candidates, timed on the GPU.

    python3 bench/gpu/recommend_check.py --tlc build/tlc --target sm90 [--top 8] [--shape 8192,8192,8192]

Asks `tlc recommend` for the top N configurations of samples/gemm_auto.tl at the shape, builds
each (its values passed as -D), checks it against an f32 matmul on random inputs and times it
with CUDA events (median of --iters runs). Issue 6's goal: the recommended (rank 1) configuration
within 10% of the fastest of the N. Prints a Markdown table for bench/RESULTS.md.
"""
import argparse
import ctypes
import json
import os
import subprocess
import tempfile

from gemm_bench import NVCC_ARCH, ROOT, build, median_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tlc", default=os.path.join(ROOT, "build", "tlc"))
    parser.add_argument("--target", default="sm90")
    parser.add_argument("--arch", default=None)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--shape", default="8192,8192,8192", help="M,N,K")
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    import torch

    M, N, K = (int(x) for x in args.shape.split(","))
    arch = args.arch or NVCC_ARCH[args.target]
    ranked = json.loads(subprocess.run(
        [args.tlc, "recommend", os.path.join(ROOT, "samples", "gemm_auto.tl"), f"--target={args.target}",
         f"--shape=M={M},N={N},K={K}", f"--top={args.top}"], check=True, capture_output=True, text=True).stdout)
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    stream = torch.cuda.current_stream().cuda_stream
    print(f"Device: {torch.cuda.get_device_name()}, f16 gemm_auto, M={M} N={N} K={K}, "
          f"tlc --target={args.target} (nvcc -arch={arch})\n")
    print("| rank | values | model estimate (us) | measured (ms) | max rel. error |")
    print("|---:|---|---:|---:|---:|")
    measured = []
    with tempfile.TemporaryDirectory() as tmp:
        for cand in ranked["candidates"]:
            values = cand["values"]
            name = f"gemm_auto_{cand['rank']}"
            lib = build(args.tlc, "gemm_auto", args.target, arch, tmp,
                        [f"{k}={v}" for k, v in values.items()], name)
            launch = lib.tl_gemm_auto
            launch.restype = ctypes.c_int
            launch.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3 + [ctypes.c_void_p]

            def run():
                status = launch(a.data_ptr(), b.data_ptr(), c.data_ptr(), M, K, N, stream)
                if status != 0:
                    raise RuntimeError(f"tl_gemm_auto returned {status}")

            run()
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            ms = median_ms(torch, run, args.iters)
            measured.append(ms)
            shown = ", ".join(f"{k}={v}" for k, v in values.items())
            print(f"| {cand['rank']} | {shown} | {cand['estimate_us']:.0f} | {ms:.3f} | {err:.2e} |")
    best = min(measured)
    print(f"\nRecommended (rank 1): {measured[0]:.3f} ms; fastest of {len(measured)}: {best:.3f} ms "
          f"(rank {measured.index(best) + 1}); recommended / fastest = {measured[0] / best:.2f} (goal <= 1.10)")


if __name__ == "__main__":
    main()
