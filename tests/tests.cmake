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
