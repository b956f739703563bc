/*
 * crts_test_util.c - see crts_test_util.h.
 */
#include "crts_test_util.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int fail_count;
static char fail_first[512];

void crts_test_fail(const char *fmt, ...)
{
  pthread_mutex_lock(&fail_lock);
  if (fail_count++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_first, sizeof fail_first, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&fail_lock);
}

int crts_test_failures(void)
{
  pthread_mutex_lock(&fail_lock);
  int n = fail_count;
  pthread_mutex_unlock(&fail_lock);
  return n;
}

const char *crts_test_first_failure(void) { return fail_first; }

void crts_test_reset(void)
{
  pthread_mutex_lock(&fail_lock);
  fail_count = 0;
  fail_first[0] = '\0';
  pthread_mutex_unlock(&fail_lock);
}

void crts_test_run(void (*fn)(void *), void *arg)
{
  cr_assert_eq(CRTS_init(), 0, "CRTS_init failed");
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))fn, arg), 0, "spawn failed");
  cr_assert_eq(CRTS_athread_join(), 0, "join failed");
}
