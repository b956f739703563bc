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

/* The caller's row, column or whole group, as CRTS_ssync_row / _col /
 * _array, with reports naming call (cpe_ssync.c; athread_syn): 0 once
 * met, -1 after a report (the MPE, a CPE not in a spawned group). */
enum { CRTS_SSYNC_LINE_ROW, CRTS_SSYNC_LINE_COL, CRTS_SSYNC_LINE_ARRAY };
int crts_ssync_line(const char *call, int line);

#endif /* CRTS_SYNC_H */
