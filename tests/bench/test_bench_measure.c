/*
 * test_bench_measure.c - the sizing and repetition loop of the benchmarks
 * (bench/bench_measure.c), driven by fake runs that report made-up
 * durations: nothing here is timed.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "bench_measure.h"

/* A fake run: `unit_s` seconds per unit; logs each call's id and units. */
struct fake {
  int id;
  double unit_s;
};
static struct {
  int id;
  long units;
} calls[4096];
static int ncalls;

static double fake_run(void *arg, long units)
{
  const struct fake *f = arg;
  cr_assert_lt(ncalls, 4096);
  calls[ncalls].id = f->id;
  calls[ncalls++].units = units;
  return f->unit_s * (double)units;
}

/* One side only: everyone gets side 0's value. */
static long agree_alone(void *arg, long value)
{
  (void)arg;
  return value;
}

static void reset(void) { ncalls = 0; }

Test(bench_measure, repetitions_alternate_after_each_run_is_sized)
{
  reset();
  struct bench_plan plan = bench_plan_of(0);
  struct fake a = {0, 1e-6}, b = {1, 1e-4};
  bench_run_fn runs[2] = {fake_run, fake_run};
  void *args[2] = {&a, &b};
  double va[16], vb[16], *v[2] = {va, vb};
  int reps = bench_measure_group(&plan, 2, runs, args, agree_alone, v);
  cr_assert_eq(reps, plan.reps, "fast runs get every repetition: %d", reps);
  /* The last 2 * reps calls alternate a, b, a, b ... */
  int first = ncalls - 2 * reps;
  cr_assert_gt(first, 0, "sizing calls come first");
  for (int r = 0; r < 2 * reps; r++)
    cr_assert_eq(calls[first + r].id, r % 2, "call %d is run %d", r,
                 calls[first + r].id);
  /* Each run was sized on its own: a repetition lasts >= min_time. */
  long ua = calls[first].units, ub = calls[first + 1].units;
  cr_assert_geq((double)ua * a.unit_s, plan.min_time * 0.99);
  cr_assert_geq((double)ub * b.unit_s, plan.min_time * 0.99);
  cr_assert_gt(ua, ub, "the faster run gets more units");
  for (int r = 0; r < reps; r++) {
    cr_assert_float_eq(va[r], a.unit_s, 1e-12);
    cr_assert_float_eq(vb[r], b.unit_s, 1e-12);
  }
  /* Sizing ran all of a's calls before any of b's. */
  int seen_b = 0;
  for (int i = 0; i < first; i++) {
    if (calls[i].id == 1)
      seen_b = 1;
    else
      cr_assert_not(seen_b, "run a sized again after b began");
  }
}

Test(bench_measure, slow_group_gets_fewer_repetitions_but_min_reps)
{
  reset();
  struct bench_plan plan = bench_plan_of(0);
  /* A unit of 0.2 s: one round of two runs is 0.4 s, beyond max_time. */
  struct fake a = {0, 0.2}, b = {1, 0.2};
  bench_run_fn runs[2] = {fake_run, fake_run};
  void *args[2] = {&a, &b};
  double va[16], vb[16], *v[2] = {va, vb};
  int reps = bench_measure_group(&plan, 2, runs, args, agree_alone, v);
  cr_assert_eq(reps, plan.min_reps);
}

Test(bench_measure, single_run_is_a_group_of_one)
{
  reset();
  struct bench_plan plan = bench_plan_of(1);
  struct fake a = {0, 1e-5};
  double v[16];
  int reps = bench_measure(&plan, fake_run, agree_alone, &a, v);
  cr_assert_eq(reps, plan.reps);
  for (int r = 0; r < reps; r++)
    cr_assert_float_eq(v[r], a.unit_s, 1e-12);
}

Test(bench_measure, group_size_is_checked)
{
  struct bench_plan plan = bench_plan_of(1);
  bench_run_fn runs[BENCH_MAX_GROUP + 1];
  void *args[BENCH_MAX_GROUP + 1];
  double *v[BENCH_MAX_GROUP + 1];
  cr_assert_eq(bench_measure_group(&plan, 0, runs, args, agree_alone, v), 0);
  cr_assert_eq(bench_measure_group(&plan, BENCH_MAX_GROUP + 1, runs, args,
                                   agree_alone, v), 0);
}
