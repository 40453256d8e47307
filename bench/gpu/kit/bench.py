"""The GPU kit's benchmarks (kit.py run calls run_all): tlc's kernels from the kit, called
through their extern "C" launchers (ctypes) on PyTorch tensors, each checked against a
higher-precision reference on random inputs and timed side by side with its baseline in the
same run (CUDA events, warm-up, median of repeats). Every figure is a ratio to the baseline.

    GEMM f16/bf16 (4096^3, 8192^3, 8192x8192x1024, 16x8192x8192)   vs torch.matmul (cuBLAS)
    GEMM e4m3 -> f16                                               vs torch._scaled_mm
    flash attention forward (hdim 64/128, seq 1k/4k/8k, causal and not)
                                                 vs torch SDPA and the kit's Triton kernel
    softmax, rmsnorm, layernorm                   achieved bandwidth vs a device-to-device copy
    recommender: gemm_auto's rank-1 configuration vs the fastest of its top 8
"""
import ctypes
import os

GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (16, 8192, 8192)]
GEMM_SHAPES_QUICK = [(4096, 4096, 4096), (16, 8192, 8192)]
ATTN_SEQS = [1024, 4096, 8192]
ATTN_SEQS_QUICK = [4096]
TOKENS, MODEL_DIM = 16384, 2048  # attention batches: B = TOKENS / S sequences of H = MODEL_DIM / D heads


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


def launcher(path, name, argtypes):
    fn = getattr(ctypes.CDLL(path), name)
    fn.restype = ctypes.c_int
    fn.argtypes = argtypes
    return fn


def checked(fn, *args):
    def call():
        status = fn(*args)
        if status != 0:
            raise RuntimeError(f"launcher returned {status}")
    return call


def rel_err(torch, got, ref):
    return ((got.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


P = ctypes.c_void_p
I = ctypes.c_int


def bench_gemm(torch, entries, lib_of, quick, iters):
    rows = []
    for e in entries:
        lib = lib_of(e)
        dtype_name = e["id"].split("_")[1]
        fp8 = dtype_name == "e4m3"
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn}[dtype_name]
        config = " ".join(e["defines"]) or "defaults"
        if not lib:
            rows.append([e["id"], config, "", "", "", "not built", "", "", ""])
            continue
        fn = launcher(lib, "tl_" + os.path.basename(e["sample"])[:-3], [P, P, P, I, I, I, P])
        for M, N, K in (GEMM_SHAPES_QUICK if quick else GEMM_SHAPES):
            torch.manual_seed(0)
            a = torch.randn(M, K, device="cuda").to(dtype)
            # gemm_fp8 takes B as [N, K]; the 16-bit samples as [K, N].
            b = (torch.randn(N, K, device="cuda") if fp8 else torch.randn(K, N, device="cuda")).to(dtype)
            c = torch.empty(M, N, device="cuda", dtype=torch.float16 if fp8 else dtype)
            stream = torch.cuda.current_stream().cuda_stream
            run = checked(fn, a.data_ptr(), b.data_ptr(), c.data_ptr(), M, K, N, stream)
            try:
                run()
            except RuntimeError as x:
                rows.append([e["id"], config, M, N, K, str(x), "", "", ""])
                continue
            ad, bd = a.float().double(), b.float().double()  # (float8 converts to float, not double)
            ref = ad @ (bd.t() if fp8 else bd)
            err = rel_err(torch, c, ref)
            ours = median_ms(torch, run, iters)
            if fp8:
                one = torch.ones((), device="cuda")
                theirs = median_ms(torch, lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                                                    out_dtype=torch.float16), iters)
            else:
                theirs = median_ms(torch, lambda: torch.matmul(a, b), iters)
            rows.append([e["id"], config, M, N, K, f"{err:.1e}", f"{ours:.3f}", f"{2 * M * N * K / ours / 1e9:.0f}",
                         f"{theirs / ours:.2f}"])
    return {"title": "GEMM", "note": "Relative error: max |tlc - f64 reference| / max |reference|. "
            "Ratio: baseline time / tlc time (above 1: tlc faster). e4m3 against torch._scaled_mm, the others "
            "against torch.matmul.",
            "columns": ["kernel", "config", "M", "N", "K", "rel. error", "tlc ms", "tlc TFLOP/s", "baseline / tlc"],
            "rows": rows}


def bench_attention(torch, entries, lib_of, quick, iters, log):
    import torch.nn.functional as F
    try:
        import triton_attention
        triton_ok = triton_attention.available()
    except Exception as x:  # no Triton: the column says so
        log(f"kit: Triton attention unavailable: {x}")
        triton_ok = False
    rows = []
    for e in entries:
        lib = lib_of(e)
        d = dict(x.split("=") for x in e["defines"])
        D, causal = int(d["D"]), d["causal"] == "true"
        if not lib:
            rows.append([e["id"], " ".join(e["defines"]), "", "", "not built", "", "", "", ""])
            continue
        fn = launcher(lib, "tl_flash_attention", [P, P, P, P, I, I, I, P])
        for S in (ATTN_SEQS_QUICK if quick else ATTN_SEQS):
            B, H = max(1, TOKENS // S), MODEL_DIM // D
            torch.manual_seed(0)
            q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
            o = torch.empty_like(q)
            run = checked(fn, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), B, S, H,
                          torch.cuda.current_stream().cuda_stream)
            try:
                run()
            except RuntimeError as x:
                rows.append([e["id"], " ".join(e["defines"]), S, f"{B}x{H}", str(x), "", "", "", ""])
                continue
            qh, kh, vh = (t.transpose(1, 2).contiguous() for t in (q, k, v))  # [B, H, S, D] for the baselines
            ref = F.scaled_dot_product_attention(qh.float(), kh.float(), vh.float(), is_causal=causal)
            err = rel_err(torch, o.transpose(1, 2), ref)
            flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
            ours = median_ms(torch, run, iters)
            sdpa = median_ms(torch, lambda: F.scaled_dot_product_attention(qh, kh, vh, is_causal=causal), iters)
            tri = ""
            if triton_ok:
                tri_ms = median_ms(torch, lambda: triton_attention.attention(qh, kh, vh, causal), iters)
                tri = f"{tri_ms / ours:.2f}"
            rows.append([e["id"], " ".join(e["defines"]), S, f"{B}x{H}", f"{err:.1e}", f"{ours:.3f}",
                         f"{flops / ours / 1e9:.0f}", f"{sdpa / ours:.2f}", tri or "no Triton"])
    return {"title": "Flash attention forward (f16, [B, S, H, D])",
            "note": f"B x H = {TOKENS} / S sequences x {MODEL_DIM} / D heads. Relative error against fp32 "
                    "SDPA. Ratios: baseline time / tlc time (above 1: tlc faster); Triton is the kit's own "
                    "kernel in the style of Triton's fused-attention tutorial (triton_attention.py).",
            "columns": ["kernel", "config", "S", "B x H", "rel. error", "tlc ms", "tlc TFLOP/s", "SDPA / tlc",
                        "Triton / tlc"], "rows": rows}


def bench_memory(torch, entries, lib_of, quick, iters, offset=0):
    """softmax (f32 [M, 1024]), rmsnorm (f16 [M, 4096]), layernorm (bf16 [M, 1024]): bytes moved
    over time against a device-to-device copy of the same bytes. With `offset`, every tensor is a
    view starting that many elements into its buffer (aligned to its element only: the launchers
    run their general variants)."""
    rows = []
    rows_m = 16384 if quick else 65536

    def alloc(fill, *shape, dtype=torch.float32):
        n = 1
        for d in shape:
            n *= d
        flat = fill(n + offset, device="cuda", dtype=dtype)
        return flat[offset:].view(*shape)

    randn = torch.randn
    empty = torch.empty
    for e in entries:
        lib = lib_of(e)
        if not lib:
            rows.append([e["id"], "", "not built", "", "", "", ""])
            continue
        torch.manual_seed(0)
        stream = torch.cuda.current_stream().cuda_stream
        kind = e["kind"]
        if kind == "softmax":
            M, N = rows_m, 1024
            x = alloc(randn, M, N)
            y = alloc(empty, M, N)
            run = checked(launcher(lib, "tl_softmax", [P, P, I, P]), x.data_ptr(), y.data_ptr(), M, stream)
            ref = torch.softmax(x.double(), dim=1)
            moved = 2 * x.numel() * 4
            outs = [y]
        elif kind == "rmsnorm":
            M, N = rows_m // 4, 4096
            x = alloc(randn, M, N, dtype=torch.float16)
            w = alloc(randn, N, dtype=torch.float16)
            y = alloc(empty, M, N, dtype=torch.float16)
            run = checked(launcher(lib, "tl_rmsnorm", [P, P, P, ctypes.c_float, I, P]), x.data_ptr(), w.data_ptr(),
                          y.data_ptr(), 1e-6, M, stream)
            xd = x.double()
            ref = xd / torch.sqrt((xd * xd).mean(dim=1, keepdim=True) + 1e-6) * w.double()
            moved = 2 * x.numel() * 2
            outs = [y]
        else:
            M, N = rows_m, 1024
            x = alloc(randn, M, N, dtype=torch.bfloat16)
            g = alloc(randn, N, dtype=torch.bfloat16)
            b = alloc(randn, N, dtype=torch.bfloat16)
            y = alloc(empty, M, N, dtype=torch.bfloat16)
            mean = alloc(empty, M)
            rstd = alloc(empty, M)
            run = checked(launcher(lib, "tl_layernorm_fwd", [P] * 6 + [I, P]), x.data_ptr(), g.data_ptr(),
                          b.data_ptr(), y.data_ptr(), mean.data_ptr(), rstd.data_ptr(), M, stream)
            ref = torch.nn.functional.layer_norm(x.double(), (N,), g.double(), b.double(), 1e-5)
            moved = 2 * x.numel() * 2 + 2 * M * 4
            outs = [y]
        try:
            run()
        except RuntimeError as err:
            rows.append([e["id"], f"{M}x{N}", str(err), "", "", "", ""])
            continue
        err = rel_err(torch, outs[0], ref)
        ours = median_ms(torch, run, iters)
        src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        copy = median_ms(torch, lambda: dst.copy_(src), iters)
        rows.append([e["id"], f"{M}x{N}", f"{err:.1e}", f"{ours:.3f}", f"{moved / ours / 1e6:.0f}",
                     f"{moved / copy / 1e6:.0f}", f"{copy / ours:.2f}"])
    return {"title": "Memory-bound kernels", "note": "Bandwidth: bytes read and written once over the time. "
            "Ratio: tlc's bandwidth over a device-to-device copy of the same number of bytes (goal >= 0.7 on CPUs, "
            "near 1 on GPUs).",
            "columns": ["kernel", "size", "rel. error", "tlc ms", "tlc GB/s", "copy GB/s", "tlc / copy"], "rows": rows}


def bench_recommend(torch, rec, lib_of, quick, iters):
    rows, times = [], []
    M, N, K = (4096, 4096, 4096) if quick else (rec["shape"]["M"], rec["shape"]["N"], rec["shape"]["K"])
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    for cand in rec["candidates"]:
        lib = lib_of(cand)
        values = ", ".join(f"{k}={v}" for k, v in cand["values"].items())
        if not lib:
            rows.append([cand["rank"], values, cand.get("estimate_us", ""), "not built", ""])
            continue
        run = checked(launcher(lib, "tl_gemm_auto", [P, P, P, I, I, I, P]), a.data_ptr(), b.data_ptr(), c.data_ptr(),
                      M, K, N, torch.cuda.current_stream().cuda_stream)
        try:
            run()
        except RuntimeError as x:
            rows.append([cand["rank"], values, cand.get("estimate_us", ""), str(x), ""])
            continue
        err = rel_err(torch, c, ref)
        ms = median_ms(torch, run, iters)
        times.append((ms, cand["rank"]))
        rows.append([cand["rank"], values, f"{cand.get('estimate_us') or 0:.0f}", f"{ms:.3f}", f"{err:.1e}"])
    note = ""
    if times:
        first = next((ms for ms, r in times if r == 1), None)
        best, best_rank = min(times)
        note = (f"M=N=K={M} f16. Rank 1: {first:.3f} ms; fastest: rank {best_rank}, {best:.3f} ms; rank 1 / fastest = "
                f"{first / best:.2f} (goal <= 1.10)." if first else "rank 1 did not run")
    return {"title": "Recommender (samples/gemm_auto.tl, sm90)", "note": note,
            "columns": ["rank", "values", "model estimate (us)", "measured ms", "rel. error"], "rows": rows}


def run_all(manifest, kit, built, arch, quick, log):
    import torch
    flavour = "sm90" if arch == "sm_90a" else "sm80"
    iters = 10 if quick else 30

    def lib_of(entry):
        key = entry["id"] if "id" in entry else f"recommend_rank{entry['rank']}"
        return built.get((arch, "bench:" + key))

    mine = [e for e in manifest["bench"] if e["flavour"] == flavour]
    sections = []
    for title, fn in [("gemm", lambda: bench_gemm(torch, [e for e in mine if e["kind"] == "gemm"], lib_of, quick,
                                                  iters)),
                      ("attention", lambda: bench_attention(torch, [e for e in mine if e["kind"] == "attention"],
                                                            lib_of, quick, iters, log)),
                      ("memory", lambda: bench_memory(torch, [e for e in mine if e["kind"] in
                                                              ("softmax", "rmsnorm", "layernorm")], lib_of, quick,
                                                      iters)),
                      ("recommend", lambda: bench_recommend(torch, manifest["recommend"], lib_of, quick, iters)
                       if manifest.get("recommend") and flavour == "sm90" else None)]:
        log(f"kit: benchmarks: {title}")
        try:
            s = fn()
        except Exception as x:  # one broken section must not lose the others
            s = {"title": title, "note": f"failed: {type(x).__name__}: {x}", "columns": [], "rows": []}
        if s:
            sections.append(s)
            # Into the log as well: a run stopped at the machine's time limit keeps what it measured.
            for row in s["rows"]:
                log(f"kit:   {title}: " + " | ".join(str(v) for v in row))
        torch.cuda.empty_cache()
    return sections
