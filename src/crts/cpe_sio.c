/*
 * cpe_sio.c - CRTS_sio_fwrite: ordered writes of the CPE array to one file.
 *
 * Every CPE of the spawned group calls with the same file name; each
 * call appends one record to the file: the CPEs' blocks in rank (tid)
 * order, block i at the end of the file as it was when the call began plus
 * the sizes of the lower ranks' blocks.  So a sequence of calls appends in
 * order, and nothing is ever truncated: the file is created if missing, and
 * whatever it held before stays in front (remove it on the MPE to start a
 * fresh one).  The manual says no more than "ordered writes"; appending is
 * the choice that never loses data.
 *
 * Order holds within this core group; several processes writing one file
 * at once must order themselves.  src may be main memory or the caller's
 * LDM, any alignment, size 0 allowed.  A CPE with bad arguments writes
 * nothing and reports; the others still write their blocks, and the record
 * closes up (its size counts 0).  Write errors are reported with the
 * system's reason; the call returns nothing, as in the manual.
 *
 * The lowest rank opens the file and computes every offset between two
 * barriers; each CPE then pwrite()s its own block in parallel; a last
 * barrier precedes the close.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crts_cg.h"

struct sio_slot {
  const char *filename;
  const char *src;
  unsigned long size;  /* 0 when this CPE's arguments were rejected */
  int tid;
  off_t offset;        /* set by the leader */
} __attribute__((aligned(64)));

static struct sio_slot slots[CRTS_MAX_SPE_NUM];
static struct crts_barrier sio_barrier;
static int sio_fd = -1;   /* written by the leader between barriers */

static const char *errtext(int err, char *buf, size_t len)
{
  return strerror_r(err, buf, len);
}

/* 1 if src may be read for size bytes by this CPE (LDM must be its own). */
static int check_src(const char *call, const void *src, unsigned long size,
                     const struct crts_cpe *self)
{
  if (size == 0)
    return 1;
  if (!src) {
    crts_report(call, "src is NULL with size %lu", size);
    return 0;
  }
  int owner = crts_ldm_owner(src);
  if (owner < 0)
    return 1; /* main memory */
  if (owner != self->tid || !crts_ldm_range(src, size, &owner)) {
    crts_report(call, "src %p (%lu bytes) is LDM but not inside this CPE's "
                "own LDM", src, size);
    return 0;
  }
  return 1;
}

/* Leader: open the file and place every block; -1 if it cannot open. */
static int plan(const char *call, int size)
{
  const char *name = slots[0].filename;
  char ebuf[128];
  int fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    crts_report(call, "cannot open \"%s\": %s", name,
                errtext(errno, ebuf, sizeof ebuf));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    crts_report(call, "cannot stat \"%s\": %s", name,
                errtext(errno, ebuf, sizeof ebuf));
    close(fd);
    return -1;
  }
  off_t at = st.st_size;
  for (int r = 0; r < size; r++) {
    slots[r].offset = at;
    at += (off_t)slots[r].size;
  }
  return fd;
}

static void write_block(const char *call, int fd, const char *src,
                        unsigned long size, off_t at, const char *name)
{
  char ebuf[128];
  while (size > 0) {
    ssize_t n = pwrite(fd, src, size, at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      crts_report(call, "writing %lu bytes at offset %lld of \"%s\": %s",
                  size, (long long)at, name,
                  n < 0 ? errtext(errno, ebuf, sizeof ebuf)
                        : "no progress (device full?)");
      return;
    }
    src += n;
    size -= (unsigned long)n;
    at += n;
  }
}

void CRTS_sio_fwrite(char *filename, void *src, unsigned long size)
{
  const char *call = "CRTS_sio_fwrite";
  struct crts_cpe *self;
  if (!crts_check_init(call) || !(self = crts_check_cpe(call)))
    return;
  int tid = self->tid;
  if (!self->in_group || !crts_in_group(tid)) {
    crts_report(call, "is collective over a spawned group: call it from a "
                      "function started by CRTS_athread_spawn");
    return;
  }
  int rank = __builtin_popcountll(crts_cg.group_mask &
                                  (((uint64_t)1 << tid) - 1));
  uint32_t group = (uint32_t)crts_cg.group_size;

  int ok = check_src(call, src, size, self);
  if (!filename) {
    crts_report(call, "filename is NULL");
    ok = 0;
  }
  slots[rank] = (struct sio_slot){ .filename = filename, .src = src,
                                   .size = ok ? size : 0, .tid = tid };
  crts_barrier_wait(&sio_barrier, group, 0);
  if (rank == 0) {
    /* Blocks of CPEs naming another file are dropped, not misplaced. */
    for (uint32_t r = 1; r < group; r++) {
      const char *f = slots[r].filename;
      if (f && filename && strcmp(f, filename) != 0)
        slots[r].size = 0;
    }
    sio_fd = filename ? plan(call, (int)group) : -1;
  }
  crts_barrier_wait(&sio_barrier, group, 0);
  int fd = sio_fd;
  const char *lead = slots[0].filename;
  if (ok && lead && filename && strcmp(lead, filename) != 0)
    crts_report(call, "filename \"%s\" differs from CPE %d's \"%s\": every "
                "CPE must name the same file; this block was not written",
                filename, slots[0].tid, lead);
  else if (fd >= 0 && slots[rank].size > 0)
    write_block(call, fd, src, size, slots[rank].offset, filename);
  crts_barrier_wait(&sio_barrier, group, 0);
  if (rank == 0 && fd >= 0)
    close(fd);
}
