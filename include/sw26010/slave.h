/*
 * slave.h - the CPE side of the older SW26010 athread API, over libcrts.
 *
 * CPE code written for the SW26010 (Sunway TaihuLight) moves data with
 * athread_get / athread_put and a reply word, meets with athread_syn and
 * names itself with _MYID or athread_get_id(-1).  Include this header
 * instead of the machine's slave.h and such code builds unchanged against
 * libcrts; new code should use the CRTS_* calls of crts.h, which it also
 * declares.  What is emulated and what is not: docs/CRTS.md, "The SW26010
 * athread API".
 */
#ifndef OPENLAPI_SLAVE_H
#define OPENLAPI_SLAVE_H

#include <crts.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How athread_get / athread_put move data (the SW26010's dma_mode). */
typedef enum {
  PE_MODE,    /**< the calling CPE's own LDM */
  BCAST_MODE, /**< get only: the LDM of every CPE of the rows in mask */
  ROW_MODE,   /**< not emulated: the call reports and fails */
  BROW_MODE,  /**< not emulated: the call reports and fails */
  RANK_MODE   /**< not emulated: the call reports and fails */
} dma_mode;

/** The CPEs an athread_syn waits for. */
typedef enum {
  ROW_SCOPE,  /**< the caller's row; mask 0xff (its 8 columns) */
  COL_SCOPE,  /**< the caller's column; mask 0xff (its 8 rows) */
  ARRAY_SCOPE /**< the whole spawned group; mask 0xffff */
} athread_scope;

/** This CPE's number 0..63, row 0..7 and column 0..7 (CRTS_tid/rid/cid). */
#define _MYID CRTS_tid
#define _ROW CRTS_rid
#define _COL CRTS_cid

/**
 * Start a DMA from main memory src into LDM dst, len bytes (multiples of
 * 4, 4-byte aligned addresses).  stride 0: contiguous; otherwise src holds
 * blocks of bsize bytes each followed by stride bytes that are skipped.
 * When the data is in place, 1 is added to the 32-bit word at reply (an
 * `int` reply word, or the low half of an `unsigned long` one), in the
 * caller's LDM.  PE_MODE loads the caller's LDM.  BCAST_MODE loads dst in
 * every CPE of the group whose row r has bit r set in mask (0xff: all),
 * and raises only the caller's reply word.  Returns 0, or -1 after a
 * one-line report.
 */
int athread_get(dma_mode mode, void *src, void *dst, int len, void *reply,
                int mask, int stride, int bsize);

/**
 * Start a DMA from LDM src into main memory dst (PE_MODE only); stride,
 * bsize and reply as in athread_get, the gaps being in dst.  Returns 0, or
 * -1 after a one-line report.
 */
int athread_put(dma_mode mode, void *src, void *dst, int len, void *reply,
                int stride, int bsize);

/**
 * Barrier of the caller's row, column or whole group.  Only the full mask
 * of the scope (0xff, 0xff, 0xffff) is emulated; any other reports and
 * returns -1 without waiting.  Returns 0 once every CPE of the scope in
 * the spawned group has called it.
 */
int athread_syn(athread_scope scope, int mask);

/**
 * athread_get_id(-1): this CPE's number (_MYID).  For 0..63 the emulator's
 * physical and logical numbers are the same: the argument if that CPE is
 * in the spawned group, else -1.
 */
int athread_get_id(int core);

#ifdef __cplusplus
}
#endif

#endif /* OPENLAPI_SLAVE_H */
