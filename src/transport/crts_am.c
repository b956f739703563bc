/*
 * crts_am.c - active messages between the tasks of a core group.
 *
 * Origin (any thread acting for the origin task): check the request, copy
 * the user header into the op, count the op as pending on the target
 * handle (so the target's LAPI_Term waits for it) and push it.
 *
 * MPE, under the target handle's lock, in the target task's context:
 *   header handler -> check the buffer or vector it returned (LDM rules)
 *   -> the engines move every origin/target segment pair -> the origin's
 *   memory is free: org_cntr (after a LAPI_Xfer send completion handler,
 *   run at the origin) -> completion handler -> tgt_cntr -> cmpl_cntr.
 * The order is the loopback's.  A header handler that asks for the message
 * again (LAPI_DROP_PKT) gets it again later; a returned buffer that breaks
 * the LDM rules goes to the error handler, and the message is dropped as
 * for a vector that does not fit (only org_cntr moves).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/lapi_cpe.h"
#include "transport/crts_tp.h"
#include "vec/lapi_vec.h"

/* cmpl_cntr after the origin's send completion handler (queued behind it
 * on the origin handle, so the order of the counters is kept). */
static void cmpl_run(struct lapi_item *it)
{
  struct crts_op *op = (struct crts_op *)((char *)it -
                                          offsetof(struct crts_op, cmpl_item));
  lapi_am_origin_done(op->org, op->tgt_task, op->cmpl_cntr);
  crts_tp_op_free(op);
}

/* The origin's memory is no longer read: the send completion handler (at
 * the origin, in MPE context) and org_cntr. */
static void origin_free(struct crts_op *op, int reason)
{
  lapi_am_origin_landed(op->org);
  if (op->sent_item) {
    op->note.item = op->sent_item;
    lapi_am_notify_fire(op->org, &op->note);
    op->sent_item = NULL;
  } else {
    lapi_am_origin_sent(op->org, op->tgt_task, op->org_cntr, NULL, NULL,
                        reason);
  }
}

/* The end of a delivered (or discarded) message at the origin. */
static void origin_end(struct crts_op *op)
{
  if (op->shdlr) { /* after the handler's item, on the same queue */
    op->cmpl_item.run = cmpl_run;
    op->cmpl_item.cancel = NULL;
    op->cmpl_item.src = (int)op->tgt_task;
    lapi_am_post(op->org, &op->cmpl_item);
    return;
  }
  lapi_am_origin_done(op->org, op->tgt_task, op->cmpl_cntr);
  crts_tp_op_free(op);
}

/* A buffer or vector returned by the header handler must be usable by the
 * MPE; else the error handler hears of it and nothing is written. */
static int check_dest(struct crts_op *op, struct lapi_am_dest *d)
{
  char why[256];
  struct lapi_hndl *t = op->tgt;
  int rc = d->vec ? crts_tp_check_vec(d->vec, t->cg_tasks, CRTS_SIDE_TGT, 0,
                                      -1, -1, why, sizeof why)
                  : crts_tp_check_buf(d->buf, d->bytes, t->cg_tasks,
                                      CRTS_SIDE_TGT, why, sizeof why);
  if (rc == LAPI_SUCCESS)
    return 1;
  d->action = LAPI_AM_FAILED;
  d->error = rc;
  LAPI_ASYNC_ERROR(t, rc, AM_ERR, op->msg.src,
                   "active message from task %d: the header handler "
                   "returned memory the core group's engines cannot "
                   "write: %s; the message is dropped", op->msg.src, why);
  return 0;
}

static void am_run(struct lapi_item *it)
{
  struct crts_op *op = (struct crts_op *)it;
  struct lapi_am_dest d;
  lapi_am_recv_header(&op->msg, &d);
  if (d.action == LAPI_AM_RETRY) {
    lapi_am_post(op->tgt, it); /* LAPI_DROP_PKT: deliver again later */
    return;
  }
  size_t moved = 0;
  if (d.action == LAPI_AM_DELIVER && check_dest(op, &d)) {
    if (op->org_vec)
      moved = crts_tp_move(op->org_vec, d.vec, CRTS_XLATE_NONE, -1, -1,
                           "LAPI_Amsendv");
    else
      moved = crts_tp_move_buf(d.buf, op->udata, d.bytes, "LAPI_Amsend");
  }
  int failed = d.action == LAPI_AM_FAILED;
  if (!failed)
    lapi_am_stat_recv(op->tgt, LAPI_TP_CRTS, moved);
  origin_free(op, failed ? d.error : LAPI_SUCCESS);
  if (failed) { /* no completion: cmpl_cntr stays */
    crts_tp_op_free(op);
    return;
  }
  lapi_am_recv_complete(&op->msg, &d);
  /* The target is marked when the item ends (lapi_ctx_leave). */
  if (op->org_cntr || op->cmpl_cntr)
    lapi_cpe_served(op->org);
  else
    lapi_cpe_landed(op->org);
  origin_end(op);
}

/* LAPI_Purge_totask at the target: never delivered; the origin's memory
 * is free (org_cntr), no handler runs on the purging thread. */
static void am_cancel(struct lapi_item *it)
{
  struct crts_op *op = (struct crts_op *)it;
  lapi_am_origin_landed(op->org);
  lapi_am_origin_sent(op->org, op->tgt_task, op->org_cntr, NULL, NULL,
                      LAPI_ERR_TGT_PURGED);
  if (op->sent_item)
    free(op->sent_item);
  crts_tp_op_free(op);
}

void crts_tp_am_arrive(struct crts_op *op)
{
  struct lapi_hndl *t = op->tgt;
  /* The target purged the origin while the op was on its way. */
  if (lapi_hndl_purged(t, (uint)op->it.src)) {
    __atomic_sub_fetch(&t->pending, 1, __ATOMIC_SEQ_CST);
    am_cancel(&op->it);
    return;
  }
  /* Nothing queued before it: run it now (saves a trip through the
   * handle's queue); else behind the others. */
  if (!lapi_dispatch_run_now(t, &op->it))
    lapi_am_post(t, &op->it); /* counted again there */
  __atomic_sub_fetch(&t->pending, 1, __ATOMIC_SEQ_CST);
}

/* The origin's data: a contiguous buffer or the origin vector. */
static int check_origin(struct lapi_hndl *h, const struct lapi_tp_am *am)
{
  char why[256];
  int rc = am->org_vec ? crts_tp_check_vec(am->org_vec, h->cg_tasks,
                                           CRTS_SIDE_ORG, 0, -1, -1, why,
                                           sizeof why)
                       : crts_tp_check_buf(am->udata, am->udata_len,
                                           h->cg_tasks, CRTS_SIDE_ORG, why,
                                           sizeof why);
  if (rc)
    LAPI_FAIL_IN(am->org_vec ? "PLAPI_Amsendv" : "PLAPI_Amsend", rc, "%s",
                 why);
  return rc;
}

static void shape(struct crts_op *op, const struct lapi_tp_am *am)
{
  struct lapi_am_msg *m = &op->msg;
  if (op->org_vec) {
    const lapi_vec_t *v = op->org_vec;
    m->org_shape = v;
    m->msg_len = lapi_vec_bytes(v);
    if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
      /* [0] the length of every block, [1] and [2] as info[1], info[2]. */
      size_t block = v->num_vecs ? lapi_vec_stride_block(v) : 0;
      op->strided_len[0] = op->strided_len[1] = block;
      op->strided_len[2] = v->num_vecs ? lapi_vec_stride_pitch(v) : 0;
      m->len_vec = op->strided_len;
    } else {
      m->len_vec = v->len;
    }
  } else {
    m->msg_len = am->udata_len;
    m->one_pkt = (void *)am->udata; /* the MPE sees the origin's memory */
  }
}

int crts_tp_am_send(struct lapi_hndl *h, const struct lapi_tp_am *am)
{
  struct lapi_hndl *t = lapi_hndl_peer(h, am->tgt);
  if (t == NULL)
    return LAPI_FAIL_IN("PLAPI_Amsend", LAPI_ERR_TGT_CONTEXT,
                        "task %u has no active handle %u (it has not called "
                        "LAPI_Init, or has terminated it)", am->tgt,
                        h->index);
  int rc = check_origin(h, am);
  if (rc)
    return rc;
  void *tc = crts_tp_target_addr(am->tgt_cntr, h->cpe, t->cpe);
  rc = crts_tp_check_cntr(tc, h->cg_tasks, "PLAPI_Amsend");
  if (rc)
    return rc;
  struct lapi_am_notify note = {
    .tgt = am->tgt, .shdlr = am->shdlr, .sinfo = am->sinfo,
    .org_cntr = am->org_cntr,
  };
  rc = lapi_am_notify_reserve(&note);
  if (rc)
    return rc;
  size_t hlen = (am->uhdr_len + 15) & ~(size_t)15;
  struct crts_op *op = crts_tp_op_new(
      hlen + (am->org_vec ? crts_tp_vec_size(am->org_vec) : 0));
  if (op == NULL) {
    free(note.item);
    return LAPI_ERR_MEMORY_EXHAUSTED;
  }
  lapi_am_throttle(t);
  if (am->uhdr_len)
    memcpy(op->uhdr, am->uhdr, am->uhdr_len);
  op->kind = CRTS_OP_AM;
  op->org = h;
  op->tgt = t;
  op->tgt_task = am->tgt;
  op->org_cpe = h->cpe;
  op->tgt_cpe = t->cpe;
  op->udata = am->udata;
  op->org_vec = am->org_vec ? crts_tp_vec_copy(am->org_vec, op->uhdr + hlen)
                            : NULL;
  op->org_cntr = am->org_cntr;
  op->cmpl_cntr = am->cmpl_cntr;
  op->shdlr = am->shdlr;
  op->sinfo = am->sinfo;
  op->note = note;
  op->sent_item = note.item;

  struct lapi_am_msg *m = &op->msg;
  m->h = t;
  m->src = (int)h->task_id;
  m->hdr_hdl = am->hdr_hdl;
  m->uhdr = am->uhdr_len ? op->uhdr : NULL;
  m->uhdr_len = am->uhdr_len;
  m->tgt_cntr = lapi_addr_u64(tc);
  shape(op, am);
  op->it.run = am_run;
  op->it.cancel = am_cancel;
  op->it.src = (int)h->task_id;
  /* Pending on the target from now: its LAPI_Term waits for this. */
  __atomic_add_fetch(&t->pending, 1, __ATOMIC_SEQ_CST);
  crts_tp_push(op);
  return LAPI_SUCCESS;
}
