/*
 * boot_client.c - joining the exchange server and its job-wide counters,
 * shared by the lapirun source and the PMIx source (whose rank 0 hosts
 * the same server for fetch_add).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/boot/boot_impl.h"

/* Why a receive failed, for the user. */
static const char *recv_why(int e)
{
  switch (e) {
  case ETIMEDOUT: return "no answer";
  case ECONNRESET: return "the exchange closed the connection";
  case EPROTO: return "a malformed reply";
  default: return strerror(e);
  }
}

int boot_client_join(const char *src, const char *addr, int kind, int rank,
                     int size, const char *key, int timeout_s)
{
  char host[256], port[16], err[300];
  if (boot_parse_addr(addr, host, sizeof host, port, sizeof port, err,
                      sizeof err) < 0) {
    lapi_boot_say("%s: bad exchange address: %s", src, err);
    return -1;
  }
  int64_t deadline = boot_now_ms() + (int64_t)timeout_s * 1000;
  int fd = boot_connect(host, port, deadline, err, sizeof err);
  if (fd < 0) {
    lapi_boot_say("%s: rank %d: cannot reach the exchange at %s within %d s "
                  "(%s): is the launcher running and reachable from this "
                  "host? (LAPIRUN_ADDR, LAPI_TIMEOUT)", src, rank, addr,
                  timeout_s, err);
    return -1;
  }
  size_t klen = strlen(key);
  unsigned char hello[24 + BOOT_KEY_MAX];
  boot_put32(hello, BOOT_MAGIC);
  hello[4] = BOOT_VERSION & 0xff;
  hello[5] = BOOT_VERSION >> 8;
  hello[6] = (unsigned char)kind;
  hello[7] = 0;
  boot_put32(hello + 8, (uint32_t)rank);
  boot_put32(hello + 12, (uint32_t)size);
  boot_put32(hello + 16, (uint32_t)timeout_s);
  boot_put32(hello + 20, (uint32_t)klen);
  memcpy(hello + 24, key, klen);
  int type = 0;
  unsigned char *p = NULL;
  size_t n = 0;
  if (boot_send_frame(fd, BOOT_HELLO, hello, 24 + klen, deadline) < 0 ||
      boot_recv_frame(fd, &type, &p, &n, deadline) < 0) {
    lapi_boot_say("%s: rank %d: the exchange at %s did not welcome us "
                  "within %d s (%s)", src, rank, addr, timeout_s,
                  recv_why(errno));
    close(fd);
    return -1;
  }
  if (type == BOOT_ERROR) {
    lapi_boot_say("%s: rank %d: the exchange at %s refused us: %.*s", src,
                  rank, addr, (int)n, (const char *)p);
  } else if (type != BOOT_WELCOME || n != 4 ||
             (kind == BOOT_MEMBER && boot_get32(p) != (uint32_t)size)) {
    lapi_boot_say("%s: rank %d: the exchange at %s answered HELLO with "
                  "message %d: is it a lapirun exchange of this version?",
                  src, rank, addr, type);
  } else {
    free(p);
    return fd;
  }
  free(p);
  close(fd);
  return -1;
}

void boot_counters_setup(struct boot_counters *c, const char *src,
                         const char *addr, const char *key, int timeout_s)
{
  pthread_mutex_init(&c->mu, NULL);
  c->fd = -1;
  c->failed = 0;
  c->src = src;
  c->timeout_s = timeout_s;
  snprintf(c->addr, sizeof c->addr, "%s", addr);
  snprintf(c->key, sizeof c->key, "%s", key);
}

long boot_counters_fetch_add(struct boot_counters *c, int id, long add)
{
  if (id < 0 || id >= BOOT_COUNTERS) {
    lapi_boot_say("%s: fetch_add: counter id %d is not 0..%d", c->src, id,
                  BOOT_COUNTERS - 1);
    return -1;
  }
  long ret = -1;
  pthread_mutex_lock(&c->mu);
  if (c->failed) {
    lapi_boot_say("%s: fetch_add: the counter service was lost earlier",
                  c->src);
    goto out;
  }
  /* Connected on first use: most jobs never count. */
  if (c->fd < 0)
    c->fd = boot_client_join(c->src, c->addr, BOOT_COUNTER, 0, 0, c->key,
                             c->timeout_s);
  if (c->fd < 0) {
    c->failed = 1;
    goto out;
  }
  unsigned char req[12];
  boot_put32(req, (uint32_t)id);
  boot_put64(req + 4, (uint64_t)(int64_t)add);
  int64_t deadline = boot_now_ms() + (int64_t)c->timeout_s * 1000;
  int type = 0;
  unsigned char *p = NULL;
  size_t n = 0;
  if (boot_send_frame(c->fd, BOOT_FADD, req, sizeof req, deadline) < 0 ||
      boot_recv_frame(c->fd, &type, &p, &n, deadline) < 0) {
    lapi_boot_say("%s: fetch_add: counter service at %s: %s within %d s",
                  c->src, c->addr, recv_why(errno), c->timeout_s);
    c->failed = 1;
  } else if (type == BOOT_FADDED && n == 8) {
    ret = (long)(int64_t)boot_get64(p);
  } else if (type == BOOT_ERROR) {
    lapi_boot_say("%s: fetch_add: %.*s", c->src, (int)n, (const char *)p);
  } else {
    lapi_boot_say("%s: fetch_add: unexpected reply %d from %s", c->src, type,
                  c->addr);
    c->failed = 1;
  }
  free(p);
out:
  pthread_mutex_unlock(&c->mu);
  return ret;
}

void boot_counters_close(struct boot_counters *c)
{
  pthread_mutex_lock(&c->mu);
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  c->failed = 1;
  pthread_mutex_unlock(&c->mu);
}
