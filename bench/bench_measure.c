/*
 * bench_measure.c - clock, medians and the sizing/repeat loop of the
 * two-sided benchmarks (see bench_measure.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
  if (n <= 0)
    return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_spread(double *v, int n, double *med, double *lo, double *hi)
{
  *med = bench_median(v, n);
  *lo = v[0];
  *hi = v[n - 1];
}

void bench_load_average(char *out, size_t len)
{
  snprintf(out, len, "?");
  FILE *f = fopen("/proc/loadavg", "r");
  if (f == NULL)
    return;
  if (fgets(out, (int)len, f) == NULL)
    snprintf(out, len, "?");
  out[strcspn(out, "\n")] = '\0';
  fclose(f);
}

struct bench_plan bench_plan_of(int quick)
{
  struct bench_plan p = {.reps = 11, .min_reps = 5, .min_time = 0.010,
                         .max_time = 0.3, .max_units = 1L << 22};
  if (quick) {
    p.reps = 5;
    p.min_reps = 3;
    p.min_time = 0.002;
    p.max_time = 0.03;
  }
  return p;
}

/* Side 0's next unit count: positive to size again, negative when done. */
static long next_units(const struct bench_plan *plan, long units, double dt)
{
  double want = plan->min_time;
  long target;
  if (dt <= 0)
    target = units * 16;
  else
    target = (long)((double)units * want / dt) + 1;
  if (target > plan->max_units)
    target = plan->max_units;
  if (target < 1)
    target = 1;
  /* Close enough (or capped): this count is final.  Else grow at most
     16-fold, so one slow sizing step cannot overshoot by much. */
  if (dt >= want / 4 || units >= plan->max_units)
    return -target;
  if (target > units * 16)
    target = units * 16;
  return target;
}

/* Warms `run` up and sizes it (see bench_measure); returns the unit count
   of a repetition and sets *rep_s to side 0's estimate of its seconds. */
static long size_run(const struct bench_plan *plan, bench_run_fn run,
                     bench_agree_fn agree, void *arg, double *rep_s)
{
  long units = 1, sized;
  double dt;
  /* One unit first, untimed.  A transport's first-use costs (over
   * tcp;ofi_rxm: the connection set up by the first send, the eager
   * buffer pool grown by the first send past the inject size, 8-20 ms
   * each) otherwise fell into the 1-unit sizing run, which then ended
   * the sizing at 1 unit: every repetition of the figure was a single
   * trip just after a barrier (~20 us instead of 5 over tcp). */
  run(arg, 1);
  for (;;) {
    dt = run(arg, units);
    long next = agree(arg, next_units(plan, units, dt));
    sized = units;
    if (next < 0) {
      units = -next;
      break;
    }
    units = next;
  }
  *rep_s = dt / (double)sized * (double)units;
  return units;
}

/* Side 0's repetition count for repetitions of rep_s seconds in all. */
static int reps_for(const struct bench_plan *plan, double rep_s, int nruns)
{
  int reps = plan->reps;
  if (rep_s > 0 && rep_s * reps > plan->max_time * nruns)
    reps = (int)(plan->max_time * nruns / rep_s);
  return reps < plan->min_reps ? plan->min_reps : reps;
}

int bench_measure(const struct bench_plan *plan, bench_run_fn run,
                  bench_agree_fn agree, void *arg, double *per_unit)
{
  return bench_measure_group(plan, 1, &run, &arg, agree, &per_unit);
}

int bench_measure_group(const struct bench_plan *plan, int nruns,
                        const bench_run_fn *runs, void *const *args,
                        bench_agree_fn agree, double **per_unit)
{
  long units[BENCH_MAX_GROUP];
  double round_s = 0;
  if (nruns < 1 || nruns > BENCH_MAX_GROUP)
    return 0;
  for (int i = 0; i < nruns; i++) {
    double rep_s;
    units[i] = size_run(plan, runs[i], agree, args[i], &rep_s);
    round_s += rep_s;
  }
  int reps = (int)agree(args[0], reps_for(plan, round_s, nruns));
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < nruns; i++)
      per_unit[i][r] = runs[i](args[i], units[i]) / (double)units[i];
  return reps;
}

int bench_sizes(int quick, size_t *sizes)
{
  int n = 0;
  sizes[n++] = 0;
  for (size_t s = 1; s <= BENCH_MAX_SIZE; s *= quick ? 16 : 4)
    sizes[n++] = s;
  return n;
}
