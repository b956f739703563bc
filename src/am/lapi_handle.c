/*
 * lapi_handle.c - LAPI_Init, LAPI_Term and the handle table.
 *
 * Up to LAPI_AM_MAX_HANDLES instances live at once per task; the handle
 * value is per task (the lowest free one, so the first LAPI_Init of every
 * task returns 0), and value k of one task talks to value k of the others.
 * The process keeps one table of slots for all its tasks (one in process
 * mode, up to 64 CPE tasks in CPE-task mode, see lapi_cpe.c).  LAPI_Term
 * drains the instance (its queued work runs, its messages land) before the
 * slot is freed, so nothing of an old instance reaches a later LAPI_Init
 * that reuses the slot.  The first LAPI_Init starts the dispatcher thread
 * and the last LAPI_Term stops it.  In CPE-task mode LAPI_Init is
 * collective over the tasks of the core group.
 *
 * lapi_info_t: the caller zeroes it and sets what it needs.  Read here:
 * protocol (LAPI_INTERRUPT_OFF starts in polling mode), lib_vers,
 * epoch_num (EPOCH_NUM), err_hndlr.  Ignored: num_compl_hndlr_thr
 * (handlers run on the dispatcher), instance_no, lapi_thread_attr,
 * adapter_name, add_info (no UDP device).  The reserved info6 must be 0.
 */
#include <stdlib.h>
#include <string.h>

#include "am/lapi_am.h"
#include "am/lapi_setting.h"

/*
 * Slots are allocated on first use and never freed; table_limit counts the
 * allocated ones (all below it exist).  byval[local][hv] maps a task of
 * this CG (local = task - cg_first; 0 in process mode) and a handle value
 * to its slot while the handle lives.
 */
#define CG_TASKS LAPI_AM_CG_TASKS
#define MAX_SLOTS LAPI_AM_MAX_SLOTS

static struct lapi_hndl *table[MAX_SLOTS];
static struct lapi_hndl *byval[CG_TASKS][LAPI_AM_MAX_HANDLES];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned table_limit; /* slots allocated, atomic */
static int table_live;       /* slots in use, under table_lock */
static uint live_tasks;      /* NUM_TASKS of the live handles */

static struct lapi_hndl *by_value(int local, lapi_handle_t hv)
{
  if (local < 0 || local >= CG_TASKS || hv >= LAPI_AM_MAX_HANDLES)
    return NULL;
  struct lapi_hndl *h = __atomic_load_n(&byval[local][hv], __ATOMIC_ACQUIRE);
  if (h == NULL || __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) !=
                       LAPI_H_ACTIVE)
    return NULL;
  return h;
}

struct lapi_hndl *lapi_hndl_get(lapi_handle_t hv)
{
  return by_value(lapi_ctx_local(), hv);
}

struct lapi_hndl *lapi_hndl_peer(const struct lapi_hndl *h, uint task)
{
  if (task < h->cg_first || task - h->cg_first >= h->cg_tasks)
    return NULL;
  return by_value((int)(task - h->cg_first), h->index);
}

struct lapi_hndl *lapi_hndl_by_key(unsigned key)
{
  return by_value((int)(key >> 8), key & 0xff);
}

struct lapi_hndl *lapi_hndl_slot(unsigned i)
{
  return table[i];
}

unsigned lapi_hndl_limit(void)
{
  return __atomic_load_n(&table_limit, __ATOMIC_ACQUIRE);
}

int lapi_check_tgt(const struct lapi_hndl *h, uint tgt, const char *api)
{
  if (tgt >= h->num_tasks)
    return LAPI_FAIL_IN(api, LAPI_ERR_TGT,
                        "tgt %u is not a task of this job (NUM_TASKS %u): "
                        "use 0 <= tgt < NUM_TASKS", tgt, h->num_tasks);
  return 0;
}

/* Interrupt mode unless the program or LAPI_INTERRUPT=0 asks otherwise. */
static int initial_mode(const lapi_info_t *info)
{
  if (info->protocol & LAPI_INTERRUPT_OFF)
    return 0;
  const char *s = getenv("LAPI_INTERRUPT");
  if (s && (!strcmp(s, "0") || !strcmp(s, "no")))
    return 0;
  return 1;
}

static void slot_setup(struct lapi_hndl *h, const lapi_info_t *info,
                       const struct lapi_task_view *v)
{
  h->task_id = v->task_id;
  h->num_tasks = v->num_tasks;
  h->cg_first = v->cg_first;
  h->cg_tasks = v->cg_tasks;
  __atomic_store_n(&h->cpe, v->cpe, __ATOMIC_RELAXED);
  __atomic_store_n(&h->interrupt, initial_mode(info), __ATOMIC_RELEASE);
  h->error_chk = 1;
  h->timeout = lapi_job()->timeout;
  h->ack_threshold = LAPI_AM_ACK_DEFAULT;
  h->epoch = info->epoch_num;
  h->lib_vers = info->lib_vers;
  __atomic_store_n(&h->err_hndlr, info->err_hndlr, __ATOMIC_RELEASE);
  for (unsigned i = 0; i < LAPI_AM_ADDRTBL_SZ; i++)
    __atomic_store_n(&h->addr_tbl[i], NULL, __ATOMIC_RELAXED);
  for (uint t = 0; t < h->num_tasks; t++)
    __atomic_store_n(&h->purged[t], 0, __ATOMIC_RELAXED);
  h->qhead = h->qtail = NULL;
  __atomic_store_n(&h->pending, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&h->outstanding, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&h->faults, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&h->sends_done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&h->recvs_done, 0, __ATOMIC_RELAXED);
  memset(h->sent, 0, sizeof h->sent);
  memset(h->recv, 0, sizeof h->recv);
}

/* Undo the transports' init, last first. */
static void transports_fini(struct lapi_hndl *h, unsigned upto)
{
  while (upto-- > 0)
    lapi_tp_all[upto]->fini(h);
}

/* A slot that is free, or a new one; NULL when MAX_SLOTS are in use. */
static struct lapi_hndl *slot_take(void)
{
  unsigned limit = table_limit;
  for (unsigned i = 0; i < limit; i++)
    if (__atomic_load_n(&table[i]->state, __ATOMIC_ACQUIRE) == LAPI_H_FREE &&
        !__atomic_load_n(&table[i]->terminating, __ATOMIC_ACQUIRE))
      return table[i];
  if (limit == MAX_SLOTS)
    return NULL;
  /* Aligned as its type says: its counts sit on cache lines of their own. */
  struct lapi_hndl *h = aligned_alloc(_Alignof(struct lapi_hndl),
                                      (sizeof *h + 63) & ~(size_t)63);
  if (h == NULL)
    return NULL;
  memset(h, 0, sizeof *h);
  h->slot = limit;
  pthread_mutex_init(&h->qlock, NULL);
  lapi_rlock_init(&h->lock);
  table[limit] = h;
  /* The dispatcher reads table[i] for i below the limit it loaded. */
  __atomic_store_n(&table_limit, limit + 1, __ATOMIC_RELEASE);
  return h;
}

/* LAPI_Init under the table lock, once the caller's view is known. */
static int init_locked(const lapi_info_t *info,
                       const struct lapi_task_view *v, lapi_handle_t *hndl)
{
  int m = v->cpe >= 0 ? LAPI_MODE_CPE : LAPI_MODE_PROCESS;
  if (table_live > 0 && (lapi_cpe_mode() != m || live_tasks != v->num_tasks))
    return LAPI_FAIL_IN("PLAPI_Init", LAPI_ERR_SHM_SETUP,
                        "%s: this process already has LAPI handles of %s "
                        "(%u tasks); terminate them before starting the "
                        "other kind",
                        m == LAPI_MODE_CPE ? "LAPI_Init on a CPE"
                                           : "LAPI_Init off the CPEs",
                        lapi_cpe_mode() == LAPI_MODE_CPE ? "CPE tasks"
                                                         : "process mode",
                        live_tasks);
  int local = (int)(v->task_id - v->cg_first);
  lapi_handle_t hv = 0;
  while (hv < LAPI_AM_MAX_HANDLES && byval[local][hv] != NULL)
    hv++;
  struct lapi_hndl *h = hv < LAPI_AM_MAX_HANDLES ? slot_take() : NULL;
  if (h == NULL)
    return LAPI_FAIL_IN("PLAPI_Init", LAPI_ERR_ALL_HNDL_IN_USE,
                        "all %d LAPI handles of task %u are in use: "
                        "LAPI_Term one first", LAPI_AM_MAX_HANDLES,
                        v->task_id);
  /* The purge flags of a slot are kept (a late reader of a terminated
   * handle never touches freed memory); a bigger job gets new ones. */
  if (h->purged_len < v->num_tasks) {
    unsigned char *p = calloc(v->num_tasks, 1);
    if (p == NULL)
      return LAPI_FAIL_IN("PLAPI_Init", LAPI_ERR_MEMORY_EXHAUSTED,
                          "no memory for a handle of %u tasks",
                          v->num_tasks);
    h->purged = p;
    h->purged_len = v->num_tasks;
  }
  int rc = lapi_dispatch_start();
  if (rc != LAPI_SUCCESS)
    return LAPI_FAIL_IN("PLAPI_Init", rc,
                        "the dispatcher thread could not be started");
  if (table_live == 0)
    lapi_cpe_mode_set(m, v->cg_first);
  slot_setup(h, info, v);
  h->index = hv;
  unsigned t;
  for (t = 0; t < lapi_tp_count; t++) {
    rc = lapi_tp_all[t]->init(h);
    if (rc != LAPI_SUCCESS)
      break;
  }
  if (rc != LAPI_SUCCESS) {
    transports_fini(h, t);
    if (table_live == 0) {
      lapi_dispatch_stop();
      lapi_cpe_mode_set(LAPI_MODE_NONE, 0);
    }
    return LAPI_FAIL_IN("PLAPI_Init", rc, "transport %s failed to start",
                        lapi_tp_all[t]->name);
  }
  table_live++;
  live_tasks = v->num_tasks;
  __atomic_store_n(&h->state, LAPI_H_ACTIVE, __ATOMIC_RELEASE);
  __atomic_store_n(&byval[local][hv], h, __ATOMIC_RELEASE);

  *hndl = hv;
  LAPI_LOG(LAPI_LOG_INFO, "handle %u: task %u of %u, %s mode%s", hv,
           h->task_id, h->num_tasks,
           lapi_hndl_interrupt(h) ? "interrupt" : "polling",
           h->cpe >= 0 ? ", CPE task" : "");
  return LAPI_SUCCESS;
}

int PLAPI_Init(lapi_handle_t *hndl, lapi_info_t *lapi_info)
{
  if (lapi_info == NULL)
    return LAPI_FAIL(LAPI_ERR_INFO_NULL,
                     "lapi_info is NULL: pass a zeroed lapi_info_t");
  if (hndl == NULL)
    return LAPI_FAIL(LAPI_ERR_RET_PTR_NULL,
                     "hndl is NULL: pass where to store the new handle");
  if (lapi_info->info6 != 0)
    return LAPI_FAIL(LAPI_ERR_INFO_NONZERO,
                     "lapi_info->info6 is %d: zero the whole lapi_info_t "
                     "(memset) before setting its fields", lapi_info->info6);

  /* before any thread of ours starts, and before the ofi transport's
   * setenv (lapi_setting.h) */
  lapi_settings_read_all();
  const struct lapi_job *j = lapi_job();
  if (j->boot_rc != LAPI_SUCCESS)
    return LAPI_FAIL(j->boot_rc, "this core group could not join its job "
                     "within LAPI_TIMEOUT=%d s (see the \"lapi boot:\" "
                     "message above)", j->timeout);
  struct lapi_task_view v;
  int rc = lapi_cpe_view(&v);
  if (rc != LAPI_SUCCESS)
    return rc;
  pthread_mutex_lock(&table_lock);
  rc = init_locked(lapi_info, &v, hndl);
  pthread_mutex_unlock(&table_lock);
  /* Collective in CPE-task mode: no task sends before every task has its
   * handle, in this core group (each task joins, even after a failure)
   * and then, through one task per core group, in the others. */
  if (v.cpe >= 0) {
    lapi_cpe_barrier_cg(v.cg_tasks);
    if (rc == LAPI_SUCCESS && v.num_tasks > v.cg_tasks &&
        lapi_coll_barrier(lapi_hndl_get(*hndl)) != LAPI_SUCCESS)
      LAPI_LOG(LAPI_LOG_ASYNC, "LAPI_Init: the core groups of the job did "
               "not all reach the start-up barrier");
  }
  return rc;
}

/* Nothing queued for the handle, nothing it sent still in flight. */
static int quiet(void *arg)
{
  struct lapi_hndl *h = arg;
  if (__atomic_load_n(&h->outstanding, __ATOMIC_SEQ_CST) != 0)
    lapi_tp_flush(h); /* ask for acknowledgements (as LAPI_Fence) */
  return __atomic_load_n(&h->pending, __ATOMIC_SEQ_CST) == 0 &&
         __atomic_load_n(&h->outstanding, __ATOMIC_SEQ_CST) == 0;
}

int PLAPI_Term(lapi_handle_t hndl)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  int expect = 0;
  if (!__atomic_compare_exchange_n(&h->terminating, &expect, 1, 0,
                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is being terminated by another thread",
                     hndl);

  /* Collective: every task stops sending before anyone frees. */
  lapi_coll_barrier(h);
  for (;;) {
    lapi_wait_until(h, quiet, h, NULL);
    /* Holding the lock, no handler of h runs; re-check under it. */
    lapi_rlock_lock(&h->lock);
    if (quiet(h))
      break;
    lapi_rlock_unlock(&h->lock);
  }
  __atomic_store_n(&h->state, LAPI_H_FREE, __ATOMIC_SEQ_CST);
  transports_fini(h, lapi_tp_count);
  lapi_wstatus_drop_handle(h);
  __atomic_store_n(&h->err_hndlr, NULL, __ATOMIC_RELEASE);
  lapi_rlock_unlock(&h->lock);

  pthread_mutex_lock(&table_lock);
  __atomic_store_n(&byval[h->task_id - h->cg_first][h->index], NULL,
                   __ATOMIC_RELEASE);
  if (--table_live == 0) {
    lapi_dispatch_stop();
    lapi_cpe_mode_set(LAPI_MODE_NONE, 0);
  }
  __atomic_store_n(&h->terminating, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&table_lock);
  LAPI_LOG(LAPI_LOG_INFO, "handle %u terminated", hndl);
  return LAPI_SUCCESS;
}

int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *lapi_info)
    __attribute__((weak, alias("PLAPI_Init")));
int LAPI_Term(lapi_handle_t hndl) __attribute__((weak, alias("PLAPI_Term")));
