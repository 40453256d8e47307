#!/usr/bin/env python3
"""Runs a command and reports its exit status, for lit tests of exit codes.

    RUN: %exitcode %tlc --bogus | FileCheck %s
    CHECK: exit code: 2

The command's stdout and stderr are printed (merged, in the order the command wrote them) on
this script's stdout, followed by the line "exit code: N". This script itself exits with 0,
unless the command could not be started or was killed by a signal (a crash is never a pass).
"""
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit("usage: exitcode.py COMMAND [ARG...]")
proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.buffer.write(proc.stdout)
print(f"exit code: {proc.returncode}")
sys.exit(0 if 0 <= proc.returncode < 128 else 1)
