"""The GPU kit's python phase (kit.py run --phases python; docs/testing.md, "GPU kit"): the
--emit=python example (examples/python: samples/gemm.tl with its defines), which CI runs on the
cpu with NumPy, built for the device and run with PyTorch CUDA tensors.

The kit holds tlc's output for sm80 and sm90 (gen/python/<flavour>/gemm.cu, gemm.h,
gemm_python.cpp) and the example's scripts (python/). Here the kernel is compiled by nvcc, the
binding by the host compiler against this interpreter's headers and pybind11's, and the two are
linked into an extension module, which test_gemm_cuda.py and torch_op.py then import.
"""
import os
import re
import shutil
import sys
import sysconfig
import time

from kit import sh  # kit.py imports this module only inside its run: no import cycle

MODULE = "gemm"  # the binding's stem: PYBIND11_MODULE's default name


def pybind11_include():
    """The folder holding pybind11/pybind11.h, or None. GPU machines have PyTorch but seldom
    pybind11 as a package; PyTorch's wheels ship pybind11's headers (torch/include/pybind11) for
    their own C++ extensions, and those serve here as well. CI has Debian's pybind11-dev."""
    candidates = []
    try:
        import pybind11
        candidates.append(pybind11.get_include())
    except ImportError:
        pass
    try:
        from torch.utils.cpp_extension import include_paths
        candidates += include_paths()
    except ImportError:
        pass
    candidates += ["/usr/include", "/usr/local/include"]
    return next((d for d in candidates if os.path.exists(os.path.join(d, "pybind11", "pybind11.h"))), None)


def flavour_for(arch):
    """tlc's target whose output runs on an nvcc arch: sm90 on sm_90a, sm80 from sm_80 up."""
    n = int(arch[3:].rstrip("a"))
    return "sm90" if n == 90 else ("sm80" if n >= 80 else None)


def build_commands(kit, module, arch, out_dir, nvcc, pybind_include, python_include=None, cxx=None):
    """The commands that build the extension module for one arch, in order, and its path.
    `module` is kit.json's python.modules[flavour]."""
    python_include = python_include or sysconfig.get_paths()["include"]
    cxx = cxx or shutil.which("c++") or "g++"
    cuda_include = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")
    gen = os.path.join(kit, os.path.dirname(module["cu"]))
    kernel_o, binding_o = os.path.join(out_dir, "kernel.o"), os.path.join(out_dir, "binding.o")
    path = os.path.join(out_dir, MODULE + sysconfig.get_config_var("EXT_SUFFIX"))
    return [
        [nvcc, "-O2", "-std=c++17", "-w", f"-arch={arch}", "-Xcompiler", "-fPIC", "-I", gen, "-c",
         os.path.join(kit, module["cu"]), "-o", kernel_o],
        # pybind11's own flags: hidden symbols (one module's types do not clash with another's).
        # -w: the binding's warnings are CTest python-bindings-compile's (-Werror), not the kit's.
        [cxx, "-O2", "-std=c++17", "-fPIC", "-fvisibility=hidden", "-w", "-I", gen, "-I", python_include,
         "-I", pybind_include, "-I", cuda_include, "-c", os.path.join(kit, module["binding"]), "-o", binding_o],
        # nvcc links the CUDA runtime statically (its default): the module needs no libcudart.so
        # on the loader's path, and PyTorch's stream handles are the driver's, valid in any runtime.
        [nvcc, "-shared", f"-arch={arch}", kernel_o, binding_o, "-o", path],
    ], path


def build(kit, manifest, arch, out_dir, nvcc):
    """Builds the module for arch into out_dir: (its folder or None, [(what, output)] failures)."""
    flavour = flavour_for(arch)
    module = (manifest.get("python") or {}).get("modules", {}).get(flavour)
    if not module:
        return None, [(f"{arch} python", f"the kit has no python module for {flavour or arch} (prepare it again)")]
    include = pybind11_include()
    if not include:
        return None, [(f"{arch} python", "no pybind11 headers: neither `import pybind11`, PyTorch's "
                                         "torch/include/pybind11 nor /usr/include/pybind11")]
    python_h = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    if not os.path.exists(python_h):
        return None, [(f"{arch} python", f"no {python_h}: this Python's headers are missing (Debian: python3-dev)")]
    os.makedirs(out_dir, exist_ok=True)
    commands, path = build_commands(kit, module, arch, out_dir, nvcc, include)
    for cmd in commands:
        rc, out = sh(cmd)
        if rc != 0:
            return None, [(f"{arch} python: {os.path.basename(cmd[-1])}", " ".join(cmd) + "\n" + out)]
    return os.path.dirname(path), []


def run(kit, manifest, arch, nvcc, log):
    """The python phase: ([results], [build failures]). Each result as kit.py's tests: name,
    status, passed, failed, seconds, failures, tail."""
    t0 = time.time()
    module_dir, failures = build(kit, manifest, arch, os.path.join(kit, "build", arch, "python"), nvcc)
    log(f"kit: python module for {arch}: {'built' if module_dir else 'FAILED'} ({time.time() - t0:.0f} s)")
    scripts = os.path.join(kit, "python")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [module_dir, os.environ.get("PYTHONPATH")])))
    results = []
    for name, cmd, timeout in [
            ("test_gemm_cuda.py", [sys.executable, os.path.join(scripts, "test_gemm_cuda.py"), module_dir or ""], 300),
            # its own checks: against torch, torch.library.opcheck and torch.compile with Inductor
            ("torch_op.py", [sys.executable, os.path.join(scripts, "torch_op.py")], 600)]:
        if not module_dir:
            results.append({"name": name, "status": "not run", "why": "the module did not build"})
            continue
        t1 = time.time()
        rc, out = sh(cmd, timeout=timeout, env=env)
        results.append(summarise(name, rc, out, time.time() - t1))
        log(f"kit: python {name}: {results[-1]['status']} ({results[-1]['seconds']} s)")
    return results, failures


def summarise(name, rc, out, seconds):
    """A script's run as a result: test_gemm_cuda.py ends with "P passed, F failed"; torch_op.py
    is one check that passes when it exits 0."""
    m = re.search(r"^(\d+) passed, (\d+) failed$", out, re.M)
    passed, failed = (int(m.group(1)), int(m.group(2))) if m else (int(rc == 0), int(rc != 0))
    status = "timeout" if rc is None else ("pass" if rc == 0 and failed == 0 else "fail")
    return {"name": name, "status": status, "exit": rc, "passed": passed, "failed": failed,
            "seconds": round(seconds, 1), "failures": [l for l in out.splitlines() if l.startswith("FAIL")][:50],
            "tail": out[-4000:] if status != "pass" else ""}
