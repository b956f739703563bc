/*
 * crts_sync.h - barriers shared by the MPE and CPE halves of a sync pair.
 *
 * CRTS_sync_master_spe(tid) (MPE) meets CRTS_ssync_master_spe() on CPE tid
 * in crts_sync_master_spe_bar[tid] (2 threads); CRTS_sync_master_array()
 * meets CRTS_ssync_master_array() of every CPE of the spawned group in
 * crts_sync_master_array_bar (group size + 1 threads).  Defined in
 * mpe_sync.c.
 */
#ifndef CRTS_SYNC_H
#define CRTS_SYNC_H

#include "crts_cg.h"

/* A barrier alone on its cache line: neighbours do not slow each other. */
struct crts_sync_bar {
  struct crts_barrier b;
} __attribute__((aligned(64)));

extern struct crts_sync_bar crts_sync_master_spe_bar[CRTS_MAX_SPE_NUM];
extern struct crts_sync_bar crts_sync_master_array_bar;

/* The CPE barrier groups (cpe_ssync.c): each kind partitions the mesh. */
enum ssync_kind {
  SSYNC_2SPE,   /* tid / 2 */
  SSYNC_1SPC,   /* one 2x2 cluster (also sldm) */
  SSYNC_ROW,    /* tid / 8 (also 8spe) */
  SSYNC_COL,    /* tid % 8 (also col_left / col_right) */
  SSYNC_2SPC,   /* two clusters side by side: CRTS_spc_tid / 8, a 2x4 block */
  SSYNC_16SPE,  /* tid / 16 (also 4spc) */
  SSYNC_32SPE,  /* tid / 32 (also 8spc) */
  SSYNC_ARRAY,  /* the whole group */
  SSYNC_KINDS
};

/* The caller's group of kind k (the CRTS_ssync_* calls, athread_syn),
 * with reports naming call: 0 once met, -1 after a report, not waited
 * (the MPE, a CPE not in a spawned group). */
int crts_ssync_group(const char *call, enum ssync_kind k);

#endif /* CRTS_SYNC_H */
