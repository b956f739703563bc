/*
 * core_util.h - helpers of the test_core_*.c suites (LAPI core internals
 * and a smoke test of every call).
 *
 * Criterion runs each Test in its own process, so every test starts with
 * a fresh library.  Handlers run on other threads: they record what they
 * saw in plain globals read after a counter wait (the counter increment
 * is the synchronisation), and CORE_CHECK notes a failure seen there.
 */
#ifndef CORE_UTIL_H
#define CORE_UTIL_H

#include <criterion/criterion.h>
#include <lapi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int core_failures __attribute__((unused));

#define CORE_CHECK(cond)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      __atomic_add_fetch(&core_failures, 1, __ATOMIC_SEQ_CST);             \
      fprintf(stderr, "%s:%d: CORE_CHECK(%s) failed\n", __FILE__,          \
              __LINE__, #cond);                                            \
    }                                                                      \
  } while (0)

#define CORE_ASSERT_NO_FAILURE()                                           \
  cr_assert_eq(__atomic_load_n(&core_failures, __ATOMIC_SEQ_CST), 0,       \
               "a handler or thread reported a failure (see stderr)")

static inline lapi_handle_t core_init_mode(int interrupt)
{
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (!interrupt)
    info.protocol = LAPI_INTERRUPT_OFF;
  lapi_handle_t h = LAPI_VOID_HANDLE;
  cr_assert_eq(LAPI_Init(&h, &info), LAPI_SUCCESS);
  return h;
}

static inline lapi_handle_t core_init(void)
{
  return core_init_mode(1);
}

static inline int core_cntr(lapi_handle_t h, lapi_cntr_t *c)
{
  int v = -12345;
  cr_assert_eq(LAPI_Getcntr(h, c, &v), LAPI_SUCCESS);
  return v;
}

#endif /* CORE_UTIL_H */
