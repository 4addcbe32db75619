/* src/driver/pipeline.c: one compile's stages in order: the options checked, the graph a compile starts
 * from (the model's own, a private copy, or the file loaded again for --dump-after), quantization (with
 * the precision map, search.c), lowering for the target CPU (kernel variants, the AMX permission, user
 * kernels, --strict), and the reports `qllc info` prints.
 *
 * Quantization: the model keeps its optimized FLOAT graph. A compile with precision int8/int16
 * quantizes a private in-memory copy of it (qllc_graph_copy; the same hash as the profile's), and
 * profiling, compare and the precision search run instrumented copies (probe.c: the data set, every
 * value made a graph output, the JIT), hashed before the extra outputs are added.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/driver_internal.h"

/* --dump-after names: "import" (the graph as loaded), the graph passes of qllc_graph_optimize (listed by
 * src/ir/pipeline.c, the one place they are named), "quantize" (only with --precision int8/int16), then
 * the program passes. */
static const char *const program_passes[] = {"lower", "memory_plan", NULL};

static int in_list(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return 1;
  return 0;
}

static qllc_status check_dump_after(const char *pass, qllc_diag *diag) {
  if (!pass || !strcmp(pass, "import") || !strcmp(pass, "quantize") || in_list(pass, qllc_graph_pass_names()) ||
      in_list(pass, program_passes))
    return QLLC_OK;
  char list[512] = "import";
  for (const char *const *p = qllc_graph_pass_names(); *p; p++) {
    strcat(list, ", ");
    strcat(list, *p);
  }
  strcat(list, ", quantize");
  for (const char *const *p = program_passes; *p; p++) {
    strcat(list, ", ");
    strcat(list, *p);
  }
  return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown pass '%s' for --dump-after (passes: %s)", pass, list);
}

const char *qllc_drv_host_target(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "";
#endif
}

void *qllc_drv_aligned_buffer(uint64_t size) {
  uint64_t n = (size + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN;
  if (n == 0) n = QLLC_MEM_ALIGN;
  void *p = aligned_alloc(QLLC_MEM_ALIGN, n);
  if (p) memset(p, 0, n);
  return p;
}

static FILE *dump_stream(const qllc_options *o) { return o->dump_stream ? (FILE *)o->dump_stream : stderr; }

/* ---- options ------------------------------------------------------------------------------------ */

/* The public options' defaults (include/qllc.h): the option policy lives here, next to the checks. */
void qllc_options_init(qllc_options *o) {
  memset(o, 0, sizeof *o);
  o->precision = QLLC_PREC_FLOAT;
  o->weight_precision = QLLC_PREC_FLOAT; /* FLOAT here means "same as precision" */
  o->schema = QLLC_SCHEMA_DEFAULT;
  o->calibration = QLLC_CAL_MINMAX;
  o->target = NULL; /* x86_64 */
  o->cpu = NULL;
  o->features = NULL;
  o->reloc_pic = 1;
  o->weights_file = 0;
}

/* ---- quantization ------------------------------------------------------------------------------ */

/* The element kinds the options ask for: activations and weights. */
static qllc_status quant_elems(const qllc_options *o, qllc_elem *act, qllc_elem *w, qllc_diag *diag) {
  if (o->precision != QLLC_PREC_INT8 && o->precision != QLLC_PREC_INT16)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown precision %d", (int)o->precision);
  *act = o->precision == QLLC_PREC_INT8 ? QLLC_ELEM_I8 : QLLC_ELEM_I16;
  qllc_precision wp = o->weight_precision == QLLC_PREC_FLOAT ? o->precision : o->weight_precision;
  if (wp != QLLC_PREC_INT8 && wp != QLLC_PREC_INT16)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown weight precision %d", (int)wp);
  *w = wp == QLLC_PREC_INT8 ? QLLC_ELEM_I8 : QLLC_ELEM_I16;
  if (*act == QLLC_ELEM_I8 && *w == QLLC_ELEM_I16)
    return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL,
                     "int8 activations with int16 weights are not supported (16x8 is --precision int16 "
                     "--weight-precision int8)");
  return QLLC_OK;
}

static qllc_status check_precision(const qllc_options *o, qllc_diag *diag) {
  /* an option that would have no effect is an error, not silently a different compile */
  if (o->n_search_dataset > 0 && !(o->min_sqnr_db > 0))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--search-dataset gives --min-sqnr's samples: it needs --min-sqnr");
  if (o->precision == QLLC_PREC_FLOAT) {
    if (o->weight_precision != QLLC_PREC_FLOAT)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--weight-precision needs --precision int8 or int16");
    if (o->min_sqnr_db > 0)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                       "--min-sqnr raises layers from int8: it needs --precision int8 (and --profile); without "
                       "it the model stays float");
    if ((o->precision_map && *o->precision_map) || (o->precision_map_out && *o->precision_map_out))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                       "--precision-map%s chooses precisions per layer: it needs --precision int8 or int16 (and "
                       "--profile); without it the model stays float",
                       o->precision_map && *o->precision_map ? "" : "-out");
    return QLLC_OK;
  }
  qllc_elem a, w;
  qllc_status st = quant_elems(o, &a, &w, diag);
  if (st != QLLC_OK) return st;
  if (!o->profile_path || !*o->profile_path)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL,
                     "--precision %s needs a profile: run 'qllc profile MODEL --dataset DATA -o profile.yaml' "
                     "and pass --profile profile.yaml",
                     o->precision == QLLC_PREC_INT8 ? "int8" : "int16");
  if ((unsigned)o->schema > QLLC_SCHEMA_DEFAULT)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown schema %d", (int)o->schema);
  if ((unsigned)o->calibration > QLLC_CAL_MSE)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown calibration %d", (int)o->calibration);
  return QLLC_OK;
}

/* qllc_kernel_query for the quantizer: does the kernel catalogue have the kernel
 * qllc_k_<stem>_<in>[_<w>]_<out> node n would call? For a custom op: does a --kernels file define
 * qllc_custom_kernel_name(n, in) (its quantized variant, every computed value of kind in = out)? ctx is
 * the user's kernels (NULL when none). */
static int target_supports(void *ctx, const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out) {
  const qllc_user_kernels *user = ctx;
  char cname[512];
  if (n->op == QLLC_OP_CUSTOM)
    return in == out && user && !qllc_custom_kernel_name(n, in, cname, sizeof cname) &&
           qllc_user_kernels_find(user, cname) != NULL;
  return qllc_lower_has_quant_kernel(n, in, w, out);
}

/* Quantizes a private copy of the optimized graph in place, as the options ask; with a precision map
 * (mixed precision, search.c) the nodes it names at their precision. */
qllc_status qllc_drv_quantize_map(qllc_graph *g, const qllc_options *o, const qllc_prec_map *map, qllc_diag *diag) {
  qllc_quant_opts qo;
  memset(&qo, 0, sizeof qo);
  qllc_status st = quant_elems(o, &qo.act_elem, &qo.w_elem, diag);
  if (st != QLLC_OK) return st;
  if (!qllc_target_lookup(o->target ? o->target : qllc_drv_host_target()))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown target '%s'", o->target ? o->target : "");
  /* int16 activations are symmetric (z = 0) unless a schema is asked for (docs/numerics.md) */
  qo.schema = o->schema != QLLC_SCHEMA_DEFAULT ? o->schema
              : qo.act_elem == QLLC_ELEM_I16     ? QLLC_SCHEMA_SYMMETRIC
                                                 : QLLC_SCHEMA_ASYMMETRIC;
  qo.calib.method = o->calibration;
  qo.per_tensor = o->per_tensor;
  qo.keep_float = o->keep_float;
  qo.n_keep_float = o->n_keep_float;
  qo.quantized_io = o->quantized_io;
  qo.strict = o->strict;
  qo.widen_for_bias = 1;
  qo.map = map && map->n > 0 ? map : NULL;
  qo.schema16 = o->schema != QLLC_SCHEMA_DEFAULT ? o->schema : QLLC_SCHEMA_SYMMETRIC;
  qllc_user_kernels *uk = NULL;
  if (o->n_kernel_files > 0 && (st = qllc_user_kernels_load(o->kernel_files, o->n_kernel_files, &uk, diag)) != QLLC_OK)
    return st;
  qo.supports = target_supports;
  qo.supports_ctx = uk;

  qllc_profile *prof = NULL;
  st = qllc_profile_read(o->profile_path, &prof, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, o->profile_path);
  } else {
    st = qllc_quantize_graph(g, prof, &qo, diag);
    qllc_profile_free(prof);
  }
  qllc_user_kernels_free(uk);
  return st;
}

static qllc_status quantize(qllc_drv_model *m, qllc_graph *g, const qllc_options *o, int host, qllc_diag *diag) {
  qllc_prec_map *map = NULL;
  qllc_status st = qllc_drv_precision_map(m, g, o, host, &map, diag);
  if (st == QLLC_OK && !map) /* the plain choice, written when the compile succeeds */
    st = qllc_drv_precision_map_later(o, NULL, qllc_graph_hash(g), "qllc precision map: every layer at the base precision", diag);
  if (st == QLLC_OK) st = qllc_drv_quantize_map(g, o, map, diag);
  qllc_prec_map_free(map);
  return st;
}

/* ---- the graph a compile starts from ----------------------------------------------------------- */

/* The graph a compile starts from. A float compile without --dump-after uses the model's own graph
 * (optimized at load). Otherwise a copy of it (model_graph), or with --dump-after of a graph pass the
 * model file loaded again and optimized (with the dump, so the user sees every pass), then quantized when a precision is asked for: the model's float graph stays
 * reusable for other options. *owned tells the caller to free the graph. */
qllc_status qllc_drv_graph_for(qllc_drv_model *m, const qllc_options *o, int host, qllc_graph **g, int *owned,
                               qllc_diag *diag) {
  qllc_status st = check_precision(o, diag);
  if (st == QLLC_OK) st = check_dump_after(o->dump_after, diag);
  if (st != QLLC_OK) return st;
  *owned = 0;
  *g = m->graph;
  int quant = o->precision != QLLC_PREC_FLOAT;
  if (!quant && o->dump_after && strcmp(o->dump_after, "quantize") == 0)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--dump-after quantize needs --precision int8 or int16");
  int graph_dump = o->dump_after && !in_list(o->dump_after, program_passes) &&
                   strcmp(o->dump_after, "quantize") != 0;
  if (!quant && !graph_dump) return QLLC_OK;
  qllc_graph *fresh = NULL;
  st = graph_dump ? qllc_drv_reload(m, o->dump_after, dump_stream(o), &fresh, diag) : qllc_drv_model_graph(m, &fresh, diag);
  if (st != QLLC_OK) return st;
  if (quant) {
    st = quantize(m, fresh, o, host, diag);
    if (st == QLLC_OK && o->dump_after && strcmp(o->dump_after, "quantize") == 0) {
      fprintf(dump_stream(o), "# after quantize\n");
      qllc_graph_print(fresh, dump_stream(o));
    }
    if (st != QLLC_OK) {
      qllc_graph_free(fresh);
      if (diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
      return st;
    }
  }
  *g = fresh;
  *owned = 1;
  return QLLC_OK;
}

/* The precision report of a quantized graph as a malloc'ed string ("" never: NULL for float). A
 * pre-quantized model (QDQ pass records, explicit Q/DQ) has one without --precision. */
char *qllc_drv_report_text(const qllc_graph *g, const qllc_options *o) {
  if (o->precision == QLLC_PREC_FLOAT && !qllc_graph_is_quantized(g)) return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  qllc_quant_report_print(g, f, "");
  fclose(f);
  return buf;
}

/* ---- lowering ----------------------------------------------------------------------------------- */

qllc_status qllc_drv_codegen_opts(const qllc_options *o, int host, qllc_codegen_opts *cg, qllc_diag *diag) {
  qllc_status st = qllc_codegen_resolve(o->target, o->cpu, o->features, host, cg, diag);
  if (st != QLLC_OK) return st;
  cg->reloc_pic = o->reloc_pic;
  cg->weights_in_object = !o->weights_file;
  cg->kernel_files = o->kernel_files;
  cg->n_kernel_files = o->n_kernel_files;
  return QLLC_OK;
}

/* Issue 7: every custom node's kernel must be defined by a --kernels file (checked here, before code
 * generation, so the error names the node, the function it needs and the files searched); and every
 * instruction whose kernel a user file defines (a custom op, or an override of a built-in by name) is
 * listed for the reports: "node NAME (OpType): KERNEL: user kernel (FILE)", one line each. *lines is
 * malloc'ed (NULL when no instruction runs a user kernel). */
static qllc_status user_kernel_lines(const qllc_program *p, const qllc_options *o, char **lines, qllc_diag *diag) {
  *lines = NULL;
  int custom = 0;
  for (int i = 0; i < p->n_instrs; i++) custom |= p->instrs[i].node && p->instrs[i].node->op == QLLC_OP_CUSTOM;
  if (!custom && o->n_kernel_files <= 0) return QLLC_OK;
  qllc_user_kernels *uk = NULL;
  qllc_status st = qllc_user_kernels_load(o->kernel_files, o->n_kernel_files, &uk, diag);
  if (st != QLLC_OK) return st;
  size_t len = 0;
  FILE *f = open_memstream(lines, &len);
  if (!f) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  const qllc_instr *prev = NULL;
  for (int i = 0; st == QLLC_OK && i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    const qllc_node *n = in->node;
    const char *file = qllc_user_kernels_find(uk, in->kernel);
    if (!file && n && n->op == QLLC_OP_CUSTOM) {
      char files[1024];
      st = qllc_fail(diag, QLLC_ERR_UNSUPPORTED, n->name,
                     "node '%s' (custom op %s:%s): no function %s in the kernel files (searched: %s); "
                     "docs/kernels.md (\"Custom ops\") says how its name and arguments are made",
                     n->name, n->domain ? n->domain : "", n->op_type ? n->op_type : "?", in->kernel,
                     qllc_user_kernels_files(uk, files, sizeof files));
      break;
    }
    if (!file || (prev && prev->node == n && strcmp(prev->kernel, in->kernel) == 0)) continue;
    prev = in;
    fprintf(f, "node %s (%s): %s: user kernel (%s)\n", n && n->name ? n->name : "(program)",
            n && n->op_type ? n->op_type : n ? qllc_op_name(n->op) : "copy", in->kernel, file);
  }
  if (f) fclose(f);
  qllc_user_kernels_free(uk);
  if (st != QLLC_OK || (*lines && !**lines)) {
    free(*lines);
    *lines = NULL;
  }
  return st;
}

static int user_defines(void *uk, const char *kernel) { return qllc_user_kernels_find(uk, kernel) != NULL; }

/* Lowers g for the CPU that o and host (1: the JIT, on this machine) resolve to, so that each fused
 * layer gets the fastest kernel variant that CPU runs. */
qllc_status qllc_drv_lower(qllc_drv_model *m, qllc_graph *g, const qllc_options *o, int host, qllc_program **p,
                               char **user_lines, qllc_diag *diag) {
  qllc_codegen_opts cg;
  qllc_status st = qllc_drv_codegen_opts(o, host, &cg, diag);
  qllc_lower_target t = {.arch = cg.target ? cg.target->name : NULL, .cpu = cg.cpu, .features = cg.kernel_features};
  if (st == QLLC_OK && host && strstr(cg.kernel_features, "+amx-tile") && qllc_jit_amx_permission() == 0) {
    if (o->strict) {
      st = qllc_fail(diag, QLLC_ERR_STRICT, NULL,
                     "Linux refused the AMX tile data (arch_prctl(ARCH_REQ_XCOMP_PERM)): the __amx kernels cannot "
                     "run (--strict)");
      qllc_diag_set_file(diag, m->path);
      return st;
    }
    /* the JIT on an AMX host whose kernel refuses the tile data permission: no __amx kernel, said why */
    static _Thread_local char f[8300], c[300]; /* read by qllc_lower_for only (the reasons are copied) */
    snprintf(f, sizeof f, "%s,-amx-tile,-amx-int8", cg.kernel_features);
    snprintf(c, sizeof c, "%s (Linux refused the AMX tile data: arch_prctl(ARCH_REQ_XCOMP_PERM))", cg.cpu ? cg.cpu : "?");
    t.features = f, t.cpu = c;
  }
  qllc_user_kernels *uk = NULL;
  if (st == QLLC_OK && o->n_kernel_files > 0) { /* a user's override of a reference kernel keeps its layers */
    st = qllc_user_kernels_load(o->kernel_files, o->n_kernel_files, &uk, diag);
    t.user_defines = user_defines;
    t.user_ctx = uk;
  }
  if (st == QLLC_OK && qllc_drv_tunes(o, host)) { /* float or quantized: both have variants to measure */
    st = qllc_drv_lower_tuned(m, g, o, host, &t, p, diag); /* measured, or timed by the cache file */
  } else if (st == QLLC_OK) {
    int shared = g == m->graph; /* the model's own graph: other threads may be lowering it too */
    if (shared) pthread_mutex_lock(&m->lock);
    st = qllc_lower_for(g, &t, p, diag);
    if (shared) pthread_mutex_unlock(&m->lock);
  }
  qllc_user_kernels_free(uk);
  /* --strict: a variant skipped for a CPU the user named (--cpu, --features) or the JIT's host; the
     default generic CPU of a compile is the portable choice, not a degradation */
  const int named_cpu = host || (o->cpu && *o->cpu) || (o->features && *o->features);
  if (st == QLLC_OK && o->strict && named_cpu && (st = qllc_program_check_portable(*p, diag)) != QLLC_OK) {
    qllc_program_free(*p);
    *p = NULL;
  }
  if (st == QLLC_OK) {
    char *lines = NULL;
    st = user_kernel_lines(*p, o, &lines, diag);
    if (st != QLLC_OK) {
      qllc_program_free(*p);
      *p = NULL;
    }
    if (user_lines) *user_lines = lines;
    else free(lines);
  }
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  if (o->dump_after && in_list(o->dump_after, program_passes)) {
    fprintf(dump_stream(o), "# after %s\n", o->dump_after);
    qllc_program_print(*p, dump_stream(o));
  }
  return QLLC_OK;
}

/* The lowering of instrumented programs: reference kernels (every variant gives the same bits), and the
 * same custom-op check and message as a compile. ctx is the qllc_options. */
qllc_status qllc_drv_instr_lower(void *ctx, qllc_graph *g, qllc_program **p, qllc_diag *diag) {
  qllc_status st = qllc_lower(g, p, diag);
  if (st == QLLC_OK) {
    char *lines = NULL;
    st = user_kernel_lines(*p, ctx, &lines, diag);
    free(lines);
    if (st != QLLC_OK) {
      qllc_program_free(*p);
      *p = NULL;
    }
  }
  return st;
}

/* ---- qllc info -------------------------------------------------------------------------------- */

qllc_status qllc_drv_describe(qllc_drv_model *m, const qllc_options *opts, FILE *f, qllc_diag *diag) {
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = qllc_drv_graph_for(m, opts, 0, &g, &owned, diag);
  if (st != QLLC_OK) {
    qllc_drv_precision_map_finish(st, diag);
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  qllc_program *p = NULL;
  char *user_lines = NULL;
  st = qllc_drv_lower(m, g, opts, 0, &p, &user_lines, diag);
  st = qllc_drv_precision_map_finish(st, diag);
  if (st == QLLC_OK) {
    fprintf(f, "model: %s\n", m->path);
    qllc_codegen_opts cg; /* which CPU this description is for (it decides every fused layer's kernel) */
    if (qllc_drv_codegen_opts(opts, 0, &cg, diag) == QLLC_OK) {
      fprintf(f, "cpu: %s (target %s", cg.cpu, cg.target->name);
      if (!opts->cpu || !*opts->cpu)
        fprintf(f, "; no --cpu: the generic CPU compile uses by default. `qllc run` and --cpu native take this "
                   "machine's CPU and its kernels");
      fprintf(f, ")\n");
    }
    fprintf(f, "\n== graph ==\n");
    qllc_graph_print(g, f);
    fprintf(f, "\n== precision ==\n");
    if (opts->precision == QLLC_PREC_FLOAT && !qllc_graph_is_quantized(g))
      fprintf(f, "all nodes float (%d nodes)\n", g->n_nodes);
    else
      qllc_quant_report_print(g, f, "");
    if (opts->n_kernel_files > 0 || user_lines)
      fprintf(f, "\n== user kernels ==\n%s", user_lines ? user_lines : "none: every node runs a built-in kernel\n");
    free(user_lines);
    char *kr = qllc_program_kernel_report(p);
    if (kr && *kr) fprintf(f, "\n== kernels (fused layers) ==\n%s", kr);
    free(kr);
    char *lr = qllc_program_layout_report(p);
    if (lr) fprintf(f, "\n== layouts ==\n%s", lr);
    free(lr);
    fprintf(f, "\n== memory ==\n");
    fprintf(f, "constant:    %llu bytes\n", (unsigned long long)p->const_size);
    fprintf(f, "mutable:     %llu bytes (inputs and outputs)\n", (unsigned long long)p->mutable_size);
    fprintf(f, "activations: %llu bytes peak (planned), %llu bytes without reuse", (unsigned long long)p->act_size,
            (unsigned long long)p->act_sum);
    if (p->act_sum > 0) fprintf(f, " (%.1f%%)", 100.0 * (double)p->act_size / (double)p->act_sum);
    fprintf(f, "\n\n== program ==\n");
    qllc_program_print(p, f);
    qllc_program_free(p);
  }
  if (owned) qllc_graph_free(g);
  return st;
}

qllc_status qllc_drv_write_dot(qllc_drv_model *m, const qllc_options *opts, FILE *f, qllc_diag *diag) {
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = qllc_drv_graph_for(m, opts, 0, &g, &owned, diag);
  qllc_program *p = NULL;
  if (st == QLLC_OK) st = qllc_drv_lower(m, g, opts, 0, &p, NULL, diag);
  st = qllc_drv_precision_map_finish(st, diag);
  if (st == QLLC_OK && qllc_graph_write_dot(g, p, f) != 0)
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write the graph: %s", strerror(errno));
  if (p) qllc_program_free(p);
  if (owned) qllc_graph_free(g);
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  return st;
}
