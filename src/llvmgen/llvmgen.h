/* src/llvmgen/llvmgen.h: instruction IR -> LLVM IR -> object file or in-process code.
 *
 * The only module that calls the LLVM C API. For each program it: parses the target's embedded kernel
 * bitcode (and any user bitcode) into a fresh module, checks that triples and data layouts agree,
 * builds the entry function `int NAME(const uint8_t *constant_weights, uint8_t *mutable, uint8_t *act)`
 * with one call per instruction (immediates converted to each parameter's type; a mismatch is an
 * error naming the kernel), internalizes everything but the entry, marks kernels always-inline, sets
 * the target CPU and features on every function, runs default<O3>, and then emits an object or hands
 * the module to ORC LLJIT.
 */
#ifndef QLLC_LLVMGEN_H
#define QLLC_LLVMGEN_H

#include "../lower/lower.h"
#include "target.h"

/* The generated entry point. Returns 0 on success. */
typedef int (*qllc_entry_fn)(const uint8_t *constant_weights, uint8_t *mutable_weights, uint8_t *activations);

typedef struct qllc_codegen_opts {
  const qllc_target_desc *target;
  const char *cpu;            /* resolved CPU name (never NULL) */
  const char *features;       /* resolved feature string, may be "" */
  const char *kernel_features; /* what kernel selection reads: the CPU's implied features (the host's for
                                  native), then the user's --features; may be "" */
  int reloc_pic;
  int weights_in_object;      /* 1: CONST buffers are globals in the module; 0: read from constant_weights */
  const char *entry_name;     /* bundle name / symbol prefix */
  const char *const *kernel_files; /* user bitcode */
  int n_kernel_files;
  uint64_t *stack_bytes_out;  /* when not NULL, qllc_codegen_object stores there the stack a call of the
                                 entry needs at most, in bytes, as the code generator laid the frames out */
  const char *report;         /* the precision report, '\n'-separated lines, written into the header's
                                 comment block (each line prefixed " * "); NULL for a float model */
  int quick;                  /* compile fast for a short-lived program (the precision search's runs):
                                 kernels are called, not inlined, and the module gets LLVM's O1 pipeline
                                 and its "less" code generation; the kernels' arithmetic is the same (no
                                 fast-math, no FP contraction), so are the results, only slower */
  int layer_stamps;           /* the instrumented build of `qllc bench`: before the first call and after each
                                 instruction i, the CPU's time counter (x86_64: rdtsc; aarch64: cntvct_el0)
                                 is stored as an int64 at mutable + stamp_offset + 8 * slot, slot 0 the
                                 start and slot i + 1 after instruction i; the caller's mutable region must
                                 hold them. The kernels and their results are the same */
  uint64_t stamp_offset;      /* a multiple of 8 at or past the program's mutable_size */
} qllc_codegen_opts;

/* Fills a codegen options struct for a target name ("x86_64", "aarch64"; NULL: the host's for the JIT,
 * else x86_64), a CPU name (NULL: the target's default; "native": this machine) and a feature string
 * ("+f,-g"; may be NULL), all validated: an unknown CPU or feature is an error listing the valid ones.
 * For the JIT, host = 1 picks the host CPU. The resolved cpu/features strings are interned for the life
 * of the process; position-independent code and weights in the object are the defaults; entry_name,
 * the user's kernel files and the rest are left for the caller. */
qllc_status qllc_codegen_resolve(const char *target, const char *cpu, const char *features, int host,
                                 qllc_codegen_opts *out, qllc_diag *diag);

/* Writes the object file (to a temporary name first, renamed on success). */
qllc_status qllc_codegen_object(const qllc_program *p, const qllc_codegen_opts *o, const char *obj_path,
                                qllc_diag *diag);

/* Writes NAME.h for a program (sizes, offsets, qllc_io tables, the readable type listing). */
qllc_status qllc_bundle_write_header(const qllc_program *p, const qllc_codegen_opts *o, const char *h_path,
                                     qllc_diag *diag);

/* Writes the CONST region as a file (for --weights file), in the layout the program's offsets use. */
qllc_status qllc_bundle_write_weights(const qllc_program *p, const char *path, qllc_diag *diag);

/* The optimised module's textual LLVM IR (for tests and debugging); *out is malloc'ed, free() it. */
qllc_status qllc_codegen_ir_text(const qllc_program *p, const qllc_codegen_opts *o, char **out, qllc_diag *diag);

/* 1 when target t's embedded kernel library defines a function `name` (e.g. "qllc_k_fc_i8_i8_i8").
 * The library is read once per target and cached for the life of the process (has_kernel.c). */
int qllc_codegen_has_kernel(const qllc_target_desc *t, const char *name);

/* The user's --kernels files (user_kernels.c): each is checked to be LLVM bitcode written by the same LLVM
 * major version qllc links (an error naming the file and both versions otherwise), and the names of the
 * functions it defines are recorded. Dispose with qllc_user_kernels_free. */
typedef struct qllc_user_kernels qllc_user_kernels;
qllc_status qllc_user_kernels_load(const char *const *files, int n, qllc_user_kernels **out, qllc_diag *diag);
/* The file defining function `name` (the first one given, when several do), or NULL. */
const char *qllc_user_kernels_find(const qllc_user_kernels *uk, const char *name);
/* "a.bc, b.bc" (or "(no --kernels files given)") into buf, for error messages; returns buf. */
const char *qllc_user_kernels_files(const qllc_user_kernels *uk, char *buf, size_t size);
void qllc_user_kernels_free(qllc_user_kernels *uk);
/* QLLC_OK when data is LLVM bitcode whose IDENTIFICATION block names this LLVM major version (or has
 * none); QLLC_ERR_MISMATCH naming `file`, the producer and both versions otherwise. */
qllc_status qllc_bitcode_check_version(const void *data, size_t size, const char *file, qllc_diag *diag);

typedef struct qllc_jit_code qllc_jit_code;
/* Compiles in-process for the host; *entry is callable until qllc_jit_code_free. */
qllc_status qllc_codegen_jit(const qllc_program *p, const qllc_codegen_opts *o, qllc_jit_code **out,
                             qllc_entry_fn *entry, qllc_diag *diag);
void qllc_jit_code_free(qllc_jit_code *c);
/* The JIT's AMX tile data permission (Linux x86_64: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
 * asked once per process): 1 granted, 0 refused (the JIT then selects no __amx kernel and says so),
 * -1 not applicable (another architecture or OS). */
int qllc_jit_amx_permission(void);

#endif
