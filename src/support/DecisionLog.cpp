#include "support/DecisionLog.h"

#include <algorithm>

namespace tlc {

void DecisionLog::add(Decision d) {
    bool seen = std::any_of(entries_.begin(), entries_.end(), [&](const Decision& e) {
        return e.subject == d.subject && e.value == d.value && e.loc == d.loc;
    });
    if (!seen) entries_.push_back(std::move(d));
}

void DecisionLog::append(const DecisionLog& other) {
    for (const auto& d : other.entries_) add(d);
}

} // namespace tlc
