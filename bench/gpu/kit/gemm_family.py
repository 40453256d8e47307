"""The GPU kit's runners for the GEMM family's other members (issue 43): grouped GEMM, the fp4
dequantising GEMM and DeepGEMM's block-scaled fp8 GEMM, each against the PyTorch path a user
would otherwise take, every result checked against float64 first (experiments.py's QUEUE names
the kernels; its run_all calls these as its other runners)."""
import experiments  # check(): used at run time, after experiments.py has loaded
from bench import P, I, checked, median_ms

# Each kind's launcher parameters before the stream, in the kernel's order (test_kit.py checks
# them against tlc's manifests): grouped_gemm(A, B, C, batch_sizes, batch_offsets,
# batch_padded_offsets, total_m_blocks, batch_sum, K, batch_count, N); dequant_gemm_fp4(A, B, Ct,
# M, K, N); deepgemm_fp8(A, B, scales_a, scales_b, C, M, K, N).
SIGNATURES = {
    "grouped": [P] * 6 + [I] * 5,
    "dequant_fp4": [P] * 3 + [I] * 3,
    "block_fp8": [P] * 5 + [I] * 3,
}


def run_grouped(torch, exp, kernels, lib_of, iters, log):
    """C[rows of g] = A[rows of g] @ B[g] for ragged groups (the corpus' grouped_gemm: its grid
    has each group's rows padded to block_M, the host passes the offsets and the block count),
    against a loop of torch.matmul and torch._grouped_mm where this PyTorch has it."""
    dtype = torch.float16
    fns, rows = experiments.bind(kernels, lib_of, SIGNATURES["grouped"] + [P], 1)
    rows = [r + [""] for r in rows]  # the torch form's column
    wrong = len(rows)
    notes = []
    for sizes, K, N in exp["shapes"]:
        torch.manual_seed(0)
        G, total = len(sizes), sum(sizes)
        a = torch.randn(total, K, device="cuda").to(dtype)
        b = torch.randn(G, K, N, device="cuda").to(dtype)
        starts = [sum(sizes[:g]) for g in range(G)]
        ref = torch.cat([a[s:s + n].double() @ b[g].double() for g, (s, n) in enumerate(zip(starts, sizes))])

        def loop():
            for g, (s, n) in enumerate(zip(starts, sizes)):
                torch.matmul(a[s:s + n], b[g])
        base, form = median_ms(torch, loop, iters), "loop of torch.matmul"
        grouped = getattr(torch, "_grouped_mm", None)
        if grouped:
            try:
                offs = torch.tensor([s + n for s, n in zip(starts, sizes)], device="cuda", dtype=torch.int32)
                grouped(a, b, offs=offs)
                t = median_ms(torch, lambda: grouped(a, b, offs=offs), iters)
                if t < base:
                    base, form = t, "torch._grouped_mm"
            except Exception as x:  # its dtype or layout rules vary by version: the loop stays the baseline
                log(f"kit: experiment {exp['name']}: torch._grouped_mm unavailable here ({type(x).__name__}: {x})")
        label = f"{G} groups of {min(sizes)}-{max(sizes)} rows, K {K}, N {N}"
        times = {}
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            bm = k["block_M"]
            padded = [sum(-(-n // bm) * bm for n in sizes[:g]) for g in range(G)]
            blocks = sum(-(-n // bm) for n in sizes)
            meta = [torch.tensor(v, device="cuda", dtype=torch.int32) for v in (list(sizes), starts, padded)]
            c = torch.full((total, N), float("nan"), device="cuda", dtype=dtype)
            run = checked(fn, a.data_ptr(), b.data_ptr(), c.data_ptr(), *[m.data_ptr() for m in meta], blocks,
                          total, K, G, N, torch.cuda.current_stream().cuda_stream)
            result, bad = experiments.check_and_time(torch, exp, k, run, c, ref, label, 2 * total * K * N,
                                                     lambda: base, iters, log)
            rows.append([k["label"], k["depth"], label] + result + [form if not bad else ""])
            wrong += bad
            if not bad:
                times[k["id"]] = float(result[1])
        experiments.pick_note(exp, kernels, times, label, notes, log)
        del a, b, ref
        torch.cuda.empty_cache()
    return rows, wrong, ("; ".join(notes) + " (goal <= 1.10).") if notes else ""


def fp4_values(torch):
    """The 16 values of the corpus kernel's s1e2m1 codes as it decodes them: sign, exponent
    ((code & 6) >> 1) rebased by 14 into f16's, one mantissa bit on top: +-2^(e - 1) * (1 + m / 2)."""
    vals = [(-1.0 if c >> 3 else 1.0) * 2.0 ** (((c & 6) >> 1) - 1) * (1.0 + (c & 1) / 2) for c in range(16)]
    return torch.tensor(vals, device="cuda", dtype=torch.float16)


def run_dequant_fp4(torch, exp, kernels, lib_of, iters, log):
    """Ct = (A @ dequant(B)^T)^T with B [N, K / 2] of two fp4 codes a byte (low nibble first),
    checked against float64 on the dequantised B, timed against torch.matmul (cuBLAS f16) of the
    same product on the dequantised B."""
    fns, rows = experiments.bind(kernels, lib_of, SIGNATURES["dequant_fp4"] + [P], 3)
    wrong = len(rows)
    lut = fp4_values(torch)
    for M, N, K in exp["shapes"]:
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda").to(torch.float16)
        packed = torch.randint(0, 256, (N, K // 2), device="cuda", dtype=torch.uint8)
        codes = torch.stack([packed & 15, packed >> 4], -1).reshape(N, K)
        b = lut[codes.long()]  # [N, K] f16
        ref = b.double() @ a.double().t()  # Ct: [N, M]
        base = median_ms(torch, lambda: torch.matmul(b, a.t()), iters)
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            ct = torch.full((N, M), float("nan"), device="cuda", dtype=torch.float16)
            run = checked(fn, a.data_ptr(), packed.data_ptr(), ct.data_ptr(), M, K, N,
                          torch.cuda.current_stream().cuda_stream)
            result, bad = experiments.check_and_time(torch, exp, k, run, ct, ref, f"{M}x{N}x{K}", 2 * M * N * K,
                                                     lambda: base, iters, log)
            rows.append([k["label"], k["depth"], M, N, K] + result)
            wrong += bad
        del a, packed, codes, b, ref
        torch.cuda.empty_cache()
    return rows, wrong, ""


def run_block_fp8(torch, exp, kernels, lib_of, iters, log):
    """C = (A * scales_a) @ (B * scales_b)^T in bf16 with DeepGEMM's scales (A per row and 128
    columns, B per 128 x 128 block), checked against float64 on the dequantised operands, timed
    against torch._scaled_mm with per-tensor scales on the same fp8 data."""
    fns, rows = experiments.bind(kernels, lib_of, SIGNATURES["block_fp8"] + [P], 3)
    wrong = len(rows)
    for M, N, K in exp["shapes"]:
        torch.manual_seed(0)
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
        kg, ng = -(-K // 128), -(-N // 128)
        sa = torch.rand(M, kg, device="cuda") + 0.5
        sb = torch.rand(ng, kg, device="cuda") + 0.5
        # (float8 converts to float, not to double directly)
        ad = a.float().double() * sa.double().repeat_interleave(128, 1)[:, :K]
        bd = b.float().double() * sb.double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:N, :K]
        ref = ad @ bd.t()
        del ad, bd
        one = torch.ones((), device="cuda")
        base = median_ms(torch, lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                                          out_dtype=torch.bfloat16), iters)
        for k in kernels:
            fn = fns.get(k["id"])
            if not fn:
                continue
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            run = checked(fn, a.data_ptr(), b.data_ptr(), sa.data_ptr(), sb.data_ptr(), c.data_ptr(), M, K, N,
                          torch.cuda.current_stream().cuda_stream)
            result, bad = experiments.check_and_time(torch, exp, k, run, c, ref, f"{M}x{N}x{K}", 2 * M * N * K,
                                                     lambda: base, iters, log)
            rows.append([k["label"], k["depth"], M, N, K] + result)
            wrong += bad
        del a, b, sa, sb, ref
        torch.cuda.empty_cache()
    return rows, wrong, ""
