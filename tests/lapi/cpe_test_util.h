/*
 * cpe_test_util.h - helpers of the CPE-task tests (tests/lapi/test_cpe_*.c).
 *
 * A test spawns a core group whose CPEs are LAPI tasks (CPE-task mode):
 * ct_run(N, fn, arg) sets CRTS_NUM_CPES=N, starts the runtime, spawns fn on
 * every CPE and joins.  Criterion runs every Test in its own process, so
 * each one gets a fresh runtime.  Criterion assertions work only on the
 * test thread: CPE code and handlers (which run on the MPE dispatcher)
 * record failures with CT_CHECK / CT_CHECK_EQ / CT_OK and the test thread
 * asserts CT_ASSERT_NO_FAILURE() after the join.
 *
 * A CPE's stack is 32 KiB: big data lives in main memory (malloc), in
 * __thread_local arrays or in CRTS_pldm_malloc memory, never on the stack.
 */
#ifndef CPE_TEST_UTIL_H
#define CPE_TEST_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_getname_np */
#endif

#include <criterion/criterion.h>
#include <crts.h>
#include <lapi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crts/crts_engine.h"
#include "lapi_test_util.h"

#define CT_TIMEOUT 60 /* seconds; a lost wake-up fails instead of hanging */

/* ------------------------------------------------------------ failures */

/* A CPE thread records its failures as any thread off the test thread
 * does (lapi_test_util.h); the test thread asserts there were none. */
#define ct_fail lt_fail
#define ct_failure_count lt_failure_count

#define CT_CHECK(cond)                                                       \
  do {                                                                       \
    if (!(cond))                                                             \
      ct_fail("CPE %d: %s:%d: %s", crts_engine_cpe_tid(), __FILE__,          \
              __LINE__, #cond);                                              \
  } while (0)

#define CT_CHECK_EQ(a, b)                                                    \
  do {                                                                       \
    long long ct_a_ = (long long)(a), ct_b_ = (long long)(b);                \
    if (ct_a_ != ct_b_)                                                      \
      ct_fail("CPE %d: %s:%d: %s == %s (%lld != %lld)",                      \
              crts_engine_cpe_tid(), __FILE__, __LINE__, #a, #b, ct_a_,      \
              ct_b_);                                                        \
  } while (0)

#define CT_OK(call) CT_CHECK_EQ((call), LAPI_SUCCESS)

#define CT_ASSERT_NO_FAILURE() LT_ASSERT_HANDLERS_OK()

/* ---------------------------------------------------------------- run */

/* CRTS_NUM_CPES=ncpes, CRTS_init, spawn fn(arg) on every CPE, join. */
static inline void ct_run(int ncpes, void (*fn)(void *), void *arg)
{
  char n[16];
  snprintf(n, sizeof n, "%d", ncpes);
  setenv("CRTS_NUM_CPES", n, 1);
  cr_assert_eq(CRTS_init(), 0, "CRTS_init failed");
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))fn, arg), 0);
  cr_assert_eq(CRTS_athread_join(), 0);
}

/* ---------------------------------------------------------- a task */

struct ct_task {
  lapi_handle_t h;
  int me, n;
  uint next, prev; /* (me + 1) % n, (me + n - 1) % n */
};

static inline void ct_open_err(struct ct_task *t, LAPI_err_hndlr *err)
{
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.err_hndlr = err;
  memset(t, 0, sizeof *t);
  CT_OK(LAPI_Init(&t->h, &info));
  CT_OK(LAPI_Qenv(t->h, TASK_ID, &t->me));
  CT_OK(LAPI_Qenv(t->h, NUM_TASKS, &t->n));
  if (t->n < 1)
    t->n = 1;
  t->next = (uint)((t->me + 1) % t->n);
  t->prev = (uint)((t->me + t->n - 1) % t->n);
}

static inline void ct_open(struct ct_task *t) { ct_open_err(t, NULL); }

static inline void ct_close(struct ct_task *t)
{
  CT_OK(LAPI_Gfence(t->h));
  CT_OK(LAPI_Term(t->h));
}

/* Collective: every task's `mine`, into tab[NUM_TASKS]. */
static inline void ct_gather(struct ct_task *t, void *mine, void **tab)
{
  CT_OK(LAPI_Address_init(t->h, mine, tab));
  CT_CHECK(tab[t->me] == mine);
}

static inline void ct_zero(struct ct_task *t, lapi_cntr_t *c)
{
  CT_OK(LAPI_Setcntr(t->h, c, 0));
}

static inline void ct_wait(struct ct_task *t, lapi_cntr_t *c, int v)
{
  CT_OK(LAPI_Waitcntr(t->h, c, v, NULL));
}

/* ------------------------------------------------- where handlers run */

/* Handlers must run on the MPE dispatcher ("lapi-mpe"), never on a CPE
 * thread; every handler of the tests calls this. */
static inline void ct_on_mpe(void)
{
  static int calls;
  __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  char name[16] = "";
  pthread_getname_np(pthread_self(), name, sizeof name);
  if (crts_engine_cpe_tid() >= 0 || strcmp(name, "lapi-mpe") != 0)
    ct_fail("a handler ran on thread \"%s\" (CPE %d), not on the MPE "
            "dispatcher", name, crts_engine_cpe_tid());
}

/* ------------------------------------------------------------ helpers */

/* Deterministic bytes: the value of byte i of a region tagged `tag`. */
static inline unsigned char ct_byte(uint32_t tag, size_t i)
{
  uint32_t x = tag * 2654435761u ^ (uint32_t)i * 40503u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (unsigned char)x;
}

static inline void ct_fill(void *p, size_t n, uint32_t tag)
{
  unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    b[i] = ct_byte(tag, i);
}

/* A small PRNG (xorshift64*), seeded per task and round. */
static inline uint64_t ct_rand(uint64_t *s)
{
  uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545f4914f6cdd1dull;
}

static inline size_t ct_below(uint64_t *s, size_t n)
{
  return n ? (size_t)(ct_rand(s) % n) : 0;
}

#endif /* CPE_TEST_UTIL_H */
