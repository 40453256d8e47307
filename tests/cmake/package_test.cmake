# cmake-package: installs tlc's build into WORK/prefix, then configures examples/cmake against it
# with CMake's default generator (what a new user gets), builds it, runs its program, and checks
# that editing a .tl file reruns tlc; a project built with CMAKE_UNITY_BUILD builds; a project naming
# an unknown or a HIP target must fail to configure with a message that says what is valid. Run as
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... [-DNVCC=...] -P package_test.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: no '${pattern}' in:\n${text}")
  endif()
endfunction()

unset(ENV{CMAKE_GENERATOR})
file(REMOVE_RECURSE "${WORK}")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK}/prefix")

set(cuda "")
if(NVCC)
  set(cuda -DCMAKE_CUDA_COMPILER=${NVCC} -DTLC_EXAMPLE_REQUIRE_CUDA=ON)
endif()
# The example's sources are copied, so that the test can edit one.
file(COPY "${SOURCE_DIR}/examples/cmake/" DESTINATION "${WORK}/example")
run("${CMAKE_COMMAND}" -S "${WORK}/example" -B "${WORK}/build" "-DCMAKE_PREFIX_PATH=${WORK}/prefix" ${cuda})
run("${CMAKE_COMMAND}" --build "${WORK}/build" -j2)
run("${WORK}/build/tlc_example")
message("${out}")
expect("${out}" "cpu: gemm [0-9x]+ and softmax [0-9x]+: ok" "the example's cpu part")
if(NVCC)
  # Here without a GPU the dispatcher must have returned an error; with one, given the right answer.
  expect("${out}" "gpu: (no device; the dispatcher returned cuda[A-Za-z]+|gemm and softmax: ok)" "the GPU part")
endif()

# A changed .tl file reruns tlc (the custom command depends on it) and nothing else of tlc's.
file(APPEND "${WORK}/example/softmax.tl" "\n// edited\n")
run("${CMAKE_COMMAND}" --build "${WORK}/build" -j2)
expect("${out}" "tlc softmax.tl for cpu" "rebuild after editing softmax.tl")
if(out MATCHES "tlc gemm.tl")
  message(FATAL_ERROR "editing softmax.tl reran tlc on gemm.tl:\n${out}")
endif()

# A project built with CMAKE_UNITY_BUILD: two cpu-avx512 outputs batched into one translation unit
# (their `#pragma GCC target` region follows all includes and ends with each file, so the second
# file's system headers keep g++'s options). Built, not run: it needs no AVX-512.
file(WRITE "${WORK}/unity/CMakeLists.txt"
     "cmake_minimum_required(VERSION 3.20)\nproject(unity LANGUAGES CXX)\nfind_package(tlc REQUIRED)\n"
     "tlc_add_kernels(k SOURCES ${SOURCE_DIR}/samples/rmsnorm.tl ${SOURCE_DIR}/samples/softmax.tl\n"
     "                TARGETS cpu-avx512)\n")
run("${CMAKE_COMMAND}" -S "${WORK}/unity" -B "${WORK}/unity/build" "-DCMAKE_PREFIX_PATH=${WORK}/prefix"
    -DCMAKE_UNITY_BUILD=ON)
run("${CMAKE_COMMAND}" --build "${WORK}/unity/build" -j2)

# Bad TARGETS: configure fails and names the valid targets / says why.
foreach(case "sm75;unknown target 'sm75'; the targets are cpu, cpu-amx, cpu-avx2, cpu-avx512, gfx90a, gfx942, sm80, sm86, sm89, sm90, or a profile's .json file"
             "gfx90a;target 'gfx90a' is a hip target; tlc_add_kernels builds CUDA and cpu targets only")
  list(GET case 0 target)
  list(GET case 1 message)
  file(WRITE "${WORK}/bad/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.20)\nproject(bad LANGUAGES CXX)\nfind_package(tlc REQUIRED)\n"
       "tlc_add_kernels(k SOURCES ${SOURCE_DIR}/samples/vector_add.tl TARGETS cpu ${target})\n")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${WORK}/bad" -B "${WORK}/bad/build-${target}"
                          "-DCMAKE_PREFIX_PATH=${WORK}/prefix"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(FATAL_ERROR "TARGETS cpu ${target} configured without an error")
  endif()
  string(REGEX REPLACE "[ \n]+" " " flat "${out}")
  string(FIND "${flat}" "tlc_add_kernels(k): ${message}" at)
  if(at LESS 0)
    message(FATAL_ERROR "TARGETS cpu ${target}: expected 'tlc_add_kernels(k): ${message}' in:\n${out}")
  endif()
endforeach()
