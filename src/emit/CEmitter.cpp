#include "emit/CEmitter.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace tlc::codegen {

using namespace ir;

namespace {

// The shared precedence levels (ir/Printer.h), plus one that forces parentheses.
enum Prec { kTernary = kPrecTernary, kOr = kPrecOr, kAnd = kPrecAnd, kBitOr = kPrecBitOr, kBitXor = kPrecBitXor,
            kBitAnd = kPrecBitAnd, kEq = kPrecEq, kRel = kPrecRel, kShift = kPrecShift, kAdd = kPrecAdd, kMul = kPrecMul,
            kUnary = kPrecUnary, kPrimary = kPrecPrimary, kForceParens = 100 };

bool isRelational(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
           op == BinaryOp::Eq || op == BinaryOp::Ne;
}
bool isBitwise(BinaryOp op) { return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor; }
bool isShift(BinaryOp op) { return op == BinaryOp::Shl || op == BinaryOp::Shr; }

// Mixes of operators that are correct by precedence but that GCC's -Wparentheses (part of
// -Wall) asks to parenthesize, or that read ambiguously: && inside ||, arithmetic inside a
// shift, anything but the same operator inside & | ^, a comparison inside a comparison.
bool confusingMix(BinaryOp parent, BinaryOp child) {
    if (child == BinaryOp::Min || child == BinaryOp::Max) return false;
    if (parent == BinaryOp::Or && child == BinaryOp::And) return true;
    if (isShift(parent) && !isShift(child)) return precedence(child) >= kShift;
    if (isBitwise(parent) && child != parent) return true;
    if (isRelational(parent) && isRelational(child)) return true;
    return false;
}

bool isLowPrecisionFloat(DType t) { return isFloat(t) && dtypeBits(t) < 32; }

bool isZeroImm(const Expr& e) {
    if (const IntImm* i = e.as<IntImm>()) return i->value == 0;
    if (const FloatImm* f = e.as<FloatImm>()) return f->value == 0.0 && !std::signbit(f->value);
    return false;
}

// A decimal floating literal as C accepts it (digits, one point, an optional exponent).
bool plainDecimal(std::string_view s) {
    size_t i = 0, digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        size_t expDigits = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++expDigits;
        if (expDigits == 0) return false;
    }
    return i == s.size();
}

} // namespace

CEmitter::CEmitter(const Target& target, const EmitOptions& options) : target_(target), options_(options) {}

void CEmitter::line(const std::string& text) {
    flushLocation();
    int indent = 4 * out_->depth();
    // A statement that fits without its trailing comment gets the comment on the line above.
    size_t comment = text.find("  // ");
    if (comment != std::string::npos && text.find('"') == std::string::npos && int(text.size()) + indent > 100 &&
        int(comment) + indent <= 100 && text.rfind("//", 0) != 0) {
        out_->line(text.substr(comment + 2));
        out_->line(text.substr(0, comment));
        return;
    }
    for (const auto& l : wrapStatement(text, indent)) out_->line(l);
}

// ---- names -------------------------------------------------------------------------------

const void* CEmitter::roleOwner(VarRole role) {
    static const char tags[5] = {};
    return &tags[size_t(role)];
}

std::string CEmitter::varName(const Var* v) const {
    if (VarRole role = info_.roleOf(v); role != VarRole::Plain) return roleName(role);
    if (const std::string* n = names_.lookup(v)) return *n;
    return sanitizeIdentifier(v->name);
}

std::string CEmitter::roleName(VarRole role) const {
    if (const std::string* n = names_.lookup(roleOwner(role))) return *n;
    return roleValue(role);
}

std::string CEmitter::bufferName(const BufferNode* b) const {
    if (const std::string* n = names_.lookup(info_.canonical(b))) return *n;
    return sanitizeIdentifier(b->name);
}

void CEmitter::startFunction() {
    names_ = NameScope();
    for (const auto& n : fileLevelNames_) names_.declare(nullptr, n);
}

void CEmitter::prepare(const std::vector<Kernel>& kernels) {
    NameScope file;
    // Dispatchers first: they take the source kernel's own name.
    for (const auto& v : options_.variants) {
        DispatcherNames d{file.declare(nullptr, v.name), file.declare(nullptr, v.name + "_variant_count"),
                          file.declare(nullptr, v.name + "_variant_name"), file.declare(nullptr, v.name + "_pick"),
                          file.declare(nullptr, v.name + "_variant"), file.declare(nullptr, options_.cPrefix + v.name)};
        fileLevelNames_.insert(fileLevelNames_.end(), {d.launch, d.count, d.names, d.pick, d.variant, d.cLaunch});
        dispatcherNames_[v.name] = d;
    }
    // Groups next: their launcher takes the source kernel's own name too.
    for (const auto& k : kernels) {
        if (k.group.empty() || groupNames_.count(k.group)) continue;
        GroupNames g;
        g.launch = file.declare(nullptr, k.group);
        g.general = k.generalShapes;
        // A general variant's group launcher is static: no size function or twin of its own.
        if (!g.general) {
            g.workspaceSize = file.declare(nullptr, k.group + "_workspace_size");
            g.cLaunch = file.declare(nullptr, options_.cPrefix + k.group);
            g.cWorkspaceSize = file.declare(nullptr, options_.cPrefix + k.group + "_workspace_size");
        }
        for (const std::string* n : {&g.launch, &g.workspaceSize, &g.cLaunch, &g.cWorkspaceSize})
            if (!n->empty()) fileLevelNames_.push_back(*n);
        groupNames_[k.group] = std::move(g);
    }
    for (const auto& k : kernels) {
        LauncherSignature sig;
        sig.name = file.declare(nullptr, k.name);
        sig.kernelName = file.declare(nullptr, k.name + kernelSuffix());
        if (k.group.empty() && !k.generalShapes) sig.cName = file.declare(nullptr, options_.cPrefix + k.name);
        fileLevelNames_.insert(fileLevelNames_.end(), {sig.name, sig.kernelName});
        if (!sig.cName.empty()) fileLevelNames_.push_back(sig.cName);
        signatures_[&k] = std::move(sig);
    }
    for (const auto& k : kernels) {
        LauncherSignature& sig = signatures_[&k];
        KernelInfo info = analyzeKernel(k, options_.debug);
        startFunction();
        for (const auto& p : k.params) {
            LauncherParam lp{&p, names_.declare(nullptr, p.name), "", ""};
            switch (p.kind) {
            case KernelParam::Kind::Tensor: {
                bool written = p.buffer && info.written(p.buffer.get());
                lp.type = (written ? "" : "const ") + typeName(p.dtype) + "*";
                lp.cType = written ? "void*" : "const void*";
                break;
            }
            case KernelParam::Kind::Scalar:
                lp.type = typeName(p.dtype);
                lp.cType = isLowPrecisionFloat(p.dtype) ? "float" : lp.type;
                break;
            case KernelParam::Kind::Size:
                lp.type = lp.cType = typeName(p.dtype);
                break;
            }
            sig.params.push_back(std::move(lp));
        }
        // The group's launcher: the first part's parameters without scratch; a tensor any part
        // writes is not const.
        if (!k.group.empty()) {
            GroupNames& g = groupNames_[k.group];
            if (k.part == 0)
                for (const auto& lp : sig.params)
                    if (!lp.param->scratch) g.params.push_back(lp);
            for (const auto& lp : sig.params)
                for (auto& gp : g.params)
                    if (gp.name == lp.name && lp.type.rfind("const ", 0) != 0 && lp.param->kind == KernelParam::Kind::Tensor) {
                        gp.type = lp.type;
                        gp.cType = lp.cType;
                    }
        }
    }
    prepareShapeVariants(kernels);
}

const LauncherSignature& CEmitter::signature(const Kernel& k) const {
    auto it = signatures_.find(&k);
    if (it == signatures_.end()) throw EmitError("emit: prepare() was not called for kernel " + k.name);
    return it->second;
}

// ---- types and literals -------------------------------------------------------------------

std::string CEmitter::typeName(DType t) const {
    usedTypes_.insert(t);
    switch (t) {
    case DType::Bool: return "bool";
    case DType::I8: return "int8_t";
    case DType::I16: return "int16_t";
    case DType::I32: return "int";
    case DType::I64: return "long long";
    case DType::U8: return "uint8_t";
    case DType::U16: return "uint16_t";
    case DType::U32: return "uint32_t";
    case DType::U64: return "unsigned long long";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::F16: case DType::BF16: case DType::F8E4M3: case DType::F8E5M2: return lowPrecisionType(t);
    case DType::I4: case DType::U4: break;
    }
    throw EmitError(fmt::format("emit: {} values are not supported yet (packed 4-bit types)", dtypeName(t)));
}

bool CEmitter::wordTyped(DType t) const { return typeName(t).find(' ') == std::string::npos; }

// C and C++ compute arithmetic on 8- and 16-bit integers in int; the language computes it in
// the operands' type (u8 - u8 wraps in u8, docs/language.md "Arithmetic"), so such a result is
// cast back to its type where it is made: uint8_t(x - y).
void CEmitter::wrapNarrowInteger(DType type, std::string& text, int& prec) const {
    int bits = dtypeInfo(type).bits;
    if (!isInteger(type) || (bits != 8 && bits != 16)) return;
    text = typeName(type) + "(" + text + ")";
    prec = kPrimary;
}

std::string CEmitter::castText(DType to, DType from, const std::string& value) {
    if (to == from) return value;
    std::string v = value;
    // 16- and 8-bit float types convert to and from float only.
    if (isLowPrecisionFloat(from) && to != DType::F32) {
        v = "float(" + v + ")";
        from = DType::F32;
    }
    if (isLowPrecisionFloat(to) && from != DType::F32) v = "float(" + v + ")";
    if (wordTyped(to)) return typeName(to) + "(" + v + ")";
    return "static_cast<" + typeName(to) + ">(" + v + ")";
}

std::string CEmitter::intLiteral(int64_t v, DType t) const {
    switch (t) {
    case DType::Bool: return v ? "true" : "false";
    case DType::I64:
        if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
        return std::to_string(v) + "LL";
    case DType::U64: return std::to_string(static_cast<uint64_t>(v)) + "ULL";
    case DType::U32: return std::to_string(static_cast<uint32_t>(v)) + "u";
    default:
        if (v == INT32_MIN) return "(-2147483647 - 1)";
        if (v < INT32_MIN || v > INT32_MAX) return std::to_string(v) + "LL";
        return std::to_string(v);
    }
}

std::string CEmitter::floatLiteral(const FloatImm* f) {
    DType t = f->dtype;
    bool single = t != DType::F64;  // f32, and the f32 value that 16/8-bit literals convert from
    std::string text;
    if (std::isnan(f->value)) {
        text = single ? "NAN" : "double(NAN)";
        include("<cmath>");
    } else if (std::isinf(f->value)) {
        text = std::string(f->value < 0 ? "-" : "") + (single ? "INFINITY" : "double(INFINITY)");
        include("<cmath>");
    } else {
        // The source's spelling when it is a plain decimal for this very value.
        if (plainDecimal(f->spelling)) {
            double parsed = std::strtod(f->spelling.c_str(), nullptr);
            bool same = single ? float(parsed) == float(f->value) : parsed == f->value;
            if (same) text = f->spelling;
        }
        if (text.empty()) text = single ? fmt::format("{}", std::fabs(float(f->value))) : fmt::format("{}", std::fabs(f->value));
        if (text.find_first_of(".eE") == std::string::npos) text += ".0";
        if (text.front() == '.') text = "0" + text;
        if (single) text += "f";
        if (std::signbit(f->value) && text.front() != '-') text = "-" + text;
    }
    if (isLowPrecisionFloat(t)) return typeName(t) + "(" + text + ")";
    return text;
}

// ---- expressions --------------------------------------------------------------------------

std::string CEmitter::print(const Expr& e, int parentPrec) {
    if (!e) throw EmitError("emit: null expression");
    if (e->lanes > 1)
        throw EmitError("emit: a vector expression outside a vector move: " + printExpr(e));
    std::string text;
    int prec = kPrimary;
    switch (e->kind) {
    case NodeKind::IntImm: {
        const IntImm* i = e.as<IntImm>();
        text = intLiteral(i->value, i->dtype);
        if (text.front() == '-') prec = kUnary;
        break;
    }
    case NodeKind::FloatImm:
        text = floatLiteral(e.as<FloatImm>());
        if (text.front() == '-') prec = kUnary;
        break;
    case NodeKind::Var: text = varName(e.as<Var>()); break;
    case NodeKind::Cast: {
        const Cast* c = e.as<Cast>();
        text = castText(c->dtype, c->value.dtype(), print(c->value, 0));
        break;
    }
    case NodeKind::Unary: {
        const Unary* u = e.as<Unary>();
        if (isLowPrecisionFloat(u->operand.dtype()))
            throw EmitError("emit: arithmetic on " + std::string(dtypeName(u->operand.dtype())) +
                            " (compute in f32 and cast): " + printExpr(e));
        std::string operand = print(u->operand, kUnary);
        const char* op = u->op == UnaryOp::Neg ? "-" : u->op == UnaryOp::Not ? "!" : "~";
        // No "--x" or "- -1": that would be a decrement or read oddly.
        if (operand.front() == '-' || operand.front() == '+') operand = "(" + operand + ")";
        text = op + operand;
        prec = kUnary;
        if (u->op != UnaryOp::Not) wrapNarrowInteger(u->dtype, text, prec);
        break;
    }
    case NodeKind::Binary: {
        const Binary* b = e.as<Binary>();
        if (isLowPrecisionFloat(b->a.dtype()) || isLowPrecisionFloat(b->b.dtype()))
            throw EmitError("emit: arithmetic on " + std::string(dtypeName(b->a.dtype())) +
                            " (compute in f32 and cast): " + printExpr(e));
        if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
            text = minMaxText(b, print(b->a, 0), print(b->b, 0));
            break;
        }
        prec = precedence(b->op);
        auto operand = [&](const Expr& child, bool right) {
            int need = right ? prec + 1 : prec;  // left-associative
            if (const Binary* cb = child.as<Binary>(); cb && confusingMix(b->op, cb->op)) need = kForceParens;
            if (const Unary* cu = child.as<Unary>(); cu && cu->op == UnaryOp::Not && isRelational(b->op))
                need = kForceParens;  // (!a) == b, not !a == b (-Wlogical-not-parentheses)
            return print(child, need);
        };
        std::string lhs = operand(b->a, false);
        std::string rhs = operand(b->b, true);
        text = lhs + " " + spelling(b->op) + " " + rhs;
        // (&, |, ^ and >> cannot leave the operands' range; comparisons and && || give bool.)
        if (!isRelational(b->op) && !isBitwise(b->op) && b->op != BinaryOp::Shr && b->op != BinaryOp::And &&
            b->op != BinaryOp::Or)
            wrapNarrowInteger(b->dtype, text, prec);
        break;
    }
    case NodeKind::Select: {
        const Select* s = e.as<Select>();
        text = print(s->cond, kTernary + 1) + " ? " + print(s->thenValue, kTernary + 1) + " : " +
               print(s->elseValue, kTernary);
        prec = kTernary;
        break;
    }
    case NodeKind::Call: {
        const Call* c = e.as<Call>();
        std::vector<std::string> args;
        for (const auto& a : c->args) args.push_back(print(a, 0));
        if (c->name == "address_of") {
            // &buffer[index]: how tensor-core helpers receive their register arrays.
            const Load* l = c->args.size() == 1 ? c->args[0].as<Load>() : nullptr;
            if (!l) throw EmitError("emit: address_of takes one element of a buffer");
            text = "&" + elementText(l->buffer, l->indices);
            prec = kUnary;
        } else if (c->name == "ceildiv" || c->name == "floordiv" || c->name == "floormod") {
            if (args.size() != 2) throw EmitError("emit: " + c->name + " takes two arguments");
            need("tl_common.h", "intmath");
            text = fmt::format("tl::{}({}, {})", c->name, args[0], args[1]);
        } else if (c->name.rfind("extern:", 0) == 0) {
            // call_extern: the author's function, called as written (its header is included).
            text = fmt::format("{}({})", c->name.substr(7), join(args, ", "));
        } else if (c->name == "reinterpret") {
            if (args.size() != 1) throw EmitError("emit: reinterpret takes one argument");
            need("tl_common.h", "bit_cast");
            text = fmt::format("tl::bit_cast<{}>({})", typeName(c->dtype), args[0]);
        } else {
            text = callText(c, args);
        }
        break;
    }
    case NodeKind::Load: {
        const Load* l = e.as<Load>();
        text = elementText(l->buffer, l->indices);
        break;
    }
    default: throw EmitError("emit: a statement node in an expression");
    }
    return prec < parentPrec ? "(" + text + ")" : text;
}

std::string CEmitter::offsetText(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.size() != b->strides.size())
        throw EmitError(fmt::format("emit: {} indices for buffer '{}' of rank {}", indices.size(), b->name,
                                    b->strides.size()));
    // sum(index * stride), without zero indices and unit strides, constant terms last.
    Expr sum;
    int64_t constant = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
        const int64_t* index = asConstInt(indices[i]);
        const int64_t* stride = asConstInt(b->strides[i]);
        if (index && stride) {
            constant += *index * *stride;
            continue;
        }
        if (index && *index == 0) continue;
        if (stride && *stride == 1) {
            // The terms of a unit-stride index join the sum: (by * 64 + r) * K + bx * 64 + c.
            // Index terms are offsets within the tensor, so regrouping them cannot overflow.
            std::vector<Expr> terms;
            std::vector<Expr> work = {indices[i]};
            while (!work.empty()) {
                Expr t = work.back();
                work.pop_back();
                const Binary* add = t.as<Binary>();
                if (add && add->op == BinaryOp::Add && isInteger(add->dtype)) {
                    work.push_back(add->b);
                    work.push_back(add->a);
                } else {
                    terms.push_back(t);
                }
            }
            for (const auto& t : terms) {
                if (const int64_t* c = asConstInt(t)) constant += *c;
                else sum = sum ? sum + t : t;
            }
            continue;
        }
        Expr term = indices[i] * b->strides[i];
        sum = sum ? sum + term : term;
    }
    if (!sum) return intLiteral(constant, DType::I32);
    if (constant != 0) sum = sum + intImm(constant, sum.dtype());
    return print(sum, 0);
}

std::string CEmitter::elementText(const Buffer& b, const std::vector<Expr>& indices) {
    std::string name = bufferName(b.get());
    if (b->shape.empty()) return name;
    return name + "[" + offsetText(b, indices) + "]";
}

// ---- statements ---------------------------------------------------------------------------

std::string CEmitter::sourceName() const {
    if (!options_.sourceName.empty()) return options_.sourceName;
    if (kernel_ && !kernel_->sourceName.empty()) return kernel_->sourceName;
    return "kernel.tl";
}

std::string CEmitter::where(SourceLoc loc) const { return fmt::format("{}:{}", sourceName(), loc.line); }

void CEmitter::locate(const Stmt& s) {
    // Written with the statement's first line, so that statements that print nothing (dead lets,
    // unused buffers) leave no stray comment.
    if (s->loc.valid()) pendingLine_ = s->loc.line;
}

void CEmitter::flushLocation() {
    if (pendingLine_ == 0 || pendingLine_ == lastLine_) return;
    lastLine_ = pendingLine_;
    pendingLine_ = 0;
    if (options_.lineDirectives)
        out_->directive(fmt::format("#line {} \"{}\"", lastLine_, escapeCString(sourceName())));
    else
        out_->line("// " + commentText(where(SourceLoc{lastLine_, 0})));
}

void CEmitter::openBrace(const std::string& head) {
    line(head + " {");
    out_->indent();
    names_.push();
}

void CEmitter::closeBrace(const std::string& tail) {
    names_.pop();
    out_->dedent();
    line(tail);
}

void CEmitter::emitBody(const Stmt& s) {
    names_.push();
    emitStmt(s);
    names_.pop();
}

void CEmitter::emitStmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
    case NodeKind::Seq:
        for (const auto& c : s.as<Seq>()->stmts) emitStmt(c);
        break;
    case NodeKind::LetStmt: {
        const LetStmt* l = s.as<LetStmt>();
        if (!info_.deadLets.count(l)) {
            locate(s);
            std::string value = castText(l->var->dtype, l->value.dtype(), expr(l->value));
            std::string name = names_.declare(l->var.get(), l->var->name);
            line(fmt::format("const {} {} = {};", typeName(l->var->dtype), name, value));
        }
        emitStmt(l->body);
        break;
    }
    case NodeKind::Evaluate: locate(s); emitEvaluate(s.as<Evaluate>()); break;
    case NodeKind::Store: locate(s); emitStore(s.as<Store>()); break;
    case NodeKind::For: locate(s); emitFor(s.as<For>()); break;
    case NodeKind::IfThenElse: locate(s); emitIf(s.as<IfThenElse>(), false); break;
    case NodeKind::While: {
        locate(s);
        const auto* w = s.as<While>();
        openBrace(fmt::format("while ({})", expr(w->cond)));
        emitStmt(w->body);
        closeBrace();
        break;
    }
    case NodeKind::Allocate: locate(s); emitAllocate(s.as<Allocate>()); break;
    case NodeKind::Barrier: locate(s); emitBarrier(); break;
    case NodeKind::Comment: emitComment(s.as<Comment>()); break;
    case NodeKind::TileOpStmt:
        throw EmitError("emit: tile op not lowered: " + s.as<TileOpStmt>()->op->str());
    default: throw EmitError("emit: an expression node in a statement");
    }
}

void CEmitter::emitComment(const Comment* c) {
    std::string text = c->text;
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        lines.push_back(text.substr(start, nl - start));
    lines.push_back(text.substr(start));
    // "// gemm.tl:14: copy(A[...], A_s)" when the comment starts a new source line.
    if (c->loc.valid()) pendingLine_ = c->loc.line;
    if (pendingLine_ && pendingLine_ != lastLine_ && !options_.lineDirectives) {
        lines[0] = where(SourceLoc{pendingLine_, 0}) + ": " + lines[0];
        lastLine_ = pendingLine_;
    }
    pendingLine_ = pendingLine_ == lastLine_ ? 0 : pendingLine_;
    for (const auto& l : lines) line("// " + commentText(l));
}

void CEmitter::emitEvaluate(const Evaluate* e) {
    const Call* c = e->value.as<Call>();
    if (c && (c->name == "print" || c->name == "assert")) {
        std::string source = c->name + "(" + (c->args.empty() ? "" : printExpr(c->args[0])) + ")";
        if (!options_.debug) {
            line("// " + commentText(source) + ": compiled out (tlc --debug keeps it)");
            return;
        }
        if (c->args.empty()) throw EmitError("emit: " + c->name + " without an argument");
        const Expr& arg = c->args[0];
        std::string loc = escapeCString(where(e->loc));
        if (c->name == "assert") {
            // The author's message first, the condition after it ("rows fit (N <= 1024)").
            needSection("debug");
            std::string what = e->message.empty() ? printExpr(arg) : e->message + " (" + printExpr(arg) + ")";
            line(fmt::format("if (!{}) tl::assert_fail(\"{}\", \"{}\");", print(arg, kUnary + 1), loc,
                             escapeCString(what)));
            return;
        }
        include("<cstdio>");
        DType t = arg.dtype();
        std::string format, value = expr(arg);
        if (isFloat(t)) format = "%f", value = castText(DType::F64, t, value);
        else if (t == DType::I64) format = "%lld", value = castText(DType::I64, t, value);
        else if (t == DType::U64) format = "%llu", value = castText(DType::U64, t, value);
        else if (t == DType::U32) format = "%u", value = castText(DType::U32, t, value);
        else format = "%d", value = castText(DType::I32, t, value);
        std::string label = escapeCString((e->message.empty() ? "" : e->message + ": ") + printExpr(arg));
        std::string fmtText;
        for (char ch : label) fmtText += ch == '%' ? std::string("%%") : std::string(1, ch);
        line(fmt::format("{}(\"{}: {} = {}\\n\", {});", printfName(), loc, fmtText, format, value));
        return;
    }
    line(expr(e->value) + ";");
}

void CEmitter::emitStore(const Store* s) {
    const Buffer& b = s->buffer;
    std::string target = elementText(b, s->indices);
    int lanes = s->value->lanes;
    if (lanes > 1) {
        if (s->storeKind != StoreKind::Plain) throw EmitError("emit: a vector atomic add");
        int bytes = lanes * dtypeBits(b->dtype) / 8;
        bool supported = bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || (bytes % 16 == 0 && bytes > 0);
        if (!supported) throw EmitError(fmt::format("emit: a vector move of {} bytes into '{}'", bytes, b->name));
        needSection("vector_moves");
        if (const Load* src = s->value.as<Load>(); src && src->dtype == b->dtype && src->lanes == lanes) {
            line(fmt::format("tl::copy_vec<{}>(&{}, &{});", bytes, target, elementText(src->buffer, src->indices)));
            return;
        }
        if (isZeroImm(s->value)) {
            line(fmt::format("tl::fill_zero<{}>(&{});", bytes, target));
            return;
        }
        throw EmitError("emit: a store of " + std::to_string(lanes) +
                        " lanes that is neither a vector move nor a zero fill: " + printExpr(s->value));
    }
    if (s->storeKind == StoreKind::Plain) {
        // x = x op y reads as x op= y.
        const Binary* bin = s->value.as<Binary>();
        const Load* self = bin ? bin->a.as<Load>() : nullptr;
        bool compound = self && self->buffer == b && bin->dtype == b->dtype && !isComparison(bin->op) &&
                        bin->op != BinaryOp::Min && bin->op != BinaryOp::Max && self->indices.size() == s->indices.size();
        for (size_t i = 0; compound && i < self->indices.size(); ++i) compound = equal(self->indices[i], s->indices[i]);
        if (compound) {
            line(fmt::format("{} {}= {};", target, spelling(bin->op), print(bin->b, 0)));
            return;
        }
    }
    std::string value = castText(b->dtype, s->value.dtype(), expr(s->value));
    if (s->storeKind == StoreKind::AtomicAdd) emitAtomicAdd(s, target, value);
    else if (s->storeKind != StoreKind::Plain) emitAtomicMinMax(s, target, value, s->storeKind == StoreKind::AtomicMax);
    else line(target + " = " + value + ";");
}

void CEmitter::emitFor(const For* f) {
    if (f->forKind == ForKind::Parallel || f->forKind == ForKind::Pipelined)
        throw EmitError(fmt::format("emit: a {} loop over '{}' was not lowered", forKindName(f->forKind), f->var->name));
    if (!emitOtherForm(f)) emitLoop(f);
}

void CEmitter::emitLoop(const For* f) {
    // for (var = min; var < min + extent; var += step): extent is the length of the range.
    std::string min = expr(f->min);
    const int64_t* cmin = asConstInt(f->min);
    const int64_t* cext = asConstInt(f->extent);
    std::string end;
    if (cmin && *cmin == 0) end = expr(f->extent);
    else if (cmin && cext) end = intLiteral(*cmin + *cext, f->var->dtype);
    else end = expr(simplify(f->min + f->extent));
    const int64_t* step = asConstInt(f->step);
    std::string pragma = loopPragma(f);
    if (!pragma.empty()) line(pragma);
    names_.push();  // the loop variable's scope
    std::string var = names_.declare(f->var.get(), f->var->name);
    std::string cond, inc;
    if (!step || *step > 0) {
        cond = var + " < " + end;
        inc = step && *step == 1 ? "++" + var : var + " += " + (step ? std::to_string(*step) : print(f->step, kTernary));
    } else {
        cond = var + " > " + end;
        inc = *step == -1 ? "--" + var : var + " -= " + std::to_string(-*step);
    }
    openBrace(fmt::format("for ({} {} = {}; {}; {})", typeName(f->var->dtype), var, min, cond, inc));
    emitStmt(f->body);
    closeBrace();
    names_.pop();
}

void CEmitter::emitIf(const IfThenElse* i, bool chained) {
    std::string head = fmt::format("{}if ({})", chained ? "} else " : "", expr(i->cond));
    if (chained) {
        out_->dedent();
        line(head + " {");
        out_->indent();
    } else {
        line(head + " {");
        out_->indent();
    }
    emitBody(i->thenCase);
    if (const IfThenElse* next = i->elseCase.as<IfThenElse>()) {
        emitIf(next, true);
        return;
    }
    if (i->elseCase) {
        out_->dedent();
        line("} else {");
        out_->indent();
        emitBody(i->elseCase);
    }
    out_->dedent();
    line("}");
}

void CEmitter::emitAllocate(const Allocate* a) {
    const Buffer& b = a->buffer;
    if (!info_.live(b.get())) {  // declared but never touched: nothing to declare
        emitStmt(a->body);
        return;
    }
    if (b->shape.empty() && b->scope != MemScope::Shared) {
        std::string init = a->init ? castText(b->dtype, a->init.dtype(), expr(a->init))
                                   : castText(b->dtype, b->dtype, expr(zero(b->dtype)));
        std::string name = names_.declare(b.get(), b->name);
        const BufferUse* use = info_.use(b.get());
        std::string attr = use && !use->loaded ? "[[maybe_unused]] " : "";
        line(fmt::format("{}{} {} = {};", attr, typeName(b->dtype), name, init));
    } else {
        emitSharedOrLocal(a);
    }
    emitStmt(a->body);
}

void CEmitter::needSection(std::string_view section) const {
    const RuntimeSection* s = findBackendSection(runtimePrefixes(), section);
    if (!s) throw std::logic_error(fmt::format("no runtime section {} for {}", section, target_.name));
    need(s->file, s->name);
}

std::optional<std::string> CEmitter::instructionHelperCall(const Call* c, const std::vector<std::string>& args) const {
    const std::string& n = c->name;
    const InstructionHelper* h = findInstructionHelper(n);
    if (!h) return std::nullopt;
    needSection(h->section);
    std::string templ, list;
    for (size_t i = 0; i < args.size(); ++i) {
        if (int(i) < h->templateArgs) {
            if (!asConstInt(c->args[i])) throw EmitError(fmt::format("emit: {} takes a constant argument {}", n, i + 1));
            templ += (i ? ", " : "") + args[i];
        } else {
            list += (list.empty() ? "" : ", ") + args[i];
        }
    }
    return fmt::format("tl::{}{}({})", n, h->templateArgs ? "<" + templ + ">" : "", list);
}

} // namespace tlc::codegen
