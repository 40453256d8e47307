// Printing IR. ExprPrinter is precedence-aware C-like expression text with hooks that the
// emitters override (how a variable, a call, a load, a cast is spelled on their target);
// printKernel/printStmt give the readable IR dump used by --emit=tile-ir/thread-ir.
#pragma once

#include "ir/Kernel.h"

#include <string>

namespace tlc::ir {

// C operator precedence, higher binds tighter (shared by the IR printer and the emitters).
enum Precedence { kPrecTernary = 3, kPrecOr = 4, kPrecAnd = 5, kPrecBitOr = 6, kPrecBitXor = 7, kPrecBitAnd = 8,
                  kPrecEq = 9, kPrecRel = 10, kPrecShift = 11, kPrecAdd = 12, kPrecMul = 13, kPrecUnary = 15,
                  kPrecPrimary = 16 };
int precedence(BinaryOp op);

class ExprPrinter {
public:
    virtual ~ExprPrinter() = default;
    std::string print(const Expr& e) { return print(e, 0); }

protected:
    enum Prec { kTernary = kPrecTernary, kUnary = kPrecUnary, kPrimary = kPrecPrimary };
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
