/*
 * lapi_bench.c - what LAPI costs between two tasks, against a baseline of
 * the same bytes measured in the same session.
 *
 *   inter-CG (default)   two core groups of one task each (lapirun -n 2,
 *                        the ofi transport); baseline: raw libfabric on the
 *                        same provider (bench/ofi_raw.c), an endpoint of
 *                        its own in each process, timed in turn with LAPI;
 *                        or, with --raw FILE, ofi_pingpong's "RAW" lines
 *   intra-CG (--intra-cg) this process is one core group of 2 CPEs, each a
 *                        LAPI task (CPE-task mode, the crts transport);
 *                        baseline: memcpy of the same bytes, timed by task 0
 *                        in this run
 *
 * Tables (task 0 -> task 1; ratio = LAPI / baseline):
 *   latency    LAPI_Amsend ping-pong of 0 B .. 4 MiB, half a round trip
 *   bandwidth  LAPI_Put, LAPI_Get and LAPI_Amsend of 1 B .. 4 MiB:
 *              BENCH_WINDOW (64) in flight, then a wait on cmpl_cntr
 *              (Get: org_cntr), while the target waits for the window
 *              on its tgt_cntr (inter-CG); MB/s = 1e6 bytes/s
 *   Amsendv    IOVECTOR and GENERIC of 64 KiB and 1 MiB in 4, 16 and 256
 *              segments, each segment followed by a gap as long (the same
 *              layout at the target), streamed as above, vs the baseline's
 *              contiguous bandwidth of the same total; STRIDED 1 MiB in
 *              blocks of 8 B, 64 B and 4 KiB at a pitch of twice the block,
 *              streamed (vs the contiguous 1 MiB Amsend of the bandwidth
 *              table) and ping-ponged (half a round trip, vs Open MPI's
 *              MPI_Type_vector ping-pong of the layout from --mpi FILE)
 *   rate       8-byte LAPI_Amsend and LAPI_Put streamed as above (msg/s)
 *   fence      LAPI_Gfence back to back (us a call), against raw
 *              libfabric's 0 B half round trip between CGs (a barrier of
 *              two is one message each way at the same time) or a
 *              pthread_barrier_wait of the two task threads in a CG
 *   targets    the issue's targets with MET / NOT MET
 *
 * With --quick the sizes are 0 and powers of 16 up to 1 MiB.  Each figure
 * is the median of the repetitions (bench_plan_of: 11 of >= 10 ms, fewer
 * for slow units; --quick 5 of >= 2 ms); --verbose prints every
 * repetition on stderr.  The figures of one row and its baseline are
 * timed in turn, repetition by repetition (bench_measure_group), and so
 * are each STRIDED stream and the contiguous 1 MiB Amsend it is judged
 * against: a burst of load on the shared machine then weighs on both
 * sides of a ratio alike.  Timing never fails the program; only a LAPI
 * error does.
 *
 * Usage: lapirun -n 2 [--provider P] lapi_bench [--provider P] [--quick]
 *            [--csv] [--verbose] [--raw FILE] [--mpi FILE] [--bind]
 *        lapi_bench --intra-cg [--quick] [--csv] [--verbose] [--mpi FILE]
 *   --tables LIST runs only the named tables (latency, bandwidth,
 *   segments, strided, rate, fence), without the targets block.
 *   --bind binds each task's thread to a core (see bind_task_thread).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crts.h>
#include <lapi.h>

#include "bench_measure.h"
#include "ofi_raw.h"

#define MAX_REPS 16
#define MAX_SEGS 256              /* the most IOVECTOR/GENERIC segments */
#define VEC_TOTAL ((size_t)1 << 20) /* STRIDED payload */
#define RATE_SIZE 8
#define SMALL_MAX 64              /* "small-message latency": 0 .. 64 B */
#define HDR_AM 1                  /* LAPI_Addr_set indices */
#define HDR_AMV 2

/* ------------------------------------------------------------ options */

static struct {
  int quick, csv, intra_cg, verbose, bind;
  const char *raw_path, *mpi_path, *provider;
  const char *tables; /* --tables: comma-separated names, NULL = all */
  struct bench_plan plan;
} opt;

/* ------------------------------------------------- state of each task */

/* In CPE-task mode thread-local data is the CPE's LDM, as on the chip. */
static _Thread_local lapi_handle_t h;
static _Thread_local int me;
static _Thread_local lapi_cntr_t tgt_c, cmpl_c, org_c;
static _Thread_local unsigned char *sbuf, *rbuf;
static _Thread_local struct {
  lapi_cntr_t *tgt_cntr;
  unsigned char *sbuf, *rbuf;
} peer;
static _Thread_local void *origin_info[MAX_SEGS];
static _Thread_local ulong origin_len[MAX_SEGS];

/* Read by the header handlers, which run on the MPE in CPE-task mode:
   indexed by the target task. */
static unsigned char *rbuf_of[2];
static struct {
  lapi_vec_t vec;
  void *info[MAX_SEGS];
  ulong len[MAX_SEGS];
} target_vec[2];

static void check(int rc, const char *what)
{
  if (rc != LAPI_SUCCESS) {
    char msg[LAPI_MAX_ERR_STRING];
    LAPI_Msg_string(rc, msg);
    fprintf(stderr, "lapi_bench: task %d: %s: %s\n", me, what, msg);
    exit(1);
  }
}

/* ----------------------------------------------------------- layouts */

enum vec_kind { VEC_IOVECTOR, VEC_GENERIC, VEC_STRIDED };
static const char *const vec_names[3] = {"IOVECTOR", "GENERIC", "STRIDED"};

/* nseg segments of seg bytes, one every 2 * seg bytes; travels as the
   user header, so the target builds the same layout over its buffer. */
struct layout {
  int kind;
  unsigned nseg;
  size_t seg;
};

static void build_vector(lapi_vec_t *v, void **info, ulong *len,
                         unsigned char *base, const struct layout *l)
{
  v->num_vecs = l->nseg;
  v->info = info;
  if (l->kind == VEC_STRIDED) {
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    info[0] = base;
    info[1] = (void *)(uintptr_t)l->seg;
    info[2] = (void *)(uintptr_t)(2 * l->seg);
    v->len = NULL;
    return;
  }
  v->vec_type = l->kind == VEC_IOVECTOR ? LAPI_GEN_IOVECTOR
                                        : LAPI_GEN_GENERIC;
  for (unsigned i = 0; i < l->nseg; i++) {
    info[i] = base + (size_t)i * 2 * l->seg;
    len[i] = l->seg;
  }
  v->len = len;
}

/* ---------------------------------------------------------- handlers */

static int task_of(lapi_handle_t *hndl)
{
  int t = 0;
  LAPI_Qenv(*hndl, TASK_ID, &t);
  return t;
}

/* Every Amsend lands at the start of the target's rbuf. */
static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return rbuf_of[task_of(hndl)];
}

static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr_len;
  (void)len_vec;
  struct layout l;
  memcpy(&l, uhdr, sizeof l);
  int t = task_of(hndl);
  build_vector(&target_vec[t].vec, target_vec[t].info, target_vec[t].len,
               rbuf_of[t], &l);
  *comp_h = NULL;
  *uinfo = NULL;
  return &target_vec[t].vec;
}

/* ----------------------------------------------------------- kernels */

enum op_kind { OP_AMSEND, OP_PUT, OP_GET, OP_AMSENDV, OP_MEMCPY };

/* What one kernel moves; each task holds its own copy. */
struct op {
  enum op_kind kind;
  size_t size;        /* contiguous kinds */
  struct layout lay;  /* OP_AMSENDV */
  lapi_vec_t vec;     /* OP_AMSENDV: the origin vector over sbuf */
};

static struct op contiguous(enum op_kind kind, size_t size)
{
  struct op o;
  memset(&o, 0, sizeof o);
  o.kind = kind;
  o.size = size;
  return o;
}

static struct op vectored(int kind, unsigned nseg, size_t seg)
{
  struct op o;
  memset(&o, 0, sizeof o);
  o.kind = OP_AMSENDV;
  o.lay.kind = kind;
  o.lay.nseg = nseg;
  o.lay.seg = seg;
  o.size = (size_t)nseg * seg;
  build_vector(&o.vec, origin_info, origin_len, sbuf, &o.lay);
  return o;
}

/* Starts one transfer of o to task tgt; done (cmpl_cntr, for a Get
   org_cntr) may be NULL: a counter nobody waits on would keep counting. */
static void issue(struct op *o, uint tgt, lapi_cntr_t *tcntr,
                  lapi_cntr_t *done)
{
  int rc;
  switch (o->kind) {
  case OP_AMSEND:
    rc = LAPI_Amsend(h, tgt, (void *)HDR_AM, NULL, 0, sbuf, (ulong)o->size,
                     tcntr, NULL, done);
    break;
  case OP_PUT:
    rc = LAPI_Put(h, tgt, (ulong)o->size, peer.rbuf, sbuf, tcntr, NULL,
                  done);
    break;
  case OP_GET:
    rc = LAPI_Get(h, tgt, (ulong)o->size, peer.sbuf, rbuf, tcntr, done);
    break;
  case OP_AMSENDV:
    rc = LAPI_Amsendv(h, tgt, (void *)HDR_AMV, &o->lay, sizeof o->lay,
                      &o->vec, tcntr, NULL, done);
    break;
  default:
    rc = LAPI_ERR_UNKNOWN;
  }
  check(rc, "transfer");
}

static void wait_cntr(lapi_cntr_t *c, int v)
{
  check(LAPI_Waitcntr(h, c, v, NULL), "LAPI_Waitcntr");
}

static void fence(void) { check(LAPI_Gfence(h), "LAPI_Gfence"); }

static long agree(void *arg, long value)
{
  (void)arg;
  lapi_long_t all[2];
  check(LAPI_Address_init64(h, (lapi_long_t)value, all),
        "LAPI_Address_init64");
  return (long)all[0];
}

/* Ping-pong: each task answers what it receives; a unit is a round trip. */
static double k_pingpong(void *arg, long iters)
{
  struct op *o = arg;
  uint other = (uint)(1 - me);
  fence();
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    if (me == 1)
      wait_cntr(&tgt_c, 1);
    issue(o, other, peer.tgt_cntr, NULL);
    if (me == 0)
      wait_cntr(&tgt_c, 1);
  }
  double dt = bench_now() - t0;
  /* Task 1's last answer may still be in flight, and a vector's origin
     side is read until it is done: o and its vector must outlive it. */
  fence();
  return dt;
}

/* Task 0 streams windows of BENCH_WINDOW transfers; a unit is a window.
   Between core groups task 1 waits for each window in LAPI_Waitcntr, as
   a LAPI program waits for the data it expects (and as ofi_pingpong's
   receiver polls its CQ): in polling mode nothing else would make
   progress at the target.  Inside a core group the MPE does the work and
   task 1 stays out of the way of the two cores. */
static double k_stream(void *arg, long windows)
{
  struct op *o = arg;
  lapi_cntr_t *done = o->kind == OP_GET ? &org_c : &cmpl_c;
  lapi_cntr_t *arrived = opt.intra_cg ? NULL : peer.tgt_cntr;
  fence();
  double t0 = bench_now();
  for (long w = 0; w < windows; w++) {
    if (me == 0) {
      for (int i = 0; i < BENCH_WINDOW; i++)
        issue(o, 1, arrived, done);
      wait_cntr(done, BENCH_WINDOW);
    } else if (arrived != NULL) {
      wait_cntr(&tgt_c, BENCH_WINDOW);
    }
  }
  return bench_now() - t0;
}

/* The intra-CG baseline: task 0 copies o->size bytes from its sbuf into
   task 1's rbuf; a unit is one copy. */
static double k_memcpy(void *arg, long iters)
{
  const struct op *o = arg;
  fence();
  double t0 = bench_now();
  if (me == 0)
    for (long i = 0; i < iters; i++) {
      memcpy(peer.rbuf, sbuf, o->size);
      __asm__ __volatile__("" ::: "memory"); /* keep every copy */
    }
  return bench_now() - t0;
}

/* LAPI_Gfence back to back; a unit is one. */
static double k_gfence(void *arg, long iters)
{
  (void)arg;
  fence();
  double t0 = bench_now();
  for (long i = 0; i < iters; i++)
    fence();
  return bench_now() - t0;
}

/* The two task threads of the intra-CG run at a pthread barrier. */
static pthread_barrier_t task_barrier;
static pthread_once_t task_barrier_once = PTHREAD_ONCE_INIT;

static void task_barrier_init(void)
{
  pthread_barrier_init(&task_barrier, NULL, 2);
}

static double k_pbarrier(void *arg, long iters)
{
  (void)arg;
  pthread_once(&task_barrier_once, task_barrier_init);
  fence();
  double t0 = bench_now();
  for (long i = 0; i < iters; i++)
    pthread_barrier_wait(&task_barrier);
  return bench_now() - t0;
}

/* ---------------------------------------------------------- baseline */

/* ofi_pingpong's figures (--raw) and mpi_vector's (--mpi); task 0 only. */
enum { RAW_LAT, RAW_BW, RAW_RATE, MPI_VEC, MPI_CONTIG, NKINDS };
static struct {
  int kind;
  size_t size;
  double value;
} refs[64];
static int nrefs;

static void read_refs(const char *path)
{
  static const char *const names[NKINDS] = {"RAW lat", "RAW bw", "RAW rate",
                                            "MPI vec", "MPI contig"};
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "lapi_bench: cannot read %s; no ratios from it\n", path);
    return;
  }
  char line[256], a[24], b[24];
  size_t size;
  double val;
  while (fgets(line, sizeof line, f) && nrefs < 64)
    if (sscanf(line, "%15s %15s %zu %lf", a, b, &size, &val) == 4) {
      char name[64];
      snprintf(name, sizeof name, "%s %s", a, b);
      for (int k = 0; k < NKINDS; k++)
        if (!strcmp(name, names[k])) {
          refs[nrefs].kind = k;
          refs[nrefs].size = size;
          refs[nrefs++].value = val;
        }
    }
  fclose(f);
}

static double ref_of(int kind, size_t size)
{
  for (int i = 0; i < nrefs; i++)
    if (refs[i].kind == kind && refs[i].size == size)
      return refs[i].value;
  return 0;
}

/* Between core groups without --raw the baseline is raw libfabric timed
   here (bench/ofi_raw.c), one repetition in turn with LAPI's. */
static int raw_live;
static char raw_desc[160];

/* The raw endpoints' address exchange, over LAPI: each task puts its
   bytes into the other's table. */
static unsigned char raw_names[2][512];
static int lapi_allgather(void *ctx, const void *mine, size_t len, void *all)
{
  (void)ctx;
  if (len > sizeof raw_names[0])
    return -1;
  void *tab[2];
  check(LAPI_Address_init(h, raw_names, tab), "LAPI_Address_init");
  memcpy(raw_names[me], mine, len);
  unsigned char *there =
      (unsigned char *)tab[1 - me] + me * sizeof raw_names[0];
  check(LAPI_Put(h, (uint)(1 - me), (ulong)len, there, raw_names[me], NULL,
                 &org_c, NULL), "LAPI_Put");
  wait_cntr(&org_c, 1);
  fence(); /* the other's put has landed here too */
  memcpy(all, raw_names[0], len);
  memcpy((unsigned char *)all + len, raw_names[1], len);
  return 0;
}

static void lapi_barrier(void *ctx)
{
  (void)ctx;
  fence();
}

/*
 * With --bind, between core groups, each task's own thread (the one that
 * measures, raw and LAPI alike) is bound to a core of its own: task t to
 * the t-th CPU the process may use; LAPI's own threads, created earlier
 * by LAPI_Init, stay unbound.  Not the default: it kept both tasks off a
 * shared core, but it cost LAPI's STRIDED 4 KiB stream on shm, whose
 * work the unbound threads spread better (docs/PERFORMANCE.md, Method).
 * Where the process may use fewer CPUs than tasks nothing is bound.
 * Returns the CPU, or -1.
 */
static int bind_task_thread(void)
{
  cpu_set_t allowed;
  if (!opt.bind ||
      sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
      CPU_COUNT(&allowed) < 2)
    return -1;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ < me)
      continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0
               ? cpu : -1;
  }
  return -1;
}

/* Opens the raw endpoint (inter-CG, no --raw); without one there are no
   ratios to raw.  Collective. */
static void raw_open(void)
{
  struct ofi_raw_peers peers = {lapi_allgather, lapi_barrier, NULL};
  raw_live = ofi_raw_open(me, &peers, raw_desc, sizeof raw_desc) == 0;
  if (!raw_live && me == 0)
    fprintf(stderr, "lapi_bench: no raw libfabric endpoint; no ratios to "
                    "raw\n");
}

static double k_raw_pingpong(void *arg, long iters)
{
  const struct op *o = arg;
  return ofi_raw_pingpong(o->size, iters);
}

static double k_raw_stream(void *arg, long windows)
{
  const struct op *o = arg;
  return ofi_raw_stream(o->size, windows);
}

/* The baseline timed beside LAPI for a ping-pong (pingpong) or a stream
   of o: memcpy inside a core group, raw libfabric between; NULL where
   there is none (--raw given, no endpoint, a size raw cannot send). */
static bench_run_fn base_kernel(int pingpong, const struct op *o)
{
  if (opt.intra_cg)
    return k_memcpy;
  if (!raw_live || o->size > ofi_raw_max_msg())
    return NULL;
  return pingpong ? k_raw_pingpong : k_raw_stream;
}

/* One unit of a base kernel in the units of the figures: a memcpy is one
   transfer; a raw ping-pong a round trip, a raw stream a window. */
static double base_lat_us(double s_per_unit)
{
  return s_per_unit * (opt.intra_cg ? 1 : 0.5) * 1e6;
}

static double base_MBps(size_t size, double s_per_unit)
{
  double bytes = (double)size * (opt.intra_cg ? 1 : BENCH_WINDOW);
  return s_per_unit > 0 ? bytes / s_per_unit / 1e6 : 0;
}

static double base_rate(double s_per_unit)
{
  return s_per_unit > 0 ? (opt.intra_cg ? 1 : BENCH_WINDOW) / s_per_unit
                        : 0;
}

/* Median seconds per unit of each kernel k[i] on o[i], their repetitions
   alternating (bench_measure_group); k[i] NULL gets 0.  Collective. */
static void measure(int n, const bench_run_fn *k, struct op *const *o,
                    double *med)
{
  static const char *const kinds[] = {"Amsend", "Put", "Get", "Amsendv",
                                      "memcpy"};
  double store[BENCH_MAX_GROUP][MAX_REPS], *v[BENCH_MAX_GROUP];
  bench_run_fn runs[BENCH_MAX_GROUP];
  void *args[BENCH_MAX_GROUP];
  int which[BENCH_MAX_GROUP], m = 0;
  for (int i = 0; i < n; i++) {
    med[i] = 0;
    if (k[i] == NULL)
      continue;
    which[m] = i;
    runs[m] = k[i];
    args[m] = o[i];
    v[m] = store[m];
    m++;
  }
  double t0 = bench_now();
  int reps = bench_measure_group(&opt.plan, m, runs, args, agree, v);
  for (int j = 0; j < m; j++) {
    struct op *op = o[which[j]];
    if (opt.verbose && me == 0) {
      /* Every repetition, to tell a steady figure from a stalled one. */
      char lay[48] = "";
      if (op->kind == OP_AMSENDV)
        snprintf(lay, sizeof lay, " %s %u x %zu B", vec_names[op->lay.kind],
                 op->lay.nseg, op->lay.seg);
      int raw_k = runs[j] == k_raw_pingpong || runs[j] == k_raw_stream;
      fprintf(stderr, "# %s%s %s %zu B (group of %d, %.2f s):",
              runs[j] == k_gfence     ? "Gfence"
              : runs[j] == k_pbarrier ? "pthread_barrier"
              : raw_k                 ? "raw"
                                      : kinds[op->kind], lay,
              runs[j] == k_pingpong || runs[j] == k_raw_pingpong
                  ? "ping-pong" : "stream/copy",
              op->size, m, bench_now() - t0);
      for (int r = 0; r < reps; r++)
        fprintf(stderr, " %.3g", v[j][r]);
      fprintf(stderr, " s/unit\n");
    }
    med[which[j]] = bench_median(v[j], reps);
  }
}

/* Median seconds per unit of kernel k on o alone.  Collective. */
static double measure_one(bench_run_fn k, struct op *o)
{
  double s;
  measure(1, &k, &o, &s);
  return s;
}

static double half_rtt_us(double s_per_round_trip)
{
  return s_per_round_trip / 2 * 1e6;
}

static double stream_MBps(const struct op *o, double s_per_window)
{
  return s_per_window > 0
             ? (double)o->size * BENCH_WINDOW / s_per_window / 1e6 : 0;
}

/* ----------------------------------------------------------- output */

static const char *base_name(void) { return opt.intra_cg ? "memcpy" : "raw"; }

static char *size_str(char *out, size_t len, size_t size)
{
  if (size >= (1 << 20) && size % (1 << 20) == 0)
    snprintf(out, len, "%zu MiB", size >> 20);
  else if (size >= 1024 && size % 1024 == 0)
    snprintf(out, len, "%zu KiB", size >> 10);
  else
    snprintf(out, len, "%zu B", size);
  return out;
}

static double ratio(double lapi, double base)
{
  return lapi > 0 && base > 0 ? lapi / base : 0;
}

static char *ratio_str(char *out, size_t len, double r)
{
  if (r <= 0)
    snprintf(out, len, "-");
  else
    snprintf(out, len, r >= 100 ? "%.0f" : r >= 10 ? "%.1f"
                       : r >= 0.1 ? "%.2f" : "%.2g", r);
  return out;
}

static void csv_row(const char *what, size_t size, const char *unit,
                    double lapi, double base)
{
  printf("%s,%zu,%s,%.4g,%.4g,%.4g\n", what, size, unit, lapi, base,
         ratio(lapi, base));
}

/* What the targets block needs; written by task 0 only. */
static struct {
  double small_lat_worst;
  size_t small_lat_at;
  double bw_worst[3];
  size_t bw_at[3];
  double strided_MBps[3], strided_am_MBps[3], strided_us[3];
} got = {.bw_worst = {1e30, 1e30, 1e30}};

/* ----------------------------------------------------------- tables */

static const size_t strided_blocks[3] = {8, 64, 4096};

/* Base figures of the bandwidth table, by size, for the later tables'
   "vs contiguous" columns (0: none yet). */
static double base_bw_of[BENCH_MAX_SIZES];
static size_t base_bw_size[BENCH_MAX_SIZES];
static int nbase_bw;

/* The baseline's bandwidth of `size` contiguous bytes: the bandwidth
   table's, else --raw's, else timed now on its own.  Collective. */
static double base_bw_for(size_t size)
{
  for (int i = 0; i < nbase_bw; i++)
    if (base_bw_size[i] == size)
      return base_bw_of[i];
  struct op o = contiguous(OP_MEMCPY, size);
  bench_run_fn k = base_kernel(0, &o);
  if (k == NULL)
    return ref_of(RAW_BW, size);
  return base_MBps(size, measure_one(k, &o));
}

/* The Amsend ping-pong of `size` bytes timed in turn with the baseline's:
   half round trips (us) into *lapi and *base (0: no baseline timed, then
   --raw's figure if any).  Collective. */
static void latency_pair(size_t size, double *lapi, double *base)
{
  struct op am = contiguous(OP_AMSEND, size);
  struct op bo = contiguous(OP_MEMCPY, size);
  bench_run_fn kern[2] = {k_pingpong, base_kernel(1, &bo)};
  struct op *ops[2] = {&am, &bo};
  double med[2];
  measure(2, kern, ops, med);
  *lapi = half_rtt_us(med[0]);
  *base = kern[1] ? base_lat_us(med[1]) : ref_of(RAW_LAT, size);
}

/* One 0 B pair measured and thrown away before the first table: the
   first figure of a run otherwise also paid for the process's first
   moments on the machine (page faults, connection set-up over tcp, the
   scheduler placing the threads); the 0 B row, first of all, showed
   outliers of 3-10x on both sides. */
static void warm_up(void)
{
  double lapi, base;
  latency_pair(0, &lapi, &base);
}

static void table_latency(const size_t *sizes, int nsizes)
{
  char s[24], r[24];
  if (me == 0 && !opt.csv)
    printf("\nlatency: LAPI_Amsend ping-pong, half round trip (us)\n"
           "%-8s | %10s | %10s | %s\n", "size", "LAPI", base_name(),
           "LAPI / base");
  for (int k = 0; k < nsizes; k++) {
    double lapi, base;
    latency_pair(sizes[k], &lapi, &base);
    if (me != 0)
      continue;
    double q = ratio(lapi, base);
    if (sizes[k] <= SMALL_MAX && q > got.small_lat_worst) {
      got.small_lat_worst = q;
      got.small_lat_at = sizes[k];
    }
    if (opt.csv)
      csv_row("lat_amsend", sizes[k], "us", lapi, base);
    else
      printf("%-8s | %10.2f | %10.3g | %s\n", size_str(s, sizeof s, sizes[k]),
             lapi, base, ratio_str(r, sizeof r, q));
    fflush(stdout);
  }
}

static void table_bandwidth(const size_t *sizes, int nsizes)
{
  static const enum op_kind kinds[3] = {OP_PUT, OP_GET, OP_AMSEND};
  static const char *const names[3] = {"bw_put", "bw_get", "bw_amsend"};
  char s[24], r[3][24];
  if (me == 0 && !opt.csv)
    printf("\nbandwidth: %d in flight, then a wait (MB/s)\n"
           "%-8s | %9s | %9s | %9s | %9s | %7s | %7s | %7s\n",
           BENCH_WINDOW, "size", "Put", "Get", "Amsend", base_name(),
           "Put/b", "Get/b", "Am/b");
  for (int k = 0; k < nsizes; k++) {
    if (sizes[k] == 0)
      continue;
    struct op o[4];
    struct op *ops[4];
    bench_run_fn kern[4];
    for (int j = 0; j < 3; j++) {
      o[j] = contiguous(kinds[j], sizes[k]);
      kern[j] = k_stream;
    }
    o[3] = contiguous(OP_MEMCPY, sizes[k]);
    kern[3] = base_kernel(0, &o[3]);
    for (int j = 0; j < 4; j++)
      ops[j] = &o[j];
    double med[4], bw[3];
    measure(4, kern, ops, med);
    for (int j = 0; j < 3; j++)
      bw[j] = stream_MBps(&o[j], med[j]);
    double base = kern[3] ? base_MBps(sizes[k], med[3])
                          : ref_of(RAW_BW, sizes[k]);
    if (nbase_bw < BENCH_MAX_SIZES) {
      base_bw_size[nbase_bw] = sizes[k];
      base_bw_of[nbase_bw++] = base;
    }
    if (me != 0)
      continue;
    for (int j = 0; j < 3; j++) {
      double q = ratio(bw[j], base);
      if (sizes[k] >= 65536 && q < got.bw_worst[j]) {
        got.bw_worst[j] = q;
        got.bw_at[j] = sizes[k];
      }
      ratio_str(r[j], sizeof r[j], q);
      if (opt.csv)
        csv_row(names[j], sizes[k], "MBps", bw[j], base);
    }
    if (!opt.csv)
      printf("%-8s | %9.1f | %9.1f | %9.1f | %9.1f | %7s | %7s | %7s\n",
             size_str(s, sizeof s, sizes[k]), bw[0], bw[1], bw[2], base,
             r[0], r[1], r[2]);
    fflush(stdout);
  }
}

/* One stream of o on its own: MB/s.  Collective. */
static double stream_alone(struct op o)
{
  return stream_MBps(&o, measure_one(k_stream, &o));
}

/* IOVECTOR and GENERIC: 64 KiB and 1 MiB in 4, 16 and 256 segments. */
static void table_segments(void)
{
  static const size_t totals[2] = {65536, VEC_TOTAL};
  static const unsigned nsegs[3] = {4, 16, MAX_SEGS};
  char t[24], g[24], r[24];
  if (me == 0 && !opt.csv)
    printf("\nAmsendv, segments one every 2 x segment, %d in flight (MB/s; "
           "base = contiguous %s of the total)\n"
           "%-8s | %-7s | %8s | %8s | %9s | %9s | %s\n",
           BENCH_WINDOW, base_name(), "kind", "total", "segments", "segment",
           "LAPI", base_name(), "LAPI / base");
  for (int z = 0; z < 2; z++) {
    double base = base_bw_for(totals[z]);
    for (int kind = VEC_IOVECTOR; kind <= VEC_GENERIC; kind++)
      for (int n = 0; n < 3; n++) {
        size_t seg = totals[z] / nsegs[n];
        double bw = stream_alone(vectored(kind, nsegs[n], seg));
        if (me != 0)
          continue;
        if (opt.csv) {
          char what[40];
          snprintf(what, sizeof what, "amsendv_%s_%useg", vec_names[kind],
                   nsegs[n]);
          csv_row(what, totals[z], "MBps", bw, base);
        } else {
          printf("%-8s | %-7s | %8u | %8s | %9.1f | %9.1f | %s\n",
                 vec_names[kind], size_str(t, sizeof t, totals[z]), nsegs[n],
                 size_str(g, sizeof g, seg), bw, base,
                 ratio_str(r, sizeof r, ratio(bw, base)));
        }
        fflush(stdout);
      }
  }
}

/* The MPI figure for a block: --mpi's, else the issue's for 64 B (which
   names the host's providers). */
static double mpi_us(size_t block, const char **source)
{
  double v = ref_of(MPI_VEC, block);
  *source = "mpi_vector";
  if (v > 0 || opt.intra_cg || block != 64)
    return v;
  *source = "issue's figure";
  return opt.provider && strstr(opt.provider, "tcp") ? 360 : 230;
}

/* Each STRIDED stream alternates with the contiguous 1 MiB Amsend stream
   it is judged against, so both figures are of the same moment. */
static void table_strided(void)
{
  char b[24], r1[24], r2[24], r3[24], m[24];
  if (me == 0 && !opt.csv)
    printf("\nAmsendv STRIDED, 1 MiB in blocks at a pitch of 2 x block\n"
           "streamed (%d in flight, MB/s, vs the contiguous 1 MiB Amsend "
           "streamed in turn with it, and vs the %s), ping-pong (half round "
           "trip, us, vs MPI_Type_vector)\n"
           "%-6s | %9s | %9s | %7s | %7s | %9s | %9s | %s\n",
           BENCH_WINDOW, base_name(), "block", "MB/s", "Am MB/s", "/ Am",
           "/ base", "LAPI us", "MPI us", "LAPI / MPI");
  double base = base_bw_for(VEC_TOTAL);
  for (int k = 0; k < 3; k++) {
    size_t blk = strided_blocks[k];
    unsigned n = (unsigned)(VEC_TOTAL / blk);
    struct op sv = vectored(VEC_STRIDED, n, blk);
    struct op am = contiguous(OP_AMSEND, VEC_TOTAL);
    bench_run_fn kern[2] = {k_stream, k_stream};
    struct op *ops[2] = {&sv, &am};
    double med[2];
    measure(2, kern, ops, med);
    double bw = stream_MBps(&sv, med[0]), am_bw = stream_MBps(&am, med[1]);
    double us = half_rtt_us(measure_one(k_pingpong, &sv));
    if (me != 0)
      continue;
    got.strided_MBps[k] = bw;
    got.strided_am_MBps[k] = am_bw;
    got.strided_us[k] = us;
    const char *src;
    double mpi = mpi_us(blk, &src);
    if (opt.csv) {
      char what[40];
      snprintf(what, sizeof what, "strided_%zuB", blk);
      csv_row(what, VEC_TOTAL, "MBps", bw, base);
      snprintf(what, sizeof what, "strided_%zuB_vs_amsend", blk);
      csv_row(what, VEC_TOTAL, "MBps", bw, am_bw);
      snprintf(what, sizeof what, "strided_%zuB_pingpong_vs_mpi", blk);
      csv_row(what, VEC_TOTAL, "us", us, mpi);
    } else {
      if (mpi > 0)
        snprintf(m, sizeof m, "%.1f", mpi);
      else
        snprintf(m, sizeof m, "-");
      printf("%-6s | %9.1f | %9.1f | %7s | %7s | %9.1f | %9s | %s\n",
             size_str(b, sizeof b, blk), bw, am_bw,
             ratio_str(r1, sizeof r1, ratio(bw, am_bw)),
             ratio_str(r2, sizeof r2, ratio(bw, base)), us, m,
             ratio_str(r3, sizeof r3, ratio(us, mpi)));
    }
    fflush(stdout);
  }
}

static void table_rate(void)
{
  struct op o[3] = {contiguous(OP_AMSEND, RATE_SIZE),
                    contiguous(OP_PUT, RATE_SIZE),
                    contiguous(OP_MEMCPY, RATE_SIZE)};
  bench_run_fn kern[3] = {k_stream, k_stream, base_kernel(0, &o[2])};
  struct op *ops[3] = {&o[0], &o[1], &o[2]};
  double med[3];
  measure(3, kern, ops, med);
  double am = med[0] > 0 ? BENCH_WINDOW / med[0] : 0;
  double put = med[1] > 0 ? BENCH_WINDOW / med[1] : 0;
  double base = kern[2] ? base_rate(med[2]) : ref_of(RAW_RATE, RATE_SIZE);
  if (me != 0)
    return;
  char r1[24], r2[24];
  if (opt.csv) {
    csv_row("rate_amsend", RATE_SIZE, "msgps", am, base);
    csv_row("rate_put", RATE_SIZE, "msgps", put, base);
  } else {
    printf("\nmessage rate: %d-byte messages, %d in flight (msg/s)\n"
           "Amsend %.0f, Put %.0f, %s %.0f; LAPI / base: Amsend %s, Put %s\n",
           RATE_SIZE, BENCH_WINDOW, am, put, base_name(), base,
           ratio_str(r1, sizeof r1, ratio(am, base)),
           ratio_str(r2, sizeof r2, ratio(put, base)));
  }
}

static void table_fence(void)
{
  struct op o = contiguous(OP_MEMCPY, 0);
  bench_run_fn kern[2] = {k_gfence,
                          opt.intra_cg ? k_pbarrier : base_kernel(1, &o)};
  struct op *ops[2] = {&o, &o};
  double med[2];
  measure(2, kern, ops, med);
  double lapi = med[0] * 1e6;
  double base = opt.intra_cg ? med[1] * 1e6
                : kern[1]    ? base_lat_us(med[1])
                             : ref_of(RAW_LAT, 0);
  if (me != 0)
    return;
  char r[24];
  if (opt.csv) {
    csv_row("gfence", 0, "us", lapi, base);
  } else {
    printf("\nfence: LAPI_Gfence back to back (us a call)\n"
           "LAPI_Gfence %.2f, %s %.3g; LAPI / base %s\n", lapi,
           opt.intra_cg ? "pthread_barrier_wait" : "raw 0 B half round trip",
           base, ratio_str(r, sizeof r, ratio(lapi, base)));
  }
}

/* One target: text for people, or a CSV row "target_<id>,<at size>,
   <unit>,<measured>,<limit>,<verdict>". */
static void target_line(const char *id, size_t at, const char *what,
                        const char *want, double limit, double value,
                        const char *unit, int met)
{
  const char *verdict = value > 0 ? (met ? "MET" : "NOT MET") : "no figure";
  if (opt.csv)
    printf("target_%s,%zu,%s,%.4g,%.4g,%s\n", id, at, unit, value, limit,
           verdict);
  else
    printf("  %-38s %-28s %10.2f %-2s  %s\n", what, want, value, unit,
           verdict);
}

static double load_at_start; /* 1-minute load average; task 0 */

static void targets(void)
{
  char want[64], what[64], s[24];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (!opt.csv)
    printf("\ntargets (timing never fails the run)\n");
  /* A busy machine slows a spinning baseline as much as LAPI: say so. */
  if (!opt.csv && load_at_start > (double)cores)
    printf("  (load average %.1f on %ld cores when the run began: the "
           "baselines may be disturbed too)\n", load_at_start, cores);
  if (!opt.intra_cg) {
    double lim = opt.provider && strstr(opt.provider, "tcp") ? 1.15 : 1.3;
    snprintf(what, sizeof what, "latency 0-%d B, worst (%s)", SMALL_MAX,
             size_str(s, sizeof s, got.small_lat_at));
    snprintf(want, sizeof want, "<= %.2fx raw", lim);
    target_line("latency_small", got.small_lat_at, what, want, lim,
                got.small_lat_worst, "x", got.small_lat_worst <= lim);
    static const char *const names[3] = {"Put", "Get", "Amsend"};
    static const char *const ids[3] = {"bw_put", "bw_get", "bw_amsend"};
    for (int j = 0; j < 3; j++) {
      double q = got.bw_worst[j] < 1e30 ? got.bw_worst[j] : 0;
      snprintf(what, sizeof what, "%s bandwidth from 64 KiB, worst (%s)",
               names[j], size_str(s, sizeof s, got.bw_at[j]));
      target_line(ids[j], got.bw_at[j], what, ">= 0.90 of raw", 0.9, q, "x",
                  q >= 0.9);
    }
  } else if (!opt.csv) {
    printf("  (the latency and bandwidth targets are against raw libfabric:"
           " inter-CG only)\n");
  }
  double q = ratio(got.strided_MBps[2], got.strided_am_MBps[2]);
  target_line("strided_4KiB", 4096, "STRIDED 1 MiB in 4 KiB blocks, MB/s",
              ">= 0.85 of Amsend 1 MiB", 0.85, q, "x", q >= 0.85);
  const char *src;
  double mpi = mpi_us(64, &src);
  if (mpi > 0) {
    snprintf(want, sizeof want, "< %.0f us (%s)", mpi, src);
    target_line("strided_64B_vs_mpi", 64, "STRIDED 1 MiB in 64 B, half RTT",
                want, mpi, got.strided_us[1], "us", got.strided_us[1] < mpi);
  }
}

/* ------------------------------------------------------------ a task */

/* Whether --tables names table `name` (or there was no --tables). */
static int wanted(const char *name)
{
  if (opt.tables == NULL)
    return 1;
  size_t n = strlen(name);
  for (const char *p = opt.tables; (p = strstr(p, name)) != NULL; p += n)
    if ((p == opt.tables || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
      return 1;
  return 0;
}

static volatile int task_failed;

/* The whole benchmark, run by each of the two tasks (a process in
   inter-CG mode, a CPE in intra-CG mode). */
static void task_main(void *arg)
{
  (void)arg;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  check(LAPI_Init(&h, &info), "LAPI_Init");
  int n = 0;
  LAPI_Qenv(h, TASK_ID, &me);
  LAPI_Qenv(h, NUM_TASKS, &n);
  if (n != 2) {
    if (me == 0)
      fprintf(stderr, "lapi_bench: needs 2 tasks (lapirun -n 2 lapi_bench, "
                      "or lapi_bench --intra-cg), got %d\n", n);
    task_failed = 1;
    LAPI_Term(h);
    return;
  }
  /* The layouts span 2 MiB, the contiguous sizes up to 4 MiB. */
  sbuf = malloc(BENCH_MAX_SIZE);
  rbuf = malloc(BENCH_MAX_SIZE);
  if (!sbuf || !rbuf) {
    fprintf(stderr, "lapi_bench: task %d: out of memory\n", me);
    exit(1);
  }
  memset(sbuf, 3, BENCH_MAX_SIZE);
  memset(rbuf, 0, BENCH_MAX_SIZE);
  rbuf_of[me] = rbuf;
  check(LAPI_Addr_set(h, (void *)am_header, HDR_AM), "LAPI_Addr_set");
  check(LAPI_Addr_set(h, (void *)amv_header, HDR_AMV), "LAPI_Addr_set");
  LAPI_Setcntr(h, &tgt_c, 0);
  LAPI_Setcntr(h, &cmpl_c, 0);
  LAPI_Setcntr(h, &org_c, 0);
  void *tab[2];
  check(LAPI_Address_init(h, &tgt_c, tab), "LAPI_Address_init");
  peer.tgt_cntr = tab[1 - me];
  check(LAPI_Address_init(h, sbuf, tab), "LAPI_Address_init");
  peer.sbuf = tab[1 - me];
  check(LAPI_Address_init(h, rbuf, tab), "LAPI_Address_init");
  peer.rbuf = tab[1 - me];
  if (!opt.intra_cg && opt.raw_path == NULL)
    raw_open();
  int bound = opt.intra_cg ? -1 : bind_task_thread();

  if (me == 0) {
    char load[128];
    bench_load_average(load, sizeof load);
    load_at_start = atof(load);
    if (opt.csv)
      printf("what,size,unit,lapi,%s,ratio\n", base_name());
    else if (opt.intra_cg)
      printf("# lapi_bench --intra-cg: 2 CPE tasks of one core group, "
             "baseline memcpy; median of %d-%d reps of >= %.0f ms; load "
             "average %s\n", opt.plan.min_reps, opt.plan.reps,
             opt.plan.min_time * 1e3, load);
    else {
      char basis[256];
      /* The raw endpoint lives in this process: what LAPI set for the
         provider before it loaded applies to it too. */
      const char *rxm_eager = strstr(raw_desc, "ofi_rxm")
                                  ? getenv("FI_OFI_RXM_EAGER_LIMIT") : NULL;
      if (raw_live)
        snprintf(basis, sizeof basis, "raw libfabric (%s%s%s) timed in "
                 "turn with LAPI", raw_desc,
                 rxm_eager ? ", FI_OFI_RXM_EAGER_LIMIT=" : "",
                 rxm_eager ? rxm_eager : "");
      else if (opt.raw_path)
        snprintf(basis, sizeof basis, "raw libfabric from %s", opt.raw_path);
      else
        snprintf(basis, sizeof basis, "none (no raw endpoint: no ratios)");
      printf("# lapi_bench: 2 core groups, provider %s, baseline %s; median "
             "of %d-%d reps of >= %.0f ms; task threads %s; load average "
             "%s\n", opt.provider ? opt.provider : "(default)", basis,
             opt.plan.min_reps, opt.plan.reps, opt.plan.min_time * 1e3,
             bound >= 0 ? "bound to a core each" : "not bound", load);
    }
    fflush(stdout);
  }
  double t0 = bench_now();
  size_t sizes[BENCH_MAX_SIZES];
  int nsizes = bench_sizes(opt.quick, sizes);
  warm_up();
  if (wanted("latency"))
    table_latency(sizes, nsizes);
  if (wanted("bandwidth"))
    table_bandwidth(sizes, nsizes);
  if (wanted("segments"))
    table_segments();
  if (wanted("strided"))
    table_strided();
  if (wanted("rate"))
    table_rate();
  if (wanted("fence"))
    table_fence();
  if (me == 0 && opt.tables == NULL) {
    targets();
    if (!opt.csv)
      printf("\n# %.1f s\n", bench_now() - t0);
    fflush(stdout);
  }
  fence();
  if (raw_live)
    ofi_raw_close();
  LAPI_Term(h);
  free(sbuf);
  free(rbuf);
}

/* The process becomes one core group of exactly 2 CPEs, each a task. */
static int run_intra_cg(void)
{
  setenv("CRTS_NUM_CPES", "2", 1);
  if (CRTS_init() != 0 || CRTS_athread_get_max_threads() != 2) {
    fprintf(stderr, "lapi_bench: CRTS_init with 2 CPEs failed\n");
    return 1;
  }
  CRTS_athread_spawn((void (*)(void))task_main, NULL);
  CRTS_athread_join();
  return task_failed;
}

static int usage(const char *prog)
{
  fprintf(stderr, "usage: lapirun -n 2 %s [--provider P] [--quick] [--csv] "
                  "[--raw FILE] [--mpi FILE] [--verbose] [--tables LIST] "
                  "[--bind]\n"
                  "       %s --intra-cg [--quick] [--csv] [--mpi FILE] "
                  "[--verbose] [--tables LIST]\n"
                  "LIST: comma-separated of latency,bandwidth,segments,"
                  "strided,rate,fence (default all, then the targets)\n",
          prog, prog);
  return 2;
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      opt.quick = 1;
    } else if (!strcmp(argv[i], "--csv")) {
      opt.csv = 1;
    } else if (!strcmp(argv[i], "--verbose")) {
      opt.verbose = 1;
    } else if (!strcmp(argv[i], "--bind")) {
      opt.bind = 1;
    } else if (!strcmp(argv[i], "--intra-cg")) {
      opt.intra_cg = 1;
    } else if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
      opt.raw_path = argv[++i];
    } else if (!strcmp(argv[i], "--mpi") && i + 1 < argc) {
      opt.mpi_path = argv[++i];
    } else if (!strcmp(argv[i], "--tables") && i + 1 < argc) {
      opt.tables = argv[++i];
    } else if (!strcmp(argv[i], "--provider") && i + 1 < argc) {
      setenv("FI_PROVIDER", argv[++i], 1);
    } else {
      return usage(argv[0]);
    }
  }
  opt.plan = bench_plan_of(opt.quick);
  opt.provider = getenv("FI_PROVIDER");
  if (opt.raw_path)
    read_refs(opt.raw_path);
  if (opt.mpi_path)
    read_refs(opt.mpi_path);
  /* A lost wake-up must end the run, not hang it. */
  alarm(opt.quick ? 300 : 1200);
  if (opt.intra_cg)
    return run_intra_cg();
  task_main(NULL);
  return task_failed;
}
