/*
 * cpe_dma_bcast.c - DMA broadcasts (array, row, column; non-blocking and
 * collective; plain and strided) and CRTS_memcpy_sldm.
 *
 * Receivers are the CPEs of the current spawned group, restricted to the
 * caller's row or column for the row/col forms.  Each receiver gets the
 * data at the same LDM location as the caller's dst (crts_ldm_translate).
 *
 * Non-blocking (ibcast) forms are not collective: one CPE issues, copies
 * into every receiver's LDM and then adds 1 to every receiver's reply word
 * (the same LDM location as the caller's rply), so each receiver waits on
 * its own word as in the manual's example.  The issuer counts one DMA_GET
 * of len bytes per receiver.  crts_dma_ibcast_to also serves the SW26010's
 * athread_get in BCAST_MODE (cpe_athread_sw.c): rows chosen by a mask, and
 * only the issuer's reply word raised.
 *
 * Collective (_coll) forms are called by every CPE of the scope.  All meet
 * at the scope's barrier, so nobody's LDM is written before its owner has
 * entered the call and every write to main memory made before the call is
 * seen; then each CPE loads its own copy (the copies are independent and
 * run in parallel) and returns once it has its data.  A CPE whose
 * arguments are bad still passes the barrier, so the others never hang.
 *
 * CRTS_memcpy_sldm: on the chip, the CPEs of a 2x2 cluster may share their
 * LDM, and __thread_local_share variables live in that shared space at one
 * address for the whole cluster.  crts.h emulates __thread_local_share as a
 * per-CPE variable, so here every CPE of the cluster holds a full replica
 * of the shared data at the address it names (its own LDM):
 *   - MEM_TO_LDM: every caller loads all len bytes into its replica, so a
 *     read of the shared variable on any CPE of the cluster sees the data;
 *   - LDM_TO_MEM: the len bytes are written to main memory once, split in
 *     contiguous word-aligned parts, one per calling CPE in spc_tid order,
 *     each taken from that CPE's replica (so a program that fills the
 *     shared variable part by part in that order gets all of it back).
 * All CPEs of the cluster that belong to the group must call with the same
 * arguments (dst/src as the same LDM location); any bad or mismatched
 * argument fails the call on every one of them and touches nothing.  A
 * write that one CPE makes to its replica is not seen by the others: that
 * is the limit of emulating shared LDM with private variables.
 */
#include <stdint.h>

#include "crts_dma.h"

enum bcast_scope { SCOPE_ARRAY, SCOPE_ROW, SCOPE_COL };

/* Meeting points of the collective forms, one per scope instance. */
static struct crts_barrier array_barrier;
static struct crts_barrier row_barrier[CRTS_ROW_NUM];
static struct crts_barrier col_barrier[CRTS_COL_NUM];
static struct crts_barrier sldm_barrier[CRTS_MAX_SPE_NUM / 4];

/* The caller's group membership check; broadcasts need a spawned group. */
static int check_group(const char *call, const struct crts_cpe *self)
{
  if (self->in_group && crts_in_group(self->tid))
    return 0;
  crts_report(call, "broadcasts reach the CPEs of a spawned group; this CPE "
              "runs a thread of CRTS_athread_create");
  return -1;
}

/* Receivers of a broadcast issued by tid over scope. */
static uint64_t scope_mask(enum bcast_scope scope, int tid)
{
  uint64_t mask = crts_cg.group_mask;
  if (scope == SCOPE_ROW)
    mask &= (uint64_t)0xff << (tid / CRTS_COL_NUM * CRTS_COL_NUM);
  else if (scope == SCOPE_COL)
    mask &= (uint64_t)0x0101010101010101 << (tid % CRTS_COL_NUM);
  return mask;
}

static struct crts_barrier *scope_barrier(enum bcast_scope scope, int tid)
{
  if (scope == SCOPE_ROW)
    return &row_barrier[tid / CRTS_COL_NUM];
  if (scope == SCOPE_COL)
    return &col_barrier[tid % CRTS_COL_NUM];
  return &array_barrier;
}

/* -------------------------------------------------------- non-blocking */

int crts_dma_ibcast_to(const char *call, uint64_t receivers, void *dst,
                       void *src, int len, int bsize, int stride,
                       crts_rply_t *rply, int reply_all)
{
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self || check_group(call, self) != 0)
    return -1;
  struct crts_dma_shape s;
  if (crts_dma_shape_init(call, &s, len, bsize, stride) != 0 ||
      crts_dma_check_ldm(call, "dst", dst, s.len, self) != 0 ||
      crts_dma_check_mem(call, "src", src, &s) != 0 ||
      ((reply_all || rply) && crts_dma_check_rply(call, rply, self) != 0))
    return -1;
  uint64_t mask = receivers & crts_cg.group_mask;
  if (mask == 0) { /* athread_get's rows, none of them in the group */
    crts_report(call, "no CPE of the spawned group is in the rows the "
                "broadcast names: the data would reach nobody");
    return -1;
  }
  /* Every receiver's slice must hold dst (and rply where it is raised):
   * heaps may differ. */
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++) {
    if (!((mask >> t) & 1u))
      continue;
    int owner = -1, rowner = t;
    if (!crts_ldm_range(crts_ldm_translate(dst, t), s.len, &owner) ||
        owner != t ||
        (reply_all &&
         (!crts_ldm_range(crts_ldm_translate((const void *)rply, t),
                          sizeof *rply, &rowner) || rowner != t))) {
      crts_report(call, "dst %p + %zu bytes%s is not usable LDM on "
                  "receiver CPE %d", dst, s.len,
                  reply_all ? " or rply" : "", t);
      return -1;
    }
  }
  int receivers_n = 0;
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++) {
    if (!((mask >> t) & 1u))
      continue;
    crts_dma_copy(crts_ldm_translate(dst, t), src, &s, CRTS_DMA_TO_LDM);
    /* The add publishes the bytes above to the receiver that sees it. */
    if (reply_all)
      crts_dma_reply(crts_ldm_translate((const void *)rply, t), t);
    receivers_n++;
  }
  crts_stat_add(self, CRTS_STAT_DMA_GET, s.len * (uint64_t)receivers_n);
  if (!reply_all && rply)
    crts_dma_reply(rply, self->tid);
  return 0;
}

static int dma_ibcast(const char *call, enum bcast_scope scope, void *dst,
                      void *src, int len, int bsize, int stride,
                      crts_rply_t *rply)
{
  struct crts_cpe *self = crts_self;
  uint64_t mask = self ? scope_mask(scope, self->tid) : 0;
  return crts_dma_ibcast_to(call, mask, dst, src, len, bsize, stride, rply,
                            1);
}

int CRTS_dma_ibcast(void *dst, void *src, int len, crts_rply_t *rply)
{
  return dma_ibcast("CRTS_dma_ibcast", SCOPE_ARRAY, dst, src, len, 0, 0,
                    rply);
}

int CRTS_dma_ibcast_stride(void *dst, void *src, int len, int bsize, int stride,
                           crts_rply_t *rply)
{
  return dma_ibcast("CRTS_dma_ibcast_stride", SCOPE_ARRAY, dst, src, len,
                    bsize, stride, rply);
}

int CRTS_dma_row_ibcast(void *dst, void *src, int len, crts_rply_t *rply)
{
  return dma_ibcast("CRTS_dma_row_ibcast", SCOPE_ROW, dst, src, len, 0, 0,
                    rply);
}

int CRTS_dma_row_ibcast_stride(void *dst, void *src, int len, int bsize,
                               int stride, crts_rply_t *rply)
{
  return dma_ibcast("CRTS_dma_row_ibcast_stride", SCOPE_ROW, dst, src, len,
                    bsize, stride, rply);
}

int CRTS_dma_col_ibcast(void *dst, void *src, int len, crts_rply_t *rply)
{
  return dma_ibcast("CRTS_dma_col_ibcast", SCOPE_COL, dst, src, len, 0, 0,
                    rply);
}

int CRTS_dma_col_ibcast_stride(void *dst, void *src, int len, int bsize,
                               int stride, crts_rply_t *rply)
{
  return dma_ibcast("CRTS_dma_col_ibcast_stride", SCOPE_COL, dst, src, len,
                    bsize, stride, rply);
}

/* ----------------------------------------------------------- collective */

static int dma_bcast_coll(const char *call, enum bcast_scope scope, void *dst,
                          void *src, int len, int bsize, int stride)
{
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self || check_group(call, self) != 0)
    return -1;
  struct crts_dma_shape s;
  int ok = crts_dma_shape_init(call, &s, len, bsize, stride) == 0 &&
           crts_dma_check_ldm(call, "dst", dst, s.len, self) == 0 &&
           crts_dma_check_mem(call, "src", src, &s) == 0;
  uint64_t mask = scope_mask(scope, self->tid);
  crts_barrier_wait(scope_barrier(scope, self->tid),
                    (uint32_t)__builtin_popcountll(mask), 0);
  if (!ok)
    return -1;
  crts_dma_copy(dst, src, &s, CRTS_DMA_TO_LDM);
  crts_stat_add(self, CRTS_STAT_DMA_GET, s.len);
  return 0;
}

int CRTS_dma_bcast_coll(void *dst, void *src, int len)
{
  return dma_bcast_coll("CRTS_dma_bcast_coll", SCOPE_ARRAY, dst, src, len, 0,
                        0);
}

int CRTS_dma_bcast_stride_coll(void *dst, void *src, int len, int bsize,
                               int stride)
{
  return dma_bcast_coll("CRTS_dma_bcast_stride_coll", SCOPE_ARRAY, dst, src,
                        len, bsize, stride);
}

int CRTS_dma_row_bcast_coll(void *dst, void *src, int len)
{
  return dma_bcast_coll("CRTS_dma_row_bcast_coll", SCOPE_ROW, dst, src, len,
                        0, 0);
}

int CRTS_dma_row_bcast_stride_coll(void *dst, void *src, int len, int bsize,
                                   int stride)
{
  return dma_bcast_coll("CRTS_dma_row_bcast_stride_coll", SCOPE_ROW, dst,
                        src, len, bsize, stride);
}

int CRTS_dma_col_bcast_coll(void *dst, void *src, int len)
{
  return dma_bcast_coll("CRTS_dma_col_bcast_coll", SCOPE_COL, dst, src, len,
                        0, 0);
}

int CRTS_dma_col_bcast_stride_coll(void *dst, void *src, int len, int bsize,
                                   int stride)
{
  return dma_bcast_coll("CRTS_dma_col_bcast_stride_coll", SCOPE_COL, dst,
                        src, len, bsize, stride);
}

/* ------------------------------------------------------------ shared LDM */

/* What each CPE of a cluster asked for, compared by the others. */
struct sldm_args {
  ptrdiff_t ldm_off; /* LDM side as an offset in the caller's slice */
  const void *mem;
  int len;
  int direction;
  int ok;            /* the caller's own checks passed */
};

static struct sldm_args sldm_posted[CRTS_MAX_SPE_NUM];

/* CPEs of the group in cluster spcn, as a tid mask. */
static uint64_t cluster_mask(int spcn)
{
  int row = spcn / 4 * 2, col = spcn % 4 * 2;
  uint64_t block = (uint64_t)0x0303 << (row * CRTS_COL_NUM + col);
  return crts_cg.group_mask & block;
}

/* Position of a cluster member in spc_tid order: upper row, then left. */
static int cluster_pos(int tid)
{
  return (tid / CRTS_COL_NUM % 2) * 2 + tid % 2;
}

/* Check the posted arguments of every member; 1 if all agree and are ok. */
static int sldm_agree(const char *call, const struct crts_cpe *self,
                      uint64_t members)
{
  const struct sldm_args *me = &sldm_posted[self->tid];
  for (int t = 0; t < CRTS_MAX_SPE_NUM; t++) {
    if (!((members >> t) & 1u))
      continue;
    const struct sldm_args *o = &sldm_posted[t];
    if (!o->ok) {
      if (me->ok)
        crts_report(call, "CPE %d of this cluster passed bad arguments; "
                    "nothing was copied", t);
      return 0;
    }
    if (o->ldm_off != me->ldm_off || o->mem != me->mem || o->len != me->len ||
        o->direction != me->direction) {
      crts_report(call, "CPE %d of this cluster passed other arguments: "
                  "every CPE of a cluster must name the same shared data, "
                  "main memory, len and direction", t);
      return 0;
    }
  }
  return 1;
}

int CRTS_memcpy_sldm(void *dst, void *src, int len, int direction)
{
  const char *call = "CRTS_memcpy_sldm";
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self || check_group(call, self) != 0)
    return -1;
  int get = direction == MEM_TO_LDM;
  void *ldm = get ? dst : src;
  void *mem = get ? src : dst;
  struct crts_dma_shape s;
  int ok = 1;
  if (direction != MEM_TO_LDM && direction != LDM_TO_MEM) {
    crts_report(call, "direction %d is neither MEM_TO_LDM (%d) nor "
                "LDM_TO_MEM (%d)", direction, MEM_TO_LDM, LDM_TO_MEM);
    ok = 0;
  }
  ok = ok && crts_dma_shape_init(call, &s, len, 0, 0) == 0 &&
       crts_dma_check_ldm(call, get ? "dst" : "src", ldm, s.len, self) == 0 &&
       crts_dma_check_mem(call, get ? "src" : "dst", mem, &s) == 0;
  struct sldm_args *me = &sldm_posted[self->tid];
  me->ldm_off = ok ? (char *)ldm - self->ldm : 0;
  me->mem = mem;
  me->len = len;
  me->direction = direction;
  me->ok = ok;

  int spcn = CRTS_spcn;
  uint64_t members = cluster_mask(spcn);
  uint32_t n = (uint32_t)__builtin_popcountll(members);
  struct crts_barrier *bar = &sldm_barrier[spcn];
  crts_barrier_wait(bar, n, 0); /* everyone has posted */
  int all_ok = sldm_agree(call, self, members);
  if (all_ok && get) {
    crts_dma_copy(ldm, mem, &s, CRTS_DMA_TO_LDM);
    crts_stat_add(self, CRTS_STAT_DMA_GET, s.len);
  } else if (all_ok) {
    /* My part: members before me in spc_tid order take the earlier words. */
    int rank = 0;
    for (int t = 0; t < CRTS_MAX_SPE_NUM; t++)
      if (((members >> t) & 1u) && cluster_pos(t) < cluster_pos(self->tid))
        rank++;
    size_t words = s.len / 4, per = words / n, extra = words % n;
    size_t first = rank * per + ((size_t)rank < extra ? (size_t)rank : extra);
    size_t count = per + ((size_t)rank < extra);
    struct crts_dma_shape part = { count * 4, 0, 0 };
    crts_dma_copy((char *)ldm + first * 4, (char *)mem + first * 4, &part,
                  CRTS_DMA_TO_MEM);
    crts_stat_add(self, CRTS_STAT_DMA_PUT, part.len);
  }
  /* Everyone has read the posts and the data is complete in the cluster. */
  crts_barrier_wait(bar, n, 0);
  return all_ok ? 0 : -1;
}
