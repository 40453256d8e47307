// Lexical scopes of a kernel: the kernel's own names (compile-time parameters, sizes, tensor
// and scalar parameters), then one frame per block, loop and grid. A name may not be
// redeclared while an outer declaration of it is visible, so a lookup never has to choose.
#pragma once

#include "ast/AST.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tlc::sema {

class Scope {
public:
    void push() { frames_.emplace_back(); }
    // Returns the frame's declarations, for the unused-variable check.
    std::vector<ast::Decl*> pop() {
        std::vector<ast::Decl*> frame = std::move(frames_.back());
        frames_.pop_back();
        return frame;
    }
    void add(ast::Decl* d) { frames_.back().push_back(d); }

    ast::Decl* lookup(std::string_view name) const {
        for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
            for (ast::Decl* d : *f)
                if (d->name == name) return d;
        return nullptr;
    }

    std::vector<std::string> visibleNames() const {
        std::vector<std::string> out;
        for (const auto& f : frames_)
            for (const ast::Decl* d : f) out.push_back(d->name);
        return out;
    }

private:
    std::vector<std::vector<ast::Decl*>> frames_;
};

// RAII frame.
class ScopeFrame {
public:
    template <typename OnPop> ScopeFrame(Scope& s, OnPop onPop) : scope_(s), onPop_(std::move(onPop)) { s.push(); }
    ~ScopeFrame() { onPop_(scope_.pop()); }
    ScopeFrame(const ScopeFrame&) = delete;
    ScopeFrame& operator=(const ScopeFrame&) = delete;

private:
    Scope& scope_;
    std::function<void(std::vector<ast::Decl*>)> onPop_;
};

// The candidate closest to `name` by edit distance, when it is close enough to be a typo.
std::string closestMatch(std::string_view name, const std::vector<std::string>& candidates);

// What to write instead of a name that CUDA, C, PyTorch or TileLang spell differently
// (`expf`, `__syncthreads`, `threadIdx`, `T.Parallel`'s `Parallel`): a note's text, or empty.
std::string_view spellingElsewhere(std::string_view name);

} // namespace tlc::sema
