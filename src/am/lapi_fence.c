/*
 * lapi_fence.c - LAPI_Fence, LAPI_Gfence, LAPI_Purge_totask and
 * LAPI_Resume_totask.
 *
 * LAPI_Fence returns when every message the caller issued on the handle
 * has landed at its target: the data is in place; completion handlers
 * may still be running (a data fence, as in IBM's LAPI).  Puts, gets and
 * rmws of the loopback are complete when their call returns.  While it
 * waits the caller makes progress if it may (polling mode, or a handler
 * on the dispatcher), so a fence inside a completion handler does not
 * wait for itself.  LAPI_Gfence adds a barrier of all tasks: between
 * core groups over the network transport's own packets (ofi_barrier.c:
 * a few us where the job's exchange took a TCP round trip through the
 * launcher, 130-290 us), through the exchange where no transport offers
 * one.
 *
 * LAPI_Purge_totask(dest): calls to dest fail with LAPI_ERR_TGT_PURGED
 * until LAPI_Resume_totask(dest); messages from dest still queued on
 * the handle are cancelled (never delivered, origin counter only) and
 * LAPI_Setcntr_wstatus lists naming dest are updated and released.
 */
#include "am/lapi_am.h"

static int landed(void *arg)
{
  struct lapi_hndl *h = arg;
  if (__atomic_load_n(&h->outstanding, __ATOMIC_SEQ_CST) == 0)
    return 1;
  /* Messages that land without a word to us: ask for one (once per
   * batch sent; cheap otherwise). */
  lapi_tp_flush(h);
  return __atomic_load_n(&h->outstanding, __ATOMIC_SEQ_CST) == 0;
}

static struct lapi_hndl *get(lapi_handle_t hndl, const char *api)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    LAPI_FAIL_IN(api, LAPI_ERR_HNDL_INVALID,
                 "handle %u is not initialised or already terminated", hndl);
  return h;
}

int lapi_net_barrier(struct lapi_hndl *h)
{
  /* (a job of one task: no transport connects CGs, the exchange's
   * barrier says so) */
  for (unsigned i = 0; i < lapi_tp_net_count; i++) {
    if (lapi_tp_net[i]->barrier == NULL)
      continue;
    int rc = lapi_tp_net[i]->barrier(h);
    if (rc != LAPI_TP_NO_BARRIER)
      return rc;
  }
  return lapi_job_barrier(h);
}

int PLAPI_Fence(lapi_handle_t hndl)
{
  struct lapi_hndl *h = get(hndl, __func__);
  if (h == NULL)
    return LAPI_ERR_HNDL_INVALID;
  lapi_wait_until(h, landed, h, NULL);
  return LAPI_SUCCESS;
}

int PLAPI_Gfence(lapi_handle_t hndl)
{
  struct lapi_hndl *h = get(hndl, __func__);
  if (h == NULL)
    return LAPI_ERR_HNDL_INVALID;
  lapi_wait_until(h, landed, h, NULL);
  int rc = lapi_coll_gfence(h);
  /* What the others' fences waited for landed here, written by our
   * transport threads: see it before the caller looks. */
  lapi_tp_sync();
  return rc ? LAPI_FAIL(rc, "the job's barrier failed") : LAPI_SUCCESS;
}

int PLAPI_Purge_totask(lapi_handle_t hndl, uint dest)
{
  struct lapi_hndl *h = get(hndl, __func__);
  if (h == NULL)
    return LAPI_ERR_HNDL_INVALID;
  int rc = lapi_check_tgt(h, dest, __func__);
  if (rc)
    return rc;
  __atomic_store_n(&h->purged[dest], 1, __ATOMIC_RELEASE);
  lapi_dispatch_cancel_from(h, (int)dest);
  lapi_wstatus_purge(h, dest);
  LAPI_LOG(LAPI_LOG_INFO, "handle %u: task %u purged", hndl, dest);
  return LAPI_SUCCESS;
}

int PLAPI_Resume_totask(lapi_handle_t hndl, uint dest)
{
  struct lapi_hndl *h = get(hndl, __func__);
  if (h == NULL)
    return LAPI_ERR_HNDL_INVALID;
  int rc = lapi_check_tgt(h, dest, __func__);
  if (rc)
    return rc;
  __atomic_store_n(&h->purged[dest], 0, __ATOMIC_RELEASE);
  LAPI_LOG(LAPI_LOG_INFO, "handle %u: task %u resumed", hndl, dest);
  return LAPI_SUCCESS;
}

int LAPI_Fence(lapi_handle_t hndl) __attribute__((weak, alias("PLAPI_Fence")));
int LAPI_Gfence(lapi_handle_t hndl)
    __attribute__((weak, alias("PLAPI_Gfence")));
int LAPI_Purge_totask(lapi_handle_t hndl, uint dest)
    __attribute__((weak, alias("PLAPI_Purge_totask")));
int LAPI_Resume_totask(lapi_handle_t hndl, uint dest)
    __attribute__((weak, alias("PLAPI_Resume_totask")));
