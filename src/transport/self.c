/*
 * self.c - the loopback transport: the target is the calling task.
 *
 * Active messages are not run on the sender: LAPI_Amsend queues one item
 * (the user header copied in, the data left in place) on the handle's
 * inbound queue, and the MPE (dispatcher or polling thread) runs the
 * header handler, copies the data straight from the origin buffer into
 * the buffer or vector it returned (one copy, no staging), then bumps the
 * counters in LAPI order.  The origin buffers therefore stay in use until
 * org_cntr moves, as LAPI allows.
 *
 * Puts, gets and read-modify-writes need no handler: they are done on
 * the caller's thread (memmove, lapi_vec_copy, __atomic builtins) and
 * only a LAPI_Xfer completion handler, if any, goes to the MPE.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "am/lapi_am.h"
#include "bulk_copy.h"
#include "vec/lapi_vec.h"

#define SELF_MAX_PKT 65536

struct self_am {
  struct lapi_item it; /* first */
  struct lapi_hndl *h; /* origin and target: the same instance */
  struct lapi_am_msg msg;
  const void *udata;
  const lapi_vec_t *org_vec;
  lapi_cntr_t *org_cntr;
  lapi_cntr_t *cmpl_cntr;
  scompl_hndlr_t *shdlr;
  void *sinfo;
  uint tgt;
  ulong strided_len[3]; /* len_vec of a strided Amsendv */
  unsigned char uhdr[] __attribute__((aligned(16)));
};

static void self_am_run(struct lapi_item *it)
{
  struct self_am *s = (struct self_am *)it;
  struct lapi_am_dest d;
  lapi_am_recv_header(&s->msg, &d);
  if (d.action == LAPI_AM_RETRY) {
    lapi_am_post(s->h, it); /* LAPI_DROP_PKT: "retransmit" */
    return;
  }
  size_t moved = 0;
  if (d.action == LAPI_AM_DELIVER) {
    if (s->org_vec)
      moved = lapi_vec_copy(s->org_vec, d.vec);
    else
      bulk_move(d.buf, s->udata, moved = d.bytes);
  }
  if (d.action != LAPI_AM_FAILED)
    lapi_am_stat_recv(s->h, LAPI_TP_SELF, moved);
  lapi_am_origin_landed(s->h);
  lapi_am_origin_sent(s->h, s->tgt, s->org_cntr, s->shdlr, s->sinfo,
                      d.action == LAPI_AM_FAILED ? d.error : LAPI_SUCCESS);
  if (d.action != LAPI_AM_FAILED) {
    lapi_am_recv_complete(&s->msg, &d);
    lapi_am_origin_done(s->h, s->tgt, s->cmpl_cntr);
  }
  free(s);
}

/* LAPI_Purge_totask: never delivered.  The origin's memory is free again
 * (org_cntr); a send completion handler is not run here, on the purging
 * thread, since handlers run only in MPE context. */
static void self_am_cancel(struct lapi_item *it)
{
  struct self_am *s = (struct self_am *)it;
  lapi_am_origin_landed(s->h);
  lapi_am_origin_sent(s->h, s->tgt, s->org_cntr, NULL, NULL,
                      LAPI_ERR_TGT_PURGED);
  free(s);
}

static int self_am_send(struct lapi_hndl *h, const struct lapi_tp_am *am)
{
  lapi_am_throttle(h);
  struct self_am *s = malloc(sizeof *s + am->uhdr_len);
  if (s == NULL)
    return LAPI_ERR_MEMORY_EXHAUSTED;
  if (am->uhdr_len)
    memcpy(s->uhdr, am->uhdr, am->uhdr_len);
  s->h = h;
  s->udata = am->udata;
  s->org_vec = am->org_vec;
  s->org_cntr = am->org_cntr;
  s->cmpl_cntr = am->cmpl_cntr;
  s->shdlr = am->shdlr;
  s->sinfo = am->sinfo;
  s->tgt = am->tgt;

  struct lapi_am_msg *m = &s->msg;
  memset(m, 0, sizeof *m);
  m->h = h; /* handle instance k talks to instance k */
  m->src = (int)h->task_id;
  m->hdr_hdl = am->hdr_hdl;
  m->uhdr = am->uhdr_len ? s->uhdr : NULL;
  m->uhdr_len = am->uhdr_len;
  m->tgt_cntr = am->tgt_cntr;
  if (am->org_vec) {
    const lapi_vec_t *v = am->org_vec;
    m->org_shape = v;
    m->msg_len = lapi_vec_bytes(v);
    if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
      /* [0] the length of every block, [1] and [2] as info[1], info[2]. */
      size_t block = v->num_vecs ? lapi_vec_stride_block(v) : 0;
      s->strided_len[0] = s->strided_len[1] = block;
      s->strided_len[2] = v->num_vecs ? lapi_vec_stride_pitch(v) : 0;
      m->len_vec = s->strided_len;
    } else {
      m->len_vec = v->len;
    }
  } else {
    m->msg_len = am->udata_len;
    m->one_pkt = (void *)am->udata;
  }
  s->it.run = self_am_run;
  s->it.cancel = self_am_cancel;
  s->it.src = (int)h->task_id;
  lapi_am_post(h, &s->it);
  return LAPI_SUCCESS;
}

static int self_put(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  struct lapi_am_notify n = {
    .tgt = op->tgt, .shdlr = op->shdlr, .sinfo = op->sinfo,
    .org_cntr = op->org_cntr, .cmpl_cntr = op->cmpl_cntr,
  };
  int rc = lapi_am_notify_reserve(&n);
  if (rc)
    return rc;
  size_t moved;
  if (op->org_vec) {
    moved = lapi_vec_copy(op->org_vec, op->tgt_vec);
  } else {
    if (op->len) /* a zero-byte Put may name NULL buffers */
      bulk_move(lapi_addr_ptr(op->tgt_addr), op->org_addr, op->len);
    moved = op->len;
  }
  lapi_am_stat_recv(h, LAPI_TP_SELF, moved);
  if (op->tgt_cntr)
    lapi_cntr_bump(lapi_addr_ptr(op->tgt_cntr), (int)h->task_id);
  lapi_am_notify_fire(h, &n);
  return LAPI_SUCCESS;
}

static int self_get(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  struct lapi_am_notify n = {
    .tgt = op->tgt, .chndlr = op->chndlr, .cinfo = op->cinfo,
    .org_cntr = op->org_cntr,
  };
  int rc = lapi_am_notify_reserve(&n);
  if (rc)
    return rc;
  size_t moved;
  if (op->org_vec) {
    /* The bytes flow from the target's vector into the origin's. */
    moved = lapi_vec_copy(op->tgt_vec, op->org_vec);
  } else {
    if (op->len)
      bulk_move(op->org_addr, lapi_addr_ptr(op->tgt_addr), op->len);
    moved = op->len;
  }
  lapi_am_stat_recv(h, LAPI_TP_SELF, moved);
  if (op->tgt_cntr)
    lapi_cntr_bump(lapi_addr_ptr(op->tgt_cntr), (int)h->task_id);
  lapi_am_notify_fire(h, &n);
  return LAPI_SUCCESS;
}

static int self_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op)
{
  struct lapi_am_notify n = {
    .tgt = op->tgt, .shdlr = op->shdlr, .sinfo = op->sinfo,
    .org_cntr = op->org_cntr,
  };
  int rc = lapi_am_notify_reserve(&n);
  if (rc)
    return rc;
  long long in[2];
  lapi_rmw_operands(op, in);
  lapi_rmw_store_prev(op->prev, op->size,
                      lapi_rmw_apply(lapi_addr_ptr(op->tgt_var), op->size,
                                     op->op, in[0], in[1]));
  lapi_am_stat_recv(h, LAPI_TP_SELF, (size_t)op->size);
  lapi_am_notify_fire(h, &n);
  return LAPI_SUCCESS;
}

static void self_caps(struct lapi_tp_caps *caps)
{
  caps->max_eager = SIZE_MAX; /* the data is read where it lies */
  caps->max_pkt = SELF_MAX_PKT;
  caps->max_iov = UINT32_MAX;
  caps->strided = 1;
  caps->atomics = 1;
}

const struct lapi_tp_ops lapi_tp_self = {
  .name = "self",
  .id = LAPI_TP_SELF,
  .init = lapi_tp_no_init,
  .fini = lapi_tp_no_fini,
  .caps = self_caps,
  .am_send = self_am_send,
  .put = self_put,
  .get = self_get,
  .rmw = self_rmw,
  .progress = lapi_tp_no_progress, /* everything is posted, nothing polled */
  .tight = lapi_tp_no_tight, /* no network to poll */
  .flush = lapi_tp_no_flush, /* completions are always reported */
  .sync = lapi_tp_no_sync,   /* done when the call returns */
};
