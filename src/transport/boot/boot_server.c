/*
 * boot_server.c - the exchange server: all-gather rounds, barriers and
 * job-wide counters for the CGs of a job (protocol in boot_proto.h).
 *
 * It is a library driven by the caller's poll() loop, so lapirun serves
 * the exchange beside its children's pipes and signals in one thread, and
 * a PMIx job's rank 0 can run it in a thread of its own for the counters.
 * Every socket is non-blocking: a slow or dead client never stalls the
 * others; replies that do not fit in the socket wait in a per-connection
 * queue until POLLOUT.
 */
#include <errno.h>
#include <stdint.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "transport/boot/boot_proto.h"

/* Longest interval between PINGs to a rank waiting in a round. */
#define SRV_PING_MAX_MS 1000
#define SRV_READ_CHUNK 65536

struct srv_conn {
  int fd;
  int kind;           /* -1 until HELLO, then enum boot_kind */
  int rank;
  int ping_ms;        /* PING interval the client's timeout asks for */
  int64_t next_ping;
  int dead;           /* to be closed and removed */
  int closing;        /* close once the queue is flushed */
  unsigned char *in;
  size_t in_len, in_cap;
  unsigned char *out;
  size_t out_off, out_len, out_cap;
};

struct srv_rank {
  struct srv_conn *conn; /* member connection, or NULL */
  int joined;            /* connected once */
  int left;              /* 0 in the job, 1 said BYE, 2 connection lost */
  int active;            /* its transport is up (ACTIVE): peers may wait
                            for it, so leaving now is abnormal */
  int pending;           /* sent the GATHER of the current round */
  int leaving;           /* waits in the leave barrier (LEAVE) */
  uint32_t len;
  unsigned char *data;
};

struct boot_srv {
  int lfd;
  int size;
  int join_timeout_s;
  char key[BOOT_KEY_MAX + 1];
  const char *name;
  struct srv_conn **c;
  int nc, capc;
  struct srv_rank *r;
  uint64_t round;         /* the round being gathered */
  int npending;
  int64_t round_start;    /* when its first GATHER came, 0: none */
  char broken[256];       /* why no round can complete any more */
  int64_t counters[BOOT_COUNTERS];
};

static void srv_say(struct boot_srv *s, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void srv_say(struct boot_srv *s, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s: exchange: %s\n", s->name, msg);
}

struct boot_srv *boot_srv_open(const char *ip, int size, const char *key,
                               int join_timeout_s, const char *name,
                               char *addr, size_t addrlen)
{
  struct boot_srv *s = calloc(1, sizeof *s);
  if (s == NULL) {
    fprintf(stderr, "%s: exchange: out of memory\n", name);
    return NULL;
  }
  s->name = name;
  s->size = size;
  s->join_timeout_s = join_timeout_s;
  snprintf(s->key, sizeof s->key, "%s", key);
  s->lfd = -1;
  s->r = calloc((size_t)size, sizeof *s->r);
  if (s->r == NULL) {
    srv_say(s, "out of memory for %d ranks", size);
    goto fail;
  }
  if (ip == NULL)
    ip = "127.0.0.1";
  struct sockaddr_in sin = {.sin_family = AF_INET};
  if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
    srv_say(s, "\"%s\" is not an IPv4 address to listen on", ip);
    goto fail;
  }
  s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->lfd < 0) {
    srv_say(s, "socket: %s", strerror(errno));
    goto fail;
  }
  socklen_t sl = sizeof sin;
  if (bind(s->lfd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
      listen(s->lfd, size < 128 ? 128 : size) < 0 ||
      getsockname(s->lfd, (struct sockaddr *)&sin, &sl) < 0) {
    srv_say(s, "cannot listen on %s: %s (is it an address of this host?)",
            ip, strerror(errno));
    goto fail;
  }
  snprintf(addr, addrlen, "%s:%u", ip, (unsigned)ntohs(sin.sin_port));
  return s;
fail:
  boot_srv_close(s);
  return NULL;
}

/* ------------------------------------------------------------- output */

/* Flush what the socket takes now; a hard error kills the connection. */
static void conn_flush(struct srv_conn *c)
{
  while (c->out_off < c->out_len && !c->dead) {
    ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                     MSG_NOSIGNAL);
    if (n > 0)
      c->out_off += (size_t)n;
    else if (n < 0 && errno == EINTR)
      continue;
    else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return;
    else
      c->dead = 1;
  }
  if (c->out_off == c->out_len) {
    c->out_off = c->out_len = 0;
    if (c->closing)
      c->dead = 1;
  }
}

/* Queue a frame for c (two parts, so a payload need not be copied twice). */
static void conn_send(struct srv_conn *c, int type, const void *a, size_t alen,
                      const void *b, size_t blen)
{
  if (c->dead)
    return;
  size_t need = c->out_len + 5 + alen + blen;
  if (need > c->out_cap) {
    size_t cap = c->out_cap ? c->out_cap : 256;
    while (cap < need)
      cap *= 2;
    unsigned char *p = realloc(c->out, cap);
    if (p == NULL) {
      c->dead = 1;
      return;
    }
    c->out = p;
    c->out_cap = cap;
  }
  unsigned char *w = c->out + c->out_len;
  boot_put32(w, (uint32_t)(1 + alen + blen));
  w[4] = (unsigned char)type;
  if (alen)
    memcpy(w + 5, a, alen);
  if (blen)
    memcpy(w + 5 + alen, b, blen);
  c->out_len = need;
  conn_flush(c);
}

static void conn_error(struct srv_conn *c, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void conn_error(struct srv_conn *c, const char *fmt, ...)
{
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  conn_send(c, BOOT_ERROR, msg, strlen(msg), NULL, 0);
}

/* ------------------------------------------------------------- rounds */

static void rank_clear(struct srv_rank *r)
{
  free(r->data);
  r->data = NULL;
  r->pending = 0;
  r->len = 0;
}

/* No round can complete any more: fail the waiting ranks, keep the reason
 * for every later GATHER. */
static void srv_break(struct boot_srv *s, const char *why)
{
  if (s->broken[0] == '\0')
    snprintf(s->broken, sizeof s->broken, "%s", why);
  for (int i = 0; i < s->size; i++) {
    struct srv_rank *r = &s->r[i];
    if (r->pending && r->conn)
      conn_error(r->conn, "collective round %llu cannot complete: %s",
                 (unsigned long long)s->round, s->broken);
    rank_clear(r);
  }
  s->npending = 0;
  s->round_start = 0;
}

static void round_complete(struct boot_srv *s)
{
  uint32_t len = s->r[0].len;
  size_t total = (size_t)len * (size_t)s->size;
  unsigned char head[12];
  boot_put64(head, s->round);
  boot_put32(head + 8, len);
  unsigned char *all = total ? malloc(total) : NULL;
  if (total && all == NULL) {
    srv_break(s, "the exchange ran out of memory");
    return;
  }
  for (int i = 0; i < s->size; i++)
    if (len)
      memcpy(all + (size_t)i * len, s->r[i].data, len);
  for (int i = 0; i < s->size; i++) {
    if (s->r[i].conn)
      conn_send(s->r[i].conn, BOOT_GATHERED, head, sizeof head, all, total);
    rank_clear(&s->r[i]);
  }
  free(all);
  s->npending = 0;
  s->round_start = 0;
  s->round++;
}

static void on_gather(struct boot_srv *s, struct srv_conn *c,
                      const unsigned char *p, size_t n)
{
  if (c->kind != BOOT_MEMBER) {
    conn_error(c, "GATHER on a counter connection");
    c->closing = 1;
    return;
  }
  if (n < 12 || boot_get32(p + 8) != n - 12) {
    conn_error(c, "malformed GATHER (%zu bytes)", n);
    c->closing = 1;
    return;
  }
  uint64_t round = boot_get64(p);
  uint32_t len = boot_get32(p + 8);
  struct srv_rank *r = &s->r[c->rank];
  if (s->broken[0]) {
    conn_error(c, "collective round %llu cannot complete: %s",
               (unsigned long long)round, s->broken);
    return;
  }
  for (int i = 0; i < s->size; i++)
    if (s->r[i].left) {
      char why[128];
      snprintf(why, sizeof why, "rank %d has already left the job%s", i,
               s->r[i].left == 1 ? " (it finished)" : " (connection lost)");
      conn_error(c, "collective round %llu cannot complete: %s",
                 (unsigned long long)round, why);
      return;
    }
  /* A round one rank cannot join is a round nobody completes: fail it
   * for everyone rather than leave the others waiting. */
  char why[256] = "";
  if (round != s->round || r->pending)
    snprintf(why, sizeof why, "rank %d is out of step: it sent collective "
             "round %llu while the job is at round %llu (every CG must make "
             "the same collective calls in the same order)", c->rank,
             (unsigned long long)round, (unsigned long long)s->round);
  else if (len > BOOT_MAX_GATHER ||
           (uint64_t)len * (uint64_t)s->size + 64 > BOOT_MAX_FRAME)
    snprintf(why, sizeof why, "rank %d asked for an all-gather of %u bytes "
             "per CG, above the limit (%u bytes per CG, %u for the whole "
             "table)", c->rank, len, BOOT_MAX_GATHER, BOOT_MAX_FRAME - 64);
  else if ((r->data = len ? malloc(len) : NULL) == NULL && len)
    snprintf(why, sizeof why, "the exchange ran out of memory");
  if (why[0]) {
    srv_break(s, why);
    conn_error(c, "collective round %llu cannot complete: %s",
               (unsigned long long)s->round, s->broken);
    return;
  }
  if (len)
    memcpy(r->data, p + 12, len);
  r->len = len;
  r->pending = 1;
  if (s->npending++ == 0)
    s->round_start = boot_now_ms();
  c->next_ping = boot_now_ms() + c->ping_ms;
  for (int i = 0; i < s->size; i++)
    if (s->r[i].pending && s->r[i].len != len) {
      snprintf(why, sizeof why, "rank %d passed %u bytes and rank %d %u "
               "bytes (a barrier is 0): the CGs' collective calls differ",
               i, s->r[i].len, c->rank, len);
      srv_break(s, why);
      return;
    }
  if (s->npending == s->size)
    round_complete(s);
}

static void on_hello(struct boot_srv *s, struct srv_conn *c,
                     const unsigned char *p, size_t n)
{
  if (n < 24 || boot_get32(p) != BOOT_MAGIC) {
    conn_error(c, "this is not a lapirun exchange client");
    c->closing = 1;
    return;
  }
  int version = p[4] | p[5] << 8;
  int kind = p[6];
  uint32_t rank = boot_get32(p + 8), size = boot_get32(p + 12);
  uint32_t tmo = boot_get32(p + 16), klen = boot_get32(p + 20);
  if (version != BOOT_VERSION) {
    conn_error(c, "protocol version %d, the exchange speaks %d: use the "
               "lapirun of the same openlapi build", version, BOOT_VERSION);
    c->closing = 1;
    return;
  }
  if (klen != n - 24 || klen > BOOT_KEY_MAX ||
      strlen(s->key) != klen || memcmp(s->key, p + 24, klen) != 0) {
    conn_error(c, "job key \"%.*s\" is not this job's (\"%s\"): a CG of "
               "another job reached this exchange",
               (int)(klen <= n - 24 && klen <= BOOT_KEY_MAX ? klen : 0),
               (const char *)p + 24, s->key);
    c->closing = 1;
    return;
  }
  if (kind != BOOT_MEMBER && kind != BOOT_COUNTER) {
    conn_error(c, "unknown connection kind %d", kind);
    c->closing = 1;
    return;
  }
  if (kind == BOOT_MEMBER) {
    if ((int)size != s->size || rank >= size) {
      conn_error(c, "rank %u of %u does not fit this job of %d CGs", rank,
                 size, s->size);
      c->closing = 1;
      return;
    }
    struct srv_rank *r = &s->r[rank];
    if (r->joined) {
      conn_error(c, "rank %u has already joined the job: each CG needs its "
                 "own LAPIRUN_RANK", rank);
      c->closing = 1;
      return;
    }
    r->joined = 1;
    r->conn = c;
    c->rank = (int)rank;
  }
  c->kind = kind;
  int ms = tmo >= 4 ? SRV_PING_MAX_MS : (int)(tmo ? tmo : 1) * 250;
  c->ping_ms = ms < SRV_PING_MAX_MS ? ms : SRV_PING_MAX_MS;
  unsigned char w[4];
  boot_put32(w, (uint32_t)s->size);
  conn_send(c, BOOT_WELCOME, w, sizeof w, NULL, 0);
}

static void on_fadd(struct boot_srv *s, struct srv_conn *c,
                    const unsigned char *p, size_t n)
{
  uint32_t id = n == 12 ? boot_get32(p) : BOOT_COUNTERS;
  if (id >= BOOT_COUNTERS) {
    conn_error(c, "counter id %u is not 0..%d", id, BOOT_COUNTERS - 1);
    return;
  }
  int64_t add = (int64_t)boot_get64(p + 4);
  unsigned char w[8];
  boot_put64(w, (uint64_t)s->counters[id]);
  s->counters[id] = (int64_t)((uint64_t)s->counters[id] + (uint64_t)add);
  conn_send(c, BOOT_FADDED, w, sizeof w, NULL, 0);
}

/* The leave barrier that LAPI_Term ends with: complete once every rank
 * waits in it, has left the job or never joined it (a LAPI_Init that
 * failed on a missing CG ends with it too).  Unlike a round, a rank gone
 * does not fail it: the survivors of a broken job still close only after
 * each of them sent what it owed the others (a CG that closed at once
 * left a slower one's last packets to it stuck until TIMEOUT). */
static void leave_check(struct boot_srv *s)
{
  int waiting = 0;
  for (int i = 0; i < s->size; i++) {
    if (!s->r[i].leaving && !s->r[i].left && s->r[i].joined)
      return;
    waiting += s->r[i].leaving;
  }
  for (int i = 0; waiting && i < s->size; i++)
    if (s->r[i].leaving) {
      s->r[i].leaving = 0;
      if (s->r[i].conn)
        conn_send(s->r[i].conn, BOOT_LEFT_ALL, NULL, 0, NULL, 0);
    }
}

/* A rank waiting for an answer gets PINGs (the exchange lives, keep
 * waiting): in a round, and in the leave barrier unless the job is
 * broken, where a survivor that never comes to it is waited for one
 * timeout of silence only. */
static int wants_ping(const struct boot_srv *s, const struct srv_rank *r)
{
  return r->conn && (r->pending || (r->leaving && !s->broken[0]));
}

/* A member leaves: gone for good; a round waiting for it fails.  One
 * that leaves with its transport up (no LAPI_Term) is reported to the
 * others: nothing else tells a peer that waits for a message from it
 * and has nothing outstanding toward it. */
static void rank_leaves(struct boot_srv *s, struct srv_conn *c, int how)
{
  struct srv_rank *r = &s->r[c->rank];
  if (r->conn != c)
    return;
  r->conn = NULL;
  if (r->left == 0)
    r->left = how;
  rank_clear(r);
  if (r->active) {
    unsigned char w[4];
    boot_put32(w, (uint32_t)c->rank);
    for (int i = 0; i < s->size; i++)
      if (s->r[i].conn)
        conn_send(s->r[i].conn, BOOT_GONE, w, sizeof w, NULL, 0);
  }
  if (s->npending > 0) {
    char why[128];
    snprintf(why, sizeof why, "rank %d left the job %s", c->rank,
             how == 1 ? "(it finished) before joining this round"
                      : "(its connection closed: did the process die?)");
    srv_break(s, why);
  }
  leave_check(s);
}

static void on_frame(struct boot_srv *s, struct srv_conn *c, int type,
                     const unsigned char *p, size_t n)
{
  if (c->kind < 0 && type != BOOT_HELLO) {
    conn_error(c, "the first message must be HELLO");
    c->closing = 1;
    return;
  }
  switch (type) {
  case BOOT_HELLO:
    if (c->kind >= 0) {
      conn_error(c, "HELLO sent twice");
      c->closing = 1;
      return;
    }
    on_hello(s, c, p, n);
    break;
  case BOOT_GATHER:
    on_gather(s, c, p, n);
    break;
  case BOOT_FADD:
    on_fadd(s, c, p, n);
    break;
  case BOOT_ACTIVE:
    if (c->kind != BOOT_MEMBER || n != 1 || p[0] > 1) {
      conn_error(c, "malformed ACTIVE (%zu bytes)", n);
      c->closing = 1;
      return;
    }
    s->r[c->rank].active = p[0];
    break;
  case BOOT_LEAVE:
    if (c->kind != BOOT_MEMBER || n != 0) {
      conn_error(c, "malformed LEAVE (%zu bytes)", n);
      c->closing = 1;
      return;
    }
    s->r[c->rank].leaving = 1;
    c->next_ping = boot_now_ms() + c->ping_ms;
    leave_check(s);
    break;
  case BOOT_BYE:
    if (c->kind == BOOT_MEMBER)
      rank_leaves(s, c, 1);
    c->closing = 1;
    conn_flush(c);
    break;
  default:
    srv_say(s, "a client sent message type %d: dropping it", type);
    c->dead = 1;
  }
}

/* ------------------------------------------------------------- input */

static void conn_read(struct boot_srv *s, struct srv_conn *c)
{
  for (;;) {
    if (c->in_cap - c->in_len < SRV_READ_CHUNK) {
      unsigned char *p = realloc(c->in, c->in_cap + SRV_READ_CHUNK);
      if (p == NULL) {
        c->dead = 1;
        return;
      }
      c->in = p;
      c->in_cap += SRV_READ_CHUNK;
    }
    ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n > 0) {
      c->in_len += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    c->dead = 1; /* closed or reset */
    break;
  }
  size_t off = 0;
  while (!c->closing && c->in_len - off >= 5) {
    uint32_t body = boot_get32(c->in + off);
    /* A client sends at most one all-gather contribution per frame. */
    if (body == 0 || body > BOOT_MAX_GATHER + 64) {
      srv_say(s, "a client sent a frame of %u bytes: closing it", body);
      c->dead = 1;
      break;
    }
    if (c->in_len - off < 4 + (size_t)body)
      break;
    on_frame(s, c, c->in[off + 4], c->in + off + 5, body - 1);
    off += 4 + (size_t)body;
  }
  memmove(c->in, c->in + off, c->in_len - off);
  c->in_len -= off;
}

static void srv_accept(struct boot_srv *s)
{
  for (;;) {
    int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
          errno != ECONNABORTED)
        srv_say(s, "accept: %s", strerror(errno));
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      return;
    }
    if (s->nc == s->capc) {
      int cap = s->capc ? 2 * s->capc : 16;
      struct srv_conn **p = realloc(s->c, (size_t)cap * sizeof *p);
      if (p == NULL) {
        close(fd);
        return;
      }
      s->c = p;
      s->capc = cap;
    }
    struct srv_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
      close(fd);
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    c->kind = -1;
    c->rank = -1;
    c->ping_ms = SRV_PING_MAX_MS;
    s->c[s->nc++] = c;
  }
}

/* Drop dead connections; a member that vanished leaves the job. */
static void srv_sweep(struct boot_srv *s)
{
  for (int i = 0; i < s->nc;) {
    struct srv_conn *c = s->c[i];
    if (!c->dead) {
      i++;
      continue;
    }
    if (c->kind == BOOT_MEMBER)
      rank_leaves(s, c, 2);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
    s->c[i] = s->c[--s->nc];
  }
}

/* ------------------------------------------------------------- driver */

int boot_srv_max_fds(const struct boot_srv *s)
{
  return 1 + s->nc;
}

int boot_srv_pollfds(struct boot_srv *s, struct pollfd *pfd, int max)
{
  int n = 0;
  if (n < max)
    pfd[n++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
  for (int i = 0; i < s->nc && n < max; i++) {
    struct srv_conn *c = s->c[i];
    short ev = c->closing ? 0 : POLLIN;
    if (c->out_len > c->out_off)
      ev |= POLLOUT;
    pfd[n++] = (struct pollfd){.fd = c->fd, .events = ev};
  }
  return n;
}

/* Has a round been waiting too long for a rank that never connected? */
static void check_join(struct boot_srv *s, int64_t now)
{
  if (s->npending == 0 ||
      now - s->round_start < (int64_t)s->join_timeout_s * 1000)
    return;
  char why[200];
  int off = snprintf(why, sizeof why, "rank(s)");
  int missing = 0;
  for (int i = 0; i < s->size && off < (int)sizeof why - 40; i++)
    if (!s->r[i].joined) {
      off += snprintf(why + off, sizeof why - (size_t)off, " %d", i);
      missing++;
    }
  if (missing == 0)
    return; /* everyone is connected: the others are just busy */
  snprintf(why + off, sizeof why - (size_t)off,
           " never connected within %d s", s->join_timeout_s);
  srv_break(s, why);
}

int boot_srv_timeout_ms(struct boot_srv *s)
{
  /* The join deadline matters only while a rank never connected: once
   * all have, a round may wait as long as its slowest rank computes
   * (counting that deadline then made lapirun's poll spin at 0 ms).
   * Without a round, only ranks in the leave barrier want PINGs. */
  int64_t now = boot_now_ms(), next = INT64_MAX;
  for (int i = 0; i < s->size; i++) {
    if (s->npending > 0 && !s->r[i].joined) {
      int64_t j = s->round_start + (int64_t)s->join_timeout_s * 1000;
      if (j < next)
        next = j;
    }
    if (wants_ping(s, &s->r[i]) && s->r[i].conn->next_ping < next)
      next = s->r[i].conn->next_ping;
  }
  if (next == INT64_MAX)
    return -1;
  int64_t d = next - now;
  return d < 0 ? 0 : d > 60000 ? 60000 : (int)d;
}

void boot_srv_process(struct boot_srv *s, const struct pollfd *pfd, int n)
{
  for (int k = 0; k < n; k++) {
    if (pfd[k].revents == 0)
      continue;
    if (pfd[k].fd == s->lfd) {
      srv_accept(s);
      continue;
    }
    for (int i = 0; i < s->nc; i++) {
      struct srv_conn *c = s->c[i];
      if (c->fd != pfd[k].fd || c->dead)
        continue;
      if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
        conn_read(s, c);
      if (pfd[k].revents & POLLOUT)
        conn_flush(c);
      break;
    }
  }
  srv_sweep(s);
  /* Timers: keep waiting ranks sure the exchange lives. */
  int64_t now = boot_now_ms();
  for (int i = 0; i < s->size; i++) {
    struct srv_conn *c = s->r[i].conn;
    if (wants_ping(s, &s->r[i]) && now >= c->next_ping) {
      conn_send(c, BOOT_PING, NULL, 0, NULL, 0);
      c->next_ping = now + c->ping_ms;
    }
  }
  check_join(s, now);
  srv_sweep(s);
}

int boot_srv_rank_active(struct boot_srv *s, int rank)
{
  if (rank < 0 || rank >= s->size)
    return 0;
  struct srv_conn *c = s->r[rank].conn;
  if (c && !c->dead && !c->closing)
    conn_read(s, c);
  return s->r[rank].active;
}

int boot_srv_connections(const struct boot_srv *s)
{
  return s->nc;
}

uint64_t boot_srv_rounds(const struct boot_srv *s)
{
  return s->round;
}

void boot_srv_close(struct boot_srv *s)
{
  if (s == NULL)
    return;
  for (int i = 0; i < s->nc; i++) {
    close(s->c[i]->fd);
    free(s->c[i]->in);
    free(s->c[i]->out);
    free(s->c[i]);
  }
  if (s->r)
    for (int i = 0; i < s->size; i++)
      free(s->r[i].data);
  if (s->lfd >= 0)
    close(s->lfd);
  free(s->c);
  free(s->r);
  free(s);
}
