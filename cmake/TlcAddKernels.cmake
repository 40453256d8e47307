# tlc_add_kernels(): a library of tlc kernels for several targets (docs/integration.md, "CMake").
#
#   tlc_add_kernels(<name> SOURCES a.tl ... TARGETS sm80 sm90 cpu ...
#                   [DEFINES NAME=VALUE ...] [NAMESPACE ns] [C_PREFIX p] [TLC_FLAGS ...])
#
# Per source and target, tlc writes <stem>.<target>.cu|.cpp, .h and .json into <build>/<name>.tlc/
# (launchers in ns::<target>, extern "C" twins p<target>_NAME); each CUDA target's kernels are
# compiled for its architecture; with CUDA targets, `tlc dispatch` adds <stem>.cpp/.h, one
# launcher ns::NAME per kernel that runs the target built for the current device.
#
# Provided by the tlc package (tlcConfig.cmake) and by tlc's own CMakeLists.txt (add_subdirectory):
# both define the executable target tlc::tlc and the global property TLC_PROFILE_DIR (the
# built-in targets' profiles, which say each target's backend, architecture and compiler flags).
include_guard(GLOBAL)

# A profile's field (string(JSON) path `...`), or its base's when the profile names a base and
# leaves the field out; "" when neither has it.
function(_tlc_profile_field out file)
  file(READ "${file}" json)
  string(JSON value ERROR_VARIABLE missing GET "${json}" ${ARGN})
  if(missing)
    set(value "")
    string(JSON base ERROR_VARIABLE no_base GET "${json}" base)
    if(NOT no_base)
      get_property(dir GLOBAL PROPERTY TLC_PROFILE_DIR)
      _tlc_profile_field(value "${dir}/${base}.json" ${ARGN})
    endif()
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

function(tlc_add_kernels name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAMESPACE;C_PREFIX" "SOURCES;TARGETS;DEFINES;TLC_FLAGS")
  set(where "tlc_add_kernels(${name})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments ${arg_UNPARSED_ARGUMENTS} (the arguments are SOURCES, "
                        "TARGETS, DEFINES, NAMESPACE, C_PREFIX, TLC_FLAGS)")
  endif()
  if(NOT arg_SOURCES OR NOT arg_TARGETS)
    message(FATAL_ERROR "${where}: give SOURCES (.tl files) and TARGETS")
  endif()
  if(NOT TARGET tlc::tlc)
    message(FATAL_ERROR "${where}: no tlc::tlc executable; use find_package(tlc) or add_subdirectory(tlc)")
  endif()
  if(NOT DEFINED arg_NAMESPACE)
    set(arg_NAMESPACE tl_kernels)
  endif()
  if(NOT DEFINED arg_C_PREFIX)
    set(arg_C_PREFIX tl_)
  endif()
  get_property(profile_dir GLOBAL PROPERTY TLC_PROFILE_DIR)
  file(GLOB builtin RELATIVE "${profile_dir}" "${profile_dir}/*.json")
  list(TRANSFORM builtin REPLACE "\\.json$" "")
  list(JOIN builtin ", " valid)

  # Each target: a built-in name or a profile (.json; tlc --target-profile, docs/recommend.md).
  set(cuda_targets "")
  set(cpu_targets "")
  foreach(t IN LISTS arg_TARGETS)
    if(t MATCHES "\\.json$")
      get_filename_component(profile "${t}" ABSOLUTE)
      if(NOT EXISTS "${profile}")
        message(FATAL_ERROR "${where}: no profile '${t}'")
      endif()
      _tlc_profile_field(tname "${profile}" name)
      set(option "--target-profile=${profile}")
      set(user_profile "${profile}")
    elseif(t IN_LIST builtin)
      set(profile "${profile_dir}/${t}.json")
      set(tname "${t}")
      set(option "--target=${t}")
      set(user_profile "")
    else()
      message(FATAL_ERROR "${where}: unknown target '${t}'; the targets are ${valid}, or a profile's .json file")
    endif()
    _tlc_profile_field(backend "${profile}" backend)
    string(MAKE_C_IDENTIFIER "${tname}" id)
    if(id IN_LIST cuda_targets OR id IN_LIST cpu_targets)
      message(FATAL_ERROR "${where}: target '${tname}' is given twice")
    endif()
    set(option_${id} "${option}")
    set(user_profile_${id} "${user_profile}")  # tlc's depfile lists it too, after the first run
    if(backend STREQUAL "cuda")
      list(APPEND cuda_targets ${id})
      # The architecture CMake builds for: sm_90a -> 90a; sm_80 -> 80 (sm_80 code and compute_80
      # PTX, which the dispatcher counts on for later devices).
      _tlc_profile_field(arch "${profile}" arch)
      string(REGEX REPLACE "^sm_" "" arch_${id} "${arch}")
    elseif(backend STREQUAL "cpu")
      list(APPEND cpu_targets ${id})
      _tlc_profile_field(flags_${id} "${profile}" cpu_isa compile_flags)
    else()
      message(FATAL_ERROR "${where}: target '${tname}' is a ${backend} target; tlc_add_kernels builds CUDA and "
                          "cpu targets only (for HIP, run tlc and hipcc yourself: docs/integration.md)")
    endif()
  endforeach()

  if(cuda_targets)
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST languages)
      message(FATAL_ERROR "${where}: CUDA targets need the CUDA language: enable_language(CUDA) or "
                          "project(... LANGUAGES CXX CUDA) first")
    endif()
    if(NOT TARGET CUDA::cudart)
      find_package(CUDAToolkit REQUIRED)
    endif()
  endif()
  if(cpu_targets AND NOT TARGET OpenMP::OpenMP_CXX)
    find_package(OpenMP REQUIRED COMPONENTS CXX)
  endif()

  set(gen "${CMAKE_CURRENT_BINARY_DIR}/${name}.tlc")
  file(MAKE_DIRECTORY "${gen}")
  set(defines "")
  foreach(d IN LISTS arg_DEFINES)
    list(APPEND defines -D "${d}")
  endforeach()
  if(arg_NAMESPACE STREQUAL "")
    set(ns_prefix "")
  else()
    set(ns_prefix "${arg_NAMESPACE}::")
  endif()

  set(outputs "")
  set(dispatchers "")
  set(stems "")
  foreach(src IN LISTS arg_SOURCES)
    get_filename_component(src "${src}" ABSOLUTE)
    get_filename_component(stem "${src}" NAME_WE)
    if(stem IN_LIST stems)
      message(FATAL_ERROR "${where}: two sources are called ${stem}.tl; their outputs would collide")
    endif()
    list(APPEND stems ${stem})
    set(manifests "")
    foreach(id IN LISTS cuda_targets cpu_targets)
      if(id IN_LIST cuda_targets)
        set(out "${gen}/${stem}.${id}.cu")
      else()
        set(out "${gen}/${stem}.${id}.cpp")
      endif()
      add_custom_command(
        OUTPUT "${out}" "${gen}/${stem}.${id}.h" "${gen}/${stem}.${id}.json"
        COMMAND tlc::tlc "${src}" ${option_${id}} ${defines} --namespace "${ns_prefix}${id}"
                --c-prefix "${arg_C_PREFIX}${id}_" ${arg_TLC_FLAGS} -o "${out}" --emit-manifest -MD
        DEPENDS "${src}" tlc::tlc ${user_profile_${id}}
        DEPFILE "${gen}/${stem}.${id}.d"
        COMMENT "tlc ${stem}.tl for ${id}"
        VERBATIM)
      list(APPEND sources_${id} "${out}")
      list(APPEND outputs "${out}")
      if(id IN_LIST cuda_targets)
        list(APPEND manifests "${gen}/${stem}.${id}.json")
      endif()
    endforeach()
    if(cuda_targets)
      list(JOIN cuda_targets ", " names)
      add_custom_command(
        OUTPUT "${gen}/${stem}.cpp" "${gen}/${stem}.h"
        COMMAND tlc::tlc dispatch ${manifests} --namespace "${arg_NAMESPACE}" --c-prefix "${arg_C_PREFIX}"
                -o "${gen}/${stem}.cpp"
        DEPENDS ${manifests} tlc::tlc
        COMMENT "tlc dispatch ${stem}.tl over ${names}"
        VERBATIM)
      list(APPEND dispatchers "${gen}/${stem}.cpp")
      list(APPEND outputs "${gen}/${stem}.cpp")
    endif()
  endforeach()

  # One target drives every tlc command, so that no two targets run one of them at once (Make).
  add_custom_target(${name}_tlc DEPENDS ${outputs})
  add_library(${name} STATIC ${dispatchers})
  add_dependencies(${name} ${name}_tlc)
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${gen}>")
  target_compile_features(${name} PUBLIC cxx_std_17)
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE CXX)
  foreach(id IN LISTS cuda_targets)
    add_library(${name}_${id} OBJECT ${sources_${id}})
    add_dependencies(${name}_${id} ${name}_tlc)
    set_target_properties(${name}_${id} PROPERTIES CUDA_ARCHITECTURES "${arch_${id}}" CUDA_STANDARD 17
                          CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
    target_sources(${name} PRIVATE $<TARGET_OBJECTS:${name}_${id}>)
  endforeach()
  foreach(id IN LISTS cpu_targets)
    add_library(${name}_${id} OBJECT ${sources_${id}})
    add_dependencies(${name}_${id} ${name}_tlc)
    set_target_properties(${name}_${id} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
                          POSITION_INDEPENDENT_CODE ON)
    separate_arguments(flags UNIX_COMMAND "${flags_${id}}")
    target_compile_options(${name}_${id} PRIVATE ${flags})
    target_link_libraries(${name}_${id} PRIVATE OpenMP::OpenMP_CXX)
    target_sources(${name} PRIVATE $<TARGET_OBJECTS:${name}_${id}>)
  endforeach()
  if(cuda_targets)
    target_link_libraries(${name} PUBLIC CUDA::cudart)
  endif()
  if(cpu_targets)
    target_link_libraries(${name} PUBLIC OpenMP::OpenMP_CXX)
  endif()
endfunction()
