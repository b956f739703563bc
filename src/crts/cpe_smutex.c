/*
 * cpe_smutex.c - CPE locks (CRTS_smutex_lock/unlock_*).
 *
 * One lock per instance of each group kind (the same partitions of the
 * mesh as the barriers, numbered by CRTS_spc_tid in the manual; both
 * numberings give the same instances).  A lock remembers its holder, so
 * locking a lock this CPE already holds, or unlocking one it does not hold,
 * fails with a report instead of deadlocking or freeing another CPE's lock.
 * Any CPE may lock, spawned or created; the MPE may not (it has
 * CRTS_mutex_*).
 */
#include "crts_cg.h"
#include "crts_node.h"

enum smutex_kind {
  SMUTEX_2SPE,  /* CRTS_spc_tid / 2 == tid / 2 */
  SMUTEX_1SPC,  /* CRTS_spc_tid / 4: a cluster */
  SMUTEX_ROW,   /* tid / 8 (also 8spe) */
  SMUTEX_COL,   /* tid % 8 */
  SMUTEX_2SPC,  /* CRTS_spc_tid / 8: two clusters, a 2x4 block */
  SMUTEX_16SPE, /* tid / 16 (also 4spc) */
  SMUTEX_32SPE, /* tid / 32 (also 8spc) */
  SMUTEX_ARRAY, /* the core group */
  SMUTEX_KINDS
};

struct smutex {
  struct crts_lock lock;
  _Atomic int owner; /* holder's tid + 1, or 0 */
} __attribute__((aligned(64)));

static struct smutex locks[SMUTEX_KINDS][32];

static int instance_of(enum smutex_kind k, int tid)
{
  int cid = tid % CRTS_COL_NUM;
  switch (k) {
  case SMUTEX_2SPE: return tid / 2;
  case SMUTEX_1SPC: return (tid / 16) * 4 + cid / 2;
  case SMUTEX_ROW: return tid / CRTS_COL_NUM;
  case SMUTEX_COL: return cid;
  case SMUTEX_2SPC: return (tid / 16) * 2 + cid / 4;
  case SMUTEX_16SPE: return tid / 16;
  case SMUTEX_32SPE: return tid / 32;
  default: return 0;
  }
}

static int smutex_lock(const char *call, enum smutex_kind k)
{
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return -1;
  struct smutex *m = &locks[k][instance_of(k, self->tid)];
  if (atomic_load_explicit(&m->owner, memory_order_relaxed) == self->tid + 1) {
    crts_report(call, "this CPE already holds the lock (it is not "
                "recursive): unlock it first");
    return 1;
  }
  crts_lock_acquire(&m->lock, 0);
  atomic_store_explicit(&m->owner, self->tid + 1, memory_order_relaxed);
  return 0;
}

static int smutex_unlock(const char *call, enum smutex_kind k)
{
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return -1;
  struct smutex *m = &locks[k][instance_of(k, self->tid)];
  int owner = atomic_load_explicit(&m->owner, memory_order_relaxed);
  if (owner != self->tid + 1) {
    if (owner)
      crts_report(call, "the lock is held by CPE %d, not by this CPE",
                  owner - 1);
    else
      crts_report(call, "the lock is not locked");
    return 1;
  }
  atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
  crts_lock_release(&m->lock, 0);
  return 0;
}

#define SMUTEX_PAIR(name, kind)                                              \
  int CRTS_smutex_lock_##name(void)                                          \
  {                                                                          \
    return smutex_lock("CRTS_smutex_lock_" #name, kind);                     \
  }                                                                          \
  int CRTS_smutex_unlock_##name(void)                                        \
  {                                                                          \
    return smutex_unlock("CRTS_smutex_unlock_" #name, kind);                 \
  }

SMUTEX_PAIR(2spe, SMUTEX_2SPE)
SMUTEX_PAIR(1spc, SMUTEX_1SPC)
SMUTEX_PAIR(8spe, SMUTEX_ROW)
SMUTEX_PAIR(row, SMUTEX_ROW)
SMUTEX_PAIR(col, SMUTEX_COL)
SMUTEX_PAIR(2spc, SMUTEX_2SPC)
SMUTEX_PAIR(16spe, SMUTEX_16SPE)
SMUTEX_PAIR(4spc, SMUTEX_16SPE)
SMUTEX_PAIR(32spe, SMUTEX_32SPE)
SMUTEX_PAIR(8spc, SMUTEX_32SPE)
SMUTEX_PAIR(array, SMUTEX_ARRAY)

/* The node lock of the CPEs: one lock shared by every CG of the job. */
int CRTS_smutex_lock_node(void)
{
  const char *call = "CRTS_smutex_lock_node";
  if (!crts_check_cpe(call))
    return -1;
  const struct crts_node *node = crts_node_get(call);
  if (!node)
    return -1;
  struct crts_node_state *st = node->st;
  uint64_t me = crts_node_whoami();
  if (atomic_load_explicit(&st->cpe_owner, memory_order_relaxed) == me) {
    crts_report(call, "this CPE already holds the node lock (it is not "
                "recursive): unlock it first");
    return 1;
  }
  crts_lock_acquire(&st->cpe_lock, node->shared);
  atomic_store_explicit(&st->cpe_owner, me, memory_order_relaxed);
  return 0;
}

int CRTS_smutex_unlock_node(void)
{
  const char *call = "CRTS_smutex_unlock_node";
  if (!crts_check_cpe(call))
    return -1;
  const struct crts_node *node = crts_node_get(call);
  if (!node)
    return -1;
  struct crts_node_state *st = node->st;
  if (atomic_load_explicit(&st->cpe_owner, memory_order_relaxed) !=
      crts_node_whoami()) {
    crts_report(call, "this CPE does not hold the node lock");
    return 1;
  }
  atomic_store_explicit(&st->cpe_owner, 0, memory_order_relaxed);
  crts_lock_release(&st->cpe_lock, node->shared);
  return 0;
}
