#include "support/Utf8.h"

namespace tlc {

size_t firstInvalidUtf8(std::string_view s) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
    for (size_t i = 0; i < s.size();) {
        unsigned char c = byte(i);
        size_t len = c < 0x80                   ? 1
                     : (c >= 0xC2 && c <= 0xDF) ? 2
                     : (c & 0xF0) == 0xE0       ? 3
                     : (c >= 0xF0 && c <= 0xF4) ? 4
                                                : 0;
        if (len == 0 || i + len > s.size()) return i;
        for (size_t k = 1; k < len; ++k)
            if ((byte(i + k) & 0xC0) != 0x80) return i;
        unsigned char c1 = len > 1 ? byte(i + 1) : 0;
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) ||
            (c == 0xF4 && c1 >= 0x90))
            return i;
        i += len;
    }
    return std::string_view::npos;
}

std::string clipUtf8(std::string_view s, size_t maxBytes) {
    if (s.size() <= maxBytes) return std::string(s);
    size_t cut = maxBytes;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
    return std::string(s.substr(0, cut)) + "...";
}

} // namespace tlc
