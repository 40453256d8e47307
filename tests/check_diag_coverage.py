#!/usr/bin/env python3
"""Checks that every diagnostic id tlc can emit is produced by at least one test.

The ids come from `tlc --list-diagnostics` (the table in src/support/Diagnostics.def). The
tests are the lit tests under tests/lit/diagnostics/ (more suites with --suite). They are run
through lit exactly as their RUN lines say, except that %tlc is replaced by this script in
--wrap mode, which runs tlc with the same flags plus --diagnostics-format=json (and without
--verify, which would replace the diagnostics by a verification report), records the id of
every diagnostic tlc printed, and passes tlc's output through. lit's verdicts are ignored
here: the lit-diagnostics test checks them.

Usage (CTest runs this):
  check_diag_coverage.py --tlc build/tlc --lit-dir build/tests/lit [--suite diagnostics]
                         [--lit /usr/lib/llvm-14/build/utils/lit/lit.py] [-v]

Exit status: 0 when every id is covered, 1 when some are not (they are listed), 2 when the
check itself could not run.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

DEFAULT_LITS = ["/usr/lib/llvm-14/build/utils/lit/lit.py"]


def json_diagnostics(stderr_text):
    """Every JSON array of diagnostics in tlc's stderr (other lines may surround it)."""
    decoder = json.JSONDecoder()
    found = []
    pos = 0
    while True:
        start = stderr_text.find("[", pos)
        if start < 0:
            return found
        # The array tlc prints starts at the beginning of a line.
        if start > 0 and stderr_text[start - 1] != "\n":
            pos = start + 1
            continue
        try:
            value, end = decoder.raw_decode(stderr_text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(value, list) and all(isinstance(d, dict) and "id" in d for d in value):
            found.extend(value)
        pos = end


def wrap(args):
    """--wrap mode: run tlc with JSON diagnostics, record the ids, pass the output through."""
    tlc_args = []
    skip_next = False
    had_verify = False
    for a in args.rest:
        if skip_next:
            skip_next = False
            continue
        if a in ("--verify", "-verify"):
            had_verify = True
            continue
        if a.startswith("--diagnostics-format="):
            continue
        if a == "--diagnostics-format":
            skip_next = True
            continue
        tlc_args.append(a)
    tlc_args.append("--diagnostics-format=json")
    # --verify runs the front end alone when no target is given; without --verify, tlc would
    # instead refuse to run without a target.
    has_target = any(a == "-t" or a.startswith("--target") or (a.startswith("-t") and len(a) > 2)
                     for a in tlc_args)
    if had_verify and not has_target:
        tlc_args.append("--syntax-only")
    proc = subprocess.run([args.tlc] + tlc_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr_text = proc.stderr.decode("utf-8", errors="replace")
    ids = []
    for d in json_diagnostics(stderr_text):
        ids.append(d["id"])
        ids.extend(n["id"] for n in d.get("notes", []) if "id" in n)
    with open(args.record, "a") as f:
        f.write(json.dumps({"args": tlc_args, "cwd": os.getcwd(), "ids": ids, "exit": proc.returncode}) + "\n")
    try:
        sys.stdout.buffer.write(proc.stdout)
        sys.stdout.flush()
        sys.stderr.buffer.write(proc.stderr)
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    return proc.returncode


def find_lit(explicit):
    for cand in ([explicit] if explicit else []) + DEFAULT_LITS:
        if cand and os.path.exists(cand):
            return [sys.executable, cand] if cand.endswith(".py") else [cand]
    for name in ("lit", "llvm-lit"):
        for d in os.environ.get("PATH", "").split(os.pathsep):
            if os.access(os.path.join(d, name), os.X_OK):
                return [os.path.join(d, name)]
    return None


def check(args):
    try:
        listed = subprocess.run([args.tlc, "--list-diagnostics"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_diag_coverage: cannot list the diagnostics with '{args.tlc} --list-diagnostics': {e}")
        return 2
    all_ids = [line.strip() for line in listed.splitlines() if line.strip()]
    if not all_ids:
        print("check_diag_coverage: tlc --list-diagnostics printed no ids")
        return 2
    lit = find_lit(args.lit)
    if not lit:
        print("check_diag_coverage: lit not found (install llvm-14-tools, or pass --lit)")
        return 2

    fd, record = tempfile.mkstemp(prefix="tlc-diag-coverage-", suffix=".jsonl")
    os.close(fd)
    try:
        for suite in args.suite:
            path = os.path.join(args.lit_dir, suite)
            cmd = lit + ["-q", "--param", f"tlc_coverage_record={record}",
                         "--param", f"tlc_coverage_script={os.path.abspath(__file__)}", path]
            # lit's own verdicts do not matter here (lit-<suite> checks them): the tests' flags
            # changed. Only the record of what tlc printed does.
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if args.verbose:
                print(proc.stdout.decode(errors="replace"))
        runs = []
        with open(record) as f:
            runs = [json.loads(line) for line in f if line.strip()]
    finally:
        os.unlink(record)

    if not runs:
        print(f"check_diag_coverage: no tlc run was recorded under {args.lit_dir} ({', '.join(args.suite)}); "
              "is lit.site.cfg.py there, and do the tests' RUN lines use %tlc?")
        return 2
    produced = {}
    for run in runs:
        for i in run["ids"]:
            produced[i] = produced.get(i, 0) + 1
    unknown = sorted(set(produced) - set(all_ids))
    missing = [i for i in all_ids if i not in produced]
    print(f"{len(runs)} tlc runs in {', '.join(args.suite)}; {len(all_ids) - len(missing)} of {len(all_ids)} "
          "diagnostic ids produced")
    if args.verbose:
        for i in all_ids:
            print(f"  {produced.get(i, 0):5d}  {i}")
    if unknown:
        # Cannot happen unless --list-diagnostics and the JSON disagree: that is a bug too.
        print("ids in the JSON output that --list-diagnostics does not list: " + ", ".join(unknown))
    if missing:
        print(f"{len(missing)} diagnostic id(s) are never produced by a test under tests/lit/"
              f"{{{','.join(args.suite)}}}; add a test (docs/testing.md says how):")
        for i in missing:
            print(f"  {i}")
    return 1 if (missing or unknown) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlc", required=True, help="the tlc binary")
    ap.add_argument("--lit-dir", help="<build>/tests/lit, where CMake wrote lit.site.cfg.py")
    ap.add_argument("--suite", action="append", help="subdirectory of tests/lit to run (default: diagnostics)")
    ap.add_argument("--lit", help="lit.py or lit executable")
    ap.add_argument("-v", "--verbose", action="store_true", help="print lit's output and a count per id")
    ap.add_argument("--wrap", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--record", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.wrap:
        if args.rest and args.rest[0] == "--":
            args.rest = args.rest[1:]
        return wrap(args)
    if not args.lit_dir:
        ap.error("--lit-dir is required")
    args.suite = args.suite or ["diagnostics"]
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
