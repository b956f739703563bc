/*
 * cpe_dma.c - the DMA engine of a CPE: get/put (blocking, non-blocking,
 * strided), CRTS_dma_wait_value and the DMA barriers, plus the argument
 * checks and the copy shared with the broadcasts (crts_dma.h).
 *
 * A DMA moves data between main memory and the issuing CPE's own LDM.  The
 * copy is done synchronously by the issuing thread, so the engine completes
 * at once: a non-blocking call has already finished when it returns and
 * has added 1 to its reply word.  Overlap is not modelled; reply-word
 * counting and ordering are exact.
 *
 * Every address, len, bsize and stride must be a multiple of 4.  len 0 is a
 * valid transfer of nothing (a non-blocking one still completes).  A bad
 * argument is reported and fails the call before any byte is touched.
 */
#include <stdint.h>
#include <string.h>

#include "bulk_copy.h"
#include "crts_dma.h"

int crts_dma_shape_init(const char *call, struct crts_dma_shape *s, int len,
                        int bsize, int stride)
{
  if (len < 0) {
    crts_report(call, "len %d is negative", len);
    return -1;
  }
  if (len % 4 != 0) {
    crts_report(call, "len %d is not a multiple of 4: DMA moves whole "
                "4-byte words", len);
    return -1;
  }
  s->len = (size_t)len;
  s->bsize = 0;
  s->gap = 0;
  if (stride == 0)
    return 0; /* contiguous: bsize means nothing, as on the chip */
  if (stride < 0) {
    crts_report(call, "stride %d is negative: it is the gap skipped in main "
                "memory after each block (0 = contiguous)", stride);
    return -1;
  }
  if (stride % 4 != 0 || bsize % 4 != 0) {
    crts_report(call, "bsize %d and stride %d must be multiples of 4", bsize,
                stride);
    return -1;
  }
  if (bsize <= 0) {
    crts_report(call, "bsize %d: with a stride, bsize is the size of each "
                "block in main memory and must be positive", bsize);
    return -1;
  }
  s->bsize = (size_t)bsize;
  s->gap = (size_t)stride;
  return 0;
}

size_t crts_dma_span(const struct crts_dma_shape *s)
{
  if (s->gap == 0 || s->len == 0)
    return s->len;
  size_t blocks = (s->len + s->bsize - 1) / s->bsize;
  size_t gaps, span;
  if (__builtin_mul_overflow(blocks - 1, s->gap, &gaps) ||
      __builtin_add_overflow(s->len, gaps, &span))
    return SIZE_MAX;
  return span;
}

int crts_dma_check_ldm(const char *call, const char *name, const void *p,
                       size_t len, const struct crts_cpe *self)
{
  if (!p) {
    crts_report(call, "%s is NULL: it must be an address in this CPE's LDM",
                name);
    return -1;
  }
  if ((uintptr_t)p % 4 != 0) {
    crts_report(call, "%s %p is not 4-byte aligned: DMA addresses must be "
                "multiples of 4", name, p);
    return -1;
  }
  int owner = crts_ldm_owner(p);
  if (owner < 0) {
    crts_report(call, "%s %p is not LDM: this side of a DMA is the caller's "
                "LDM (a __thread_local variable, a local or "
                "CRTS_pldm_malloc memory)", name, p);
    return -1;
  }
  if (owner != self->tid) {
    crts_report(call, "%s %p is in CPE %d's LDM: DMA reaches only the "
                "caller's own LDM (use RMA to reach another CPE)", name, p,
                owner);
    return -1;
  }
  if (!crts_ldm_range(p, len, &owner) || owner != self->tid) {
    crts_report(call, "%s %p + %zu bytes runs past the usable LDM (the end "
                "of the heap area or of the slice)", name, p, len);
    return -1;
  }
  return 0;
}

int crts_dma_check_mem(const char *call, const char *name, const void *p,
                       const struct crts_dma_shape *s)
{
  if (!p) {
    crts_report(call, "%s is NULL: it must be a main-memory address", name);
    return -1;
  }
  if ((uintptr_t)p % 4 != 0) {
    crts_report(call, "%s %p is not 4-byte aligned: DMA addresses must be "
                "multiples of 4", name, p);
    return -1;
  }
  size_t span = crts_dma_span(s);
  uintptr_t lo = (uintptr_t)p, hi;
  if (__builtin_add_overflow(lo, span, &hi)) {
    crts_report(call, "%s %p + %zu bytes wraps around the address space",
                name, p, span);
    return -1;
  }
  /* Even an empty transfer must name main memory: test at least 1 byte. */
  if (hi == lo)
    hi = lo + 1;
  uintptr_t a = (uintptr_t)crts_cg.arena;
  if (lo < a + crts_cg.arena_len && hi > a) {
    int owner = crts_ldm_owner(p);
    if (owner >= 0)
      crts_report(call, "%s %p is in CPE %d's LDM: this side of a DMA must "
                  "be main memory (LDM to LDM is RMA)", name, p, owner);
    else
      crts_report(call, "%s %p + %zu bytes overlaps the LDM: this side of a "
                  "DMA must be main memory", name, p, span);
    return -1;
  }
  return 0;
}

int crts_dma_check_rply(const char *call, crts_rply_t *rply,
                        const struct crts_cpe *self)
{
  if (!rply) {
    crts_report(call, "rply is NULL: a non-blocking DMA needs a reply word "
                "in LDM");
    return -1;
  }
  int owner = -1;
  if ((uintptr_t)rply % sizeof(int) != 0 ||
      !crts_ldm_range((const void *)rply, sizeof *rply, &owner) ||
      owner != self->tid) {
    crts_report(call, "rply %p is not an aligned word of this CPE's LDM: "
                "declare the reply word __thread_local", (void *)rply);
    return -1;
  }
  return 0;
}

void crts_dma_copy(void *ldm, void *mem, const struct crts_dma_shape *s,
                   enum crts_dma_dir dir)
{
  char *l = ldm, *m = mem;
  size_t left = s->len;
  size_t block = s->gap == 0 ? left : s->bsize;
  while (left > 0) {
    size_t n = left < block ? left : block;
    if (dir == CRTS_DMA_TO_LDM)
      bulk_copy(l, m, n);
    else
      bulk_copy(m, l, n);
    left -= n;
    if (left == 0)
      break;
    l += n;
    m += n + s->gap;
  }
}

/* ------------------------------------------------------------ get / put */

/*
 * One single-CPE transfer (crts_dma.h): TO_LDM is a get (dst LDM, src
 * memory), TO_MEM a put (dst memory, src LDM).  rply NULL with
 * nonblocking 0: blocking form.
 */
int crts_dma_single(const char *call, enum crts_dma_dir dir, void *dst,
                    void *src, int len, int bsize, int stride,
                    crts_rply_t *rply, int nonblocking)
{
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return -1;
  int get = dir == CRTS_DMA_TO_LDM;
  void *ldm = get ? dst : src;
  void *mem = get ? src : dst;
  struct crts_dma_shape s;
  if (crts_dma_shape_init(call, &s, len, bsize, stride) != 0 ||
      crts_dma_check_ldm(call, get ? "dst" : "src", ldm, s.len, self) != 0 ||
      crts_dma_check_mem(call, get ? "src" : "dst", mem, &s) != 0 ||
      (nonblocking && crts_dma_check_rply(call, rply, self) != 0))
    return -1;
  crts_dma_copy(ldm, mem, &s, dir);
  crts_stat_add(self, get ? CRTS_STAT_DMA_GET : CRTS_STAT_DMA_PUT, s.len);
  if (nonblocking)
    crts_dma_reply(rply, self->tid);
  return 0;
}

int CRTS_dma_get(void *dst, void *src, int len)
{
  return crts_dma_single("CRTS_dma_get", CRTS_DMA_TO_LDM, dst, src,
                         len, 0, 0, NULL, 0);
}

int CRTS_dma_get_stride(void *dst, void *src, int len, int bsize, int stride)
{
  return crts_dma_single("CRTS_dma_get_stride", CRTS_DMA_TO_LDM, dst, src,
                         len, bsize, stride, NULL, 0);
}

int CRTS_dma_iget(void *dst, void *src, int len, crts_rply_t *rply)
{
  return crts_dma_single("CRTS_dma_iget", CRTS_DMA_TO_LDM, dst, src,
                         len, 0, 0, rply, 1);
}

int CRTS_dma_iget_stride(void *dst, void *src, int len, int bsize, int stride,
                         crts_rply_t *rply)
{
  return crts_dma_single("CRTS_dma_iget_stride", CRTS_DMA_TO_LDM, dst, src,
                         len, bsize, stride, rply, 1);
}

int CRTS_dma_put(void *dst, void *src, int len)
{
  return crts_dma_single("CRTS_dma_put", CRTS_DMA_TO_MEM, dst, src,
                         len, 0, 0, NULL, 0);
}

int CRTS_dma_put_stride(void *dst, void *src, int len, int bsize, int stride)
{
  return crts_dma_single("CRTS_dma_put_stride", CRTS_DMA_TO_MEM, dst, src,
                         len, bsize, stride, NULL, 0);
}

int CRTS_dma_iput(void *dst, void *src, int len, crts_rply_t *rply)
{
  return crts_dma_single("CRTS_dma_iput", CRTS_DMA_TO_MEM, dst, src,
                         len, 0, 0, rply, 1);
}

int CRTS_dma_iput_stride(void *dst, void *src, int len, int bsize, int stride,
                         crts_rply_t *rply)
{
  return crts_dma_single("CRTS_dma_iput_stride", CRTS_DMA_TO_MEM, dst, src,
                         len, bsize, stride, rply, 1);
}

/* ------------------------------------------------------ wait, barriers */

int CRTS_dma_wait_value(crts_rply_t *rply, int value)
{
  const char *call = "CRTS_dma_wait_value";
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self || crts_dma_check_rply(call, rply, self) != 0)
    return -1;
  if (value < 0) {
    crts_report(call, "value %d is negative: it counts completed "
                "operations (0, 1, 2, ...)", value);
    return -1;
  }
  crts_word_wait_ge(rply, value, &self->waiting_on);
  return 0;
}

/*
 * The engine finishes every transfer before the issuing call returns, so
 * a CPE's DMAs (and RMAs) are already complete and ordered when a barrier
 * is reached; all that is left is to order this thread's memory accesses
 * around it, which a full fence does.
 */
static int dma_fence(const char *call)
{
  if (!crts_check_cpe(call))
    return -1;
  atomic_thread_fence(memory_order_seq_cst);
  return 0;
}

int CRTS_dma_barrier(void) { return dma_fence("CRTS_dma_barrier"); }

int CRTS_dma_all_barrier(void) { return dma_fence("CRTS_dma_all_barrier"); }
