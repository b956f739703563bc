/*
 * crts_rma.h - internals shared by the RMA engine files (cpe_rma.c,
 * cpe_rma_bcast.c): argument checks, the delivery of one transfer and the
 * scopes (row, column, array, cluster) of the collective forms.
 *
 * RMA moves bytes between the LDMs of CPEs of the spawned group.  A remote
 * address names the same LDM location on the remote CPE (the same
 * __thread_local variable, the same heap offset), exactly as on the chip
 * where every CPE sees its own LDM at the same addresses: an address of any
 * slice is translated to the remote slice by its offset.  Remote reply
 * words are translated the same way.
 *
 * The emulated engine completes a transfer while the issuing CPE is still
 * inside the call: the bytes are copied synchronously, then the reply words
 * are raised.  Only counting and ordering are modelled - which words rise,
 * by how much, and that the data is in place once the count is seen.
 */
#ifndef CRTS_RMA_H
#define CRTS_RMA_H

#include <stddef.h>
#include <stdint.h>

#include "crts_cg.h"

/*
 * The calling CPE if it may issue RMA: a CPE of the spawned group (threads
 * started with CRTS_athread_create have no group to address).  NULL after a
 * report otherwise.
 */
struct crts_cpe *crts_rma_caller(const char *call);

/* len must be >= 0 and a multiple of 4; 0 or -1 after a report. */
int crts_rma_check_len(const char *call, int len);

/*
 * name (the parameter's name in messages) must be a 4-byte aligned address
 * whose [p, p + len) lies in the usable LDM of self; 0 or -1.
 */
int crts_rma_check_local(const char *call, const char *name, const void *p,
                         int len, const struct crts_cpe *self);

/*
 * A local reply word: NULL (no reply) or an aligned word in self's LDM.
 * 0 or -1 after a report.
 */
int crts_rma_check_local_rply(const char *call, const char *name,
                              crts_rply_t *rply, const struct crts_cpe *self);

/*
 * Where the LDM address p (of any slice) lies on CPE tid: *out receives the
 * translated address when [p, p + len) is 4-byte aligned and inside tid's
 * usable LDM.  0 or -1 after a report.
 */
int crts_rma_remote(const char *call, const char *name, const void *p,
                    int len, int tid, void **out);

/*
 * The reply word rply on CPE tid: *out is NULL for a NULL rply (no reply),
 * else the translated word.  0 or -1 after a report.
 */
int crts_rma_remote_rply(const char *call, const char *name,
                         crts_rply_t *rply, int tid, crts_rply_t **out);

/* r_tid must name a CPE of the spawned group; 0 or -1 after a report. */
int crts_rma_check_tid(const char *call, int tid);

/* +1 on the reply word rply owned by CPE owner, waking it if it waits. */
static inline void crts_rma_reply(crts_rply_t *rply, int owner)
{
  if (rply)
    crts_word_add_notify(rply, 1, &crts_cg.cpe[owner].waiting_on);
}

/*
 * Copy len bytes from src to dst (already checked) for the issuing CPE
 * self, count them in its statistics, then raise rply (NULL: none) owned by
 * the receiving CPE to_tid.
 */
void crts_rma_deliver(struct crts_cpe *self, void *dst, const void *src,
                      size_t len, crts_rply_t *rply, int to_tid);

/* ---- scopes of the collective forms */

/* Bit t set for every CPE t of row r / column c / the cluster of tid. */
static inline uint64_t crts_rma_row_bits(int r)
{
  return (uint64_t)0xff << (r * CRTS_COL_NUM);
}
static inline uint64_t crts_rma_col_bits(int c)
{
  return (uint64_t)0x0101010101010101ull << c;
}
uint64_t crts_rma_cluster_bits(int tid);

/* Number of CPEs in mask. */
static inline int crts_rma_count(uint64_t mask)
{
  return __builtin_popcountll(mask);
}

#endif /* CRTS_RMA_H */
