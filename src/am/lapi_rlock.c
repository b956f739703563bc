/*
 * lapi_rlock.c - the recursive handle lock (see lapi_rlock.h).
 *
 * The word: 0 free, else the holder's id, with LAPI_RLOCK_SLEEPERS set
 * once a thread sleeps (or is about to) on it.  A waiter that sets the
 * bit keeps it when it gets the lock, since others may still sleep: one
 * spare wake at worst, never a lost one.  The futex is the word's low 32
 * bits (the sleeper bit is among them): a thread sleeps only while they
 * still show the bit, i.e. while the lock is held by somebody whose
 * release will wake one sleeper.
 *
 * A cond wait releases the word to LAPI_RLOCK_HANDOFF while it holds
 * cond_m, and cond_m goes only inside pthread_cond_wait: whoever takes a
 * handed-off word takes cond_m first, so it holds the lock only once the
 * waiter waits, and a pthread_cond_signal under the lock cannot fall
 * between the release and the wait.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>

#include "am/lapi_wait.h"

__thread uint64_t lapi_self_tag __attribute__((tls_model("initial-exec")));

/* Tries before a contended acquire sleeps: a handler runs for a few
 * microseconds at most, a sleep and wake cost as much. */
enum { RLOCK_SPIN = 100 };

static int *futex_half(struct lapi_rlock *l)
{
  int *halves = (int *)(void *)&l->word;
  return sizeof l->word == 8 && __BYTE_ORDER == __BIG_ENDIAN ? halves + 1
                                                             : halves;
}

void lapi_rlock_init(struct lapi_rlock *l)
{
  l->word = 0;
  l->depth = 0;
  l->wanted = 0;
  l->thread_of = 0;
  pthread_mutex_init(&l->cond_m, NULL);
}

static void rlock_took(struct lapi_rlock *l, uintptr_t me)
{
  l->depth = 1;
  /* For mutex_getowner only: it matches owner_thread to the word by
   * thread_of, written after it. */
  __atomic_store_n(&l->owner_thread, pthread_self(), __ATOMIC_RELAXED);
  __atomic_store_n(&l->thread_of, me, __ATOMIC_RELEASE);
}

static int rlock_cas(struct lapi_rlock *l, uintptr_t from, uintptr_t to)
{
  return __atomic_compare_exchange_n(&l->word, &from, to, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED);
}

/* A word handed off by a cond wait, as `to`: through cond_m, so not
 * before the waiter waits.  block 0: fail rather than wait for cond_m
 * (held for a moment only, by a waiter entering or leaving its wait). */
static int rlock_take_handoff(struct lapi_rlock *l, uintptr_t to, int block)
{
  if (block)
    pthread_mutex_lock(&l->cond_m);
  else if (pthread_mutex_trylock(&l->cond_m) != 0)
    return 0;
  int ok = rlock_cas(l, LAPI_RLOCK_HANDOFF, to);
  pthread_mutex_unlock(&l->cond_m);
  return ok;
}

/* The contended acquire: spin briefly, then sleep with the bit set. */
static void rlock_wait(struct lapi_rlock *l, uintptr_t me)
{
  for (int i = 0; i < RLOCK_SPIN; i++) {
    uintptr_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
    if ((w == 0 && rlock_cas(l, 0, me)) ||
        (w == LAPI_RLOCK_HANDOFF && rlock_take_handoff(l, me, 1)))
      return;
    lapi_cpu_relax();
  }
  for (;;) {
    uintptr_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
    if (w == 0 || w == LAPI_RLOCK_HANDOFF) {
      if (w == 0 ? rlock_cas(l, 0, me | LAPI_RLOCK_SLEEPERS)
                 : rlock_take_handoff(l, me | LAPI_RLOCK_SLEEPERS, 1))
        return;
      continue;
    }
    if (!(w & LAPI_RLOCK_SLEEPERS) && !rlock_cas(l, w, w | LAPI_RLOCK_SLEEPERS))
      continue;
    lapi_futex_wait(futex_half(l), (int)(uint32_t)(w | LAPI_RLOCK_SLEEPERS),
                    -1);
  }
}

void lapi_rlock_lock(struct lapi_rlock *l)
{
  uintptr_t me = lapi_self_id();
  uintptr_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
  if ((w & ~LAPI_RLOCK_SLEEPERS) == me) {
    l->depth++;
    return;
  }
  if (w != 0 || !rlock_cas(l, 0, me))
    rlock_wait(l, me);
  rlock_took(l, me);
}

int lapi_rlock_trylock(struct lapi_rlock *l)
{
  uintptr_t me = lapi_self_id();
  uintptr_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
  if ((w & ~LAPI_RLOCK_SLEEPERS) == me) {
    l->depth++;
    return 1;
  }
  if (w == LAPI_RLOCK_HANDOFF ? !rlock_take_handoff(l, me, 0)
                              : w != 0 || !rlock_cas(l, 0, me))
    return 0;
  rlock_took(l, me);
  return 1;
}

/* Free the word as `to` (one exchange: also the fence between the
 * release and the look at wanted, against lapi_rlock_want's store and
 * re-check) and wake one sleeper if there are any. */
static void rlock_release(struct lapi_rlock *l, uintptr_t to)
{
  if (__atomic_exchange_n(&l->word, to, __ATOMIC_SEQ_CST) & LAPI_RLOCK_SLEEPERS)
    lapi_futex_wake(futex_half(l), 1);
}

void lapi_rlock_unlock(struct lapi_rlock *l)
{
  if (--l->depth > 0)
    return;
  rlock_release(l, 0);
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

int lapi_rlock_available(const struct lapi_rlock *l)
{
  uintptr_t o = __atomic_load_n(&l->word, __ATOMIC_SEQ_CST) &
                ~LAPI_RLOCK_SLEEPERS;
  return o == 0 || o == LAPI_RLOCK_HANDOFF || o == lapi_self_id();
}

int lapi_rlock_owner(const struct lapi_rlock *l, pthread_t *tid)
{
  for (;;) {
    uintptr_t o = __atomic_load_n(&l->word, __ATOMIC_SEQ_CST) &
                  ~LAPI_RLOCK_SLEEPERS;
    if (o == 0 || o == LAPI_RLOCK_HANDOFF)
      return 0;
    /* A holder that just took the word writes its pthread next (yield:
     * on one CPU it may be the thread preempted in between). */
    if (__atomic_load_n(&l->thread_of, __ATOMIC_ACQUIRE) == o) {
      pthread_t t = __atomic_load_n(&l->owner_thread, __ATOMIC_RELAXED);
      if ((__atomic_load_n(&l->word, __ATOMIC_SEQ_CST) &
           ~LAPI_RLOCK_SLEEPERS) == o) {
        *tid = t;
        return 1;
      }
    }
    sched_yield();
  }
}

int lapi_rlock_cond_wait(struct lapi_rlock *l, pthread_cond_t *c,
                         const struct timespec *abstime)
{
  if (!lapi_rlock_mine(l))
    return EPERM;
  int depth = l->depth;
  pthread_mutex_lock(&l->cond_m);
  l->depth = 0;
  rlock_release(l, LAPI_RLOCK_HANDOFF);
  /* Handlers skipped while we held the lock may run now. */
  lapi_bell_ring();
  int rc = abstime ? pthread_cond_timedwait(c, &l->cond_m, abstime)
                   : pthread_cond_wait(c, &l->cond_m);
  pthread_mutex_unlock(&l->cond_m);
  lapi_rlock_lock(l);
  l->depth = depth;
  return rc;
}
