// Printing IR. ExprPrinter is precedence-aware C-like expression text with hooks that the
// emitters override (how a variable, a call, a load, a cast is spelled on their target);
// printKernel/printStmt give the readable IR dump used by --emit=tile-ir/thread-ir.
#pragma once

#include "ir/Kernel.h"

#include <string>

namespace tlc::ir {

class ExprPrinter {
public:
    virtual ~ExprPrinter() = default;
    std::string print(const Expr& e) { return print(e, 0); }

protected:
    // C operator precedence, higher binds tighter.
    enum Prec { kTernary = 3, kOr = 4, kAnd = 5, kBitOr = 6, kBitXor = 7, kBitAnd = 8, kEq = 9, kRel = 10,
                kShift = 11, kAdd = 12, kMul = 13, kUnary = 15, kPrimary = 16 };
    static int precedence(BinaryOp op);
    std::string print(const Expr& e, int parentPrec);

    virtual std::string printVar(const Var* v) { return v->name; }
    virtual std::string printIntImm(const IntImm* i);
    virtual std::string printFloatImm(const FloatImm* f);
    virtual std::string printCast(const Cast* c);
    virtual std::string printCall(const Call* c);
    virtual std::string printLoad(const Load* l);
    virtual std::string printMinMax(const Binary* b);
};

std::string printExpr(const Expr& e);
std::string printStmt(const Stmt& s, int indent = 0);
std::string printKernel(const Kernel& k);

} // namespace tlc::ir
