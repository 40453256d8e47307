#!/usr/bin/env python3
"""Prepares the GPU validation kit (scripts/gpu-kit.sh prepare; docs/testing.md, "GPU kit").

    prepare.py [--build-dir build] [--out DIR] [--flavours sm80,sm90]

Runs tlc (no GPU needed) on every run-layer and corpus kernel for the sm80 and sm90 flavours of
the run layer (the sm80 flavour takes the sm89 output where a kernel needs fp8 matrix
instructions, as the simulator's does) and on the benchmark kernels, and writes a folder that
needs only nvcc, compute-sanitizer and Python with PyTorch on the GPU machine:

    kit.json          what is in it: executables (drivers + kernels), benchmark kernels, tlc's version
    gen/              tlc's .cu and launcher headers; gen/python/<flavour>: the Python example's
                      kernel with its pybind11 binding (tlc --emit=python); gen/experiments: the
                      queue of experiments.py
    src/              the run layer's drivers and references (tests/run, tests/corpus), as in the tree
    python/           the Python example's scripts (examples/python: test_gemm*.py, torch_op.py)
    kit.py, bench.py, experiments.py, gemm_family.py, python_phase.py, triton_attention.py, managed_new.cpp,
    kit_types.h, gpu-kit.sh        the GPU side

The executables and their kernels come from <build>/tests/run/run_sets.json, which the run
layer's CMake writes, so the kit runs exactly what CTest runs in the simulator. The folder is
written beside DIR and renamed into place, so a failed prepare leaves no half-written kit.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import experiments  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
GPU_SIDE = ["kit.py", "bench.py", "experiments.py", "gemm_family.py", "python_phase.py", "triton_attention.py", "managed_new.cpp",
            "kit_types.h"]
# The Python example (examples/python) that the python phase builds for the GPU: its kernel and
# -D values (those of its CMakeLists.txt, which test_kit.py checks) and its scripts.
PYTHON_SAMPLE = "samples/gemm.tl"
PYTHON_DEFINES = ("block_M=16", "block_N=16", "block_K=16")
PYTHON_SCRIPTS = ["test_gemm.py", "test_gemm_cuda.py", "torch_op.py"]

# Benchmark kernels: (id, sample, target, defines, what bench.py measures). The GEMM shapes,
# attention sizes and the rest are bench.py's; these are the tlc side. Each flavour's list is
# what runs on a GPU of that generation (sm90: H100/H200; sm80: A100, sm89 for fp8).
HOPPER_GEMM_SWEEP = [
    ("block_N=256", "block_K=64", "threads=256", "stages=3"),
    ("block_N=256", "block_K=64", "threads=256", "stages=4"),
    ("block_M=128", "block_N=128", "block_K=64", "threads=256", "stages=4"),
]


def bench_kernels(flavour):
    fp8_target = "sm89" if flavour == "sm80" else flavour
    out = [
        ("gemm_f16", "samples/gemm.tl", flavour, (), "gemm"),
        ("gemm_bf16", "samples/gemm_bf16.tl", flavour, (), "gemm"),
        ("gemm_e4m3", "samples/gemm_fp8.tl", fp8_target, (), "gemm"),
    ]
    if flavour == "sm90":
        for i, d in enumerate(HOPPER_GEMM_SWEEP):
            out.append((f"gemm_f16_sweep{i + 1}", "samples/gemm.tl", flavour, d, "gemm"))
    for hdim in (64, 128):
        for causal in ("false", "true"):
            d = (f"D={hdim}", f"causal={causal}")
            out.append((f"fa_d{hdim}_{'causal' if causal == 'true' else 'full'}", "samples/flash_attention.tl",
                        flavour, d, "attention"))
            if flavour == "sm90":
                # 128 x 128 tiles; at D = 128 with two consumer warpgroups (one cannot hold both
                # accumulators: 4x slower on an H200, bench/RESULTS.md).
                big = ("block_M=128", "block_N=128") + (("threads=256",) if hdim == 128 else ())
                out.append((f"fa_d{hdim}_{'causal' if causal == 'true' else 'full'}_128x128",
                            "samples/flash_attention.tl", flavour, d + big, "attention"))
    out += [
        ("softmax", "samples/softmax.tl", flavour, (), "softmax"),
        ("rmsnorm", "samples/rmsnorm.tl", flavour, (), "rmsnorm"),
        ("layernorm", "tests/corpus/layernorm.tl", flavour, (), "layernorm"),
        # Four rows a block of 64 threads: 1.9x the port's defaults (one row, 256 threads) on an
        # H200, whose blocks move too few bytes each to keep HBM busy (bench/RESULTS.md).
        ("layernorm_64x4", "tests/corpus/layernorm.tl", flavour, ("threads=64", "blk_m=4"), "layernorm"),
    ]
    return out


RECOMMEND_SHAPE = {"M": 8192, "N": 8192, "K": 8192}
RECOMMEND_TOP = 8


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}")
    return r.stdout


def emit(tlc, source, target, flags, out_cu, kernel=None):
    os.makedirs(os.path.dirname(out_cu), exist_ok=True)
    cmd = [tlc, source, f"--target={target}", "-o", out_cu] + list(flags)
    if kernel:
        cmd.append(f"--kernel={kernel}")
    run(cmd)


def pipeline_depths(tlc, source, target, flags):
    """The compiler's `pipeline depth` and `k-step unroll` decisions for a source ("8 stages,
    deepened from 3; 2 k-tiles per wgmma group"), joined; "" where it made none (a target without
    a load latency)."""
    r = subprocess.run([tlc, source, f"--target={target}", "--explain", "--diagnostics-format=json"] + flags,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tlc --explain {source} failed ({r.returncode}):\n{r.stderr}")
    out = json.loads(r.stdout)  # (the diagnostics, a JSON list of their own, go to stderr)
    def general(k):  # a kernel's general variant (issue 45) logs its own depth: the fast one is timed
        return any(d["subject"] == "shape variants" and d["value"].startswith("the general variant of ")
                   for d in k["decisions"])
    return "; ".join(d["value"] for k in out["explain"] if not general(k) for d in k["decisions"]
                     if d["subject"].startswith(("pipeline depth of ", "k-step unroll of ")))


def recommended_values(args, out, exp):
    """The recommender's rank 1 for an experiment's `recommend` parameters (sm90): its source with
    them `auto` (tests/auto/auto_sweep.py's rewrite), ranked at the experiment's shape. Returns
    the values and what a measured sweep is filed under in tlc (src/recommend/Measured.h): the
    kernel, the fingerprint of its `auto` source, and each parameter's value in the source."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "auto"))
    import auto_sweep  # noqa: E402
    source = exp["kernels"][0][1]
    text = open(os.path.join(ROOT, source)).read()
    defaults = {}
    for name, start, end in reversed(auto_sweep.kernels_of(text)):
        if name == exp.get("kernel", name):
            head = text[start:end + 1]
            for p in exp["recommend"]["params"]:
                m = re.search(r"(?<![\w.])%s\s*(?::\s*\w+\s*)?=\s*(-?\d+)" % re.escape(p), head)
                if m:
                    defaults[p] = int(m.group(1))
            text = auto_sweep.with_auto(text, start, end, exp["recommend"]["params"])
    auto = os.path.join(out, "gen", "experiments", exp["name"] + "_auto.tl")
    os.makedirs(os.path.dirname(auto), exist_ok=True)
    with open(auto, "w") as f:
        f.write(text)
    shape = ",".join(f"{k}={v}" for k, v in exp["recommend"]["shape"].items())
    cmd = [args.tlc, "recommend", auto, "--target=sm90", f"--shape={shape}", "--top=1"]
    if exp.get("kernel"):
        cmd.append(f"--kernel={exp['kernel']}")
    ranked = json.loads(run(cmd))
    sweep = {"kernel": ranked["kernel"], "fingerprint": ranked["fingerprint"], "params": exp["recommend"]["params"],
             "sizes": exp["recommend"].get("sizes", []), "defaults": defaults}
    return ranked["candidates"][0]["values"], sweep


def config_values(sweep, defines):
    """An experiment kernel's values of the swept parameters: its -D values, else the source's."""
    given = dict(d.split("=", 1) for d in defines)
    values = {p: int(given[p]) if p in given else sweep["defaults"].get(p) for p in sweep["params"]}
    return values if all(v is not None for v in values.values()) else None


def prepare_experiments(args, out):
    """experiments.QUEUE's kernels (sm90) into gen/experiments, with what the manifest needs to
    build and run them. A configuration tlc refuses for sm90 is left out, and said so; the
    recommender's pick, where an experiment asks for it, is a kernel marked `pick`."""
    queue = []
    for exp in experiments.QUEUE:
        # (index, label, source, -D values, the recommender's pick?, what the runner needs: "kernel", ...)
        entries = [(i, label, source, defines, False, extra[0] if extra else {})
                   for i, (label, source, defines, *extra) in enumerate(exp["kernels"])]
        sweep = None
        if exp.get("recommend"):
            values, sweep = recommended_values(args, out, exp)
            text = ", ".join(f"{k}={v}" for k, v in values.items())
            entries.insert(0, ("rank1", f"recommender's rank 1: {text}", exp["kernels"][0][1],
                               tuple(f"{k}={v}" for k, v in values.items()), True, exp["recommend"].get("extra", {})))
        kernels = []
        for i, label, source, defines, pick, extra in entries:
            kernel = extra.get("kernel") or exp.get("kernel")  # which of the source's kernels
            kid = experiments.kernel_id(exp, i)
            cu = os.path.join("gen", "experiments", kid + ".cu")
            flags = [x for d in defines for x in ("-D", d)] + ([f"--kernel={kernel}"] if kernel else [])
            path = os.path.join(ROOT, source)
            try:
                emit(args.tlc, path, "sm90", flags, os.path.join(out, cu))
            except RuntimeError as e:
                if pick:
                    raise
                print(f"prepare: experiment {exp['name']}: {label}: tlc refused it, left out:\n{e}", file=sys.stderr)
                continue
            kernels.append({"id": kid, "label": label, "source": source, "defines": list(defines), "cu": cu,
                            "target": "sm90", "pick": pick,
                            "launcher": "tl_" + kernel if kernel else experiments.launcher_name(path),
                            "depth": pipeline_depths(args.tlc, path, "sm90", flags)} | extra)
            if sweep:
                kernels[-1]["values"] = config_values(sweep, defines)
        queue.append({k: exp[k] for k in ("name", "title", "question", "kind", "dtype", "shapes")} |
                     {"kernels": kernels} | ({"sweep": sweep} if sweep else {}))
        print(f"prepare: experiment {exp['name']}: {len(kernels)} kernels", flush=True)
    return queue


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def prepare(args, out):
    sets = json.load(open(os.path.join(args.build_dir, "tests/run/run_sets.json")))
    manifest = {"tlc_version": run([args.tlc, "--version"]).strip(), "commit": git_commit(),
                "prepared": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "executables": [], "bench": [], "recommend": None, "experiments": []}

    def kit_path(path):
        """A source file's place in the kit: src/<path in the tree>."""
        rel = os.path.relpath(path, ROOT)
        if rel.startswith(".."):
            raise RuntimeError(f"{path} is outside the source tree")
        dst = os.path.join(out, "src", rel)
        if not os.path.exists(dst):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(path, dst)
        return os.path.relpath(dst, out)

    # The run layer's headers (harness.h, corpus.h, references): everything in the include dirs.
    include_dirs = []
    for d in sets["include_dirs"]:
        for name in sorted(os.listdir(d)):
            if name.endswith(".h"):
                kit_path(os.path.join(d, name))
        include_dirs.append(os.path.relpath(os.path.join(out, "src", os.path.relpath(d, ROOT)), out))

    for test in sets["tests"]:
        if test["flavour"] not in args.flavours:
            continue
        gen = os.path.join("gen", test["set"], test["flavour"])
        kernels = []
        for k in test["kernels"]:
            cu = os.path.join(gen, k["name"] + ".cu")
            emit(args.tlc, k["source"], k["target"], k["flags"], os.path.join(out, cu))
            kernels.append({"name": k["name"], "target": k["target"], "cu": cu,
                            "source": os.path.relpath(k["source"], ROOT)})
        manifest["executables"].append({
            "name": test["test"], "set": test["set"], "flavour": test["flavour"],
            "drivers": [kit_path(d) for d in test["drivers"]],
            "include_dirs": [gen] + include_dirs, "kernels": kernels})
        print(f"prepare: {test['test']}: {len(kernels)} kernels", flush=True)

    for flavour in args.flavours:
        for bid, sample, target, defines, kind in bench_kernels(flavour):
            cu = os.path.join("gen", "bench", flavour, bid + ".cu")
            flags = [x for d in defines for x in ("-D", d)]
            try:
                emit(args.tlc, os.path.join(ROOT, sample), target, flags, os.path.join(out, cu),
                     kernel="layernorm_fwd" if kind == "layernorm" else None)
            except RuntimeError as e:
                # A configuration tlc refuses for this target is left out, and said so.
                print(f"prepare: bench {flavour} {bid}: tlc refused it, left out:\n{e}", file=sys.stderr)
                continue
            manifest["bench"].append({"id": bid, "flavour": flavour, "target": target, "kind": kind,
                                      "sample": sample, "defines": list(defines), "cu": cu})
    # The recommender's top configurations of samples/gemm_auto.tl, each built as plain -D values.
    if "sm90" in args.flavours:
        shape = ",".join(f"{k}={v}" for k, v in RECOMMEND_SHAPE.items())
        ranked = json.loads(run([args.tlc, "recommend", os.path.join(ROOT, "samples/gemm_auto.tl"), "--target=sm90",
                                 f"--shape={shape}", f"--top={RECOMMEND_TOP}"]))
        cands = []
        for c in ranked["candidates"]:
            cu = os.path.join("gen", "recommend", f"rank{c['rank']}.cu")
            flags = [x for k, v in c["values"].items() for x in ("-D", f"{k}={v}")]
            emit(args.tlc, os.path.join(ROOT, "samples/gemm_auto.tl"), "sm90", flags, os.path.join(out, cu))
            cands.append({"rank": c["rank"], "values": c["values"], "estimate_us": c.get("estimate_us"), "cu": cu})
        manifest["recommend"] = {"target": "sm90", "shape": RECOMMEND_SHAPE, "candidates": cands}
        manifest["experiments"] = prepare_experiments(args, out)

    # The Python example per flavour: the kernel source, its header and the pybind11 binding.
    manifest["python"] = {"sample": PYTHON_SAMPLE, "defines": list(PYTHON_DEFINES), "modules": {},
                          "scripts": [os.path.join("python", n) for n in PYTHON_SCRIPTS]}
    for flavour in args.flavours:
        cu = os.path.join("gen", "python", flavour, "gemm.cu")
        emit(args.tlc, os.path.join(ROOT, PYTHON_SAMPLE), flavour,
             [x for d in PYTHON_DEFINES for x in ("-D", d)] + ["--emit=python"], os.path.join(out, cu))
        manifest["python"]["modules"][flavour] = {"target": flavour, "cu": cu,
                                                  "binding": os.path.join(os.path.dirname(cu), "gemm_python.cpp")}
    os.makedirs(os.path.join(out, "python"))
    for name in PYTHON_SCRIPTS:
        shutil.copy2(os.path.join(ROOT, "examples", "python", name), os.path.join(out, "python", name))

    for name in GPU_SIDE:
        shutil.copy2(os.path.join(HERE, name), os.path.join(out, name))
    shutil.copy2(os.path.join(ROOT, "scripts/gpu-kit.sh"), os.path.join(out, "gpu-kit.sh"))
    with open(os.path.join(out, "kit.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return manifest


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--tlc", default=None, help="default: <build-dir>/tlc")
    ap.add_argument("--out", default=None, help="default: <build-dir>/gpu-kit")
    ap.add_argument("--flavours", default="sm80,sm90")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    args.tlc = os.path.abspath(args.tlc or os.path.join(args.build_dir, "tlc"))
    args.flavours = args.flavours.split(",")
    out = os.path.abspath(args.out or os.path.join(args.build_dir, "gpu-kit"))
    tmp = out + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        m = prepare(args, tmp)
    except Exception:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    kernels = sum(len(e["kernels"]) for e in m["executables"])
    print(f"prepare: {out}: {len(m['executables'])} test executables ({kernels} kernels), {len(m['bench'])} "
          f"benchmark kernels, {len(m['recommend']['candidates']) if m['recommend'] else 0} recommender "
          f"candidates, {sum(len(e['kernels']) for e in m.get('experiments', []))} experiment kernels, "
          f"{folder_bytes(out) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
