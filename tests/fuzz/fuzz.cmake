# tests/fuzz: libFuzzer targets and their regression tests (docs/testing.md, "Fuzzing").
#
# Every build (no option needed): fuzz_regress_<target>, the target's entry point with a plain main()
# (regress_main.c), and the ctest test fuzz/regress_<target> that feeds it every input in
# tests/fuzz/regress/<target>/ (crashes found by fuzzing, fixed since) and the repository's own seeds.
#
# -DQLLC_FUZZ=ON (clang only; scripts/fuzz configures build-fuzz with clang-19): also fuzz_<target>, the
# libFuzzer binaries (-fsanitize=fuzzer,address,undefined), with qllc_core instrumented for coverage,
# ASan and UBSan (-fsanitize=fuzzer-no-link,address,undefined).
option(QLLC_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
set(QLLC_FUZZ_TARGETS fuzz_onnx fuzz_tensor fuzz_profile fuzz_compile fuzz_precmap fuzz_kernels)
set(QLLC_FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)

if(QLLC_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "QLLC_FUZZ=ON needs clang (e.g. -DCMAKE_C_COMPILER=clang-19); scripts/fuzz does this")
  endif()
  set(QLLC_FUZZ_SAN -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  # the library's objects (qllc_objects when the top level builds them apart from qllc_core)
  if(TARGET qllc_objects)
    target_compile_options(qllc_objects PRIVATE -fsanitize=fuzzer-no-link ${QLLC_FUZZ_SAN})
  else()
    target_compile_options(qllc_core PRIVATE -fsanitize=fuzzer-no-link ${QLLC_FUZZ_SAN})
  endif()
  target_link_options(qllc_core INTERFACE -fsanitize=address,undefined)
endif()

foreach(t ${QLLC_FUZZ_TARGETS})
  add_executable(${t}_regress ${QLLC_FUZZ_DIR}/${t}.c ${QLLC_FUZZ_DIR}/regress_main.c)
  target_link_libraries(${t}_regress PRIVATE qllc_core m)
  file(MAKE_DIRECTORY ${QLLC_FUZZ_DIR}/regress/${t})
  if(QLLC_FUZZ)
    add_executable(${t} ${QLLC_FUZZ_DIR}/${t}.c)
    target_compile_options(${t} PRIVATE -fsanitize=fuzzer ${QLLC_FUZZ_SAN})
    target_link_options(${t} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${t} PRIVATE qllc_core m)
  endif()
endforeach()

# The regression inputs, and as seeds the small models, tensors and profiles the repository has (each
# must load or be refused cleanly, never crash); scripts/fuzz starts from the same seeds plus a few
# hundred of /usr/share/libonnx-testdata's files.
set(R ${QLLC_FUZZ_DIR}/regress)
set(S ${CMAKE_SOURCE_DIR}/tests)
add_test(NAME fuzz/regress_onnx COMMAND fuzz_onnx_regress ${R}/fuzz_onnx ${S}/ir/data ${S}/cli/data
         ${S}/qdq/data ${S}/llvmgen/data WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
add_test(NAME fuzz/regress_compile COMMAND fuzz_compile_regress ${R}/fuzz_compile ${S}/ir/data ${S}/cli/data
         ${S}/qdq/data WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
add_test(NAME fuzz/regress_tensor COMMAND fuzz_tensor_regress ${R}/fuzz_tensor ${S}/ir/data ${S}/cli/data ${S}/cli/data/shapes
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
add_test(NAME fuzz/regress_profile COMMAND fuzz_profile_regress ${R}/fuzz_profile ${QLLC_FUZZ_DIR}/seeds/fuzz_profile
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
add_test(NAME fuzz/regress_precmap COMMAND fuzz_precmap_regress ${R}/fuzz_precmap ${QLLC_FUZZ_DIR}/seeds/fuzz_precmap
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
# the kernel seeds are the examples' bitcode, built (target custom_kernel_bitcode)
add_test(NAME fuzz/regress_kernels COMMAND fuzz_kernels_regress ${R}/fuzz_kernels ${CMAKE_BINARY_DIR}/examples/custom_kernel
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(fuzz/regress_kernels PROPERTIES ENVIRONMENT QLLC_FUZZ_KERNELS_ALL=1)
