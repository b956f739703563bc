/*
 * ofi_raw.c - raw libfabric baseline for lapi_bench: two CGs of a lapirun
 * job, FI_EP_RDM endpoints of the job's provider (FI_PROVIDER, set by
 * lapirun --provider), addresses exchanged with the lapirun bootstrap.
 *
 *   lat   8-byte fi_send/fi_recv ping-pong, half a round trip (us)
 *   bw    streaming fi_send of 8 B .. 4 MiB, WINDOW in flight, one 0-byte
 *         ack per window (MB/s)
 *   rate  8-byte sends streamed, WINDOW_RATE in flight (messages/s)
 *
 * Each figure is the median of the repetitions (11, 5 with --quick).
 * Rank 0 prints "RAW <kind> <size> <value>" lines (lapi_bench --raw reads
 * them).  Timing never fails the program; a libfabric error or a peer that
 * does not answer within 30 s does.
 *
 * Usage: lapirun -n 2 [--provider P] ofi_raw [--provider P] [--quick]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "transport/boot/boot.h"

#define MAX_SIZE (4 << 20)
#define WINDOW 16
#define WINDOW_RATE 64
#define MAX_REPS 16
/* eager and rendezvous sizes; 64 KiB is the Amsendv baseline */
static const size_t sizes[] = {8, 64, 512, 4096, 32768, 65536, 262144,
                               1 << 20, 4 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_av *av;
static fi_addr_t peer;
static int me, reps = 11, quick;
static struct fi_context2 ctx[WINDOW_RATE + 2];
static unsigned char *sbuf, *rbuf;
static long pending_send, pending_recv; /* completions not yet reaped */

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

static void die(const char *what, long rc)
{
  fprintf(stderr, "ofi_raw: CG %d: %s: %s\n", me, what,
          fi_strerror((int)-rc));
  exit(1);
}

/* Reap completions until `sends` sends and `recvs` receives are done. */
static void reap(long sends, long recvs)
{
  struct fi_cq_msg_entry e[16];
  double dead = now_sec() + 30.0;
  while (pending_send > sends || pending_recv > recvs) {
    ssize_t n = fi_cq_read(cq, e, 16);
    if (n > 0) {
      for (ssize_t i = 0; i < n; i++) {
        if (e[i].flags & FI_SEND)
          pending_send--;
        else
          pending_recv--;
      }
    } else if (n == -FI_EAVAIL) {
      struct fi_cq_err_entry err;
      memset(&err, 0, sizeof err);
      fi_cq_readerr(cq, &err, 0);
      die("completion error", -err.err);
    } else if (n != -FI_EAGAIN) {
      die("fi_cq_read", n);
    } else if (now_sec() > dead) {
      fprintf(stderr, "ofi_raw: CG %d: peer silent for 30 s\n", me);
      exit(1);
    }
  }
}

static void post_send(const void *buf, size_t len, int slot)
{
  for (;;) {
    ssize_t rc = fi_send(ep, buf, len, NULL, peer, &ctx[slot]);
    if (rc == 0)
      break;
    if (rc != -FI_EAGAIN)
      die("fi_send", rc);
    reap(pending_send, pending_recv); /* drives progress */
    struct fi_cq_msg_entry e;
    ssize_t n = fi_cq_read(cq, &e, 1);
    if (n == 1) {
      if (e.flags & FI_SEND)
        pending_send--;
      else
        pending_recv--;
    }
  }
  pending_send++;
}

static void post_recv(void *buf, size_t len, int slot)
{
  for (;;) {
    ssize_t rc = fi_recv(ep, buf, len, NULL, peer, &ctx[slot]);
    if (rc == 0)
      break;
    if (rc != -FI_EAGAIN)
      die("fi_recv", rc);
    struct fi_cq_msg_entry e;
    ssize_t n = fi_cq_read(cq, &e, 1);
    if (n == 1) {
      if (e.flags & FI_SEND)
        pending_send--;
      else
        pending_recv--;
    }
  }
  pending_recv++;
}

static void setup(void)
{
  struct fi_info *hints = fi_allocinfo(), *info;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                FI_MR_PROV_KEY;
  const char *prov = getenv("FI_PROVIDER");
  if (prov && *prov)
    hints->fabric_attr->prov_name = strdup(prov);
  int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
  if (rc)
    die("fi_getinfo", rc);
  if ((rc = fi_fabric(info->fabric_attr, &fab, NULL)))
    die("fi_fabric", rc);
  if ((rc = fi_domain(fab, info, &dom, NULL)))
    die("fi_domain", rc);
  struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_MSG, .size = 1024,
                          .wait_obj = FI_WAIT_NONE};
  if ((rc = fi_cq_open(dom, &ca, &cq, NULL)))
    die("fi_cq_open", rc);
  struct fi_av_attr aa = {.type = FI_AV_TABLE};
  if ((rc = fi_av_open(dom, &aa, &av, NULL)))
    die("fi_av_open", rc);
  if ((rc = fi_endpoint(dom, info, &ep, NULL)))
    die("fi_endpoint", rc);
  fi_ep_bind(ep, &cq->fid, FI_SEND | FI_RECV);
  fi_ep_bind(ep, &av->fid, 0);
  if ((rc = fi_enable(ep)))
    die("fi_enable", rc);
  if (me == 0)
    printf("# ofi_raw: provider %s, fabric %s\n",
           info->fabric_attr->prov_name, info->fabric_attr->name);
  char name[256], all[512];
  size_t len = sizeof name;
  memset(name, 0, sizeof name);
  if ((rc = fi_getname(&ep->fid, name, &len)))
    die("fi_getname", rc);
  struct lapi_boot *b = lapi_boot_get();
  if (!b || b->size != 2) {
    fprintf(stderr, "ofi_raw: run as lapirun -n 2 ofi_raw\n");
    exit(1);
  }
  if (b->allgather(b, name, sizeof name, all))
    exit(1);
  fi_addr_t addrs[2];
  if (fi_av_insert(av, all, 1, &addrs[0], 0, NULL) != 1 ||
      fi_av_insert(av, all + 256, 1, &addrs[1], 0, NULL) != 1)
    die("fi_av_insert", -FI_EINVAL);
  peer = addrs[1 - me];
  fi_freeinfo(info);
  fi_freeinfo(hints);
}

static void barrier(void)
{
  struct lapi_boot *b = lapi_boot_get();
  if (b->barrier(b))
    exit(1);
}

static double run_lat(long iters)
{
  barrier();
  double t0 = now_sec();
  for (long i = 0; i < iters; i++) {
    post_recv(rbuf, 8, 0);
    if (me == 0) {
      post_send(sbuf, 8, 1);
      reap(0, 0);
    } else {
      reap(pending_send, 0);
      post_send(sbuf, 8, 1);
      reap(0, 0);
    }
  }
  return (now_sec() - t0) / (double)iters / 2.0 * 1e6;
}

/* Streams n messages of size bytes; returns seconds. */
static double run_stream(size_t size, long n, int window)
{
  barrier();
  double t0 = now_sec();
  for (long done = 0; done < n;) {
    int w = n - done < window ? (int)(n - done) : window;
    if (me == 0) {
      post_recv(rbuf, 0, window + 1);
      for (int i = 0; i < w; i++)
        post_send(sbuf, size, i);
      reap(0, 0);
    } else {
      for (int i = 0; i < w; i++)
        post_recv(rbuf + (size <= 4096 ? (size_t)i * 4096 : 0), size, i);
      reap(0, 0);
      post_send(sbuf, 0, window + 1);
      reap(0, 0);
    }
    done += w;
  }
  return now_sec() - t0;
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--quick"))
      quick = 1, reps = 5;
    else if (!strcmp(argv[i], "--provider") && i + 1 < argc)
      setenv("FI_PROVIDER", argv[++i], 1);
  struct lapi_boot *b = lapi_boot_get();
  if (!b) {
    fprintf(stderr, "ofi_raw: no bootstrap; run under lapirun -n 2\n");
    return 1;
  }
  me = b->rank;
  sbuf = malloc(MAX_SIZE);
  rbuf = malloc(MAX_SIZE + WINDOW_RATE * 4096);
  memset(sbuf, 1, MAX_SIZE);
  setup();
  double v[MAX_REPS];
  run_lat(100); /* warm-up */
  for (int r = 0; r < reps; r++)
    v[r] = run_lat(quick ? 300 : 2000);
  if (me == 0)
    printf("RAW lat 8 %.3f\n", median(v, reps));
  for (int k = 0; k < NSIZES; k++) {
    size_t size = sizes[k];
    long budget = quick ? (8L << 20) : (32L << 20);
    long n = budget / (long)size;
    if (n < 2 * WINDOW)
      n = 2 * WINDOW;
    if (n > 4000)
      n = 4000;
    run_stream(size, WINDOW, WINDOW);
    for (int r = 0; r < reps; r++)
      v[r] = (double)size * (double)n / run_stream(size, n, WINDOW) / 1e6;
    if (me == 0)
      printf("RAW bw %zu %.1f\n", size, median(v, reps));
  }
  for (int r = 0; r < reps; r++)
    v[r] = (double)(quick ? 5000 : 20000) /
           run_stream(8, quick ? 5000 : 20000, WINDOW_RATE);
  if (me == 0)
    printf("RAW rate 8 %.0f\n", median(v, reps));
  fflush(stdout);
  barrier();
  fi_close(&ep->fid);
  fi_close(&av->fid);
  fi_close(&cq->fid);
  fi_close(&dom->fid);
  fi_close(&fab->fid);
  return 0;
}
