"""What `ptxas -v` (nvcc -Xptxas -v) says about each kernel, and what of it a check fails on.

ptxas prints, per entry function, its registers and its stack frame with the spill traffic, and,
for wgmma code on sm_90a, advisories naming the function:
  (C7519) warpgroup.arrive is injected ... to allow use of registers in GMMA: registers a wgmma
          reads were written after wgmma.fence (tl_cuda_wgmma.h packs the rs form's A before it);
  (C7520) / (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized ...:
          ptxas waits after each wgmma (correct, but the asynchrony is gone).
A kernel fails on spills, on those advisories, and on a stack frame it was not allowed (a
per-thread array indexed at run time lives in local memory: as slow as a spill, and not counted
as one).
"""
import re

# Advisory codes that say ptxas fenced or serialised wgmma behind the program's back.
WGMMA_CODES = ("C7510", "C7519", "C7520")


def parse(verbose):
    """{function: {"registers", "stack", "spill_stores", "spill_loads", "codes"}} from ptxas -v."""
    kernels, current = {}, None

    def entry(name):
        return kernels.setdefault(name, {"registers": None, "stack": 0, "spill_stores": 0, "spill_loads": 0,
                                         "codes": set()})

    for line in verbose.splitlines():
        m = re.search(r"\((C\d{4})\).*function '(\w+)'", line)
        if m:
            entry(m.group(2))["codes"].add(m.group(1))
            continue
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = entry(m.group(1))
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current is not None:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            current["registers"] = int(m.group(1))
    return kernels


def problems(kernel, allow_stack=False, allow_codes=()):
    """Why a kernel fails the check (empty when it passes); `allow_codes`: wgmma advisories
    accepted for this kernel."""
    found = []
    if kernel["spill_stores"] or kernel["spill_loads"]:
        found.append(f"spills ({kernel['spill_stores']} bytes stored, {kernel['spill_loads']} loaded)")
    elif kernel["stack"] and not allow_stack:
        found.append(f"{kernel['stack']} bytes of stack frame (an array in local memory)")
    codes = sorted(c for c in kernel["codes"] if c in WGMMA_CODES and c not in allow_codes)
    if codes:
        found.append("wgmma fenced or serialised by ptxas (" + ", ".join(codes) + ")")
    return found


def short_name(mangled):
    """tl_kernels::gqa_fwd_bshd_kernel from _ZN10tl_kernels19gqa_fwd_bshd_kernelEPK6__half..."""
    if not mangled.startswith("_ZN"):
        return mangled
    parts, rest = [], mangled[3:]
    while rest and rest[0].isdigit():
        n = re.match(r"\d+", rest).group(0)
        parts.append(rest[len(n):len(n) + int(n)])
        rest = rest[len(n) + int(n):]
    return "::".join(parts) or mangled
