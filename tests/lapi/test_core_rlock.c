/*
 * test_core_rlock.c - the handle lock of its own (src/am/lapi_rlock.c):
 * recursion, trylock, exclusion under contention (several threads bump a
 * plain counter that must come out exact, some of them at depth 2 and
 * some by trylock), getowner, and a cond wait woken by a plain
 * pthread_cond_signal sent under the lock by a thread that took the lock
 * meanwhile, also by one already spinning on trylock when the waiter
 * lets go (a bounded wait: a lost signal fails, it does not hang).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "core_util.h"

#include "am/lapi_am.h"

Test(core_rlock, recursion_and_trylock)
{
  struct lapi_rlock l;
  lapi_rlock_init(&l);
  cr_assert(lapi_rlock_trylock(&l));
  cr_assert(lapi_rlock_trylock(&l), "recursive trylock");
  lapi_rlock_lock(&l);
  cr_assert_eq(l.depth, 3);
  pthread_t tid;
  cr_assert_eq(lapi_rlock_owner(&l, &tid), 1);
  cr_assert(pthread_equal(tid, pthread_self()));
  lapi_rlock_unlock(&l);
  lapi_rlock_unlock(&l);
  cr_assert(lapi_rlock_mine(&l));
  lapi_rlock_unlock(&l);
  cr_assert_not(lapi_rlock_mine(&l));
  cr_assert(lapi_rlock_available(&l));
  cr_assert_eq(lapi_rlock_owner(&l, &tid), 0);
  cr_assert_eq(l.word, 0, "a released lock leaves no bits");
}

enum { THREADS = 4, ROUNDS = 20000 };

static struct lapi_rlock busy_lock;
static unsigned long busy_count; /* plain: the lock is its only guard */

static void *bump(void *arg)
{
  long k = (long)arg;
  for (int i = 0; i < ROUNDS; i++) {
    if (k % 2 == 1 && (i & 1)) {
      while (!lapi_rlock_trylock(&busy_lock))
        sched_yield();
    } else {
      lapi_rlock_lock(&busy_lock);
    }
    if (k == 2)
      lapi_rlock_lock(&busy_lock); /* depth 2 */
    CORE_CHECK(lapi_rlock_mine(&busy_lock));
    unsigned long v = busy_count;
    if ((i & 255) == 0)
      sched_yield(); /* held across a yield: others must sleep or spin */
    busy_count = v + 1;
    if (k == 2)
      lapi_rlock_unlock(&busy_lock);
    lapi_rlock_unlock(&busy_lock);
  }
  return NULL;
}

Test(core_rlock, contention_keeps_the_count_exact)
{
  lapi_rlock_init(&busy_lock);
  pthread_t t[THREADS];
  for (long k = 0; k < THREADS; k++)
    pthread_create(&t[k], NULL, bump, (void *)k);
  for (int k = 0; k < THREADS; k++)
    pthread_join(t[k], NULL);
  cr_assert_eq(busy_count, (unsigned long)THREADS * ROUNDS);
  cr_assert_eq(busy_lock.word, 0, "sleeper bit left behind");
  cr_assert_eq(core_failures, 0);
}

static struct lapi_rlock cond_lock;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_flag;

static void *set_and_signal(void *arg)
{
  (void)arg;
  lapi_rlock_lock(&cond_lock);
  cond_flag = 1;
  pthread_cond_signal(&cond); /* plain: under the lock, as with a mutex */
  lapi_rlock_unlock(&cond_lock);
  return NULL;
}

Test(core_rlock, cond_wait_releases_and_is_woken)
{
  lapi_rlock_init(&cond_lock);
  for (int round = 0; round < 200; round++) {
    cond_flag = 0;
    lapi_rlock_lock(&cond_lock);
    lapi_rlock_lock(&cond_lock);
    pthread_t t;
    pthread_create(&t, NULL, set_and_signal, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    while (!cond_flag)
      cr_assert_eq(lapi_rlock_cond_wait(&cond_lock, &cond, &ts), 0,
                   "the signal was lost");
    cr_assert_eq(cond_lock.depth, 2);
    cr_assert(lapi_rlock_mine(&cond_lock));
    lapi_rlock_unlock(&cond_lock);
    lapi_rlock_unlock(&cond_lock);
    pthread_join(t, NULL);
  }
}

/* The taker spins on trylock, so it would take a lock released to 0
 * before the waiter is inside pthread_cond_wait, and its signal would be
 * lost; the handoff state keeps it out until then. */
static int spinning; /* atomic: the taker spins */

static void *spin_set_and_signal(void *arg)
{
  (void)arg;
  __atomic_store_n(&spinning, 1, __ATOMIC_SEQ_CST);
  while (!lapi_rlock_trylock(&cond_lock))
    lapi_cpu_relax();
  cond_flag = 1;
  pthread_cond_signal(&cond);
  lapi_rlock_unlock(&cond_lock);
  return NULL;
}

Test(core_rlock, cond_wait_keeps_a_spinning_taker_out)
{
  lapi_rlock_init(&cond_lock);
  for (int round = 0; round < 200; round++) {
    cond_flag = 0;
    lapi_rlock_lock(&cond_lock);
    pthread_t t;
    __atomic_store_n(&spinning, 0, __ATOMIC_SEQ_CST);
    pthread_create(&t, NULL, spin_set_and_signal, NULL);
    while (!__atomic_load_n(&spinning, __ATOMIC_SEQ_CST))
      sched_yield();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    while (!cond_flag)
      cr_assert_eq(lapi_rlock_cond_wait(&cond_lock, &cond, &ts), 0,
                   "the signal was lost (round %d)", round);
    lapi_rlock_unlock(&cond_lock);
    pthread_join(t, NULL);
  }
}
