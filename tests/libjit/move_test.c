/* tests/libjit/move_test.c: transpose, copy2d, copy, pad and pad_map for every element type (f32, i8, u8, i16,
 * i32), against references that compute each output element's source index independently (by
 * unravelling the output index), so a wrong stride or offset shows up as a wrong value: the input
 * holds distinct values (mod the type's range) and the output is pre-filled with a sentinel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels_f32.h"

/* One test body per type, instantiated by a macro (the same as the kernels' instantiation). */
#define MOVE_TESTS(T, t, PADV)                                                                           \
  static void check_transpose_##t(int64_t rank, const int64_t *in_dims, const int64_t *perm) {             \
    int64_t n = 1, in_strides[8], out_dims[8], strides[8];                                                \
    for (int64_t d = rank - 1, s = 1; d >= 0; d--) in_strides[d] = s, s *= in_dims[d];                    \
    for (int64_t d = 0; d < rank; d++) out_dims[d] = in_dims[perm[d]], strides[d] = in_strides[perm[d]], n *= out_dims[d]; \
    T *x = calloc(n, sizeof(T)), *y = calloc(n, sizeof(T));                                                  \
    for (int64_t i = 0; i < n; i++) x[i] = (T)(i * 7 + 1);                                               \
    for (int64_t i = 0; i < n; i++) y[i] = (T)0x5a; /* sentinel */                                       \
    qllc_k_transpose_##t##_##t(y, x, rank, out_dims, strides);                                            \
    for (int64_t i = 0; i < n; i++) {                                                                    \
      int64_t rem = i, src = 0;                                                                          \
      for (int64_t d = rank - 1; d >= 0; d--) src += (rem % out_dims[d]) * in_strides[perm[d]], rem /= out_dims[d]; \
      if (y[i] != x[src]) fail_msg(#t " transpose rank %ld element %ld", (long)rank, (long)i);           \
    }                                                                                                    \
    free(x), free(y);                                                                                    \
  }                                                                                                      \
  static void check_pad_##t(int64_t rank, const int64_t *in_dims, const int64_t *begin, const int64_t *end) { \
    int64_t nx = 1, ny = 1, out_dims[8];                                                                  \
    for (int64_t d = 0; d < rank; d++) out_dims[d] = in_dims[d] + begin[d] + end[d], nx *= in_dims[d], ny *= out_dims[d]; \
    T *x = calloc(nx, sizeof(T)), *y = calloc(ny, sizeof(T));                                              \
    for (int64_t i = 0; i < nx; i++) x[i] = (T)(i * 3 + 2);                                              \
    for (int64_t i = 0; i < ny; i++) y[i] = (T)0x5a; /* sentinel */                                      \
    qllc_k_pad_##t##_##t(y, x, rank, out_dims, in_dims, begin, PADV);                                     \
    for (int64_t i = 0; i < ny; i++) {                                                                   \
      int64_t rem = i, src = 0, inside = 1, xs = 1;                                                      \
      for (int64_t d = rank - 1; d >= 0; d--) {                                                          \
        const int64_t k = rem % out_dims[d] - begin[d];                                                  \
        rem /= out_dims[d];                                                                              \
        if (k < 0 || k >= in_dims[d]) inside = 0;                                                        \
        src += k * xs;                                                                                   \
        xs *= in_dims[d];                                                                                \
      }                                                                                                  \
      const T want = inside ? x[src] : (T)(PADV);                                                        \
      if (y[i] != want) fail_msg(#t " pad rank %ld element %ld", (long)rank, (long)i);                   \
    }                                                                                                    \
    free(x), free(y);                                                                                    \
  }                                                                                                      \
  /* pad_map (issue 15): axis d is padded by edge when d is odd, else by reflection; the maps hold x     \
   * offsets as the lowering makes them; each output element is checked against x at its unravelled     \
   * index mapped by the mode. */                                                                        \
  static void check_pad_map_##t(int64_t rank, const int64_t *in_dims, const int64_t *begin, const int64_t *end) { \
    int64_t nx = 1, ny = 1, nm = 0, out_dims[8], xs[8];                                                  \
    for (int64_t d = 0; d < rank; d++) out_dims[d] = in_dims[d] + begin[d] + end[d], nx *= in_dims[d], ny *= out_dims[d], nm += out_dims[d]; \
    for (int64_t d = rank - 1, st = 1; d >= 0; d--) xs[d] = st, st *= in_dims[d];                        \
    T *x = calloc(nx, sizeof(T)), *y = calloc(ny, sizeof(T));                                              \
    int64_t *map = calloc(nm, sizeof(int64_t)), *src_of = calloc(nm, sizeof(int64_t));                    \
    for (int64_t i = 0; i < nx; i++) x[i] = (T)(i * 3 + 2);                                              \
    for (int64_t d = 0, at = 0; d < rank; at += out_dims[d], d++)                                        \
      for (int64_t o = 0; o < out_dims[d]; o++) {                                                        \
        int64_t k = o - begin[d], D = in_dims[d];                                                        \
        k = d % 2 ? (k < 0 ? 0 : k >= D ? D - 1 : k) : (k < 0 ? -k : k >= D ? 2 * D - 2 - k : k);        \
        src_of[at + o] = k, map[at + o] = k * xs[d];                                                     \
      }                                                                                                  \
    qllc_k_pad_map_##t##_##t(y, x, rank, out_dims, map);                                                 \
    for (int64_t i = 0; i < ny; i++) {                                                                   \
      int64_t rem = i, src = 0, at = nm;                                                                 \
      for (int64_t d = rank - 1; d >= 0; d--) {                                                          \
        at -= out_dims[d];                                                                               \
        src += src_of[at + rem % out_dims[d]] * xs[d];                                                   \
        rem /= out_dims[d];                                                                              \
      }                                                                                                  \
      if (y[i] != x[src]) fail_msg(#t " pad_map rank %ld element %ld", (long)rank, (long)i);            \
    }                                                                                                    \
    free(x), free(y), free(map), free(src_of);                                                           \
  }                                                                                                      \
  static void test_move_##t(void **state) {                                                              \
    (void)state;                                                                                         \
    check_pad_map_##t(1, (const int64_t[]){5}, (const int64_t[]){4}, (const int64_t[]){2});             \
    check_pad_map_##t(3, (const int64_t[]){3, 4, 6}, (const int64_t[]){2, 3, 1}, (const int64_t[]){1, 5, 5}); \
    check_pad_map_##t(4, (const int64_t[]){1, 2, 5, 5}, (const int64_t[]){0, 0, 2, 2}, (const int64_t[]){0, 1, 2, 0}); \
    check_transpose_##t(1, (const int64_t[]){17}, (const int64_t[]){0});                                 \
    check_transpose_##t(2, (const int64_t[]){3, 17}, (const int64_t[]){1, 0});                           \
    check_transpose_##t(3, (const int64_t[]){3, 7, 17}, (const int64_t[]){2, 0, 1});                     \
    check_transpose_##t(4, (const int64_t[]){2, 3, 7, 5}, (const int64_t[]){0, 2, 3, 1}); /* NCHW->NHWC */ \
    check_transpose_##t(4, (const int64_t[]){2, 3, 7, 5}, (const int64_t[]){0, 1, 2, 3}); /* identity */ \
    check_transpose_##t(6, (const int64_t[]){2, 1, 3, 2, 1, 3}, (const int64_t[]){5, 3, 1, 0, 4, 2});    \
    check_pad_##t(1, (const int64_t[]){7}, (const int64_t[]){2}, (const int64_t[]){3});                  \
    check_pad_##t(2, (const int64_t[]){3, 17}, (const int64_t[]){0, 1}, (const int64_t[]){1, 0});         \
    check_pad_##t(4, (const int64_t[]){1, 3, 7, 7}, (const int64_t[]){0, 0, 1, 2}, (const int64_t[]){0, 0, 2, 1}); \
    check_pad_##t(3, (const int64_t[]){3, 7, 17}, (const int64_t[]){1, -2, 3}, (const int64_t[]){-1, 1, -4}); /* crop */ \
    check_pad_##t(2, (const int64_t[]){3, 3}, (const int64_t[]){0, 0}, (const int64_t[]){0, 0});          \
    /* copy2d: a 3x5 block from a 7-wide source at column 2 into a 9-wide destination at column 4 */      \
    T src[3 * 7], dst[3 * 9];                                                                            \
    for (int i = 0; i < 21; i++) src[i] = (T)(i + 1);                                                    \
    memset(dst, 0, sizeof dst);                                                                          \
    qllc_k_copy2d_##t##_##t(dst + 4, src + 2, 3, 5, 9, 7);                                               \
    for (int r = 0; r < 3; r++)                                                                          \
      for (int c = 0; c < 9; c++)                                                                        \
        assert_true(dst[r * 9 + c] == (c >= 4 ? src[r * 7 + c - 2] : (T)0));                             \
    T out[17];                                                                                           \
    memset(out, 0, sizeof out);                                                                          \
    qllc_k_copy_##t##_##t(out, src, 17);                                                                 \
    assert_memory_equal(out, src, 17 * sizeof(T));                                                       \
  }

MOVE_TESTS(float, f32, -1.5f)
MOVE_TESTS(int8_t, i8, -7)
MOVE_TESTS(uint8_t, u8, 200)
MOVE_TESTS(int16_t, i16, -300)
MOVE_TESTS(int32_t, i32, 123456)

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_move_f32), cmocka_unit_test(test_move_i8),  cmocka_unit_test(test_move_u8),
    cmocka_unit_test(test_move_i16), cmocka_unit_test(test_move_i32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
