# Every tests/<module>/<name>_test.c is a cmocka executable linked with qllc_core (and the natively
# compiled kernels); every tests/<module>/<name>_test.sh is run by bash with these variables set:
#   QLLC (the tool), QLLC_SOURCE_DIR, QLLC_BUILD_DIR.
file(GLOB QLLC_C_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/*/*_test.c)
foreach(src ${QLLC_C_TESTS})
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(dir ${src} DIRECTORY)
  get_filename_component(mod ${dir} NAME)
  set(exe ${mod}_${name})
  add_executable(${exe} ${src})
  target_link_libraries(${exe} PRIVATE qllc_core qllc_libjit_native ${CMOCKA_LIB} m)
  target_compile_definitions(${exe} PRIVATE QLLC_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                             QLLC_BUILD_DIR="${CMAKE_BINARY_DIR}")
  add_test(NAME ${mod}/${name} COMMAND ${exe} WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
endforeach()

file(GLOB QLLC_SH_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/*/*_test.sh)
foreach(src ${QLLC_SH_TESTS})
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(dir ${src} DIRECTORY)
  get_filename_component(mod ${dir} NAME)
  add_test(NAME ${mod}/${name} COMMAND bash ${src} WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  set_tests_properties(${mod}/${name} PROPERTIES ENVIRONMENT
    "QLLC=$<TARGET_FILE:qllc>;QLLC_SOURCE_DIR=${CMAKE_SOURCE_DIR};QLLC_BUILD_DIR=${CMAKE_BINARY_DIR}"
    SKIP_RETURN_CODE 77)
endforeach()

# Kernel tests again, against the kernels with the fast-path thresholds forced to 1 (bitcode.cmake), so
# every shape they try, however small, also exercises the packed dot-product paths bit for bit.
foreach(src tests/libjit/q_layers_test.c tests/quant/kernels_test.c)
  get_filename_component(name ${src} NAME_WE)
  get_filename_component(dir ${CMAKE_SOURCE_DIR}/${src} DIRECTORY)
  get_filename_component(mod ${dir} NAME)
  set(exe ${mod}_${name}_forced)
  add_executable(${exe} ${CMAKE_SOURCE_DIR}/${src})
  target_link_libraries(${exe} PRIVATE qllc_core qllc_libjit_native_forced ${CMOCKA_LIB} m)
  target_compile_definitions(${exe} PRIVATE QLLC_SOURCE_DIR="${CMAKE_SOURCE_DIR}" QLLC_BUILD_DIR="${CMAKE_BINARY_DIR}")
  add_test(NAME ${mod}/${name}_forced COMMAND ${exe} WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
endforeach()

# libFuzzer targets (QLLC_FUZZ=ON) and the fuzz regression tests (always)
include(${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz.cmake)
