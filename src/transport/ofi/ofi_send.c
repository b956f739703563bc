/*
 * ofi_send.c - packet buffers and sends.
 *
 * A packet is built in a buffer of ofi.buf_size bytes taken from a free
 * list (grown on demand, registered when the provider wants FI_MR_LOCAL)
 * and given to ofi_send(), which injects it (up to inject_size: the
 * buffer is free at once) or posts it (free at its completion).
 * -FI_EAGAIN never loses a packet: it joins the retry queue, which keeps
 * the order of sends to each peer (a packet waits behind earlier ones to
 * the same peer only, so a peer that stopped answering does not hold up
 * the others), and the progress thread (woken if asleep) posts it again
 * after reading the CQ.  Every packet is stamped, when it is posted, with
 * the freshest acknowledgement counts for its peer (ofi_ack.c).
 * Everything here runs under ofi.lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"

struct ofi_buf *ofi_buf_get(void)
{
  struct ofi_buf *b = ofi.free_bufs;
  if (b) {
    ofi.free_bufs = b->next;
    b->next = NULL;
    return b;
  }
  b = calloc(1, sizeof *b);
  if (b == NULL)
    return NULL;
  b->mem = aligned_alloc(64, (ofi.buf_size + 63) & ~(size_t)63);
  if (b->mem == NULL) {
    free(b);
    return NULL;
  }
  if (ofi.mr_mode & FI_MR_LOCAL) {
    if (ofi_mr_reg(b->mem, ofi.buf_size, FI_SEND, &b->mr)) {
      free(b->mem);
      free(b);
      return NULL;
    }
    b->desc = fi_mr_desc(b->mr);
  }
  b->c.kind = OFI_C_SEND;
  return b;
}

void ofi_buf_put(struct ofi_buf *b)
{
  b->next = ofi.free_bufs;
  ofi.free_bufs = b;
}

void *ofi_pkt_init(struct ofi_buf *b, int type, uint16_t hndl, uint64_t id,
                   size_t len)
{
  struct ofi_hdr *hd = (struct ofi_hdr *)b->mem;
  memset(b->mem, 0, len < 64 ? len : 64);
  hd->magic = OFI_WIRE_MAGIC;
  hd->type = (uint8_t)type;
  hd->hndl = hndl;
  hd->src = ofi.me;
  hd->len = (uint32_t)len;
  hd->id = id;
  b->len = len;
  return b->mem;
}

/* 0 posted (or injected), -FI_EAGAIN, or another libfabric error. */
static int post(struct ofi_buf *b)
{
  fi_addr_t a = ofi.peers[b->peer].addr;
  int rc;
  /* The freshest acknowledgement rides on every packet (ofi_ack.c). */
  ofi_ack_stamp((struct ofi_hdr *)b->mem, b->peer);
  if (lapi_log_level() >= LAPI_LOG_TRACE) {
    const struct ofi_hdr *hd = (const struct ofi_hdr *)b->mem;
    LAPI_LOG(LAPI_LOG_TRACE, "ofi: send type %d to %u, %zu B, id %llx",
             hd->type, b->peer, b->len, (unsigned long long)hd->id);
  }
  if (b->len <= ofi.inject_size) {
    uint peer = b->peer;
    rc = (int)fi_inject(ofi.ep, b->mem, b->len, a);
    if (rc == 0)
      ofi_buf_put(b);
    /* posted, or -FI_EAGAIN until the peer makes progress (its queue is
     * full, or shm's first contact waits for it): wake it either way */
    ofi_bell_ring(peer);
    return rc;
  }
  rc = (int)fi_send(ofi.ep, b->mem, b->len, b->desc, a, &b->c.fi);
  if (rc == 0) {
    ofi.tx_posted++;
    ofi.peers[b->peer].tx_posted++;
  }
  ofi_bell_ring(b->peer);
  return rc;
}

/* The peer is declared gone later, by ofi_fail_pending: our callers
 * still hold transfers that the sweep of ofi_peer_fail would free. */
static void send_failed(struct ofi_buf *b, int rc)
{
  struct ofi_peer *p = &ofi.peers[b->peer];
  ofi_buf_put(b);
  if (p->failed || p->fail_pending)
    return;
  p->fail_pending = LAPI_ERR_SEND_INCOMP;
  snprintf(p->fail_why, sizeof p->fail_why, "a send failed: %s",
           fi_strerror(-rc));
  ofi.fail_pending = 1;
  ofi_kick();
}

void ofi_fail_pending(void)
{
  if (!ofi.fail_pending)
    return;
  ofi.fail_pending = 0;
  for (uint t = 0; t < ofi.ntasks; t++) {
    struct ofi_peer *p = &ofi.peers[t];
    if (p->fail_pending) {
      int code = p->fail_pending;
      p->fail_pending = 0;
      ofi_peer_fail(t, code, p->fail_why);
    }
  }
}

void ofi_send(struct ofi_buf *b, uint peer, uint64_t xfer)
{
  b->peer = peer;
  b->xfer = xfer;
  b->next = NULL;
  if (ofi.peers[peer].failed || ofi.peers[peer].fail_pending) {
    ofi_buf_put(b); /* the transfer was failed with the peer */
    return;
  }
  int rc = ofi.peers[peer].queued ? -FI_EAGAIN : post(b);
  if (rc == 0)
    return;
  if (rc != -FI_EAGAIN) {
    send_failed(b, rc);
    return;
  }
  ofi.st.eagain++;
  ofi.peers[peer].queued++;
  if (ofi.retry_tail)
    ofi.retry_tail->next = b;
  else
    ofi.retry_head = b;
  ofi.retry_tail = b;
  ofi_kick();
}

void ofi_send_retry(void)
{
  static unsigned pass;
  pass++;
  struct ofi_buf **pp = &ofi.retry_head;
  ofi.retry_tail = NULL;
  while (*pp) {
    struct ofi_buf *b = *pp;
    struct ofi_peer *p = &ofi.peers[b->peer];
    struct ofi_buf *next = b->next; /* an inject frees b at once */
    int rc;
    if (p->failed || p->fail_pending) {
      rc = 1; /* drop: the transfer failed with its peer */
    } else if (p->blocked_pass == pass) {
      rc = -FI_EAGAIN; /* an earlier packet to it is still waiting */
    } else {
      rc = post(b);
      if (rc == -FI_EAGAIN)
        p->blocked_pass = pass;
    }
    if (rc == -FI_EAGAIN) {
      ofi.retry_tail = b;
      pp = &b->next;
      continue;
    }
    *pp = next;
    p->queued--;
    if (rc == 1)
      ofi_buf_put(b);
    else if (rc != 0)
      send_failed(b, rc);
  }
}

int ofi_send_small(uint peer, const void *pkt, size_t len)
{
  struct ofi_buf *b = ofi_buf_get();
  if (b == NULL)
    return LAPI_ERR_MEMORY_EXHAUSTED;
  memcpy(b->mem, pkt, len);
  b->len = len;
  ofi_send(b, peer, 0);
  return LAPI_SUCCESS;
}
