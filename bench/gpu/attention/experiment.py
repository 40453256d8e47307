#!/usr/bin/env python3
"""Issue 44's attention experiment: the attention kernels as two tlc builds emit them ("before",
a baseline compiler, and "after", this build) side by side with PyTorch's SDPA, on an H100/H200.

Here (no GPU; the tree's build):
    bench/gpu/attention/experiment.py prepare --out DIR [--tlc build/tlc]
                                              (--baseline-tlc PATH [--baseline-commit REV] | --baseline-rev REV)
There (the GPU machine: nvcc and PyTorch; DIR copied there):
    python3 DIR/experiment.py run [--quick | --set NAME] [--only ID,...] [--out DIR2]

prepare emits every configuration of configs.py with both compilers (with --emit-manifest: the
launchers' parameters, so that run calls them without knowing their signatures), copies the
GPU side (this file, configs.py, the kit's bench.py for timing, ptxas_report.py) and writes
experiment.json. --baseline-rev builds tlc at that revision (git archive, cmake, the tlc target:
minutes on 2 cores) in a temporary folder.

run builds each kernel into a shared library (nvcc -O3 -arch=sm_90a, with ptxas -v: registers,
spills and the wgmma advisories of each build go into the report), then per configuration
fills random f16 inputs, runs both builds and checks each against an fp32 reference (a batch or
two of it), and times both and SDPA on the same data (CUDA events, warm-up, median). It writes
report.md and report.json; the exit status is 1 when a kernel failed its check. On an H200 the
24 builds and the timed runs took 30 s in all (bench/RESULTS.md, fourth run; --quick: 5
configurations; --set schedule: the 10 forward configurations before / after the ping-pong
schedule, configs.SETS). Every figure is a ratio measured in the same process; the
report names the device, the driver and both compilers' commits.
"""
import argparse
import concurrent.futures
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs  # noqa: E402

LABELS = ("before", "after")
TOLERANCE = 2e-2  # P goes through f16 before the second gemm


# ---- prepare (no GPU, no PyTorch) ----------------------------------------------------------------

def tree_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def run_checked(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-4000:]}")
    return r.stdout


def build_baseline(rev, work):
    """tlc built at `rev` of this repository in `work`: the path of the binary."""
    src = os.path.join(work, "src")
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", tree_root(), "archive", rev], stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    # The developers' build type and ccache with paths relative to the tree: objects a checkout
    # of the same revision compiled before are reused.
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    env = dict(os.environ, CCACHE_BASEDIR=work)
    run_checked(["cmake", "-S", src, "-B", os.path.join(src, "build"), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DTLC_UNITY_BUILD=OFF", "-DTLC_BUILD_TESTS=OFF", *launcher],
                env=env)
    run_checked(["cmake", "--build", os.path.join(src, "build"), "--target", "tlc", "-j", str(os.cpu_count() or 2)],
                env=env)
    return os.path.join(src, "build", "tlc")


def commit_of(tlc, rev=None):
    if rev:
        return subprocess.run(["git", "-C", tree_root(), "rev-parse", "--short", rev], capture_output=True,
                              text=True).stdout.strip() or rev
    if os.path.realpath(tlc).startswith(os.path.realpath(tree_root())):
        return subprocess.run(["git", "-C", tree_root(), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    return "unknown"


def prepare(args):
    root = tree_root()
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with tempfile.TemporaryDirectory() as work:
        tlcs = {"after": os.path.abspath(args.tlc),
                "before": os.path.abspath(args.baseline_tlc) if args.baseline_tlc else build_baseline(args.baseline_rev,
                                                                                                     work)}
        manifest = {"prepared": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "compilers": {}, "kernels": []}
        for label, tlc in tlcs.items():
            given = args.baseline_commit if label == "before" and args.baseline_tlc else None
            manifest["compilers"][label] = {
                "version": run_checked([tlc, "--version"]).strip(),
                "commit": given or commit_of(tlc, args.baseline_rev if label == "before" else None)}
        for c in configs.CONFIGS:
            entry = dict(c, builds={})
            for label, tlc in tlcs.items():
                if label == "before" and c.get("after_only"):
                    continue
                cu = os.path.join("gen", label, c["id"] + ".cu")
                flags = [x for d in c["defines"] for x in ("-D", d)]
                auto = any(d.endswith("=auto") for d in c["defines"])
                if auto:  # the recommender models the launch's own sizes
                    flags += ["--shape", ",".join(f"{n}={v}" for n, v in c["sizes"].items() if isinstance(v, int))]
                os.makedirs(os.path.dirname(os.path.join(out, cu)), exist_ok=True)
                try:
                    run_checked([tlc, os.path.join(root, c["source"]), "--target=sm90", "--emit-manifest",
                                 "-o", os.path.join(out, cu), *flags])
                    entry["builds"][label] = {"cu": cu, "manifest": cu[:-len(".cu")] + ".json"}
                except RuntimeError as e:
                    if label == "before" and auto:  # a baseline older than `-D NAME=auto`
                        entry["after_only"] = True
                        print(f"prepare: {c['id']}: the baseline takes no -D NAME=auto; run after-only", file=sys.stderr)
                        continue
                    print(f"prepare: {c['id']} ({label}): tlc refused it, left out:\n{e}", file=sys.stderr)
            manifest["kernels"].append(entry)
    for f in ("experiment.py", "configs.py"):
        shutil.copy2(os.path.join(HERE, f), os.path.join(out, f))
    shutil.copy2(os.path.join(root, "bench", "gpu", "kit", "bench.py"), os.path.join(out, "bench.py"))
    shutil.copy2(os.path.join(root, "tests", "compile", "ptxas_report.py"), os.path.join(out, "ptxas_report.py"))
    with open(os.path.join(out, "experiment.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    built = sum(len(k["builds"]) for k in manifest["kernels"])
    print(f"prepare: {out}: {len(manifest['kernels'])} configurations, {built} kernels "
          f"(before: {manifest['compilers']['before']['commit']}, after: {manifest['compilers']['after']['commit']})")


# ---- run (the GPU machine) ------------------------------------------------------------------------

def build_all(manifest, out, jobs):
    """Builds every kernel into a shared library: {(id, label): (path or None, ptxas entries, log)}."""
    import ptxas_report
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"

    def one(cid, label, build):
        cu = os.path.join(HERE, build["cu"])
        lib = os.path.join(out, "lib", label, cid + ".so")
        os.makedirs(os.path.dirname(lib), exist_ok=True)
        r = subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90a", "-shared", "-Xcompiler", "-fPIC", "-w",
                            "-Xptxas", "-v", cu, "-o", lib], capture_output=True, text=True)
        return (cid, label), (lib if r.returncode == 0 else None, ptxas_report.parse(r.stderr), r.stderr)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futs = [pool.submit(one, k["id"], label, b) for k in manifest["kernels"] for label, b in k["builds"].items()]
        return dict(f.result() for f in futs)


def size_value(expr, sizes):
    """A manifest shape expression ("heads / 4", "ceildiv(S, 64)") at these sizes (integers)."""
    names = dict(sizes, ceildiv=lambda a, b: -(-a // b), min=min, max=max)
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, names))


def c_type_of(c_type):
    """The ctypes type of a launcher's size or scalar parameter, from its C type."""
    if c_type in ("float", "double"):
        return ctypes.c_float if c_type == "float" else ctypes.c_double
    return ctypes.c_longlong if "64" in c_type or "long" in c_type else ctypes.c_int


class Launch:
    """One launcher of a kernel's manifest bound to tensors by parameter name: call() runs it."""

    def __init__(self, torch, lib, launcher, sizes, tensors):
        self.fn = getattr(ctypes.CDLL(lib), launcher["c_launcher"])
        self.fn.restype = ctypes.c_int
        args, types = [], []
        for p in launcher["params"]:
            if p["kind"] == "tensor":
                args.append(tensors[p["name"]].data_ptr())
                types.append(ctypes.c_void_p)
            else:  # a size, or a kernel's scalar parameter (fp8 scales): the config's value
                t = c_type_of(p["c_type"])
                args.append(float(sizes[p["name"]]) if t in (ctypes.c_float, ctypes.c_double) else int(sizes[p["name"]]))
                types.append(t)
        ws = launcher.get("workspace")
        if ws:
            size_fn = getattr(ctypes.CDLL(lib), ws["c_size_function"])
            size_fn.restype = ctypes.c_size_t
            # The workspace's size function takes the sizes alone.
            nbytes = size_fn(*[sizes[p["name"]] for p in launcher["params"] if p["kind"] == "size"])
            self.workspace = torch.empty(max(nbytes, 16), dtype=torch.uint8, device="cuda")
            args.append(self.workspace.data_ptr())
            types.append(ctypes.c_void_p)
        args.append(torch.cuda.current_stream().cuda_stream)
        types.append(ctypes.c_void_p)
        self.fn.argtypes = types
        self.args = args

    def __call__(self):
        status = self.fn(*self.args)
        if status != 0:
            raise RuntimeError(f"launcher returned {status}")


def allocate(torch, launchers, sizes, aliases=None):
    """A tensor per parameter name of these launchers (random normal inputs, zeroed outputs)."""
    types = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "u8": torch.uint8,
             "f8e4m3": getattr(torch, "float8_e4m3fn", None)}
    tensors = {}
    for launcher in launchers:
        for p in launcher["params"]:
            name = (aliases or {}).get(p["name"], p["name"])
            if p["kind"] != "tensor" or name in tensors:
                continue
            shape = [size_value(e, sizes) for e in p["shape"]]
            dtype = types[p["dtype"]]
            if dtype == types["f8e4m3"] and dtype is not None:  # normal values, rounded to e4m3
                t = torch.randn(shape, device="cuda").to(dtype) if p["access"] == "read" else \
                    torch.zeros(shape, device="cuda").to(dtype)
                tensors[name] = t
                continue
            t = torch.zeros(shape, dtype=dtype, device="cuda")
            if p["access"] == "read" and dtype != torch.uint8:
                t.normal_()
            tensors[name] = t
    for alias, name in (aliases or {}).items():
        tensors[alias] = tensors[name]
    return tensors


def causal_of(c):
    return any(d in ("causal=true", "is_causal=true") for d in c["defines"])


def sdpa(torch, q, k, v, causal=False):
    """SDPA on [b, h, s, d] tensors, K and V with fewer heads taken as GQA: (callable, how)."""
    F = torch.nn.functional
    if k.shape[1] != q.shape[1]:
        try:
            F.scaled_dot_product_attention(q[:1, :, :1], k[:1, :, :1], v[:1, :, :1], enable_gqa=True)
            return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)), "enable_gqa"
        except TypeError:  # PyTorch before 2.5: K and V expanded to every query head first
            g = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
            return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), "K, V expanded"
    return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), "MHA"


def workload(torch, c, tensors, names):
    """(reference check: tensors -> relative error, SDPA callable, SDPA form, FLOPs, bytes)."""
    import bench
    F = torch.nn.functional
    t = [tensors[n] for n in names]
    kind, causal = c["kind"], causal_of(c)
    if kind in ("fwd_bshd", "fwd_bhsd"):
        q, k, v, o = t[:4]
        to_bhsd = (lambda x: x.transpose(1, 2).contiguous()) if kind == "fwd_bshd" else (lambda x: x)
        qh, kh, vh = to_bhsd(q), to_bhsd(k), to_bhsd(v)
        b, h, s, d = qh.shape
        g = h // kh.shape[1]

        def check():  # the first sequence, in fp32
            ref = F.scaled_dot_product_attention(qh[:1].float(), kh[:1].float().repeat_interleave(g, 1),
                                                 vh[:1].float().repeat_interleave(g, 1), is_causal=causal)
            return bench.rel_err(torch, to_bhsd(o)[:1], ref)
        base, form = sdpa(torch, qh, kh, vh, causal)
        return check, base, form, 4 * b * h * s * s * d * (0.5 if causal else 1.0), None
    if kind == "fwd_fp8":
        # Q, K [b, s, h, d] and Vt [b, h, d, s] in e4m3 with per-tensor scales (the config's
        # q_scale, k_scale, v_scale): checked against fp32 SDPA of the dequantised inputs, timed
        # against SDPA in f16 on the same values (what the fp8 kernel replaces).
        q, k, vt, o = t[:4]
        sz = c["sizes"]
        qh = (q.float() * sz["q_scale"]).transpose(1, 2).contiguous()
        kh = (k.float() * sz["k_scale"]).transpose(1, 2).contiguous()
        vh = (vt.float() * sz["v_scale"]).transpose(2, 3).contiguous()
        b, h, s, d = qh.shape

        def check():
            ref = F.scaled_dot_product_attention(qh[:1], kh[:1], vh[:1], is_causal=causal)
            return bench.rel_err(torch, o.transpose(1, 2)[:1], ref)
        base, form = sdpa(torch, qh.half(), kh.half(), vh.half(), causal)
        return check, base, form + " (f16 SDPA of the same values)", 4 * b * h * s * s * d, None
    if kind == "mla":
        q, qpe, kv, kpe, o = t[:5]
        B, H, D = q.shape
        qc = torch.cat([q, qpe], -1).unsqueeze(1)  # H query heads as one head's H queries
        kc = torch.cat([kv[:, :, 0], kpe[:, :, 0]], -1).unsqueeze(1)
        vc = kv[:, :, 0].unsqueeze(1)

        def check():
            ref = F.scaled_dot_product_attention(qc[:2].float(), kc[:2].float(), vc[:2].float())
            return bench.rel_err(torch, o[:2], ref[:, 0])
        S = kv.shape[1]
        nbytes = sum(x.numel() * x.element_size() for x in t[:5])
        return check, (lambda: F.scaled_dot_product_attention(qc, kc, vc)), "H queries on one KV head", \
            2 * B * H * S * (kc.shape[-1] + D), nbytes
    if kind == "decode":
        q, k, v, mask, o = t[:5]
        mask.fill_(1)
        qh, kh, vh = q.unsqueeze(2), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
        g = qh.shape[1] // kh.shape[1]

        def check():
            ref = F.scaled_dot_product_attention(qh[:2].float(), kh[:2].float().repeat_interleave(g, 1),
                                                 vh[:2].float().repeat_interleave(g, 1))
            return bench.rel_err(torch, o[:2], ref[:, :, 0])
        base, form = sdpa(torch, qh, kh, vh)
        nbytes = sum(x.numel() * x.element_size() for x in t[:5])
        return check, base, form, 4 * qh.shape[0] * qh.shape[1] * kh.shape[2] * qh.shape[-1], nbytes
    raise ValueError(kind)


def measure(torch, c, kernel_manifest, lib, iters):
    """(relative error, tlc ms, SDPA ms, SDPA form, FLOPs, bytes) of one build of a configuration."""
    import bench
    launchers = kernel_manifest["launchers"]
    sizes = c["sizes"]
    torch.manual_seed(0)
    if c["kind"] == "bwd_bshd":
        return measure_backward(torch, c, launchers, lib, iters)
    tensors = allocate(torch, launchers, sizes)
    names = [p["name"] for p in launchers[0]["params"] if p["kind"] == "tensor"]
    # The workload first: it completes the inputs (decoding's mask) and copies them for SDPA.
    check, base, form, flops, nbytes = workload(torch, c, tensors, names)
    run = Launch(torch, lib, launchers[0], sizes, tensors)
    run()
    torch.cuda.synchronize()
    err = check()
    return err, bench.median_ms(torch, run, iters), bench.median_ms(torch, base, iters), form, flops, nbytes


def measure_backward(torch, c, launchers, lib, iters):
    """The backward's prep, main and post kernels timed together (dQ zeroed each time), checked
    against fp32 autograd through SDPA; the baseline is SDPA's backward on the same tensors."""
    import bench
    F = torch.nn.functional
    by_name = {l["launcher"].split("::")[-1]: l for l in launchers}
    fwd, prep, main, post = (by_name[n] for n in ("mha_bwd_bshd_fwd", "mha_bwd_bshd_prep", "mha_bwd_bshd",
                                                  "mha_bwd_bshd_post"))
    tensors = allocate(torch, [fwd, prep, main, post], c["sizes"], aliases={"O": "Output"})
    Launch(torch, lib, fwd, c["sizes"], tensors)()
    steps = [Launch(torch, lib, x, c["sizes"], tensors) for x in (prep, main, post)]

    def backward():
        steps[0]()
        tensors["dQ"].zero_()
        steps[1]()
        steps[2]()
    backward()
    torch.cuda.synchronize()
    causal = causal_of(c)
    q, k, v, do = (tensors[n].transpose(1, 2).contiguous() for n in ("Q", "K", "V", "dO"))
    qf, kf, vf = (x[:1].float().requires_grad_() for x in (q, k, v))
    F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal).backward(do[:1].float())
    err = max(bench.rel_err(torch, tensors[n].transpose(1, 2)[:1], r.grad)
              for n, r in (("dQ_out", qf), ("dK", kf), ("dV", vf)))
    qh, kh, vh = (x.detach().requires_grad_() for x in (q, k, v))
    out = F.scaled_dot_product_attention(qh, kh, vh, is_causal=causal)
    base = lambda: torch.autograd.grad(out, (qh, kh, vh), do, retain_graph=True)  # noqa: E731
    b, h, s, d = q.shape
    flops = 10 * b * h * s * s * d * (0.5 if causal else 1.0)  # 2.5x the forward's
    return err, bench.median_ms(torch, backward, iters), bench.median_ms(torch, base, iters), "SDPA backward", \
        flops, None


def report_text(doc):
    lines = [f"# Attention experiment (issue 44): {doc['device']}", "",
             f"Driver {doc['driver']}, PyTorch {doc['torch']}; before: tlc {doc['compilers']['before']['commit']}, "
             f"after: tlc {doc['compilers']['after']['commit']}. Ratios: SDPA time / tlc time (above 1: tlc faster); "
             "after / before: the speed-up of this change. Relative error: max |tlc - fp32 reference| / max |ref|.",
             "", "| config | build | regs | spills | advisories | rel. error | tlc ms | TFLOP/s | GB/s | SDPA ms | "
             "SDPA / tlc | after / before |", "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: "
             "| ---: |"]
    for r in doc["rows"]:
        lines.append("| " + " | ".join(str(r.get(k, "")) for k in ("id", "build", "registers", "spills", "advisories",
                                                                   "error", "ms", "tflops", "gbs", "sdpa_ms",
                                                                   "sdpa_ratio", "speedup")) + " |")
    return "\n".join(lines) + "\n"


def run(args):
    import torch
    manifest = json.load(open(os.path.join(HERE, "experiment.json")))
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        sys.exit("experiment: needs a CUDA device of compute capability 9.0 (H100/H200): the kernels are sm_90a")
    out = os.path.abspath(args.out or HERE)
    named = configs.SETS[args.set] if args.set else configs.QUICK if args.quick else None
    only = set(args.only.split(",")) if args.only else set(named) if named else None
    manifest["kernels"] = [k for k in manifest["kernels"] if only is None or k["id"] in only]
    libs = build_all(manifest, out, args.jobs)
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    doc = {"device": torch.cuda.get_device_name(), "driver": driver, "torch": torch.__version__,
           "compilers": manifest["compilers"], "rows": []}
    failed = 0
    for k in manifest["kernels"]:
        ms = {}
        for label in LABELS:
            if label == "before" and k.get("after_only"):
                continue
            row = {"id": k["id"], "build": label}
            doc["rows"].append(row)
            lib, ptxas, log = libs.get((k["id"], label), (None, {}, "not prepared (tlc refused it)"))
            regs = [e for e in ptxas.values() if e["registers"] is not None]
            row["registers"] = "/".join(str(e["registers"]) for e in regs)
            row["spills"] = "/".join(str(e["spill_stores"]) for e in regs)
            row["advisories"] = " ".join(sorted({c for e in ptxas.values() for c in e["codes"]})) or "-"
            if not lib:
                row["error"] = "not built"
                failed += 1
                print(f"experiment: {k['id']} ({label}) not built:\n{log[-2000:]}", file=sys.stderr)
                continue
            try:
                kernel_manifest = json.load(open(os.path.join(HERE, k["builds"][label]["manifest"])))
                err, tl_ms, sdpa_ms, form, flops, nbytes = measure(torch, k, kernel_manifest, lib, args.iters)
            except Exception as x:  # one configuration's failure is a row of the report, not the end
                row["error"] = f"{type(x).__name__}: {x}"
                failed += 1
                continue
            ms[label] = tl_ms
            failed += err > TOLERANCE
            row.update(error=f"{err:.1e}{'' if err <= TOLERANCE else ' FAIL'}", ms=f"{tl_ms:.3f}",
                       tflops=f"{flops / tl_ms / 1e9:.0f}", gbs=f"{nbytes / tl_ms / 1e6:.0f}" if nbytes else "",
                       sdpa_ms=f"{sdpa_ms:.3f} ({form})", sdpa_ratio=f"{sdpa_ms / tl_ms:.2f}")
            print(" ".join(f"{key}={value}" for key, value in row.items()), flush=True)
        if len(ms) == 2:
            doc["rows"][-1]["speedup"] = f"{ms['before'] / ms['after']:.2f}"
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(report_text(doc))
    print(report_text(doc))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", required=True)
    p.add_argument("--tlc", default=os.path.join(tree_root(), "build", "tlc"))
    base = p.add_mutually_exclusive_group(required=True)
    base.add_argument("--baseline-tlc")
    base.add_argument("--baseline-rev")
    p.add_argument("--baseline-commit", help="with --baseline-tlc: the commit it was built from, for the report")
    r = sub.add_parser("run")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--set", choices=sorted(configs.SETS), help="a named group of configurations (configs.SETS)")
    r.add_argument("--only")
    r.add_argument("--out")
    r.add_argument("--iters", type=int, default=20)
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    args = parser.parse_args()
    return prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
