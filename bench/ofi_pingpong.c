/*
 * ofi_pingpong.c - the raw libfabric baseline on its own: two CGs of a
 * lapirun job, FI_EP_RDM endpoints of the job's provider (FI_PROVIDER, set
 * by lapirun --provider; bench/ofi_raw.c), addresses exchanged with the
 * lapirun bootstrap, fi_send / fi_recv only.  lapi_bench runs the same
 * endpoint code in turn with LAPI for its ratios.
 *
 *   lat   ping-pong of 0 B .. 4 MiB, half a round trip (us); every receive
 *         is posted before the message that fills it can leave
 *   bw    streaming of 1 B .. 4 MiB: BENCH_WINDOW sends in flight, then a
 *         0-byte acknowledgement; the receiver posts the next window's
 *         receives before it acknowledges (MB/s, 1 MB = 1e6 bytes)
 *   rate  8-byte messages streamed the same way (messages/s)
 *
 * Sizes above the provider's max_msg_size are left out.  Each figure is
 * the median of the repetitions (bench_plan_of: 11 of >= 10 ms, fewer for
 * slow units; --quick 5 of >= 2 ms).  CG 0 prints one machine-readable line per
 * figure, "RAW <kind> <size> <value>", which lapi_bench --raw reads.
 * Timing never fails the program; a libfabric error or a peer silent for
 * 30 s does.
 *
 * Usage: lapirun -n 2 [--provider P] ofi_pingpong [--provider P] [--quick]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_measure.h"
#include "ofi_raw.h"
#include "transport/boot/boot.h"

#define MAX_REPS 16
#define RATE_SIZE 8

static int boot_allgather(void *ctx, const void *mine, size_t len, void *all)
{
  struct lapi_boot *b = ctx;
  return b->allgather(b, mine, len, all);
}

static void boot_barrier(void *ctx)
{
  struct lapi_boot *b = ctx;
  if (b->barrier(b))
    exit(1);
}

static long agree(void *arg, long value)
{
  (void)arg;
  long all[2];
  struct lapi_boot *b = lapi_boot_get();
  if (b->allgather(b, &value, sizeof value, all))
    exit(1);
  return all[0];
}

static double run_lat(void *arg, long iters)
{
  return ofi_raw_pingpong(*(const size_t *)arg, iters);
}

static double run_stream(void *arg, long windows)
{
  return ofi_raw_stream(*(const size_t *)arg, windows);
}

int main(int argc, char **argv)
{
  int quick = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else if (!strcmp(argv[i], "--provider") && i + 1 < argc)
      setenv("FI_PROVIDER", argv[++i], 1);
  struct lapi_boot *b = lapi_boot_get();
  if (!b || b->size != 2) {
    fprintf(stderr, "ofi_pingpong: run as lapirun -n 2 ofi_pingpong\n");
    return 1;
  }
  int me = b->rank;
  struct bench_plan plan = bench_plan_of(quick);
  struct ofi_raw_peers peers = {boot_allgather, boot_barrier, b};
  char desc[160];
  if (ofi_raw_open(me, &peers, desc, sizeof desc))
    return 1;
  size_t max_msg = ofi_raw_max_msg();
  if (me == 0) {
    char load[128];
    bench_load_average(load, sizeof load);
    printf("# ofi_pingpong: %s, max_msg_size %zu\n", desc, max_msg);
    printf("# median of %d-%d reps of >= %.0f ms; load average %s\n",
           plan.min_reps, plan.reps, plan.min_time * 1e3, load);
  }
  size_t sizes[BENCH_MAX_SIZES];
  int nsizes = bench_sizes(quick, sizes);
  double v[MAX_REPS];
  for (int k = 0; k < nsizes; k++) {
    if (sizes[k] > max_msg)
      continue;
    int n = bench_measure(&plan, run_lat, agree, &sizes[k], v);
    if (me == 0)
      printf("RAW lat %zu %.3f\n", sizes[k], bench_median(v, n) / 2 * 1e6);
    fflush(stdout);
  }
  for (int k = 0; k < nsizes; k++) {
    if (sizes[k] == 0 || sizes[k] > max_msg)
      continue;
    int n = bench_measure(&plan, run_stream, agree, &sizes[k], v);
    if (me == 0)
      printf("RAW bw %zu %.1f\n", sizes[k],
             (double)sizes[k] * BENCH_WINDOW / bench_median(v, n) / 1e6);
    fflush(stdout);
  }
  size_t rate_size = RATE_SIZE;
  int n = bench_measure(&plan, run_stream, agree, &rate_size, v);
  if (me == 0)
    printf("RAW rate %d %.0f\n", RATE_SIZE, BENCH_WINDOW / bench_median(v, n));
  fflush(stdout);
  boot_barrier(b);
  ofi_raw_close();
  return 0;
}
