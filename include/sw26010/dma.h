/*
 * dma.h - the SW26010 DMA descriptor calls, over libcrts.
 *
 * SW26010 CPE code often describes a transfer once in a dma_desc
 * (dma_set_op, _mode, _size, _bsize, _stepsize, _reply, _mask) and then
 * starts it with dma(desc, mem, ldm) as many times as it likes.  The
 * transfer is athread_get's or athread_put's (slave.h).  As on the chip, a
 * field that was never set holds whatever the descriptor held: zero the
 * descriptor first (dma_desc d = 0; or memset) or set every field the
 * transfer uses.  docs/CRTS.md, "The SW26010 athread API".
 */
#ifndef OPENLAPI_SW26010_DMA_H
#define OPENLAPI_SW26010_DMA_H

#include <slave.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A transfer's description, 128 bits as a scalar so that `= 0` clears it:
 * op, mode, mask, the reply word (as its place in the caller's LDM),
 * size, bsize and stepsize.
 */
__extension__ typedef unsigned __int128 dma_desc;

/** The direction of a described transfer. */
typedef enum {
  DMA_PUT, /**< LDM into main memory (athread_put) */
  DMA_GET  /**< main memory into LDM (athread_get) */
} dma_op;

void dma_set_op(dma_desc *desc, dma_op op);
void dma_set_mode(dma_desc *desc, dma_mode mode);
/** Bytes moved by one dma() (a multiple of 4). */
void dma_set_size(dma_desc *desc, int size);
/** Bytes of each main-memory block when stepsize is not 0. */
void dma_set_bsize(dma_desc *desc, int bsize);
/** Bytes of main memory skipped after each block (0: contiguous). */
void dma_set_stepsize(dma_desc *desc, int stepsize);
/** BCAST_MODE gets: the rows that receive (bit r: row r; 0xff all). */
void dma_set_mask(dma_desc *desc, int mask);
/**
 * The reply word, in the calling CPE's LDM, that each completed dma()
 * adds 1 to; NULL: none.  A word elsewhere is reported and not set.
 */
void dma_set_reply(dma_desc *desc, volatile void *reply);

/**
 * Start the transfer desc describes between main memory mem and the
 * caller's LDM ldm (either may be given as a pointer or as a long).
 * Returns 0, or -1 after a one-line report.
 */
int athread_dma(dma_desc desc, void *mem, void *ldm);
#define dma(desc, mem, ldm) athread_dma((desc), (void *)(mem), (void *)(ldm))

/**
 * Wait until the reply word in the caller's LDM counts at least count
 * completed transfers (spinning briefly, then blocking).  0, or -1 after
 * a report (a word outside the caller's LDM, a negative count).
 */
int dma_wait(volatile void *reply, int count);

#ifdef __cplusplus
}
#endif

#endif /* OPENLAPI_SW26010_DMA_H */
