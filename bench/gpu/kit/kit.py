#!/usr/bin/env python3
"""The GPU kit's GPU side (scripts/gpu-kit.sh; docs/testing.md, "GPU kit"). Runs from the kit
folder that scripts/gpu-kit.sh prepare wrote; needs nvcc, and for `run` a CUDA GPU,
compute-sanitizer and PyTorch (Triton optional).

    kit.py build --arch sm_90a[,sm_80] [--jobs N]   build every executable and benchmark library
    kit.py run [--quick] [--phases tests,python,memcheck,racecheck,synccheck,bench,experiments] [--out DIR] [--jobs N]
    kit.py report PART.json... [--out DIR]           one report from runs of some phases each

`run` finds the device's architecture, builds for it, runs every test executable (the run
layer's drivers: random inputs, sizes on and off the tile, double-precision references), builds
the Python example for the device and runs it with PyTorch CUDA tensors (python_phase.py), runs
the executables again under compute-sanitizer (memcheck, racecheck, synccheck), runs the benchmarks
(bench.py) and writes report.md and report.json (into the kit, or --out), after each phase.
--quick (about 5 minutes on an H100) leaves out racecheck and synccheck and runs shorter
benchmarks. Where a machine allows only short commands, run the phases in separate commands
(each builds first; the build is incremental on the same machine) and merge with `report`.
`--phases experiments` alone builds and runs only the queue of prepared experiments
(experiments.py: tile and schedule variants against their baselines, each result checked first).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

KIT = os.path.dirname(os.path.abspath(__file__))
NVCC_FLAGS = ["-O2", "-std=c++17", "-lineinfo", "-w"]
# --werror (CI): tlc's kernels must build warning-free, as compile-samples and compile-corpus
# check for the other targets; those tests leave the sm_90a compile of these kernels to this build.
WERROR_FLAGS = ["-Xcompiler", "-Wall,-Werror", "-Werror", "all-warnings"]


def arch_number(arch):
    """sm_90a -> 90."""
    return int(re.match(r"sm_(\d+)", arch).group(1))


def target_arch(target):
    """tlc's target -> the least nvcc architecture its code needs."""
    return {"sm80": 80, "sm86": 86, "sm89": 89, "sm90": 90}[target]


def nvcc():
    found = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(found):
        sys.exit("kit: no nvcc on PATH or in /usr/local/cuda/bin")
    return found


def host_compiler():
    """The C++ compiler for the run layer's drivers (host code only): nvcc's default host compiler,
    or $CXX. Compiled through nvcc they took 4x as long (a device pass over every header)."""
    return os.environ.get("CXX") or "g++"


def cuda_include_dirs(nvcc_path):
    """Where cuda_runtime.h is for a host compiler: beside nvcc's bin/ (the toolkit's include/ or
    its targets/ folder); none when it is in the compiler's default path (Debian's toolkit)."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc_path)))
    found = [d for d in (os.path.join(root, "include"), os.path.join(root, "targets", "x86_64-linux", "include"))
             if os.path.exists(os.path.join(d, "cuda_runtime.h"))]
    return [x for d in found[:1] for x in ("-I", d)]


def sh(cmd, timeout=None, env=None):
    """(exit status or None on timeout, combined output); 127 when the program is missing."""
    if not shutil.which(cmd[0]):
        return 127, f"{cmd[0]}: not found"
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                           timeout=timeout, env=env)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out


def kernel_arch(kernel_target, arch):
    """The -arch a kernel is built with for a device arch: the device's, or (sm89 fp8 code for an
    sm_80 device) the kernel's own, which builds but cannot run there."""
    n = arch_number(arch)
    need = target_arch(kernel_target)
    if need <= n:
        return arch
    return "sm_90a" if need == 90 else f"sm_{need}"


KERNELS_PER_UNIT = 8


def kernel_units(kernels, edir, arch):
    """An executable's kernels, up to KERNELS_PER_UNIT to a translation unit of #includes, per
    -arch: [(unit.cu, arch)]. nvcc spent most of a small kernel's compile on what every file
    repeats (4x as long one by one); an error still names the kernel's own file. A unit file is
    rewritten only when its list changes, so an unchanged kit rebuilds nothing."""
    by_arch = {}
    for k in kernels:
        by_arch.setdefault(kernel_arch(k["target"], arch), []).append(os.path.join(KIT, k["cu"]))
    units = []
    os.makedirs(edir, exist_ok=True)
    for karch, files in sorted(by_arch.items()):
        for i in range(0, len(files), KERNELS_PER_UNIT):
            unit = os.path.join(edir, f"kernels_{karch}_{i // KERNELS_PER_UNIT}.cu")
            text = "".join(f'#include "{f}"\n' for f in files[i:i + KERNELS_PER_UNIT])
            if not os.path.exists(unit) or open(unit).read() != text:
                with open(unit, "w") as f:
                    f.write(text)
            units.append((unit, karch))
    return units


def runnable(exe, arch):
    """Why an executable cannot run on a device of this arch, or None."""
    n = arch_number(arch)
    for k in exe["kernels"]:
        need = target_arch(k["target"])
        if need > n or (need == 90 and arch != "sm_90a"):
            return f"{k['name']} needs sm_{need}{'a' if need == 90 else ''}"
    return None


def sampled_experiment_kernels(experiment):
    """One kernel of each source (and kernel name) of an experiment, and the recommender's pick:
    what CI's build checks of the experiments (the grids' other points are the same source with
    other -D values; the GPU run builds them all)."""
    seen, out = set(), []
    for k in experiment["kernels"]:
        key = (k["source"], k.get("kernel"))
        if k.get("pick") or key not in seen:
            out.append(k)
        seen.add(key)
    return out


def build(manifest, arches, jobs, log=print, own_flavour_only=False, werror=False, experiments_only=False,
          sample_experiments=False):
    """Builds every test executable and benchmark library for each arch (with own_flavour_only,
    only the executables of the flavour named for it: sm80 for sm_8x, sm90 for sm_90a; with
    werror, tlc's kernels with warnings as errors; with experiments_only, only the experiments'
    libraries; with sample_experiments, of each experiment only sampled_experiment_kernels);
    returns {(arch, name): path or None} and the failures [(what, output)]."""
    cc = nvcc()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
    failures, built = [], {}

    def fresh(out, *inputs):
        """Whether out was built after its inputs and the kit (a re-run after prepare rebuilds)."""
        return os.path.exists(out) and all(os.path.getmtime(out) > os.path.getmtime(i)
                                           for i in inputs + (os.path.join(KIT, "kit.json"),))

    def build_object(src, obj, command):
        """obj from src by command, unless obj is newer: obj, or (obj, the compiler's output)."""
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        if fresh(obj, src):
            return obj
        rc, out = sh(command)
        return obj if rc == 0 else (obj, out)

    def compile_one(src, obj, arch, extra=(), kernel=False):
        flags = [f for f in NVCC_FLAGS if f != "-w"] + WERROR_FLAGS if kernel and werror else NVCC_FLAGS
        return build_object(src, obj, [cc] + flags + [f"-arch={arch}", "-c", "-x", "cu", src, "-o", obj] + list(extra))

    def compile_driver(src, obj, extra):
        """A run-layer driver: host code that calls the launchers, built by the host compiler."""
        return build_object(src, obj, [host_compiler(), "-O2", "-std=c++17", "-w", *cuda_include_dirs(cc), "-c",
                                       "-x", "c++", src, "-o", obj] + list(extra))

    def link_library(src, lib, arch):
        """A benchmark kernel as a shared library for ctypes: (status, output)."""
        if fresh(lib, src):
            return 0, ""
        return sh([cc, "-O3", "-std=c++17", "-w", f"-arch={arch}", "-shared", "-Xcompiler", "-fPIC", src, "-o", lib])

    for arch in arches:
        bdir = os.path.join(KIT, "build", arch)
        managed = pool.submit(compile_one, os.path.join(KIT, "managed_new.cpp"), os.path.join(bdir, "managed_new.o"),
                              arch)
        jobs_of = {}
        for exe in ([] if experiments_only else manifest["executables"]):
            if exe["flavour"] == "sm90" and arch_number(arch) != 90:
                continue  # Hopper code: only for sm_90a
            if own_flavour_only and exe["flavour"] != ("sm90" if arch_number(arch) == 90 else "sm80"):
                continue
            edir = os.path.join(bdir, exe["name"])
            incs = [x for d in exe["include_dirs"] for x in ("-I", os.path.join(KIT, d))]
            futs = [pool.submit(compile_one, unit, unit[:-len(".cu")] + ".o", karch, incs, True)
                    for unit, karch in kernel_units(exe["kernels"], edir, arch)]
            futs += [pool.submit(compile_driver, os.path.join(KIT, d), os.path.join(edir, f"driver{i}.o"),
                                 incs + ["-DTLC_RUN_GPU", "-include", os.path.join(KIT, "kit_types.h")])
                     for i, d in enumerate(exe["drivers"])]
            jobs_of[exe["name"]] = (edir, futs)
        libraries = [] if experiments_only else \
            [("bench:", b) for b in manifest["bench"]] + \
            [("bench:", dict(c, id=f"recommend_rank{c['rank']}", flavour="sm90", target="sm90"))
             for c in (manifest["recommend"] or {}).get("candidates", [])]
        # The experiments (experiments.py): Hopper kernels.
        libraries += [("experiment:", dict(k, flavour="sm90")) for e in manifest.get("experiments", [])
                      for k in (sampled_experiment_kernels(e) if sample_experiments else e["kernels"])]
        for prefix, bench in libraries:
            if (bench["flavour"] == "sm90") != (arch_number(arch) == 90):
                continue
            lib = os.path.join(bdir, prefix[:-1], "lib" + bench["id"] + ".so")
            os.makedirs(os.path.dirname(lib), exist_ok=True)
            jobs_of[prefix + bench["id"]] = (lib, [pool.submit(
                link_library, os.path.join(KIT, bench["cu"]), lib, kernel_arch(bench["target"], arch))])
        m = managed.result()
        if isinstance(m, tuple):
            failures.append((f"{arch} managed_new.cpp", m[1]))
            continue
        for name, (path, futs) in jobs_of.items():
            results = [f.result() for f in futs]
            if name.startswith(("bench:", "experiment:")):
                rc, out = results[0]
                built[(arch, name)] = path if rc == 0 else None
                if rc != 0:
                    failures.append((f"{arch} {name}", out))
                continue
            bad = [r for r in results if isinstance(r, tuple)]
            if bad:
                failures += [(f"{arch} {name}: {os.path.basename(o)}", out) for o, out in bad]
                built[(arch, name)] = None
                continue
            exe_path = os.path.join(path, name)
            rc, out = sh([cc, f"-arch={arch}", "-o", exe_path, m] + results)
            built[(arch, name)] = exe_path if rc == 0 else None
            if rc != 0:
                failures.append((f"{arch} {name}: link", out))
        log(f"kit: built for {arch}: {sum(1 for (a, _), p in built.items() if a == arch and p)} of "
            f"{sum(1 for (a, _) in built if a == arch)} executables and libraries")
    return built, failures


def device():
    rc, out = sh(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version,memory.total", "--format=csv,noheader"])
    if rc != 0 or not out.strip():
        sys.exit(f"kit: nvidia-smi found no GPU:\n{out}")
    name, cap, driver, mem = [x.strip() for x in out.strip().splitlines()[0].split(",")]
    major, minor = cap.split(".")
    arch = f"sm_{major}{minor}" + ("a" if (major, minor) == ("9", "0") else "")
    return {"name": name, "compute_capability": cap, "driver": driver, "memory": mem, "arch": arch}


PHASES = ["tests", "python", "memcheck", "racecheck", "synccheck", "bench", "experiments"]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$", re.M)


def run_tests(manifest, built, arch, log):
    results = []
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
    for exe in manifest["executables"]:
        why = runnable(exe, arch)
        path = built.get((arch, exe["name"]))
        if why or not path:
            results.append({"name": exe["name"], "status": "not run", "why": why or "did not build"})
            continue
        t0 = time.time()
        rc, out = sh([path], timeout=900, env=env)
        m = SUMMARY.search(out)
        fails = [line for line in out.splitlines() if line.startswith("FAIL")]
        status = "pass" if rc == 0 and m and m.group(2) == "0" else ("timeout" if rc is None else "fail")
        results.append({"name": exe["name"], "status": status, "exit": rc, "passed": int(m.group(1)) if m else 0,
                        "failed": int(m.group(2)) if m else None, "seconds": round(time.time() - t0, 1),
                        "failures": fails[:50], "tail": out[-4000:] if status != "pass" else ""})
        log(f"kit: {exe['name']}: {status} ({results[-1]['passed']} checks, {results[-1]['seconds']} s)")
    return results


def sanitizer_path():
    return shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"


def sanitizer_findings(out):
    """What compute-sanitizer found, from its last line; None when it printed none. memcheck and
    synccheck end with `ERROR SUMMARY: N errors`; racecheck with `RACECHECK SUMMARY: N hazards
    displayed (E errors, W warnings)`, where a warning is a hazard too."""
    race = re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)", out)
    if race:
        return int(race.group(1)) + int(race.group(2))
    errors = re.search(r"ERROR SUMMARY: (\d+) errors?", out)
    return int(errors.group(1)) if errors else None


def run_sanitizer(manifest, built, arch, tools, log, timeout):
    cs = sanitizer_path()
    results = []
    if not os.path.exists(cs):
        return [{"tool": t, "name": "*", "status": "not run", "why": "no compute-sanitizer"} for t in tools]
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
    for tool in tools:
        for exe in manifest["executables"]:
            path = built.get((arch, exe["name"]))
            if runnable(exe, arch) or not path:
                continue
            t0 = time.time()
            rc, out = sh([cs, f"--tool={tool}", "--error-exitcode=99", "--print-limit=20", path], timeout=timeout,
                         env=env)
            n = sanitizer_findings(out)
            status = "clean" if rc == 0 and n == 0 else ("timeout" if rc is None else "errors")
            results.append({"tool": tool, "name": exe["name"], "status": status, "errors": n, "exit": rc,
                            "seconds": round(time.time() - t0, 1), "tail": out[-4000:] if status != "clean" else ""})
            log(f"kit: {tool} {exe['name']}: {status} ({results[-1]['seconds']} s)")
    return results


def merge_reports(parts):
    """One report from the reports of runs of some phases each (the device tool's 10-minute
    commands): the first one's device and kit, every part's results in order."""
    out = dict(parts[0], build_failures=[], tests=[], python=[], sanitizer=[], bench=[], minutes=0.0, phases=[],
               experiment_failures=0)
    for p in parts:
        if p["device"]["name"] != out["device"]["name"]:
            raise SystemExit(f"kit: reports from two devices: {out['device']['name']} and {p['device']['name']}")
        for key in ("build_failures", "tests", "python", "sanitizer", "bench", "phases"):
            out[key] = out[key] + p.get(key, [])
        out["minutes"] += p["minutes"]
        out["experiment_failures"] += p.get("experiment_failures", 0)
    return out


def write_report(report, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    d = report["device"]
    lines = [f"# tlc GPU kit report", "",
             f"Device: {d['name']} (compute capability {d['compute_capability']}, driver {d['driver']}, "
             f"{d['memory']}), built for {d['arch']}; {report['kit']['tlc_version']} "
             f"(commit {report['kit']['commit']}, kit prepared {report['kit']['prepared']}); "
             f"run {report['started']}, {report['minutes']:.1f} minutes{', --quick' if report['quick'] else ''} "
             f"({', '.join(report.get('phases', [])) or 'no phases'}).", ""]
    if report["build_failures"]:
        lines += ["## Build failures", ""]
        for what, out in report["build_failures"]:
            lines += [f"- {what}", "", "```", out[-2000:], "```", ""]
    if report["tests"]:
        lines += ["## Correctness (random inputs against double-precision references)", "",
                  "| executable | status | checks passed | failed | seconds |", "|---|---|---:|---:|---:|"]
    for r in report["tests"]:
        lines.append(f"| {r['name']} | {r['status']}{' (' + r['why'] + ')' if r.get('why') else ''} | "
                     f"{r.get('passed', '')} | {r.get('failed', '')} | {r.get('seconds', '')} |")
    for r in report["tests"]:
        if r["status"] in ("fail", "timeout"):
            lines += ["", f"### {r['name']}: {r['status']}", "", "```"] + r["failures"][:20] + [r["tail"][-2000:], "```"]
    if report.get("python"):
        lines += ["", "## Python (examples/python built for the device, PyTorch CUDA tensors)", "",
                  "| script | status | checks passed | failed | seconds |", "|---|---|---:|---:|---:|"]
        for r in report["python"]:
            lines.append(f"| {r['name']} | {r['status']}{' (' + r['why'] + ')' if r.get('why') else ''} | "
                         f"{r.get('passed', '')} | {r.get('failed', '')} | {r.get('seconds', '')} |")
        for r in report["python"]:
            if r["status"] in ("fail", "timeout"):
                lines += ["", f"### {r['name']}: {r['status']}", "", "```"] + r["failures"][:20] + \
                         [r["tail"][-3000:], "```"]
    if report["sanitizer"]:
        lines += ["", "## compute-sanitizer", "", "| tool | executable | status | errors | seconds |",
                  "|---|---|---|---:|---:|"]
        for r in report["sanitizer"]:
            lines.append(f"| {r['tool']} | {r['name']} | {r['status']}{' (' + r['why'] + ')' if r.get('why') else ''} "
                         f"| {r.get('errors', '')} | {r.get('seconds', '')} |")
        for r in report["sanitizer"]:
            if r["status"] in ("errors", "timeout"):
                lines += ["", f"### {r['tool']} {r['name']}", "", "```", r["tail"][-3000:], "```"]
    for section in report["bench"]:
        lines += ["", f"## {section['title']}", ""] + ([section["note"], ""] if section.get("note") else [])
        lines.append("| " + " | ".join(section["columns"]) + " |")
        lines.append("|" + "|".join("---" for _ in section["columns"]) + "|")
        for row in section["rows"]:
            lines.append("| " + " | ".join(str(x) for x in row) + " |")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--arch", required=True, help="nvcc architectures, comma-separated: sm_80,sm_90a")
    b.add_argument("--jobs", type=int, default=os.cpu_count())
    b.add_argument("--own-flavour-only", action="store_true",
                   help="each arch builds only its own flavour's executables (CI: the sm80 ones for sm_80, the sm90 "
                        "ones for sm_90a), not the sm80 ones again for sm_90a as a Hopper run does")
    b.add_argument("--werror", action="store_true",
                   help="build tlc's kernels with all warnings as errors (CI: this build is their sm_90a compile check)")
    b.add_argument("--sample-experiments", action="store_true",
                   help="of each experiment build one kernel per source and the recommender's pick (CI: the grids' "
                        "other points are the same code with other -D values)")
    r = sub.add_parser("run")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--jobs", type=int, default=os.cpu_count())
    r.add_argument("--phases", default=None,
                   help=f"comma-separated, in order: {','.join(PHASES)} (default: all; --quick: all but racecheck "
                        "and synccheck)")
    r.add_argument("--out", default=KIT, help="where report.md and report.json go (default: the kit)")
    m = sub.add_parser("report")
    m.add_argument("parts", nargs="+", help="report.json files of runs of some phases each")
    m.add_argument("--out", default=KIT)
    args = ap.parse_args()
    t0 = time.time()
    log = lambda s: print(f"[{time.time() - t0:6.0f} s] {s}", flush=True)
    if args.cmd == "report":
        report = merge_reports([json.load(open(p)) for p in args.parts])
        write_report(report, args.out)
        print(f"kit: {os.path.join(args.out, 'report.md')} from {len(args.parts)} parts")
        return
    manifest = json.load(open(os.path.join(KIT, "kit.json")))
    if args.cmd == "build":
        built, failures = build(manifest, args.arch.split(","), args.jobs, log, args.own_flavour_only, args.werror,
                                sample_experiments=args.sample_experiments)
        for what, out in failures:
            print(f"kit: FAILED {what}\n{out[-3000:]}")
        print(f"kit: {len(failures)} build failures")
        sys.exit(1 if failures else 0)

    phases = args.phases.split(",") if args.phases else \
        [p for p in PHASES if not (args.quick and p in ("racecheck", "synccheck"))]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        sys.exit(f"kit: unknown phase {unknown[0]} (phases: {', '.join(PHASES)})")
    dev = device()
    log(f"kit: {dev['name']}, compute capability {dev['compute_capability']}: building for {dev['arch']}")
    # The python phase builds its own module: alone, it needs none of the executables.
    built, failures = build(manifest, [dev["arch"]], args.jobs, log, experiments_only=phases == ["experiments"]) \
        if phases != ["python"] else ({}, [])
    report = {"device": dev, "kit": {k: manifest[k] for k in ("tlc_version", "commit", "prepared")},
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "quick": args.quick,
              "phases": phases, "build_failures": failures, "tests": [], "python": [], "sanitizer": [], "bench": []}
    for phase in phases:
        if phase == "tests":
            report["tests"] = run_tests(manifest, built, dev["arch"], log)
        elif phase == "python":
            import python_phase
            report["python"], python_failures = python_phase.run(KIT, manifest, dev["arch"], nvcc(), log)
            report["build_failures"] += python_failures
        elif phase == "bench":
            import bench
            report["bench"] += bench.run_all(manifest, KIT, built, dev["arch"], args.quick, log)
        elif phase == "experiments":
            import experiments
            sections, wrong, sweeps = experiments.run_all(manifest, built, dev["arch"], args.quick, log)
            report["bench"] += sections
            report["experiment_failures"] = wrong
            if sweeps:  # for bench/data (docs/recommend.md, "Measured sweeps")
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, "sweeps.json"), "w") as f:
                    json.dump({"machine": dev["name"], "date": time.strftime("%Y-%m-%d"),
                               "tlc": manifest["commit"], "target": "sm90",
                               "how": "the GPU kit's experiments (bench/gpu/kit/experiments.py): each result "
                                      "checked against a float64 reference, then CUDA-event medians",
                               "sweeps": sweeps}, f, indent=1)
        else:
            report["sanitizer"] += run_sanitizer(manifest, built, dev["arch"], [phase], log,
                                                 120 if args.quick else 600)
        report["minutes"] = (time.time() - t0) / 60
        write_report(report, args.out)  # after each phase: a run cut short keeps what it did
    bad = [t for t in report["tests"] + report["python"] if t["status"] in ("fail", "timeout")] + \
          [s for s in report["sanitizer"] if s["status"] in ("errors", "timeout")]
    wrong = report.get("experiment_failures", 0)
    log(f"kit: report.md and report.json in {args.out}; {len(report['build_failures'])} build failures, "
        f"{len(bad)} failing runs, {wrong} experiment results wrong or not run")
    sys.exit(1 if report["build_failures"] or bad or wrong else 0)


if __name__ == "__main__":
    main()
