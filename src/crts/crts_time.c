/*
 * crts_time.c - cycle counters of the MPE and the CPEs.
 */
#include <time.h>

#include "crts_cg.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* The host's cycle counter where it has one, else nanoseconds. */
static unsigned long read_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
  return (unsigned long)__rdtsc();
#elif defined(__aarch64__)
  unsigned long v;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
#endif
}

unsigned long CRTS_time_cycle(void) { return read_cycles(); }

unsigned long CRTS_stime_cycle(void) { return read_cycles(); }
