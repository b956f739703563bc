/*
 * lapi_am.h - internal state of the LAPI core (src/am).
 *
 * A process holds one job view (which task am I, how many are there) and
 * a table of up to LAPI_AM_MAX_HANDLES handle instances; a handle value is
 * its index in the table.  Slots are static and never freed, so a stale
 * reader only ever sees a state that says FREE.  Each handle has:
 *   - its settings (Qenv/Senv) and the header handler table (Addr_set);
 *   - an inbound queue of work items run in MPE context, and the handle
 *     lock held while they run;
 *   - `outstanding`: messages it sent that have not landed (Fence);
 *   - per-transport statistics.
 * The dispatcher thread (lapi_dispatch.c) is the core group's emulated
 * MPE: it runs the items of every handle in interrupt mode.
 */
#ifndef LAPI_AM_H
#define LAPI_AM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <lapi.h>

#include "am/lapi_log.h"
#include "am/lapi_recv.h"
#include "am/lapi_wait.h"
#include "transport/tp.h"

#define LAPI_AM_MAX_HANDLES 128   /* per task */
#define LAPI_AM_CG_TASKS 64       /* tasks of one core group at most */
#define LAPI_AM_MAX_SLOTS (LAPI_AM_CG_TASKS * LAPI_AM_MAX_HANDLES)
#define LAPI_AM_ADDRTBL_SZ 256   /* LOC_ADDRTBL_SZ: indexes 1..255 */
#define LAPI_AM_MAX_UHDR 1024    /* MAX_UHDR_SZ */
#define LAPI_AM_MAGIC 0x4c415049 /* lapi_return_info_t.MAGIC: "LAPI" */

/* Defaults and ranges of the settable queries. */
#define LAPI_AM_TIMEOUT_MIN 1
#define LAPI_AM_TIMEOUT_MAX 86400
#define LAPI_AM_MAX_PKTS_OUT 32
#define LAPI_AM_ACK_DEFAULT 30

/* ----------------------------------------------------------------- job */

/*
 * Who this process is in the job, from the bootstrap (lapi_job.c): a
 * process started without a launcher is task 0 of 1; under lapirun or
 * PMIx each core group is one task (CPE-task mode will fill the same
 * structure).  boot_rc is not LAPI_SUCCESS when the job could not be
 * joined (the bootstrap printed why); LAPI_Init then fails with it.
 */
struct lapi_job {
  uint task_id;
  uint num_tasks;
  uint cg_first;   /* first task of this core group */
  uint cg_tasks;   /* tasks in this core group (QUERY_SHM_NUM_TASKS) */
  int timeout;     /* seconds (LAPI_TIMEOUT): the default TIMEOUT */
  int boot_rc;     /* LAPI_SUCCESS or LAPI_ERR_TIMEOUT */
};

const struct lapi_job *lapi_job(void);
/* Collectives over the job's tasks, every task calling them in the same
 * order.  LAPI_SUCCESS, or LAPI_ERR_TIMEOUT after a message when a task
 * or the launcher is gone (all[] is then zero but for our entry).  h, the
 * handle that calls (or NULL), keeps running its work meanwhile if the
 * calling thread dispatches it (polling mode). */
struct lapi_hndl;
int lapi_job_allgather64(struct lapi_hndl *h, lapi_long_t mine,
                         lapi_long_t *all);
int lapi_job_barrier(struct lapi_hndl *h);
/* The same barrier for LAPI_Gfence, over the network transport's own
 * messages where it connects the job's core groups (a round trip
 * through the job's exchange otherwise); lapi_fence.c. */
int lapi_net_barrier(struct lapi_hndl *h);

/* ------------------------------------------------ CPE tasks (lapi_cpe.c) */

enum lapi_cpe_mode { LAPI_MODE_NONE = 0, LAPI_MODE_PROCESS, LAPI_MODE_CPE };

/* Who the caller of LAPI_Init is in the job. */
struct lapi_task_view {
  uint task_id, num_tasks;
  uint cg_first, cg_tasks;
  int cpe; /* CRTS_tid of a CPE task, -1 for a process task */
};

/* The calling thread's view; LAPI_SUCCESS or a logged LAPI code. */
int lapi_cpe_view(struct lapi_task_view *v);
/* The process's mode (set by LAPI_Init while any handle lives). */
void lapi_cpe_mode_set(int mode, uint cg_first);
int lapi_cpe_mode(void);

/* Index (task - cg_first) of the task the calling thread acts for, -1 if
 * it is not a task; enter/leave bracket the work of h run for its task. */
int lapi_ctx_local(void);
int lapi_ctx_enter(const struct lapi_hndl *h);
void lapi_ctx_leave(int prev);
uint lapi_ctx_task(void); /* for logs */

/* Collectives over all tasks of h's job, and a barrier of h's CG only.
 * lapi_coll_gfence is LAPI_Gfence's barrier: lapi_net_barrier between
 * the CGs instead of the bootstrap's. */
int lapi_coll_barrier(struct lapi_hndl *h);
int lapi_coll_gfence(struct lapi_hndl *h);
int lapi_coll_allgather64(struct lapi_hndl *h, lapi_long_t mine,
                          lapi_long_t *all);
void lapi_cpe_barrier_cg(uint count);

/*
 * How a thread polls before it sleeps.  start, then relax between two
 * looks until it returns 0 (sleep now), then end.  Off the CPEs: a few
 * microseconds of pause (LAPI_SPIN).  A CPE task: as long as the threads
 * outnumber the cores every poll yields; at most as many tasks as there
 * are cores poll for up to LAPI_CPE_SPIN_US (the answer of a short wait
 * then needs no futex wake), the others a few times only (the MPE, which
 * does all the work, keeps its core).
 */
struct lapi_spin {
  int left;            /* polls left (short spin) */
  int64_t until_ns;    /* deadline of a long spin, 0 if short */
  int cpe;
};
void lapi_spin_start(struct lapi_spin *s);
int lapi_spin_relax(struct lapi_spin *s);
void lapi_spin_end(struct lapi_spin *s);
/* The dispatcher's spin window before it sleeps. */
int lapi_mpe_spins(void);
void lapi_mpe_relax(void);

/*
 * A CPE task that sleeps on a counter says for which value, so that an
 * increment wakes it only when its wait is over (a stream of completions
 * costs the MPE no futex wake per message).  sleep registers the calling
 * CPE (0 off the CPEs: wait as a plain sleeper), awake withdraws it, due
 * says whether a registered task waits on c for at most value.
 */
int lapi_cpe_cntr_sleep(lapi_cntr_t *c, int want);
void lapi_cpe_cntr_awake(void);
int lapi_cpe_cntr_due(lapi_cntr_t *c, int value);

/* PRINT_STATISTICS: the core group's DMA/RMA engine counters. */
void lapi_cpe_print_engine(void);

/* -------------------------------------------------------------- handle */

enum { LAPI_H_FREE = 0, LAPI_H_ACTIVE = 1 };

/* Operations and payload bytes of one direction on one transport. */
struct lapi_tp_count {
  uint64_t msgs, bytes;
};

struct lapi_hndl {
  lapi_handle_t index;    /* the handle value, per task (lapi_cpe.c) */
  unsigned slot;          /* place in the process's table */
  int state;              /* LAPI_H_*, atomic */
  int terminating;        /* a LAPI_Term is draining it, atomic */
  uint task_id, num_tasks;
  uint cg_first, cg_tasks; /* the tasks of this core group */
  int cpe;                /* CPE number of a CPE task, -1 in process mode
                             (atomic: the dispatcher reads any slot) */

  /* Settings. */
  int interrupt;          /* 1 interrupt mode, 0 polling, atomic */
  int error_chk;
  int timeout;
  int ack_threshold;
  uint epoch;
  lapi_lib_t lib_vers;
  LAPI_err_hndlr *err_hndlr;

  void *addr_tbl[LAPI_AM_ADDRTBL_SZ]; /* atomic entries */
  unsigned char *purged;  /* [num_tasks], atomic entries */
  uint purged_len;

  /* Inbound work, run under `lock`. */
  pthread_mutex_t qlock;
  struct lapi_item *qhead, *qtail;
  int pending;            /* items queued, atomic (futex-free hint) */
  int tight_waiters;      /* threads in lapi_wait_tight for it, atomic */
  struct lapi_rlock lock;

  int faults;             /* peers a transport declared gone, atomic:
                             counter waits then give up after TIMEOUT */
  int evt;                /* futex: something changed for h's waiters */
  int evt_sleepers;       /* threads asleep on evt (CPE tasks), atomic */

  /* Counts (atomic), on cache lines by who writes them, so that a task
   * sending and the dispatcher delivering to it do not pass lines back
   * and forth on every message: what the task writes as it issues, what
   * completes its sends, what arrives. */
  struct lapi_tp_count sent[LAPI_TP_COUNT] __attribute__((aligned(64)));
  long outstanding __attribute__((aligned(64))); /* sent, not landed */
  unsigned long sends_done;                      /* for LAPI_Msgpoll */
  unsigned long recvs_done __attribute__((aligned(64))); /* under lock */
  struct lapi_tp_count recv[LAPI_TP_COUNT];
};

/* The active handle with value hv of the task the caller acts for
 * (lapi_ctx_local), or NULL. */
struct lapi_hndl *lapi_hndl_get(lapi_handle_t hv);
/* The active handle of task `task` (of h's core group) with h's value, or
 * NULL: where a message of h to that task is delivered. */
struct lapi_hndl *lapi_hndl_peer(const struct lapi_hndl *h, uint task);
/*
 * Between core groups a handle is named by its key: the index of its task
 * in its core group (task - cg_first, 0 in process mode) times 256 plus the
 * handle value.  lapi_hndl_by_key gives the active handle of this process
 * with that key, or NULL.
 */
static inline uint16_t lapi_hndl_key(uint local, lapi_handle_t hv)
{
  return (uint16_t)(local << 8 | hv);
}
struct lapi_hndl *lapi_hndl_by_key(unsigned key);
/* Slot i (any state) for the dispatcher; i < lapi_hndl_limit(). */
struct lapi_hndl *lapi_hndl_slot(unsigned i);
unsigned lapi_hndl_limit(void);

static inline int lapi_hndl_interrupt(const struct lapi_hndl *h)
{
  return __atomic_load_n(&h->interrupt, __ATOMIC_ACQUIRE);
}

/* The dispatcher serves h: interrupt mode, or a CPE task's handle in any
 * mode (handlers never run on a CPE thread; polling is the MPE's job). */
static inline int lapi_hndl_mpe_served(const struct lapi_hndl *h)
{
  /* The dispatcher may look at a slot while LAPI_Init fills it. */
  return __atomic_load_n(&h->cpe, __ATOMIC_RELAXED) >= 0 ||
         lapi_hndl_interrupt(h);
}

static inline int lapi_hndl_purged(const struct lapi_hndl *h, uint task)
{
  return __atomic_load_n(&h->purged[task], __ATOMIC_ACQUIRE);
}

/* Common argument checks; each returns 0 or logs and returns the code
 * (api names the public call in the log). */
int lapi_check_tgt(const struct lapi_hndl *h, uint tgt, const char *api);

/* ---------------------------------------------------------- dispatcher */

/* Start the dispatcher thread if it is not running (LAPI_Init). */
int lapi_dispatch_start(void);
/* Stop it when no handle is left (LAPI_Term), unless called on it. */
void lapi_dispatch_stop(void);
/* Is the caller the dispatcher thread? */
int lapi_dispatch_on_thread(void);
/* Depth of handlers running on the calling thread. */
int lapi_dispatch_in_handler(void);
/* Run it on the calling thread right now, as the dispatcher would (under
 * h's lock, in h's task context), when h has nothing queued before it and
 * its lock is free; 0 if not (the caller posts it instead). */
int lapi_dispatch_run_now(struct lapi_hndl *h, struct lapi_item *it);

/* May the calling thread run h's items (polling mode, or dispatcher)? */
int lapi_may_dispatch(const struct lapi_hndl *h);

/* Make progress for a waiter on h: run what this thread may run.
 * Returns the items run (0: nothing could be done now). */
int lapi_progress(struct lapi_hndl *h);

/*
 * Wait until done(arg) is true, making progress meanwhile when the
 * calling thread may dispatch h (polling mode, or the dispatcher).
 * mark, when not NULL, is a counter's _wait word to flag so that its
 * increments ring the doorbell.
 */
void lapi_wait_until(struct lapi_hndl *h, int (*done)(void *), void *arg,
                     int *mark);
/* Its first phase: an application thread of a process task polls the
 * network in a tight loop for LAPI_POLL_US (see lapi_wait.h); 1 if
 * done(arg) became true meanwhile.  Counter waits that do not dispatch
 * use it too. */
int lapi_wait_tight(struct lapi_hndl *h, int (*done)(void *), void *arg);

/* Wake the threads that wait on h without dispatching it (CPE tasks:
 * LAPI_Fence, LAPI_Term, flow control): its sends landed or its queue
 * moved. */
void lapi_hndl_notify(struct lapi_hndl *h);

/* LAPI_Purge_totask: cancel h's queued items that came from src. */
void lapi_dispatch_cancel_from(struct lapi_hndl *h, int src);

/* ------------------------------------------------------------ counters */

/* _wait bits: plain sleepers count in the low half, dispatching
 * sleepers (who sleep on the doorbell) in the high half. */
#define LAPI_CNTR_WAIT_PLAIN 1
#define LAPI_CNTR_WAIT_CPE 0x100   /* a CPE task: wake it at its value only */
#define LAPI_CNTR_WAIT_BELL 0x10000
/* A counter waiter looks again at least this often (milliseconds). */
#define LAPI_CNTR_SLICE_MS 250

/* A thread counted in a counter's _wait word (lapi_cntr.c): the record
 * lives on its stack while it sleeps. */
struct lapi_cntr_sleeper {
  int *word;
  int how;
  struct lapi_cntr_sleeper *next;
};
/* Count the calling thread in word (how: LAPI_CNTR_WAIT_*) before it
 * sleeps, and take it out again once it woke for good. */
void lapi_cntr_sleeper_add(struct lapi_cntr_sleeper *s, int *word, int how);
void lapi_cntr_sleeper_remove(struct lapi_cntr_sleeper *s);

/* Forget the Setcntr_wstatus records of a handle (LAPI_Term). */
void lapi_wstatus_drop_handle(struct lapi_hndl *h);
/* LAPI_Purge_totask: statuses of dest, and wake their waiters. */
void lapi_wstatus_purge(struct lapi_hndl *h, uint dest);

/* -------------------------------------------------- shared submissions */

/* Validated entry points shared by the direct calls and LAPI_Xfer. */
int lapi_am_submit(struct lapi_hndl *h, struct lapi_tp_am *am, int vector,
                   const char *api);
int lapi_rma_put(struct lapi_hndl *h, const struct lapi_tp_rma *op,
                 int vector, const char *api);
int lapi_rma_get(struct lapi_hndl *h, const struct lapi_tp_rma *op,
                 int vector, const char *api);
int lapi_rma_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op,
                 const char *api);

/* The target's side of LAPI_Rmw and LAPI_Rmw64, for every transport:
 * applies op to the 4- or 8-byte variable at var atomically with operand
 * a (COMPARE_AND_SWAP: compare with a, store b) and returns the variable's
 * previous value (COMPARE_AND_SWAP: TRUE if it swapped, else FALSE). */
long long lapi_rmw_apply(void *var, int size, RMW_ops_t op, long long a,
                         long long b);
/* op's operands read from in_val at its width: in[1] for
 * COMPARE_AND_SWAP only (in_val holds one int otherwise), else 0. */
void lapi_rmw_operands(const struct lapi_tp_rmw *op, long long in[2]);
/* The previous value into prev_tgt_val (NULL: nowhere) at the width of
 * the operation (4 or 8 bytes). */
void lapi_rmw_store_prev(void *prev, int size, long long v);

/* Log a failure under the public call's name (api). */
#define LAPI_FAIL_IN(api, code, ...)                                    \
  (LAPI_LOG_CALL <= lapi_log_level()                                    \
       ? (lapi_log_write(LAPI_LOG_CALL, (code), (api), __LINE__,        \
                         __VA_ARGS__),                                  \
          (code))                                                       \
       : (code))

/* Remote addresses travel as 64-bit integers. */
static inline uint64_t lapi_addr_u64(const void *p)
{
  return (uint64_t)(uintptr_t)p;
}
static inline void *lapi_addr_ptr(uint64_t a)
{
  return (void *)(uintptr_t)a;
}

#endif /* LAPI_AM_H */
