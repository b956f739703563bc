/*
 * lapi_bench.c - LAPI between two core groups (processes of a lapirun job,
 * the ofi transport), with ratios against the raw libfabric figures of
 * bench/ofi_raw measured in the same session (bench/run_lapi_bench.sh runs
 * ofi_raw, then this program with --raw FILE).
 *
 *   lat      8-byte LAPI_Amsend ping-pong: task 0 sends, task 1's header
 *            handler takes the bytes and its tgt_cntr wakes task 1, which
 *            answers the same way; half a round trip (us)
 *   put/am   LAPI_Put and LAPI_Amsend bandwidth, 8 B .. 4 MiB, WINDOW in
 *            flight, waited on cmpl_cntr (MB/s)
 *   amsendv  LAPI_Amsendv of 64 KiB in 64 segments: IOVECTOR, GENERIC and
 *            STRIDED (64 x 1 KiB blocks of 2 KiB pitch) (MB/s)
 *   rate     8-byte Amsends, WINDOW_RATE outstanding (messages/s)
 *
 * Every figure is the median of the repetitions (11, 5 with --quick).
 * Timing never fails the program; only a LAPI error does.
 *
 * Usage: lapirun -n 2 [--provider P] lapi_bench [--provider P] [--quick]
 *        [--csv] [--raw FILE]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lapi.h>

#define MAX_SIZE (4 << 20)
#define WINDOW 16
#define WINDOW_RATE 64
#define MAX_REPS 16
/* eager and rendezvous sizes; 64 KiB is the Amsendv baseline */
static const size_t sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144,
                               1 << 20, 4 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static lapi_handle_t h;
static int me, reps = 11, quick, csv;
static lapi_cntr_t tgt_c, cmpl_c;
static void *tgt_tab[2];
static unsigned char *sbuf, *rbuf;
static int amv_kind;

/* raw libfabric figures read from --raw */
static double raw_lat, raw_rate, raw_bw[32];
static size_t raw_bw_size[32];
static int raw_nbw;

static double now_sec(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void check(int rc, const char *what)
{
  if (rc != LAPI_SUCCESS) {
    char msg[LAPI_MAX_ERR_STRING];
    LAPI_Msg_string(rc, msg);
    fprintf(stderr, "lapi_bench: task %d: %s: %s\n", me, what, msg);
    exit(1);
  }
}

/* Header handler: every message lands in rbuf (contents unchecked). */
static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return rbuf;
}

static void *hinfo[64];
static ulong hlen[64];
static lapi_vec_t hvec;

static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)len_vec;
  if (amv_kind == 2) {
    hvec.vec_type = LAPI_GEN_STRIDED_XFER;
    hvec.num_vecs = 64;
    hinfo[0] = rbuf;
    hinfo[1] = (void *)(uintptr_t)1024;
    hinfo[2] = (void *)(uintptr_t)2048;
    hvec.len = NULL;
  } else {
    hvec.vec_type = amv_kind == 0 ? LAPI_GEN_IOVECTOR : LAPI_GEN_GENERIC;
    hvec.num_vecs = 64;
    for (int i = 0; i < 64; i++) {
      hinfo[i] = rbuf + (size_t)i * 2048;
      hlen[i] = 1024;
    }
    hvec.len = hlen;
  }
  hvec.info = hinfo;
  *comp_h = NULL;
  *uinfo = NULL;
  return &hvec;
}

static void *oinfo[64];
static ulong olen[64];

static void amv_origin(lapi_vec_t *v)
{
  if (amv_kind == 2) {
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    v->num_vecs = 64;
    oinfo[0] = sbuf;
    oinfo[1] = (void *)(uintptr_t)1024;
    oinfo[2] = (void *)(uintptr_t)2048;
    v->len = NULL;
  } else {
    v->vec_type = amv_kind == 0 ? LAPI_GEN_IOVECTOR : LAPI_GEN_GENERIC;
    v->num_vecs = 64;
    for (int i = 0; i < 64; i++) {
      oinfo[i] = sbuf + (size_t)i * 2048;
      olen[i] = 1024;
    }
    v->len = olen;
  }
  v->info = oinfo;
}

static void wait_cntr(lapi_cntr_t *c, int v)
{
  check(LAPI_Waitcntr(h, c, v, NULL), "LAPI_Waitcntr");
}

static double run_lat(long iters)
{
  check(LAPI_Gfence(h), "LAPI_Gfence");
  int peer = 1 - me;
  double t0 = now_sec();
  for (long i = 0; i < iters; i++) {
    if (me == 1)
      wait_cntr(&tgt_c, 1);
    check(LAPI_Amsend(h, (uint)peer, (void *)1, NULL, 0, sbuf, 8,
                      tgt_tab[peer], NULL, NULL),
          "LAPI_Amsend");
    if (me == 0)
      wait_cntr(&tgt_c, 1);
  }
  return (now_sec() - t0) / (double)iters / 2.0 * 1e6;
}

/* kind: 0 Put, 1 Amsend, 2 Amsendv (size ignored); returns seconds. */
static double run_stream(int kind, size_t size, long n, int window)
{
  check(LAPI_Gfence(h), "LAPI_Gfence");
  lapi_vec_t v;
  if (kind == 2)
    amv_origin(&v);
  double t0 = now_sec();
  if (me == 0) {
    for (long done = 0; done < n;) {
      int w = n - done < window ? (int)(n - done) : window;
      for (int i = 0; i < w; i++) {
        int rc;
        if (kind == 0)
          rc = LAPI_Put(h, 1, (ulong)size, rbuf, sbuf, NULL, NULL, &cmpl_c);
        else if (kind == 1)
          rc = LAPI_Amsend(h, 1, (void *)1, NULL, 0, sbuf, (ulong)size,
                           NULL, NULL, &cmpl_c);
        else
          rc = LAPI_Amsendv(h, 1, (void *)2, NULL, 0, &v, NULL, NULL,
                            &cmpl_c);
        check(rc, "transfer");
      }
      wait_cntr(&cmpl_c, w);
      done += w;
    }
  }
  double t = now_sec() - t0;
  check(LAPI_Gfence(h), "LAPI_Gfence");
  return t;
}

static double raw_bw_of(size_t size)
{
  for (int i = 0; i < raw_nbw; i++)
    if (raw_bw_size[i] == size)
      return raw_bw[i];
  return 0;
}

static void read_raw(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "lapi_bench: cannot read %s; no ratios\n", path);
    return;
  }
  char kind[16];
  size_t size;
  double val;
  char line[256];
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "RAW %15s %zu %lf", kind, &size, &val) == 3) {
      if (!strcmp(kind, "lat"))
        raw_lat = val;
      else if (!strcmp(kind, "rate"))
        raw_rate = val;
      else if (!strcmp(kind, "bw") && raw_nbw < 32) {
        raw_bw_size[raw_nbw] = size;
        raw_bw[raw_nbw++] = val;
      }
    }
  fclose(f);
}

static void ratio_str(char *out, double lapi, double raw, int lower_better)
{
  if (raw <= 0 || lapi <= 0)
    strcpy(out, "-");
  else
    snprintf(out, 16, "%.2f", lower_better ? lapi / raw : lapi / raw);
}

int main(int argc, char **argv)
{
  const char *raw_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = 1, reps = 5;
    else if (!strcmp(argv[i], "--csv"))
      csv = 1;
    else if (!strcmp(argv[i], "--raw") && i + 1 < argc)
      raw_path = argv[++i];
    else if (!strcmp(argv[i], "--provider") && i + 1 < argc)
      setenv("FI_PROVIDER", argv[++i], 1);
  }
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  check(LAPI_Init(&h, &info), "LAPI_Init");
  int n = 0;
  LAPI_Qenv(h, TASK_ID, &me);
  LAPI_Qenv(h, NUM_TASKS, &n);
  if (n != 2) {
    fprintf(stderr, "lapi_bench: needs 2 tasks (lapirun -n 2)\n");
    LAPI_Term(h);
    return 1;
  }
  if (raw_path && me == 0)
    read_raw(raw_path);
  sbuf = malloc(MAX_SIZE);
  rbuf = malloc(MAX_SIZE);
  memset(sbuf, 3, MAX_SIZE);
  memset(rbuf, 0, MAX_SIZE);
  LAPI_Addr_set(h, (void *)am_header, 1);
  LAPI_Addr_set(h, (void *)amv_header, 2);
  LAPI_Setcntr(h, &tgt_c, 0);
  LAPI_Setcntr(h, &cmpl_c, 0);
  check(LAPI_Address_init(h, &tgt_c, tgt_tab), "LAPI_Address_init");
  /* Put writes into the peer's rbuf: same address in both tasks is not
     guaranteed, so exchange it. */
  void *rtab[2];
  check(LAPI_Address_init(h, rbuf, rtab), "LAPI_Address_init");
  unsigned char *peer_rbuf = rtab[1 - me];

  double v[MAX_REPS], r;
  char rs[16];
  const char *prov = getenv("FI_PROVIDER");
  if (me == 0) {
    if (csv)
      printf("what,size,lapi,raw,ratio\n");
    else
      printf("# lapi_bench: provider %s, %d reps (median)\n",
             prov ? prov : "(default)", reps);
  }

  run_lat(100);
  for (int i = 0; i < reps; i++)
    v[i] = run_lat(quick ? 300 : 2000);
  r = median(v, reps);
  if (me == 0) {
    ratio_str(rs, r, raw_lat, 1);
    if (csv)
      printf("lat_us,8,%.3f,%.3f,%s\n", r, raw_lat, rs);
    else
      printf("\n8-byte Amsend half round trip: %.2f us (raw fi_send %.2f "
             "us, ratio %s)\n", r, raw_lat, rs);
  }

  if (me == 0 && !csv)
    printf("\nbandwidth MB/s (WINDOW %d)\n%-8s | %10s | %10s | %10s | "
           "%-9s | %-9s\n", WINDOW, "size", "Put", "Amsend", "raw send",
           "Put/raw", "Am/raw");
  /* LAPI_Put targets rbuf of the peer */
  for (int z = 0; z < NSIZES; z++) {
    size_t s = sizes[z];
    long budget = quick ? (8L << 20) : (32L << 20);
    long cnt = budget / (long)s;
    if (cnt < 2 * WINDOW)
      cnt = 2 * WINDOW;
    if (cnt > 4000)
      cnt = 4000;
    double bw[2];
    for (int k = 0; k < 2; k++) {
      unsigned char *save = rbuf;
      if (k == 0)
        rbuf = peer_rbuf; /* run_stream's Put target */
      run_stream(k, s, WINDOW, WINDOW);
      for (int i = 0; i < reps; i++)
        v[i] = (double)s * (double)cnt / run_stream(k, s, cnt, WINDOW) / 1e6;
      rbuf = save;
      bw[k] = median(v, reps);
    }
    if (me == 0) {
      double raw = raw_bw_of(s);
      char r0[16], r1[16];
      ratio_str(r0, bw[0], raw, 0);
      ratio_str(r1, bw[1], raw, 0);
      if (csv) {
        printf("put_MBps,%zu,%.1f,%.1f,%s\n", s, bw[0], raw, r0);
        printf("amsend_MBps,%zu,%.1f,%.1f,%s\n", s, bw[1], raw, r1);
      } else
        printf("%-8zu | %10.1f | %10.1f | %10.1f | %-9s | %-9s\n", s, bw[0],
               bw[1], raw, r0, r1);
    }
  }

  static const char *const names[3] = {"IOVECTOR", "GENERIC", "STRIDED"};
  if (me == 0 && !csv)
    printf("\nAmsendv 64 KiB in 64 x 1 KiB segments, MB/s "
           "(raw send of 64 KiB: %.1f)\n", raw_bw_of(65536));
  for (amv_kind = 0; amv_kind < 3; amv_kind++) {
    long cnt = quick ? 128 : 512;
    run_stream(2, 0, WINDOW, WINDOW);
    for (int i = 0; i < reps; i++)
      v[i] = 65536.0 * (double)cnt / run_stream(2, 0, cnt, WINDOW) / 1e6;
    r = median(v, reps);
    if (me == 0) {
      char ra[16];
      ratio_str(ra, r, raw_bw_of(65536), 0);
      if (csv)
        printf("amsendv_%s_MBps,65536,%.1f,%.1f,%s\n", names[amv_kind], r,
               raw_bw_of(65536), ra);
      else
        printf("%-9s %10.1f  ratio %s\n", names[amv_kind], r, ra);
    }
  }

  long cnt = quick ? 5000 : 20000;
  for (int i = 0; i < reps; i++)
    v[i] = (double)cnt / run_stream(1, 8, cnt, WINDOW_RATE);
  r = median(v, reps);
  if (me == 0) {
    ratio_str(rs, r, raw_rate, 0);
    if (csv)
      printf("rate_msgps,8,%.0f,%.0f,%s\n", r, raw_rate, rs);
    else
      printf("\nmessage rate, 8-byte Amsend, %d outstanding: %.0f msg/s "
             "(raw %.0f, ratio %s)\n", WINDOW_RATE, r, raw_rate, rs);
  }
  fflush(stdout);
  check(LAPI_Gfence(h), "LAPI_Gfence");
  LAPI_Term(h);
  return 0;
}
