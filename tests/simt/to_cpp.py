#!/usr/bin/env python3
"""Turns a tlc-emitted .cu file into C++ for the SIMT simulator: kernel launches
`k<<<grid, block, smem, stream>>>(args)` become `::simt::launch(k, grid, block, smem, stream, args)`
(`::simt::launchCluster(k, dim3(cluster), grid, ...)` for a kernel declared with
`__cluster_dims__`) and dynamic shared memory gets a fixed size (in a file with clusters, a slot
per block of a cluster: simt::ctaShared picks the running block's).

    to_cpp.py kernel.cu kernel.sim.cpp [--lanes 64]
"""
import re
import sys

# A launch too long for one line has its configuration on the next (tlc's GpuEmitter::emitLaunch).
LAUNCH = re.compile(r"(\w+)\s*<<<(.+?)>>>\(", re.S)
# Dynamic shared memory has its size set at launch; the simulator gives it the largest any
# target allows.
DYNAMIC_SMEM = re.compile(r"extern __shared__ (.*?)(\w+)\[\];")
# A kernel of thread-block clusters: __cluster_dims__(x, y, z) before its name.
CLUSTER_KERNEL = re.compile(r"__cluster_dims__\(\s*(\d+),\s*(\d+),\s*(\d+)\)\s+(\w+)\(")
CLUSTER_SMEM = re.compile(r"extern __shared__ (__align__\(\d+\) )?(.*?)(\w+)\[\];")


def main():
    src, dst = sys.argv[1], sys.argv[2]
    lanes = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--lanes" else "32"
    with open(src) as f:
        text = f.read()
    clusters = {m.group(4): m.group(1, 2, 3) for m in CLUSTER_KERNEL.finditer(text)}

    def launch(m):
        name, config = m.group(1), m.group(2)
        if name in clusters:
            return f"::simt::launchCluster<{lanes}>({name}, dim3({', '.join(clusters[name])}), {config}, "
        return f"::simt::launch<{lanes}>({name}, {config}, "

    text, count = LAUNCH.subn(launch, text)
    if clusters:
        text = CLUSTER_SMEM.sub(
            r"__shared__ \1\2\3_slots[::simt::kMaxClusterBlocks][262144]; "
            r"\2* const \3 = ::simt::ctaShared(\3_slots[0], sizeof(\3_slots[0]));", text)
    else:
        text = DYNAMIC_SMEM.sub(r"__shared__ \1\2[262144];", text)
    if count == 0:
        sys.exit(f"{src}: no kernel launch found")
    with open(dst, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
