/* src/llvmgen/jit.c: compile a program in-process with ORC LLJIT.
 *
 * The module is built and optimised exactly as for an object file (codegen.c), with the weights inside
 * it (the JIT always takes weights_in_object = 1, so the caller passes NULL or anything as
 * constant_weights), and then handed to an LLJIT whose target machine is a copy of ours (same triple,
 * CPU, features, PIC). The process's own symbols are visible to the JIT'd code so that memcpy/memset
 * resolve. The entry is looked up at once, which compiles it; the code lives until qllc_jit_code_free.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "llvmgen/codegen_internal.h"

struct qllc_jit_code {
  LLVMOrcLLJITRef jit;
  qllc_llvm_diag ld; /* the JIT's context reports here for as long as it lives */
};

static qllc_status orc_fail(LLVMErrorRef err, const char *what, qllc_diag *diag) {
  char *m = LLVMGetErrorMessage(err);
  qllc_status st = qllc_fail(diag, QLLC_ERR_LLVM, NULL, "%s: %s", what, m);
  LLVMDisposeErrorMessage(m);
  return st;
}

/* AMX (targets/x86_64/kernels/x86_amx.c): Linux gives a process the 8 KiB tile data state only on
 * request; a tile instruction before it faults. Asked once, before lowering picks an __amx kernel
 * (src/driver/pipeline.c), so that a refusal makes the JIT fall back to the next variant, reported per node. */
#define QLLC_ARCH_REQ_XCOMP_PERM 0x1023
#define QLLC_XFEATURE_XTILEDATA 18
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;
static int amx_state = -1;
static void amx_request(void) {
#if defined(__linux__) && defined(__x86_64__)
  amx_state = syscall(SYS_arch_prctl, QLLC_ARCH_REQ_XCOMP_PERM, QLLC_XFEATURE_XTILEDATA) == 0;
#endif
}
int qllc_jit_amx_permission(void) {
  pthread_once(&amx_once, amx_request);
  return amx_state;
}

void qllc_jit_code_free(qllc_jit_code *c) {
  if (!c) return;
  if (c->jit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(c->jit);
    if (err) LLVMConsumeError(err); /* nothing useful to do with a teardown error */
  }
  free(c);
}

qllc_status qllc_codegen_jit(const qllc_program *p, const qllc_codegen_opts *o, qllc_jit_code **out,
                             qllc_entry_fn *entry, qllc_diag *diag) {
  *out = NULL;
  *entry = NULL;
  qllc_codegen_opts jo = *o;
  jo.weights_in_object = 1;
  jo.reloc_pic = 1;
  qllc_jit_code *c = calloc(1, sizeof *c);
  if (!c) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");

  LLVMTargetMachineRef tm = NULL, jtm = NULL;
  qllc_status st = qllc_llvm_target_machine(&jo, &tm, diag);
  if (st == QLLC_OK) st = qllc_llvm_target_machine(&jo, &jtm, diag);
  if (st != QLLC_OK) {
    if (tm) LLVMDisposeTargetMachine(tm);
    free(c);
    return st;
  }

  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
  qllc_llvm_diag_install(ctx, &c->ld);
  LLVMModuleRef m = NULL;
  st = qllc_llvm_build(p, &jo, ctx, &c->ld, tm, &m, diag);
  LLVMDisposeTargetMachine(tm);
  if (st != QLLC_OK) {
    LLVMDisposeTargetMachine(jtm);
    LLVMOrcDisposeThreadSafeContext(tsc);
    free(c);
    return st;
  }

  /* the JIT's target machine: a copy of ours (the builder takes ownership of jtm and of the JTMB) */
  LLVMOrcJITTargetMachineBuilderRef jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jtm);
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&c->jit, builder);
  if (err) {
    st = orc_fail(err, "cannot create the LLVM JIT", diag);
    c->jit = NULL;
    goto fail_module;
  }

  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(c->jit);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(c->jit), NULL, NULL);
  if (err) {
    st = orc_fail(err, "cannot make the process's symbols visible to the JIT", diag);
    goto fail_module;
  }
  LLVMOrcJITDylibAddGenerator(jd, gen);

  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);
  m = NULL;
  LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps the context alive */
  tsc = NULL;
  err = LLVMOrcLLJITAddLLVMIRModule(c->jit, jd, tsm); /* takes ownership of tsm even on failure */
  if (err) {
    st = orc_fail(err, "cannot add the module to the JIT", diag);
    goto fail;
  }
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(c->jit, &addr, jo.entry_name);
  if (err) {
    st = orc_fail(err, "JIT compilation failed", diag);
    goto fail;
  }
  if (c->ld.has_error) {
    st = qllc_fail(diag, QLLC_ERR_LLVM, NULL, "JIT compilation failed: %s", c->ld.message);
    goto fail;
  }
  *entry = (qllc_entry_fn)(uintptr_t)addr;
  *out = c;
  return QLLC_OK;

fail_module:
  if (m) LLVMDisposeModule(m);
  if (tsc) LLVMOrcDisposeThreadSafeContext(tsc);
fail:
  qllc_jit_code_free(c);
  return st;
}
