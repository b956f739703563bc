/*
 * mpi_vector.c - the MPI reference of lapi_bench's strided target: a
 * ping-pong of 1 MiB laid out as MPI_Type_vector blocks of 8 B, 64 B and
 * 4 KiB at a pitch of twice the block (the layout of lapi_bench's STRIDED
 * table), and of 1 MiB contiguous, between two ranks; half a round trip.
 *
 * Each figure is the median of the repetitions (bench_plan_of: 11 of
 * >= 10 ms, fewer for slow units; --quick 5 of >= 2 ms).  Rank 0 prints
 * "MPI vec <block> <us>" and "MPI contig <bytes> <us>" lines, which
 * lapi_bench --mpi reads.  Built only where CMake finds an MPI.
 *
 * Usage: mpirun -np 2 [--mca btl self,vader | self,tcp] mpi_vector [--quick]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_measure.h"

#define TOTAL ((size_t)1 << 20)
#define MAX_REPS 16

static int me;
static unsigned char *sbuf, *rbuf;

struct layout {
  MPI_Datatype type; /* one element is the whole 1 MiB message */
};

static long agree(void *arg, long value)
{
  (void)arg;
  MPI_Bcast(&value, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return value;
}

/* A unit is one round trip of one element of the layout's type. */
static double run_pingpong(void *arg, long iters)
{
  MPI_Datatype t = ((const struct layout *)arg)->type;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    if (me == 0) {
      MPI_Send(sbuf, 1, t, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(rbuf, 1, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(rbuf, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(sbuf, 1, t, 0, 0, MPI_COMM_WORLD);
    }
  }
  return bench_now() - t0;
}

static double half_rtt_us(const struct bench_plan *plan, struct layout *l)
{
  double v[MAX_REPS];
  MPI_Type_commit(&l->type);
  int n = bench_measure(plan, run_pingpong, agree, l, v);
  MPI_Type_free(&l->type);
  return bench_median(v, n) / 2 * 1e6;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int n = 0, quick = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--quick"))
      quick = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 2) {
    if (me == 0)
      fprintf(stderr, "mpi_vector: needs 2 ranks (mpirun -np 2)\n");
    MPI_Finalize();
    return 1;
  }
  struct bench_plan plan = bench_plan_of(quick);
  /* The vector of the smallest block spans twice the payload. */
  sbuf = malloc(2 * TOTAL);
  rbuf = malloc(2 * TOTAL);
  if (!sbuf || !rbuf)
    MPI_Abort(MPI_COMM_WORLD, 1);
  memset(sbuf, 5, 2 * TOTAL);
  memset(rbuf, 0, 2 * TOTAL);
  if (me == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], load[128];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    bench_load_average(load, sizeof load);
    printf("# mpi_vector: %s; median of %d-%d reps of >= %.0f ms; load "
           "average %s\n", lib, plan.min_reps, plan.reps, plan.min_time * 1e3,
           load);
  }
  static const int blocks[] = {8, 64, 4096};
  for (int b = 0; b < 3; b++) {
    struct layout l;
    int count = (int)(TOTAL / (size_t)blocks[b]);
    MPI_Type_vector(count, blocks[b], 2 * blocks[b], MPI_BYTE, &l.type);
    double us = half_rtt_us(&plan, &l);
    if (me == 0)
      printf("MPI vec %d %.3f\n", blocks[b], us);
    fflush(stdout);
  }
  struct layout contig;
  MPI_Type_contiguous((int)TOTAL, MPI_BYTE, &contig.type);
  double us = half_rtt_us(&plan, &contig);
  if (me == 0)
    printf("MPI contig %zu %.3f\n", TOTAL, us);
  fflush(stdout);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
