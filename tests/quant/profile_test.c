/* tests/quant/profile_test.c: profile YAML write/read (bit-exact floats, counts), its errors (IO,
 * PARSE with file:line, MISMATCH, missing value), the reader's limits (depth, size, aliases), the
 * calibration samples kept (bounds, round trip, strict reading), and the graph hash. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "quant/quant.h"

static uint64_t rng = 0x13198a2e03707344ULL;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}
static float bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t ubits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static char tmpdir[256];
static int setup(void **state) {
  snprintf(tmpdir, sizeof tmpdir, "%s/quant_profile_test.XXXXXX", QLLC_BUILD_DIR);
  assert_non_null(mkdtemp(tmpdir));
  return 0;
}
static int teardown(void **state) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}
static const char *tmp(const char *name) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", tmpdir, name);
  return p;
}
static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The principle: "%.9g" + strtof reads every finite float back bit-exactly. */
static void test_float_text_round_trip(void **state) {
  char b[64];
  for (int i = 0; i < 1000000; i++) {
    uint32_t u = (uint32_t)next();
    if (i < 16) u = (uint32_t)i;                 /* the smallest denormals */
    if ((u & 0x7f800000u) == 0x7f800000u) continue; /* inf/nan: written as words */
    float f = bits(u);
    snprintf(b, sizeof b, "%.9g", (double)f);
    float g = strtof(b, NULL);
    if (ubits(g) != u) fail_msg("%08x -> %s -> %08x", u, b, ubits(g));
  }
}

static void fill(qllc_hist *h, float lo, float hi, int n) {
  for (int i = 0; i < n; i++) {
    float v = lo + (hi - lo) * (float)(next() % 100000) / 100000.0f;
    qllc_hist_record(h, &v, 1);
  }
}

static void test_round_trip(void **state) {
  qllc_profile *p = qllc_profile_new(0x0123456789abcdefULL, 64);
  assert_non_null(p);
  /* awkward names and special floats */
  const char *names[] = {"input", "conv1/out:0", "a \"quoted\" name", "yes", "- dash", "123", "ünïcode"};
  for (int i = 0; i < 7; i++) {
    qllc_hist *h = qllc_profile_add(p, names[i]);
    assert_non_null(h);
    fill(h, -(float)i - 0.1f, (float)i * 3.3f + 0.7f, 200 + i);
  }
  float specials[] = {-0.0f, 1e-38f, FLT_MIN, bits(1), bits(0x007fffff), FLT_MAX, -FLT_MAX, 0.1f, 1.0f / 3.0f};
  int nsp = sizeof specials / sizeof *specials;
  /* many values with random bit patterns for min/max/range */
  char name[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(name, sizeof name, "v%d", i);
    qllc_hist *h = qllc_profile_add(p, name);
    assert_non_null(h);
    uint32_t a = (uint32_t)next() & 0x7f7fffffu, b = (uint32_t)next() & 0xff7fffffu; /* finite */
    h->min = i < nsp ? specials[i] : bits(b);
    h->max = i < nsp ? -specials[i] : bits(a);
    h->range = i < nsp ? fabsf(specials[i]) : bits(a);
    h->counts[(size_t)(next() % 64)] += 7;
    h->counts[63] += 1;
    h->total = 8;
    h->nonfinite = i;
  }
  qllc_hist *empty = qllc_profile_add(p, "never_seen"); /* min = inf, max = -inf */
  assert_non_null(empty);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_write(p, tmp("p.yaml"), &d), QLLC_OK);
  qllc_profile *q = NULL;
  qllc_status st = qllc_profile_read(tmp("p.yaml"), &q, &d);
  if (st != QLLC_OK) fail_msg("%s", d.message);
  assert_int_equal(q->n, p->n);
  assert_true(q->graph_hash == p->graph_hash);
  assert_int_equal(q->bins, 64);
  assert_string_equal(q->path, tmp("p.yaml"));
  for (int i = 0; i < p->n; i++) {
    const qllc_hist *a = &p->entries[i].hist, *b = qllc_profile_find(q, p->entries[i].name);
    assert_non_null(b);
    assert_int_equal(ubits(a->min), ubits(b->min));
    assert_int_equal(ubits(a->max), ubits(b->max));
    assert_int_equal(ubits(a->range), ubits(b->range));
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->nonfinite, b->nonfinite);
    assert_memory_equal(a->counts, b->counts, 64 * sizeof *a->counts);
  }
  /* the hash is written as 16 hex digits */
  FILE *f = fopen(tmp("p.yaml"), "r");
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  assert_non_null(strstr(text, "graph_hash: \"0123456789abcdef\""));
  qllc_profile_free(p);
  qllc_profile_free(q);
}

static void test_errors(void **state) {
  qllc_profile *q = NULL;
  qllc_diag d;
  /* missing file */
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("nope.yaml"), &q, &d), QLLC_ERR_IO);
  assert_null(q);
  assert_string_equal(d.file, tmp("nope.yaml"));
  /* malformed YAML: line 4 */
  write_text(tmp("bad.yaml"), "format: qllc-profile-1\ngraph_hash: \"0000000000000000\"\nvalues:\n  - name: [x\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("bad.yaml"), &q, &d), QLLC_ERR_PARSE);
  assert_string_equal(d.file, tmp("bad.yaml"));
  char where[600];
  snprintf(where, sizeof where, "%s:5:", tmp("bad.yaml")); /* libyaml reports the end of the input */
  if (!strstr(d.message, where)) {
    snprintf(where, sizeof where, "%s:4:", tmp("bad.yaml"));
    if (!strstr(d.message, where)) fail_msg("no file:line in '%s'", d.message);
  }
  /* well-formed YAML, wrong structure: the counts do not add up (line 10 is 'counts') */
  write_text(tmp("sum.yaml"), "format: qllc-profile-1\n"
                              "graph_hash: \"00000000000000ff\"\n"
                              "bins: 16\n"
                              "values:\n"
                              "  - name: \"x\"\n"
                              "    min: -1\n"
                              "    max: 1\n"
                              "    count: 5\n"
                              "    range: 1\n"
                              "    counts: {3: 2, 9: 2}\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("sum.yaml"), &q, &d), QLLC_ERR_PARSE);
  snprintf(where, sizeof where, "%s:10:", tmp("sum.yaml"));
  assert_non_null(strstr(d.message, where));
  assert_non_null(strstr(d.message, "'x'"));
  /* a bin beyond 'bins' and a missing key */
  write_text(tmp("bin.yaml"), "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                              "  - name: \"x\"\n    min: -1\n    max: 1\n    count: 1\n    range: 1\n"
                              "    counts: {16: 1}\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("bin.yaml"), &q, &d), QLLC_ERR_PARSE);
  write_text(tmp("key.yaml"), "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                              "  - name: \"y\"\n    max: 1\n    count: 0\n    range: 1\n    counts: {}\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("key.yaml"), &q, &d), QLLC_ERR_PARSE);
  assert_non_null(strstr(d.message, "'min'"));
  snprintf(where, sizeof where, "%s:5:", tmp("key.yaml"));
  assert_non_null(strstr(d.message, where));
  /* not a profile at all, and an empty file */
  write_text(tmp("other.yaml"), "- 1\n- 2\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("other.yaml"), &q, &d), QLLC_ERR_PARSE);
  write_text(tmp("empty.yaml"), "");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("empty.yaml"), &q, &d), QLLC_ERR_PARSE);
  write_text(tmp("hash.yaml"), "format: qllc-profile-1\ngraph_hash: \"xyz\"\nvalues: []\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("hash.yaml"), &q, &d), QLLC_ERR_PARSE);
  assert_non_null(strstr(d.message, "hex"));
  /* Strictness (issue 25): a key given twice (YAML's last-wins would zero the output), at the top, in
   * an entry and as a bin; counts whose sum wraps 2^64 (2^63 + 2^63 + 5 'adds up' to 5 when wrapped). */
  static const char *const strict[][2] = {
      {"dup_top.yaml", "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nbins: 32\nvalues: []\n"},
      {"dup_key.yaml", "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                       "  - name: \"x\"\n    min: -1\n    max: 1\n    max: 0\n    count: 1\n    range: 1\n"
                       "    counts: {3: 1}\n"},
      {"dup_bin.yaml", "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                       "  - name: \"x\"\n    min: -1\n    max: 1\n    count: 2\n    range: 1\n"
                       "    counts: {3: 1, 3: 1}\n"},
      {"dup_zero.yaml", "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                        "  - name: \"x\"\n    min: -1\n    max: 1\n    count: 1\n    range: 1\n"
                        "    counts: {3: 0, 3: 1}\n"},
      {"wrap.yaml", "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                    "  - name: \"x\"\n    min: -1\n    max: 1\n    count: 5\n    range: 1\n"
                    "    counts: {1: 9223372036854775808, 2: 9223372036854775808, 3: 5}\n"},
  };
  static const char *const why[] = {"'bins' is given twice", "'max' is given twice", "bin is given twice",
                                    "bin is given twice", "overflow"};
  for (size_t i = 0; i < sizeof strict / sizeof *strict; i++) {
    write_text(tmp(strict[i][0]), strict[i][1]);
    memset(&d, 0, sizeof d);
    assert_int_equal(qllc_profile_read(tmp(strict[i][0]), &q, &d), QLLC_ERR_PARSE);
    assert_null(q);
    if (!strstr(d.message, why[i])) fail_msg("%s: '%s' lacks '%s'", strict[i][0], d.message, why[i]);
    assert_string_equal(d.file, tmp(strict[i][0]));
  }
  /* unwritable output */
  qllc_profile *p = qllc_profile_new(1, 16);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_write(p, tmp("no/such/dir/p.yaml"), &d), QLLC_ERR_IO);
  qllc_profile_free(p);
}

/* The calibration samples a profile keeps (issue 27): bounded when kept, bit-exact through the file
 * (base64 of little-endian floats: NaN payloads and -0 too), and read strictly. */
static void test_samples(void **state) {
  qllc_profile *p = qllc_profile_new(0xfeULL, 16);
  assert_non_null(p);
  /* two inputs of 1 and 2 floats: 4 and 8 bytes a sample, so 1 to 3 samples end on each base64 padding */
  const char *names[2] = {"a", "b"};
  uint64_t numel[2] = {1, 2};
  float va[QLLC_PROFILE_MAX_SAMPLES + 1], vb[2 * (QLLC_PROFILE_MAX_SAMPLES + 1)];
  for (int k = 0; k <= QLLC_PROFILE_MAX_SAMPLES; k++) {
    va[k] = k == 0 ? -0.0f : k == 1 ? bits(0x7fc12345u) : bits((uint32_t)next());
    vb[2 * k] = (float)k, vb[2 * k + 1] = bits((uint32_t)next());
    const float *data[2] = {&va[k], &vb[2 * k]};
    assert_int_equal(qllc_profile_keep_sample(p, 2, names, data, numel), k < QLLC_PROFILE_MAX_SAMPLES ? 1 : 0);
  }
  assert_int_equal(p->n_samples, QLLC_PROFILE_MAX_SAMPLES);
  const char *other[2] = {"a", "c"};
  const float *d0[2] = {va, vb};
  assert_int_equal(qllc_profile_keep_sample(p, 2, other, d0, numel), -1); /* not the first call's inputs */
  qllc_diag d;
  memset(&d, 0, sizeof d);
  for (int count = 1; count <= 3; count++) {
    p->n_samples = count;
    assert_int_equal(qllc_profile_write(p, tmp("s.yaml"), &d), QLLC_OK);
    qllc_profile *q = NULL;
    if (qllc_profile_read(tmp("s.yaml"), &q, &d) != QLLC_OK) fail_msg("%s", d.message);
    assert_int_equal(q->n_samples, count);
    assert_int_equal(q->n_inputs, 2);
    for (int i = 0; i < 2; i++) {
      assert_string_equal(q->inputs[i].name, names[i]);
      assert_int_equal(q->inputs[i].numel, numel[i]);
      assert_memory_equal(q->inputs[i].data, p->inputs[i].data, (size_t)count * numel[i] * sizeof(float));
    }
    qllc_profile_free(q);
  }
  qllc_profile_free(p);
  /* the byte bound: 100000 floats a sample keeps 2 (800 kB of 1 MiB); 300000 keeps none */
  float *big = calloc(300000, sizeof *big);
  assert_non_null(big);
  for (int k = 0; k < 2; k++) {
    uint64_t ne = k == 0 ? 100000 : 300000;
    p = qllc_profile_new(1, 16);
    const float *data[1] = {big};
    int kept = 0;
    for (int s = 0; s < 4; s++) kept += qllc_profile_keep_sample(p, 1, names, data, &ne);
    assert_int_equal(kept, k == 0 ? 2 : 0);
    assert_int_equal(p->n_samples, kept);
    qllc_profile_free(p);
  }
  free(big);
  /* strictness: every key known and given once, the bounds, the base64 exact (length, alphabet, padding
     and the unused bits 0). 1.0f is AACAPw== */
  static const char *const bad_samples[][2] = {
      {"count: 0\n  inputs:\n  - {name: a, elements: 1, data: AACAPw==}\n", "1 to 32"},
      {"count: 33\n  inputs:\n  - {name: a, elements: 1, data: AACAPw==}\n", "1 to 32"},
      {"count: 1\n  count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPw==}\n", "given twice"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPw==, extra: 1}\n", "unknown key 'extra'"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPw==}\n  - {name: a, elements: 1, data: AACAPw==}\n",
       "sampled twice"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1}\n", "needs 'name', 'elements' and 'data'"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPw}\n", "base64"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPx==}\n", "base64"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACA*w==}\n", "base64"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPw=A}\n", "base64"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 2, data: AACAPw==}\n", "base64"},
      {"count: 1\n  inputs:\n  - {name: a, elements: 0, data: AACAPw==}\n", "1 MiB"},
      {"count: 32\n  inputs:\n  - {name: a, elements: 8193, data: AACAPw==}\n", "1 MiB"},
      {"count: 1\n  inputs: []\n", "must not be empty"},
      {"count: 1\n", "needs 'inputs'"},
  };
  char text[1024];
  const char *head = "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues: []\n";
  for (size_t i = 0; i < sizeof bad_samples / sizeof *bad_samples; i++) {
    snprintf(text, sizeof text, "%ssamples:\n  %s", head, bad_samples[i][0]);
    write_text(tmp("bs.yaml"), text);
    qllc_profile *q = NULL;
    memset(&d, 0, sizeof d);
    assert_int_equal(qllc_profile_read(tmp("bs.yaml"), &q, &d), QLLC_ERR_PARSE);
    assert_null(q);
    if (!strstr(d.message, bad_samples[i][1])) fail_msg("case %zu: '%s' lacks '%s'", i, d.message, bad_samples[i][1]);
  }
  snprintf(text, sizeof text, "%ssamples: [1]\n", head);
  write_text(tmp("bs.yaml"), text);
  qllc_profile *q = NULL;
  assert_int_equal(qllc_profile_read(tmp("bs.yaml"), &q, &d), QLLC_ERR_PARSE);
  assert_non_null(strstr(d.message, "'samples' must be a mapping"));
  snprintf(text, sizeof text, "%ssamples:\n  count: 1\n  inputs:\n  - {name: a, elements: 1, data: AACAPw==}\n", head);
  write_text(tmp("good.yaml"), text);
  if (qllc_profile_read(tmp("good.yaml"), &q, &d) != QLLC_OK) fail_msg("%s", d.message);
  assert_true(q->n_samples == 1 && q->inputs[0].data[0] == 1.0f);
  qllc_profile_free(q);
}

/* Bounded input (issue 11): 200 KB of nested '[' took 87 s in libyaml's document loader; now the
 * event pre-pass stops at 16 levels at once. alarm() kills a hang, however slow the machine. */
static void test_limits(void **state) {
  qllc_profile *q = NULL;
  qllc_diag d;
  char where[600];
  FILE *f = fopen(tmp("nest.yaml"), "w");
  assert_non_null(f);
  for (int i = 0; i < 200000; i++) fputc('[', f);
  fclose(f);
  alarm(20);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("nest.yaml"), &q, &d), QLLC_ERR_PARSE);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  alarm(0);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (secs > 5) fail_msg("the nested profile took %.1f s to refuse", secs);
  assert_null(q);
  assert_string_equal(d.file, tmp("nest.yaml"));
  snprintf(where, sizeof where, "%s:1:", tmp("nest.yaml"));
  if (!strstr(d.message, where) || !strstr(d.message, "16 levels")) fail_msg("message: '%s'", d.message);
  /* block nesting, over several lines: the line of the 17th level */
  f = fopen(tmp("block.yaml"), "w");
  assert_non_null(f);
  for (int i = 0; i < 40; i++) fprintf(f, "%*sk%d:\n", 2 * i, "", i);
  fclose(f);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("block.yaml"), &q, &d), QLLC_ERR_PARSE);
  snprintf(where, sizeof where, "%s:17:", tmp("block.yaml"));
  if (!strstr(d.message, where)) fail_msg("message: '%s'", d.message);
  /* 16 levels are within the limit: the structure check speaks instead */
  write_text(tmp("deep16.yaml"), "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\n"
                                 "x: [[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("deep16.yaml"), &q, &d), QLLC_ERR_PARSE);
  if (!strstr(d.message, "unknown key 'x'")) fail_msg("message: '%s'", d.message);
  /* aliases: the format has none, and they would let a small file stand for a large one */
  write_text(tmp("alias.yaml"), "format: qllc-profile-1\ngraph_hash: \"00000000000000ff\"\nbins: 16\nvalues:\n"
                                "  - name: \"a\"\n    min: 0\n    max: 1\n    count: 1\n    range: 1\n"
                                "    counts: &c {8: 1}\n"
                                "  - name: \"b\"\n    min: 0\n    max: 1\n    count: 1\n    range: 1\n"
                                "    counts: *c\n");
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("alias.yaml"), &q, &d), QLLC_ERR_PARSE);
  snprintf(where, sizeof where, "%s:16:", tmp("alias.yaml"));
  if (!strstr(d.message, where) || !strstr(d.message, "alias")) fail_msg("message: '%s'", d.message);
  /* size: a sparse file one byte over 256 MiB is refused without being read */
  f = fopen(tmp("big.yaml"), "w");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(truncate(tmp("big.yaml"), (off_t)(256 << 20) + 1), 0);
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_read(tmp("big.yaml"), &q, &d), QLLC_ERR_PARSE);
  assert_string_equal(d.file, tmp("big.yaml"));
  if (!strstr(d.message, "268435457 bytes") || !strstr(d.message, "256 MiB")) fail_msg("message: '%s'", d.message);
  remove(tmp("big.yaml"));
}

/* A hand-made graph: x -> Conv(w) -> y -> Relu -> z. */
typedef struct hg {
  qllc_graph g;
  qllc_value x, w, y, z;
  qllc_node conv, relu;
  qllc_value *conv_in[2], *conv_out[1], *relu_in[1], *relu_out[1];
  qllc_node *nodes[2];
} hg;
static void make_graph(hg *h) {
  memset(h, 0, sizeof *h);
  int64_t dx[4] = {1, 3, 8, 8}, dw[4] = {4, 3, 3, 3}, dy[4] = {1, 4, 8, 8};
  h->x.name = "x", h->x.rank = 4, memcpy(h->x.dims, dx, sizeof dx);
  h->w.name = "w", h->w.rank = 4, memcpy(h->w.dims, dw, sizeof dw);
  h->y.name = "y", h->y.rank = 4, memcpy(h->y.dims, dy, sizeof dy);
  h->z.name = "z", h->z.rank = 4, memcpy(h->z.dims, dy, sizeof dy);
  h->conv_in[0] = &h->x, h->conv_in[1] = &h->w, h->conv_out[0] = &h->y;
  h->relu_in[0] = &h->y, h->relu_out[0] = &h->z;
  h->conv.op = QLLC_OP_CONV, h->conv.name = "conv1", h->conv.op_type = "Conv";
  h->conv.n_in = 2, h->conv.in = h->conv_in, h->conv.n_out = 1, h->conv.out = h->conv_out;
  h->relu.op = QLLC_OP_RELU, h->relu.name = "relu1", h->relu.op_type = "Relu";
  h->relu.n_in = 1, h->relu.in = h->relu_in, h->relu.n_out = 1, h->relu.out = h->relu_out;
  h->nodes[0] = &h->conv, h->nodes[1] = &h->relu;
  h->g.nodes = h->nodes, h->g.n_nodes = 2, h->g.path = "model.onnx";
}

static void test_graph_hash(void **state) {
  hg a, b;
  make_graph(&a);
  make_graph(&b);
  uint64_t h0 = qllc_graph_hash(&a.g);
  assert_true(h0 == qllc_graph_hash(&b.g)); /* deterministic, pointer-independent */
  b.y.dims[3] = 7; /* a shape */
  assert_true(qllc_graph_hash(&b.g) != h0);
  make_graph(&b);
  b.relu.name = "relu2"; /* a node name */
  assert_true(qllc_graph_hash(&b.g) != h0);
  make_graph(&b);
  b.z.name = "zz"; /* a value name */
  assert_true(qllc_graph_hash(&b.g) != h0);
  make_graph(&b);
  b.relu.op_type = "Sigmoid"; /* an op */
  assert_true(qllc_graph_hash(&b.g) != h0);
  make_graph(&b);
  b.relu.dead = 1; /* dead nodes do not count */
  assert_true(qllc_graph_hash(&b.g) != h0);
  b.g.n_nodes = 1;
  uint64_t h1 = qllc_graph_hash(&b.g);
  b.g.n_nodes = 2;
  assert_true(qllc_graph_hash(&b.g) == h1);
  /* the empty graph hashes to the FNV-1a 64 offset basis */
  qllc_graph e;
  memset(&e, 0, sizeof e);
  assert_true(qllc_graph_hash(&e) == 0xcbf29ce484222325ULL);
}

static void test_check_and_get(void **state) {
  hg a;
  make_graph(&a);
  qllc_profile *p = qllc_profile_new(qllc_graph_hash(&a.g), 16);
  qllc_hist *h = qllc_profile_add(p, "y");
  float v[3] = {-1, 0.5f, 2};
  qllc_hist_record(h, v, 3);
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_write(p, tmp("g.yaml"), &d), QLLC_OK);
  qllc_profile_free(p);
  qllc_profile *q = NULL;
  assert_int_equal(qllc_profile_read(tmp("g.yaml"), &q, &d), QLLC_OK);
  assert_int_equal(qllc_profile_check(q, &a.g, &d), QLLC_OK);
  const qllc_hist *got;
  assert_int_equal(qllc_profile_get(q, "y", &got, &d), QLLC_OK);
  assert_true(got->min == -1.0f && got->max == 2.0f && got->total == 3);
  /* a value missing from the profile: INVALID naming the value and the file */
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_get(q, "z", &got, &d), QLLC_ERR_INVALID);
  assert_non_null(strstr(d.message, "'z'"));
  assert_string_equal(d.file, tmp("g.yaml"));
  /* another model */
  a.y.dims[2] = 9;
  memset(&d, 0, sizeof d);
  assert_int_equal(qllc_profile_check(q, &a.g, &d), QLLC_ERR_MISMATCH);
  assert_non_null(strstr(d.message, "another model"));
  assert_string_equal(d.file, tmp("g.yaml"));
  qllc_profile_free(q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float_text_round_trip), cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_errors),                cmocka_unit_test(test_graph_hash),
      cmocka_unit_test(test_check_and_get),         cmocka_unit_test(test_limits),
      cmocka_unit_test(test_samples),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
