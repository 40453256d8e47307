#!/usr/bin/env python3
"""`auto` on every kernel: each kernel of tests/corpus/*.tl and samples/*.tl compiled for every
target with the compile-time parameters that size its tiles, blocks and pipelines set to `auto`
(issue 46).

The source is rewritten (`block_M = 64` becomes `block_M = auto`) and compiled with
`--kernel NAME --target T --explain`; the recommender fills the parameters. An error, a crash
or a timeout is a failure. A kernel that does not compile for a target as written (fp8 gemms
on sm80) is skipped there, but not on every target. Each kernel of the two folders must have a
row in TUNABLE (a new kernel must say which of its parameters are tile, block or pipeline
sizes), so that none is left out silently.

    auto_sweep.py --tlc build/tlc [--targets sm80,cpu] [--only gqa] [-j N] [--show-picks]
    auto_sweep.py --print-auto FILE.tl   # the file with its kernels' parameters `auto` (lit tests)
    auto_sweep.py --write-auto DIR       # every swept file so, into DIR (compile-auto builds them)
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Swept besides tests/corpus/*.tl and samples/*.tl: families the issue names that live elsewhere.
EXTRA_FILES = ["tests/run/kernels/mla_decode.tl"]

TARGETS = ["cpu", "cpu-avx2", "cpu-avx512", "cpu-amx", "sm80", "sm86", "sm89", "sm90", "gfx90a", "gfx942"]

# kernel -> the compile-time parameters that size a tile, a block or a pipeline. The others
# are the problem's (head dim, group counts, causal, dtypes, quantisation group sizes, chunk
# sizes that are part of the tensors' layout), or tiles the caller's data or host code is laid
# out by (a block mask's blocks, padding to a multiple of the tile): `auto` is not meant for
# them. The cpu corpus run passes with these `auto` (every pick is a correct kernel), except
# flash_decoding's test of workspace_size, which expects num_split = 4's bytes.
TUNABLE = {
    # tests/corpus
    # block_M, block_N: the blocks BlockSparseMask has a bit for (64 x 64 in the test's masks)
    "block_sparse_attn": ["stages", "threads"],
    "convolution": ["block_M", "block_N", "block_K", "stages", "threads"],
    # block_N and block_K: one scale of B per group_size x group_size block
    "deepgemm_fp8": ["block_M"],
    "dequant_gemm_fp4": ["block_M", "block_N", "block_K", "num_stages", "threads"],
    "dequant_gemm_mxfp4": ["block_M", "block_N", "block_K", "num_stages", "threads"],
    "dequant_gemm_w4a8": ["block_M", "block_N", "block_K", "num_stages", "threads"],
    "dequant_gemv": ["n_partition", "reduce_thread", "micro_size_k"],
    "elementwise_add": ["block_M", "block_N", "threads"],
    "flash_decoding": ["block_N", "block_H", "num_split", "num_stages", "threads"],
    "tests/corpus/gemm_fp8.tl:gemm_fp8": ["block_M", "block_N", "block_K"],
    "gemm_splitk": ["block_M", "block_N", "block_K", "split_k"],
    "gemm_streamk": ["block_M", "block_N", "block_K", "num_stages", "threads"],  # total_sm: the device's
    "gqa_fwd_bshd": ["block_M", "block_N", "stages", "threads"],
    # block_M: the host pads each group's rows to a multiple of it (batch_padded_offsets)
    "grouped_gemm": ["block_N", "block_K", "num_stages", "threads"],
    "layernorm_fwd": ["blk_m", "threads"],
    "layernorm_bwd": ["blk_m", "threads"],
    "linear_attn_fwd": ["BK", "BV"],
    # block_Dstate must cover dstate (the gemm over the state reads columns 0 : block_Dstate)
    "mamba_chunk_scan": ["block_M", "block_N", "block_K", "stages", "threads"],
    "mamba_chunk_state": ["block_M", "block_N", "block_K", "stages", "threads"],
    "mha_bwd_bshd_fwd": ["block_M", "block_N"],
    "mha_bwd_bshd_prep": ["blk"],
    "mha_bwd_bshd": ["block_M", "block_N"],
    "mha_bwd_bshd_post": ["blk"],
    "mha_fwd_bhsd": ["block_M", "block_N", "stages", "threads"],
    "mha_fwd_bshd": ["block_M", "block_N", "stages", "threads"],
    "online_softmax": ["BLOCK_M", "BLOCK_N"],
    "per_token_cast_fp8": ["blk_m"],
    "retention_fwd": ["BK", "BV"],
    "rms_norm_splitk": ["blk_m", "blk_k"],
    "rms_norm": ["blk_m"],
    # block_N: the rows the block holds whole (require N <= block_N): the caller's row length
    "rms_norm_residual": ["threads"],
    "topk": ["blk_m", "threads"],
    # tests/run/kernels
    "mla_decode": ["block_N", "block_H", "stages", "threads"],
    # samples
    "block_histogram": ["items", "threads"],
    "flash_attention": ["block_M", "block_N", "stages", "threads"],
    "gemm": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemm_auto": [],  # already all `auto`
    "samples/gemm_fp8.tl:gemm_fp8": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemm_bf16": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemm_i8": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemm_nt": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemm_tn": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemm_tt": ["block_M", "block_N", "block_K", "stages", "threads"],
    "gemv_fp16xint4": ["n_partition", "reduce_thread", "micro_size_k"],
    "reduce_sum": ["block_M", "block_N", "threads"],
    "rmsnorm": ["block_M", "threads"],
    "softmax": ["block_M", "threads"],
    "softmax_auto": [],  # already `auto`
    "vector_add": ["block", "threads"],
    "warp_softmax": ["rows", "per_lane"],
}
# A kernel whose name two files share has a row per file: "path:kernel" (a row by name alone
# would apply to both).

SKIPPED = "skipped: does not compile as written"

KERNEL_RE = re.compile(r"^kernel\s+(\w+)\s*<", re.M)


def kernels_of(text):
    """(name, start of its '<', end of its '>') for each kernel of a file."""
    out = []
    for m in KERNEL_RE.finditer(text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] in "<([":
                depth += 1
            elif text[i] in ">)]":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append((m.group(1), m.end() - 1, i))
    return out


def with_auto(text, start, end, params):
    """The file with `params` of the kernel whose `<...>` is text[start:end + 1] set to auto."""
    head = text[start:end + 1]
    for p in params:
        new, n = re.subn(r"(?<![\w.])(%s)(\s*(?::\s*\w+\s*)?=\s*)(-?[\w.]+|\([^)]*\))" % re.escape(p),
                         r"\1\2auto", head, count=1)
        if n != 1:
            raise SystemExit("auto_sweep: kernel parameter '%s' not found in %r" % (p, head))
        head = new
    return text[:start] + head + text[end + 1:]


def tunable(path, name):
    """The TUNABLE row of kernel `name` of the file at `path`."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    for key in (rel + ":" + name, name):
        if key in TUNABLE:
            return TUNABLE[key]
    raise SystemExit("auto_sweep: %s: kernel '%s' has no row in TUNABLE" % (path, name))


def all_auto(path):
    """The text of `path` with every kernel's TUNABLE parameters auto."""
    text = open(path).read()
    for name, start, end in reversed(kernels_of(text)):  # from the end: earlier offsets stay valid
        text = with_auto(text, start, end, tunable(path, name))
    return text


VARIANT_RE = re.compile(r"^// corpus-variant: *(\w+) +(.*)$", re.M)


def jobs(files, only):
    """(source path, kernel, rewritten text, extra tlc flags, label) for each kernel, and again
    for each `// corpus-variant: NAME -D x=y` of its file whose -D values name its parameters
    (the causal forms of the attention kernels)."""
    out = []
    for path in files:
        text = open(path).read()
        for name, start, end in kernels_of(text):
            params = tunable(path, name)
            if only and not re.search(only, name):
                continue
            rewritten = with_auto(text, start, end, params)
            out.append((path, name, rewritten, [], name))
            for variant, flags in VARIANT_RE.findall(text):
                flags = flags.split()
                names = [flags[i + 1].split("=")[0] for i in range(len(flags) - 1) if flags[i] == "-D"]
                if names and all(re.search(r"\b%s\s*(:\s*\w+\s*)?=" % n, text[start:end]) for n in names):
                    out.append((path, name, rewritten, flags, "%s (%s)" % (name, variant)))
    return out


def source_name(path, name):
    return "%s__%s.tl" % (os.path.relpath(path, ROOT)[:-3].replace("/", "__"), name)


def run_one(tlc, workdir, path, name, flags, target, timeout):
    src = os.path.join(workdir, source_name(path, name))
    t0 = time.monotonic()
    try:
        p = subprocess.run([tlc, src, "--kernel", name, "--target", target, "--explain"] + flags,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout after %ss" % timeout, "", time.monotonic() - t0
    took = time.monotonic() - t0
    # A kernel that does not compile for the target as written (fp8 gemms on sm80) says nothing
    # about `auto`: it is not counted. (Checked only on failure: most compile.)
    if p.returncode == 1:
        plain = subprocess.run([tlc, path, "--kernel", name, "--target", target] + flags, capture_output=True,
                               text=True, timeout=timeout)
        if plain.returncode == 1:
            return None, SKIPPED, took
    picks = " ".join(dict.fromkeys(re.findall(r"\w+ = \d+ (?=\(auto\))", p.stdout)))  # once per launch
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.strip()[:600]), "", took
    if "internal" in p.stderr.lower():
        return "internal diagnostic: " + p.stderr.strip()[:400], "", took
    return None, picks, took


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlc")
    ap.add_argument("--print-auto", metavar="FILE", help="print FILE with its kernels' TUNABLE parameters auto")
    ap.add_argument("--write-auto", metavar="DIR", help="write every swept file so into DIR")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--only", help="regex over kernel names")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--show-picks", action="store_true", help="print each kernel's chosen values")
    args = ap.parse_args()
    if args.print_auto:
        sys.stdout.write(all_auto(args.print_auto))
        return 0
    files = sorted(os.path.join(ROOT, d, f) for d in ("tests/corpus", "samples")
                   for f in os.listdir(os.path.join(ROOT, d)) if f.endswith(".tl"))
    files += [os.path.join(ROOT, f) for f in EXTRA_FILES]
    if args.write_auto:
        os.makedirs(args.write_auto, exist_ok=True)
        for path in files:  # samples__gemm_fp8.tl: two files may share a name
            with open(os.path.join(args.write_auto, os.path.relpath(path, ROOT).replace("/", "__")), "w") as f:
                f.write(all_auto(path))
        return 0
    if not args.tlc:
        ap.error("--tlc is required")
    work = jobs(files, args.only)
    targets = args.targets.split(",")
    failures = []
    skipped = 0
    ran = {}  # kernel -> whether each target counted
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="auto_sweep_") as workdir:
        for path, name, text, flags, label in work:  # write the sources once, before the threads read them
            open(os.path.join(workdir, source_name(path, name)), "w").write(text)
        with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
            futures = {pool.submit(run_one, args.tlc, workdir, path, name, flags, t, args.timeout): (path, label, t)
                       for path, name, text, flags, label in work for t in targets}
            for fut in concurrent.futures.as_completed(futures):
                path, label, t = futures[fut]
                error, info, took = fut.result()
                where = "%s:%s on %s" % (os.path.relpath(path, ROOT), label, t)
                skipped += info == SKIPPED
                ran.setdefault(label, []).append(info != SKIPPED)
                if error:
                    failures.append("%s: %s" % (where, error))
                elif args.show_picks:
                    print("ok   %-55s %5.2fs %s" % (where, took, info))
    for name, counted in ran.items():
        if not any(counted):
            failures.append("%s: does not compile as written on any target swept" % name)
    for f in sorted(failures):
        print("FAIL " + f)
    print("auto_sweep: %d kernels and variants x %d targets, %d failed, %d skipped (not compiling as written), %.1fs" %
          (len(work), len(targets), len(failures), skipped, time.monotonic() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
