/*
 * crts_mid.c - the checkpoint file of CRTS_task_fetch (see crts_mid.h).
 *
 * Several processes of a job use one file.  They never write the same byte
 * concurrently with different values: the file is created (all '0') before
 * the loop starts, and afterwards each block's byte is written only by the
 * process that fetched the block, with a one-byte pwrite at its own offset.
 * Creation itself may race between processes that see an empty file; each
 * first sets the length with ftruncate (atomic, so nobody sees a partial
 * length) and then writes the same '0' bytes, so any interleaving leaves
 * the same file and a reader meanwhile sees NULs or '0's: both unfinished.
 */
#include "crts_mid.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crts_cg.h"

#define CHUNK 65536

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* pwrite all of buf, retrying short writes and EINTR; 0 or -1. */
static int write_all(int fd, const void *buf, size_t len, off_t off)
{
  const char *p = buf;
  while (len > 0) {
    ssize_t n = pwrite(fd, p, len, off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += n;
    len -= (size_t)n;
    off += n;
  }
  return 0;
}

/* Write len copies of byte c from offset 0; 0 or -1. */
static int fill(int fd, char c, long len)
{
  char buf[CHUNK];
  memset(buf, c, sizeof buf);
  for (long off = 0; off < len; off += CHUNK) {
    size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
    if (write_all(fd, buf, n, off) != 0)
      return -1;
  }
  return 0;
}

static int info_path(const char *file, char *path, size_t len)
{
  int n = snprintf(path, len, "%s%s", file, CRTS_MID_INFO_SUFFIX);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

int crts_mid_info_read(const char *file, long *task_num, long *block,
                       char *err, size_t errlen)
{
  char path[PATH_MAX];
  if (info_path(file, path, sizeof path) != 0) {
    set_err(err, errlen, "the name %s%s is too long", file,
            CRTS_MID_INFO_SUFFIX);
    return -1;
  }
  FILE *f = fopen(path, "re");
  if (!f) {
    if (errno == ENOENT)
      return 0;
    set_err(err, errlen, "cannot read %s: %s", path, strerror(errno));
    return -1;
  }
  int version = 0;
  long t = 0, b = 0;
  int n = fscanf(f, "crts-mid %d task_num %ld block_size %ld", &version, &t,
                 &b);
  fclose(f);
  if (n != 3 || version != 1 || t <= 0 || b <= 0) {
    set_err(err, errlen, "%s is not a CRTS mid sidecar (\"crts-mid 1\", "
            "\"task_num N\", \"block_size B\" lines)", path);
    return -1;
  }
  *task_num = t;
  *block = b;
  return 1;
}

/* Write the sidecar atomically (a temporary file renamed into place). */
static int info_write(const char *file, long task_num, long block)
{
  char path[PATH_MAX], tmp[PATH_MAX];
  if (info_path(file, path, sizeof path) != 0)
    return -1;
  int n = snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof tmp)
    return -1;
  FILE *f = fopen(tmp, "we");
  if (!f)
    return -1;
  int bad = fprintf(f, "crts-mid 1\ntask_num %ld\nblock_size %ld\n", task_num,
                    block) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

int crts_mid_open(const char *file, long task_num, long block,
                  int create_info, char *err, size_t errlen)
{
  long nblocks = crts_mid_blocks(task_num, block);
  long t, b;
  int have_info = crts_mid_info_read(file, &t, &b, err, errlen);
  if (have_info < 0)
    return -1;
  if (have_info && (t != task_num || b != block)) {
    set_err(err, errlen, "mid file %s belongs to a loop of %ld tasks in "
            "blocks of %ld (see %s%s), not %ld in blocks of %ld: call with "
            "those values, or delete both files to start afresh", file, t, b,
            file, CRTS_MID_INFO_SUFFIX, task_num, block);
    return -1;
  }
  int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    set_err(err, errlen, "cannot open mid file %s: %s", file,
            strerror(errno));
    return -1;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0)
    goto io_error;
  if (sb.st_size == 0) {
    if (ftruncate(fd, nblocks) != 0 || fill(fd, '0', nblocks) != 0)
      goto io_error;
  } else if (sb.st_size != nblocks) {
    set_err(err, errlen, "mid file %s has %lld bytes, but %ld tasks in blocks "
            "of %ld need %ld (one per block): it belongs to another loop; "
            "call with that loop's values, or delete it to start afresh",
            file, (long long)sb.st_size, task_num, block, nblocks);
    close(fd);
    return -1;
  }
  if (create_info && !have_info && info_write(file, task_num, block) != 0)
    crts_report("CRTS_task_fetch", "cannot write %s%s (%s); readmid will "
                "need the block size and task count on its command line",
                file, CRTS_MID_INFO_SUFFIX, strerror(errno));
  return fd;

io_error:
  set_err(err, errlen, "cannot create mid file %s: %s", file,
          strerror(errno));
  close(fd);
  return -1;
}

uint64_t *crts_mid_snapshot(int fd, long nblocks, long *unfinished,
                            char *err, size_t errlen)
{
  size_t words = (size_t)(nblocks + 63) / 64;
  uint64_t *done = calloc(words, sizeof *done);
  if (!done) {
    set_err(err, errlen, "no memory for a bitmap of %ld blocks", nblocks);
    return NULL;
  }
  char buf[CHUNK];
  long left = nblocks;
  for (long off = 0; off < nblocks;) {
    size_t want = nblocks - off < CHUNK ? (size_t)(nblocks - off) : CHUNK;
    ssize_t n = pread(fd, buf, want, off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      set_err(err, errlen, "cannot read the mid file: %s",
              n < 0 ? strerror(errno) : "it became shorter");
      free(done);
      return NULL;
    }
    for (ssize_t i = 0; i < n; i++, off++)
      if (buf[i] == '1') {
        done[off / 64] |= (uint64_t)1 << (off % 64);
        left--;
      }
  }
  /* Past the last block: finished, so a search never stops there. */
  if (nblocks % 64)
    done[words - 1] |= ~(uint64_t)0 << (nblocks % 64);
  *unfinished = left;
  return done;
}

int crts_mid_mark(int fd, long b)
{
  return write_all(fd, "1", 1, b);
}

int crts_mid_mark_all(int fd, long nblocks)
{
  return fill(fd, '1', nblocks);
}
