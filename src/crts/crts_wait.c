/*
 * crts_wait.c - spin-then-futex waits, barriers and locks for the emulator.
 */

#include "crts_wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crts_cg.h"

static int spin_limit_cached = -1;
static int spin_yields; /* oversubscribed: a polling step yields the core */

/* Cores this process may run on (taskset counts, not the machine's). */
static int usable_cores(void)
{
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int crts_spin_limit(void)
{
  int limit = __atomic_load_n(&spin_limit_cached, __ATOMIC_RELAXED);
  if (limit >= 0)
    return limit;
  int threads = crts_cg.ncpes > 0 ? crts_cg.ncpes + 1 : 2;
  /*
   * With a core per thread, the thread we wait for runs meanwhile: poll
   * with a pause for a few tens of microseconds.  With more threads than
   * cores, it is waiting for our core: each polling step yields it instead,
   * which costs far less than a futex sleep and wake when the wait is short.
   * Either way the waiter sleeps on a futex once the limit is spent.
   */
  int yields = usable_cores() < threads;
  limit = yields ? 16 : 1000;
  const char *env = getenv("CRTS_SPIN");
  if (env && *env)
    limit = atoi(env) > 0 ? atoi(env) : 0;
  const char *mode = getenv("CRTS_SPIN_MODE");
  if (mode && *mode)
    yields = mode[0] == 'y';
  __atomic_store_n(&spin_yields, yields, __ATOMIC_RELAXED);
  __atomic_store_n(&spin_limit_cached, limit, __ATOMIC_RELAXED);
  return limit;
}

void crts_cpu_relax(void)
{
  if (__atomic_load_n(&spin_yields, __ATOMIC_RELAXED)) {
    sched_yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  atomic_signal_fence(memory_order_seq_cst);
#endif
}

void crts_futex_wait(_Atomic uint32_t *word, uint32_t expected, int shared)
{
  int op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
  /* EAGAIN (value changed) and EINTR both mean: look again. */
  syscall(SYS_futex, (uint32_t *)word, op, expected, NULL, NULL, 0);
}

/*
 * Seconds a CPE sleeps in a barrier, lock or reply-word wait before it says
 * so (CRTS_STALL_WARN; 0, the default, never: long waits can be legitimate).
 */
static int stall_warn_seconds(void)
{
  static int cached = -1;
  int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *env = getenv("CRTS_STALL_WARN");
    v = env && *env ? atoi(env) : 0;
    if (v < 0)
      v = 0;
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
  }
  return v;
}

static __thread int stalled_seconds;

/*
 * Sleep until woken or until the stall period passes; a waiter that keeps
 * timing out prints one line per period, so a mismatched ssync or a reply
 * word that never arrives is reported instead of hanging silently.
 */
static void sleep_on(_Atomic uint32_t *word, uint32_t expected, int shared,
                     const char *what)
{
  int warn = stall_warn_seconds();
  if (warn == 0) {
    crts_futex_wait(word, expected, shared);
    return;
  }
  struct timespec ts = { .tv_sec = warn, .tv_nsec = 0 };
  int op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
  long rc = syscall(SYS_futex, (uint32_t *)word, op, expected, &ts, NULL, 0);
  if (rc == -1 && errno == ETIMEDOUT) {
    stalled_seconds += warn;
    crts_report(what, "still waiting after %d s (mismatched calls, or a "
                "peer that never signals?)", stalled_seconds);
  } else {
    stalled_seconds = 0;
  }
}

void crts_futex_wake(_Atomic uint32_t *word, int count, int shared)
{
  int op = shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
  syscall(SYS_futex, (uint32_t *)word, op, count, NULL, NULL, 0);
}

void crts_barrier_wait(struct crts_barrier *b, uint32_t count, int shared)
{
  if (count <= 1)
    return;
  uint32_t gen = atomic_load_explicit(&b->generation, memory_order_acquire);
  uint32_t arrived = atomic_fetch_add(&b->arrived, 1) + 1;
  if (arrived == count) {
    atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
    atomic_fetch_add(&b->generation, 1);
    if (atomic_load(&b->sleepers) != 0)
      crts_futex_wake(&b->generation, INT_MAX, shared);
    return;
  }
  int limit = crts_spin_limit();
  for (int i = 0; i < limit; i++) {
    if (atomic_load_explicit(&b->generation, memory_order_acquire) != gen)
      return;
    crts_cpu_relax();
  }
  atomic_fetch_add(&b->sleepers, 1);
  while (atomic_load(&b->generation) == gen)
    sleep_on(&b->generation, gen, shared, "barrier");
  atomic_fetch_sub(&b->sleepers, 1);
}

void crts_lockword_acquire(_Atomic uint32_t *w, int shared)
{
  uint32_t c = 0;
  if (atomic_compare_exchange_strong(w, &c, 1))
    return;
  int limit = crts_spin_limit();
  for (int i = 0; i < limit; i++) {
    c = 0;
    if (atomic_load_explicit(w, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_weak(w, &c, 1))
      return;
    crts_cpu_relax();
  }
  /* Mark the word contended so the holder wakes us on release. */
  if (c != 2)
    c = atomic_exchange(w, 2);
  while (c != 0) {
    sleep_on(w, 2, shared, "lock");
    c = atomic_exchange(w, 2);
  }
}

int crts_lockword_try(_Atomic uint32_t *w)
{
  uint32_t c = 0;
  return atomic_compare_exchange_strong(w, &c, 1) ? 0 : 1;
}

void crts_lockword_release(_Atomic uint32_t *w, int shared)
{
  if (atomic_exchange(w, 0) == 2)
    crts_futex_wake(w, 1, shared);
}

void crts_lock_acquire(struct crts_lock *l, int shared)
{
  crts_lockword_acquire(&l->word, shared);
}

int crts_lock_try(struct crts_lock *l) { return crts_lockword_try(&l->word); }

void crts_lock_release(struct crts_lock *l, int shared)
{
  crts_lockword_release(&l->word, shared);
}

void crts_word_wait_ge(volatile int *word, int value, struct crts_waiter *w)
{
  _Atomic int *cur = (_Atomic int *)word;
  if (atomic_load_explicit(cur, memory_order_acquire) >= value)
    return;
  int limit = crts_spin_limit();
  for (int i = 0; i < limit; i++) {
    if (atomic_load_explicit(cur, memory_order_acquire) >= value)
      return;
    crts_cpu_relax();
  }
  for (;;) {
    /* Publish, then re-check: pairs with the notifier's add-then-look. */
    atomic_store(&w->value, value);
    atomic_store(&w->word, word);
    int seen = atomic_load(cur);
    if (seen >= value)
      break;
    sleep_on((_Atomic uint32_t *)word, (uint32_t)seen, 0, "wait_value");
  }
  atomic_store(&w->word, NULL);
}

void crts_word_add_notify(volatile int *word, int add, struct crts_waiter *w)
{
  int now = atomic_fetch_add((_Atomic int *)word, add) + add;
  /* The waiter stored its value before its word: seeing the word, we see
   * the value it waits for (or a later one). */
  if (w && atomic_load(&w->word) == word && now >= atomic_load(&w->value))
    crts_futex_wake((_Atomic uint32_t *)word, INT_MAX, 0);
}

void crts_wait_change(_Atomic uint32_t *word, uint32_t expected, int shared)
{
  int limit = crts_spin_limit();
  for (int i = 0; i < limit; i++) {
    if (atomic_load_explicit(word, memory_order_acquire) != expected)
      return;
    crts_cpu_relax();
  }
  while (atomic_load(word) == expected)
    crts_futex_wait(word, expected, shared); /* joins may last: no warning */
}
