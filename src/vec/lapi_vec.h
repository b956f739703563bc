/*
 * lapi_vec.h - the LAPI vector engine (internal API of src/vec).
 *
 * A lapi_vec_t describes a byte stream scattered over memory:
 *   LAPI_GEN_IOVECTOR, LAPI_GEN_GENERIC  segment i = (info[i], len[i])
 *   LAPI_GEN_STRIDED_XFER                block i = info[0] + i * info[2],
 *                                        info[1] bytes long; info[1] and
 *                                        info[2] are integers in void *
 *                                        slots, read as uintptr_t; len unused
 * Every transfer between an origin and a target vector, whatever the type,
 * is "the origin stream flows in order into the target stream until one of
 * them ends" (LAPI_Amsendv: GENERIC drops the origin's extra bytes; the
 * pair rules make IOVECTOR and STRIDED sides equal in size).  So one walker
 * over one stream serves validation, sizes, pairwise copies and the
 * pack/unpack of a contiguous wire buffer.
 *
 * src/vec knows no handle, no task and no transport: these are pure
 * functions.  They never allocate; walkers and cursors are small structs
 * on the caller's stack.  They do not print either: a failed check returns
 * the exact LAPI code and lapi_vec_explain() words a message for the
 * caller's report (the caller knows which LAPI call failed).
 *
 * Preconditions: the walkers, cursors and size helpers take vectors that
 * passed lapi_vec_check_origin/target (and pairs that passed
 * lapi_vec_check_pair); on anything else their behaviour is undefined.
 */
#ifndef LAPI_VEC_H
#define LAPI_VEC_H

#include <stddef.h>
#include <stdint.h>

#include <lapi.h>

/* ------------------------------------------------------------ validation */

/*
 * Check an origin vector.  Returns LAPI_SUCCESS or, in this order of
 * precedence:
 *   LAPI_ERR_ORG_VEC_NULL   v is NULL
 *   LAPI_ERR_ORG_VEC_TYPE   vec_type is not one of the three LAPI_GEN_*
 * with num_vecs == 0 the vector is empty and valid (info, len not read).
 * IOVECTOR / GENERIC:
 *   LAPI_ERR_ORG_VEC_ADDR   info is NULL, or some info[i] is NULL with
 *                           len[i] != 0, or info[i] + len[i] runs past the
 *                           end of the address space
 *   LAPI_ERR_ORG_VEC_LEN    len is NULL, or the sum of len[] exceeds
 *                           LAPI_MAX_MSG_SZ (or SIZE_MAX)
 *   (an address fault anywhere wins over a length fault)
 * STRIDED_XFER:
 *   LAPI_ERR_ORG_VEC_ADDR          info is NULL
 *   LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL  info[0] is NULL and block > 0
 *   LAPI_ERR_ORG_STRIDE            stride < block (also when num_vecs == 1)
 *   LAPI_ERR_ORG_EXTENT            stride * num_vecs overflows or exceeds
 *                                  LAPI_MAX_MSG_SZ, or the last block runs
 *                                  past the end of the address space
 * A strided vector with block 0 is valid and empty (base may be NULL).
 */
int lapi_vec_check_origin(const lapi_vec_t *v);

/* The same checks on a target vector, with the TGT_* twins:
 * TGT_VEC_NULL, TGT_VEC_TYPE, TGT_VEC_ADDR, TGT_VEC_LEN,
 * STRIDE_TGT_VEC_ADDR_NULL, TGT_STRIDE, TGT_EXTENT. */
int lapi_vec_check_target(const lapi_vec_t *v);

/*
 * Check that a target vector may receive an origin vector.  Both must have
 * passed their own check.  Reads only vec_type, num_vecs, len[] (IOVECTOR)
 * and info[1] (STRIDED), never an address: the target side can rebuild the
 * origin's shape from the lengths that travel with the message.
 *   LAPI_ERR_ORG_VEC_NULL / TGT_VEC_NULL  a vector is NULL
 *   LAPI_ERR_VEC_TYPE_DIFF  the types differ
 *   LAPI_ERR_VEC_NUM_DIFF   IOVECTOR or STRIDED and num_vecs differ
 *   LAPI_ERR_VEC_LEN_DIFF   IOVECTOR len[i] differ, or STRIDED blocks differ
 * GENERIC pairs always match (different counts and lengths are the point).
 * A stride may differ between the sides: it is a layout, not a size.
 */
int lapi_vec_check_pair(const lapi_vec_t *org, const lapi_vec_t *tgt);

/*
 * Word a failed check for a report: writes into buf (snprintf rules, size
 * may be 0) one sentence that names the faulty field and index and says
 * what to change, e.g. "org_vec->info[3] is NULL but org_vec->len[3] is 16:
 * give every non-empty segment an address".  code is what one of the three
 * checks returned for these vectors (org or tgt may be NULL when the code
 * does not concern it).  Returns the length of the full message.
 */
int lapi_vec_explain(int code, const lapi_vec_t *org, const lapi_vec_t *tgt,
                     char *buf, size_t size);

/* ------------------------------------------------------------------ sizes */

/* Bytes described by a valid vector (sum of len[], or num_vecs * block). */
size_t lapi_vec_bytes(const lapi_vec_t *v);

/* Bytes that flow from org into tgt: the smaller of the two sizes (equal
 * for a matching IOVECTOR or STRIDED pair; GENERIC drops the rest). */
size_t lapi_vec_pair_bytes(const lapi_vec_t *org, const lapi_vec_t *tgt);

/* Strided fields, read from their void * slots. */
static inline uintptr_t lapi_vec_stride_base(const lapi_vec_t *v)
{
  return (uintptr_t)v->info[0];
}
static inline size_t lapi_vec_stride_block(const lapi_vec_t *v)
{
  return (size_t)(uintptr_t)v->info[1];
}
static inline size_t lapi_vec_stride_pitch(const lapi_vec_t *v)
{
  return (size_t)(uintptr_t)v->info[2];
}

/* ------------------------------------------------------ one-sided walker */

/*
 * A position in the stream of one vector.  The walker hands out maximal
 * contiguous pieces: zero-length segments are skipped, and segments that
 * continue each other in memory (iovector neighbours, stride == block)
 * merge into one piece.  Fields are private to lapi_vec_cursor.c.
 */
struct lapi_vec_walk {
  const lapi_vec_t *v;
  uint next;        /* first segment not yet part of a piece */
  uintptr_t addr;   /* rest of the current piece */
  size_t left;      /* its length; 0 = load the next piece */
  size_t pos;       /* stream offset of addr */
};

void lapi_vec_walk_init(struct lapi_vec_walk *w, const lapi_vec_t *v);

/* Move to stream offset `offset` (from the start, whatever the current
 * position).  Returns the offset reached: `offset`, or the stream size if
 * that is smaller.  O(1) for STRIDED, O(segments) otherwise. */
size_t lapi_vec_walk_seek(struct lapi_vec_walk *w, size_t offset);

/* Take the next piece of at most `max` bytes: sets *addr and *len and
 * returns 1, or returns 0 at the end of the stream or when max is 0. */
int lapi_vec_walk_next(struct lapi_vec_walk *w, size_t max, void **addr,
                       size_t *len);

/* Copy the next `len` stream bytes into / out of a contiguous buffer and
 * advance; returns the bytes moved (fewer at the end of the stream). */
size_t lapi_vec_walk_pack(struct lapi_vec_walk *w, void *buf, size_t len);
size_t lapi_vec_walk_unpack(struct lapi_vec_walk *w, const void *buf,
                            size_t len);

/*
 * Stateless forms for chunked transfers: copy stream bytes
 * [offset, offset + len) of v into buf (pack, at the origin) or from buf
 * into v (unpack, at the target).  Returns the bytes moved: len, fewer if
 * the stream ends first, 0 if offset is past its end.
 */
size_t lapi_vec_pack(const lapi_vec_t *v, void *buf, size_t offset,
                     size_t len);
size_t lapi_vec_unpack(const lapi_vec_t *v, const void *buf, size_t offset,
                       size_t len);

/* --------------------------------------------------------- pair cursor */

/*
 * Walks an origin and a target vector together and yields runs
 * (src, dst, len): the longest stretch that is contiguous on both sides.
 * A run ends where either side's piece ends, so GENERIC {5,10,5} into
 * {12,2,4,2} gives 5, 7, 2, 1, 3, 2 bytes.  Stops when either stream ends.
 */
struct lapi_vec_cursor {
  struct lapi_vec_walk org, tgt;
};

void lapi_vec_cursor_init(struct lapi_vec_cursor *c, const lapi_vec_t *org,
                          const lapi_vec_t *tgt);

/* Next run: sets *src, *dst, *len (> 0) and returns 1; returns 0 when done. */
int lapi_vec_cursor_next(struct lapi_vec_cursor *c, const void **src,
                         void **dst, size_t *len);

/* Copy a whole checked pair in place (the loopback transport).  Uses
 * memmove, so a self-put whose origin overlaps its target stays defined
 * per run.  Returns the bytes copied (lapi_vec_pair_bytes). */
size_t lapi_vec_copy(const lapi_vec_t *org, const lapi_vec_t *tgt);

#endif /* LAPI_VEC_H */
