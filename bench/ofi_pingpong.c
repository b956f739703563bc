/*
 * ofi_pingpong.c - the raw libfabric baseline of lapi_bench: two CGs of a
 * lapirun job, FI_EP_RDM endpoints of the job's provider (FI_PROVIDER, set
 * by lapirun --provider), addresses exchanged with the lapirun bootstrap,
 * fi_send / fi_recv only, the completion queue busy-polled (after 20 us
 * without a completion each empty poll yields the core).
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
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "bench_measure.h"
#include "transport/boot/boot.h"

#define MAX_REPS 16
#define RATE_SIZE 8

static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_av *av;
static fi_addr_t peer;
static size_t max_msg;
static int me;
/* One context per operation in flight: a window of sends or receives and
   the acknowledgement. */
static struct fi_context2 ctx[2 * BENCH_WINDOW + 2];
#define ACK_SLOT (2 * BENCH_WINDOW)
#define RECV_SLOT(i) (BENCH_WINDOW + (i))
static unsigned char *sbuf, *rbuf;
static long pending_send, pending_recv; /* completions not yet reaped */

static void die(const char *what, long rc)
{
  fprintf(stderr, "ofi_pingpong: CG %d: %s: %s\n", me, what,
          fi_strerror((int)-rc));
  exit(1);
}

/* Reads what the completion queue holds (returns how many); fails on a
   completion error. */
static ssize_t poll_cq(void)
{
  struct fi_cq_msg_entry e[16];
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
  }
  return n > 0 ? n : 0;
}

/*
 * Polls until at most `sends` sends and `recvs` receives are pending.
 * After SPIN_US without a completion every empty poll yields the core: two
 * processes that only spin, on a machine with more runnable threads than
 * cores, would otherwise wait out whole time slices (ms) for each other.
 * A round trip on an idle machine ends well within the spin.
 */
#define SPIN_US 20
static void reap(long sends, long recvs)
{
  double last = bench_now(), dead = last + 30.0;
  while (pending_send > sends || pending_recv > recvs) {
    double now = bench_now();
    if (poll_cq() > 0)
      last = now;
    else if (now - last > SPIN_US * 1e-6)
      sched_yield();
    if (now > dead) {
      fprintf(stderr, "ofi_pingpong: CG %d: peer silent for 30 s\n", me);
      exit(1);
    }
  }
}

static void post_send(const void *buf, size_t len, int slot)
{
  ssize_t rc;
  while ((rc = fi_send(ep, buf, len, NULL, peer, &ctx[slot])) == -FI_EAGAIN)
    poll_cq(); /* progress frees room in the queue */
  if (rc)
    die("fi_send", rc);
  pending_send++;
}

static void post_recv(void *buf, size_t len, int slot)
{
  ssize_t rc;
  while ((rc = fi_recv(ep, buf, len, NULL, peer, &ctx[slot])) == -FI_EAGAIN)
    poll_cq();
  if (rc)
    die("fi_recv", rc);
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
  max_msg = info->ep_attr->max_msg_size;
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
    printf("# ofi_pingpong: provider %s, fabric %s, max_msg_size %zu\n",
           info->fabric_attr->prov_name, info->fabric_attr->name, max_msg);
  char name[256], all[512];
  size_t len = sizeof name;
  memset(name, 0, sizeof name);
  if ((rc = fi_getname(&ep->fid, name, &len)))
    die("fi_getname", rc);
  struct lapi_boot *b = lapi_boot_get();
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

static long agree(void *arg, long value)
{
  (void)arg;
  long all[2];
  struct lapi_boot *b = lapi_boot_get();
  if (b->allgather(b, &value, sizeof value, all))
    exit(1);
  return all[0];
}

/* Ping-pong of *(size_t *)arg bytes; a unit is one round trip. */
static double run_lat(void *arg, long iters)
{
  size_t size = *(const size_t *)arg;
  post_recv(rbuf, size, RECV_SLOT(0));
  barrier();
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    int more = i + 1 < iters;
    if (me == 0) {
      post_send(sbuf, size, 0);
      reap(0, 0);
      if (more)
        post_recv(rbuf, size, RECV_SLOT(0));
    } else {
      reap(pending_send, 0);
      if (more)
        post_recv(rbuf, size, RECV_SLOT(0));
      post_send(sbuf, size, 0);
      reap(0, pending_recv);
    }
  }
  return bench_now() - t0;
}

/* Windows of BENCH_WINDOW sends of *(size_t *)arg bytes, each
   acknowledged; a unit is one window. */
static double run_stream(void *arg, long windows)
{
  size_t size = *(const size_t *)arg;
  if (me == 0)
    post_recv(rbuf, 0, ACK_SLOT);
  else
    for (int i = 0; i < BENCH_WINDOW; i++)
      post_recv(rbuf, size, RECV_SLOT(i));
  barrier();
  double t0 = bench_now();
  for (long w = 0; w < windows; w++) {
    int more = w + 1 < windows;
    if (me == 0) {
      for (int i = 0; i < BENCH_WINDOW; i++)
        post_send(sbuf, size, i);
      reap(0, 0);
      if (more)
        post_recv(rbuf, 0, ACK_SLOT);
    } else {
      reap(pending_send, 0);
      if (more)
        for (int i = 0; i < BENCH_WINDOW; i++)
          post_recv(rbuf, size, RECV_SLOT(i));
      post_send(sbuf, 0, ACK_SLOT);
      reap(0, pending_recv);
    }
  }
  return bench_now() - t0;
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
  me = b->rank;
  struct bench_plan plan = bench_plan_of(quick);
  sbuf = malloc(BENCH_MAX_SIZE);
  rbuf = malloc(BENCH_MAX_SIZE);
  if (!sbuf || !rbuf) {
    fprintf(stderr, "ofi_pingpong: out of memory\n");
    return 1;
  }
  memset(sbuf, 1, BENCH_MAX_SIZE);
  memset(rbuf, 0, BENCH_MAX_SIZE);
  setup();
  if (me == 0) {
    char load[128];
    bench_load_average(load, sizeof load);
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
  barrier();
  fi_close(&ep->fid);
  fi_close(&av->fid);
  fi_close(&cq->fid);
  fi_close(&dom->fid);
  fi_close(&fab->fid);
  return 0;
}
