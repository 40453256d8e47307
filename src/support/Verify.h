// Clang-style `-verify`: the diagnostics a file expects are written next to the lines that
// cause them, and the run checks that exactly those were reported.
//
//   copy(A, B);  // expected-error {{shapes of 'A' and 'B' differ}}
//   // expected-error@+1 {{unknown name}}
//   // expected-note@-3 {{declared here}}
//   // expected-warning@12 {{...}}           (absolute line)
//
// The text between {{ and }} must be a substring of the message. Several expectations may
// share a line.
#pragma once

#include "support/Diagnostics.h"

#include <iosfwd>

namespace tlc {

// Returns true when every expectation matched a diagnostic and every diagnostic (including
// notes) matched an expectation; otherwise explains the mismatches on `out`.
bool verifyDiagnostics(const DiagnosticEngine& diags, std::ostream& out);

} // namespace tlc
