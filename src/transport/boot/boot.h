/*
 * boot.h - the bootstrap: who this core group is in the job, and the few
 * collectives needed before (and beside) the network.
 *
 * A job is a set of core groups (CGs, one process each).  The bootstrap
 * tells a CG its rank among the job's CGs, the job size, how many LAPI
 * tasks each CG holds, and which CGs share its host; and it offers an
 * all-gather and a barrier over all CGs, used to exchange libfabric
 * addresses and for LAPI_Gfence / LAPI_Address_init.
 *
 * Three sources, tried in this order by lapi_boot_init():
 *   pmix       started by a PMIx launcher (PMIX_RANK in the environment and
 *              the library built with libpmix)
 *   lapirun    started by tools/lapirun (LAPIRUN_* in the environment): a
 *              TCP key-value exchange with the launcher
 *   singleton  neither: a job of one CG
 * Every call is bounded by the timeout given to lapi_boot_init: a CG that
 * cannot reach the exchange fails with a clear message instead of hanging.
 */
#ifndef LAPI_BOOT_H
#define LAPI_BOOT_H

#include <stddef.h>

struct lapi_boot {
  const char *kind;   /* "pmix", "lapirun" or "singleton" */
  int rank;           /* this CG, 0..size-1 */
  int size;           /* CGs in the job */
  int tasks_per_cg;   /* LAPI tasks per CG (lapirun -c; 1 = process mode) */
  int local_rank;     /* index among the CGs on this host */
  int local_size;     /* CGs of the job on this host */
  char job_key[64];   /* a name unique to the job (node scope, files) */

  /*
   * Collective over all CGs: every CG passes len bytes, all receives
   * size * len bytes in rank order.  Returns 0, or -1 after printing why
   * (peer gone, timeout).  Calls are matched in order on every CG.
   */
  int (*allgather)(struct lapi_boot *b, const void *mine, size_t len,
                   void *all);
  /* Collective barrier over all CGs; 0 or -1. */
  int (*barrier)(struct lapi_boot *b);
  /*
   * LAPI_Term's last barrier: returns once every CG waits in it or has
   * left the job (a CG gone does not fail it, as it fails a barrier), so
   * that no survivor closes while another still sends it what it owed.
   * 0, or -1 after a message (the exchange lost, or silent for the
   * timeout).  NULL: the source has none (use barrier).
   */
  int (*leave_barrier)(struct lapi_boot *b);
  /*
   * Job-wide atomic counter `id` (0..15): adds add, returns the value
   * before, or -1 on failure.  Serves CRTS_task_fetch across CGs.
   */
  long (*fetch_add)(struct lapi_boot *b, int id, long add);
  /*
   * This CG's transport is up (1: peers may now wait for messages from
   * it) or closed (0).  A CG that leaves the job while up left without
   * LAPI_Term: the launcher reports it to the others (gone below).  NULL
   * when the source cannot tell anyone (singleton, PMIx).
   */
  void (*set_active)(struct lapi_boot *b, int on);
  /*
   * Never blocks: writes to ranks (at most max) the CGs the launcher
   * reported as gone without LAPI_Term since the last call; returns how
   * many.  NULL when the source has no such reports.
   */
  int (*gone)(struct lapi_boot *b, int *ranks, int max);
  /* Leave the job (close connections). */
  void (*fini)(struct lapi_boot *b);
  void *impl;
};

/*
 * Join the job.  timeout_s bounds every later call as well.  Returns 0, or
 * -1 with a message on stderr naming the source and what to do.
 */
int lapi_boot_init(struct lapi_boot *b, int timeout_s);

/* The process-wide bootstrap, joined on first use (NULL if that failed). */
struct lapi_boot *lapi_boot_get(void);

#endif /* LAPI_BOOT_H */
