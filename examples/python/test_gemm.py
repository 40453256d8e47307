#!/usr/bin/env python3
"""Checks the extension module that examples/python builds (tlc --emit=python, samples/gemm.tl on
the cpu target): right answers against NumPy, and a Python exception, never a crash, for every
argument it must refuse. Run it with the interpreter the module was built for, the module's
directory on PYTHONPATH (or given as the first argument):

    /usr/bin/python3 examples/python/test_gemm.py build-py
"""

import ctypes
import sys

if len(sys.argv) > 1:
    sys.path.insert(0, sys.argv[1])

import numpy as np

import gemm

rng = np.random.default_rng(18)
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def expect(exception, fragments, call, what):
    """`call` raises `exception` with every fragment in its message."""
    try:
        call()
    except exception as e:
        message = str(e)
        missing = [f for f in fragments if f not in message]
        check(not missing, f"{what}: message {message!r} lacks {missing}")
        print(f"ok: {what}: {type(e).__name__}: {message}")
        return
    except Exception as e:  # another exception is a failure too, but no crash
        check(False, f"{what}: expected {exception.__name__}, got {type(e).__name__}: {e}")
        return
    check(False, f"{what}: expected {exception.__name__}, nothing raised")


def operands(m, k, n):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b, np.full((m, n), np.nan, dtype=np.float16)


# Right answers: tile multiples, ragged edges (16x16x16 tiles), a single row, K = 1, M = 0.
for m, k, n in [(32, 32, 32), (37, 29, 45), (1, 70, 3), (50, 1, 17), (0, 8, 8)]:
    a, b, c = operands(m, k, n)
    gemm.gemm(a, b, c)
    reference = a.astype(np.float32) @ b.astype(np.float32)
    # f32 accumulation, f16 output: within one f16 step of the exact result.
    step = np.spacing(np.abs(reference).astype(np.float16)).astype(np.float32)
    error = np.abs(c.astype(np.float32) - reference)
    check(np.all(error <= step), f"gemm {m}x{k}x{n}: largest error {error.max(initial=0)} (f16 steps {step.max(initial=0)})")
    print(f"ok: gemm {m}x{k}x{n} matches NumPy")

a, b, c = operands(24, 40, 16)

# The deleter of every DLPack tensor runs: NumPy's holds a reference to the array.
before = [sys.getrefcount(x) for x in (a, b, c)]
for _ in range(50):
    gemm.gemm(a, b, c)
    try:
        gemm.gemm(a, b[:20], c)  # fails after taking the capsules
    except ValueError:
        pass
check([sys.getrefcount(x) for x in (a, b, c)] == before, "the DLPack deleters release the arrays")


class Producer:
    """Forwards the DLPack protocol to a NumPy array, and keeps the capsules it hands out."""

    def __init__(self, array, device=None):
        self.array, self.device, self.capsules = array, device, []

    def __dlpack_device__(self):
        return self.device or self.array.__dlpack_device__()

    def __dlpack__(self, stream=None):
        capsule = self.array.__dlpack__()
        self.capsules.append(capsule)
        return capsule


name_of = ctypes.pythonapi.PyCapsule_GetName
name_of.restype, name_of.argtypes = ctypes.c_char_p, [ctypes.py_object]
wrapped = Producer(a)
gemm.gemm(wrapped, b, c)
check([name_of(x) for x in wrapped.capsules] == [b"used_dltensor"], "the capsule is renamed used_dltensor")

# What must be refused, each with a Python exception naming the parameter.
expect(TypeError, ["gemm: A:", "f16", "float32"], lambda: gemm.gemm(a.astype(np.float32), b, c), "wrong dtype")
expect(TypeError, ["gemm: C:", "f16", "float64"], lambda: gemm.gemm(a, b, c.astype(np.float64)), "wrong dtype of an output")
cuda_array = Producer(b, device=(2, 0))  # kDLCUDA, device 0
expect(ValueError, ["gemm: B:", "expected an array on cpu", "cuda:0"], lambda: gemm.gemm(a, cuda_array, c), "wrong device")
check(cuda_array.capsules == [], "an array on the wrong device is not asked to export")
wide = np.zeros((24, 80), dtype=np.float16)
wide[:, ::2] = a
expect(ValueError, ["gemm: A:", "strides", "[K, 1] = [40, 1]", "[80, 2]"], lambda: gemm.gemm(wide[:, ::2], b, c),
       "non-contiguous array (a[:, ::2])")
expect(ValueError, ["gemm: C:", "strides"], lambda: gemm.gemm(a, b, np.zeros((16, 24), np.float16).T), "transposed output")
expect(ValueError, ["gemm: B:", "[K, N] = [40, 16]", "K = A.shape[1]", "[39, 16]"], lambda: gemm.gemm(a, b[:39], c),
       "inconsistent K")
expect(ValueError, ["gemm: C:", "2-d", "3-d"], lambda: gemm.gemm(a, b, c[None]), "wrong rank")
expect(TypeError, ["gemm: A:", "__dlpack__", "list"], lambda: gemm.gemm(a.tolist(), b, c), "not an array")
expect(TypeError, ["gemm: B:", "NoneType"], lambda: gemm.gemm(a, None, c), "None")
memory = np.zeros(24 * 40 + 24 * 16, np.float16)
expect(ValueError, ["gemm: C:", "overlaps A"],
       lambda: gemm.gemm(memory[:24 * 40].reshape(24, 40), b, memory[24 * 40 - 1:-1].reshape(24, 16)),
       "an output overlapping an input by one element")
gemm.gemm(memory[:24 * 40].reshape(24, 40), b, memory[24 * 40:].reshape(24, 16))
print("ok: adjacent arrays are accepted")
misaligned = np.zeros(24 * 40 + 1, np.float16)[1:].reshape(24, 40)  # element-aligned
gemm.gemm(misaligned, b, c)
print("ok: an element-aligned view is accepted")
check(gemm.target == "cpu", "the module names its target")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
