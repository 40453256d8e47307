// The problem shape the recommender models a kernel at: a value for each of its symbolic sizes
// (docs/recommend.md, "The shape"). The candidates are compiled with the sizes specialised to
// it, so it must not overflow what the kernel derives from them (N * OH * OW of a convolution
// is 2^36 at 4096 each, more than i32 holds): the defaults keep every tensor parameter within
// kShapeElementBudget elements.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace tlc {

namespace ast { struct Kernel; }

// The value of a size that --shape does not name, unless a tensor over it would exceed the budget.
constexpr int64_t kDefaultShapeExtent = 4096;
// The most elements the default shape gives a tensor parameter (2^30: byte offsets of an f16
// tensor, products of a tensor's sizes, fit in 32-bit arithmetic).
constexpr int64_t kShapeElementBudget = int64_t(1) << 30;

// Every symbolic size of `checked` (a kernel sema accepted) with its value: `given`'s (--shape)
// where it names one; otherwise kDefaultShapeExtent (its square for a size only vectors name), halved, largest first, while some tensor
// parameter whose dimensions name it would exceed kShapeElementBudget elements. Dimensions are
// evaluated at the shape (`heads / groups`, `ceildiv(seqlen, chunk_size)`); one the model cannot
// evaluate counts as the product of the sizes it names.
std::map<std::string, int64_t> modelShape(const ast::Kernel& checked, const std::map<std::string, int64_t>& given);

// `--shape M=8192,N=8192`: names with positive 32-bit values. False with `error` set otherwise.
bool parseShapeOption(std::string_view text, std::map<std::string, int64_t>& out, std::string& error);

} // namespace tlc
