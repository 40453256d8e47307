#include "emit/CText.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::codegen {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
    return out;
}

// Words of `text` as comment lines "<prefix>..." no longer than the line width.
std::vector<std::string> wrapComment(const std::string& first, const std::string& next, const std::string& text) {
    std::vector<std::string> lines;
    std::string current = first;
    bool empty = true;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t space = text.find(' ', pos);
        std::string word = text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
        pos = space == std::string::npos ? text.size() : space + 1;
        if (word.empty()) continue;
        if (!empty && current.size() + 1 + word.size() > size_t(kLineWidth)) {
            lines.push_back(current);
            current = next;
            empty = true;
        }
        current += (empty ? "" : " ") + word;
        empty = false;
    }
    lines.push_back(current);
    return lines;
}

std::string escapeCString(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '?': out += "\\?"; break;  // no trigraphs, whatever the compiler's mode
        default:
            if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
            else out += c;
        }
    }
    return out;
}

std::string commentText(std::string_view text) {
    std::string out;
    for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (!out.empty() && out.back() == '\\') out += '.';  // a trailing backslash would continue the comment
    return out;
}

std::vector<std::string> wrapStatement(const std::string& text, int indent) {
    // 100 columns, but at least 60 for the text: deep in a nest the indentation alone would
    // leave room for a token or two a line.
    constexpr int kMinText = 60;
    const int width = std::max(kLineWidth - indent, kMinText);
    if (int(text.size()) <= width || text.rfind("//", 0) == 0 || text.rfind("#", 0) == 0) return {text};
    // Where the line may break: before a binary operator or after a comma, outside string
    // literals, with the bracket depth there.
    // Operators with their rank: breaking before a looser one reads better.
    static const std::pair<const char*, int> ops[] = {
        {"? ", 1}, {": ", 1}, {"|| ", 2}, {"&& ", 3}, {"| ", 4}, {"^ ", 4}, {"& ", 4}, {"== ", 5}, {"!= ", 5},
        {"<= ", 5}, {">= ", 5}, {"<< ", 6}, {">> ", 6}, {"< ", 5}, {"> ", 5}, {"+ ", 7}, {"- ", 7},
        {"* ", 8}, {"/ ", 8}, {"% ", 8}};
    struct Break {
        size_t at;    // the line ends before this index
        size_t next;  // the continuation starts here
        int depth;
        int rank;     // 0 for a comma
        bool assignment = false;
    };
    std::vector<Break> breaks;
    int depth = 0;
    std::string open;  // the brackets open at i, innermost last
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') inString = false;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') break;  // a trailing comment stays whole
        // Template arguments (`f<64, false, true>(`: '<' right after a name) nest like brackets,
        // so that a call breaks between its arguments, not inside its template.
        bool opensTemplate = c == '<' && i > 0 && (std::isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_') &&
                             i + 1 < text.size() && text[i + 1] != ' ' && text[i + 1] != '<' && text[i + 1] != '=';
        bool closesTemplate = c == '>' && !open.empty() && open.back() == '<' && text[i - 1] != ' ';
        if (c == '"') inString = true;
        else if (c == '(' || c == '[' || c == '{' || opensTemplate) open += c, ++depth;
        else if (c == ')' || c == ']' || c == '}' || closesTemplate) {
            if (!open.empty()) open.pop_back();
            --depth;
        }
        else if (c == ',' && i + 1 < text.size() && text[i + 1] == ' ') breaks.push_back({i + 1, i + 2, depth, 0});
        else if (c == '=' && depth == 0 && i > 0 && i + 1 < text.size() && text[i + 1] == ' ' &&
                 std::string_view("=!<>").find(text[i - 1]) == std::string_view::npos &&
                 (i + 2 >= text.size() || text[i + 2] != '='))
            breaks.push_back({i + 1, i + 2, 0, 0, true});  // after an assignment: the value on the next line
        else if (c == ' ' && i > 0 && text[i - 1] != ',' && text[i - 1] != '(') {
            for (const auto& [op, rank] : ops)
                if (text.compare(i + 1, std::string_view(op).size(), op) == 0) {
                    breaks.push_back({i, i + 1, depth, rank});
                    break;
                }
        }
    }
    std::vector<std::string> lines;
    size_t start = 0;
    const std::string pad(8, ' ');
    while (start < text.size()) {
        std::string prefix = lines.empty() ? "" : pad;
        if (int(prefix.size() + text.size() - start) <= width) break;
        // The shallowest break that keeps this line within the width, rightmost among those;
        // if none fits, the first break after start.
        const Break* best = nullptr;
        for (const auto& b : breaks) {
            if (b.at <= start || int(prefix.size() + b.at - start) > width) continue;
            // After "x =" only when the whole value then fits on the next line.
            auto key = [&](const Break& x) {
                if (!x.assignment) return std::pair(x.depth, x.rank);
                bool fits = int(pad.size() + text.size() - x.next) <= width;
                return fits ? std::pair(-1, 0) : std::pair(1000, 0);
            };
            if (!best || key(b) < key(*best) || (key(b) == key(*best) && b.at > best->at)) best = &b;
        }
        if (!best)
            for (const auto& b : breaks)
                if (b.at > start) {
                    best = &b;
                    break;
                }
        if (!best) break;
        lines.push_back(prefix + text.substr(start, best->at - start));
        start = best->next;
    }
    lines.push_back((lines.empty() ? "" : pad) + text.substr(start));
    return lines;
}

} // namespace tlc::codegen
