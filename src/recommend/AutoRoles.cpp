#include "recommend/AutoRoles.h"

#include "ast/AST.h"

#include <cctype>
#include <map>
#include <set>

namespace tlc {

const char* autoRoleName(AutoRole r) {
    switch (r) {
    case AutoRole::GemmTile: return "gemm_tile";
    case AutoRole::TileExtent: return "tile";
    case AutoRole::Split: return "split";
    case AutoRole::Stages: return "stages";
    case AutoRole::Threads: return "threads";
    case AutoRole::ThreadDim: return "thread_dim";
    case AutoRole::Persistent: return "persistent";
    case AutoRole::SplitK: return "split_k";
    case AutoRole::Cluster: return "cluster";
    }
    return "tile";
}

namespace {

// What the roles are read from: the `stages =` and `threads =` arguments that are a parameter
// alone, the buffers gemm reads and writes, and the names in each allocation's shape.
struct Uses {
    std::map<std::string, AutoRole> keyword;              // parameter -> Stages / Threads
    std::set<std::string> gemmOperands;                   // buffers (their root names)
    std::map<std::string, std::set<std::string>> shapes;  // buffer -> names in its shape

    void call(const ast::Call* c) {
        if (!c) return;
        for (const auto& a : c->args) {
            if (a.keyword == "threads" && a.value && a.value->kind == ast::ExprKind::List)
                for (const auto& el : a.value->as<ast::List>()->elements)
                    if (const auto* n = el->as<ast::Name>()) keyword.emplace(n->name, AutoRole::ThreadDim);
            const auto* n = a.value ? a.value->as<ast::Name>() : nullptr;
            if (!n) continue;
            if (a.keyword == "stages") keyword.emplace(n->name, AutoRole::Stages);
            if (a.keyword == "threads") keyword.emplace(n->name, AutoRole::Threads);
            if (a.keyword == "persistent") keyword.emplace(n->name, AutoRole::Persistent);
            if (a.keyword == "split_k") keyword.emplace(n->name, AutoRole::SplitK);
            if (a.keyword == "cluster") keyword.emplace(n->name, AutoRole::Cluster);
        }
        if (c->callee != "gemm") return;
        for (size_t i = 0; i < c->args.size() && i < 3; ++i) {
            const ast::Expr* root = c->args[i].keyword.empty() ? c->args[i].value.get() : nullptr;
            while (root && root->kind == ast::ExprKind::Index) root = root->as<ast::Index>()->base.get();
            if (const auto* n = root ? root->as<ast::Name>() : nullptr) gemmOperands.insert(n->name);
        }
    }
    void stmt(const ast::Stmt* s) {
        if (!s) return;
        if (const auto* b = s->as<ast::Block>()) {
            for (const auto& x : b->stmts) stmt(x.get());
        } else if (const auto* let = s->as<ast::LetStmt>()) {
            if (const auto* c = let->value ? let->value->as<ast::Call>() : nullptr) {
                if ((c->callee == "alloc_shared" || c->callee == "alloc_fragment") && !c->args.empty())
                    ast::forEachName(c->args.front().value.get(),
                                     [&](const ast::Name& n) { shapes[let->name].insert(n.name); });
                call(c);
            }
        } else if (const auto* e = s->as<ast::ExprStmt>()) {
            call(e->expr ? e->expr->as<ast::Call>() : nullptr);
        } else if (const auto* f = s->as<ast::ForStmt>()) {
            call(f->iter.get());
            stmt(f->body.get());
        } else if (const auto* w = s->as<ast::WhileStmt>()) {
            stmt(w->body.get());
        } else if (const auto* i = s->as<ast::IfStmt>()) {
            stmt(i->thenBlock.get());
            stmt(i->elseStmt.get());
        } else if (const auto* g = s->as<ast::GridStmt>()) {
            call(g->launch.get());
            stmt(g->body.get());
        }
    }
};

std::string lowered(const std::string& name) {
    std::string out;
    for (char c : name) out += char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

} // namespace

AutoRole autoRoleOf(const ast::Kernel& kernel, const std::string& name) {
    Uses uses;
    uses.stmt(kernel.body.get());
    if (auto it = uses.keyword.find(name); it != uses.keyword.end()) return it->second;
    std::string lower = lowered(name);
    if (lower.find("stage") != std::string::npos) return AutoRole::Stages;
    if (lower.find("thread") != std::string::npos) return AutoRole::Threads;
    if (lower.find("split") != std::string::npos) return AutoRole::Split;
    for (const std::string& buffer : uses.gemmOperands)
        if (auto it = uses.shapes.find(buffer); it != uses.shapes.end() && it->second.count(name))
            return AutoRole::GemmTile;
    return AutoRole::TileExtent;
}

std::vector<std::string> tunableParams(const ast::Kernel& kernel) {
    Uses uses;
    uses.stmt(kernel.body.get());
    std::set<std::string> inShapes, inTensors;
    for (const auto& [buffer, names] : uses.shapes) inShapes.insert(names.begin(), names.end());
    for (const auto& p : kernel.params)
        for (const auto& d : p.type.dims) ast::forEachName(d.get(), [&](const ast::Name& n) { inTensors.insert(n.name); });
    std::vector<std::string> out;
    for (const auto& tp : kernel.templateParams)
        if (!tp.isAuto && (uses.keyword.count(tp.name) || inShapes.count(tp.name)) && !inTensors.count(tp.name))
            out.push_back(tp.name);
    return out;
}

std::vector<int64_t> autoCandidates(AutoRole role, const Target& target) {
    switch (role) {
    // The matrix instructions' tiles are 16 x 8 (mma.sync) or 16 x 16 (MFMA) and up.
    case AutoRole::GemmTile: return {16, 32, 64, 128, 256};
    // Rows of a norm or a softmax start at one (TileLang's LayerNorm runs one row a block).
    case AutoRole::TileExtent: return {1, 2, 4, 8, 16, 32, 64, 128, 256};
    case AutoRole::Split: return {1, 2, 4, 8, 16};
    // The cpu runs a pipelined loop's iterations in order: more stages only cost storage, and
    // trying them would multiply the search (and tlc's compile time) for nothing. GPUs without
    // cp.async (CDNA) prefetch a loop one iteration ahead through registers for any stages >= 2
    // (docs/lowering.md, "Prefetching through registers"): 2 stands for them all.
    case AutoRole::Stages:
        if (target.backend == Backend::Cpu) return {1};
        return target.has(Feature::CpAsync) ? std::vector<int64_t>{1, 2, 3, 4, 5} : std::vector<int64_t>{1, 2};
    case AutoRole::Threads: {
        std::vector<int64_t> out;
        for (int64_t t : {64, 128, 256, 512})
            if (t <= target.maxThreadsPerBlock) out.push_back(t);
        return out;
    }
    // A dimension may be a single thread (a warp's lanes times one row); the product of the
    // dimensions is checked against the target's limit when a candidate compiles.
    case AutoRole::ThreadDim: {
        std::vector<int64_t> out;
        for (int64_t t = 1; t <= 512 && t <= target.maxThreadsPerBlock; t *= 2) out.push_back(t);
        return out;
    }
    // The cpu's launcher runs blocks as an OpenMP loop: a persistent grid changes nothing there.
    case AutoRole::Persistent:
        if (target.backend == Backend::Cpu) return {0};
        return {0, 1};
    // The cpu keeps one block per tile (passes/SplitK.cpp): 1 alone.
    case AutoRole::SplitK:
        if (target.backend == Backend::Cpu) return {1};
        return {1, 2, 4, 8, 16};
    // Clusters of 2 (the multicast halves one operand's traffic; larger ones are for the
    // author to ask for until a GPU has measured them); 1 where the target has none.
    case AutoRole::Cluster:
        if (!target.has(Feature::Clusters)) return {1};
        return {1, 2};
    }
    return {};
}

} // namespace tlc
