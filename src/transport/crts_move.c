/*
 * crts_move.c - the CRTS transport's view of addresses (which memory an
 * address names, whether a transfer fits, LDM translation to the target)
 * and the moves of LAPI buffers and vectors with the core group's engines.
 *
 * An LDM address is usable when it lies in the heap or stack area of the
 * LDM slice of a CPE that is a task of the job, and a transfer into or out
 * of LDM must stay inside that area (at most one 256 KiB slice).  Checks
 * run at the origin before anything is queued, so a bad request returns
 * its LAPI code from the call; a target buffer chosen by a header handler
 * is checked at the target, before a byte moves.
 */
#include <stdio.h>
#include <string.h>

#include "crts/crts_engine.h"
#include "transport/crts_tp.h"
#include "vec/lapi_vec.h"

void *crts_tp_target_addr(uint64_t addr, int org_cpe, int tgt_cpe)
{
  void *p = lapi_addr_ptr(addr);
  if (p == NULL || org_cpe < 0 || tgt_cpe < 0 || org_cpe == tgt_cpe ||
      crts_engine_ldm_owner(p) != org_cpe)
    return p;
  return crts_engine_ldm_translate(p, tgt_cpe);
}

/* What is wrong with [p, p + len): 0 nothing, 1 the address, 2 the length
 * (it starts in a task's LDM but does not fit there).  The message names
 * the buffer as `what`, or what[index] when index >= 0; it is written only
 * on a fault (the checks run on every call). */
static int buf_fault(const void *p, size_t len, uint cg_tasks, char *why,
                     size_t whylen, const char *name, int index)
{
  int w = crts_engine_where(p, len);
  if (w == CRTS_ENGINE_MEM || (w >= 0 && (uint)w < cg_tasks))
    return 0;
  char what[64];
  if (index >= 0)
    snprintf(what, sizeof what, "%s->info[%d]", name, index);
  else
    snprintf(what, sizeof what, "%s", name);
  int owner = crts_engine_ldm_owner(p);
  if (owner >= 0 && (uint)owner >= cg_tasks) {
    snprintf(why, whylen, "%s %p lies in the LDM of CPE %d, which is not a "
             "task of this job (%u tasks per core group)", what, p, owner,
             cg_tasks);
    return 1;
  }
  if (owner >= 0) {
    snprintf(why, whylen, "%s %p + %zu bytes does not fit in the usable LDM "
             "of CPE %d: a transfer into or out of LDM stays inside one "
             "256 KiB slice (heap or stack area)", what, p, len, owner);
    return 2;
  }
  snprintf(why, whylen, "%s %p is not usable memory: it lies in a guard area "
           "of the LDM arena", what, p);
  return 1;
}

int crts_tp_check_buf(const void *p, size_t len, uint cg_tasks,
                      enum crts_side side, char *why, size_t whylen)
{
  if (len == 0)
    return LAPI_SUCCESS; /* nothing is read or written */
  int org = side == CRTS_SIDE_ORG;
  switch (buf_fault(p, len, cg_tasks, why, whylen,
                    org ? "the origin buffer" : "the target buffer", -1)) {
  case 0: return LAPI_SUCCESS;
  case 1: return org ? LAPI_ERR_ORG_ADDR_NULL : LAPI_ERR_TGT_ADDR_NULL;
  default: return LAPI_ERR_DATA_LEN;
  }
}

int crts_tp_check_cntr(const void *cntr, uint cg_tasks, const char *api)
{
  char why[256];
  if (cntr == NULL ||
      buf_fault(cntr, sizeof(lapi_cntr_t), cg_tasks, why, sizeof why,
                "tgt_cntr", -1) == 0)
    return LAPI_SUCCESS;
  return LAPI_FAIL_IN(api, LAPI_ERR_TGT_ADDR_NULL, "%s", why);
}

int crts_tp_check_vec(const lapi_vec_t *v, uint cg_tasks, enum crts_side side,
                      int translate, int org_cpe, int tgt_cpe, char *why,
                      size_t whylen)
{
  int org = side == CRTS_SIDE_ORG;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    if (v->num_vecs == 0 || lapi_vec_stride_block(v) == 0)
      return LAPI_SUCCESS;
    size_t block = lapi_vec_stride_block(v);
    size_t span = (size_t)(v->num_vecs - 1) * lapi_vec_stride_pitch(v) +
                  block;
    void *base = translate ? crts_tp_target_addr(lapi_vec_stride_base(v),
                                                 org_cpe, tgt_cpe)
                           : (void *)lapi_vec_stride_base(v);
    switch (buf_fault(base, span, cg_tasks, why, whylen,
                      org ? "the extent of strided org_vec"
                          : "the extent of strided tgt_vec", -1)) {
    case 0: return LAPI_SUCCESS;
    case 1: return org ? LAPI_ERR_ORG_VEC_ADDR : LAPI_ERR_TGT_VEC_ADDR;
    default: return org ? LAPI_ERR_ORG_EXTENT : LAPI_ERR_TGT_EXTENT;
    }
  }
  for (uint i = 0; i < v->num_vecs; i++) {
    if (v->len[i] == 0)
      continue;
    void *p = translate ? crts_tp_target_addr(lapi_addr_u64(v->info[i]),
                                              org_cpe, tgt_cpe)
                        : v->info[i];
    switch (buf_fault(p, v->len[i], cg_tasks, why, whylen,
                      org ? "org_vec" : "tgt_vec", (int)i)) {
    case 0: break;
    case 1: return org ? LAPI_ERR_ORG_VEC_ADDR : LAPI_ERR_TGT_VEC_ADDR;
    default: return org ? LAPI_ERR_ORG_VEC_LEN : LAPI_ERR_TGT_VEC_LEN;
    }
  }
  return LAPI_SUCCESS;
}

static size_t round16(size_t n)
{
  return (n + 15) & ~(size_t)15;
}

size_t crts_tp_vec_size(const lapi_vec_t *v)
{
  size_t n = v->vec_type == LAPI_GEN_STRIDED_XFER ? 3 : v->num_vecs;
  size_t lens = v->vec_type == LAPI_GEN_STRIDED_XFER ? 0 : v->num_vecs;
  return round16(sizeof(lapi_vec_t)) + round16(n * sizeof(void *)) +
         round16(lens * sizeof(ulong));
}

lapi_vec_t *crts_tp_vec_copy(const lapi_vec_t *v, void *mem)
{
  char *p = mem;
  lapi_vec_t *c = (lapi_vec_t *)p;
  p += round16(sizeof(lapi_vec_t));
  c->vec_type = v->vec_type;
  c->num_vecs = v->num_vecs;
  c->info = (void **)p;
  c->len = NULL;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    if (v->num_vecs) /* an empty vector's info need not exist */
      memcpy(c->info, v->info, 3 * sizeof(void *));
    else
      memset(c->info, 0, 3 * sizeof(void *));
    return c;
  }
  size_t n = v->num_vecs;
  if (n) {
    memcpy(c->info, v->info, n * sizeof(void *));
    c->len = (ulong *)(p + round16(n * sizeof(void *)));
    memcpy(c->len, v->len, n * sizeof(ulong));
  }
  return c;
}

size_t crts_tp_move_buf(void *dst, const void *src, size_t len,
                        const char *call)
{
  if (len == 0)
    return 0;
  crts_engine_move(dst, len, src, len, len, 1, call);
  return len;
}

static void *xlate(uintptr_t a, int on, int org_cpe, int tgt_cpe)
{
  return on ? crts_tp_target_addr(a, org_cpe, tgt_cpe) : (void *)a;
}

size_t crts_tp_move(const lapi_vec_t *src, const lapi_vec_t *dst,
                    enum crts_xlate x, int org_cpe, int tgt_cpe,
                    const char *call)
{
  int xs = x == CRTS_XLATE_SRC, xd = x == CRTS_XLATE_DST;
  if (src->vec_type == LAPI_GEN_STRIDED_XFER &&
      dst->vec_type == LAPI_GEN_STRIDED_XFER) {
    /* A checked strided pair: same block, same count.  One 2-D move, so a
     * memory side with an LDM side becomes one strided DMA. */
    size_t block = lapi_vec_stride_block(src), n = src->num_vecs;
    if (block == 0 || n == 0)
      return 0;
    crts_engine_move(xlate(lapi_vec_stride_base(dst), xd, org_cpe, tgt_cpe),
                     lapi_vec_stride_pitch(dst),
                     xlate(lapi_vec_stride_base(src), xs, org_cpe, tgt_cpe),
                     lapi_vec_stride_pitch(src), block, n, call);
    return block * n;
  }
  struct lapi_vec_cursor c;
  const void *s;
  void *d;
  size_t len, done = 0;
  lapi_vec_cursor_init(&c, src, dst);
  while (lapi_vec_cursor_next(&c, &s, &d, &len)) {
    crts_engine_move(xlate((uintptr_t)d, xd, org_cpe, tgt_cpe), len,
                     xlate((uintptr_t)s, xs, org_cpe, tgt_cpe), len, len, 1,
                     call);
    done += len;
  }
  return done;
}
