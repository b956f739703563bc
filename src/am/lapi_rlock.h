/*
 * lapi_rlock.h - the handle lock: held while handlers of the handle run,
 * recursive (a handler may call LAPI on its own handle), and the lock
 * LAPI_Util's mutex_lock hands to the user.  Releasing it rings the
 * doorbell for waiters, and for the idle dispatcher too if it skipped the
 * handle's work while the lock was held (lapi_rlock_want).
 *
 * One atomic word holds the holder's lapi_self_id() (0 if free) and a bit
 * that says somebody sleeps on it: an uncontended acquire is one CAS, a
 * release one exchange, the contended path a futex wait/wake.  The depth
 * is a plain field only the holder writes.  Every small message takes and
 * releases this lock; a pthread mutex plus owner fields cost three locked
 * instructions and ~130 instructions a pair (docs/PERFORMANCE.md,
 * session 10).
 */
#ifndef LAPI_RLOCK_H
#define LAPI_RLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* The id of the calling thread, never 0 and even (bit 0 is the lock's
 * sleeper bit): the address of a thread-local word. */
extern __thread uint64_t lapi_self_tag
    __attribute__((tls_model("initial-exec")));

static inline uintptr_t lapi_self_id(void)
{
  return (uintptr_t)&lapi_self_tag;
}

#define LAPI_RLOCK_SLEEPERS ((uintptr_t)1)
/* Free, but a lapi_rlock_cond_wait is on its way into pthread_cond_wait:
 * taken only through cond_m, which that waiter holds until it waits, so
 * a signal sent under the lock reaches it (as with a pthread mutex). */
#define LAPI_RLOCK_HANDOFF ((uintptr_t)2)

struct lapi_rlock {
  uintptr_t word;         /* atomic: holder's id | LAPI_RLOCK_SLEEPERS,
                             0 or LAPI_RLOCK_HANDOFF if free */
  int depth;              /* the holder's recursion depth, only it writes */
  int wanted;             /* atomic: the dispatcher waits for the release */
  pthread_t owner_thread; /* atomic: the holder's pthread (mutex_getowner) */
  uintptr_t thread_of;    /* atomic: whose id owner_thread is */
  /* Pairs lapi_cond_t waits with the lock: a waiter holds it from before
   * its release (to LAPI_RLOCK_HANDOFF) until inside pthread_cond_wait. */
  pthread_mutex_t cond_m;
};

void lapi_rlock_init(struct lapi_rlock *l);
void lapi_rlock_lock(struct lapi_rlock *l);
int lapi_rlock_trylock(struct lapi_rlock *l); /* 1 if taken */
void lapi_rlock_unlock(struct lapi_rlock *l);

static inline int lapi_rlock_mine(const struct lapi_rlock *l)
{
  return (__atomic_load_n(&l->word, __ATOMIC_SEQ_CST) &
          ~LAPI_RLOCK_SLEEPERS) == lapi_self_id();
}

/* The caller (the dispatcher) found work behind the held lock: the
 * release must wake it.  Re-check availability after this. */
void lapi_rlock_want(struct lapi_rlock *l);
/* Free, or held by the caller: a dispatcher here could take it. */
int lapi_rlock_available(const struct lapi_rlock *l);
/* 1 and *tid = the holder, or 0 if the lock is free. */
int lapi_rlock_owner(const struct lapi_rlock *l, pthread_t *tid);
/* pthread_cond_wait with the lock fully released meanwhile (any depth);
 * abstime NULL waits without a limit.  Returns 0, ETIMEDOUT or EPERM. */
int lapi_rlock_cond_wait(struct lapi_rlock *l, pthread_cond_t *c,
                         const struct timespec *abstime);

#endif /* LAPI_RLOCK_H */
