/* src/llvmgen/user_kernels.c: the user's --kernels bitcode files, read before code generation.
 *
 * Two jobs:
 *  1. The LLVM version check. LLVM reads bitcode written by OLDER LLVM releases without complaint, so a
 *     kernel file made by clang-14 would silently be accepted and its kernels compiled with whatever
 *     attributes and semantics the upgrade path gives them; bitcode from a NEWER release fails with an
 *     obscure reader error. qllc requires the same major version as the libLLVM it links (docs/kernels.md)
 *     and says so, naming the file: the producer string ("LLVM19.1.7") is read from the bitcode's
 *     IDENTIFICATION block with a small bitstream reader below (the LLVM C API does not expose it).
 *  2. Which functions each file defines (lazily loaded: no function body is materialised), so the
 *     facade can check every custom node's kernel before code generation (an error naming the node,
 *     the expected function and the files searched), let the quantizer ask whether a quantized variant
 *     exists, and mark in the reports which nodes run user kernels.
 * Before either reads a file, a child process parses all of it and runs LLVM's verifier (read_in_child):
 * LLVM's bitcode reader trusts its input, and a file with one byte changed can crash it; in the child a
 * crash is an error naming the file, not the end of the caller's process. The bytes checked are kept and
 * are the ones code generation links (qllc_user_kernels_buffer), so the file cannot change in between.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>

#include "llvmgen/codegen_internal.h"

/* ---- a minimal LLVM bitstream reader (enough for the IDENTIFICATION block) --------------------- */

typedef struct bits {
  const uint8_t *p;
  size_t nbits, pos; /* in bits */
  int bad;
} bits;

static uint64_t rd(bits *b, unsigned w) {
  uint64_t v = 0;
  if (w > 64 || b->pos + w > b->nbits) {
    b->bad = 1;
    b->pos = b->nbits;
    return 0;
  }
  for (unsigned i = 0; i < w; i++, b->pos++) v |= (uint64_t)((b->p[b->pos >> 3] >> (b->pos & 7)) & 1) << i;
  return v;
}

static uint64_t vbr(bits *b, unsigned w) {
  if (w < 2 || w > 32) { /* LLVM's own limit on a VBR width; a corrupt abbreviation may say anything */
    b->bad = 1;
    return 0;
  }
  uint64_t v = 0, hi = (uint64_t)1 << (w - 1);
  for (unsigned shift = 0; !b->bad && shift < 64; shift += w - 1) {
    uint64_t piece = rd(b, w);
    v |= (piece & (hi - 1)) << shift;
    if (!(piece & hi)) return v;
  }
  b->bad = 1;
  return 0;
}

static void align32(bits *b) { b->pos = (b->pos + 31) & ~(size_t)31; }

enum { ENC_LITERAL = 0, ENC_FIXED = 1, ENC_VBR = 2, ENC_ARRAY = 3, ENC_CHAR6 = 4, ENC_BLOB = 5 };
typedef struct abbrev_op {
  int enc;
  uint64_t val;
} abbrev_op;
typedef struct abbrev {
  int n;
  abbrev_op op[16];
} abbrev;

static uint64_t scalar(bits *b, const abbrev_op *o) {
  switch (o->enc) {
  case ENC_LITERAL: return o->val;
  case ENC_FIXED: return rd(b, (unsigned)o->val);
  case ENC_VBR: return o->val ? vbr(b, (unsigned)o->val) : 0;
  case ENC_CHAR6: {
    uint64_t c = rd(b, 6);
    return c < 26 ? 'a' + c : c < 52 ? 'A' + c - 26 : c < 62 ? '0' + c - 52 : c == 62 ? '.' : '_';
  }
  default: b->bad = 1; return 0;
  }
}

/* Reads the producer string of the first IDENTIFICATION block into out ("" when there is none).
 * Returns 0 when the data is LLVM bitcode (with or without an identification block), -1 otherwise. */
static int bitcode_producer(const uint8_t *data, size_t size, char *out, size_t out_size) {
  out[0] = 0;
  if (size >= 20 && data[0] == 0xDE && data[1] == 0xC0 && data[2] == 0x17 && data[3] == 0x0B) { /* wrapper */
    uint32_t off = data[8] | data[9] << 8 | data[10] << 16 | (uint32_t)data[11] << 24;
    uint32_t len = data[12] | data[13] << 8 | data[14] << 16 | (uint32_t)data[15] << 24;
    if (off > size || len > size - off) return -1;
    data += off, size = len;
  }
  if (size < 8 || data[0] != 'B' || data[1] != 'C' || data[2] != 0xC0 || data[3] != 0xDE) return -1;
  bits b = {data + 4, (size - 4) * 8, 0, 0};
  /* top level (abbrev width 2): skip blocks until IDENTIFICATION (13); it comes first in LLVM's files */
  for (int guard = 0; guard < 64 && !b.bad && b.pos < b.nbits; guard++) {
    uint64_t id = rd(&b, 2);
    if (id != 1) return 0; /* not ENTER_SUBBLOCK: nothing more to learn */
    uint64_t block = vbr(&b, 8);
    unsigned width = (unsigned)vbr(&b, 4);
    align32(&b);
    uint64_t words = rd(&b, 32);
    size_t end = b.pos + (size_t)words * 32;
    if (block != 13) {
      b.pos = end;
      continue;
    }
    if (width < 2 || width > 32) return 0;
    abbrev abbrevs[8];
    int n_abbrevs = 0;
    while (!b.bad && b.pos < end) {
      uint64_t a = rd(&b, width);
      if (a == 0) return 0; /* END_BLOCK without a STRING record */
      if (a == 1) return 0; /* no nested blocks expected */
      if (a == 2) {         /* DEFINE_ABBREV */
        abbrev ab = {0};
        uint64_t nops = vbr(&b, 5);
        for (uint64_t i = 0; i < nops && !b.bad; i++) {
          abbrev_op o = {0};
          if (rd(&b, 1)) o.enc = ENC_LITERAL, o.val = vbr(&b, 8);
          else {
            o.enc = (int)rd(&b, 3);
            if (o.enc == ENC_FIXED || o.enc == ENC_VBR) o.val = vbr(&b, 5);
          }
          if (ab.n < 16) ab.op[ab.n++] = o;
          else b.bad = 1;
        }
        if (n_abbrevs < 8) abbrevs[n_abbrevs++] = ab;
        else return 0;
        continue;
      }
      uint64_t code, vals[256];
      size_t nv = 0;
      if (a == 3) { /* UNABBREV_RECORD */
        code = vbr(&b, 6);
        uint64_t n = vbr(&b, 6);
        for (uint64_t i = 0; i < n && !b.bad; i++) {
          uint64_t v = vbr(&b, 6);
          if (nv < 256) vals[nv++] = v;
        }
      } else {
        if (a - 4 >= (uint64_t)n_abbrevs) return 0;
        const abbrev *ab = &abbrevs[a - 4];
        int first = 1;
        code = 0;
        for (int i = 0; i < ab->n && !b.bad; i++) {
          const abbrev_op *o = &ab->op[i];
          if (o->enc == ENC_ARRAY) {
            if (i + 1 >= ab->n) return 0;
            const abbrev_op *el = &ab->op[i + 1];
            /* each element must take bits, and there cannot be more than the bits left (a corrupt count
             * of literal elements would loop 2^64 times) */
            if (el->enc == ENC_LITERAL || ((el->enc == ENC_FIXED || el->enc == ENC_VBR) && el->val == 0)) return 0;
            uint64_t n = vbr(&b, 6);
            if (n > b.nbits - b.pos) return 0;
            for (uint64_t k = 0; k < n && !b.bad; k++) {
              uint64_t v = scalar(&b, &ab->op[i + 1]);
              if (first) code = v, first = 0;
              else if (nv < 256) vals[nv++] = v;
            }
            i++;
          } else if (o->enc == ENC_BLOB) {
            uint64_t n = vbr(&b, 6);
            if (n > (b.nbits - b.pos) / 8) return 0;
            align32(&b);
            for (uint64_t k = 0; k < n && !b.bad; k++) {
              uint64_t v = rd(&b, 8);
              if (nv < 256) vals[nv++] = v;
            }
            align32(&b);
          } else {
            uint64_t v = scalar(&b, o);
            if (first) code = v, first = 0;
            else if (nv < 256) vals[nv++] = v;
          }
        }
      }
      if (b.bad) return 0;
      if (code == 1) { /* IDENTIFICATION_CODE_STRING */
        size_t k = 0;
        for (; k < nv && k + 1 < out_size; k++) out[k] = (char)vals[k];
        out[k] = 0;
        return 0;
      }
    }
    return 0;
  }
  return 0;
}

qllc_status qllc_bitcode_check_version(const void *data, size_t size, const char *file, qllc_diag *diag) {
  char producer[128];
  if (bitcode_producer(data, size, producer, sizeof producer) != 0) {
    qllc_diag_set_file(diag, file);
    return qllc_fail(diag, QLLC_ERR_PARSE, NULL,
                     "kernel file %s is not LLVM bitcode (make it with clang-19 -O2 -emit-llvm -c FILE.c -o FILE.bc)",
                     file);
  }
  if (!producer[0]) return QLLC_OK; /* no identification block: the reader decides */
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  unsigned theirs = 0;
  int is_llvm = strncmp(producer, "LLVM", 4) == 0 && sscanf(producer + 4, "%u", &theirs) == 1;
  if (!is_llvm || theirs != major) {
    qllc_diag_set_file(diag, file);
    return qllc_fail(diag, QLLC_ERR_MISMATCH, NULL,
                     "kernel file %s was written by %s (LLVM %s%u), but qllc uses LLVM %u: compile it with clang-%u "
                     "-emit-llvm",
                     file, producer, is_llvm ? "" : "not ", is_llvm ? theirs : major, major, major);
  }
  return QLLC_OK;
}

/* ---- which functions the files define ------------------------------------------------------------ */

typedef struct uk_entry {
  char *name;
  int file; /* index into files */
} uk_entry;

struct qllc_user_kernels {
  int n_files;
  char **files;
  uint8_t **bytes; /* each file's contents as checked */
  size_t *n_bytes;
  int n, cap;
  uk_entry *e; /* sorted by name; the first file defining a name wins (as the linker would refuse) */
};

static int cmp_entry(const void *a, const void *b) {
  const uk_entry *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : x->file - y->file;
}

/* ---- reading a file where a crash cannot take the process down ----------------------------------- */

#define CHILD_TIMEOUT_S 120 /* a child that neither answers nor dies in this time is killed */

/* In the child: parse all of the bytes and verify the module; the answer is one line on fd, "ok" or
 * "error: MESSAGE", and a missing line means the child died. */
static void child_check(const uint8_t *bytes, size_t n, const char *path, int fd) {
  char msg[1200] = "ok";
  LLVMContextRef ctx = LLVMContextCreate();
  qllc_llvm_diag ld;
  qllc_llvm_diag_install(ctx, &ld);
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange((const char *)bytes, n, path, 0);
  LLVMModuleRef m = NULL;
  if (LLVMParseBitcodeInContext2(ctx, mb, &m) || !m) {
    snprintf(msg, sizeof msg, "error: LLVM cannot read it: %s", ld.has_error ? ld.message : "no message from LLVM");
  } else {
    char *why = NULL;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &why)) {
      const char *w = why ? why : "";
      size_t len = strcspn(w, "\n");
      snprintf(msg, sizeof msg, "error: LLVM's verifier refuses it: %.*s", (int)(len < 900 ? len : 900), w);
    }
    LLVMDisposeMessage(why);
  }
  size_t len = strlen(msg);
  msg[len++] = '\n';
  for (size_t off = 0; off < len;) {
    ssize_t w = write(fd, msg + off, len - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
}

static qllc_status crashed(const char *path, const char *how, qllc_diag *diag) {
  qllc_diag_set_file(diag, path);
  return qllc_fail(diag, QLLC_ERR_PARSE, NULL,
                   "%s: corrupt kernel file: LLVM's bitcode reader %s on it (read in a child process; "
                   "make the file again with clang-19 -emit-llvm)",
                   path, how);
}

static qllc_status read_in_child(const uint8_t *bytes, size_t n, const char *path, qllc_diag *diag) {
  int fds[2];
  if (pipe(fds) != 0) return qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot check kernel file %s: pipe: %s", path, strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot check kernel file %s: fork: %s", path, strerror(errno));
  }
  if (pid == 0) {
    /* die quietly on a fault: the caller's handlers (a crash reporter, a sanitizer's) are not for this */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) signal(faults[i], SIG_DFL);
    close(fds[0]);
    child_check(bytes, n, path, fds[1]);
    _exit(0); /* no atexit handlers, no buffered output of the parent's flushed twice */
  }
  close(fds[1]);
  char ans[1300];
  size_t got = 0;
  int timed_out = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long left_ms = CHILD_TIMEOUT_S * 1000L - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
    if (left_ms <= 0) {
      timed_out = 1;
      break;
    }
    struct pollfd pf = {fds[0], POLLIN, 0};
    int pr = poll(&pf, 1, (int)left_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) {
      timed_out = pr == 0;
      break;
    }
    ssize_t r = read(fds[0], ans + got, sizeof ans - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (got == sizeof ans - 1) break;
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int ws = 0;
  pid_t w;
  while ((w = waitpid(pid, &ws, 0)) < 0 && errno == EINTR) {
  }
  ans[got] = 0;
  char *nl = strchr(ans, '\n');
  if (timed_out) {
    char how[64];
    snprintf(how, sizeof how, "did not finish in %d s", CHILD_TIMEOUT_S);
    return crashed(path, how, diag);
  }
  if (!nl) { /* no answer: the child died */
    char how[96];
    if (w == pid && WIFSIGNALED(ws))
      snprintf(how, sizeof how, "crashed (signal %d, %s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else snprintf(how, sizeof how, "stopped without an answer");
    return crashed(path, how, diag);
  }
  *nl = 0;
  if (!strcmp(ans, "ok")) return QLLC_OK;
  qllc_diag_set_file(diag, path);
  return qllc_fail(diag, QLLC_ERR_PARSE, NULL, "%s: corrupt kernel file: %s", path,
                   strncmp(ans, "error: ", 7) ? ans : ans + 7);
}

LLVMMemoryBufferRef qllc_user_kernels_buffer(const qllc_user_kernels *uk, int i) {
  if (!uk || i < 0 || i >= uk->n_files) return NULL;
  return LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)uk->bytes[i], uk->n_bytes[i], uk->files[i]);
}

/* Reads a --kernels file with the bounded reader (QLLC_MAX_KERNEL_FILE_BYTES, so /dev/zero or a pipe
 * ends with an error instead of filling memory), checks it, and records the functions it defines. */
static qllc_status scan_file(qllc_user_kernels *uk, int fi, qllc_diag *diag) {
  const char *path = uk->files[fi];
  qllc_status st = qllc_read_file(path, "kernel file", QLLC_MAX_KERNEL_FILE_BYTES, &uk->bytes[fi], &uk->n_bytes[fi], diag);
  if (st != QLLC_OK) return st;
  if ((st = qllc_bitcode_check_version(uk->bytes[fi], uk->n_bytes[fi], path, diag)) != QLLC_OK ||
      (st = read_in_child(uk->bytes[fi], uk->n_bytes[fi], path, diag)) != QLLC_OK)
    return st;
  LLVMMemoryBufferRef mb = qllc_user_kernels_buffer(uk, fi);
  if (!mb) {
    qllc_diag_set_file(diag, path);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory reading kernel file %s", path);
  }
  LLVMContextRef ctx = LLVMContextCreate();
  qllc_llvm_diag ld;
  qllc_llvm_diag_install(ctx, &ld);
  LLVMModuleRef m = NULL;
  if (LLVMGetBitcodeModuleInContext2(ctx, mb, &m)) { /* takes mb either way */
    LLVMContextDispose(ctx);
    qllc_diag_set_file(diag, path);
    return qllc_fail(diag, QLLC_ERR_PARSE, NULL, "cannot read kernel file %s as LLVM bitcode: %s", path,
                     ld.has_error ? ld.message : "no message from LLVM");
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(m); st == QLLC_OK && f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    LLVMLinkage l = LLVMGetLinkage(f);
    if (l == LLVMInternalLinkage || l == LLVMPrivateLinkage) continue;
    size_t len = 0;
    const char *name = LLVMGetValueName2(f, &len);
    if (!name || !len) continue;
    if (uk->n == uk->cap) {
      int cap = uk->cap ? 2 * uk->cap : 32;
      uk_entry *ne = realloc(uk->e, (size_t)cap * sizeof *ne);
      if (!ne) {
        st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
        break;
      }
      uk->e = ne, uk->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c) {
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      break;
    }
    memcpy(c, name, len);
    c[len] = 0;
    uk->e[uk->n++] = (uk_entry){c, fi};
  }
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return st;
}

qllc_status qllc_user_kernels_load(const char *const *files, int n, qllc_user_kernels **out, qllc_diag *diag) {
  *out = NULL;
  qllc_user_kernels *uk = calloc(1, sizeof *uk);
  if (!uk || (n > 0 && (!(uk->files = calloc((size_t)n, sizeof *uk->files)) ||
                        !(uk->bytes = calloc((size_t)n, sizeof *uk->bytes)) ||
                        !(uk->n_bytes = calloc((size_t)n, sizeof *uk->n_bytes))))) {
    if (uk) free(uk->files), free(uk->bytes), free(uk->n_bytes);
    free(uk);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  qllc_status st = QLLC_OK;
  for (int i = 0; st == QLLC_OK && i < n; i++) {
    if (!files[i]) {
      st = qllc_fail(diag, QLLC_ERR_INVALID, NULL, "kernel file %d is NULL", i);
      break;
    }
    size_t len = strlen(files[i]) + 1;
    if (!(uk->files[i] = malloc(len))) {
      st = qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
      break;
    }
    memcpy(uk->files[i], files[i], len);
    uk->n_files = i + 1;
    st = scan_file(uk, i, diag);
  }
  if (st != QLLC_OK) {
    qllc_user_kernels_free(uk);
    return st;
  }
  if (uk->n > 1) qsort(uk->e, (size_t)uk->n, sizeof *uk->e, cmp_entry);
  *out = uk;
  return QLLC_OK;
}

const char *qllc_user_kernels_find(const qllc_user_kernels *uk, const char *name) {
  if (!uk || !name) return NULL;
  size_t lo = 0, hi = (size_t)uk->n;
  while (lo < hi) { /* the first entry with this name: the lowest file index */
    size_t mid = (lo + hi) / 2;
    if (strcmp(uk->e[mid].name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < (size_t)uk->n && strcmp(uk->e[lo].name, name) == 0 ? uk->files[uk->e[lo].file] : NULL;
}

const char *qllc_user_kernels_files(const qllc_user_kernels *uk, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; uk && i < uk->n_files; i++)
    len += (size_t)snprintf(buf + (len < size ? len : size - 1), len < size ? size - len : 1, "%s%s", i ? ", " : "",
                            uk->files[i]);
  if (!uk || !uk->n_files) snprintf(buf, size, "(no --kernels files given)");
  return buf;
}

void qllc_user_kernels_free(qllc_user_kernels *uk) {
  if (!uk) return;
  for (int i = 0; i < uk->n; i++) free(uk->e[i].name);
  for (int i = 0; i < uk->n_files; i++) free(uk->files[i]), free(uk->bytes[i]);
  free(uk->bytes);
  free(uk->n_bytes);
  free(uk->e);
  free(uk->files);
  free(uk);
}
