/*
 * crts_dma.h - internals shared by the DMA engine files (cpe_dma.c,
 * cpe_dma_bcast.c): argument checks, the strided copy and completions.
 *
 * The emulated engine completes a transfer while the issuing CPE is still
 * inside the call: the bytes are copied synchronously, then the reply word
 * (if any) is raised.  Overlap of DMA with computation is therefore not
 * modelled, but what a program can observe through reply words - how many
 * times each one is incremented, by whom, and that the data is in place
 * when the count is seen - is exact.
 */
#ifndef CRTS_DMA_H
#define CRTS_DMA_H

#include <stddef.h>
#include <stdint.h>

#include "crts_cg.h"

/*
 * Shape of one transfer: len bytes, contiguous on the LDM side; on the
 * main-memory side blocks of bsize bytes each followed by a gap of `gap`
 * bytes (gap 0: contiguous, bsize unused).  The last block is shorter when
 * len is not a multiple of bsize.
 */
struct crts_dma_shape {
  size_t len;
  size_t bsize;
  size_t gap;
};

/* Direction of a copy. */
enum crts_dma_dir { CRTS_DMA_TO_LDM, CRTS_DMA_TO_MEM };

/*
 * Check len/bsize/stride (stride 0 = contiguous, bsize then ignored) and
 * fill *s.  0, or -1 after a report naming call.
 */
int crts_dma_shape_init(const char *call, struct crts_dma_shape *s, int len,
                        int bsize, int stride);
/* Bytes the main-memory side spans, gaps between blocks included. */
size_t crts_dma_span(const struct crts_dma_shape *s);

/*
 * name (the parameter's name in messages) must be a 4-byte aligned LDM
 * address of CPE self->tid whose [p, p + len) lies in that CPE's LDM.
 */
int crts_dma_check_ldm(const char *call, const char *name, const void *p,
                       size_t len, const struct crts_cpe *self);
/* p must be 4-byte aligned main memory, the whole span of s off the LDM. */
int crts_dma_check_mem(const char *call, const char *name, const void *p,
                       const struct crts_dma_shape *s);
/* rply must be a non-NULL, aligned reply word in self's own LDM. */
int crts_dma_check_rply(const char *call, crts_rply_t *rply,
                        const struct crts_cpe *self);

/*
 * One transfer between main memory and the calling CPE's LDM, checked and
 * reported under call's name (cpe_dma.c): TO_LDM a get (dst LDM), TO_MEM
 * a put (dst memory); nonblocking: +1 on rply once the data is in place.
 * 0, or -1 after a report.
 */
int crts_dma_single(const char *call, enum crts_dma_dir dir, void *dst,
                    void *src, int len, int bsize, int stride,
                    crts_rply_t *rply, int nonblocking);
/*
 * A non-blocking DMA broadcast into the LDM of every CPE of the spawned
 * group that is in receivers (a mesh mask, bit tid), at dst's location in
 * each (cpe_dma_bcast.c).  reply_all: +1 on every receiver's word at
 * rply's location (the CRTS forms); else +1 on the caller's rply alone
 * (the SW26010 athread_get), if not NULL.  0, or -1 after a report
 * naming call.
 */
int crts_dma_ibcast_to(const char *call, uint64_t receivers, void *dst,
                       void *src, int len, int bsize, int stride,
                       crts_rply_t *rply, int reply_all);

/* Copy one transfer of shape s between ldm (contiguous) and mem. */
void crts_dma_copy(void *ldm, void *mem, const struct crts_dma_shape *s,
                   enum crts_dma_dir dir);

/* Complete one non-blocking operation: +1 on rply, waking its owner. */
static inline void crts_dma_reply(crts_rply_t *rply, int owner)
{
  crts_word_add_notify(rply, 1, &crts_cg.cpe[owner].waiting_on);
}

#endif /* CRTS_DMA_H */
