/* tests/lower/lower_test_util.h: what the lowering tests share (graph building, lowering, argument
 * checks). Include after <cmocka.h>. */
#ifndef QLLC_LOWER_TEST_UTIL_H
#define QLLC_LOWER_TEST_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"

#define LT_UNUSED __attribute__((unused))

/* A node with n_in inputs and one output (not inserted anywhere else; appended to g). */
static LT_UNUSED qllc_node *node(qllc_graph *g, qllc_op op, const char *name, int n_in, qllc_value **in,
                                 qllc_value *out) {
  qllc_node *n = qllc_node_new(g, op, name, n_in, 1);
  assert_non_null(n);
  for (int i = 0; i < n_in; i++) n->in[i] = in[i];
  n->out[0] = out;
  return n;
}

/* Lowers g or fails the test with lowering's message; QLLC_TEST_VERBOSE=1 prints the program. */
static LT_UNUSED qllc_program *lower_ok(qllc_graph *g) {
  qllc_program *p = NULL;
  qllc_diag d;
  memset(&d, 0, sizeof d);
  qllc_status st = qllc_lower(g, &p, &d);
  if (st != QLLC_OK) fail_msg("qllc_lower: %s", d.message);
  assert_non_null(p);
  if (getenv("QLLC_TEST_VERBOSE")) qllc_program_print(p, stderr);
  return p;
}

/* Argument k of instruction `instr`. */
static LT_UNUSED const qllc_arg *arg(const qllc_program *p, int instr, int k) {
  assert_true(instr < p->n_instrs);
  assert_true(k < p->instrs[instr].n_args);
  return &p->instrs[instr].args[k];
}

/* Arguments first .. first+count-1 of instruction `instr` are the integer immediates want[]. */
static LT_UNUSED void check_ints(const qllc_program *p, int instr, int first, int count, const int64_t *want) {
  for (int k = 0; k < count; k++) {
    const qllc_arg *a = arg(p, instr, first + k);
    if (a->kind != QLLC_ARG_INT) fail_msg("instr %d arg %d: kind %d, want INT", instr, first + k, (int)a->kind);
    if (a->i != want[k])
      fail_msg("instr %d arg %d: %lld, want %lld", instr, first + k, (long long)a->i, (long long)want[k]);
  }
}
#endif
