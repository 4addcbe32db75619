/* targets/x86_64/kernels/variants.h: the declarations of the x86_64 ISA variants, made from their rows in
 * variants.def (libjit/bitcode/kernels_variants.h). Every kernel source here includes it, so a
 * definition that does not match its row does not compile. */
#ifndef QLLC_X86_64_VARIANTS_H
#define QLLC_X86_64_VARIANTS_H
#include "kernels_variants.h"

#define QVARIANT QLLC_VARIANT_DECLARE
#include "variants.def"

/* The float MaxPool's copies (x86_f32pool.h; QISA rows of src/lower/kernels.def): the reference's
   qllc_k_maxpool2d_f32_f32 signature and bits */
#define QLLC_MAXPOOL_F32_COPY(isa)                                                                               \
  void qllc_k_maxpool2d_f32_f32__##isa(float *y, const float *x, int64_t NC, int64_t H, int64_t W, int64_t OH,    \
                                       int64_t OW, int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,   \
                                       int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right, \
                                       int64_t dil_h, int64_t dil_w);
QLLC_MAXPOOL_F32_COPY(avx512)
QLLC_MAXPOOL_F32_COPY(avx2)
#undef QLLC_MAXPOOL_F32_COPY
/* The float GlobalAveragePool's copies (x86_f32pool.h): qllc_k_global_avgpool_f32_f32's signature and bits */
void qllc_k_global_avgpool_f32_f32__avx512(float *y, const float *x, int64_t NC, int64_t HW);
void qllc_k_global_avgpool_f32_f32__avx2(float *y, const float *x, int64_t NC, int64_t HW);

#endif
