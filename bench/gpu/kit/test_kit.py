#!/usr/bin/env python3
"""What of the GPU kit's GPU side can be checked without a GPU (CTest gpu-kit-build): the arch
rules, the summary parsing and the report. python3 test_kit.py [KIT] (default: this folder)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kit  # noqa: E402


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
                    "sanitizer": [{"tool": "racecheck", "name": "run-samples-sm90", "status": "errors", "errors": 2,
                                   "seconds": 40, "tail": "RACE REPORT"}],
                    "bench": [{"title": "GEMM", "note": "ratios", "columns": ["kernel", "baseline / tlc"],
                               "rows": [["gemm_f16", "0.91"]]}]}, d)
                text = open(os.path.join(d, "report.md")).read()
                data = json.load(open(os.path.join(d, "report.json")))
            finally:
                kit.KIT = old
        self.assertIn("Device: NVIDIA H100 80GB HBM3 (compute capability 9.0", text)
        self.assertIn("sm_90a run-corpus-sm90: topk.o", text)
        self.assertIn("| run-corpus-sm90 | fail | 70 | 1 | 9 |", text)
        self.assertIn("FAIL topk M=5", text)
        self.assertIn("| racecheck | run-samples-sm90 | errors | 2 | 40 |", text)
        self.assertIn("| gemm_f16 | 0.91 |", text)
        self.assertEqual(data["tests"][1]["failed"], 1)


class Merge(unittest.TestCase):
    def test_parts_concatenate(self):
        dev = {"name": "H100"}
        a = {"device": dev, "minutes": 2.0, "phases": ["tests"], "tests": [{"name": "t"}], "sanitizer": [],
             "bench": [], "build_failures": []}
        b = {"device": dev, "minutes": 3.0, "phases": ["bench"], "tests": [], "sanitizer": [],
             "bench": [{"title": "GEMM"}], "build_failures": []}
        m = kit.merge_reports([a, b])
        self.assertEqual((m["phases"], m["minutes"], len(m["tests"]), len(m["bench"])), (["tests", "bench"], 5.0, 1, 1))
        with self.assertRaises(SystemExit):
            kit.merge_reports([a, dict(b, device={"name": "A100"})])


class Manifest(unittest.TestCase):
    """The prepared kit (argument 1) names files that exist, every kernel with a known target."""
    kit_dir = None

    def test_manifest(self):
        if not self.kit_dir:
            self.skipTest("no kit folder given")
        m = json.load(open(os.path.join(self.kit_dir, "kit.json")))
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


if __name__ == "__main__":
    if len(sys.argv) > 1:
        Manifest.kit_dir = sys.argv.pop(1)
    unittest.main(verbosity=1)
