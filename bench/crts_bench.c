/*
 * crts_bench.c - libcrts micro-benchmarks, each against a baseline measured
 * in the same run.
 *
 *   spawn  CRTS_athread_spawn + join of an empty function on 1..64 CPEs
 *          vs pthread_create + join and a persistent condvar pool
 *   ssync  CRTS_ssync_array on 2..64 CPEs vs pthread_barrier_wait
 *   dma    CRTS_dma_get / CRTS_dma_put, one CPE and all 64, 4 KiB..4 MiB
 *          (issued in <= 128 KiB pieces into one LDM buffer) vs memcpy of
 *          the same pieces between the same buffers
 *   rma    CRTS_rma_put CPE 0 -> CPE 1, 4..128 KiB, vs memcpy between the
 *          same two LDM buffers
 *
 * The CPE count is fixed by CRTS_NUM_CPES when CRTS_init runs, so the
 * parent never initialises the runtime: it re-executes itself once per
 * (section, CPE count) with "--child SECTION N" and that environment, reads
 * the child's "REC ..." lines from a pipe and prints tables (or --csv).
 * Every figure is the median over the repetitions; a repetition runs the
 * operation often enough to last opt_min_time (4x that for the 64-CPE DMA
 * and for RMA), and a ratio is the median of per-repetition ratios of two
 * variants run back to back (emit_ratio).  Timing never makes the
 * program fail: targets print MET / NOT MET and the exit status is 0 unless
 * a child crashed or an engine moved wrong bytes.
 *
 * --csv prints one row per measurement: section, variant, threads, bytes,
 * unit, median, min, max, reps, baseline, ratio (paired, > 1 = libcrts
 * better), status; "target" rows put the goal in baseline and MET /
 * NOT_MET in status.  Lines starting with '#' are comments.
 *
 * Usage: crts_bench [--quick] [--csv] [--only spawn|ssync|dma|rma]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <crts.h>

#include "bench_measure.h"

#define MAX_REPS 32
#define MAX_RECS 512
#define LDM_CHUNK (128 * 1024)     /* largest DMA piece: half the LDM */
#define DMA_MAX (4 * 1024 * 1024)  /* largest DMA transfer per CPE */
#define RMA_MAX (128 * 1024)       /* largest RMA buffer that fits LDM */

static int opt_quick;
static int opt_csv;
static const char *opt_only;
static int opt_reps = 11;
static double opt_min_time = 0.010; /* seconds per repetition, at least */

/* ------------------------------------------------------------- utilities */

static void die(const char *what)
{
  fprintf(stderr, "crts_bench: %s\n", what);
  exit(2);
}

/* ----------------------------------------------------- repeated measures */

/* Runs an operation iters times and returns the seconds it took. */
typedef double (*run_fn)(void *ctx, long iters);

struct variant {
  const char *name;
  run_fn run;
  void *ctx;
  long iters;
  double per_op[MAX_REPS]; /* seconds per operation, one per repetition */
};

/*
 * An iteration count that lasts opt_min_time: grow it by the estimate from
 * the last try (at most 8x a step) up to max_iters.
 */
static long calibrate(run_fn run, void *ctx, long max_iters)
{
  long it = 1;
  for (;;) {
    double t = run(ctx, it);
    if (t >= opt_min_time || it >= max_iters)
      return it;
    long next = t > 0 ? (long)((double)it * opt_min_time * 1.25 / t) + 1
                      : it * 8;
    if (next > it * 8)
      next = it * 8;
    if (next <= it)
      next = it * 2;
    it = next < max_iters ? next : max_iters;
  }
}

/*
 * Calibrate every variant (which also warms it up), then run opt_reps
 * repetitions, interleaving the variants and rotating their order so that
 * slow drifts of the machine hit all of them alike.
 */
static void run_variants(struct variant *vs, int nv, long max_iters)
{
  for (int k = 0; k < nv; k++)
    vs[k].iters = calibrate(vs[k].run, vs[k].ctx, max_iters);
  for (int r = 0; r < opt_reps; r++)
    for (int k = 0; k < nv; k++) {
      struct variant *v = &vs[(k + r) % nv];
      v->per_op[r] = v->run(v->ctx, v->iters) / (double)v->iters;
    }
}

/*
 * Print one result line for the parent: microseconds per operation, or
 * for bandwidth GB/s of bytes moved by each of threads per operation.
 */
static void emit(const char *section, const char *variant, int threads,
                 long bytes, const struct variant *v, int bandwidth)
{
  double vals[MAX_REPS], med, lo, hi;
  for (int r = 0; r < opt_reps; r++)
    vals[r] = bandwidth ? (double)bytes * threads / v->per_op[r] / 1e9
                        : v->per_op[r] * 1e6;
  bench_spread(vals, opt_reps, &med, &lo, &hi);
  printf("REC %s %s %d %ld %s %.6g %.6g %.6g %d\n", section, variant, threads,
         bytes, bandwidth ? "GB/s" : "us", med, lo, hi, opt_reps);
  fflush(stdout);
}

/*
 * Print the median over repetitions of base time / v time.  Repetition r
 * of both ran back to back, so a slow phase of the machine cancels out of
 * each pair; > 1 means v (libcrts) is faster than its baseline.
 */
static void emit_ratio(const char *section, int threads, long bytes,
                       const struct variant *v, const struct variant *base)
{
  double vals[MAX_REPS], med, lo, hi;
  for (int r = 0; r < opt_reps; r++)
    vals[r] = base->per_op[r] / v->per_op[r];
  bench_spread(vals, opt_reps, &med, &lo, &hi);
  printf("REC %s %s/%s %d %ld ratio %.6g %.6g %.6g %d\n", section, v->name,
         base->name, threads, bytes, med, lo, hi, opt_reps);
  fflush(stdout);
}

/* ====================================================== child: spawn */

static void empty_cpe(void *arg) { (void)arg; }

/*
 * Where the CPE threads ran.  The kernel tends to leave them unevenly
 * spread over the cores (e.g. 13 and 51), and a barrier then waits for the
 * busier core: print the split so a slow result can be told apart.
 */
static int cpe_cpu[CRTS_MAX_SPE_NUM];

static void where_cpe(void *arg)
{
  (void)arg;
  cpe_cpu[CRTS_tid] = sched_getcpu();
}

static void print_cpu_split(const char *section, int n)
{
  int count[CPU_SETSIZE] = {0};
  for (int k = 0; k < n; k++)
    if (cpe_cpu[k] >= 0 && cpe_cpu[k] < CPU_SETSIZE)
      count[cpe_cpu[k]]++;
  printf("INFO %s/%d: CPE threads per CPU:", section, n);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (count[c])
      printf(" cpu%d=%d", c, count[c]);
  printf("\n");
  fflush(stdout);
}

static double run_crts_spawn(void *ctx, long iters)
{
  (void)ctx;
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    if (CRTS_athread_spawn((void (*)(void))empty_cpe, NULL) != 0 ||
        CRTS_athread_join() != 0)
      die("CRTS_athread_spawn/join failed");
  }
  return bench_now() - t0;
}

static void *empty_pthread(void *arg) { return arg; }

struct threads_ctx {
  int n;
  pthread_t tid[CRTS_MAX_SPE_NUM];
};

static double run_pthread_create(void *ctx, long iters)
{
  struct threads_ctx *c = ctx;
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    for (int k = 0; k < c->n; k++)
      if (pthread_create(&c->tid[k], NULL, empty_pthread, NULL) != 0)
        die("pthread_create failed");
    for (int k = 0; k < c->n; k++)
      pthread_join(c->tid[k], NULL);
  }
  return bench_now() - t0;
}

/*
 * The textbook persistent pool: workers sleep on a condition variable, the
 * master bumps a generation and broadcasts, the last worker to finish
 * signals the master.  This is what spawn would cost with plain pthreads.
 */
struct pool {
  pthread_mutex_t lock;
  pthread_cond_t go, done;
  unsigned long gen;
  int running, quit, n;
  void (*fn)(void *);
  pthread_t tid[CRTS_MAX_SPE_NUM];
};

static void *pool_worker(void *p)
{
  struct pool *pl = p;
  unsigned long seen = 0;
  pthread_mutex_lock(&pl->lock);
  for (;;) {
    while (pl->gen == seen && !pl->quit)
      pthread_cond_wait(&pl->go, &pl->lock);
    if (pl->quit)
      break;
    seen = pl->gen;
    pthread_mutex_unlock(&pl->lock);
    pl->fn(NULL);
    pthread_mutex_lock(&pl->lock);
    if (--pl->running == 0)
      pthread_cond_signal(&pl->done);
  }
  pthread_mutex_unlock(&pl->lock);
  return NULL;
}

static void pool_start(struct pool *pl, int n)
{
  memset(pl, 0, sizeof *pl);
  pthread_mutex_init(&pl->lock, NULL);
  pthread_cond_init(&pl->go, NULL);
  pthread_cond_init(&pl->done, NULL);
  pl->n = n;
  pl->fn = empty_cpe;
  for (int k = 0; k < n; k++)
    if (pthread_create(&pl->tid[k], NULL, pool_worker, pl) != 0)
      die("pthread_create failed");
}

static void pool_stop(struct pool *pl)
{
  pthread_mutex_lock(&pl->lock);
  pl->quit = 1;
  pthread_cond_broadcast(&pl->go);
  pthread_mutex_unlock(&pl->lock);
  for (int k = 0; k < pl->n; k++)
    pthread_join(pl->tid[k], NULL);
}

static double run_pool(void *ctx, long iters)
{
  struct pool *pl = ctx;
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    pthread_mutex_lock(&pl->lock);
    pl->running = pl->n;
    pl->gen++;
    pthread_cond_broadcast(&pl->go);
    while (pl->running)
      pthread_cond_wait(&pl->done, &pl->lock);
    pthread_mutex_unlock(&pl->lock);
  }
  return bench_now() - t0;
}

static void child_spawn(int n)
{
  static struct threads_ctx tc;
  static struct pool pl;
  tc.n = n;
  pool_start(&pl, n);
  struct variant vs[] = {
    { "crts", run_crts_spawn, NULL, 0, {0} },
    { "pthread_create", run_pthread_create, &tc, 0, {0} },
    { "pthread_pool", run_pool, &pl, 0, {0} },
  };
  run_variants(vs, 3, 1L << 20);
  pool_stop(&pl);
  for (int k = 0; k < 3; k++)
    emit("spawn", vs[k].name, n, 0, &vs[k], 0);
  emit_ratio("spawn", n, 0, &vs[0], &vs[1]);
  emit_ratio("spawn", n, 0, &vs[0], &vs[2]);
  if (n >= 32) {
    if (CRTS_athread_spawn((void (*)(void))where_cpe, NULL) != 0 ||
        CRTS_athread_join() != 0)
      die("CRTS_athread_spawn/join failed");
    print_cpu_split("spawn", n);
  }
}

/* ====================================================== child: ssync */

struct barrier_ctx {
  int n;
  long iters;
  double elapsed; /* written by CPE / thread 0 */
  pthread_barrier_t pb;
  pthread_t tid[CRTS_MAX_SPE_NUM];
};

static void ssync_cpe(void *p)
{
  struct barrier_ctx *c = p;
  CRTS_ssync_array(); /* everybody is awake: start together */
  double t0 = bench_now();
  for (long i = 0; i < c->iters; i++)
    CRTS_ssync_array();
  if (CRTS_tid == 0)
    c->elapsed = bench_now() - t0;
  where_cpe(NULL);
}

static double run_crts_ssync(void *ctx, long iters)
{
  struct barrier_ctx *c = ctx;
  c->iters = iters;
  if (CRTS_athread_spawn((void (*)(void))ssync_cpe, c) != 0 ||
      CRTS_athread_join() != 0)
    die("CRTS_athread_spawn/join failed");
  return c->elapsed;
}

struct barrier_arg {
  struct barrier_ctx *c;
  int id;
};

static void *pbarrier_thread(void *p)
{
  struct barrier_arg *a = p;
  struct barrier_ctx *c = a->c;
  pthread_barrier_wait(&c->pb);
  double t0 = bench_now();
  for (long i = 0; i < c->iters; i++)
    pthread_barrier_wait(&c->pb);
  if (a->id == 0)
    c->elapsed = bench_now() - t0;
  return NULL;
}

static double run_pthread_barrier(void *ctx, long iters)
{
  struct barrier_ctx *c = ctx;
  struct barrier_arg args[CRTS_MAX_SPE_NUM];
  c->iters = iters;
  pthread_barrier_init(&c->pb, NULL, (unsigned)c->n);
  for (int k = 0; k < c->n; k++) {
    args[k].c = c;
    args[k].id = k;
    if (pthread_create(&c->tid[k], NULL, pbarrier_thread, &args[k]) != 0)
      die("pthread_create failed");
  }
  for (int k = 0; k < c->n; k++)
    pthread_join(c->tid[k], NULL);
  pthread_barrier_destroy(&c->pb);
  return c->elapsed;
}

static void child_ssync(int n)
{
  static struct barrier_ctx cc, pc;
  cc.n = pc.n = n;
  struct variant vs[] = {
    { "crts", run_crts_ssync, &cc, 0, {0} },
    { "pthread_barrier", run_pthread_barrier, &pc, 0, {0} },
  };
  run_variants(vs, 2, 1L << 22);
  for (int k = 0; k < 2; k++)
    emit("ssync", vs[k].name, n, 0, &vs[k], 0);
  emit_ratio("ssync", n, 0, &vs[0], &vs[1]);
  if (n >= 32)
    print_cpu_split("ssync", n); /* as in the last CRTS repetition */
}

/* ======================================================== child: dma */

/*
 * Largest power-of-two buffer (<= LDM_CHUNK) that every CPE's LDM heap
 * holds: 128 KiB normally, less when CRTS_LDM_STACK_SIZE is raised (as the
 * sanitizer builds need).
 */
static long ldm_piece = LDM_CHUNK;
static int cpe_free_bytes[CRTS_MAX_SPE_NUM];

static void probe_cpe(void *arg)
{
  (void)arg;
  cpe_free_bytes[CRTS_tid] = CRTS_pldm_get_free_size();
}

static void probe_ldm(int n)
{
  if (CRTS_athread_spawn((void (*)(void))probe_cpe, NULL) != 0 ||
      CRTS_athread_join() != 0)
    die("CRTS_athread_spawn/join failed");
  long lo = cpe_free_bytes[0];
  for (int k = 1; k < n; k++)
    if (cpe_free_bytes[k] < lo)
      lo = cpe_free_bytes[k];
  while (ldm_piece > lo && ldm_piece > 4096)
    ldm_piece /= 2;
  if (ldm_piece > lo)
    die("the LDM heap has less than 4 KiB free (CRTS_LDM_STACK_SIZE?)");
  if (ldm_piece < LDM_CHUNK)
    fprintf(stderr, "crts_bench: only %ld bytes of LDM heap free: buffers "
                    "are %ld KiB instead of %d KiB\n", lo, ldm_piece / 1024,
            LDM_CHUNK / 1024);
}

enum xfer_op { XFER_GET_MEMCPY, XFER_GET_DMA, XFER_PUT_MEMCPY, XFER_PUT_DMA };

struct xfer_ctx {
  enum xfer_op op;
  int ncpes;       /* 1: CPE 0 alone; else every spawned CPE */
  long size;       /* bytes per transfer and CPE */
  long iters;
  char *src, *dst; /* DMA_MAX bytes per CPE: gets read src, puts write dst */
  int stamp;       /* byte a put run writes, new each run */
  double t_start[CRTS_MAX_SPE_NUM], t_end[CRTS_MAX_SPE_NUM];
  _Atomic int bad; /* an engine call failed or moved wrong bytes */
};

static void xfer_cpe(void *p)
{
  struct xfer_ctx *c = p;
  int me = CRTS_tid;
  if (me >= c->ncpes)
    return;
  char *buf = CRTS_pldm_malloc((size_t)ldm_piece);
  if (!buf) {
    c->bad = 1;
    return;
  }
  int put = c->op == XFER_PUT_MEMCPY || c->op == XFER_PUT_DMA;
  char *mem = (put ? c->dst : c->src) + (size_t)me * DMA_MAX;
  long chunk = c->size < ldm_piece ? c->size : ldm_piece;
  /*
   * Fault the LDM pages in before timing.  The fill also lets the check
   * below see a transfer that did nothing: src never holds a run of equal
   * bytes, and dst holds the stamp of an earlier put run.
   */
  memset(buf, put ? c->stamp : 0x5a, (size_t)chunk);
  if (c->ncpes > 1)
    CRTS_ssync_array();
  int rc = 0;
  c->t_start[me] = bench_now();
  for (long i = 0; i < c->iters && rc == 0; i++)
    for (long off = 0; off < c->size && rc == 0; off += chunk)
      switch (c->op) {
      case XFER_GET_MEMCPY: memcpy(buf, mem + off, (size_t)chunk); break;
      case XFER_GET_DMA: rc = CRTS_dma_get(buf, mem + off, (int)chunk); break;
      case XFER_PUT_MEMCPY: memcpy(mem + off, buf, (size_t)chunk); break;
      case XFER_PUT_DMA: rc = CRTS_dma_put(mem + off, buf, (int)chunk); break;
      }
  c->t_end[me] = bench_now();
  /* A get leaves the last piece in buf; a put leaves buf in memory. */
  const char *want = mem + c->size - chunk;
  if (rc != 0 || memcmp(buf, want, (size_t)chunk) != 0)
    c->bad = 1;
}

/* From the first CPE starting to the last one finishing. */
static double run_xfer(void *ctx, long iters)
{
  static int runs;
  struct xfer_ctx *c = ctx;
  c->iters = iters;
  c->stamp = 1 + runs++ % 254;
  if (CRTS_athread_spawn((void (*)(void))xfer_cpe, c) != 0 ||
      CRTS_athread_join() != 0)
    die("CRTS_athread_spawn/join failed");
  if (c->bad)
    die("a DMA transfer failed or moved wrong bytes");
  double lo = c->t_start[0], hi = c->t_end[0];
  for (int k = 1; k < c->ncpes; k++) {
    if (c->t_start[k] < lo)
      lo = c->t_start[k];
    if (c->t_end[k] > hi)
      hi = c->t_end[k];
  }
  return hi - lo;
}

static void child_dma(int n)
{
  size_t total = (size_t)n * DMA_MAX;
  probe_ldm(n);
  char *src = aligned_alloc(4096, total), *dst = aligned_alloc(4096, total);
  if (!src || !dst)
    die("out of memory");
  for (size_t i = 0; i < total; i++)
    src[i] = (char)(i * 7 + i / 4093);
  memset(dst, 0, total); /* no page faults inside the timed loops */
  static struct xfer_ctx ctx[4];
  static const char *names[4] = { "get_memcpy", "get_dma", "put_memcpy",
                                  "put_dma" };
  int cpe_counts[2] = { 1, n };
  for (int m = 0; m < (n > 1 ? 2 : 1); m++)
    for (long size = 4096; size <= DMA_MAX; size *= opt_quick ? 4 : 2)
      for (int dir = 0; dir < 2; dir++) {
        struct variant vs[2];
        for (int k = 0; k < 2; k++) {
          struct xfer_ctx *c = &ctx[dir * 2 + k];
          c->op = (enum xfer_op)(dir * 2 + k);
          c->ncpes = cpe_counts[m];
          c->size = size;
          c->src = src;
          c->dst = dst;
          c->bad = 0;
          vs[k] = (struct variant){ names[dir * 2 + k], run_xfer, c, 0, {0} };
        }
        /* 64 threads on a few cores: longer repetitions, less noise. */
        double min_time = opt_min_time;
        if (cpe_counts[m] > 1)
          opt_min_time *= 4;
        run_variants(vs, 2, 1L << 24);
        opt_min_time = min_time;
        for (int k = 0; k < 2; k++)
          emit("dma", vs[k].name, cpe_counts[m], size, &vs[k], 1);
        emit_ratio("dma", cpe_counts[m], size, &vs[1], &vs[0]);
      }
  free(src);
  free(dst);
}

/* ======================================================== child: rma */

enum rma_op { RMA_MEMCPY, RMA_PUT, RMA_PUT_WAIT };

/* Reply word: an LDM variable at the same address on every CPE. */
static __thread_local crts_rply_t rma_rply;

struct rma_ctx {
  enum rma_op op;
  long size, iters;
  char *peer;      /* CPE 1's buffer, for the memcpy baseline */
  double elapsed;
  _Atomic int bad;
};

/*
 * CPE 0 writes size bytes from its buffer into the same buffer of CPE 1,
 * iters times.  CPE 1 waits in the barrier (RMA_PUT), or in
 * CRTS_rma_wait_value for the last reply (RMA_PUT_WAIT: every put then has
 * to notify a waiter, which is what a consumer that polls its reply word
 * costs).  Both buffers come first in the LDM heap: same address.
 */
static void rma_cpe(void *p)
{
  struct rma_ctx *c = p;
  char *buf = CRTS_pldm_malloc((size_t)ldm_piece);
  if (!buf) {
    c->bad = 1;
    return;
  }
  memset(buf, CRTS_tid + 1, (size_t)c->size);
  rma_rply = 0;
  if (CRTS_tid == 1)
    c->peer = buf;
  CRTS_ssync_array(); /* replies are zero, c->peer is set */
  if (CRTS_tid == 0) {
    int rc = 0;
    double t0 = bench_now();
    for (long i = 0; i < c->iters && rc == 0; i++) {
      if (c->op == RMA_MEMCPY)
        memcpy(c->peer, buf, (size_t)c->size);
      else
        rc = CRTS_rma_put(buf, (int)c->size, 1, buf, &rma_rply);
    }
    c->elapsed = bench_now() - t0;
    if (rc != 0)
      c->bad = 1;
  } else if (c->op == RMA_PUT_WAIT) {
    CRTS_rma_wait_value(&rma_rply, (int)c->iters);
  }
  CRTS_ssync_array();
  if (CRTS_tid == 1) {
    int ok = buf[0] == 1 && buf[c->size - 1] == 1;
    if (c->op != RMA_MEMCPY && rma_rply != (int)c->iters)
      ok = 0;
    if (!ok)
      c->bad = 1;
  }
}

static double run_rma(void *ctx, long iters)
{
  struct rma_ctx *c = ctx;
  c->iters = iters;
  if (CRTS_athread_spawn((void (*)(void))rma_cpe, c) != 0 ||
      CRTS_athread_join() != 0)
    die("CRTS_athread_spawn/join failed");
  if (c->bad)
    die("an RMA put failed or moved wrong bytes");
  return c->elapsed;
}

static void child_rma(int n)
{
  if (n < 2)
    die("the rma section needs 2 CPEs");
  static struct rma_ctx ctx[3];
  static const char *names[3] = { "memcpy", "put", "put_wait" };
  probe_ldm(n);
  for (long size = 4096; size <= RMA_MAX && size <= ldm_piece; size *= 2) {
    struct variant vs[3];
    for (int k = 0; k < 3; k++) {
      ctx[k].op = (enum rma_op)k;
      ctx[k].size = size;
      ctx[k].bad = 0;
      vs[k] = (struct variant){ names[k], run_rma, &ctx[k], 0, {0} };
    }
    /* The reply word is an int: stay far below INT_MAX replies. */
    double min_time = opt_min_time;
    opt_min_time *= 4; /* a cheap section: buy stability with time */
    run_variants(vs, 3, 1L << 24);
    opt_min_time = min_time;
    for (int k = 0; k < 3; k++)
      emit("rma", vs[k].name, 2, size, &vs[k], 1);
    emit_ratio("rma", 2, size, &vs[1], &vs[0]);
    emit_ratio("rma", 2, size, &vs[2], &vs[0]);
  }
}

static int child_main(const char *section, int n)
{
  /* A deadlocked barrier must not hang the whole benchmark. */
  alarm(opt_quick ? 60 : 180);
  if (CRTS_init() != 0)
    die("CRTS_init failed");
  if (CRTS_athread_get_max_threads() != n)
    die("CRTS_NUM_CPES was not honoured");
  if (strcmp(section, "spawn") == 0)
    child_spawn(n);
  else if (strcmp(section, "ssync") == 0)
    child_ssync(n);
  else if (strcmp(section, "dma") == 0)
    child_dma(n);
  else if (strcmp(section, "rma") == 0)
    child_rma(n);
  else
    die("unknown section");
  CRTS_athread_halt();
  return 0;
}

/* ===================================================== parent: records */

struct rec {
  char section[16], variant[40], unit[8];
  int threads, reps;
  long bytes;
  double med, lo, hi;
};

static struct rec recs[MAX_RECS];
static int nrecs;
static int child_failures;

/* "INFO ..." lines of the children, printed as comments after the tables. */
static char infos[16][256];
static int ninfos;

/* Cores each child kept busy on average (CPU time / wall time). */
static struct {
  char name[24];
  double cores;
} shares[32];
static int nshares;

static void print_infos(void)
{
  for (int i = 0; i < ninfos; i++)
    printf("# %s\n", infos[i]);
}

static void print_shares(void)
{
  printf("# cores used per child (CPU time / wall time):");
  for (int i = 0; i < nshares; i++)
    printf(" %s %.2f", shares[i].name, shares[i].cores);
  printf("\n");
}

static const struct rec *find(const char *section, const char *variant,
                              int threads, long bytes)
{
  for (int i = 0; i < nrecs; i++)
    if (strcmp(recs[i].section, section) == 0 &&
        strcmp(recs[i].variant, variant) == 0 &&
        recs[i].threads == threads && recs[i].bytes == bytes)
      return &recs[i];
  return NULL;
}

/* Run "self --child section n" with CRTS_NUM_CPES=n; collect its records. */
static void run_child(const char *section, int n)
{
  int fd[2];
  if (pipe(fd) != 0)
    die("pipe failed");
  fflush(stdout);
  fflush(stderr);
  double t_start = bench_now();
  pid_t pid = fork();
  if (pid < 0)
    die("fork failed");
  if (pid == 0) {
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    setenv("CRTS_NUM_CPES", nbuf, 1);
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    char *argv[] = { "crts_bench", "--child", (char *)section, nbuf,
                     opt_quick ? "--quick" : NULL, NULL };
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  close(fd[1]);
  FILE *in = fdopen(fd[0], "r");
  char line[256];
  while (in && fgets(line, sizeof line, in)) {
    struct rec r;
    if (strncmp(line, "INFO ", 5) == 0 &&
        ninfos < (int)(sizeof infos / sizeof *infos)) {
      line[strcspn(line, "\n")] = '\0';
      snprintf(infos[ninfos++], sizeof *infos, "%s", line + 5);
      continue;
    }
    if (nrecs < MAX_RECS &&
        sscanf(line, "REC %15s %39s %d %ld %7s %lf %lf %lf %d", r.section,
               r.variant, &r.threads, &r.bytes, r.unit, &r.med, &r.lo, &r.hi,
               &r.reps) == 9 && isfinite(r.med) && isfinite(r.lo) &&
        isfinite(r.hi))
      recs[nrecs++] = r;
  }
  if (in)
    fclose(in);
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
    ;
  /* CPU time over wall time: far below the core count = a busy machine. */
  double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  if (nshares < (int)(sizeof shares / sizeof *shares)) {
    snprintf(shares[nshares].name, sizeof shares[nshares].name, "%s/%d",
             section, n);
    shares[nshares++].cores = cpu / (bench_now() - t_start);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    child_failures++;
    if (WIFSIGNALED(status))
      fprintf(stderr, "crts_bench: %s with %d CPEs died of signal %d (%s)\n",
              section, n, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      fprintf(stderr, "crts_bench: %s with %d CPEs exited with status %d\n",
              section, n, WEXITSTATUS(status));
  }
  if (!opt_csv && isatty(STDERR_FILENO)) {
    fprintf(stderr, ".");
    fflush(stderr);
  }
}

/* ====================================================== parent: output */

/* Other processes steal the cores the CPE threads share: say how busy. */
static void load_line(const char *when)
{
  char buf[128] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f && fgets(buf, sizeof buf, f))
    buf[strcspn(buf, "\n")] = '\0';
  if (f)
    fclose(f);
  printf("# load average %s the run: %s\n", when, buf);
}

static void machine_line(void)
{
  char model[128] = "unknown CPU";
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(model, sizeof model, "%s", colon + 2);
      model[strcspn(model, "\n")] = '\0';
      break;
    }
  }
  if (f)
    fclose(f);
  struct utsname u;
  uname(&u);
  const char *spin = getenv("CRTS_SPIN");
  cpu_set_t set;
  int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                           : -1;
  printf("# crts_bench: %d usable of %ld online cores, %s, Linux %s; %d reps "
         "of >= %.0f ms%s%s%s\n",
         usable, sysconf(_SC_NPROCESSORS_ONLN), model, u.release, opt_reps,
         opt_min_time * 1e3, opt_quick ? " (--quick)" : "",
         spin ? "; CRTS_SPIN=" : "", spin ? spin : "");
#ifndef __OPTIMIZE__
  printf("# warning: built without optimisation; use RelWithDebInfo\n");
#endif
  load_line("before");
}

/* About three significant digits, never an exponent. */
static void num(char *buf, size_t len, double v)
{
  int prec = v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 3;
  snprintf(buf, len, "%.*f", prec, v);
}

/* "12.3 [11.9-13.0]" or "-" when missing. */
static const char *cell(char *buf, size_t len, const struct rec *r)
{
  char m[24], lo[24], hi[24];
  if (!r) {
    snprintf(buf, len, "-");
    return buf;
  }
  num(m, sizeof m, r->med);
  num(lo, sizeof lo, r->lo);
  num(hi, sizeof hi, r->hi);
  snprintf(buf, len, "%s [%s-%s]", m, lo, hi);
  return buf;
}

/* The paired ratio record of v against base (see emit_ratio). */
static const struct rec *paired(const char *section, const char *v,
                                const char *base, int threads, long bytes)
{
  char name[48];
  snprintf(name, sizeof name, "%s/%s", v, base);
  return find(section, name, threads, bytes);
}

/* "95%" of the baseline's bandwidth, or a "2.31x" speedup; "-" if none. */
static const char *ratio(char *buf, size_t len, const struct rec *pr,
                         int percent)
{
  if (!pr)
    snprintf(buf, len, "-");
  else if (percent)
    snprintf(buf, len, "%.0f%%", 100.0 * pr->med);
  else
    snprintf(buf, len, "%.2fx", pr->med);
  return buf;
}

static const int spawn_counts[] = { 1, 2, 4, 8, 16, 32, 64 };
static const int ssync_counts[] = { 2, 4, 8, 16, 32, 64 };

static void print_spawn(void)
{
  char a[80], b[80], c[80], r1[16], r2[16];
  printf("\nspawn + join of an empty function, us per call (median "
         "[min-max]); speedup = baseline / CRTS\n");
  printf("%5s | %-24s | %-24s %8s | %-24s %8s\n", "CPEs", "CRTS spawn+join",
         "pthread create+join", "speedup", "pthread pool wake/wait",
         "speedup");
  for (size_t i = 0; i < sizeof spawn_counts / sizeof *spawn_counts; i++) {
    int n = spawn_counts[i];
    const struct rec *cr = find("spawn", "crts", n, 0);
    const struct rec *pc = find("spawn", "pthread_create", n, 0);
    const struct rec *pp = find("spawn", "pthread_pool", n, 0);
    printf("%5d | %-24s | %-24s %8s | %-24s %8s\n", n, cell(a, 80, cr),
           cell(b, 80, pc),
           ratio(r1, 16, paired("spawn", "crts", "pthread_create", n, 0), 0),
           cell(c, 80, pp),
           ratio(r2, 16, paired("spawn", "crts", "pthread_pool", n, 0), 0));
  }
}

static void print_ssync(void)
{
  char a[80], b[80], r1[16];
  printf("\nbarrier, us per barrier (median [min-max]); speedup = "
         "pthread / CRTS\n");
  printf("%7s | %-24s | %-24s %8s\n", "threads", "CRTS_ssync_array",
         "pthread_barrier_wait", "speedup");
  for (size_t i = 0; i < sizeof ssync_counts / sizeof *ssync_counts; i++) {
    int n = ssync_counts[i];
    const struct rec *cr = find("ssync", "crts", n, 0);
    const struct rec *pb = find("ssync", "pthread_barrier", n, 0);
    printf("%7d | %-24s | %-24s %8s\n", n, cell(a, 80, cr), cell(b, 80, pb),
           ratio(r1, 16, paired("ssync", "crts", "pthread_barrier", n, 0),
                 0));
  }
}

static void size_name(char *buf, size_t len, long bytes)
{
  if (bytes >= 1024 * 1024)
    snprintf(buf, len, "%ld MiB", bytes / (1024 * 1024));
  else
    snprintf(buf, len, "%ld KiB", bytes / 1024);
}

static void print_dma(int threads)
{
  char s[16], a[80], b[80], c[80], d[80], r1[16], r2[16];
  if (!find("dma", "get_dma", threads, 4096))
    return;
  printf("\nDMA with %d CPE%s, aggregate GB/s (median [min-max]); size = "
         "bytes per CPE in <= 128 KiB pieces\n", threads,
         threads > 1 ? "s" : "");
  printf("%7s | %-22s | %-22s %5s | %-22s | %-22s %5s\n", "size",
         "memcpy mem->LDM", "CRTS_dma_get", "%", "memcpy LDM->mem",
         "CRTS_dma_put", "%");
  for (long size = 4096; size <= DMA_MAX; size *= 2) {
    const struct rec *gm = find("dma", "get_memcpy", threads, size);
    const struct rec *gd = find("dma", "get_dma", threads, size);
    const struct rec *pm = find("dma", "put_memcpy", threads, size);
    const struct rec *pd = find("dma", "put_dma", threads, size);
    if (!gm && !gd)
      continue;
    size_name(s, sizeof s, size);
    printf("%7s | %-22s | %-22s %5s | %-22s | %-22s %5s\n", s,
           cell(a, 80, gm), cell(b, 80, gd),
           ratio(r1, 16, paired("dma", "get_dma", "get_memcpy", threads, size),
                 1),
           cell(c, 80, pm), cell(d, 80, pd),
           ratio(r2, 16, paired("dma", "put_dma", "put_memcpy", threads, size),
                 1));
  }
}

static void print_rma(void)
{
  char s[16], a[80], b[80], c[80], r1[16], r2[16];
  printf("\nRMA put CPE 0 -> CPE 1, GB/s (median [min-max]); put+wait: "
         "CPE 1 sits in CRTS_rma_wait_value\n");
  printf("%7s | %-22s | %-22s %5s | %-22s %5s\n", "size",
         "memcpy LDM->LDM", "CRTS_rma_put", "%", "CRTS_rma_put + wait", "%");
  for (long size = 4096; size <= RMA_MAX; size *= 2) {
    const struct rec *m = find("rma", "memcpy", 2, size);
    const struct rec *p = find("rma", "put", 2, size);
    const struct rec *w = find("rma", "put_wait", 2, size);
    if (!m && !p && !w)
      continue;
    size_name(s, sizeof s, size);
    printf("%7s | %-22s | %-22s %5s | %-22s %5s\n", s, cell(a, 80, m),
           cell(b, 80, p),
           ratio(r1, 16, paired("rma", "put", "memcpy", 2, size), 1),
           cell(c, 80, w),
           ratio(r2, 16, paired("rma", "put_wait", "memcpy", 2, size), 1));
  }
}

/* ---- targets of the issue */

struct target {
  const char *name, *goal, *unit;
  int known, met;
  double value;
};

/* Worst engine/memcpy ratio at sizes >= 64 KiB over the given variants. */
static void worst_ratio(struct target *t, const char *section,
                        const char *engine, const char *base, int threads,
                        long max)
{
  for (long size = 64 * 1024; size <= max; size *= 2) {
    const struct rec *pr = paired(section, engine, base, threads, size);
    if (!pr)
      continue;
    double r = 100.0 * pr->med;
    if (!t->known || r < t->value)
      t->value = r;
    t->known = 1;
  }
  t->met = t->known && t->value >= 90.0;
}

static int collect_targets(struct target *t)
{
  int n = 0;
  t[n] = (struct target){ "dma_get_1cpe_min_pct", ">= 90% of memcpy, "
                          ">= 64 KiB", "%", 0, 0, 0 };
  worst_ratio(&t[n++], "dma", "get_dma", "get_memcpy", 1, DMA_MAX);
  t[n] = (struct target){ "dma_put_1cpe_min_pct", ">= 90% of memcpy, "
                          ">= 64 KiB", "%", 0, 0, 0 };
  worst_ratio(&t[n++], "dma", "put_dma", "put_memcpy", 1, DMA_MAX);
  t[n] = (struct target){ "dma_get_64cpe_min_pct", ">= 90% of memcpy, "
                          ">= 64 KiB", "%", 0, 0, 0 };
  worst_ratio(&t[n++], "dma", "get_dma", "get_memcpy", 64, DMA_MAX);
  t[n] = (struct target){ "dma_put_64cpe_min_pct", ">= 90% of memcpy, "
                          ">= 64 KiB", "%", 0, 0, 0 };
  worst_ratio(&t[n++], "dma", "put_dma", "put_memcpy", 64, DMA_MAX);
  t[n] = (struct target){ "rma_put_min_pct", ">= 90% of memcpy, "
                          ">= 64 KiB", "%", 0, 0, 0 };
  worst_ratio(&t[n++], "rma", "put", "memcpy", 2, RMA_MAX);

  const struct rec *pr = paired("ssync", "crts", "pthread_barrier", 64, 0);
  t[n] = (struct target){ "ssync_array_64_speedup", ">= 2x faster than "
                          "pthread_barrier_wait", "x", 0, 0, 0 };
  if (pr) {
    t[n].known = 1;
    t[n].value = pr->med;
    t[n].met = t[n].value >= 2.0;
  }
  n++;
  const struct rec *sp = find("spawn", "crts", 64, 0);
  t[n] = (struct target){ "spawn_join_64_us", "< 100 us", "us", 0, 0, 0 };
  if (sp) {
    t[n].known = 1;
    t[n].value = sp->med;
    t[n].met = sp->med < 100.0;
  }
  n++;
  return n;
}

static void print_targets(void)
{
  struct target t[8];
  int n = collect_targets(t);
  printf("\ntargets (timing never fails the run)\n");
  for (int i = 0; i < n; i++) {
    if (!t[i].known)
      printf("  %-24s %-36s %10s  NOT MEASURED\n", t[i].name, t[i].goal, "-");
    else
      printf("  %-24s %-36s %8.3g %-2s %s\n", t[i].name, t[i].goal,
             t[i].value, t[i].unit, t[i].met ? "MET" : "NOT MET");
  }
}

/* The baseline a record is compared with (NULL: none). */
static const char *baseline_of(const struct rec *r)
{
  static const char *pairs[][3] = {
    { "spawn", "crts", "pthread_create" },
    { "ssync", "crts", "pthread_barrier" },
    { "dma", "get_dma", "get_memcpy" },
    { "dma", "put_dma", "put_memcpy" },
    { "rma", "put", "memcpy" },
    { "rma", "put_wait", "memcpy" },
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    if (strcmp(r->section, pairs[i][0]) == 0 &&
        strcmp(r->variant, pairs[i][1]) == 0)
      return pairs[i][2];
  return NULL;
}

static void print_csv(void)
{
  printf("section,variant,threads,bytes,unit,median,min,max,reps,"
         "baseline,ratio,status\n");
  for (int i = 0; i < nrecs; i++) {
    const struct rec *r = &recs[i];
    if (strcmp(r->unit, "ratio") == 0)
      continue; /* shown in the ratio column of the CRTS row */
    const char *b = baseline_of(r);
    const struct rec *pr =
        b ? paired(r->section, r->variant, b, r->threads, r->bytes) : NULL;
    printf("%s,%s,%d,%ld,%s,%.6g,%.6g,%.6g,%d,", r->section, r->variant,
           r->threads, r->bytes, r->unit, r->med, r->lo, r->hi, r->reps);
    /* median paired ratio; > 1 means libcrts beats its baseline */
    if (pr)
      printf("%s,%.4g,\n", b, pr->med);
    else
      printf(",,\n");
  }
  struct target t[8];
  int n = collect_targets(t);
  for (int i = 0; i < n; i++) {
    printf("target,%s,,,%s,", t[i].name, t[i].unit);
    if (t[i].known)
      printf("%.6g", t[i].value);
    printf(",,,,\"%s\",,%s\n", t[i].goal,
           !t[i].known ? "NOT_MEASURED" : t[i].met ? "MET" : "NOT_MET");
  }
}

static int want(const char *section)
{
  return !opt_only || strcmp(opt_only, section) == 0;
}

static void usage(void)
{
  fprintf(stderr, "usage: crts_bench [--quick] [--csv] "
                  "[--only spawn|ssync|dma|rma]\n");
  exit(2);
}

int main(int argc, char **argv)
{
  const char *child = NULL;
  int child_n = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      opt_quick = 1;
    else if (strcmp(argv[i], "--csv") == 0)
      opt_csv = 1;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      opt_only = argv[++i];
    else if (strcmp(argv[i], "--child") == 0 && i + 2 < argc) {
      child = argv[++i];
      child_n = atoi(argv[++i]);
    } else
      usage();
  }
  if (opt_quick) {
    opt_reps = 5;
    opt_min_time = 0.002;
  }
  if (child)
    return child_main(child, child_n);

  machine_line(); /* with --csv a '#' line: CSV readers can skip it */
  fflush(stdout);
  double t0 = bench_now();
  if (want("spawn"))
    for (size_t i = 0; i < sizeof spawn_counts / sizeof *spawn_counts; i++)
      run_child("spawn", spawn_counts[i]);
  if (want("ssync"))
    for (size_t i = 0; i < sizeof ssync_counts / sizeof *ssync_counts; i++)
      run_child("ssync", ssync_counts[i]);
  if (want("dma"))
    run_child("dma", CRTS_MAX_SPE_NUM);
  if (want("rma"))
    run_child("rma", 2);
  if (!opt_csv && isatty(STDERR_FILENO))
    fprintf(stderr, "\n");

  if (opt_csv) {
    print_csv();
  } else {
    if (want("spawn"))
      print_spawn();
    if (want("ssync"))
      print_ssync();
    if (want("dma")) {
      print_dma(1);
      print_dma(CRTS_MAX_SPE_NUM);
    }
    if (want("rma"))
      print_rma();
    print_targets();
    printf("\n# %.1f s\n", bench_now() - t0);
  }
  print_shares();
  print_infos();
  load_line("after");
  return child_failures ? 1 : 0;
}
