# Turns the hardware profiles in INPUT_DIR (src/target/profiles/*.json) into OUTPUT, a C++
# fragment of {file name, raw string literal} pairs that src/target/Target.cpp includes. Run at
# build time by the custom command in the top-level CMakeLists.txt:
#   cmake -DINPUT_DIR=<dir> -DOUTPUT=<file.inc> -P EmbedProfiles.cmake
file(GLOB profiles RELATIVE ${INPUT_DIR} ${INPUT_DIR}/*.json)
list(SORT profiles)
set(text "// Generated from src/target/profiles/*.json by src/target/EmbedProfiles.cmake; do not edit.\n")
foreach(name IN LISTS profiles)
  file(READ ${INPUT_DIR}/${name} content)
  string(FIND "${content}" ")tlc_profile\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${name} contains the raw-string delimiter )tlc_profile\"")
  endif()
  string(APPEND text "{\"${name}\", R\"tlc_profile(${content})tlc_profile\"},\n")
endforeach()
# Write only when changed, so that an unrelated rebuild does not recompile Target.cpp.
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${text}")
