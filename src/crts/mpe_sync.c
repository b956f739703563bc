/*
 * mpe_sync.c - MPE barriers: with one CPE, with the spawned group, and with
 * the MPEs of the other core groups of the node.
 *
 * A call whose partner cannot come (bad tid, a CPE that runs nothing, no
 * running group, a call from a CPE) reports one line and returns at once.
 */
#include "crts_node.h"
#include "crts_sync.h"

struct crts_sync_bar crts_sync_master_spe_bar[CRTS_MAX_SPE_NUM];
struct crts_sync_bar crts_sync_master_array_bar;

/* 1 if the caller is the MPE of an initialised runtime; else report. */
static int check_mpe(const char *call)
{
  if (crts_self) {
    crts_report(call, "must be called on the MPE (CPEs call CRTS_ssync_*); "
                "ignored");
    return 0;
  }
  return crts_check_init(call);
}

void CRTS_sync_node(void)
{
  const char *call = "CRTS_sync_node";
  if (!check_mpe(call))
    return;
  const struct crts_node *node = crts_node_get(call);
  if (node)
    crts_barrier_wait(&node->st->mpe_barrier, node->cgs, node->shared);
}

void CRTS_sync_master_spe(int tid)
{
  const char *call = "CRTS_sync_master_spe";
  if (!check_mpe(call))
    return;
  if (tid < 0 || tid >= crts_cg.ncpes) {
    crts_report(call, "tid %d is outside 0..%d; ignored", tid,
                crts_cg.ncpes - 1);
    return;
  }
  if (atomic_load_explicit(&crts_cg.cpe[tid].state, memory_order_acquire) !=
      CRTS_CPE_RUNNING) {
    crts_report(call, "CPE %d runs no thread, so it cannot call "
                "CRTS_ssync_master_spe; ignored", tid);
    return;
  }
  crts_barrier_wait(&crts_sync_master_spe_bar[tid].b, 2, 0);
}

void CRTS_sync_master_array(void)
{
  const char *call = "CRTS_sync_master_array";
  if (!check_mpe(call))
    return;
  pthread_mutex_lock(&crts_cg.mpe_lock);
  int active = crts_cg.group_active;
  uint32_t size = (uint32_t)crts_cg.group_size;
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  if (!active || atomic_load(&crts_cg.group_running) == 0) {
    crts_report(call, "no spawned group is running (call it between "
                "CRTS_athread_spawn and CRTS_athread_join); ignored");
    return;
  }
  crts_barrier_wait(&crts_sync_master_array_bar.b, size + 1, 0);
}
