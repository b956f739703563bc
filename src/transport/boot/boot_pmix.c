/*
 * boot_pmix.c - the bootstrap of a CG started by a PMIx launcher (Open MPI
 * mpirun/prterun, Slurm srun --mpi=pmix).  Compiled only with libpmix.
 *
 * Rank and size come from PMIx (PMIX_JOB_SIZE, PMIX_LOCAL_RANK,
 * PMIX_LOCAL_SIZE); an all-gather is Put + Commit + Fence(collect) + a
 * Get per rank under a key of its own round; a barrier is a Fence.  PMIx
 * has no job-wide counter, so rank 0 runs the exchange server of lapirun
 * (boot_server.c) in a thread, publishes its address under
 * "lapi.boot.counters", and the others reach it as lapirun's counter
 * clients do.  The fences carry no timeout: a PMIx launcher ends the
 * job when a process dies, and a slow CG is no failure.
 */
#ifdef OPENLAPI_HAVE_PMIX
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

#include "transport/boot/boot_impl.h"

#define PMIX_COUNTERS_KEY "lapi.boot.counters"

struct pmix_boot {
  pthread_mutex_t mu;       /* one collective at a time */
  pmix_proc_t me;
  uint64_t round;
  int timeout_s;
  int failed;
  /* Rank 0: the counter server and the thread that serves it. */
  struct boot_srv *srv;
  pthread_t srv_thread;
  int srv_wake[2];
  struct boot_counters cnt; /* everyone: the client side */
  int cnt_ready;
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
  int rc = -1;
  pthread_mutex_lock(&p->mu);
  if (p->failed) {
    lapi_boot_say("pmix: rank %d: an earlier collective failed", b->rank);
    goto out;
  }
  char key[64];
  snprintf(key, sizeof key, "lapi.boot.ag.%llu",
           (unsigned long long)p->round++);
  pmix_byte_object_t bo = {.bytes = (char *)(uintptr_t)mine, .size = len};
  pmix_value_t val;
  PMIX_VALUE_CONSTRUCT(&val);
  val.type = PMIX_BYTE_OBJECT;
  val.data.bo = bo; /* PMIx_Put copies it */
  pmix_status_t st = PMIx_Put(PMIX_GLOBAL, key, &val);
  if (st != PMIX_SUCCESS) {
    pmix_fail(b, "PMIx_Put", st);
    goto broken;
  }
  if ((st = PMIx_Commit()) != PMIX_SUCCESS) {
    pmix_fail(b, "PMIx_Commit", st);
    goto broken;
  }
  pmix_info_t info;
  bool collect = true;
  PMIX_INFO_CONSTRUCT(&info);
  PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  st = PMIx_Fence(NULL, 0, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  if (st != PMIX_SUCCESS) {
    pmix_fail(b, "PMIx_Fence", st);
    goto broken;
  }
  for (int r = 0; r < b->size; r++) {
    pmix_proc_t who;
    PMIX_LOAD_PROCID(&who, p->me.nspace, (pmix_rank_t)r);
    pmix_value_t *v = NULL;
    st = PMIx_Get(&who, key, NULL, 0, &v);
    if (st != PMIX_SUCCESS || v == NULL || v->type != PMIX_BYTE_OBJECT ||
        v->data.bo.size != len) {
      if (st == PMIX_SUCCESS)
        lapi_boot_say("pmix: rank %d: all-gather: rank %d passed %zu "
                      "bytes, this CG %zu: the CGs' collective calls differ",
                      b->rank, r, v && v->type == PMIX_BYTE_OBJECT
                      ? v->data.bo.size : (size_t)0, len);
      else
        pmix_fail(b, "PMIx_Get of an all-gather", st);
      if (v)
        PMIX_VALUE_RELEASE(v);
      goto broken;
    }
    if (len)
      memcpy((char *)all + (size_t)r * len, v->data.bo.bytes, len);
    PMIX_VALUE_RELEASE(v);
  }
  rc = 0;
  goto out;
broken:
  p->failed = 1;
out:
  pthread_mutex_unlock(&p->mu);
  return rc;
}

static int pmix_barrier(struct lapi_boot *b)
{
  struct pmix_boot *p = b->impl;
  pthread_mutex_lock(&p->mu);
  pmix_status_t st = p->failed ? PMIX_ERROR : PMIx_Fence(NULL, 0, NULL, 0);
  if (st != PMIX_SUCCESS && !p->failed)
    pmix_fail(b, "PMIx_Fence", st);
  if (st != PMIX_SUCCESS)
    p->failed = 1;
  pthread_mutex_unlock(&p->mu);
  return st == PMIX_SUCCESS ? 0 : -1;
}

/* Rank 0's thread: serve the counters until fini writes the wake pipe. */
static void *srv_main(void *arg)
{
  struct pmix_boot *p = arg;
  struct pollfd *pfd = NULL;
  int cap = 0;
  for (;;) {
    int need = 1 + boot_srv_max_fds(p->srv);
    if (need > cap) {
      struct pollfd *q = realloc(pfd, (size_t)need * sizeof *q);
      if (q == NULL)
        break;
      pfd = q;
      cap = need;
    }
    pfd[0] = (struct pollfd){.fd = p->srv_wake[0], .events = POLLIN};
    int n = 1 + boot_srv_pollfds(p->srv, pfd + 1, cap - 1);
    int rc = poll(pfd, (nfds_t)n, boot_srv_timeout_ms(p->srv));
    if (rc < 0 && errno != EINTR)
      break;
    if (rc > 0 && pfd[0].revents)
      break;
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

/* Rank 0: start the counter server and publish where it listens. */
static int counters_serve(struct lapi_boot *b, struct pmix_boot *p,
                          char *addr, size_t addrlen)
{
  char ip[64] = "127.0.0.1";
  if (b->local_size < b->size && pick_ip(ip, sizeof ip) < 0) {
    lapi_boot_say("pmix: rank 0: no network address for the counter "
                  "service: set LAPI_BOOT_ADDR to an IPv4 address of this "
                  "host");
    return -1;
  }
  p->srv = boot_srv_open(ip, b->size, b->job_key, p->timeout_s, "lapi boot",
                         addr, addrlen);
  if (p->srv == NULL)
    return -1;
  if (pipe2(p->srv_wake, O_CLOEXEC) < 0 ||
      pthread_create(&p->srv_thread, NULL, srv_main, p) != 0) {
    lapi_boot_say("pmix: rank 0: cannot start the counter service thread");
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
  return st == PMIX_SUCCESS ? 0 : pmix_fail(b, "publishing the counters",
                                            st);
}

static long pmix_fetch_add(struct lapi_boot *b, int id, long add)
{
  struct pmix_boot *p = b->impl;
  pthread_mutex_lock(&p->mu);
  if (!p->cnt_ready) {
    /* Rank 0's address: PMIx waits for its Put (direct modex), up to
     * the timeout. */
    pmix_proc_t zero;
    PMIX_LOAD_PROCID(&zero, p->me.nspace, 0);
    pmix_info_t info;
    int tmo = p->timeout_s;
    PMIX_INFO_CONSTRUCT(&info);
    PMIx_Info_load(&info, PMIX_TIMEOUT, &tmo, PMIX_INT);
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Get(&zero, PMIX_COUNTERS_KEY, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (st != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING) {
      lapi_boot_say("pmix: rank %d: fetch_add: rank 0's counter service "
                    "address is not published (%s)", b->rank,
                    PMIx_Error_string(st));
      if (v)
        PMIX_VALUE_RELEASE(v);
      pthread_mutex_unlock(&p->mu);
      return -1;
    }
    boot_counters_setup(&p->cnt, "pmix", v->data.string, b->job_key,
                        p->timeout_s);
    PMIX_VALUE_RELEASE(v);
    p->cnt_ready = 1;
  }
  pthread_mutex_unlock(&p->mu);
  return boot_counters_fetch_add(&p->cnt, id, add);
}

/* PMIx has no cheap way to tell the peers (an event the launcher relays
 * would need a handler registered in every process); the launcher
 * itself treats a process that exits without PMIx_Finalize as one that
 * exited improperly and ends the job (Open MPI's mpirun, Slurm).  So a
 * CG that leaves without LAPI_Term skips PMIx_Finalize: its peers,
 * which may wait for it, are ended rather than left waiting. */
static void pmix_set_active(struct lapi_boot *b, int on)
{
  struct pmix_boot *p = b->impl;
  __atomic_store_n(&p->active, on, __ATOMIC_SEQ_CST);
}

static void pmix_fini(struct lapi_boot *b)
{
  struct pmix_boot *p = b->impl;
  if (__atomic_load_n(&p->active, __ATOMIC_SEQ_CST)) {
    lapi_boot_say("pmix: rank %d: exiting without LAPI_Term: PMIx is not "
                  "finalized, so that the launcher ends the job", b->rank);
    return;
  }
  if (p->cnt_ready)
    boot_counters_close(&p->cnt);
  if (p->srv) {
    char c = 1;
    if (write(p->srv_wake[1], &c, 1) == 1)
      pthread_join(p->srv_thread, NULL);
    boot_srv_close(p->srv);
    close(p->srv_wake[0]);
    close(p->srv_wake[1]);
    p->srv = NULL;
  }
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
  pthread_mutex_init(&p->mu, NULL);
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
  /* The namespace names the job; '/' is not allowed in a key. */
  snprintf(b->job_key, sizeof b->job_key, "pmix-%s", p->me.nspace);
  for (char *c = b->job_key; *c; c++)
    if (*c == '/')
      *c = '_';
  b->allgather = pmix_gather;
  b->barrier = pmix_barrier;
  b->fetch_add = pmix_fetch_add;
  b->fini = pmix_fini;
  b->set_active = pmix_set_active;
  b->impl = p;
  char addr[300];
  if (b->rank == 0 && counters_serve(b, p, addr, sizeof addr) < 0)
    goto fail;
  return 0;
fail:
  PMIx_Finalize(NULL, 0);
  free(p);
  return -1;
}
#endif /* OPENLAPI_HAVE_PMIX */
