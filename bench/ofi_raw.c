/*
 * ofi_raw.c - the raw libfabric baseline endpoint (see ofi_raw.h): what
 * ofi_pingpong prints and lapi_bench interleaves with LAPI.
 *
 * The completion queue is busy-polled; after SPIN_US without a completion,
 * or at once where the two processes seem to share a core, each empty
 * poll yields the core (see reap).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ofi_raw.h"

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

#define NAME_MAX_LEN 256 /* an endpoint address, as fi_getname writes it */

static struct {
  struct fid_fabric *fab;
  struct fid_domain *dom;
  struct fid_ep *ep;
  struct fid_cq *cq;
  struct fid_av *av;
  fi_addr_t peer;
  size_t max_msg;
  int me;
  struct ofi_raw_peers peers;
  unsigned char *sbuf, *rbuf;
  long pending_send, pending_recv; /* completions not yet reaped */
  /* One context per operation in flight: a window of sends or receives
     and the acknowledgement. */
  struct fi_context2 ctx[2 * BENCH_WINDOW + 2];
} raw;
#define ACK_SLOT (2 * BENCH_WINDOW)
#define RECV_SLOT(i) (BENCH_WINDOW + (i))

static void die(const char *what, long rc)
{
  fprintf(stderr, "ofi_raw: process %d: %s: %s\n", raw.me, what,
          fi_strerror((int)-rc));
  exit(1);
}

/* Reads what the completion queue holds (returns how many); fails on a
   completion error. */
static ssize_t poll_cq(void)
{
  struct fi_cq_msg_entry e[16];
  ssize_t n = fi_cq_read(raw.cq, e, 16);
  if (n > 0) {
    for (ssize_t i = 0; i < n; i++) {
      if (e[i].flags & FI_SEND)
        raw.pending_send--;
      else
        raw.pending_recv--;
    }
  } else if (n == -FI_EAVAIL) {
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof err);
    fi_cq_readerr(raw.cq, &err, 0);
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
 *
 * When the two processes share a core (the scheduler leaves them so now
 * and then for seconds, more often beside a LAPI process's own threads in
 * lapi_bench), the spin itself is the cost: each side burns SPIN_US of
 * the core before the other may answer, 21.7 us a half round trip
 * against 0.7.  So, as LAPI's own wait does (src/am/lapi_wait.c): after
 * SHARED_WAITS waits in a row that ended right after a yield which gave
 * the core away for a turn (YIELD_TURN_MIN .. _MAX s), the next waits
 * yield from the start; every PROBE_EVERY waits one spins again, and a
 * wait that ends without such a turn ends the yielding.
 */
#define SPIN_US 20
#define YIELD_TURN_MIN 1e-6
#define YIELD_TURN_MAX 200e-6
#define SHARED_WAITS 2
#define PROBE_EVERY 32

static struct {
  int turns;    /* waits in a row ended right after a turn given away */
  int shared;   /* yield from the start */
  unsigned waits;
} wait_state;

static void reap(long sends, long recvs)
{
  double start = bench_now(), last = start, dead = start + 30.0;
  int probe = ++wait_state.waits % PROBE_EVERY == 0;
  int yield_now = wait_state.shared && !probe;
  int yielded = 0, turned = 0, ended_after_turn = 0;
  while (raw.pending_send > sends || raw.pending_recv > recvs) {
    double now = bench_now();
    if (poll_cq() > 0) {
      last = now;
      ended_after_turn = turned;
      turned = 0;
    } else if (yield_now || now - last > SPIN_US * 1e-6) {
      sched_yield();
      double took = bench_now() - now;
      yielded = 1;
      turned = took >= YIELD_TURN_MIN && took <= YIELD_TURN_MAX;
    }
    if (now > dead) {
      fprintf(stderr, "ofi_raw: process %d: peer silent for 30 s\n", raw.me);
      exit(1);
    }
  }
  /* A wait tells something only if it yielded (did the answer come right
     after a turn given away?) or spun for a while (the answer came while
     we spun: the peer runs elsewhere); a send's completion, found at
     once, tells nothing. */
  if (yielded)
    wait_state.turns = ended_after_turn ? wait_state.turns + 1 : 0;
  else if (last - start > YIELD_TURN_MIN)
    wait_state.turns = 0;
  wait_state.shared = wait_state.turns >= SHARED_WAITS;
}

static void post_send(const void *buf, size_t len, int slot)
{
  ssize_t rc;
  while ((rc = fi_send(raw.ep, buf, len, NULL, raw.peer, &raw.ctx[slot])) ==
         -FI_EAGAIN)
    poll_cq(); /* progress frees room in the queue */
  if (rc)
    die("fi_send", rc);
  raw.pending_send++;
}

static void post_recv(void *buf, size_t len, int slot)
{
  ssize_t rc;
  while ((rc = fi_recv(raw.ep, buf, len, NULL, raw.peer, &raw.ctx[slot])) ==
         -FI_EAGAIN)
    poll_cq();
  if (rc)
    die("fi_recv", rc);
  raw.pending_recv++;
}

/* The endpoint, its CQ and AV on FI_PROVIDER's first RDM fabric. */
static int open_endpoint(char *desc, size_t desc_len)
{
  struct fi_info *hints = fi_allocinfo(), *info = NULL;
  if (hints == NULL)
    return -1;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                FI_MR_PROV_KEY;
  const char *prov = getenv("FI_PROVIDER");
  if (prov && *prov)
    hints->fabric_attr->prov_name = strdup(prov);
  int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
  fi_freeinfo(hints);
  if (rc) {
    fprintf(stderr, "ofi_raw: no RDM endpoint of provider %s: %s\n",
            prov && *prov ? prov : "(any)", fi_strerror(-rc));
    return -1;
  }
  raw.max_msg = info->ep_attr->max_msg_size;
  if ((rc = fi_fabric(info->fabric_attr, &raw.fab, NULL)))
    die("fi_fabric", rc);
  if ((rc = fi_domain(raw.fab, info, &raw.dom, NULL)))
    die("fi_domain", rc);
  struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_MSG, .size = 1024,
                          .wait_obj = FI_WAIT_NONE};
  if ((rc = fi_cq_open(raw.dom, &ca, &raw.cq, NULL)))
    die("fi_cq_open", rc);
  struct fi_av_attr aa = {.type = FI_AV_TABLE};
  if ((rc = fi_av_open(raw.dom, &aa, &raw.av, NULL)))
    die("fi_av_open", rc);
  if ((rc = fi_endpoint(raw.dom, info, &raw.ep, NULL)))
    die("fi_endpoint", rc);
  fi_ep_bind(raw.ep, &raw.cq->fid, FI_SEND | FI_RECV);
  fi_ep_bind(raw.ep, &raw.av->fid, 0);
  if ((rc = fi_enable(raw.ep)))
    die("fi_enable", rc);
  snprintf(desc, desc_len, "provider %s, fabric %s",
           info->fabric_attr->prov_name, info->fabric_attr->name);
  fi_freeinfo(info);
  return 0;
}

int ofi_raw_open(int rank, const struct ofi_raw_peers *peers, char *desc,
                 size_t desc_len)
{
  raw.me = rank;
  raw.peers = *peers;
  raw.sbuf = malloc(BENCH_MAX_SIZE);
  raw.rbuf = malloc(BENCH_MAX_SIZE);
  if (!raw.sbuf || !raw.rbuf) {
    fprintf(stderr, "ofi_raw: out of memory\n");
    return -1;
  }
  memset(raw.sbuf, 1, BENCH_MAX_SIZE);
  memset(raw.rbuf, 0, BENCH_MAX_SIZE);
  /* Both processes take part in the all-gather even if one has no
     endpoint: an empty name tells the other. */
  char name[NAME_MAX_LEN], all[2 * NAME_MAX_LEN];
  memset(name, 0, sizeof name);
  int ok = open_endpoint(desc, desc_len) == 0;
  size_t len = sizeof name;
  if (ok) {
    int rc = fi_getname(&raw.ep->fid, name, &len);
    if (rc)
      die("fi_getname", rc);
  }
  if (peers->allgather(peers->ctx, name, sizeof name, all))
    return -1;
  static const char none[NAME_MAX_LEN];
  if (!ok || !memcmp(all, none, sizeof none) ||
      !memcmp(all + NAME_MAX_LEN, none, sizeof none)) {
    if (ok)
      fprintf(stderr, "ofi_raw: the other process has no endpoint\n");
    return -1;
  }
  fi_addr_t addrs[2];
  if (fi_av_insert(raw.av, all, 1, &addrs[0], 0, NULL) != 1 ||
      fi_av_insert(raw.av, all + NAME_MAX_LEN, 1, &addrs[1], 0, NULL) != 1)
    die("fi_av_insert", -FI_EINVAL);
  raw.peer = addrs[1 - rank];
  return 0;
}

size_t ofi_raw_max_msg(void) { return raw.max_msg; }

double ofi_raw_pingpong(size_t size, long iters)
{
  post_recv(raw.rbuf, size, RECV_SLOT(0));
  raw.peers.barrier(raw.peers.ctx);
  double t0 = bench_now();
  for (long i = 0; i < iters; i++) {
    int more = i + 1 < iters;
    if (raw.me == 0) {
      post_send(raw.sbuf, size, 0);
      reap(0, 0);
      if (more)
        post_recv(raw.rbuf, size, RECV_SLOT(0));
    } else {
      reap(raw.pending_send, 0);
      if (more)
        post_recv(raw.rbuf, size, RECV_SLOT(0));
      post_send(raw.sbuf, size, 0);
      reap(0, raw.pending_recv);
    }
  }
  return bench_now() - t0;
}

double ofi_raw_stream(size_t size, long windows)
{
  if (raw.me == 0)
    post_recv(raw.rbuf, 0, ACK_SLOT);
  else
    for (int i = 0; i < BENCH_WINDOW; i++)
      post_recv(raw.rbuf, size, RECV_SLOT(i));
  raw.peers.barrier(raw.peers.ctx);
  double t0 = bench_now();
  for (long w = 0; w < windows; w++) {
    int more = w + 1 < windows;
    if (raw.me == 0) {
      for (int i = 0; i < BENCH_WINDOW; i++)
        post_send(raw.sbuf, size, i);
      reap(0, 0);
      if (more)
        post_recv(raw.rbuf, 0, ACK_SLOT);
    } else {
      reap(raw.pending_send, 0);
      if (more)
        for (int i = 0; i < BENCH_WINDOW; i++)
          post_recv(raw.rbuf, size, RECV_SLOT(i));
      post_send(raw.sbuf, 0, ACK_SLOT);
      reap(0, raw.pending_recv);
    }
  }
  return bench_now() - t0;
}

void ofi_raw_close(void)
{
  if (raw.ep)
    fi_close(&raw.ep->fid);
  if (raw.av)
    fi_close(&raw.av->fid);
  if (raw.cq)
    fi_close(&raw.cq->fid);
  if (raw.dom)
    fi_close(&raw.dom->fid);
  if (raw.fab)
    fi_close(&raw.fab->fid);
  free(raw.sbuf);
  free(raw.rbuf);
  memset(&raw, 0, sizeof raw);
}
