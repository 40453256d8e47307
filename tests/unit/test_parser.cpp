// The parser and AST builder: the tree for each syntactic form, source ranges, literal values,
// syntax errors and the limits that protect against hostile input. Semantics are not checked
// here (no sema): the programs only need to be syntactically valid.
#include "ast/AST.h"
#include "ast/Clone.h"
#include "sema/Sema.h"
#include "target/Target.h"
#include "parser/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceFile.h"
#include "support/Utf8.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>

using namespace tlc;
using namespace tlc::ast;

namespace {

struct Parsed {
    std::unique_ptr<SourceFile> source;
    std::unique_ptr<DiagnosticEngine> diags;
    std::unique_ptr<File> file;

    std::string errors() const {
        std::ostringstream os;
        diags->printText(os);
        return os.str();
    }
    std::vector<DiagId> ids() const {
        std::vector<DiagId> out;
        for (const auto& d : diags->diagnostics()) out.push_back(d.id);
        return out;
    }
    const Diagnostic& first() const {
        REQUIRE(!diags->diagnostics().empty());
        return diags->diagnostics().front();
    }
};

Parsed parse(const std::string& text, const ParseLimits& limits = {}) {
    Parsed p;
    p.source = std::make_unique<SourceFile>("t.tl", text);
    p.diags = std::make_unique<DiagnosticEngine>(*p.source);
    p.file = parseFile(*p.source, *p.diags, limits);
    return p;
}

// Parses one kernel whose body is `body` and returns its statements.
const std::vector<StmtPtr>& body(const Parsed& p) {
    REQUIRE_MESSAGE(p.file != nullptr, p.errors());
    REQUIRE(p.file->kernels.size() == 1);
    return p.file->kernels[0]->body->stmts;
}

Parsed parseBody(const std::string& stmts) { return parse("kernel k() {\n" + stmts + "\n}\n"); }

// The expression of `let x = <expr>;`, printed the way --emit=ast prints it (fully parenthesised).
std::string exprDump(const std::string& expr) {
    Parsed p = parseBody("let x = " + expr + ";");
    const auto& s = body(p);
    REQUIRE(s.size() == 1);
    const auto* let = s[0]->as<LetStmt>();
    REQUIRE(let != nullptr);
    std::string d = dump(*p.file);
    // "    Let x = <expr>  @2:1"
    size_t begin = d.find("Let x = ");
    REQUIRE(begin != std::string::npos);
    begin += 8;
    size_t end = d.find("  @2:1", begin);
    REQUIRE(end != std::string::npos);
    return d.substr(begin, end - begin);
}

const Expr& letValue(const Parsed& p, size_t i = 0) {
    const auto& s = body(p);
    REQUIRE(s.size() > i);
    const auto* let = s[i]->as<LetStmt>();
    REQUIRE(let != nullptr);
    return *let->value;
}

bool sameLoc(SourceLoc l, uint32_t line, uint32_t col) { return l.line == line && l.col == col; }

} // namespace

// ---- kernels and parameters -------------------------------------------------------------------

TEST_CASE("parser: kernel with template parameters, defaults, auto and types") {
    Parsed p = parse("kernel gemm<block_M = 128, neg = -1, f = 0.5, flag = true, dt = f16, n: i32 = 4,\n"
                     "            t = auto, paren = (2 * 3),>(A: f16[M, K], alpha: f32) {}\n");
    REQUIRE_MESSAGE(p.file, p.errors());
    REQUIRE(p.file->kernels.size() == 1);
    const Kernel& k = *p.file->kernels[0];
    CHECK(k.name == "gemm");
    CHECK(sameLoc(k.nameRange.begin, 1, 8));
    CHECK(sameLoc(k.nameRange.end, 1, 11));
    REQUIRE(k.templateParams.size() == 8);
    const auto& tp = k.templateParams;
    CHECK(tp[0].name == "block_M");
    REQUIRE(tp[0].defaultValue);
    REQUIRE(tp[0].defaultValue->as<IntLit>());
    CHECK(tp[0].defaultValue->as<IntLit>()->value == 128);
    // -1 is a negation of 1
    const auto* neg = tp[1].defaultValue->as<Unary>();
    REQUIRE(neg);
    CHECK(neg->op == UnaryOp::Neg);
    CHECK(neg->operand->as<IntLit>()->value == 1);
    CHECK(tp[2].defaultValue->as<FloatLit>()->value == doctest::Approx(0.5));
    CHECK(tp[3].defaultValue->as<BoolLit>()->value == true);
    CHECK(tp[4].defaultValue->as<Name>()->name == "f16");
    CHECK(tp[5].name == "n");
    CHECK(tp[5].typeName == "i32");
    CHECK(sameLoc(tp[5].typeRange.begin, 1, 73));
    CHECK(tp[6].isAuto);
    CHECK(tp[6].defaultValue == nullptr);
    REQUIRE(tp[7].defaultValue->as<Binary>());
    CHECK(tp[7].defaultValue->as<Binary>()->op == BinaryOp::Mul);

    REQUIRE(k.params.size() == 2);
    CHECK(k.params[0].name == "A");
    CHECK(k.params[0].type.dtype == "f16");
    CHECK(k.params[0].type.isTensor());
    REQUIRE(k.params[0].type.dims.size() == 2);
    CHECK(k.params[0].type.dims[0]->as<Name>()->name == "M");
    CHECK(k.params[0].type.strides.empty());
    CHECK(k.params[1].name == "alpha");
    CHECK(!k.params[1].type.isTensor());
}

TEST_CASE("parser: tensor parameters with strides, and trailing commas") {
    Parsed p = parse("kernel k(A: f32[M, N] strides [N * 2, 1], B: bf16[4, 8, 16,],) {}\n");
    REQUIRE_MESSAGE(p.file, p.errors());
    const Kernel& k = *p.file->kernels[0];
    REQUIRE(k.params.size() == 2);
    REQUIRE(k.params[0].type.strides.size() == 2);
    CHECK(k.params[0].type.strides[0]->as<Binary>()->op == BinaryOp::Mul);
    CHECK(k.params[0].type.strides[1]->as<IntLit>()->value == 1);
    CHECK(k.params[1].type.dims.size() == 3);
}

TEST_CASE("parser: an empty template list, no parameters, several kernels") {
    Parsed p = parse("kernel a<>() {}\n// between\nkernel b() { }\n/* c */ kernel c(x: i32) {}\n");
    REQUIRE_MESSAGE(p.file, p.errors());
    REQUIRE(p.file->kernels.size() == 3);
    CHECK(p.file->kernels[0]->name == "a");
    CHECK(p.file->kernels[0]->templateParams.empty());
    CHECK(p.file->kernels[1]->name == "b");
    CHECK(sameLoc(p.file->kernels[1]->range.begin, 3, 1));
    CHECK(p.file->kernels[2]->name == "c");
    CHECK(sameLoc(p.file->kernels[2]->range.begin, 4, 9));
}

// ---- statements --------------------------------------------------------------------------------

TEST_CASE("parser: let, var, assignment and expression statements") {
    Parsed p = parseBody("let a = 1;\n"
                         "var b: i32 = 0;\n"
                         "var c;\n"
                         "var d: f32;\n"
                         "var e = 2.0;\n"
                         "b = 3;\n"
                         "b += 1; b -= 1; b *= 2; b /= 2; b %= 5; b &= 7; b |= 8; b ^= 1; b <<= 2; b >>= 1;\n"
                         "A[i, j] = 0;\n"
                         "copy(A, B);\n"
                         ";;\n");
    const auto& s = body(p);
    REQUIRE(s.size() == 18);  // the empty statements are dropped
    CHECK(s[0]->as<LetStmt>()->name == "a");
    const auto* b = s[1]->as<VarStmt>();
    REQUIRE(b);
    CHECK(b->typeName == "i32");
    REQUIRE(b->init);
    const auto* c = s[2]->as<VarStmt>();
    CHECK(c->typeName.empty());
    CHECK(c->init == nullptr);
    CHECK(s[3]->as<VarStmt>()->typeName == "f32");
    CHECK(s[3]->as<VarStmt>()->init == nullptr);
    CHECK(s[4]->as<VarStmt>()->typeName.empty());
    CHECK(s[4]->as<VarStmt>()->init != nullptr);
    const auto* plain = s[5]->as<AssignStmt>();
    REQUIRE(plain);
    CHECK(!plain->op.has_value());
    BinaryOp ops[] = {BinaryOp::Add,    BinaryOp::Sub,    BinaryOp::Mul,   BinaryOp::Div, BinaryOp::Mod,
                      BinaryOp::BitAnd, BinaryOp::BitOr,  BinaryOp::BitXor, BinaryOp::Shl, BinaryOp::Shr};
    for (size_t i = 0; i < 10; ++i) {
        const auto* a = s[6 + i]->as<AssignStmt>();
        REQUIRE(a);
        REQUIRE(a->op.has_value());
        CHECK(*a->op == ops[i]);
    }
    const auto* elem = s[16]->as<AssignStmt>();
    REQUIRE(elem);
    CHECK(elem->target->as<Index>() != nullptr);
    const auto* call = s[17]->as<ExprStmt>();
    REQUIRE(call);
    CHECK(call->expr->as<Call>()->callee == "copy");
}

TEST_CASE("parser: every loop form keeps its iterator as a call") {
    Parsed p = parseBody("for i in range(n) {}\n"
                         "for i in range(0, n, 2) {}\n"
                         "for i in serial(4) {}\n"
                         "for i in unroll(4) {}\n"
                         "for (i, j) in parallel(M, N) {}\n"
                         "for k in pipelined(n, stages = 3, order = [0, 1, 2], stage = [0, 0, 1]) { x = 1; }\n");
    const auto& s = body(p);
    REQUIRE(s.size() == 6);
    const char* iters[] = {"range", "range", "serial", "unroll", "parallel", "pipelined"};
    size_t argc[] = {1, 3, 1, 1, 2, 4};
    for (size_t i = 0; i < 6; ++i) {
        const auto* f = s[i]->as<ForStmt>();
        REQUIRE(f);
        CHECK(f->iter->callee == iters[i]);
        CHECK(f->iter->args.size() == argc[i]);
    }
    const auto* par = s[4]->as<ForStmt>();
    REQUIRE(par->vars.size() == 2);
    CHECK(par->vars[0].name == "i");
    CHECK(par->vars[1].name == "j");
    CHECK(sameLoc(par->vars[1].range.begin, 6, 9));
    const auto* pipe = s[5]->as<ForStmt>();
    CHECK(pipe->iter->args[0].keyword.empty());
    CHECK(pipe->iter->args[1].keyword == "stages");
    CHECK(pipe->iter->args[2].keyword == "order");
    REQUIRE(pipe->iter->args[2].value->as<List>());
    CHECK(pipe->iter->args[2].value->as<List>()->elements.size() == 3);
    CHECK(pipe->iter->args[3].keyword == "stage");
    CHECK(pipe->body->stmts.size() == 1);
    // The iterator call spans from its name to its ')'.
    CHECK(sameLoc(pipe->iter->range.begin, 7, 10));
    CHECK(sameLoc(pipe->iter->range.end, 7, 71));
}

TEST_CASE("parser: if, else if, else; with and without parentheses") {
    Parsed p = parseBody("if (a) { x = 1; } else if b { x = 2; } else if (c) { } else { x = 3; }\n"
                         "if a > 0 { }\n");
    const auto& s = body(p);
    REQUIRE(s.size() == 2);
    const auto* i1 = s[0]->as<IfStmt>();
    REQUIRE(i1);
    CHECK(i1->cond->as<Name>()->name == "a");
    CHECK(i1->thenBlock->stmts.size() == 1);
    const auto* i2 = i1->elseStmt ? i1->elseStmt->as<IfStmt>() : nullptr;
    REQUIRE(i2);
    CHECK(i2->cond->as<Name>()->name == "b");
    const auto* i3 = i2->elseStmt ? i2->elseStmt->as<IfStmt>() : nullptr;
    REQUIRE(i3);
    const auto* last = i3->elseStmt ? i3->elseStmt->as<Block>() : nullptr;
    REQUIRE(last);
    CHECK(last->stmts.size() == 1);
    const auto* noElse = s[1]->as<IfStmt>();
    REQUIRE(noElse);
    CHECK(noElse->elseStmt == nullptr);
    CHECK(noElse->cond->as<Binary>()->op == BinaryOp::Gt);
}

TEST_CASE("parser: while, with and without parentheses; 'while' is a keyword") {
    Parsed p = parseBody("while (t < n) { t += 1; x = 2; }\nwhile t > 0 && u { }\n");
    const auto& s = body(p);
    REQUIRE(s.size() == 2);
    const auto* w1 = s[0]->as<WhileStmt>();
    REQUIRE(w1);
    CHECK(w1->cond->as<Binary>()->op == BinaryOp::Lt);
    CHECK(w1->body->stmts.size() == 2);
    const auto* w2 = s[1]->as<WhileStmt>();
    REQUIRE(w2);
    CHECK(w2->cond->as<Binary>()->op == BinaryOp::And);
    CHECK(w2->body->stmts.empty());
    Parsed bad = parseBody("let while = 1;\n");
    CHECK(bad.diags->hasErrors());
}

TEST_CASE("parser: require takes a condition; 'require' is a keyword") {
    Parsed p = parseBody("require N <= 128 && eps > 0.0;\nrequire (M % 4 == 0);\n");
    const auto& s = body(p);
    REQUIRE(s.size() == 2);
    const auto* r1 = s[0]->as<RequireStmt>();
    REQUIRE(r1);
    CHECK(r1->cond->as<Binary>()->op == BinaryOp::And);
    CHECK(p.source->text(r1->cond->range) == "N <= 128 && eps > 0.0");
    REQUIRE(s[1]->as<RequireStmt>());
    std::unique_ptr<File> copy = cloneSyntax(*p.file);
    CHECK(dump(*copy) == dump(*p.file));
    CHECK(dump(*p.file).find("Require") != std::string::npos);
    CHECK(parseBody("let require = 1;\n").diags->hasErrors());
    CHECK(parseBody("require;\n").diags->hasErrors());
}

TEST_CASE("parser: grid with one to three block variables, nested blocks") {
    Parsed p = parseBody("grid(4, threads = 128) as bx { }\n"
                         "grid(a, b, threads = 256) as (bx, by) { { let y = 1; } }\n"
                         "grid(a, b, c, threads = 32) as (x, y, z) {}\n");
    const auto& s = body(p);
    REQUIRE(s.size() == 3);
    const auto* g1 = s[0]->as<GridStmt>();
    REQUIRE(g1);
    CHECK(g1->launch->callee == "grid");
    CHECK(g1->launch->args.size() == 2);
    CHECK(g1->launch->args[1].keyword == "threads");
    REQUIRE(g1->vars.size() == 1);
    CHECK(g1->vars[0].name == "bx");
    CHECK(sameLoc(g1->launch->range.end, 2, 22));  // the ')' before 'as'
    const auto* g2 = s[1]->as<GridStmt>();
    REQUIRE(g2->vars.size() == 2);
    REQUIRE(g2->body->stmts.size() == 1);
    CHECK(g2->body->stmts[0]->as<Block>() != nullptr);
    CHECK(s[2]->as<GridStmt>()->vars.size() == 3);
}

// ---- expressions -------------------------------------------------------------------------------

TEST_CASE("parser: precedence and associativity") {
    CHECK(exprDump("a + b * c") == "(a + (b * c))");
    CHECK(exprDump("a * b + c") == "((a * b) + c)");
    CHECK(exprDump("a - b - c") == "((a - b) - c)");
    CHECK(exprDump("a / b % c") == "((a / b) % c)");
    CHECK(exprDump("a << 1 + 2") == "(a << (1 + 2))");
    CHECK(exprDump("a < b == c > d") == "((a < b) == (c > d))");
    CHECK(exprDump("a & b ^ c | d") == "(((a & b) ^ c) | d)");
    CHECK(exprDump("a | b && c || d") == "(((a | b) && c) || d)");
    CHECK(exprDump("a || b && c") == "(a || (b && c))");
    CHECK(exprDump("a == b & c") == "((a == b) & c)");
    CHECK(exprDump("-a * b") == "((-a) * b)");
    CHECK(exprDump("!a && ~b") == "((!a) && (~b))");
    CHECK(exprDump("- -a") == "(-(-a))");
    CHECK(exprDump("(a + b) * c") == "((a + b) * c)");
    CHECK(exprDump("a ? b : c ? d : e") == "(a ? b : (c ? d : e))");
    CHECK(exprDump("a > 0 ? b + 1 : c") == "((a > 0) ? (b + 1) : c)");
    CHECK(exprDump("(a ? b : c) ? d : e") == "((a ? b : c) ? d : e)");
    CHECK(exprDump("a <= b != c >= d") == "((a <= b) != (c >= d))");
    CHECK(exprDump("-x[i]") == "(-x[i])");
}

TEST_CASE("parser: calls, keyword arguments, lists and indexing") {
    CHECK(exprDump("f()") == "f()");
    CHECK(exprDump("gemm(A, B, C, transpose_B = true, policy = full_row)") ==
          "gemm(A, B, C, transpose_B = true, policy = full_row)");
    CHECK(exprDump("alloc_shared([64, 32,], f16)") == "alloc_shared([64, 32], f16)");
    CHECK(exprDump("[]") == "[]");
    CHECK(exprDump("[[1, 2], [3]]") == "[[1, 2], [3]]");
    CHECK(exprDump("A[i, j]") == "A[i, j]");
    CHECK(exprDump("A[i][j]") == "A[i][j]");
    CHECK(exprDump("f(x)[0]") == "f(x)[0]");
    CHECK(exprDump("max(C[i, j], 0.0)") == "max(C[i, j], 0.0)");
}

TEST_CASE("parser: slices: a:b, a:+n, :, and open ends") {
    CHECK(exprDump("Q[b, s0 : +block_M, h, :]") == "Q[b, s0:+block_M, h, :]");
    CHECK(exprDump("A[i : i + 64, :]") == "A[i:(i + 64), :]");
    CHECK(exprDump("A[:n, n:]") == "A[:n, n:]");
    CHECK(exprDump("A[:+4]") == "A[:+4]");
    Parsed p = parseBody("let x = A[1:+4, :, 2:3, 5, :7];");
    const auto* ix = letValue(p).as<Index>();
    REQUIRE(ix);
    REQUIRE(ix->subscripts.size() == 5);
    const auto& s = ix->subscripts;
    CHECK(s[0].form == Subscript::Form::Length);
    CHECK(s[0].lo->as<IntLit>()->value == 1);
    CHECK(s[0].length->as<IntLit>()->value == 4);
    CHECK(s[1].form == Subscript::Form::Range);
    CHECK(s[1].lo == nullptr);
    CHECK(s[1].hi == nullptr);
    CHECK(s[2].form == Subscript::Form::Range);
    CHECK(s[2].lo->as<IntLit>()->value == 2);
    CHECK(s[2].hi->as<IntLit>()->value == 3);
    CHECK(s[3].form == Subscript::Form::Point);
    CHECK(s[3].point->as<IntLit>()->value == 5);
    CHECK(s[4].form == Subscript::Form::Range);
    CHECK(s[4].lo == nullptr);
    CHECK(s[4].hi->as<IntLit>()->value == 7);
}

TEST_CASE("parser: literal values") {
    Parsed p = parseBody("let a = 0; let b = 1_000_000; let c = 0xFF; let d = 0x7fff_ffff_ffff_ffff;\n"
                         "let e = 1.5; let f = 2.; let g = .25; let h = 1e3; let i = 1.5e-2; let j = 1_0.0_1;\n"
                         "let k = true; let l = false; let m = \"a\\\"b\\\\c\\nd\";\n"
                         "let n = 9223372036854775807;");
    const auto& s = body(p);
    REQUIRE(s.size() == 14);
    auto intOf = [&](size_t i) { return s[i]->as<LetStmt>()->value->as<IntLit>()->value; };
    auto floatOf = [&](size_t i) { return s[i]->as<LetStmt>()->value->as<FloatLit>()->value; };
    CHECK(intOf(0) == 0);
    CHECK(intOf(1) == 1000000);
    CHECK(intOf(2) == 255);
    CHECK(intOf(3) == INT64_MAX);
    CHECK(floatOf(4) == doctest::Approx(1.5));
    CHECK(floatOf(5) == doctest::Approx(2.0));
    CHECK(floatOf(6) == doctest::Approx(0.25));
    CHECK(floatOf(7) == doctest::Approx(1000.0));
    CHECK(floatOf(8) == doctest::Approx(0.015));
    CHECK(floatOf(9) == doctest::Approx(10.01));
    // The spelling survives (without digit separators), for readable emitted code.
    CHECK(s[8]->as<LetStmt>()->value->as<FloatLit>()->spelling == "1.5e-2");
    CHECK(s[9]->as<LetStmt>()->value->as<FloatLit>()->spelling == "10.01");
    CHECK(s[10]->as<LetStmt>()->value->as<BoolLit>()->value == true);
    CHECK(s[11]->as<LetStmt>()->value->as<BoolLit>()->value == false);
    CHECK(s[12]->as<LetStmt>()->value->as<StringLit>()->value == "a\"b\\c\nd");
    CHECK(intOf(13) == INT64_MAX);
}

TEST_CASE("parser: source ranges of expressions") {
    //                     1234567890123456789012345
    Parsed p = parseBody("let x = (a + bb) * c;");
    const Expr& e = letValue(p);
    const auto* mul = e.as<Binary>();
    REQUIRE(mul);
    CHECK(sameLoc(mul->range.begin, 2, 9));
    CHECK(sameLoc(mul->range.end, 2, 20));
    CHECK(sameLoc(mul->opRange.begin, 2, 18));
    // A parenthesised expression's range includes the parentheses.
    CHECK(sameLoc(mul->lhs->range.begin, 2, 9));
    CHECK(sameLoc(mul->lhs->range.end, 2, 16));
    const auto* add = mul->lhs->as<Binary>();
    REQUIRE(add);
    CHECK(sameLoc(add->rhs->range.begin, 2, 14));
    CHECK(sameLoc(add->rhs->range.end, 2, 15));
    const auto& let = *body(p)[0];
    CHECK(sameLoc(let.range.begin, 2, 1));
    CHECK(sameLoc(let.range.end, 2, 21));
}

TEST_CASE("parser: columns count characters after non-ASCII text") {
    Parsed p = parseBody("/* \xc3\xa9\xc3\xa9 */ let x = y;");
    const Expr& e = letValue(p);
    // "/* éé */ let x = y;": 'y' is the 18th character (20th byte).
    CHECK(sameLoc(e.range.begin, 2, 18));
}

TEST_CASE("parser: comments and line endings") {
    Parsed p = parse("// line comment with /* inside\r\n"
                     "kernel k() { /* block\n comment with // inside */ let s = \"// not a comment /*\"; }\r\n");
    REQUIRE_MESSAGE(p.file, p.errors());
    const auto& s = body(p);
    REQUIRE(s.size() == 1);
    CHECK(s[0]->as<LetStmt>()->value->as<StringLit>()->value == "// not a comment /*");
    CHECK(sameLoc(s[0]->range.begin, 3, 28));
}

TEST_CASE("parser: the dump shows the tree") {
    Parsed p = parse("kernel k<b = 4>(A: f32[M]) {\n"
                     "    grid(1, threads = 32) as bx {\n"
                     "        for i in range(b) { if i > 0 { A[i] = 1.0; } else { } }\n"
                     "    }\n"
                     "}\n");
    REQUIRE_MESSAGE(p.file, p.errors());
    CHECK(dump(*p.file) == "Kernel k  @1:1\n"
                           "  TemplateParam b = 4\n"
                           "  Param A: f32[M]\n"
                           "  Block  @1:28\n"
                           "    Grid grid(1, threads = 32) as bx  @2:5\n"
                           "      Block  @2:33\n"
                           "        For i in range(b)  @3:9\n"
                           "          Block  @3:27\n"
                           "            If (i > 0)  @3:29\n"
                           "              Block  @3:38\n"
                           "                Assign A[i] = 1.0  @3:40\n"
                           "            Else\n"
                           "              Block  @3:59\n");
}

// ---- errors --------------------------------------------------------------------------------------

TEST_CASE("parser errors: a syntax error is reported at the offending token, in words") {
    Parsed p = parseBody("let x = ;");
    CHECK(p.file == nullptr);
    const Diagnostic& d = p.first();
    CHECK(d.id == DiagId::err_unexpected_token);
    CHECK(sameLoc(d.range.begin, 2, 9));
    CHECK(d.message.find("unexpected ';'") == 0);
    CHECK(d.message.find("an expression") != std::string::npos);
}

TEST_CASE("parser errors: a missing token") {
    Parsed p = parseBody("let x = 1\nlet y = 2;");
    CHECK(p.file == nullptr);
    const Diagnostic& d = p.first();
    CHECK((d.id == DiagId::err_missing_token || d.id == DiagId::err_unexpected_token));
    CHECK(d.message.find("';'") != std::string::npos);
    CHECK(d.range.begin.line == 3);
}

TEST_CASE("parser errors: end of file") {
    Parsed p = parse("kernel k() {");
    CHECK(p.file == nullptr);
    CHECK(p.first().message.find("end of file") != std::string::npos);
    Parsed q = parse("kernel");
    CHECK(q.file == nullptr);
    CHECK(q.first().message == "unexpected end of file; expected an identifier");
}

TEST_CASE("parser errors: several errors are reported, each once") {
    Parsed p = parse("kernel a() { let = 1; }\nkernel b() { let y = ; }\nkernel c() { x + ; }\n");
    CHECK(p.file == nullptr);
    std::set<uint32_t> lines;
    for (const auto& d : p.diags->diagnostics()) lines.insert(d.range.begin.line);
    CHECK(lines == std::set<uint32_t>{1, 2, 3});
}

TEST_CASE("parser errors: recovery is bounded") {
    std::string src;
    for (int i = 0; i < 200; ++i) src += "kernel () {}\n";
    ParseLimits limits;
    limits.maxSyntaxErrors = 5;
    Parsed p = parse(src, limits);
    CHECK(p.file == nullptr);
    CHECK(p.diags->diagnostics().size() <= 6);
    CHECK(p.diags->diagnostics().back().id == DiagId::err_too_many_errors);
}

TEST_CASE("parser errors: lexical errors") {
    Parsed bad = parseBody("let x = 1 # 2;\nlet y = $;");
    CHECK(bad.file == nullptr);
    REQUIRE(bad.diags->diagnostics().size() == 2);
    CHECK(bad.ids() == std::vector<DiagId>{DiagId::err_invalid_character, DiagId::err_invalid_character});
    CHECK(bad.diags->diagnostics()[0].message == "invalid character '#' in source");
    CHECK(sameLoc(bad.diags->diagnostics()[0].range.begin, 2, 11));
    CHECK(sameLoc(bad.diags->diagnostics()[1].range.begin, 3, 9));

    Parsed nul = parse(std::string("kernel k() {\0}", 14));
    REQUIRE(nul.file == nullptr);
    CHECK(nul.first().message == "invalid character '\\x00' in source");

    Parsed str = parseBody("assert(true, \"no end);");
    CHECK(str.file == nullptr);
    CHECK(str.first().id == DiagId::err_unterminated_string);
    CHECK(sameLoc(str.first().range.begin, 2, 14));

    Parsed cmt = parse("kernel k() {\n  /* never closed\n  let x = 1;\n");
    CHECK(cmt.file == nullptr);
    CHECK(cmt.first().id == DiagId::err_unterminated_comment);
    CHECK(sameLoc(cmt.first().range.begin, 2, 3));
    // Only the unterminated-comment error: nothing about the missing '}' after it.
    CHECK(cmt.diags->diagnostics().size() == 1);
}

TEST_CASE("parser errors: an unterminated comment after other errors reports both") {
    Parsed p = parse("kernel k() { # }\n/* open\n");
    CHECK(p.file == nullptr);
    CHECK(p.ids() == std::vector<DiagId>{DiagId::err_invalid_character, DiagId::err_unterminated_comment});
}

TEST_CASE("parser errors: comment markers inside strings and line comments do not count") {
    CHECK(parseBody("assert(true, \"/*\");").file != nullptr);
    CHECK(parseBody("// /* not a comment start\nlet x = 1;").file != nullptr);
    CHECK(parseBody("assert(true, \"\\\" /*\");").file != nullptr);  // escaped quote, then /* in the string
    Parsed p = parseBody("assert(true, \"*/\"); /* real");
    CHECK(p.file == nullptr);
    CHECK(p.first().id == DiagId::err_unterminated_comment);
}

TEST_CASE("parser errors: invalid UTF-8 is located in characters") {
    Parsed p = parse("kernel k() {\n  // \xc3\xa9 \xff\n}\n");
    CHECK(p.file == nullptr);
    CHECK(p.first().id == DiagId::err_invalid_utf8);
    CHECK(sameLoc(p.first().range.begin, 2, 8));  // "  // é " is 7 characters
    CHECK(p.diags->diagnostics().size() == 1);
}

TEST_CASE("parser errors: literals out of range") {
    Parsed big = parseBody("let x = 9223372036854775808;");
    CHECK(big.file == nullptr);
    CHECK(big.first().id == DiagId::err_integer_literal_too_large);
    CHECK(big.first().message == "integer literal '9223372036854775808' does not fit in 64 bits");
    Parsed hex = parseBody("let x = 0x1_0000_0000_0000_0000;");
    CHECK(hex.first().id == DiagId::err_integer_literal_too_large);
    Parsed huge = parseBody("let x = " + std::string(100, '9') + ";");
    CHECK(huge.first().message.find("...") != std::string::npos);  // the message clips the digits
    Parsed f = parseBody("let x = 1e400;");
    CHECK(f.file == nullptr);
    CHECK(f.first().id == DiagId::err_invalid_float_literal);
    // Underflow is not an error: it is zero.
    CHECK(parseBody("let x = 1e-400;").file != nullptr);
}

TEST_CASE("parser errors: a file without kernels") {
    for (const char* src : {"", "   \n\n", "// only a comment\n", "/* a */"}) {
        Parsed p = parse(src);
        CHECK(p.file == nullptr);
        CHECK(p.ids() == std::vector<DiagId>{DiagId::err_no_kernel});
        CHECK(sameLoc(p.first().range.begin, 1, 1));
    }
}

TEST_CASE("parser limits: nesting depth") {
    ParseLimits limits;
    limits.maxNesting = 8;
    std::string ok = "kernel k() { let x = " + std::string(7, '(') + "1" + std::string(7, ')') + "; }";
    CHECK(parse(ok, limits).file != nullptr);  // 1 brace + 7 parentheses
    std::string deep = "kernel k() { let x = " + std::string(8, '(') + "1" + std::string(8, ')') + "; }";
    Parsed p = parse(deep, limits);
    CHECK(p.file == nullptr);
    CHECK(p.ids() == std::vector<DiagId>{DiagId::err_nesting_too_deep});
    CHECK(p.first().message == "brackets nested more than 8 deep");
    CHECK(sameLoc(p.first().range.begin, 1, 29));
    // Brackets and braces count together; closing ones bring the depth back.
    std::string mixed = "kernel k() { { [ ( ) ] } { [ ( f(a[0]) ) ] } }";
    CHECK(parse(mixed, limits).file == nullptr);  // syntax aside, the depth stays at most 6
    CHECK(parse(mixed, limits).first().id != DiagId::err_nesting_too_deep);
}

TEST_CASE("parser limits: tokens per statement") {
    ParseLimits limits;
    limits.maxTokensPerStatement = 50;
    std::string shortChain, longChain;
    for (int i = 0; i < 20; ++i) shortChain += "a + ";
    for (int i = 0; i < 30; ++i) longChain += "a + ";
    CHECK(parse("kernel k() { let x = " + shortChain + "1; let y = " + shortChain + "1; }", limits).file != nullptr);
    Parsed p = parse("kernel k() { let x = " + longChain + "1; }", limits);
    CHECK(p.file == nullptr);
    CHECK(p.ids() == std::vector<DiagId>{DiagId::err_statement_too_long});
}

TEST_CASE("parser limits: input size") {
    ParseLimits limits;
    limits.maxBytes = 64;
    Parsed p = parse("kernel k() {}\n" + std::string(100, ' '), limits);
    CHECK(p.file == nullptr);
    CHECK(p.ids() == std::vector<DiagId>{DiagId::err_input_too_large});
    CHECK(p.first().message == "input is 114 bytes; tlc accepts at most 64");
}

TEST_CASE("parser limits: deep expressions within the limits parse") {
    // 10,000 operands of '+' (the tree is 10,000 deep on the left), unary chains and ternary
    // chains: the default stack of a test thread must be enough for the parser and builder
    // (the driver runs them on a large stack anyway).
    std::string chain = "a";
    for (int i = 0; i < 2000; ++i) chain += " + a";
    Parsed p = parseBody("let x = " + chain + ";");
    REQUIRE_MESSAGE(p.file, p.errors());
    const Expr* e = &letValue(p);
    int depth = 0;
    while (const auto* b = e->as<Binary>()) {
        e = b->lhs.get();
        ++depth;
    }
    CHECK(depth == 2000);
}

// ---- large files: parsed in groups of kernels --------------------------------------------------

namespace {
// n small kernels, named k0..k{n-1}, each on 4 lines (kernel i starts on line 4i+1).
std::string manyKernels(int n, const std::function<std::string(int)>& body = {}) {
    std::string src;
    for (int i = 0; i < n; ++i) {
        std::string b = body ? body(i) : "";
        src += "kernel k" + std::to_string(i) + "<b = 4>(A: f32[M], B: f32[M]) {\n";
        src += "    grid(ceildiv(M, b), threads = 32) as bx { let t = alloc_fragment([b], f32); }\n";
        src += "    " + (b.empty() ? std::string("let x = 1 + 2 * 3 - (4 + 5) * 6 + f(7, 8, 9);") : b) + "\n";
        src += "}\n";
    }
    return src;
}
} // namespace

TEST_CASE("parser: a file of many kernels keeps every kernel, in order") {
    // About 60 tokens a kernel: 300 kernels are several groups.
    Parsed p = parse(manyKernels(300));
    REQUIRE_MESSAGE(p.file, p.errors());
    REQUIRE(p.file->kernels.size() == 300);
    for (int i = 0; i < 300; ++i) {
        CHECK(p.file->kernels[i]->name == "k" + std::to_string(i));
        CHECK(sameLoc(p.file->kernels[i]->range.begin, uint32_t(4 * i + 1), 1));
    }
}

TEST_CASE("parser: syntax errors in several groups are all reported, at their places") {
    auto body = [](int i) { return (i == 3 || i == 150 || i == 290) ? std::string("let x = ;") : std::string(); };
    Parsed p = parse(manyKernels(300, body));
    CHECK(p.file == nullptr);
    std::vector<uint32_t> lines;
    for (const auto& d : p.diags->diagnostics()) {
        CHECK(d.id == DiagId::err_unexpected_token);
        lines.push_back(d.range.begin.line);
    }
    CHECK(lines == std::vector<uint32_t>{4 * 3 + 3, 4 * 150 + 3, 4 * 290 + 3});
}

TEST_CASE("parser: an error at the end of a group names the next kernel, as in one piece") {
    // A kernel without a body, followed by another. Groups are cut at the first kernel at least
    // 4096 tokens after the last cut; the small kernels have 79 tokens, so 51 of them are 4029
    // tokens, and a bodiless kernel of 7n+3 tokens after them puts a cut right after itself once
    // n >= 10. Either way the message and its place are those of a parse in one piece.
    for (int params = 0; params <= 14; ++params) {
        CAPTURE(params);
        std::string header = "kernel broken(";
        for (int i = 0; i < params; ++i) header += (i ? ", p" : "p") + std::to_string(i) + ": f32[M]";
        std::string src = manyKernels(51) + header + ")\n" + manyKernels(3);
        Parsed p = parse(src);
        CHECK(p.file == nullptr);
        REQUIRE(p.diags->diagnostics().size() == 1);
        const Diagnostic& d = p.first();
        CHECK(d.message == "unexpected 'kernel'; expected '{'");
        CHECK(sameLoc(d.range.begin, uint32_t(4 * 51 + 2), 1));
    }
}

TEST_CASE("parser: the error limit counts across groups") {
    ParseLimits limits;
    limits.maxSyntaxErrors = 4;
    Parsed p = parse(manyKernels(300, [](int) { return std::string("let = ;"); }), limits);
    CHECK(p.file == nullptr);
    REQUIRE(p.diags->diagnostics().size() == 5);
    CHECK(p.diags->diagnostics().back().id == DiagId::err_too_many_errors);
}

TEST_CASE("parser: junk between kernels") {
    Parsed p = parse(manyKernels(100) + "; ; junk\n" + manyKernels(100));
    CHECK(p.file == nullptr);
    REQUIRE(!p.diags->diagnostics().empty());
    CHECK(p.first().message.find("unexpected ';'; expected") == 0);
    CHECK(p.first().range.begin.line == 401);
}

TEST_CASE("parser: groups of one kernel give the same trees and the same errors") {
    // The fuzzer (tests/fuzz/fuzz_frontend.cpp) checks this on random input; these are the
    // shapes that matter: several kernels, errors inside, between and at the end of kernels,
    // junk before the first one, `kernel` where a kernel cannot end.
    const char* sources[] = {
        "kernel a() {}\nkernel b(X: f32[N]) { let x = 1; }\nkernel c<t = 4>() { for i in range(t) { } }\n",
        "junk kernel a() {}\n",
        "kernel a() { let = 1; }\nkernel b() {}\n",
        "kernel a() {}\nkernel b() { x + ; }\nkernel c() { y = ; }\n",
        "kernel a()\nkernel b() {}\n",
        "kernel a<b = 4\nkernel b() {}\n",
        "kernel a() {} } } kernel b() {}\n",
        "kernel a() {} ;\nkernel b() {}\n",
        "kernel a( {\nkernel b() {}\n",
        "kernel kernel kernel",
        "kernel a() {}\nkernel",
        // The AST builder's error (a literal too large) in a kernel before one with a syntax error:
        // a group holding both used to report only the syntax error (found by fuzz_frontend).
        "kernel a() { let x = 692233720368547758084; }\nkernel b() { y = ; }\n",
        "kernel a() { y = ; }\nkernel b() { let x = 692233720368547758084; }\nkernel c() {}\n",
    };
    for (const char* src : sources) {
        CAPTURE(src);
        Parsed whole = parse(src);
        ParseLimits tiny;
        tiny.groupTokens = 1;
        Parsed grouped = parse(src, tiny);
        REQUIRE(bool(whole.file) == bool(grouped.file));
        if (whole.file) {
            CHECK(dump(*whole.file) == dump(*grouped.file));
        } else {
            CHECK(whole.errors() == grouped.errors());
        }
    }
    Parsed both = parse(sources[std::size(sources) - 2]);
    CHECK(both.ids().size() == 2);
}

TEST_CASE("ast: cloneSyntax copies a parsed file, and the copy checks as the original does") {
    // The recommender parses once and checks a copy per candidate: every sample and corpus
    // kernel must come out of the copy as it was parsed, and check to the same tree.
    int files = 0;
    for (const char* dir : {"/samples", "/tests/corpus"})
        for (const auto& entry : std::filesystem::directory_iterator(std::string(TLC_SOURCE_DIR) + dir)) {
            if (entry.path().extension() != ".tl") continue;
            std::ifstream in(entry.path());
            std::stringstream text;
            text << in.rdbuf();
            Parsed original = parse(text.str());
            REQUIRE_MESSAGE(original.file, entry.path().string());
            std::unique_ptr<File> copy = cloneSyntax(*original.file);
            CHECK_MESSAGE(dump(*copy) == dump(*original.file), entry.path().string());
            SemaOptions options;
            options.target = findTarget("sm90");
            DiagnosticEngine a(*original.source), b(*original.source);
            bool okOriginal = checkFile(*original.file, a, options), okCopy = checkFile(*copy, b, options);
            CHECK(okOriginal == okCopy);
            CHECK_MESSAGE(dump(*copy) == dump(*original.file), entry.path().string());
            ++files;
        }
    CHECK(files > 30);
}

TEST_CASE("clipUtf8 cuts at a character boundary") {
    CHECK(tlc::clipUtf8("short", 32) == "short");
    CHECK(tlc::clipUtf8("abcdef", 3) == "abc...");
    // "ab" then U+01D1 (2 bytes) then U+20AC (3 bytes): cuts inside either back up to its start.
    const std::string s = "ab\xC7\x91\xE2\x82\xAC";
    CHECK(tlc::clipUtf8(s, 3) == "ab...");
    CHECK(tlc::clipUtf8(s, 4) == "ab\xC7\x91...");
    CHECK(tlc::clipUtf8(s, 5) == "ab\xC7\x91...");
    CHECK(tlc::clipUtf8(s, 6) == "ab\xC7\x91...");
    CHECK(tlc::firstInvalidUtf8(tlc::clipUtf8(s, 5)) == std::string_view::npos);
}
