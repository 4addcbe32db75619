# examples/custom_kernel/custom_kernel.cmake: builds the example's user kernel file (kernels.c) to LLVM
# bitcode for each target, as a user would (docs/kernels.md): clang-19 -O2 -emit-llvm, with
# --target for the cross target. Included from examples/CMakeLists.txt; tests/ext/custom_kernel_test.sh
# runs the results. Outputs: ${CMAKE_BINARY_DIR}/examples/custom_kernel/kernels{,_q}_<arch>.bc
set(QLLC_CK_DIR ${CMAKE_BINARY_DIR}/examples/custom_kernel)
file(MAKE_DIRECTORY ${QLLC_CK_DIR})
set(QLLC_CK_BITCODE)
foreach(arch x86_64 aarch64)
  foreach(src kernels kernels_q) # kernels_q.c: the int8 variant of the custom op (a second --kernels file)
    set(bc ${QLLC_CK_DIR}/${src}_${arch}.bc)
    add_custom_command(OUTPUT ${bc}
      COMMAND ${CLANG19} --target=${arch}-unknown-linux-gnu -O2 -ffp-contract=off -std=c11 -Wall
              -I${CMAKE_SOURCE_DIR}/include -emit-llvm -c ${CMAKE_CURRENT_LIST_DIR}/${src}.c -o ${bc}
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/${src}.c ${CMAKE_SOURCE_DIR}/include/qllc_kernel.h
      COMMENT "clang-19 ${arch}: examples/custom_kernel/${src}.c -> bitcode")
    list(APPEND QLLC_CK_BITCODE ${bc})
  endforeach()
endforeach()
add_custom_target(custom_kernel_bitcode ALL DEPENDS ${QLLC_CK_BITCODE})
