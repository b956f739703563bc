/*
 * bench_measure.h - what the two-sided benchmarks (lapi_bench,
 * ofi_pingpong, mpi_vector) share: a clock, medians, the load average, and
 * the loop that sizes a run to a minimum duration and repeats it.
 *
 * A "run" is collective: every side calls it with the same unit count, and
 * side 0's clock is the one that counts.  The unit count is decided by
 * side 0 and handed to the others through an "agree" call (an all-gather
 * in each program's own bootstrap), so no side needs to know the others'
 * timings.
 */
#ifndef BENCH_MEASURE_H
#define BENCH_MEASURE_H

#include <stddef.h>

/* Seconds of CLOCK_MONOTONIC. */
double bench_now(void);

/* Median of v[0..n-1] (sorts v). */
double bench_median(double *v, int n);

/* Median, min and max of v[0..n-1], n >= 1 (sorts v). */
void bench_spread(double *v, int n, double *med, double *lo, double *hi);

/* The first line of /proc/loadavg, or "?". */
void bench_load_average(char *out, size_t len);

/* One collective run of `units` units; returns the seconds side 0 saw. */
typedef double (*bench_run_fn)(void *arg, long units);

/* Collective: every side returns side 0's `value`. */
typedef long (*bench_agree_fn)(void *arg, long value);

struct bench_plan {
  int reps;         /* repetitions (the median is taken over them) */
  int min_reps;     /* ... but as few as this when a unit is slow */
  double min_time;  /* seconds one repetition should last at least */
  double max_time;  /* seconds all repetitions of a figure should take */
  long max_units;   /* never more units than this in one repetition */
};

/* The plan of every figure: full, or quick (a smoke run of seconds). */
struct bench_plan bench_plan_of(int quick);

/*
 * Runs `run` for one unit (a warm-up: first-use costs of the transport),
 * sizes it to last plan->min_time on side 0 (the sizing runs warm up
 * further), then repeats it: plan->reps times, or fewer (not under
 * min_reps) if that would take more than max_time.  Many short repetitions
 * rather than a few long ones, so that a burst of load on the shared
 * machine spoils few of them.  per_unit[r] gets repetition r's seconds per
 * unit (meaningful on side 0).  Returns the repetitions run.  Collective.
 */
int bench_measure(const struct bench_plan *plan, bench_run_fn run,
                  bench_agree_fn agree, void *arg, double *per_unit);

/*
 * bench_measure for several runs whose figures are to be compared (LAPI
 * and its baseline): each is warmed up and sized on its own as above,
 * then their repetitions alternate (runs[0], runs[1], ..., runs[0], ...),
 * so that the load of the moment weighs on all of them alike.  The
 * repetition count is the same for all: plan->reps, or fewer (not under
 * min_reps) if one round would take more than max_time per run.
 * per_unit[i][r] gets run i's repetition r.  Returns the repetitions run.
 * Collective.
 */
int bench_measure_group(const struct bench_plan *plan, int nruns,
                        const bench_run_fn *runs, void *const *args,
                        bench_agree_fn agree, double **per_unit);

/* Messages in flight in the streaming runs (then one acknowledgement). */
#define BENCH_WINDOW 64
/* The largest message of the size tables. */
#define BENCH_MAX_SIZE ((size_t)4 << 20)
#define BENCH_MAX_SIZES 16
/* The most runs bench_measure_group alternates. */
#define BENCH_MAX_GROUP 4

/*
 * The sizes of the latency and bandwidth tables, the same on both sides of
 * every ratio: 0, then powers of 4 from 1 B to 4 MiB; with quick, 0, then
 * powers of 16 from 1 B to 1 MiB.  Returns how many.
 */
int bench_sizes(int quick, size_t *sizes);

#endif /* BENCH_MEASURE_H */
