"""A Triton flash-attention forward kernel, the kit's Triton baseline (bench.py): one program per
(query block, batch x head), online softmax in base 2 over key blocks, both matmuls on tensor
cores through tl.dot, autotuned over a few block shapes. Written for the kit in the manner of
Triton's fused-attention tutorial (not a copy of it); [B, H, S, D] contiguous f16 tensors.
"""
import math

import torch
import triton
import triton.language as tl


def available():
    return torch.cuda.is_available()


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
             for bm, bn, w, s in [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 4)]],
    key=["S", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attention_fwd(Q, K, V, O, scale_log2, S, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * S * HEAD_DIM
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < S, other=0.0)
    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    end = tl.minimum(S, (block + 1) * BLOCK_M) if CAUSAL else S
    for start in range(0, end, BLOCK_N):
        keys = start + cols
        kt = tl.load(K + base + keys[None, :] * HEAD_DIM + dims[:, None], mask=keys[None, :] < S, other=0.0)
        scores = tl.dot(q, kt) * scale_log2
        keep = keys[None, :] < S
        if CAUSAL:
            keep = keep & (rows[:, None] >= keys[None, :])
        scores = tl.where(keep, scores, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(scores, 1))
        p = tl.math.exp2(scores - new_max[:, None])
        alpha = tl.math.exp2(row_max - new_max)
        row_sum = row_sum * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < S, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        row_max = new_max
    out = acc / row_sum[:, None]
    tl.store(O + base + rows[:, None] * HEAD_DIM + dims[None, :], out.to(tl.float16), mask=rows[:, None] < S)


def attention(q, k, v, causal):
    """softmax(q k^T / sqrt(D)) v for [B, H, S, D] contiguous f16 tensors."""
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(S, meta["BLOCK_M"]), B * H)
    _attention_fwd[grid](q, k, v, o, 1.4426950408889634 / math.sqrt(D), S, HEAD_DIM=D, CAUSAL=causal)
    return o
