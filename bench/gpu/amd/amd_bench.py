#!/usr/bin/env python3
"""The AMD side of the GPU benchmark: tlc's HIP output of the benchmark kernels against
PyTorch on ROCm (torch.matmul: rocBLAS / hipBLASLt; SDPA; a device copy for the memory-bound
kernels), measured side by side in one run, each kernel checked against a higher-precision
reference on random inputs. The measuring code is the GPU kit's (bench/gpu/kit/bench.py): PyTorch
on ROCm answers to torch.cuda, and tlc's HIP launchers have the CUDA ones' extern "C" form.

    amd_bench.py prepare --arch gfx942 --out DIR [--tlc build/tlc]   (anywhere: needs only tlc)
    amd_bench.py build DIR [--offload-arch gfx942] [-j N]              (needs hipcc)
    amd_bench.py run DIR [--quick]                                     (needs an AMD GPU, PyTorch for ROCm)

prepare writes DIR/amd_bench.json, the kernels' .hip sources and headers, and the scripts;
build makes one shared library per kernel (hipcc -O3 -fPIC -shared); run prints the tables as
Markdown for bench/RESULTS.md. tlc's targets are gfx90a (MI200) and gfx942 (MI300); Debian's
clang knows gfx942 only as gfx940, which `build --offload-arch gfx940` uses for a compile check.
fp8 is left out: PyTorch's fp8 matmul on MI300 takes the FNUZ types, tlc's kernels OCP's.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
KIT = os.path.join(ROOT, "bench", "gpu", "kit")


def kit_prepare():
    """The GPU kit's prepare.py (only in the source tree: prepare runs there, build and run do not)."""
    sys.path.insert(0, KIT)
    import prepare
    return prepare


def kernels(arch):
    """(id, sample, target, defines, kind): the GPU kit's benchmark kernels for the arch, fp8
    left out (above)."""
    return [k for k in kit_prepare().bench_kernels(arch) if k[4] != "gemm" or "fp8" not in k[1]]


def prepare(args):
    out = os.path.abspath(args.out)
    tmp = out + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "gen"))
    manifest = {"arch": args.arch, "tlc_version": subprocess.run([args.tlc, "--version"], capture_output=True,
                                                                  text=True, check=True).stdout.strip(),
                "bench": []}
    try:
        for bid, sample, target, defines, kind in kernels(args.arch):
            hip = os.path.join("gen", bid + ".hip")
            try:
                kit_prepare().emit(args.tlc, os.path.join(ROOT, sample), target, [x for d in defines for x in ("-D", d)],
                                 os.path.join(tmp, hip), kernel="layernorm_fwd" if kind == "layernorm" else None)
            except RuntimeError as e:
                print(f"amd_bench: tlc refused {bid} for {args.arch}, left out:\n{e}", file=sys.stderr)
                continue
            manifest["bench"].append({"id": bid, "sample": sample, "defines": list(defines), "kind": kind,
                                      "source": hip, "flavour": args.arch})
        for name in ("bench.py",):
            shutil.copy2(os.path.join(KIT, name), os.path.join(tmp, name))
        shutil.copy2(os.path.abspath(__file__), os.path.join(tmp, "amd_bench.py"))
        with open(os.path.join(tmp, "amd_bench.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
    except Exception:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"amd_bench: {out}: {len(manifest['bench'])} kernels for {args.arch}")


def build(args):
    folder = os.path.abspath(args.dir)
    manifest = json.load(open(os.path.join(folder, "amd_bench.json")))
    arch = args.offload_arch or manifest["arch"]
    hipcc = os.environ.get("HIPCC", "hipcc")
    os.makedirs(os.path.join(folder, "lib", arch), exist_ok=True)

    def one(entry):
        lib = os.path.join(folder, "lib", arch, f"lib{entry['id']}.so")
        cmd = [hipcc, "-std=c++17", "-O3", "-fPIC", "-shared", f"--offload-arch={arch}", "-Wall", "-Werror",
               "-Wno-unused-command-line-argument", os.path.join(folder, entry["source"]), "-o", lib]
        done = subprocess.run(cmd, capture_output=True, text=True)
        return entry["id"], done.returncode == 0, done.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for bid, ok, err in pool.map(one, manifest["bench"]):
            print(f"{'ok  ' if ok else 'FAIL'} {bid} for {arch}" + ("" if ok else f":\n{err}"))
            failed += not ok
    sys.exit(1 if failed else 0)


def markdown(section):
    lines = [f"### {section['title']}", "", section.get("note", ""), ""]
    if section["columns"]:
        lines.append("| " + " | ".join(section["columns"]) + " |")
        lines.append("|" + " --- |" * len(section["columns"]))
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in section["rows"]]
    return "\n".join(lines) + "\n"


def run(args):
    folder = os.path.abspath(args.dir)
    sys.path.insert(0, folder)
    import bench
    import torch

    manifest = json.load(open(os.path.join(folder, "amd_bench.json")))
    if not torch.cuda.is_available() or not getattr(torch.version, "hip", None):
        sys.exit("amd_bench: needs PyTorch for ROCm and an AMD GPU")
    arch = manifest["arch"]
    device = torch.cuda.get_device_properties(0)
    if not getattr(device, "gcnArchName", arch).startswith(arch):
        print(f"amd_bench: note: the kernels are for {arch}, the device is {device.gcnArchName}", file=sys.stderr)
    iters = 10 if args.quick else 30

    def lib_of(entry):
        lib = os.path.join(folder, "lib", arch, f"lib{entry['id']}.so")
        return lib if os.path.exists(lib) else None

    by_kind = lambda *kinds: [e for e in manifest["bench"] if e["kind"] in kinds]
    print(f"## tlc on {device.name} ({arch}), PyTorch {torch.__version__} (HIP {torch.version.hip})\n")
    for title, fn in [("gemm", lambda: bench.bench_gemm(torch, by_kind("gemm"), lib_of, args.quick, iters)),
                      ("attention", lambda: bench.bench_attention(torch, by_kind("attention"), lib_of, args.quick,
                                                                  iters, print)),
                      ("memory", lambda: bench.bench_memory(torch, by_kind("softmax", "rmsnorm", "layernorm"), lib_of,
                                                            args.quick, iters))]:
        try:
            print(markdown(fn()))
        except Exception as x:  # one broken section must not lose the others
            print(f"### {title}\n\nfailed: {type(x).__name__}: {x}\n")
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--arch", choices=["gfx90a", "gfx942"], required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tlc", default=os.path.join(ROOT, "build", "tlc"))
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--offload-arch", default=None, help="default: the prepared arch")
    b.add_argument("-j", type=int, default=os.cpu_count() or 2)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    {"prepare": prepare, "build": build, "run": run}[args.command](args)


if __name__ == "__main__":
    main()
