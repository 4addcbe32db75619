/* src/llvmgen/codegen_internal.h: what codegen.c shares with jit.c (private to src/llvmgen; the only
 * header besides the .c files that includes LLVM-C). */
#ifndef QLLC_CODEGEN_INTERNAL_H
#define QLLC_CODEGEN_INTERNAL_H

#include <stdint.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "llvmgen/llvmgen.h"

/* A new LLVM memory buffer holding the bytes of uk's file i as they were checked when uk was loaded
 * (user_kernels.c); NULL when out of memory. */
LLVMMemoryBufferRef qllc_user_kernels_buffer(const qllc_user_kernels *uk, int i);

/* Collects the first error LLVM reports through a context's diagnostic handler (LLVM's default
 * handler would print it and exit the process). */
typedef struct qllc_llvm_diag {
  int has_error;
  char message[1024];
  /* stack frames LLVM's code generator reports (functions carrying "warn-stack-size"="0"): */
  const char *entry;          /* the entry function's name (NULL: not counted) */
  uint64_t entry_frame;       /* its frame, bytes */
  uint64_t part_frame;        /* the largest frame of its parts (NAME.partK, a long program's pieces) */
  uint64_t other_frames;      /* the sum of every other function's frame, bytes */
  int n_other;                /* how many other functions have a frame */
} qllc_llvm_diag;

/* Installs the collecting handler on ctx; `d` must outlive every use of ctx. */
void qllc_llvm_diag_install(LLVMContextRef ctx, qllc_llvm_diag *d);

/* Registers the x86_64 and AArch64 backends with LLVM (once per process). */
void qllc_llvm_init(void);

/* A TargetMachine for o's triple/CPU/features (opt level aggressive, reloc PIC or static, default code
 * model). Dispose with LLVMDisposeTargetMachine. */
qllc_status qllc_llvm_target_machine(const qllc_codegen_opts *o, LLVMTargetMachineRef *out, qllc_diag *diag);

/* Builds the module for p in ctx (kernel library + user bitcode, entry function, qllc_io tables),
 * specialises and optimises it with default<O3> for tm. On success *out is owned by the caller
 * (LLVMDisposeModule, or hand it to the JIT). */
qllc_status qllc_llvm_build(const qllc_program *p, const qllc_codegen_opts *o, LLVMContextRef ctx,
                            qllc_llvm_diag *ld, LLVMTargetMachineRef tm, LLVMModuleRef *out, qllc_diag *diag);

#endif
