/*
 * cpe_rma_bcast.c - RMA broadcast and multicast: CRTS_rma_bcast/ibcast,
 * row and column bcast/ibcast/mcast/imcast, and the collective _coll forms.
 *
 * Receivers (manual section 3.6), always restricted to the CPEs that run in
 * the spawned group:
 *
 *   bcast              every CPE of the array
 *   row_bcast          every CPE of the sender's row
 *   col_bcast          every CPE of the sender's column
 *   row_mcast(mask)    every CPE of each row i whose mask bit i is set
 *   col_mcast(mask)    every CPE of each column i whose mask bit i is set
 *
 * The sender's own dst receives as well, whatever the mask (the manual says
 * so for the multicasts, and its broadcast example has the sender wait for
 * its own r_rply).  Each receiver's r_rply (the same LDM word on every CPE)
 * rises by 1 once its data is there; the non-blocking forms add 1 to the
 * sender's l_rply once the whole transfer has left.  As everywhere in the
 * emulator the sender copies synchronously, so completion is instant and
 * only counting and ordering are modelled.  All receivers are checked
 * before any byte moves.  The sender's own copy is made last, so a dst that
 * overlaps src on the sender does not change what the others receive.
 *
 * _coll forms: every CPE of the scope (array, row or column; group members
 * only) calls with the same root (a tid, a column number or a row number).
 * Each caller publishes its arguments and meets the others at a barrier of
 * the scope; each then copies the root's src into its own dst (and counts
 * that receive in its own statistics); a second barrier keeps the root's
 * src and the published arguments alive until every copy is done, which
 * also makes consecutive collective calls safe.  A caller with bad
 * arguments still meets both barriers, so nobody deadlocks: it fails alone,
 * or all fail when the roots disagree or the root's own arguments are bad.
 */
#include "crts_rma.h"

/* ------------------------------------------------- non-collective forms */

enum rma_scope {
  SCOPE_ARRAY,
  SCOPE_ROW,      /* the caller's row */
  SCOPE_COL,      /* the caller's column */
  SCOPE_ROW_MASK, /* rows selected by a mask */
  SCOPE_COL_MASK  /* columns selected by a mask */
};

/* CPEs (bit per tid) a transfer of this scope reaches, sender included. */
static uint64_t receivers(enum rma_scope scope, unsigned char mask, int tid)
{
  uint64_t to = 0;
  switch (scope) {
  case SCOPE_ARRAY: to = ~(uint64_t)0; break;
  case SCOPE_ROW: to = crts_rma_row_bits(tid / CRTS_COL_NUM); break;
  case SCOPE_COL: to = crts_rma_col_bits(tid % CRTS_COL_NUM); break;
  case SCOPE_ROW_MASK:
    for (int i = 0; i < CRTS_ROW_NUM; i++)
      if ((mask >> i) & 1u)
        to |= crts_rma_row_bits(i);
    break;
  case SCOPE_COL_MASK:
    for (int i = 0; i < CRTS_COL_NUM; i++)
      if ((mask >> i) & 1u)
        to |= crts_rma_col_bits(i);
    break;
  }
  return (to & crts_cg.group_mask) | ((uint64_t)1 << tid);
}

static int rma_multicast(const char *call, enum rma_scope scope,
                         unsigned char mask, void *dst, void *src, int len,
                         crts_rply_t *l_rply, crts_rply_t *r_rply)
{
  struct crts_cpe *self = crts_rma_caller(call);
  if (!self)
    return -1;
  int me = self->tid;
  if (crts_rma_check_len(call, len) != 0 ||
      crts_rma_check_local(call, "src", src, len, self) != 0 ||
      crts_rma_check_local_rply(call, "l_rply", l_rply, self) != 0)
    return -1;
  uint64_t to = receivers(scope, mask, me);
  void *dst_at[CRTS_MAX_SPE_NUM];
  crts_rply_t *rply_at[CRTS_MAX_SPE_NUM];
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++) {
    if (!((to >> t) & 1u))
      continue;
    if (crts_rma_remote(call, "dst", dst, len, t, &dst_at[t]) != 0 ||
        crts_rma_remote_rply(call, "r_rply", r_rply, t, &rply_at[t]) != 0)
      return -1;
  }
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
    if (t != me && ((to >> t) & 1u))
      crts_rma_deliver(self, dst_at[t], src, (size_t)len, rply_at[t], t);
  crts_rma_deliver(self, dst_at[me], src, (size_t)len, rply_at[me], me);
  crts_rma_reply(l_rply, me);
  return 0;
}

int CRTS_rma_bcast(void *dst, void *src, int len, crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_bcast", SCOPE_ARRAY, 0, dst, src, len, NULL,
                       r_rply);
}

int CRTS_rma_ibcast(void *dst, void *src, crts_rply_t *l_rply, int len,
                    crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_ibcast", SCOPE_ARRAY, 0, dst, src, len,
                       l_rply, r_rply);
}

int CRTS_rma_row_bcast(void *dst, void *src, int len, crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_row_bcast", SCOPE_ROW, 0, dst, src, len,
                       NULL, r_rply);
}

int CRTS_rma_row_ibcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_row_ibcast", SCOPE_ROW, 0, dst, src, len,
                       l_rply, r_rply);
}

int CRTS_rma_row_mcast(void *dst, void *src, int len, unsigned char mask,
                       crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_row_mcast", SCOPE_ROW_MASK, mask, dst, src,
                       len, NULL, r_rply);
}

int CRTS_rma_row_imcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        unsigned char mask, crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_row_imcast", SCOPE_ROW_MASK, mask, dst, src,
                       len, l_rply, r_rply);
}

int CRTS_rma_col_bcast(void *dst, void *src, int len, crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_col_bcast", SCOPE_COL, 0, dst, src, len,
                       NULL, r_rply);
}

int CRTS_rma_col_ibcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_col_ibcast", SCOPE_COL, 0, dst, src, len,
                       l_rply, r_rply);
}

int CRTS_rma_col_mcast(void *dst, void *src, int len, unsigned char mask,
                       crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_col_mcast", SCOPE_COL_MASK, mask, dst, src,
                       len, NULL, r_rply);
}

int CRTS_rma_col_imcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        unsigned char mask, crts_rply_t *r_rply)
{
  return rma_multicast("CRTS_rma_col_imcast", SCOPE_COL_MASK, mask, dst, src,
                       len, l_rply, r_rply);
}

/* ----------------------------------------------------- collective forms */

/* What each caller of a collective publishes for the others. */
struct coll_slot {
  const void *src;
  int len;
  int root;
  int ok;
} __attribute__((aligned(64)));

static struct coll_slot coll_slot[CRTS_MAX_SPE_NUM];
static struct crts_barrier coll_array;
static struct crts_barrier coll_row[CRTS_ROW_NUM];
static struct crts_barrier coll_col[CRTS_COL_NUM];

/* Between the barriers: may this caller copy from root_tid?  0 or -1. */
static int coll_agree(const char *call, const char *scope_name, int me,
                      uint64_t scope, int root, int root_max, int root_tid,
                      int len)
{
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++) {
    if (((scope >> t) & 1u) && coll_slot[t].root != root) {
      crts_report(call, "CPE %d of the %s passed root %d, this CPE root %d: "
                  "every caller must name the same root", t, scope_name,
                  coll_slot[t].root, root);
      return -1;
    }
  }
  if (root_tid < 0) {
    crts_report(call, "root %d is outside 0..%d", root, root_max);
    return -1;
  }
  if (!((scope >> root_tid) & 1u)) {
    crts_report(call, "the root, CPE %d, does not run in the spawned group",
                root_tid);
    return -1;
  }
  if (!coll_slot[root_tid].ok) {
    if (root_tid != me)
      crts_report(call, "the root, CPE %d, rejected its arguments: nothing "
                  "was copied", root_tid);
    return -1;
  }
  if (coll_slot[root_tid].len != len) {
    crts_report(call, "len %d differs from the root's len %d", len,
                coll_slot[root_tid].len);
    return -1;
  }
  return 0;
}

static int rma_coll(const char *call, enum rma_scope kind, void *dst,
                    void *src, int len, int root)
{
  struct crts_cpe *self = crts_rma_caller(call);
  if (!self)
    return -1;
  int me = self->tid, r = me / CRTS_COL_NUM, c = me % CRTS_COL_NUM;
  uint64_t scope;
  struct crts_barrier *bar;
  int root_tid, root_max;
  const char *scope_name;
  if (kind == SCOPE_ROW) {
    scope = crts_rma_row_bits(r);
    bar = &coll_row[r];
    root_max = CRTS_COL_NUM - 1; /* root is a column number */
    root_tid = root >= 0 && root <= root_max ? r * CRTS_COL_NUM + root : -1;
    scope_name = "row";
  } else if (kind == SCOPE_COL) {
    scope = crts_rma_col_bits(c);
    bar = &coll_col[c];
    root_max = CRTS_ROW_NUM - 1; /* root is a row number */
    root_tid = root >= 0 && root <= root_max ? root * CRTS_COL_NUM + c : -1;
    scope_name = "column";
  } else {
    scope = ~(uint64_t)0;
    bar = &coll_array;
    root_max = CRTS_MAX_SPE_NUM - 1;
    root_tid = root >= 0 && root <= root_max ? root : -1;
    scope_name = "array";
  }
  scope &= crts_cg.group_mask;
  uint32_t n = (uint32_t)crts_rma_count(scope);

  int ok = crts_rma_check_len(call, len) == 0 &&
           crts_rma_check_local(call, "dst", dst, len, self) == 0;
  if (ok && me == root_tid)
    ok = crts_rma_check_local(call, "src", src, len, self) == 0;
  coll_slot[me] = (struct coll_slot){ .src = src, .len = len, .root = root,
                                      .ok = ok };
  crts_barrier_wait(bar, n, 0);
  int rc = ok ? coll_agree(call, scope_name, me, scope, root, root_max,
                           root_tid, len)
              : -1;
  if (rc == 0)
    crts_rma_deliver(self, dst, coll_slot[root_tid].src, (size_t)len, NULL,
                     me);
  crts_barrier_wait(bar, n, 0);
  return rc;
}

int CRTS_rma_bcast_coll(void *dst, void *src, int len, int root)
{
  return rma_coll("CRTS_rma_bcast_coll", SCOPE_ARRAY, dst, src, len, root);
}

int CRTS_rma_row_bcast_coll(void *dst, void *src, int len, int root)
{
  return rma_coll("CRTS_rma_row_bcast_coll", SCOPE_ROW, dst, src, len, root);
}

int CRTS_rma_col_bcast_coll(void *dst, void *src, int len, int root)
{
  return rma_coll("CRTS_rma_col_bcast_coll", SCOPE_COL, dst, src, len, root);
}
