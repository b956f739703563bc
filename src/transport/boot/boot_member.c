/*
 * boot_member.c - a CG's member connection to the job's exchange server
 * (boot_server.c): all-gathers and barriers as rounds of the server,
 * the ACTIVE flag, GONE notices and the goodbye.
 *
 * The server is lapirun's, or under a PMIx launcher a thread of rank 0:
 * `owner` names it in messages.  Every wait for an answer is bounded by
 * the timeout, counted from the server's last message: while a round
 * waits for a slow CG the server PINGs, so a CG that computes long
 * before a barrier does not fail its peers, while a lost server or
 * network fails them after one timeout of silence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/boot/boot_impl.h"

struct boot_member {
  pthread_mutex_t mu;       /* one collective at a time on `fd` */
  int fd;                   /* -1 once left */
  int failed;               /* a collective failed: the job is broken */
  uint64_t round;
  int rank, size;
  int timeout_s;
  char addr[300];
  const char *src;          /* message prefix: "lapirun", "pmix" */
  const char *owner;        /* who serves: "lapirun", "rank 0" */
  int *gone_q;              /* ranks reported GONE, not yet handed out */
  int gone_n;
  unsigned char *gone_seen; /* by rank: reported already (once each) */
};

static void member_free(struct boot_member *m)
{
  free(m->gone_q);
  free(m->gone_seen);
  free(m);
}

struct boot_member *boot_member_join(const char *src, const char *owner,
                                     const char *addr, int rank, int size,
                                     const char *key, int timeout_s)
{
  struct boot_member *m = calloc(1, sizeof *m);
  if (m)
    m->gone_q = malloc((size_t)size * sizeof *m->gone_q);
  if (m)
    m->gone_seen = calloc((size_t)size, 1);
  if (m == NULL || m->gone_q == NULL || m->gone_seen == NULL) {
    lapi_boot_say("%s: out of memory", src);
    if (m)
      member_free(m);
    return NULL;
  }
  m->fd = boot_client_join(src, addr, BOOT_MEMBER, rank, size, key,
                           timeout_s);
  if (m->fd < 0) {
    member_free(m);
    return NULL;
  }
  pthread_mutex_init(&m->mu, NULL);
  m->rank = rank;
  m->size = size;
  m->timeout_s = timeout_s;
  m->src = src;
  m->owner = owner;
  snprintf(m->addr, sizeof m->addr, "%s", addr);
  return m;
}

/* Under m->mu: a GONE notice from the exchange. */
static void gone_note(struct boot_member *m, const unsigned char *p, size_t n)
{
  uint32_t r = n == 4 ? boot_get32(p) : (uint32_t)m->size;
  if (r >= (uint32_t)m->size || m->gone_seen[r])
    return;
  m->gone_seen[r] = 1;
  m->gone_q[m->gone_n++] = (int)r;
}

/* Under m->mu: one frame to the exchange; 0, or -1 after a message. */
static int send_to_exchange(struct boot_member *m, int type, const void *p,
                            size_t n)
{
  int64_t deadline = boot_now_ms() + (int64_t)m->timeout_s * 1000;
  if (boot_send_frame(m->fd, type, p, n, deadline) == 0)
    return 0;
  lapi_boot_say("%s: rank %d: cannot send to the exchange at %s (%s): %s "
                "has ended or the network is gone", m->src, m->rank, m->addr,
                strerror(errno), m->owner);
  return -1;
}

/* An answer that is not the one awaited in `what`: the exchange's error
 * text, or what it was. */
static void say_unexpected(const struct boot_member *m, const char *what,
                           int type, const unsigned char *p, size_t n)
{
  if (type == BOOT_ERROR)
    lapi_boot_say("%s: rank %d: %.*s", m->src, m->rank, (int)n,
                  (const char *)p);
  else
    lapi_boot_say("%s: rank %d: the exchange answered %s with message %d "
                  "of %zu bytes: an exchange of another openlapi version?",
                  m->src, m->rank, what, type, n);
}

/* Under m->mu: the next answer of the exchange, PINGs and GONE notices
 * taken on the way; 0 with the frame (free *p), or -1 after a message
 * naming `what` we waited in. */
static int next_answer(struct boot_member *m, const char *what, int *type,
                       unsigned char **p, size_t *n)
{
  for (;;) {
    *p = NULL;
    *n = 0;
    int64_t deadline = boot_now_ms() + (int64_t)m->timeout_s * 1000;
    if (boot_recv_frame(m->fd, type, p, n, deadline) < 0) {
      if (errno == ETIMEDOUT)
        lapi_boot_say("%s: rank %d: the exchange at %s was silent for %d s "
                      "in %s: %s or the network is gone (LAPI_TIMEOUT)",
                      m->src, m->rank, m->addr, m->timeout_s, what,
                      m->owner);
      else
        lapi_boot_say("%s: rank %d: lost the exchange at %s in %s (%s): %s "
                      "has ended", m->src, m->rank, m->addr, what,
                      errno == ECONNRESET ? "connection closed"
                                          : strerror(errno), m->owner);
      return -1;
    }
    if (*type != BOOT_PING && *type != BOOT_GONE)
      return 0;
    if (*type == BOOT_GONE)
      gone_note(m, *p, *n);
    free(*p);
  }
}

/* Under m->mu: wait for the answer to round m->round; 0 with `all`
 * filled, or -1 after a message. */
static int await_round(struct boot_member *m, size_t len, void *all)
{
  char what[64];
  snprintf(what, sizeof what, "collective round %llu",
           (unsigned long long)m->round);
  int type;
  unsigned char *p;
  size_t n;
  if (next_answer(m, what, &type, &p, &n) < 0)
    return -1;
  int rc = -1;
  size_t want = 12 + len * (size_t)m->size;
  if (type == BOOT_GATHERED && n == want && boot_get64(p) == m->round &&
      boot_get32(p + 8) == len) {
    if (len)
      memcpy(all, p + 12, len * (size_t)m->size);
    m->round++;
    rc = 0;
  } else {
    say_unexpected(m, what, type, p, n);
  }
  free(p);
  return rc;
}

int boot_member_gather(struct boot_member *m, const void *mine, size_t len,
                       void *all)
{
  if (len > BOOT_MAX_GATHER) {
    lapi_boot_say("%s: rank %d: an all-gather of %zu bytes per CG is above "
                  "the limit of %u", m->src, m->rank, len, BOOT_MAX_GATHER);
    return -1;
  }
  int rc = -1;
  pthread_mutex_lock(&m->mu);
  if (m->failed || m->fd < 0) {
    lapi_boot_say("%s: rank %d: the job's exchange %s", m->src, m->rank,
                  m->fd < 0 ? "was left already" : "failed earlier");
    goto out;
  }
  unsigned char *frame = malloc(12 + len);
  if (frame == NULL) {
    lapi_boot_say("%s: rank %d: out of memory", m->src, m->rank);
    goto out;
  }
  boot_put64(frame, m->round);
  boot_put32(frame + 8, (uint32_t)len);
  if (len)
    memcpy(frame + 12, mine, len);
  int sent = send_to_exchange(m, BOOT_GATHER, frame, 12 + len);
  free(frame);
  if (sent < 0) {
    m->failed = 1;
    goto out;
  }
  rc = await_round(m, len, all);
  if (rc < 0)
    m->failed = 1;
out:
  pthread_mutex_unlock(&m->mu);
  return rc;
}

void boot_member_set_active(struct boot_member *m, int on)
{
  pthread_mutex_lock(&m->mu);
  /* Even after a failed collective (a peer left): the exchange still
   * reads us, and must not take our clean LAPI_Term for a leave. */
  if (m->fd >= 0) {
    unsigned char v = on ? 1 : 0;
    int64_t deadline = boot_now_ms() + (int64_t)m->timeout_s * 1000;
    boot_send_frame(m->fd, BOOT_ACTIVE, &v, 1, deadline);
  }
  pthread_mutex_unlock(&m->mu);
}

int boot_member_leave_barrier(struct boot_member *m)
{
  static const char what[] = "the leave barrier of LAPI_Term";
  int rc = -1, type;
  unsigned char *p;
  size_t n;
  pthread_mutex_lock(&m->mu);
  /* Even after a failed collective (a peer left): the exchange still
   * reads us, and this barrier does not fail on ranks gone. */
  if (m->fd < 0)
    lapi_boot_say("%s: rank %d: the job's exchange was left already",
                  m->src, m->rank);
  else if (send_to_exchange(m, BOOT_LEAVE, NULL, 0) == 0 &&
           next_answer(m, what, &type, &p, &n) == 0) {
    if (type == BOOT_LEFT_ALL && n == 0)
      rc = 0;
    else
      say_unexpected(m, what, type, p, n);
    free(p);
  }
  pthread_mutex_unlock(&m->mu);
  return rc;
}

/* Outside a collective only GONE frames arrive: take the whole ones
 * without blocking; a partial one stays in the socket for the next look
 * (or the next collective, which reads it whole). */
int boot_member_gone(struct boot_member *m, int *ranks, int max)
{
  if (pthread_mutex_trylock(&m->mu) != 0)
    return 0; /* a collective reads the socket: it notes them */
  while (m->fd >= 0) {
    unsigned char f[9];
    ssize_t got = recv(m->fd, f, sizeof f, MSG_PEEK | MSG_DONTWAIT);
    if (got < (ssize_t)sizeof f || boot_get32(f) != 5 || f[4] != BOOT_GONE)
      break; /* nothing whole, or not a notice: the collective's business */
    if (recv(m->fd, f, sizeof f, MSG_DONTWAIT) != (ssize_t)sizeof f)
      break;
    gone_note(m, f + 5, 4);
  }
  int n = 0;
  while (n < max && m->gone_n > 0)
    ranks[n++] = m->gone_q[--m->gone_n];
  pthread_mutex_unlock(&m->mu);
  return n;
}

void boot_member_leave(struct boot_member *m)
{
  /* At exit another thread may still wait in a collective: then leave
   * without a goodbye (the exchange sees the connection close). */
  if (pthread_mutex_trylock(&m->mu) != 0)
    return;
  if (m->fd >= 0) {
    /* A short wait: at exit nobody should be held up by a dead server. */
    int64_t deadline = boot_now_ms() + (m->timeout_s < 2 ? m->timeout_s : 2)
                                           * 1000;
    boot_send_frame(m->fd, BOOT_BYE, NULL, 0, deadline);
    close(m->fd);
    m->fd = -1;
  }
  pthread_mutex_unlock(&m->mu);
}
