#!/usr/bin/env python3
"""Random valid .tl kernels for the differential tester (issue 13).

    gen.py --seed S --out DIR        writes DIR/pS.tl, DIR/pS.json and DIR/pS.in.bin

The same seed always gives the same files. A kernel is a grid (1, 2 or 3 dimensions) whose
blocks each own a tile of a 2-D (or batched 3-D) problem and run a few independent *phases*:
an elementwise chain through shared/fragment/local buffers, a reduction, a cumsum, a gemm over
a K loop, atomic adds. Each phase writes its own output tensors, so phases never race with each
other, and every buffer element is written (copy, clear, fill) before it is read.

Values are chosen so the reference is well defined: inputs are small multiples of 1/4 (or small
integers), exactly representable in their dtype; arithmetic is tracked with a magnitude and an
error bound (value.Val) so that exact paths compare exactly and inexact ones (exp, tanh, ...) get
a tolerance derived from the dtypes and the accumulation lengths. The JSON records the
tolerance per output tensor.
"""
import argparse
import json
import re
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dtypes  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Values: magnitude bound, granularity and error bound of an expression.
# ---------------------------------------------------------------------------------------------


class Val:
    """An expression's text with what we know about its value: |v| <= mag, v is a multiple of
    2**-gran when exact, and |v - reference| <= err (err 0 when exact). dtype: its scalar type."""

    def __init__(self, text, dtype, mag, gran=0, err=0.0, exact=True):
        self.text, self.dtype, self.mag, self.gran = text, dtype, float(mag), gran
        self.err, self.exact = float(err), exact

    def rounded_to(self, dtype):
        """The value after it is computed in (or stored to) dtype: stays exact when dtype holds
        every multiple of 2**-gran up to mag; otherwise gains half an ulp at mag."""
        if dtypes.is_int(dtype):
            return Val(self.text, dtype, self.mag, 0, self.err, self.exact)
        if self.exact and dtypes.holds(dtype, self.mag, self.gran):
            return Val(self.text, dtype, self.mag, self.gran, self.err, True)
        return Val(self.text, dtype, self.mag, self.gran, self.err + self.mag * dtypes.eps(dtype), False)


def promote(a, b):
    """The language's promotion for two scalar dtypes (docs/language.md, Arithmetic)."""
    fa, fb = dtypes.is_float(a), dtypes.is_float(b)
    if fa != fb:
        return a if fa else b
    if a == b:
        return a
    if fa:
        if dtypes.bits(a) == dtypes.bits(b):
            return "f32"  # f16 with bf16, or two fp8 kinds
        return a if dtypes.bits(a) > dtypes.bits(b) else b
    return a if dtypes.bits(a) > dtypes.bits(b) else b


def binop(op, a, b):
    dt = promote(a.dtype, b.dtype)
    text = f"{a.text} {op} {b.text}"
    if op in "+-":
        v = Val(text, dt, a.mag + b.mag, max(a.gran, b.gran), a.err + b.err, a.exact and b.exact)
    elif op == "*":
        v = Val(text, dt, a.mag * b.mag, a.gran + b.gran, a.err * b.mag + b.err * a.mag + a.err * b.err,
                a.exact and b.exact)
    else:
        raise ValueError(op)
    return v.rounded_to(dt)


def call(fn, *args):
    """min/max/abs keep exactness; the math functions do not (float vs double, fast_* approximations)."""
    a = args[0]
    if fn in ("max", "min"):
        b = args[1]
        dt = promote(a.dtype, b.dtype)
        return Val(f"{fn}({a.text}, {b.text})", dt, max(a.mag, b.mag), max(a.gran, b.gran),
                   max(a.err, b.err), a.exact and b.exact).rounded_to(dt)
    if fn == "abs":
        return Val(f"abs({a.text})", a.dtype, a.mag, a.gran, a.err, a.exact)
    # (result bound, Lipschitz constant on the domain, relative error of the implementation)
    dt = a.dtype if dtypes.is_float(a.dtype) else "f32"
    rel = 4e-3 if fn.startswith("fast_") else 4e-6
    base = fn[5:] if fn.startswith("fast_") else fn
    m = a.mag
    bounds = {  # computed for `base` only: math.exp of a large bound overflows
        "exp": lambda: (math.exp(m), math.exp(m)),
        "exp2": lambda: (2 ** m, 2 ** m * 0.7),
        "tanh": lambda: (1.0, 1.0),
        "sigmoid": lambda: (1.0, 0.25),
        "erf": lambda: (1.0, 1.2),
        "sqrt": lambda: (math.sqrt(m), 1.0),       # only of (abs(x) + 1)
        "rsqrt": lambda: (1.0, 0.5),               # only of (abs(x) + 1)
        "log": lambda: (math.log(m + 1) + 1, 1.0),  # only of (abs(x) + 1)
        "log2": lambda: (math.log2(m + 1) + 1, 1.5),
    }
    mag, lip = bounds[base]()
    err = a.err * lip + mag * rel + (mag * dtypes.eps(dt) if dt != "f32" else 0)
    return Val(f"{fn}({a.text})", dt, mag, 0, err, False)


# ---------------------------------------------------------------------------------------------
# The program being built.
# ---------------------------------------------------------------------------------------------


class Param:
    def __init__(self, name, kind, dtype, shape=None, role="in", values=None, strides=None):
        self.name, self.kind, self.dtype = name, kind, dtype
        self.shape = shape or []      # list of size/tparam names or ints (as text)
        self.role = role              # in, out, inout (atomic targets: initial values matter)
        self.values = values          # the value set inputs are drawn from
        self.strides = strides        # None (row-major) or expressions over the sizes (as text)


class Program:
    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.name = f"k{seed}"
        self.tparams = []      # (name, text of default)
        self.dflags = []       # "NAME=VALUE" given with -D
        self.sizes = {}        # size name -> value
        self.vector_rows = False  # sizes kept to rows the GPU fast paths vectorise (build())
        # Every tensor starts this many elements into its buffer (a view with an offset, off
        # the 16-byte grid): drawn apart from the program's RNG, so that a seed's program stays
        # what it was.
        self.offset = 1 if random.Random(seed * 7919 + 17).random() < 0.2 else 0
        self.params = []
        self.host = []         # statements before the grid
        self.decls = []        # allocations at the top of the grid
        self.features = set()
        self.tolerance = {}    # output tensor -> {"atol", "rtol"}
        self.counter = 0
        self.stride_min = {}   # stride size -> [size it must not be below, padding]

    def fresh(self, stem):
        self.counter += 1
        return f"{stem}{self.counter}"

    def tparam(self, name, value):
        self.tparams.append((name, str(value)))
        return name

    def add_param(self, p):
        self.params.append(p)
        return p

    def tensor(self, stem, dtype, shape, role="in", values=None, strides=None):
        return self.add_param(Param(self.fresh(stem), "tensor", dtype, shape, role, values, strides))

    def tol(self, name, val, out_dtype, floor=0.0):
        """Records the tolerance of an output from the value written to it."""
        v = val.rounded_to(out_dtype)
        rtol = 0.0 if v.exact else 2 * dtypes.eps(out_dtype)
        atol = 0.0 if v.exact else 2 * v.err + floor
        if dtypes.is_int(out_dtype):
            rtol, atol = 0.0, 0.0
        old = self.tolerance.get(name, {"atol": 0.0, "rtol": 0.0})
        self.tolerance[name] = {"atol": max(old["atol"], atol), "rtol": max(old["rtol"], rtol)}


# Value sets per dtype: small, exactly representable, never only zeros.
def value_set(dtype, kind="small"):
    if dtype == "bool":
        return [0, 1]
    if dtypes.is_int(dtype):
        lo, hi = dtypes.int_range(dtype)
        span = 3 if kind == "gemm" else 6
        return [v for v in range(max(lo, -span), min(hi, span) + 1)]
    if kind == "gemm_f16acc":
        vals = [x / 2 for x in range(-2, 3)]
    elif kind == "gemm":
        vals = [x / 4 for x in range(-4, 5)]
    elif dtype == "f8e5m2":
        vals = [x / 4 for x in (-8, -6, -4, -2, -1, 0, 1, 2, 4, 6, 8)]
    else:
        vals = [x / 4 for x in range(-8, 9)]
    return [v for v in vals if dtypes.roundtrip(dtype, v) == v]


# ---------------------------------------------------------------------------------------------
# The block's context: which tile of the problem a block (or loop iteration) owns.
# ---------------------------------------------------------------------------------------------


class Ctx:
    """Grid shape and tile addressing. Tensors of the problem are [M, N] (or [B, M, N] with a
    3-D grid); the current tile starts at (row0, col0); tile indices (ti, tj) index per-tile
    outputs of shape [TM, ...] / [TN, ...]."""

    def __init__(self, prog, dims, bm, bn):
        self.prog, self.dims, self.bm, self.bn = prog, dims, bm, bn
        self.batch = dims == 3
        self.row0 = self.col0 = self.ti = self.tj = None
        self.wrap_open, self.wrap_close = [], []

    def lead(self):
        """Subscript prefix of the batch dimension."""
        return "bz, " if self.batch else ""

    def shape(self, *dims_):
        return (["B"] if self.batch else []) + list(dims_)


def choose_size(rng, aligned, vector_rows):
    if aligned:
        return rng.choice([16, 32, 48, 64, 80, 96])
    if vector_rows:
        return rng.choice(range(8, 101, 8))
    return rng.randint(1, 100)


def choose_pad(p, pads):
    """A row padding: any of pads, or only the multiples of 8 for programs whose sizes the GPU
    launchers' vector checks accept (rows a multiple of 16 bytes)."""
    return p.rng.choice([x for x in pads if x % 8 == 0] if p.vector_rows else pads)


# ---------------------------------------------------------------------------------------------
# Expressions in parallel loops.
# ---------------------------------------------------------------------------------------------

FLOAT_CONSTS = [("0.5", 0.5, 1), ("2.0", 2.0, 0), ("0.25", 0.25, 2), ("1.5", 1.5, 1), ("3.0", 3.0, 0),
                ("1.0", 1.0, 0)]
MATH_FNS = ["exp", "exp2", "tanh", "sigmoid", "erf", "sqrt", "rsqrt", "log", "log2",
            "fast_exp", "fast_tanh", "fast_exp2"]


def gen_float_expr(prog, leaves, depth, allow_math=True):
    """A random float expression over the leaves (Vals). Keeps magnitudes below ~64."""
    rng = prog.rng
    if depth <= 0 or rng.random() < 0.25:
        if rng.random() < 0.8 or not leaves:
            return rng.choice(leaves)
        text, v, g = rng.choice(FLOAT_CONSTS)
        return Val(text, "f32", v, g)
    choice = rng.random()
    a = gen_float_expr(prog, leaves, depth - 1, allow_math)
    extra = rng.random()
    if extra < 0.07:
        lo, hi = rng.choice([("-1.0", "1.0"), ("-0.5", "2.0"), ("0.25", "3.0"), ("1.0", "-1.0"), ("-2.0", "0.0")])
        kw = rng.random() < 0.3
        prog.features.add("clamp" + (":keywords" if kw else "") + (":lo>hi" if float(lo) > float(hi) else ""))
        text = f"clamp({a.text}, min_val = {lo}, max_val = {hi})" if kw else f"clamp({a.text}, {lo}, {hi})"
        dt = promote(a.dtype, "f32")
        return Val(text, dt, max(abs(float(lo)), abs(float(hi))), max(a.gran, 2), a.err, a.exact).rounded_to(dt)
    if extra < 0.12:
        form = rng.choice(["f32", "f16", "bf16", "bits"])
        if form == "bits" and not (a.exact and a.err == 0 and dtypes.holds("f32", a.mag, a.gran)):
            form = "f32"
        if form in ("f16", "bf16") and a.mag > 1000:
            form = "f32"
        prog.features.add("reinterpret:" + form)
        if form == "f32":
            r = a.rounded_to("f32")
            return Val(f"reinterpret(f32, reinterpret(u32, f32({a.text})))", "f32", r.mag, r.gran, r.err, r.exact)
        if form in ("f16", "bf16"):
            r = a.rounded_to(form)
            it = rng.choice(["i16", "u16"])
            return Val(f"reinterpret({form}, reinterpret({it}, {form}({a.text})))", form, r.mag, r.gran, r.err, r.exact)
        sh = rng.choice([20, 21, 23])
        return Val(f"f32((reinterpret(i32, f32({a.text})) >> {sh}) & 7)", "f32", 7, 0)
    if choice < 0.45:
        b = gen_float_expr(prog, leaves, depth - 1, allow_math)
        op = rng.choice("+-*") if a.mag * b.mag < 16 else rng.choice("+-")
        r = binop(op, a, b)
        prog.features.add("arith")
        return Val(f"({r.text})", r.dtype, r.mag, r.gran, r.err, r.exact)
    if choice < 0.6:
        b = gen_float_expr(prog, leaves, depth - 1, allow_math)
        fn = rng.choice(["max", "min"])
        prog.features.add("minmax")
        return call(fn, a, b)
    if choice < 0.7:
        prog.features.add("abs")
        return call("abs", a)
    if choice < 0.85 and allow_math and a.mag > 4:
        # Scaled into the math functions' comfortable range first.
        a = binop("*", a, Val("0.125", "f32", 0.125, 3))
        a = Val(f"({a.text})", a.dtype, a.mag, a.gran, a.err, a.exact)
    if choice < 0.85 and allow_math:
        fn = rng.choice(MATH_FNS)
        base = fn[5:] if fn.startswith("fast_") else fn
        if base in ("exp", "exp2") and a.mag > (700 if base == "exp" else 1000):
            # Its bound past Python's floats: a bounded function instead, without another draw,
            # so that every other seed gives the program it gave.
            fn = base = "tanh"
        prog.features.add("math:" + fn)
        if base in ("sqrt", "rsqrt", "log", "log2"):
            # Safe domain: abs(x) + 1 >= 1.
            a = Val(f"(abs({a.text}) + 1.0)", promote(a.dtype, "f32"), a.mag + 1, a.gran, a.err, a.exact)
        return call(fn, a)
    if choice < 0.95:
        # A condition on exact values only, so that every target takes the same branch.
        c = gen_condition(prog, leaves)
        b = gen_float_expr(prog, leaves, depth - 1, allow_math)
        prog.features.add("select")
        dt = promote(a.dtype, b.dtype)
        return Val(f"({c} ? {a.text} : {b.text})", dt, max(a.mag, b.mag), max(a.gran, b.gran),
                   max(a.err, b.err), a.exact and b.exact).rounded_to(dt)
    # A scaled value: exact.
    text, v, g = rng.choice(FLOAT_CONSTS[:3])
    r = binop("*", a, Val(text, "f32", v, g))
    return Val(f"({r.text})", r.dtype, r.mag, r.gran, r.err, r.exact)


def gen_condition(prog, leaves):
    rng = prog.rng
    exact = [l for l in leaves if l.exact and l.err == 0]
    if exact and rng.random() < 0.5:
        l = rng.choice(exact)
        # A threshold halfway between representable inputs: never equal to one.
        return f"{l.text} {rng.choice(['<', '>', '<=', '>='])} {rng.choice(['0.125', '-0.375', '0.625'])}"
    return rng.choice(["i < j", "(i + j) % 2 == 0", "i % 3 != 1", "j >= 2"])


def fl(v):
    """A float literal."""
    s = repr(float(v))
    return s if "e" not in s else f"{v:.10f}"


def indent(lines, n=1):
    return ["    " * n + l for l in lines]


def block(head, body):
    return [head + " {"] + indent(body) + ["}"]


def input_leaf(text, dtype, values, via):
    """A Val for an element read of a tile copied from an input drawn from `values`, through the
    buffers `via` (dtypes it was stored in)."""
    mag = max(abs(v) for v in values)
    gran = max((frac_bits(v) for v in values), default=0)
    v = Val(text, dtype, mag, gran)
    for d in via:
        v = v.rounded_to(d)
    if any(dtypes.is_int(d) for d in via) and any(not float(x).is_integer() for x in values):
        # float -> int truncates: exact, smaller granularity
        v = Val(text, dtype, math.floor(mag), 0, v.err, v.exact)
    return Val(text, dtype, v.mag, v.gran, v.err, v.exact)


def frac_bits(v):
    g = 0
    while not float(v * 2 ** g).is_integer() and g < 60:
        g += 1
    return g


# ---------------------------------------------------------------------------------------------
# Phases. Each returns (decls, body) lines and registers its tensors with the program.
# ---------------------------------------------------------------------------------------------

FLOAT_IO = ["f32", "f16", "bf16", "f32", "f16", "f8e4m3", "f8e5m2", "f64"]
FLOAT_BUF = ["f32", "f32", "f16", "bf16", "f32"]
INT_IO = ["i32", "i8", "i16", "u8", "i32", "u16"]


def phase_elementwise(p, ctx):
    """X -> (shared|fragment, casts) -> parallel expression -> (fragment|shared) -> Y."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    integer = rng.random() < 0.2
    dx = rng.choice(INT_IO if integer else FLOAT_IO)
    dy = rng.choice(INT_IO if integer else FLOAT_IO)
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    region_x = f"{X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]"
    region_y = f"{Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]"
    if rng.random() < 0.25:
        # Explicit slices instead of the other operand's extents.
        region_x = f"{X.name}[{ctx.lead()}{ctx.row0} : +{bm}, {ctx.col0} : +{bn}]"
        p.features.add("copy:slices")
    decls, body = [], []
    via = []
    form = rng.choice(["shared_frag", "frag", "shared", "global_elem", "frag_shared"])
    p.features.add("ew:" + form)
    buf_dt = "i32" if integer else rng.choice(FLOAT_BUF)
    out_dt = rng.choice(["i32"]) if integer else rng.choice(["f32", "f32", "f16", "bf16"])
    src = p.fresh("s")
    out = p.fresh("g")
    if form == "global_elem":
        # Element reads and writes of global tensors in the parallel loop.
        xv = f"{X.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j]"
        leaf = input_leaf(xv, dx, X.values, [])
        expr, leaves = gen_expr(p, [leaf] + extra_leaves(p, ctx, integer), integer)
        body += block(f"for (i, j) in parallel({bm}, {bn})",
                      [f"{Y.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j] = {dy}({expr.text});"])
        p.tol(Y.name, expr, dy)
        p.features.add(f"cast:{dx}->{dy}")
        return decls, body
    if form in ("shared_frag", "shared"):
        sh = p.fresh("sh")
        sdt = rng.choice([buf_dt, dx])
        decls.append(f"let {sh} = alloc_shared([{bm}, {bn}], {sdt});")
        body.append(f"copy({region_x}, {sh});")
        via.append(sdt)
        p.features.add(f"copy:global->shared")
        if form == "shared_frag":
            decls.append(f"let {src} = alloc_fragment([{bm}, {bn}], {buf_dt});")
            body.append(f"copy({sh}, {src});")
            via.append(buf_dt)
            p.features.add("copy:shared->fragment")
            cur = src
        else:
            cur = sh
    else:
        decls.append(f"let {src} = alloc_fragment([{bm}, {bn}], {buf_dt});")
        body.append(f"copy({region_x}, {src});")
        via.append(buf_dt)
        p.features.add("copy:global->fragment")
        cur = src
    cur_dt = via[-1]
    p.features.add(f"cast:{dx}->{cur_dt}")
    leaf = input_leaf(f"{cur}[i, j]", cur_dt, X.values, via)
    # The result buffer: a fresh fragment, or the source itself (in place).
    if rng.random() < 0.3 and cur != src or rng.random() < 0.3:
        dst, dst_dt = cur, cur_dt
        p.features.add("parallel:in_place")
    else:
        dst, dst_dt = out, out_dt
        decls.append(f"let {dst} = alloc_fragment([{bm}, {bn}], {dst_dt});")
    leaves = [leaf] + extra_leaves(p, ctx, integer, decls, body)
    expr, _ = gen_expr(p, leaves, integer)
    loop_body = parallel_body(p, dst, dst_dt, expr, integer, leaf, decls)
    val = p_last_val(p)
    if rng.random() < 0.2:
        # Blocks take one of two loops by their tile index: tile ops under a block-level if.
        expr2, _ = gen_expr(p, leaves, integer)
        loop2 = parallel_body(p, dst, dst_dt, expr2, integer, leaf, decls)
        v2 = p_last_val(p)
        val = Val("", val.dtype, max(val.mag, v2.mag), max(val.gran, v2.gran), max(val.err, v2.err),
                  val.exact and v2.exact)
        body += block(f"if ({ctx.ti} % 2 == 0)", block(f"for (i, j) in parallel({bm}, {bn})", loop_body))
        body[-1] += " else {"
        body += indent(block(f"for (i, j) in parallel({bm}, {bn})", loop2)) + ["}"]
        p.features.add("block_if")
    else:
        body += block(f"for (i, j) in parallel({bm}, {bn})", loop_body)
    p.features.add("parallel")
    val = val.rounded_to(dst_dt)
    if rng.random() < 0.2 and dst != cur:
        # fragment -> fragment with a cast.
        f2dt = rng.choice(["f32", "f16", "bf16"]) if not integer else rng.choice(["i32", "i16"])
        f2 = p.fresh("ff")
        decls.append(f"let {f2} = alloc_fragment([{bm}, {bn}], {f2dt});")
        body.append(f"copy({dst}, {f2});")
        p.features.add("copy:fragment->fragment")
        p.features.add(f"cast:{dst_dt}->{f2dt}")
        dst, dst_dt, cur = f2, f2dt, None
        val = val.rounded_to(f2dt)
    # Out: directly, or through shared memory.
    if form == "frag_shared" or (rng.random() < 0.3):
        sh2 = p.fresh("so")
        sdt2 = rng.choice([dst_dt, dy])
        decls.append(f"let {sh2} = alloc_shared([{bm}, {bn}], {sdt2});")
        body.append(f"copy({dst}, {sh2});")
        p.features.add("copy:fragment->shared" if dst != cur or cur == src else "copy:shared->shared")
        val = val.rounded_to(sdt2)
        body.append(f"copy({sh2}, {region_y});")
        p.features.add("copy:shared->global")
    else:
        body.append(f"copy({dst}, {region_y});")
        p.features.add("copy:fragment->global" if dst != cur or cur == src else "copy:shared->global")
    p.features.add(f"cast:{dst_dt}->{dy}")
    p.tol(Y.name, val, dy)
    return decls, body


_LAST = {}


def p_last_val(p):
    return _LAST[id(p)]


def parallel_body(p, dst, dst_dt, expr, integer, leaf, decls):
    """The statements of the elementwise loop: a plain store, a let, an if/else, or a value
    through a per-thread local buffer (written, then read, in the same iteration)."""
    rng = p.rng
    lines = []
    r = rng.random()
    if r < 0.15:
        loc = p.fresh("loc")
        ldt = "i32" if integer else "f32"
        decls.append(f"let {loc} = alloc_local([2], {ldt});")
        lines.append(f"{loc}[0] = {ldt}({expr.text});")
        lines.append(f"{loc}[1] = {loc}[0] {'+ 1' if integer else '* 0.5'};")
        lines.append(f"{dst}[i, j] = {cast(dst_dt, loc + '[1]')};")
        p.features.add("alloc_local")
        e = expr.rounded_to(ldt)
        val = binop("*", e, Val("0.5", "f32", 0.5, 1)) if not integer else Val("", "i32", e.mag + 1, 0)
    elif r < 0.35:
        t = p.fresh("t")
        lines.append(f"let {t} = {expr.text};")
        lines.append(f"{dst}[i, j] = {cast(dst_dt, t)};")
        p.features.add("parallel:let")
        val = expr
    elif r < 0.55:
        other, _ = gen_expr(p, [leaf], integer)
        cond = gen_condition(p, [leaf]) if not integer else "(i + j) % 2 == 0"
        lines += block(f"if ({cond})", [f"{dst}[i, j] = {cast(dst_dt, expr.text)};"])
        lines[-1] += " else {"
        lines += indent([f"{dst}[i, j] = {cast(dst_dt, other.text)};"]) + ["}"]
        p.features.add("parallel:if")
        val = Val("", expr.dtype, max(expr.mag, other.mag), max(expr.gran, other.gran),
                  max(expr.err, other.err), expr.exact and other.exact)
    else:
        lines.append(f"{dst}[i, j] = {cast(dst_dt, expr.text)};")
        val = expr
    _LAST[id(p)] = val
    return lines


def cast(dt, text):
    return f"{dt}({text})"


def extra_leaves(p, ctx, integer, decls=None, body=None):
    """Other values a parallel loop may read: loop indices, a scalar parameter, a row vector."""
    rng = p.rng
    leaves = []
    if integer:
        leaves.append(Val("i", "i32", ctx.bm, 0))
        leaves.append(Val("j", "i32", ctx.bn, 0))
        return leaves
    if rng.random() < 0.4:
        leaves.append(Val("f32(i)", "f32", ctx.bm, 0))
        p.features.add("parallel:index")
    if rng.random() < 0.3:
        s = next((q for q in p.params if q.kind == "scalar"), None)
        if s is None:
            s = p.add_param(Param(p.fresh("alpha"), "scalar", "f32", role="in", values=[0.5, 1.5, -0.75, 2.0]))
        leaves.append(Val(s.name, "f32", 2.0, 2))
        p.features.add("scalar_param")
    if body is not None and rng.random() < 0.2:
        # A global element read outside the parallel loop (zero past the tensor's end).
        X = next(q for q in p.params if q.kind == "tensor" and q.role == "in" and q.shape == ctx.shape("M", "N"))
        g = p.fresh("g0_")
        body.append(f"let {g} = f32({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
        leaves.append(input_leaf(g, "f32", X.values, ["f32"]))
        p.features.add("block_scalar:global_elem")
    if body is not None and rng.random() < 0.15:
        # A var accumulated by a serial loop of the whole block.
        a, t = p.fresh("acc"), p.fresh("t")
        n = rng.randint(1, 4)
        body.append(f"var {a}: f32 = 0.5;")
        body += block(f"for {t} in serial({n})", [f"{a} += f32({t}) * 0.25;"])
        leaves.append(Val(a, "f32", 0.5 + 0.25 * n * n, 2))
        p.features.add("block_scalar:var_serial")
    if decls is not None and rng.random() < 0.3:
        dv = rng.choice(["f32", "f16", "bf16"])
        V = p.tensor("V", dv, ctx.shape("N"), "in", value_set(dv))
        v = p.fresh("v")
        decls.append(f"let {v} = alloc_fragment([{ctx.BN}], f32);")
        body.append(f"copy({V.name}[{ctx.lead()}{ctx.col0}], {v});")
        leaves.append(input_leaf(f"{v}[j]", "f32", V.values, ["f32"]))
        p.features.add("copy:global->fragment_1d")
        p.features.add("parallel:broadcast")
    return leaves


def gen_expr(p, leaves, integer):
    if integer:
        return gen_int_expr(p, leaves, 3), leaves
    v = gen_float_expr(p, leaves, p.rng.randint(1, 3))
    return v, leaves


def gen_int_expr(p, leaves, depth):
    rng = p.rng
    if depth <= 0 or rng.random() < 0.3:
        if rng.random() < 0.8:
            return rng.choice(leaves)
        c = rng.randint(1, 7)
        return Val(str(c), "i32", c, 0)
    a = gen_int_expr(p, leaves, depth - 1)
    b = gen_int_expr(p, leaves, depth - 1)
    r = rng.random()
    p.features.add("int_arith")
    if r < 0.5 and a.mag * b.mag < 3e4:
        op = rng.choice(["+", "-", "*", "&", "|", "^"])
        mag = a.mag * b.mag if op == "*" else (a.mag + b.mag if op in "+-" else 2 ** math.ceil(math.log2(max(a.mag, b.mag) + 1)) * 2)
        return Val(f"({a.text} {op} {b.text})", promote(a.dtype, b.dtype), mag, 0)
    if r < 0.65:
        c = rng.randint(1, 5)
        op = rng.choice(["/", "%"])
        return Val(f"({a.text} {op} {c})", a.dtype, a.mag, 0)
    if r < 0.75:
        return Val(f"({a.text} >> {rng.randint(0, 3)})", a.dtype, a.mag, 0)
    if r < 0.78:
        lo, hi = rng.choice([(-3, 5), (0, 7), (2, -2)])
        p.features.add("clamp:int")
        return Val(f"clamp({a.text}, {lo}, {hi})", promote(a.dtype, "i32"), max(abs(lo), abs(hi)), 0)
    if r < 0.9:
        fn = rng.choice(["max", "min"])
        return Val(f"{fn}({a.text}, {b.text})", promote(a.dtype, b.dtype), max(a.mag, b.mag), 0)
    return Val(f"abs({a.text})", a.dtype, a.mag, 0)


REDUCE_OPS = ["reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax"]


def phase_reduce(p, ctx):
    """A tile reduced along one dim into a fragment or shared buffer, with or without clear;
    per-tile results go to an output indexed by the tile, sums may go through atomic_add."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16", "f32", "i32"])
    integer = dtypes.is_int(dx)
    acc = "i32" if integer else rng.choice(["f32", "f32", "f16"])
    op = rng.choice(REDUCE_OPS)
    dim = rng.choice([0, 1])
    dim_text = rng.choice({0: ["0", "-2"], 1: ["1", "-1", None]}[dim])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    src_scope = rng.choice(["fragment", "fragment", "shared"])
    dst_scope = rng.choice(["fragment", "fragment", "shared"])
    src, dst = p.fresh("rx"), p.fresh("rr")
    decls = [f"let {src} = alloc_{src_scope}([{bm}, {bn}], {acc});"]
    length = ctx.bn if dim == 1 else ctx.bm
    rshape = bm if dim == 1 else bn
    keep_dims = rng.random() < 0.12
    dshape = f"[{rshape}]"
    if keep_dims:
        dshape = f"[{bm}, 1]" if dim == 1 else f"[1, {bn}]"
        p.features.add("reduce:keepdim")
    decls.append(f"let {dst} = alloc_{dst_scope}({dshape}, {acc});")
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {src});"]
    p.features.add(f"copy:global->{src_scope}")
    leaf = input_leaf(f"{src}[i, j]", acc, X.values, [acc])
    if src_scope == "fragment" and rng.random() < 0.5:
        expr, _ = gen_expr(p, [leaf], integer)
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{src}[i, j] = {acc}({expr.text});"])
        leaf = expr.rounded_to(acc)
        p.features.add("parallel")
    args = f"{src}, {dst}" + (f", dim = {dim_text}" if dim_text is not None else "")
    clear = rng.random() < 0.7
    start = Val("", acc, 0)
    if not clear:
        if rng.random() < 0.5:
            body.append(f"clear({dst});")
            p.features.add("clear")
        else:
            c = rng.choice([0.5, -1.0, 2.0]) if not integer else rng.choice([1, -3])
            body.append(f"fill({dst}, {fl(c) if not integer else c});")
            start = Val("", acc, abs(c), frac_bits(c))
            p.features.add("fill")
        args += ", clear = false"
    body.append(f"{op}({args});")
    p.features.add(f"{op}:dim{dim}:{'clear' if clear else 'noclear'}:{src_scope}->{dst_scope}")
    # The value bound of the result.
    if op in ("reduce_sum", "reduce_abssum"):
        total = Val("", acc, leaf.mag * length, leaf.gran, leaf.err * length, leaf.exact)
        total = binop("+", total, start) if not clear else total
        if not total.exact or not dtypes.holds(acc, total.mag, total.gran):
            total = Val("", acc, total.mag, total.gran, total.err + total.mag * dtypes.eps(acc) * length, False)
    else:
        total = Val("", acc, max(leaf.mag, start.mag), max(leaf.gran, start.gran), leaf.err, leaf.exact)
    # Where the result goes.
    dr = rng.choice(["f32", "f16"]) if not integer else "i32"
    if op == "reduce_sum" and rng.random() < 0.3 and dr == "f32" or integer and op == "reduce_sum" and rng.random() < 0.3:
        # Every block of the other tile dimension adds its partial sums.
        R = p.tensor("R", dr, ctx.shape("M" if dim == 1 else "N"), "inout", value_set(dr))
        where = ctx.row0 if dim == 1 else ctx.col0
        flat = dst if not keep_dims else None
        if flat is None:
            # atomic_add takes the [bm, 1] shape against a 1-D region by unit-dimension rules.
            pass
        body.append(f"atomic_add({R.name}[{ctx.lead()}{where}], {dst});")
        p.features.add("atomic_add:tile")
        tiles = "ceildiv(N, bn)" if dim == 1 else "ceildiv(M, bm)"
        n = ctx.tiles_n if dim == 1 else ctx.tiles_m
        start_mag = max(abs(v) for v in R.values)
        total = Val("", dr, total.mag * n + start_mag, total.gran, total.err * n, total.exact)
        p.tol(R.name, total, dr)
    else:
        if dim == 1:
            R = p.tensor("R", dr, ctx.shape("TN", "M"), "out", value_set(dr))
            # A [bm, 1] destination (keepdim) against R[tj, row0] would take the extents
            # [bm, 1] (a column: rows tj .. tj + bm, racing with the other blocks): a slice.
            rg = f"{ctx.row0} : +{bm}" if keep_dims else ctx.row0
            body.append(f"copy({dst}, {R.name}[{ctx.lead()}{ctx.tj}, {rg}]);")
        else:
            R = p.tensor("R", dr, ctx.shape("TM", "N"), "out", value_set(dr))
            body.append(f"copy({dst}, {R.name}[{ctx.lead()}{ctx.ti}, {ctx.col0}]);")
        p.features.add(f"copy:{dst_scope}->global")
        p.tol(R.name, total, dr)
    return decls, body


def phase_cumsum(p, ctx):
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    dy = rng.choice(["f32", "f32", "f16"])
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    s_scope = rng.choice(["shared", "fragment"])
    d_scope = rng.choice(["shared", "fragment", "same"])
    s = p.fresh("cs")
    decls = [f"let {s} = alloc_{s_scope}([{bm}, {bn}], f32);"]
    if d_scope == "same":
        d = s
    else:
        d = p.fresh("cd")
        decls.append(f"let {d} = alloc_{d_scope}([{bm}, {bn}], f32);")
    dim = rng.choice([0, 1])
    reverse = rng.random() < 0.4
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {s});"]
    args = f"{s}, {d}"
    if dim != 0 or rng.random() < 0.5:
        args += f", dim = {dim}"
    if reverse:
        args += ", reverse = true"
    body.append(f"cumsum({args});")
    body.append(f"copy({d}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    p.features.add(f"cumsum:dim{dim}:{'rev' if reverse else 'fwd'}:{s_scope}->{d_scope}")
    leaf = input_leaf("", "f32", X.values, [dx, "f32"])
    n = ctx.bn if dim == 1 else ctx.bm
    p.tol(Y.name, Val("", "f32", leaf.mag * n, leaf.gran), dy)
    return decls, body


# gemm dtype pairs: (A, B, accumulator, value kind)
GEMM_TYPES = [("f16", "f16", "f32", "gemm"), ("bf16", "bf16", "f32", "gemm"), ("f16", "f16", "f16", "gemm_f16acc"),
              ("i8", "i8", "i32", "gemm"), ("f32", "f32", "f32", "gemm"), ("f8e4m3", "f8e4m3", "f32", "gemm"),
              ("f8e5m2", "f8e4m3", "f32", "gemm"), ("f8e4m3", "f8e5m2", "f32", "gemm"), ("f16", "f16", "f32", "gemm")]


def gemm_operand(p, ctx, stem, dt, dims, values):
    """A gemm operand tensor: row-major, with padded rows (strides), or a flat tensor viewed as
    the matrix. .ref is the name the copies read."""
    rng = p.rng
    r = rng.random()
    if r < 0.15:
        s = p.fresh("S")
        pad = choose_pad(p, [0, 8, 16, 16, 32, 64, 1, 4])
        p.sizes[s] = p.sizes[dims[1]] + pad
        p.stride_min[s] = [dims[1], pad]
        st = ([f"{dims[0]} * {s}"] if ctx.batch else []) + [s, "1"]
        t = p.tensor(stem, dt, ctx.shape(*dims), "in", values, st)
        t.ref = t.name
        p.features.add("gemm:operand_strided")
        return t
    if r < 0.22:
        # Column-major: unit stride in the first dimension.
        s = p.fresh("S")
        pad = choose_pad(p, [0, 8, 16, 1])
        p.sizes[s] = p.sizes[dims[0]] + pad
        p.stride_min[s] = [dims[0], pad]
        st = ([f"{dims[1]} * {s}"] if ctx.batch else []) + ["1", s]
        t = p.tensor(stem, dt, ctx.shape(*dims), "in", values, st)
        t.ref = t.name
        p.features.add("gemm:operand_colmajor")
        return t
    if r < 0.35:
        flat = " * ".join(ctx.shape(*dims))
        t = p.tensor(stem, dt, [flat], "in", values)
        t.ref = p.fresh(stem + "v")
        add_let(p, ctx, f"let {t.ref} = view({t.name}, [{', '.join(ctx.shape(*dims))}]);")
        p.features.add("gemm:operand_view")
        return t
    t = p.tensor(stem, dt, ctx.shape(*dims), "in", values)
    t.ref = t.name
    return t


def phase_gemm(p, ctx):
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    da, db, dc, kind = rng.choice(GEMM_TYPES)
    ta, tb = rng.random() < 0.3, rng.random() < 0.4
    bk = "bk"
    A = gemm_operand(p, ctx, "A", da, ["K", "M"] if ta else ["M", "K"], value_set(da, kind))
    B = gemm_operand(p, ctx, "B", db, ["N", "K"] if tb else ["K", "N"], value_set(db, kind))
    out_dt = rng.choice({"f32": ["f32", "f16", "bf16", "f32"], "f16": ["f16", "f32"], "i32": ["i32"]}[dc])
    C = p.tensor("C", out_dt, ctx.shape("M", "N"), "out", value_set(out_dt))
    a_frag = rng.random() < 0.25
    b_frag = rng.random() < 0.2
    as_, bs, cf = p.fresh("A_s"), p.fresh("B_s"), p.fresh("C_f")
    a_shape = f"[{bk}, {bm}]" if ta else f"[{bm}, {bk}]"
    b_shape = f"[{bn}, {bk}]" if tb else f"[{bk}, {bn}]"
    decls = [f"let {as_} = alloc_{'fragment' if a_frag else 'shared'}({a_shape}, {da});",
             f"let {bs} = alloc_{'fragment' if b_frag else 'shared'}({b_shape}, {db});",
             f"let {cf} = alloc_fragment([{bm}, {bn}], {dc});"]
    body = []
    first_clear = rng.random() < 0.15
    if not first_clear:
        body.append(f"clear({cf});")
    it = rng.choice(["pipelined", "pipelined", "pipelined", "serial", "range", "unroll", "while", "range_neg"])
    kv = p.fresh("kw") if it == "while" else "k"
    ka = f"{ctx.lead()}{kv} * {bk}, {ctx.row0}" if ta else f"{ctx.lead()}{ctx.row0}, {kv} * {bk}"
    kb = f"{ctx.lead()}{ctx.col0}, {kv} * {bk}" if tb else f"{ctx.lead()}{kv} * {bk}, {ctx.col0}"
    gargs = f"{as_}, {bs}, {cf}"
    if ta:
        gargs += ", transpose_A = true"
    if tb:
        gargs += ", transpose_B = true"
    if first_clear:
        # clear_accum must be constant: every iteration starts again, C is the last k-tile's product.
        gargs += ", clear_accum = true"
        p.features.add("gemm:clear_accum")
    if rng.random() < 0.2:
        gargs += f", policy = {rng.choice(['square', 'full_row', 'full_col'])}"
        p.features.add("gemm:policy")
    loop_body = [f"copy({A.ref}[{ka}], {as_});", f"copy({B.ref}[{kb}], {bs});", f"gemm({gargs});"]
    if rng.random() < 0.5:
        loop_body = [loop_body[1], loop_body[0], loop_body[2]]
    count = f"ceildiv(K, {bk})"
    if it == "pipelined":
        stages = rng.choice([None, 0, 1, 2, 3, 4])
        opts = []
        if stages is not None:
            opts.append(f"stages = {stages}")
        if stages and stages >= 2 and rng.random() < 0.3:
            opts.append(f"order = [0, 1, 2], stage = [0, 0, {stages - 1}]")
            p.features.add("pipelined:order_stage")
        elif rng.random() < 0.25:
            opts.append(f"warp_specialize = {rng.choice(['true', 'false'])}")
            p.features.add("pipelined:warp_specialize")
        head = f"for k in pipelined({count}{''.join(', ' + o for o in opts)})"
        p.features.add(f"pipelined:stages={stages}")
    elif it == "range" and rng.random() < 0.5:
        head = f"for k in range(0, {count}, 1)"
    elif it == "range_neg":
        head = f"for k in range({count} - 1, -1, -{rng.choice([1, 1, 2])})"
    elif it == "while":
        body.append(f"var {kv} = 0;")
        head = f"while ({kv} < {count})"
        loop_body = loop_body + [f"{kv} += 1;"]
    else:
        head = f"for k in {it}({count})"
    p.features.add(f"kloop:{it}")
    body += block(head, loop_body)
    form = ("t" if ta else "n") + ("t" if tb else "n")
    p.features.add(f"gemm:{form}:{'r' if a_frag else 's'}{'r' if b_frag else 's'}:{da}x{db}->{dc}")
    av, bv = max(abs(v) for v in A.values), max(abs(v) for v in B.values)
    ga = max(frac_bits(v) for v in A.values)
    gb = max(frac_bits(v) for v in B.values)
    K = p.sizes["K"]
    total = Val("", dc, av * bv * K, ga + gb)
    if not dtypes.holds(dc, total.mag, total.gran):
        total = Val("", dc, total.mag, total.gran, total.mag * dtypes.eps(dc) * K, False)
    if rng.random() < 0.4 and dc != "i32":
        # An epilogue on the accumulator.
        leaf = Val(f"{cf}[i, j]", dc, total.mag, total.gran, total.err, total.exact)
        expr = gen_float_expr(p, [leaf], 1, allow_math=total.mag <= 4)
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{cf}[i, j] = {dc}({expr.text});"])
        total = expr.rounded_to(dc)
        p.features.add("gemm:epilogue")
    if rng.random() < 0.2:
        # 'padded' needs rows of whole 16-byte chunks.
        bk_v = p.gemm_bk
        rows = [(bs, (bk_v if tb else ctx.bn) * dtypes.storage_bytes(db))] if not b_frag else []
        if not a_frag:
            rows.append((as_, (ctx.bm if ta else bk_v) * dtypes.storage_bytes(da)))
        buf, row_bytes = rng.choice(rows) if rows else (None, 0)
        layout = rng.choice(['row_major', 'padded']) if row_bytes % 16 == 0 else "row_major"
        if buf:
            body.insert(0, f"annotate_layout({buf}, {layout});")
            p.features.add("annotate_layout")
    if rng.random() < 0.3:
        # A reduction of the accumulator itself (the mma layout as the reduction's source).
        op = rng.choice(["reduce_max", "reduce_sum", "reduce_absmax", "reduce_min"])
        r = p.fresh("cr")
        decls.append(f"let {r} = alloc_fragment([{bm}], {dc});")
        body.append(f"{op}({cf}, {r}, dim = 1);")
        R = p.tensor("R", dc, ctx.shape("TN", "M"), "out", value_set(dc))
        body.append(f"copy({r}, {R.name}[{ctx.lead()}{ctx.tj}, {ctx.row0}]);")
        n = ctx.bn if op == "reduce_sum" else 1
        rv = Val("", dc, total.mag * n, total.gran, total.err * n, total.exact)
        p.tol(R.name, rv.rounded_to(dc), dc)
        p.features.add(f"gemm:acc_{op}")
    body.append(f"copy({cf}, {C.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    p.tol(C.name, total, out_dt)
    return decls, body


def phase_softmax(p, ctx):
    """Row softmax of a tile (the flash-attention pattern): reduce_max, exp of the difference
    with a row vector, reduce_sum, a division by it."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16"])
    dy = rng.choice(["f32", "f16", "bf16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    x, m, sm = p.fresh("sx"), p.fresh("smax"), p.fresh("ssum")
    fn = rng.choice(["exp", "exp2", "fast_exp"])
    decls = [f"let {x} = alloc_fragment([{bm}, {bn}], f32);", f"let {m} = alloc_fragment([{bm}], f32);",
             f"let {sm} = alloc_fragment([{bm}], f32);"]
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {x});",
            f"reduce_max({x}, {m}, dim = 1);"]
    body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{x}[i, j] = {fn}({x}[i, j] - {m}[i]);"])
    body.append(f"reduce_sum({x}, {sm}, dim = 1);")
    body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{x}[i, j] = {x}[i, j] / {sm}[i];"])
    body.append(f"copy({x}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    rel = 4e-3 if fn.startswith("fast") else 1e-5
    p.tol(Y.name, Val("", "f32", 1.0, 0, 3 * rel, False), dy)
    p.features.add(f"softmax:{fn}")
    p.features.add("parallel:broadcast_row")
    return decls, body


def phase_rownorm(p, ctx):
    """Row normalisation of a tile (rmsnorm's and layernorm's shape): a row sum of the copied
    tile (of its squares, through a parallel loop, or of the tile), then the tile scaled or
    shifted by it into another tensor. Nothing writes the tile after its copy: on the cpu,
    read-tiles-in-place reads the tensor where the tile would be (when the tile has X's type)."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f32", "f16", "bf16"])
    dt = rng.choice([dx, "f32"])  # the tile's type
    dy = rng.choice(["f32", "f16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    x, sq, r = p.fresh("nx"), p.fresh("nsq"), p.fresh("nr")
    decls = [f"let {x} = alloc_fragment([{bm}, {bn}], {dt});", f"let {r} = alloc_fragment([{bm}], f32);"]
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {x});"]
    mag = max(abs(v) for v in X.values)
    if rng.random() < 0.5:
        decls.append(f"let {sq} = alloc_fragment([{bm}, {bn}], f32);")
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{sq}[i, j] = f32({x}[i, j]) * f32({x}[i, j]);"])
        body.append(f"reduce_sum({sq}, {r}, dim = 1);")
        body += block(f"for (i, j) in parallel({bm}, {bn})",
                      [f"{x}[i, j] = {dt}(f32({x}[i, j]) * rsqrt({r}[i] / f32({bn}) + 1.0));"])
        bound = mag  # rsqrt(.. + 1) <= 1
        p.features.add("rownorm:rms")
    else:
        body.append(f"reduce_sum({x}, {r}, dim = 1);")
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{x}[i, j] = {dt}(f32({x}[i, j]) - {r}[i] / f32({bn}));"])
        bound = 2 * mag
        p.features.add("rownorm:mean")
    body.append(f"copy({x}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    rel = 1e-5 * max(1, ctx.bn) + (dtypes.eps(dt) if dt != "f32" else 0)
    p.tol(Y.name, Val("", "f32", bound, 0, bound * rel, False), dy)
    p.features.add("parallel:broadcast_row")
    return decls, body


def phase_gemm_chain(p, ctx):
    """Two gemms: the first's accumulator, scaled and cast to f16 in a fragment, is the A
    operand (rs) of the second (P @ V of attention)."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    bk = "bk"
    A = p.tensor("A", "f16", ctx.shape("M", "K"), "in", value_set("f16", "gemm_f16acc"))
    B = p.tensor("B", "f16", ctx.shape("K", "N"), "in", value_set("f16", "gemm_f16acc"))
    Vt = p.tensor("V", "f16", ctx.shape("N", "N"), "in", value_set("f16", "gemm_f16acc"))
    dy = rng.choice(["f32", "f16"])
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    as_, bs, cf, pf, vs, of = (p.fresh(n) for n in ("A_s", "B_s", "S_f", "P_f", "V_s", "O_f"))
    decls = [f"let {as_} = alloc_shared([{bm}, {bk}], f16);", f"let {bs} = alloc_shared([{bk}, {bn}], f16);",
             f"let {cf} = alloc_fragment([{bm}, {bn}], f32);", f"let {pf} = alloc_fragment([{bm}, {bn}], f16);",
             f"let {vs} = alloc_shared([{bn}, {bn}], f16);", f"let {of} = alloc_fragment([{bm}, {bn}], f32);"]
    body = [f"clear({cf});"]
    body += block(f"for k in pipelined(ceildiv(K, {bk}), stages = {rng.choice([1, 2, 3])})",
                  [f"copy({A.name}[{ctx.lead()}{ctx.row0}, k * {bk}], {as_});",
                   f"copy({B.name}[{ctx.lead()}k * {bk}, {ctx.col0}], {bs});",
                   f"gemm({as_}, {bs}, {cf});"])
    K = p.sizes["K"]
    s_mag = 1.0 * K
    # Scaled so that the f16 copy stays exact: multiples of 1/4 (then of 1/16), |.| <= K / 4.
    body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{pf}[i, j] = f16({cf}[i, j] * 0.25);"])
    body.append(f"copy({Vt.name}[{ctx.lead()}{ctx.col0}, 0], {vs});")
    body.append(f"clear({of});")
    body.append(f"gemm({pf}, {vs}, {of});")
    body.append(f"copy({of}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    pv = Val("", "f16", s_mag * 0.25, 4)
    total = Val("", "f32", pv.mag * 1.0 * ctx.bn, 5)
    total = total.rounded_to("f32") if dtypes.holds("f32", total.mag, total.gran) else \
        Val("", "f32", total.mag, 5, total.mag * 1e-7 * ctx.bn, False)
    if not dtypes.holds("f16", pv.mag, pv.gran):
        total = Val("", "f32", total.mag, 5, total.err + pv.mag * dtypes.eps("f16") * ctx.bn, False)
    p.tol(Y.name, total, dy)
    p.features.add("gemm:chain_rs")
    return decls, body


def phase_atomic(p, ctx):
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16"])
    dy = rng.choice(["f32", "f32", "f16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    f = p.fresh("af")
    decls = [f"let {f} = alloc_fragment([{bm}, {bn}], f32);"]
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {f});"]
    form = rng.choice(["element", "tile", "colsum"])
    xm = max(abs(v) for v in X.values)
    p.features.add(f"atomic_add:{form}")
    if form == "element":
        Y = p.tensor("Y", dy, ctx.shape("M", "N"), "inout", value_set(dy))
        # + 1.0: adds past the tensor's end would change a neighbour (were they not dropped).
        body += block(f"for (i, j) in parallel({bm}, {bn})",
                      [f"atomic_add({Y.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j], {f}[i, j] + 1.0);"])
        p.tol(Y.name, Val("", "f32", xm + 1 + 2, 2), dy)
    elif form == "tile":
        Y = p.tensor("Y", dy, ctx.shape("M", "N"), "inout", value_set(dy))
        body.append(f"atomic_add({Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {f});")
        p.tol(Y.name, Val("", "f32", xm + 2, 2), dy)
    else:
        c = p.fresh("ac")
        decls.append(f"let {c} = alloc_fragment([{bn}], f32);")
        Y = p.tensor("Y", dy, ctx.shape("N"), "inout", value_set(dy))
        body.append(f"reduce_sum({f}, {c}, dim = 0);")
        body.append(f"atomic_add({Y.name}[{ctx.lead()}{ctx.col0}], {c});")
        p.features.add("reduce_sum:dim0:clear:fragment->fragment")
        p.tol(Y.name, Val("", "f32", xm * ctx.bm * ctx.tiles_m + 2, 2), dy)
    return decls, body


# ---------------------------------------------------------------------------------------------
# Phases of the second generator version (issue 13, widened): views, strided tensors, bool
# tensors, alloc_local copies, global -> global copies, im2col.
# ---------------------------------------------------------------------------------------------


def add_let(p, ctx, line, inside_ok=True):
    """A `let` of a view: before the grid or at the top of the grid's block."""
    if inside_ok and p.rng.random() < 0.4:
        ctx.pre_lets.append(line)
        p.features.add("view:in_grid")
    else:
        p.host_lets.append(line)
        p.features.add("view:host")


def tile_buffer(p, ctx, dt, decls, scopes=("shared", "fragment"), auto_ok=False):
    """A [bm, bn] tile; with auto_ok sometimes `alloc_X(auto, dt)`, whose shape the first copy
    into it decides (the caller's first copy then uses slices: p.auto_tile is set)."""
    scope = p.rng.choice(scopes)
    b = p.fresh("tb")
    # (auto drops unit dimensions: a tile of one row or column would not be [bm, bn])
    p.auto_tile = auto_ok and p.rng.random() < 0.25 and ctx.bm > 1 and ctx.bn > 1
    if p.auto_tile:
        decls.append(f"let {b} = alloc_{scope}(auto, {dt});")
        p.features.add(f"alloc_auto:{scope}")
    else:
        decls.append(f"let {b} = alloc_{scope}([{ctx.BM}, {ctx.BN}], {dt});")
    return b, scope


def first_region(p, ctx, name, row0=None):
    """The region of the first copy into a tile buffer: slices when the buffer's shape is auto."""
    row0 = row0 or ctx.row0
    if getattr(p, "auto_tile", False):
        return f"{name}[{ctx.lead()}{row0} : +{ctx.BM}, {ctx.col0} : +{ctx.BN}]"
    return f"{name}[{ctx.lead()}{row0}, {ctx.col0}]"


def maybe_expr_in_place(p, buf, scope, dt, leafval, body, ctx):
    """Sometimes a parallel expression over a fragment tile in place; returns the value."""
    if scope != "fragment" or dtypes.is_int(dt) or p.rng.random() < 0.5:
        return leafval
    leaf = Val(f"{buf}[i, j]", dt, leafval.mag, leafval.gran, leafval.err, leafval.exact)
    e = gen_float_expr(p, [leaf], 2)
    body += block(f"for (i, j) in parallel({ctx.BM}, {ctx.BN})", [f"{buf}[i, j] = {dt}({e.text});"])
    p.features.add("parallel")
    return e.rounded_to(dt)


def phase_view(p, ctx):
    """Views (let V = view(T, [...])) of contiguous tensors: a reshaped input copied from, a
    flat input read by element, a reshaped output copied to, a flat output stored by element."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    form = rng.choice(["reshape_in", "flat_elem", "reshape_out", "flat_out_elem"])
    p.features.add("view:" + form)
    dx = rng.choice(["f32", "f16", "bf16", "f32", "i32", "u8", "i8"])
    integer = dtypes.is_int(dx)
    dy = rng.choice(["i32", "i16"]) if integer else rng.choice(["f32", "f16", "bf16"])
    lead_shape = ["B"] if ctx.batch else []
    lead_n = "B * " if ctx.batch else ""
    decls, body = [], []
    bdt = ("i32" if integer else rng.choice(["f32", "f16"]))
    if form == "reshape_in":
        X = p.tensor("X", dx, lead_shape + ["M", "2", "N"], "in", value_set(dx))
        Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
        xv = p.fresh("Xv")
        if rng.random() < 0.3:
            x0 = p.fresh("Xw")
            add_let(p, ctx, f"let {x0} = view({X.name}, [{lead_n}M * 2 * N]);\n"
                            f"let {xv} = view({x0}, [{', '.join(lead_shape + ['M * 2', 'N'])}]);")
            p.features.add("view:chain")
        else:
            add_let(p, ctx, f"let {xv} = view({X.name}, [{', '.join(lead_shape + ['M * 2', 'N'])}]);")
        buf, scope = tile_buffer(p, ctx, bdt, decls, auto_ok=True)
        body.append(f"copy({first_region(p, ctx, xv)}, {buf});")
        val = input_leaf("", bdt, X.values, [bdt])
        val = maybe_expr_in_place(p, buf, scope, bdt, val, body, ctx)
        body.append(f"copy({buf}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
        p.tol(Y.name, val, dy)
    elif form == "flat_elem":
        X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
        Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
        xv = p.fresh("Xv")
        add_let(p, ctx, f"let {xv} = view({X.name}, [{lead_n}M * N]);")
        base = f"(bz * M + {ctx.row0} + i)" if ctx.batch else f"({ctx.row0} + i)"
        leaf = input_leaf(f"{xv}[{base} * N + {ctx.col0} + j]", dx, X.values, [])
        if integer:
            e = gen_int_expr(p, [leaf, Val("i", "i32", ctx.bm, 0)], 2)
        else:
            e = gen_float_expr(p, [leaf], 2)
        body += block(f"for (i, j) in parallel({bm}, {bn})",
                      [f"{Y.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j] = {dy}({e.text});"])
        p.tol(Y.name, e, dy)
    else:
        X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
        Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
        yv = p.fresh("Yv")
        buf, scope = tile_buffer(p, ctx, bdt, decls)
        body.append(f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {buf});")
        val = input_leaf("", bdt, X.values, [bdt])
        if form == "reshape_out":
            add_let(p, ctx, f"let {yv} = view({Y.name}, [{', '.join(lead_shape + ['N', 'M'])}]);")
            val = maybe_expr_in_place(p, buf, scope, bdt, val, body, ctx)
            body.append(f"copy({buf}, {yv}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
        else:
            add_let(p, ctx, f"let {yv} = view({Y.name}, [{lead_n}M * N]);")
            base = f"(bz * M + {ctx.row0} + i)" if ctx.batch else f"({ctx.row0} + i)"
            # Columns past N would land in the next row, which another block stores, and with a
            # batch rows past M in the next batch's first rows (campaign 11, p12180): guarded.
            guard = f"{ctx.col0} + j < N" + (f" && {ctx.row0} + i < M" if ctx.batch else "")
            body += block(f"for (i, j) in parallel({bm}, {bn})",
                          block(f"if ({guard})", [f"{yv}[{base} * N + {ctx.col0} + j] = {dy}({buf}[i, j]);"]))
        p.tol(Y.name, val, dy)
    return decls, body


def phase_strided(p, ctx):
    """Tensors with `strides [...]`: rows padded apart (SX >= N), or column-major (unit stride in
    the first dimension); read by copies or elements, written by copies. The data files hold the
    whole storage; elements between the rows keep their initial values."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    M, N = p.sizes["M"], p.sizes["N"]

    def strided(stem, dt, role, kind):
        s = p.fresh("S")
        pad = choose_pad(p, [0, 8, 16, 16, 32, 1, 3, 4])
        if kind == "rows":
            p.sizes[s] = N + pad
            p.stride_min[s] = ["N", pad]
            st = ([f"M * {s}"] if ctx.batch else []) + [s, "1"]
        else:
            p.sizes[s] = M + pad
            p.stride_min[s] = ["M", pad]
            st = ([f"N * {s}"] if ctx.batch else []) + ["1", s]
        p.features.add(f"strides:{kind}:{role}")
        return p.tensor(stem, dt, ctx.shape("M", "N"), role, value_set(dt), st)

    dx = rng.choice(["f32", "f16", "bf16", "i32", "u8", "f8e4m3"])
    integer = dtypes.is_int(dx)
    dy = rng.choice(["i32", "u8"]) if integer else rng.choice(["f32", "f16", "bf16"])
    in_kind = rng.choice(["rows", "rows", "cols", None])
    out_kind = rng.choice(["rows", "cols", None]) if in_kind else rng.choice(["rows", "cols"])
    X = strided("X", dx, "in", in_kind) if in_kind else p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = strided("Y", dy, "out", out_kind) if out_kind else p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    decls, body = [], []
    form = rng.choice(["copy", "copy", "elem"])
    p.features.add("strides:" + form)
    if form == "elem":
        leaf = input_leaf(f"{X.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j]", dx, X.values, [])
        e = gen_int_expr(p, [leaf], 2) if integer else gen_float_expr(p, [leaf], 2)
        body += block(f"for (i, j) in parallel({bm}, {bn})",
                      [f"{Y.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j] = {dy}({e.text});"])
        p.tol(Y.name, e, dy)
        return decls, body
    bdt = "i32" if integer else rng.choice(["f32", "f16", dx])
    buf, scope = tile_buffer(p, ctx, bdt, decls, auto_ok=True)
    body.append(f"copy({first_region(p, ctx, X.name)}, {buf});")
    val = input_leaf("", bdt, X.values, [bdt])
    val = maybe_expr_in_place(p, buf, scope, bdt, val, body, ctx)
    body.append(f"copy({buf}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    p.tol(Y.name, val, dy)
    return decls, body


def phase_bool(p, ctx):
    """bool tensors: a mask read by element or copied into a bool tile and used as a condition,
    a bool output written from a comparison."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    form = rng.choice(["mask_elem", "mask_tile", "bool_out"])
    p.features.add("bool:" + form)
    decls, body = [], []
    f = p.fresh("bfr")
    decls.append(f"let {f} = alloc_fragment([{bm}, {bn}], f32);")
    body.append(f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {f});")
    leaf = input_leaf(f"{f}[i, j]", "f32", X.values, [dx, "f32"])
    if form == "bool_out":
        Yb = p.tensor("Yb", "bool", ctx.shape("M", "N"), "out", [0, 1])
        ob, scope = tile_buffer(p, ctx, "bool", decls)
        if scope == "shared":
            # A parallel loop writing a shared buffer in the fragment's layout.
            pass
        body += block(f"for (i, j) in parallel({bm}, {bn})",
                      [f"{ob}[i, j] = {f}[i, j] {rng.choice(['>', '<=', '>='])} {rng.choice(['0.125', '-0.375', '0.625'])};"])
        body.append(f"copy({ob}, {Yb.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
        p.tol(Yb.name, Val("", "bool", 1, 0), "bool")
        return decls, body
    Xb = p.tensor("Xb", "bool", ctx.shape("M", "N"), "in", [0, 1])
    dy = rng.choice(["f32", "f16", "bf16"])
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    a = gen_float_expr(p, [leaf], 2)
    b = gen_float_expr(p, [leaf], 1)
    if form == "mask_elem":
        cond = f"{Xb.name}[{ctx.lead()}{ctx.row0} + i, {ctx.col0} + j]"
    else:
        mb, _ = tile_buffer(p, ctx, "bool", decls)
        body.append(f"copy({Xb.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {mb});")
        cond = f"{mb}[i, j]"
    if rng.random() < 0.3:
        # bool in arithmetic is i32.
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{f}[i, j] = {f}[i, j] + f32({cond}) * 0.5;"])
        val = binop("+", leaf, Val("", "f32", 0.5, 1))
    else:
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{f}[i, j] = {cond} ? {a.text} : {b.text};"])
        val = Val("", "f32", max(a.mag, b.mag), max(a.gran, b.gran), max(a.err, b.err), a.exact and b.exact)
    body.append(f"copy({f}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    p.tol(Y.name, val.rounded_to("f32"), dy)
    return decls, body


def phase_local(p, ctx):
    """alloc_local buffers filled by a copy from global (every thread holds the whole vector),
    changed by a serial loop of every thread, read in a parallel loop, copied out."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dv = rng.choice(["f32", "f16", "bf16", "i32", "u8"])
    integer = dtypes.is_int(dv)
    ldt = "i32" if integer else rng.choice(["f32", "f16"])
    V = p.tensor("V", dv, ctx.shape("N"), "in", value_set(dv))
    loc = p.fresh("lv")
    decls = [f"let {loc} = alloc_local([{bn}], {ldt});"]
    body = [f"copy({V.name}[{ctx.lead()}{ctx.col0}], {loc});"]
    lval = input_leaf("", ldt, V.values, [ldt])
    if rng.random() < 0.5:
        t = p.fresh("t")
        if integer:
            body += block(f"for {t} in serial({bn})", [f"{loc}[{t}] = {loc}[{t}] * 2 + 1;"])
            lval = Val("", ldt, lval.mag * 2 + 1, 0)
        else:
            body += block(f"for {t} in serial({bn})", [f"{loc}[{t}] = {ldt}({loc}[{t}] * 0.5 + 1.0);"])
            lval = binop("+", binop("*", lval, Val("", "f32", 0.5, 1)), Val("", "f32", 1.0, 0)).rounded_to(ldt)
        p.features.add("local:serial_update")
    form = rng.choice(["broadcast", "both"])  # (M must be a size: the broadcast reads X)
    p.features.add("local:" + form)
    if form in ("out", "both"):
        dr = "i32" if integer else rng.choice(["f32", "f16"])
        R = p.tensor("R", dr, ctx.shape("TM", "N"), "out", value_set(dr))
        body.append(f"copy({loc}, {R.name}[{ctx.lead()}{ctx.ti}, {ctx.col0}]);")
        p.tol(R.name, lval, dr)
    if form in ("broadcast", "both"):
        dx = "i32" if integer else rng.choice(["f32", "f16"])
        X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
        Y = p.tensor("Y", dx, ctx.shape("M", "N"), "out", value_set(dx))
        fdt = "i32" if integer else "f32"
        f = p.fresh("lf")
        decls.append(f"let {f} = alloc_fragment([{bm}, {bn}], {fdt});")
        body.append(f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {f});")
        xl = input_leaf("", fdt, X.values, [fdt])
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{f}[i, j] = {fdt}({f}[i, j] + {loc}[j]);"])
        p.tol(Y.name, binop("+", xl, lval).rounded_to(fdt), dx)
        body.append(f"copy({f}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    return decls, body


def phase_g2g(p, ctx):
    """copy from a global region to a global region, converting."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16", "f8e4m3", "i32", "u8", "i8", "f64"])
    integer = dtypes.is_int(dx)
    dy = rng.choice(["i32", "i16", "u8", "f32"]) if integer else rng.choice(["f32", "f16", "bf16", "f64"])
    if integer and dy == "u8":
        X = p.tensor("X", dx, ctx.shape("M", "N"), "in", [v for v in value_set(dx) if v >= 0])
    else:
        X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    form = rng.choice(["tile", "rows"])
    p.features.add("g2g:" + form)
    if form == "tile":
        body = [f"copy({X.name}[{ctx.lead()}{ctx.row0} : +{bm}, {ctx.col0} : +{bn}], {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);"]
    else:
        # One row of the tile per statement of a serial loop.
        r = p.fresh("r")
        body = block(f"for {r} in serial({bm})",
                     [f"copy({X.name}[{ctx.lead()}{ctx.row0} + {r}, {ctx.col0} : +{bn}], {Y.name}[{ctx.lead()}{ctx.row0} + {r}, {ctx.col0}]);"])
    p.tol(Y.name, input_leaf("", dx, X.values, []), dy)
    return [], body


def phase_im2col(p, ctx):
    """im2col of an NHWC image into a shared tile (the tile's (row, column) block indices are
    the block's tile indices), copied out; the image sometimes a view of a [N * H, W, C] tensor."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dt = rng.choice(["f16", "f16", "bf16", "f32"])
    names = [p.fresh(n) for n in ("IN", "IH", "IW", "IC")]
    nb, h, w, c = rng.randint(1, 2), rng.randint(2, 9), rng.randint(2, 9), rng.choice([8, 16, 8] + ([] if p.vector_rows else [1, 2, 3, 4]))
    for n, v in zip(names, (nb, h, w, c)):
        p.sizes[n] = v
    k = rng.choice([1, 2, 3])
    stride, dil, pad = rng.choice([1, 1, 2]), rng.choice([1, 1, 2]), rng.choice([0, 1, 1, 2])
    # The window must fit the padded image (H + 2 pad >= dilation (k - 1) + 1): where it does
    # not, the image has no output rows (TileLang's floor division), but tlc-eval computes
    # (H + 2 pad - dilation (k - 1) - 1) / stride + 1 with C's truncating division and finds one
    # (CAMPAIGNS.md, campaign 1).
    least = max(1, dil * (k - 1) + 1 - 2 * pad)
    h, w = max(h, least), max(w, least)
    p.sizes[names[1]], p.sizes[names[2]] = h, w
    decls, body = [], []
    col = p.fresh("col")
    if rng.random() < 0.4:
        return im2col_conv(p, ctx, names, (nb, h, w, c), k, stride, dil, pad)
    decls.append(f"let {col} = alloc_shared([{bm}, {bn}], {dt});")
    if rng.random() < 0.3:
        I = p.tensor("I", dt, [f"{names[0]} * {names[1]}", names[2], names[3]], "in", value_set(dt))
        img = p.fresh("Iv")
        add_let(p, ctx, f"let {img} = view({I.name}, [{', '.join(names)}]);")
        p.features.add("im2col:view")
    else:
        I = p.tensor("I", dt, names, "in", value_set(dt))
        img = I.name
    body.append(f"im2col({img}, {col}, {ctx.ti}, {ctx.tj}, {k}, {stride}, {dil}, {pad});")
    dy = rng.choice(["f32", dt])
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    if rng.random() < 0.3:
        f = p.fresh("cf")
        decls.append(f"let {f} = alloc_fragment([{bm}, {bn}], f32);")
        body.append(f"copy({col}, {f});")
        body.append(f"copy({f}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    else:
        body.append(f"copy({col}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    p.features.add(f"im2col:k{k}s{stride}d{dil}p{pad}")
    p.tol(Y.name, input_leaf("", dt, I.values, []), dy)
    return decls, body


def phase_partial(p, ctx):
    """A region smaller than the buffer it is copied into (TileLang's overlap): the buffer is
    cleared or filled first, the copy moves the region to its leading corner; or a smaller
    region copied out of a buffer's corner."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16", "i32", "u8"])
    integer = dtypes.is_int(dx)
    bdt = "i32" if integer else rng.choice(["f32", "f16", dx])
    dy = "i32" if integer else rng.choice(["f32", "f16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    e0 = rng.choice([max(1, ctx.bm // 2), ctx.bm - 1 if ctx.bm > 1 else 1, ctx.bm])
    e1 = rng.choice([1, max(1, ctx.bn // 2), ctx.bn - 1 if ctx.bn > 1 else 1, 8 if ctx.bn >= 8 else ctx.bn])
    if ctx.batch and e1 == 1 and ctx.bn > 1:
        e1 = max(2, ctx.bn // 2)  # [1, e0, 1] against a [bm, bn] buffer pairs e0 with bm only
    if e0 == ctx.bm and e1 == ctx.bn:
        e1 = max(1, ctx.bn // 2)
    decls, body = [], []
    buf, scope = tile_buffer(p, ctx, bdt, decls)
    form = rng.choice(["in", "in", "out"])
    p.features.add(f"partial:{form}:{scope}")
    val = input_leaf("", bdt, X.values, [bdt])
    if form == "in":
        if rng.random() < 0.5:
            body.append(f"clear({buf});")
        else:
            c = rng.choice([1, -2]) if integer else rng.choice([0.5, -1.0])
            body.append(f"fill({buf}, {c if integer else fl(c)});")
            val = Val("", bdt, max(val.mag, abs(c)), max(val.gran, 1), val.err, val.exact)
        body.append(f"copy({X.name}[{ctx.lead()}{ctx.row0} : +{e0}, {ctx.col0} : +{e1}], {buf});")
        body.append(f"copy({buf}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    else:
        body.append(f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {buf});")
        body.append(f"copy({buf}, {Y.name}[{ctx.lead()}{ctx.row0} : +{e0}, {ctx.col0} : +{e1}]);")
    p.tol(Y.name, val, dy)
    return decls, body


def phase_shared_atomic(p, ctx):
    """atomic_add into a shared tile (a row from a vector held in local, shared or fragment
    memory, or a whole fragment tile), the vector reaching there by copies between on-chip
    scopes (local -> shared -> fragment)."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16"])
    sdt = rng.choice(["f32", "f32", "f16"])
    dy = rng.choice(["f32", "f16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    s2 = p.fresh("sa")
    decls = [f"let {s2} = alloc_shared([{bm}, {bn}], {sdt});"]
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {s2});"]
    xm = max(abs(v) for v in X.values)
    form = rng.choice(["row", "tile"])
    p.features.add(f"shared_atomic:{form}")
    if form == "tile":
        f = p.fresh("af")
        decls.append(f"let {f} = alloc_fragment([{bm}, {bn}], f32);")
        body.append(f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {f});")
        body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{f}[i, j] = {f}[i, j] * 0.5 + 1.0;"])
        body.append(f"atomic_add({s2}, {f});")
        mag = xm * 1.5 + 1
    else:
        V = p.tensor("V", dx, ctx.shape("N"), "in", value_set(dx))
        path = rng.choice([["local", "shared"], ["local", "shared", "fragment"], ["shared", "fragment"],
                           ["fragment"], ["local", "fragment"]])
        p.features.add("onchip_chain:" + "->".join(path))
        prev = None
        for scope in path:
            v = p.fresh("vc")
            decls.append(f"let {v} = alloc_{scope}([{bn}], f32);")
            body.append(f"copy({prev if prev else V.name + '[' + ctx.lead() + ctx.col0 + ']'}, {v});")
            prev = v
        r = rng.choice(["0", f"{min(1, ctx.bm - 1)}", f"{ctx.bm - 1}"])  # rows that exist when bm = 1
        body.append(f"atomic_add({s2}[{r}, 0], {prev});")
        mag = xm * 2
    body.append(f"copy({s2}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    p.tol(Y.name, Val("", sdt, mag, 2).rounded_to(sdt), dy)
    return decls, body


def im2col_conv(p, ctx, names, dims, k, stride, dil, pad):
    """A convolution as TileLang writes it: im2col tiles of the image as the A operand of a gemm
    over the K loop (k * k * C), the weights a [k * k * C, N] tensor (or a view of
    [k, k, C, N])."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dt = rng.choice(["f16", "f16", "bf16", "f32"])
    bk = rng.choice([16, 32])
    # Channels the GPU launchers' vector check (C a multiple of 16 bytes) takes, mostly.
    p.sizes[names[3]] = rng.choice([8, 16, 8, 32, 3])
    dims = dims[:3] + (p.sizes[names[3]],)
    kk = f"{k * k} * {names[3]}"
    I = p.tensor("I", dt, names, "in", value_set(dt, "gemm"))
    decls, body = [], []
    if rng.random() < 0.4:
        W = p.tensor("W", dt, [str(k), str(k), names[3], "N"], "in", value_set(dt, "gemm"))
        wref = p.fresh("Wv")
        add_let(p, ctx, f"let {wref} = view({W.name}, [{kk}, N]);")
        p.features.add("conv:weights_view")
    else:
        W = p.tensor("W", dt, [kk, "N"], "in", value_set(dt, "gemm"))
        wref = W.name
    col, bs, cf = p.fresh("col"), p.fresh("Ws"), p.fresh("Cc")
    decls += [f"let {col} = alloc_shared([{bm}, {bk}], {dt});", f"let {bs} = alloc_shared([{bk}, {bn}], {dt});",
              f"let {cf} = alloc_fragment([{bm}, {bn}], f32);"]
    body.append(f"clear({cf});")
    kv = p.fresh("kc")
    stages = rng.choice([None, 0, 2, 3])
    head = f"for {kv} in pipelined(ceildiv({kk}, {bk}){'' if stages is None else f', stages = {stages}'})"
    body += block(head, [f"im2col({I.name}, {col}, {ctx.ti}, {kv}, {k}, {stride}, {dil}, {pad});",
                         f"copy({wref}[{kv} * {bk}, {ctx.col0}], {bs});",
                         f"gemm({col}, {bs}, {cf});"])
    dy = rng.choice(["f32", "f16"])
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    body.append(f"copy({cf}, {Y.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    n_k = k * k * dims[3]
    p.tol(Y.name, Val("", "f32", 1.0 * n_k, 4).rounded_to("f32"), dy)
    p.features.add(f"conv:im2col_gemm:{dt}:stages={stages}")
    return decls, body


def phase_rowloop(p, ctx):
    """A loop over all column tiles of the block's rows that accumulates a reduction across its
    iterations (clear = false): a `while` over a var, a `range` with a negative step or a
    serial loop; the row result written by the blocks of the first column tile only."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    dr = rng.choice(["f32", "f16"])
    R = p.tensor("R", dr, ctx.shape("M"), "out", value_set(dr))
    op = rng.choice(["reduce_sum", "reduce_max", "reduce_absmax", "reduce_abssum"])
    t, acc = p.fresh("rt"), p.fresh("racc")
    tscope = rng.choice(["fragment", "shared"])
    ascope = rng.choice(["fragment", "fragment", "shared"])
    decls = [f"let {t} = alloc_{tscope}([{bm}, {bn}], f32);", f"let {acc} = alloc_{ascope}([{bm}], f32);"]
    body = [f"clear({acc});"]
    n = "ceildiv(N, bn)"
    form = rng.choice(["while", "range_neg", "serial"])
    p.features.add(f"rowloop:{form}:{op}:{tscope}->{ascope}")
    if form == "while":
        v = p.fresh("c")
        body.append(f"var {v} = 0;")
        head, tail, idx = f"while ({v} < {n})", [f"{v} += 1;"], v
    elif form == "range_neg":
        v = p.fresh("c")
        head, tail, idx = f"for {v} in range({n} - 1, -1, -1)", [], v
    else:
        v = p.fresh("c")
        head, tail, idx = f"for {v} in serial({n})", [], v
    body += block(head, [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {idx} * {bn}], {t});",
                         f"{op}({t}, {acc}, dim = 1, clear = false);"] + tail)
    body += block(f"if ({ctx.tj} == 0)", [f"copy({acc}, {R.name}[{ctx.lead()}{ctx.row0}]);"])
    xm = max(abs(v) for v in X.values)
    length = p.sizes["N"] + ctx.bn
    mag = xm * length if op in ("reduce_sum", "reduce_abssum") else xm
    p.tol(R.name, Val("", "f32", mag, 2).rounded_to("f32"), dr)
    return decls, body


# ---------------------------------------------------------------------------------------------
# The kernel: grid, lets, loops around the phases.
# ---------------------------------------------------------------------------------------------

PHASES = [(phase_elementwise, 4), (phase_reduce, 3), (phase_gemm, 3), (phase_cumsum, 1), (phase_atomic, 2),
          (phase_softmax, 1), (phase_gemm_chain, 1), (phase_view, 2), (phase_strided, 2), (phase_bool, 1),
          (phase_local, 1), (phase_g2g, 1), (phase_im2col, 1), (phase_partial, 1),
          (phase_shared_atomic, 1), (phase_rowloop, 1), (phase_rownorm, 1)]


def pick_phases(rng):
    n = rng.choice([1, 1, 2, 2, 3])
    fns, weights = zip(*PHASES)
    return [rng.choices(fns, weights)[0] for _ in range(n)]


def ceildiv(a, b):
    return -(-a // b)


def build(seed):
    p = Program(seed)
    rng = p.rng
    dims = rng.choice([1, 1, 2, 2, 2, 3])
    p.features.add(f"grid:{dims}d")
    odd = rng.random() < 0.2  # tile sizes that divide neither the threads nor the MMA shapes
    # (1 among them: a tile of one row or column, a gemm of [1, bk] tiles: finding 12)
    bm = rng.choice([1, 8, 24, 48] if odd else [16, 32, 32, 64])
    bn = rng.choice([1, 8, 24, 40, 48] if odd else [16, 32, 32, 64])
    if odd:
        p.features.add("tile:odd")
    while bm * bn > 64 * 64:
        bn //= 2
    threads = rng.choice([None, 32, 64, 64, 128, 128, 256, 96]) if rng.random() < 0.9 else rng.choice([48, 160, 192, 224, 512])
    aligned = rng.random() < 0.85
    if not aligned:
        p.features.add("sizes:unaligned")
    # Half the programs keep rows a multiple of 8 elements (partial tiles all the same), which the
    # GPU fast paths (16-byte vectors, TMA) take; the others have rows of any length, which the
    # GPU launchers run through the kernels' general variants (a refusal is a finding).
    p.vector_rows = rng.random() < 0.5
    if not p.vector_rows:
        p.features.add("sizes:any_rows")
    if p.offset:
        p.features.add("tensors:offset")
    p.sizes["M"] = choose_size(rng, aligned, p.vector_rows)
    p.sizes["N"] = choose_size(rng, aligned, p.vector_rows)
    phases = pick_phases(rng)
    if phase_gemm in phases or phase_gemm_chain in phases:
        p.sizes["K"] = rng.choice([16, 32, 48, 64, 80]) if aligned else \
            rng.choice(range(8, 81, 8)) if p.vector_rows else rng.randint(1, 80)
        p.gemm_bk = rng.choice([16, 32, 32]) if not odd else rng.choice([1, 8, 16, 24, 32])
    if dims == 3:
        p.sizes["B"] = rng.randint(1, 3)
    # Keep the simulators fast: few blocks.
    while ceildiv(p.sizes["M"], bm) * (ceildiv(p.sizes["N"], bn) if dims >= 2 else 1) * p.sizes.get("B", 1) > 16:
        p.sizes["M"] = max(1, p.sizes["M"] // 2)
        p.sizes["N"] = max(1, p.sizes["N"] // 2) if dims >= 2 else p.sizes["N"]
    p.sizes["TM"] = ceildiv(p.sizes["M"], bm)
    p.sizes["TN"] = ceildiv(p.sizes["N"], bn)

    # Compile-time parameters: sometimes declared with another default and fixed by -D.
    for name, value in [("bm", bm), ("bn", bn)] + ([("bk", p.gemm_bk)] if "K" in p.sizes else []) + \
            ([("threads", threads)] if threads else []):
        if rng.random() < 0.15:
            p.tparam(name, value * 2 if name != "threads" else 128)
            p.dflags.append(f"{name}={value}")
            p.features.add("-D")
        else:
            p.tparam(name, value)
    ctx = Ctx(p, dims, bm, bn)
    ctx.BM, ctx.BN = "bm", "bn"
    ctx.tiles_m, ctx.tiles_n = p.sizes["TM"], p.sizes["TN"]
    host, pre, wrap_head, wrap_tail, grid = [], [], None, [], None
    thr = ", threads = threads" if threads else ""
    gx = "ceildiv(N, bn)"
    if rng.random() < 0.3:
        host.append("let tiles_n = ceildiv(N, bn);")
        gx = "tiles_n"
        p.features.add("host_let")
    if dims == 1:
        grid = f"grid(ceildiv(M, bm){thr}) as {rng.choice(['bx', '(bx)'])}"
        ctx.ti, ctx.tj = "bx", "jt"
        ctx.row0, ctx.col0 = "bx * bm", "jt * bn"
        form = rng.choice(["serial", "range", "unroll", "while", "range_step", "range_neg"])
        p.features.add(f"tileloop:{form}")
        if form == "while":
            pre.append("var jt = 0;")
            wrap_head, wrap_tail = f"while (jt < {gx})", ["jt += 1;"]
        elif form == "range_step":
            wrap_head = f"for jt in range(0, {gx}, 1)"
        elif form == "range_neg":
            wrap_head = f"for jt in range({gx} - 1, -1, -1)"
        else:
            wrap_head = f"for jt in {form}({gx})"
    else:
        names = "(bx, by)" if dims == 2 else "(bx, by, bz)"
        gz = ", B" if dims == 3 else ""
        grid = f"grid({gx}, ceildiv(M, bm){gz}{thr}) as {names}"
        ctx.ti, ctx.tj = "by", "bx"
        ctx.row0, ctx.col0 = "by * bm", "bx * bn"
        if rng.random() < 0.15:
            pre.append(f"use_swizzle({rng.choice([2, 4, 10])});")
            p.features.add("use_swizzle")
        if rng.random() < 0.5:
            pre += ["let row0 = by * bm;", "let col0 = bx * bn;"]
            ctx.row0, ctx.col0 = "row0", "col0"
            p.features.add("grid_let")
    decls, body = [], []
    p.host_lets, ctx.pre_lets = [], []
    for fn in phases:
        d, b = fn(p, ctx)
        decls += d
        if rng.random() < 0.15:
            # The whole phase under a block-uniform condition: tile indices or a scalar parameter.
            kind = rng.choice(["tile", "tile", "scalar"])
            if kind == "scalar":
                flag = p.add_param(Param(p.fresh("flag"), "scalar", "i32", role="in", values=[0, 1, 2]))
                cond = f"{flag.name} {rng.choice(['>', '!=', '<'])} 1"
            else:
                cond = rng.choice([f"{ctx.ti} % 2 == 0", f"{ctx.tj} != 1", f"{ctx.ti} + {ctx.tj} < 2"])
            b = block(f"if ({cond})", b)
            p.features.add(f"phase_if:{kind}")
        body += b
        p.features.add("phase:" + fn.__name__[6:])
    host += [l for lets in p.host_lets for l in lets.split("\n")]
    pre += [l for lets in ctx.pre_lets for l in lets.split("\n")]
    second = []
    if rng.random() < 0.15:
        d, b, second = scratch_grids(p, ctx, thr, host)
        decls += d
        body += b
    if wrap_head:
        inner = block(wrap_head, body + wrap_tail)
    else:
        inner = body
    tparams = ", ".join(f"{n} = {v}" for n, v in p.tparams)
    params = ",\n    ".join(param_text(q) for q in p.params)
    lines = [f"// difftest seed {seed}", f"kernel {p.name}<{tparams}>(", f"    {params})", "{"]
    lines += indent(host)
    lines += indent(block(grid, pre + decls + inner))
    lines += indent(second)
    lines.append("}")
    return p, "\n".join(lines) + "\n"


def scratch_grids(p, ctx, thr, host):
    """Global scratch between two grids: the first grid's blocks write their tile of W (an
    alloc_global), a second grid (another launch, run after the first) reads W shifted by one
    tile, which another block of the first grid wrote, and writes Y."""
    rng = p.rng
    bm, bn = ctx.BM, ctx.BN
    dx = rng.choice(["f32", "f16", "bf16"])
    wdt = rng.choice(["f32", "f16"])
    dy = rng.choice(["f32", "f16"])
    X = p.tensor("X", dx, ctx.shape("M", "N"), "in", value_set(dx))
    Y = p.tensor("Y", dy, ctx.shape("M", "N"), "out", value_set(dy))
    w = p.fresh("W")
    shape = ", ".join(ctx.shape("M", "N"))
    host.append(f"let {w} = alloc_global([{shape}], {wdt});")
    f = p.fresh("wf")
    decls = [f"let {f} = alloc_fragment([{bm}, {bn}], f32);"]
    leaf = input_leaf(f"{f}[i, j]", "f32", X.values, ["f32"])
    e1 = gen_float_expr(p, [leaf], 2)
    body = [f"copy({X.name}[{ctx.lead()}{ctx.row0}, {ctx.col0}], {f});"]
    body += block(f"for (i, j) in parallel({bm}, {bn})", [f"{f}[i, j] = {e1.text};"])
    body.append(f"copy({f}, {w}[{ctx.lead()}{ctx.row0}, {ctx.col0}]);")
    v1 = e1.rounded_to("f32").rounded_to(wdt)
    g = p.fresh("wg")
    leaf2 = Val(f"{g}[i, j]", "f32", v1.mag, v1.gran, v1.err, v1.exact)
    e2 = gen_float_expr(p, [leaf2], 2)
    names = "(bx, by, bz)" if ctx.batch else "(bx, by)"
    gz = ", B" if ctx.batch else ""
    lead = "bz, " if ctx.batch else ""
    second = block(f"grid(ceildiv(N, bn), ceildiv(M, bm){gz}{thr}) as {names}",
                   [f"let {g} = alloc_fragment([{bm}, {bn}], f32);",
                    f"copy({w}[{lead}by * bm, (bx + 1) * bn], {g});"]
                   + block(f"for (i, j) in parallel({bm}, {bn})", [f"{g}[i, j] = {e2.text};"])
                   + [f"copy({g}, {Y.name}[{lead}by * bm, bx * bn]);"])
    p.tol(Y.name, e2, dy)
    p.features.add("multi_grid:alloc_global")
    return decls, body, second


# ---------------------------------------------------------------------------------------------
# Op x form tags, read off the program text: every tile operation with its operands' memory
# (global, view, strided, shared, fragment, local) and dtypes.
# ---------------------------------------------------------------------------------------------

TILE_OPS = ("copy", "gemm", "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax",
            "cumsum", "atomic_add", "im2col", "fill", "clear")


def split_args(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def op_tags(p, text):
    """{"op|form"}: one per distinct tile operation form in the program."""
    syms = {}
    for q in p.params:
        if q.kind == "tensor":
            syms[q.name] = ("global(strided)" if q.strides else "global", q.dtype)
    for m in re.finditer(r"let (\w+) = alloc_(shared|fragment|local|global)\((?:\[[^\]]*\]|auto), (\w+)\)", text):
        syms[m.group(1)] = (m.group(2) if m.group(2) != "global" else "global(scratch)", m.group(3))
    for m in re.finditer(r"let (\w+) = view\((\w+),", text):
        src = syms.get(m.group(2), ("global", "?"))
        syms[m.group(1)] = ("global(view)", src[1])
    tags = set()

    def operand(a):
        m = re.match(r"\s*(\w+)", a)
        name = m.group(1) if m else ""
        scope, dt = syms.get(name, ("scalar", "?"))
        if scope.startswith("global") and "[" in a and ":" in a.split("[", 1)[1]:
            scope += "[slices]"
        return scope, dt

    def dts(a, b):
        return a if a == b else f"{a}->{b}"

    in_pipe = 0
    for line in text.splitlines():
        m = re.match(r"\s*(\w+)\((.*)\);\s*$", line)
        if not m or m.group(1) not in TILE_OPS:
            continue
        op, args = m.group(1), split_args(m.group(2))
        pos = [a for a in args if not re.match(r"\w+ = ", a)]
        kw = dict(re.match(r"(\w+) = (.*)", a).groups() for a in args if re.match(r"\w+ = ", a))
        if op == "copy":
            (s, sd), (d, dd) = operand(pos[0]), operand(pos[1])
            tags.add(f"copy|{s}->{d}, {dts(sd, dd)}")
        elif op == "gemm":
            (a, ad), (b, bd), (c, cd) = operand(pos[0]), operand(pos[1]), operand(pos[2])
            t = ("t" if kw.get("transpose_A") == "true" else "n") + ("t" if kw.get("transpose_B") == "true" else "n")
            tags.add(f"gemm|{a[0]}{b[0]}, {t}, {ad}x{bd}->{cd}")
        elif op.startswith("reduce_") or op == "cumsum":
            (s, sd), (d, dd) = operand(pos[0]), operand(pos[1])
            extra = f", dim={kw.get('dim', '-1' if op != 'cumsum' else '0')}"
            if op == "cumsum" and kw.get("reverse") == "true":
                extra += ", reverse"
            if kw.get("clear") == "false":
                extra += ", clear=false"
            tags.add(f"{op}|{s}->{d}{extra}, {dts(sd, dd)}")
        elif op == "atomic_add":
            (d, dd), (s, sd) = operand(pos[0]), operand(pos[1])
            if "[" in pos[1] and s != "scalar" and not s.startswith("global"):
                s = s + "[elem]"
            tags.add(f"atomic_add|{s}->{d}, {dts(sd, dd)}")
        elif op == "im2col":
            (s, sd), (d, dd) = operand(pos[0]), operand(pos[1])
            tags.add(f"im2col|{s}->{d}, {dts(sd, dd)}")
        else:
            s, sd = operand(pos[0])
            tags.add(f"{op}|{s}, {sd}")
    return tags


def param_text(q):
    if q.kind == "scalar":
        return f"{q.name}: {q.dtype}"
    text = f"{q.name}: {q.dtype}[{', '.join(str(d) for d in q.shape)}]"
    if q.strides:
        text += f" strides [{', '.join(str(d) for d in q.strides)}]"
    return text


# ---------------------------------------------------------------------------------------------
# Output files.
# ---------------------------------------------------------------------------------------------


def extent(p, d):
    return int(d) if str(d).isdigit() else eval_size_expr(d, p.sizes)


def eval_size_expr(text, sizes):
    """An extent or stride expression over the sizes (as gen.py writes them: names, integers,
    + - * and parentheses)."""
    return int(eval(str(text), {"__builtins__": {}}, dict(sizes)))


def storage_count(shape, strides, sizes):
    """Elements of a tensor's storage: the product of the extents, or with strides the largest
    offset plus one (a data file holds the whole strided storage)."""
    ext = [eval_size_expr(d, sizes) for d in shape]
    if not strides:
        n = 1
        for e in ext:
            n *= e
        return n
    if any(e == 0 for e in ext):
        return 0
    return 1 + sum((e - 1) * eval_size_expr(st, sizes) for e, st in zip(ext, strides))


def input_data(p):
    """Values for every parameter, in source order (outputs get values too: their initial
    contents, which must survive where the kernel writes nothing)."""
    data = []
    for q in p.params:
        n = 1
        if q.kind == "tensor":
            n = storage_count(q.shape, q.strides, p.sizes)
        vals = [p.rng.choice(q.values) for _ in range(n)]
        if all(v == 0 for v in vals):
            nz = [v for v in q.values if v != 0]
            vals[p.rng.randrange(n)] = p.rng.choice(nz)
        data.append((q.name, [float(v) for v in vals]))
    return data


def write_bin(path, entries):
    with open(path, "wb") as f:
        f.write(b"TLCDATA1")
        f.write(struct.pack("<I", len(entries)))
        for name, vals in entries:
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)))
            f.write(nb)
            f.write(struct.pack("<Q", len(vals)))
            f.write(struct.pack(f"<{len(vals)}d", *vals))


def read_bin(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"TLCDATA1":
        raise ValueError(f"{path}: not a TLCDATA1 file")
    (count,) = struct.unpack_from("<I", raw, 8)
    off, out = 12, []
    for _ in range(count):
        (ln,) = struct.unpack_from("<I", raw, off)
        off += 4
        name = raw[off:off + ln].decode()
        off += ln
        (n,) = struct.unpack_from("<Q", raw, off)
        off += 8
        vals = list(struct.unpack_from(f"<{n}d", raw, off))
        off += 8 * n
        out.append((name, vals))
    return out


def describe(p, text):
    used_sizes = [s for s in p.sizes if any(s in map(str, q.shape) for q in p.params) or s in text]
    return {
        "seed": p.seed,
        "kernel": p.name,
        "file": f"p{p.seed}.tl",
        "dflags": p.dflags,
        "sizes": {s: p.sizes[s] for s in used_sizes},
        "params": [{"name": q.name, "kind": q.kind, "dtype": q.dtype,
                    "shape": [str(d) for d in q.shape],
                    "extents": [extent(p, d) for d in q.shape], "role": q.role,
                    "values": q.values,
                    **({"strides": [str(d) for d in q.strides],
                        "stride_values": [eval_size_expr(d, p.sizes) for d in q.strides],
                        "storage": storage_count(q.shape, q.strides, p.sizes)} if q.strides else {})}
                   for q in p.params],
        "tolerance": p.tolerance,
        # The harness passes each tensor this many elements into its buffer (Program.offset).
        "offset": p.offset,
        # Sizes that are functions of others (per-tile outputs): ceildiv(size, tile parameter).
        "derived": {s: v for s, v in {"TM": ["M", "bm"], "TN": ["N", "bn"]}.items() if s in used_sizes},
        # Feature tags ("what:form"); the copy and cast tags of the first version are replaced by
        # the op x form tags read off the text ("copy|global->shared, f32->f16").
        "features": sorted(f for f in p.features if not f.startswith(("copy:", "cast:")))
        + sorted(op_tags(p, text)),
        **({"stride_min": p.stride_min} if p.stride_min else {}),
    }


def generate(seed, out):
    p, text = build(seed)
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"p{seed}")
    with open(base + ".tl", "w") as f:
        f.write(text)
    meta = describe(p, text)
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    write_bin(base + ".in.bin", input_data(p))
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--print", action="store_true", help="also print the program")
    a = ap.parse_args()
    base = generate(a.seed, a.out)
    if a.print:
        sys.stdout.write(open(base + ".tl").read())


if __name__ == "__main__":
    main()
