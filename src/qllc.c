/* src/qllc.c: the public API (include/qllc.h) on top of the modules.
 *
 * This file only glues: import + graph passes (src/ir), profiling and quantization (src/quant),
 * lowering (src/lower), code generation (src/llvmgen). It owns the handles' lifetimes, the bundle's
 * all-or-nothing file writing, and the JIT's input checking and buffers. It never prints; errors go to
 * the caller's qllc_diag.
 *
 * Quantization: the model keeps its optimized FLOAT graph. A compile with precision int8/int16
 * quantizes a private in-memory copy of it (src/quant/copy.c; the same hash as the profile's), and
 * profiling, compare and the precision search run instrumented copies (src/quant/instrument.c: the data
 * set, every value made a graph output, the JIT), hashed before the extra outputs are added.
 *
 * Lifetimes: a qllc_model holds the optimized float graph. A qllc_jit borrows the model's graph (its
 * program points into it), so the model is reference-counted: qllc_model_free on a model that still has
 * live JITs only marks it, and the last qllc_jit_free releases it.
 */
#define _POSIX_C_SOURCE 200809L
#include "qllc.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "llvmgen/llvmgen.h"
#include "lower/lower.h"
#include "quant/instrument.h"
#include "quant/quant.h"
#include "dot.h"

struct qllc_model {
  char *path;
  qllc_graph *graph; /* after qllc_graph_optimize (options-independent float passes) */
  int refs;          /* live JITs borrowing `graph` */
  int freed;         /* qllc_model_free was called while refs > 0 */
  pthread_mutex_t lock; /* guards refs, freed, and lowering `graph` (which recounts its uses): compiles
                           from one model in several threads take turns there, and only there */
  qllc_tensor *bound; /* graph inputs bound to constants (qllc_model_load_bound): copies, applied on
                         every reload so all graphs of the model agree */
  int n_bound;
  /* the last precision search (--min-sqnr), so describe then compile with the same options (compile
     --verbose) search once: its key (search_key below), the map and the map file's comment; under lock */
  char *search_key;
  qllc_prec_map *search_map;
  char *search_comment;
};

struct qllc_jit {
  qllc_model *model;       /* referenced (see refs) */
  qllc_graph *own_graph;   /* a private graph (made for --dump-after), or NULL */
  qllc_program *prog;
  qllc_jit_code *code;
  qllc_entry_fn entry;
  int n_in, n_out;
  qllc_tensor *in, *out;   /* descriptions (data NULL); names owned */
  /* Run buffers (mutable + activation regions, QLLC_MEM_ALIGN-aligned): a call takes a pair from the
     free list, or allocates one when every pair is in use by another thread, and gives it back when it
     returns; so concurrent qllc_jit_run calls never share bytes, and a single thread reuses one pair. */
  pthread_mutex_t lock;
  struct run_bufs *free_bufs;
};

typedef struct run_bufs {
  struct run_bufs *next;
  uint8_t *mut, *act;
} run_bufs;

/* ---- small helpers ---------------------------------------------------------------------------- */

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void *aligned_buffer(uint64_t size) {
  uint64_t n = (size + QLLC_MEM_ALIGN - 1) / QLLC_MEM_ALIGN * QLLC_MEM_ALIGN;
  if (n == 0) n = QLLC_MEM_ALIGN;
  void *p = aligned_alloc(QLLC_MEM_ALIGN, n);
  if (p) memset(p, 0, n);
  return p;
}

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

static const char *host_target(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "";
#endif
}

static FILE *dump_stream(const qllc_options *o) { return o->dump_stream ? (FILE *)o->dump_stream : stderr; }

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
  if (o->precision == QLLC_PREC_FLOAT) {
    if (o->weight_precision != QLLC_PREC_FLOAT)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--weight-precision needs --precision int8 or int16");
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

/* What the quantizer's kernel query consults: the target's library, and the user's --kernels files
 * (NULL when none) for custom ops. */
typedef struct kernel_lookup {
  const qllc_target_desc *target;
  const qllc_user_kernels *user;
} kernel_lookup;

/* qllc_kernel_query for the quantizer: is there a kernel qllc_k_<stem>_<in>[_<w>]_<out> in the target's
 * library? For a custom op: does a --kernels file define qllc_custom_kernel_name(n, in) (its quantized
 * variant, every computed value of kind in = out)? ctx is a kernel_lookup. */
static int target_supports(void *ctx, const qllc_node *n, qllc_elem in, qllc_elem w, qllc_elem out) {
  const kernel_lookup *kl = ctx;
  const qllc_target_desc *t = kl->target;
  char cname[512];
  if (n->op == QLLC_OP_CUSTOM)
    return in == out && kl->user && !qllc_custom_kernel_name(n, in, cname, sizeof cname) &&
           qllc_user_kernels_find(kl->user, cname) != NULL;
  char name[160];
  if (qllc_lower_quant_kernel_name(n, in, w, out, name, sizeof name) != 0) return 0;
  return qllc_codegen_has_kernel(t, name);
}

/* Quantizes a private copy of the optimized graph in place, as the options ask; with a precision map
 * (mixed precision, src/quant/mixed.c) the nodes it names at their precision. */
static qllc_status quantize_map(qllc_graph *g, const qllc_options *o, const qllc_prec_map *map, qllc_diag *diag) {
  qllc_quant_opts qo;
  memset(&qo, 0, sizeof qo);
  qllc_status st = quant_elems(o, &qo.act_elem, &qo.w_elem, diag);
  if (st != QLLC_OK) return st;
  const qllc_target_desc *t = qllc_target_lookup(o->target ? o->target : host_target());
  if (!t) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown target '%s'", o->target ? o->target : "");
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
  kernel_lookup kl = {t, uk};
  qo.supports = target_supports;
  qo.supports_ctx = &kl;

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

static qllc_status quantize_cb(void *ctx, qllc_graph *g, const qllc_prec_map *map, qllc_diag *diag) {
  return quantize_map(g, ctx, map, diag);
}

static qllc_status instr_lower(void *ctx, qllc_graph *g, qllc_program **p, qllc_diag *diag);
static qllc_status search_samples(qllc_model *m, const qllc_options *o, const char *const *specs, int n_specs,
                                  int64_t max_samples, qllc_dataset **ds, int *drawn, qllc_diag *diag);
static qllc_status model_graph(qllc_model *m, qllc_graph **out, qllc_diag *diag);

/* What a precision search depends on, as one string (NULL on OOM): two calls with the same key get the
 * same map. */
static char *search_key(const qllc_options *o) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fprintf(f, "%.17g|%d|%d|%d|%d|%d|%s", o->min_sqnr_db, (int)o->precision, (int)o->weight_precision, (int)o->schema,
          (int)o->calibration, o->per_tensor, o->profile_path ? o->profile_path : "");
  for (int i = 0; i < o->n_keep_float; i++) fprintf(f, "|k:%s", o->keep_float[i]);
  for (int i = 0; i < o->n_kernel_files; i++) fprintf(f, "|u:%s", o->kernel_files[i]);
  for (int i = 0; i < o->n_search_dataset; i++) fprintf(f, "|d:%s", o->search_dataset[i]);
  fclose(f);
  return buf;
}

/* The precision map a quantized compile uses: replayed from opts->precision_map, or searched for
 * opts->min_sqnr_db (then written to opts->precision_map_out with the search's summary as comments);
 * NULL when neither is asked. g: the clean graph (hashed). */
static qllc_status precision_map(qllc_model *m, const qllc_graph *g, const qllc_options *o, qllc_prec_map **map,
                                 qllc_diag *diag) {
  *map = NULL;
  if (o->precision_map && *o->precision_map) {
    if (o->min_sqnr_db > 0)
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--min-sqnr and --precision-map: give one (the map replays a search)");
    return qllc_prec_map_read(o->precision_map, qllc_graph_hash(g), map, diag);
  }
  if (!(o->min_sqnr_db > 0)) return QLLC_OK;
  if (o->precision != QLLC_PREC_INT8 || (o->weight_precision != QLLC_PREC_FLOAT && o->weight_precision != QLLC_PREC_INT8))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--min-sqnr starts from --precision int8 and raises layers from there");
  qllc_options so = *o;
  so.quantized_io = 0; /* measured on float inputs and outputs */
  so.target = NULL;
  so.dump_after = NULL;
  qllc_graph *fg = NULL, *base = NULL;
  qllc_dataset *ds = NULL;
  char *summary = NULL, *key = search_key(o), *comment = NULL;
  int drawn = 0;
  qllc_status st = QLLC_OK;
  pthread_mutex_lock(&m->lock); /* the same search as the last one: its answer */
  if (key && m->search_key && !strcmp(key, m->search_key) && m->search_map) {
    *map = qllc_prec_map_copy(m->search_map);
    comment = m->search_comment ? xstrdup(m->search_comment) : NULL;
    if (!*map) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  pthread_mutex_unlock(&m->lock);
  if (*map || st != QLLC_OK) {
    if (st == QLLC_OK && o->precision_map_out && *o->precision_map_out)
      st = qllc_prec_map_write(o->precision_map_out, *map, qllc_graph_hash(g), comment, diag);
    free(comment);
    free(key);
    if (st != QLLC_OK) {
      qllc_prec_map_free(*map);
      *map = NULL;
    }
    return st;
  }
  st = model_graph(m, &fg, diag);
  if (st == QLLC_OK) st = qllc_quant_graph_copy(fg, &base, diag);
  if (st == QLLC_OK) st = quantize_map(base, &so, NULL, diag);
  if (st == QLLC_OK) st = search_samples(m, &so, o->search_dataset, o->n_search_dataset, 0, &ds, &drawn, diag);
  if (st == QLLC_OK) {
    qllc_probe_hooks h = {instr_lower, &so, &so};
    st = qllc_precision_search(fg, base, ds, o->min_sqnr_db, quantize_cb, &so, &h, map, &summary, diag);
  }
  if (st == QLLC_OK) {
    size_t n = (summary ? strlen(summary) : 0) + strlen(m->path) + 256;
    comment = malloc(n);
    if (!comment) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    else
      snprintf(comment, n, "qllc precision map for %s (replay: --precision-map FILE)\n%s%s", m->path,
               summary ? summary : "", drawn ? "(samples drawn from the profile's input histograms)\n" : "");
  }
  if (st == QLLC_OK && o->precision_map_out && *o->precision_map_out)
    st = qllc_prec_map_write(o->precision_map_out, *map, qllc_graph_hash(g), comment, diag);
  if (st == QLLC_OK && key) { /* remember it */
    qllc_prec_map *copy = qllc_prec_map_copy(*map);
    if (copy) {
      pthread_mutex_lock(&m->lock);
      free(m->search_key);
      free(m->search_comment);
      qllc_prec_map_free(m->search_map);
      m->search_key = key, m->search_map = copy, m->search_comment = comment;
      key = comment = NULL;
      pthread_mutex_unlock(&m->lock);
    }
  }
  free(key);
  free(comment);
  free(summary);
  qllc_dataset_free(ds);
  if (base) qllc_graph_free(base);
  if (fg) qllc_graph_free(fg);
  if (st != QLLC_OK) {
    qllc_prec_map_free(*map);
    *map = NULL;
  }
  return st;
}

static qllc_status quantize(qllc_model *m, qllc_graph *g, const qllc_options *o, qllc_diag *diag) {
  qllc_prec_map *map = NULL;
  qllc_status st = precision_map(m, g, o, &map, diag);
  if (st == QLLC_OK && !map && o->precision_map_out && *o->precision_map_out) { /* the plain choice, written */
    qllc_prec_map empty = {0, NULL, NULL};
    st = qllc_prec_map_write(o->precision_map_out, &empty, qllc_graph_hash(g), "qllc precision map: every layer at the base precision", diag);
  }
  if (st == QLLC_OK) st = quantize_map(g, o, map, diag);
  qllc_prec_map_free(map);
  return st;
}

/* Loads the model file again and runs the float pipeline on it (dumping after a graph pass when asked):
 * a private graph equal to the model's, which the caller may change and must free. */
static qllc_status reload(qllc_model *m, const char *dump_after, FILE *dump, qllc_graph **out, qllc_diag *diag) {
  qllc_graph *fresh = NULL;
  *out = NULL;
  qllc_status st = qllc_onnx_load_bound(m->path, m->bound, m->n_bound, &fresh, diag);
  if (st == QLLC_OK && dump_after && strcmp(dump_after, "import") == 0) {
    fprintf(dump, "# after import\n");
    qllc_graph_print(fresh, dump);
  }
  if (st == QLLC_OK) st = qllc_graph_optimize(fresh, dump_after, dump, diag);
  if (st == QLLC_OK && qllc_graph_has_qdq(fresh)) st = qllc_pass_qdq(fresh, diag); /* pre-quantized model */
  if (st != QLLC_OK) {
    if (fresh) qllc_graph_free(fresh);
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  *out = fresh;
  return QLLC_OK;
}

/* A private copy of the model's optimized graph, which the caller may change and must free: copied in
 * memory (src/quant/copy.c), or, for a pre-quantized model whose records cannot be copied, loaded from
 * the file again. */
static qllc_status model_graph(qllc_model *m, qllc_graph **out, qllc_diag *diag) {
  pthread_mutex_lock(&m->lock); /* a float compile may be lowering the model's graph (recounting uses) */
  qllc_status st = qllc_quant_graph_copy(m->graph, out, NULL);
  pthread_mutex_unlock(&m->lock);
  if (st == QLLC_ERR_UNSUPPORTED) return reload(m, NULL, NULL, out, diag);
  if (st != QLLC_OK) return qllc_fail(diag, st, NULL, "out of memory copying the model's graph");
  return QLLC_OK;
}

/* The graph a compile starts from. A float compile without --dump-after uses the model's own graph
 * (optimized at load). Otherwise a copy of it (model_graph), or with --dump-after of a graph pass the
 * model file loaded again and optimized (with the dump, so the user sees every pass), then quantized when a precision is asked for: the model's float graph stays
 * reusable for other options. *owned tells the caller to free the graph. */
static qllc_status graph_for(qllc_model *m, const qllc_options *o, qllc_graph **g, int *owned, qllc_diag *diag) {
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
  st = graph_dump ? reload(m, o->dump_after, dump_stream(o), &fresh, diag) : model_graph(m, &fresh, diag);
  if (st != QLLC_OK) return st;
  if (quant) {
    st = quantize(m, fresh, o, diag);
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
static char *report_text(const qllc_graph *g, const qllc_options *o) {
  if (o->precision == QLLC_PREC_FLOAT && !qllc_graph_is_quantized(g)) return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  qllc_quant_report_print(g, f, "");
  fclose(f);
  return buf;
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
static qllc_status lower_graph(qllc_model *m, qllc_graph *g, const qllc_options *o, int host, qllc_program **p,
                               char **user_lines, qllc_diag *diag) {
  qllc_codegen_opts cg;
  qllc_status st = qllc_codegen_resolve(o, host, &cg, diag);
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
  if (st == QLLC_OK) {
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

/* ---- options and models ----------------------------------------------------------------------- */

const char *qllc_version(void) { return QLLC_VERSION; }

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

static void free_bound(qllc_tensor *b, int n) {
  for (int i = 0; b && i < n; i++) qllc_tensor_free(&b[i]);
  free(b);
}

/* Deep copies of the bindings (name and data). NULL on OOM (or when n is 0). */
static qllc_tensor *copy_bound(const qllc_tensor *b, int n) {
  if (n <= 0) return NULL;
  qllc_tensor *c = calloc((size_t)n, sizeof *c);
  if (!c) return NULL;
  for (int i = 0; i < n; i++) {
    c[i] = b[i];
    c[i].name = NULL, c[i].data = NULL;
    size_t bytes = qllc_elem_size(b[i].elem);
    for (uint32_t k = 0; k < b[i].rank && k < QLLC_MAX_RANK; k++) bytes *= b[i].dims[k] > 0 ? (size_t)b[i].dims[k] : 0;
    c[i].name = xstrdup(b[i].name ? b[i].name : "");
    c[i].data = malloc(bytes ? bytes : 1);
    if (!c[i].name || !c[i].data) {
      free_bound(c, i + 1);
      return NULL;
    }
    if (bytes && b[i].data) memcpy(c[i].data, b[i].data, bytes);
  }
  return c;
}

qllc_status qllc_model_load(const char *path, qllc_model **out, qllc_diag *diag) {
  return qllc_model_load_bound(path, NULL, 0, out, diag);
}

qllc_status qllc_model_load_bound(const char *path, const qllc_tensor *bound, int n_bound, qllc_model **out,
                                  qllc_diag *diag) {
  *out = NULL;
  if (!path) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model path given");
  if (n_bound < 0 || (n_bound > 0 && !bound)) {
    qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_model_load_bound: no bindings given for n_bound = %d", n_bound);
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_INVALID;
  }
  qllc_graph *g = NULL;
  qllc_status st = qllc_onnx_load_bound(path, bound, n_bound, &g, diag);
  if (st == QLLC_OK) st = qllc_graph_optimize(g, NULL, NULL, diag);
  if (st == QLLC_OK && qllc_graph_has_qdq(g)) st = qllc_pass_qdq(g, diag); /* pre-quantized model */
  if (st != QLLC_OK) {
    if (g) qllc_graph_free(g);
    qllc_diag_set_file(diag, path);
    return st;
  }
  qllc_model *m = calloc(1, sizeof *m);
  if (!m || !(m->path = xstrdup(path)) || (n_bound > 0 && !(m->bound = copy_bound(bound, n_bound)))) {
    if (m) free(m->path);
    free(m);
    qllc_graph_free(g);
    qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    qllc_diag_set_file(diag, path);
    return QLLC_ERR_NOMEM;
  }
  m->n_bound = n_bound;
  m->graph = g;
  pthread_mutex_init(&m->lock, NULL);
  *out = m;
  return QLLC_OK;
}

static void model_release(qllc_model *m) {
  free(m->search_key);
  free(m->search_comment);
  qllc_prec_map_free(m->search_map);
  pthread_mutex_destroy(&m->lock);
  qllc_graph_free(m->graph);
  free_bound(m->bound, m->n_bound);
  free(m->path);
  free(m);
}

void qllc_model_free(qllc_model *m) {
  if (!m) return;
  pthread_mutex_lock(&m->lock);
  int busy = m->refs > 0;
  if (busy) m->freed = 1;
  pthread_mutex_unlock(&m->lock);
  if (!busy) model_release(m);
}

qllc_status qllc_model_describe(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag) {
  FILE *f = stream ? (FILE *)stream : stdout;
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, m->path);
    return st;
  }
  qllc_program *p = NULL;
  char *user_lines = NULL;
  st = lower_graph(m, g, opts, 0, &p, &user_lines, diag);
  if (st == QLLC_OK) {
    fprintf(f, "model: %s\n", m->path);
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

qllc_status qllc_model_write_dot(qllc_model *m, const qllc_options *opts, void *stream, qllc_diag *diag) {
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  qllc_program *p = NULL;
  if (st == QLLC_OK) st = lower_graph(m, g, opts, 0, &p, NULL, diag);
  if (st == QLLC_OK && qllc_graph_write_dot(g, p, stream ? (FILE *)stream : stdout) != 0)
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write the graph: %s", strerror(errno));
  if (p) qllc_program_free(p);
  if (owned) qllc_graph_free(g);
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  return st;
}

/* ---- bundles ---------------------------------------------------------------------------------- */

static int is_c_identifier(const char *s) {
  if (!s || !*s || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return 0;
  return 1;
}

/* *report (malloc'ed or NULL) followed by "TITLE:\n" and lines; 0, or -1 on out of memory (*report kept). */
static int append_section(char **report, const char *title, const char *lines) {
  size_t n = (*report ? strlen(*report) : 0) + strlen(title) + strlen(lines) + 8;
  char *r = malloc(n);
  if (!r) return -1;
  snprintf(r, n, "%s%s%s:\n%s", *report ? *report : "", *report ? "\n" : "", title, lines);
  free(*report);
  *report = r;
  return 0;
}

enum { B_OBJ, B_HDR, B_WEIGHTS, B_COUNT };
static const char *const bundle_ext[B_COUNT] = {".o", ".h", ".weights.bin"};

qllc_status qllc_compile_bundle(qllc_model *m, const qllc_options *opts, const char *dir, const char *name,
                                qllc_diag *diag) {
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  if (!dir || !*dir) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no output directory given");
  if (!is_c_identifier(name))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "bundle name '%s' is not a C identifier", name ? name : "");

  /* Everything that can fail without touching the disk comes first. */
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_program *p = NULL;
  char *report = NULL;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  char *user_lines = NULL;
  if (st == QLLC_OK) st = lower_graph(m, g, opts, 0, &p, &user_lines, diag);
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  uint64_t stack_bytes = 0; /* measured while the object is compiled, written into the header */
  if (st == QLLC_OK) {
    st = qllc_codegen_resolve(opts, 0, &cg, diag);
    cg.stack_bytes_out = &stack_bytes;
    cg.entry_name = name;
    cg.reloc_pic = opts->reloc_pic;
    cg.weights_in_object = !opts->weights_file;
    if ((opts->precision != QLLC_PREC_FLOAT || qllc_graph_is_quantized(g)) && !(report = report_text(g, opts)))
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    /* the header's report also says which nodes run user kernels, and which kernel variant each fused
       layer runs */
    if (st == QLLC_OK && user_lines && append_section(&report, "user kernels", user_lines) != 0)
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    free(user_lines);
    char *kr = st == QLLC_OK ? qllc_program_kernel_report(p) : NULL;
    if (kr && *kr && append_section(&report, "kernels", kr) != 0)
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    free(kr);
    cg.report = report;
  }
  if (st != QLLC_OK) goto done;

  /* The directory: created when missing (one level only). */
  int created = 0;
  struct stat sb;
  if (stat(dir, &sb) == 0) {
    if (!S_ISDIR(sb.st_mode)) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "output directory '%s' is not a directory", dir);
      qllc_diag_set_file(diag, dir);
      goto done;
    }
  } else if (mkdir(dir, 0777) == 0) {
    created = 1;
  } else {
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot create output directory '%s': %s", dir, strerror(errno));
    qllc_diag_set_file(diag, dir);
    goto done;
  }

  /* Write every file under a hidden temporary name, then rename them all: a failure anywhere leaves
   * nothing new in DIR. */
  char tmp[B_COUNT][4096], fin[B_COUNT][4096];
  int written[B_COUNT] = {0}, renamed[B_COUNT] = {0};
  int want[B_COUNT] = {1, 1, opts->weights_file != 0};
  for (int i = 0; i < B_COUNT; i++) {
    int n1 = snprintf(tmp[i], sizeof tmp[i], "%s/.%s.tmp-%ld%s", dir, name, (long)getpid(), bundle_ext[i]);
    int n2 = snprintf(fin[i], sizeof fin[i], "%s/%s%s", dir, name, bundle_ext[i]);
    if (n1 >= (int)sizeof tmp[i] || n2 >= (int)sizeof fin[i]) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "output path too long");
      qllc_diag_set_file(diag, dir);
      goto cleanup;
    }
  }
  for (int i = 0; i < B_COUNT && st == QLLC_OK; i++) {
    if (!want[i]) continue;
    written[i] = 1; /* a writer may leave a partial file behind on failure */
    if (i == B_OBJ) st = qllc_codegen_object(p, &cg, tmp[i], diag);
    if (i == B_HDR) st = qllc_bundle_write_header(p, &cg, tmp[i], diag);
    if (i == B_WEIGHTS) st = qllc_bundle_write_weights(p, tmp[i], diag);
    if (st != QLLC_OK && diag && strncmp(diag->file, tmp[i], strlen(tmp[i])) == 0) {
      /* name the bundle file the user asked for, not our temporary name */
      diag->file[0] = '\0';
      qllc_diag_set_file(diag, fin[i]);
    }
  }
  for (int i = 0; i < B_COUNT && st == QLLC_OK; i++) {
    if (!want[i]) continue;
    if (rename(tmp[i], fin[i]) != 0) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write '%s': %s", fin[i], strerror(errno));
      qllc_diag_set_file(diag, fin[i]);
    } else {
      renamed[i] = 1;
    }
  }

cleanup:
  if (st != QLLC_OK) {
    for (int i = 0; i < B_COUNT; i++) {
      if (written[i] && !renamed[i]) unlink(tmp[i]);
      if (renamed[i]) unlink(fin[i]);
    }
    if (created) rmdir(dir);
  }

done:
  free(report);
  if (p) qllc_program_free(p);
  if (owned) qllc_graph_free(g);
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  return st;
}

/* ---- JIT -------------------------------------------------------------------------------------- */

static int describe_io(const qllc_io_desc *io, qllc_tensor *t) {
  const qllc_value *v = io->value;
  memset(t, 0, sizeof *t);
  t->name = xstrdup(v->name);
  t->elem = (qllc_elem_kind)v->elem;
  t->rank = (uint32_t)v->rank;
  for (int d = 0; d < v->rank && d < QLLC_MAX_RANK; d++) t->dims[d] = v->dims[d];
  t->scale = v->elem == QLLC_ELEM_F32 ? 1.0f : v->scale;
  t->zero_point = v->elem == QLLC_ELEM_F32 ? 0 : v->zero_point;
  t->data = NULL;
  return t->name != NULL;
}

void qllc_jit_free(qllc_jit *j) {
  if (!j) return;
  if (j->code) qllc_jit_code_free(j->code);
  if (j->prog) qllc_program_free(j->prog);
  if (j->own_graph) qllc_graph_free(j->own_graph);
  for (int i = 0; j->in && i < j->n_in; i++) free(j->in[i].name);
  for (int i = 0; j->out && i < j->n_out; i++) free(j->out[i].name);
  free(j->in);
  free(j->out);
  for (run_bufs *b = j->free_bufs, *next; b; b = next) {
    next = b->next;
    free(b->mut);
    free(b->act);
    free(b);
  }
  pthread_mutex_destroy(&j->lock);
  if (j->model) {
    pthread_mutex_lock(&j->model->lock);
    int last = --j->model->refs == 0 && j->model->freed;
    pthread_mutex_unlock(&j->model->lock);
    if (last) model_release(j->model);
  }
  free(j);
}

static run_bufs *new_run_bufs(qllc_jit *j) {
  run_bufs *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->mut = aligned_buffer(j->prog->mutable_size);
  b->act = aligned_buffer(j->prog->act_size);
  if (!b->mut || !b->act) {
    free(b->mut);
    free(b->act);
    free(b);
    return NULL;
  }
  return b;
}

static run_bufs *take_run_bufs(qllc_jit *j) {
  pthread_mutex_lock(&j->lock);
  run_bufs *b = j->free_bufs;
  if (b) j->free_bufs = b->next;
  pthread_mutex_unlock(&j->lock);
  return b ? b : new_run_bufs(j);
}

static void give_run_bufs(qllc_jit *j, run_bufs *b) {
  pthread_mutex_lock(&j->lock);
  b->next = j->free_bufs;
  j->free_bufs = b;
  pthread_mutex_unlock(&j->lock);
}

qllc_status qllc_jit_compile(qllc_model *m, const qllc_options *opts, qllc_jit **out, qllc_diag *diag) {
  *out = NULL;
  qllc_options dflt;
  if (!opts) {
    qllc_options_init(&dflt);
    opts = &dflt;
  }
  if (opts->target && strcmp(opts->target, host_target()) != 0) {
    qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "the JIT runs on the host (%s), not on target '%s'",
              host_target(), opts->target);
    qllc_diag_set_file(diag, m->path);
    return QLLC_ERR_UNSUPPORTED;
  }
  qllc_jit *j = calloc(1, sizeof *j);
  if (!j) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  pthread_mutex_init(&j->lock, NULL);
  j->model = m;
  pthread_mutex_lock(&m->lock);
  m->refs++;
  pthread_mutex_unlock(&m->lock);

  qllc_graph *g = NULL;
  int owned = 0;
  qllc_status st = graph_for(m, opts, &g, &owned, diag);
  if (st == QLLC_OK && owned) j->own_graph = g;
  if (st == QLLC_OK) st = lower_graph(m, g, opts, 1, &j->prog, NULL, diag);
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  if (st == QLLC_OK) {
    st = qllc_codegen_resolve(opts, 1, &cg, diag);
    cg.weights_in_object = 1; /* the JIT passes no constant_weights */
    if (!cg.entry_name) cg.entry_name = "qllc_jit_entry";
  }
  if (st == QLLC_OK) st = qllc_codegen_jit(j->prog, &cg, &j->code, &j->entry, diag);
  if (st == QLLC_OK) {
    j->n_in = j->prog->n_inputs;
    j->n_out = j->prog->n_outputs;
    j->in = calloc(j->n_in ? j->n_in : 1, sizeof *j->in);
    j->out = calloc(j->n_out ? j->n_out : 1, sizeof *j->out);
    run_bufs *b = new_run_bufs(j);
    if (b) give_run_bufs(j, b);
    int ok = j->in && j->out && b;
    for (int i = 0; ok && i < j->n_in; i++) ok = describe_io(&j->prog->inputs[i], &j->in[i]);
    for (int i = 0; ok && i < j->n_out; i++) ok = describe_io(&j->prog->outputs[i], &j->out[i]);
    if (!ok) st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  if (st != QLLC_OK) {
    if (diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
    qllc_jit_free(j);
    return st;
  }
  *out = j;
  return QLLC_OK;
}

int qllc_jit_num_inputs(const qllc_jit *j) { return j ? j->n_in : 0; }
int qllc_jit_num_outputs(const qllc_jit *j) { return j ? j->n_out : 0; }
const qllc_tensor *qllc_jit_input(const qllc_jit *j, int i) {
  return j && i >= 0 && i < j->n_in ? &j->in[i] : NULL;
}
const qllc_tensor *qllc_jit_output(const qllc_jit *j, int i) {
  return j && i >= 0 && i < j->n_out ? &j->out[i] : NULL;
}

/* "f32<1 x 3 x 8 x 8>" for a public tensor description. */
static const char *tensor_type_str(const qllc_tensor *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s<", qllc_elem_name(t->elem));
  for (uint32_t d = 0; d < t->rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? " x %lld" : "%lld", (long long)t->dims[d]);
  if (n < size) snprintf(buf + n, size - n, ">");
  return buf;
}

static int same_type(const qllc_tensor *want, const qllc_tensor *got) {
  if (want->elem != got->elem || want->rank != got->rank) return 0;
  for (uint32_t d = 0; d < want->rank; d++)
    if (want->dims[d] != got->dims[d]) return 0;
  return 1;
}

static uint64_t tensor_bytes(const qllc_tensor *t) {
  uint64_t n = qllc_elem_size(t->elem);
  for (uint32_t d = 0; d < t->rank; d++) n *= (uint64_t)t->dims[d];
  return n;
}

qllc_status qllc_jit_run(qllc_jit *j, const qllc_tensor *inputs, int n_inputs, qllc_tensor *outputs,
                         qllc_diag *diag) {
  /* Match: a named tensor goes to the input of that name; an unnamed one to the input at its position. */
  const qllc_tensor *match[64];
  if (j->n_in > 64) return qllc_fail(diag, QLLC_ERR_UNSUPPORTED, NULL, "more than 64 model inputs");
  for (int i = 0; i < j->n_in; i++) match[i] = NULL;
  for (int k = 0; k < n_inputs; k++) {
    const qllc_tensor *t = &inputs[k];
    int at = -1;
    if (t->name) {
      for (int i = 0; i < j->n_in; i++)
        if (strcmp(j->in[i].name, t->name) == 0) at = i;
      if (at < 0) {
        char names[512] = "";
        for (int i = 0; i < j->n_in; i++) {
          if (strlen(names) + strlen(j->in[i].name) + 4 >= sizeof names) break;
          if (i) strcat(names, ", ");
          strcat(names, j->in[i].name);
        }
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "the model has no input named '%s' (inputs: %s)", t->name,
                         names);
      }
    } else {
      if (k >= j->n_in)
        return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "%d inputs given, the model has %d", n_inputs, j->n_in);
      at = k;
    }
    if (match[at]) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' given twice", j->in[at].name);
    match[at] = t;
  }
  for (int i = 0; i < j->n_in; i++) {
    char want[160], got[160];
    if (!match[i]) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "missing input '%s'", j->in[i].name);
    if (!same_type(&j->in[i], match[i]))
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s': expected %s, got %s", j->in[i].name,
                       tensor_type_str(&j->in[i], want, sizeof want), tensor_type_str(match[i], got, sizeof got));
    if (!match[i]->data) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "input '%s' has no data", j->in[i].name);
  }

  run_bufs *rb = take_run_bufs(j);
  if (!rb) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  for (int i = 0; i < j->n_in; i++) {
    const qllc_buffer *b = j->prog->inputs[i].buf;
    uint64_t n = tensor_bytes(&j->in[i]);
    memcpy(rb->mut + b->offset, match[i]->data, n < b->size ? n : b->size);
  }
  int rc = j->entry(NULL, rb->mut, rb->act);
  if (rc != 0) {
    give_run_bufs(j, rb);
    return qllc_fail(diag, QLLC_ERR_RUNTIME, NULL, "the compiled model returned error %d", rc);
  }

  for (int i = 0; i < j->n_out; i++) memset(&outputs[i], 0, sizeof outputs[i]);
  for (int i = 0; i < j->n_out; i++) {
    const qllc_buffer *b = j->prog->outputs[i].buf;
    qllc_tensor *o = &outputs[i];
    *o = j->out[i];
    uint64_t n = tensor_bytes(&j->out[i]);
    o->name = xstrdup(j->out[i].name);
    o->data = malloc(n ? n : 1);
    if (!o->name || !o->data) {
      for (int k = 0; k <= i; k++) qllc_tensor_free(&outputs[k]);
      give_run_bufs(j, rb);
      return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
    memcpy(o->data, rb->mut + b->offset, n < b->size ? n : b->size);
  }
  give_run_bufs(j, rb);
  return QLLC_OK;
}

/* ---- profiling (the loop is src/quant/instrument.c) ------------------------------------------- */

/* The lowering of instrumented programs: reference kernels (every variant gives the same bits), and the
 * same custom-op check and message as a compile. ctx is the qllc_options. */
static qllc_status instr_lower(void *ctx, qllc_graph *g, qllc_program **p, qllc_diag *diag) {
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

qllc_status qllc_profile_dataset(qllc_model *m, const char *const *dataset_specs, int n_specs, int bins,
                                 const char *out_yaml, qllc_progress_fn progress, void *progress_ctx,
                                 qllc_profile_summary *summary, qllc_diag *diag) {
  return qllc_profile_dataset_opts(m, NULL, dataset_specs, n_specs, bins, out_yaml, progress, progress_ctx, summary,
                                   diag);
}

qllc_status qllc_profile_dataset_opts(qllc_model *m, const qllc_options *opts, const char *const *dataset_specs,
                                      int n_specs, int bins, const char *out_yaml, qllc_progress_fn progress,
                                      void *progress_ctx, qllc_profile_summary *summary, qllc_diag *diag) {
  qllc_options dflt;
  qllc_options_init(&dflt);
  if (opts) { /* only the user kernels matter to the float run (issue 7) */
    dflt.kernel_files = opts->kernel_files;
    dflt.n_kernel_files = opts->n_kernel_files;
  }
  if (summary) memset(summary, 0, sizeof *summary);
  if (!m) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no model");
  if (!out_yaml || !*out_yaml) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no profile output file given");
  if (n_specs <= 0 || !dataset_specs) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "no data set given");
  if (bins < 0 || (bins > 0 && (bins < 16 || bins % 2 != 0 || bins > (1 << 24))))
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "--bins %d: the histogram needs an even count >= 16", bins);
  if (bins == 0) bins = QLLC_HIST_DEFAULT_BINS;

  qllc_graph *g = NULL;
  qllc_profile *prof = NULL;
  char *tmp = NULL;
  qllc_dataset *ds = NULL;
  /* the data set, checked before anything is compiled */
  qllc_status st = qllc_dataset_open(m->graph, dataset_specs, n_specs, &ds, diag);
  if (st == QLLC_OK) st = model_graph(m, &g, diag);
  if (st == QLLC_OK) {
    qllc_probe_hooks h = {instr_lower, &dflt, &dflt};
    st = qllc_probe_profile(g, ds, bins, &h, progress, progress_ctx, &prof, diag);
    if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  }
  if (st != QLLC_OK) goto done;

  /* write under a temporary name, then rename */
  size_t tl = strlen(out_yaml) + 32;
  tmp = malloc(tl);
  if (!tmp) {
    st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    goto done;
  }
  snprintf(tmp, tl, "%s.tmp-%ld", out_yaml, (long)getpid());
  st = qllc_profile_write(prof, tmp, diag);
  if (st == QLLC_OK && rename(tmp, out_yaml) != 0) {
    st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write '%s': %s", out_yaml, strerror(errno));
  }
  if (st != QLLC_OK) {
    unlink(tmp);
    if (diag) {
      diag->file[0] = '\0';
      qllc_diag_set_file(diag, out_yaml);
    }
    goto done;
  }
  if (summary) {
    summary->samples = qllc_dataset_samples(ds);
    summary->values = prof->n;
  }

done:
  free(tmp);
  if (g) qllc_graph_free(g);
  if (prof) qllc_profile_free(prof);
  qllc_dataset_free(ds);
  return st;
}

/* ---- compare (src/quant/compare.c) ------------------------------------------------------------- */

/* The data set an accuracy measurement runs on: the user's specs, or samples drawn from the profile. */
static qllc_status search_samples(qllc_model *m, const qllc_options *o, const char *const *specs, int n_specs,
                                  int64_t max_samples, qllc_dataset **ds, int *drawn, qllc_diag *diag) {
  *ds = NULL;
  *drawn = n_specs <= 0;
  if (n_specs > 0) {
    qllc_status st = qllc_dataset_open(m->graph, specs, n_specs, ds, diag);
    if (st == QLLC_OK) qllc_dataset_limit(*ds, max_samples);
    return st;
  }
  qllc_profile *prof = NULL;
  qllc_status st = qllc_profile_read(o->profile_path, &prof, diag);
  if (st != QLLC_OK) {
    qllc_diag_set_file(diag, o->profile_path);
    return st;
  }
  st = qllc_dataset_from_profile(m->graph, prof, max_samples > 0 ? max_samples : 32, 13, ds, diag);
  if (st != QLLC_OK) qllc_diag_set_file(diag, o->profile_path);
  qllc_profile_free(prof);
  return st;
}

qllc_status qllc_compare(qllc_model *m, const qllc_options *opts, const char *const *dataset_specs, int n_specs,
                         int64_t max_samples, qllc_compare_result **out, qllc_diag *diag) {
  *out = NULL;
  if (!m || !opts) return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "compare: no model or options");
  if (opts->precision == QLLC_PREC_FLOAT)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "compare needs --precision int8 or int16 (and --profile)");
  qllc_options o = *opts;
  o.quantized_io = 0; /* both models take the same float samples */
  o.dump_after = NULL;
  o.target = NULL;    /* runs here */
  qllc_graph *fg = NULL, *qg = NULL;
  int owned = 0, drawn = 0;
  qllc_dataset *ds = NULL;
  qllc_status st = graph_for(m, &o, &qg, &owned, diag);
  if (st == QLLC_OK) st = model_graph(m, &fg, diag);
  if (st == QLLC_OK) st = search_samples(m, &o, dataset_specs, n_specs, max_samples, &ds, &drawn, diag);
  if (st == QLLC_OK) {
    qllc_probe_hooks h = {instr_lower, &o, &o};
    st = qllc_quant_compare(fg, qg, ds, &h, out, diag);
    if (st == QLLC_OK) (*out)->drawn = drawn;
  }
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  qllc_dataset_free(ds);
  if (fg) qllc_graph_free(fg);
  if (qg && owned) qllc_graph_free(qg);
  return st;
}
