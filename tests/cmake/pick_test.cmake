# dispatch-pick: tlc dispatch's rule without a GPU (check_pick.cpp). Run as
#   cmake -DTLC=... -DSOURCE_DIR=... -DWORK=... -DCXX=... -DCUDA_INCLUDE=... -DCUDART=... -P pick_test.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "failed (${rc}): ${command}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(target sm80 sm89 sm90)
  run("${TLC}" "${SOURCE_DIR}/samples/vector_add.tl" --target=${target} --namespace pick::${target}
      -o "${WORK}/v.${target}.cu" --emit-manifest)
endforeach()
run("${TLC}" dispatch "${WORK}/v.sm80.json" "${WORK}/v.sm90.json" --namespace two --c-prefix p2_ -o "${WORK}/two.cpp")
run("${TLC}" dispatch "${WORK}/v.sm80.json" "${WORK}/v.sm89.json" "${WORK}/v.sm90.json" --namespace three
    --c-prefix p3_ -o "${WORK}/three.cpp")
get_filename_component(cudart_dir "${CUDART}" DIRECTORY)
run("${CXX}" -std=c++17 -Wall -Wextra -Werror -I "${WORK}" -isystem "${CUDA_INCLUDE}"
    "${WORK}/two.cpp" "${WORK}/three.cpp" "${CMAKE_CURRENT_LIST_DIR}/check_pick.cpp" "${CUDART}"
    "-Wl,-rpath,${cudart_dir}" -o "${WORK}/check_pick")
run("${WORK}/check_pick")
