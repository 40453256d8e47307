# Turns the runtime headers in INPUT_DIR (src/emit/runtime/*.h) into OUTPUT, a C++ fragment of
# {file name, raw string literal} pairs that src/emit/Runtime.cpp includes. Run at build time by
# the custom command in the top-level CMakeLists.txt:
#   cmake -DINPUT_DIR=<dir> -DOUTPUT=<file.inc> -P EmbedRuntime.cmake
file(GLOB headers RELATIVE ${INPUT_DIR} ${INPUT_DIR}/*.h)
list(SORT headers)
set(text "// Generated from src/emit/runtime/*.h by src/emit/EmbedRuntime.cmake; do not edit.\n")
foreach(name IN LISTS headers)
  file(READ ${INPUT_DIR}/${name} content)
  string(FIND "${content}" ")tlc_runtime\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${name} contains the raw-string delimiter )tlc_runtime\"")
  endif()
  string(APPEND text "{\"${name}\", R\"tlc_runtime(${content})tlc_runtime\"},\n")
endforeach()
# Write only when changed, so that an unrelated rebuild does not recompile Runtime.cpp.
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${text}")
