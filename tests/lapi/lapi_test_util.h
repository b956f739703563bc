/*
 * lapi_test_util.h - helpers shared by the LAPI core tests
 * (tests/lapi/test_am_*.c).  Public API (lapi.h) only.
 *
 * tests/CMakeLists.txt builds every test file alone, so everything here is
 * static inline, and shared state lives in function-local statics behind
 * accessors (no "defined but not used" warnings in files that skip a part).
 *
 * Job shape: a test takes TASK_ID and NUM_TASKS from LAPI_Qenv, sends to
 * tgt = (me + 1) % n and receives from src = (me + n - 1) % n.  With one
 * task (today: no launcher) both are task 0 and every message goes through
 * the loopback.  Addresses in another task (its counters, its buffers) come
 * from LAPI_Address_init, so the tests stay valid when a later issue runs
 * them with more tasks.
 *
 * Header and completion handlers run on the dispatcher thread (or on the
 * polling thread), where a Criterion assertion must not fire: they record
 * failures with LT_CHECK, and the test thread calls LT_ASSERT_HANDLERS_OK()
 * once the messages are complete.
 */
#ifndef LAPI_TEST_UTIL_H
#define LAPI_TEST_UTIL_H

#include <criterion/criterion.h>
#include <lapi.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-test time limit: a hang (a lost message, a missed wake-up) fails the
 * test instead of blocking ctest.  Tests take milliseconds; nothing is ever
 * asserted about time. */
#define LT_TIMEOUT 15

/* Byte written around every target region: a byte the data never has. */
#define LT_GUARD 0xEE

/* One LAPI instance and where this task sends. */
struct lt_job {
  lapi_handle_t h;
  int me;    /* TASK_ID */
  int n;     /* NUM_TASKS */
  uint tgt;  /* (me + 1) % n */
  uint src;  /* (me + n - 1) % n: whose messages this task receives */
};

/* --------------------------------------------------- handler failures */

struct lt_failures {
  int count;                 /* atomic */
  pthread_mutex_t lock;      /* protects first */
  char first[256];
};

static inline struct lt_failures *lt_failures(void)
{
  static struct lt_failures f = {0, PTHREAD_MUTEX_INITIALIZER, ""};
  return &f;
}

/* Record a failure seen off the test thread (keeps the first message). */
static inline void lt_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void lt_fail(const char *fmt, ...)
{
  struct lt_failures *f = lt_failures();
  pthread_mutex_lock(&f->lock);
  if (__atomic_load_n(&f->count, __ATOMIC_RELAXED) == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->first, sizeof f->first, fmt, ap);
    va_end(ap);
  }
  __atomic_add_fetch(&f->count, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&f->lock);
}

static inline int lt_failure_count(void)
{
  return __atomic_load_n(&lt_failures()->count, __ATOMIC_SEQ_CST);
}

/* Check a condition in a handler or a helper thread. */
#define LT_CHECK(cond)                                                       \
  do {                                                                       \
    if (!(cond))                                                             \
      lt_fail("%s:%d: %s", __FILE__, __LINE__, #cond);                       \
  } while (0)

/* Check two integers in a handler, printing both. */
#define LT_CHECK_EQ(a, b)                                                    \
  do {                                                                       \
    long long lt_a_ = (long long)(a), lt_b_ = (long long)(b);                \
    if (lt_a_ != lt_b_)                                                      \
      lt_fail("%s:%d: %s == %s (%lld != %lld)", __FILE__, __LINE__, #a, #b,  \
              lt_a_, lt_b_);                                                 \
  } while (0)

/* On the test thread: no handler recorded a failure. */
#define LT_ASSERT_HANDLERS_OK()                                              \
  do {                                                                       \
    pthread_mutex_lock(&lt_failures()->lock);                                \
    char lt_msg_[256];                                                       \
    memcpy(lt_msg_, lt_failures()->first, sizeof lt_msg_);                   \
    pthread_mutex_unlock(&lt_failures()->lock);                              \
    cr_assert_eq(lt_failure_count(), 0,                                      \
                 "%d failure(s) in handlers/threads; first: %s",             \
                 lt_failure_count(), lt_msg_);                               \
  } while (0)

/* Call a LAPI function on the test thread and require LAPI_SUCCESS. */
#define LT_OK(call)                                                          \
  do {                                                                       \
    int lt_rc_ = (call);                                                     \
    if (lt_rc_ != LAPI_SUCCESS) {                                            \
      char lt_s_[LAPI_MAX_ERR_STRING];                                       \
      if (LAPI_Msg_string(lt_rc_, lt_s_) != LAPI_SUCCESS)                    \
        lt_s_[0] = 0;                                                        \
      cr_assert_fail("%s returned %d (%s)", #call, lt_rc_, lt_s_);           \
    }                                                                        \
  } while (0)

/* The same from a handler or helper thread (records, never aborts). */
#define LT_CHECK_OK(call)                                                    \
  do {                                                                       \
    int lt_rc_ = (call);                                                     \
    if (lt_rc_ != LAPI_SUCCESS)                                              \
      lt_fail("%s:%d: %s returned %d", __FILE__, __LINE__, #call, lt_rc_);   \
  } while (0)

/* ------------------------------------------------------------ the job */

static inline void lt_learn(struct lt_job *j)
{
  LT_OK(LAPI_Qenv(j->h, TASK_ID, &j->me));
  LT_OK(LAPI_Qenv(j->h, NUM_TASKS, &j->n));
  cr_assert_geq(j->n, 1);
  cr_assert(j->me >= 0 && j->me < j->n, "TASK_ID %d, NUM_TASKS %d", j->me,
            j->n);
  j->tgt = (uint)((j->me + 1) % j->n);
  j->src = (uint)((j->me + j->n - 1) % j->n);
}

/* LAPI_Init with the given (zeroed then filled) info. */
static inline void lt_open_info(struct lt_job *j, lapi_info_t *info)
{
  memset(j, 0, sizeof *j);
  LT_OK(LAPI_Init(&j->h, info));
  lt_learn(j);
}

/* LAPI_Init with a zeroed lapi_info_t and an optional error handler. */
static inline void lt_open_err(struct lt_job *j, LAPI_err_hndlr *err)
{
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.err_hndlr = err;
  lt_open_info(j, &info);
}

static inline void lt_open(struct lt_job *j) { lt_open_err(j, NULL); }

/* Collective end: every task's messages are done, then LAPI_Term. */
static inline void lt_close(struct lt_job *j)
{
  LT_OK(LAPI_Gfence(j->h));
  LT_OK(LAPI_Term(j->h));
}

/* Collective: the address that task tgt passed for its `mine`. */
static inline void *lt_at_tgt(struct lt_job *j, void *mine)
{
  void **tab = calloc((size_t)j->n, sizeof *tab);
  cr_assert_not_null(tab);
  LT_OK(LAPI_Address_init(j->h, mine, tab));
  cr_assert_eq(tab[j->me], mine, "Address_init: my own entry is %p, not %p",
               tab[j->me], mine);
  void *r = tab[j->tgt];
  free(tab);
  return r;
}

static inline lapi_cntr_t *lt_cntr_at_tgt(struct lt_job *j, lapi_cntr_t *c)
{
  return (lapi_cntr_t *)lt_at_tgt(j, c);
}

/* Read a counter on the test thread. */
static inline int lt_get(struct lt_job *j, lapi_cntr_t *c)
{
  int v = -12345;
  LT_OK(LAPI_Getcntr(j->h, c, &v));
  return v;
}

/* Waitcntr on the test thread; returns the value left. */
static inline int lt_wait(struct lt_job *j, lapi_cntr_t *c, int val)
{
  int cur = -12345;
  LT_OK(LAPI_Waitcntr(j->h, c, val, &cur));
  return cur;
}

static inline int lt_load(const int *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static inline void lt_store(int *p, int v)
{
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static inline int lt_inc(int *p)
{
  return __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
}

/* Make progress until *flag >= val (no time limit: LT_TIMEOUT catches a
 * hang).  Probe lets a polling-mode handle dispatch; in interrupt mode it
 * is a no-op and the yield lets the dispatcher run on a single core. */
static inline void lt_poll_until(struct lt_job *j, const int *flag, int val)
{
  while (lt_load(flag) < val) {
    LT_OK(LAPI_Probe(j->h));
    sched_yield();
  }
}

/* Give any other thread plenty of chances to run, without LAPI calls. */
static inline void lt_yield_a_lot(void)
{
  for (int i = 0; i < 2000; i++)
    sched_yield();
}

/* ----------------------------------------------------- data patterns */

/* Byte i of the pattern `seed`: never LT_GUARD, differs between seeds. */
static inline unsigned char lt_byte(uint64_t seed, uint64_t i)
{
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 29;
  unsigned char b = (unsigned char)x;
  return b == LT_GUARD ? (unsigned char)(b ^ 0x5A) : b;
}

static inline void lt_fill(void *buf, size_t len, uint64_t seed)
{
  unsigned char *p = buf;
  for (size_t i = 0; i < len; i++)
    p[i] = lt_byte(seed, i);
}

/* First index in [0, len) where buf differs from pattern seed at offset
 * `from`, or -1. */
static inline long lt_find_diff(const void *buf, size_t len, uint64_t seed,
                                size_t from)
{
  const unsigned char *p = buf;
  for (size_t i = 0; i < len; i++)
    if (p[i] != lt_byte(seed, from + i))
      return (long)i;
  return -1;
}

/* First index in [0, len) that is not LT_GUARD, or -1. */
static inline long lt_find_nonguard(const void *buf, size_t len)
{
  const unsigned char *p = buf;
  for (size_t i = 0; i < len; i++)
    if (p[i] != LT_GUARD)
      return (long)i;
  return -1;
}

/* xorshift64*: deterministic random numbers for layouts. */
static inline uint64_t lt_rand(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Uniform-ish in [0, n) (0 when n == 0). */
static inline uint64_t lt_below(uint64_t *s, uint64_t n)
{
  return n ? lt_rand(s) % n : 0;
}

#endif /* LAPI_TEST_UTIL_H */
