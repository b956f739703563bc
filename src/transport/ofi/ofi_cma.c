/*
 * ofi_cma.c - RMA reads between the core groups of one host by
 * cross-memory attach (process_vm_readv), beside libfabric; and the
 * writes of a GET's target into its origin's buffer (process_vm_writev,
 * OFI_GET_WRITE).
 *
 * shm (libfabric 1.17) copies a read of one remote piece inline with one
 * process_vm_readv in the reader, but hands a read of several remote
 * pieces to the owner's progress (bounce buffers; every other operation
 * to that peer waits meanwhile), and takes at most 4 pieces a side per
 * read.  When every CG runs on this host over shm we make the system
 * call ourselves: up to OFI_CMA_IOV pieces on each side per call,
 * synchronous in the reader, nothing for the owner to do, no
 * registration at the source.
 *
 * Start-up (ofi_fabric.c): each CG puts a card (its pid, the address of
 * a word of its own and that word's random value) into the address
 * all-gather; each reads every peer's word by CMA and compares (ptrace
 * rules, Yama, seccomp or pid namespaces may forbid it or name another
 * process); a second all-gather makes the use job-wide, so a source
 * knows whether the sink will read it by CMA or through libfabric.
 * LAPI_OFI_CMA=0 in any CG turns it off for the job.
 *
 * A word read back proves more than that CMA works: the pid names the
 * peer's own process.  That proof is kept (ofi.peers[].pid) even where
 * CMA is not used, for stage references (ofi_packref.c): a sink maps a
 * peer's arena only through a pid so proven, never through one a packet
 * names.
 *
 * Test hook LAPI_OFI_TEST_CMA_FAULT=N: every Nth read (or write) has its
 * last remote piece moved to an unmapped address, so the kernel copies
 * the pieces before it (a partial read, continued) and then fails with
 * EFAULT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "transport/ofi/ofi.h"

/* The word peers read to prove CMA works toward us. */
static volatile uint64_t probe_word;
static long fault_every, fault_count; /* the test hook */

int ofi_cma_wanted(void)
{
  const char *s = getenv("LAPI_OFI_CMA");
  if (s && strcmp(s, "0") == 0)
    return 0;
  return strcmp(ofi.prov, "shm") == 0;
}

void ofi_cma_card(struct ofi_cma_card *mine)
{
  memset(mine, 0, sizeof *mine);
  const char *f = getenv("LAPI_OFI_TEST_CMA_FAULT");
  fault_every = f ? strtol(f, NULL, 10) : 0;
  fault_count = 0;
  if (strcmp(ofi.prov, "shm") != 0)
    return; /* pid 0: nobody probes us (no peer shares our memory) */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t v = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
               ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts;
  probe_word = v | 1; /* never 0: a zeroed page does not pass */
  mine->pid = (uint64_t)getpid();
  mine->probe_addr = (uint64_t)(uintptr_t)&probe_word;
  mine->probe_val = probe_word;
}

int ofi_cma_probe(uint peer, const struct ofi_cma_card *c)
{
  if (c->pid == 0 || c->probe_val == 0 || c->pid > INT32_MAX)
    return 0;
  uint64_t got = 0;
  struct iovec l = {&got, sizeof got};
  struct iovec r = {(void *)(uintptr_t)c->probe_addr, sizeof got};
  ssize_t n = process_vm_readv((pid_t)c->pid, &l, 1, &r, 1, 0);
  if (n != (ssize_t)sizeof got || got != c->probe_val) {
    LAPI_LOG(LAPI_LOG_INFO, "ofi: cross-memory attach to core group %u "
             "(pid %llu) does not work (%s): RMA reads go through "
             "libfabric and packed chunks in packets", peer,
             (unsigned long long)c->pid,
             n < 0 ? strerror(errno) : "another process's memory");
    return 0;
  }
  ofi.peers[peer].pid = (int)c->pid;
  return 1;
}

/* Drops the first n bytes of the n_io pieces at *io. */
static void skip(struct iovec **io, size_t *n_io, size_t n)
{
  while (n > 0 && *n_io > 0) {
    if (n < (*io)->iov_len) {
      (*io)->iov_base = (char *)(*io)->iov_base + n;
      (*io)->iov_len -= n;
      return;
    }
    n -= (*io)->iov_len;
    (*io)++;
    (*n_io)--;
  }
}

static int cma_rw(uint peer, int write, struct iovec *l, size_t nl,
                  struct iovec *r, size_t nr, size_t bytes)
{
  pid_t pid = ofi.peers[peer].pid;
  /* atomic: an AM's item reads outside ofi.lock (ofi_sink.c) */
  if (fault_every > 0 && nr > 0 &&
      __atomic_add_fetch(&fault_count, 1, __ATOMIC_RELAXED) % fault_every == 0)
    r[nr - 1].iov_base = (void *)(uintptr_t)8; /* page 0: never mapped */
  while (bytes > 0) {
    ssize_t n = write ? process_vm_writev(pid, l, nl, r, nr, 0)
                      : process_vm_readv(pid, l, nl, r, nr, 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0 || (size_t)n > bytes)
      return -EFAULT; /* no progress: the next piece is not mapped */
    /* Partial (a fault or the kernel's own limit): go on from there. */
    bytes -= (size_t)n;
    skip(&l, &nl, (size_t)n);
    skip(&r, &nr, (size_t)n);
  }
  return 0;
}

int ofi_cma_read(uint peer, struct iovec *l, size_t nl, struct iovec *r,
                 size_t nr, size_t bytes)
{
  return cma_rw(peer, 0, l, nl, r, nr, bytes);
}

int ofi_cma_write(uint peer, struct iovec *l, size_t nl, struct iovec *r,
                  size_t nr, size_t bytes)
{
  return cma_rw(peer, 1, l, nl, r, nr, bytes);
}
