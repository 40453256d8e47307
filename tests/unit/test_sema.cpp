// Unit tests of semantic analysis: annotations left in the AST (types, constants, decls,
// bound arguments, resolved regions) and the rules that reject programs.
#include "test_sema_helpers.h"

#include "sema/Builtins.h"

#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace tlc;
using namespace tlc::ast;
using tlc::test::check;
using tlc::test::Checked;

namespace {

const char* kGemm = R"(
kernel gemm<block_M = 128, block_N = 128, block_K = 32, stages = 3, threads = 128>(
    A: f16[M, K], B: f16[K, N], C: f16[M, N])
{
    grid(ceildiv(N, block_N), ceildiv(M, block_M), threads = threads) as (bx, by) {
        let A_s = alloc_shared([block_M, block_K], f16);
        let B_s = alloc_shared([block_K, block_N], f16);
        let C_f = alloc_fragment([block_M, block_N], f32);
        clear(C_f);
        for k in pipelined(ceildiv(K, block_K), stages = stages) {
            copy(A[by * block_M, k * block_K], A_s);
            copy(B[k * block_K, bx * block_N], B_s);
            gemm(A_s, B_s, C_f);
        }
        copy(C_f, C[by * block_M, bx * block_N]);
    }
}
)";

// The n-th call (0-based) to `callee` in the kernel, in source order.
const Call* findCall(const Kernel& k, const std::string& callee, int n = 0) {
    const Expr* e = tlc::test::findExpr(k, [&](const Expr& x) {
        auto* c = x.as<Call>();
        return c && c->callee == callee && n-- == 0;
    });
    return e ? e->as<Call>() : nullptr;
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += s + "\n";
    return out;
}
#define REQUIRE_CHECKS(c)                  \
    do {                                   \
        INFO(joined((c).messages()));      \
        REQUIRE((c).ok);                   \
    } while (0)

Shape shapeOf(std::initializer_list<int64_t> values) {
    Shape s;
    for (int64_t v : values) s.push_back(Extent::constant(v));
    return s;
}

std::string wrap(const std::string& body, const std::string& params = "A: f32[M, N]",
                 const std::string& tparams = "") {
    return "kernel k" + tparams + "(" + params + ") {\n grid(4, threads = 128) as (bx) {\n" + body + "\n }\n}\n";
}

} // namespace

TEST_CASE("sema: the gemm sample checks and every node is annotated") {
    Checked c = check(kGemm);
    REQUIRE_CHECKS(c);
    const Kernel& k = c.kernel();
    REQUIRE(k.grid != nullptr);
    CHECK(k.grid->vars.size() == 2);

    // Symbolic sizes in order of first appearance in the parameter list.
    REQUIRE(k.sizeParams.size() == 3);
    CHECK(k.sizeParams[0]->name == "M");
    CHECK(k.sizeParams[1]->name == "K");
    CHECK(k.sizeParams[2]->name == "N");
    for (const Decl* d : k.sizeParams) {
        CHECK(d->kind == Decl::Kind::SymbolicSize);
        CHECK(d->type.isScalar());
        CHECK(d->type.dtype == DType::I32);
    }

    // Template params fold; tensor params carry their shapes.
    for (const auto& tp : k.templateParams) REQUIRE(tp.decl);
    CHECK(std::get<int64_t>(*k.templateParams[0].decl->constant) == 128);
    const Decl* a = k.params[0].decl;
    REQUIRE(a);
    CHECK(a->kind == Decl::Kind::TensorParam);
    CHECK(a->type.kind == Type::Kind::Tensor);
    CHECK(a->type.scope == MemScope::Global);
    CHECK(shapeString(a->type.shape) == "[M, K]");

    // Every expression has a type; every name has a decl except dtype names.
    tlc::test::forEachExpr(k, [&](const Expr& e) {
        CHECK_MESSAGE(!e.type.isError(), "untyped expression at line ", e.range.begin.line);
        if (auto* n = e.as<Name>()) {
            bool isDType = parseDType(n->name).has_value();
            CHECK_MESSAGE((n->decl != nullptr) != isDType, "name ", n->name);
        }
    });

    // Buffers: scope, dtype, shape.
    const Decl* as = c.decl("A_s");
    REQUIRE(as);
    CHECK(as->type.scope == MemScope::Shared);
    CHECK(as->type.dtype == DType::F16);
    CHECK(as->type.shape == shapeOf({128, 32}));
    CHECK(c.decl("C_f")->type.scope == MemScope::Fragment);
    CHECK(c.decl("C_f")->type.dtype == DType::F32);

    // Regions: all points take the other operand's extents.
    const Call* copyA = findCall(k, "copy", 0);
    REQUIRE(copyA);
    const Expr& region = *copyA->boundArgs[0];
    CHECK(region.type.kind == Type::Kind::Region);
    CHECK(region.type.extentsFromOtherOperand);
    CHECK(region.type.shape == shapeOf({128, 32}));
    const Call* copyC = findCall(k, "copy", 2);
    CHECK(copyC->boundArgs[1]->type.shape == shapeOf({128, 128}));

    // Grid extents keep their canonical symbolic text, with constants substituted.
    const Call* launch = k.grid->launch.get();
    CHECK(launch->builtin == int(Builtin::Grid));
    REQUIRE(launch->boundArgs.size() == 7);  // x, y, z, threads, persistent, split_k, cluster
    CHECK(launch->boundArgs[2] == nullptr);
    CHECK(std::get<int64_t>(*launch->boundArgs[3]->constant) == 128);
    CHECK(launch->boundArgs[4] == nullptr);  // `persistent` left out
    CHECK(launch->boundArgs[5] == nullptr);  // `split_k` left out
    CHECK(launch->boundArgs[6] == nullptr);  // `cluster` left out
}

TEST_CASE("sema: -D overrides compile-time parameters and specialises sizes") {
    Checked c = check(kGemm, {{"block_M", "64"}, {"M", "4096"}});
    REQUIRE_CHECKS(c);
    const Kernel& k = c.kernel();
    CHECK(std::get<int64_t>(*k.templateParams[0].decl->constant) == 64);
    // The default stays on the expression; the decl holds the value in force.
    CHECK(std::get<int64_t>(*k.templateParams[0].defaultValue->constant) == 128);
    CHECK(c.decl("A_s")->type.shape == shapeOf({64, 32}));
    // A specialised size is a constant, not a launcher argument.
    REQUIRE(k.sizeParams.size() == 2);
    CHECK(k.sizeParams[0]->name == "K");
    const Decl* m = c.decl("M");
    REQUIRE(m);
    CHECK(std::get<int64_t>(*m->constant) == 4096);
    CHECK(shapeString(k.params[0].decl->type.shape) == "[4096, K]");
    // ceildiv(M, block_M) now folds.
    CHECK(std::get<int64_t>(*k.grid->launch->boundArgs[1]->constant) == 64);
}

TEST_CASE("sema: -D errors") {
    Checked bad = check(kGemm, {{"stages", "true"}, {"nope", "1"}, {"block_K", "1.5.2"}});
    CHECK_FALSE(bad.ok);
    auto ids = bad.ids();
    CHECK(std::count(ids.begin(), ids.end(), "err_define_type_mismatch") == 1);
    CHECK(std::count(ids.begin(), ids.end(), "err_define_unknown") == 1);
    CHECK(std::count(ids.begin(), ids.end(), "err_define_invalid_value") == 1);
    // dtype and float parameters take the matching kinds of value.
    const char* src = "kernel k<dt = f16, eps = 1e-5>() { grid(1, threads = 32) as (b) { } }";
    Checked ok = check(src, {{"dt", "bfloat16"}, {"eps", "1"}});
    REQUIRE_CHECKS(ok);
    CHECK(std::get<DType>(*ok.decl("dt")->constant) == DType::BF16);
    CHECK(std::get<double>(*ok.decl("eps")->constant) == doctest::Approx(1.0));
}

TEST_CASE("sema: literal types and promotion") {
    Checked c = check(wrap(R"(
        let a = 7;
        let b = 3000000000;
        let c = 1.5;
        let d = a * 2.0;
        let e = f16(1) * 2;
        let f = a < 3;
        let g = -7 / 2;
        let h = -7 % 2;
        let i = floordiv(-7, 2);
        let j = floormod(-7, 2);
        let l = ceildiv(7, 2);
        let m = max(3, 1.5);
        let n = true ? 1 : 2.5;
        let o = i64(a) + 1;
        let p = exp(a);
        let q = abs(-a);
        let r = !a;
        var s = alloc_fragment([4], f32);
        A[0, 0] = 0.0;
    )"));
    auto type = [&](const char* name) { return c.decl(name)->type; };
    auto constant = [&](const char* name) { return c.decl(name)->constant; };
    CHECK(type("a").dtype == DType::I32);
    CHECK(type("b").dtype == DType::I64);
    CHECK(type("c").dtype == DType::F32);
    CHECK(type("d").dtype == DType::F32);
    CHECK(type("e").dtype == DType::F16);
    CHECK(type("f").dtype == DType::Bool);
    CHECK(std::get<bool>(*constant("f")) == false);
    CHECK(std::get<int64_t>(*constant("g")) == -3);  // C truncation
    CHECK(std::get<int64_t>(*constant("h")) == -1);
    CHECK(std::get<int64_t>(*constant("i")) == -4);  // floor
    CHECK(std::get<int64_t>(*constant("j")) == 1);
    CHECK(std::get<int64_t>(*constant("l")) == 4);
    CHECK(type("m").dtype == DType::F32);
    CHECK(std::get<double>(*constant("m")) == doctest::Approx(3.0));
    CHECK(type("n").dtype == DType::F32);
    CHECK(std::get<double>(*constant("n")) == doctest::Approx(1.0));
    CHECK(type("o").dtype == DType::I64);
    CHECK(type("p").dtype == DType::F32);
    CHECK_FALSE(constant("p").has_value());  // transcendental math is left to run time
    CHECK(type("q").dtype == DType::I32);
    CHECK(type("r").dtype == DType::Bool);
}

TEST_CASE("sema: alloc_var and var are mutable scalars; lets fold") {
    Checked c = check(wrap(R"(
        let x = alloc_var(f32, 1.0);
        let y = alloc_var(i32);
        var z: f16 = 2;
        var w = 3;
        let n = 4 * 8;
        let buf = alloc_local([n], f32);
        x = x + 1.0; y += 1; z *= 2.0; w = w + 1;
        buf[0] = x + y + z + w;
    )"));
    REQUIRE_CHECKS(c);
    const Decl* x = c.decl("x");
    CHECK(x->kind == Decl::Kind::Var);
    CHECK(x->type.isScalar());
    CHECK(x->type.dtype == DType::F32);
    CHECK(c.decl("y")->type.dtype == DType::I32);
    CHECK(c.decl("z")->type.dtype == DType::F16);
    CHECK(c.decl("z")->kind == Decl::Kind::Var);
    CHECK(c.decl("w")->type.dtype == DType::I32);
    CHECK(std::get<int64_t>(*c.decl("n")->constant) == 32);
    CHECK(c.decl("buf")->type.scope == MemScope::Local);
    CHECK(c.decl("buf")->type.shape == shapeOf({32}));
    const Call* alloc = findCall(c.kernel(), "alloc_var");
    CHECK(alloc->builtin == int(Builtin::AllocVar));
    CHECK(alloc->boundArgs.size() == 2);
    CHECK(alloc->boundArgs[1] != nullptr);
    CHECK(findCall(c.kernel(), "alloc_var", 1)->boundArgs[1] == nullptr);
}

TEST_CASE("sema: symbolic extents are canonical") {
    Checked c = check(R"(
kernel k<block = 128>(A: f32[2 * M + 1, N * 2], B: f32[N + M, M + N], C: f32[ceildiv(N, block)], D: f32[1 + M * 2]) {
    grid(ceildiv(N, block), threads = 128) as (bx) {
        let a = alloc_fragment([64], f32);
        copy(A[bx : bx + 64, 0], a);
        copy(A[:, 0], D);
    }
}
)");
    REQUIRE_CHECKS(c);
    const Kernel& k = c.kernel();
    CHECK(shapeString(k.params[0].decl->type.shape) == "[2 * M + 1, 2 * N]");
    // Written in either order, the same sum has the same text.
    const Shape& b = k.params[1].decl->type.shape;
    CHECK(b[0] == b[1]);
    CHECK(b[0].symbol == "M + N");
    CHECK(k.params[2].decl->type.shape[0].symbol == "ceildiv(N, 128)");
    // `bx : bx + 64` has extent 64 whatever bx is.
    const Call* first = findCall(k, "copy", 0);
    CHECK(first->boundArgs[0]->type.shape == shapeOf({64, 1}));
    const Call* second = findCall(k, "copy", 1);
    CHECK(shapeString(second->boundArgs[0]->type.shape) == "[2 * M + 1, 1]");
}

TEST_CASE("sema: region resolution by unit dimensions") {
    Checked c = check(wrap(R"(
        let v = alloc_fragment([64], f32);
        let q = alloc_shared([1, 64], f32);
        let t = alloc_shared([64, 1, 32], f32);
        copy(X[0, 0, 0], v);
        copy(Y[0], q);
        copy(Y[0], t[0:64, 0, 0]);
        copy(X[bx, 0:+64, 5], v);
        copy(X[bx, 0, 0], t);
    )", "X: f32[B, S, D], Y: f32[S]"));
    REQUIRE_CHECKS(c);
    const Kernel& k = c.kernel();
    // A point region of higher rank: leading extents of 1.
    CHECK(findCall(k, "copy", 0)->boundArgs[0]->type.shape == shapeOf({1, 1, 64}));
    // An operand of higher rank: its unit dimensions are dropped.
    CHECK(findCall(k, "copy", 1)->boundArgs[0]->type.shape == shapeOf({64}));
    CHECK(findCall(k, "copy", 2)->boundArgs[1]->type.shape == shapeOf({64, 1, 1}));
    const Expr& sliced = *findCall(k, "copy", 3)->boundArgs[0];
    CHECK_FALSE(sliced.type.extentsFromOtherOperand);
    CHECK(sliced.type.shape == shapeOf({1, 64, 1}));
    CHECK(findCall(k, "copy", 4)->boundArgs[0]->type.shape == shapeOf({64, 1, 32}));

    Checked bad = check(wrap("let v = alloc_fragment([64, 2], f32); copy(Y[0], v);", "Y: f32[S]"));
    CHECK_FALSE(bad.ok);
    CHECK(bad.ids() == std::vector<std::string>{"err_tile_shape_mismatch"});
}

TEST_CASE("sema: builtin calls bind keyword and positional arguments") {
    Checked c = check(wrap(R"(
        let a = alloc_shared([64, 32], f16);
        let b = alloc_shared([64, 32], f16);
        let acc = alloc_fragment([64, 64], f32);
        let m = alloc_fragment([64], f32);
        clear(acc);
        gemm(a, b, acc, transpose_B = true, policy = full_row);
        reduce_max(acc, m, clear = false, dim = 1);
        for k in pipelined(8, num_stages = 2) { }
        for (i, j) in parallel(64, 32) { a[i, j] = 0.0; }
        for i in range(2, 10, 2) { }
        for i in range(5) { }
    )"));
    REQUIRE_CHECKS(c);
    const Kernel& k = c.kernel();
    const Call* gemm = findCall(k, "gemm");
    CHECK(gemm->builtin == int(Builtin::Gemm));
    REQUIRE(gemm->boundArgs.size() == builtinInfo(Builtin::Gemm).params.size());
    CHECK(gemm->boundArgs[3] == nullptr);  // transpose_A: default
    CHECK(std::get<bool>(*gemm->boundArgs[4]->constant));
    const auto* policy = gemm->boundArgs[5]->as<Name>();
    REQUIRE(policy);
    CHECK(policy->name == "full_row");
    CHECK(policy->decl == nullptr);
    const Call* reduce = findCall(k, "reduce_max");
    CHECK(std::get<int64_t>(*reduce->boundArgs[2]->constant) == 1);
    CHECK(std::get<bool>(*reduce->boundArgs[3]->constant) == false);
    const Call* pipelined = findCall(k, "pipelined");
    CHECK(std::get<int64_t>(*pipelined->boundArgs[2]->constant) == 2);  // num_stages is stages
    const Call* parallel = findCall(k, "parallel");
    REQUIRE(parallel->boundArgs.size() == 2);
    CHECK(std::get<int64_t>(*parallel->boundArgs[1]->constant) == 32);
    const Call* range3 = findCall(k, "range", 0);
    CHECK(std::get<int64_t>(*range3->boundArgs[2]->constant) == 2);
    const Call* range1 = findCall(k, "range", 1);
    CHECK(range1->boundArgs[1] == nullptr);
    // Loop variables and grid variables are i32 declarations.
    const Decl* i = c.decl("i");
    CHECK(i->kind == Decl::Kind::LoopVar);
    CHECK(c.decl("bx")->kind == Decl::Kind::GridVar);
}

TEST_CASE("sema: builtin table is consistent") {
    std::set<std::string_view> names;
    for (const auto& b : allBuiltins()) {
        CHECK(names.insert(b.name).second);
        CHECK(findBuiltin(b.name) == &b);
        CHECK(&builtinInfo(b.id) == &b);
        std::set<std::string_view> params;
        bool seenOptional = false;
        for (const auto& p : b.params) {
            CHECK(params.insert(p.name).second);
            // Required parameters come first, so that positional binding is unambiguous.
            if (p.hasDefault) seenOptional = true;
            else CHECK_MESSAGE(!seenOptional, b.name, ": required '", p.name, "' after an optional one");
            if (p.kind == ParamKind::Name) CHECK_FALSE(allowedNames(b.id, p.name).empty());
        }
    }
}

TEST_CASE("sema: call signature errors") {
    auto idsOf = [](const std::string& body) { return check(wrap(body)).ids(); };
    const std::string bufs = "let a = alloc_fragment([64, 64], f32); clear(a);\n";
    CHECK(idsOf(bufs + "copy(a);") == std::vector<std::string>{"err_missing_arg"});
    CHECK(idsOf(bufs + "copy(a, a, a);") == std::vector<std::string>{"err_too_many_args"});
    CHECK(idsOf(bufs + "copy(a, a, dst = a);") == std::vector<std::string>{"err_duplicate_arg_positional"});
    CHECK(idsOf(bufs + "copy(a, dst = a, dst = a);") == std::vector<std::string>{"err_duplicate_arg"});
    CHECK(idsOf(bufs + "copy(a, a, fast = true);") == std::vector<std::string>{"err_unknown_keyword"});
    CHECK(idsOf(bufs + "copy(dst = a, a);") == std::vector<std::string>{"err_positional_after_keyword"});
    CHECK(idsOf(bufs + "copy(a, 1);") == std::vector<std::string>{"err_arg_kind"});
    CHECK(idsOf(bufs + "reduce_sum(a, a, dim = bx);") == std::vector<std::string>{"err_not_constant"});
    CHECK(idsOf(bufs + "gemm(a, a, a, policy = fast);") == std::vector<std::string>{"err_invalid_choice"});
}

TEST_CASE("sema: every error in a kernel is reported, follow-ons are not") {
    Checked c = check(wrap(R"(
        let a = alloc_fragment([64], f32);
        let b = alloc_fragment([64], q16);
        copy(b, a);
        clear(b);
        let x = nope + 1;
        let y = x * 2;
        copy(a, A[0, 0, 0]);
    )"));
    // One error per mistake: the unknown dtype poisons b, the unknown name poisons x and y.
    CHECK(c.ids() == std::vector<std::string>{"err_unknown_dtype", "err_unknown_name", "err_index_count"});
}

TEST_CASE("sema: gemm dtype combinations and target features") {
    auto gemmWith = [](const char* ab, const char* acc, const char* target) {
        std::string body = std::string("let a = alloc_shared([64, 32], ") + ab + ");\n" +
                           "let b = alloc_shared([32, 64], " + ab + ");\n" + "let c = alloc_fragment([64, 64], " +
                           acc + ");\nclear(a); clear(b); clear(c);\ngemm(a, b, c);";
        return check(wrap(body), {}, target);
    };
    CHECK(gemmWith("f16", "f32", "sm80").ok);
    CHECK(gemmWith("bf16", "f32", "gfx90a").ok);
    CHECK(gemmWith("f16", "f16", "cpu").ok);
    CHECK(gemmWith("i8", "i32", "sm86").ok);
    CHECK(gemmWith("f32", "f32", "sm90").ok);
    CHECK_FALSE(gemmWith("bf16", "bf16", "sm90").ok);
    CHECK_FALSE(gemmWith("i8", "f32", "sm90").ok);
    for (const auto& t : allTargets()) {
        bool fp8 = t.backend == Backend::Cuda ? t.has(Feature::MmaFp8) || t.has(Feature::Wgmma)
                   : t.backend == Backend::Hip ? t.has(Feature::MfmaFp8)
                                               : true;
        Checked c = gemmWith("f8e4m3", "f32", std::string(t.name).c_str());
        CHECK_MESSAGE(c.ok == fp8, t.name);
        if (!fp8) CHECK(c.ids() == std::vector<std::string>{"err_gemm_fp8_target"});
    }
    // Without a target only the language's rules apply.
    CHECK(gemmWith("f8e5m2", "f32", nullptr).ok);
}

TEST_CASE("sema: shared memory and threads against the target") {
    // Sema refuses only a buffer that alone exceeds the target: the sum is the shared-memory
    // plan's to check after lowering (buffers never live at once share bytes).
    std::string body = "let a = alloc_shared([128, 128], f32); let b = alloc_shared([64, 128], f32); clear(a); clear(b);";
    // 64 KiB + 32 KiB: sema leaves it to the plan on every target.
    for (const char* t : {"sm90", "sm80", "gfx942"}) CHECK_MESSAGE(check(wrap(body), {}, t).ok, t);
    CHECK(check(wrap(body), {}, nullptr).ok);
    // 128 KiB in one buffer: fits Hopper and Ampere, not CDNA's 64 KiB.
    std::string big = "let a = alloc_shared([256, 128], f32); clear(a);";
    CHECK(check(wrap(big), {}, "sm90").ok);
    CHECK(check(wrap(big), {}, "sm80").ok);
    CHECK(check(wrap(big), {}, "gfx942").ids() == std::vector<std::string>{"err_shared_memory_exceeded"});
    // Never used: it takes no bytes in the plan, so sema does not refuse it either (a warning).
    std::string unused = "let a = alloc_shared([256, 128], f32);";
    CHECK(check(wrap(unused), {}, "gfx942").ok);
    std::string threads = "kernel k() { grid(1, threads = 1025) as (b) { } }";
    CHECK(check(threads, {}, "sm90").ids() == std::vector<std::string>{"err_threads_exceed_target"});
    CHECK(check(threads, {}, nullptr).ok);
}

TEST_CASE("sema: reductions") {
    auto reduce = [](const char* dst, const char* dim) {
        std::string body = std::string("let x = alloc_fragment([16, 32], f32); let d = alloc_fragment(") + dst +
                           ", f32); clear(x); reduce_sum(x, d" + dim + ");";
        return check(wrap(body)).ids();
    };
    using V = std::vector<std::string>;
    CHECK(reduce("[16]", ", dim = 1") == V{});
    CHECK(reduce("[16]", "") == V{});  // dim defaults to the last
    CHECK(reduce("[32]", ", dim = 0") == V{});
    CHECK(reduce("[16, 1]", ", dim = -1") == V{});
    CHECK(reduce("[32]", ", dim = 1") == V{"err_reduce_shape_mismatch"});
    CHECK(reduce("[16]", ", dim = 2") == V{"err_reduce_dim_out_of_range"});
    CHECK(reduce("[16]", ", dim = -3") == V{"err_reduce_dim_out_of_range"});
}

TEST_CASE("sema: auto parameters are compile-time but deferred") {
    Checked c = check(R"(
kernel k<block = auto, threads = auto>(A: f32[M]) {
    grid(ceildiv(M, block), threads = threads) as (bx) {
        let a = alloc_shared([block], f32);
        copy(A[bx * block], a);
        for i in parallel(block) { a[i] = a[i] * 2.0; }
        copy(a, A[bx * block]);
    }
}
)");
    REQUIRE_CHECKS(c);
    CHECK(c.decl("a")->type.shape[0].symbol == "block");
    Checked fixed = check(R"(
kernel k<block = auto>(A: f32[M]) {
    grid(ceildiv(M, block), threads = 128) as (bx) { let a = alloc_shared([block], f32); copy(A[bx * block], a); }
}
)", {{"block", "256"}});
    REQUIRE_CHECKS(fixed);
    CHECK(fixed.decl("a")->type.shape == shapeOf({256}));
}

TEST_CASE("sema: every sample checks on every target") {
    for (const char* name : {"vector_add", "reduce_sum", "softmax", "rmsnorm", "gemm", "flash_attention"}) {
        std::ifstream in(std::string(TLC_SOURCE_DIR) + "/samples/" + name + ".tl");
        REQUIRE_MESSAGE(in, name);
        std::stringstream text;
        text << in.rdbuf();
        for (const auto& t : allTargets()) {
            Checked c = check(text.str(), {}, std::string(t.name).c_str());
            CHECK_MESSAGE(c.ok, name, " on ", t.name);
            CHECK_MESSAGE(c.diags->diagnostics().empty(), name, " on ", t.name);
            if (!c.ok) continue;
            for (const auto& k : c.file->kernels)
                tlc::test::forEachExpr(*k, [&](const Expr& e) {
                    CHECK_MESSAGE(!e.type.isError(), name, ":", e.range.begin.line);
                    // Point regions always end up with full-rank extents.
                    if (e.type.kind == Type::Kind::Region)
                        CHECK_MESSAGE(e.type.rank() == e.as<Index>()->subscripts.size(), name, ":",
                                      e.range.begin.line);
                });
        }
    }
}

TEST_CASE("sema: long operator chains stay fast") {
    // Symbolic extents of 9000-factor products: exponential before the affine forms visited
    // each operand once; now linear.
    std::string product, indices;
    for (int i = 0; i < 9000; ++i) {
        product += i ? "*M" : "M";
        indices += i ? "*bx" : "bx";
    }
    Checked c = check("kernel k(A: f32[" + product + "]) { grid(4, threads = 128) as (bx) { let a = "
                      "alloc_fragment([64], f32); copy(A[0:" + indices + "], a); } }");
    CHECK(c.ids() == std::vector<std::string>{"err_tile_shape_mismatch"});
    // The message quotes clipped extents, not 50 KB of them.
    REQUIRE_FALSE(c.messages().empty());
    CHECK(c.messages()[0].size() < 400);
}

TEST_CASE("sema: flash attention's slices, folded condition and fp16 casts") {
    std::ifstream in(std::string(TLC_SOURCE_DIR) + "/samples/flash_attention.tl");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    for (const char* causal : {"false", "true"}) {
        Checked c = check(text.str(), {{"causal", causal}, {"block_M", "128"}});
        REQUIRE_CHECKS(c);
        const Kernel& k = c.kernel();
        // Q[bz, bx * block_M : +block_M, by, :]: points are extent 1, `:` the whole of D.
        const Call* copyQ = findCall(k, "copy", 0);
        const Expr& q = *copyQ->boundArgs[0];
        CHECK_FALSE(q.type.extentsFromOtherOperand);
        CHECK(q.type.shape == shapeOf({1, 128, 1, 128}));
        // `if (causal)` folds to the -D value.
        const Expr* cond = tlc::test::findExpr(k, [](const Expr& e) {
            auto* n = e.as<Name>();
            return n && n->name == "causal";
        });
        REQUIRE(cond);
        CHECK(std::get<bool>(*cond->constant) == (std::string(causal) == "true"));
        // The sizes of Q are B, S, H (D is a compile-time parameter).
        REQUIRE(k.sizeParams.size() == 3);
        CHECK(k.sizeParams[1]->name == "S");
        CHECK(shapeString(k.params[0].decl->type.shape) == "[B, S, H, 128]");
    }
}
