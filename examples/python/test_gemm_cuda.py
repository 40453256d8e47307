#!/usr/bin/env python3
"""test_gemm.py's checks on the example's module built for a GPU target (sm80 or sm90: the kernel
compiled by nvcc, linked with the binding) with PyTorch CUDA tensors, plus what only a GPU shows:
a CPU tensor refused, the launcher's own refusal, the `stream` argument honoured, and the
torch.ops.tlc.gemm wrapper (torch_op.py) on a side stream, eager and through torch.compile.
The GPU kit runs it (docs/testing.md, "GPU kit"):

    python3 examples/python/test_gemm_cuda.py MODULE_DIR
"""

import sys

import torch

import test_gemm
from test_gemm import check, expect, right_answer

# Ragged edges of the 16x16x16 tiles, a single row, M = 0, a long K (the pipeline's stages).
# K and N stay multiples of 8: the GPU launchers need rows 16 bytes apart (vector and TMA loads).
SHAPES = [(32, 32, 32), (37, 24, 40), (200, 72, 136), (1, 64, 8), (50, 8, 24), (0, 8, 8), (130, 1024, 264)]


class TorchCudaArrays:
    """What the checks do with arrays, for PyTorch tensors on the current CUDA device."""
    there = "cpu"
    elsewhere = (1, 0)  # kDLCPU

    def __init__(self):
        self.here = f"cuda:{torch.cuda.current_device()}"
        self.generator = torch.Generator(device="cuda").manual_seed(18)

    def randn(self, *shape):
        return torch.randn(shape, generator=self.generator, device="cuda", dtype=torch.float16)

    def nans(self, *shape):
        return torch.full(shape, float("nan"), device="cuda", dtype=torch.float16)

    def zeros(self, *shape):
        return torch.zeros(shape, device="cuda", dtype=torch.float16)

    def astype(self, x, name):
        return x.to(getattr(torch, name))

    def f64(self, x):
        return x.double()  # the reference is torch.matmul in float64

    def f16_step(self, x):
        # float16: 10 fraction bits, normal exponents from -14 (below: subnormals, steps of 2^-24).
        exponent = torch.floor(torch.log2(abs(x).clamp_min(2.0 ** -14)))
        return torch.exp2(exponent - 10)

    def largest(self, x):
        return float(x.max()) if x.numel() else 0.0


def delay():
    """Keeps the current stream busy for some milliseconds: work queued after it on that stream
    waits, while a launch on another stream would run at once and see the memory before it."""
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(200_000_000)  # clock cycles: about 0.1 s
    else:
        x = torch.randn(4096, 4096, device="cuda")
        for _ in range(20):
            x = x @ x / 64


def cuda_checks(gemm, xp):
    a, b, c = xp.randn(24, 40), xp.randn(40, 16), xp.nans(24, 16)
    expect(ValueError, ["gemm: B:", f"expected an array on {xp.here}", "got one on cpu"],
           lambda: gemm.gemm(a, b.cpu(), c), "a CPU tensor")
    expect(RuntimeError, ["gemm: the launcher returned cudaErrorInvalidValue", "16-byte aligned"],
           lambda: gemm.gemm(xp.randn(37, 29), xp.randn(29, 48), xp.nans(37, 48)),
           "K = 29 (rows of A 58 bytes apart: the launcher's own check)")
    expect(TypeError, ["gemm: stream:", "expected an int"], lambda: gemm.gemm(a, b, c, stream="side"),
           "a stream that is not a handle")

    # The stream argument: the inputs and the NaN-filled output are written on a side stream
    # (PyTorch's are non-blocking) after a delay; a launch on another stream would run before
    # them and its result be overwritten with NaN.
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        delay()
        a2, b2, c2 = xp.randn(200, 72), xp.randn(72, 136), xp.nans(200, 136)
        gemm.gemm(a2, b2, c2, stream=side.cuda_stream)
    side.synchronize()
    ok, error = right_answer(xp, a2, b2, c2)
    check(ok, f"gemm on a side stream: largest error {error}")
    print(f"ok: gemm with stream=torch.cuda.Stream().cuda_stream (largest error {error:.3g})")

    # The PyTorch operator: it passes the current stream itself.
    import torch_op  # noqa: F401 (registers torch.ops.tlc.gemm)
    with torch.cuda.stream(side):
        delay()
        a3, b3 = xp.randn(37, 40), xp.randn(40, 48)
        c3 = torch.ops.tlc.gemm(a3, b3)
    side.synchronize()
    ok, error = right_answer(xp, a3, b3, c3)
    check(ok and c3.device.type == "cuda", f"torch.ops.tlc.gemm on a side stream: largest error {error}")
    print(f"ok: torch.ops.tlc.gemm on the current (side) stream (largest error {error:.3g})")
    # aot_eager: Dynamo and AOTAutograd trace the op with its fake implementation and call the
    # kernel, without Inductor's code generation (torch_op.py's own run covers that).
    compiled = torch.compile(lambda x, y: torch.ops.tlc.gemm(x, y) * 2, backend="aot_eager", fullgraph=True)
    ok, error = right_answer(xp, a3, b3, compiled(a3, b3) / 2)
    check(ok, f"torch.compile(torch.ops.tlc.gemm): largest error {error}")
    print("ok: torch.ops.tlc.gemm through torch.compile (aot_eager)")


def main():
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    import gemm
    if not torch.cuda.is_available():
        sys.exit("test_gemm_cuda.py: PyTorch sees no CUDA device")
    check(gemm.target in ("sm80", "sm90"), f"the module names a GPU target, got {gemm.target}")
    xp = TorchCudaArrays()
    test_gemm.common_checks(gemm, xp, SHAPES)
    cuda_checks(gemm, xp)
    test_gemm.finish()


if __name__ == "__main__":
    main()
