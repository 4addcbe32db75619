/* src/ir/pipeline.c: the float graph pipeline, straight-line, in one place.
 *
 *   spatial3d -> fold_constants -> transformer -> fold_batchnorm -> gemm_to_fc -> fuse_activation -> eliminate_identity
 *   -> fold_constants (again: the rewrites can leave constant subgraphs behind) -> verify
 *
 * spatial3d (pass_spatial3d.c, issue 15) rewrites 3-D Conv and pools as 2-D ones first, so the weight
 * reshape it makes is folded and every later pass sees only 2-D layers.
 * transformer (pass_transformer.c, issue 15) runs next: its LayerNorm and GELU patterns contain Div and
 * Add nodes the later passes would otherwise rewrite.
 * Order matters: fold_batchnorm runs before fuse_activation because it only folds into a producer
 * without a fused clamp (Conv -> BN -> Relu: the BN folds first, then the Relu fuses), and
 * gemm_to_fc runs before fuse_activation so a Relu after MatMul+Add fuses into the resulting FC.
 *
 * `dump_after` names a pass; the graph is printed to `dump` (stderr when NULL) after it, preceded by a
 * "# after <pass>" line, after each run of fold_constants since it runs twice. "import" is accepted
 * and prints nothing here: it is the graph before any pass, which the caller that loaded it prints.
 * An unknown name is rejected before anything runs.
 */
#include <string.h>

#include "ir/ir.h"

typedef qllc_status (*pass_fn)(qllc_graph *, qllc_diag *);

static const char *const pass_names[] = {"spatial3d", "fold_constants", "transformer", "fold_batchnorm", "gemm_to_fc", "fuse_activation",
                                         "eliminate_identity", NULL};
#define N_PASSES (sizeof pass_names / sizeof pass_names[0] - 1)

const char *const *qllc_graph_pass_names(void) { return pass_names; }

static qllc_status run(qllc_graph *g, const char *name, pass_fn fn, const char *dump_after, FILE *dump,
                       qllc_diag *diag) {
  qllc_status st = fn(g, diag);
  if (st != QLLC_OK) return st;
  if (dump_after && strcmp(dump_after, name) == 0) {
    FILE *f = dump ? dump : stderr;
    fprintf(f, "# after %s\n", name);
    qllc_graph_print(g, f);
  }
  return QLLC_OK;
}

qllc_status qllc_graph_optimize(qllc_graph *g, const char *dump_after, FILE *dump, qllc_diag *diag) {
  if (dump_after && strcmp(dump_after, "import") != 0) {
    size_t i = 0;
    while (i < N_PASSES && strcmp(dump_after, pass_names[i]) != 0) i++;
    if (i == N_PASSES) {
      char list[256] = "import";
      for (size_t k = 0; k < N_PASSES; k++) {
        strcat(list, ", ");
        strcat(list, pass_names[k]);
      }
      return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "unknown pass '%s' to dump after (graph passes: %s)",
                       dump_after, list);
    }
  }
  qllc_status st;
  if ((st = run(g, "spatial3d", qllc_pass_spatial3d, dump_after, dump, diag))) return st;
  if ((st = run(g, "fold_constants", qllc_pass_fold_constants, dump_after, dump, diag))) return st;
  if ((st = run(g, "transformer", qllc_pass_transformer, dump_after, dump, diag))) return st;
  if ((st = run(g, "fold_batchnorm", qllc_pass_fold_batchnorm, dump_after, dump, diag))) return st;
  if ((st = run(g, "gemm_to_fc", qllc_pass_gemm_to_fc, dump_after, dump, diag))) return st;
  if ((st = run(g, "fuse_activation", qllc_pass_fuse_activation, dump_after, dump, diag))) return st;
  if ((st = run(g, "eliminate_identity", qllc_pass_eliminate_identity, dump_after, dump, diag))) return st;
  if ((st = run(g, "fold_constants", qllc_pass_fold_constants, dump_after, dump, diag))) return st;
  return qllc_graph_verify(g, diag);
}
