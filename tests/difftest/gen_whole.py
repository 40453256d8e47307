#!/usr/bin/env python3
"""Random whole-tensor (beginner-level) kernels for the differential tester (issue 48).

    gen_whole.py --seed S --out DIR [--print]     writes DIR/pS.tl, .json, .in.bin and .ref.bin

A kernel is one statement on whole tensors, `Y = e;`, of one of four forms: an elementwise chain
with NumPy broadcasting, casts and `where`; reductions over a dimension (keepdim, broadcast back,
or a result of the reduced shape); `@` with a fused epilogue (2-D, or batched over a leading
dimension with NumPy's rules: either operand's batch 1 or missing); `@` inside a reduction over
its last dimension. tlc lowers these to the developer level itself, so tlc-eval (which runs the
checked program, after that lowering) would share what is under test: the reference here is this
file's own evaluation of the formula in double precision, written as pS.ref.bin (the JSON's
"reference"), which difftest.py uses instead of tlc-eval.

Inputs are multiples of 1/4 in [-2, 2] (exact in every float dtype used); f16/bf16 tensors are
cast to f32 before arithmetic (`f32(X)`), as the language computes an operation in its operands'
promoted dtype; `@` reads them as they are and accumulates in f32. Each node carries a magnitude
bound and an error bound (f32 roundings, exp's slope, accumulation lengths); conditions compare
exact values only, so `where` never flips on rounding. The output's tolerance is four times the
bound after the store's rounding.
"""
import argparse
import json
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dtypes  # noqa: E402
import gen  # noqa: E402  (data files)

EPS32 = dtypes.eps("f32")
VALUES = [v / 4 for v in range(-8, 9)]


def par(text):
    """text as an operand: parenthesised unless it is a name, a literal or a call."""
    return text if re.fullmatch(r"[\w.]+(\([\w.]*\))?", text) else f"({text})"


class Node:
    """An expression: its text, a function of the result index giving its value in double, a
    magnitude bound and an error bound; exact: its value is an input's (compared exactly)."""

    def __init__(self, text, f, mag, err, exact=False):
        self.text, self.f, self.mag, self.err, self.exact = text, f, float(mag), float(err), exact


class Tensor:
    def __init__(self, name, dtype, shape, dims):
        self.name, self.dtype, self.shape, self.dims = name, dtype, shape, dims  # shape: texts; dims: ints
        n = 1
        for d in dims:
            n *= d
        self.n = n
        self.data = None

    def at(self, idx):
        """Element at a result index (NumPy's broadcasting: dimensions from the last, 1 repeats)."""
        off, stride = 0, 1
        for d in range(len(self.dims) - 1, -1, -1):
            i = idx[len(idx) - len(self.dims) + d]
            if self.dims[d] == 1:
                i = 0
            off += i * stride
            stride *= self.dims[d]
        return self.data[off]


class Gen:
    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed * 7919 + 48)
        self.tensors = []
        self.scalars = []   # (name, value)
        self.features = set()
        self.sizes = {}

    def tensor(self, stem, dtype, shape):
        name = f"{stem}{len(self.tensors)}"
        t = Tensor(name, dtype, shape, [self.sizes[s] if s in self.sizes else int(s) for s in shape])
        t.data = [self.rng.choice(VALUES) for _ in range(t.n)]
        if all(v == 0 for v in t.data):
            t.data[0] = 1.0
        self.tensors.append(t)
        return t

    # -- leaves -----------------------------------------------------------------------------

    def leaf(self, shape_choices, tensor_only=False):
        r = 1.0 if tensor_only else self.rng.random()
        if r < 0.12:
            v = self.rng.choice([0.5, 1.5, 2.0, 0.25, 3.0])
            return Node(f"{v}", lambda idx, v=v: v, abs(v), 0.0, exact=True)
        if r < 0.2:
            name = f"s{len(self.scalars)}"
            v = self.rng.choice(VALUES)
            self.scalars.append((name, v))
            self.features.add("leaf:scalar")
            return Node(name, lambda idx, v=v: v, 2.0, 0.0, exact=True)
        shape = self.rng.choice(shape_choices)
        dt = self.rng.choice(["f32", "f32", "f16", "bf16"])
        t = self.tensor("X", dt, shape)
        self.features.add(f"leaf:{dt}")
        if len(shape) < len(shape_choices[0]) or "1" in shape:
            self.features.add("broadcast")
        text = t.name if dt == "f32" else f"f32({t.name})"
        return Node(text, lambda idx, t=t: t.at(idx), 2.0, 0.0, exact=True)

    # -- elementwise ------------------------------------------------------------------------

    def expr(self, depth, leaves):
        if depth <= 0 or self.rng.random() < 0.25:
            return leaves()
        r = self.rng.random()
        if r < 0.45:
            a, b = self.expr(depth - 1, leaves), self.expr(depth - 1, leaves)
            op = self.rng.choice(["+", "-", "*"])
            self.features.add(f"op:{op}")
            if op == "*":
                return Node(f"{par(a.text)} * {par(b.text)}", lambda i: a.f(i) * b.f(i), a.mag * b.mag,
                            a.err * b.mag + b.err * a.mag + a.err * b.err + a.mag * b.mag * EPS32)
            sign = 1.0 if op == "+" else -1.0
            return Node(f"{par(a.text)} {op} {par(b.text)}", lambda i: a.f(i) + sign * b.f(i), a.mag + b.mag,
                        a.err + b.err + (a.mag + b.mag) * EPS32)
        if r < 0.7:
            a = self.expr(depth - 1, leaves)
            fn = self.rng.choice(["relu", "abs", "tanh", "sigmoid", "exp", "max", "min", "div", "silu"])
            self.features.add(f"fn:{fn}")
            if fn == "relu":
                return Node(f"relu({a.text})", lambda i: max(a.f(i), 0.0), a.mag, a.err)
            if fn == "abs":
                return Node(f"abs({a.text})", lambda i: abs(a.f(i)), a.mag, a.err)
            if fn == "tanh":
                return Node(f"tanh({a.text})", lambda i: math.tanh(a.f(i)), 1.0, a.err + 4 * EPS32)
            if fn == "sigmoid":
                return Node(f"sigmoid({a.text})", lambda i: 1 / (1 + math.exp(-a.f(i))), 1.0, a.err / 4 + 4 * EPS32)
            if fn == "silu":
                return Node(f"silu({a.text})", lambda i: a.f(i) / (1 + math.exp(-a.f(i))), a.mag,
                            1.1 * a.err + a.mag * 4 * EPS32)
            if fn == "exp":  # of a bounded operand: exp(-abs(a))
                return Node(f"exp(-abs({a.text}))", lambda i: math.exp(-abs(a.f(i))), 1.0, a.err + 4 * EPS32)
            if fn == "div":
                return Node(f"{par(a.text)} / (1.0 + abs({a.text}))", lambda i: a.f(i) / (1.0 + abs(a.f(i))), 1.0,
                            2 * a.err + 4 * EPS32)
            b = self.expr(depth - 1, leaves)
            pick = max if fn == "max" else min
            return Node(f"{fn}({a.text}, {b.text})", lambda i: pick(a.f(i), b.f(i)), max(a.mag, b.mag),
                        max(a.err, b.err))
        if r < 0.85:
            # where on a comparison of exact values (an input against a constant)
            c = leaves()
            while not c.exact:
                c = leaves()
            k = self.rng.choice([0.0, 0.5, -0.25])
            cmp = self.rng.choice([">", "<", ">="])
            a, b = self.expr(depth - 1, leaves), self.expr(depth - 1, leaves)
            test = {">": lambda x: x > k, "<": lambda x: x < k, ">=": lambda x: x >= k}[cmp]
            self.features.add("where")
            return Node(f"where({c.text} {cmp} {k}, {a.text}, {b.text})",
                        lambda i: a.f(i) if test(c.f(i)) else b.f(i), max(a.mag, b.mag), max(a.err, b.err))
        # a round trip through a narrower float: its rounding modelled exactly where the
        # operand is exact, else within half an ulp
        a = self.expr(depth - 1, leaves)
        dt = self.rng.choice(["f16", "bf16"])
        self.features.add(f"cast:{dt}")
        err = a.err + a.mag * dtypes.eps(dt) * (0 if a.exact else 1)
        return Node(f"f32({dt}({a.text}))", lambda i: dtypes.round_float(dt, a.f(i)), a.mag, err, exact=a.exact)

    # -- forms ------------------------------------------------------------------------------

    def build(self):
        rng = self.rng
        form = rng.choice(["elementwise", "elementwise", "reduce", "reduce", "matmul", "matmul", "matmul_reduce",
                           "matmul_stats"])
        self.features.add(f"form:{form}")
        self.sizes = {"M": rng.randint(1, 70), "N": rng.randint(1, 90)}
        rank3 = form in ("elementwise", "reduce", "matmul") and rng.random() < 0.35
        if rank3:
            self.sizes["B"] = rng.randint(1, 3)
        if form.startswith("matmul"):
            self.sizes["K"] = rng.randint(1, 70)
        if form == "matmul_stats":
            self.sizes["L"] = rng.randint(1, 80)
        out_shape = (["B"] if rank3 else []) + ["M", "N"]
        full = [out_shape, ["N"], ["M", "1"], ["1", "N"], out_shape] + ([["M", "N"], ["B", "1", "N"]] if rank3 else [])
        leaves = lambda: self.leaf(full)  # noqa: E731
        out_dt = rng.choice(["f32", "f32", "f32", "f16", "bf16"])
        stmt, out, value = None, None, None
        if form == "elementwise":  # a tensor of the whole shape, so that the kernel reads one
            anchor, rest = self.leaf([out_shape], tensor_only=True), self.expr(3, leaves)
            value = Node(f"{anchor.text} - {par(rest.text)}", lambda i: anchor.f(i) - rest.f(i), anchor.mag + rest.mag,
                         rest.err + (anchor.mag + rest.mag) * EPS32)
        elif form == "reduce":
            # reductions over one of the last two dimensions of the result's shape, their
            # operands an elementwise expression of tensors of that shape (the widest read)
            dim = rng.choice([-1, len(out_shape) - 2, len(out_shape) - 1])
            d = dim % len(out_shape)
            space = lambda: self.leaf([out_shape], tensor_only=True)  # noqa: E731
            red_leaves = lambda: self.leaf([out_shape]) if rng.random() < 0.6 else self.leaf(full)  # noqa: E731
            inner = self.expr(2, red_leaves)
            anchor = space()  # the space: a tensor of the whole shape in every reduction's operand
            arg = Node(f"{anchor.text} + {par(inner.text)}", lambda i: anchor.f(i) + inner.f(i), anchor.mag + inner.mag,
                       inner.err + (anchor.mag + inner.mag) * EPS32)
            red = self.reduction(arg, out_shape, d, dim)
            if rng.random() < 0.5:
                out_shape = [s if k != d else "1" for k, s in enumerate(out_shape)]
                if rng.random() < 0.5:
                    out_shape = [s for k, s in enumerate(out_shape) if k != d]
                    self.features.add("reduce:dropped")
                value = red
                self.features.add("reduce:reduced-result")
                red.f = (lambda g, d: (lambda i: g(i[:d] + (0,) + i[d:])))(red.f, d) if len(out_shape) < len(
                    full[0]) else red.f
            else:
                other = self.expr(1, lambda: self.leaf([out_shape]))
                value = Node(f"{par(other.text)} - {red.text}", lambda i: other.f(i) - red.f(i), other.mag + red.mag,
                             other.err + red.err + (other.mag + red.mag) * EPS32)
                self.features.add("reduce:broadcast-back")
        elif form == "matmul":
            value = self.matmul(out_shape, leaves, rank3)
        elif form == "matmul_stats":
            # a statistic of the product's rows ([M, L] over dimension 1) or columns ([L, N] over
            # dimension 0) that the epilogue broadcasts
            prod = self.matmul(["M", "N"], lambda: self.leaf([["M", "N"], ["N"], ["1", "N"], ["M", "1"]]), False)
            row = rng.random() < 0.6
            space = ["M", "L"] if row else ["L", "N"]
            sl = lambda: self.leaf([space], tensor_only=True)  # noqa: E731
            anchor, inner = sl(), self.expr(1, lambda: self.leaf([space, ["M", "1"] if row else ["1", "N"]]))
            arg = Node(f"{anchor.text} * {par(inner.text)}", lambda i: anchor.f(i) * inner.f(i), anchor.mag * inner.mag,
                       anchor.mag * inner.err + anchor.mag * inner.mag * EPS32)
            red = self.reduction(arg, space, 1 if row else 0, rng.choice([1, -1]) if row else rng.choice([0, -2]))
            # the statistic at the product's element (i, j): its row's (column's) value
            st = red.f
            red.f = (lambda i, st=st: st((i[0], 0))) if row else (lambda i, st=st: st((0, i[1])))
            self.features.add("stats:" + ("row" if row else "column"))
            op = rng.choice(["*", "-", "div"])
            if op == "*":
                value = Node(f"{par(prod.text)} * {red.text}", lambda i: prod.f(i) * red.f(i), prod.mag * red.mag,
                             prod.err * red.mag + red.err * prod.mag + 2 * prod.mag * red.mag * EPS32)
            elif op == "-":
                value = Node(f"{par(prod.text)} - {red.text}", lambda i: prod.f(i) - red.f(i), prod.mag + red.mag,
                             prod.err + red.err + (prod.mag + red.mag) * EPS32)
            else:
                value = Node(f"{par(prod.text)} / (1.0 + abs({red.text}))",
                             lambda i: prod.f(i) / (1.0 + abs(red.f(i))), prod.mag,
                             prod.err + prod.mag * red.err + 4 * prod.mag * EPS32)
        else:
            prod = self.matmul(["M", "N"], lambda: self.leaf([["M", "N"], ["N"], ["1", "N"], ["M", "1"]]), False)
            red = self.reduction(prod, ["M", "N"], 1, rng.choice([1, -1]))
            out_shape = rng.choice([["M"], ["M", "1"]])
            value = red
            if len(out_shape) == 1:
                red.f = (lambda g: (lambda i: g((i[0], 0))))(red.f)
        out = Tensor("Y", out_dt, out_shape, [self.sizes[s] if s in self.sizes else int(s) for s in out_shape])
        out.data = [-7.0] * out.n
        stmt = f"Y = {value.text};" if out_dt == "f32" else f"Y = {out_dt}({value.text});"
        self.features.add(f"out:{out_dt}")
        err = value.err + value.mag * dtypes.eps(out_dt)
        return stmt, out, value, err

    def reduction(self, arg, shape, d, dim):
        rng = self.rng
        op = rng.choice(["sum", "mean", "max", "min"])
        self.features.add(f"reduce:{op}")
        n = self.sizes[shape[d]]

        def f(i, arg=arg, op=op, d=d, n=n):
            vals = [arg.f(i[:d] + (k,) + i[d + 1:]) for k in range(n)]
            if op == "sum":
                return sum(vals)
            if op == "mean":
                return sum(vals) / n
            return max(vals) if op == "max" else min(vals)

        if op in ("sum", "mean"):
            mag, err = arg.mag * n, n * arg.err + n * arg.mag * n * EPS32
            if op == "mean":
                mag, err = arg.mag, err / n + arg.mag * EPS32
        else:
            mag, err = arg.mag, arg.err
        return Node(f"{op}({arg.text}, dim = {dim})", f, mag, err)

    def matmul(self, out_shape, leaves, rank3):
        rng = self.rng
        dt = rng.choice(["f16", "f16", "bf16"])
        ta, tb = rng.random() < 0.25, rng.random() < 0.3
        a_b = rank3 and rng.random() < 0.8
        b_b = rank3 and rng.random() < 0.5
        a_shape = (["B" if rng.random() < 0.8 else "1"] if a_b else []) + (["K", "M"] if ta else ["M", "K"])
        b_shape = (["B" if rng.random() < 0.8 else "1"] if b_b else []) + (["N", "K"] if tb else ["K", "N"])
        A, W = self.tensor("A", dt, a_shape), self.tensor("W", dt, b_shape)
        K = self.sizes["K"]
        self.features.add(f"matmul:{dt}{':batched' if a_b or b_b else ''}{':tA' if ta else ''}{':tB' if tb else ''}")
        if rank3 and not (a_b or b_b):
            self.features.add("matmul:broadcast-result")

        def elem(T, trans, batch, r, c):
            # T's logical [.., r, c] element (r, c after the transpose)
            idx = ([0 if T.dims[0] == 1 else batch] if len(T.dims) == 3 else []) + ([c, r] if trans else [r, c])
            off = 0
            for k, x in enumerate(idx):
                off = off * T.dims[k] + x
            return T.data[off]

        def f(i):
            b = i[0] if len(i) == 3 else 0
            m, n = i[-2], i[-1]
            return sum(elem(A, ta, b, m, k) * elem(W, tb, b, k, n) for k in range(K))

        prod = Node(f"{'transpose(' + A.name + ')' if ta else A.name} @ {'transpose(' + W.name + ')' if tb else W.name}",
                    f, 4.0 * K, 4.0 * K * K * EPS32)
        # the epilogue: the product in an elementwise expression of broadcast operands
        r = rng.random()
        if r < 0.3:
            return prod
        other = self.expr(1, leaves)
        if r < 0.6:
            return Node(f"{prod.text} + {par(other.text)}", lambda i: prod.f(i) + other.f(i), prod.mag + other.mag,
                        prod.err + other.err + (prod.mag + other.mag) * EPS32)
        if r < 0.8:
            return Node(f"relu({prod.text} * {par(other.text)})", lambda i: max(prod.f(i) * other.f(i), 0.0),
                        prod.mag * other.mag,
                        prod.err * other.mag + other.err * prod.mag + prod.mag * other.mag * EPS32 * 2)
        return Node(f"tanh({prod.text} * 0.125)", lambda i: math.tanh(prod.f(i) * 0.125), 1.0,
                    prod.err * 0.125 + 4 * EPS32)


def indices(dims):
    out = [()]
    for d in dims:
        out = [i + (k,) for i in out for k in range(d)]
    return out


def build(seed):
    g = Gen(seed)
    stmt, out, value, err = g.build()
    params = [f"{t.name}: {t.dtype}[{', '.join(t.shape)}]" for t in g.tensors]
    params += [f"{s}: f32" for s, _ in g.scalars]
    params.append(f"Y: {out.dtype}[{', '.join(out.shape)}]")
    text = f"// whole-tensor program {seed} (tests/difftest/gen_whole.py)\nkernel wt{seed}({', '.join(params)}) {{\n    {stmt}\n}}\n"
    ref = [dtypes.round_float(out.dtype, value.f(i)) if out.dtype != "f32" else value.f(i) for i in indices(out.dims)]
    if out.dtype == "f32":
        ref = [dtypes.round_float("f32", v) for v in ref]
    return g, text, out, ref, err


def generate(seed, out_dir):
    g, text, out, ref, err = build(seed)
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"p{seed}")
    with open(base + ".tl", "w") as f:
        f.write(text)
    used = [s for s in ("B", "M", "N", "K", "L") if s in g.sizes and any(s in t.shape for t in g.tensors + [out])]
    params = []
    for t in g.tensors:
        params.append({"name": t.name, "kind": "tensor", "dtype": t.dtype, "shape": t.shape, "extents": t.dims,
                       "role": "in", "values": VALUES})
    for s, v in g.scalars:
        params.append({"name": s, "kind": "scalar", "dtype": "f32", "shape": [], "extents": [], "role": "in",
                       "values": VALUES})
    params.append({"name": "Y", "kind": "tensor", "dtype": out.dtype, "shape": out.shape, "extents": out.dims,
                   "role": "out", "values": [-7.0]})
    meta = {
        "seed": seed, "kernel": f"wt{seed}", "file": f"p{seed}.tl", "dflags": [],
        "sizes": {s: g.sizes[s] for s in used}, "params": params,
        # every input tensor compared too: they must come back unchanged
        "tolerance": {"Y": {"atol": 4 * err + 1e-30, "rtol": 0.0}},
        "offset": 0, "derived": {}, "features": sorted(g.features),
        "reference": f"p{seed}.ref.bin",
    }
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    data = [(t.name, t.data) for t in g.tensors] + [(s, [v]) for s, v in g.scalars] + [("Y", out.data)]
    gen.write_bin(base + ".in.bin", data)
    gen.write_bin(base + ".ref.bin", [(t.name, t.data) for t in g.tensors] + [("Y", ref)])
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
