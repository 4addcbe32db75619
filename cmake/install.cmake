# cmake/install.cmake: the shared library and what `cmake --install BUILD --prefix P` puts in P.
# Included from the top-level CMakeLists.txt after qllc_objects, qllc_core and qllc are defined.
#
#   P/bin/qllc
#   P/lib/libqllc.so.MAJOR (SONAME), libqllc.so.VERSION, libqllc.so   the shared library
#   P/lib/libqllc.a                                                    the static library (libqllc_core.a)
#   P/include/qllc.h, qllc_version.h, qllc_kernel.h                    public headers only
#   P/lib/pkgconfig/qllc.pc                                            pkg-config [--static] --libs qllc
#   P/lib/cmake/qllc/qllcConfig.cmake, qllcConfigVersion.cmake         find_package(qllc 0.3): qllc::qllc
#   P/lib/python3.X/site-packages/qllc/                                the Python package (cmake/python.cmake)
#   P/share/doc/qllc/                                                  README.md and docs/
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# ---- the shared library: the same objects as qllc_core, its dependencies private ------------------
# Only the functions declared in include/qllc.h are exported (a version script made from the header at
# configure time): the internal qllc_* symbols stay inside, so programs cannot come to depend on them.
file(STRINGS ${CMAKE_SOURCE_DIR}/include/qllc.h QLLC_API_LINES
     REGEX "^[A-Za-z_][A-Za-z0-9_ ]*[ *](qllc_[a-z0-9_]+)\\(")
set(QLLC_API_SYMBOLS "")
foreach(line IN LISTS QLLC_API_LINES)
  if(line MATCHES "^typedef")
    continue()
  endif()
  string(REGEX MATCH "(qllc_[a-z0-9_]+)\\(" m "${line}")
  string(REGEX REPLACE "\\($" "" sym "${m}")
  string(APPEND QLLC_API_SYMBOLS "    ${sym};\n")
endforeach()
set(QLLC_VERSION_SCRIPT ${CMAKE_BINARY_DIR}/qllc.map)
file(CONFIGURE OUTPUT ${QLLC_VERSION_SCRIPT} CONTENT
"/* generated from include/qllc.h by cmake/install.cmake */
QLLC_${PROJECT_VERSION_MAJOR} {
  global:
${QLLC_API_SYMBOLS}  local:
    *;
};
")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/qllc.h)

add_library(qllc_shared SHARED $<TARGET_OBJECTS:qllc_objects> ${QLLC_HOST_KERNEL_OBJS})
set_target_properties(qllc_shared PROPERTIES
  OUTPUT_NAME qllc
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  EXPORT_NAME qllc
  LINK_DEPENDS ${QLLC_VERSION_SCRIPT}
  INSTALL_RPATH_USE_LINK_PATH ON)
target_link_options(qllc_shared PRIVATE "LINKER:--version-script=${QLLC_VERSION_SCRIPT}" "LINKER:--no-undefined")
target_include_directories(qllc_shared INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${QLLC_PUBLIC_GEN_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
find_package(Threads REQUIRED)
target_link_libraries(qllc_shared PRIVATE LLVM ${PROTOBUF_C_LIB} ${YAML_LIB} ZLIB::ZLIB m Threads::Threads)
add_library(qllc::qllc ALIAS qllc_shared)

# ---- install rules ------------------------------------------------------------------------------
install(TARGETS qllc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS qllc_shared EXPORT qllcTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES $<TARGET_FILE:qllc_core> DESTINATION ${CMAKE_INSTALL_LIBDIR} RENAME libqllc.a)
install(FILES ${CMAKE_SOURCE_DIR}/include/qllc.h ${CMAKE_SOURCE_DIR}/include/qllc_kernel.h
              ${QLLC_PUBLIC_GEN_DIR}/qllc_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# pkg-config: relocatable (the prefix is found from the .pc file's own directory). The shared library
# needs nothing more; `pkg-config --static` adds what libqllc.a needs.
file(RELATIVE_PATH QLLC_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" QLLC_PC_UP "${QLLC_PC_UP}")
set(QLLC_PC_PREFIX "\${pcfiledir}/${QLLC_PC_UP}")
set(QLLC_PC_REQUIRES_PRIVATE "libprotobuf-c yaml-0.1 zlib")
set(QLLC_PC_LIBS_PRIVATE "-L${LLVM_LIBRARY_DIR} -lLLVM-${LLVM_VERSION_MAJOR} -lpthread -lm")
configure_file(${CMAKE_SOURCE_DIR}/cmake/qllc.pc.in ${CMAKE_BINARY_DIR}/qllc.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/qllc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package
set(QLLC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/qllc)
install(EXPORT qllcTargets NAMESPACE qllc:: DESTINATION ${QLLC_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/qllcConfig.cmake.in
  ${CMAKE_BINARY_DIR}/qllcConfig.cmake INSTALL_DESTINATION ${QLLC_CMAKE_DIR})
# 0.x: a minor version may change the API (docs/install.md), so 0.3 accepts 0.3.* only; from 1.0 on,
# any later minor version of the same major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(QLLC_COMPAT SameMinorVersion)
else()
  set(QLLC_COMPAT SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_BINARY_DIR}/qllcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${QLLC_COMPAT})
install(FILES ${CMAKE_BINARY_DIR}/qllcConfig.cmake ${CMAKE_BINARY_DIR}/qllcConfigVersion.cmake
        DESTINATION ${QLLC_CMAKE_DIR})

# docs
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.svg")
