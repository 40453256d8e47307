// Diagnostics: every message has an id from Diagnostics.def, a severity and a source range.
// They are collected while compiling and printed at the end, as text (file:line:col, the
// source line and a caret under the range) or as JSON.
#pragma once

#include "support/SourceFile.h"

#include <fmt/format.h>

#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tlc {

enum class Severity { Note, Warning, Error };

enum class DiagId {
#define DIAG(id, severity, format) id,
#include "support/Diagnostics.def"
#undef DIAG
    Count
};

struct DiagInfo {
    const char* name;
    Severity severity;
    const char* format;
};
const DiagInfo& diagInfo(DiagId id);
const char* severityName(Severity s);
// A warning's command-line name, as clang spells them: warn_tile_covers_part is
// "tile-covers-part" (-Wno-tile-covers-part silences it); "" for notes and errors.
std::string warningName(DiagId id);
// The warning a flag names: "-Wno-error=tile-covers-part" -> "tile-covers-part" (the flag
// without -W, no- and error=).
std::string_view warningFlagName(std::string_view flag);

struct Diagnostic {
    DiagId id;
    Severity severity;
    SourceRange range;
    std::string message;
    std::vector<Diagnostic> notes;  // related places ("declared here"), printed after it
    bool commandLine = false;       // about the command line (-D), not a place in the file:
                                    // printed as tlc's own ("tlc: error: ..."), no location
};

class DiagnosticEngine {
public:
    explicit DiagnosticEngine(const SourceFile& file) : file_(file) {}

    // Report a diagnostic from the table; arguments fill its format.
    template <typename... Args>
    Diagnostic& report(DiagId id, SourceRange range, const Args&... args) {
        return add(id, range, fmt::format(fmt::runtime(diagInfo(id).format), args...));
    }
    // A diagnostic about the command line (a -D): no location in the file (Diagnostic::commandLine).
    template <typename... Args> Diagnostic& reportCommandLine(DiagId id, const Args&... args) {
        Diagnostic& d = add(id, SourceRange{}, fmt::format(fmt::runtime(diagInfo(id).format), args...));
        d.commandLine = true;
        return d;
    }
    // Attach a note ("declared here") to the most recent diagnostic. The message is free text.
    // A note without a range on a command-line diagnostic is about the command line too.
    void note(SourceRange range, std::string message);

    bool hasErrors() const { return errorCount_ > 0; }
    unsigned errorCount() const { return errorCount_; }
    unsigned warningCount() const { return warningCount_; }
    // Stop collecting after this many errors (0 = unlimited); a last error says so.
    void setErrorLimit(unsigned limit) { errorLimit_ = limit; }
    bool errorLimitReached() const { return errorLimit_ != 0 && errorCount_ >= errorLimit_; }
    void setWarningsAsErrors(bool on) { werror_ = on; }
    // clang's warning flags, applied in order: -w (no warnings), -W<name> / -Wno-<name> (one on
    // or off), -Werror=<name> / -Wno-error=<name> (one an error, or a warning under -Werror;
    // -Werror itself is setWarningsAsErrors). False for a flag of another form or an unknown name.
    bool applyWarningFlag(std::string_view flag);
    // While on, a diagnostic that repeats one reported while on (same id, range and message)
    // is dropped with its notes. Lowering turns it on: it may see one statement several times
    // (the software pipeline's prologue, steady state and epilogue are copies of the body).
    void setMergeRepeats(bool on) {
        mergeRepeats_ = on;
        if (!on) seen_.clear();
    }

    const SourceFile& file() const { return file_; }
    const std::vector<Diagnostic>& diagnostics() const { return diags_; }

    void printText(std::ostream& os, bool color = false) const;
    void printJson(std::ostream& os) const;
    std::string toJson() const;

private:
    Diagnostic& add(DiagId id, SourceRange range, std::string message);

    const SourceFile& file_;
    std::vector<Diagnostic> diags_;
    Diagnostic discarded_;  // returned once the error limit is reached
    unsigned errorCount_ = 0;
    unsigned warningCount_ = 0;
    unsigned errorLimit_ = 0;
    bool werror_ = false;
    bool noWarnings_ = false;                      // -w
    std::unordered_set<int> disabled_;             // -Wno-<name>
    std::unordered_map<int, bool> asError_;        // -Werror=<name> (true), -Wno-error=<name> (false)
    bool limitReported_ = false;
    bool lastDropped_ = false;  // the last report repeated an earlier one: its notes go too
    bool mergeRepeats_ = false;
    std::unordered_set<std::string> seen_;
};

} // namespace tlc
