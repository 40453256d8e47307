#!/usr/bin/env python3
"""The differential tester's driver (issue 13): random kernels from gen.py, compiled by tlc for
each target, run (cpu natively with OpenMP; sm80/sm90/gfx90a through the SIMT simulator), and
compared with the reference evaluator tlc-eval (or, with --ref=cpu, with the cpu output).

    difftest.py [--count N] [--seed S] [--targets cpu,sm80,sm90,gfx90a] [--jobs J] [--keep]
                [--batch B] [--ref eval|cpu] [--build-dir DIR] [--work DIR] [--findings DIR]
                [--cpu-flags='-march=native']   (the cpu output's AVX-512 forms, where the CPU has them)
    difftest.py --program DIR/pS.tl [--targets ...]     one program (its .json and .in.bin beside it)

Many programs link into one executable per target per batch: tlc writes each with
--namespace=dt_pS --c-prefix=dtS_, a generated harness calls each program's extern "C" launcher
(the argument order parsed from the generated header), converting the input file's doubles to
the dtypes' bytes and the outputs back. Every program runs in its own process (the executable
with the program's index), so a crash or a hang is that program's alone.

Findings (a mismatch, a crash, a tlc internal error, emitted code g++ rejects, a simulator
deadlock, a launcher that refuses what its header says it accepts) go to
FINDINGS_DIR/<seed>-<target>/ with the program, its data, the outputs and a repro.sh. The last
line is `difftest: N passed, N failed`.
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import dtypes  # noqa: E402
import gen  # noqa: E402
import gen_whole  # noqa: E402

TARGETS = ["cpu", "sm80", "sm90", "gfx90a"]
# A target that refuses a program for want of fp8 matrix instructions runs the output of the
# nearest target that has them, in the same simulator (as tests/run does).
FP8_SUBSTITUTE = {"sm80": "sm89", "gfx90a": "gfx942"}
LANES = {"sm80": 32, "sm89": 32, "sm90": 32, "gfx90a": 64, "gfx942": 64}

TLC_TIMEOUT, CXX_TIMEOUT, RUN_TIMEOUT, EVAL_TIMEOUT = 60, 900, 180, 180


def run(cmd, timeout, cwd=None):
    """Runs cmd; returns (returncode, stdout+stderr text); returncode None on a timeout. A
    program that cannot be started (tlc being rebuilt and replaced) is tried again for a while."""
    for attempt in range(30):
        try:
            r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
            return r.returncode, r.stdout.decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace")
            return None, out + f"\n[timeout after {timeout} s]"
        except OSError as e:
            if attempt == 29:
                raise
            print(f"difftest: cannot start {cmd[0]} ({e}); trying again in 10 s", file=sys.stderr, flush=True)
            time.sleep(10)


# ---------------------------------------------------------------------------------------------
# One program: its files and what happened to it on each target.
# ---------------------------------------------------------------------------------------------


class Prog:
    def __init__(self, tl, work=None):
        self.tl = os.path.abspath(tl)
        base = self.tl[:-3]
        self.meta = json.load(open(base + ".json"))
        self.inbin = base + ".in.bin"
        self.seed = self.meta["seed"]
        if not os.path.exists(self.inbin):
            # A hand-kept program (tests/difftest/regressions/) has no data file: its inputs come
            # from the JSON's value sets, drawn with its seed.
            self.inbin = os.path.join(work, f"p{self.seed}.in.bin")
            gen.write_bin(self.inbin, inputs_from_meta(self.meta))
        self.dir = os.path.dirname(self.tl)
        self.results = {}   # target -> Result
        self.ref = None     # path of the reference output
        self.ref_note = ""

    def dflags(self):
        return ["-D" + d for d in self.meta["dflags"]]

    def tensors(self):
        return [q for q in self.meta["params"] if q["kind"] == "tensor"]


def inputs_from_meta(meta):
    """Every parameter's values, in order, drawn from its value set with the program's seed;
    never all zero where the set has another value."""
    import random
    rng = random.Random(meta["seed"])
    data = []
    for q in meta["params"]:
        n = 1
        for e in q.get("extents", []):
            n *= e
        if "storage" in q:
            n = q["storage"]  # a strided tensor: the whole storage
        vals = [float(rng.choice(q["values"])) for _ in range(n)]
        nonzero = [v for v in q["values"] if v != 0]
        if nonzero and all(v == 0 for v in vals):
            vals[rng.randrange(n)] = float(rng.choice(nonzero))
        data.append((q["name"], vals))
    return data


class Result:
    """status: pass, fail (a finding), refused (tlc refused it for a hardware limit, or the
    launcher refused sizes its header said it would), skipped (no reference, or the generator's
    fault)."""

    def __init__(self, status, kind="", detail=""):
        self.status, self.kind, self.detail = status, kind, detail


# ---------------------------------------------------------------------------------------------
# tlc
# ---------------------------------------------------------------------------------------------


def internal_error(rc, out):
    return rc is None or rc not in (0, 1) or "internal error" in out.lower()


def compile_tlc(args, prog, target, outdir):
    """tlc for one target; returns (Result or None, source path, emitted target). For simulator
    targets the .cu/.hip becomes simulator C++ (tests/simt/to_cpp.py)."""
    os.makedirs(outdir, exist_ok=True)
    emitted = target
    ns = [f"--namespace=dt_p{prog.seed}", f"--c-prefix=dt{prog.seed}_"]
    for attempt in range(2):
        ext = "cpp" if emitted == "cpu" else ("cu" if emitted.startswith("sm") else "hip")
        out = os.path.join(outdir, f"p{prog.seed}.{ext}")
        cmd = [args.tlc, prog.tl, f"--target={emitted}", *prog.dflags(), *ns, "-o", out]
        rc, text = run(cmd, TLC_TIMEOUT)
        if internal_error(rc, text):
            return Result("fail", "tlc-crash" if rc is None or rc < 0 or rc > 2 else "tlc-internal",
                          f"{' '.join(cmd)}\nexit {rc}\n{text}"), None, emitted
        if rc == 1:
            if attempt == 0 and emitted in FP8_SUBSTITUTE and "fp8 matrix instructions" in text:
                emitted = FP8_SUBSTITUTE[emitted]
                continue
            return classify_refusal(prog, target, text, cmd), None, emitted
        break
    if emitted == "cpu":
        return None, out, emitted
    cpp = os.path.join(outdir, f"p{prog.seed}.sim.cpp")
    rc, text = run([sys.executable, os.path.join(ROOT, "tests/simt/to_cpp.py"), out, cpp,
                    "--lanes", str(LANES[emitted])], 60)
    if rc != 0:
        return Result("fail", "to_cpp", text), None, emitted
    return None, cpp, emitted


# Refusals that name a hardware limit (or a choice the program fixed that the target cannot
# honour) are allowed; any other exit-1 on a GPU target for a program cpu takes is a finding.
HARDWARE_WORDS = re.compile(r"shared memory|threads per block|fp8 matrix|cannot hold|cannot split|"
                            r"registers|tensor core|wgmma|mma|warps|stages fit|exceeds", re.I)


def classify_refusal(prog, target, text, cmd):
    located = re.search(r":\d+:\d+: error:", text) is not None
    if target == "cpu" or not located:
        return Result("fail", "tlc-rejects", f"{' '.join(cmd)}\n{text}")
    if HARDWARE_WORDS.search(text):
        first = next((l for l in text.splitlines() if "error:" in l), text[:200])
        return Result("refused", "tlc-hardware", first)
    return Result("fail", "tlc-rejects", f"{' '.join(cmd)}\n{text}")


# ---------------------------------------------------------------------------------------------
# The launcher's signature and its documented refusals, from the generated header.
# ---------------------------------------------------------------------------------------------


def parse_header(path, prefix, kernel):
    """(argument list [(ctype, name)], has workspace size function, refusal conditions)."""
    text = open(path).read()
    m = re.search(r'extern "C" int ' + re.escape(prefix + kernel) + r"\((.*?)\);", text, re.S)
    if not m:
        raise RuntimeError(f"{path}: no extern \"C\" launcher {prefix}{kernel}")
    argl = []
    for a in m.group(1).split(","):
        a = " ".join(a.split())
        name = re.search(r"(\w+)$", a).group(1)
        argl.append((a[: -len(name)].strip(), name))
    ws = f"{prefix}{kernel}_workspace_size" in text
    # "Returns ... unless: c1; c2; ... . An empty grid ..." in the launcher's comment.
    comment = " ".join(l.strip().lstrip("/").strip() for l in text.splitlines() if l.strip().startswith("//"))
    conds = []
    u = re.search(r"unless: (.*?)\. An empty grid", comment)
    if u:
        for c in re.findall(r"((?:[A-Za-z_]\w*|\d+)(?: [*+-] (?:[A-Za-z_]\w*|\d+))*) % (\d+) == 0", u.group(1)):
            conds.append(c)
        # TMA: "X is 16-byte aligned with rows a multiple of 16 bytes apart".
        for t, b in re.findall(r"(\w+) is \d+-byte aligned with rows a multiple of (\d+) bytes apart", u.group(1)):
            conds.append(("rowbytes:" + t, b))
        for t, b in re.findall(r"(\w+) is \d+-byte aligned with strides multiples of (\d+) bytes", u.group(1)):
            conds.append(("strides:" + t, b))
    return argl, ws, conds


def expected_refusal(prog, conds):
    """Whether the launcher's documented checks refuse this program's sizes."""
    sizes = prog.meta["sizes"]
    params = {q["name"]: q for q in prog.meta["params"]}
    for expr, mod in conds:
        if expr.startswith("rowbytes:"):
            q = params.get(expr[9:])
            if q and q["extents"]:
                row = q["extents"][-1] * dtypes.storage_bytes(q["dtype"])
                if q.get("stride_values") and len(q["stride_values"]) >= 2:
                    row = q["stride_values"][-2] * dtypes.storage_bytes(q["dtype"])
                if row % int(mod) != 0:
                    return f"{q['name']} rows of {row:g} bytes, not a multiple of {mod}"
            continue
        if expr.startswith("strides:"):
            q = params.get(expr[8:])
            ext = q["extents"] if q else []
            for d in range(len(ext) - 1):
                stride = math.prod(ext[d + 1:]) * dtypes.storage_bytes(q["dtype"])
                if q.get("stride_values"):
                    stride = q["stride_values"][d] * dtypes.storage_bytes(q["dtype"])
                if stride % int(mod) != 0:
                    return f"{q['name']} stride of {stride:g} bytes, not a multiple of {mod}"
            continue
        try:
            v = eval(expr, {"__builtins__": {}}, dict(sizes))
        except Exception:
            continue
        if v % int(mod) != 0:
            return f"{expr} % {mod} != 0"
    return None


# ---------------------------------------------------------------------------------------------
# The harness: one C++ file per batch.
# ---------------------------------------------------------------------------------------------

HARNESS_HEAD = r'''// Generated by tests/difftest/difftest.py: calls each program's extern "C" launcher on the
// inputs of an input file and writes its tensors to an output file (tests/difftest/README.md).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace dth {

struct Entry {
    std::string name;
    std::vector<double> v;
};

std::vector<Entry> readBin(const char* path) {
    std::vector<Entry> out;
    FILE* f = std::fopen(path, "rb");
    if (!f) { std::fprintf(stderr, "cannot read %s\n", path); std::exit(2); }
    char magic[8];
    uint32_t count = 0;
    if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, "TLCDATA1", 8) != 0 ||
        std::fread(&count, 4, 1, f) != 1) { std::fprintf(stderr, "%s: bad data file\n", path); std::exit(2); }
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t len = 0;
        uint64_t n = 0;
        Entry e;
        if (std::fread(&len, 4, 1, f) != 1) std::exit(2);
        e.name.resize(len);
        if (len && std::fread(&e.name[0], 1, len, f) != len) std::exit(2);
        if (std::fread(&n, 8, 1, f) != 1) std::exit(2);
        e.v.resize(n);
        if (n && std::fread(e.v.data(), 8, n, f) != n) std::exit(2);
        out.push_back(std::move(e));
    }
    std::fclose(f);
    return out;
}

void writeBin(const char* path, const std::vector<Entry>& es) {
    FILE* f = std::fopen(path, "wb");
    if (!f) { std::fprintf(stderr, "cannot write %s\n", path); std::exit(2); }
    uint32_t count = uint32_t(es.size());
    std::fwrite("TLCDATA1", 1, 8, f);
    std::fwrite(&count, 4, 1, f);
    for (const auto& e : es) {
        uint32_t len = uint32_t(e.name.size());
        uint64_t n = e.v.size();
        std::fwrite(&len, 4, 1, f);
        std::fwrite(e.name.data(), 1, len, f);
        std::fwrite(&n, 8, 1, f);
        std::fwrite(e.v.data(), 8, n, f);
    }
    std::fclose(f);
}

// Small float formats, written out here (round to nearest even; e4m3 saturates to 448, the
// others overflow to infinity): the harness must not depend on the generated headers' types.
struct Fmt { int e, m, bias; bool hasInf; int total; };
const Fmt F16{5, 10, 15, true, 16}, BF16{8, 7, 127, true, 16}, E4M3{4, 3, 7, false, 8}, E5M2{5, 2, 15, true, 8};

double maxFinite(const Fmt& f) {
    if (f.hasInf) return (2 - std::ldexp(1.0, -f.m)) * std::ldexp(1.0, (1 << f.e) - 2 - f.bias);
    return (2 - std::ldexp(1.0, -(f.m - 1))) * std::ldexp(1.0, (1 << f.e) - 1 - f.bias);
}

uint32_t encodeFinite(const Fmt& f, double a) {
    if (a == 0) return 0;
    int ex;
    std::frexp(a, &ex);  // a = frac * 2^ex, frac in [0.5, 1)
    ex -= 1;
    if (ex < 1 - f.bias) ex = 1 - f.bias;
    double scaled = std::ldexp(a, f.m - ex);
    double q = std::floor(scaled), rest = scaled - q;
    if (rest > 0.5 || (rest == 0.5 && std::fmod(q, 2.0) == 1.0)) q += 1;
    uint64_t qi = uint64_t(q);
    if (qi >= (uint64_t(2) << f.m)) { qi >>= 1; ex += 1; }
    if (qi < (uint64_t(1) << f.m)) return uint32_t(qi);
    return uint32_t((uint64_t(ex + f.bias) << f.m) | (qi - (uint64_t(1) << f.m)));
}

uint32_t encode(const Fmt& f, double v) {
    uint32_t sign = std::signbit(v) ? 1u << (f.total - 1) : 0u;
    double a = std::fabs(v);
    if (std::isnan(a)) return sign | ((1u << (f.total - 1)) - 1u);
    uint32_t maxCode = encodeFinite(f, maxFinite(f)), infCode = ((1u << f.e) - 1u) << f.m;
    if (std::isinf(a)) return sign | (f.hasInf ? infCode : maxCode);
    uint32_t code = encodeFinite(f, a);
    if (code > maxCode) code = f.hasInf ? infCode : maxCode;
    return sign | code;
}

double decode(const Fmt& f, uint32_t code) {
    double sign = (code >> (f.total - 1)) & 1u ? -1.0 : 1.0;
    uint32_t ex = (code >> f.m) & ((1u << f.e) - 1u), man = code & ((1u << f.m) - 1u);
    if (f.hasInf && ex == (1u << f.e) - 1u) return man ? NAN : sign * INFINITY;
    if (!f.hasInf && ex == (1u << f.e) - 1u && man == (1u << f.m) - 1u) return NAN;
    if (ex == 0) return sign * std::ldexp(double(man), 1 - f.bias - f.m);
    return sign * std::ldexp(1.0 + std::ldexp(double(man), -f.m), int(ex) - f.bias);
}

enum Dt { F16_, BF16_, E4M3_, E5M2_, F32_, F64_, I8_, I16_, I32_, I64_, U8_, U16_, U32_, U64_, BOOL_, I4_, U4_ };

size_t elemBytes(Dt d) {
    switch (d) {
    case F16_: case BF16_: case I16_: case U16_: return 2;
    case E4M3_: case E5M2_: case I8_: case U8_: case BOOL_: return 1;
    case F32_: case I32_: case U32_: return 4;
    default: return 8;
    }
}

// A tensor's storage: 256-byte aligned, padded, zero-filled; the tensor starts `shift` elements
// into it (a view with an offset: then only element-aligned, which the GPU launchers run through
// the general variant). p is the tensor's first element.
struct Buf {
    Dt dt;
    size_t n;
    unsigned char* base;
    unsigned char* p;
    Buf(Dt d, const std::vector<double>& v, size_t shift = 0) : dt(d), n(v.size()) {
        if (d == I4_ || d == U4_) shift = 0;  // packed two to a byte
        size_t used = (d == I4_ || d == U4_) ? (n + 1) / 2 : (n + shift) * elemBytes(d);
        size_t bytes = (used + 64 + 255) / 256 * 256;
        base = static_cast<unsigned char*>(std::aligned_alloc(256, bytes));
        std::memset(base, 0, bytes);
        p = base + shift * elemBytes(d);
        for (size_t i = 0; i < n; ++i) put(i, v[i]);
    }
    ~Buf() { std::free(base); }
    Buf(const Buf&) = delete;
    template <typename T> void st(size_t i, T x) { std::memcpy(p + i * sizeof(T), &x, sizeof(T)); }
    template <typename T> T ld(size_t i) const { T x; std::memcpy(&x, p + i * sizeof(T), sizeof(T)); return x; }
    void put(size_t i, double v) {
        switch (dt) {
        case F16_: st<uint16_t>(i, uint16_t(encode(F16, v))); break;
        case BF16_: st<uint16_t>(i, uint16_t(encode(BF16, v))); break;
        case E4M3_: st<uint8_t>(i, uint8_t(encode(E4M3, v))); break;
        case E5M2_: st<uint8_t>(i, uint8_t(encode(E5M2, v))); break;
        case F32_: st<float>(i, float(v)); break;
        case F64_: st<double>(i, v); break;
        case I8_: st<int8_t>(i, int8_t(v)); break;
        case I16_: st<int16_t>(i, int16_t(v)); break;
        case I32_: st<int32_t>(i, int32_t(v)); break;
        case I64_: st<int64_t>(i, int64_t(v)); break;
        case U8_: st<uint8_t>(i, uint8_t(v)); break;
        case U16_: st<uint16_t>(i, uint16_t(v)); break;
        case U32_: st<uint32_t>(i, uint32_t(v)); break;
        case U64_: st<uint64_t>(i, uint64_t(v)); break;
        case BOOL_: st<uint8_t>(i, v != 0); break;
        // 4-bit types, two per byte: element 2k in the low nibble of byte k, 2k + 1 in the high
        // one (an assumption: tlc does not emit 4-bit values yet, FINDINGS.md 4).
        case I4_: case U4_: {
            unsigned nib = unsigned(int64_t(v)) & 0xfu;
            p[i / 2] = (unsigned char)(i % 2 ? (p[i / 2] & 0x0f) | (nib << 4) : (p[i / 2] & 0xf0) | nib);
            break;
        }
        }
    }
    double get(size_t i) const {
        switch (dt) {
        case F16_: return decode(F16, ld<uint16_t>(i));
        case BF16_: return decode(BF16, ld<uint16_t>(i));
        case E4M3_: return decode(E4M3, ld<uint8_t>(i));
        case E5M2_: return decode(E5M2, ld<uint8_t>(i));
        case F32_: return ld<float>(i);
        case F64_: return ld<double>(i);
        case I8_: return ld<int8_t>(i);
        case I16_: return ld<int16_t>(i);
        case I32_: return ld<int32_t>(i);
        case I64_: return double(ld<int64_t>(i));
        case U8_: return ld<uint8_t>(i);
        case U16_: return ld<uint16_t>(i);
        case U32_: return ld<uint32_t>(i);
        case U64_: return double(ld<uint64_t>(i));
        case BOOL_: return ld<uint8_t>(i) != 0;
        case I4_: case U4_: {
            int nib = (p[i / 2] >> (i % 2 ? 4 : 0)) & 0xf;
            return dt == I4_ && nib >= 8 ? nib - 16 : nib;
        }
        }
        return 0;
    }
    std::vector<double> values() const {
        std::vector<double> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = get(i);
        return v;
    }
};

}  // namespace dth

'''

DT_ENUM = {"f16": "F16_", "bf16": "BF16_", "f8e4m3": "E4M3_", "f8e5m2": "E5M2_", "f32": "F32_", "f64": "F64_",
           "i8": "I8_", "i16": "I16_", "i32": "I32_", "i64": "I64_", "u8": "U8_", "u16": "U16_",
           "u32": "U32_", "u64": "U64_", "bool": "BOOL_",
           "i4": "I4_", "u4": "U4_"}


def harness_function(prog, header):
    """C++ of run_pS(in, out) for one program, from its launcher's signature."""
    kernel, prefix = prog.meta["kernel"], f"dt{prog.seed}_"
    argl, ws, _ = parse_header(header, prefix, kernel)
    params = {q["name"]: (i, q) for i, q in enumerate(prog.meta["params"])}
    sizes = prog.meta["sizes"]
    decl = f'extern "C" int {prefix}{kernel}({", ".join(t + " " + n for t, n in argl)});\n'
    if ws:
        size_args = [(t, n) for t, n in argl if n in sizes]
        decl += f'extern "C" size_t {prefix}{kernel}_workspace_size({", ".join(t + " " + n for t, n in size_args)});\n'
    body = [f"int run_p{prog.seed}(const char* in, const char* out) {{",
            "    auto e = dth::readBin(in);",
            f"    if (e.size() != {len(prog.meta['params'])}) {{ std::fprintf(stderr, \"bad input file\\n\"); return 2; }}"]
    call = []
    for t, n in argl:
        if n in params:
            i, q = params[n]
            if q["kind"] == "tensor":
                body.append(f"    dth::Buf b_{n}(dth::{DT_ENUM[q['dtype']]}, e[{i}].v, {prog.meta.get('offset', 0)});")
                call.append(f"b_{n}.p")
            else:
                call.append(f"({t})e[{i}].v[0]")
        elif n in sizes:
            call.append(str(sizes[n]))
        elif n == "workspace":
            sz = ", ".join(str(sizes[s]) for s_t, s in argl if s in sizes)
            body.append(f"    size_t wsBytes = {prefix}{kernel}_workspace_size({sz});")
            body.append("    void* ws = std::aligned_alloc(256, (wsBytes + 255) / 256 * 256 + 256);")
            call.append("ws")
        elif n == "stream":
            call.append("nullptr")
        else:
            raise RuntimeError(f"launcher argument {n} is neither a parameter, a size nor workspace")
    body.append(f"    int status = {prefix}{kernel}({', '.join(call)});")
    body.append('    if (status != 0) { std::printf("status %d\\n", status); return 3; }')
    outs = [q["name"] for q in prog.tensors()]
    body.append("    dth::writeBin(out, {" + ", ".join(f'{{"{n}", b_{n}.values()}}' for n in outs) + "});")
    body.append("    return 0;")
    body.append("}")
    return decl + "\n".join(body) + "\n"


def harness_source(progs_headers):
    parts = [HARNESS_HEAD]
    for prog, header in progs_headers:
        parts.append(harness_function(prog, header))
    parts.append("int main(int argc, char** argv) {")
    parts.append('    if (argc != 4) { std::fprintf(stderr, "usage: %s SEED IN OUT\\n", argv[0]); return 2; }')
    parts.append("    long seed = std::atol(argv[1]);")
    for prog, _ in progs_headers:
        parts.append(f"    if (seed == {prog.seed}) return run_p{prog.seed}(argv[2], argv[3]);")
    parts.append('    std::fprintf(stderr, "no program %ld\\n", seed);')
    parts.append("    return 2;")
    parts.append("}")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------
# Building a batch for one target.
# ---------------------------------------------------------------------------------------------


def cxx_flags(args, target):
    if target == "cpu":
        return ["g++", "-std=c++17", "-O2", "-fopenmp", "-w", *args.cpu_flags.split()]
    return ["g++", "-std=c++17", "-O1", "-w", "-I", os.path.join(ROOT, "tests/simt/include"), "-DTLC_RUN_GPU"]


def build_batch(args, pool, target, items, bdir):
    """items: [(prog, source, header)]. Compiles every program's source in one translation unit
    (a unity build: ten times faster than one g++ per program, which mostly parses the same
    headers again) beside the harness, and links them. When the unity build fails, each program
    is compiled alone: one g++ rejects is a finding, and the others are linked from their own
    objects. Returns the executable (or None) and {seed: Result} for programs that failed."""
    os.makedirs(bdir, exist_ok=True)
    flags = cxx_flags(args, target)
    failed = {}
    try:
        hsrc = os.path.join(bdir, "harness.cpp")
        with open(hsrc, "w") as f:
            f.write(harness_source([(p, h) for p, s, h in items]))
    except RuntimeError as e:
        for p, _, _ in items:
            failed[p.seed] = Result("skipped", "harness", str(e))
        return None, failed
    # One unity file per job, so that both cores work; a program g++ rejects sinks its chunk only.
    nchunks = max(1, min(args.jobs, len(items)))
    chunks = [items[i::nchunks] for i in range(nchunks)]
    hobj = os.path.join(bdir, "harness.o")
    hjob = pool.submit(run, ["g++", "-std=c++17", "-O1", "-c", hsrc, "-o", hobj], CXX_TIMEOUT)

    def unity_obj(ci, chunk):
        unity = os.path.join(bdir, f"unity{ci}.cpp")
        with open(unity, "w") as f:
            f.write("// Programs in one translation unit (each includes its header by a path relative\n"
                    "// to itself).\n")
            for p, src, h in chunk:
                f.write(f'#include "{src}"\n')
        o = os.path.join(bdir, f"unity{ci}.o")
        rc, text = run(flags + ["-c", unity, "-o", o], CXX_TIMEOUT)
        return chunk, o, rc, text

    def obj(prog, src):
        o = os.path.join(bdir, f"p{prog.seed}.o")
        cmd = flags + ["-c", src, "-o", o]
        rc, text = run(cmd, CXX_TIMEOUT)
        return prog, o, rc, text, cmd

    objs = []
    for chunk, o, rc, text in list(pool.map(lambda c: unity_obj(*c), enumerate(chunks))):
        if rc == 0:
            objs.append(o)
            continue
        # Each program of the chunk alone: the ones g++ rejects are findings.
        chunk_failed = 0
        for prog, po, prc, ptext, cmd in pool.map(lambda it: obj(it[0], it[1]), chunk):
            if prc == 0:
                objs.append(po)
            else:
                chunk_failed += 1
                failed[prog.seed] = Result("fail", "cxx-rejects" if prc is not None else "cxx-timeout",
                                           " ".join(cmd) + "\n" + ptext[-6000:])
        if not chunk_failed:
            print(f"difftest: note: a unity build in {bdir} fails but each program compiles alone:\n"
                  + text[-2000:], flush=True)
    hrc, htext = hjob.result()
    if hrc != 0:
        raise RuntimeError(f"the harness does not compile:\n{htext}")
    if failed:
        # The harness calls the failed programs' launchers: write it again without them.
        items = [it for it in items if it[0].seed not in failed]
        if not items:
            return None, failed
        with open(hsrc, "w") as f:
            f.write(harness_source([(p, h) for p, s, h in items]))
        rc, text = run(["g++", "-std=c++17", "-O1", "-c", hsrc, "-o", hobj], CXX_TIMEOUT)
        if rc != 0:
            raise RuntimeError(f"the harness does not compile:\n{text}")
    exe = os.path.join(bdir, "run")
    link = ["g++", "-o", exe, hobj] + objs + (["-fopenmp"] if target == "cpu" else [])
    rc, text = run(link, CXX_TIMEOUT)
    if rc != 0:
        # Programs whose symbols collide under distinct --namespace/--c-prefix: tlc's fault.
        for p, _, _ in items:
            failed[p.seed] = Result("fail", "link", text[-4000:])
        return None, failed
    return exe, failed


# ---------------------------------------------------------------------------------------------
# Running and comparing.
# ---------------------------------------------------------------------------------------------


def run_program(exe, prog, target, odir):
    out = os.path.join(odir, f"p{prog.seed}.{target}.out.bin")
    env_cmd = [exe, str(prog.seed), prog.inbin, out]
    rc, text = run(env_cmd, RUN_TIMEOUT)
    return rc, text, out


def compare(prog, got_path, ref_path, slack=1.0):
    """None when every tensor matches within its tolerance, else a description."""
    got = dict(gen.read_bin(got_path))
    ref = dict(gen.read_bin(ref_path))
    tol = prog.meta.get("tolerance", {})
    problems = []
    for q in prog.tensors():
        name = q["name"]
        if name not in got or name not in ref:
            problems.append(f"{name}: missing in {'output' if name not in got else 'reference'}")
            continue
        g, r = got[name], ref[name]
        if len(g) != len(r):
            problems.append(f"{name}: {len(g)} elements, reference {len(r)}")
            continue
        t = tol.get(name, {"atol": 0.0, "rtol": 0.0})
        atol = t["atol"] * slack + 1e-12
        rtol = t["rtol"] * slack
        bad = []
        for i, (a, b) in enumerate(zip(g, r)):
            if math.isnan(a) and math.isnan(b):
                continue
            if a == b:
                continue
            if not (abs(a - b) <= atol + rtol * abs(b)):
                bad.append(i)
        if bad:
            shape = q["extents"]
            ex = ", ".join(f"[{index_text(i, shape)}] {g[i]!r} vs {r[i]!r}" for i in bad[:6])
            problems.append(f"{name} ({q['dtype']}{shape}, atol {atol:.3g}, rtol {rtol:.3g}): "
                            f"{len(bad)} of {len(g)} differ: {ex}")
    return "\n".join(problems) or None


def index_text(i, shape):
    idx = []
    for d in reversed(shape):
        idx.append(i % d)
        i //= d
    return ", ".join(map(str, reversed(idx)))


def reference(args, prog, odir):
    """The evaluator's output for a program, or None with a note; a whole-tensor program
    (gen_whole.py) brings its own, computed from the formula (tlc-eval would run tlc's lowering
    of it)."""
    if prog.meta.get("reference"):
        return os.path.join(prog.dir, prog.meta["reference"]), ""
    out = os.path.join(odir, f"p{prog.seed}.ref.bin")
    cmd = [args.eval, prog.tl, "--kernel", prog.meta["kernel"], *prog.dflags()]
    for s, v in prog.meta["sizes"].items():
        cmd += ["--size", f"{s}={v}"]
    cmd += ["--in", prog.inbin, "--out", out]
    rc, text = run(cmd, EVAL_TIMEOUT)
    if rc == 0:
        return out, ""
    what = {1: "front end rejects", 2: "usage/data error", 3: "unsupported", 4: "program fault"}.get(rc, f"exit {rc}")
    return None, f"tlc-eval: {what}: {text.strip()[:400]}"


# ---------------------------------------------------------------------------------------------
# Findings.
# ---------------------------------------------------------------------------------------------


def record_finding(args, prog, target, res, extra_files=()):
    d = os.path.join(args.findings, f"{prog.seed}-{target}")
    base = prog.tl[:-3]
    # Read first: the program may live in that folder already (a repro.sh run).
    files = {}
    for f in [prog.tl, base + ".json", prog.inbin, *extra_files]:
        if f and os.path.exists(f):
            files[os.path.basename(f)] = open(f, "rb").read()
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(content)
    with open(os.path.join(d, "log.txt"), "w") as f:
        f.write(f"seed {prog.seed} target {target}: {res.kind}\n{res.detail}\n")
    rel = os.path.relpath(ROOT, d)
    with open(os.path.join(d, "repro.sh"), "w") as f:
        f.write("#!/bin/sh\n# Reproduces this finding: compiles, runs and compares this one program.\n"
                f'cd "$(dirname "$0")" && exec python3 "{os.path.join(ROOT, "tests/difftest/difftest.py")}" '
                f"--program p{prog.seed}.tl --targets {target} --ref {args.ref} "
                + (f"--cpu-flags='{args.cpu_flags}' " if getattr(args, "cpu_flags", "") else "")
                + f"--build-dir \"{args.build_dir}\" \"$@\"\n")
    os.chmod(os.path.join(d, "repro.sh"), 0o755)
    return d


# ---------------------------------------------------------------------------------------------
# The run.
# ---------------------------------------------------------------------------------------------


def check_batch(args, pool, progs, targets, work):
    """Compiles, runs and compares a batch of programs on every target; fills prog.results."""
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    # Reference first (in parallel), so that a program the evaluator cannot run is skipped.
    if args.ref == "eval" or any(p.meta.get("reference") for p in progs):
        refs = list(pool.map(lambda p: reference(args, p, os.path.join(work, "out")), progs))
        for p, (ref, note) in zip(progs, refs):
            p.ref, p.ref_note = ref, note
    order = targets if args.ref != "cpu" or "cpu" in targets else ["cpu"] + targets
    for target in order:
        tdir = os.path.join(work, target)
        t0 = time.time()
        compiled = list(pool.map(lambda p: (p, compile_tlc(args, p, target, os.path.join(tdir, f"p{p.seed}"))), progs))
        items = []
        for p, (res, src, emitted) in compiled:
            if res is not None:
                p.results[target] = res
            else:
                hdr = os.path.splitext(src.replace(".sim.cpp", ".cpp"))[0] + ".h"
                items.append((p, src, hdr))
                if emitted != target:
                    p.results.setdefault("_emitted", {})[target] = emitted
        if not items:
            continue
        t1 = time.time()
        exe, failed = build_batch(args, pool, target, items, os.path.join(tdir, "build"))
        t2 = time.time()
        for seed, res in failed.items():
            next(p for p in progs if p.seed == seed).results[target] = res
        if exe is None:
            continue
        runnable = [(p, h) for p, s, h in items if p.seed not in failed]
        outs = list(pool.map(lambda ph: (ph[0], ph[1], run_program(exe, ph[0], target, os.path.join(work, "out"))), runnable))
        for p, hdr, (rc, text, out) in outs:
            p.results[target] = judge(args, p, target, hdr, rc, text, out)
        if args.verbose:
            print(f"difftest:   {target}: tlc {t1 - t0:.1f} s, g++ {t2 - t1:.1f} s, run {time.time() - t2:.1f} s",
                  flush=True)
    for p in progs:
        if args.ref == "cpu" and "cpu" not in targets:
            p.results.pop("cpu", None)


def judge(args, p, target, header, rc, text, out):
    _, _, conds = parse_header(header, f"dt{p.seed}_", p.meta["kernel"])
    expect = expected_refusal(p, conds) if target != "cpu" else None
    if rc is None:
        return Result("fail", "hang", text[-3000:])
    if rc < 0 or rc in (134, 139):
        kind = "simt-deadlock" if "simt: deadlock" in text else "crash"
        return Result("fail", kind, f"signal/exit {rc}\n{text[-3000:]}")
    if rc == 3:
        if expect:
            return Result("refused", "launcher", f"{text.strip()} ({expect})")
        return Result("fail", "launcher-refuses", f"{text.strip()}: the header's checks all hold for sizes "
                                                  f"{p.meta['sizes']}")
    if rc != 0:
        return Result("fail", "harness", f"exit {rc}\n{text[-3000:]}")
    if expect:
        return Result("fail", "launcher-accepts", f"ran although {expect}")
    p.results.setdefault("_out", {})[target] = out
    # Against the reference.
    if args.ref == "cpu" and not p.meta.get("reference"):
        if target == "cpu":
            return Result("pass", "", "reference")
        ref = p.results.get("_out", {}).get("cpu")
        if ref is None:
            return Result("skipped", "no-reference", "cpu did not run")
        why = compare(p, out, ref, slack=2.0)
    else:
        if p.ref is None:
            return Result("skipped", "no-reference", p.ref_note)
        why = compare(p, out, p.ref)
    if why:
        return Result("fail", "mismatch", why)
    return Result("pass")


def report(args, progs, targets):
    passed = failed = 0
    lines = []
    for p in progs:
        for t in targets:
            r = p.results.get(t)
            if r is None:
                continue
            if r.status == "pass":
                passed += 1
            elif r.status == "fail":
                failed += 1
                extra = [p.results.get("_out", {}).get(t), p.ref,
                         p.results.get("_out", {}).get("cpu") if args.ref == "cpu" else None]
                d = record_finding(args, p, t, r, [x for x in extra if x])
                head = r.detail.strip().splitlines()[0][:160] if r.detail.strip() else ""
                lines.append(f"FAIL p{p.seed} {t}: {r.kind}: {head}  ({d})")
            elif args.verbose:
                lines.append(f"{r.status} p{p.seed} {t}: {r.kind} {r.detail.strip()[:160]}")
    for l in lines:
        print(l)
    return passed, failed


# ---------------------------------------------------------------------------------------------
# Coverage: feature tags x targets.
# ---------------------------------------------------------------------------------------------


def split_tag(tag):
    """A feature tag as (op, form): "copy|global->shared, f32->f16" (gen.py's op x form tags) or
    "what:form" (the others); a tag without either is an op of one form."""
    if "|" in tag:
        return tuple(tag.split("|", 1))
    if ":" in tag:
        return tuple(tag.split(":", 1))
    return tag, ""


def coverage(args, progs, targets):
    """coverage.json ({tag: {target: counts}}, added to with --accumulate) and coverage.md, the
    nested table: op x form x target."""
    path_json = os.path.join(args.out_dir, "coverage.json")
    table = {}
    if args.accumulate and os.path.exists(path_json):
        table = json.load(open(path_json))
    for p in progs:
        for feat in p.meta["features"]:
            row = table.setdefault(feat, {})
            for t in targets:
                r = p.results.get(t)
                if r is None:
                    continue
                cell = row.setdefault(t, {"pass": 0, "fail": 0, "refused": 0, "skipped": 0})
                cell[r.status] += 1
    os.makedirs(args.out_dir, exist_ok=True)
    json.dump(table, open(path_json, "w"), indent=1, sort_keys=True)
    cols = [t for t in TARGETS if any(t in v for v in table.values())]
    cols += sorted({t for v in table.values() for t in v} - set(cols))
    nested = {}
    for feat, row in table.items():
        op, form = split_tag(feat)
        nested.setdefault(op, {})[form] = row
    md = ["| op | form | " + " | ".join(cols) + " |", "| --- | --- |" + " --- |" * len(cols)]
    for op in sorted(nested):
        first = True
        for form in sorted(nested[op]):
            cells = []
            for t in cols:
                c = nested[op][form].get(t)
                if not c:
                    cells.append("")
                    continue
                cs = f"{c['pass']}/{c['pass'] + c['fail']}"
                if c["refused"]:
                    cs += f" (+{c['refused']} refused)"
                if c["skipped"]:
                    cs += f" (+{c['skipped']} skipped)"
                cells.append(cs)
            md.append(f"| {op if first else ''} | {form} | " + " | ".join(cells) + " |")
            first = False
    with open(os.path.join(args.out_dir, "coverage.md"), "w") as f:
        f.write("Coverage by op x form x target: programs passed/run (a program counts once per form it "
                "holds; refused: a hardware limit or a documented launcher check; skipped: no "
                "reference). Ops in `op|form` tags are read off the program text (gen.py's op_tags); "
                "the others are gen.py's feature tags `what:form`.\n\n" + "\n".join(md) + "\n")
    return "\n".join(md)


# ---------------------------------------------------------------------------------------------
# One program on one target (the reducer's check).
# ---------------------------------------------------------------------------------------------


def make_args(build_dir, ref="auto", jobs=2, cpu_flags=""):
    a = argparse.Namespace(build_dir=os.path.abspath(build_dir), jobs=jobs, verbose=False, ref=ref, cpu_flags=cpu_flags)
    a.tlc = os.path.join(a.build_dir, "tlc")
    a.eval = os.path.join(a.build_dir, "tests/difftest/tlc-eval")
    if a.ref == "auto":
        a.ref = "eval" if os.path.exists(a.eval) else "cpu"
    return a


def check_one(args, tl, target, work, pool=None):
    """Compiles, runs and compares the program tl on target; returns its Result."""
    prog = Prog(tl)
    own = pool is None
    pool = pool or cf.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        check_batch(args, pool, [prog], [target], work)
    finally:
        if own:
            pool.shutdown()
    return prog.results.get(target, Result("skipped", "nothing", "no result")), prog


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=40, help="programs per executable")
    ap.add_argument("--cpu-flags", default="",
                    help="more g++ flags for the cpu output, e.g. -march=native (its AVX-512 forms: tl::f32x16)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--ref", choices=["eval", "cpu", "auto"], default="auto",
                    help="reference: tlc-eval, or the cpu output (auto: tlc-eval when it is built)")
    ap.add_argument("--build-dir", default=os.environ.get("TLC_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--work", default=None, help="work folder (default /tmp/difftest-work-<seed>)")
    ap.add_argument("--findings", default=None)
    ap.add_argument("--program", action="append", default=[],
                    help="check these programs (or every .tl of these folders) instead of generating")
    ap.add_argument("--whole", action="store_true",
                    help="generate whole-tensor (beginner-level) kernels (gen_whole.py), checked against the "
                         "formula evaluated in double")
    ap.add_argument("--strict", action="store_true",
                    help="a program the evaluator cannot run (skipped) fails the run too")
    ap.add_argument("--accumulate", action="store_true", help="add to the coverage table of earlier runs")
    ap.add_argument("--coverage", action="store_true", help="print the coverage table")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    args.tlc = os.path.join(args.build_dir, "tlc")
    args.eval = os.path.join(args.build_dir, "tests/difftest/tlc-eval")
    if args.ref == "auto":
        args.ref = "eval" if os.path.exists(args.eval) else "cpu"
    # Whole-tensor runs keep their own coverage table and findings (CTest runs both slices at once).
    args.out_dir = os.path.join(args.build_dir, "difftest", "whole") if args.whole else os.path.join(args.build_dir, "difftest")
    args.findings = os.path.abspath(args.findings or os.path.join(args.out_dir, "findings"))
    targets = [t for t in args.targets.split(",") if t]
    if not os.path.exists(args.tlc):
        sys.exit(f"difftest: no tlc at {args.tlc} (build first, or set TLC_BUILD_DIR)")
    work = os.path.abspath(args.work or f"/tmp/difftest-work-{args.seed}-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    start = time.time()
    pool = cf.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    if args.program:
        files = []
        for t in args.program:
            files += sorted(os.path.join(t, f) for f in os.listdir(t) if f.endswith(".tl")) if os.path.isdir(t) else [t]
        progs = [Prog(t, work) for t in files]
    else:
        gdir = os.path.join(work, "progs")
        seeds = range(args.seed, args.seed + args.count)
        generate = gen_whole.generate if args.whole else gen.generate
        bases = list(pool.map(lambda s: generate(s, gdir), seeds))
        progs = [Prog(b + ".tl") for b in bases]
    refname = "the formula in double" if args.whole else "tlc-eval" if args.ref == "eval" else "cpu output"
    print(f"difftest: {len(progs)} {'whole-tensor ' if args.whole else ''}programs, targets {','.join(targets)}, "
          f"reference {refname}, work {work}", flush=True)
    for i in range(0, len(progs), args.batch):
        batch = progs[i:i + args.batch]
        t0 = time.time()
        check_batch(args, pool, batch, targets, os.path.join(work, f"batch{i // args.batch}"))
        print(f"difftest: batch {i // args.batch}: {len(batch)} programs in {time.time() - t0:.0f} s", flush=True)
    passed, failed = report(args, progs, targets)
    counts = {}
    for p in progs:
        for t in targets:
            r = p.results.get(t)
            if r and r.status in ("refused", "skipped"):
                counts[(r.status, r.kind)] = counts.get((r.status, r.kind), 0) + 1
    for (status, kind), n in sorted(counts.items()):
        print(f"difftest: {n} {status} ({kind})")
    if args.program and not args.accumulate and not args.coverage:
        # A check of given programs (a finding, the regressions) leaves the campaigns' table be.
        print(f"difftest: {time.time() - start:.0f} s")
    else:
        table = coverage(args, progs, targets)
        if args.coverage:
            print(table)
        print(f"difftest: {time.time() - start:.0f} s; coverage in {os.path.join(args.out_dir, 'coverage.md')}")
    if not args.keep and not args.program:
        shutil.rmtree(work, ignore_errors=True)
    skipped = sum(n for (status, _), n in counts.items() if status == "skipped")
    if args.strict and skipped:
        print(f"difftest: {skipped} skipped (--strict: the evaluator must run every program)")
        failed += skipped
    print(f"difftest: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
