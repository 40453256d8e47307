// The dispatch rule of tlc dispatch, without a GPU: the pure pick functions of two dispatchers
// over samples/vector_add.tl (two: sm80 + sm90; three: sm80 + sm89 + sm90), launch by index, and
// the launcher's answer on this machine. The targets' launchers are stand-ins defined here that
// return a code naming their target, so that the test sees which one a dispatcher called.
#include "three.h"
#include "two.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

cudaError_t called(int target) { return static_cast<cudaError_t>(1000 + target); }

} // namespace

namespace pick {
namespace sm80 { cudaError_t vector_add(const float*, const float*, float*, int, cudaStream_t) { return called(80); } }
namespace sm89 { cudaError_t vector_add(const float*, const float*, float*, int, cudaStream_t) { return called(89); } }
namespace sm90 { cudaError_t vector_add(const float*, const float*, float*, int, cudaStream_t) { return called(90); } }
} // namespace pick

int failures = 0;

void expect(bool ok, const char* what, int major, int minor, const char* got) {
    if (ok) return;
    std::printf("FAIL %s at %d.%d: %s\n", what, major, minor, got);
    ++failures;
}

int main() {
    // compute capability, then the target each dispatcher must pick (by name; "-" for none).
    struct Row { int major, minor; const char *two, *three; };
    const Row rows[] = {
        {8, 0, "sm80", "sm80"},  {8, 6, "sm80", "sm80"},  {8, 9, "sm80", "sm89"}, {9, 0, "sm90", "sm90"},
        {10, 0, "sm80", "sm89"}, {12, 0, "sm80", "sm89"}, {7, 5, "-", "-"},        {9, 1, "sm80", "sm89"},
    };
    for (const Row& r : rows) {
        const int t2 = two::vector_add_pick_target(r.major, r.minor);
        const int t3 = three::vector_add_pick_target(r.major, r.minor);
        const char* n2 = t2 < 0 ? "-" : two::vector_add_target_name(t2);
        const char* n3 = t3 < 0 ? "-" : three::vector_add_target_name(t3);
        expect(n2 && std::string_view(n2) == r.two, "sm80+sm90", r.major, r.minor, n2 ? n2 : "(null)");
        expect(n3 && std::string_view(n3) == r.three, "sm80+sm89+sm90", r.major, r.minor, n3 ? n3 : "(null)");
        std::printf("%d.%d: sm80+sm90 -> %s, sm80+sm89+sm90 -> %s\n", r.major, r.minor, n2, n3);
    }
    // Launch by index calls the target of that index, and refuses others.
    static_assert(three::vector_add_target_count == 3);
    for (int t = 0; t < three::vector_add_target_count; ++t) {
        const int arch = std::atoi(three::vector_add_target_name(t) + 2);
        expect(three::vector_add_target(t, nullptr, nullptr, nullptr, 0) == called(arch), "launch by index", t, 0, "");
    }
    expect(three::vector_add_target(3, nullptr, nullptr, nullptr, 0) == cudaErrorInvalidValue, "target 3", 3, 0, "");
    expect(three::vector_add_target_name(3) == nullptr, "name of target 3", 3, 0, "");

    // The launcher: the error of asking for the device without one (no exit, no abort), else the
    // target the rule picks for it.
    int device = 0, major = 0, minor = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess) status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (status == cudaSuccess) status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    const cudaError_t got = three::vector_add(nullptr, nullptr, nullptr, 0);
    const int pick = three::vector_add_pick_target(major, minor);
    const cudaError_t want = status != cudaSuccess ? status
                             : pick < 0           ? cudaErrorNoKernelImageForDevice
                                                  : called(std::atoi(three::vector_add_target_name(pick) + 2));
    std::printf("this machine: %s; the launcher returned %d (%s)\n", status == cudaSuccess ? "a device" : "no device",
                int(got), int(got) >= 1000 ? "a target's launcher" : cudaGetErrorName(got));
    expect(got == want && got != cudaSuccess, "the launcher", major, minor, "");
    // C callers get the same answer as an int.
    expect(p3_vector_add(nullptr, nullptr, nullptr, 0, nullptr) == int(want), "the C launcher", major, minor, "");
    return failures ? 1 : 0;
}
