/*
 * lapi_amsend.c - LAPI_Amsend and LAPI_Amsendv: validation, then the
 * hand-off to the transport that serves the target.
 *
 * Checks, in this order, before anything is touched (seed page and
 * reference): HNDL_INVALID, TGT, HDR_HNDLR_NULL (NULL, or an Addr_set
 * index that holds no handler on this handle: LAPI programs register
 * the same handlers on every task), UHDR_NULL, UHDR_LEN (over
 * MAX_UHDR_SZ or not a multiple of 4), then the data: ORG_ADDR_NULL /
 * DATA_LEN for Amsend, the origin vector checks for Amsendv, and last
 * TGT_PURGED.  A call that returns an error has sent nothing and moved
 * no counter.
 *
 * A message counts as outstanding on the handle from here until its data
 * landed at the target (LAPI_Fence waits for that): counted before the
 * transport's am_send, or by the transport itself before it can land
 * (am_counts_outstanding), in either case before LAPI_Amsend returns.
 */
#include "am/lapi_am.h"
#include "vec/lapi_vec.h"

int lapi_am_submit(struct lapi_hndl *h, struct lapi_tp_am *am, int vector,
                   const char *api)
{
  int rc = lapi_check_tgt(h, am->tgt, api);
  if (rc)
    return rc;
  if (am->hdr_hdl == 0)
    return LAPI_FAIL_IN(api, LAPI_ERR_HDR_HNDLR_NULL,
                        "hdr_hdl is NULL: pass a header handler or an "
                        "index registered with LAPI_Addr_set");
  /*
   * An index names the *target's* table entry; only when the target is this
   * task is that table ours to check now.  Elsewhere the target resolves it
   * and reports an empty entry through its error handler.
   */
  if (am->hdr_hdl < LAPI_AM_ADDRTBL_SZ && am->tgt == h->task_id &&
      __atomic_load_n(&h->addr_tbl[am->hdr_hdl], __ATOMIC_ACQUIRE) == NULL)
    return LAPI_FAIL_IN(api, LAPI_ERR_HDR_HNDLR_NULL,
                        "hdr_hdl %llu is an address-table index that holds "
                        "no handler: register one with LAPI_Addr_set",
                        (unsigned long long)am->hdr_hdl);
  if (am->uhdr == NULL && am->uhdr_len != 0)
    return LAPI_FAIL_IN(api, LAPI_ERR_UHDR_NULL,
                        "uhdr is NULL but uhdr_len is %u", am->uhdr_len);
  if (am->uhdr_len > LAPI_AM_MAX_UHDR || am->uhdr_len % 4 != 0)
    return LAPI_FAIL_IN(api, LAPI_ERR_UHDR_LEN,
                        "uhdr_len %u must be a multiple of 4 and at most "
                        "MAX_UHDR_SZ (%d)", am->uhdr_len, LAPI_AM_MAX_UHDR);
  size_t bytes;
  if (vector) {
    rc = lapi_vec_check_origin(am->org_vec);
    if (rc) {
      char why[256];
      lapi_vec_explain(rc, am->org_vec, NULL, why, sizeof why);
      return LAPI_FAIL_IN(api, rc, "%s", why);
    }
    bytes = lapi_vec_bytes(am->org_vec);
  } else {
    am->org_vec = NULL;
    if (am->udata == NULL && am->udata_len != 0)
      return LAPI_FAIL_IN(api, LAPI_ERR_ORG_ADDR_NULL,
                          "udata is NULL but udata_len is %zu",
                          am->udata_len);
    if ((unsigned long long)am->udata_len >
        (unsigned long long)LAPI_MAX_MSG_SZ)
      return LAPI_FAIL_IN(api, LAPI_ERR_DATA_LEN,
                          "udata_len %zu is over LAPI_MAX_MSG_SZ",
                          am->udata_len);
    bytes = am->udata_len;
  }
  if (lapi_hndl_purged(h, am->tgt))
    return LAPI_FAIL_IN(api, LAPI_ERR_TGT_PURGED,
                        "task %u was purged (LAPI_Purge_totask): call "
                        "LAPI_Resume_totask first", am->tgt);

  const struct lapi_tp_ops *tp = lapi_tp_select(h, am->tgt);
  int counted = !tp->am_counts_outstanding;
  if (counted)
    __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
  rc = tp->am_send(h, am);
  if (rc != LAPI_SUCCESS) {
    if (counted)
      lapi_am_origin_landed(h);
    return LAPI_FAIL_IN(api, rc, "transport %s refused the message",
                        tp->name);
  }
  lapi_am_stat_sent(h, tp->id, bytes);
  return LAPI_SUCCESS;
}

int PLAPI_Amsend(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                 uint uhdr_len, void *udata, ulong udata_len,
                 lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
                 lapi_cntr_t *cmpl_cntr)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  struct lapi_tp_am am = {
    .tgt = tgt,
    .hdr_hdl = lapi_addr_u64(hdr_hdl),
    .uhdr = uhdr,
    .uhdr_len = uhdr_len,
    .udata = udata,
    .udata_len = udata_len,
    .tgt_cntr = lapi_addr_u64(tgt_cntr),
    .org_cntr = org_cntr,
    .cmpl_cntr = cmpl_cntr,
  };
  return lapi_am_submit(h, &am, 0, __func__);
}

int PLAPI_Amsendv(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                  uint uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
                  lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  struct lapi_tp_am am = {
    .tgt = tgt,
    .hdr_hdl = lapi_addr_u64(hdr_hdl),
    .uhdr = uhdr,
    .uhdr_len = uhdr_len,
    .org_vec = org_vec,
    .tgt_cntr = lapi_addr_u64(tgt_cntr),
    .org_cntr = org_cntr,
    .cmpl_cntr = cmpl_cntr,
  };
  return lapi_am_submit(h, &am, 1, __func__);
}

int LAPI_Amsend(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                uint uhdr_len, void *udata, ulong udata_len,
                lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
                lapi_cntr_t *cmpl_cntr)
    __attribute__((weak, alias("PLAPI_Amsend")));
int LAPI_Amsendv(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                 uint uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
                 lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)
    __attribute__((weak, alias("PLAPI_Amsendv")));
