/*
 * lapi_cpe_bench.c - LAPI between the CPE tasks of one core group (the
 * crts transport), against baselines measured in the same run.
 *
 *   latency    8-byte LAPI_Amsend ping-pong between two CPE tasks (half a
 *              round trip), and an 8-byte LAPI_Put waited on cmpl_cntr
 *   bandwidth  LAPI_Put of 64 KiB .. 4 MiB by the engines (LDM <-> LDM by
 *              RMA, memory <-> LDM by DMA, memory -> memory), 16 puts in
 *              flight, vs memcpy of the same bytes between the same buffers
 *   amsendv    LAPI_Amsendv of 64 KiB as IOVECTOR (16 x 4 KiB), GENERIC
 *              (16 x 4 KiB into 8 x 8 KiB) and STRIDED (64 x 1 KiB blocks
 *              of a 2 KiB pitch, one strided DMA), memory -> LDM, vs memcpy
 *              of the same pieces
 *   rate       8-byte Amsends and Puts streamed by one task to another, and
 *              by every task of 8 and 64 to the next one at once
 *
 * The CPE count is read by CRTS_init, so the parent re-executes itself
 * once per task count ("--child N" with CRTS_NUM_CPES=N) and reads the
 * children's "REC ..." lines.  In a child every CPE is a LAPI task; task 0
 * times, the others answer or wait.  Each figure is the median [min-max]
 * of the repetitions (11, or 5 with --quick), each lasting at least 20 ms;
 * a ratio is the median of the per-repetition ratios of the LAPI run and
 * its baseline run back to back.  Timing never fails the program: targets
 * print MET / NOT MET.  The exit status is non-zero only if a child
 * crashed or moved wrong bytes.
 *
 * Usage: lapi_cpe_bench [--quick] [--csv] [--only SECTION]
 * SECTION (latency, bandwidth, amsendv or rate) runs that part alone, for
 * profiling one path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <crts.h>
#include <lapi.h>

#include "bench_measure.h"

#define MAX_REPS 16
#define MAX_RECS 128
#define WINDOW 16             /* puts in flight in the bandwidth runs */
#define LDM_BUF (128 * 1024)  /* LDM buffer of every task */
#define MEM_MAX (4 << 20)     /* largest main-memory transfer */

static int opt_quick, opt_csv, opt_reps = 11;
static const char *opt_only; /* NULL: every section */
static double opt_min_time = 0.020;

/* ================================================================ child */

/* What the tasks share: buffers, the plan of the run, the results. */
static struct {
  int ntasks;
  unsigned char *ldm[64];          /* each task's LDM buffer */
  unsigned char *mem[64];          /* each task's main-memory buffer */
  lapi_cntr_t *tgt_cntr[64];
  long iters;                      /* set by task 0 before each run */
  int kind, size;                  /* what the run moves */
  double rate_time[64];
  int bad;                         /* wrong bytes seen, atomic */
  lapi_vec_t hvec;                 /* Amsendv target, built by handler */
  void *hinfo[64];
  ulong hlen[64];
} B;

static __thread_local _Alignas(64) unsigned char ldm_buf[LDM_BUF];
static __thread_local lapi_cntr_t tgt_c, org_c, cmpl_c;
static __thread_local void *tab[64];

struct task {
  lapi_handle_t h;
  int me, n;
};

static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  int me = 0;
  LAPI_Qenv(*hndl, TASK_ID, &me);
  *comp_h = NULL;
  *uinfo = NULL;
  return B.ldm[me] + LDM_BUF - 64; /* a small LDM inbox */
}

/* Amsendv: the target vector of the run's kind, in task 1's LDM. */
static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)len_vec;
  unsigned char *dst = B.ldm[1];
  lapi_vec_t *v = &B.hvec;
  if (B.kind == 2) { /* strided into dense LDM */
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    v->num_vecs = 64;
    B.hinfo[0] = dst;
    B.hinfo[1] = (void *)(uintptr_t)1024;
    B.hinfo[2] = (void *)(uintptr_t)1024;
    v->len = NULL;
  } else {
    int n = B.kind == 0 ? 16 : 8;
    size_t seg = 65536 / (size_t)n;
    v->vec_type = B.kind == 0 ? LAPI_GEN_IOVECTOR : LAPI_GEN_GENERIC;
    v->num_vecs = (uint)n;
    for (int i = 0; i < n; i++) {
      B.hinfo[i] = dst + (size_t)i * seg;
      B.hlen[i] = seg;
    }
    v->len = B.hlen;
  }
  v->info = B.hinfo;
  *comp_h = NULL;
  *uinfo = NULL;
  return v;
}

static void fence(struct task *t) { LAPI_Gfence(t->h); }

static void wait_cntr(struct task *t, lapi_cntr_t *c, int v)
{
  LAPI_Waitcntr(t->h, c, v, NULL);
}

/* ---- kernels: run on every task, timed by task 0; return seconds */

static double k_pingpong(struct task *t, long iters)
{
  long msg = 42;
  double t0 = bench_now();
  if (t->me < 2) {
    uint peer = (uint)(t->me ^ 1);
    for (long i = 0; i < iters; i++) {
      if (t->me == 1)
        wait_cntr(t, &tgt_c, 1);
      LAPI_Amsend(t->h, peer, (void *)am_header, NULL, 0, &msg, 8,
                  B.tgt_cntr[peer], NULL, NULL);
      if (t->me == 0)
        wait_cntr(t, &tgt_c, 1);
    }
  }
  return bench_now() - t0;
}

static double k_put8(struct task *t, long iters)
{
  double t0 = bench_now();
  if (t->me == 0)
    for (long i = 0; i < iters; i++) {
      LAPI_Put(t->h, 1, 8, B.ldm[1], ldm_buf, NULL, NULL, &cmpl_c);
      wait_cntr(t, &cmpl_c, 1);
    }
  return bench_now() - t0;
}

/* Bandwidth kinds: 0 LDM->LDM, 1 mem->LDM, 2 LDM->mem, 3 mem->mem. */
static const char *const bw_names[4] = {"LDM->LDM", "mem->LDM", "LDM->mem",
                                        "mem->mem"};

static void bw_ends(int kind, unsigned char **src, unsigned char **dst)
{
  *src = kind == 0 || kind == 2 ? B.ldm[0] : B.mem[0];
  *dst = kind == 0 || kind == 1 ? B.ldm[1] : B.mem[1];
}

static double k_put_bw(struct task *t, long iters)
{
  unsigned char *src, *dst;
  bw_ends(B.kind, &src, &dst);
  double t0 = bench_now();
  if (t->me == 0) {
    long left = iters;
    while (left > 0) {
      int w = left < WINDOW ? (int)left : WINDOW;
      for (int i = 0; i < w; i++)
        LAPI_Put(t->h, 1, (ulong)B.size, dst, src, NULL, NULL, &cmpl_c);
      wait_cntr(t, &cmpl_c, w);
      left -= w;
    }
  }
  return bench_now() - t0;
}

static double k_memcpy_bw(struct task *t, long iters)
{
  unsigned char *src, *dst;
  bw_ends(B.kind, &src, &dst);
  double t0 = bench_now();
  if (t->me == 0)
    for (long i = 0; i < iters; i++) {
      memcpy(dst, src, (size_t)B.size);
      __asm__ __volatile__("" ::: "memory");
    }
  return bench_now() - t0;
}

/* Amsendv kinds: 0 IOVECTOR, 1 GENERIC, 2 STRIDED; 64 KiB from memory. */
static const char *const amv_names[3] = {"IOVECTOR", "GENERIC", "STRIDED"};
static void *amv_info[64];
static ulong amv_len[64];

static void amv_origin(lapi_vec_t *v)
{
  unsigned char *src = B.mem[0];
  if (B.kind == 2) {
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    v->num_vecs = 64;
    amv_info[0] = src;
    amv_info[1] = (void *)(uintptr_t)1024;
    amv_info[2] = (void *)(uintptr_t)2048;
    v->info = amv_info;
    v->len = NULL;
    return;
  }
  v->vec_type = B.kind == 0 ? LAPI_GEN_IOVECTOR : LAPI_GEN_GENERIC;
  v->num_vecs = 16;
  for (int i = 0; i < 16; i++) {
    amv_info[i] = src + (size_t)i * 8192; /* every other 4 KiB */
    amv_len[i] = 4096;
  }
  v->info = amv_info;
  v->len = amv_len;
}

static double k_amsendv(struct task *t, long iters)
{
  lapi_vec_t v;
  amv_origin(&v);
  double t0 = bench_now();
  if (t->me == 0) {
    long left = iters;
    while (left > 0) {
      int w = left < WINDOW ? (int)left : WINDOW;
      for (int i = 0; i < w; i++)
        LAPI_Amsendv(t->h, 1, (void *)amv_header, NULL, 0, &v, NULL, NULL,
                     &cmpl_c);
      wait_cntr(t, &cmpl_c, w);
      left -= w;
    }
  }
  return bench_now() - t0;
}

static double k_memcpy_amv(struct task *t, long iters)
{
  unsigned char *src = B.mem[0], *dst = B.ldm[1];
  double t0 = bench_now();
  if (t->me == 0)
    for (long it = 0; it < iters; it++) {
      if (B.kind == 2)
        for (int i = 0; i < 64; i++)
          memcpy(dst + i * 1024, src + i * 2048, 1024);
      else
        for (int i = 0; i < 16; i++)
          memcpy(dst + i * 4096, src + i * 8192, 4096);
      __asm__ __volatile__("" ::: "memory");
    }
  return bench_now() - t0;
}

/* Rate: 8-byte messages streamed to the next task (kind 0 AM, 1 Put);
 * with 2 tasks only task 0 sends.  Each sender times itself. */
static double k_rate(struct task *t, long iters)
{
  long msg = 7;
  int sends = t->n > 2 || t->me == 0;
  uint next = (uint)((t->me + 1) % t->n);
  double t0 = bench_now();
  if (sends) {
    long left = iters;
    while (left > 0) {
      int w = left < 64 ? (int)left : 64;
      for (int i = 0; i < w; i++) {
        if (B.kind == 0)
          LAPI_Amsend(t->h, next, (void *)am_header, NULL, 0, &msg, 8, NULL,
                      NULL, &cmpl_c);
        else
          LAPI_Put(t->h, next, 8, B.ldm[next], ldm_buf, NULL, NULL,
                   &cmpl_c);
      }
      wait_cntr(t, &cmpl_c, w);
      left -= w;
    }
  }
  double dt = bench_now() - t0;
  B.rate_time[t->me] = dt;
  return dt;
}

typedef double (*kernel)(struct task *t, long iters);

/* Seconds of one run of k, as task 0 sees it (for k_rate: the slowest
 * sender); collective. */
static double timed(struct task *t, kernel k, long iters)
{
  fence(t);
  double dt = k(t, iters);
  fence(t);
  if (t->me == 0 && k == k_rate)
    for (int i = 0; i < t->n; i++)
      if (B.rate_time[i] > dt)
        dt = B.rate_time[i];
  return dt;
}

/* An iteration count that lasts opt_min_time (task 0 decides; also the
 * warm-up); collective. */
static long calibrate(struct task *t, kernel k, long max_iters)
{
  long iters = 1;
  for (;;) {
    double dt = timed(t, k, iters);
    if (t->me == 0) {
      long next = iters;
      if (dt < opt_min_time && iters < max_iters) {
        next = dt > 0 ? (long)((double)iters * opt_min_time * 1.3 / dt)
                      : iters * 8;
        if (next > iters * 8)
          next = iters * 8;
        if (next <= iters)
          next = iters * 2;
        if (next > max_iters)
          next = max_iters;
      }
      B.iters = next == iters ? -next : next;
    }
    fence(t);
    long got = B.iters;
    fence(t); /* everyone read it before task 0 writes again */
    if (got < 0)
      return -got;
    iters = got;
  }
}

/*
 * Run k (and its baseline `base`, if any) opt_reps times; task 0 gets the
 * seconds per operation of repetition r in per_op[r] (base_op[r]).  The two
 * run back to back in every repetition, in alternating order, so a slow
 * phase of a shared machine hits both.
 */
static void measure2(struct task *t, kernel k, double *per_op, kernel base,
                     double *base_op, long max_iters)
{
  long ik = calibrate(t, k, max_iters);
  long ib = base ? calibrate(t, base, max_iters) : 0;
  for (int r = 0; r < opt_reps; r++) {
    for (int j = 0; j < 2; j++) {
      int first = (j == 0) == (r % 2 == 0);
      if (first) {
        double dt = timed(t, k, ik);
        per_op[r] = dt / (double)ik;
      } else if (base) {
        double dt = timed(t, base, ib);
        base_op[r] = dt / (double)ib;
      }
    }
  }
}

static void measure(struct task *t, kernel k, double *per_op, long max_iters)
{
  measure2(t, k, per_op, NULL, NULL, max_iters);
}

static void emit(const char *section, const char *variant, int tasks,
                 long bytes, const char *unit, const double *v)
{
  double vals[MAX_REPS], med, lo, hi;
  memcpy(vals, v, (size_t)opt_reps * sizeof *vals);
  bench_spread(vals, opt_reps, &med, &lo, &hi);
  printf("REC %s %s %d %ld %s %.6g %.6g %.6g %d\n", section, variant, tasks,
         bytes, unit, med, lo, hi, opt_reps);
  fflush(stdout);
}

/* Per-repetition values of one variant in `unit`, from seconds per op. */
static void convert(const double *per_op, double *out, const char *unit,
                    double scale)
{
  for (int r = 0; r < opt_reps; r++)
    out[r] = strcmp(unit, "us") == 0 ? per_op[r] * 1e6 / scale
                                     : scale / per_op[r];
}

static void check_bytes(const unsigned char *p, const unsigned char *want,
                        size_t n, const char *what)
{
  if (memcmp(p, want, n) != 0) {
    fprintf(stderr, "lapi_cpe_bench: %s moved wrong bytes\n", what);
    __atomic_add_fetch(&B.bad, 1, __ATOMIC_SEQ_CST);
  }
}

static int section_on(const char *name)
{
  return opt_only == NULL || strcmp(opt_only, name) == 0;
}

static void latency(struct task *t)
{
  double a[MAX_REPS], v[MAX_REPS];
  measure(t, k_pingpong, a, 1 << 20);
  if (t->me == 0) {
    convert(a, v, "us", 2); /* half a round trip */
    emit("latency", "amsend8_half_rtt", 2, 8, "us", v);
  }
  measure(t, k_put8, a, 1 << 20);
  if (t->me == 0) {
    convert(a, v, "us", 1);
    emit("latency", "put8_cmpl", 2, 8, "us", v);
  }
}

static void two_tasks(struct task *t)
{
  double a[MAX_REPS], b[MAX_REPS], v[MAX_REPS];
  if (section_on("latency"))
    latency(t);
  /* Bandwidth: sizes from 64 KiB; LDM sides up to 128 KiB. */
  for (int kind = 0; kind < 4; kind++)
    for (int size = 65536; size <= MEM_MAX; size *= 2) {
      if ((kind != 3 && size > LDM_BUF) || (opt_quick && size > 262144) ||
          !section_on("bandwidth"))
        continue;
      B.kind = kind;
      B.size = size;
      measure2(t, k_put_bw, a, k_memcpy_bw, b, 1 << 20);
      if (t->me == 0) {
        char name[40];
        unsigned char *src, *dst;
        bw_ends(kind, &src, &dst);
        check_bytes(dst, src, (size_t)size, bw_names[kind]);
        convert(a, v, "GB/s", (double)size / 1e9);
        snprintf(name, sizeof name, "put_%s", bw_names[kind]);
        emit("bandwidth", name, 2, size, "GB/s", v);
        convert(b, v, "GB/s", (double)size / 1e9);
        snprintf(name, sizeof name, "memcpy_%s", bw_names[kind]);
        emit("bandwidth", name, 2, size, "GB/s", v);
        for (int r = 0; r < opt_reps; r++)
          v[r] = b[r] / a[r];
        snprintf(name, sizeof name, "ratio_%s", bw_names[kind]);
        emit("bandwidth", name, 2, size, "ratio", v);
      }
    }
  /* Amsendv kinds. */
  for (int kind = 0; kind < 3 && section_on("amsendv"); kind++) {
    B.kind = kind;
    measure2(t, k_amsendv, a, k_memcpy_amv, b, 1 << 20);
    if (t->me == 0) {
      char name[40];
      convert(a, v, "GB/s", 65536 / 1e9);
      snprintf(name, sizeof name, "amsendv_%s", amv_names[kind]);
      emit("amsendv", name, 2, 65536, "GB/s", v);
      convert(b, v, "GB/s", 65536 / 1e9);
      snprintf(name, sizeof name, "memcpy_%s", amv_names[kind]);
      emit("amsendv", name, 2, 65536, "GB/s", v);
      for (int r = 0; r < opt_reps; r++)
        v[r] = b[r] / a[r];
      snprintf(name, sizeof name, "ratio_%s", amv_names[kind]);
      emit("amsendv", name, 2, 65536, "ratio", v);
    }
  }
}

static void rates(struct task *t)
{
  double a[MAX_REPS], v[MAX_REPS];
  for (int kind = 0; kind < 2; kind++) {
    B.kind = kind;
    measure(t, k_rate, a, 1 << 22);
    if (t->me == 0) {
      int senders = t->n > 2 ? t->n : 1;
      for (int r = 0; r < opt_reps; r++)
        v[r] = (double)senders / a[r] / 1e6;
      emit("rate", kind ? "put8" : "amsend8", t->n, 8, "Mmsg/s", v);
    }
  }
}

static void child_task(void *arg)
{
  (void)arg;
  struct task t;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (LAPI_Init(&t.h, &info) != LAPI_SUCCESS) {
    __atomic_add_fetch(&B.bad, 1, __ATOMIC_SEQ_CST);
    return;
  }
  LAPI_Qenv(t.h, TASK_ID, &t.me);
  LAPI_Qenv(t.h, NUM_TASKS, &t.n);
  B.ldm[t.me] = ldm_buf;
  B.mem[t.me] = malloc(MEM_MAX);
  for (int i = 0; i < LDM_BUF; i++)
    ldm_buf[i] = (unsigned char)(i * 7 + t.me);
  for (int i = 0; i < MEM_MAX; i++)
    B.mem[t.me][i] = (unsigned char)(i * 13 + t.me);
  LAPI_Setcntr(t.h, &tgt_c, 0);
  LAPI_Setcntr(t.h, &org_c, 0);
  LAPI_Setcntr(t.h, &cmpl_c, 0);
  LAPI_Address_init(t.h, &tgt_c, tab);
  for (int i = 0; i < t.n; i++)
    B.tgt_cntr[i] = tab[i];
  if (t.n == 2)
    two_tasks(&t);
  if (section_on("rate"))
    rates(&t);
  LAPI_Gfence(t.h);
  LAPI_Term(t.h);
  free(B.mem[t.me]);
}

static int child_main(int n)
{
  alarm(opt_quick ? 120 : 600); /* a lost wake-up must not hang the run */
  B.ntasks = n;
  if (CRTS_init() != 0 || CRTS_athread_get_max_threads() != n) {
    fprintf(stderr, "lapi_cpe_bench: CRTS_init with %d CPEs failed\n", n);
    return 2;
  }
  CRTS_athread_spawn((void (*)(void))child_task, NULL);
  CRTS_athread_join();
  return B.bad ? 1 : 0;
}

/* =============================================================== parent */

struct rec {
  char section[16], variant[40], unit[8];
  int tasks, reps;
  long bytes;
  double med, lo, hi;
};

static struct rec recs[MAX_RECS];
static int nrecs, failures;

static void run_child(int n)
{
  int fd[2];
  if (pipe(fd) != 0) {
    perror("pipe");
    exit(2);
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    setenv("CRTS_NUM_CPES", nbuf, 1);
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    char *argv[7] = {"lapi_cpe_bench", "--child", nbuf};
    int argc = 3;
    if (opt_quick)
      argv[argc++] = "--quick";
    if (opt_only) {
      argv[argc++] = "--only";
      argv[argc++] = (char *)opt_only;
    }
    argv[argc] = NULL;
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  close(fd[1]);
  FILE *in = fdopen(fd[0], "r");
  char line[256];
  while (in && fgets(line, sizeof line, in)) {
    struct rec r;
    if (nrecs < MAX_RECS &&
        sscanf(line, "REC %15s %39s %d %ld %7s %lf %lf %lf %d", r.section,
               r.variant, &r.tasks, &r.bytes, r.unit, &r.med, &r.lo, &r.hi,
               &r.reps) == 9 && isfinite(r.med))
      recs[nrecs++] = r;
  }
  if (in)
    fclose(in);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    failures++;
    fprintf(stderr, "lapi_cpe_bench: the %d-task run failed (status %d)\n",
            n, status);
  }
}

static const struct rec *find(const char *variant, int tasks, long bytes)
{
  for (int i = 0; i < nrecs; i++)
    if (strcmp(recs[i].variant, variant) == 0 && recs[i].tasks == tasks &&
        recs[i].bytes == bytes)
      return &recs[i];
  return NULL;
}

static const char *cell(char *buf, size_t len, const struct rec *r)
{
  if (r == NULL)
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.3g [%.3g-%.3g]", r->med, r->lo, r->hi);
  return buf;
}

static void print_tables(void)
{
  char c1[48], c2[48], c3[48];
  printf("latency between two CPE tasks of a core group, us (median "
         "[min-max])\n");
  printf("  8-byte Amsend, half round trip   %s\n",
         cell(c1, sizeof c1, find("amsend8_half_rtt", 2, 8)));
  printf("  8-byte Put, until cmpl_cntr      %s\n\n",
         cell(c1, sizeof c1, find("put8_cmpl", 2, 8)));

  printf("LAPI_Put bandwidth, task 0 -> task 1, GB/s; %% = paired ratio "
         "to memcpy\n");
  printf("%-9s %8s | %-22s | %-22s | %s\n", "path", "size", "LAPI_Put",
         "memcpy", "%");
  for (int kind = 0; kind < 4; kind++)
    for (long size = 65536; size <= MEM_MAX; size *= 2) {
      char name[40];
      snprintf(name, sizeof name, "put_%s", bw_names[kind]);
      const struct rec *p = find(name, 2, size);
      if (p == NULL)
        continue;
      snprintf(name, sizeof name, "memcpy_%s", bw_names[kind]);
      const struct rec *m = find(name, 2, size);
      snprintf(name, sizeof name, "ratio_%s", bw_names[kind]);
      const struct rec *q = find(name, 2, size);
      printf("%-9s %5ld KiB | %-22s | %-22s | %3.0f%%\n", bw_names[kind],
             size / 1024, cell(c1, sizeof c1, p), cell(c2, sizeof c2, m),
             q ? q->med * 100 : NAN);
    }
  printf("\nLAPI_Amsendv of 64 KiB, main memory -> LDM, GB/s\n");
  printf("%-9s | %-22s | %-22s | %s\n", "vector", "LAPI_Amsendv",
         "memcpy of the pieces", "%");
  for (int kind = 0; kind < 3; kind++) {
    char n1[40], n2[40], n3[40];
    snprintf(n1, sizeof n1, "amsendv_%s", amv_names[kind]);
    snprintf(n2, sizeof n2, "memcpy_%s", amv_names[kind]);
    snprintf(n3, sizeof n3, "ratio_%s", amv_names[kind]);
    const struct rec *q = find(n3, 2, 65536);
    printf("%-9s | %-22s | %-22s | %3.0f%%\n", amv_names[kind],
           cell(c1, sizeof c1, find(n1, 2, 65536)),
           cell(c2, sizeof c2, find(n2, 2, 65536)), q ? q->med * 100 : NAN);
  }
  printf("\nmessage rate, 8-byte messages, millions per second (all "
         "senders together)\n");
  printf("%-22s | %-22s | %s\n", "senders", "Amsend", "Put");
  for (int n = 2; n <= 64; n *= n == 2 ? 4 : 8) {
    char who[32];
    snprintf(who, sizeof who, n == 2 ? "1 (task 0 -> 1)"
                                     : "%d (each -> next)", n);
    printf("%-22s | %-22s | %s\n", who,
           cell(c1, sizeof c1, find("amsend8", n, 8)),
           cell(c3, sizeof c3, find("put8", n, 8)));
  }

  printf("\ntargets (timing never fails the run)\n");
  const struct rec *l = find("amsend8_half_rtt", 2, 8);
  if (l)
    printf("  amsend8_half_rtt    < 2 us                %8.3f us  %s\n",
           l->med, l->med < 2 ? "MET" : "NOT MET");
  else
    printf("  amsend8_half_rtt    < 2 us                not measured\n");
  double worst = INFINITY;
  for (int kind = 0; kind < 4; kind++)
    for (long size = 65536; size <= MEM_MAX; size *= 2) {
      char name[40];
      snprintf(name, sizeof name, "ratio_%s", bw_names[kind]);
      const struct rec *q = find(name, 2, size);
      if (q && q->med < worst)
        worst = q->med;
    }
  if (isinf(worst))
    printf("  put_bw_min_pct      >= 80%% of memcpy      not measured\n");
  else
    printf("  put_bw_min_pct      >= 80%% of memcpy      %8.1f %%   %s\n",
           worst * 100, worst >= 0.8 ? "MET" : "NOT MET");
}

static void print_csv(void)
{
  printf("section,variant,tasks,bytes,unit,median,min,max,reps\n");
  for (int i = 0; i < nrecs; i++)
    printf("%s,%s,%d,%ld,%s,%.6g,%.6g,%.6g,%d\n", recs[i].section,
           recs[i].variant, recs[i].tasks, recs[i].bytes, recs[i].unit,
           recs[i].med, recs[i].lo, recs[i].hi, recs[i].reps);
}

int main(int argc, char **argv)
{
  int child = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      opt_quick = 1;
      opt_reps = 5;
      opt_min_time = 0.005;
    } else if (strcmp(argv[i], "--csv") == 0) {
      opt_csv = 1;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      opt_only = argv[++i];
    } else if (strcmp(argv[i], "--child") == 0 && i + 1 < argc) {
      child = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--csv] [--only latency|"
              "bandwidth|amsendv|rate]\n", argv[0]);
      return 2;
    }
  }
  if (child)
    return child_main(child);
  double t0 = bench_now();
  char load[128] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f && fgets(load, sizeof load, f))
    load[strcspn(load, "\n")] = '\0';
  if (f)
    fclose(f);
  run_child(2);
  if (section_on("rate")) { /* the other sections use 2 tasks */
    run_child(8);
    run_child(64);
  }
  if (opt_csv) {
    print_csv();
  } else {
    printf("# lapi_cpe_bench: %ld usable cores; %d reps of >= %.0f ms; "
           "load average before: %s\n\n", sysconf(_SC_NPROCESSORS_ONLN),
           opt_reps, opt_min_time * 1e3, load);
    print_tables();
    printf("\n# %.1f s\n", bench_now() - t0);
  }
  return failures ? 1 : 0;
}
