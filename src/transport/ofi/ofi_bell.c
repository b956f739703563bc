/*
 * ofi_bell.c - a doorbell between the core groups of one host.
 *
 * Providers without a CQ wait object (shm, udp;ofi_rxd) cannot block a
 * progress thread until a message comes.  For shm (every CG of the job
 * on this host), each CG publishes one shared page (POSIX shared memory named
 * after the job key and its rank) holding a futex word and a "sleeping"
 * flag; its progress thread sleeps on that word, and a sender that has
 * just posted a packet to it rings it (one system call, only when the
 * peer sleeps).  The usual order excludes lost wake-ups: the sleeper
 * reads the word, sets the flag, polls the CQ once more, then waits on
 * the value it read; the sender posts, then reads the flag.
 * The page is unlinked once every peer has mapped it (after the start-up
 * barrier), so nothing is left in /dev/shm.
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport/boot/boot.h"
#include "transport/ofi/ofi.h"
#include "transport/ofi/ofi_shm_sweep.h"

struct ofi_bellpage {
  int seq;      /* futex word (shared, not private) */
  int sleeping; /* the owner's progress thread sleeps on seq (a slice of
                   1 ms: SLEEP_SLICE, longer: SLEEP_LONG) */
  int polled;   /* threads of the owner read its CQ in a tight loop */
};
#define SLEEP_SLICE 1
#define SLEEP_LONG 2

static struct ofi_bellpage **pages; /* [ntasks], ours included */
static char my_name[128];

#define PAGE 4096

static void name_of(char *out, size_t n, const struct lapi_boot *b, int rank)
{
  ofi_cg_object_name(out, n, "ofi", b->job_key, rank);
}

/* Peer t's page, or NULL if it has none (of our size). */
static struct ofi_bellpage *map_peer(const char *name)
{
  size_t len;
  void *p = ofi_cgobj_open(name, &len);
  if (p && len != PAGE) {
    munmap(p, len);
    p = NULL;
  }
  return p;
}

/* Create our page (before the address exchange). 0, or -1: no bell. */
int ofi_bell_create(const struct lapi_boot *b)
{
  /* shm only: its packets are all ours, so a ring after each post wakes
   * the peer whenever it has something to do.  Other providers without a
   * wait object (udp;ofi_rxd) carry traffic of their own (handshakes,
   * segments, acknowledgements) that needs progress and never rings. */
  if (b->local_size != b->size || getenv("LAPI_OFI_NO_BELL") ||
      strcmp(ofi.prov, "shm") != 0)
    return -1;
  pages = calloc(ofi.ntasks, sizeof *pages);
  if (pages == NULL)
    return -1;
  name_of(my_name, sizeof my_name, b, b->rank);
  pages[ofi.me] = ofi_cgobj_create(my_name, PAGE);
  if (pages[ofi.me] == NULL) {
    my_name[0] = '\0';
    free(pages);
    pages = NULL;
    return -1;
  }
  return 0;
}

/* Map every peer's page (after the exchange: they all exist).  A peer
 * without one (it could not create it) is rung by nobody: its progress
 * thread naps instead, so this is never fatal. */
void ofi_bell_attach(const struct lapi_boot *b)
{
  if (pages == NULL)
    return;
  for (uint t = 0; t < ofi.ntasks; t++) {
    if (t == ofi.me)
      continue;
    char name[128];
    name_of(name, sizeof name, b, (int)t);
    pages[t] = map_peer(name);
  }
}

/* Every peer mapped our page: its name may go. */
void ofi_bell_unlink(void)
{
  if (pages && my_name[0]) {
    shm_unlink(my_name);
    my_name[0] = '\0';
  }
}

void ofi_bell_close(void)
{
  if (pages == NULL)
    return;
  ofi_bell_unlink();
  for (uint t = 0; t < ofi.ntasks; t++)
    if (pages[t])
      munmap(pages[t], PAGE);
  free(pages);
  pages = NULL;
}

int ofi_bell_on(void)
{
  return pages != NULL && pages[ofi.me] != NULL;
}

static void fwake(int *w)
{
  syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Wake the owner of page p if its progress thread sleeps. */
static void wake_sleeper(struct ofi_bellpage *p)
{
  if (p == NULL || !__atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST))
    return;
  __atomic_add_fetch(&p->seq, 1, __ATOMIC_SEQ_CST);
  fwake(&p->seq);
}

/* After a packet to peer was posted.  A peer with a thread polling its
 * CQ finds the packet itself: no system call, and its progress thread
 * stays asleep (ofi_bell_polled). */
void ofi_bell_ring(uint peer)
{
  struct ofi_bellpage *p = pages ? pages[peer] : NULL;
  if (p && !__atomic_load_n(&p->polled, __ATOMIC_SEQ_CST))
    wake_sleeper(p);
}

/* A thread of ours starts (+1) or stops (-1) polling our CQ in a tight
 * loop.  Who stops must read the CQ once more afterwards: a sender that
 * saw it polling did not ring (the usual order: it posted, then read the
 * count; we lower the count, then read). */
void ofi_bell_polled(int delta)
{
  if (ofi_bell_on())
    __atomic_add_fetch(&pages[ofi.me]->polled, delta, __ATOMIC_SEQ_CST);
}

/* A tight poller of ours read a packet and will soon lower the count:
 * fetch the count's line for writing now, while the packet's handler
 * runs.  The sender read it after its post, so the decrement would
 * wait for the line (~110 ns) between the answer and the reply. */
void ofi_bell_polled_soon(void)
{
#if defined(__x86_64__) || defined(__i386__)
  if (ofi_bell_on())
    __asm__ __volatile__("prefetchw %0" ::"m"(pages[ofi.me]->polled));
#endif
}

/* Wake our progress thread if it sleeps longer than a slice, polled or
 * not: a thread that starts to poll wants it in 1 ms slices
 * (ofi_tp_tight).  One already in a slice is left alone: a system call
 * less at every start of an interrupt-mode wait.  The sleeper chose the
 * length under ofi.lock, and the starter counted itself under it. */
void ofi_bell_wake_self(void)
{
  struct ofi_bellpage *p = pages ? pages[ofi.me] : NULL;
  if (p && __atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST) == SLEEP_LONG)
    wake_sleeper(p);
}

/* Our own bell (senders of this process waking the progress thread). */
void ofi_bell_kick(void)
{
  ofi_bell_ring(ofi.me);
}

/* The progress thread, under ofi.lock: sleep until rung or ms pass
 * (ms < 0: no limit).  poll() reads the CQ once more after the flag is
 * up and returns the completions it handled; if any, no sleep. */
void ofi_bell_sleep(int ms, int (*poll)(void))
{
  struct ofi_bellpage *p = pages[ofi.me];
  int seen = __atomic_load_n(&p->seq, __ATOMIC_SEQ_CST);
  __atomic_store_n(&p->sleeping, ms == 1 ? SLEEP_SLICE : SLEEP_LONG,
                   __ATOMIC_SEQ_CST);
  if (poll() == 0) {
    pthread_mutex_unlock(&ofi.lock);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    syscall(SYS_futex, &p->seq, FUTEX_WAIT, seen, ms < 0 ? NULL : &ts,
            NULL, 0);
    pthread_mutex_lock(&ofi.lock);
  }
  __atomic_store_n(&p->sleeping, 0, __ATOMIC_SEQ_CST);
}
