/*
 * test_scache_stime.c - the CPE cache size setting and its calls, and the
 * cycle counters of the CPEs (CRTS_stime_cycle) and the MPE
 * (CRTS_time_cycle).
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "crts_test_util.h"

static _Atomic long seen_size[64];
static _Atomic long seen_twin[64];

static void cache_kernel(void *arg)
{
  (void)arg;
  static __thread_local int scratch[16];
  atomic_store(&seen_size[CRTS_tid], CRTS_scache_get_size());
  atomic_store(&seen_twin[CRTS_tid], get_slave_cache_size());
  /* The flush and evict calls and their twins work on any range. */
  CRTS_scache_evict(scratch, scratch + 16);
  evict_slave_cache_cont(scratch, scratch + 16);
  CRTS_scache_flush_all();
  flush_slave_cache();
}

static void expect_cache_size(const char *setting, long want)
{
  if (setting)
    setenv("CRTS_SCACHE_SIZE", setting, 1);
  else
    unsetenv("CRTS_SCACHE_SIZE");
  crts_test_run(cache_kernel, NULL);
  for (int t = 0; t < 64; t++) {
    cr_assert_eq(seen_size[t], want, "CPE %d: CRTS_SCACHE_SIZE=%s gave %ld",
                 t, setting ? setting : "(unset)", seen_size[t]);
    cr_assert_eq(seen_twin[t], want);
  }
  cr_assert_eq(CRTS_scache_get_size(), want);
}

Test(scache, default_is_32k) { expect_cache_size(NULL, 32768); }
Test(scache, zero) { expect_cache_size("0", 0); }
Test(scache, size_32768) { expect_cache_size("32768", 32768); }
Test(scache, size_131072) { expect_cache_size("131072", 131072); }
Test(scache, size_128k_suffix) { expect_cache_size("128K", 131072); }
Test(scache, invalid_falls_back) { expect_cache_size("1000", 32768); }
Test(scache, garbage_falls_back) { expect_cache_size("lots", 32768); }

/* ---------------------------------------------------------------- time */

#define READS 2000
static _Atomic int backwards;
static _Atomic int advanced;

static void stime_kernel(void *arg)
{
  (void)arg;
  unsigned long first = CRTS_stime_cycle(), prev = first;
  for (int i = 0; i < READS; i++) {
    unsigned long now = CRTS_stime_cycle();
    if (now < prev)
      atomic_fetch_add(&backwards, 1);
    prev = now;
    if (i % 500 == 0)
      CRTS_scache_flush_all(); /* some work between reads */
  }
  if (prev > first)
    atomic_fetch_add(&advanced, 1);
}

Test(stime, cpe_cycle_counter_never_goes_back)
{
  crts_test_run(stime_kernel, NULL);
  cr_assert_eq(atomic_load(&backwards), 0);
  /* 2000 reads take far more than one tick on every CPE. */
  cr_assert_eq(atomic_load(&advanced), 64);
}

Test(stime, mpe_cycle_counter_never_goes_back)
{
  cr_assert_eq(CRTS_init(), 0);
  unsigned long first = CRTS_time_cycle(), prev = first;
  for (int i = 0; i < 100000; i++) {
    unsigned long now = CRTS_time_cycle();
    cr_assert_geq(now, prev, "read %d went back", i);
    prev = now;
  }
  cr_assert_gt(prev, first);
}
