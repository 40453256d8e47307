#!/usr/bin/env python3
"""The recommender against a measured sweep on this CPU (issue 46).

For each family below, the kernel's tile, block and pipeline parameters are set to `auto`; `tlc
recommend` ranks every configuration with its model; then a grid of configurations (the model's
whole ranking where it is short, else the model's best plus an even sample of the rest) is
compiled for the cpu target, each result checked against a double-precision reference on
random inputs, and timed (median of repeated calls after a warm-up, in several passes over all of
them, the median pass kept). The output is one JSON
file in the format tlc reads (bench/data/*.json are built into tlc: `tlc recommend`, --explain
and --report show each candidate's measured time beside its estimate; src/recommend/Measured.h)
and a Markdown table for bench/RESULTS.md: per family, the rank-1 pick's time against the
fastest measured configuration, and how the model's order agrees with the measured one.

    bench/cpu/sweep.py [--tlc build/tlc] [--target cpu-avx512] [--only gemm_f32,softmax]
                       [--max-configs 40] [--out bench/data/cpu-avx512.json] [--machine TEXT]

Needs g++ with OpenMP; no Python packages beyond the standard library. Run it on an otherwise
idle machine: the figures are wall-clock times (on a shared machine, `--build-only` first while
others work, then the same command without it when the machine is quiet: it times what it built).
"""
import argparse
import concurrent.futures
import ctypes
import datetime
import json
import math
import os
import random
import re
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "auto"))
import auto_sweep  # noqa: E402  (the rewrite of parameters to `auto`, shared with the auto-sweep test)


# ---- the families -------------------------------------------------------------------------
# file, kernel, the parameters made `auto`, -D values, sizes, the reference check, the work
# (flops or bytes) for the table's rate column.

def gemm_check(t, sizes, rng):
    M, N, K = sizes["M"], sizes["N"], sizes["K"]
    A, B, C = t["A"], t["B"], t["C"]
    worst = 0.0
    for _ in range(48):
        i, j = rng.randrange(M), rng.randrange(N)
        ref = math.fsum(A[i * K + k] * B[k * N + j] for k in range(K))
        scale = math.fsum(abs(A[i * K + k] * B[k * N + j]) for k in range(K)) or 1.0
        worst = max(worst, abs(C[i * N + j] - ref) / scale)
    return worst


def rows(t, name, n, i):
    return t[name][i * n:(i + 1) * n]


def row_check(t, sizes, rng, reference):
    """Six random rows of Y against `reference(x, t)`, relative to each row's largest output
    (normalised outputs cross zero)."""
    M, N = sizes["M"], sizes["N"]
    worst = 0.0
    for _ in range(6):
        i = rng.randrange(M)
        ref = reference(rows(t, "X", N, i), t)
        y = rows(t, "Y", N, i)
        worst = max(worst, max(abs(y[j] - ref[j]) for j in range(N)) / max(abs(v) for v in ref))
    return worst


def layernorm_reference(x, t):
    mean = math.fsum(x) / len(x)
    r = 1.0 / math.sqrt(math.fsum((v - mean) ** 2 for v in x) / len(x) + t["eps"])
    return [(v - mean) * r * w + b for v, w, b in zip(x, t["W"], t["Bias"])]


def rmsnorm_reference(x, t):
    r = 1.0 / math.sqrt(math.fsum(v * v for v in x) / len(x) + t["eps"])
    return [v * r * w for v, w in zip(x, t["W"])]


def layernorm_check(t, sizes, rng):
    return row_check(t, sizes, rng, layernorm_reference)


def rmsnorm_check(t, sizes, rng):
    return row_check(t, sizes, rng, rmsnorm_reference)


def softmax_reference(x, t):
    m = max(x)
    e = [math.exp(v - m) for v in x]
    s = math.fsum(e)
    return [v / s for v in e]


def softmax_check(t, sizes, rng):
    return row_check(t, sizes, rng, softmax_reference)


def reduce_sum_check(t, sizes, rng):
    M, N = sizes["M"], sizes["N"]
    worst = 0.0
    for _ in range(32):
        i = rng.randrange(M)
        x = rows(t, "X", N, i)
        ref = math.fsum(x)
        worst = max(worst, abs(t["Y"][i] - ref) / (math.fsum(abs(v) for v in x) or 1.0))
    return worst


def add_check(t, sizes, rng):
    n = sizes["M"] * sizes["N"]
    worst = 0.0
    for _ in range(256):
        i = rng.randrange(n)
        ref = t["A"][i] + t["B"][i]
        worst = max(worst, abs(t["C"][i] - ref) / (abs(ref) + 1e-6))
    return worst


def attention_check(t, sizes, rng):
    B, S, H, D = sizes["B"], sizes["S"], sizes["H"], sizes["D"]
    Q, K, V, O = t["Q"], t["K"], t["V"], t["O"]
    at = lambda b, s, h: ((b * S + s) * H + h) * D
    worst = 0.0
    for _ in range(4):
        b, s, h = rng.randrange(B), rng.randrange(S), rng.randrange(H)
        q = Q[at(b, s, h):at(b, s, h) + D]
        scores = [math.fsum(q[d] * K[at(b, j, h) + d] for d in range(D)) / math.sqrt(D) for j in range(S)]
        m = max(scores)
        p = [math.exp(x - m) for x in scores]
        z = math.fsum(p)
        for d in range(D):
            ref = math.fsum(p[j] * V[at(b, j, h) + d] for j in range(S)) / z
            worst = max(worst, abs(O[at(b, s, h) + d] - ref) / (abs(ref) + 1e-2))
    return worst


FAMILIES = [
    dict(name="gemm_f32", file="bench/cpu/kernels/sgemm.tl", kernel="sgemm",
         auto=["block_M", "block_N", "block_K", "threads"], sizes=dict(M=1000, N=1000, K=1000),
         check=gemm_check, tolerance=1e-5, work=lambda s: 2.0 * s["M"] * s["N"] * s["K"], unit="GFLOP/s"),
    dict(name="gemm_f16", file="samples/gemm_auto.tl", kernel="gemm_auto", auto=[],
         sizes=dict(M=1000, N=1000, K=1000), check=gemm_check, tolerance=2e-3,
         work=lambda s: 2.0 * s["M"] * s["N"] * s["K"], unit="GFLOP/s"),
    dict(name="softmax", file="samples/softmax_auto.tl", kernel="softmax_auto", auto=[],
         sizes=dict(M=16383, N=1024), check=softmax_check, tolerance=1e-5,
         work=lambda s: 8.0 * s["M"] * s["N"], unit="GB/s"),
    dict(name="layernorm", file="bench/cpu/kernels/layernorm.tl", kernel="layernorm", auto=["block_M", "threads"],
         sizes=dict(M=4095, N=4096), check=layernorm_check, tolerance=1e-5,
         work=lambda s: 8.0 * s["M"] * s["N"], unit="GB/s"),
    dict(name="rmsnorm", file="samples/rmsnorm.tl", kernel="rmsnorm", auto=["block_M", "threads"],
         defines={"dtype": "f32"}, sizes=dict(M=4095, N=4096), check=rmsnorm_check, tolerance=1e-5,
         work=lambda s: 8.0 * s["M"] * s["N"], unit="GB/s"),
    dict(name="reduce_sum", file="samples/reduce_sum.tl", kernel="reduce_sum",
         auto=["block_M", "block_N", "threads"], sizes=dict(M=4095, N=4097), check=reduce_sum_check,
         tolerance=1e-5, work=lambda s: 4.0 * s["M"] * s["N"], unit="GB/s"),
    dict(name="elementwise_add", file="tests/corpus/elementwise_add.tl", kernel="elementwise_add",
         auto=["block_M", "block_N", "threads"], sizes=dict(M=4095, N=4097), check=add_check, tolerance=1e-6,
         work=lambda s: 12.0 * s["M"] * s["N"], unit="GB/s"),
    dict(name="flash_attention", file="samples/flash_attention.tl", kernel="flash_attention",
         auto=["block_M", "block_N", "threads"], sizes=dict(B=1, S=1000, H=8, D=128), check=attention_check,
         tolerance=2e-2, work=lambda s: 4.0 * s["B"] * s["H"] * s["S"] * s["S"] * s["D"], unit="GFLOP/s"),
]


# ---- sources, candidates -------------------------------------------------------------------

def kernel_head(text, kernel):
    """(start, end) of `kernel`'s template list `<...>` in `text` (tests/auto/auto_sweep.py's reader)."""
    for name, start, end in auto_sweep.kernels_of(text):
        if name == kernel:
            return start, end
    sys.exit(f"sweep.py: no kernel '{kernel}'")


def template_names(text, kernel):
    start, end = kernel_head(text, kernel)
    return set(re.findall(r"(\w+)\s*(?::\s*\w+\s*)?=", text[start:end + 1]))


def with_auto(text, kernel, params):
    """The file with `params` of `kernel` set to `auto` (auto_sweep's rewrite)."""
    return auto_sweep.with_auto(text, *kernel_head(text, kernel), params)


def define_args(defines):
    return [a for n, v in sorted(defines.items()) for a in ("-D", f"{n}={v}")]


def recommend(tlc, path, fam, target, top):
    """`tlc recommend`'s JSON; the kernel's own compile-time values (N = 1024) are no --shape.
    `target`: a target's name, or a profile's JSON file (--profile)."""
    constants = template_names(open(path).read(), fam["kernel"])
    shape = ",".join(f"{n}={v}" for n, v in fam["sizes"].items() if n not in constants)
    where = f"--target-profile={target}" if target.endswith(".json") else f"--target={target}"
    cmd = [tlc, "recommend", path, where, f"--shape={shape}", f"--top={top}",
           "--kernel", fam["kernel"]] + define_args(fam.get("defines", {}))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode:
        sys.exit(f"sweep.py: {' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def choose(candidates, limit, rng):
    """The configurations to measure: all when few, else the model's best and an even sample."""
    if len(candidates) <= limit:
        return list(candidates)
    head = candidates[:limit // 3]
    rest = candidates[limit // 3:]
    step = len(rest) / (limit - len(head))
    return head + [rest[int(i * step)] for i in range(limit - len(head))]


# ---- building and running one configuration ------------------------------------------------

SIG = re.compile(r'extern "C" int (\w+)\(([^)]*)\);', re.S)
TENSOR = re.compile(r"//\s+(\w+): (\w+)\[([^\]]*)\]")
CTYPES = {"f32": ctypes.c_float, "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16, "i32": ctypes.c_int32}


def build(tlc, path, fam, target, values, work):
    """The configuration's tlc output built as a shared library; a library built from the same
    output before is kept (so that the timing of a rerun can follow the builds on a quiet machine)."""
    tag = "_".join(f"{n}{v}" for n, v in sorted(values.items()))
    base = os.path.join(work, f"{fam['name']}__{tag}")
    defines = dict(fam.get("defines", {}), **{n: str(v) for n, v in values.items()})
    subprocess.run([tlc, path, f"--target={target}", "--kernel", fam["kernel"], "-o", base + ".new.cpp",
                    "--header", base + ".h"] + define_args(defines), check=True, capture_output=True, timeout=600)
    new = open(base + ".new.cpp").read()
    if os.path.exists(base + ".so") and os.path.exists(base + ".cpp") and open(base + ".cpp").read() == new:
        os.remove(base + ".new.cpp")
        return base, False
    os.replace(base + ".new.cpp", base + ".cpp")
    subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", "-std=c++17", "-shared", "-fPIC", base + ".cpp",
                    "-o", base + ".so"], check=True, capture_output=True, timeout=900)
    return base, True


def to_native(dtype, values):
    if dtype == "f16":
        return list(struct.unpack(f"<{len(values)}H", struct.pack(f"<{len(values)}e", *values)))
    if dtype == "bf16":
        return [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in values]
    return values


def from_native(dtype, buf):
    if dtype == "f16":
        return list(struct.unpack(f"<{len(buf)}e", bytes(buf)))
    if dtype == "bf16":
        return [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in buf]
    return list(buf)


class Launch:
    """A built configuration's C launcher with its buffers: random inputs, zeroed outputs. The
    configurations of a family share one set (`pool`: tensor name -> buffer), made once: filling
    64 MB from Python takes seconds."""

    def __init__(self, base, fam, rng, pool):
        header = open(base + ".h").read()
        sig = SIG.search(header)
        shapes = {m.group(1): (m.group(2), [d.strip() for d in m.group(3).split(",")])
                  for m in TENSOR.finditer(header)}
        self.lib = ctypes.CDLL(base + ".so")
        self.fn = getattr(self.lib, sig.group(1))
        sizes = fam["sizes"]
        self.args, argtypes, self.tensors, self.scalars = [], [], {}, {}
        for param in [p.strip() for p in sig.group(2).split(",")]:
            name = param.split()[-1].lstrip("*")
            if name == "stream":
                self.args.append(None)
                argtypes.append(ctypes.c_void_p)
            elif "*" in param:
                dtype, dims = shapes[name]
                n = 1
                for d in dims:
                    n *= int(d) if d.isdigit() else sizes[d]
                if name not in pool:
                    buf = (CTYPES[dtype] * n)()
                    if param.startswith("const"):
                        buf[:] = to_native(dtype, [rng.uniform(-1.0, 1.0) for _ in range(n)])
                    pool[name] = buf
                buf = pool[name]
                if not param.startswith("const"):
                    ctypes.memset(buf, 0, ctypes.sizeof(buf))  # a kernel that writes nothing fails
                self.tensors[name] = (dtype, buf)
                self.args.append(ctypes.cast(buf, ctypes.c_void_p))
                argtypes.append(ctypes.c_void_p)
            elif param.startswith("float"):
                self.scalars[name] = 1e-5
                self.args.append(ctypes.c_float(1e-5))
                argtypes.append(ctypes.c_float)
            else:
                self.args.append(ctypes.c_int(sizes[name]))
                argtypes.append(ctypes.c_int)
        self.fn.argtypes = argtypes
        self.fn.restype = ctypes.c_int

    def __call__(self):
        status = self.fn(*self.args)
        if status:
            raise RuntimeError(f"launcher returned {status}")

    def values(self):
        out = {n: from_native(d, b) for n, (d, b) in self.tensors.items()}
        out.update(self.scalars)
        return out


def measure(launch, budget_s=0.4):
    launch()  # warm-up (first touch, OpenMP's threads)
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < budget_s and len(times) < 50):
        t0 = time.perf_counter()
        launch()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


# ---- the sweep ---------------------------------------------------------------------------

def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0] * len(v)
        for k, i in enumerate(order):
            r[i] = k
        return r
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    if n < 2:
        return float("nan")
    return 1 - 6 * sum((a - b) ** 2 for a, b in zip(rx, ry)) / (n * (n * n - 1))


def sweep_family(args, fam, work, previous=()):
    """One family's sweep. `previous`: the configurations of an earlier sweep of it (--reuse):
    those whose code is unchanged keep their times, and only the model's ranking is new."""
    rng = random.Random(46)
    text = open(os.path.join(ROOT, fam["file"])).read()
    path = os.path.join(work, fam["name"] + ".tl")
    with open(path, "w") as f:
        f.write(with_auto(text, fam["kernel"], fam["auto"]) if fam["auto"] else text)
    ranker = args.profile or args.target
    rec = recommend(args.tlc, path, fam, ranker, 1000)
    candidates = rec["candidates"]
    # The pick is what a compile takes: the search of `top = 1` lowers fewer candidates than
    # the whole ranking's, and may end on another one.
    pick_values = recommend(args.tlc, path, fam, ranker, 1)["candidates"][0]["values"]
    earlier = {json.dumps(c["values"], sort_keys=True): c for c in previous}
    if previous:  # the configurations measured before, ranked by this model
        chosen = [c for c in candidates if json.dumps(c["values"], sort_keys=True) in earlier]
    else:
        chosen = choose(candidates, args.max_configs, rng)
    if not any(c["values"] == pick_values for c in chosen):
        chosen.append(next(c for c in candidates if c["values"] == pick_values))
    print(f"{fam['name']}: {len(candidates)} ranked by the model ({rec['enumerated']} enumerated), "
          f"measuring {len(chosen)}", file=sys.stderr, flush=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        bases = list(pool.map(lambda c: build(args.tlc, path, fam, args.target, c["values"], work), chosen))
    if args.build_only:
        return None
    configs, launches, pool = [], [], {}
    for c, (base, rebuilt) in zip(chosen, bases):
        entry = dict(values=c["values"], estimate_us=c["estimate_us"], model_rank=c["rank"])
        configs.append(entry)
        old = earlier.get(json.dumps(c["values"], sort_keys=True))
        if old and not rebuilt and not args.retime:
            entry.update({k: old[k] for k in ("us", "us_passes", "failed", "max_rel_err") if k in old})
            continue
        launch = Launch(base, fam, random.Random(7), pool)
        launch()
        err = fam["check"](launch.values(), fam["sizes"], random.Random(11))
        entry["max_rel_err"] = float(f"{err:.3g}")
        if err <= fam["tolerance"]:
            launches.append((entry, base))
        else:
            entry["failed"] = f"result off by {err:.3g} (tolerance {fam['tolerance']})"
        del launch
    # Timed in passes over all configurations, each a median of repeated calls: the median of the
    # passes is kept, so that a slow moment of the machine moves one pass of a few of them only.
    for entry, base in launches:
        entry["us_passes"] = []
    for _ in range(args.passes):
        for entry, base in launches:
            launch = Launch(base, fam, random.Random(7), pool)
            entry["us_passes"].append(round(measure(launch), 1))
            del launch
    for entry, base in launches:
        entry["us"] = statistics.median(entry["us_passes"])
    for entry in configs:
        print(f"  {entry['values']}: {entry.get('us', entry.get('failed'))}", file=sys.stderr, flush=True)
    timed = [c for c in configs if "us" in c]
    best = min(timed, key=lambda c: c["us"]) if timed else None
    pick = next((c for c in timed if c["values"] == pick_values), None)
    return dict(family=fam["name"], file=fam["file"], auto=fam["auto"], kernel=rec["kernel"],
                fingerprint=rec["fingerprint"], defines=fam.get("defines", {}), shape=rec["shape"],
                ranked_by_model=len(candidates), configs=configs,
                work=fam["work"](fam["sizes"]), unit=fam["unit"],
                pick=pick["values"] if pick else None, pick_us=pick["us"] if pick else None,
                best=best["values"] if best else None, best_us=best["us"] if best else None,
                spearman=round(spearman([c["estimate_us"] for c in timed], [c["us"] for c in timed]), 3))


def rate(s, us):
    return s["work"] / (us * 1e-6) / 1e9


def table(result):
    lines = ["| family | shape | measured of ranked | rank-1 pick | its time | fastest measured | its time | "
             "pick / fastest | model vs measured order (Spearman) |",
             "| --- | --- | ---: | --- | ---: | --- | ---: | ---: | ---: |"]
    for s in result["sweeps"]:
        fmt_values = lambda v: ", ".join(f"{n}={x}" for n, x in v.items()) if v else "(failed)"
        timed = [c for c in s["configs"] if "us" in c]
        pick_rank = sorted(c["us"] for c in timed).index(s["pick_us"]) + 1 if s["pick_us"] else None
        shape = ", ".join(f"{n}={v}" for n, v in s["shape"].items())
        ratio, pick_time, best_time = "-", "-", "-"
        if s["pick_us"]:
            pick_time = f"{s['pick_us']:.0f} us ({rate(s, s['pick_us']):.1f} {s['unit']}; {pick_rank} of {len(timed)})"
        if s["best_us"]:
            best_time = f"{s['best_us']:.0f} us ({rate(s, s['best_us']):.1f} {s['unit']})"
        if s["pick_us"] and s["best_us"]:
            ratio = f"{s['best_us'] / s['pick_us']:.2f}"
        lines.append(f"| {s['family']} | {shape} | {len(s['configs'])} of {s['ranked_by_model']} | "
                     f"{fmt_values(s['pick'])} | {pick_time} | {fmt_values(s['best'])} | {best_time} | {ratio} | "
                     f"{s['spearman']} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tlc", default=os.path.join(ROOT, "build", "tlc"))
    ap.add_argument("--target", default="cpu-avx512")
    ap.add_argument("--only", default="")
    ap.add_argument("--profile", default="",
                    help="rank with this hardware profile (JSON, `base` the --target) instead of the target's "
                         "built-in one: the build machine's cores and bandwidth; the sweep is filed under its name")
    ap.add_argument("--max-configs", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench-sweep"))
    ap.add_argument("--reuse", default="",
                    help="an earlier sweep's JSON: rank its configurations with this tlc's model, keeping the "
                         "times of those whose code is unchanged; only a new pick is timed")
    ap.add_argument("--retime", action="store_true", help="with --reuse: time its configurations again")
    ap.add_argument("--passes", type=int, default=3, help="passes over the configurations; the median is kept")
    ap.add_argument("--build-only", action="store_true",
                    help="build every configuration and stop (then time them with a second run on a quiet machine)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    families = [f for f in FAMILIES if not args.only or f["name"] in args.only.split(",")]
    if not families:
        sys.exit(f"sweep.py: no family in --only {args.only}")
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = re.search(r"Model name:\s*(.*)", cpu)
    machine = args.machine or f"{model.group(1) if model else 'a CPU'}, {os.cpu_count()} cores"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    target_name = json.load(open(args.profile))["name"] if args.profile else args.target
    result = dict(machine=machine, date=datetime.date.today().isoformat(), tlc=commit, target=target_name,
                  how="bench/cpu/sweep.py: each configuration checked against a double reference on random "
                      "inputs, then the median of repeated calls after a warm-up (g++ -O3 -march=native -fopenmp)",
                  sweeps=[])
    reused = {s["family"]: s["configs"] for s in json.load(open(args.reuse))["sweeps"]} if args.reuse else {}
    if reused:
        old = json.load(open(args.reuse))
        result.update(machine=old["machine"], date=old["date"], how=old["how"] + f"; ranked again by tlc {commit}")
    for fam in families:
        sweep = sweep_family(args, fam, args.work, reused.get(fam["name"], ()))
        if args.build_only:
            continue
        result["sweeps"].append(sweep)
        if args.out:  # after each family: an interrupted run keeps what it measured
            with open(args.out + ".tmp", "w") as f:
                json.dump(result, f, indent=1)
                f.write("\n")
            os.replace(args.out + ".tmp", args.out)
    if args.build_only:
        return 0
    print(f"Machine: {machine}; target {args.target}; tlc {commit}; {result['date']}")
    print(table(result))
    failed = [(s["family"], c["values"]) for s in result["sweeps"] for c in s["configs"] if "failed" in c]
    if failed:
        print(f"sweep.py: {len(failed)} configuration(s) gave wrong results: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
