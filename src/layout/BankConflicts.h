// Bank conflicts of shared-memory accesses under a layout, and the cheapest layout for a
// buffer whose accesses are known (infer-layouts' free choice; the epilogue's staging tile).
//
// Model (the target profile's `shared_mem_banks` x `shared_mem_bank_bytes`: 32 banks of 4-byte
// words on NVIDIA's GPUs and CDNA's LDS alike). A warp's access of `vec` elements per lane is
// served in phases of banks x word bytes (128: 32 lanes of up to 4 bytes, 16 of 8, 8 of 16); a
// phase takes as many wavefronts as the most distinct words any one bank must deliver (lanes
// reading the same word share it). Every wavefront past one per phase is a conflict.
//
// Cost of a layout = phase bytes x (conflict wavefronts of all the accesses, every warp, one
// pass) + bytes of padding: one extra wavefront weighs what moving a phase's bytes does.
// Candidates in order: row-major, 32-, 64-, 128-byte xor swizzles (where the rows hold whole
// patterns), rows padded by 16 bytes (where rows are whole 16-byte chunks); the cheapest wins,
// the earlier on a tie, so a buffer no access distinguishes stays row-major.
#pragma once

#include "layout/Layout.h"

#include <functional>
#include <string>
#include <vector>

namespace tlc::layout {

struct BankModel {
    int64_t banks = 32, wordBytes = 4;
    int64_t phaseBytes() const { return banks * wordBytes; }
};

struct SharedAccess {
    std::string what;      // the op, for the reason text
    int64_t lanes = 32;    // of one warp
    int64_t warps = 1;     // warps that repeat the pattern (on other elements)
    int64_t steps = 1;     // accesses each lane makes
    int64_t vec = 1;       // consecutive elements of the last dimension per lane and step
    // The logical index lane `lane` touches at `step`; empty when that lane does not take part.
    std::function<std::vector<int64_t>(int64_t lane, int64_t step)> element;
};

// Conflict wavefronts of one access, all warps, under `layout` (elements of elemBytes bytes).
int64_t conflictWavefronts(const SharedAccess& access, const Layout& layout, int64_t elemBytes,
                           const BankModel& banks = {});

struct LayoutChoice {
    Layout layout;
    int64_t cost = 0;
    std::string reason;  // the candidates' costs, for --emit=layouts
};
LayoutChoice cheapestLayout(const std::vector<int64_t>& shape, int64_t elemBytes, const std::vector<SharedAccess>& accesses,
                            const BankModel& banks = {});

// The access pattern of a fragment's slots (vec at a time) on a tile of its shape.
SharedAccess fragmentAccess(const Fragment& f, int64_t warpSize, int64_t vec, std::string what);

} // namespace tlc::layout
