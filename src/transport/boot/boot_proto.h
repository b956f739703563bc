/*
 * boot_proto.h - the lapirun exchange: wire format, socket helpers and the
 * exchange server (internal to the bootstrap and tools/lapirun).
 *
 * One TCP stream per client.  Every message is a frame
 *     u32 body length (1..BOOT_MAX_FRAME) | u8 type | payload
 * with every integer little-endian, so CGs of different hosts agree.
 *
 *   HELLO    c->s  u32 magic, u16 version, u8 kind, u8 0, u32 rank,
 *                  u32 size, u32 timeout_s, u32 key_len, key bytes
 *   WELCOME  s->c  u32 size
 *   GATHER   c->s  u64 round, u32 len, len bytes      (barrier: len 0)
 *   GATHERED s->c  u64 round, u32 len, size * len bytes in rank order
 *   FADD     c->s  u32 counter id, i64 add
 *   FADDED   s->c  i64 value before the add
 *   PING     s->c  (empty) the server is alive and the round still open
 *   BYE      c->s  (empty) the rank leaves the job cleanly
 *   ERROR    s->c  text: the request cannot be served; the client fails
 *   ACTIVE   c->s  u8 1: the rank's transport is up (LAPI_Init), so peers
 *                  may wait for it; 0: closed again (LAPI_Term)
 *   GONE     s->c  u32 rank: that rank left while ACTIVE, i.e. exited
 *                  without LAPI_Term; sent to every other member, at any
 *                  time (inside a round too)
 *
 * A "member" connection (one per rank) takes part in the collectives; a
 * "counter" connection serves only FADD, so a fetch_add never waits
 * behind a collective of another thread.  The server answers a GATHER
 * when every rank has sent the same round with the same length; a rank
 * that leaves (BYE or a closed connection) while a round needs it fails
 * that round and every later one with an ERROR naming the rank.  A
 * rank that leaves while ACTIVE is reported to the others (GONE): their
 * transports may be waiting for a message from it that never comes.
 */
#ifndef LAPI_BOOT_PROTO_H
#define LAPI_BOOT_PROTO_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define BOOT_MAGIC 0x4e55524cu   /* "LRUN" */
#define BOOT_VERSION 3           /* 2: ACTIVE and GONE; 3: LEAVE */
#define BOOT_MAX_FRAME (64u << 20)
#define BOOT_MAX_GATHER (1u << 20)  /* bytes per rank per round */
#define BOOT_MAX_SIZE 4096          /* CGs in a job */
#define BOOT_COUNTERS 16
#define BOOT_KEY_MAX 63

enum boot_msg {
  BOOT_HELLO = 1,
  BOOT_WELCOME,
  BOOT_GATHER,
  BOOT_GATHERED,
  BOOT_FADD,
  BOOT_FADDED,
  BOOT_PING,
  BOOT_BYE,
  BOOT_ERROR,
  BOOT_ACTIVE,
  BOOT_GONE,
  BOOT_LEAVE,   /* the leave barrier (LAPI_Term): no payload */
  BOOT_LEFT_ALL, /* its answer: every rank waits in it or left */
};

enum boot_kind { BOOT_MEMBER = 0, BOOT_COUNTER = 1 };

/* ------------------------------------------------------------- encoding */

static inline void boot_put32(unsigned char *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static inline void boot_put64(unsigned char *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t boot_get32(const unsigned char *p)
{
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static inline uint64_t boot_get64(const unsigned char *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* ------------------------------------------------------ socket helpers */

/* Monotonic milliseconds. */
int64_t boot_now_ms(void);

/*
 * Parse "host:port" (IPv4 dotted quad or a name, or "[v6]:port") into
 * host and port.  Returns 0, or -1 with why in err.
 */
int boot_parse_addr(const char *s, char *host, size_t hostlen, char *port,
                    size_t portlen, char *err, size_t errlen);

/*
 * Connect to host:port, retrying refused or unreachable attempts until
 * deadline_ms (boot_now_ms clock).  Returns a blocking-free (O_NONBLOCK)
 * socket, or -1 with the last reason in err.
 */
int boot_connect(const char *host, const char *port, int64_t deadline_ms,
                 char *err, size_t errlen);

/*
 * Send all len bytes on the non-blocking socket fd before deadline_ms.
 * Returns 0, or -1 with errno (ETIMEDOUT at the deadline).
 */
int boot_send_all(int fd, const void *buf, size_t len, int64_t deadline_ms);

/* Send one frame (type + payload); 0 or -1 with errno. */
int boot_send_frame(int fd, int type, const void *payload, size_t len,
                    int64_t deadline_ms);

/*
 * Receive one frame before deadline_ms.  On success returns 0 and sets
 * *type, *payload (malloc'd, caller frees; NULL when len is 0) and *len.
 * Returns -1 with errno: ETIMEDOUT, ECONNRESET for an orderly close,
 * EPROTO for a malformed length.
 */
/* While the calling thread waits for the exchange, call fn(arg) between
 * polls of at most 1 ms (NULL: none).  LAPI's collectives set it so that
 * a polling-mode task keeps running its handlers inside LAPI_Gfence or
 * LAPI_Address_init, as a peer waiting for one of its messages needs.
 * fn returns > 0 when it did work; it is not called from within itself. */
void boot_set_wait_idle(int (*fn)(void *), void *arg);

int boot_recv_frame(int fd, int *type, unsigned char **payload, size_t *len,
                    int64_t deadline_ms);

/* ---------------------------------------------------------- the server */

struct boot_srv;

/*
 * Listen on ip (NULL: 127.0.0.1), an ephemeral port, for a job of size
 * ranks called key.  join_timeout_s: how long a round may wait for a rank
 * that never connected.  name prefixes every message the server prints
 * ("lapirun", "lapi boot").  The address to give clients ("ip:port") is
 * written to addr.  Returns NULL after printing why.
 */
struct boot_srv *boot_srv_open(const char *ip, int size, const char *key,
                               int join_timeout_s, const char *name,
                               char *addr, size_t addrlen);

/* Fill up to max pollfds with the server's sockets; returns how many. */
int boot_srv_pollfds(struct boot_srv *s, struct pollfd *pfd, int max);

/* Milliseconds until the server's next timer (-1: none). */
int boot_srv_timeout_ms(struct boot_srv *s);

/* Serve the events poll() returned for those n pollfds, and the timers. */
void boot_srv_process(struct boot_srv *s, const struct pollfd *pfd, int n);

/* How many pollfds boot_srv_pollfds may need at most right now. */
int boot_srv_max_fds(const struct boot_srv *s);

/*
 * Whether rank's transport was up (ACTIVE 1) when it was last heard;
 * reads what its member connection holds first, so a rank that closed
 * its transport just before it exited is not taken for one that did not.
 */
int boot_srv_rank_active(struct boot_srv *s, int rank);

/* Connections open now, of members and counter clients (a server in a
 * CG's thread serves until the others have left). */
int boot_srv_connections(const struct boot_srv *s);

/* Collective rounds completed so far. */
uint64_t boot_srv_rounds(const struct boot_srv *s);

/* Close every socket and free. */
void boot_srv_close(struct boot_srv *s);

#endif /* LAPI_BOOT_PROTO_H */
