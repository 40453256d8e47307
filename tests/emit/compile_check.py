#!/usr/bin/env python3
"""Compile checks for tlc's emitted code; no GPU needed.

For every directory of emitted files (named after its target: sm80, sm86, sm89, sm90, gfx90a,
gfx942, cpu), this script
  * compiles each kernel source warning-free: nvcc -std=c++17 -arch=sm_XX (sm_90a for sm90)
    -Xcompiler -Wall,-Werror -Werror all-warnings; hipcc -std=c++17 --offload-arch=gfx90a or
    gfx940 (for gfx942, which Debian's LLVM does not know) -Wall -Werror; g++ -std=c++17
    -fopenmp -Wall -Wextra -Werror -O2; sm86 and sm89 code that is sm80's code (comment lines
    aside) only once, for sm_80;
  * compiles, for each launcher header, a host program built by g++ alone (CUDA: with
    -I/usr/local/cuda/include) that includes the header and calls both launchers (the typed one
    and the extern "C" twin; never run), and links it with the kernel object, which checks that
    header and source agree.

With --unit-tests PATH it first asks the unit-test binary to write the emitter's hand-built
sample kernels (tests/unit/test_emit_kernels.h) for every target, checks those, and then
  * builds tests/emit/cpu_run.cpp against the cpu samples and runs it (results compared with
    plain C++ references), once plain and once with -fsanitize=address,undefined;
  * compiles every runtime header on its own, one translation unit each (tl_cuda*.h with nvcc,
    tl_hip*.h with hipcc, tl_gpu*.h with both, tl_cpu*.h with g++, tl_common.h and tl_types.h
    with all three, the host-only tl_cuda_tma_host.h with g++ too: runtime_compilers), and runs
    tests/emit/check_types.cpp, which compares tl_types.h's
    f16/bf16/fp8 conversions with the CUDA toolkit's host conversions.

With --tlc PATH and --tl FILE_OR_DIR (repeatable), it first runs tlc on those .tl files for
every target (or --targets) and checks the output the same way. A .tl file may name targets it
is not meant for in a line "// compile-check: not TARGET..." (fp8 gemm on targets without fp8
matrix instructions, which tlc rejects); for those, tlc must refuse the file with a located
error (exit 1, `FILE:LINE:COL: error:`, no internal error, no output file), which is checked.
A line "// corpus-variant: NAME -D x=y ..." (tests/corpus/) checks the file once more with those
flags, as NAME.

Missing tools are reported and skipped (exit 0), unless --require-all.

Examples:
  tests/emit/compile_check.py --unit-tests build/tests/tlc_unit_tests
  tests/emit/compile_check.py --tlc build/tlc --tl samples/
  tests/emit/compile_check.py out/sm90 out/cpu          # directories of tlc output
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RUNTIME = ROOT / "src" / "emit" / "runtime"

NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
HIPCC = os.environ.get("HIPCC", "hipcc")
CXX = os.environ.get("CXX_FOR_EMIT_TESTS", "g++")

CUDA_ARCH = {"sm80": "sm_80", "sm86": "sm_86", "sm89": "sm_89", "sm90": "sm_90a"}
# Compute capabilities 8.6 and 8.9 add to 8.0's instructions and take away none, so a kernel whose
# code for sm86 or sm89 is its sm80 code (comment lines aside) is compiled once, for sm_80.
CUDA_FAMILY = {"sm80": "sm8x", "sm86": "sm8x", "sm89": "sm8x", "sm90": "sm90"}
HIP_ARCH = {"gfx90a": "gfx90a", "gfx942": "gfx940"}
# CDNA2 and CDNA3 differ (MFMA forms), so code emitted the same for both is compiled once with
# both --offload-arch flags: one host compile and one hipcc start instead of two.
HIP_FAMILY = {"gfx90a": "cdna", "gfx942": "cdna"}
FAMILY = {**CUDA_FAMILY, **HIP_FAMILY}
SAMPLE_KERNELS = ["vector_add", "row_sum", "half_scale", "big_transpose", "mixed_types"]
# The cpu targets and the flags their output requires (cpu_isa.compile_flags of the profiles).
CPU_FLAGS = {"cpu": [], "cpu-avx2": ["-march=x86-64-v3"], "cpu-avx512": ["-march=x86-64-v4"],
             "cpu-amx": ["-march=sapphirerapids"]}
ALL_TARGETS = ["sm80", "sm86", "sm89", "sm90", "gfx90a", "gfx942", *CPU_FLAGS]
EXTENSION = {**{t: ".cu" for t in CUDA_ARCH}, **{t: ".hip" for t in HIP_ARCH}, **{t: ".cpp" for t in CPU_FLAGS}}


def excluded_targets(tl_file: Path):
    """The targets a .tl file's "// compile-check: not ..." line leaves out."""
    m = re.search(r"^// compile-check: not ([\w ]+)$", tl_file.read_text(), re.M)
    return set(m.group(1).split()) if m else set()


def variants(tl_file: Path):
    """(name, tlc flags) of a .tl file's "// corpus-variant: NAME -D x=y ..." lines: the file
    compiled again with other compile-time parameters (tests/run/CMakeLists.txt)."""
    out = []
    for m in re.finditer(r"^// corpus-variant: *(\S+)(.*)$", tl_file.read_text(), re.M):
        out.append((m.group(1), m.group(2).split()))
    return out


def have(tool):
    return shutil.which(tool) is not None or Path(tool).is_file()


class Checker:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.skipped = set()
        self.passed = 0
        self.includes = [flag for d in getattr(args, "include_dir", []) for flag in ("-I", str(d.resolve()))]
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
        self.compiled_code = {}  # (family, code without comment lines) -> "target/file" first compiled
        self.seconds = defaultdict(lambda: [0.0, 0])  # step kind -> [seconds, count], for the summary
        self.seconds_lock = threading.Lock()  # run() is called from the pool's threads
        self.dirs = set()  # the target folders this run checks (later_hip_twins looks ahead)
        self.tl_source = {}  # emitted kernel source -> the .tl file tlc made it from (--tlc runs)
        self.units = {}  # names of compile_units' jobs -> their sources, and the compiler's output when one fails
        self.kit_built = set()  # (target, .tl file): kernels the GPU kit's CI build compiles (--compiled-by-kit)

    def compiled_before(self, target, src: Path, header: Path):
        """Where the same code (source and launcher header, comment lines aside) was compiled for
        an earlier target of the same family, or None (and it is remembered as compiled here)."""
        key = (FAMILY[target], code_text(src, header))
        if key in self.compiled_code:
            return self.compiled_code[key]
        self.compiled_code[key] = f"{target}/{src.name}"
        return None

    def run(self, name, cmd, cwd=None, env=None):
        """Runs one command; output is shown only when it fails (or when it warns)."""
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with self.seconds_lock:
            spent = self.seconds[step_kind(name)]
            spent[0] += time.monotonic() - start
            spent[1] += 1
        # hipcc's rocm_agent_enumerator prints a traceback on machines without a GPU; not ours.
        out = "\n".join(line for line in proc.stdout.splitlines() if not noise(line))
        if proc.returncode != 0:
            if name in self.units:  # compile_alone reports its kernels instead
                self.units[name]["output"] = f"  $ {' '.join(map(str, cmd))}\n{indent(out)}"
                return False
            self.failures.append(name)
            print(f"FAIL {name}\n  $ {' '.join(map(str, cmd))}\n{indent(out)}", flush=True)
            return False
        self.passed += 1
        if self.args.verbose:
            print(f"ok   {name}", flush=True)
        return True

    def refused(self, name, cmd):
        """Runs tlc where a .tl file's compile-check line says the target cannot take it: tlc must
        refuse it cleanly (exit 1, a `FILE:LINE:COL: error:` diagnostic, no internal error) and
        write no output."""
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        located = re.search(r"^\S+\.tl:\d+:\d+: error: ", proc.stdout, re.M)
        out = Path(cmd[cmd.index("-o") + 1])
        if proc.returncode != 1 or not located or "internal error" in proc.stdout or out.exists():
            self.failures.append(name)
            print(f"FAIL {name}: expected a located error (exit 1, no output file)\n  $ {' '.join(map(str, cmd))}\n"
                  f"{indent(proc.stdout)}\n  | exit code {proc.returncode}", flush=True)
            return False
        self.passed += 1
        if self.args.verbose:
            print(f"ok   {name}\n{indent(proc.stdout)}", flush=True)
        return True

    def skip(self, what):
        if what not in self.skipped:
            self.skipped.add(what)
            print(f"skip {what}", flush=True)

    def parallel(self, jobs):
        """jobs: (name, cmd, cwd) triples; returns {name: ok}."""
        futures = {self.pool.submit(self.run, name, cmd, cwd): name for name, cmd, cwd in jobs}
        return {futures[f]: f.result() for f in concurrent.futures.as_completed(futures)}


def code_text(src: Path, header: Path):
    """A kernel source and its launcher header without comment lines: what decides whether two
    targets' outputs are the same code."""
    code = "".join(p.read_text() for p in (src, header) if p.exists())
    return "\n".join(l for l in code.splitlines() if not l.lstrip().startswith("//"))


def later_hip_twins(ck: Checker, target, directory: Path, src: Path):
    """The offload archs of later HIP targets (checked in this run) whose output for this kernel
    is the same code: compiled together with this one, and skipped there (compiled_before)."""
    twins = []
    for other in ALL_TARGETS[ALL_TARGETS.index(target) + 1:]:
        twin = directory.parent / other / src.name
        if (other in HIP_FAMILY and HIP_FAMILY[other] == HIP_FAMILY[target] and directory.parent / other in ck.dirs
                and twin.exists()
                and code_text(twin, twin.with_suffix(".h")) == code_text(src, src.with_suffix(".h"))):
            twins.append(HIP_ARCH[other])
    return twins


# nvcc and hipcc spend most of a small kernel's compile on what every file repeats (the runtime
# headers, host and device passes, hipcc's device libraries): kernels are compiled a few to a
# translation unit, 4x faster on the GPU targets (g++ repeats less: the system headers). The
# runtime sections in emitted files are guarded, their includes and the cpu targets' `#pragma GCC
# target` region come apart, so only names two kernels both define keep them apart; a unit the
# compiler rejects is compiled file by file, so every error is still reported against its own
# kernel.
UNITY_BATCH = 8


# A launcher declaration in a header (its parameters in group 3) and its C entry point.
LAUNCHER = re.compile(r"^(cudaError_t|hipError_t|int|size_t) (\w+)\(([^;]*)\);", re.M | re.S)
C_ENTRY = re.compile(r'^extern "C" (?:int|size_t) (\w+)\(([^;]*)\);', re.M | re.S)


def defined_names(src: Path, header: Path):
    """The names a kernel file defines outside the runtime's guarded sections: its launchers, their
    C entry points and its __global__ functions. Two files that share one need separate units."""
    text = (header.read_text() if header.exists() else "") + src.read_text()
    names = {m.group(2) for m in LAUNCHER.finditer(text)} | {m.group(1) for m in C_ENTRY.finditer(text)}
    names |= set(re.findall(r"__global__ void (?:__launch_bounds__\([^)]*\) )?(\w+)\(", text))
    return names


def unity_batches(sources, names_of, workers):
    """sources in batches of at most UNITY_BATCH files with no name defined twice in one, at least
    `workers` of them (so every worker compiles), in the sources' order."""
    count = max(min(workers, len(sources)), -(-len(sources) // UNITY_BATCH))
    batches = [([], set()) for _ in range(count)]
    for src in sources:
        names = names_of(src)
        free = [b for b in batches if len(b[0]) < UNITY_BATCH and not (b[1] & names)]
        if not free:
            batches.append(([], set()))
            free = [batches[-1]]
        files, taken = min(free, key=lambda b: len(b[0]))
        files.append(src)
        taken |= names
    return [files for files, _ in batches if files]


def step_kind(name):
    """"sm90/gemm.cu" -> "sm90 kernels", "sm90/host program with gemm.h" -> "sm90 host programs",
    "tlc gemm.tl --target=sm90" -> "tlc runs": how the summary groups the steps' times."""
    if name.startswith("tlc "):
        return "tlc runs"
    target, _, what = name.partition("/")
    if not what:
        return name.split(":")[0]
    return f"{target} " + ("links" if what.startswith("link ") else "host programs" if what.startswith("host ") else "kernels")


def noise(line):
    return ("rocm_agent_enumerator" in line or line.startswith("Traceback") or line.startswith("  File ")
            or "target_list = " in line or line.strip() in ("main()", "^^^^^^", "^^^^^^^^^^^^^^^"))


def indent(text):
    return "\n".join("  | " + line for line in text.splitlines()[-60:])


# ---- host programs that include a launcher header ------------------------------------------

def parse_params(text):
    """Splits a parameter list at top-level commas."""
    params, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        params.append(cur.strip())
    return params


def host_program(header: Path):
    """A main() that includes the header and calls every launcher it declares (not executed)."""
    text = header.read_text()
    flat = re.sub(r"//[^\n]*", "", text)
    # The launchers' namespace is the last one the header opens (runtime sections come first).
    namespaces = re.findall(r"^namespace ([\w:]+) \{", flat, re.M)
    prefix = namespaces[-1] + "::" if namespaces and namespaces[-1] != "tl" else ""
    calls = []
    # size_t: NAME_workspace_size of a kernel with several grids or global scratch.
    for m in LAUNCHER.finditer(flat):
        params = [p for p in parse_params(m.group(3)) if "= nullptr" not in p]
        calls.append(f"        status += static_cast<int>({prefix}{m.group(2)}({', '.join('{}' for _ in params)}));")
    for m in C_ENTRY.finditer(flat):
        params = parse_params(m.group(2))
        calls.append(f"        status += static_cast<int>({m.group(1)}({', '.join('{}' for _ in params)}));")
    if not calls:
        return None
    return (f'// Generated by compile_check.py: {header.name} in a host program.\n'
            f'#include "{header.name}"\n\n'
            'int main(int argc, char**) {\n'
            '    int status = 0;\n'
            '    if (argc > 1000) {  // never true: the calls only have to compile and link\n'
            + "\n".join(calls) + "\n"
            '    }\n'
            '    return status;\n'
            '}\n')


# ---- per-target checks ------------------------------------------------------------------------

def check_directory(ck: Checker, directory: Path, work: Path):
    target = directory.name
    sources = sorted(p for p in directory.iterdir() if p.suffix in (".cu", ".hip", ".cpp"))
    headers = sorted(p for p in directory.iterdir() if p.suffix == ".h")
    out = work / target
    out.mkdir(parents=True, exist_ok=True)

    if target in CUDA_ARCH:
        if not have(NVCC):
            return ck.skip(f"CUDA checks ({NVCC} not found)")
        compile_src = lambda src, obj: [NVCC, "-std=c++17", f"-arch={CUDA_ARCH[target]}", "-Xcompiler", "-Wall,-Werror",
                                        "-Werror", "all-warnings", "-I", str(directory), *ck.includes, "-c", str(src), "-o", str(obj)]
        host_flags = ["-I", str(CUDA_HOME / "include")]
        link = lambda objs, exe: [CXX, *map(str, objs), "-L", str(CUDA_HOME / "lib64"), "-lcudart", "-o", str(exe)]
    elif target in HIP_ARCH:
        if not have(HIPCC):
            return ck.skip("HIP checks (hipcc not found)")
        compile_src = lambda src, obj: [HIPCC, "-std=c++17", f"--offload-arch={HIP_ARCH[target]}",
                                        *(f"--offload-arch={a}" for a in later_hip_twins(ck, target, directory, src)),
                                        "-Wall", "-Werror", "-I", str(directory), *ck.includes, "-c", str(src), "-o", str(obj)]
        host_flags = []
        link = lambda objs, exe: [HIPCC, f"--offload-arch={HIP_ARCH[target]}", *map(str, objs), "-o", str(exe)]
    elif target in CPU_FLAGS:
        compile_src = lambda src, obj: [CXX, "-std=c++17", "-fopenmp", *CPU_FLAGS[target], "-Wall", "-Wextra", "-Werror", "-O2",
                                        "-I", str(directory), *ck.includes, "-c", str(src), "-o", str(obj)]
        host_flags = []
        link = lambda objs, exe: [CXX, "-fopenmp", *map(str, objs), "-o", str(exe)]
    else:
        print(f"note: {directory} is not named after a target; skipped")
        return

    same = {}  # source -> where its code was compiled already
    by_kit = [src for src in sources if (target, ck.tl_source.get(src)) in ck.kit_built]
    if by_kit:
        print(f"note: {target}: {len(by_kit)} of {len(sources)} kernel sources are compiled warning-free by "
              f"gpu-kit-build (the same tlc output); not compiled here", flush=True)
        sources = [src for src in sources if src not in by_kit]
    if target in FAMILY:
        for src in sources:
            before = ck.compiled_before(target, src, directory / (src.stem + ".h"))
            if before:
                same[src] = before
        if same:
            print(f"note: {target}: {len(same)} of {len(sources)} kernel sources are code compiled for "
                  f"{next(iter(same.values())).split('/')[0]} (comment lines aside); not compiled again", flush=True)
    to_compile = [src for src in sources if src not in same]
    object_of = {src: out / (src.stem + ".o") for src in to_compile}
    jobs = []
    unity_jobs = compile_units(ck, target, directory, out, to_compile, compile_src, object_of)
    hosts = []
    for header in headers:
        if any(src.stem == header.stem for src in same):
            continue
        program = host_program(header)
        if program is None:
            continue
        host_src = out / f"host_{header.stem}.cpp"
        host_src.write_text(program)
        host_obj = out / f"host_{header.stem}.o"
        jobs.append((f"{target}/host program with {header.name}",
                     [CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", *host_flags, "-I", str(directory),
                      "-c", str(host_src), "-o", str(host_obj)], None))
        hosts.append((header, host_obj))
    ok = ck.parallel(jobs + unity_jobs)
    ok.update(compile_alone(ck, target, unity_jobs, ok, compile_src, object_of))

    # Link each host program with the kernel's object (its own, or its unit's).
    links = []
    for header, host_obj in hosts:
        kernel_src = next((s for s in sources if s.stem == header.stem), None)
        kernel_name = f"{target}/{kernel_src.name}" if kernel_src else None
        if not kernel_src or not ok.get(kernel_name) or not ok.get(f"{target}/host program with {header.name}"):
            continue
        links.append((f"{target}/link host program with {kernel_src.name}",
                      link([host_obj, object_of[kernel_src]], out / f"host_{header.stem}"), None))
    ck.parallel(links)


def compile_units(ck: Checker, target, directory: Path, out: Path, sources, compile_src, object_of):
    """Jobs that compile kernel sources a few to a translation unit (UNITY_BATCH); HIP sources
    are grouped by the archs they are compiled for (later_hip_twins). Each job is named
    "TARGET/unit N (a.cu b.cu ...)"; object_of maps every source to its unit's object."""
    groups = defaultdict(list)
    for src in sources:
        archs = tuple(later_hip_twins(ck, target, directory, src)) if target in HIP_ARCH else ()
        groups[archs].append(src)
    names = lambda src: defined_names(src, directory / (src.stem + ".h"))
    jobs = []
    for archs, group in groups.items():
        for files in unity_batches(group, names, ck.args.jobs):
            unit = out / f"unit{len(jobs)}{files[0].suffix}"
            unit.write_text("// Generated by compile_check.py: kernel sources compiled as one unit.\n"
                            + "".join(f'#include "{src}"\n' for src in files))
            obj = unit.with_suffix(".o")
            for src in files:
                object_of[src] = obj
            cmd = compile_src(files[0], obj)
            cmd[cmd.index(str(files[0]))] = str(unit)  # the same flags (and twin archs) for the unit
            jobs.append((f"{target}/unit {len(jobs)} ({' '.join(src.name for src in files)})", cmd, None))
            ck.units[jobs[-1][0]] = {"sources": files, "output": ""}
    return jobs


def compile_alone(ck: Checker, target, unity_jobs, ok, compile_src, object_of):
    """The kernels of units that failed, each compiled alone: its own result under its own name
    ("TARGET/NAME.cu"), so a failure names the kernel (a unit that fails while all its files
    compile alone is a name the files share: a note, not a failure). Returns {name: ok} for every
    kernel of every unit."""
    results, alone, failed_units = {}, [], []
    for name, _, _ in unity_jobs:
        files = ck.units[name]["sources"]
        for src in files:
            results[f"{target}/{src.name}"] = ok[name]
        if not ok[name]:
            failed_units.append(name)
            alone += files
    if alone:
        for src in alone:
            object_of[src] = object_of[src].parent / (src.stem + ".o")
        redo = ck.parallel([(f"{target}/{src.name}", compile_src(src, object_of[src]), None) for src in alone])
        results.update(redo)
        if all(redo.values()):
            for name in failed_units:
                print(f"note: {name} failed, but each of its kernels compiles alone (a name they share? "
                      f"compile_check.py, defined_names):\n{ck.units[name]['output']}", flush=True)
    return results


def check_cpu_samples(ck: Checker, directory: Path, work: Path):
    sources = [directory / f"{k}.cpp" for k in SAMPLE_KERNELS]
    if not all(s.exists() for s in sources):
        return ck.skip("cpu run test (sample sources missing)")
    base = [CXX, "-std=c++17", "-fopenmp", "-Wall", "-Wextra", "-Werror", "-I", str(directory),
            str(HERE / "cpu_run.cpp"), *map(str, sources)]
    exe = work / "cpu_run"
    if ck.run("cpu run test: build", base + ["-O2", "-o", str(exe)]):
        ck.run("cpu run test: run", [str(exe)])
    if not ck.args.no_sanitizers:
        san = work / "cpu_run_sanitized"
        if ck.run("cpu run test: build with sanitizers",
                  base + ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-o", str(san)]):
            env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
            ck.run("cpu run test: run with sanitizers", [str(san)], env=env)


def runtime_compilers(header: str):
    """Which compilers a runtime header is checked with on its own: those of the outputs that carry
    its sections (tl_cuda*.h: nvcc; tl_hip*.h: hipcc; tl_gpu*.h: both; tl_cpu*.h: g++; tl_common.h
    and tl_types.h: all three), and g++ for the host-only tl_cuda_tma_host.h. tl_python.h, which
    needs pybind11, is compiled by the bindings' tests (tests/python/)."""
    if header == "tl_python.h":
        return []
    if header in ("tl_common.h", "tl_types.h"):
        return ["nvcc", "hipcc", "g++"]
    if header == "tl_cuda_tma_host.h":
        return ["nvcc", "g++"]
    for prefix, compilers in (("tl_cuda", ["nvcc"]), ("tl_hip", ["hipcc"]), ("tl_gpu", ["nvcc", "hipcc"]),
                              ("tl_cpu", ["g++"])):
        if header == f"{prefix}.h" or header.startswith(f"{prefix}_"):
            return compilers
    sys.exit(f"compile_check.py: no compiler known for runtime header {header} (runtime_compilers)")


def check_runtime_headers(ck: Checker, work: Path):
    """Every runtime header compiles on its own (one translation unit each, nothing before it)
    with each compiler of runtime_compilers, warning-free; then tests/emit/check_types.cpp."""
    jobs = []
    rt = work / "runtime"
    rt.mkdir(parents=True, exist_ok=True)
    suffix = {"nvcc": ".cu", "hipcc": ".hip", "g++": ".cpp"}
    flags = {"nvcc": [NVCC, "-std=c++17", "-arch=sm_80", "-Xcompiler", "-Wall,-Werror", "-Werror", "all-warnings"],
             "hipcc": [HIPCC, "-std=c++17", "--offload-arch=gfx90a", "-Wall", "-Werror"],
             "g++": [CXX, "-std=c++17", "-fopenmp", "-Wall", "-Wextra", "-Werror", "-I", str(CUDA_HOME / "include")]}
    available = {"nvcc": have(NVCC), "hipcc": have(HIPCC), "g++": True}
    if not available["nvcc"]:
        ck.skip(f"CUDA checks ({NVCC} not found)")
    if not available["hipcc"]:
        ck.skip("HIP checks (hipcc not found)")
    for header in sorted(h.name for h in RUNTIME.glob("*.h")):
        for compiler in runtime_compilers(header):
            if not available[compiler]:
                continue
            unit = rt / (Path(header).stem + suffix[compiler])
            unit.write_text(f'#include "{header}"\n')
            jobs.append((f"runtime: {header} with {compiler}",
                         flags[compiler] + ["-I", str(RUNTIME), "-c", str(unit), "-o", str(unit) + ".o"], None))
    if available["nvcc"]:
        jobs.append(("runtime: check_types build", [CXX, "-std=c++17", "-O2", "-Wall", "-Werror", "-I",
                                                    str(CUDA_HOME / "include"), "-I", str(RUNTIME),
                                                    str(HERE / "check_types.cpp"), "-o", str(rt / "check_types")], None))
    ok = ck.parallel(jobs)
    if ok.get("runtime: check_types build"):
        ck.run("runtime: tl_types.h conversions match CUDA's", [str(rt / "check_types")])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", type=Path, help="directories of emitted files, named after their target")
    parser.add_argument("--unit-tests", type=Path, help="tlc_unit_tests binary: write and check the emitter's samples")
    parser.add_argument("--tlc", type=Path, help="the tlc binary, to compile the --tl files for every target")
    parser.add_argument("--tl", type=Path, action="append", default=[], help=".tl file or directory of them")
    parser.add_argument("--include-dir", type=Path, action="append", default=[],
                        help="where the headers that kernels `import` are (an -I for every kernel source)")
    parser.add_argument("--work", type=Path, help="where to put samples and objects (default: a temporary directory)")
    parser.add_argument("--targets", help="comma-separated subset of targets to check (default: all found)")
    parser.add_argument("--tlc-flag", action="append", default=[],
                        help="an extra flag for every tlc run (repeatable), e.g. --tlc-flag=--emit-variants=3")
    parser.add_argument("--compiled-by-kit", type=Path, metavar="RUN_SETS_JSON",
                        help="the run layer's run_sets.json: its sm90 kernels without extra tlc flags are left to "
                             "gpu-kit-build (gpu-kit.sh build --werror), which compiles the same code for sm_90a "
                             "with the same warnings; their tlc runs and host programs are still checked here")
    parser.add_argument("--jobs", "-j", type=int, default=2)
    parser.add_argument("--no-sanitizers", action="store_true", help="skip the sanitizer build of the cpu run test")
    parser.add_argument("--require-all", action="store_true", help="fail when nvcc or hipcc is missing")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args()

    temp = None
    if args.work:
        work = args.work.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="tlc-emit-")
        work = Path(temp.name)

    # The compilers' temporaries go under the work folder: hipcc leaves two empty folders in
    # $TMPDIR for every file it compiles, which would pile up in /tmp run after run.
    tmp = work / "tmp"
    tmp.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = str(tmp)

    ck = Checker(args)
    if args.compiled_by_kit:
        for test in json.loads(args.compiled_by_kit.read_text())["tests"]:
            if test["flavour"] == "sm90":
                ck.kit_built |= {("sm90", Path(k["source"]).resolve()) for k in test["kernels"]
                                 if k["target"] == "sm90" and not k["flags"]}
    dirs = [d.resolve() for d in args.dirs]
    samples = None
    if args.unit_tests:
        samples = work / "samples"
        if samples.exists():
            shutil.rmtree(samples)
        env = dict(os.environ, TLC_EMIT_SAMPLES_DIR=str(samples))
        if not ck.run("write the emitter's samples", [str(args.unit_tests), "--test-case=emit samples: write*"], env=env):
            return 1
        dirs += sorted(d for d in samples.iterdir() if d.is_dir())
    wanted = set(args.targets.split(",")) if args.targets else None
    if args.tlc and args.tl:
        files = []
        for path in args.tl:
            files += sorted(path.glob("*.tl")) if path.is_dir() else [path]
        emitted = work / "tlc"
        jobs = []
        for target in ALL_TARGETS:
            if wanted is not None and target not in wanted:
                continue
            (emitted / target).mkdir(parents=True, exist_ok=True)
            for f in files:
                out = emitted / target / (f.stem + EXTENSION[target])
                if target in excluded_targets(f):
                    # Not built; tlc must refuse it with a located diagnostic (checked now, serially).
                    refusal = emitted / "refused" / target
                    refusal.mkdir(parents=True, exist_ok=True)
                    ck.refused(f"tlc {f.name} --target={target} refused",
                               [str(args.tlc), str(f), f"--target={target}", *args.tlc_flag, "-o",
                                str(refusal / out.name)])
                    continue
                jobs.append((f"tlc {f.name} --target={target}", [str(args.tlc), str(f), f"--target={target}", *args.tlc_flag, "-o", str(out)], None))
                if not args.tlc_flag:
                    ck.tl_source[out.resolve()] = f.resolve()
                for name, flags in variants(f):
                    out = emitted / target / (name + EXTENSION[target])
                    jobs.append((f"tlc {f.name} {' '.join(flags)} --target={target}",
                                 [str(args.tlc), str(f), f"--target={target}", *flags, *args.tlc_flag, "-o", str(out)], None))
            dirs.append(emitted / target)
        ck.parallel(jobs)
    ck.dirs = {d for d in dirs if wanted is None or d.name in wanted}
    for d in dirs:
        if wanted is None or d.name in wanted:
            check_directory(ck, d, work / "build" / d.parent.name)
    if samples and (wanted is None or "cpu" in wanted):
        check_cpu_samples(ck, samples / "cpu", work / "build")
    if args.unit_tests:
        check_runtime_headers(ck, work / "build")

    ck.pool.shutdown()
    # Where the time went (compiler seconds summed over the parallel jobs), largest first.
    spent = sorted(ck.seconds.items(), key=lambda kv: -kv[1][0])
    print("\ntime by step: " + ", ".join(f"{kind} {s:.0f} s ({n})" for kind, (s, n) in spent if s >= 0.5))
    print(f"\n{ck.passed} passed, {len(ck.failures)} failed" + (f", skipped: {', '.join(sorted(ck.skipped))}" if ck.skipped else ""))
    if ck.failures or (args.require_all and ck.skipped):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
