# bench/bench.cmake: the qllc_bench executable (bench/bench.c, public API only). Optional: bench/run.sh
# builds bench.c by hand against libqllc_core.a when this file is not included by the top CMakeLists.
add_executable(qllc_bench ${CMAKE_CURRENT_LIST_DIR}/bench.c)
target_link_libraries(qllc_bench PRIVATE qllc_core)
