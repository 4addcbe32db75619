/* tests/python/layout.c: prints the size and every field's offset of the structs python/qllc/_capi.py
 * mirrors, one "struct.field offset" line each, for python_test.sh to compare with ctypes' view. */
#include <stddef.h>
#include <stdio.h>

#include "qllc.h"

#define F(s, f) printf(#s "." #f " %zu\n", offsetof(s, f))
#define S(s) printf(#s " %zu\n", sizeof(s))

int main(void) {
  S(qllc_diag); F(qllc_diag, status); F(qllc_diag, message); F(qllc_diag, node); F(qllc_diag, file);
  S(qllc_tensor); F(qllc_tensor, name); F(qllc_tensor, elem); F(qllc_tensor, rank); F(qllc_tensor, dims);
  F(qllc_tensor, scale); F(qllc_tensor, zero_point); F(qllc_tensor, data);
  S(qllc_options); F(qllc_options, precision); F(qllc_options, weight_precision); F(qllc_options, schema);
  F(qllc_options, calibration); F(qllc_options, per_tensor); F(qllc_options, profile_path);
  F(qllc_options, keep_float); F(qllc_options, n_keep_float); F(qllc_options, strict);
  F(qllc_options, quantized_io); F(qllc_options, target); F(qllc_options, cpu); F(qllc_options, features);
  F(qllc_options, reloc_pic); F(qllc_options, weights_file); F(qllc_options, kernel_files);
  F(qllc_options, n_kernel_files); F(qllc_options, dump_after); F(qllc_options, dump_stream);
  F(qllc_options, min_sqnr_db); F(qllc_options, search_dataset); F(qllc_options, n_search_dataset);
  F(qllc_options, precision_map); F(qllc_options, precision_map_out); F(qllc_options, no_tune);
  F(qllc_options, tune_cache); F(qllc_options, note); F(qllc_options, note_ctx);
  F(qllc_options, progress); F(qllc_options, progress_ctx);
  S(qllc_profile_summary); F(qllc_profile_summary, samples); F(qllc_profile_summary, values);
  S(qllc_compare_row); F(qllc_compare_row, value); F(qllc_compare_row, node); F(qllc_compare_row, op);
  F(qllc_compare_row, types); F(qllc_compare_row, elem); F(qllc_compare_row, scale);
  F(qllc_compare_row, zero_point); F(qllc_compare_row, is_output); F(qllc_compare_row, count);
  F(qllc_compare_row, sqnr_db); F(qllc_compare_row, max_abs_err); F(qllc_compare_row, saturated);
  F(qllc_compare_row, signal_rms); F(qllc_compare_row, grid_sqnr_db);
  S(qllc_compare_result); F(qllc_compare_result, samples); F(qllc_compare_result, drawn);
  F(qllc_compare_result, n_rows); F(qllc_compare_result, rows);
  return 0;
}
