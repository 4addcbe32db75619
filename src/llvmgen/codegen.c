/* src/llvmgen/codegen.c: instruction IR -> one optimised LLVM module -> object file.
 *
 * Algorithm:
 *   1. Parse the target's embedded kernel library (bitcode) into a fresh module; check its triple and
 *      data layout against the target description. Parse and link each user bitcode file (same checks,
 *      naming the file); a user definition of a built-in kernel's name replaces the built-in.
 *   2. Add the entry `i32 NAME(ptr constant_weights, ptr mutable, ptr activations)`: one call per
 *      instruction. Buffer arguments become constant GEPs off the three region pointers (or off one
 *      private constant global per CONST buffer when the weights live in the object); immediates are
 *      converted to each parameter's exact LLVM type, and any mismatch is an error naming the kernel,
 *      the argument and the node. Then `ret i32 0`.
 *   3. Add the qllc_io tables NAME_inputs / NAME_outputs as data (the bundle header only declares them).
 *   4. Specialise: every called kernel becomes alwaysinline, every definition but the entry and the
 *      tables is internalized (and @llvm.used dropped, so unused kernels die), every function gets the
 *      resolved target-cpu / target-features. Verify, then run "globaldce,default<O3>" with a
 *      TargetMachine for the real CPU: the kernels are inlined into the entry with their shapes and
 *      quantization parameters as constants, and vectorised for that CPU.
 *      With opts->quick (the precision search's short-lived runs) the kernels are called instead,
 *      and the module gets "globaldce,default<O1>": a fraction of the compile time, the same results.
 *
 * LLVM's own conventions stop here: every LLVMBool / char ** / LLVMErrorRef result becomes a
 * qllc_status plus a diagnostic at the call site, and LLVM's messages are disposed at once. Errors LLVM
 * reports through the context (bitcode reader, linker) are collected by a diagnostic handler, because
 * LLVM's default handler would print and exit.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "llvmgen/codegen_internal.h"

/* ---- LLVM plumbing ------------------------------------------------------------------------------ */

/* "stack frame size (N) exceeds limit (0) in function 'F'": LLVM's report of a frame, asked for with
 * the "warn-stack-size" attribute; 1 when desc is one (counted into d). */
static int count_frame(qllc_llvm_diag *d, const char *desc) {
  const char *p = desc ? strstr(desc, "stack frame size (") : NULL;
  if (!p) return 0;
  unsigned long long n = strtoull(p + 18, NULL, 10);
  const char *f = strstr(p, "in function '");
  size_t el = d->entry ? strlen(d->entry) : 0;
  if (f && d->entry && strncmp(f + 13, d->entry, el) == 0 && f[13 + el] == '\'') d->entry_frame = n;
  else if (f && d->entry && strncmp(f + 13, d->entry, el) == 0 && strncmp(f + 13 + el, ".part", 5) == 0) {
    if (n > d->part_frame) d->part_frame = n; /* the parts run one after another */
  } else {
    d->other_frames += n;
    d->n_other++;
  }
  return 1;
}

static void diag_handler(LLVMDiagnosticInfoRef di, void *ctx) {
  qllc_llvm_diag *d = ctx;
  if (LLVMGetDiagInfoSeverity(di) == LLVMDSWarning && d->entry) {
    char *m = LLVMGetDiagInfoDescription(di);
    count_frame(d, m);
    LLVMDisposeMessage(m);
    return;
  }
  if (LLVMGetDiagInfoSeverity(di) != LLVMDSError || d->has_error) return;
  char *m = LLVMGetDiagInfoDescription(di);
  snprintf(d->message, sizeof d->message, "%s", m ? m : "unknown LLVM error");
  LLVMDisposeMessage(m);
  d->has_error = 1;
}

void qllc_llvm_diag_install(LLVMContextRef ctx, qllc_llvm_diag *d) {
  memset(d, 0, sizeof *d);
  LLVMContextSetDiagnosticHandler(ctx, diag_handler, d);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_backends(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser();
  LLVMInitializeAArch64TargetInfo();
  LLVMInitializeAArch64Target();
  LLVMInitializeAArch64TargetMC();
  LLVMInitializeAArch64AsmPrinter();
  LLVMInitializeAArch64AsmParser();
}

void qllc_llvm_init(void) { pthread_once(&init_once, init_backends); }

qllc_status qllc_llvm_target_machine(const qllc_codegen_opts *o, LLVMTargetMachineRef *out, qllc_diag *diag) {
  qllc_llvm_init();
  *out = NULL;
  LLVMTargetRef t;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(o->target->triple, &t, &err)) {
    qllc_status st = qllc_fail(diag, QLLC_ERR_LLVM, NULL, "no LLVM backend for %s: %s", o->target->triple,
                               err ? err : "unknown error");
    LLVMDisposeMessage(err);
    return st;
  }
  *out = LLVMCreateTargetMachine(t, o->target->triple, o->cpu ? o->cpu : "", o->features ? o->features : "",
                                 o->quick ? LLVMCodeGenLevelLess : LLVMCodeGenLevelAggressive, o->reloc_pic ? LLVMRelocPIC : LLVMRelocStatic,
                                 LLVMCodeModelDefault);
  if (!*out)
    return qllc_fail(diag, QLLC_ERR_LLVM, NULL, "LLVM could not create a target machine for %s (cpu %s)",
                     o->target->triple, o->cpu);
  return QLLC_OK;
}

/* ---- per-build state ---------------------------------------------------------------------------- */

typedef struct cg {
  const qllc_program *p;
  const qllc_codegen_opts *o;
  LLVMContextRef ctx;
  qllc_llvm_diag *ld;
  qllc_diag *diag;
  LLVMModuleRef m;
  LLVMTypeRef i8, i32, i64, f32, ptr;
  LLVMValueRef entry;
  LLVMValueRef region[3];   /* the entry's three arguments, by qllc_region */
  LLVMValueRef *globals;    /* [n_buffers]: CONST buffer globals (weights_in_object) */
  qllc_user_kernels *uk;    /* what the --kernels files define (names errors after the file) */
} cg;

static const char *node_name(const qllc_instr *in) { return in->node && in->node->name ? in->node->name : NULL; }

/* " (node X)" or "" */
static const char *node_suffix(const qllc_instr *in, char *buf, size_t size) {
  const char *n = node_name(in);
  if (!n) return "";
  snprintf(buf, size, " (node %s)", n);
  return buf;
}

/* The LLVM error collected by the diagnostic handler, or a generic text. */
static const char *llvm_msg(cg *c) { return c->ld->has_error ? c->ld->message : "no message from LLVM"; }

/* Arch and OS of a triple must match (the vendor and environment may differ: "x86_64-pc-linux-gnu"
 * from a host clang is the same target as "x86_64-unknown-linux-gnu"). */
static int triple_part(const char *t, int idx, char *buf, size_t size) {
  for (int i = 0; i < idx && t; i++) {
    t = strchr(t, '-');
    if (t) t++;
  }
  if (!t) {
    buf[0] = 0;
    return 0;
  }
  size_t n = strcspn(t, "-");
  if (n >= size) n = size - 1;
  memcpy(buf, t, n);
  buf[n] = 0;
  return 1;
}

static int same_target(const char *a, const char *b) {
  char x[64], y[64];
  triple_part(a, 0, x, sizeof x);
  triple_part(b, 0, y, sizeof y);
  if (strcmp(x, y) != 0) return 0;
  triple_part(a, 2, x, sizeof x);
  triple_part(b, 2, y, sizeof y);
  return strcmp(x, y) == 0;
}

/* Checks a parsed module's triple and data layout against the target. `what` names it in errors. */
static qllc_status check_module_target(cg *c, LLVMModuleRef m, const char *what, const char *file) {
  const qllc_target_desc *t = c->o->target;
  const char *triple = LLVMGetTarget(m);
  if (!same_target(triple, t->triple)) {
    qllc_diag_set_file(c->diag, file);
    return qllc_fail(c->diag, QLLC_ERR_MISMATCH, NULL,
                     "%s is for target '%s', not %s ('%s'): compile it with clang-19 --target=%s", what,
                     *triple ? triple : "(none)", t->name, t->triple, t->triple);
  }
  const char *dl = LLVMGetDataLayoutStr(m);
  if (strcmp(dl, t->data_layout) != 0) {
    qllc_diag_set_file(c->diag, file);
    return qllc_fail(c->diag, QLLC_ERR_MISMATCH, NULL, "%s has data layout '%s', but target %s uses '%s'", what,
                     dl, t->name, t->data_layout);
  }
  return QLLC_OK;
}

static qllc_status parse_bitcode(cg *c, LLVMMemoryBufferRef mb, const char *what, const char *file,
                                 LLVMModuleRef *out) {
  c->ld->has_error = 0;
  *out = NULL;
  LLVMBool bad = LLVMParseBitcodeInContext2(c->ctx, mb, out);
  LLVMDisposeMemoryBuffer(mb); /* a fully parsed module does not refer to its buffer */
  if (bad || !*out) {
    qllc_diag_set_file(c->diag, file);
    return qllc_fail(c->diag, QLLC_ERR_PARSE, NULL,
                     "cannot read %s as LLVM 19 bitcode: %s (kernel files must be made by clang-19 -emit-llvm)",
                     what, llvm_msg(c));
  }
  return QLLC_OK;
}

/* The bundle contract on a user module (docs/kernels.md): a bundle needs nothing from its host but
 * memcpy and memset, and keeps no state. So the module may declare (call) only those, LLVM intrinsics and
 * functions the kernel library defines; it may have no writable or thread-local globals (a `static` local
 * is one), no globals defined elsewhere, and no constructors or destructors. */
static qllc_status check_user_contract(cg *c, LLVMModuleRef um, const char *path) {
  const char *why = NULL, *name = "";
  char buf[600];
  for (LLVMValueRef f = LLVMGetFirstFunction(um); !why && f; f = LLVMGetNextFunction(f)) {
    if (!LLVMIsDeclaration(f) || LLVMGetIntrinsicID(f) != 0) continue;
    size_t n;
    name = LLVMGetValueName2(f, &n);
    LLVMValueRef lf = LLVMGetNamedFunction(c->m, name);
    if (strcmp(name, "memcpy") && strcmp(name, "memset") && !(lf && !LLVMIsDeclaration(lf)))
      why = "calls %s, which a bundle does not have (kernels may call memcpy, memset and the kernel library only; "
            "no libc or libm)";
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(um); !why && g; g = LLVMGetNextGlobal(g)) {
    size_t n;
    name = LLVMGetValueName2(g, &n);
    if (!strcmp(name, "llvm.global_ctors") || !strcmp(name, "llvm.global_dtors"))
      why = "has constructors or destructors (%s), which a bundle never runs";
    else if (!strncmp(name, "llvm.", 5)) continue; /* llvm.used and other metadata-like globals */
    else if (LLVMIsDeclaration(g)) why = "uses the global '%s' defined elsewhere, which a bundle does not have";
    else if (LLVMIsThreadLocal(g)) why = "has the thread-local variable '%s' (kernels keep no state)";
    else if (!LLVMIsGlobalConstant(g))
      why = "has the writable global '%s' (kernels keep no state between calls: no writable globals, no static locals)";
  }
  if (!why) return QLLC_OK;
  snprintf(buf, sizeof buf, why, name);
  qllc_diag_set_file(c->diag, path);
  return qllc_fail(c->diag, QLLC_ERR_INVALID, NULL, "%s: the kernel file %s", path, buf);
}

/* Links user bitcode file i into c->m. A definition of a name the library also defines replaces the
 * library's (the built-in is renamed and internalized, so library code that calls it keeps working). */
static qllc_status link_user_file(cg *c, int i) {
  const char *path = c->o->kernel_files[i];
  LLVMMemoryBufferRef mb = qllc_user_kernels_buffer(c->uk, i); /* the bytes checked by the load */
  if (!mb) return qllc_fail(c->diag, QLLC_ERR_NOMEM, NULL, "out of memory reading kernel file %s", path);
  char what[1024];
  snprintf(what, sizeof what, "kernel file %s", path);
  LLVMModuleRef um;
  qllc_status st = parse_bitcode(c, mb, what, path, &um);
  if (st != QLLC_OK) return st;
  st = check_module_target(c, um, what, path);
  if (st == QLLC_OK) st = check_user_contract(c, um, path);
  for (LLVMValueRef f = LLVMGetFirstFunction(um); st == QLLC_OK && f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    LLVMLinkage l = LLVMGetLinkage(f);
    if (l == LLVMInternalLinkage || l == LLVMPrivateLinkage) continue;
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    LLVMValueRef lf = LLVMGetNamedFunction(c->m, name);
    if (!lf || LLVMIsDeclaration(lf)) continue;
    const char *first = qllc_user_kernels_find(c->uk, name); /* the first file given that defines it */
    if (first && strcmp(first, path) != 0) {
      qllc_diag_set_file(c->diag, path);
      st = qllc_fail(c->diag, QLLC_ERR_MISMATCH, NULL, "%s: function %s is also defined in kernel file %s", what,
                     name, first);
      break;
    }
    if (LLVMGlobalGetValueType(lf) != LLVMGlobalGetValueType(f)) {
      qllc_diag_set_file(c->diag, path);
      char *a = LLVMPrintTypeToString(LLVMGlobalGetValueType(f));
      char *b = LLVMPrintTypeToString(LLVMGlobalGetValueType(lf));
      st = qllc_fail(c->diag, QLLC_ERR_MISMATCH, NULL,
                     "%s: function %s has type %s, but the built-in kernel it replaces has type %s", what, name, a,
                     b);
      LLVMDisposeMessage(a);
      LLVMDisposeMessage(b);
      break;
    }
    char *renamed = malloc(n + 16);
    if (!renamed) {
      st = qllc_fail(c->diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      break;
    }
    snprintf(renamed, n + 16, "%s.builtin", name);
    LLVMSetValueName2(lf, renamed, strlen(renamed));
    free(renamed);
    LLVMSetLinkage(lf, LLVMInternalLinkage);
    LLVMSetVisibility(lf, LLVMDefaultVisibility);
  }
  if (st != QLLC_OK) {
    LLVMDisposeModule(um);
    return st;
  }
  LLVMSetTarget(um, LLVMGetTarget(c->m)); /* vendor/environment differences are fine (checked above) */
  c->ld->has_error = 0;
  if (LLVMLinkModules2(c->m, um)) { /* um is destroyed either way */
    qllc_diag_set_file(c->diag, path);
    return qllc_fail(c->diag, QLLC_ERR_MISMATCH, NULL, "cannot link %s: %s", what, llvm_msg(c));
  }
  return QLLC_OK;
}

static qllc_status load_library(cg *c) {
  const qllc_target_desc *t = c->o->target;
  if (!t->bitcode || !t->bitcode_size || !*t->bitcode_size)
    return qllc_fail(c->diag, QLLC_ERR_LLVM, NULL, "target %s has no embedded kernel library", t->name);
  char what[128];
  snprintf(what, sizeof what, "the %s kernel library", t->name);
  LLVMMemoryBufferRef mb =
      LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)t->bitcode, *t->bitcode_size, "qllc_kernels");
  qllc_status st = parse_bitcode(c, mb, what, NULL, &c->m);
  if (st != QLLC_OK) return st;
  if (strcmp(LLVMGetTarget(c->m), t->triple) != 0)
    return qllc_fail(c->diag, QLLC_ERR_MISMATCH, NULL, "%s has triple '%s', but the target description says '%s'",
                     what, LLVMGetTarget(c->m), t->triple);
  st = check_module_target(c, c->m, what, NULL);
  /* reads each file's LLVM version (older bitcode would parse silently) and its function names */
  if (st == QLLC_OK && c->o->n_kernel_files > 0)
    st = qllc_user_kernels_load(c->o->kernel_files, c->o->n_kernel_files, &c->uk, c->diag);
  for (int i = 0; st == QLLC_OK && i < c->o->n_kernel_files; i++) st = link_user_file(c, i);
  return st;
}

/* ---- the entry function ------------------------------------------------------------------------- */

static int is_c_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

static int buffer_index(const qllc_program *p, const qllc_buffer *b) {
  if (b->id >= 0 && b->id < p->n_buffers && p->buffers[b->id] == b) return b->id;
  for (int i = 0; i < p->n_buffers; i++)
    if (p->buffers[i] == b) return i;
  return -1;
}

/* One private constant global per CONST buffer: [size x i8], align 64, unnamed_addr. */
static void make_const_globals(cg *c) {
  for (int i = 0; i < c->p->n_buffers; i++) {
    const qllc_buffer *b = c->p->buffers[i];
    if (b->region != QLLC_REGION_CONST) continue;
    LLVMValueRef init;
    if (b->data) init = LLVMConstStringInContext2(c->ctx, b->data, b->size, 1);
    else init = LLVMConstNull(LLVMArrayType2(c->i8, b->size));
    char name[64];
    snprintf(name, sizeof name, "qllc.const.%d", i);
    LLVMValueRef g = LLVMAddGlobal(c->m, LLVMTypeOf(init), name);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, QLLC_MEM_ALIGN);
    c->globals[i] = g;
  }
}

static LLVMValueRef byte_gep(cg *c, LLVMBuilderRef b, LLVMValueRef base, uint64_t off) {
  if (off == 0) return base;
  LLVMValueRef idx = LLVMConstInt(c->i64, off, 0);
  return LLVMBuildInBoundsGEP2(b, c->i8, base, &idx, 1, "");
}

static const char *type_desc(LLVMTypeRef t, char *buf, size_t size) {
  char *s = LLVMPrintTypeToString(t);
  snprintf(buf, size, "%s", s);
  LLVMDisposeMessage(s);
  return buf;
}

static const char *arg_kind_name(qllc_arg_kind k) {
  switch (k) {
  case QLLC_ARG_BUF: return "a buffer";
  case QLLC_ARG_NULL: return "a null pointer";
  case QLLC_ARG_INT: return "an integer";
  case QLLC_ARG_FLOAT: return "a float";
  }
  return "an unknown argument kind";
}

/* Converts instruction argument `ai` to parameter type `pt`. */
static qllc_status convert_arg(cg *c, LLVMBuilderRef b, const qllc_instr *in, int ai, LLVMTypeRef pt,
                               LLVMValueRef *out) {
  const qllc_arg *a = &in->args[ai];
  char ns[300], ts[64];
  LLVMTypeKind k = LLVMGetTypeKind(pt);
  const char *want = NULL;
  switch (k) {
  case LLVMPointerTypeKind:
    if (a->kind == QLLC_ARG_NULL) {
      *out = LLVMConstPointerNull(pt);
      return QLLC_OK;
    }
    if (a->kind == QLLC_ARG_BUF && a->buf) {
      const qllc_buffer *buf = a->buf;
      int bi = buffer_index(c->p, buf);
      if (bi < 0 || a->byte_offset > buf->size)
        return qllc_fail(c->diag, QLLC_ERR_INVALID, node_name(in),
                         "argument %d of kernel %s%s: buffer %s is not in the program or the offset %llu is "
                         "outside it",
                         ai, in->kernel, node_suffix(in, ns, sizeof ns), buf->name ? buf->name : "?",
                         (unsigned long long)a->byte_offset);
      if (buf->region == QLLC_REGION_CONST && c->o->weights_in_object)
        *out = byte_gep(c, b, c->globals[bi], a->byte_offset);
      else *out = byte_gep(c, b, c->region[buf->region], buf->offset + a->byte_offset);
      return QLLC_OK;
    }
    want = "a buffer or null pointer";
    break;
  case LLVMIntegerTypeKind:
    if (a->kind == QLLC_ARG_INT) {
      unsigned w = LLVMGetIntTypeWidth(pt);
      if (w < 64) {
        /* accept the value if it fits the width as either a signed or an unsigned integer */
        int64_t lo = -((int64_t)1 << (w - 1)), hi = (int64_t)(((uint64_t)1 << w) - 1);
        if (a->i < lo || a->i > hi)
          return qllc_fail(c->diag, QLLC_ERR_INVALID, node_name(in),
                           "argument %d of kernel %s%s: value %lld does not fit the parameter type i%u", ai,
                           in->kernel, node_suffix(in, ns, sizeof ns), (long long)a->i, w);
      }
      *out = LLVMConstInt(pt, (unsigned long long)a->i, 1);
      return QLLC_OK;
    }
    want = "an integer";
    break;
  case LLVMFloatTypeKind:
  case LLVMDoubleTypeKind:
    if (a->kind == QLLC_ARG_FLOAT) {
      *out = LLVMConstReal(pt, a->f);
      return QLLC_OK;
    }
    want = "a float";
    break;
  default:
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, node_name(in),
                     "argument %d of kernel %s%s: parameter type %s is not supported by the kernel ABI (pointers, "
                     "integers, float and double only)",
                     ai, in->kernel, node_suffix(in, ns, sizeof ns), type_desc(pt, ts, sizeof ts));
  }
  return qllc_fail(c->diag, QLLC_ERR_MISMATCH, node_name(in),
                   "argument %d of kernel %s%s: the kernel's parameter is %s (%s), but the instruction passes %s",
                   ai, in->kernel, node_suffix(in, ns, sizeof ns), want, type_desc(pt, ts, sizeof ts),
                   arg_kind_name(a->kind));
}

static void add_enum_attr(cg *c, LLVMValueRef f, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static void remove_enum_attr(LLVMValueRef f, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, kind);
}

static qllc_status emit_call(cg *c, LLVMBuilderRef b, const qllc_instr *in) {
  char ns[300], files[1024], from[1200] = "";
  LLVMValueRef fn = in->kernel ? LLVMGetNamedFunction(c->m, in->kernel) : NULL;
  const char *ufile = qllc_user_kernels_find(c->uk, in->kernel);
  if (ufile) snprintf(from, sizeof from, " (user kernel from %s; docs/kernels.md gives the ABI)", ufile);
  if (!fn || (LLVMIsDeclaration(fn) && in->kernel && strncmp(in->kernel, "qllc_k_custom_", 14) == 0))
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, node_name(in), "kernel %s not found in the kernel library%s%s%s",
                     in->kernel ? in->kernel : "(null)", node_suffix(in, ns, sizeof ns),
                     in->kernel && strncmp(in->kernel, "qllc_k_custom_", 14) == 0 ? "; files searched: " : "",
                     in->kernel && strncmp(in->kernel, "qllc_k_custom_", 14) == 0
                         ? qllc_user_kernels_files(c->uk, files, sizeof files)
                         : "");
  if (LLVMIsDeclaration(fn))
    return qllc_fail(c->diag, QLLC_ERR_UNSUPPORTED, node_name(in),
                     "kernel %s is declared but not defined in the kernel library%s", in->kernel,
                     node_suffix(in, ns, sizeof ns));
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  unsigned np = LLVMCountParamTypes(fty);
  if ((LLVMIsFunctionVarArg(fty) || np != (unsigned)in->n_args) && ufile) qllc_diag_set_file(c->diag, ufile);
  if (LLVMIsFunctionVarArg(fty) || np != (unsigned)in->n_args)
    return qllc_fail(c->diag, QLLC_ERR_MISMATCH, node_name(in),
                     "kernel %s takes %u%s arguments, but the instruction passes %d%s%s", in->kernel, np,
                     LLVMIsFunctionVarArg(fty) ? " (variadic)" : "", in->n_args, node_suffix(in, ns, sizeof ns), from);
  LLVMTypeRef *pts = calloc(np ? np : 1, sizeof *pts);
  LLVMValueRef *args = calloc(np ? np : 1, sizeof *args);
  qllc_status st = pts && args ? QLLC_OK : qllc_fail(c->diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  if (st == QLLC_OK) LLVMGetParamTypes(fty, pts);
  for (unsigned i = 0; st == QLLC_OK && i < np; i++) st = convert_arg(c, b, in, (int)i, pts[i], &args[i]);
  if (st != QLLC_OK && ufile && c->diag) { /* name the file the mistyped function came from */
    size_t len = strlen(c->diag->message);
    snprintf(c->diag->message + len, sizeof c->diag->message - len, "%s", from);
    qllc_diag_set_file(c->diag, ufile);
  }
  if (st == QLLC_OK) {
    LLVMBuildCall2(b, fty, fn, args, np, "");
    if (!c->o->quick) {
      remove_enum_attr(fn, "noinline");
      remove_enum_attr(fn, "optnone");
      add_enum_attr(c, fn, "alwaysinline");
    }
  }
  free(pts);
  free(args);
  return st;
}

#define QLLC_PART_INSTRS 128 /* kernel calls per function of a long program (build_entry) */

/* opts->layer_stamps (`qllc bench`'s per-layer times): the CPU's time counter, read as an int64 into
 * mutable + stamp_offset + 8 * slot: on x86_64 the time-stamp counter (llvm.readcyclecounter: rdtsc, a
 * constant rate on the CPUs qllc targets), on aarch64 the generic timer's virtual count (cntvct_el0,
 * readable from user space; llvm.readcyclecounter would read the PMU's cycle counter, which Linux keeps
 * from user space). The caller converts counts to time. An empty volatile asm that takes the three region
 * pointers and clobbers memory stands on each side of the read: the regions are noalias, so without it
 * O3 could move a kernel's loads and stores across the read; with it, no memory access crosses a stamp. */
static void emit_stamp(cg *c, LLVMBuilderRef b, int slot) {
  LLVMTypeRef bar_params[3] = {c->ptr, c->ptr, c->ptr};
  LLVMTypeRef bar_ty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), bar_params, 3, 0);
  static const char cons[] = "r,r,r,~{memory}";
  LLVMValueRef bar = LLVMGetInlineAsm(bar_ty, "", 0, cons, sizeof cons - 1, 1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMValueRef regions[3] = {c->region[0], c->region[1], c->region[2]};
  LLVMTypeRef rd_ty = LLVMFunctionType(c->i64, NULL, 0, 0);
  LLVMValueRef rd;
  if (!strcmp(c->o->target->name, "aarch64")) {
    static const char mrs[] = "mrs $0, cntvct_el0", out[] = "=r";
    rd = LLVMGetInlineAsm(rd_ty, mrs, sizeof mrs - 1, out, sizeof out - 1, 1, 0, LLVMInlineAsmDialectATT, 0);
  } else {
    static const char rcc[] = "llvm.readcyclecounter";
    rd = LLVMGetIntrinsicDeclaration(c->m, LLVMLookupIntrinsicID(rcc, sizeof rcc - 1), NULL, 0);
  }
  LLVMValueRef off = LLVMConstInt(c->i64, c->o->stamp_offset + 8 * (uint64_t)slot, 0);
  LLVMValueRef at = LLVMBuildGEP2(b, c->i8, c->region[QLLC_REGION_MUTABLE], &off, 1, "stamp");
  LLVMBuildCall2(b, bar_ty, bar, regions, 3, "");
  LLVMValueRef t = LLVMBuildCall2(b, rd_ty, rd, NULL, 0, "ticks");
  LLVMBuildStore(b, t, at);
  LLVMBuildCall2(b, bar_ty, bar, regions, 3, "");
}

/* One instruction's call, and with stamps the time after it (slot i + 1). */
static qllc_status emit_instr(cg *c, LLVMBuilderRef b, int i) {
  qllc_status st = emit_call(c, b, &c->p->instrs[i]);
  if (st == QLLC_OK && c->o->layer_stamps) emit_stamp(c, b, i + 1);
  return st;
}

static qllc_status build_entry(cg *c) {
  const char *name = c->o->entry_name;
  if (!is_c_identifier(name))
    return qllc_fail(c->diag, QLLC_ERR_INVALID, NULL, "bundle name '%s' is not a C identifier",
                     name ? name : "(null)");
  if (LLVMGetNamedFunction(c->m, name) || LLVMGetNamedGlobal(c->m, name))
    return qllc_fail(c->diag, QLLC_ERR_INVALID, NULL, "bundle name '%s' collides with a symbol of the kernel library",
                     name);
  LLVMTypeRef params[3] = {c->ptr, c->ptr, c->ptr};
  LLVMTypeRef fty = LLVMFunctionType(c->i32, params, 3, 0);
  c->entry = LLVMAddFunction(c->m, name, fty);
  static const char *const pnames[3] = {"constant_weights", "mutable_weights", "activations"};
  for (int i = 0; i < 3; i++) {
    LLVMValueRef prm = LLVMGetParam(c->entry, (unsigned)i);
    LLVMSetValueName2(prm, pnames[i], strlen(pnames[i]));
    /* the three regions never overlap (docs/bundle.md, "Memory regions") */
    LLVMAddAttributeAtIndex(c->entry, (unsigned)i + 1,
                            LLVMCreateEnumAttribute(c->ctx, LLVMGetEnumAttributeKindForName("noalias", 7), 0));
  }
  c->region[QLLC_REGION_CONST] = LLVMGetParam(c->entry, 0);
  c->region[QLLC_REGION_MUTABLE] = LLVMGetParam(c->entry, 1);
  c->region[QLLC_REGION_ACT] = LLVMGetParam(c->entry, 2);
  add_enum_attr(c, c->entry, "nounwind");

  if (c->o->weights_in_object) make_const_globals(c);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c->ctx, c->entry, "entry"));
  if (!c->o->weights_in_object && c->p->const_size > 0) {
    /* weights read from the caller's constant_weights (--weights file): a NULL there is the caller's
       error, returned as 1 (docs/bundle.md), not a fault at the first weight */
    LLVMBasicBlockRef missing = LLVMAppendBasicBlockInContext(c->ctx, c->entry, "no_weights");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, c->entry, "body");
    LLVMValueRef isnull = LLVMBuildIsNull(b, c->region[QLLC_REGION_CONST], "");
    LLVMBuildCondBr(b, isnull, missing, body);
    LLVMPositionBuilderAtEnd(b, missing);
    LLVMBuildRet(b, LLVMConstInt(c->i32, 1, 0));
    LLVMPositionBuilderAtEnd(b, body);
  }
  qllc_status st = QLLC_OK;
  int n = c->p->n_instrs;
  if (c->o->layer_stamps) emit_stamp(c, b, 0);
  if (n <= QLLC_PART_INSTRS) {
    for (int i = 0; st == QLLC_OK && i < n; i++) st = emit_instr(c, b, i);
  } else {
    /* A long program in parts of QLLC_PART_INSTRS calls, each its own internal never-inlined function
       NAME.partK(the three regions) that the entry calls in order: LLVM's O3 on one function grows
       faster than linearly with its size (a 3000-node chain took 17 s to compile in one function). */
    LLVMTypeRef vty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), params, 3, 0);
    LLVMValueRef eargs[3] = {LLVMGetParam(c->entry, 0), LLVMGetParam(c->entry, 1), LLVMGetParam(c->entry, 2)};
    for (int k = 0; st == QLLC_OK && k < n; k += QLLC_PART_INSTRS) {
      char pname[300];
      snprintf(pname, sizeof pname, "%s.part%d", name, k / QLLC_PART_INSTRS);
      LLVMValueRef part = LLVMAddFunction(c->m, pname, vty);
      LLVMSetLinkage(part, LLVMInternalLinkage);
      for (int i = 0; i < 3; i++)
        LLVMAddAttributeAtIndex(part, (unsigned)i + 1,
                                LLVMCreateEnumAttribute(c->ctx, LLVMGetEnumAttributeKindForName("noalias", 7), 0));
      add_enum_attr(c, part, "nounwind");
      add_enum_attr(c, part, "noinline");
      for (int i = 0; i < 3; i++) c->region[i] = LLVMGetParam(part, (unsigned)i);
      LLVMBuilderRef pb = LLVMCreateBuilderInContext(c->ctx);
      LLVMPositionBuilderAtEnd(pb, LLVMAppendBasicBlockInContext(c->ctx, part, "entry"));
      for (int i = k; st == QLLC_OK && i < n && i < k + QLLC_PART_INSTRS; i++) st = emit_instr(c, pb, i);
      LLVMBuildRetVoid(pb);
      LLVMDisposeBuilder(pb);
      LLVMBuildCall2(b, vty, part, eargs, 3, "");
      for (int i = 0; i < 3; i++) c->region[i] = eargs[i];
    }
  }
  if (st == QLLC_OK) LLVMBuildRet(b, LLVMConstInt(c->i32, 0, 0));
  LLVMDisposeBuilder(b);
  return st;
}

/* ---- the qllc_io tables ------------------------------------------------------------------------- */

/* struct qllc_io { const char *name; int elem_kind; float scale; int32_t zero_point; uint32_t rank;
 *                  uint64_t dims[8]; uint64_t offset; uint64_t size; }  (same layout on both targets) */
static LLVMValueRef io_entry(cg *c, LLVMTypeRef st, const qllc_io_desc *d) {
  const qllc_value *v = d->value;
  const qllc_buffer *b = d->buf;
  const char *name = v && v->name ? v->name : b && b->name ? b->name : "";
  LLVMValueRef s = LLVMConstStringInContext2(c->ctx, name, strlen(name), 0);
  LLVMValueRef gs = LLVMAddGlobal(c->m, LLVMTypeOf(s), "qllc.io.name");
  LLVMSetInitializer(gs, s);
  LLVMSetGlobalConstant(gs, 1);
  LLVMSetLinkage(gs, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(gs, LLVMGlobalUnnamedAddr);
  int elem = v ? (int)v->elem : b ? (int)b->elem : 0;
  int quant = elem != QLLC_ELEM_F32;
  LLVMValueRef dims[QLLC_MAX_RANK];
  int rank = v ? v->rank : 1;
  for (int i = 0; i < QLLC_MAX_RANK; i++) {
    uint64_t dv = v ? (i < rank ? (uint64_t)v->dims[i] : 0) : (i == 0 && b ? b->size / qllc_elem_size((qllc_elem_kind)elem) : 0);
    dims[i] = LLVMConstInt(c->i64, dv, 0);
  }
  LLVMValueRef f[8] = {
      gs,
      LLVMConstInt(c->i32, (unsigned long long)elem, 0),
      LLVMConstReal(c->f32, v && quant ? v->scale : 1.0),
      LLVMConstInt(c->i32, (unsigned long long)(int64_t)(v && quant ? v->zero_point : 0), 1),
      LLVMConstInt(c->i32, (unsigned long long)rank, 0),
      LLVMConstArray2(c->i64, dims, QLLC_MAX_RANK),
      LLVMConstInt(c->i64, b ? b->offset : 0, 0),
      LLVMConstInt(c->i64, b ? b->size : 0, 0),
  };
  return LLVMConstNamedStruct(st, f, 8);
}

static void build_io_tables(cg *c) {
  LLVMTypeRef st = LLVMStructCreateNamed(c->ctx, "qllc_io");
  LLVMTypeRef fields[8] = {c->ptr, c->i32, c->f32, c->i32, c->i32, LLVMArrayType2(c->i64, QLLC_MAX_RANK), c->i64,
                           c->i64};
  LLVMStructSetBody(st, fields, 8, 0);
  for (int which = 0; which < 2; which++) {
    int n = which ? c->p->n_outputs : c->p->n_inputs;
    const qllc_io_desc *ds = which ? c->p->outputs : c->p->inputs;
    LLVMValueRef *es = calloc(n ? (size_t)n : 1, sizeof *es);
    if (!es) continue; /* only on OOM; the missing table then shows up as a link error, not a crash */
    for (int i = 0; i < n; i++) es[i] = io_entry(c, st, &ds[i]);
    LLVMValueRef arr = LLVMConstArray2(st, es, (uint64_t)n);
    free(es);
    char name[512];
    snprintf(name, sizeof name, "%s_%s", c->o->entry_name, which ? "outputs" : "inputs");
    LLVMValueRef g = LLVMAddGlobal(c->m, LLVMTypeOf(arr), name);
    LLVMSetInitializer(g, arr);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetAlignment(g, 8);
  }
}

/* ---- specialisation and optimisation ------------------------------------------------------------ */

static void set_string_attr(cg *c, LLVMValueRef f, const char *k, const char *v) {
  LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, k, (unsigned)strlen(k));
  if (v)
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

/* Every function gets the resolved CPU's features, but an ISA variant (qllc_k_..._<isa>, lowering
 * chose it because the CPU has what it needs: src/lower/kernels.def) keeps its own after them, so the
 * instructions its intrinsics need stay legal whatever the CPU name implies. */
static void keep_variant_features(cg *c, LLVMValueRef f) {
  size_t n;
  const char *name = LLVMGetValueName2(f, &n);
  LLVMAttributeRef a = strstr(name, "__") && strncmp(name, "qllc_k_", 7) == 0
                           ? LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, "target-features", 15)
                           : NULL;
  unsigned len = 0;
  const char *own = a ? LLVMGetStringAttributeValue(a, &len) : NULL;
  if (!own || !len) {
    set_string_attr(c, f, "target-features", c->o->features);
    return;
  }
  size_t base = strlen(c->o->features);
  char *merged = malloc(base + len + 2);
  if (!merged) {
    set_string_attr(c, f, "target-features", c->o->features);
    return;
  }
  snprintf(merged, base + len + 2, "%s%s%.*s", c->o->features, base ? "," : "", (int)len, own);
  set_string_attr(c, f, "target-features", merged);
  free(merged);
}

static int is_io_table(cg *c, LLVMValueRef g) {
  size_t n, en = strlen(c->o->entry_name);
  const char *name = LLVMGetValueName2(g, &n);
  return n > en && strncmp(name, c->o->entry_name, en) == 0 &&
         (strcmp(name + en, "_inputs") == 0 || strcmp(name + en, "_outputs") == 0);
}

static void specialise(cg *c) {
  /* @llvm.used / @llvm.compiler.used keep every QLLC_KERNEL alive; drop them so unused kernels die */
  const char *used[2] = {"llvm.used", "llvm.compiler.used"};
  for (int i = 0; i < 2; i++) {
    LLVMValueRef g = LLVMGetNamedGlobal(c->m, used[i]);
    if (g) LLVMDeleteGlobal(g);
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(c->m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    if (f != c->entry) {
      LLVMSetLinkage(f, LLVMInternalLinkage);
      LLVMSetVisibility(f, LLVMDefaultVisibility);
    }
    set_string_attr(c, f, "target-cpu", c->o->cpu);
    keep_variant_features(c, f);
    set_string_attr(c, f, "tune-cpu", NULL);
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(c->m); g; g = LLVMGetNextGlobal(g)) {
    if (LLVMIsDeclaration(g) || is_io_table(c, g)) continue;
    LLVMLinkage l = LLVMGetLinkage(g);
    if (l == LLVMPrivateLinkage || l == LLVMInternalLinkage || l == LLVMAppendingLinkage) continue;
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetVisibility(g, LLVMDefaultVisibility);
  }
}

static qllc_status optimise(cg *c, LLVMTargetMachineRef tm) {
  char *msg = NULL;
  if (LLVMVerifyModule(c->m, LLVMReturnStatusAction, &msg)) {
    qllc_status st = qllc_fail(c->diag, QLLC_ERR_LLVM, NULL, "the generated LLVM module is invalid: %s",
                               msg ? msg : "no message");
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMDisposeMessage(msg);
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(c->m, c->o->quick ? "globaldce,default<O1>" : "globaldce,default<O3>", tm, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (err) {
    char *em = LLVMGetErrorMessage(err);
    qllc_status st = qllc_fail(c->diag, QLLC_ERR_LLVM, NULL, "LLVM optimisation failed: %s", em);
    LLVMDisposeErrorMessage(em);
    return st;
  }
  return QLLC_OK;
}

qllc_status qllc_llvm_build(const qllc_program *p, const qllc_codegen_opts *o, LLVMContextRef ctx,
                            qllc_llvm_diag *ld, LLVMTargetMachineRef tm, LLVMModuleRef *out, qllc_diag *diag) {
  *out = NULL;
  if (!o || !o->target || !o->cpu)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "codegen options not resolved (no target or CPU)");
  cg c = {.p = p, .o = o, .ctx = ctx, .ld = ld, .diag = diag};
  c.i8 = LLVMInt8TypeInContext(ctx);
  c.i32 = LLVMInt32TypeInContext(ctx);
  c.i64 = LLVMInt64TypeInContext(ctx);
  c.f32 = LLVMFloatTypeInContext(ctx);
  c.ptr = LLVMPointerTypeInContext(ctx, 0);
  c.globals = calloc(p->n_buffers ? (size_t)p->n_buffers : 1, sizeof *c.globals);
  if (!c.globals) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");

  qllc_status st = load_library(&c);
  if (st == QLLC_OK) {
    /* the TargetMachine's layout must be the one the kernels were compiled for */
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    if (strcmp(dl, o->target->data_layout) != 0)
      st = qllc_fail(diag, QLLC_ERR_LLVM, NULL, "LLVM's data layout for %s (cpu %s) is '%s', not '%s'",
                     o->target->triple, o->cpu, dl, o->target->data_layout);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
  }
  if (st == QLLC_OK) st = build_entry(&c);
  if (st == QLLC_OK) {
    build_io_tables(&c);
    specialise(&c);
    st = optimise(&c, tm);
  }
  free(c.globals);
  qllc_user_kernels_free(c.uk);
  if (st != QLLC_OK) {
    if (c.m) LLVMDisposeModule(c.m);
    return st;
  }
  *out = c.m;
  return QLLC_OK;
}

/* ---- public entry points ------------------------------------------------------------------------ */

/* Asks the code generator to report every function's stack frame (the "warn-stack-size" attribute with
 * limit 0 makes each frame a warning that diag_handler counts instead of printing). */
static void ask_frames(LLVMContextRef ctx, LLVMModuleRef m, const qllc_codegen_opts *o, qllc_llvm_diag *ld) {
  ld->entry = o->entry_name;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f))
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateStringAttribute(ctx, "warn-stack-size", 15, "0", 1));
}

/* Builds p for o in a fresh context and calls `use` on the optimised module. */
typedef qllc_status (*module_fn)(LLVMModuleRef m, LLVMTargetMachineRef tm, void *arg, qllc_diag *diag);

static qllc_status with_module(const qllc_program *p, const qllc_codegen_opts *o, module_fn use, void *arg,
                               qllc_diag *diag) {
  LLVMTargetMachineRef tm;
  qllc_status st = qllc_llvm_target_machine(o, &tm, diag);
  if (st != QLLC_OK) return st;
  LLVMContextRef ctx = LLVMContextCreate();
  qllc_llvm_diag ld;
  qllc_llvm_diag_install(ctx, &ld);
  LLVMModuleRef m;
  st = qllc_llvm_build(p, o, ctx, &ld, tm, &m, diag);
  if (st == QLLC_OK) {
    if (o->stack_bytes_out) ask_frames(ctx, m, o, &ld);
    st = use(m, tm, arg, diag);
    if (o->stack_bytes_out) /* at most: the entry's frame, every other function's (each called from it at
                               most once deep), 64 bytes per function for its return address, saved registers
                               and alignment (LLVM's frame size leaves some of them out: 16 to 32 bytes
                               measured), and 256 for memcpy/memset */
      *o->stack_bytes_out = ld.entry_frame + ld.part_frame + ld.other_frames + 64 * (uint64_t)(ld.n_other + 2) + 256;
    LLVMDisposeModule(m);
  }
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return st;
}

static qllc_status emit_object(LLVMModuleRef m, LLVMTargetMachineRef tm, void *arg, qllc_diag *diag) {
  const char *path = arg;
  /* LLVM writes a file by name: a regular file or a new path gets a unique temporary renamed over it,
   * anything else (a device, a FIFO) is written in place, as qllc_outfile does */
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    char *err = NULL;
    qllc_status st = QLLC_OK;
    if (LLVMTargetMachineEmitToFile(tm, m, (char *)path, LLVMObjectFile, &err)) {
      qllc_diag_set_file(diag, path);
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write object file %s: %s", path, err ? err : "unknown error");
    }
    LLVMDisposeMessage(err);
    return st;
  }
  char *real = stat(path, &sb) == 0 ? realpath(path, NULL) : NULL; /* through a symlink: replace its target */
  const char *dest = real ? real : path;
  char *tmp = qllc_outfile_tmp_name(dest);
  if (!tmp) {
    free(real);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  char *err = NULL;
  qllc_status st = QLLC_OK;
  if (LLVMTargetMachineEmitToFile(tm, m, tmp, LLVMObjectFile, &err)) {
    qllc_diag_set_file(diag, path);
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write object file %s: %s", path, err ? err : "unknown error");
    unlink(tmp);
  } else if (rename(tmp, dest) != 0) {
    qllc_diag_set_file(diag, path);
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write object file %s: %s", path, strerror(errno));
    unlink(tmp);
  }
  LLVMDisposeMessage(err);
  free(tmp);
  free(real);
  return st;
}

qllc_status qllc_codegen_object(const qllc_program *p, const qllc_codegen_opts *o, const char *obj_path,
                                qllc_diag *diag) {
  return with_module(p, o, emit_object, (void *)obj_path, diag);
}

static qllc_status print_module(LLVMModuleRef m, LLVMTargetMachineRef tm, void *arg, qllc_diag *diag) {
  char *s = LLVMPrintModuleToString(m);
  char *copy = s ? strdup(s) : NULL;
  LLVMDisposeMessage(s);
  if (!copy) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  *(char **)arg = copy;
  return QLLC_OK;
}

qllc_status qllc_codegen_ir_text(const qllc_program *p, const qllc_codegen_opts *o, char **out, qllc_diag *diag) {
  *out = NULL;
  return with_module(p, o, print_module, out, diag);
}
