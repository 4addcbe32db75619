/* qllc_kernel.h: the ABI between qllc's generated code and its kernels.
 *
 * Every built-in kernel in libjit/bitcode includes this header, and so does a user's own kernel file
 * passed with --kernels. Kernels are plain C compiled by clang-19 to LLVM bitcode. The compiler emits
 * one call per instruction, then inlines the kernel and specialises it on its constant arguments.
 *
 * Rules (docs/kernels.md says more):
 *  - Name: qllc_k_<op>_<in>_<w>_<out>[__<isa>] (element names f32 i8 u8 i16 i32 i64); ops without a
 *    second operand omit <w>: qllc_k_relu_f32_f32. A user's custom op D:T is
 *    qllc_k_custom_<D>_<T>_<input types>_<output types> (non-alphanumerics of D and T become '_') and
 *    takes outputs, inputs, every output's then input's dims (int64_t), int/float attributes sorted
 *    by name (docs/kernels.md, "Writing your own kernels").
 *  - Arguments in this order: outputs, inputs, weights/bias, then shapes (int64_t), then quantization
 *    parameters (int32_t / float). Shapes and quantization parameters are compile-time constants.
 *  - Pointer arguments are never NULL unless documented ("may be NULL"); buffers are 64-byte aligned
 *    at their base, but a pointer may point inside a buffer (concat, views).
 *  - A kernel may not allocate, keep state between calls, call libc other than memcpy/memset, or use
 *    thread-local storage. It returns void.
 */
#ifndef QLLC_KERNEL_H
#define QLLC_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define QLLC_KERNEL __attribute__((used)) /* keeps an unreferenced kernel in the bitcode */
#define QLLC_RESTRICT __restrict__
#define QLLC_INLINE static inline __attribute__((always_inline))

#endif
