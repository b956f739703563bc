/*
 * lapi_vec_check.c - validation of LAPI vectors and their sizes.
 *
 * One checker serves both sides: a table maps each fault to the origin's
 * or the target's error code (ORG_VEC_ADDR vs TGT_VEC_ADDR ...).  The
 * checker also records where it failed, so lapi_vec_explain() can re-run
 * it on the error path and name the field instead of just a number.
 */
#include <stdio.h>

#include "vec/lapi_vec.h"

/* What went wrong; each maps to one code per side. */
enum fault_kind {
  F_NONE,
  F_NULL,         /* the vector pointer */
  F_TYPE,         /* vec_type out of range */
  F_INFO_ARRAY,   /* info NULL with num_vecs > 0 */
  F_LEN_ARRAY,    /* len NULL, IOVECTOR/GENERIC */
  F_SEG_NULL,     /* info[i] NULL, len[i] != 0 */
  F_SEG_WRAP,     /* info[i] + len[i] past the address space */
  F_SUM,          /* sum of len[] too large */
  F_STRIDE_BASE,  /* strided info[0] NULL, block > 0 */
  F_STRIDE_LT,    /* stride < block */
  F_EXTENT,       /* stride * num_vecs too large */
  F_EXTENT_WRAP,  /* last block past the address space */
  F_TYPE_DIFF,
  F_NUM_DIFF,
  F_LEN_DIFF,
  F_BLOCK_DIFF,
};

struct fault {
  enum fault_kind kind;
  uint index;                /* segment, where one is concerned */
  unsigned long long a, b;   /* the values that disagree */
};

/* The codes and the name one side reports with. */
struct side {
  const char *name;
  int null, type, addr, len, stride_addr, stride, extent;
};

static const struct side org_side = {
  "org_vec", LAPI_ERR_ORG_VEC_NULL, LAPI_ERR_ORG_VEC_TYPE,
  LAPI_ERR_ORG_VEC_ADDR, LAPI_ERR_ORG_VEC_LEN,
  LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL, LAPI_ERR_ORG_STRIDE, LAPI_ERR_ORG_EXTENT,
};

static const struct side tgt_side = {
  "tgt_vec", LAPI_ERR_TGT_VEC_NULL, LAPI_ERR_TGT_VEC_TYPE,
  LAPI_ERR_TGT_VEC_ADDR, LAPI_ERR_TGT_VEC_LEN,
  LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL, LAPI_ERR_TGT_STRIDE, LAPI_ERR_TGT_EXTENT,
};

/* Largest stream: LAPI's limit, and what a size_t can count on this ABI. */
static uint64_t size_limit(void)
{
  uint64_t lapi = (uint64_t)LAPI_MAX_MSG_SZ;
  return lapi < (uint64_t)SIZE_MAX ? lapi : (uint64_t)SIZE_MAX;
}

static int valid_type(const lapi_vec_t *v)
{
  switch (v->vec_type) {
  case LAPI_GEN_IOVECTOR:
  case LAPI_GEN_STRIDED_XFER:
  case LAPI_GEN_GENERIC:
    return 1;
  }
  return 0;
}

static int fail(struct fault *f, enum fault_kind kind, uint index,
                unsigned long long a, unsigned long long b, int code)
{
  f->kind = kind;
  f->index = index;
  f->a = a;
  f->b = b;
  return code;
}

/* IOVECTOR and GENERIC: (info[i], len[i]) pairs.  An address fault
 * anywhere takes precedence over a length sum that overflows earlier, so
 * the answer does not depend on where in the list the two faults sit. */
static int check_list(const lapi_vec_t *v, const struct side *s,
                      struct fault *f)
{
  if (!v->info)
    return fail(f, F_INFO_ARRAY, 0, v->num_vecs, 0, s->addr);
  if (!v->len)
    return fail(f, F_LEN_ARRAY, 0, v->num_vecs, 0, s->len);
  uint64_t limit = size_limit(), sum = 0;
  int over = 0;
  uint over_at = 0;
  for (uint i = 0; i < v->num_vecs; i++) {
    uintptr_t a = (uintptr_t)v->info[i];
    uint64_t n = v->len[i];
    if (n != 0 && a == 0)
      return fail(f, F_SEG_NULL, i, n, 0, s->addr);
    if (n > (uint64_t)(UINTPTR_MAX - a))
      return fail(f, F_SEG_WRAP, i, n, a, s->addr);
    if (!over && n > limit - sum) {
      over = 1;
      over_at = i;
    } else if (!over) {
      sum += n;
    }
  }
  if (over)
    return fail(f, F_SUM, over_at, limit, 0, s->len);
  return LAPI_SUCCESS;
}

/* STRIDED_XFER: info = {base, block, stride}, num_vecs blocks. */
static int check_strided(const lapi_vec_t *v, const struct side *s,
                         struct fault *f)
{
  if (!v->info)
    return fail(f, F_INFO_ARRAY, 0, v->num_vecs, 0, s->addr);
  uintptr_t base = lapi_vec_stride_base(v);
  uint64_t block = lapi_vec_stride_block(v);
  uint64_t stride = lapi_vec_stride_pitch(v);
  uint64_t n = v->num_vecs;
  if (block > 0 && base == 0)
    return fail(f, F_STRIDE_BASE, 0, block, 0, s->stride_addr);
  if (stride < block)
    return fail(f, F_STRIDE_LT, 0, stride, block, s->stride);
  if (stride > size_limit() / n)
    return fail(f, F_EXTENT, 0, stride, n, s->extent);
  /* The bytes touched end at base + (n-1)*stride + block <= base + extent;
   * that sum must not wrap the address space. */
  if (block > 0 && (n - 1) * stride + block > (uint64_t)(UINTPTR_MAX - base))
    return fail(f, F_EXTENT_WRAP, 0, base, (n - 1) * stride + block,
                s->extent);
  return LAPI_SUCCESS;
}

static int check_vec(const lapi_vec_t *v, const struct side *s,
                     struct fault *f)
{
  f->kind = F_NONE;
  if (!v)
    return fail(f, F_NULL, 0, 0, 0, s->null);
  if (!valid_type(v))
    return fail(f, F_TYPE, 0, (unsigned long long)(long long)v->vec_type, 0,
                s->type);
  if (v->num_vecs == 0)
    return LAPI_SUCCESS;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER)
    return check_strided(v, s, f);
  return check_list(v, s, f);
}

static int check_pair(const lapi_vec_t *org, const lapi_vec_t *tgt,
                      struct fault *f)
{
  f->kind = F_NONE;
  if (!org)
    return fail(f, F_NULL, 0, 0, 0, LAPI_ERR_ORG_VEC_NULL);
  if (!tgt)
    return fail(f, F_NULL, 1, 0, 0, LAPI_ERR_TGT_VEC_NULL);
  if (!valid_type(org))
    return fail(f, F_TYPE, 0, (unsigned long long)(long long)org->vec_type, 0,
                LAPI_ERR_ORG_VEC_TYPE);
  if (!valid_type(tgt))
    return fail(f, F_TYPE, 1, (unsigned long long)(long long)tgt->vec_type, 0,
                LAPI_ERR_TGT_VEC_TYPE);
  if (org->vec_type != tgt->vec_type)
    return fail(f, F_TYPE_DIFF, 0, org->vec_type, tgt->vec_type,
                LAPI_ERR_VEC_TYPE_DIFF);
  if (org->vec_type == LAPI_GEN_GENERIC)
    return LAPI_SUCCESS;
  if (org->num_vecs != tgt->num_vecs)
    return fail(f, F_NUM_DIFF, 0, org->num_vecs, tgt->num_vecs,
                LAPI_ERR_VEC_NUM_DIFF);
  if (org->num_vecs == 0)
    return LAPI_SUCCESS;
  if (org->vec_type == LAPI_GEN_STRIDED_XFER) {
    size_t ob = lapi_vec_stride_block(org), tb = lapi_vec_stride_block(tgt);
    if (ob != tb)
      return fail(f, F_BLOCK_DIFF, 0, ob, tb, LAPI_ERR_VEC_LEN_DIFF);
    return LAPI_SUCCESS;
  }
  for (uint i = 0; i < org->num_vecs; i++)
    if (org->len[i] != tgt->len[i])
      return fail(f, F_LEN_DIFF, i, org->len[i], tgt->len[i],
                  LAPI_ERR_VEC_LEN_DIFF);
  return LAPI_SUCCESS;
}

int lapi_vec_check_origin(const lapi_vec_t *v)
{
  struct fault f;
  return check_vec(v, &org_side, &f);
}

int lapi_vec_check_target(const lapi_vec_t *v)
{
  struct fault f;
  return check_vec(v, &tgt_side, &f);
}

int lapi_vec_check_pair(const lapi_vec_t *org, const lapi_vec_t *tgt)
{
  struct fault f;
  return check_pair(org, tgt, &f);
}

/* ------------------------------------------------------------- messages */

static const char *type_name(unsigned long long t)
{
  switch (t) {
  case LAPI_GEN_IOVECTOR: return "LAPI_GEN_IOVECTOR";
  case LAPI_GEN_STRIDED_XFER: return "LAPI_GEN_STRIDED_XFER";
  case LAPI_GEN_GENERIC: return "LAPI_GEN_GENERIC";
  }
  return "an unknown type";
}

static int is_side_code(int code, const struct side *s)
{
  return code == s->null || code == s->type || code == s->addr ||
         code == s->len || code == s->stride_addr || code == s->stride ||
         code == s->extent;
}

static int say(char *buf, size_t size, const struct side *s,
               const struct fault *f)
{
  const char *n = s->name;
  switch (f->kind) {
  case F_NONE:
    return snprintf(buf, size, "the vectors are valid");
  case F_NULL:
    return snprintf(buf, size, "%s is NULL: pass a lapi_vec_t that "
                    "describes the data", n);
  case F_TYPE:
    return snprintf(buf, size, "%s->vec_type is %lld: use LAPI_GEN_IOVECTOR, "
                    "LAPI_GEN_GENERIC or LAPI_GEN_STRIDED_XFER", n,
                    (long long)f->a);
  case F_INFO_ARRAY:
    return snprintf(buf, size, "%s->info is NULL with num_vecs %llu: point "
                    "info at the segment addresses (strided: at "
                    "{base, block, stride})", n, f->a);
  case F_LEN_ARRAY:
    return snprintf(buf, size, "%s->len is NULL with num_vecs %llu: point "
                    "len at num_vecs segment lengths", n, f->a);
  case F_SEG_NULL:
    return snprintf(buf, size, "%s->info[%u] is NULL but %s->len[%u] is "
                    "%llu: give every non-empty segment an address",
                    n, f->index, n, f->index, f->a);
  case F_SEG_WRAP:
    return snprintf(buf, size, "%s->info[%u] (0x%llx) + len[%u] (%llu) runs "
                    "past the end of the address space: fix the address "
                    "or the length", n, f->index, f->b, f->index, f->a);
  case F_SUM:
    return snprintf(buf, size, "the lengths of %s add up to more than %llu "
                    "bytes (LAPI_MAX_MSG_SZ) at len[%u]: split the data "
                    "over several messages", n, f->a, f->index);
  case F_STRIDE_BASE:
    return snprintf(buf, size, "%s->info[0], the strided base address, is "
                    "NULL with a block of %llu bytes: set info[0] to the "
                    "first block", n, f->a);
  case F_STRIDE_LT:
    return snprintf(buf, size, "%s stride info[2] = %llu is smaller than "
                    "block info[1] = %llu: the stride is the distance from "
                    "one block start to the next, at least the block", n,
                    f->a, f->b);
  case F_EXTENT:
    return snprintf(buf, size, "%s extent stride %llu * num_vecs %llu exceeds "
                    "LAPI_MAX_MSG_SZ: split the transfer", n, f->a, f->b);
  case F_EXTENT_WRAP:
    return snprintf(buf, size, "%s blocks from base 0x%llx span %llu bytes, "
                    "past the end of the address space: fix info[0], "
                    "info[2] or num_vecs", n, f->a, f->b);
  case F_TYPE_DIFF:
    return snprintf(buf, size, "org_vec is %s but tgt_vec is %s: the target "
                    "vector must have the origin's type", type_name(f->a),
                    type_name(f->b));
  case F_NUM_DIFF:
    return snprintf(buf, size, "org_vec->num_vecs %llu differs from "
                    "tgt_vec->num_vecs %llu: an IOVECTOR or STRIDED target "
                    "needs the origin's count (LAPI_GEN_GENERIC may "
                    "reshape)", f->a, f->b);
  case F_LEN_DIFF:
    return snprintf(buf, size, "org_vec->len[%u] = %llu but tgt_vec->len[%u] "
                    "= %llu: an IOVECTOR target needs the origin's lengths "
                    "(LAPI_GEN_GENERIC may reshape)", f->index, f->a,
                    f->index, f->b);
  case F_BLOCK_DIFF:
    return snprintf(buf, size, "org_vec block info[1] = %llu but tgt_vec "
                    "block info[1] = %llu: a STRIDED target needs the "
                    "origin's block size", f->a, f->b);
  }
  return snprintf(buf, size, "invalid vector");
}

int lapi_vec_explain(int code, const lapi_vec_t *org, const lapi_vec_t *tgt,
                     char *buf, size_t size)
{
  struct fault f;
  const struct side *s = &org_side;
  int again;
  /* Re-run the check that produced the code to learn where it failed. */
  if (is_side_code(code, &org_side)) {
    again = check_vec(org, &org_side, &f);
  } else if (is_side_code(code, &tgt_side)) {
    s = &tgt_side;
    again = check_vec(tgt, &tgt_side, &f);
  } else {
    again = check_pair(org, tgt, &f);
    if (f.index == 1 && (f.kind == F_NULL || f.kind == F_TYPE))
      s = &tgt_side;
  }
  if (again != code)
    return snprintf(buf, size, "vector check failed with code %d", code);
  return say(buf, size, s, &f);
}

/* ---------------------------------------------------------------- sizes */

size_t lapi_vec_bytes(const lapi_vec_t *v)
{
  if (!v || v->num_vecs == 0)
    return 0;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER)
    return (size_t)v->num_vecs * lapi_vec_stride_block(v);
  size_t sum = 0;
  for (uint i = 0; i < v->num_vecs; i++)
    sum += v->len[i];
  return sum;
}

size_t lapi_vec_pair_bytes(const lapi_vec_t *org, const lapi_vec_t *tgt)
{
  size_t o = lapi_vec_bytes(org), t = lapi_vec_bytes(tgt);
  return o < t ? o : t;
}
