/*
 * crts_test_util.h - helpers shared by the libcrts Criterion tests.
 *
 * Criterion assertions must run on the test's own thread, so CPE code
 * records what it saw with crts_test_fail() and the MPE side checks
 * crts_test_failures() after the join.
 */
#ifndef CRTS_TEST_UTIL_H
#define CRTS_TEST_UTIL_H

#include <crts.h>

/* CRTS_init, spawn fn(arg) on every CPE, join; asserts each step. */
void crts_test_run(void (*fn)(void *), void *arg);
/* Record a failure seen on a CPE (thread-safe; keeps the first message). */
void crts_test_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Number of failures recorded since the last reset, and the first one. */
int crts_test_failures(void);
const char *crts_test_first_failure(void);
void crts_test_reset(void);

/* Check cond on a CPE; record file:line and the condition when false. */
#define CPE_CHECK(cond)                                                      \
  do {                                                                       \
    if (!(cond))                                                             \
      crts_test_fail("CPE %d: %s:%d: %s", CRTS_tid, __FILE__, __LINE__,      \
                     #cond);                                                 \
  } while (0)

/* Assert (on the MPE) that no CPE recorded a failure. */
#define CRTS_ASSERT_NO_CPE_FAILURE()                                         \
  cr_assert_eq(crts_test_failures(), 0, "%d CPE failure(s); first: %s",      \
               crts_test_failures(), crts_test_first_failure())

#endif
