/* src/driver/bundle_out.c: writing a bundle (`qllc compile`): the graph compiled for the target CPU, the
 * reports gathered for the header, then DIR/NAME.o, DIR/NAME.h and (--weights file) DIR/NAME.weights.bin
 * written under hidden temporary names and renamed: a failure anywhere leaves nothing new in DIR.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/driver_internal.h"

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

/* A compile for the default generic CPU (no --cpu, no --features) of this machine's architecture: one note
 * (o->note) saying what this machine's CPU would run instead, counted per layer by lowering g again for
 * `--cpu native`, and how to ask for it. Silent when anything fails: a note is never an error. */
/* A fused layer's instruction, as the kernel report counts them: a variant, or a reference with a reason. */
static int fused(const qllc_instr *in) { return in->why || strstr(in->kernel, "__"); }

static void note_generic_cpu(qllc_drv_model *m, qllc_graph *g, const qllc_options *o, const qllc_program *p) {
  if (!o->note || (o->cpu && *o->cpu) || (o->features && *o->features)) return;
  qllc_options ho = *o;
  ho.cpu = "native";
  ho.dump_after = NULL;
  ho.strict = 0;
  qllc_codegen_opts dflt, host;
  qllc_diag d = {0};
  if (qllc_drv_codegen_opts(o, 0, &dflt, &d) != QLLC_OK || qllc_drv_codegen_opts(&ho, 0, &host, &d) != QLLC_OK)
    return; /* another target than this machine's (native needs the host's architecture) */
  if (!strcmp(dflt.cpu, host.cpu)) return;
  qllc_program *hp = NULL;
  if (qllc_drv_lower(m, g, &ho, 0, &hp, NULL, &d) != QLLC_OK) return;
  int layers = 0, faster = 0;
  for (int i = 0; i < p->n_instrs; i++) {
    const qllc_instr *in = &p->instrs[i];
    if (!in->node || !fused(in)) continue;
    layers++;
    for (int k = 0; k < hp->n_instrs; k++)
      if (hp->instrs[k].node == in->node && fused(&hp->instrs[k])) {
        faster += strcmp(hp->instrs[k].kernel, in->kernel) != 0;
        break;
      }
  }
  qllc_program_free(hp);
  char text[1024];
  if (faster > 0)
    snprintf(text, sizeof text,
             "no --cpu: compiled for the generic %s CPU; %d of its %d Conv and FC layers run portable kernels where "
             "this machine (%s) runs faster ones, and the rest of the code is generic too. For this machine: "
             "--cpu native (or --cpu %s); --quiet hides this note",
             dflt.cpu, faster, layers, host.cpu, host.cpu);
  else
    snprintf(text, sizeof text,
             "no --cpu: compiled for the generic %s CPU, whose code uses none of the vector extensions this "
             "machine (%s) has. For this machine: --cpu native (or --cpu %s); --quiet hides this note",
             dflt.cpu, host.cpu, host.cpu);
  o->note(o->note_ctx, text);
}

qllc_status qllc_drv_compile_bundle(qllc_drv_model *m, const qllc_options *opts, const char *dir, const char *name,
                                    qllc_diag *diag) {
  /* Everything that can fail without touching the disk comes first. */
  qllc_graph *g = NULL;
  int owned = 0;
  qllc_program *p = NULL;
  char *report = NULL;
  qllc_status st = qllc_drv_graph_for(m, opts, 0, &g, &owned, diag);
  char *user_lines = NULL;
  if (st == QLLC_OK) st = qllc_drv_lower(m, g, opts, 0, &p, &user_lines, diag);
  qllc_codegen_opts cg;
  memset(&cg, 0, sizeof cg);
  uint64_t stack_bytes = 0; /* measured while the object is compiled, written into the header */
  if (st == QLLC_OK) {
    st = qllc_drv_codegen_opts(opts, 0, &cg, diag);
    cg.stack_bytes_out = &stack_bytes;
    cg.entry_name = name;
    if ((opts->precision != QLLC_PREC_FLOAT || qllc_graph_is_quantized(g)) && !(report = qllc_drv_report_text(g, opts)))
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
    int n2 = snprintf(fin[i], sizeof fin[i], "%s/%s%s", dir, name, bundle_ext[i]);
    /* the output helper's temporary name: unique per call, so threads may write the same bundle */
    char *t = n2 < (int)sizeof fin[i] ? qllc_outfile_tmp_name(fin[i]) : NULL;
    int fits = t && strlen(t) < sizeof tmp[i];
    if (fits) memcpy(tmp[i], t, strlen(t) + 1);
    free(t);
    if (!fits) {
      st = qllc_fail(diag, QLLC_ERR_IO, NULL, n2 < (int)sizeof fin[i] && !t ? "out of memory" : "output path too long");
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

  /* --precision-map-out: only now that the bundle is whole (a failure here takes the bundle back) */
  st = qllc_drv_precision_map_finish(st, diag);

cleanup:
  if (st == QLLC_OK) note_generic_cpu(m, g, opts, p); /* after the files: a failed compile says one thing */
  if (st != QLLC_OK) {
    for (int i = 0; i < B_COUNT; i++) {
      if (written[i] && !renamed[i]) unlink(tmp[i]);
      if (renamed[i]) unlink(fin[i]);
    }
    if (created) rmdir(dir);
  }

done:
  st = qllc_drv_precision_map_finish(st, diag); /* dropped when not written above */
  free(report);
  if (p) qllc_program_free(p);
  if (owned) qllc_graph_free(g);
  if (st != QLLC_OK && diag && !diag->file[0]) qllc_diag_set_file(diag, m->path);
  return st;
}
