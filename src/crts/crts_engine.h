/*
 * crts_engine.h - the DMA and RMA engines seen from the MPE, and the few
 * facts about the core group that a runtime built on top of libcrts (the
 * LAPI transport between CPE tasks) needs.  Nothing here knows LAPI.
 *
 * The public CRTS_dma_* and CRTS_rma_* calls are CPE calls: they move data
 * between the caller's own LDM and main memory or another CPE's LDM.  An
 * MPE that moves data on behalf of CPEs issues engine commands instead:
 *
 *   CRTS_STAT_DMA_GET   main memory -> LDM
 *   CRTS_STAT_DMA_PUT   LDM -> main memory (and main memory -> main memory:
 *                       the engine writes main memory)
 *   CRTS_STAT_RMA       LDM -> LDM
 *   CRTS_STAT_MPE_COPY  the MPE copies the bytes itself: pieces the 4-byte
 *                       rule keeps off the engines
 *
 * A DMA or RMA command obeys the rules of the CPE calls: addresses, lengths
 * and strides are multiples of 4, the LDM side is contiguous, only the
 * main-memory side may be strided, and every LDM byte lies in the usable
 * LDM of one CPE.  crts_engine_move() takes any 2-D copy and splits it into
 * such commands plus MPE copies for the unaligned heads and tails.  Every
 * command is counted per kind (operations and bytes) in the MPE's engine
 * statistics; the CPEs' own DMA and RMA calls are counted per CPE.
 */
#ifndef CRTS_ENGINE_H
#define CRTS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "crts_cg.h"

/* ---------------------------------------------------------- core group */

/* The calling thread's CPE number, or -1 off the CPEs (MPE, any thread). */
int crts_engine_cpe_tid(void);
/* 1 once CRTS_init succeeded. */
int crts_engine_initialized(void);
/* 1 if the calling CPE runs as part of a spawned group (not a thread of
 * CRTS_athread_create); 0 off the CPEs. */
int crts_engine_cpe_spawned(void);
/* CPEs of the current spawned group (0 when no group was spawned) and the
 * bit mask of their numbers. */
int crts_engine_group_size(void);
uint64_t crts_engine_group_mask(void);

/* Waits of threads that stand in for CPEs: the emulator's spin policy
 * (crts_spin_limit polls, each a pause or a yield when the CPE threads
 * outnumber the cores) and a futex barrier of `count` threads. */
int crts_engine_spin_limit(void);
void crts_engine_relax(void);
void crts_engine_barrier(struct crts_barrier *b, uint32_t count);

/* ------------------------------------------------------------ memory */

/*
 * Where [p, p + len) lies (len 0 counts as 1 byte):
 *   CRTS_ENGINE_MEM   main memory: no byte in the LDM arena
 *   >= 0              the number of the CPE whose usable LDM (heap or
 *                     stack area of its slice) holds all of it
 *   CRTS_ENGINE_BAD   it touches the arena but not inside one usable LDM
 *                     (a guard, two slices, past the end of a slice)
 */
#define CRTS_ENGINE_MEM (-1)
#define CRTS_ENGINE_BAD (-2)
int crts_engine_where(const void *p, size_t len);

/* The CPE whose slice holds p, whatever the part of the slice, or -1. */
int crts_engine_ldm_owner(const void *p);

/* The same LDM location as p (an address of any slice) on CPE tid. */
void *crts_engine_ldm_translate(const void *p, int tid);

/* ------------------------------------------------------------ commands */

/*
 * One engine command: nblocks blocks of `block` bytes, block i read at
 * src + i * spitch and written at dst + i * dpitch (a pitch is the distance
 * from block start to block start; nblocks 1 is a contiguous transfer).
 */
struct crts_engine_cmd {
  enum crts_stat_kind kind;
  void *dst;
  const void *src;
  size_t block;
  size_t nblocks;
  size_t dpitch;
  size_t spitch;
};

/*
 * Issue a command from the MPE.  DMA and RMA commands are checked as the CPE
 * calls check theirs (sides of the right kind, 4-byte rule, contiguous LDM
 * side, usable LDM); a bad command is reported naming `call` and returns -1
 * with nothing moved.  An MPE copy moves any bytes (it uses memmove per
 * block).  0 on success.
 */
int crts_engine_issue(const struct crts_engine_cmd *c, const char *call);

/*
 * Move a 2-D region (as a command) with the engines: the kind follows from
 * where the two sides lie, the aligned body of every block goes to DMA or RMA
 * in as few commands as the rules allow (one strided DMA when the LDM side
 * is contiguous), and what the 4-byte rule excludes (heads and tails, or
 * everything when src and dst disagree modulo 4) is copied by the MPE.
 * Every side must be checked beforehand (crts_engine_where); -1 after a
 * report if a side is not, else 0.
 */
int crts_engine_move(void *dst, size_t dpitch, const void *src, size_t spitch,
                     size_t block, size_t nblocks, const char *call);

/*
 * The same move of len contiguous bytes, issued by the calling CPE itself
 * (a CPE task that moves its own transfer instead of waiting for the MPE):
 * one DMA or RMA command of the kind crts_engine_move would choose,
 * counted in the calling CPE's engine statistics.  Only what a CPE's own
 * engines do (one side is its own LDM) and only whole words: 1 (nothing
 * moved) when neither side is the caller's LDM, dst, src or len is not a
 * multiple of 4, or the caller is no CPE, so the caller leaves the move
 * to the MPE;
 * -1 after a report if a side is not usable memory; 0 when done.
 */
int crts_engine_cpe_move(void *dst, const void *src, size_t len,
                         const char *call);

/* --------------------------------------------------------- statistics */

struct crts_engine_stats {
  uint64_t ops[CRTS_STAT_KINDS];
  uint64_t bytes[CRTS_STAT_KINDS];
};

/* Commands the MPE issued since CRTS_init (atomic snapshot per field). */
void crts_engine_stats_mpe(struct crts_engine_stats *s);
/* DMA and RMA the CPEs issued themselves, summed over all CPEs. */
void crts_engine_stats_cpes(struct crts_engine_stats *s);
/* Names of the kinds: "dma_get", "dma_put", "rma", "mpe_copy". */
const char *crts_engine_kind_name(enum crts_stat_kind k);

#endif /* CRTS_ENGINE_H */
