/*
 * boot_impl.h - the bootstrap's sources (internal to src/transport/boot
 * and the LAPI job seam).
 *
 * Each init fills a struct lapi_boot completely or returns -1 after
 * printing a message that starts with "lapi boot: <source>:".
 */
#ifndef LAPI_BOOT_IMPL_H
#define LAPI_BOOT_IMPL_H

#include <pthread.h>

#include "transport/boot/boot.h"
#include "transport/boot/boot_proto.h"

#define LAPI_BOOT_TIMEOUT_DEFAULT 30 /* seconds, when LAPI_TIMEOUT is unset */
#define LAPI_BOOT_TIMEOUT_MAX 86400

/* Started by lapirun (LAPIRUN_ADDR set). */
int lapi_boot_lapirun_init(struct lapi_boot *b, int timeout_s);
/* Started by a PMIx launcher (only with OPENLAPI_HAVE_PMIX). */
int lapi_boot_pmix_init(struct lapi_boot *b, int timeout_s);
/* A job of one CG. */
int lapi_boot_single_init(struct lapi_boot *b);

/*
 * The timeout of the process-wide bootstrap in seconds: LAPI_TIMEOUT
 * (1..86400) or LAPI_BOOT_TIMEOUT_DEFAULT.  The same value is LAPI's
 * TIMEOUT query.
 */
int lapi_boot_timeout(void);

/*
 * A client of the exchange server (boot_client.c).  boot_client_join
 * connects to addr ("host:port") before the deadline, says HELLO as a
 * member `rank` of `size` or as a counter client, and waits for WELCOME.
 * Returns the socket, or -1 after printing why (src names the source).
 */
int boot_client_join(const char *src, const char *addr, int kind, int rank,
                     int size, const char *key, int timeout_s);

/*
 * A member connection to the exchange server (boot_member.c): rounds of
 * all-gathers and barriers, the ACTIVE flag, GONE notices, the goodbye.
 * `src` prefixes messages ("lapirun", "pmix"), `owner` names who serves
 * the exchange ("lapirun", "rank 0").  join returns NULL after a message.
 * leave says goodbye and closes; the object stays (another thread may
 * still hold it at exit).
 */
struct boot_member;
struct boot_member *boot_member_join(const char *src, const char *owner,
                                     const char *addr, int rank, int size,
                                     const char *key, int timeout_s);
/* An all-gather of len bytes a CG (mine NULL and len 0: a barrier). */
int boot_member_gather(struct boot_member *m, const void *mine, size_t len,
                       void *all);
void boot_member_set_active(struct boot_member *m, int on);
/* The leave barrier (boot.h, leave_barrier); 0 or -1 after a message. */
int boot_member_leave_barrier(struct boot_member *m);
int boot_member_gone(struct boot_member *m, int *ranks, int max);
void boot_member_leave(struct boot_member *m);

/* A job-wide counter service reached through a counter connection. */
struct boot_counters {
  pthread_mutex_t mu;
  int fd;                 /* -1 until the first fetch_add */
  int failed;
  char addr[300];
  char key[BOOT_KEY_MAX + 1];
  int timeout_s;
  const char *src;
};

void boot_counters_setup(struct boot_counters *c, const char *src,
                         const char *addr, const char *key, int timeout_s);
long boot_counters_fetch_add(struct boot_counters *c, int id, long add);
void boot_counters_close(struct boot_counters *c);

/* Print "lapi boot: " + the message to stderr (one line, one write). */
void lapi_boot_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* LAPI_BOOT_IMPL_H */
