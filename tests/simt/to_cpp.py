#!/usr/bin/env python3
"""Turns a tlc-emitted .cu file into C++ for the SIMT simulator: kernel launches
`k<<<grid, block, smem, stream>>>(args)` become `::simt::launch(k, grid, block, smem, stream, args)`
and dynamic shared memory gets a fixed size.

    to_cpp.py kernel.cu kernel.sim.cpp [--lanes 64]
"""
import re
import sys

# A launch too long for one line has its configuration on the next (tlc's GpuEmitter::emitLaunch).
LAUNCH = re.compile(r"(\w+)\s*<<<(.+?)>>>\(", re.S)
# Dynamic shared memory has its size set at launch; the simulator gives it the largest any
# target allows.
DYNAMIC_SMEM = re.compile(r"extern __shared__ (.*?)(\w+)\[\];")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    lanes = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--lanes" else "32"
    with open(src) as f:
        text = f.read()
    text, count = LAUNCH.subn(rf"::simt::launch<{lanes}>(\1, \2, ", text)
    text = DYNAMIC_SMEM.sub(r"__shared__ \1\2[262144];", text)
    if count == 0:
        sys.exit(f"{src}: no kernel launch found")
    with open(dst, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
