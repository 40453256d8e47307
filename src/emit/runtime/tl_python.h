// tl_python.h -- what the Python bindings of --emit=python share (docs/integration.md, "Python
// and PyTorch"): DLPack's structs, and an Array that takes one DLPack tensor from a Python object
// and checks it against a launcher parameter, raising TypeError / ValueError that name the
// parameter and say what was expected and what came.
//
// Sections as in tl_common.h. Needs pybind11 (and Python's headers); nothing here depends on the
// backend: the binding passes the device it expects and the stream value for __dlpack__.
#pragma once

// tlc:section dlpack
#include <cstdint>
// The C ABI of DLPack's "dltensor" capsules (dlpack.h 0.x; every producer still exports them
// when __dlpack__ is called without max_version), written out so that no dlpack.h is needed.
namespace tl::dlpack {
enum : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLROCM = 10 };
enum : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6, kDLFloat8_e4m3fn = 10,
                 kDLFloat8_e5m2 = 12 };
struct DLDevice {
    int32_t device_type;
    int32_t device_id;
};
struct DLDataType {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
};
struct DLTensor {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;  // in elements; null: row-major and contiguous
    uint64_t byte_offset;
};
struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self);
};
} // namespace tl::dlpack
// tlc:end

// tlc:section arrays needs=dlpack
#include <pybind11/pybind11.h>

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>
// Hidden, as pybind11's own namespace is: the types hold pybind11 objects.
namespace tl {
namespace python __attribute__((visibility("hidden"))) {
namespace py = pybind11;
using namespace tl::dlpack;

// An element type as DLPack spells it, with the .tl name for messages.
struct DType {
    uint8_t code, bits;
    const char* name;
};

// What one call of a bound function expects of all its arrays.
struct Call {
    const char* function;  // for messages: "gemm: A: ..."
    DLDevice device;       // device_id < 0: any (the CPU)
    py::object stream;     // passed to __dlpack__(stream=...); None: called without it (CPU)
};

inline std::string device_text(DLDevice d) {
    switch (d.device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda:" + std::to_string(d.device_id);
    case kDLCUDAHost: return "cuda_host (pinned)";
    case kDLROCM: return "rocm:" + std::to_string(d.device_id);
    }
    return "DLPack device type " + std::to_string(d.device_type);
}

inline std::string list_text(const std::vector<int64_t>& values) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
}

// One array argument: its DLPack tensor, taken for the duration of the call. The capsule is
// renamed "used_dltensor" (the protocol's sign that it was consumed) and the tensor's deleter
// runs when the Array goes, whether the call succeeded or raised.
class Array {
public:
    Array(const Call& call, py::handle object, const char* name, DType dtype, int rank)
        : call_(call), name_(name), element_bytes_(dtype.bits < 8 ? 1 : dtype.bits / 8) {
        if (!py::hasattr(object, "__dlpack__") || !py::hasattr(object, "__dlpack_device__"))
            throw py::type_error(prefix() + "expected an array with __dlpack__ and __dlpack_device__ (NumPy >= 1.22, "
                                 "PyTorch, CuPy, JAX), got " + std::string(py::str(py::type::handle_of(object).attr("__name__"))));
        // The device first: an array of the wrong device is not asked to export anything.
        py::tuple where = object.attr("__dlpack_device__")();
        DLDevice device{where[0].cast<int32_t>(), where[1].cast<int32_t>()};
        check_device(device);
        py::object capsule = call.stream.is_none() ? object.attr("__dlpack__")()
                                                   : object.attr("__dlpack__")(py::arg("stream") = call.stream);
        if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
            throw py::type_error(prefix() + "__dlpack__() did not return a DLPack \"dltensor\" capsule");
        managed_ = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
        if (!managed_ || PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) {
            managed_ = nullptr;
            throw py::error_already_set();
        }
        const DLTensor& t = tensor();
        check_device(t.device);  // what __dlpack_device__ said, unless the producer disagrees with itself
        if (t.dtype.code != dtype.code || t.dtype.bits != dtype.bits || t.dtype.lanes != 1)
            throw py::type_error(prefix() + "expected " + dtype.name + " elements, got DLPack type code " +
                                 std::to_string(t.dtype.code) + " of " + std::to_string(t.dtype.bits) + " bits" +
                                 (t.dtype.lanes != 1 ? " x " + std::to_string(t.dtype.lanes) + " lanes" : "") +
                                 " (" + type_text(t.dtype) + ")");
        if (t.ndim != rank)
            throw py::value_error(prefix() + "expected a " + std::to_string(rank) + "-d array, got " +
                                  std::to_string(t.ndim) + "-d, shape " + list_text(shape()));
    }
    Array(const Array&) = delete;
    Array& operator=(const Array&) = delete;
    ~Array() {
        if (managed_ && managed_->deleter) managed_->deleter(managed_);
    }

    const DLTensor& tensor() const { return managed_->dl_tensor; }
    void* data() const { return static_cast<char*>(tensor().data) + tensor().byte_offset; }
    std::vector<int64_t> shape() const { return {tensor().shape, tensor().shape + tensor().ndim}; }
    // Strides in elements; a null DLPack stride array means row-major and contiguous.
    std::vector<int64_t> strides() const {
        const DLTensor& t = tensor();
        if (t.strides) return {t.strides, t.strides + t.ndim};
        std::vector<int64_t> s(size_t(t.ndim), 1);
        for (int d = t.ndim - 2; d >= 0; --d) s[size_t(d)] = s[size_t(d) + 1] * t.shape[d + 1];
        return s;
    }
    int64_t elements() const {  // over the DLPack array itself (g++ 12 misreads a temporary vector here)
        int64_t n = 1;
        for (int d = 0; d < tensor().ndim; ++d) n *= tensor().shape[d];
        return n;
    }

    // A size parameter read from this array's shape[dim] (or strides[dim]): an int of the launcher.
    int size_from_shape(int dim, const char* size) const { return size_value(shape()[size_t(dim)], size, "shape", dim); }
    int size_from_strides(int dim, const char* size) const {
        return size_value(strides()[size_t(dim)], size, "strides", dim);
    }

    // `text` is the parameter's shape as declared ("[M, K]"); `sizes` says where each size came from.
    void check_shape(std::initializer_list<int64_t> expected, const char* text, const char* sizes) const {
        if (shape() != std::vector<int64_t>(expected))
            throw py::value_error(prefix() + "expected shape " + text + " = " + list_text(expected) + " (" + sizes +
                                  "), got " + list_text(shape()));
    }
    // Dimensions of extent 1 may have any stride (frameworks differ there); an empty array has none.
    void check_strides(std::initializer_list<int64_t> expected, const char* text) const {
        if (elements() == 0) return;
        std::vector<int64_t> want(expected), got = strides(), dims = shape();
        for (size_t d = 0; d < want.size(); ++d)
            if (dims[d] != 1 && got[d] != want[d])
                throw py::value_error(prefix() + "expected strides " + text + " = " + list_text(want) +
                                      " (in elements), got " + list_text(got) +
                                      "; pass a contiguous copy (numpy.ascontiguousarray, torch.Tensor.contiguous())");
    }
    void check_alignment(int bytes) const {
        auto address = reinterpret_cast<uintptr_t>(data());
        if (address % uintptr_t(bytes) != 0)
            throw py::value_error(prefix() + "the data must be " + std::to_string(bytes) +
                                  "-byte aligned (what the launcher checks), got an address " +
                                  std::to_string(address % uintptr_t(bytes)) + " bytes past a multiple; pass a fresh copy");
    }
    // Tensors must not overlap (the kernel's pointers are restrict): a written array shares no byte
    // with another array.
    void check_no_overlap(const Array& other) const {
        auto [lo, hi] = byte_range();
        auto [other_lo, other_hi] = other.byte_range();
        if (lo < hi && other_lo < other_hi && lo < other_hi && other_lo < hi)
            throw py::value_error(prefix() + "overlaps " + other.name_ + " in memory; the kernel writes " + name_ +
                                  " and needs arrays that do not overlap");
    }

private:
    const Call& call_;
    const char* name_;
    int element_bytes_;
    DLManagedTensor* managed_ = nullptr;

    std::string prefix() const { return std::string(call_.function) + ": " + name_ + ": "; }
    void check_device(DLDevice d) const {
        if (d.device_type != call_.device.device_type || (call_.device.device_id >= 0 && d.device_id != call_.device.device_id))
            throw py::value_error(prefix() + "expected an array on " + device_text(call_.device) +
                                  (call_.device.device_type == kDLCPU ? "" : " (the current device)") + ", got one on " +
                                  device_text(d));
    }
    static std::string type_text(DLDataType t) {
        switch (t.code) {
        case kDLInt: return "int" + std::to_string(t.bits);
        case kDLUInt: return "uint" + std::to_string(t.bits);
        case kDLFloat: return "float" + std::to_string(t.bits);
        case kDLBfloat: return "bfloat" + std::to_string(t.bits);
        case kDLBool: return "bool";
        }
        return "another type";
    }
    int size_value(int64_t value, const char* size, const char* field, int dim) const {
        if (value < 0 || value > INT_MAX)
            throw py::value_error(prefix() + "the size " + size + " = " + name_ + "." + field + "[" +
                                  std::to_string(dim) + "] = " + std::to_string(value) +
                                  " does not fit the launcher's int (0 to 2^31 - 1)");
        return int(value);
    }
    // [first byte, one past the last byte) that the array's elements cover.
    std::pair<uintptr_t, uintptr_t> byte_range() const {
        if (elements() == 0) return {0, 0};
        auto base = reinterpret_cast<uintptr_t>(data());
        int64_t low = 0, high = 0;
        std::vector<int64_t> dims = shape(), s = strides();
        for (size_t d = 0; d < dims.size(); ++d) (s[d] < 0 ? low : high) += (dims[d] - 1) * s[d];
        return {base + uintptr_t(low * element_bytes_), base + uintptr_t((high + 1) * element_bytes_)};
    }
};

// A size given as an argument (not read from an array's shape): an int of the launcher.
inline void check_size_argument(const char* function, const char* size, int64_t value) {
    if (value < 0 || value > INT_MAX)
        throw py::value_error(std::string(function) + ": the size " + size + " must be in 0 to 2^31 - 1, got " +
                              std::to_string(value));
}

// A Python int or None as the stream argument of a bound function (0 and None: the default stream).
inline uintptr_t stream_value(const char* function, py::handle stream) {
    if (stream.is_none()) return 0;
    if (!py::isinstance<py::int_>(stream))
        throw py::type_error(std::string(function) + ": stream: expected an int (a stream handle such as "
                             "torch.cuda.current_stream().cuda_stream) or None, got " +
                             std::string(py::str(py::type::handle_of(stream).attr("__name__"))));
    py::int_ value = py::reinterpret_borrow<py::int_>(stream);
    if (value < py::int_(0))
        throw py::value_error(std::string(function) + ": stream: expected a stream handle (>= 0), got " +
                              std::string(py::str(value)));
    return value.cast<uintptr_t>();
}
} // namespace python
} // namespace tl
// tlc:end
