/*
 * cpe_ids.c - the read-only id variables of a CPE and their getters.
 */
#include "crts_cg.h"

__thread int CRTS_tid = -1;
__thread int CRTS_rid = -1;
__thread int CRTS_cid = -1;
__thread int CRTS_row_size = -1;
__thread int CRTS_col_size = -1;
__thread int CRTS_cgn = -1;
__thread int CRTS_spc_tid = -1;
__thread int CRTS_spcn = -1;

__thread struct crts_cpe *crts_self;

/* Cluster (2x2 block) number of a CPE: clusters are numbered row-major. */
static int cluster_of(int tid)
{
  return (tid / 16) * 4 + (tid % 8) / 2;
}

void crts_ids_set(struct crts_cpe *cpe)
{
  int tid = cpe->tid;
  int n = crts_cg.ncpes;
  crts_self = cpe;
  CRTS_tid = tid;
  CRTS_rid = tid / CRTS_COL_NUM;
  CRTS_cid = tid % CRTS_COL_NUM;
  int in_row = n - CRTS_rid * CRTS_COL_NUM;
  CRTS_row_size = in_row > CRTS_COL_NUM ? CRTS_COL_NUM : in_row;
  CRTS_col_size = (n - CRTS_cid + CRTS_COL_NUM - 1) / CRTS_COL_NUM;
  CRTS_cgn = crts_cg.cgn;
  CRTS_spcn = cluster_of(tid);
  /* Within a cluster: upper row first, then left column first. */
  CRTS_spc_tid = CRTS_spcn * 4 + (CRTS_rid % 2) * 2 + CRTS_cid % 2;
}

char CRTS_smng_get_tid(void) { return crts_self ? (char)CRTS_tid : -1; }
char CRTS_smng_get_rid(void) { return crts_self ? (char)CRTS_rid : -1; }
char CRTS_smng_get_cid(void) { return crts_self ? (char)CRTS_cid : -1; }
char CRTS_smng_get_cgn(void) { return crts_self ? (char)CRTS_cgn : -1; }
char CRTS_smng_get_spc_tid(void)
{
  return crts_self ? (char)CRTS_spc_tid : -1;
}
char CRTS_smng_get_spcn(void) { return crts_self ? (char)CRTS_spcn : -1; }
