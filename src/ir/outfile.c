/* src/ir/outfile.c: every file the user named is written through here (docs/limits.md, "Files qllc writes").
 *
 * A path that exists and is not a regular file (a character device such as /dev/null, a FIFO, a
 * socket; a symlink is followed first) is opened and written in place: never renamed over, never
 * unlinked. A regular file or a new path is written under a temporary name in the same directory,
 * unique per call (pid and a process-wide counter, so threads of one process writing the same path
 * never share one), then renamed over the final path; a failure anywhere removes the temporary, so the
 * final path is either the old file or the whole new one. A symlink to a regular file is resolved
 * first, so the link stays a link and its target is replaced. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"

char *qllc_outfile_tmp_name(const char *path) {
  static unsigned seq;
  unsigned k = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
  const char *slash = strrchr(path, '/');
  size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
  size_t n = strlen(path) + 64;
  char *tmp = malloc(n);
  if (!tmp) return NULL;
  snprintf(tmp, n, "%.*s.%s.tmp-%ld-%u", (int)dlen, path, path + dlen, (long)getpid(), k);
  return tmp;
}

static qllc_status open_fail(qllc_diag *diag, const char *path, int e) {
  qllc_status st = qllc_fail(diag, QLLC_ERR_IO, NULL, "cannot write '%s': %s", path, strerror(e));
  qllc_diag_set_file(diag, path);
  return st;
}

qllc_status qllc_outfile_open(qllc_outfile *o, const char *path, qllc_diag *diag) {
  memset(o, 0, sizeof *o);
  struct stat sb;
  int exists = stat(path, &sb) == 0;
  o->user = strdup(path);
  if (!o->user) return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  struct stat lb;
  if ((exists && !S_ISREG(sb.st_mode)) || (!exists && lstat(path, &lb) == 0)) {
    /* a device, a FIFO, a directory (fails below), or a dangling symlink: in place */
    if (exists && S_ISDIR(sb.st_mode)) {
      qllc_status st = open_fail(diag, path, EISDIR);
      qllc_outfile_abort(o);
      return st;
    }
    o->f = fopen(path, "wb");
    if (!o->f) {
      qllc_status st = open_fail(diag, path, errno);
      qllc_outfile_abort(o);
      return st;
    }
    o->in_place = 1;
    return QLLC_OK;
  }
  /* a regular file (through any symlinks) or a new path: a temporary beside the final file */
  if (exists) {
    o->final = realpath(path, NULL);
    if (!o->final) {
      qllc_status st = open_fail(diag, path, errno);
      qllc_outfile_abort(o);
      return st;
    }
  } else {
    o->final = strdup(path);
    if (!o->final) {
      qllc_outfile_abort(o);
      return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
    }
  }
  o->tmp = qllc_outfile_tmp_name(o->final);
  if (!o->tmp) {
    qllc_outfile_abort(o);
    return qllc_fail(diag, QLLC_ERR_NOMEM, NULL, "out of memory");
  }
  int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    qllc_status st = open_fail(diag, path, errno);
    free(o->tmp);
    o->tmp = NULL; /* not ours: nothing to remove */
    qllc_outfile_abort(o);
    return st;
  }
  if (exists) (void)fchmod(fd, sb.st_mode & 07777); /* the replaced file's permissions */
  o->f = fdopen(fd, "wb");
  if (!o->f) {
    int e = errno;
    close(fd);
    qllc_outfile_abort(o);
    return open_fail(diag, path, e);
  }
  return QLLC_OK;
}

qllc_status qllc_outfile_commit(qllc_outfile *o, qllc_diag *diag) {
  int err = ferror(o->f) ? (errno ? errno : EIO) : 0;
  if (fclose(o->f) != 0 && !err) err = errno ? errno : EIO;
  o->f = NULL;
  if (!err && o->tmp && rename(o->tmp, o->final) != 0) err = errno;
  if (err) {
    qllc_status st = open_fail(diag, o->user, err);
    qllc_outfile_abort(o);
    return st;
  }
  free(o->tmp);
  o->tmp = NULL;
  qllc_outfile_abort(o);
  return QLLC_OK;
}

void qllc_outfile_abort(qllc_outfile *o) {
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->final);
  free(o->user);
  memset(o, 0, sizeof *o);
}
