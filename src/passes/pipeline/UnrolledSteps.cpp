// The schedules of a k-loop unrolled by U (docs/lowering.md, "Unrolling the k-step";
// Unroll.cpp chooses U): iterations go in groups of U consecutive k-tiles, group g = iterations
// U g .. U g + U - 1 (the last group short when U does not divide the trip count n), and the
// consumers handle a group at once:
//
//     wait full for each of its k-tiles
//     the gemm of each k-tile, one wgmma group: the first fences, the last commits and waits
//     (wait_group<1>: the previous group is done, this one stays in flight)
//     arrive on empty for each k-tile of the previous group (always a whole one)
//
// and after the loop the last group is drained and its k-tiles released. Only the last group
// can be short, and it is the only code that depends on n % U: its variants are whole groups
// of their own, chosen by n % U, so no wgmma of a group ever sits under a condition.
//
// Warp-specialised: the producer warpgroup loads every iteration as before; the consumers run
// n / U whole groups in a loop, then the short group if any. Prologue / steady state: a modulo
// schedule over groups. With V versions (a multiple of U, at least 2U) the readers run
// Sg = V / U - 1 groups behind the loads: step T reads group T - Sg, releases group T - Sg - 1,
// then thread 0 loads group T, whose k-tiles reuse the versions of group T - Sg - 1 just
// released (iteration p waits on empty for p - V, and p - V < U (T - Sg) for every p of group T).
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"
#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

namespace {

using Part = ops::GemmOp::GroupPart;

class UnrolledSteps {
public:
    UnrolledSteps(const LoopPlan& plan, const MbarrierProtocol& mbarriers)
        : plan_(plan), mbarriers_(mbarriers), n_(plan.loop->extent), u_(plan.unroll), loc_(plan.loop->loc) {}

    // Groups in all: ceil(n / U).
    Expr groups() const { return simplify((n_ + int64_t(u_ - 1)) / int64_t(u_)); }

    // The consumers' side of group `g`, `count` k-tiles long (U but for a short last group),
    // then the release of group g - 1.
    Stmt readGroup(const Expr& g, int count) const {
        const Expr first = simplify(g * int64_t(u_));
        std::vector<Stmt> out;
        for (int u = 0; u < count; ++u) out.push_back(mbarriers_.consume(at(first, u)));
        for (int u = 0; u < count; ++u) {
            Part part = count == 1 ? Part::Whole : u == 0 ? Part::Opens : u + 1 == count ? Part::Closes : Part::Continues;
            out.push_back(instance(plan_, plan_.inFlight, at(first, u), false, part));
        }
        std::vector<Stmt> release;
        for (int u = 0; u < u_; ++u) release.push_back(mbarriers_.release(simplify(first - int64_t(u_ - u))));
        out.push_back(when(binary(BinaryOp::Le, intImm(1), g), seq(release, loc_)));
        return seq(out, loc_);
    }

    // The last group (g), short when U does not divide n: a whole group of its own for each
    // length, chosen by n % U.
    Stmt readLastGroup(const Expr& g) const {
        Stmt out = readGroup(g, u_);
        const Expr rest = simplify(n_ % int64_t(u_));
        for (int r = 1; r < u_; ++r)
            out = ifThenElse(simplify(binary(BinaryOp::Eq, rest, intImm(r))), readGroup(g, r), out, loc_);
        return out;
    }

    // Thread 0 claims iteration `iter`'s version and the TMA loads fill it, where it exists.
    Stmt produce(const Expr& iter) const {
        std::vector<Stmt> out{mbarriers_.produce(iter)};
        for (size_t i : plan_.byPos)
            if (plan_.items[i].tma) out.push_back(instance(plan_, i, iter));
        return when(binary(BinaryOp::Lt, iter, n_), seq(out, loc_));
    }
    Stmt produceGroup(const Expr& group) const {
        std::vector<Stmt> out;
        for (int u = 0; u < u_; ++u) out.push_back(produce(at(simplify(group * int64_t(u_)), u)));
        return seq(out, loc_);
    }

    // After the loop: the last group's wgmmas drained, its k-tiles released (the group starts
    // at (n - 1) / U x U).
    Stmt drain() const {
        const auto* t = plan_.items[plan_.inFlight].stmt.as<TileOpStmt>();
        const auto* gemm = static_cast<const ops::GemmOp*>(t->op.get());
        const Expr first = simplify((n_ - int64_t(1)) / int64_t(u_) * int64_t(u_));
        std::vector<Stmt> release{mbarriers_.release(first)};
        for (int u = 1; u < u_; ++u)
            release.push_back(when(binary(BinaryOp::Lt, at(first, u), n_), mbarriers_.release(at(first, u))));
        return seq({tileOp(std::make_shared<ops::WgmmaDrainOp>(gemm->c()), loc_),
                    when(binary(BinaryOp::Le, intImm(1), n_), seq(release, loc_))},
                   loc_);
    }

    Expr at(const Expr& first, int u) const { return simplify(first + int64_t(u)); }

    // `s` under `cond`, or alone where the condition is known true, or nothing where false.
    Stmt when(const Expr& cond, const Stmt& s) const {
        Expr c = simplify(cond);
        if (const int64_t* k = asConstInt(c)) return *k ? s : seq({}, loc_);
        return ifThenElse(c, s, {}, loc_);
    }

    const LoopPlan& plan_;
    const MbarrierProtocol& mbarriers_;
    const Expr n_;
    const int u_;
    const SourceLoc loc_;
};

} // namespace

Stmt unrolledSchedule(const LoopPlan& plan, LowerContext& ctx) {
    MbarrierProtocol mbarriers(plan, ctx);
    UnrolledSteps steps(plan, mbarriers);
    const For* n = plan.loop;
    const SourceLoc loc = n->loc;
    const int U = plan.unroll;
    const int64_t lag = plan.tma.versions / U - 1;  // groups the readers run behind the loads
    const Expr groups = steps.groups();
    std::vector<Stmt> code;
    code.push_back(comment(fmt::format("pipelined loop over {}: {} stages, {} k-tiles per wgmma group, versions: "
                                       "{}; prologue",
                                       n->var->name, plan.last + 1, U, versionList(plan)),
                           loc));
    for (const auto& note : plan.tma.notes) code.push_back(comment(note, loc));
    code.push_back(initBarriers(plan, ctx));
    for (int64_t t = 0; t < lag; ++t) code.push_back(steps.produceGroup(intImm(t)));
    code.push_back(comment(fmt::format("steady state: group {0}_group reads k-tiles {1} x ({0}_group - {2}) .. + {3}, "
                                       "loads {1} x {0}_group .. + {3}",
                                       n->var->name, U, lag, U - 1),
                           loc));
    VarPtr g = ctx.freshVar(n->var->name + "_group", n->var->dtype);
    code.push_back(forLoop(g, intImm(lag), simplify(groups - lag), ForKind::Serial,
                           seq({steps.readGroup(simplify(Expr(g) - lag), U), steps.produceGroup(Expr(g))}, loc), loc));
    code.push_back(comment("epilogue", loc));
    for (int64_t j = 0; j < lag; ++j) {
        // The group this step reads, named (the expressions of its k-tiles are long otherwise).
        VarPtr e = ctx.freshVar(n->var->name + "_group", n->var->dtype);
        Stmt s = j + 1 < lag ? steps.readGroup(Expr(e), U) : steps.readLastGroup(Expr(e));
        s = letStmt(e, simplify(groups - (lag - j)), s, loc);
        code.push_back(steps.when(binary(BinaryOp::Le, intImm(lag - j), groups), s));
    }
    code.push_back(steps.drain());
    return seq(code, loc);
}

Stmt unrolledConsumers(const LoopPlan& plan, const MbarrierProtocol& mbarriers, LowerContext& ctx) {
    UnrolledSteps steps(plan, mbarriers);
    const For* n = plan.loop;
    const SourceLoc loc = n->loc;
    const int U = plan.unroll;
    VarPtr g = ctx.freshVar(n->var->name + "_group", n->var->dtype);
    const Expr whole = simplify(n->extent / int64_t(U));
    std::vector<Stmt> code{
        comment(fmt::format("{} k-tiles per wgmma group: group {}_group reads k-tiles {} x {}_group .. + {}", U,
                            n->var->name, U, n->var->name, U - 1),
                loc),
        forLoop(g, intImm(0), whole, ForKind::Serial, steps.readGroup(Expr(g), U), loc)};
    // The short last group, where U does not divide n.
    const Expr rest = simplify(n->extent % int64_t(U));
    for (int r = U - 1; r >= 1; --r) {
        VarPtr last = ctx.freshVar(n->var->name + "_group", n->var->dtype);
        code.push_back(steps.when(binary(BinaryOp::Eq, rest, intImm(r)),
                                  letStmt(last, whole, steps.readGroup(Expr(last), r), loc)));
    }
    code.push_back(steps.drain());
    return seq(code, loc);
}

} // namespace tlc::pipeline
