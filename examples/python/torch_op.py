#!/usr/bin/env python3
"""The tlc gemm as a PyTorch operator, `torch.ops.tlc.gemm`, through torch.library.custom_op
(PyTorch >= 2.4): usable in eager code, torch.compile (its fake implementation gives the output's
shape without running the kernel) and with torch.library.opcheck.

It wraps the extension module that examples/python builds (`gemm`, from tlc --emit=python). That
module is built for one target: the cpu one takes CPU tensors; a module built for sm80/sm90
(tlc --target=sm90 ... -o gemm.cu, compiled with nvcc and linked with the binding) takes CUDA
tensors of the current device and a stream.

Not run in CI: PyTorch's wheels are too large for it. The GPU kit runs it on a CUDA module
(docs/testing.md, "GPU kit"; test_gemm_cuda.py calls it too). Run it where PyTorch is installed:

    PYTHONPATH=build-py python3 examples/python/torch_op.py
"""

import torch

import gemm as tlc_gemm  # the module examples/python builds


@torch.library.custom_op("tlc::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B for f16 A [M, K] and B [K, N] (f32 accumulation), a new f16 tensor [M, N]."""
    # The binding takes row-major arrays and refuses tensors that require grad (DLPack cannot
    # export them): hand it contiguous, detached ones.
    a, b = a.detach().contiguous(), b.detach().contiguous()
    c = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    if a.device.type == "cuda":
        # The launch goes to PyTorch's current stream of the tensors' device, as any op of theirs.
        with torch.cuda.device(a.device):
            tlc_gemm.gemm(a, b, c, stream=torch.cuda.current_stream().cuda_stream)
    else:
        tlc_gemm.gemm(a, b, c)
    return c


@gemm.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    torch._check(a.shape[1] == b.shape[0], lambda: f"tlc::gemm: A is {list(a.shape)}, B {list(b.shape)}")
    return a.new_empty((a.shape[0], b.shape[1]))


if __name__ == "__main__":
    device = "cpu" if tlc_gemm.target == "cpu" else "cuda"
    # K and N multiples of 8: the GPU launchers need rows 16 bytes apart (the cpu one does not).
    a = torch.randn(37, 40, dtype=torch.float16, device=device)
    b = torch.randn(40, 48, dtype=torch.float16, device=device)
    c = torch.ops.tlc.gemm(a, b)
    reference = (a.float() @ b.float()).half()
    torch.testing.assert_close(c, reference, rtol=2e-3, atol=2e-2)
    torch.library.opcheck(gemm, (a, b))
    compiled = torch.compile(lambda x, y: torch.ops.tlc.gemm(x, y) * 2)
    torch.testing.assert_close(compiled(a, b), reference * 2, rtol=2e-3, atol=4e-2)
    print(f"tlc::gemm on {device}: matches torch, passes opcheck and torch.compile")
