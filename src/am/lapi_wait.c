/*
 * lapi_wait.c - futexes, the doorbell and the recursive handle lock.
 *
 * See lapi_wait.h for the protocol.  Everything here is small on purpose:
 * the policy (what to wait for, whether to dispatch meanwhile) lives in
 * lapi_dispatch.c and lapi_cntr.c.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "am/lapi_setting.h"
#include "am/lapi_wait.h"

/* ---------------------------------------------------------------- spin */

static int spin_limit = -1; /* atomic: lapi_spin_hint_procs may lower it */
static int spin_from_env;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;
static int spin_cpus = 1;

static void spin_read_env(void)
{
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    cpus = CPU_COUNT(&set);
  spin_cpus = cpus;
  /* Spinning on one CPU only delays the thread we wait for. */
  spin_limit = lapi_setting_int("LAPI_SPIN", cpus > 1 ? 2000 : 0, INT_MAX,
                                "a count of polls", &spin_from_env);
}

int lapi_spin_limit(void)
{
  pthread_once(&spin_once, spin_read_env);
  return __atomic_load_n(&spin_limit, __ATOMIC_RELAXED);
}

/* Processes of one job sharing this host (the ofi transport tells, once
 * it knows): each keeps an application thread and a dispatcher busy
 * while it communicates, so unless every process has two CPUs a spinning
 * waiter only delays the thread it waits for (measured: 8-byte Amsend
 * ping-pong between 2 processes on 2 CPUs, 15 us without spinning, 150 us
 * and more with the default spin).  LAPI_SPIN still wins. */
static int host_procs = 1; /* atomic */

void lapi_spin_hint_procs(int procs)
{
  pthread_once(&spin_once, spin_read_env);
  __atomic_store_n(&host_procs, procs > 1 ? procs : 1, __ATOMIC_RELAXED);
  if (!spin_from_env && procs > 1 && spin_cpus < 2 * procs)
    __atomic_store_n(&spin_limit, 0, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------- tight poll */

static int tight_us = -1, tight_set;
static pthread_once_t tight_once = PTHREAD_ONCE_INIT;

static void tight_read_env(void)
{
  tight_us = lapi_setting_int("LAPI_POLL_US", LAPI_TIGHT_US, 1000000,
                              "a count of microseconds", &tight_set);
}

int lapi_tight_us(int polling)
{
  pthread_once(&tight_once, tight_read_env);
  return polling && !tight_set ? LAPI_TIGHT_US_POLLING : tight_us;
}

/* A thread that polls the network for the message it waits for keeps
 * one CPU.  With a CPU for each process of the host, pausing is cheapest
 * while the answer is due (a round trip of a few microseconds); later,
 * or with fewer CPUs than processes, the thread that will send the
 * answer may need ours (another process of the job, or anybody's on a
 * shared machine, where a pausing poller would keep it off the CPU for a
 * whole time slice): yield.  When the machine is busy, two processes of
 * a ping-pong can end up on one CPU for seconds: each waiter paused for
 * the whole budget before it let the other answer (measured: 8-byte
 * half round trip 12.8 us instead of 1.1), hence the learnt budget. */
static __thread __attribute__((tls_model("initial-exec"))) int64_t
    pause_budget = LAPI_TIGHT_PAUSE_NS;

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void lapi_tight_pace_start(struct lapi_tight_pace *p, int64_t start)
{
  pthread_once(&spin_once, spin_read_env);
  p->start = start;
  p->budget = pause_budget;
  p->yielded = 0;
  p->switched = 0;
}

void lapi_tight_relax(struct lapi_tight_pace *p, int64_t now)
{
  if (now - p->start < p->budget &&
      spin_cpus >= __atomic_load_n(&host_procs, __ATOMIC_RELAXED)) {
    lapi_cpu_relax();
    return;
  }
  /* A yield that found nobody else to run returns in ~0.3 us here; one
   * that let another thread run takes two context switches and more
   * (~2 us and up). */
  int64_t t0 = now_ns();
  sched_yield();
  if (now_ns() - t0 > LAPI_TIGHT_SWITCH_NS)
    p->switched = 1;
  p->yielded = 1;
}

void lapi_tight_pace_end(const struct lapi_tight_pace *p)
{
  if (!p->yielded)
    return; /* ended within the budget: it served */
  if (p->switched) {
    pause_budget /= 4; /* 10 us to 0 in a few waits */
  } else if (pause_budget < LAPI_TIGHT_PAUSE_NS) {
    pause_budget = 2 * pause_budget + 1000;
    if (pause_budget > LAPI_TIGHT_PAUSE_NS)
      pause_budget = LAPI_TIGHT_PAUSE_NS;
  }
}

void lapi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* -------------------------------------------------------------- futex */

void lapi_futex_wait(int *addr, int val, int ms)
{
  struct timespec ts, *tsp = NULL;
  if (ms >= 0) {
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    tsp = &ts;
  }
  /* EAGAIN (value changed), EINTR and ETIMEDOUT all mean: look again. */
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tsp, NULL, 0);
}

void lapi_futex_wake(int *addr, int n)
{
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ------------------------------------------------------------ doorbell */

/* Apart, so ringers reading the counts do not fight over `seq`.  The
 * dispatcher's idle sleep counts apart from every other sleeper, so that
 * the rings of a polling-mode process's data path (its posts, counters
 * and lock releases) do not wake it for nothing. */
static struct {
  int seq __attribute__((aligned(64)));
  int sleepers __attribute__((aligned(64)));
  int idle;
} bell;

unsigned lapi_bell_arm(void)
{
  __atomic_add_fetch(&bell.sleepers, 1, __ATOMIC_SEQ_CST);
  return (unsigned)__atomic_load_n(&bell.seq, __ATOMIC_SEQ_CST);
}

void lapi_bell_disarm(void)
{
  __atomic_sub_fetch(&bell.sleepers, 1, __ATOMIC_SEQ_CST);
}

void lapi_bell_sleep(unsigned seq, int ms)
{
  lapi_futex_wait(&bell.seq, (int)seq, ms);
  lapi_bell_disarm();
}

unsigned lapi_bell_arm_idle(void)
{
  __atomic_add_fetch(&bell.idle, 1, __ATOMIC_SEQ_CST);
  return (unsigned)__atomic_load_n(&bell.seq, __ATOMIC_SEQ_CST);
}

void lapi_bell_disarm_idle(void)
{
  __atomic_sub_fetch(&bell.idle, 1, __ATOMIC_SEQ_CST);
}

void lapi_bell_sleep_idle(unsigned seq)
{
  lapi_futex_wait(&bell.seq, (int)seq, -1);
  lapi_bell_disarm_idle();
}

static void bell_wake(void)
{
  __atomic_add_fetch(&bell.seq, 1, __ATOMIC_SEQ_CST);
  lapi_futex_wake(&bell.seq, INT_MAX);
}

void lapi_bell_ring(void)
{
  if (__atomic_load_n(&bell.sleepers, __ATOMIC_SEQ_CST) == 0 &&
      __atomic_load_n(&bell.idle, __ATOMIC_SEQ_CST) == 0)
    return;
  bell_wake();
}

void lapi_bell_ring_waiters(void)
{
  if (__atomic_load_n(&bell.sleepers, __ATOMIC_SEQ_CST) == 0)
    return;
  bell_wake();
}

/* -------------------------------------------------------- thread ids */

static __thread char self_tag __attribute__((tls_model("initial-exec")));

uintptr_t lapi_self_id(void)
{
  return (uintptr_t)&self_tag;
}

/* ------------------------------------------------------------- rlock */

void lapi_rlock_init(struct lapi_rlock *l)
{
  pthread_mutex_init(&l->m, NULL);
  l->owner = 0;
  l->depth = 0;
  l->wanted = 0;
}

static void rlock_took(struct lapi_rlock *l)
{
  __atomic_store_n(&l->owner_thread, pthread_self(), __ATOMIC_RELAXED);
  l->depth = 1;
  /* Others only learn from it that the lock is not theirs, which a
   * stale 0 does not change (their trylock fails): no fence needed. */
  __atomic_store_n(&l->owner, lapi_self_id(), __ATOMIC_RELEASE);
}

void lapi_rlock_lock(struct lapi_rlock *l)
{
  if (lapi_rlock_mine(l)) {
    l->depth++;
    return;
  }
  pthread_mutex_lock(&l->m);
  rlock_took(l);
}

int lapi_rlock_trylock(struct lapi_rlock *l)
{
  if (lapi_rlock_mine(l)) {
    l->depth++;
    return 1;
  }
  if (pthread_mutex_trylock(&l->m) != 0)
    return 0;
  rlock_took(l);
  return 1;
}

void lapi_rlock_unlock(struct lapi_rlock *l)
{
  if (--l->depth > 0)
    return;
  __atomic_store_n(&l->owner, 0, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&l->m);
  /* The idle dispatcher only if it skipped work behind this lock (a
   * load first: the exchange is a locked instruction, taken only when
   * somebody wants the lock). */
  if (__atomic_load_n(&l->wanted, __ATOMIC_SEQ_CST) &&
      __atomic_exchange_n(&l->wanted, 0, __ATOMIC_SEQ_CST))
    lapi_bell_ring();
  else
    lapi_bell_ring_waiters();
}

void lapi_rlock_want(struct lapi_rlock *l)
{
  __atomic_store_n(&l->wanted, 1, __ATOMIC_SEQ_CST);
}

int lapi_rlock_mine(const struct lapi_rlock *l)
{
  return __atomic_load_n(&l->owner, __ATOMIC_SEQ_CST) == lapi_self_id();
}

int lapi_rlock_available(const struct lapi_rlock *l)
{
  uintptr_t o = __atomic_load_n(&l->owner, __ATOMIC_SEQ_CST);
  return o == 0 || o == lapi_self_id();
}

int lapi_rlock_owner(const struct lapi_rlock *l, pthread_t *tid)
{
  if (__atomic_load_n(&l->owner, __ATOMIC_SEQ_CST) == 0)
    return 0;
  *tid = __atomic_load_n(&l->owner_thread, __ATOMIC_RELAXED);
  return 1;
}

int lapi_rlock_cond_wait(struct lapi_rlock *l, pthread_cond_t *c,
                         const struct timespec *abstime)
{
  if (!lapi_rlock_mine(l))
    return EPERM;
  int depth = l->depth;
  l->depth = 0;
  __atomic_store_n(&l->owner, 0, __ATOMIC_SEQ_CST);
  /* Handlers skipped while we held the lock may run now. */
  lapi_bell_ring();
  int rc = abstime ? pthread_cond_timedwait(c, &l->m, abstime)
                   : pthread_cond_wait(c, &l->m);
  rlock_took(l);
  l->depth = depth;
  return rc;
}
