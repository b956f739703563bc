/*
 * lapi_xfer.c - LAPI_Xfer (every transfer through one call) and LAPI_Util.
 *
 * LAPI_Xfer maps each member of lapi_xfer_t onto the same validated path
 * as the direct call, adding what only Xfer has: a send completion
 * handler (shdlr, run at the origin in MPE context once the origin's
 * buffers are free, before org_cntr moves), an origin completion handler
 * for gets (chndlr, before org_cntr), 64-bit remote addresses and the
 * Rmw operand size.  DGSP, RDMA, lightweight AM, AMX and multicast
 * transfers answer LAPI_ERR_XFER_CMD; a NULL xfer_cmd does too.
 *
 * LAPI_Util supports LAPI_GET_THREAD_FUNC: functions that take the lock
 * held while the handle's handlers run (so a program can synchronise
 * with its handlers) and wait on conditions with it.  Other commands
 * answer LAPI_ERR_UTIL_CMD.
 */
#include <errno.h>

#include "am/lapi_am.h"

static int xfer_am(struct lapi_hndl *h, const lapi_am_t *x)
{
  struct lapi_tp_am am = {
    .tgt = x->tgt, .hdr_hdl = x->hdr_hdl, .uhdr = x->uhdr,
    .uhdr_len = x->uhdr_len, .udata = x->udata, .udata_len = x->udata_len,
    .tgt_cntr = x->tgt_cntr, .org_cntr = x->org_cntr,
    .cmpl_cntr = x->cmpl_cntr, .shdlr = x->shdlr, .sinfo = x->sinfo,
  };
  return lapi_am_submit(h, &am, 0, "PLAPI_Xfer(LAPI_AM_XFER)");
}

static int xfer_amv(struct lapi_hndl *h, const lapi_amv_t *x)
{
  struct lapi_tp_am am = {
    .tgt = x->tgt, .hdr_hdl = x->hdr_hdl, .uhdr = x->uhdr,
    .uhdr_len = x->uhdr_len, .org_vec = x->org_vec,
    .tgt_cntr = x->tgt_cntr, .org_cntr = x->org_cntr,
    .cmpl_cntr = x->cmpl_cntr, .shdlr = x->shdlr, .sinfo = x->sinfo,
  };
  return lapi_am_submit(h, &am, 1, "PLAPI_Xfer(LAPI_AMV_XFER)");
}

static int xfer_rmw(struct lapi_hndl *h, const lapi_rmw_t *x)
{
  if (x->size != 32 && x->size != 64)
    return LAPI_FAIL(LAPI_ERR_OP_SZ,
                     "Rmw.size is %u: use 32 (int) or 64 (long long)",
                     x->size);
  struct lapi_tp_rmw op = {
    .tgt = x->tgt, .op = x->op, .size = (int)x->size / 8,
    .tgt_var = x->tgt_var, .in_val = x->in_val, .prev = x->prev_tgt_val,
    .org_cntr = x->org_cntr, .shdlr = x->shdlr, .sinfo = x->sinfo,
  };
  return lapi_rma_rmw(h, &op, "PLAPI_Xfer(LAPI_RMW_XFER)");
}

int PLAPI_Xfer(lapi_handle_t hndl, lapi_xfer_t *xfer_cmd)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  if (xfer_cmd == NULL)
    return LAPI_FAIL(LAPI_ERR_XFER_CMD, "xfer_cmd is NULL");

  switch (xfer_cmd->Xfer_type) {
  case LAPI_AM_XFER:
    return xfer_am(h, &xfer_cmd->Am);
  case LAPI_AMV_XFER:
    return xfer_amv(h, &xfer_cmd->Amv);
  case LAPI_PUT_XFER: {
    const lapi_put_t *x = &xfer_cmd->Put;
    struct lapi_tp_rma op = {
      .tgt = x->tgt, .len = x->len, .tgt_addr = x->tgt_addr,
      .org_addr = x->org_addr, .tgt_cntr = x->tgt_cntr,
      .org_cntr = x->org_cntr, .cmpl_cntr = x->cmpl_cntr,
      .shdlr = x->shdlr, .sinfo = x->sinfo,
    };
    return lapi_rma_put(h, &op, 0, "PLAPI_Xfer(LAPI_PUT_XFER)");
  }
  case LAPI_GET_XFER: {
    const lapi_get_t *x = &xfer_cmd->Get;
    struct lapi_tp_rma op = {
      .tgt = x->tgt, .len = x->len, .tgt_addr = x->tgt_addr,
      .org_addr = x->org_addr, .tgt_cntr = x->tgt_cntr,
      .org_cntr = x->org_cntr, .chndlr = x->chndlr, .cinfo = x->cinfo,
    };
    return lapi_rma_get(h, &op, 0, "PLAPI_Xfer(LAPI_GET_XFER)");
  }
  case LAPI_PUTV_XFER: {
    const lapi_putv_t *x = &xfer_cmd->Putv;
    struct lapi_tp_rma op = {
      .tgt = x->tgt, .tgt_vec = x->tgt_vec, .org_vec = x->org_vec,
      .tgt_cntr = x->tgt_cntr, .org_cntr = x->org_cntr,
      .cmpl_cntr = x->cmpl_cntr, .shdlr = x->shdlr, .sinfo = x->sinfo,
    };
    return lapi_rma_put(h, &op, 1, "PLAPI_Xfer(LAPI_PUTV_XFER)");
  }
  case LAPI_GETV_XFER: {
    const lapi_getv_t *x = &xfer_cmd->Getv;
    struct lapi_tp_rma op = {
      .tgt = x->tgt, .tgt_vec = x->tgt_vec, .org_vec = x->org_vec,
      .tgt_cntr = x->tgt_cntr, .org_cntr = x->org_cntr,
      .chndlr = x->chndlr, .cinfo = x->cinfo,
    };
    return lapi_rma_get(h, &op, 1, "PLAPI_Xfer(LAPI_GETV_XFER)");
  }
  case LAPI_RMW_XFER:
    return xfer_rmw(h, &xfer_cmd->Rmw);
  case LAPI_DGSP_XFER:
  case LAPI_RDMA_XFER:
  case LAPI_AM_LW_XFER:
  case LAPI_AMX_XFER:
  case LAPI_MC_XFER:
    return LAPI_FAIL(LAPI_ERR_XFER_CMD,
                     "Xfer_type %d (DGSP, RDMA, lightweight AM, AMX or "
                     "multicast) is not supported: use LAPI_AM_XFER, "
                     "LAPI_AMV_XFER or the put/get/rmw kinds",
                     (int)xfer_cmd->Xfer_type);
  default:
    return LAPI_FAIL(LAPI_ERR_XFER_CMD, "Xfer_type %d is not a transfer kind",
                     (int)xfer_cmd->Xfer_type);
  }
}

/* ------------------------------------------------------ thread functions */

static struct lapi_rlock *lock_of(lapi_handle_t hndl)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  return h ? &h->lock : NULL;
}

static int tf_lock(lapi_handle_t hndl)
{
  struct lapi_rlock *l = lock_of(hndl);
  if (l == NULL)
    return EINVAL;
  lapi_rlock_lock(l);
  return 0;
}

static int tf_unlock(lapi_handle_t hndl)
{
  struct lapi_rlock *l = lock_of(hndl);
  if (l == NULL)
    return EINVAL;
  if (!lapi_rlock_mine(l))
    return EPERM;
  lapi_rlock_unlock(l);
  return 0;
}

static int tf_trylock(lapi_handle_t hndl)
{
  struct lapi_rlock *l = lock_of(hndl);
  if (l == NULL)
    return EINVAL;
  return lapi_rlock_trylock(l) ? 0 : EBUSY;
}

static int tf_getowner(lapi_handle_t hndl, pthread_t *tid)
{
  struct lapi_rlock *l = lock_of(hndl);
  if (l == NULL || tid == NULL)
    return EINVAL;
  if (!lapi_rlock_owner(l, tid))
    *tid = LAPI_NULL_THREAD_ID;
  return 0;
}

static int tf_cond_wait(lapi_handle_t hndl, lapi_cond_t *cond)
{
  struct lapi_rlock *l = lock_of(hndl);
  if (l == NULL || cond == NULL)
    return EINVAL;
  return lapi_rlock_cond_wait(l, cond, NULL);
}

static int tf_cond_timedwait(lapi_handle_t hndl, lapi_cond_t *cond,
                             struct timespec *abstime)
{
  struct lapi_rlock *l = lock_of(hndl);
  if (l == NULL || cond == NULL || abstime == NULL)
    return EINVAL;
  return lapi_rlock_cond_wait(l, cond, abstime);
}

static int tf_cond_signal(lapi_handle_t hndl, lapi_cond_t *cond)
{
  if (lock_of(hndl) == NULL || cond == NULL)
    return EINVAL;
  return pthread_cond_signal(cond);
}

static int tf_cond_init(lapi_handle_t hndl, lapi_cond_t *cond)
{
  if (lock_of(hndl) == NULL || cond == NULL)
    return EINVAL;
  return pthread_cond_init(cond, NULL);
}

static int tf_cond_destroy(lapi_handle_t hndl, lapi_cond_t *cond)
{
  if (lock_of(hndl) == NULL || cond == NULL)
    return EINVAL;
  return pthread_cond_destroy(cond);
}

int PLAPI_Util(lapi_handle_t hndl, lapi_util_t *util_p)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  if (util_p == NULL)
    return LAPI_FAIL(LAPI_ERR_UTIL_CMD, "util_p is NULL");
  if (util_p->Util_type != LAPI_GET_THREAD_FUNC)
    return LAPI_FAIL(LAPI_ERR_UTIL_CMD,
                     "Util_type %d is not supported: only "
                     "LAPI_GET_THREAD_FUNC is", (int)util_p->Util_type);
  lapi_thread_func_t *tf = &util_p->ThreadFunc;
  tf->mutex_lock = tf_lock;
  tf->mutex_unlock = tf_unlock;
  tf->mutex_trylock = tf_trylock;
  tf->mutex_getowner = tf_getowner;
  tf->cond_wait = tf_cond_wait;
  tf->cond_timedwait = tf_cond_timedwait;
  tf->cond_signal = tf_cond_signal;
  tf->cond_init = tf_cond_init;
  tf->cond_destroy = tf_cond_destroy;
  return LAPI_SUCCESS;
}

int LAPI_Xfer(lapi_handle_t hndl, lapi_xfer_t *xfer_cmd)
    __attribute__((weak, alias("PLAPI_Xfer")));
int LAPI_Util(lapi_handle_t hndl, lapi_util_t *util_p)
    __attribute__((weak, alias("PLAPI_Util")));
