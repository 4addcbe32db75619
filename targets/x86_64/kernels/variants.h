/* targets/x86_64/kernels/variants.h: the declarations of the x86_64 ISA variants, made from their rows in
 * variants.def (libjit/bitcode/kernels_variants.h). Every kernel source here includes it, so a
 * definition that does not match its row does not compile. */
#ifndef QLLC_X86_64_VARIANTS_H
#define QLLC_X86_64_VARIANTS_H
#include "kernels_variants.h"

#define QVARIANT QLLC_VARIANT_DECLARE
#include "variants.def"

#endif
