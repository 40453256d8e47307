// The statements of a whole-tensor kernel with reductions, as Reductions.cpp and
// GemmStatistics.cpp read them: assignments to tensor parameters with their `let`s inlined.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc::beginner {

struct Step {
    const ast::Param* target;
    std::optional<ast::BinaryOp> op;
    ast::ExprPtr value;  // `let`s inlined
};

struct Statements {
    std::vector<Step> steps;
    std::map<std::string, ast::ExprPtr> lets;  // each value with earlier `let`s inlined
    std::set<std::string> used;                // every name of the kernel, and the reserved ones
    std::string acc = "f32";                   // accumulators: f64 when a tensor is f64
    SourceRange at;                            // the first statement's place
    bool ok = true;                            // false: a statement other than `let` or an assignment (reported)
};

// `reserved`: the names the kernel tlc writes gives its tile parameters.
Statements scanStatements(const ast::Kernel& k, std::initializer_list<std::string> reserved, DiagnosticEngine& diags);

} // namespace tlc::beginner
