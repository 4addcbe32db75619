# cmake/ops_doc.cmake: docs/ops.md is generated from the op table (tools/opsdoc/ops_doc.c).
#   cmake --build BUILD --target update_ops_doc     rewrites docs/ops.md in the source tree
# tests/cli/ops_doc_test.sh fails when the committed docs/ops.md differs from what qllc_ops_doc prints.
add_executable(qllc_ops_doc ${CMAKE_SOURCE_DIR}/tools/opsdoc/ops_doc.c)
target_include_directories(qllc_ops_doc PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tools/opsdoc)
add_custom_target(update_ops_doc
  COMMAND qllc_ops_doc > ${CMAKE_SOURCE_DIR}/docs/ops.md
  DEPENDS qllc_ops_doc
  COMMENT "writing docs/ops.md from src/ir/ops.def, src/lower/kernels.def, tools/opsdoc/ops_notes.def"
  VERBATIM)
