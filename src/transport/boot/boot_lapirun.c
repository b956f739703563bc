/*
 * boot_lapirun.c - the bootstrap of a CG started by tools/lapirun.
 *
 * lapirun gives each CG its place in the environment (LAPIRUN_ADDR,
 * LAPIRUN_RANK, LAPIRUN_SIZE, LAPIRUN_TASKS_PER_CG, LAPIRUN_LOCAL_RANK,
 * LAPIRUN_LOCAL_SIZE, LAPIRUN_JOB_KEY; docs/LAPIRUN.md) and serves the
 * exchange at LAPIRUN_ADDR.  Joining is bounded by the timeout; so is
 * every wait for an answer, counted from the last message of the server:
 * while a round waits for a slow CG the server PINGs, so a CG that
 * computes long before a barrier does not fail its peers, while a lost
 * launcher or network fails them after one timeout of silence.  A CG
 * that dies is reported by the server at once (its connection closes).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/boot/boot_impl.h"

struct lapirun_boot {
  pthread_mutex_t mu;       /* one collective at a time on `fd` */
  int fd;                   /* member connection, -1 once left */
  int failed;               /* a collective failed: the job is broken */
  uint64_t round;
  int timeout_s;
  char addr[300];
  struct boot_counters cnt;
  int *gone_q;              /* ranks reported GONE, not yet handed out */
  int gone_n;
  unsigned char *gone_seen; /* by rank: reported already (once each) */
};

/* Under l->mu: a GONE notice from the exchange. */
static void gone_note(struct lapirun_boot *l, int size, const unsigned char *p,
                      size_t n)
{
  uint32_t r = n == 4 ? boot_get32(p) : (uint32_t)size;
  if (r >= (uint32_t)size || l->gone_seen[r])
    return;
  l->gone_seen[r] = 1;
  l->gone_q[l->gone_n++] = (int)r;
}

/* An integer setting of lapirun: 0, or -1 after a message. */
static int env_int(const char *name, int dflt, int lo, int hi, int *out)
{
  const char *s = getenv(name);
  if (s == NULL || *s == '\0') {
    if (dflt < lo) {
      lapi_boot_say("lapirun: %s is not set, but LAPIRUN_ADDR is: start "
                    "the program with lapirun, or unset LAPIRUN_ADDR for a "
                    "job of one CG", name);
      return -1;
    }
    *out = dflt;
    return 0;
  }
  char *end;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < lo || v > hi) {
    lapi_boot_say("lapirun: %s=\"%s\" is not an integer in %d..%d", name, s,
                  lo, hi);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int lr_gather(struct lapi_boot *b, const void *mine, size_t len,
                     void *all)
{
  struct lapirun_boot *l = b->impl;
  if (len > BOOT_MAX_GATHER) {
    lapi_boot_say("lapirun: rank %d: an all-gather of %zu bytes per CG is "
                  "above the limit of %u", b->rank, len, BOOT_MAX_GATHER);
    return -1;
  }
  int rc = -1;
  pthread_mutex_lock(&l->mu);
  if (l->failed || l->fd < 0) {
    lapi_boot_say("lapirun: rank %d: the job's exchange %s", b->rank,
                  l->fd < 0 ? "was left already" : "failed earlier");
    goto out;
  }
  unsigned char head[12];
  boot_put64(head, l->round);
  boot_put32(head + 8, (uint32_t)len);
  int64_t deadline = boot_now_ms() + (int64_t)l->timeout_s * 1000;
  unsigned char *frame = malloc(sizeof head + len);
  if (frame == NULL) {
    lapi_boot_say("lapirun: rank %d: out of memory", b->rank);
    goto out;
  }
  memcpy(frame, head, sizeof head);
  if (len)
    memcpy(frame + sizeof head, mine, len);
  int sent = boot_send_frame(l->fd, BOOT_GATHER, frame, sizeof head + len,
                             deadline);
  free(frame);
  if (sent < 0) {
    lapi_boot_say("lapirun: rank %d: cannot send to the exchange at %s "
                  "(%s): lapirun has ended or the network is gone", b->rank,
                  l->addr, strerror(errno));
    l->failed = 1;
    goto out;
  }
  for (;;) {
    int type = 0;
    unsigned char *p = NULL;
    size_t n = 0;
    deadline = boot_now_ms() + (int64_t)l->timeout_s * 1000;
    if (boot_recv_frame(l->fd, &type, &p, &n, deadline) < 0) {
      if (errno == ETIMEDOUT)
        lapi_boot_say("lapirun: rank %d: the exchange at %s was silent for "
                      "%d s in collective round %llu: lapirun or the network "
                      "is gone (LAPI_TIMEOUT)", b->rank, l->addr,
                      l->timeout_s, (unsigned long long)l->round);
      else
        lapi_boot_say("lapirun: rank %d: lost the exchange at %s in "
                      "collective round %llu (%s): lapirun has ended",
                      b->rank, l->addr, (unsigned long long)l->round,
                      errno == ECONNRESET ? "connection closed"
                                          : strerror(errno));
      l->failed = 1;
      goto out;
    }
    if (type == BOOT_PING || type == BOOT_GONE) {
      if (type == BOOT_GONE)
        gone_note(l, b->size, p, n);
      free(p);
      continue;
    }
    size_t want = 12 + len * (size_t)b->size;
    if (type == BOOT_GATHERED && n == want && boot_get64(p) == l->round &&
        boot_get32(p + 8) == len) {
      if (len)
        memcpy(all, p + 12, len * (size_t)b->size);
      l->round++;
      rc = 0;
    } else if (type == BOOT_ERROR) {
      lapi_boot_say("lapirun: rank %d: %.*s", b->rank, (int)n,
                    (const char *)p);
      l->failed = 1;
    } else {
      lapi_boot_say("lapirun: rank %d: the exchange answered round %llu "
                    "with message %d of %zu bytes: lapirun of another "
                    "version?", b->rank, (unsigned long long)l->round, type,
                    n);
      l->failed = 1;
    }
    free(p);
    break;
  }
out:
  pthread_mutex_unlock(&l->mu);
  return rc;
}

static int lr_barrier(struct lapi_boot *b)
{
  return lr_gather(b, NULL, 0, NULL);
}

static long lr_fetch_add(struct lapi_boot *b, int id, long add)
{
  struct lapirun_boot *l = b->impl;
  return boot_counters_fetch_add(&l->cnt, id, add);
}

static void lr_set_active(struct lapi_boot *b, int on)
{
  struct lapirun_boot *l = b->impl;
  pthread_mutex_lock(&l->mu);
  /* Even after a failed collective (a peer left): the exchange still
   * reads us, and must not take our clean LAPI_Term for a leave. */
  if (l->fd >= 0) {
    unsigned char v = on ? 1 : 0;
    int64_t deadline = boot_now_ms() + (int64_t)l->timeout_s * 1000;
    boot_send_frame(l->fd, BOOT_ACTIVE, &v, 1, deadline);
  }
  pthread_mutex_unlock(&l->mu);
}

/* Outside a collective only GONE frames arrive: take the whole ones
 * without blocking; a partial one stays in the socket for the next look
 * (or the next collective, which reads it whole). */
static int lr_gone(struct lapi_boot *b, int *ranks, int max)
{
  struct lapirun_boot *l = b->impl;
  if (pthread_mutex_trylock(&l->mu) != 0)
    return 0; /* a collective reads the socket: it notes them */
  while (l->fd >= 0) {
    unsigned char f[9];
    ssize_t got = recv(l->fd, f, sizeof f, MSG_PEEK | MSG_DONTWAIT);
    if (got < (ssize_t)sizeof f || boot_get32(f) != 5 || f[4] != BOOT_GONE)
      break; /* nothing whole, or not a notice: the collective's business */
    if (recv(l->fd, f, sizeof f, MSG_DONTWAIT) != (ssize_t)sizeof f)
      break;
    gone_note(l, b->size, f + 5, 4);
  }
  int n = 0;
  while (n < max && l->gone_n > 0)
    ranks[n++] = l->gone_q[--l->gone_n];
  pthread_mutex_unlock(&l->mu);
  return n;
}

static void lr_fini(struct lapi_boot *b)
{
  struct lapirun_boot *l = b->impl;
  /* At exit another thread may still wait in a collective: then leave
   * without a goodbye (the exchange sees the connection close). */
  if (pthread_mutex_trylock(&l->mu) != 0)
    return;
  if (l->fd >= 0) {
    /* A short wait: at exit nobody should be held up by a dead server. */
    int64_t deadline = boot_now_ms() + (l->timeout_s < 2 ? l->timeout_s : 2)
                                           * 1000;
    boot_send_frame(l->fd, BOOT_BYE, NULL, 0, deadline);
    close(l->fd);
    l->fd = -1;
  }
  pthread_mutex_unlock(&l->mu);
  boot_counters_close(&l->cnt);
}

int lapi_boot_lapirun_init(struct lapi_boot *b, int timeout_s)
{
  const char *addr = getenv("LAPIRUN_ADDR");
  int rank, size, tpc, lrank, lsize;
  if (env_int("LAPIRUN_SIZE", -1, 1, BOOT_MAX_SIZE, &size) < 0 ||
      env_int("LAPIRUN_RANK", -1, 0, size - 1, &rank) < 0 ||
      env_int("LAPIRUN_TASKS_PER_CG", 1, 1, 64, &tpc) < 0 ||
      env_int("LAPIRUN_LOCAL_SIZE", size, 1, size, &lsize) < 0 ||
      env_int("LAPIRUN_LOCAL_RANK", rank < lsize ? rank : 0, 0, lsize - 1,
              &lrank) < 0)
    return -1;
  const char *key = getenv("LAPIRUN_JOB_KEY");
  if (key == NULL || *key == '\0' || strlen(key) > BOOT_KEY_MAX ||
      strchr(key, '/')) {
    lapi_boot_say("lapirun: LAPIRUN_JOB_KEY must be set to the job's name "
                  "(1..%d characters, no '/'): start the program with "
                  "lapirun", BOOT_KEY_MAX);
    return -1;
  }
  struct lapirun_boot *l = calloc(1, sizeof *l);
  if (l)
    l->gone_q = malloc((size_t)size * sizeof *l->gone_q);
  if (l)
    l->gone_seen = calloc((size_t)size, 1);
  if (l == NULL || l->gone_q == NULL || l->gone_seen == NULL) {
    lapi_boot_say("lapirun: out of memory");
    if (l) {
      free(l->gone_q);
      free(l->gone_seen);
    }
    free(l);
    return -1;
  }
  l->fd = boot_client_join("lapirun", addr, BOOT_MEMBER, rank, size, key,
                           timeout_s);
  if (l->fd < 0) {
    free(l->gone_q);
    free(l->gone_seen);
    free(l);
    return -1;
  }
  pthread_mutex_init(&l->mu, NULL);
  l->timeout_s = timeout_s;
  snprintf(l->addr, sizeof l->addr, "%s", addr);
  boot_counters_setup(&l->cnt, "lapirun", addr, key, timeout_s);

  b->kind = "lapirun";
  b->rank = rank;
  b->size = size;
  b->tasks_per_cg = tpc;
  b->local_rank = lrank;
  b->local_size = lsize;
  snprintf(b->job_key, sizeof b->job_key, "%s", key);
  b->allgather = lr_gather;
  b->barrier = lr_barrier;
  b->fetch_add = lr_fetch_add;
  b->set_active = lr_set_active;
  b->gone = lr_gone;
  b->fini = lr_fini;
  b->impl = l;
  return 0;
}
