#include "emit/Runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <stdexcept>

namespace tlc::codegen {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Moves a section's leading includes (after its opening comments) out of its text: a line
// `#include`, or an `#if` ... `#endif` group of nothing else. An include further down would
// be pasted among the code, so it is an error in the runtime header.
void splitIncludes(RuntimeSection& s) {
    std::vector<std::string_view> lines;
    for (size_t pos = 0; pos < s.text.size();) {
        size_t eol = s.text.find('\n', pos);
        lines.emplace_back(s.text.data() + pos, eol - pos);
        pos = eol + 1;
    }
    std::string text;
    size_t i = 0;
    for (; i < lines.size(); ++i) {
        std::string_view line = trim(lines[i]);
        if (line.empty()) continue;
        if (startsWith(line, "//")) {
            text.append(lines[i]).append("\n");
        } else if (startsWith(line, "#include")) {
            s.includes.emplace_back(line);
        } else if (startsWith(line, "#if")) {
            size_t end = i + 1;
            while (end < lines.size() && startsWith(trim(lines[end]), "#include")) ++end;
            if (end == i + 1 || end == lines.size() || trim(lines[end]) != "#endif") break;
            std::string group;
            for (size_t j = i; j <= end; ++j) group.append(trim(lines[j])).append(j < end ? "\n" : "");
            s.includes.push_back(group);
            i = end;
        } else {
            break;
        }
    }
    for (; i < lines.size(); ++i) {
        if (startsWith(trim(lines[i]), "#include"))
            throw std::logic_error(fmt::format("runtime section {}: `{}` after its code; move it to the section's top",
                                               s.id(), trim(lines[i])));
        text.append(lines[i]).append("\n");
    }
    s.text = std::move(text);
}

// Splits one embedded header into its sections.
void parseSections(const std::string& file, const std::string& text, std::vector<RuntimeSection>& out) {
    constexpr std::string_view kBegin = "// tlc:section ";
    constexpr std::string_view kEnd = "// tlc:end";
    RuntimeSection* open = nullptr;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string::npos) eol = text.size();
        std::string_view line(text.data() + pos, eol - pos);
        pos = eol + 1;
        if (line.substr(0, kBegin.size()) == kBegin) {
            if (open) throw std::logic_error(fmt::format("runtime header {}: section inside a section", file));
            std::string_view rest = trim(line.substr(kBegin.size()));
            RuntimeSection section;
            section.file = file;
            size_t space = rest.find(' ');
            section.name = std::string(rest.substr(0, space));
            if (space != std::string_view::npos) {
                std::string_view needs = trim(rest.substr(space));
                if (needs.substr(0, 6) != "needs=")
                    throw std::logic_error(fmt::format("runtime header {}: bad section line", file));
                needs.remove_prefix(6);
                while (!needs.empty()) {
                    size_t comma = needs.find(',');
                    std::string need(trim(needs.substr(0, comma)));
                    if (need.find(':') == std::string::npos) need = file + ":" + need;
                    section.needs.push_back(need);
                    needs = comma == std::string_view::npos ? std::string_view() : needs.substr(comma + 1);
                }
            }
            out.push_back(std::move(section));
            open = &out.back();
        } else if (trim(line) == kEnd) {
            if (!open) throw std::logic_error(fmt::format("runtime header {}: tlc:end outside a section", file));
            splitIncludes(*open);
            open = nullptr;
        } else if (open) {
            open->text.append(line).append("\n");
        }
    }
    if (open) throw std::logic_error(fmt::format("runtime header {}: unterminated section", file));
}

std::string guardName(const RuntimeSection& s) {
    std::string g = "TLC_RUNTIME_";
    for (char c : s.file + "_" + s.name) g += std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_';
    return g;
}

} // namespace

const std::vector<std::pair<std::string, std::string>>& runtimeFiles() {
    static const std::vector<std::pair<std::string, std::string>> files = {
#include "RuntimeHeaders.inc"
    };
    return files;
}

const std::vector<RuntimeSection>& runtimeSections() {
    static const std::vector<RuntimeSection> sections = [] {
        std::vector<RuntimeSection> out;
        for (const auto& [name, text] : runtimeFiles()) parseSections(name, text, out);
        return out;
    }();
    return sections;
}

const RuntimeSection* findRuntimeSection(std::string_view file, std::string_view name) {
    for (const auto& s : runtimeSections())
        if (s.file == file && s.name == name) return &s;
    return nullptr;
}

const RuntimeSection* findBackendSection(const std::vector<std::string>& prefixes, std::string_view name) {
    const RuntimeSection* found = nullptr;
    for (const auto& s : runtimeSections()) {
        if (s.name != name) continue;
        std::string_view file = s.file;
        bool ours = std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
            return file == p + ".h" || (startsWith(file, p + "_") && file.substr(file.size() - 2) == ".h");
        });
        if (!ours) continue;
        if (found)
            throw std::logic_error(fmt::format("runtime section {} is in {} and {}", name, found->file, s.file));
        found = &s;
    }
    return found;
}

// ---- the spelling table (tl_gpu_spelling.h) ------------------------------------------------------

namespace {

bool identifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The arguments of the call whose '(' is at text[open], split at the commas outside brackets and
// trimmed; `end` is set past its ')'. Quoted text is skipped whole.
std::vector<std::string> callArguments(std::string_view text, size_t open, size_t& end) {
    std::vector<std::string> args;
    int depth = 0;
    size_t start = open + 1;
    for (size_t i = open; i < text.size(); ++i) {
        char c = text[i];
        if (c == '"' || c == '\'') {
            for (++i; i < text.size() && text[i] != c; ++i)
                if (text[i] == '\\') ++i;
        } else if (c == '(' || c == '[' || c == '{') {
            ++depth;
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) {
                std::string_view last = trim(text.substr(start, i - start));
                if (!last.empty() || !args.empty()) args.emplace_back(last);
                end = i + 1;
                return args;
            }
        } else if (c == ',' && depth == 1) {
            args.emplace_back(trim(text.substr(start, i - start)));
            start = i + 1;
        }
    }
    throw std::logic_error(fmt::format("spelling: unbalanced call `{}`", text.substr(open)));
}

// `text` with each identifier (a run of letters, digits and '_') replaced by what `replace`
// returns for it; `replace(word, next)` may also take the text after the word, moving `next`
// (where the rest of the text resumes, first just past the word).
template <typename Replace>
std::string mapWords(std::string_view text, Replace replace) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        if (!identifierChar(text[i])) {
            out += text[i++];
            continue;
        }
        size_t next = i;
        while (next < text.size() && identifierChar(text[next])) ++next;
        out += replace(text.substr(i, next - i), next);
        i = next;
    }
    return out;
}

// `text` with every identifier that is one of `params` replaced by the matching argument.
std::string substitute(std::string_view text, const std::vector<std::string>& params,
                       const std::vector<std::string>& args) {
    return mapWords(text, [&](std::string_view word, size_t&) {
        auto p = std::find(params.begin(), params.end(), word);
        return p == params.end() ? std::string(word) : args[size_t(p - params.begin())];
    });
}

struct SpellingRow {
    std::string name;                    // TL_SHFL_XOR
    std::vector<std::string> params;     // value, lane, width
    std::vector<std::string> spellings;  // one per column
};

struct SpellingTable {
    std::vector<std::string> columns;  // TL_SPELL's parameters: cuda, hip
    std::vector<SpellingRow> rows;
};

// The `#define`s of tl_gpu_spelling.h: TL_SPELL's names the columns, every other is a row.
const SpellingTable& spellingTable() {
    static const SpellingTable table = [] {
        constexpr std::string_view kFile = "tl_gpu_spelling.h";
        SpellingTable t;
        const std::string* text = nullptr;
        for (const auto& [name, content] : runtimeFiles())
            if (name == kFile) text = &content;
        if (!text) throw std::logic_error("no runtime header tl_gpu_spelling.h");
        std::string logical;  // a line with its continuation lines, joined by one space
        auto row = [&](std::string_view line) {
            if (!startsWith(line, "#define ")) return;
            line.remove_prefix(8);
            size_t open = line.find('(');
            if (open == std::string_view::npos) throw std::logic_error(fmt::format("{}: `{}` takes no arguments", kFile, line));
            SpellingRow r{std::string(line.substr(0, open)), {}, {}};
            size_t end = 0;
            r.params = callArguments(line, open, end);
            std::string_view rest = trim(line.substr(end));
            if (r.name == "TL_SPELL") {
                t.columns = r.params;
                return;
            }
            if (!startsWith(rest, "TL_SPELL(") || t.columns.empty())
                throw std::logic_error(fmt::format("{}: {} is not TL_SPELL(...) after TL_SPELL's definition", kFile, r.name));
            r.spellings = callArguments(rest, 8, end);
            if (r.spellings.size() != t.columns.size() || end != rest.size())
                throw std::logic_error(fmt::format("{}: {} has not one spelling a column", kFile, r.name));
            t.rows.push_back(std::move(r));
        };
        for (size_t pos = 0; pos < text->size();) {
            size_t eol = text->find('\n', pos);
            if (eol == std::string::npos) eol = text->size();
            std::string_view line = trim(std::string_view(*text).substr(pos, eol - pos));
            pos = eol + 1;
            bool continued = !line.empty() && line.back() == '\\';
            if (continued) line = trim(line.substr(0, line.size() - 1));
            logical += (logical.empty() || line.empty() ? "" : " ") + std::string(line);
            if (continued) continue;
            row(logical);
            logical.clear();
        }
        return t;
    }();
    return table;
}

const SpellingRow* findSpellingRow(std::string_view name) {
    for (const auto& r : spellingTable().rows)
        if (r.name == name) return &r;
    return nullptr;
}

} // namespace

std::string spell(std::string_view column, std::string_view row, const std::vector<std::string>& args) {
    const SpellingTable& t = spellingTable();
    const SpellingRow* r = findSpellingRow(row);
    auto c = std::find(t.columns.begin(), t.columns.end(), column);
    if (!r || c == t.columns.end() || args.size() != r->params.size())
        throw std::logic_error(fmt::format("spelling: no row {} of {} argument(s) in column '{}'", row, args.size(), column));
    return substitute(r->spellings[size_t(c - t.columns.begin())], r->params, args);
}

std::string spellCalls(const std::string& text, std::string_view column) {
    return mapWords(text, [&](std::string_view word, size_t& next) {
        if (!findSpellingRow(word) || next >= text.size() || text[next] != '(') return std::string(word);
        if (column.empty()) throw std::logic_error(fmt::format("spelling: {} outside the GPU backends", word));
        const size_t open = next;
        std::vector<std::string> args = callArguments(text, open, next);  // next: past the ')'
        return spell(column, word, args);
    });
}

void RuntimeNeeds::add(std::string_view file, std::string_view section) {
    if (!findRuntimeSection(file, section))
        throw std::logic_error(fmt::format("no runtime section {}:{}", file, section));
    ids_.insert(fmt::format("{}:{}", file, section));
}

bool RuntimeNeeds::has(std::string_view file, std::string_view section) const {
    return ids_.count(fmt::format("{}:{}", file, section)) != 0;
}

std::vector<const RuntimeSection*> RuntimeNeeds::rendered(const RuntimeNeeds* already) const {
    std::set<std::string> done;
    std::vector<const RuntimeSection*> out;
    auto find = [](const std::string& id) {
        size_t colon = id.find(':');
        return findRuntimeSection(id.substr(0, colon), id.substr(colon + 1));
    };
    if (already) {
        // Mark what `already` renders, closure included, as done.
        std::function<void(const std::string&)> mark = [&](const std::string& id) {
            if (!done.insert(id).second) return;
            if (const RuntimeSection* s = find(id))
                for (const auto& n : s->needs) mark(n);
        };
        for (const auto& id : already->ids_) mark(id);
    }
    std::function<void(const RuntimeSection&)> visit = [&](const RuntimeSection& s) {
        if (!done.insert(s.id()).second) return;
        for (const auto& need : s.needs) {
            const RuntimeSection* dep = find(need);
            if (!dep) throw std::logic_error(fmt::format("runtime section {} needs unknown {}", s.id(), need));
            visit(*dep);
        }
        out.push_back(&s);
    };
    // A fixed order (the embedded files' order), whatever order the emitter asked in.
    for (const auto& s : runtimeSections())
        if (ids_.count(s.id())) visit(s);
    return out;
}

std::string RuntimeNeeds::render(const RuntimeNeeds* already) const {
    std::string out;
    for (const RuntimeSection* s : rendered(already)) {
        std::string guard = guardName(*s);
        out += fmt::format("// ---- tlc runtime: {}, {} ----\n#ifndef {}\n#define {}\n{}#endif\n", s->file, s->name,
                           guard, guard, spellCalls(s->text, spelling_));
    }
    return out;
}

std::vector<std::string> RuntimeNeeds::includes(const RuntimeNeeds* already) const {
    std::vector<std::string> out;
    for (const RuntimeSection* s : rendered(already))
        for (const auto& inc : s->includes)
            if (std::find(out.begin(), out.end(), inc) == out.end()) out.push_back(inc);
    return out;
}

namespace {

// An include line's condition and header: "#if C\n#include <h>\n#endif" is {C, "#include <h>"},
// a bare "#include <h>" is {"", it}; a group of several includes is not one (nullopt).
std::optional<std::pair<std::string, std::string>> conditionalInclude(const std::string& inc) {
    if (startsWith(inc, "#include")) return std::pair<std::string, std::string>{"", inc};
    size_t first = inc.find('\n'), second = inc.find('\n', first + 1);
    if (!startsWith(inc, "#if ") || first == std::string::npos || second == std::string::npos ||
        inc.substr(second + 1) != "#endif")
        return std::nullopt;
    return std::pair<std::string, std::string>{inc.substr(4, first - 4), inc.substr(first + 1, second - first - 1)};
}

// `<immintrin.h>` of "#include <immintrin.h>  // why": what two include lines compare by.
std::string_view includedName(std::string_view line) {
    size_t open = line.find_first_of("<\""), close = line.find_first_of(">\"", open + 1);
    return open == std::string_view::npos || close == std::string_view::npos ? line
                                                                             : line.substr(open, close - open + 1);
}

// A condition as an operand of `||`: bare unless it has an operator that binds as loosely
// (`?:`, `,`) or an `&&`, which reads better in parentheses.
std::string parenthesised(const std::string& condition) {
    bool bare = condition.find_first_of("?,") == std::string::npos && condition.find("&&") == std::string::npos;
    return bare ? condition : "(" + condition + ")";
}

// The operands of a condition that is an `||` of bare terms (`defined(A) || defined(B)`), or the
// condition itself: so that joined conditions name each term once.
std::vector<std::string> orTerms(const std::string& condition) {
    std::vector<std::string> terms;
    if (parenthesised(condition) != condition) return {condition};
    for (size_t pos = 0;;) {
        size_t bar = condition.find("||", pos);
        terms.emplace_back(trim(std::string_view(condition).substr(pos, bar - pos)));
        if (bar == std::string::npos) return terms;
        pos = bar + 2;
    }
}

} // namespace

std::string includeLines(const std::vector<std::string>& own, const std::vector<std::string>& runtime) {
    // One line per header: an unconditional include covers the conditional ones of the same
    // header, and conditional ones join their conditions (`#if A || B`), at the first's place.
    struct Entry {
        std::string text, header;            // header: only for a single include
        std::vector<std::string> conditions;  // empty: unconditional
    };
    std::vector<Entry> entries;
    for (const auto* list : {&own, &runtime})
        for (const auto& inc : *list) {
            auto single = conditionalInclude(inc);
            auto same = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) {
                return single ? !e.header.empty() && includedName(e.header) == includedName(single->second)
                              : e.text == inc;
            });
            if (same == entries.end()) {
                entries.push_back(single ? Entry{inc, single->second, {}} : Entry{inc, "", {}});
                if (single && !single->first.empty()) entries.back().conditions = orTerms(single->first);
            } else if (single && !same->conditions.empty()) {
                if (single->first.empty()) same->conditions.clear();
                else
                    for (auto& term : orTerms(single->first))
                        if (std::find(same->conditions.begin(), same->conditions.end(), term) == same->conditions.end())
                            same->conditions.push_back(term);
            }
        }
    std::string out;
    for (const auto& e : entries) {
        if (e.header.empty() || e.conditions.empty()) {
            out += (e.header.empty() ? e.text : e.header) + "\n";
            continue;
        }
        std::string condition;
        for (const auto& c : e.conditions)
            condition += (condition.empty() ? "" : " || ") + (e.conditions.size() > 1 ? parenthesised(c) : c);
        out += "#if " + condition + "\n" + e.header + "\n#endif\n";
    }
    return out;
}

const InstructionHelper* findInstructionHelper(std::string_view name) {
    // First match wins: longer prefixes before shorter ones that share their start.
    static const InstructionHelper helpers[] = {
        {"mma_", "mma", true, 0},
        {"mfma_f32_16x16x32_e", "mfma_fp8", true, 0},  // CDNA3 fp8: e4m3, e5m2 and the mixed pairs
        {"mfma_i32_16x16x16_i8", "mfma_i8_cdna2", true, 0},
        {"mfma_i32_16x16x32_i8", "mfma_i8_cdna3", true, 0},
        {"mfma_", "mfma", true, 0},
        {"ldmatrix", "ldmatrix", true, 0},
        {"cp_async_wait_group", "async_copy", false, 1},
        {"cp_async", "async_copy", false, 0},
        {"mbarrier_arrive_cluster", "cluster", false, 0},  // thread-block clusters (sm_90)
        {"cluster_", "cluster", false, 0},
        {"tma_load_2d_multicast", "cluster", false, 0},
        {"tma_load_3d_multicast", "cluster", false, 0},
        {"tma_load_4d_multicast", "cluster", false, 0},
        {"tma_load_5d_multicast", "cluster", false, 0},
        {"mbarrier_", "mbarrier", false, 0},
        {"fence_barrier_init", "mbarrier", false, 0},
        {"named_barrier_", "named_barrier", false, 0},
        {"tma_store_wait", "tma", false, 1},  // <groups>: tma_store_wait and tma_store_wait_read
        {"tma_store_commit", "tma", false, 0},
        {"tma_store_", "tma", false, 0, true},  // tma_store_2d .. tma_store_5d
        {"tma_", "tma", false, 0},
        {"fence_proxy_async", "tma", false, 0},
        {"wgmma_wait_group", "wgmma", false, 1},
        {"wgmma_fence_operand", "wgmma", true, 1},
        {"wgmma_m64nNk16_f32_f16_ss", "wgmma", true, 3},  // <N, TransA, TransB>
        {"wgmma_m64nNk16_f32_bf16_ss", "wgmma", true, 3},
        {"wgmma_m64nNk16_f32_f16_rs", "wgmma", true, 2},  // <N, TransB>
        {"wgmma_m64nNk16_f32_bf16_rs", "wgmma", true, 2},
        {"wgmma_m64nNk32_", "wgmma", true, 1},  // <N>
        {"wgmma_pack_operand", "wgmma", true, 1},  // <registers>
        {"wgmma_", "wgmma", false, 0},
        {"make_smem_desc", "wgmma", false, 0},
        {"setmaxnreg_", "setmaxnreg", false, 1},  // <registers>
        {"gemm_tile", "gemm", true, 5},  // cpu: <M, N, K, TransA, TransB>
    };
    for (const auto& h : helpers)
        if (name.rfind(h.prefix, 0) == 0) return &h;
    return nullptr;
}

} // namespace tlc::codegen
