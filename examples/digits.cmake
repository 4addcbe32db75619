# examples/digits.cmake: the digits_demo example (JIT through the public API). Included from
# examples/CMakeLists.txt. The bundle driver examples/digits_bundle_main.c is compiled by scripts/demo
# against a generated bundle, not here.
add_executable(digits_demo ${CMAKE_CURRENT_LIST_DIR}/digits_demo.c)
target_link_libraries(digits_demo PRIVATE qllc_core)
target_compile_definitions(digits_demo PRIVATE QLLC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
