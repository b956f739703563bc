/*
 * cpe_ssync.c - CPE barriers (CRTS_ssync_*).
 *
 * Every group kind of the manual is a partition of the 8x8 mesh into
 * instances (e.g. 8 rows); each instance has its own barrier.  The members
 * of an instance are the CPEs of the instance that belong to the current
 * spawned group (crts_cg.group_mask), so with CRTS_NUM_CPES < 64 or ended
 * CPEs a barrier waits only for the CPEs that are there.
 *
 * Calls that cannot be honoured (from the MPE, from a CPE started by
 * CRTS_athread_create, a bad peer, col_left from the right half) report one
 * line and return at once instead of waiting for a partner that never comes.
 */
#include "crts_node.h"
#include "crts_sync.h"

/* At most 32 instances per kind (2spe). */
static struct crts_sync_bar group_bar[SSYNC_KINDS][32];
/* One barrier per unordered pair, indexed [lo * 64 + hi]. */
static struct crts_barrier peer_bar[CRTS_MAX_SPE_NUM * CRTS_MAX_SPE_NUM];
/* CRTS_ssync_node: the CPEs of this CG gather, one leader meets the node. */
static struct crts_sync_bar node_in, node_out;

/* Mask of rows r0..r0+nr-1 x columns c0..c0+nc-1 of the mesh. */
static uint64_t mesh_block(int r0, int nr, int c0, int nc)
{
  uint64_t m = 0;
  for (int r = r0; r < r0 + nr; r++)
    m |= (((uint64_t)1 << nc) - 1) << (r * CRTS_COL_NUM + c0);
  return m;
}

/* Instance of kind k that holds CPE tid, and the mesh mask of it. */
static int group_of(enum ssync_kind k, int tid, uint64_t *mask)
{
  int rid = tid / CRTS_COL_NUM, cid = tid % CRTS_COL_NUM;
  switch (k) {
  case SSYNC_2SPE:
    *mask = (uint64_t)3 << (tid & ~1);
    return tid / 2;
  case SSYNC_1SPC:
    *mask = mesh_block(rid & ~1, 2, cid & ~1, 2);
    return (tid / 16) * 4 + cid / 2;
  case SSYNC_ROW:
    *mask = (uint64_t)0xff << (rid * CRTS_COL_NUM);
    return rid;
  case SSYNC_COL:
    *mask = (uint64_t)0x0101010101010101 << cid;
    return cid;
  case SSYNC_2SPC:
    *mask = mesh_block(rid & ~1, 2, cid & ~3, 4);
    return (tid / 16) * 2 + cid / 4;
  case SSYNC_16SPE:
    *mask = (uint64_t)0xffff << (tid & ~15);
    return tid / 16;
  case SSYNC_32SPE:
    *mask = (uint64_t)0xffffffff << (tid & ~31);
    return tid / 32;
  default:
    *mask = ~(uint64_t)0;
    return 0;
  }
}

/* The calling CPE if it runs in a spawned group; else report, NULL. */
static struct crts_cpe *group_member(const char *call)
{
  struct crts_cpe *self = crts_self;
  if (!self) {
    crts_report(call, "must be called on a CPE (inside a spawned function); "
                "ignored");
    return NULL;
  }
  if (!self->in_group) {
    crts_report(call, "this CPE runs a thread of CRTS_athread_create: group "
                "barriers need a group started by CRTS_athread_spawn; "
                "ignored");
    return NULL;
  }
  return self;
}

/* crts_sync.h: the CRTS_ssync_* groups, and athread_syn's. */
int crts_ssync_group(const char *call, enum ssync_kind k)
{
  struct crts_cpe *self = group_member(call);
  if (!self)
    return -1;
  uint64_t mask;
  int inst = group_of(k, self->tid, &mask);
  uint32_t count = (uint32_t)__builtin_popcountll(mask & crts_cg.group_mask);
  crts_barrier_wait(&group_bar[k][inst].b, count, 0);
  return 0;
}

void CRTS_ssync_peer(int tid)
{
  const char *call = "CRTS_ssync_peer";
  struct crts_cpe *self = crts_self;
  if (!self) {
    crts_report(call, "must be called on a CPE; ignored");
    return;
  }
  if (tid < 0 || tid >= crts_cg.ncpes) {
    crts_report(call, "tid %d is outside 0..%d; ignored", tid,
                crts_cg.ncpes - 1);
    return;
  }
  if (tid == self->tid) {
    crts_report(call, "a CPE cannot synchronise with itself (tid %d); "
                "ignored", tid);
    return;
  }
  /*
   * A spawned group starts all at once; a created thread's partner may be
   * created later, so only a CPE shut down for good is refused then.
   */
  int can_come = self->in_group
                     ? crts_in_group(tid)
                     : atomic_load_explicit(&crts_cg.cpe[tid].state,
                                            memory_order_acquire) !=
                           CRTS_CPE_ENDED;
  if (!can_come) {
    crts_report(call, "CPE %d %s; ignored", tid,
                self->in_group ? "is not in the spawned group"
                               : "was shut down by athread_end/halt");
    return;
  }
  int lo = self->tid < tid ? self->tid : tid;
  int hi = self->tid ^ tid ^ lo;
  crts_barrier_wait(&peer_bar[lo * CRTS_MAX_SPE_NUM + hi], 2, 0);
}

/* CRTS_ssync_NAME: the caller's group of kind KIND. */
#define SSYNC_CALL(name, kind)                                          \
  void CRTS_ssync_##name(void) { crts_ssync_group("CRTS_ssync_" #name, kind); }

SSYNC_CALL(2spe, SSYNC_2SPE)
SSYNC_CALL(1spc, SSYNC_1SPC)
SSYNC_CALL(8spe, SSYNC_ROW)
SSYNC_CALL(row, SSYNC_ROW)
SSYNC_CALL(col, SSYNC_COL)
SSYNC_CALL(2spc, SSYNC_2SPC)
SSYNC_CALL(16spe, SSYNC_16SPE)
SSYNC_CALL(4spc, SSYNC_16SPE)
SSYNC_CALL(32spe, SSYNC_32SPE)
SSYNC_CALL(8spc, SSYNC_32SPE)
SSYNC_CALL(array, SSYNC_ARRAY)
/* The CPEs that share LDM are the 4 of a cluster: the 1spc barrier. */
SSYNC_CALL(sldm, SSYNC_1SPC)

/*
 * col_left / col_right: the 8 CPEs of one column (tid % 8 equal), callable
 * only in the left (columns 0..3) or right (4..7) half of the mesh.  They
 * are the column barrier of that column, so they also meet CRTS_ssync_col.
 */
static void half_col(const char *call, int right)
{
  struct crts_cpe *self = crts_self;
  if (self && (self->tid % CRTS_COL_NUM >= CRTS_COL_NUM / 2) != right) {
    crts_report(call, "this CPE is in column %d: the call is for columns "
                "%s (use CRTS_ssync_col or CRTS_ssync_col_%s); ignored",
                self->tid % CRTS_COL_NUM, right ? "4..7" : "0..3",
                right ? "left" : "right");
    return;
  }
  crts_ssync_group(call, SSYNC_COL);
}

void CRTS_ssync_col_left(void) { half_col("CRTS_ssync_col_left", 0); }
void CRTS_ssync_col_right(void) { half_col("CRTS_ssync_col_right", 1); }

void CRTS_ssync_master_spe(void)
{
  const char *call = "CRTS_ssync_master_spe";
  struct crts_cpe *self = crts_self;
  if (!self) {
    crts_report(call, "must be called on a CPE (the MPE calls "
                "CRTS_sync_master_spe(tid)); ignored");
    return;
  }
  crts_barrier_wait(&crts_sync_master_spe_bar[self->tid].b, 2, 0);
}

void CRTS_ssync_master_array(void)
{
  if (!group_member("CRTS_ssync_master_array"))
    return;
  crts_barrier_wait(&crts_sync_master_array_bar.b,
                    (uint32_t)crts_cg.group_size + 1, 0);
}

void CRTS_ssync_node(void)
{
  const char *call = "CRTS_ssync_node";
  struct crts_cpe *self = group_member(call);
  if (!self)
    return;
  const struct crts_node *node = crts_node_get(call);
  if (!node)
    return;
  uint32_t count = (uint32_t)crts_cg.group_size;
  crts_barrier_wait(&node_in.b, count, 0);
  if (node->cgs > 1) {
    /* Everyone here has arrived; the lowest member speaks for the CG. */
    if (self->tid == __builtin_ctzll(crts_cg.group_mask))
      crts_barrier_wait(&node->st->cpe_barrier, node->cgs, node->shared);
    crts_barrier_wait(&node_out.b, count, 0);
  }
}
