#!/usr/bin/env python3
"""Checks the extension module that examples/python builds (tlc --emit=python, samples/gemm.tl):
right answers against a float64 product, and a Python exception, never a crash, for every
argument it must refuse. Run it with the interpreter the module was built for, the module's
directory on PYTHONPATH (or given as the first argument):

    /usr/bin/python3 examples/python/test_gemm.py build-py

This file runs the cpu module with NumPy arrays; test_gemm_cuda.py runs the same checks
(`common_checks`) on a module built for sm80/sm90 with PyTorch CUDA tensors (the GPU kit).
The last line is "P passed, F failed"; the exit status is 1 when a check failed.
"""

import ctypes
import sys

failures = []
passed = 0


def check(condition, what):
    global passed
    if condition:
        passed += 1
    else:
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


def finish():
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


class NumPyArrays:
    """What the checks do with arrays, for NumPy (the cpu module)."""
    here, there = "cpu", "cuda:0"  # the arrays' device, and one the module refuses
    elsewhere = (2, 0)  # `there` as __dlpack_device__ says it: kDLCUDA, device 0

    def __init__(self):
        import numpy
        self.np, self.rng = numpy, numpy.random.default_rng(18)

    def randn(self, *shape):
        return self.rng.standard_normal(shape).astype(self.np.float16)

    def nans(self, *shape):
        return self.np.full(shape, self.np.nan, self.np.float16)

    def zeros(self, *shape):
        return self.np.zeros(shape, self.np.float16)

    def astype(self, x, name):
        return x.astype(name)

    def f64(self, x):
        return x.astype(self.np.float64)

    def f16_step(self, x):
        """The distance from |x| (float64) to the next float16, as float64."""
        return self.np.spacing(abs(x).astype(self.np.float16)).astype(self.np.float64)

    def largest(self, x):
        return float(x.max(initial=0))


def right_answer(xp, a, b, c):
    """(whether C = A @ B within the kernel's rounding, the largest error), against float64."""
    a64, b64 = xp.f64(a), xp.f64(b)
    reference = a64 @ b64
    # f32 accumulation, one rounding to f16: one f16 step at the result, plus the accumulation's
    # rounding over K terms (at most K * 2^-24 * sum |a||b| in f32; 2^-22 for tensor cores,
    # whose additions round less exactly).
    bound = xp.f16_step(reference) + a.shape[1] * 2.0 ** -22 * (abs(a64) @ abs(b64))
    error = abs(xp.f64(c) - reference)
    return bool((error <= bound).all()), xp.largest(error)


class Producer:
    """Forwards the DLPack protocol to an array, and keeps the capsules it hands out."""

    def __init__(self, array, device=None):
        self.array, self.device, self.capsules = array, device, []

    def __dlpack_device__(self):
        return self.device or self.array.__dlpack_device__()

    def __dlpack__(self, stream=None):
        capsule = self.array.__dlpack__() if stream is None else self.array.__dlpack__(stream=stream)
        self.capsules.append(capsule)
        return capsule


def common_checks(gemm, xp, shapes):
    """Every check that holds for any target, with the arrays of `xp` on the module's device."""
    gpu = gemm.target != "cpu"
    for m, k, n in shapes:
        a, b, c = xp.randn(m, k), xp.randn(k, n), xp.nans(m, n)
        gemm.gemm(a, b, c)
        ok, error = right_answer(xp, a, b, c)
        check(ok, f"gemm {m}x{k}x{n}: largest error {error}")
        print(f"ok: gemm {m}x{k}x{n} matches the float64 product (largest error {error:.3g})")

    a, b, c = xp.randn(24, 40), xp.randn(40, 16), xp.nans(24, 16)

    # The deleter of every DLPack tensor runs: NumPy's holds a reference to the array.
    before = [sys.getrefcount(x) for x in (a, b, c)]
    for _ in range(50):
        gemm.gemm(a, b, c)
        try:
            gemm.gemm(a, b[:20], c)  # fails after taking the capsules
        except ValueError:
            pass
    check([sys.getrefcount(x) for x in (a, b, c)] == before, "the DLPack deleters release the arrays")

    name_of = ctypes.pythonapi.PyCapsule_GetName
    name_of.restype, name_of.argtypes = ctypes.c_char_p, [ctypes.py_object]
    wrapped = Producer(a)
    gemm.gemm(wrapped, b, c)
    check([name_of(x) for x in wrapped.capsules] == [b"used_dltensor"], "the capsule is renamed used_dltensor")

    # What must be refused, each with a Python exception naming the parameter.
    expect(TypeError, ["gemm: A:", "f16", "float32"], lambda: gemm.gemm(xp.astype(a, "float32"), b, c), "wrong dtype")
    expect(TypeError, ["gemm: C:", "f16", "float64"], lambda: gemm.gemm(a, b, xp.astype(c, "float64")),
           "wrong dtype of an output")
    elsewhere = Producer(b, device=xp.elsewhere)
    expect(ValueError, ["gemm: B:", f"expected an array on {xp.here}", f"got one on {xp.there}"],
           lambda: gemm.gemm(a, elsewhere, c), "wrong device (as __dlpack_device__ says)")
    check(elsewhere.capsules == [], "an array on the wrong device is not asked to export")
    wide = xp.zeros(24, 80)
    wide[:, ::2] = a
    expect(ValueError, ["gemm: A:", "strides", "[K, 1] = [40, 1]", "[80, 2]"], lambda: gemm.gemm(wide[:, ::2], b, c),
           "non-contiguous array (a[:, ::2])")
    expect(ValueError, ["gemm: C:", "strides"], lambda: gemm.gemm(a, b, xp.zeros(16, 24).T), "transposed output")
    expect(ValueError, ["gemm: B:", "[K, N] = [40, 16]", "K = A.shape[1]", "[39, 16]"], lambda: gemm.gemm(a, b[:39], c),
           "inconsistent K")
    expect(ValueError, ["gemm: C:", "2-d", "3-d"], lambda: gemm.gemm(a, b, c[None]), "wrong rank")
    expect(TypeError, ["gemm: A:", "__dlpack__", "list"], lambda: gemm.gemm(a.tolist(), b, c), "not an array")
    expect(TypeError, ["gemm: B:", "NoneType"], lambda: gemm.gemm(a, None, c), "None")
    memory = xp.zeros(24 * 40 + 24 * 16)
    overlap = 2 if gpu else 1  # the GPU launchers need C 4-byte aligned: the overlap stays even there
    expect(ValueError, ["gemm: C:", "overlaps A"],
           lambda: gemm.gemm(memory[:24 * 40].reshape(24, 40), b, memory[24 * 40 - overlap:-overlap].reshape(24, 16)),
           f"an output overlapping an input by {overlap} element(s)")
    gemm.gemm(memory[:24 * 40].reshape(24, 40), b, memory[24 * 40:].reshape(24, 16))
    print("ok: adjacent arrays are accepted")
    misaligned = xp.zeros(24 * 40 + 1)[1:].reshape(24, 40)  # element-aligned
    if gpu:  # vector and TMA loads: 16 bytes
        expect(ValueError, ["gemm: A:", "16-byte aligned"], lambda: gemm.gemm(misaligned, b, c),
               "an element-aligned view (the GPU launcher needs 16 bytes)")
    else:
        gemm.gemm(misaligned, b, c)
        print("ok: an element-aligned view is accepted")


def main():
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    import gemm
    check(gemm.target == "cpu", f"the module names its target: cpu, got {gemm.target}")
    # Tile multiples, ragged edges (16x16x16 tiles), a single row, K = 1, M = 0.
    common_checks(gemm, NumPyArrays(), [(32, 32, 32), (37, 29, 45), (1, 70, 3), (50, 1, 17), (0, 8, 8)])
    finish()


if __name__ == "__main__":
    main()
