#!/usr/bin/env python3
"""What of the attention experiment runs without a GPU (ctest attention-experiment):

    test_experiment.py TLC WORK

prepares it with TLC as both compilers, then checks every configuration against the manifests
tlc wrote (the sizes configs.py gives are exactly the launchers' size parameters, every tensor
shape evaluates to positive sizes, each kind finds the tensors it takes), binds the launchers'
arguments with a stand-in for PyTorch (tensor pointers in parameter order, the sizes, the
workspace before the stream), and builds one configuration with nvcc for sm_90a as the GPU
side does, reading ptxas's figures for the report.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
KIND_TENSORS = {"fwd_bshd": 4, "fwd_bhsd": 4, "mla": 5, "decode": 5, "fwd_fp8": 4}


class FakeTensor:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype
        self.ptr = FakeTorch.next_ptr = FakeTorch.next_ptr + 4096

    def normal_(self):
        return self

    def data_ptr(self):
        return self.ptr


class FakeTorch:
    """Enough of torch for allocate() and Launch: shapes, dtypes, pointers, a stream."""
    next_ptr = 0
    float16, bfloat16, float32, uint8, float8_e4m3fn = "f16", "bf16", "f32", "u8", "e4m3"

    class cuda:
        @staticmethod
        def current_stream():
            return type("S", (), {"cuda_stream": 0})()

    @staticmethod
    def zeros(shape, dtype, device):
        return FakeTensor(shape, dtype)

    @staticmethod
    def empty(n, dtype, device):
        return FakeTensor([n], dtype)


class Experiment(unittest.TestCase):
    tlc = work = None

    @classmethod
    def setUpClass(cls):
        cls.kit = os.path.join(cls.work, "kit")
        subprocess.run([sys.executable, os.path.join(HERE, "experiment.py"), "prepare", "--out", cls.kit, "--tlc",
                        cls.tlc, "--baseline-tlc", cls.tlc, "--baseline-commit", "same"], check=True)
        sys.path.insert(0, cls.kit)
        import experiment
        cls.experiment = experiment
        cls.manifest = json.load(open(os.path.join(cls.kit, "experiment.json")))

    def kernel_manifests(self):
        for k in self.manifest["kernels"]:
            self.assertEqual(set(k["builds"]), {"after"} if k.get("after_only") else {"before", "after"}, k["id"])
            yield k, json.load(open(os.path.join(self.kit, k["builds"]["after"]["manifest"])))

    def test_every_configuration_prepared(self):
        import configs
        self.assertEqual([k["id"] for k in self.manifest["kernels"]], [c["id"] for c in configs.CONFIGS])
        self.assertTrue(set(configs.QUICK) <= {c["id"] for c in configs.CONFIGS})
        for name, ids in configs.SETS.items():
            self.assertTrue(set(ids) <= {c["id"] for c in configs.CONFIGS}, name)

    def test_sizes_and_shapes(self):
        for k, m in self.kernel_manifests():
            for launcher in m["launchers"]:
                sizes = {p["name"] for p in launcher["params"] if p["kind"] in ("size", "scalar")}
                self.assertEqual(sizes, set(k["sizes"]), f"{k['id']}: {launcher['c_launcher']}")
                for p in launcher["params"]:
                    if p["kind"] == "tensor":
                        shape = [self.experiment.size_value(e, k["sizes"]) for e in p["shape"]]
                        self.assertTrue(all(n > 0 for n in shape), f"{k['id']} {p['name']} {shape}")
            tensors = [p for p in m["launchers"][0]["params"] if p["kind"] == "tensor"]
            if k["kind"] in KIND_TENSORS:
                self.assertEqual(len(tensors), KIND_TENSORS[k["kind"]], k["id"])
            else:
                names = {l["launcher"] for l in m["launchers"]}
                self.assertTrue({"mha_bwd_bshd_fwd", "mha_bwd_bshd_prep", "mha_bwd_bshd", "mha_bwd_bshd_post"} <= names)

    def test_launch_binding(self):
        """Launch's arguments for decoding (a workspace) without calling: the launcher is real."""
        k, m = next((k, m) for k, m in self.kernel_manifests() if k["id"] == "decode_d128")
        launcher = m["launchers"][0]
        tensors = self.experiment.allocate(FakeTorch, [launcher], k["sizes"])
        self.assertEqual(tensors["K"].shape, [64, 8192, 8, 128])
        self.assertEqual(tensors["mask"].dtype, "u8")
        lib = self.build("decode_d128")
        launch = self.experiment.Launch(FakeTorch, lib, launcher, k["sizes"], tensors)
        params = launcher["params"]
        ptrs = [tensors[p["name"]].ptr for p in params if p["kind"] == "tensor"]
        sizes = [k["sizes"][p["name"]] for p in params if p["kind"] == "size"]
        self.assertEqual(launch.args[:len(ptrs) + len(sizes)], ptrs + sizes)
        self.assertEqual(len(launch.args), len(params) + 2)  # the workspace, then the stream
        self.assertEqual(launch.fn.argtypes[len(ptrs)], ctypes.c_int)

    def test_scalar_binding(self):
        """The fp8 forward's scales are bound as C floats between the tensors and the sizes."""
        k, m = next((k, m) for k, m in self.kernel_manifests() if k["id"] == "fa_fp8_d128")
        launcher = m["launchers"][0]

        class FakeLib:
            def __getattr__(self, name):
                return type("Fn", (), {"restype": None, "argtypes": None})()
        real = self.experiment.ctypes.CDLL
        self.experiment.ctypes.CDLL = lambda path: FakeLib()
        try:
            fp8 = dict(vars(FakeTorch), randn=lambda shape, device: FakeTensor(shape, "f32"))
            torch = type("T", (), fp8)
            FakeTensor.to = lambda t, dtype: FakeTensor(t.shape, dtype)
            tensors = self.experiment.allocate(torch, [launcher], k["sizes"])
            self.assertEqual(tensors["Vt"].shape, [4, 16, 128, 4096])
            self.assertEqual(tensors["Q"].dtype, "e4m3")
            launch = self.experiment.Launch(torch, "unused", launcher, k["sizes"], tensors)
        finally:
            self.experiment.ctypes.CDLL = real
        self.assertEqual(launch.args[4:7], [0.5, 0.5, 1.0])
        self.assertEqual(launch.fn.argtypes[4:7], [ctypes.c_float] * 3)
        self.assertEqual(launch.args[7:10], [4, 4096, 16])
        self.assertEqual(launch.fn.argtypes[7], ctypes.c_int)

    def build(self, cid):
        entry = next(k for k in self.manifest["kernels"] if k["id"] == cid)
        one = dict(self.manifest, kernels=[dict(entry, builds={"after": entry["builds"]["after"]})])
        built = self.experiment.build_all(one, os.path.join(self.work, "run"), 2)
        lib, ptxas, log = built[(cid, "after")]
        self.assertIsNotNone(lib, log)
        self.assertTrue(any(e["registers"] for e in ptxas.values()), log)
        return lib


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    Experiment.tlc, Experiment.work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(Experiment.work, ignore_errors=True)
    os.makedirs(Experiment.work)
    if not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")):
        print("test_experiment.py: no nvcc; skipped")
        sys.exit(77)
    sys.argv[1:] = []
    unittest.main(verbosity=2)
