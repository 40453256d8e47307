// Names in emitted code: the .tl names survive wherever C++ allows them. Names that are C++
// keywords, reserved identifiers, or names the emitted code itself relies on (threadIdx, expf,
// tl, std, ...) get a suffix; a name already visible in an enclosing scope gets `_1`, `_2`, ...
// so that no declaration shadows another.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tlc::codegen {

// A valid C++ identifier for `name` (reserved words and forms get a suffix or prefix).
std::string sanitizeIdentifier(std::string_view name);
bool isReservedName(std::string_view name);

// Block-structured declarations: owners (IR variables and buffers, identified by pointer) map
// to the names they were declared with.
class NameScope {
public:
    NameScope() { push(); }
    void push();
    void pop();
    // Declares a name for `owner` (nullptr: an emitter-made name) based on `base`: the
    // sanitized base, or base_1, base_2, ... when that is taken in a visible scope.
    std::string declare(const void* owner, std::string_view base);
    // Declares an emitter-made name exactly as given (a reserved name that no .tl name can take,
    // such as `stream` or `tl_smem`).
    void declareExact(const void* owner, const std::string& name);
    // The name `owner` was last declared with in a visible scope, or nullptr.
    const std::string* lookup(const void* owner) const;
    bool visible(std::string_view name) const;

private:
    struct Entry {
        const void* owner;
        std::string name;
    };
    std::vector<std::vector<Entry>> scopes_;
    std::map<std::string, int, std::less<>> visibleCount_;
    std::map<const void*, std::vector<std::string>> ownerNames_;
};

} // namespace tlc::codegen
