#include "beginner/Statements.h"

#include "beginner/Names.h"

namespace tlc::beginner {

using namespace ast;

Statements scanStatements(const Kernel& k, std::initializer_list<std::string> reserved, DiagnosticEngine& diags) {
    Statements out;
    out.at = k.range;
    for (const auto& tp : k.templateParams) out.used.insert(tp.name);
    for (const auto& p : k.params) {
        out.used.insert(p.name);
        for (const auto& d : p.type.dims) forEachName(d.get(), [&](const Name& n) { out.used.insert(n.name); });
        if (p.type.dtype == "f64") out.acc = "f64";
    }
    out.used.insert(reserved);
    bool first = true;
    for (const auto& s : k.body->stmts) {
        if (s->kind == StmtKind::Require) continue;
        if (first) out.at = s->range;
        first = false;
        if (const auto* l = s->as<LetStmt>()) {
            out.used.insert(l->name);
            out.lets[l->name] = inlineLets(*l->value, out.lets);
            continue;
        }
        const auto* a = s->as<AssignStmt>();
        const auto* target = a ? a->target->as<Name>() : nullptr;
        const Param* p = target ? tensorNamed(k, target->name) : nullptr;
        if (!p) {
            diags.report(DiagId::err_whole_tensor_stmt, s->range);
            out.ok = false;
            continue;
        }
        forEachName(a->value.get(), [&](const Name& n) { out.used.insert(n.name); });
        out.steps.push_back(Step{p, a->op, inlineLets(*a->value, out.lets)});
    }
    for (const auto& [n, v] : out.lets) forEachName(v.get(), [&](const Name& x) { out.used.insert(x.name); });
    return out;
}

} // namespace tlc::beginner
