// The input of one run, parsed once. Every compile of the run (the driver's, each variant of
// --emit-variants, each candidate the recommender tries) copies the kernels it needs from here
// (ast::cloneSyntax) and checks its copy: sema annotates the tree it checks, so the parsed tree
// itself is never checked and stays as written.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"
#include "support/SourceFile.h"

#include <map>
#include <set>
#include <memory>
#include <string>
#include <string_view>

namespace tlc {

class Program {
public:
    // Null after reporting to `diags` when the text has lexical or syntax errors.
    // `defines` (-D): what the beginner level's lowering may take as known at compile time.
    // `autoParams`: compile-time parameters -D NAME=auto leaves to the recommender (made `auto`).
    static std::unique_ptr<Program> parse(const SourceFile& source, DiagnosticEngine& diags,
                                          const std::map<std::string, std::string>& defines = {},
                                          const std::set<std::string>& autoParams = {});

    const SourceFile& source() const { return source_; }
    const ast::File& syntax() const { return *syntax_; }
    // Null when the file has no kernel of that name.
    const ast::Kernel* kernel(std::string_view name) const;

private:
    Program(const SourceFile& source, std::unique_ptr<ast::File> syntax)
        : source_(source), syntax_(std::move(syntax)) {}
    const SourceFile& source_;
    std::unique_ptr<const ast::File> syntax_;
};

// Whether the kernel has an `auto` parameter that `defines` does not fix.
bool hasOpenAutoParams(const ast::Kernel& kernel, const std::map<std::string, std::string>& defines);

// "2 grids" or "global scratch (alloc_global)" when the kernel has them, else "": the variant
// dispatcher launches kernels of one launch only. Read from the syntax, so it can be asked
// before the kernel is checked.
std::string severalGridsOrScratch(const ast::Kernel& kernel);

// The names of the kernel's symbolic sizes: the names in its tensor parameters' dimensions
// that are not compile-time parameters (read from the syntax, as severalGridsOrScratch).
std::set<std::string> symbolicSizeNames(const ast::Kernel& kernel);
// The names of a kernel's integer scalar parameters (`total_m_blocks: i32`), which --shape may
// give the recommender's model a value for (a grid over them is otherwise one block).
std::set<std::string> integerScalarNames(const ast::Kernel& kernel);

} // namespace tlc
