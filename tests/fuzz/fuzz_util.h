/* tests/fuzz/fuzz_util.h: helpers shared by the fuzz targets.
 *
 * qllc's loaders read files, so each input is written to one scratch file per process (in /dev/shm
 * when it exists, else $TMPDIR or /tmp) and the loader is given its path: the harness then runs exactly
 * the code a user's `qllc` command runs on that file. */
#ifndef QLLC_FUZZ_UTIL_H
#define QLLC_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes data to this process's scratch file (name ending in `suffix`) and returns its path, or NULL. */
static const char *fuzz_write_file(const uint8_t *data, size_t size, const char *suffix) {
  static char path[512];
  if (!path[0]) {
    struct stat st;
    const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/qllc-fuzz-%ld%s", dir && *dir ? dir : "/tmp", (long)getpid(), suffix);
  }
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  size_t ok = size ? fwrite(data, 1, size, f) : 0;
  if (fclose(f) != 0 || ok != size) return NULL;
  return path;
}

#endif
