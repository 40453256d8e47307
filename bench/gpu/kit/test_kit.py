#!/usr/bin/env python3
"""What of the GPU kit's GPU side can be checked without a GPU (CTest gpu-kit-build): the arch
rules, the summary parsing and the report; given a prepared kit, its manifest's files and the
python phase's build (nvcc and the host compiler, for sm_90a) where pybind11's headers are.
python3 test_kit.py [KIT]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import experiments  # noqa: E402
import kit  # noqa: E402
import prepare  # noqa: E402
import python_phase  # noqa: E402


def exe(*targets):
    return {"name": "x", "kernels": [{"name": f"k{i}", "target": t} for i, t in enumerate(targets)]}


class ArchRules(unittest.TestCase):
    def test_kernel_arch(self):
        self.assertEqual(kit.kernel_arch("sm80", "sm_90a"), "sm_90a")
        self.assertEqual(kit.kernel_arch("sm89", "sm_90a"), "sm_90a")
        # fp8 code for an A100 builds for its own arch (and cannot run there).
        self.assertEqual(kit.kernel_arch("sm89", "sm_80"), "sm_89")
        self.assertEqual(kit.kernel_arch("sm90", "sm_80"), "sm_90a")

    def test_runnable(self):
        self.assertIsNone(kit.runnable(exe("sm80", "sm89"), "sm_90a"))
        self.assertIsNone(kit.runnable(exe("sm90"), "sm_90a"))
        self.assertIn("needs sm_89", kit.runnable(exe("sm80", "sm89"), "sm_80"))
        # wgmma and setmaxnreg exist only in sm_90a, not on later architectures' plain targets.
        self.assertIn("needs sm_90a", kit.runnable(exe("sm90"), "sm_100"))


class Summary(unittest.TestCase):
    def test_summary_line(self):
        out = "ok   a\nFAIL b: 3 of 9 elements differ\n12 passed, 1 failed\n"
        m = kit.SUMMARY.search(out)
        self.assertEqual((m.group(1), m.group(2)), ("12", "1"))
        self.assertIsNone(kit.SUMMARY.search("12 passed"))

    def test_sanitizer_findings(self):
        # Each tool's last line as compute-sanitizer 2025 (CUDA 13) printed it on an H200.
        self.assertEqual(kit.sanitizer_findings("82 passed, 0 failed\n========= ERROR SUMMARY: 0 errors\n"), 0)
        self.assertEqual(kit.sanitizer_findings("========= ERROR SUMMARY: 3 errors\n"), 3)
        self.assertEqual(kit.sanitizer_findings(
            "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"), 0)
        self.assertEqual(kit.sanitizer_findings(
            "========= RACECHECK SUMMARY: 3 hazards displayed (1 error, 2 warnings)\n"), 3)
        self.assertIsNone(kit.sanitizer_findings("Segmentation fault\n"))


class Report(unittest.TestCase):
    def test_report_names_device_failures_and_tables(self):
        with tempfile.TemporaryDirectory() as d:
            old, kit.KIT = kit.KIT, d
            try:
                kit.write_report({"phases": ["tests", "racecheck", "bench"],
                    "device": {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "driver": "560",
                               "memory": "81559 MiB", "arch": "sm_90a"},
                    "kit": {"tlc_version": "tlc 0.1.0", "commit": "abc1234", "prepared": "2026-11-25 04:00 UTC"},
                    "started": "2026-11-25 05:00 UTC", "minutes": 12.5, "quick": False,
                    "build_failures": [("sm_90a run-corpus-sm90: topk.o", "error: something")],
                    "tests": [{"name": "run-samples-sm90", "status": "pass", "passed": 80, "failed": 0, "seconds": 3},
                              {"name": "run-corpus-sm90", "status": "fail", "passed": 70, "failed": 1, "seconds": 9,
                               "failures": ["FAIL topk M=5: 2 of 10 elements differ"], "tail": "70 passed, 1 failed"}],
                    "python": [{"name": "test_gemm_cuda.py", "status": "fail", "passed": 30, "failed": 1,
                                "seconds": 4, "failures": ["FAIL: gemm on a side stream: largest error nan"],
                                "tail": "30 passed, 1 failed"}],
                    "sanitizer": [{"tool": "racecheck", "name": "run-samples-sm90", "status": "errors", "errors": 2,
                                   "seconds": 40, "tail": "RACE REPORT"}],
                    "bench": [{"title": "GEMM", "note": "ratios", "columns": ["kernel", "baseline / tlc"],
                               "rows": [["gemm_f16", "0.91"]]}]}, d)
                with open(os.path.join(d, "report.md")) as f:
                    text = f.read()
                with open(os.path.join(d, "report.json")) as f:
                    data = json.load(f)
            finally:
                kit.KIT = old
        self.assertIn("Device: NVIDIA H100 80GB HBM3 (compute capability 9.0", text)
        self.assertIn("built for sm_90a; tlc 0.1.0 (commit abc1234", text)
        self.assertIn("sm_90a run-corpus-sm90: topk.o", text)
        self.assertIn("| run-corpus-sm90 | fail | 70 | 1 | 9 |", text)
        self.assertIn("FAIL topk M=5", text)
        self.assertIn("| test_gemm_cuda.py | fail | 30 | 1 | 4 |", text)
        self.assertIn("FAIL: gemm on a side stream", text)
        self.assertIn("| racecheck | run-samples-sm90 | errors | 2 | 40 |", text)
        self.assertIn("| gemm_f16 | 0.91 |", text)
        self.assertEqual(data["tests"][1]["failed"], 1)


class Merge(unittest.TestCase):
    def test_parts_concatenate(self):
        dev = {"name": "H100"}
        a = {"device": dev, "minutes": 2.0, "phases": ["tests"], "tests": [{"name": "t"}], "sanitizer": [],
             "bench": [], "build_failures": []}
        b = {"device": dev, "minutes": 3.0, "phases": ["python", "bench"], "tests": [], "sanitizer": [],
             "python": [{"name": "torch_op.py"}], "bench": [{"title": "GEMM"}], "build_failures": []}
        m = kit.merge_reports([a, b])  # a is from a kit without the python phase
        self.assertEqual((m["phases"], m["minutes"], len(m["tests"]), len(m["python"]), len(m["bench"])),
                         (["tests", "python", "bench"], 5.0, 1, 1, 1))
        # Wrong experiment results of every part count.
        m = kit.merge_reports([dict(a, experiment_failures=1), dict(b, experiment_failures=2)])
        self.assertEqual(m["experiment_failures"], 3)
        with self.assertRaises(SystemExit):
            kit.merge_reports([a, dict(b, device={"name": "A100"})])


class Experiments(unittest.TestCase):
    def test_queue(self):
        """Every experiment's kernels exist, their ids are unique, and a runner takes its kind."""
        ids = set()
        for exp in experiments.QUEUE:
            self.assertIn(exp["kind"], experiments.RUNNERS)
            self.assertIn(exp["dtype"], experiments.TOLERANCE)
            for i, (label, source, defines, *extra) in enumerate(exp["kernels"]):
                self.assertTrue(os.path.exists(os.path.join(prepare.ROOT, source)), source)
                if exp["kind"] == "rows":  # bench_memory's kinds
                    self.assertIn(extra[0]["kind"], ("softmax", "rmsnorm", "layernorm"))
                ids.add(experiments.kernel_id(exp, i))
                self.assertTrue(all("=" in d for d in defines), defines)
        self.assertEqual(len(ids), sum(len(e["kernels"]) for e in experiments.QUEUE))
        self.assertEqual(experiments.launcher_name(os.path.join(prepare.ROOT, experiments.DEPTH_SOURCE)),
                         "tl_gemm_depth")

    def test_rows_runner(self):
        """run_rows pairs each kernel's aligned and offset runs, turns their times into general /
        fast, and counts a wrong or failed run."""
        import bench
        calls = []

        def fake_memory(torch, entries, lib_of, quick, iters, offset=0):
            calls.append(offset)
            ms = "0.200" if offset else "0.100"
            rows = [[e["id"], "64x1024", "1.0e-04", ms, "100", "200", "0.50"] for e in entries]
            if offset:
                rows[1] = [entries[1]["id"], "64x1024", "launch refused", "", "", "", ""]
            return {"rows": rows}

        saved = bench.bench_memory
        bench.bench_memory = fake_memory
        try:
            kernels = [{"id": "a", "label": "softmax"}, {"id": "b", "label": "rmsnorm"}]
            rows, wrong, _ = experiments.run_rows(None, {"dtype": "f16"}, kernels, lambda k: "lib", 30, print)
        finally:
            bench.bench_memory = saved
        self.assertEqual(calls, [0, 1])
        self.assertEqual([r[1] for r in rows], ["aligned (fast)", "offset by one element (general)"] * 2)
        self.assertEqual(rows[1][-1], "0.50")      # 0.100 ms aligned over 0.200 ms offset
        self.assertTrue(rows[3][3].startswith("WRONG"))
        self.assertEqual(rows[3][-1], "")
        self.assertEqual(wrong, 1)

    def test_recommend(self):
        """An experiment that asks for the recommender's pick names parameters of its kernel (all
        of which its grid varies, where it files a measured sweep), and sizes or integer scalars
        of it for the shape."""
        asked = [e for e in experiments.QUEUE if e.get("recommend")]
        self.assertTrue(asked)
        for exp in asked:
            source = os.path.join(prepare.ROOT, exp["kernels"][0][1])
            with open(source) as f:
                text = f.read()
            header = text[text.index("kernel " + exp.get("kernel", "")):]
            header = header[:header.index(">")]
            for p in exp["recommend"]["params"]:
                self.assertIn(p + " = ", header)
                if exp["recommend"].get("sizes"):
                    self.assertTrue(all(any(d.startswith(p + "=") for d in kernel[2]) for kernel in exp["kernels"]))
            for size in exp["recommend"]["shape"]:  # a dimension of a tensor parameter, or an integer scalar
                self.assertRegex(text, r"(\w+\[(\w+, )*" + size + r"[,\]])|(\b" + size + r": i32\b)")

    def test_measured_sweeps(self):
        """An experiment's times become one measured sweep per shape, in tlc's format: the
        configurations by their values (the pick, a repeat of a grid entry, listed once), in us,
        sizes named, compile-time positions left out; a kernel without time is not listed."""
        exp = {"name": "e", "sweep": {"kernel": "k", "fingerprint": "0123456789abcdef", "params": ["a", "b"],
                                      "sizes": ["N", None], "defaults": {}},
               "kernels": [{"id": "e_rank1", "values": {"a": 2, "b": 64}},
                           {"id": "e_0", "values": {"a": 1, "b": 64}},
                           {"id": "e_1", "values": {"a": 2, "b": 64}},
                           {"id": "e_2", "values": {"a": 4, "b": 64}}]}
        sweeps = experiments.measured_sweeps(exp, {(4096, 1024): {"e_rank1": 0.5, "e_0": 0.25, "e_1": 0.5}})
        self.assertEqual(len(sweeps), 1)
        s = sweeps[0]
        self.assertEqual((s["kernel"], s["fingerprint"], s["shape"]), ("k", "0123456789abcdef", {"N": 4096}))
        self.assertEqual(s["configs"], [{"values": {"a": 2, "b": 64}, "us": 500.0},
                                        {"values": {"a": 1, "b": 64}, "us": 250.0}])
        self.assertEqual(prepare.config_values(exp["sweep"] | {"defaults": {"b": 32}}, ("a=8",)), {"a": 8, "b": 32})
        self.assertIsNone(prepare.config_values(exp["sweep"], ("a=8",)))

    def test_check_and_time(self):
        """check_and_time: a failed launch and a wrong result are one failure each with their
        reason in the error column; a right one is timed against the baseline."""
        fake = type("T", (), {"cuda": type("C", (), {"synchronize": staticmethod(lambda: None)})})
        saved = experiments.rel_err, experiments.median_ms
        experiments.median_ms = lambda torch, fn, iters: 2.0
        logged = []
        try:
            k, exp = {"label": "k"}, {"name": "e", "dtype": "f16"}
            experiments.rel_err = lambda torch, out, ref: 1e-4
            result, bad = experiments.check_and_time(fake, exp, k, lambda: None, None, None, "4x4x4", 4e9,
                                                     lambda: 1.0, 10, logged.append)
            self.assertEqual((result, bad), (["1.0e-04", "2.000", "2", "4", "0.50"], 0))
            experiments.rel_err = lambda torch, out, ref: 0.5
            result, bad = experiments.check_and_time(fake, exp, k, lambda: None, None, None, "4x4x4", 4e9,
                                                     lambda: 1.0, 10, logged.append)
            self.assertEqual((result[0], bad), ("WRONG 5.0e-01", 1))
            self.assertIn("WRONG", logged[-1])

            def refused():
                raise RuntimeError("launcher returned 1")
            result, bad = experiments.check_and_time(fake, exp, k, refused, None, None, "4x4x4", 4e9,
                                                     lambda: 1.0, 10, logged.append)
            self.assertEqual((result[0], bad), ("launcher returned 1", 1))
        finally:
            experiments.rel_err, experiments.median_ms = saved
        fns, rows = experiments.bind([{"id": "a", "label": "a", "depth": "3"}], lambda k: None, [], 3)
        self.assertEqual((fns, rows), ({}, [["a", "3", "", "", "", "not built", "", "", "", ""]]))

    def test_sampled_experiment_kernels(self):
        """CI's build of the experiments: one kernel per source (and kernel name), and every pick."""
        e = {"kernels": [{"source": "a.tl"}, {"source": "a.tl", "pick": True}, {"source": "a.tl"},
                         {"source": "b.tl"}, {"source": "b.tl", "kernel": "k2"}, {"source": "b.tl"}]}
        got = kit.sampled_experiment_kernels(e)
        self.assertEqual([(k["source"], k.get("kernel"), bool(k.get("pick"))) for k in got],
                         [("a.tl", None, False), ("a.tl", None, True), ("b.tl", None, False), ("b.tl", "k2", False)])

    def test_check(self):
        self.assertTrue(experiments.check(4e-4, "f16"))
        self.assertFalse(experiments.check(2e-2, "f16"))
        self.assertFalse(experiments.check(float("nan"), "f16"))


class Manifest(unittest.TestCase):
    """The prepared kit (argument 1) names files that exist, every kernel with a known target."""
    kit_dir = None

    def test_manifest(self):
        if not self.kit_dir:
            self.skipTest("no kit folder given")
        with open(os.path.join(self.kit_dir, "kit.json")) as f:
            m = json.load(f)
        self.assertGreaterEqual(len(m["executables"]), 6)
        for e in m["executables"]:
            for k in e["kernels"]:
                self.assertTrue(os.path.exists(os.path.join(self.kit_dir, k["cu"])), k["cu"])
                kit.target_arch(k["target"])
            for d in e["drivers"]:
                self.assertTrue(os.path.exists(os.path.join(self.kit_dir, d)), d)
        kinds = {b["kind"] for b in m["bench"]}
        self.assertEqual(kinds, {"gemm", "attention", "softmax", "rmsnorm", "layernorm"})
        self.assertEqual(len(m["recommend"]["candidates"]), 8)
        # The experiments: each kernel emitted, with the stage count tlc chose for it.
        depth = next(e for e in m["experiments"] if e["name"] == "gemm_depth")
        for k in depth["kernels"]:
            self.assertTrue(os.path.exists(os.path.join(self.kit_dir, k["cu"])), k["cu"])
        # The recommender's pick in the experiments that ask for it: one kernel, emitted.
        for e in m["experiments"]:
            picks = [k for k in e["kernels"] if k.get("pick")]
            asked = any(x.get("recommend") for x in experiments.QUEUE if x["name"] == e["name"])
            self.assertEqual(len(picks), 1 if asked else 0, e["name"])
            for k in picks:
                self.assertTrue(k["label"].startswith("recommender's rank 1: "), k["label"])
                self.assertTrue(os.path.exists(os.path.join(self.kit_dir, k["cu"])), k["cu"])
            # ... and what its times are filed under as a measured sweep: every kernel's values.
            if asked:
                self.assertRegex(e["sweep"]["fingerprint"], "^[0-9a-f]{16}$")
                for k in e["kernels"]:
                    self.assertEqual(sorted(k["values"]), sorted(e["sweep"]["params"]), k["label"])
        # The GEMM family's runners call each launcher with the parameters gemm_family.SIGNATURES
        # lists: the kernel's extern "C" declaration in its header has them, then the stream.
        import ctypes
        import re
        import gemm_family
        for e in m["experiments"]:
            signature = gemm_family.SIGNATURES.get(e["kind"])
            for k in e["kernels"] if signature else []:
                with open(os.path.join(self.kit_dir, k["cu"][:-3] + ".h")) as f:
                    header = f.read()
                decl = re.search(r'extern "C" int ' + k["launcher"] + r"\(([^)]*)\)", header)
                self.assertIsNotNone(decl, k["launcher"])
                params = [p.strip() for p in decl.group(1).split(",")]
                self.assertEqual(len(params), len(signature) + 1, f"{e['name']}: {params}")
                for p, t in zip(params, signature + [ctypes.c_void_p]):
                    self.assertEqual("*" in p, t is ctypes.c_void_p, f"{e['name']}: {p}")
        depths = {k["label"]: k["depth"] for k in depth["kernels"]}
        self.assertEqual(depths["128x128x32, 3 stages as written"], "3 stages, kept; 1 k-tile per wgmma group")
        self.assertIn("deepened from 3", depths["128x128x32, 3 stages deepened"])
        # gemm_unroll: the default unrolls the k-step (8 stages, 2 k-tiles a group), unroll = 1 not.
        unroll = {k["label"]: k["depth"] for e in m["experiments"] if e["name"] == "gemm_unroll"
                  for k in e["kernels"]}
        self.assertEqual(unroll["128x128x32, unrolled (2 k-tiles a group, 8 stages)"],
                         "8 stages, deepened from 3; 2 k-tiles per wgmma group")
        self.assertIn("1 k-tile per wgmma group", unroll["128x128x32, unroll=1 (deepened, 7 stages)"])
        # conv_im2col: its three tile choices emitted (none refused), the default deepened as the
        # corpus port's --explain says.
        conv = next(e for e in m["experiments"] if e["name"] == "conv_im2col")
        self.assertEqual(len(conv["kernels"]), 3)
        for k in conv["kernels"]:
            self.assertTrue(os.path.exists(os.path.join(self.kit_dir, k["cu"])), k["cu"])
            self.assertEqual(k["launcher"], "tl_convolution")
        self.assertIn("deepened from 3", conv["kernels"][0]["depth"])
        py = m["python"]
        self.assertEqual(sorted(py["modules"]), ["sm80", "sm90"])
        for module in py["modules"].values():
            for f in ("cu", "binding"):
                self.assertTrue(os.path.exists(os.path.join(self.kit_dir, module[f])), module[f])
            self.assertTrue(os.path.exists(os.path.join(self.kit_dir, os.path.dirname(module["cu"]), "gemm.h")))
        for script in py["scripts"]:
            with open(os.path.join(self.kit_dir, script)) as f:
                compile(f.read(), script, "exec")  # no GPU here to run them: at least they parse
        # The kit's kernel is the example's: the same -D values as examples/python/CMakeLists.txt.
        with open(os.path.join(prepare.ROOT, "examples/python/CMakeLists.txt")) as f:
            self.assertIn(" ".join(f"-D {d}" for d in py["defines"]), f.read())


class PythonPhase(unittest.TestCase):
    def test_flavour_for(self):
        self.assertEqual([python_phase.flavour_for(a) for a in ("sm_90a", "sm_80", "sm_89", "sm_100", "sm_75")],
                         ["sm90", "sm80", "sm80", "sm80", None])

    def test_summary(self):
        r = python_phase.summarise("t.py", 1, "ok: a\nFAIL: b\n7 passed, 1 failed\n", 2.04)
        self.assertEqual((r["status"], r["passed"], r["failed"], r["failures"], r["seconds"]),
                         ("fail", 7, 1, ["FAIL: b"], 2.0))
        crashed = python_phase.summarise("t.py", 1, "Traceback ...\nRuntimeError: x\n", 1)
        self.assertEqual((crashed["status"], crashed["failed"]), ("fail", 1))
        self.assertEqual(python_phase.summarise("torch_op.py", 0, "fine\n", 1)["status"], "pass")
        self.assertEqual(python_phase.summarise("t.py", None, "", 300)["status"], "timeout")

    def test_build_here(self):
        """The phase's build commands on the prepared kit, for sm_90a: the kernel by nvcc, the
        binding by the host compiler, linked; the module imports (nothing in it runs)."""
        if not Manifest.kit_dir:
            self.skipTest("no kit folder given")
        include = python_phase.pybind11_include()
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not include or not os.path.exists(nvcc):
            self.skipTest(f"no pybind11 headers ({include}) or no nvcc ({nvcc})")
        with open(os.path.join(Manifest.kit_dir, "kit.json")) as f:
            manifest = json.load(f)
        with tempfile.TemporaryDirectory() as d:
            module_dir, failures = python_phase.build(Manifest.kit_dir, manifest, "sm_90a", d, nvcc)
            self.assertEqual(failures, [])
            commands, path = python_phase.build_commands(Manifest.kit_dir, manifest["python"]["modules"]["sm90"],
                                                         "sm_90a", d, nvcc, include)
            self.assertEqual((module_dir, [c[0] for c in commands][::2]), (d, [nvcc, nvcc]))
            self.assertIn("-arch=sm_90a", commands[0])
            self.assertTrue(os.path.exists(path))
            # Imports without a GPU: the CUDA runtime is linked in and starts only when called.
            r = subprocess.run([sys.executable, "-c", "import gemm; print(gemm.target)"], cwd=d,
                               capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stdout.strip()), (0, "sm90"), r.stderr)
        # A kit without the python entries (prepared before them) says so.
        _, failures = python_phase.build(Manifest.kit_dir, {}, "sm_90a", "/nonexistent", nvcc)
        self.assertIn("prepare it again", failures[0][1])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        Manifest.kit_dir = sys.argv.pop(1)
    unittest.main(verbosity=1)
