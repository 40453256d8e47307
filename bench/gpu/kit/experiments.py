"""The queue of prepared GPU experiments (docs/testing.md, "GPU kit"; issue 43): tile and schedule
variants that no machine here can time, each timed side by side with its baseline in one run
once a GPU is at hand:

    ./gpu-kit.sh run --phases experiments [--out DIR]     builds only these, then runs them

prepare.py emits every kernel of QUEUE into the kit (gen/experiments/), with the stage count the
compiler chose (its `pipeline depth` decision); kit.py builds them and run_all times them. Every
result is checked against a float64 reference first: a kernel whose result is wrong is reported
WRONG, not timed, and fails the run. Ratios are baseline time / tlc time (above 1: tlc faster);
nothing here is a measurement until a GPU has run it (bench/RESULTS.md records those runs).

An experiment: name, title, what it asks, kind (the runner), shapes, and its kernels, each
(label, source, -D values). Add one by appending to QUEUE (a new kind needs a runner below).
Optional: `kernel`, the kernel of a source of several; `recommend`, the parameters to leave to
the recommender and the shape it models (sizes, and integer scalars that size the grid; `extra`:
what the runner needs of the pick, as a kernel's fourth element): prepare.py then adds the recommender's rank 1 (the
source with those parameters `auto`, `tlc recommend`) as a kernel of its own, and the runner
reports its time over the fastest kernel's (issue 46's goal: within 1.10). With `sizes` there
(the size symbol of each position of a shape, None for a compile-time one) and a runner that
returns its times, run_all also returns each shape's times as a measured sweep in the format tlc
reads (docs/recommend.md, "Measured sweeps"): kit.py writes them to sweeps.json, for bench/data.
"""
import ctypes

from bench import P, I, checked, launcher, median_ms, rel_err
from gemm_family import run_block_fp8, run_dequant_fp4, run_grouped

DEPTH_SOURCE = "bench/gpu/experiments/gemm_depth.tl"
LAYERNORM_SOURCE = "tests/corpus/layernorm.tl"
BEGINNER_GEMM_SOURCE = "bench/gpu/experiments/beginner_gemm.tl"
PERSISTENT_SOURCE = "bench/gpu/experiments/gemm_persistent.tl"
VECTOR_SOURCE = "bench/gpu/experiments/vector_add.tl"
SPLIT_K_SOURCE = "bench/gpu/experiments/gemm_split_k.tl"
BEGINNER_FUSED_SOURCE = "bench/gpu/experiments/beginner_fused.tl"
CLUSTER_SOURCE = "bench/gpu/experiments/gemm_cluster.tl"
CONV_SOURCE = "tests/corpus/convolution.tl"
GROUPED_SOURCE = "tests/corpus/grouped_gemm.tl"
DEQUANT_FP4_SOURCE = "tests/corpus/dequant_gemm_fp4.tl"
DEEPGEMM_SOURCE = "tests/corpus/deepgemm_fp8.tl"

# issue 43's GEMM shapes (M, N, K): square at two sizes, and a short K.
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024)]

QUEUE = [
    {
        "name": "gemm_depth",
        "title": "GEMM f16 on Hopper: pipeline depth (issue 43)",
        "question": "Do the deepened stages (pipeline/Depth.cpp: 7 for 128x128x32) bring TileLang's example "
                    "tiles near the block_K = 64 configurations and cuBLAS? The pinned counts 4..8 trace the "
                    "curve that load_latency_ns (sm90: 800, fitted) should predict: throughput should stop "
                    "rising where (stages - 1) x 16 KB reaches the latency's bytes. Every row keeps one k-tile per "
                    "wgmma group (unroll = 1): the depth alone, as in the fourth run (gemm_unroll measures the "
                    "unrolling).",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": GEMM_SHAPES,
        "kernels": [
            ("128x128x32, 3 stages as written", DEPTH_SOURCE, ("deepen=false", "unroll=1")),
            ("128x128x32, 3 stages deepened", DEPTH_SOURCE, ("unroll=1",)),
            ("128x128x32, 4 stages pinned", DEPTH_SOURCE, ("stages=4", "deepen=false", "unroll=1")),
            ("128x128x32, 5 stages pinned", DEPTH_SOURCE, ("stages=5", "deepen=false", "unroll=1")),
            ("128x128x32, 6 stages pinned", DEPTH_SOURCE, ("stages=6", "deepen=false", "unroll=1")),
            ("128x128x32, 8 stages pinned", DEPTH_SOURCE, ("stages=8", "deepen=false", "unroll=1")),
            ("128x128x64, 4 stages", DEPTH_SOURCE, ("block_K=64", "stages=4")),
            ("128x256x64, 3 stages, 256 threads", DEPTH_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=3")),
        ],
    },
    {
        "name": "gemm_unroll",
        "title": "GEMM f16 on Hopper: k-step unrolling (issue 43)",
        "question": "Does issuing two 32-wide k-tiles' wgmmas as one group (pipeline/Unroll.cpp: 128x128x32 "
                    "carries ~140 ns of tensor work a k-tile, below sm90's k_step_min_ns of 250) close the "
                    "12-25% that 128x128x32 trailed 128x128x64 by at the same depth (fourth run)? Rows: the "
                    "default (unrolled, 8 stages: 6 x 16 KB in flight), the same with unroll = 1 (deepened to "
                    "7, the same 96 KB in flight) and pinned at 8, and 128x128x64 deepened (4 stages, "
                    "3 x 32 KB) and pinned at 4. If the unrolled row does not reach the block_K = 64 rows, "
                    "the fixed cost is elsewhere (the producer, or the wait on full); if unroll = 1 at 8 "
                    "stages matches it, depth and not unrolling was the difference.",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": GEMM_SHAPES,
        "kernels": [
            ("128x128x32, unrolled (2 k-tiles a group, 8 stages)", DEPTH_SOURCE, ()),
            ("128x128x32, unroll=1 (deepened, 7 stages)", DEPTH_SOURCE, ("unroll=1",)),
            ("128x128x32, unroll=1, 8 stages pinned", DEPTH_SOURCE, ("unroll=1", "stages=8", "deepen=false")),
            ("128x128x32, unrolled, 256 threads", DEPTH_SOURCE, ("threads=256",)),
            ("128x128x32, unroll=1, 256 threads", DEPTH_SOURCE, ("threads=256", "unroll=1")),
            ("128x128x64, deepened (4 stages)", DEPTH_SOURCE, ("block_K=64",)),
            ("128x128x64, 4 stages pinned, unroll=1", DEPTH_SOURCE,
             ("block_K=64", "stages=4", "deepen=false", "unroll=1")),
        ],
    },
    {
        "name": "gemm_persistent",
        "title": "GEMM f16 on Hopper: persistent blocks with a rasterised tile loop (issue 43)",
        "question": "Does a persistent grid (one block per SM looping over tiles in panels of 8 rows, the "
                    "warp-specialised pipeline's mbarrier phases carried across tiles, so the producer loads the "
                    "next tile while the consumers write the last) beat one block per tile at the same tiles? "
                    "The model (docs/recommend.md, \"Persistent grids\") expects most at 8192x8192x1024 (16 "
                    "k-tiles a tile: the fill and epilogue are a large part of each) and under 1% at 8192^3. "
                    "Rows in pairs: the best tiles of the fourth run (128x256x64, 256 threads) and TileLang's "
                    "example tiles (128x128x32, 128 threads, deepened and unrolled as the default), each with "
                    "and without `persistent`, and 128x128x64.",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": GEMM_SHAPES,
        "kernels": [
            ("128x256x64, 256 threads, 3 stages", PERSISTENT_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=3")),
            ("128x256x64, 256 threads, 3 stages, persistent", PERSISTENT_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=3", "persistent=true")),
            ("128x128x32 (TileLang's), deepened", PERSISTENT_SOURCE, ()),
            ("128x128x32 (TileLang's), deepened, persistent", PERSISTENT_SOURCE, ("persistent=true",)),
            ("128x128x64, deepened", PERSISTENT_SOURCE, ("block_K=64",)),
            ("128x128x64, deepened, persistent", PERSISTENT_SOURCE, ("block_K=64", "persistent=true")),
        ],
    },
    {
        "name": "gemm_split_k",
        "title": "Skinny GEMM f16 on Hopper: split-K (issue 43)",
        "question": "Does splitting each output tile's k-loop over S blocks (grid(..., split_k = S): partial tiles "
                    "summed in the kernel by the last block of a tile, docs/lowering.md \"Split-K\") bring decoding "
                    "shapes (M = 16, 32, 64; 64 or 128 tiles of 64x128 on 132 SMs) to issue 43's 0.9x cuBLAS? "
                    "Rows: split 1 (one block per tile, today's kernel), 2, 4, 8, and 64x64 tiles (twice the "
                    "tiles) at 4; the recommender's pick for 16x8192x8192 (the model: waves of tiles x S "
                    "against the SMs, the partials' traffic, at least 4 k-tiles a block). Each call's launcher "
                    "also zeroes the arrival counters (a memset on the stream), part of its time.",
        "kind": "gemm",
        "dtype": "f16",
        "workspace": True,
        "kernel": "gemm_split_k",
        "shapes": [(16, 8192, 8192), (32, 8192, 8192), (64, 8192, 8192), (16, 4096, 4096), (32, 4096, 4096),
                   (64, 4096, 4096)],
        "recommend": {"params": ["split"], "shape": {"M": 16, "N": 8192, "K": 8192}},
        "kernels": [
            ("64x128x64, split 1", SPLIT_K_SOURCE, ("split=1",)),
            ("64x128x64, split 2", SPLIT_K_SOURCE, ("split=2",)),
            ("64x128x64, split 4", SPLIT_K_SOURCE, ("split=4",)),
            ("64x128x64, split 8", SPLIT_K_SOURCE, ("split=8",)),
            ("64x64x64, split 4", SPLIT_K_SOURCE, ("block_N=64", "split=4")),
        ],
    },
    {
        "name": "gemm_cluster",
        "title": "GEMM f16 on Hopper: thread-block clusters of 2 with A's tile multicast (issue 43)",
        "question": "Do clusters of 2 along N (each block loads half of A's tile and multicasts it to both, "
                    "docs/lowering.md \"Clusters\") beat the same tiles without clusters at 4096^3 and 8192^3? "
                    "The multicast halves A's L2-to-SM traffic; the cost is two cluster barriers a block and "
                    "every consumer thread's arrival on both blocks' empty barriers. Rows in pairs, cluster 1 then "
                    "2: the best tiles of the fourth run (128x256x64, 256 threads) and TileLang's example tiles "
                    "(128x128x32, deepened and unrolled as the default); a persistent row at cluster 1 for "
                    "reference (persistent grids run without clusters: tlc warns).",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": [(4096, 4096, 4096), (8192, 8192, 8192)],
        "kernels": [
            ("128x256x64, 256 threads, 3 stages", CLUSTER_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=3")),
            ("128x256x64, 256 threads, 3 stages, cluster 2", CLUSTER_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=3", "cluster=2")),
            ("128x128x32 (TileLang's), deepened", CLUSTER_SOURCE, ()),
            ("128x128x32 (TileLang's), deepened, cluster 2", CLUSTER_SOURCE, ("cluster=2",)),
            ("128x128x64, deepened", CLUSTER_SOURCE, ("block_K=64",)),
            ("128x128x64, deepened, cluster 2", CLUSTER_SOURCE, ("block_K=64", "cluster=2")),
            ("128x256x64, 256 threads, 3 stages, persistent (cluster 1)", CLUSTER_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=3", "persistent=true")),
        ],
    },
    {
        "name": "shape_variants_gemm",
        "title": "GEMM f16 on Hopper: the general variant at odd sizes (issue 45)",
        "question": "How fast is the general variant (element loads, no TMA) that the launcher runs when rows "
                    "are not whole 16-byte vectors, against the fast variant at the size rounded up? Issue 45 "
                    "asks >= 0.5x. Sizes that are multiples of 8 run the fast variant, the odd ones the general.",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": [(4096, 4096, 4096), (4095, 4095, 4095), (8192, 8192, 8192), (8191, 8191, 8191),
                   (8192, 8192, 8190)],
        "kernels": [
            ("samples' gemm (128x128x32, 3 stages, deepened)", DEPTH_SOURCE, ()),
            ("128x256x64, 256 threads, 4 stages", DEPTH_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=4")),
        ],
    },
    {
        "name": "shape_variants_rows",
        "title": "Row kernels on Hopper: the general variant on offset views (issue 45)",
        "question": "The kit's softmax, rmsnorm and layernorm with every tensor starting one element into its "
                    "buffer (aligned to its element only: the general variant) against the same at aligned "
                    "pointers (the fast variant). Issue 45 asks >= 0.5x.",
        "kind": "rows",
        "dtype": "f16",
        "shapes": [],
        "kernels": [
            ("softmax", "samples/softmax.tl", (), {"kind": "softmax"}),
            ("rmsnorm", "samples/rmsnorm.tl", (), {"kind": "rmsnorm"}),
            ("layernorm 4 rows, 64 threads", "tests/corpus/layernorm.tl", ("threads=64", "blk_m=4"),
             {"kind": "layernorm", "kernel": "layernorm_fwd"}),
        ],
    },
    {
        "name": "gemm_tiles",
        "title": "GEMM f16 on Hopper: tiles and warpgroups around the deepened pipeline (issue 43, 46)",
        "question": "With the pipeline deepened, which tiles and how many consumer warpgroups does the "
                    "recommender's rank 1 have to be? 256 threads at 128x128 (two warpgroups of 64 rows), "
                    "128x256 at block_K = 32 and 64, 256x128, and whether deepening a block_K = 64 loop pays.",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": GEMM_SHAPES,
        "kernels": [
            ("128x128x32, 256 threads, deepened", DEPTH_SOURCE, ("threads=256",)),
            ("128x256x32, 256 threads, deepened", DEPTH_SOURCE, ("block_N=256", "threads=256")),
            ("128x128x64, 3 stages deepened", DEPTH_SOURCE, ("block_K=64",)),
            ("128x128x64, 256 threads, deepened", DEPTH_SOURCE, ("block_K=64", "threads=256")),
            ("128x256x64, 256 threads, 4 stages", DEPTH_SOURCE,
             ("block_N=256", "block_K=64", "threads=256", "stages=4")),
            ("128x256x64, 256 threads, deepened", DEPTH_SOURCE,
             ("block_N=256", "block_K=64", "threads=256")),
            ("256x128x64, 256 threads, 3 stages", DEPTH_SOURCE,
             ("block_M=256", "block_K=64", "threads=256", "stages=3")),
        ],
    },
    {
        "name": "beginner_gemm",
        "title": "GEMM f16 on Hopper written on whole tensors against the developer level (issue 48)",
        "question": "Is `C = A @ B;` (the beginner level: tlc writes the tiles and the recommender picks "
                    "them) within 10% of samples/gemm_auto.tl, the same GEMM as tile dataflow with every "
                    "parameter auto? Both take the recommender's rank 1 for sm90.",
        "kind": "gemm",
        "dtype": "f16",
        "shapes": GEMM_SHAPES,
        "kernels": [
            ("beginner: C = A @ B", BEGINNER_GEMM_SOURCE, ()),
            ("developer: samples/gemm_auto.tl", "samples/gemm_auto.tl", ()),
        ],
    },
    {
        "name": "beginner_bmm",
        "title": "Batched GEMM f16 on Hopper written on whole tensors, X [B, M, K] @ W [K, N] (issue 48)",
        "question": "Is `Y = X @ W;` with a batch dimension (the grid's third dimension carries it; the rows are "
                    "not folded into one GEMM of B * M rows) within 10% of torch.matmul, and of the 2-D "
                    "beginner_gemm at M' = B * M? Small M per batch index (128) is where folding would matter.",
        "kind": "bmm",
        "dtype": "f16",
        "shapes": [(8, 512, 4096, 4096), (32, 128, 4096, 4096), (4, 2048, 4096, 1024)],
        "kernels": [("beginner: Y = X @ W, batched", BEGINNER_FUSED_SOURCE, (), {"kernel": "bmm"})],
    },
    {
        "name": "beginner_rms_proj",
        "title": "RMS-scaled projection f16 on Hopper written on whole tensors (issue 48)",
        "question": "What does the statistics pass cost? `Y = X @ W * rsqrt(mean(X * X, dim = 1) + 1e-6)` (each "
                    "block reads its rows of X once more before its K loop) against torch's three kernels and "
                    "against beginner_gemm's bare `C = A @ B` at the same shapes (goal: within 10% of the bare "
                    "GEMM).",
        "kind": "rms_proj",
        "dtype": "f16",
        "shapes": GEMM_SHAPES,
        "kernels": [("beginner: Y = X @ W * rsqrt(mean(X * X, dim = 1) + eps)", BEGINNER_FUSED_SOURCE, (),
                     {"kernel": "rms_proj"})],
    },
    {
        "name": "layernorm_pick",
        "title": "LayerNorm forward (bf16 rows of 1024) on Hopper: the recommender's pick against a grid (issue 46)",
        "question": "Is the recommender's rank 1 for blk_m and threads within 10% of the fastest of the grid "
                    "(rows a block 1..16, threads 64..512)? On an H200 its pick (16 rows, 256 threads) ran at "
                    "0.62 of a device copy, TileLang's (1 row, 256 threads) 0.44, 4 rows of 64 threads 0.75: the "
                    "model sees neither registers per thread nor bytes in flight. The grid says where the "
                    "optimum lies and how flat it is.",
        "kind": "layernorm",
        "dtype": "bf16",
        "shapes": [(65536, 1024), (16384, 1024)],
        "kernel": "layernorm_fwd",
        "recommend": {"params": ["blk_m", "threads"], "shape": {"N": 65536}, "sizes": ["N", None]},
        "kernels": [(f"{rows} row{'s' if rows > 1 else ''}, {threads} threads", LAYERNORM_SOURCE,
                     (f"blk_m={rows}", f"threads={threads}"))
                    for rows in (1, 2, 4, 8, 16) for threads in (64, 128, 256, 512)],
    },
    {
        "name": "vector_pick",
        "title": "Vector add f32 on Hopper: the recommender's pick against a grid (issue 46)",
        "question": "Is the recommender's rank 1 for a vector kernel's block_N and threads within 10% of the "
                    "fastest of the grid (256..4096 elements a block, 128 or 256 threads)? The model counts "
                    "32-byte sectors and models N at 2^24; its candidates stop at 256 elements a block "
                    "(the tile-extent role's values): a faster larger block says the role needs more.",
        "kind": "vector",
        "dtype": "f32",
        "shapes": [(1 << 24,), (1 << 26,)],
        "kernel": "vector_add",
        "recommend": {"params": ["block_N", "threads"], "shape": {"N": 1 << 24}, "sizes": ["N"]},
        "kernels": [(f"{block} elements, {threads} threads", VECTOR_SOURCE, (f"block_N={block}", f"threads={threads}"))
                    for block in (256, 1024, 4096) for threads in (128, 256)],
    },
    {
        "name": "conv_im2col",
        "title": "Convolution f16 on Hopper: pipelined im2col gathers against cuDNN (issue 43)",
        "question": "Does the im2col convolution (the corpus port of TileLang's example: NHWC 3x3, pad 1, stride "
                    "1) reach issue 43's 0.8x cuDNN now that the gather is a pipeline producer (16-byte cp.async "
                    "a version per stage, issued stages ahead beside the filter's TMA loads, the wgmma group "
                    "left in flight, the rows' divisions hoisted out of the k-loop)? Issue 43 measured "
                    "0.05-0.09x with the synchronous gather. Rows: TileLang's tiles (64x128x32, 256 threads, "
                    "deepened to 4 stages), 128x128x32 and 128x128x64. cuDNN: torch.nn.functional.conv2d on "
                    "channels-last tensors with cudnn.benchmark on; the filter's [3, 3, C, F] copy for tlc is "
                    "made once, outside the timing.",
        "kind": "conv",
        "dtype": "f16",
        # (N, H, W, C, F): TileLang's example shape, and a deeper one (more k-tiles a block).
        "shapes": [(8, 64, 64, 256, 256), (16, 32, 32, 512, 512)],
        "kernels": [
            ("64x128x32 (TileLang's), 256 threads", CONV_SOURCE, ()),
            ("128x128x32, 256 threads", CONV_SOURCE, ("block_M=128",)),
            ("128x128x64, 256 threads", CONV_SOURCE, ("block_M=128", "block_K=64")),
        ],
    },
    {
        "name": "grouped_gemm",
        "title": "Grouped GEMM f16 on Hopper: TileLang's example and larger tiles (issue 43)",
        "question": "The corpus' grouped GEMM (each group's rows padded to block_M in the grid, a block finds its "
                    "group by a scan) at TileLang's tiles (64x64x32, 2 stages as written, deepened) measured "
                    "0.51x a loop of torch.matmul on an H200 (4 groups of 1,000-3,000 rows, K = N = 4096). How much "
                    "do 128-row tiles recover? (Since 2026-11-29 the loop is warp-specialised: the producer computes "
                    "the group index again, where 350 TFLOP/s was the modulo schedule.) Against a loop of "
                    "torch.matmul over the groups and, "
                    "where this PyTorch has it, torch._grouped_mm; issue 43 asks >= 0.9x the faster.",
        "kind": "grouped",
        "dtype": "f16",
        # (group sizes, K, N)
        "shapes": [((1000, 3000, 2000, 1500), 4096, 4096), (tuple([512, 1024, 768, 256] * 4), 4096, 4096)],
        # The recommender at the first shape: its grid is the scalar total_m_blocks (the groups' rows
        # in blocks of 64: 16 + 47 + 32 + 24), which --shape gives the model (issue 46); block_M stays
        # 64, the host's padding (`extra`: what the runner needs of the pick).
        "recommend": {"params": ["block_N", "block_K", "num_stages", "threads"],
                      "shape": {"batch_sum": 7500, "batch_count": 4, "K": 4096, "N": 4096, "total_m_blocks": 119},
                      "extra": {"block_M": 64}},
        "kernels": [
            ("64x64x32 (TileLang's), deepened", GROUPED_SOURCE, (), {"block_M": 64}),
            ("128x128x64, 256 threads, 4 stages", GROUPED_SOURCE,
             ("block_M=128", "block_N=128", "block_K=64", "threads=256", "num_stages=4"), {"block_M": 128}),
            ("128x256x64, 256 threads, 3 stages", GROUPED_SOURCE,
             ("block_M=128", "block_N=256", "block_K=64", "threads=256", "num_stages=3"), {"block_M": 128}),
        ],
    },
    {
        "name": "dequant_fp4",
        "title": "fp4-dequantising GEMM on Hopper: TileLang's example (issue 43)",
        "question": "The corpus' fp4 (s1e2m1) dequantising GEMM, Ct = (A @ dequant(B)^T)^T, measured 145 TFLOP/s "
                    "(0.18x cuBLAS f16 of the same shape) at 8192^3 on an H200. The corpus' tiles (64x64x128, "
                    "128 threads) and the original's main() launch (128x128x128, 256 threads: now "
                    "warp-specialised, one block filling the SM) against cuBLAS f16 on the dequantised B "
                    "(torch.matmul); issue 43 asks >= 0.9x at large M and >= 2x at M <= 16.",
        "kind": "dequant_fp4",
        "dtype": "f16",
        "shapes": [(8192, 8192, 8192), (4096, 4096, 4096), (16, 8192, 8192)],
        "kernels": [
            ("64x64x128, 128 threads (corpus)", DEQUANT_FP4_SOURCE, ()),
            ("128x128x128, 256 threads (the original's main)", DEQUANT_FP4_SOURCE,
             ("block_M=128", "block_N=128", "block_K=128", "threads=256")),
        ],
    },
    {
        "name": "deepgemm_fp8",
        "title": "Block-scaled fp8 GEMM on Hopper: DeepGEMM's 1x128 / 128x128 scales (issue 43)",
        "question": "The corpus' DeepGEMM port (A scaled per row and 128 columns, B per 128x128 block, each "
                    "k-step promoted into a second accumulator) against torch._scaled_mm with per-tensor scales "
                    "on the same fp8 data (cuBLASLt; it does less work), checked against the dequantised product "
                    "in float64. Issue 43 asks >= 1.0x torch._scaled_mm.",
        "kind": "block_fp8",
        "dtype": "bf16",
        "shapes": GEMM_SHAPES,
        "kernels": [
            ("64x128x128 (TileLang's), 4 stages", DEEPGEMM_SOURCE, ()),
            ("128x128x128, 4 stages", DEEPGEMM_SOURCE, ("block_M=128",)),
        ],
    },
]

# A result is right when max |tlc - reference| / max |reference| stays under this: f16 output
# rounds each element to 2^-11 of itself; the f32 accumulation over K adds far less.
TOLERANCE = {"f16": 5e-3, "bf16": 4e-2, "f32": 1e-6}


def kernel_id(experiment, index):
    return f"{experiment['name']}_{index}"


def check(err, dtype):
    """Whether a relative error passes for an output of this type."""
    return err == err and err <= TOLERANCE[dtype]  # NaN fails


def bind(kernels, lib_of, argtypes, blank):
    """Each built kernel's launcher ({id: function}), and a row (the label, the depth, `blank`
    empty columns, "not built", then empty ones) for each kernel that was not built."""
    fns, rows = {}, []
    for k in kernels:
        lib = lib_of(k)
        if lib:
            fns[k["id"]] = launcher(lib, k["launcher"], argtypes)
        else:
            rows.append([k["label"], k["depth"]] + [""] * blank + ["not built", "", "", "", ""])
    return fns, rows


def check_and_time(torch, exp, k, run, out, ref, where, flops, baseline_ms, iters, log):
    """One kernel run once, its output checked against the reference, then timed: the row's last
    five columns (rel. error, tlc ms, tlc TFLOP/s, baseline TFLOP/s, baseline / tlc) and 1 when
    it failed or was wrong (its error in the first of them), else 0. `baseline_ms()` times the
    baseline, after the kernel."""
    try:
        run()
        torch.cuda.synchronize()
    except RuntimeError as x:
        return [str(x), "", "", "", ""], 1
    err = rel_err(torch, out, ref)
    if not check(err, exp["dtype"]):
        log(f"kit: experiment {exp['name']}: {k['label']} {where} WRONG (rel. error {err:.1e})")
        return [f"WRONG {err:.1e}", "", "", "", ""], 1
    ours = median_ms(torch, run, iters)
    theirs = baseline_ms()
    return [f"{err:.1e}", f"{ours:.3f}", f"{flops / ours / 1e9:.0f}", f"{flops / theirs / 1e9:.0f}",
            f"{theirs / ours:.2f}"], 0


def run_gemm(torch, exp, kernels, lib_of, iters, log):
    """C = A @ B (A [M, K], B [K, N]) for every shape and kernel, against torch.matmul; the
    inputs and the float64 reference made once per shape. Returns rows, wrong results, a note."""
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[exp["dtype"]]
    rows, wrong = [], 0
    fns = {}
    # A launcher with a workspace (split-K): NAME(..., workspace, stream) and NAME_workspace_size(M, K, N).
    workspace = exp.get("workspace", False)
    sizes = {}
    for k in kernels:
        lib = lib_of(k)
        if lib:
            fns[k["id"]] = launcher(lib, k["launcher"], [P, P, P, I, I, I] + ([P] if workspace else []) + [P])
            if workspace:
                sizes[k["id"]] = launcher(lib, k["launcher"] + "_workspace_size", [I, I, I])
                sizes[k["id"]].restype = ctypes.c_size_t
        else:
            rows.append([k["label"], k["depth"], "", "", "", "not built", "", "", "", ""])
            wrong += 1
    for M, N, K in exp["shapes"]:
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda").to(dtype)
        b = torch.randn(K, N, device="cuda").to(dtype)
        ref = a.double() @ b.double()
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
            extra = []
            if workspace:  # garbage to start with: the launcher zeroes what must start at zero
                ws = torch.full((max(int(sizes[k["id"]](M, K, N)), 16),), 0xA5, device="cuda", dtype=torch.uint8)
                extra = [ws.data_ptr()]
            run = checked(fn, a.data_ptr(), b.data_ptr(), c.data_ptr(), M, K, N, *extra,
                          torch.cuda.current_stream().cuda_stream)
            result, bad = check_and_time(torch, exp, k, run, c, ref, f"{M}x{N}x{K}", 2 * M * N * K,
                                         lambda: median_ms(torch, lambda: torch.matmul(a, b), iters), iters, log)
            rows.append([k["label"], k["depth"], M, N, K] + result)
            wrong += bad
        del a, b, ref
        torch.cuda.empty_cache()
    return rows, wrong, ""


def run_fused(torch, exp, kernels, lib_of, iters, log):
    """The beginner level's fused products (beginner_fused.tl): `bmm` (X [B, M, K] @ W [K, N]) and
    `rms_proj` (X @ W scaled by each row's reciprocal RMS) for every shape, against float64 first,
    then timed beside torch's unfused form. Returns rows, wrong results, a note."""
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[exp["dtype"]]
    batched = exp["kind"] == "bmm"
    rows, wrong = [], 0
    fns = {}
    for k in kernels:
        lib = lib_of(k)
        if lib:
            fns[k["id"]] = launcher(lib, k["launcher"], [P, P, P] + [I] * (4 if batched else 3) + [P])
        else:
            rows.append([k["label"], "", "", "not built", "", "", "", ""])
            wrong += 1
    for shape in exp["shapes"]:
        B, M, N, K = shape if batched else (1, *shape)
        torch.manual_seed(0)
        x = torch.randn(*((B,) if batched else ()), M, K, device="cuda").to(dtype)
        w = torch.randn(K, N, device="cuda").to(dtype)
        if batched:
            ref = x.double() @ w.double()
            theirs_fn = lambda: torch.matmul(x, w)  # noqa: E731
        else:
            ref = (x.double() @ w.double()) * torch.rsqrt((x.double() ** 2).mean(dim=1, keepdim=True) + 1e-6)
            theirs_fn = lambda: (torch.matmul(x, w) * torch.rsqrt(x.float().pow(2).mean(dim=1, keepdim=True)  # noqa: E731
                                                                  + 1e-6)).to(dtype)
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            y = torch.full(tuple(ref.shape), float("nan"), device="cuda", dtype=dtype)
            sizes = (B, M, K, N) if batched else (M, K, N)
            run = checked(fn, x.data_ptr(), w.data_ptr(), y.data_ptr(), *sizes, torch.cuda.current_stream().cuda_stream)
            label = "x".join(map(str, shape))
            try:
                run()
                torch.cuda.synchronize()
            except RuntimeError as e:
                rows.append([k["label"], label, "", str(e), "", "", "", ""])
                wrong += 1
                continue
            err = rel_err(torch, y, ref)
            if not check(err, exp["dtype"]):
                log(f"kit: experiment {exp['name']}: {k['label']} {label} WRONG (rel. error {err:.1e})")
                rows.append([k["label"], label, "", f"WRONG {err:.1e}", "", "", "", ""])
                wrong += 1
                continue
            ours = median_ms(torch, run, iters)
            theirs = median_ms(torch, theirs_fn, iters)
            flops = 2 * B * M * N * K
            rows.append([k["label"], label, k["depth"], f"{err:.1e}", f"{ours:.3f}", f"{flops / ours / 1e9:.0f}",
                         f"{flops / theirs / 1e9:.0f}", f"{theirs / ours:.2f}"])
        del x, w, ref
        torch.cuda.empty_cache()
    return rows, wrong, ""


def run_rows(torch, exp, kernels, lib_of, iters, log):
    """Each row kernel at aligned pointers and on views one element into their buffers (bench.py's
    memory benchmark, checked against float64 first); the ratio is offset time / aligned time
    turned into general / fast speed."""
    from bench import bench_memory
    rows, wrong = [], 0
    quick = iters < 30
    fast = bench_memory(torch, kernels, lib_of, quick, iters)["rows"]
    general = bench_memory(torch, kernels, lib_of, quick, iters, offset=1)["rows"]
    for k, f, g in zip(kernels, fast, general):
        for variant, row in (("aligned (fast)", f), ("offset by one element (general)", g)):
            try:
                ok = row[3] != "" and check(float(row[2]), exp["dtype"])
            except ValueError:  # a launch error's message where the error would be
                ok = False
            wrong += not ok
            rows.append([k["label"], variant, row[1], row[2] if ok else f"WRONG {row[2]}", row[3], row[4], row[6], ""])
        if rows[-1][4] and rows[-2][4]:
            rows[-1][-1] = f"{float(rows[-2][4]) / float(rows[-1][4]):.2f}"
    return rows, wrong, ""


def run_layernorm(torch, exp, kernels, lib_of, iters, log):
    """Y = layer_norm(X) * gamma + beta over rows of N (bf16, with the f32 mean and rstd per row)
    for every shape and kernel, against float64; bandwidth over a device copy of the same bytes.
    Per shape, the recommender's pick (the kernel marked `pick`) over the fastest kernel."""
    rows, wrong, notes, measured = [], 0, [], {}
    fns = {}
    for k in kernels:
        lib = lib_of(k)
        if lib:
            fns[k["id"]] = launcher(lib, k["launcher"], [P] * 6 + [I, P])
        else:
            rows.append([k["label"], "", "", "", "not built", "", ""])
            wrong += 1
    for M, N in exp["shapes"]:
        torch.manual_seed(0)
        x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
        g = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        ref = torch.nn.functional.layer_norm(x.double(), (N,), g.double(), b.double(), 1e-5)
        moved = 2 * x.numel() * 2 + 2 * M * 4  # X read, Y written (bf16), Mean and Rstd (f32)
        src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        copy = median_ms(torch, lambda: dst.copy_(src), iters)
        times = {}
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            mean = torch.empty(M, device="cuda")
            rstd = torch.empty(M, device="cuda")
            run = checked(fn, x.data_ptr(), g.data_ptr(), b.data_ptr(), y.data_ptr(), mean.data_ptr(),
                          rstd.data_ptr(), M, torch.cuda.current_stream().cuda_stream)
            try:
                run()
                torch.cuda.synchronize()
            except RuntimeError as err:
                rows.append([k["label"], M, N, str(err), "", "", ""])
                wrong += 1
                continue
            err = rel_err(torch, y, ref)
            if not check(err, exp["dtype"]):
                log(f"kit: experiment {exp['name']}: {k['label']} {M}x{N} WRONG (rel. error {err:.1e})")
                rows.append([k["label"], M, N, f"WRONG {err:.1e}", "", "", ""])
                wrong += 1
                continue
            ours = median_ms(torch, run, iters)
            times[k["id"]] = ours
            rows.append([k["label"], M, N, f"{err:.1e}", f"{ours:.3f}", f"{moved / ours / 1e6:.0f}",
                         f"{copy / ours:.2f}"])
        measured[(M, N)] = times
        pick_note(exp, kernels, times, f"{M}x{N}", notes, log)
        del x, g, b, ref, src, dst
        torch.cuda.empty_cache()
    note = ("; ".join(notes) + " (goal <= 1.10).") if notes else "The recommender's pick did not run."
    return rows, wrong, note, measured


def pick_note(exp, kernels, times, shape, notes, log):
    """The recommender's pick (the kernel marked `pick`) over the fastest kernel of one shape."""
    pick = next((k for k in kernels if k.get("pick")), None)
    if times and pick and pick["id"] in times:
        best = min(times, key=times.get)
        ratio = times[pick["id"]] / times[best]
        label = next(k["label"] for k in kernels if k["id"] == best)
        notes.append(f"{shape}: rank 1 / fastest = {ratio:.2f} (fastest: {label})")
        log(f"kit: experiment {exp['name']}: {shape}: the recommender's pick / the fastest = {ratio:.2f}")


def run_vector(torch, exp, kernels, lib_of, iters, log):
    """C = A + B over f32 vectors of N for every shape and kernel, checked against float64;
    bandwidth over a device copy of the same bytes; per shape, the pick over the fastest."""
    rows, wrong, notes, measured = [], 0, [], {}
    fns = {}
    for k in kernels:
        lib = lib_of(k)
        if lib:
            fns[k["id"]] = launcher(lib, k["launcher"], [P, P, P, I, P])
        else:
            rows.append([k["label"], "", "", "not built", "", "", ""])
            wrong += 1
    for (N,) in exp["shapes"]:
        torch.manual_seed(0)
        a = torch.randn(N, device="cuda")
        b = torch.randn(N, device="cuda")
        ref = a.double() + b.double()
        moved = 3 * N * 4
        src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        copy = median_ms(torch, lambda: dst.copy_(src), iters)
        times = {}
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            c = torch.full((N,), float("nan"), device="cuda")
            run = checked(fn, a.data_ptr(), b.data_ptr(), c.data_ptr(), N, torch.cuda.current_stream().cuda_stream)
            try:
                run()
                torch.cuda.synchronize()
            except RuntimeError as err:
                rows.append([k["label"], N, "", str(err), "", "", ""])
                wrong += 1
                continue
            err = rel_err(torch, c, ref)
            if not check(err, exp["dtype"]):
                log(f"kit: experiment {exp['name']}: {k['label']} N={N} WRONG (rel. error {err:.1e})")
                rows.append([k["label"], N, "", f"WRONG {err:.1e}", "", "", ""])
                wrong += 1
                continue
            ours = median_ms(torch, run, iters)
            times[k["id"]] = ours
            rows.append([k["label"], N, f"{err:.1e}", f"{ours:.3f}", f"{moved / ours / 1e6:.0f}", f"{copy / ours:.2f}"])
        measured[(N,)] = times
        pick_note(exp, kernels, times, f"N={N}", notes, log)
        del a, b, ref, src, dst
        torch.cuda.empty_cache()
    note = ("; ".join(notes) + " (goal <= 1.10).") if notes else "The recommender's pick did not run."
    return rows, wrong, note, measured


def run_conv(torch, exp, kernels, lib_of, iters, log):
    """out = conv2d(data, weight), 3x3, pad 1, stride 1, NHWC (the corpus port's defaults) for every
    shape (N, H, W, C, F) and kernel: data [N, H, W, C] is the channels-last image torch convolves,
    weight [3, 3, C, F] the filter [F, C, 3, 3] permuted once. Checked against float64 first, then
    timed beside cuDNN. Returns rows, wrong results, a note."""
    rows, wrong = [], 0
    fns = {}
    for k in kernels:
        lib = lib_of(k)
        if lib:
            fns[k["id"]] = launcher(lib, k["launcher"], [P, P, P, I, I, I, I, I, P])
        else:
            rows.append([k["label"], k["depth"], "", "not built", "", "", "", ""])
            wrong += 1
    benchmark = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True  # cuDNN at its best algorithm for the shape
    try:
        for N, H, W, C, F in exp["shapes"]:
            torch.manual_seed(0)
            x = torch.randn(N, C, H, W, device="cuda").to(torch.float16).to(memory_format=torch.channels_last)
            w = torch.randn(F, C, 3, 3, device="cuda").to(torch.float16).to(memory_format=torch.channels_last)
            data = x.permute(0, 2, 3, 1)  # NHWC, the same storage
            assert data.is_contiguous()
            weight = w.permute(2, 3, 1, 0).contiguous()  # [3, 3, C, F]
            ref = torch.nn.functional.conv2d(x.double(), w.double(), padding=1).permute(0, 2, 3, 1)
            label = f"{N}x{H}x{W}x{C} -> {F}"
            for k in kernels:
                fn = fns.get(k["id"])
                if not fn:
                    continue
                out = torch.full((N, H, W, F), float("nan"), device="cuda", dtype=torch.float16)
                run = checked(fn, data.data_ptr(), weight.data_ptr(), out.data_ptr(), N, H, W, C, F,
                              torch.cuda.current_stream().cuda_stream)
                try:
                    run()
                    torch.cuda.synchronize()
                except RuntimeError as e:
                    rows.append([k["label"], k["depth"], label, str(e), "", "", "", ""])
                    wrong += 1
                    continue
                err = rel_err(torch, out, ref)
                if not check(err, exp["dtype"]):
                    log(f"kit: experiment {exp['name']}: {k['label']} {label} WRONG (rel. error {err:.1e})")
                    rows.append([k["label"], k["depth"], label, f"WRONG {err:.1e}", "", "", "", ""])
                    wrong += 1
                    continue
                ours = median_ms(torch, run, iters)
                theirs = median_ms(torch, lambda: torch.nn.functional.conv2d(x, w, padding=1), iters)
                flops = 2 * N * H * W * F * C * 9
                rows.append([k["label"], k["depth"], label, f"{err:.1e}", f"{ours:.3f}", f"{flops / ours / 1e9:.0f}",
                             f"{flops / theirs / 1e9:.0f}", f"{theirs / ours:.2f}"])
            del x, w, data, weight, ref
            torch.cuda.empty_cache()
    finally:
        torch.backends.cudnn.benchmark = benchmark
    return rows, wrong, ""


# kind -> (runner, the section's columns, what its ratio is)
RUNNERS = {
    "gemm": (run_gemm, ["configuration", "pipeline depth (tlc)", "M", "N", "K", "rel. error", "tlc ms", "tlc TFLOP/s",
                        "cuBLAS TFLOP/s", "cuBLAS / tlc"], "Ratio: torch.matmul (cuBLAS) time / tlc time."),
    "bmm": (run_fused, ["kernel", "B x M x N x K", "pipeline depth (tlc)", "rel. error", "tlc ms", "tlc TFLOP/s",
                        "torch TFLOP/s", "torch / tlc"], "Ratio: torch.matmul time / tlc time."),
    "rms_proj": (run_fused, ["kernel", "M x N x K", "pipeline depth (tlc)", "rel. error", "tlc ms", "tlc TFLOP/s",
                             "torch TFLOP/s", "torch / tlc"],
                 "Ratio: torch's matmul, mean and rsqrt (three kernels) time / tlc time."),
    "layernorm": (run_layernorm, ["configuration", "rows", "D", "rel. error", "tlc ms", "tlc GB/s", "tlc / copy"],
                  "Bandwidth: bytes read and written once over the time; tlc / copy: over a device-to-device copy "
                  "of the same bytes."),
    "vector": (run_vector, ["configuration", "N", "rel. error", "tlc ms", "tlc GB/s", "tlc / copy"],
               "Bandwidth: A and B read, C written once over the time; tlc / copy: over a device-to-device copy "
               "of the same bytes."),
    "conv": (run_conv, ["configuration", "pipeline depth (tlc)", "N x H x W x C -> F", "rel. error", "tlc ms",
                        "tlc TFLOP/s", "cuDNN TFLOP/s", "cuDNN / tlc"],
             "Ratio: torch.nn.functional.conv2d (cuDNN, channels-last) time / tlc time."),
    "grouped": (run_grouped, ["configuration", "pipeline depth (tlc)", "groups", "rel. error", "tlc ms", "tlc TFLOP/s",
                              "torch TFLOP/s", "torch / tlc", "torch form"],
                "Ratio: the faster of a loop of torch.matmul and torch._grouped_mm, time / tlc time."),
    "dequant_fp4": (run_dequant_fp4, ["configuration", "pipeline depth (tlc)", "M", "N", "K", "rel. error", "tlc ms",
                                      "tlc TFLOP/s", "cuBLAS f16 TFLOP/s", "cuBLAS / tlc"],
                    "Ratio: torch.matmul (cuBLAS, f16 on the dequantised B) time / tlc time."),
    "block_fp8": (run_block_fp8, ["configuration", "pipeline depth (tlc)", "M", "N", "K", "rel. error", "tlc ms",
                                  "tlc TFLOP/s", "_scaled_mm TFLOP/s", "_scaled_mm / tlc"],
                  "Ratio: torch._scaled_mm (per-tensor scales, same fp8 data) time / tlc time."),
    "rows": (run_rows, ["kernel", "pointers", "size", "rel. error", "tlc ms", "tlc GB/s", "tlc / copy", "general / fast"],
             "tlc / copy: against a device copy of the same bytes; general / fast: the aligned time over the offset "
             "time."),
}


def run_all(manifest, built, arch, quick, log):
    """Every experiment of the kit: report sections (as bench.py's) and the count of results that
    were wrong or did not run."""
    import torch
    iters = 10 if quick else 30
    sections, wrong = [], 0

    def lib_of(k):
        return built.get((arch, "experiment:" + k["id"]))

    sweeps = []
    for exp in manifest.get("experiments", []):
        log(f"kit: experiment {exp['name']}")
        runner, columns, ratio = RUNNERS[exp["kind"]]
        try:
            rows, bad, result, *measured = runner(torch, exp, exp["kernels"], lib_of, iters, log)
            if exp.get("sweep") and measured:
                sweeps += measured_sweeps(exp, measured[0])
        except Exception as x:  # one broken experiment must not lose the others
            rows, bad, result = [], 1, ""
            exp = dict(exp, question=f"failed: {type(x).__name__}: {x}")
        wrong += bad
        sections.append({"title": f"Experiment: {exp['title']}",
                         "note": " ".join(t for t in (exp["question"], result) if t) +
                                 " Relative error: max |tlc - f64 reference| / max |reference|, checked before "
                                 "timing. " + ratio,
                         "columns": columns, "rows": rows})
        for row in rows:
            log(f"kit:   {exp['name']}: " + " | ".join(str(v) for v in row))
        torch.cuda.empty_cache()
    return sections, wrong, sweeps


def measured_sweeps(exp, measured):
    """An experiment's times (shape -> kernel id -> ms) as measured sweeps, one per shape, in the
    format of bench/cpu/sweep.py (docs/recommend.md, "Measured sweeps"); the recommender's pick
    is one of the grid's configurations, and is not listed twice."""
    sweep, out = exp["sweep"], []
    for shape, times in measured.items():
        configs, seen = [], set()
        for k in exp["kernels"]:
            values = k.get("values")
            if not values or k["id"] not in times or tuple(sorted(values.items())) in seen:
                continue
            seen.add(tuple(sorted(values.items())))
            configs.append({"values": values, "us": round(times[k["id"]] * 1000.0, 2)})
        sizes = {n: v for n, v in zip(sweep["sizes"], shape) if n}
        if configs:
            out.append({"family": exp["name"], "kernel": sweep["kernel"], "fingerprint": sweep["fingerprint"],
                        "defines": {}, "shape": sizes, "configs": configs})
    return out


def launcher_name(source):
    """The extern "C" launcher of a one-kernel source: tl_<kernel>."""
    for line in open(source):
        if line.startswith("kernel "):
            return "tl_" + line.split()[1].split("<")[0].split("(")[0]
    raise ValueError(f"{source}: no kernel")

