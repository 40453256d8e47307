#include "ir/Printer.h"

#include "ir/TileOp.h"

#include <fmt/format.h>

#include <cmath>

namespace tlc::ir {

int precedence(BinaryOp op) {
    switch (op) {
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: return kPrecMul;
    case BinaryOp::Add: case BinaryOp::Sub: return kPrecAdd;
    case BinaryOp::Shl: case BinaryOp::Shr: return kPrecShift;
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: return kPrecRel;
    case BinaryOp::Eq: case BinaryOp::Ne: return kPrecEq;
    case BinaryOp::BitAnd: return kPrecBitAnd;
    case BinaryOp::BitXor: return kPrecBitXor;
    case BinaryOp::BitOr: return kPrecBitOr;
    case BinaryOp::And: return kPrecAnd;
    case BinaryOp::Or: return kPrecOr;
    case BinaryOp::Min: case BinaryOp::Max: return kPrecPrimary;
    }
    return kPrecPrimary;
}

std::string ExprPrinter::printIntImm(const IntImm* i) {
    if (i->dtype == DType::Bool) return i->value ? "true" : "false";
    return std::to_string(i->value);
}

std::string ExprPrinter::printFloatImm(const FloatImm* f) {
    if (std::isinf(f->value)) return f->value > 0 ? "inf" : "-inf";
    if (!f->spelling.empty()) return f->spelling;
    std::string s = fmt::format("{}", f->value);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}

std::string ExprPrinter::printCast(const Cast* c) {
    return fmt::format("{}({})", dtypeName(c->dtype), print(c->value, 0));
}

std::string ExprPrinter::printCall(const Call* c) {
    std::string args;
    for (size_t i = 0; i < c->args.size(); ++i) args += (i ? ", " : "") + print(c->args[i], 0);
    return c->name + "(" + args + ")";
}

std::string ExprPrinter::printLoad(const Load* l) {
    std::string idx;
    for (size_t i = 0; i < l->indices.size(); ++i) idx += (i ? ", " : "") + print(l->indices[i], 0);
    std::string s = l->buffer->name + "[" + idx + "]";
    if (l->lanes > 1) s += fmt::format("<x{}>", l->lanes);
    return s;
}

std::string ExprPrinter::printMinMax(const Binary* b) {
    return fmt::format("{}({}, {})", spelling(b->op), print(b->a, 0), print(b->b, 0));
}

std::string ExprPrinter::print(const Expr& e, int parentPrec) {
    if (!e) return "<null>";
    std::string text;
    int prec = kPrimary;
    switch (e->kind) {
    case NodeKind::IntImm: {
        const auto* i = e.as<IntImm>();
        text = printIntImm(i);
        if (i->value < 0) prec = kUnary;
        break;
    }
    case NodeKind::FloatImm: {
        const auto* f = e.as<FloatImm>();
        text = printFloatImm(f);
        if (f->value < 0) prec = kUnary;
        break;
    }
    case NodeKind::Var: text = printVar(e.as<Var>()); break;
    case NodeKind::Cast: text = printCast(e.as<Cast>()); break;
    case NodeKind::Call: text = printCall(e.as<Call>()); break;
    case NodeKind::Load: text = printLoad(e.as<Load>()); break;
    case NodeKind::Unary: {
        const auto* u = e.as<Unary>();
        const char* op = u->op == UnaryOp::Neg ? "-" : u->op == UnaryOp::Not ? "!" : "~";
        text = op + print(u->operand, kUnary + 1);
        prec = kUnary;
        break;
    }
    case NodeKind::Binary: {
        const auto* b = e.as<Binary>();
        if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
            text = printMinMax(b);
            break;
        }
        prec = precedence(b->op);
        // Left-associative: the right operand needs parentheses at equal precedence.
        text = fmt::format("{} {} {}", print(b->a, prec), spelling(b->op), print(b->b, prec + 1));
        break;
    }
    case NodeKind::Select: {
        const auto* s = e.as<Select>();
        text = fmt::format("{} ? {} : {}", print(s->cond, kTernary + 1), print(s->thenValue, kTernary + 1),
                           print(s->elseValue, kTernary));
        prec = kTernary;
        break;
    }
    default: text = "<stmt?>";
    }
    return prec < parentPrec ? "(" + text + ")" : text;
}

std::string printExpr(const Expr& e) {
    ExprPrinter p;
    return p.print(e);
}

namespace {

std::string bufferDecl(const Buffer& b) {
    std::string shape;
    for (size_t i = 0; i < b->shape.size(); ++i) shape += (i ? ", " : "") + printExpr(b->shape[i]);
    return fmt::format("{}: {} {}[{}]", b->name, scopeName(b->scope), dtypeName(b->dtype), shape);
}

void printInto(std::string& out, const Stmt& s, int indent) {
    if (!s) return;
    std::string pad(indent * 2, ' ');
    auto line = [&](const std::string& text) { out += pad + text + "\n"; };
    switch (s->kind) {
    case NodeKind::Seq:
        for (const auto& c : s.as<Seq>()->stmts) printInto(out, c, indent);
        break;
    case NodeKind::LetStmt: {
        const auto* l = s.as<LetStmt>();
        line(fmt::format("let {}: {} = {}", l->var->name, dtypeName(l->var->dtype), printExpr(l->value)));
        printInto(out, l->body, indent);
        break;
    }
    case NodeKind::Evaluate: {
        const auto* e = s.as<Evaluate>();
        line(printExpr(e->value) + (e->message.empty() ? "" : "  // \"" + e->message + "\""));
        break;
    }
    case NodeKind::Store: {
        const auto* st = s.as<Store>();
        std::string idx;
        for (size_t i = 0; i < st->indices.size(); ++i) idx += (i ? ", " : "") + printExpr(st->indices[i]);
        std::string lanes = st->value->lanes > 1 ? fmt::format("<x{}>", st->value->lanes) : "";
        line(fmt::format("{}[{}]{} {} {}", st->buffer->name, idx, lanes,
                         st->storeKind == StoreKind::AtomicAdd   ? "atomic+="
                         : st->storeKind == StoreKind::AtomicMax ? "atomic max="
                         : st->storeKind == StoreKind::AtomicMin ? "atomic min="
                                                                 : "=", printExpr(st->value)));
        break;
    }
    case NodeKind::For: {
        const auto* f = s.as<For>();
        std::string extra;
        if (f->forKind == ForKind::Pipelined && f->pipeline.stages > 0)
            extra = fmt::format(", stages = {}", f->pipeline.stages);
        if (f->forKind == ForKind::Pipelined && f->pipeline.warpSpecialize >= 0)
            extra += fmt::format(", warp_specialize = {}", f->pipeline.warpSpecialize ? "true" : "false");
        if (f->forKind == ForKind::Pipelined && f->pipeline.deepen >= 0)
            extra += fmt::format(", deepen = {}", f->pipeline.deepen ? "true" : "false");
        if (f->forKind == ForKind::Pipelined && f->pipeline.unroll > 0)
            extra += fmt::format(", unroll = {}", f->pipeline.unroll);
        if (f->forKind == ForKind::Pipelined && f->pipeline.overlap >= 0)
            extra += fmt::format(", overlap = {}", f->pipeline.overlap ? "true" : "false");
        std::string step = isConstInt(f->step, 1) ? "" : ", step " + printExpr(f->step);
        line(fmt::format("for {} in {}({}, {}{}{}) {{", f->var->name, forKindName(f->forKind), printExpr(f->min),
                         printExpr(f->extent), step, extra));
        printInto(out, f->body, indent + 1);
        line("}");
        break;
    }
    case NodeKind::IfThenElse: {
        const auto* i = s.as<IfThenElse>();
        line(fmt::format("if ({}) {{", printExpr(i->cond)));
        printInto(out, i->thenCase, indent + 1);
        if (i->elseCase) {
            line("} else {");
            printInto(out, i->elseCase, indent + 1);
        }
        line("}");
        break;
    }
    case NodeKind::While: {
        const auto* w = s.as<While>();
        line(fmt::format("while ({}) {{", printExpr(w->cond)));
        printInto(out, w->body, indent + 1);
        line("}");
        break;
    }
    case NodeKind::Allocate: {
        const auto* a = s.as<Allocate>();
        line("alloc " + bufferDecl(a->buffer) + (a->init ? " = " + printExpr(a->init) : ""));
        printInto(out, a->body, indent);
        break;
    }
    case NodeKind::Barrier: line("barrier()"); break;
    case NodeKind::Comment: line("// " + s.as<Comment>()->text); break;
    case NodeKind::TileOpStmt: line(s.as<TileOpStmt>()->op->str()); break;
    default: line("<expr?>");
    }
}

} // namespace

std::string printStmt(const Stmt& s, int indent) {
    std::string out;
    printInto(out, s, indent);
    return out;
}

std::string printKernel(const Kernel& k) {
    std::string out = "kernel " + k.name + "(";
    for (size_t i = 0; i < k.params.size(); ++i) {
        const auto& p = k.params[i];
        out += i ? ", " : "";
        if (p.kind == KernelParam::Kind::Tensor) out += bufferDecl(p.buffer);
        else out += fmt::format("{}: {}{}", p.name, dtypeName(p.dtype), p.kind == KernelParam::Kind::Size ? " (size)" : "");
    }
    out += ")\n";
    std::string grid, vars;
    for (size_t i = 0; i < k.gridExtents.size(); ++i) grid += (i ? ", " : "") + printExpr(k.gridExtents[i]);
    for (size_t i = 0; i < k.blockVars.size(); ++i) vars += (i ? ", " : "") + k.blockVars[i]->name;
    out += fmt::format("grid({}, threads = {}) as ({}) {{\n", grid, k.threads, vars);
    out += printStmt(k.body, 1);
    return out + "}\n";
}

} // namespace tlc::ir
