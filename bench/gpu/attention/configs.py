"""The attention experiment's configurations (issue 44's table): which .tl, which -D values, the
sizes each launch takes (by the launcher's own size names), and the kind of workload, which
experiment.py's run side maps to its inputs, reference, SDPA baseline and FLOP count.

Kinds:
  fwd_bshd   attention forward, Q [b, s, h, d], K and V [b, s, h / groups, d], out [b, s, h, d]
  fwd_bhsd   the same laid out [b, h, s, d]
  mla        MLA decode: Q [B, H, 512], Q_pe [B, H, 64], KV [B, S, 1, 512], K_pe [B, S, 1, 64]
  decode     flash decoding (split KV + combine): Q [b, h, d], K, V [b, S, h / groups, d], mask
  fwd_fp8    fp8 forward: Q, K [b, s, h, d] and Vt [b, h, d, s] in e4m3, scales (sizes' q_scale,
             k_scale, v_scale), out [b, s, h, d] f16
  bwd_bshd   the backward's kernels (forward for lse, prep, main, post) against SDPA's backward

"after_only": True: a configuration the baseline compiler cannot build (a parameter it lacks);
prepared and run with this build only.
"""

# The forward kernels' tile, block and pipeline parameters, left to the recommender.
TILES_AUTO = ["block_M=auto", "block_N=auto", "stages=auto", "threads=auto"]

# Forward shapes: 16k tokens as 4 sequences of 4096 (the GQA row: 32 query heads on 4 KV
# heads), model dim 2048 for MHA.
CONFIGS = [
    # samples/flash_attention.tl: the sample's defaults (64 x 64, 128 threads), TileLang-size
    # tiles (128 x 128, 256 threads), d64 and causal.
    {"id": "fa_d128", "source": "samples/flash_attention.tl", "defines": ["D=128", "causal=false"],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d128_128x128", "source": "samples/flash_attention.tl",
     "defines": ["D=128", "causal=false", "block_M=128", "block_N=128", "threads=256"],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d128_causal", "source": "samples/flash_attention.tl", "defines": ["D=128", "causal=true"],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d64", "source": "samples/flash_attention.tl", "defines": ["D=64", "causal=false"],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 32}},
    # Two consumer warpgroups (128 rows on 256 threads): on sm90 the ping-pong schedule
    # (passes/pipeline/PingPong.cpp) makes them take turns issuing the gemms.
    {"id": "fa_d128_128x128_causal", "source": "samples/flash_attention.tl",
     "defines": ["D=128", "causal=true", "block_M=128", "block_N=128", "threads=256"],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d64_128x128", "source": "samples/flash_attention.tl",
     "defines": ["D=64", "causal=false", "block_M=128", "block_N=128", "threads=256"],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 32}},
    # overlap = true (experimental, passes/pipeline/Overlap.cpp; the sample with it, in
    # tests/run/kernels/flash_attention_overlap.tl): the softmax overlapping the previous block's
    # P V gemm, alone (one warpgroup) and with the ping-pong schedule. The baseline tlc has no
    # such keyword: these rows have an "after" build only, to read against the rows above (their
    # SDPA ratios).
    {"id": "fa_d128_overlap", "source": "tests/run/kernels/flash_attention_overlap.tl",
     "defines": ["D=128", "causal=false"], "after_only": True,
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d128_128x128_overlap", "source": "tests/run/kernels/flash_attention_overlap.tl",
     "defines": ["D=128", "causal=false", "block_M=128", "block_N=128", "threads=256"],
     "after_only": True, "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d128_128x128_causal_overlap", "source": "tests/run/kernels/flash_attention_overlap.tl",
     "defines": ["D=128", "causal=true", "block_M=128", "block_N=128", "threads=256"],
     "after_only": True, "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    # fp8 (e4m3) forward (tests/run/kernels/flash_attention_fp8.tl: V given transposed, P
    # rounded to e4m3), at the sample's tiles and at 128 x 128 on 256 threads (warp-specialised,
    # ping-pong), against f16 SDPA of the same values. Built by this tlc only.
    {"id": "fa_fp8_d128", "source": "tests/run/kernels/flash_attention_fp8.tl", "defines": [],
     "after_only": True, "kind": "fwd_fp8",
     "sizes": {"B": 4, "S": 4096, "H": 16, "q_scale": 0.5, "k_scale": 0.5, "v_scale": 1.0}},
    {"id": "fa_fp8_d128_128x128", "source": "tests/run/kernels/flash_attention_fp8.tl",
     "defines": ["block_M=128", "block_N=128", "threads=256"], "after_only": True, "kind": "fwd_fp8",
     "sizes": {"B": 4, "S": 4096, "H": 16, "q_scale": 0.5, "k_scale": 0.5, "v_scale": 1.0}},
    # GQA forward as TileLang's example launches it: 64 x 64 tiles, 128 threads, 2 stages, d128,
    # 32 query heads on 4 KV heads (the kernel whose wgmma ptxas serialised: C7520).
    {"id": "gqa_d128", "source": "tests/corpus/gqa_fwd_bshd.tl", "defines": ["dim=128", "groups=8"],
     "kind": "fwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 32}},
    {"id": "gqa_d128_causal", "source": "tests/corpus/gqa_fwd_bshd.tl",
     "defines": ["dim=128", "groups=8", "is_causal=true"],
     "kind": "fwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 32}},
    {"id": "gqa_d128_128x128", "source": "tests/corpus/gqa_fwd_bshd.tl",
     "defines": ["dim=128", "groups=8", "block_M=128", "block_N=128", "threads=256"],
     "kind": "fwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 32}},
    {"id": "gqa_d128_128x128_causal", "source": "tests/corpus/gqa_fwd_bshd.tl",
     "defines": ["dim=128", "groups=8", "block_M=128", "block_N=128", "threads=256", "is_causal=true"],
     "kind": "fwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 32}},
    {"id": "mha_bshd_d128", "source": "tests/corpus/mha_fwd_bshd.tl", "defines": ["dim=128"],
     "kind": "fwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 16}},
    {"id": "mha_bhsd_d128", "source": "tests/corpus/mha_fwd_bhsd.tl", "defines": ["dim=128"],
     "kind": "fwd_bhsd", "sizes": {"batch": 4, "heads": 16, "seq_q": 4096, "seq_kv": 4096}},
    # MLA decode as TileLang's example: batch 64, 8192 KV tokens, 128 heads, 512 + 64 (the kernel
    # that had 255 registers and local memory).
    {"id": "mla_tilelang", "source": "tests/run/kernels/mla_decode.tl",
     "defines": ["block_H=64", "block_N=64", "threads=256"],
     "kind": "mla", "sizes": {"B": 64, "H": 128, "S": 8192}},
    # Flash decoding as TileLang's example: batch 64, 32 heads on 8 KV heads, 8192 tokens, d128.
    {"id": "decode_d128", "source": "tests/corpus/flash_decoding.tl", "defines": ["dim=128"],
     "kind": "decode", "sizes": {"batch": 64, "heads": 32, "seqlen_kv": 8192}},
    # `auto` (issue 46): the tile, block and pipeline parameters left to the recommender, which
    # models the launch's sizes (prepare passes them as --shape); read against the hand-tiled
    # rows of the same shape (the "auto" set). A baseline compiler without `-D NAME=auto` runs
    # them after-only.
    {"id": "fa_d128_auto", "source": "samples/flash_attention.tl",
     "defines": ["D=128", "causal=false", *TILES_AUTO],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d128_causal_auto", "source": "samples/flash_attention.tl",
     "defines": ["D=128", "causal=true", *TILES_AUTO],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 16}},
    {"id": "fa_d64_auto", "source": "samples/flash_attention.tl",
     "defines": ["D=64", "causal=false", *TILES_AUTO],
     "kind": "fwd_bshd", "sizes": {"B": 4, "S": 4096, "H": 32}},
    {"id": "gqa_d128_auto", "source": "tests/corpus/gqa_fwd_bshd.tl",
     "defines": ["dim=128", "groups=8", *TILES_AUTO],
     "kind": "fwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 32}},
    {"id": "mla_auto", "source": "tests/run/kernels/mla_decode.tl",
     "defines": ["block_H=auto", "block_N=auto", "stages=auto", "threads=auto"],
     "kind": "mla", "sizes": {"B": 64, "H": 128, "S": 8192}},
    # The backward of TileLang's example (d64, 16 heads, 4 x 4096 tokens).
    {"id": "bwd_d64", "source": "tests/corpus/mha_bwd_bshd.tl", "defines": [],
     "kind": "bwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 16}},
    {"id": "bwd_d64_causal", "source": "tests/corpus/mha_bwd_bshd.tl", "defines": ["is_causal=true"],
     "kind": "bwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 16}},
    {"id": "bwd_d128", "source": "tests/corpus/mha_bwd_bshd.tl", "defines": ["dim=128"],
     "kind": "bwd_bshd", "sizes": {"batch": 4, "seq_len": 4096, "heads": 16}},
]

# --quick: the rows of the table that this experiment was made for.
QUICK = ["fa_d128", "gqa_d128", "gqa_d128_causal", "mla_tilelang", "decode_d128"]

# --set NAME: named groups of configurations. "schedule": the forward at the sample's tiles and
# TileLang's GQA tiles (one consumer warpgroup: no ping-pong, after / before should stay near
# 1.00, the control) and at 128 x 128 on 256 threads (two warpgroups taking turns: what the
# ping-pong schedule changes), non-causal and causal.
SETS = {
    "quick": QUICK,
    # The recommender's picks beside the hand-tiled rows of the same shapes: the pick's time over
    # the fastest row's is issue 46's measure (goal: within 1.10).
    "auto": ["fa_d128", "fa_d128_128x128", "fa_d128_auto", "fa_d128_causal", "fa_d128_128x128_causal",
             "fa_d128_causal_auto", "fa_d64", "fa_d64_128x128", "fa_d64_auto", "gqa_d128", "gqa_d128_128x128",
             "gqa_d128_auto", "mla_tilelang", "mla_auto"],
    "schedule": ["fa_d128", "fa_d128_causal", "fa_d128_128x128", "fa_d128_128x128_causal", "fa_d64",
                 "fa_d64_128x128", "gqa_d128", "gqa_d128_causal", "gqa_d128_128x128", "gqa_d128_128x128_causal",
                 "mla_tilelang", "fa_fp8_d128", "fa_fp8_d128_128x128", "fa_d128_overlap", "fa_d128_128x128_overlap", "fa_d128_128x128_causal_overlap"],
    # A parallel loop's atomic_add of dQ as 2 x f32 vector reductions (docs/lowering.md, "Vector
    # stores from parallel loops") against element atomics: run with --baseline-rev at the commit
    # before the change. decode_d128's combine stores its rows as vectors too.
    "vector_stores": ["bwd_d64", "bwd_d64_causal", "bwd_d128", "decode_d128"],
}
