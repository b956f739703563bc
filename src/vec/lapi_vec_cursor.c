/*
 * lapi_vec_cursor.c - walking LAPI vectors: one side (pack/unpack of a
 * contiguous buffer) and an origin/target pair (runs to copy).
 *
 * Both rest on one walker that turns a vector into maximal contiguous
 * pieces of its byte stream.  The pair cursor just advances two walkers by
 * the shorter of their current pieces, which is the GENERIC rule; checked
 * IOVECTOR and STRIDED pairs are the special case of equal shapes.  No
 * allocation, no per-segment state beyond the walker itself.
 */
#include <string.h>

#include "bulk_copy.h"
#include "vec/lapi_vec.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Make w->left non-zero unless the stream is over: load the next
 * non-empty segment and fold in the segments that continue it in memory. */
static void load(struct lapi_vec_walk *w)
{
  const lapi_vec_t *v = w->v;
  if (w->left || !v || w->next >= v->num_vecs)
    return;
  uint n = v->num_vecs;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    size_t block = lapi_vec_stride_block(v), pitch = lapi_vec_stride_pitch(v);
    if (block == 0) {
      w->next = n;
      return;
    }
    w->addr = lapi_vec_stride_base(v) + (uintptr_t)w->next * pitch;
    if (pitch == block) {  /* dense: the rest is one piece */
      w->left = (size_t)(n - w->next) * block;
      w->next = n;
    } else {
      w->left = block;
      w->next++;
    }
    return;
  }
  while (w->next < n && v->len[w->next] == 0)
    w->next++;
  if (w->next == n)
    return;
  w->addr = (uintptr_t)v->info[w->next];
  w->left = v->len[w->next];
  w->next++;
  /* Empty segments in between do not break a piece. */
  while (w->next < n) {
    size_t len = v->len[w->next];
    if (len && (uintptr_t)v->info[w->next] != w->addr + w->left)
      break;
    w->left += len;
    w->next++;
  }
}

static void advance(struct lapi_vec_walk *w, size_t n)
{
  w->addr += n;
  w->left -= n;
  w->pos += n;
}

void lapi_vec_walk_init(struct lapi_vec_walk *w, const lapi_vec_t *v)
{
  w->v = v;
  w->next = 0;
  w->addr = 0;
  w->left = 0;
  w->pos = 0;
}

size_t lapi_vec_walk_seek(struct lapi_vec_walk *w, size_t offset)
{
  const lapi_vec_t *v = w->v;
  lapi_vec_walk_init(w, v);
  /* Strided blocks are all alike: jump straight to the right one. */
  if (v && v->vec_type == LAPI_GEN_STRIDED_XFER && v->num_vecs > 0) {
    size_t block = lapi_vec_stride_block(v);
    if (block == 0)
      return 0;
    size_t k = offset / block;
    if (k >= v->num_vecs) {
      w->next = v->num_vecs;
      w->pos = (size_t)v->num_vecs * block;
      return w->pos;
    }
    w->next = (uint)k;
    w->pos = k * block;
  }
  while (w->pos < offset) {
    load(w);
    if (!w->left)
      break;
    advance(w, min_size(w->left, offset - w->pos));
  }
  return w->pos;
}

int lapi_vec_walk_next(struct lapi_vec_walk *w, size_t max, void **addr,
                       size_t *len)
{
  if (max == 0)
    return 0;
  load(w);
  if (!w->left)
    return 0;
  size_t n = min_size(w->left, max);
  *addr = (void *)w->addr;
  *len = n;
  advance(w, n);
  return 1;
}

/*
 * Whole strided blocks between the walker and a contiguous buffer, as
 * many as fit in len: the generic walk costs a load() and a variable-size
 * memcpy call per block (about 12 ns for 64-byte blocks here); with the
 * block size a constant the compiler copies small blocks in registers.
 * Returns the bytes moved (0 when the walker is inside a block, the
 * vector is not strided with gaps, or no whole block fits).
 */
#define STRIDE_LOOP(BLK)                                                  \
  for (size_t i = 0; i < nb; i++, mem += pitch, flat += (BLK)) {          \
    if (out)                                                              \
      bulk_copy(flat, mem, (BLK));                                        \
    else                                                                  \
      bulk_copy(mem, flat, (BLK));                                        \
  }

static size_t stride_blocks(struct lapi_vec_walk *w, char *flat, size_t len,
                            int out)
{
  const lapi_vec_t *v = w->v;
  if (w->left || !v || v->vec_type != LAPI_GEN_STRIDED_XFER ||
      w->next >= v->num_vecs)
    return 0;
  size_t block = lapi_vec_stride_block(v), pitch = lapi_vec_stride_pitch(v);
  if (block == 0 || pitch == block)
    return 0; /* empty, or dense: one piece anyway */
  size_t nb = len / block;
  if (nb > v->num_vecs - w->next)
    nb = v->num_vecs - w->next;
  if (nb == 0)
    return 0;
  char *mem = (char *)(lapi_vec_stride_base(v) + (uintptr_t)w->next * pitch);
  switch (block) {
  case 4: STRIDE_LOOP(4) break;
  case 8: STRIDE_LOOP(8) break;
  case 16: STRIDE_LOOP(16) break;
  case 32: STRIDE_LOOP(32) break;
  case 64: STRIDE_LOOP(64) break;
  case 128: STRIDE_LOOP(128) break;
  default: STRIDE_LOOP(block) break;
  }
  w->next += (uint)nb;
  w->pos += nb * block;
  return nb * block;
}

size_t lapi_vec_walk_pack(struct lapi_vec_walk *w, void *buf, size_t len)
{
  char *out = buf;
  size_t done = 0, n;
  void *p;
  for (;;) {
    done += stride_blocks(w, out + done, len - done, 1);
    if (!lapi_vec_walk_next(w, len - done, &p, &n))
      break;
    bulk_copy(out + done, p, n);
    done += n;
  }
  return done;
}

size_t lapi_vec_walk_unpack(struct lapi_vec_walk *w, const void *buf,
                            size_t len)
{
  const char *in = buf;
  size_t done = 0, n;
  void *p;
  for (;;) {
    done += stride_blocks(w, (char *)in + done, len - done, 0);
    if (!lapi_vec_walk_next(w, len - done, &p, &n))
      break;
    bulk_copy(p, in + done, n);
    done += n;
  }
  return done;
}

size_t lapi_vec_pack(const lapi_vec_t *v, void *buf, size_t offset,
                     size_t len)
{
  struct lapi_vec_walk w;
  lapi_vec_walk_init(&w, v);
  if (lapi_vec_walk_seek(&w, offset) < offset)
    return 0;
  return lapi_vec_walk_pack(&w, buf, len);
}

size_t lapi_vec_unpack(const lapi_vec_t *v, const void *buf, size_t offset,
                       size_t len)
{
  struct lapi_vec_walk w;
  lapi_vec_walk_init(&w, v);
  if (lapi_vec_walk_seek(&w, offset) < offset)
    return 0;
  return lapi_vec_walk_unpack(&w, buf, len);
}

void lapi_vec_cursor_init(struct lapi_vec_cursor *c, const lapi_vec_t *org,
                          const lapi_vec_t *tgt)
{
  lapi_vec_walk_init(&c->org, org);
  lapi_vec_walk_init(&c->tgt, tgt);
}

int lapi_vec_cursor_next(struct lapi_vec_cursor *c, const void **src,
                         void **dst, size_t *len)
{
  load(&c->org);
  load(&c->tgt);
  if (!c->org.left || !c->tgt.left)
    return 0;
  size_t n = min_size(c->org.left, c->tgt.left);
  *src = (const void *)c->org.addr;
  *dst = (void *)c->tgt.addr;
  *len = n;
  advance(&c->org, n);
  advance(&c->tgt, n);
  return 1;
}

size_t lapi_vec_copy(const lapi_vec_t *org, const lapi_vec_t *tgt)
{
  struct lapi_vec_cursor c;
  const void *src;
  void *dst;
  size_t n, done = 0;
  lapi_vec_cursor_init(&c, org, tgt);
  while (lapi_vec_cursor_next(&c, &src, &dst, &n)) {
    bulk_move(dst, src, n);
    done += n;
  }
  return done;
}
