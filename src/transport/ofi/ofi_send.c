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
 * Eager data of at least LAPI_OFI_ZCOPY bytes in one piece is not packed
 * into the buffer: the packet goes as two pieces, the buffer's head and
 * the caller's memory (fi_sendv), and that memory is the caller's again
 * only when the buffer comes back (ofi_buf_put: an AM's org_cntr moves
 * then).  Over sockets the provider's send is itself a copy (the
 * kernel's), so packing first copied every byte twice on the origin's
 * CPU, the one a stream is bound by (docs/PERFORMANCE.md, "Session 20").
 * No free buffer and no memory for one never loses a packet either:
 * what must still be sent (a small packet, the DATA answering a PULL, a
 * transfer's first packet) is owed, in a record of its own, and done
 * again by ofi_send_retry; only when not even that record can be had is
 * the peer declared gone (LAPI_ERR_MEMORY_EXHAUSTED), which the error
 * handlers hear of and every transfer with it fails visibly.
 * Everything here runs under ofi.lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"

struct ofi_buf *ofi_buf_get(void)
{
  if (ofi_nomem_every && ofi_nomem_now())
    return NULL; /* test hook: as if memory ran out */
  return ofi_buf_take();
}

struct ofi_buf *ofi_buf_take(void)
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

/* A send from the caller's memory is over (sent, dropped with a failed
 * peer, or failed): the memory is the caller's again.  No send handler
 * rides here (zc_source, ofi_origin.c), so the status is not needed. */
static void zc_done(struct ofi_buf *b)
{
  if (b->zc_h)
    lapi_am_origin_sent(b->zc_h, b->zc_task, b->zc_org, NULL, NULL,
                        LAPI_SUCCESS);
  b->zc_data = NULL;
  b->zc_len = 0;
  b->zc_h = NULL;
  b->zc_org = NULL;
}

void ofi_buf_put(struct ofi_buf *b)
{
  if (b->zc_len)
    zc_done(b);
  b->next = ofi.free_bufs;
  ofi.free_bufs = b;
}

void ofi_hdr_init(struct ofi_hdr *hd, int type, uint16_t hndl, uint64_t id,
                  size_t len)
{
  memset(hd, 0, sizeof *hd);
  hd->magic = OFI_WIRE_MAGIC;
  hd->type = (uint8_t)type;
  hd->hndl = hndl;
  hd->src = ofi.me;
  hd->len = (uint32_t)len;
  hd->id = id;
}

void *ofi_pkt_init(struct ofi_buf *b, int type, uint16_t hndl, uint64_t id,
                   size_t len)
{
  memset(b->mem, 0, len < 64 ? len : 64);
  ofi_hdr_init((struct ofi_hdr *)b->mem, type, hndl, id, len);
  b->len = len;
  return b->mem;
}

/* Hand b to libfabric as it is.  0: it went, injected (*injected = 1:
 * the caller frees b) or sent (its completion frees it); else
 * -FI_EAGAIN or another libfabric error, and b is still the caller's. */
int ofi_post_raw(struct ofi_buf *b, int *injected)
{
  fi_addr_t a = ofi.peers[b->peer].addr;
  int rc;
  if (ofi.lane) {
    /* copied into the peer's ring: the buffer is free at once */
    rc = ofi_lane_push(b->peer, b->mem, b->len - b->zc_len, b->zc_data,
                       b->zc_len);
    if (rc <= 0) {
      *injected = 1;
      return rc;
    }
  }
  if (b->zc_len) {
    /* never injected: the caller's memory is read until the completion */
    struct iovec iov[2] = {{b->mem, b->len - b->zc_len},
                           {(void *)b->zc_data, b->zc_len}};
    void *desc[2] = {b->desc, NULL}; /* no FI_MR_LOCAL (ofi_fabric.c) */
    *injected = 0;
    rc = (int)fi_sendv(ofi.ep, iov, desc, 2, a, &b->c.fi);
  } else {
    *injected = b->len <= ofi.inject_size;
    if (*injected)
      return (int)fi_inject(ofi.ep, b->mem, b->len, a);
    rc = (int)fi_send(ofi.ep, b->mem, b->len, b->desc, a, &b->c.fi);
  }
  if (rc == 0) {
    ofi.tx_posted++;
    ofi.peers[b->peer].tx_posted++;
  }
  return rc;
}

/* 0 posted (or injected), -FI_EAGAIN, or another libfabric error. */
static int post(struct ofi_buf *b)
{
  uint peer = b->peer;
  /* The freshest acknowledgement rides on every packet (ofi_ack.c). */
  ofi_ack_stamp((struct ofi_hdr *)b->mem, peer);
  if (lapi_log_level() >= LAPI_LOG_TRACE) {
    const struct ofi_hdr *hd = (const struct ofi_hdr *)b->mem;
    LAPI_LOG(LAPI_LOG_TRACE, "ofi: send type %d to %u, %zu B, id %llx",
             hd->type, peer, b->len, (unsigned long long)hd->id);
  }
  int injected;
  int rc;
  if (__builtin_expect(ofi_dropnofin_at, 0) && ofi_dropnofin_now(b))
    rc = 0, injected = 1; /* the test hook: lost, as if sent */
  else
    rc = ofi_post_raw(b, &injected);
  if (rc == 0) {
    if (ofi_mangle_every)
      ofi_mangle_after(b);
    if (injected)
      ofi_buf_put(b);
  }
  /* posted, or -FI_EAGAIN until the peer makes progress (its queue is
   * full, or shm's first contact waits for it): wake it either way */
  ofi_bell_ring(peer);
  return rc;
}

/* The peer is declared gone later, by ofi_fail_pending: our callers
 * still hold transfers that the sweep of ofi_peer_fail would free. */
static void fail_later(uint peer, int code, const char *why)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (p->failed || p->fail_pending)
    return;
  p->fail_pending = code;
  snprintf(p->fail_why, sizeof p->fail_why, "%s", why);
  ofi.fail_pending = 1;
  ofi_kick();
}

static void send_failed(struct ofi_buf *b, int rc)
{
  char why[96];
  snprintf(why, sizeof why, "a send failed: %s", fi_strerror(-rc));
  uint peer = b->peer;
  ofi_buf_put(b);
  fail_later(peer, LAPI_ERR_SEND_INCOMP, why);
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
  ofi_kick_unpolled();
}

/* ------------------------------------------------------ owed work */

enum { OWED_SEND = 1, OWED_PULL, OWED_LAUNCH, OWED_NAK, OWED_UNKNOWN };

/* Work that found no packet buffer; small (a control packet or a PULL
 * fits), kept on ofi.owed_spare once done. */
struct ofi_owed {
  struct ofi_owed *next;
  int kind;
  uint peer;
  uint64_t xid;              /* OWED_LAUNCH: the transfer */
  size_t len;
  unsigned char pkt[80] __attribute__((aligned(8)));
};
_Static_assert(sizeof(struct ofi_pull) <= 80 && sizeof(struct ofi_fin) <= 80 &&
                   sizeof(struct ofi_rmw_reply) <= 80 &&
                   sizeof(struct ofi_nak) <= 80 &&
                   sizeof(struct ofi_ask) <= 80 &&
                   sizeof(struct ofi_data) + sizeof(struct ofi_data_ref) <=
                       80,
               "an owed packet must fit struct ofi_owed's pkt");

/* What owe() does with work it finds no record for. */
enum {
  OWE_KEEP,     /* the peer fails: a packet to it would be lost */
  OWE_DROP,     /* dropped: the peer asks for it again (an UNKNOWN) */
  OWE_DROP_HOOK /* the same, and the OWED_NOMEM test hook may fail it */
};

/* Puts the work at the tail of the owed list: 0.  1: the peer is gone
 * (its transfers fail with it), nothing owed.  -1: no record to keep it
 * in; the peer fails unless nomem says the work may be dropped. */
static int owe(int kind, uint peer, const void *pkt, size_t len,
               uint64_t xid, int nomem)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (p->failed || p->fail_pending)
    return 1;
  struct ofi_owed *o;
  if (nomem == OWE_DROP_HOOK && ofi_owednomem_at && ofi_owednomem_now(peer))
    o = NULL; /* test hook: as if no spare were left and malloc failed */
  else if ((o = ofi.owed_spare) != NULL)
    ofi.owed_spare = o->next;
  else
    o = malloc(sizeof *o);
  if (o == NULL || len > sizeof o->pkt) {
    free(o);
    if (nomem == OWE_KEEP)
      fail_later(peer, LAPI_ERR_MEMORY_EXHAUSTED,
                 "out of memory: a packet to it could not be sent");
    return -1;
  }
  o->next = NULL;
  o->kind = kind;
  o->peer = peer;
  o->xid = xid;
  o->len = len;
  if (len)
    memcpy(o->pkt, pkt, len);
  if (ofi.owed_tail)
    ofi.owed_tail->next = o;
  else
    ofi.owed_head = o;
  ofi.owed_tail = o;
  p->owed++;
  ofi_kick_unpolled(); /* the progress thread tries again soon */
  return 0;
}

void ofi_owe_pull(const struct ofi_pull *p)
{
  (void)owe(OWED_PULL, p->h.src, p, sizeof *p, 0, OWE_KEEP);
}

void ofi_owe_launch(struct ofi_xfer *x)
{
  (void)owe(OWED_LAUNCH, x->peer, NULL, 0, x->id, OWE_KEEP);
}

void ofi_owe_nak(uint peer, const struct ofi_nak *n)
{
  (void)owe(OWED_NAK, peer, n, sizeof *n, 0, OWE_KEEP);
}

/* Behind every packet owed to peer now: the answer the ASK is about (a
 * FIN, a GET's or an RMW's reply, the DATA answering the PULLs before
 * an ASK DATA) is among them if it is owed.  An older one about the same
 * transfer of the asker is voided: the newer says as much, later (and an
 * ASK DATA's would echo an ask number the sink no longer keeps).  Owed
 * again (again): its record is the spare its turn just gave back, so
 * only one an ASK's handler owes can find none (and meet the hook). */
static void owe_unknown(uint peer, const struct ofi_ask *u, int again)
{
  int rc = owe(OWED_UNKNOWN, peer, u, sizeof *u, u->h.id,
               again ? OWE_DROP : OWE_DROP_HOOK);
  if (rc != 0) {
    if (rc < 0) {
      ofi.st.unknowns--; /* out of memory: the asker asks again */
      ofi.st.unknowns_dropped++;
    }
    return;
  }
  for (struct ofi_owed *o = ofi.owed_head; o != ofi.owed_tail; o = o->next)
    if (o->kind == OWED_UNKNOWN && o->peer == peer && o->xid == u->h.id) {
      o->kind = 0; /* its turn does nothing (counted owed till then) */
      ofi.st.unknowns--; /* never sent: the newer one stands for it */
    }
}

void ofi_owe_unknown(uint peer, const struct ofi_ask *u)
{
  owe_unknown(peer, u, 0);
}

/* Owed again in this pass (ofi.owed_head holds what was): something to
 * peer still waits for a buffer. */
static int owed_again(uint peer)
{
  for (const struct ofi_owed *o = ofi.owed_head; o; o = o->next)
    if (o->peer == peer)
      return 1;
  return 0;
}

/* Each owed item once, in order; what still finds no buffer is owed
 * again (from the spare records: no allocation). */
static void owed_retry(void)
{
  struct ofi_owed *o = ofi.owed_head;
  ofi.owed_head = ofi.owed_tail = NULL;
  while (o) {
    struct ofi_owed *next = o->next;
    struct ofi_peer *p = &ofi.peers[o->peer];
    p->owed--;
    o->next = ofi.owed_spare;
    ofi.owed_spare = o; /* its bytes stay valid until the next owe */
    if (!p->failed && !p->fail_pending) {
      struct ofi_xfer *x;
      switch (o->kind) {
      case OWED_SEND: {
        unsigned char pkt[sizeof o->pkt] __attribute__((aligned(8)));
        memcpy(pkt, o->pkt, o->len);
        ofi_send_small(o->peer, pkt, o->len);
        break;
      }
      case OWED_NAK: {
        struct ofi_nak nak;
        memcpy(&nak, o->pkt, sizeof nak);
        if (ofi_nak_post(o->peer, &nak) != 0)
          ofi_owe_nak(o->peer, &nak);
        break;
      }
      case OWED_PULL: {
        struct ofi_pull pull;
        memcpy(&pull, o->pkt, sizeof pull);
        ofi_on_pull(&pull);
        break;
      }
      case OWED_LAUNCH:
        x = ofi_xfer_find(o->xid);
        if (x && !x->failed)
          ofi_relaunch(x);
        break;
      case OWED_UNKNOWN: {
        /* Everything owed to the peer before it went ahead of it in this
         * pass: sent (posted, or queued in order for a retry) unless it
         * is owed again, and then so is this, behind it. */
        struct ofi_ask u;
        memcpy(&u, o->pkt, sizeof u);
        if (owed_again(o->peer))
          owe_unknown(o->peer, &u, 1);
        else
          ofi_send_small(o->peer, &u, sizeof u);
        break;
      }
      default:
        break;
      }
    }
    o = next;
  }
}

void ofi_owed_free(void)
{
  if (ofi.peers)
    for (uint t = 0; t < ofi.ntasks; t++)
      ofi.peers[t].owed = 0;
  while (ofi.owed_head) {
    struct ofi_owed *o = ofi.owed_head;
    ofi.owed_head = o->next;
    free(o);
  }
  ofi.owed_tail = NULL;
  while (ofi.owed_spare) {
    struct ofi_owed *o = ofi.owed_spare;
    ofi.owed_spare = o->next;
    free(o);
  }
}

void ofi_send_retry(void)
{
  static unsigned pass;
  if (ofi.owed_head)
    owed_retry();
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
  if (b == NULL) {
    (void)owe(OWED_SEND, peer, pkt, len, 0, OWE_KEEP);
    return ofi.peers[peer].fail_pending ? LAPI_ERR_MEMORY_EXHAUSTED
                                        : LAPI_SUCCESS;
  }
  memcpy(b->mem, pkt, len);
  b->len = len;
  ofi_send(b, peer, 0);
  return LAPI_SUCCESS;
}
