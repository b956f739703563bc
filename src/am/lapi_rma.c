/*
 * lapi_rma.c - one-sided calls: LAPI_Put, LAPI_Get, LAPI_Putv, LAPI_Getv,
 * LAPI_Rmw, LAPI_Rmw64.
 *
 * Arguments are checked in parameter order, all before the transport is
 * asked to do anything.  Counters (reference semantics):
 *   put   tgt_cntr when the data landed, org_cntr when the origin buffer
 *         is reusable, cmpl_cntr at the origin once the data landed;
 *   get   tgt_cntr when the data left the target, org_cntr when it has
 *         arrived at the origin;
 *   rmw   org_cntr when prev_tgt_val is valid (there is no target
 *         counter).  prev_tgt_val may be NULL when the old value is not
 *         wanted.
 * Getv moves the bytes of tgt_vec (in the target) into org_vec (here);
 * its vectors are checked with the code of their own side (TGT_* for
 * tgt_vec, ORG_* for org_vec) and then as a pair.
 */
#include "am/lapi_am.h"
#include "vec/lapi_vec.h"

#define GET_HNDL(h, hv)                                                   \
  struct lapi_hndl *h = lapi_hndl_get(hv);                                \
  if (h == NULL)                                                          \
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,                               \
                     "handle %u is not initialised or already "           \
                     "terminated", (hv))

static int check_purged(const struct lapi_hndl *h, uint tgt, const char *api)
{
  if (lapi_hndl_purged(h, tgt))
    return LAPI_FAIL_IN(api, LAPI_ERR_TGT_PURGED,
                        "task %u was purged (LAPI_Purge_totask): call "
                        "LAPI_Resume_totask first", tgt);
  return 0;
}

/* Contiguous put/get arguments; or both vectors and their pairing. */
static int check_rma(const struct lapi_hndl *h, const struct lapi_tp_rma *op,
                     int vector, const char *api, size_t *bytes)
{
  int rc = lapi_check_tgt(h, op->tgt, api);
  if (rc)
    return rc;
  if (vector) {
    char why[256];
    rc = lapi_vec_check_target(op->tgt_vec);
    if (rc == LAPI_SUCCESS)
      rc = lapi_vec_check_origin(op->org_vec);
    if (rc == LAPI_SUCCESS)
      rc = lapi_vec_check_pair(op->org_vec, op->tgt_vec);
    if (rc) {
      lapi_vec_explain(rc, op->org_vec, op->tgt_vec, why, sizeof why);
      return LAPI_FAIL_IN(api, rc, "%s", why);
    }
    *bytes = lapi_vec_pair_bytes(op->org_vec, op->tgt_vec);
  } else {
    if ((unsigned long long)op->len > (unsigned long long)LAPI_MAX_MSG_SZ)
      return LAPI_FAIL_IN(api, LAPI_ERR_DATA_LEN,
                          "len %zu is over LAPI_MAX_MSG_SZ", op->len);
    if (op->tgt_addr == 0 && op->len != 0)
      return LAPI_FAIL_IN(api, LAPI_ERR_TGT_ADDR_NULL,
                          "tgt_addr is NULL but len is %zu", op->len);
    if (op->org_addr == NULL && op->len != 0)
      return LAPI_FAIL_IN(api, LAPI_ERR_ORG_ADDR_NULL,
                          "org_addr is NULL but len is %zu", op->len);
    *bytes = op->len;
  }
  return check_purged(h, op->tgt, api);
}

static int rma_go(struct lapi_hndl *h, const struct lapi_tp_rma *op,
                  int vector, int put, const char *api)
{
  size_t bytes;
  int rc = check_rma(h, op, vector, api, &bytes);
  if (rc)
    return rc;
  struct lapi_tp_rma req = *op;
  if (!vector)
    req.org_vec = req.tgt_vec = NULL;
  const struct lapi_tp_ops *tp = lapi_tp_select(h, op->tgt);
  rc = put ? tp->put(h, &req) : tp->get(h, &req);
  if (rc)
    return LAPI_FAIL_IN(api, rc, "transport %s refused the %s", tp->name,
                        put ? "put" : "get");
  lapi_am_stat_sent(h, tp->id, bytes);
  return LAPI_SUCCESS;
}

int lapi_rma_put(struct lapi_hndl *h, const struct lapi_tp_rma *op,
                 int vector, const char *api)
{
  return rma_go(h, op, vector, 1, api);
}

int lapi_rma_get(struct lapi_hndl *h, const struct lapi_tp_rma *op,
                 int vector, const char *api)
{
  return rma_go(h, op, vector, 0, api);
}

int lapi_rma_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op,
                 const char *api)
{
  if (op->op != FETCH_AND_ADD && op->op != FETCH_AND_OR && op->op != SWAP &&
      op->op != COMPARE_AND_SWAP)
    return LAPI_FAIL_IN(api, LAPI_ERR_RMW_OP,
                        "op %d is not FETCH_AND_ADD, FETCH_AND_OR, SWAP or "
                        "COMPARE_AND_SWAP", (int)op->op);
  int rc = lapi_check_tgt(h, op->tgt, api);
  if (rc)
    return rc;
  if (op->tgt_var == 0)
    return LAPI_FAIL_IN(api, LAPI_ERR_TGT_VAR_NULL, "tgt_var is NULL");
  if (op->in_val == NULL)
    return LAPI_FAIL_IN(api, LAPI_ERR_IN_VAL_NULL, "in_val is NULL");
  rc = check_purged(h, op->tgt, api);
  if (rc)
    return rc;
  const struct lapi_tp_ops *tp = lapi_tp_select(h, op->tgt);
  rc = tp->rmw(h, op);
  if (rc)
    return LAPI_FAIL_IN(api, rc, "transport %s refused the rmw", tp->name);
  lapi_am_stat_sent(h, tp->id, (size_t)op->size);
  return LAPI_SUCCESS;
}

/* Both widths alike; a 4-byte operation takes the operands' low words. */
#define RMW_APPLY(type, var, op, a, b)                                      \
  do {                                                                     \
    type a_ = (type)(a), b_ = (type)(b);                                   \
    switch (op) {                                                          \
    case FETCH_AND_ADD:                                                    \
      return __atomic_fetch_add((type *)(var), a_, __ATOMIC_SEQ_CST);      \
    case FETCH_AND_OR:                                                     \
      return __atomic_fetch_or((type *)(var), a_, __ATOMIC_SEQ_CST);       \
    case SWAP:                                                             \
      return __atomic_exchange_n((type *)(var), a_, __ATOMIC_SEQ_CST);     \
    default:                                                               \
      return __atomic_compare_exchange_n((type *)(var), &a_, b_, 0,        \
                                         __ATOMIC_SEQ_CST,                 \
                                         __ATOMIC_SEQ_CST) ? TRUE : FALSE; \
    }                                                                      \
  } while (0)

long long lapi_rmw_apply(void *var, int size, RMW_ops_t op, long long a,
                         long long b)
{
  if (size == 8)
    RMW_APPLY(long long, var, op, a, b);
  RMW_APPLY(int, var, op, a, b);
}

void lapi_rmw_operands(const struct lapi_tp_rmw *op, long long in[2])
{
  int n = op->op == COMPARE_AND_SWAP ? 2 : 1;
  in[1] = 0;
  for (int i = 0; i < n; i++)
    in[i] = op->size == 8 ? ((const long long *)op->in_val)[i]
                          : ((const int *)op->in_val)[i];
}

void lapi_rmw_store_prev(void *prev, int size, long long v)
{
  if (prev && size == 8)
    *(long long *)prev = v;
  else if (prev)
    *(int *)prev = (int)v;
}

/* ---------------------------------------------------------- the calls */

int PLAPI_Put(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
              void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
              lapi_cntr_t *cmpl_cntr)
{
  GET_HNDL(h, hndl);
  struct lapi_tp_rma op = {
    .tgt = tgt, .len = len, .tgt_addr = lapi_addr_u64(tgt_addr),
    .org_addr = org_addr, .tgt_cntr = lapi_addr_u64(tgt_cntr),
    .org_cntr = org_cntr, .cmpl_cntr = cmpl_cntr,
  };
  return lapi_rma_put(h, &op, 0, __func__);
}

int PLAPI_Get(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
              void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr)
{
  GET_HNDL(h, hndl);
  struct lapi_tp_rma op = {
    .tgt = tgt, .len = len, .tgt_addr = lapi_addr_u64(tgt_addr),
    .org_addr = org_addr, .tgt_cntr = lapi_addr_u64(tgt_cntr),
    .org_cntr = org_cntr,
  };
  return lapi_rma_get(h, &op, 0, __func__);
}

int PLAPI_Putv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
               lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
               lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)
{
  GET_HNDL(h, hndl);
  struct lapi_tp_rma op = {
    .tgt = tgt, .tgt_vec = tgt_vec, .org_vec = org_vec,
    .tgt_cntr = lapi_addr_u64(tgt_cntr), .org_cntr = org_cntr,
    .cmpl_cntr = cmpl_cntr,
  };
  return lapi_rma_put(h, &op, 1, __func__);
}

int PLAPI_Getv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
               lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
               lapi_cntr_t *org_cntr)
{
  GET_HNDL(h, hndl);
  struct lapi_tp_rma op = {
    .tgt = tgt, .tgt_vec = tgt_vec, .org_vec = org_vec,
    .tgt_cntr = lapi_addr_u64(tgt_cntr), .org_cntr = org_cntr,
  };
  return lapi_rma_get(h, &op, 1, __func__);
}

int PLAPI_Rmw(lapi_handle_t hndl, RMW_ops_t op, uint tgt, int *tgt_var,
              int *in_val, int *prev_tgt_val, lapi_cntr_t *org_cntr)
{
  GET_HNDL(h, hndl);
  struct lapi_tp_rmw req = {
    .tgt = tgt, .op = op, .size = 4, .tgt_var = lapi_addr_u64(tgt_var),
    .in_val = in_val, .prev = prev_tgt_val, .org_cntr = org_cntr,
  };
  return lapi_rma_rmw(h, &req, __func__);
}

int PLAPI_Rmw64(lapi_handle_t hndl, RMW_ops_t op, uint tgt,
                long long *tgt_var, long long *in_val,
                long long *prev_tgt_val, lapi_cntr_t *org_cntr)
{
  GET_HNDL(h, hndl);
  struct lapi_tp_rmw req = {
    .tgt = tgt, .op = op, .size = 8, .tgt_var = lapi_addr_u64(tgt_var),
    .in_val = in_val, .prev = prev_tgt_val, .org_cntr = org_cntr,
  };
  return lapi_rma_rmw(h, &req, __func__);
}

int LAPI_Put(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
             void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
             lapi_cntr_t *cmpl_cntr) __attribute__((weak, alias("PLAPI_Put")));
int LAPI_Get(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
             void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr)
    __attribute__((weak, alias("PLAPI_Get")));
int LAPI_Putv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
              lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
              lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr)
    __attribute__((weak, alias("PLAPI_Putv")));
int LAPI_Getv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
              lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
              lapi_cntr_t *org_cntr) __attribute__((weak, alias("PLAPI_Getv")));
int LAPI_Rmw(lapi_handle_t hndl, RMW_ops_t op, uint tgt, int *tgt_var,
             int *in_val, int *prev_tgt_val, lapi_cntr_t *org_cntr)
    __attribute__((weak, alias("PLAPI_Rmw")));
int LAPI_Rmw64(lapi_handle_t hndl, RMW_ops_t op, uint tgt,
               long long *tgt_var, long long *in_val, long long *prev_tgt_val,
               lapi_cntr_t *org_cntr)
    __attribute__((weak, alias("PLAPI_Rmw64")));
