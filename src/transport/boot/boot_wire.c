/*
 * boot_wire.c - sockets and frames of the lapirun exchange, every wait
 * bounded by a deadline (poll), never a blocking read or write.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "transport/boot/boot_proto.h"

/* Pause between connection attempts to an exchange not listening yet. */
#define BOOT_RETRY_MS 100

int64_t boot_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left before deadline, at least 0, for poll(). */
static int left_ms(int64_t deadline_ms)
{
  int64_t d = deadline_ms - boot_now_ms();
  if (d < 0)
    return 0;
  return d > 1000000 ? 1000000 : (int)d;
}

int boot_parse_addr(const char *s, char *host, size_t hostlen, char *port,
                    size_t portlen, char *err, size_t errlen)
{
  const char *colon, *h = s;
  size_t hl;
  if (s == NULL || *s == '\0') {
    snprintf(err, errlen, "the address is empty");
    return -1;
  }
  if (*s == '[') {
    const char *close = strchr(s, ']');
    if (close == NULL || close[1] != ':') {
      snprintf(err, errlen, "\"%s\" is not [ipv6]:port", s);
      return -1;
    }
    h = s + 1;
    hl = (size_t)(close - h);
    colon = close + 1;
  } else {
    colon = strrchr(s, ':');
    if (colon == NULL) {
      snprintf(err, errlen, "\"%s\" has no :port", s);
      return -1;
    }
    hl = (size_t)(colon - s);
  }
  const char *p = colon + 1;
  size_t pl = strlen(p);
  char *end;
  long pv = strtol(p, &end, 10);
  if (hl == 0 || pl == 0 || *end != '\0' || pv <= 0 || pv > 65535) {
    snprintf(err, errlen, "\"%s\" is not host:port (port 1..65535)", s);
    return -1;
  }
  if (hl >= hostlen || pl >= portlen) {
    snprintf(err, errlen, "\"%s\" is too long", s);
    return -1;
  }
  memcpy(host, h, hl);
  host[hl] = '\0';
  memcpy(port, p, pl + 1);
  return 0;
}

static int set_nonblock(int fd)
{
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* One attempt on one address: 0 connected, -1 with errno. */
static int try_connect(const struct addrinfo *ai, int64_t deadline_ms,
                       int *out)
{
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                  ai->ai_protocol);
  if (fd < 0)
    return -1;
  if (set_nonblock(fd) < 0)
    goto fail;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
    if (errno != EINPROGRESS)
      goto fail;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int n;
    do
      n = poll(&p, 1, left_ms(deadline_ms));
    while (n < 0 && errno == EINTR);
    if (n == 0) {
      errno = ETIMEDOUT;
      goto fail;
    }
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
      goto fail;
    if (soerr != 0) {
      errno = soerr;
      goto fail;
    }
  }
  /* Frames are small request/reply pairs: no Nagle delay. */
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  *out = fd;
  return 0;
fail:;
  int e = errno;
  close(fd);
  errno = e;
  return -1;
}

int boot_connect(const char *host, const char *port, int64_t deadline_ms,
                 char *err, size_t errlen)
{
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
  snprintf(err, errlen, "no attempt was made");
  for (;;) {
    struct addrinfo *res = NULL;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0) {
      snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(g));
      if (g != EAI_AGAIN)
        return -1;
    } else {
      for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd;
        if (try_connect(ai, deadline_ms, &fd) == 0) {
          freeaddrinfo(res);
          return fd;
        }
        snprintf(err, errlen, "%s", strerror(errno));
      }
      freeaddrinfo(res);
    }
    /* The exchange may not listen yet (a slow remote start): retry. */
    int wait = left_ms(deadline_ms);
    if (wait == 0)
      return -1;
    struct timespec ts = {0, (wait < BOOT_RETRY_MS ? wait : BOOT_RETRY_MS)
                                 * 1000000L};
    nanosleep(&ts, NULL);
  }
}

int boot_send_all(int fd, const void *buf, size_t len, int64_t deadline_ms)
{
  const unsigned char *p = buf;
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return -1;
    struct pollfd pf = {.fd = fd, .events = POLLOUT};
    int r = poll(&pf, 1, left_ms(deadline_ms));
    if (r == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    if (r < 0 && errno != EINTR)
      return -1;
  }
  return 0;
}

int boot_send_frame(int fd, int type, const void *payload, size_t len,
                    int64_t deadline_ms)
{
  unsigned char head[5];
  if (len >= BOOT_MAX_FRAME) {
    errno = EMSGSIZE;
    return -1;
  }
  boot_put32(head, (uint32_t)len + 1);
  head[4] = (unsigned char)type;
  if (boot_send_all(fd, head, sizeof head, deadline_ms) < 0)
    return -1;
  return len ? boot_send_all(fd, payload, len, deadline_ms) : 0;
}

/* Read exactly len bytes before the deadline. */
/* The calling thread's work while it waits for the exchange (see
 * boot_set_wait_idle). */
static __thread int (*wait_idle)(void *);
static __thread void *wait_idle_arg;

void boot_set_wait_idle(int (*fn)(void *), void *arg)
{
  wait_idle = fn;
  wait_idle_arg = arg;
}

/* How long the next poll of a waiting rank may block: to the deadline,
 * or with an idle hook at most 1 ms (0 if the hook just did work). */
static int wait_slice_ms(int64_t deadline_ms)
{
  int ms = left_ms(deadline_ms);
  int (*fn)(void *) = wait_idle;
  if (fn && ms > 0) {
    wait_idle = NULL; /* a wait inside fn is not fn's business */
    int did = fn(wait_idle_arg);
    wait_idle = fn;
    if (did > 0)
      ms = 0;
    else if (ms > 1)
      ms = 1;
  }
  return ms;
}

static int recv_all(int fd, void *buf, size_t len, int64_t deadline_ms)
{
  unsigned char *p = buf;
  while (len > 0) {
    ssize_t n = recv(fd, p, len, 0);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n == 0) {
      errno = ECONNRESET;
      return -1;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return -1;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int r = poll(&pf, 1, wait_slice_ms(deadline_ms));
    if (r == 0 && left_ms(deadline_ms) == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    if (r < 0 && errno != EINTR)
      return -1;
  }
  return 0;
}

int boot_recv_frame(int fd, int *type, unsigned char **payload, size_t *len,
                    int64_t deadline_ms)
{
  unsigned char head[5];
  if (recv_all(fd, head, sizeof head, deadline_ms) < 0)
    return -1;
  uint32_t body = boot_get32(head);
  if (body == 0 || body > BOOT_MAX_FRAME) {
    errno = EPROTO;
    return -1;
  }
  unsigned char *p = NULL;
  size_t n = body - 1;
  if (n > 0) {
    p = malloc(n);
    if (p == NULL)
      return -1;
    if (recv_all(fd, p, n, deadline_ms) < 0) {
      int e = errno;
      free(p);
      errno = e;
      return -1;
    }
  }
  *type = head[4];
  *payload = p;
  *len = n;
  return 0;
}
