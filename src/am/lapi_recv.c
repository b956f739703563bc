/*
 * lapi_recv.c - the LAPI meaning of an arrival, shared by every transport.
 *
 * Header handler protocol (LAPI_Amsend / LAPI_Amsendv):
 *  - hdr_hdl below LOC_ADDRTBL_SZ names a LAPI_Addr_set slot of the
 *    target handle, anything else is the handler's address; an empty
 *    slot is reported as LAPI_ERR_HDR_HNDLR_NULL to the error handler.
 *  - Amsend: the handler gets (hndl, uhdr, &uhdr_len, &ri.msg_len,
 *    &comp_h, &uinfo) where ri is a lapi_return_info_t (msg_len, MAGIC,
 *    src, udata_one_pkt_ptr).  It returns the buffer for msg_len bytes;
 *    NULL or ctl_flags = LAPI_BURY_MSG discards the data and the message
 *    completes; LAPI_DROP_PKT asks for the message to come again later.
 *  - Amsendv: the vhdr handler gets len_vec and returns a target vector.
 *    NULL discards the data.  The vector must pass lapi_vec_check_target
 *    and fit the origin (lapi_vec_check_pair); if not, the error handler
 *    gets the code with err_type AM_ERR, nothing is written, and the
 *    message ends there: no completion handler, no tgt_cntr, no
 *    cmpl_cntr; only org_cntr moves (the origin's memory is free again).
 * Then the data lands, then the completion handler (if any), then
 * tgt_cntr; at the origin, cmpl_cntr after that point.
 */
#include <stdlib.h>
#include <string.h>

#include "am/lapi_am.h"
#include "vec/lapi_vec.h"

static void *resolve(struct lapi_hndl *h, uint64_t hdr_hdl)
{
  if (hdr_hdl < LAPI_AM_ADDRTBL_SZ)
    return hdr_hdl ? __atomic_load_n(&h->addr_tbl[hdr_hdl], __ATOMIC_ACQUIRE)
                   : NULL;
  return lapi_addr_ptr(hdr_hdl);
}

static void header_amsend(struct lapi_am_msg *m, struct lapi_am_dest *d,
                          hdr_hndlr_t *fn)
{
  lapi_handle_t hv = m->h->index;
  uint uhdr_len = m->uhdr_len;
  lapi_return_info_t ri;
  memset(&ri, 0, sizeof ri);
  ri.msg_len = m->msg_len;
  ri.MAGIC = LAPI_AM_MAGIC;
  ri.ret_flags = LAPI_NORMAL;
  ri.ctl_flags = LAPI_DELIVER_MSG;
  ri.src = m->src;
  ri.udata_one_pkt_ptr = m->one_pkt;

  void *buf = fn(&hv, m->uhdr, &uhdr_len, &ri.msg_len, &d->comp_h,
                 &d->uinfo);
  d->ret_flags = ri.ret_flags;
  if (ri.ctl_flags == LAPI_DROP_PKT) {
    d->action = LAPI_AM_RETRY;
  } else if (ri.ctl_flags == LAPI_BURY_MSG || buf == NULL ||
             m->msg_len == 0) {
    d->action = LAPI_AM_DISCARD;
  } else {
    d->action = LAPI_AM_DELIVER;
    d->buf = buf;
    d->bytes = m->msg_len;
  }
}

static void header_amsendv(struct lapi_am_msg *m, struct lapi_am_dest *d,
                           vhdr_hndlr_t *fn)
{
  lapi_handle_t hv = m->h->index;
  uint uhdr_len = m->uhdr_len;
  lapi_vec_t *tv = fn(&hv, m->uhdr, &uhdr_len, m->len_vec, &d->comp_h,
                      &d->uinfo);
  if (tv == NULL) {
    d->action = LAPI_AM_DISCARD;
    return;
  }
  int rc = lapi_vec_check_target(tv);
  if (rc == LAPI_SUCCESS)
    rc = lapi_vec_check_pair(m->org_shape, tv);
  if (rc != LAPI_SUCCESS) {
    char why[256];
    lapi_vec_explain(rc, m->org_shape, tv, why, sizeof why);
    d->action = LAPI_AM_FAILED;
    d->error = rc;
    LAPI_ASYNC_ERROR(m->h, rc, AM_ERR, m->src,
                     "LAPI_Amsendv from task %d: the vector returned by the "
                     "header handler does not fit the origin's (%s); the "
                     "message is dropped", m->src, why);
    return;
  }
  d->vec = tv;
  d->bytes = lapi_vec_pair_bytes(m->org_shape, tv);
  d->action = d->bytes ? LAPI_AM_DELIVER : LAPI_AM_DISCARD;
}

void lapi_am_recv_header(struct lapi_am_msg *m, struct lapi_am_dest *d)
{
  memset(d, 0, sizeof *d);
  void *fn = resolve(m->h, m->hdr_hdl);
  if (fn == NULL) {
    d->action = LAPI_AM_FAILED;
    d->error = LAPI_ERR_HDR_HNDLR_NULL;
    LAPI_ASYNC_ERROR(m->h, LAPI_ERR_HDR_HNDLR_NULL, AM_ERR, m->src,
                     "active message from task %d: no header handler is "
                     "registered under index %llu of handle %u; the "
                     "message is dropped", m->src,
                     (unsigned long long)m->hdr_hdl, m->h->index);
    return;
  }
  if (m->org_shape == NULL)
    header_amsend(m, d, (hdr_hndlr_t *)fn);
  else
    header_amsendv(m, d, (vhdr_hndlr_t *)fn);
  LAPI_LOG(LAPI_LOG_TRACE, "AM from task %d, %zu bytes: %s", m->src,
           m->msg_len,
           d->action == LAPI_AM_DELIVER   ? "deliver"
           : d->action == LAPI_AM_DISCARD ? "discard"
           : d->action == LAPI_AM_RETRY   ? "retry"
                                          : "failed");
}

void lapi_am_recv_complete(struct lapi_am_msg *m, struct lapi_am_dest *d)
{
  if (d->comp_h) {
    lapi_handle_t hv = m->h->index;
    d->comp_h(&hv, d->uinfo);
  }
  if (m->tgt_cntr)
    lapi_cntr_bump(lapi_addr_ptr(m->tgt_cntr), m->src);
  /* Not a locked add: every writer is a run of one of h's items, under
   * h's lock (handlers of a handle run one at a time); LAPI_Msgpoll
   * only reads it. */
  __atomic_store_n(&m->h->recvs_done,
                   __atomic_load_n(&m->h->recvs_done, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------- origin */

void lapi_am_origin_landed(struct lapi_hndl *h)
{
  lapi_am_origin_landed_n(h, 1);
}

void lapi_am_origin_landed_n(struct lapi_hndl *h, long n)
{
  if (__atomic_sub_fetch(&h->outstanding, n, __ATOMIC_SEQ_CST) == 0) {
    lapi_bell_ring_waiters(); /* a LAPI_Fence may be waiting */
    lapi_hndl_notify(h);
  }
}

void lapi_am_origin_sent(struct lapi_hndl *h, uint tgt, lapi_cntr_t *org_cntr,
                         scompl_hndlr_t *shdlr, void *sinfo, int reason)
{
  if (shdlr) {
    lapi_handle_t hv = h->index;
    lapi_sh_info_t info;
    memset(&info, 0, sizeof info);
    info.src = tgt;
    info.reason = (uint)reason;
    shdlr(&hv, sinfo, &info);
  }
  if (org_cntr)
    lapi_cntr_bump(org_cntr, (int)tgt);
  __atomic_add_fetch(&h->sends_done, 1, __ATOMIC_RELEASE);
}

void lapi_am_origin_done(struct lapi_hndl *h, uint tgt,
                         lapi_cntr_t *cmpl_cntr)
{
  (void)h;
  if (cmpl_cntr)
    lapi_cntr_bump(cmpl_cntr, (int)tgt);
}

/* ----------------------------------------------- one-sided completions */

struct notify_item {
  struct lapi_item it; /* first */
  struct lapi_hndl *h;
  struct lapi_am_notify n;
  int failed;          /* lapi_am_notify_fail: the send handler alone */
  int reason;
};

static void notify_run(struct lapi_item *it)
{
  struct notify_item *ni = (struct notify_item *)it;
  struct lapi_am_notify *n = &ni->n;
  if (ni->failed) {
    lapi_am_origin_sent(ni->h, n->tgt, n->org_cntr, n->shdlr, n->sinfo,
                        ni->reason);
    free(ni);
    return;
  }
  if (n->chndlr) {
    lapi_handle_t hv = ni->h->index;
    n->chndlr(&hv, n->cinfo);
  }
  lapi_am_origin_sent(ni->h, n->tgt, n->org_cntr, n->shdlr, n->sinfo,
                      LAPI_SUCCESS);
  lapi_am_origin_done(ni->h, n->tgt, n->cmpl_cntr);
  free(ni);
}

int lapi_am_notify_reserve(struct lapi_am_notify *n)
{
  n->item = NULL;
  if (n->shdlr == NULL && n->chndlr == NULL)
    return LAPI_SUCCESS;
  struct notify_item *ni = malloc(sizeof *ni);
  if (ni == NULL)
    return LAPI_ERR_MEMORY_EXHAUSTED;
  n->item = &ni->it;
  return LAPI_SUCCESS;
}

void lapi_am_notify_fire(struct lapi_hndl *h, struct lapi_am_notify *n)
{
  if (n->item == NULL) {
    lapi_am_notify_fire_n(h, n, 1);
    return;
  }
  struct notify_item *ni = (struct notify_item *)n->item;
  ni->h = h;
  ni->n = *n;
  ni->failed = 0;
  ni->it.run = notify_run;
  ni->it.cancel = NULL; /* our own completion: never purged */
  ni->it.src = (int)n->tgt;
  lapi_am_post(h, &ni->it);
}

void lapi_am_notify_fail(struct lapi_hndl *h, struct lapi_am_notify *n,
                         int reason)
{
  if (n->shdlr == NULL) {
    lapi_am_origin_sent(h, n->tgt, n->org_cntr, NULL, NULL, reason);
    return;
  }
  /* Reserved with the send handler (lapi_am_notify_reserve); a caller
   * that did not reserve gets one now, or org_cntr without the handler. */
  struct notify_item *ni = (struct notify_item *)n->item;
  n->item = NULL;
  if (ni == NULL && (ni = malloc(sizeof *ni)) == NULL) {
    lapi_am_origin_sent(h, n->tgt, n->org_cntr, NULL, NULL, reason);
    return;
  }
  ni->h = h;
  ni->n = *n;
  ni->n.item = NULL;
  ni->failed = 1;
  ni->reason = reason;
  ni->it.run = notify_run;
  ni->it.cancel = NULL; /* our own completion: never purged */
  ni->it.src = (int)n->tgt;
  lapi_am_post(h, &ni->it);
}

void lapi_am_notify_fire_n(struct lapi_hndl *h, const struct lapi_am_notify *n,
                           int count)
{
  /* As lapi_am_origin_sent, then lapi_am_origin_done, count times. */
  if (n->org_cntr)
    lapi_cntr_add(n->org_cntr, (int)n->tgt, count);
  __atomic_add_fetch(&h->sends_done, (unsigned long)count, __ATOMIC_RELEASE);
  if (n->cmpl_cntr)
    lapi_cntr_add(n->cmpl_cntr, (int)n->tgt, count);
}

/* ---------------------------------------------------------- statistics */

void lapi_am_stat_sent(struct lapi_hndl *h, enum lapi_tp_id tp, size_t bytes)
{
  __atomic_add_fetch(&h->sent[tp].msgs, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&h->sent[tp].bytes, bytes, __ATOMIC_RELAXED);
}

void lapi_am_stat_recv(struct lapi_hndl *h, enum lapi_tp_id tp, size_t bytes)
{
  lapi_am_stat_recv_n(h, tp, 1, bytes);
}

void lapi_am_stat_recv_n(struct lapi_hndl *h, enum lapi_tp_id tp,
                         unsigned long msgs, size_t bytes)
{
  __atomic_add_fetch(&h->recv[tp].msgs, msgs, __ATOMIC_RELAXED);
  __atomic_add_fetch(&h->recv[tp].bytes, bytes, __ATOMIC_RELAXED);
}
