/* tests/ir/outfile_test.c: src/ir/outfile.c, the one way qllc writes a file the user named: a regular
 * file replaced whole (a temporary renamed over it, nothing left on failure), a symlink kept and its
 * target written, a device or a FIFO written in place and never replaced, two threads writing the
 * same path at once each producing a whole file. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ir/ir.h"

static char dir[256];

static int setup(void **state) {
  snprintf(dir, sizeof dir, "/tmp/qllc-outfile-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name) {
  static __thread char buf[4][512];
  static __thread int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static qllc_status write_text(const char *path, const char *text, qllc_diag *d) {
  qllc_outfile o;
  qllc_status st = qllc_outfile_open(&o, path, d);
  if (st != QLLC_OK) return st;
  fputs(text, o.f);
  return qllc_outfile_commit(&o, d);
}

static char *slurp(const char *path) {
  static char buf[1 << 16];
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* the number of entries in dir (temporaries left behind show here) */
static int entries(void) {
  DIR *dh = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dh));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(dh);
  return n;
}

static void test_new_and_replace(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(write_text(at("a.txt"), "one\n", &d), QLLC_OK);
  assert_string_equal(slurp(at("a.txt")), "one\n");
  chmod(at("a.txt"), 0640);
  assert_int_equal(write_text(at("a.txt"), "two\n", &d), QLLC_OK);
  assert_string_equal(slurp(at("a.txt")), "two\n");
  struct stat sb;
  assert_int_equal(stat(at("a.txt"), &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0640); /* the replaced file's permissions kept */
  assert_int_equal(entries(), 1);
}

static void test_abort_keeps_old(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(write_text(at("b.txt"), "old\n", &d), QLLC_OK);
  qllc_outfile o;
  assert_int_equal(qllc_outfile_open(&o, at("b.txt"), &d), QLLC_OK);
  fputs("half", o.f);
  qllc_outfile_abort(&o);
  assert_string_equal(slurp(at("b.txt")), "old\n");
  assert_int_equal(entries(), 1); /* no temporary left */
}

static void test_symlink_stays(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(write_text(at("target.txt"), "t\n", &d), QLLC_OK);
  assert_int_equal(symlink("target.txt", at("link.txt")), 0);
  assert_int_equal(write_text(at("link.txt"), "through\n", &d), QLLC_OK);
  struct stat lb;
  assert_int_equal(lstat(at("link.txt"), &lb), 0);
  assert_true(S_ISLNK(lb.st_mode));
  assert_string_equal(slurp(at("target.txt")), "through\n");
  assert_int_equal(entries(), 2);
}

static void test_fifo_in_place(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(mkfifo(at("fifo"), 0600), 0);
  int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open does not block */
  assert_true(rd >= 0);
  assert_int_equal(write_text(at("fifo"), "piped\n", &d), QLLC_OK);
  char buf[32] = {0};
  assert_int_equal(read(rd, buf, sizeof buf - 1), 6);
  assert_string_equal(buf, "piped\n");
  close(rd);
  struct stat sb;
  assert_int_equal(lstat(at("fifo"), &sb), 0);
  assert_true(S_ISFIFO(sb.st_mode)); /* still the FIFO */
}

static void test_dev_null_in_place(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(write_text("/dev/null", "x\n", &d), QLLC_OK);
  struct stat sb;
  assert_int_equal(stat("/dev/null", &sb), 0);
  assert_true(S_ISCHR(sb.st_mode));
}

static void test_errors_name_the_file(void **state) {
  qllc_diag d;
  memset(&d, 0, sizeof d);
  assert_int_equal(mkdir(at("adir"), 0700), 0);
  assert_int_equal(write_text(at("adir"), "x", &d), QLLC_ERR_IO);
  assert_string_equal(d.file, at("adir"));
  memset(&d, 0, sizeof d);
  assert_int_equal(write_text(at("missing/x.txt"), "x", &d), QLLC_ERR_IO);
  assert_string_equal(d.file, at("missing/x.txt"));
  struct stat sb;
  assert_int_equal(stat(at("adir"), &sb), 0);
  assert_true(S_ISDIR(sb.st_mode));
}

static void test_tmp_names_unique(void **state) {
  char *a = qllc_outfile_tmp_name("d/x.npy"), *b = qllc_outfile_tmp_name("d/x.npy");
  assert_non_null(a);
  assert_non_null(b);
  assert_string_not_equal(a, b);
  assert_memory_equal(a, "d/.x.npy.tmp-", 13);
  free(a);
  free(b);
}

/* two threads write the same path many times at once: every commit succeeds and the file is always
 * one writer's whole text */
#define ROUNDS 200
static void *writer(void *arg) {
  char text[8192];
  memset(text, *(const char *)arg, sizeof text - 2);
  text[sizeof text - 2] = '\n';
  text[sizeof text - 1] = 0;
  for (int r = 0; r < ROUNDS; r++) {
    qllc_diag d;
    memset(&d, 0, sizeof d);
    if (write_text(at("shared.txt"), text, &d) != QLLC_OK) return (void *)1;
  }
  return NULL;
}

static void test_two_threads(void **state) {
  pthread_t t1, t2;
  static const char a = 'a', b = 'b';
  assert_int_equal(pthread_create(&t1, NULL, writer, (void *)&a), 0);
  assert_int_equal(pthread_create(&t2, NULL, writer, (void *)&b), 0);
  void *r1, *r2;
  pthread_join(t1, &r1);
  pthread_join(t2, &r2);
  assert_null(r1);
  assert_null(r2);
  const char *s = slurp(at("shared.txt"));
  assert_non_null(s);
  assert_int_equal(strlen(s), 8191);
  for (int i = 0; i < 8190; i++) assert_int_equal(s[i], s[0]);
  assert_int_equal(entries(), 1); /* no temporaries left */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_new_and_replace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_abort_keeps_old, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symlink_stays, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fifo_in_place, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dev_null_in_place, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors_name_the_file, setup, teardown),
      cmocka_unit_test(test_tmp_names_unique),
      cmocka_unit_test_setup_teardown(test_two_threads, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
