/*
 * boot_test.h - checks of the plain bootstrap test programs (boot_check,
 * boot_lapi): count failures, print each, end with "PASS mode" or
 * "FAIL mode" (tests/boot/lapirun_cases.sh greps for them).
 */
#ifndef BOOT_TEST_H
#define BOOT_TEST_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      failures++;                                                         \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                         \
      printf(__VA_ARGS__);                                                \
      printf("\n");                                                       \
    }                                                                     \
  } while (0)

/* The last line of the program and its exit code. */
static inline int boot_test_end(const char *mode)
{
  printf("%s %s\n", failures ? "FAIL" : "PASS", mode);
  return failures ? 1 : 0;
}

#endif /* BOOT_TEST_H */
