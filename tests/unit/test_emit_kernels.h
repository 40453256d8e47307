// Hand-built lowered kernels ("thread IR", as lowering hands them to the emitter) for the
// emitter's tests: test_emit.cpp checks the text, and test_emit_samples.cpp writes them to a
// directory for tests/emit/compile_check.py to compile with nvcc / hipcc / g++ and run on the
// CPU.
#pragma once

#include "ir/Kernel.h"
#include "passes/Passes.h"
#include "target/Target.h"

#include <cmath>
#include <vector>

namespace tlc::emit_test {

using namespace ir;

inline SourceLoc L(uint32_t line) { return SourceLoc{line, 5}; }

inline KernelParam tensorParam(const Buffer& b) {
    return KernelParam{KernelParam::Kind::Tensor, b->name, b->dtype, b, nullptr};
}
inline KernelParam sizeParam(const VarPtr& v) { return KernelParam{KernelParam::Kind::Size, v->name, v->dtype, nullptr, v}; }
inline KernelParam scalarParam(const VarPtr& v) {
    return KernelParam{KernelParam::Kind::Scalar, v->name, v->dtype, nullptr, v};
}
// Lowering ends with plan-shared-memory, which places the shared buffers in one pool: the
// emitter needs that plan.
inline Kernel planned(Kernel k, const Target& target) {
    SourceFile file(k.sourceName, "");
    DiagnosticEngine diags(file);
    LowerContext ctx(target, k.threads, diags);
    StageInference stages;
    k.body = planSharedMemory(k, k.body, ctx, stages);
    return k;
}

inline Expr ceildivExpr(Expr a, int64_t b) { return call("ceildiv", DType::I32, {std::move(a), intImm(b)}); }
inline Expr f32(double v, const char* spelling = "") { return floatImm(v, DType::F32, spelling); }

// C[i] = A[i] + B[i]: 256 threads per block on a GPU; on the CPU one thread per block runs the
// 256 elements in a loop.
inline Kernel vectorAdd(const Target& target) {
    bool cpu = target.backend == Backend::Cpu;
    VarPtr N = makeVar("N");
    Buffer A = makeBuffer("A", DType::F32, MemScope::Global, {Expr(N)});
    Buffer B = makeBuffer("B", DType::F32, MemScope::Global, {Expr(N)});
    Buffer C = makeBuffer("C", DType::F32, MemScope::Global, {Expr(N)});
    VarPtr bx = makeVar("bx", DType::I32, VarRole::BlockIndexX);
    VarPtr tx = makeVar("tx", DType::I32, VarRole::ThreadIndex);
    VarPtr i = makeVar("i");
    auto element = [&](Expr t) {
        return letStmt(i, Expr(bx) * 256 + t,
                       ifThenElse(Expr(i) < Expr(N), store(C, {Expr(i)}, load(A, {Expr(i)}) + load(B, {Expr(i)}), L(5)),
                                  {}, L(5)),
                       L(4));
    };
    Kernel k;
    k.name = "vector_add";
    k.sourceName = "vadd.tl";
    k.loc = L(1);
    k.templateValues = {{"block", "256"}};
    k.params = {tensorParam(A), tensorParam(B), tensorParam(C), sizeParam(N)};
    k.gridExtents = {ceildivExpr(Expr(N), 256)};
    k.blockVars = {bx};
    k.threadIndex = tx;
    if (cpu) {
        VarPtr t = makeVar("t");
        k.threads = 1;
        k.body = forLoop(t, intImm(0), intImm(256), ForKind::Serial, element(Expr(t)), L(3));
    } else {
        k.threads = 256;
        k.body = element(Expr(tx));
    }
    return k;
}

// Y[r] = sum(X[r, :]) with one block per row: a strided loop per thread, a warp reduction
// with shfl_xor, per-warp partial sums in shared memory, a barrier, thread 0 adds them up.
// On the CPU (one thread) the same shape without the shuffle.
inline Kernel rowSum(const Target& target) {
    bool cpu = target.backend == Backend::Cpu;
    int threads = cpu ? 1 : 128;
    int warp = cpu ? 1 : 32;
    int warps = threads / warp;
    VarPtr M = makeVar("M"), N = makeVar("N");
    Buffer X = makeBuffer("X", DType::F32, MemScope::Global, {Expr(M), Expr(N)});
    Buffer Y = makeBuffer("Y", DType::F32, MemScope::Global, {Expr(M)});
    VarPtr bx = makeVar("bx", DType::I32, VarRole::BlockIndexX);
    VarPtr tx = makeVar("tx", DType::I32, VarRole::ThreadIndex);
    Buffer acc = makeBuffer("acc", DType::F32, MemScope::Local, {});
    Buffer partial = makeBuffer("partial", DType::F32, MemScope::Shared, {intImm(warps)});
    VarPtr k = makeVar("k"), j = makeVar("j"), s = makeVar("s"), w = makeVar("w");

    Stmt accumulate = forLoop(
        k, intImm(0), call("ceildiv", DType::I32, {Expr(N), intImm(threads)}), ForKind::Serial,
        letStmt(j, Expr(k) * threads + Expr(tx),
                ifThenElse(Expr(j) < Expr(N),
                           store(acc, {}, load(acc, {}) + load(X, {Expr(bx), Expr(j)}), L(6)), {}, L(6)),
                L(6)),
        L(5));
    std::vector<Stmt> steps = {comment("reduce_sum(x, row, dim = 1)", L(7)), accumulate};
    if (!cpu) {
        // acc += shfl_xor(acc, 16 >> s, 32) for s in 0..4
        Expr mask = binary(BinaryOp::Shr, intImm(16), Expr(s));
        steps.push_back(forLoop(s, intImm(0), intImm(5), ForKind::Unroll,
                                store(acc, {}, load(acc, {}) + call("shfl_xor", DType::F32, {load(acc, {}), mask, intImm(32)}),
                                      L(7)),
                                L(7)));
    }
    steps.push_back(ifThenElse(binary(BinaryOp::Eq, Expr(tx) % warp, intImm(0)) /* lane 0 of each warp */,
                               store(partial, {Expr(tx) / warp}, load(acc, {}), L(7)), {}, L(7)));
    steps.push_back(barrier(L(7)));
    Stmt total = forLoop(w, intImm(1), intImm(warps - 1), ForKind::Serial,
                         store(acc, {}, load(acc, {}) + load(partial, {Expr(w)}), L(8)), L(8));
    steps.push_back(ifThenElse(logicalAnd(binary(BinaryOp::Eq, Expr(tx), intImm(0)), Expr(bx) < Expr(M)),
                               seq({store(acc, {}, load(partial, {intImm(0)}), L(8)), total,
                                    store(Y, {Expr(bx)}, load(acc, {}), L(9))}),
                               {}, L(8)));
    Kernel kern;
    kern.name = "row_sum";
    kern.sourceName = "rowsum.tl";
    kern.loc = L(1);
    kern.params = {tensorParam(X), tensorParam(Y), sizeParam(M), sizeParam(N)};
    kern.gridExtents = {Expr(M)};
    kern.blockVars = {bx};
    kern.threads = threads;
    kern.threadIndex = tx;
    kern.body = allocate(acc, allocate(partial, seq(steps), L(4)), L(4), f32(0.0));
    return planned(kern, target);
}

// B = f16(f32(A) * alpha) on 64 x 64 tiles: vector moves of 8 halves (16 bytes) from global
// into a shared tile, a barrier, then per-element casts through f32 into a local array that is
// zero-filled with a vector store first, and stored back.
inline Kernel halfScale(const Target& target) {
    bool cpu = target.backend == Backend::Cpu;
    int threads = cpu ? 1 : 128;
    VarPtr M = makeVar("M"), K = makeVar("K"), alpha = makeVar("alpha", DType::F32);
    Buffer A = makeBuffer("A", DType::F16, MemScope::Global, {Expr(M), Expr(K)});
    Buffer B = makeBuffer("B", DType::F16, MemScope::Global, {Expr(M), Expr(K)});
    Buffer A_s = makeBuffer("A_s", DType::F16, MemScope::Shared, {intImm(64), intImm(64)});
    Buffer out = makeBuffer("out", DType::F16, MemScope::Local, {intImm(8)});
    VarPtr bx = makeVar("bx", DType::I32, VarRole::BlockIndexX), by = makeVar("by", DType::I32, VarRole::BlockIndexY);
    VarPtr tx = makeVar("tx", DType::I32, VarRole::ThreadIndex);
    VarPtr it = makeVar("it"), r = makeVar("r"), c = makeVar("c"), v = makeVar("v");
    Expr row0 = Expr(by) * 64, col0 = Expr(bx) * 64;
    // 64 * 64 / 8 = 512 vectors, threads at a time.
    Stmt load = forLoop(
        it, intImm(0), intImm(512 / threads), ForKind::Unroll,
        letStmt(r, (Expr(it) * threads + Expr(tx)) / 8,
                letStmt(c, (Expr(it) * threads + Expr(tx)) % 8 * 8,
                        store(A_s, {Expr(r), Expr(c)}, ir::load(A, {row0 + Expr(r), col0 + Expr(c)}, 8), L(4)), L(4)),
                L(4)),
        L(4));
    Stmt compute = forLoop(
        it, intImm(0), intImm(512 / threads), ForKind::Serial,
        letStmt(r, (Expr(it) * threads + Expr(tx)) / 8,
                letStmt(c, (Expr(it) * threads + Expr(tx)) % 8 * 8,
                        seq({store(out, {intImm(0)}, zero(DType::F16, 8), L(6)),
                             forLoop(v, intImm(0), intImm(8), ForKind::Unroll,
                                     store(out, {Expr(v)},
                                           cast(DType::F16, cast(DType::F32, ir::load(A_s, {Expr(r), Expr(c) + Expr(v)})) *
                                                                Expr(alpha)),
                                           L(6)),
                                     L(6)),
                             store(B, {row0 + Expr(r), col0 + Expr(c)}, ir::load(out, {intImm(0)}, 8), L(7))}),
                        L(5)),
                L(5)),
        L(5));
    Kernel k;
    k.name = "half_scale";
    k.sourceName = "half_scale.tl";
    k.loc = L(1);
    k.params = {tensorParam(A), tensorParam(B), scalarParam(alpha), sizeParam(M), sizeParam(K)};
    k.gridExtents = {ceildivExpr(Expr(K), 64), ceildivExpr(Expr(M), 64)};
    k.blockVars = {bx, by};
    k.threads = threads;
    k.threadIndex = tx;
    k.body = allocate(A_s, allocate(out, seq({comment("copy(A[by * 64, bx * 64], A_s)", L(4)), load, barrier(L(4)), compute}), L(3)), L(3));
    k.launchChecks = {LaunchCheck{binary(BinaryOp::Eq, Expr(M) % 64, intImm(0)), "", 0, "M must be a multiple of 64"},
                      LaunchCheck{binary(BinaryOp::Eq, Expr(K) % 64, intImm(0)), "", 0, "K must be a multiple of 64"},
                      LaunchCheck{Expr(), "A", 16, "16-byte vector loads of A"},
                      LaunchCheck{Expr(), "B", 16, "16-byte vector stores of B"}};
    return planned(k, target);
}

// Two 32 KB shared tiles (64 KB: dynamic shared memory on a GPU; on the CPU the tiles are
// over 16 KB and live in per-thread storage): T = transpose of a 128 x 64 f32 tile, via shared.
inline Kernel bigShared(const Target& target) {
    bool cpu = target.backend == Backend::Cpu;
    int threads = cpu ? 1 : 256;
    VarPtr R = makeVar("R");
    Buffer S = makeBuffer("S", DType::F32, MemScope::Global, {Expr(R), intImm(64)});
    Buffer T = makeBuffer("T", DType::F32, MemScope::Global, {intImm(64), Expr(R)});
    Buffer tile = makeBuffer("tile", DType::F32, MemScope::Shared, {intImm(128), intImm(64)});
    Buffer tileT = makeBuffer("tile_t", DType::F32, MemScope::Shared, {intImm(64), intImm(128)});
    VarPtr bx = makeVar("bx", DType::I32, VarRole::BlockIndexX);
    VarPtr tx = makeVar("tx", DType::I32, VarRole::ThreadIndex);
    VarPtr e = makeVar("e"), i = makeVar("i"), j = makeVar("j");
    Expr row = Expr(bx) * 128 + Expr(i);
    auto each = [&](Stmt body, uint32_t line) {
        return forLoop(e, intImm(0), intImm(128 * 64 / threads), ForKind::Serial,
                       letStmt(i, (Expr(e) * threads + Expr(tx)) / 64,
                               letStmt(j, (Expr(e) * threads + Expr(tx)) % 64, body, L(line)), L(line)),
                       L(line));
    };
    Stmt in = each(ifThenElse(row < Expr(R), store(tile, {Expr(i), Expr(j)}, load(S, {row, Expr(j)}), L(5)),
                              store(tile, {Expr(i), Expr(j)}, f32(0.0), L(5)), L(5)),
                   5);
    Stmt flip = each(store(tileT, {Expr(j), Expr(i)}, load(tile, {Expr(i), Expr(j)}), L(6)), 6);
    Stmt out = each(ifThenElse(row < Expr(R), store(T, {Expr(j), row}, load(tileT, {Expr(j), Expr(i)}), L(7)), {}, L(7)), 7);
    Kernel k;
    k.name = "big_transpose";
    k.sourceName = "transpose.tl";
    k.loc = L(1);
    k.params = {tensorParam(S), tensorParam(T), sizeParam(R)};
    k.gridExtents = {ceildivExpr(Expr(R), 128)};
    k.blockVars = {bx};
    k.threads = threads;
    k.threadIndex = tx;
    k.body = allocate(tile, allocate(tileT, seq({in, barrier(L(5)), flip, barrier(L(6)), out}), L(4)), L(3));
    return planned(k, target);
}

// Element types, math and odd expressions in one elementwise kernel (compile checks):
// bf16 in, f8e4m3 out, an f16 atomic add, i64/u32/bool values, select, min/max, math calls,
// an -inf literal, floordiv/floormod, print and assert.
inline Kernel mixedTypes(const Target& target) {
    bool cpu = target.backend == Backend::Cpu;
    int threads = cpu ? 1 : 64;
    VarPtr N = makeVar("N"), scale = makeVar("scale", DType::F32);
    Buffer X = makeBuffer("X", DType::BF16, MemScope::Global, {Expr(N)});
    Buffer Q = makeBuffer("Q", DType::F8E4M3, MemScope::Global, {Expr(N)});
    Buffer H = makeBuffer("H", DType::F16, MemScope::Global, {intImm(16)});
    Buffer C = makeBuffer("C", DType::I64, MemScope::Global, {intImm(4)});
    Buffer counts = makeBuffer("counts", DType::U16, MemScope::Global, {intImm(8)});  // 16-bit atomics
    Buffer best = makeBuffer("best", DType::F32, MemScope::Local, {});
    Buffer flags = makeBuffer("flags", DType::U32, MemScope::Local, {intImm(2)});
    Buffer wide = makeBuffer("wide", DType::F32, MemScope::Local, {intImm(8)});  // a 32-byte zero fill
    VarPtr bx = makeVar("bx", DType::I32, VarRole::BlockIndexX);
    VarPtr tx = makeVar("tx", DType::I32, VarRole::ThreadIndex);
    VarPtr i = makeVar("i"), x = makeVar("x", DType::F32), y = makeVar("y", DType::F32), big = makeVar("big", DType::I64);
    VarPtr unused = makeVar("unused");
    VarPtr isNew = makeVar("new", DType::Bool);  // a C++ keyword as a .tl name
    Expr xv = Expr(x);
    Expr math = call("exp2", DType::F32, {xv * f32(1.44269504, "1.44269504")}) + call("rsqrt", DType::F32, {xv * xv + f32(1.0)}) +
                call("sigmoid", DType::F32, {xv}) + call("fast_exp", DType::F32, {xv}) + call("pow", DType::F32, {xv, f32(2.0)}) +
                call("abs", DType::F32, {xv}) + call("erf", DType::F32, {xv}) + call("log2", DType::F32, {call("abs", DType::F32, {xv}) + f32(1.0)});
    if (!cpu) math = math + call("fast_tanh", DType::F32, {xv});
    Stmt body = seq({
        store(wide, {intImm(0)}, zero(DType::F32, 8), L(5)),
        store(best, {}, maxExpr(load(best, {}), xv + ir::load(wide, {Expr(i) % 8})), L(5)),
        letStmt(y, select(Expr(isNew), math, minExpr(xv, f32(-0.5))),
                seq({store(Q, {Expr(i)}, cast(DType::F8E4M3, Expr(y) * Expr(scale)), L(6)),
                     store(H, {call("floormod", DType::I32, {Expr(i), intImm(16)})}, cast(DType::F16, Expr(y)), L(7), StoreKind::AtomicAdd),
                     store(C, {call("floordiv", DType::I32, {Expr(i), intImm(16)}) % 4}, Expr(big), L(7), StoreKind::AtomicAdd),
                     store(counts, {Expr(i) % 8}, intImm(1, DType::U16), L(7), StoreKind::AtomicAdd),
                     evaluate(call("print", DType::I32, {Expr(y)}), L(8)),
                     evaluate(call("print", DType::I32, {Expr(i)}), L(8), "row 100%"),
                     evaluate(call("assert", DType::I32, {binary(BinaryOp::Ge, Expr(i), intImm(0))}), L(8),
                              "i is \"non-negative\"")}),
                L(6)),
    });
    Expr xval = cast(DType::F32, load(X, {Expr(i)}));
    Stmt hash = seq({
        store(flags, {intImm(0)}, cast(DType::U32, Expr(i)) * intImm(2654435761, DType::U32), L(5)),
        store(flags, {intImm(1)}, binary(BinaryOp::BitXor, ir::load(flags, {intImm(0)}), binary(BinaryOp::Shr, ir::load(flags, {intImm(0)}), intImm(16, DType::U32))), L(5)),
    });
    Stmt element = letStmt(
        x, xval,
        letStmt(unused, Expr(i) * 3,
                letStmt(big, cast(DType::I64, Expr(i)) * intImm(int64_t(1) << 40, DType::I64) + cast(DType::I64, ir::load(flags, {intImm(1)}) % intImm(7, DType::U32)),
                        letStmt(isNew, logicalAnd(xv >= f32(0.0), unary(UnaryOp::Not, binary(BinaryOp::Or, Expr(i) < 0, binary(BinaryOp::And, binary(BinaryOp::Gt, Expr(i), intImm(1000000)), Expr(i) < Expr(N))))), body, L(5)),
                        L(5)),
                L(4)),
        L(4));
    Stmt perElement = letStmt(i, Expr(bx) * threads + Expr(tx),
                              ifThenElse(Expr(i) < Expr(N), seq({hash, element}), {}, L(4)), L(4));
    Kernel k;
    k.name = "mixed_types";
    k.sourceName = "mixed.tl";
    k.loc = L(1);
    k.params = {tensorParam(X), tensorParam(Q), tensorParam(H), tensorParam(C), tensorParam(counts), scalarParam(scale),
                sizeParam(N)};
    k.gridExtents = {ceildivExpr(Expr(N), threads)};
    k.blockVars = {bx};
    k.threads = threads;
    k.threadIndex = tx;
    k.body = allocate(best, allocate(flags, allocate(wide, perElement, L(3)), L(3)), L(3), floatImm(-INFINITY, DType::F32));
    return k;
}

inline std::vector<Kernel> allKernels(const Target& target) {
    return {vectorAdd(target), rowSum(target), halfScale(target), bigShared(target), mixedTypes(target)};
}

} // namespace tlc::emit_test
