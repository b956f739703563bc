/*
 * boot_pmix.c - the bootstrap of a CG started by a PMIx launcher (Open MPI
 * mpirun/prterun, Slurm srun --mpi=pmix).  Compiled only with libpmix.
 *
 * Rank and size come from PMIx (PMIX_JOB_SIZE, PMIX_LOCAL_RANK,
 * PMIX_LOCAL_SIZE).  The collectives do not use PMIx fences: rank 0 runs
 * the exchange server of lapirun (boot_server.c) in a thread and
 * publishes its address under "lapi.boot.counters"; every CG reads it
 * (one collecting fence at start-up, then PMIx_Get, both bounded by the
 * timeout) and joins as a member, as under lapirun: all-gathers,
 * barriers, counters, ACTIVE and GONE notices all go through it.  Why not
 * PMIx_Fence: under Slurm 22.05's mpi/pmix plugin with its default (tree)
 * fence, a CG on one node left a fence before CGs on another node had
 * entered it (tests/boot/slurm_cases.sh, boot_check fence: in every run of
 * 200 rounds on 2 nodes), while ring fences were right; a barrier of our
 * own does not depend on the launcher's collective.  The server PINGs
 * while a round waits, so a slow CG is no failure, and a CG that dies
 * closes its connection.
 */
#ifdef OPENLAPI_HAVE_PMIX
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "transport/boot/boot_impl.h"

#define PMIX_COUNTERS_KEY "lapi.boot.counters"

struct pmix_boot {
  pmix_proc_t me;
  int timeout_s;
  /* Rank 0: the exchange server and the thread that serves it. */
  struct boot_srv *srv;
  pthread_t srv_thread;
  int srv_wake[2];
  struct boot_member *member; /* everyone: the member connection */
  struct boot_counters cnt;   /* and the counter connection */
  int active;               /* atomic: the transport is up (set_active) */
};

static int pmix_fail(const struct lapi_boot *b, const char *what,
                     pmix_status_t rc)
{
  lapi_boot_say("pmix: rank %d: %s failed: %s", b->rank, what,
                PMIx_Error_string(rc));
  return -1;
}

/* A value of the job (wildcard rank) or of one process, as uint32. */
static int get_u32(const pmix_proc_t *who, const char *key, uint32_t *out)
{
  pmix_value_t *v = NULL;
  if (PMIx_Get(who, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL)
    return -1;
  int rc = 0;
  switch (v->type) {
  case PMIX_UINT32: *out = v->data.uint32; break;
  case PMIX_UINT16: *out = v->data.uint16; break;
  case PMIX_INT: *out = (uint32_t)v->data.integer; break;
  default: rc = -1;
  }
  PMIX_VALUE_RELEASE(v);
  return rc;
}

static int pmix_gather(struct lapi_boot *b, const void *mine, size_t len,
                       void *all)
{
  struct pmix_boot *p = b->impl;
  return boot_member_gather(p->member, mine, len, all);
}

static int pmix_barrier(struct lapi_boot *b)
{
  return pmix_gather(b, NULL, 0, NULL);
}

/* Rank 0's thread: serve the exchange.  Once fini writes the wake
 * pipe, serve on until every other CG has left it (goodbye or closed
 * connection), up to the timeout: a CG that finishes after rank 0 still
 * gets its last answers and counters. */
static void *srv_main(void *arg)
{
  struct pmix_boot *p = arg;
  struct pollfd *pfd = NULL;
  int cap = 0;
  int64_t leave_by = 0; /* 0: not leaving */
  for (;;) {
    int need = 1 + boot_srv_max_fds(p->srv);
    if (need > cap) {
      struct pollfd *q = realloc(pfd, (size_t)need * sizeof *q);
      if (q == NULL)
        break;
      pfd = q;
      cap = need;
    }
    if (leave_by && (boot_srv_connections(p->srv) == 0 ||
                     boot_now_ms() >= leave_by))
      break;
    pfd[0] = (struct pollfd){.fd = leave_by ? -1 : p->srv_wake[0],
                             .events = POLLIN};
    int n = 1 + boot_srv_pollfds(p->srv, pfd + 1, cap - 1);
    int ms = boot_srv_timeout_ms(p->srv);
    if (leave_by && (ms < 0 || ms > 100))
      ms = 100; /* look at the deadline */
    int rc = poll(pfd, (nfds_t)n, ms);
    if (rc < 0 && errno != EINTR)
      break;
    if (rc > 0 && pfd[0].revents)
      leave_by = boot_now_ms() + (int64_t)p->timeout_s * 1000;
    boot_srv_process(p->srv, pfd + 1, rc > 0 ? n - 1 : 0);
  }
  free(pfd);
  return NULL;
}

/* An IPv4 address other hosts can reach: LAPI_BOOT_ADDR, else the first
 * non-loopback interface that is up. */
static int pick_ip(char *ip, size_t len)
{
  const char *s = getenv("LAPI_BOOT_ADDR");
  if (s && *s) {
    snprintf(ip, len, "%s", s);
    return 0;
  }
  struct ifaddrs *ifs, *i;
  if (getifaddrs(&ifs) < 0)
    return -1;
  int rc = -1;
  for (i = ifs; i && rc; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
        !(i->ifa_flags & IFF_LOOPBACK) && (i->ifa_flags & IFF_UP)) {
      struct sockaddr_in *sin = (struct sockaddr_in *)i->ifa_addr;
      rc = inet_ntop(AF_INET, &sin->sin_addr, ip, (socklen_t)len) ? 0 : -1;
    }
  freeifaddrs(ifs);
  return rc;
}

/* Rank 0: start the exchange server and publish where it listens. */
static int exchange_serve(struct lapi_boot *b, struct pmix_boot *p,
                          char *addr, size_t addrlen)
{
  char ip[64] = "127.0.0.1";
  if (b->local_size < b->size && pick_ip(ip, sizeof ip) < 0) {
    lapi_boot_say("pmix: rank 0: no network address for the job's exchange: "
                  "set LAPI_BOOT_ADDR to an IPv4 address of this host");
    return -1;
  }
  p->srv = boot_srv_open(ip, b->size, b->job_key, p->timeout_s, "lapi boot",
                         addr, addrlen);
  if (p->srv == NULL)
    return -1;
  if (pipe2(p->srv_wake, O_CLOEXEC) < 0 ||
      pthread_create(&p->srv_thread, NULL, srv_main, p) != 0) {
    lapi_boot_say("pmix: rank 0: cannot start the exchange's thread");
    boot_srv_close(p->srv);
    p->srv = NULL;
    return -1;
  }
  pmix_value_t val;
  PMIX_VALUE_CONSTRUCT(&val);
  val.type = PMIX_STRING;
  val.data.string = addr;
  pmix_status_t st = PMIx_Put(PMIX_GLOBAL, PMIX_COUNTERS_KEY, &val);
  if (st == PMIX_SUCCESS)
    st = PMIx_Commit();
  return st == PMIX_SUCCESS ? 0 : pmix_fail(b, "publishing the exchange",
                                            st);
}

/* Rank 0: end the exchange's thread (it serves until the others have
 * left, up to the timeout) and close the server. */
static void exchange_stop(struct pmix_boot *p)
{
  if (p->srv == NULL)
    return;
  char c = 1;
  if (write(p->srv_wake[1], &c, 1) == 1)
    pthread_join(p->srv_thread, NULL);
  boot_srv_close(p->srv);
  close(p->srv_wake[0]);
  close(p->srv_wake[1]);
  p->srv = NULL;
}

static long pmix_fetch_add(struct lapi_boot *b, int id, long add)
{
  struct pmix_boot *p = b->impl;
  return boot_counters_fetch_add(&p->cnt, id, add);
}

/* Everyone: rank 0's exchange address, published under
 * PMIX_COUNTERS_KEY.  One fence that collects data first (bounded by the
 * timeout), the launchers' own start-up exchange, so that the address is
 * at hand where the fence was right.  Where it was not (Slurm's tree
 * fence, above) the Get asks rank 0's server, which holds it until the
 * key comes (direct modex); Open MPI's answers NOT-FOUND at once, so a
 * Get that finds nothing is asked again, with the cache refreshed, after
 * a short sleep (1 ms doubling to 100 ms), up to the timeout.  (Asking
 * Open MPI with the cache refreshed before any fence made its client's
 * store report errors and lose the answer in 1 of 12 jobs across two
 * hosts.)  0, or -1 after a message. */
static int exchange_address(struct lapi_boot *b, struct pmix_boot *p,
                            char *addr, size_t addrlen)
{
  int64_t end = boot_now_ms() + (int64_t)p->timeout_s * 1000;
  bool yes = true;
  int tmo = p->timeout_s;
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  PMIx_Info_load(&info[1], PMIX_TIMEOUT, &tmo, PMIX_INT);
  pmix_status_t st = PMIx_Fence(NULL, 0, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (st != PMIX_SUCCESS) {
    lapi_boot_say("pmix: rank %d: the start-up PMIx_Fence failed: %s (not "
                  "every process of the job reached it within %d s?)",
                  b->rank, PMIx_Error_string(st), p->timeout_s);
    return -1;
  }
  pmix_proc_t zero;
  PMIX_LOAD_PROCID(&zero, p->me.nspace, 0);
  long nap_us = 1000;
  for (int ask = 0;; ask++) {
    int64_t left_ms = end - boot_now_ms();
    tmo = left_ms > 1000 ? (int)(left_ms / 1000) : 1;
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIx_Info_load(&info[0], PMIX_TIMEOUT, &tmo, PMIX_INT);
    PMIx_Info_load(&info[1], PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    pmix_value_t *v = NULL;
    st = PMIx_Get(&zero, PMIX_COUNTERS_KEY, info, ask ? 2 : 1, &v);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (st == PMIX_SUCCESS && v && v->type == PMIX_STRING) {
      int fits = snprintf(addr, addrlen, "%s", v->data.string) < (int)addrlen;
      PMIX_VALUE_RELEASE(v);
      if (!fits)
        lapi_boot_say("pmix: rank %d: rank 0's exchange address is longer "
                      "than %zu bytes", b->rank, addrlen - 1);
      return fits ? 0 : -1;
    }
    if (v)
      PMIX_VALUE_RELEASE(v);
    if (st != PMIX_ERR_NOT_FOUND || boot_now_ms() >= end)
      break;
    usleep((useconds_t)nap_us);
    nap_us = nap_us < 50000 ? nap_us * 2 : 100000;
  }
  lapi_boot_say("pmix: rank %d: rank 0 published no exchange address "
                "within %d s (%s)", b->rank, p->timeout_s,
                PMIx_Error_string(st));
  return -1;
}

/* A CG that leaves without LAPI_Term is reported to the others by the
 * exchange (GONE, as under lapirun), and it also skips PMIx_Finalize:
 * the launcher treats a process that exits without it as one that
 * exited improperly and ends the job (Open MPI's mpirun, Slurm). */
static void pmix_set_active(struct lapi_boot *b, int on)
{
  struct pmix_boot *p = b->impl;
  __atomic_store_n(&p->active, on, __ATOMIC_SEQ_CST);
  boot_member_set_active(p->member, on);
}

static int pmix_leave_barrier(struct lapi_boot *b)
{
  struct pmix_boot *p = b->impl;
  return boot_member_leave_barrier(p->member);
}

static int pmix_gone(struct lapi_boot *b, int *ranks, int max)
{
  struct pmix_boot *p = b->impl;
  return boot_member_gone(p->member, ranks, max);
}

static void pmix_fini(struct lapi_boot *b)
{
  struct pmix_boot *p = b->impl;
  if (__atomic_load_n(&p->active, __ATOMIC_SEQ_CST)) {
    lapi_boot_say("pmix: rank %d: exiting without LAPI_Term: PMIx is not "
                  "finalized, so that the launcher ends the job", b->rank);
    return;
  }
  boot_member_leave(p->member);
  boot_counters_close(&p->cnt);
  exchange_stop(p);
  PMIx_Finalize(NULL, 0);
}

int lapi_boot_pmix_init(struct lapi_boot *b, int timeout_s)
{
  struct pmix_boot *p = calloc(1, sizeof *p);
  if (p == NULL) {
    lapi_boot_say("pmix: out of memory");
    return -1;
  }
  pmix_status_t st = PMIx_Init(&p->me, NULL, 0);
  if (st != PMIX_SUCCESS) {
    lapi_boot_say("pmix: PMIx_Init failed: %s (PMIX_RANK is set, but the "
                  "launcher's PMIx server cannot be reached)",
                  PMIx_Error_string(st));
    free(p);
    return -1;
  }
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, p->me.nspace, PMIX_RANK_WILDCARD);
  uint32_t size = 0, lsize = 0, lrank = 0;
  if (get_u32(&job, PMIX_JOB_SIZE, &size) < 0 || size == 0) {
    lapi_boot_say("pmix: rank %u: the launcher gives no PMIX_JOB_SIZE",
                  p->me.rank);
    goto fail;
  }
  if (get_u32(&job, PMIX_LOCAL_SIZE, &lsize) < 0 || lsize == 0 ||
      get_u32(&p->me, PMIX_LOCAL_RANK, &lrank) < 0 || lrank >= lsize) {
    lsize = 1; /* unknown: count every CG as alone on its host */
    lrank = 0;
  }
  p->timeout_s = timeout_s;
  b->kind = "pmix";
  b->rank = (int)p->me.rank;
  b->size = (int)size;
  b->tasks_per_cg = 1;
  const char *tpc = getenv("LAPIRUN_TASKS_PER_CG");
  if (tpc && atoi(tpc) >= 1 && atoi(tpc) <= 64)
    b->tasks_per_cg = atoi(tpc);
  b->local_rank = (int)lrank;
  b->local_size = (int)lsize;
  /* The namespace names the job; '/' is not allowed in a key.  One too
   * long for the key (PMIx allows 255 bytes) is named by its hash, so
   * that two namespaces alike in their first 59 bytes still differ. */
  size_t ns_len = strnlen(p->me.nspace, sizeof p->me.nspace);
  if (ns_len + sizeof "pmix-" <= sizeof b->job_key) {
    memcpy(b->job_key, "pmix-", 5);
    memcpy(b->job_key + 5, p->me.nspace, ns_len + 1);
  } else {
    uint64_t hash = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < ns_len; i++)
      hash = (hash ^ (unsigned char)p->me.nspace[i]) * 1099511628211ull;
    snprintf(b->job_key, sizeof b->job_key, "pmix-h%016llx",
             (unsigned long long)hash);
  }
  for (char *c = b->job_key; *c; c++)
    if (*c == '/')
      *c = '_';
  b->allgather = pmix_gather;
  b->barrier = pmix_barrier;
  b->fetch_add = pmix_fetch_add;
  b->fini = pmix_fini;
  b->set_active = pmix_set_active;
  b->leave_barrier = pmix_leave_barrier;
  b->gone = pmix_gone;
  b->impl = p;
  char addr[300];
  if (b->rank == 0 && exchange_serve(b, p, addr, sizeof addr) < 0)
    goto fail;
  if (exchange_address(b, p, addr, sizeof addr) < 0)
    goto fail_srv;
  p->member = boot_member_join("pmix", "rank 0", addr, b->rank, b->size,
                               b->job_key, timeout_s);
  if (p->member == NULL)
    goto fail_srv;
  boot_counters_setup(&p->cnt, "pmix", addr, b->job_key, timeout_s);
  return 0;
fail_srv:
  exchange_stop(p);
fail:
  PMIx_Finalize(NULL, 0);
  free(p);
  return -1;
}
#endif /* OPENLAPI_HAVE_PMIX */
