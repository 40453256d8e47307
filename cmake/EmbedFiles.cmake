# Turns the files matching GLOB in INPUT_DIR into OUTPUT, a C++ fragment of {file name, raw
# string literal} pairs for a source file to include (the runtime headers the emitter pastes,
# the hardware profiles targets are read from). Run at build time by tlc_embed_files() in the
# top-level CMakeLists.txt:
#   cmake -DINPUT_DIR=<dir> -DGLOB=<*.ext> -DTAG=<delimiter> -DOUTPUT=<file.inc> -P EmbedFiles.cmake
file(GLOB inputs RELATIVE ${INPUT_DIR} ${INPUT_DIR}/${GLOB})
list(SORT inputs)
set(text "// Generated from ${INPUT_DIR}/${GLOB} by cmake/EmbedFiles.cmake; do not edit.\n")
foreach(name IN LISTS inputs)
  file(READ ${INPUT_DIR}/${name} content)
  string(FIND "${content}" ")${TAG}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${name} contains the raw-string delimiter )${TAG}\"")
  endif()
  string(APPEND text "{\"${name}\", R\"${TAG}(${content})${TAG}\"},\n")
endforeach()
# Write only when changed, so that an unrelated rebuild does not recompile the includer.
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${text}")
