/*
 * lapi_handle.c - LAPI_Init, LAPI_Term and the handle table.
 *
 * Up to LAPI_AM_MAX_HANDLES instances live at once; the handle value is
 * the slot index, the lowest free slot is taken.  LAPI_Term drains the
 * instance (its queued work runs, its messages land) before the slot is
 * freed, so nothing of an old instance reaches a later LAPI_Init that
 * reuses the slot.  The first LAPI_Init starts the dispatcher thread and
 * the last LAPI_Term stops it.
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

static struct lapi_hndl table[LAPI_AM_MAX_HANDLES];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static unsigned table_limit; /* 1 + highest slot ever used, atomic */
static int table_live;       /* slots in use, under table_lock */

static void table_init(void)
{
  for (unsigned i = 0; i < LAPI_AM_MAX_HANDLES; i++) {
    table[i].index = i;
    pthread_mutex_init(&table[i].qlock, NULL);
    lapi_rlock_init(&table[i].lock);
  }
}

struct lapi_hndl *lapi_hndl_get(lapi_handle_t hv)
{
  if (hv >= LAPI_AM_MAX_HANDLES)
    return NULL;
  struct lapi_hndl *h = &table[hv];
  if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != LAPI_H_ACTIVE)
    return NULL;
  return h;
}

struct lapi_hndl *lapi_hndl_slot(unsigned i)
{
  return &table[i];
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
                       const struct lapi_job *j)
{
  h->task_id = j->task_id;
  h->num_tasks = j->num_tasks;
  __atomic_store_n(&h->interrupt, initial_mode(info), __ATOMIC_RELEASE);
  h->error_chk = 1;
  h->timeout = j->timeout;
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
  __atomic_store_n(&h->sends_done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&h->recvs_done, 0, __ATOMIC_RELAXED);
  memset(h->stats, 0, sizeof h->stats);
}

/* Undo the transports' init, last first. */
static void transports_fini(struct lapi_hndl *h, unsigned upto)
{
  while (upto-- > 0)
    lapi_tp_all[upto]->fini(h);
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

  const struct lapi_job *j = lapi_job();
  if (j->boot_rc != LAPI_SUCCESS)
    return LAPI_FAIL(j->boot_rc, "this core group could not join its job "
                     "within LAPI_TIMEOUT=%d s (see the \"lapi boot:\" "
                     "message above)", j->timeout);
  pthread_once(&table_once, table_init);
  pthread_mutex_lock(&table_lock);
  unsigned i = 0;
  while (i < LAPI_AM_MAX_HANDLES &&
         (__atomic_load_n(&table[i].state, __ATOMIC_ACQUIRE) != LAPI_H_FREE ||
          __atomic_load_n(&table[i].terminating, __ATOMIC_ACQUIRE)))
    i++;
  if (i == LAPI_AM_MAX_HANDLES) {
    pthread_mutex_unlock(&table_lock);
    return LAPI_FAIL(LAPI_ERR_ALL_HNDL_IN_USE,
                     "all %d LAPI handles of this process are in use: "
                     "LAPI_Term one first", LAPI_AM_MAX_HANDLES);
  }
  struct lapi_hndl *h = &table[i];
  /* The purge flags are sized once per slot and kept: a late reader of
   * a terminated handle never touches freed memory. */
  if (h->purged == NULL)
    h->purged = calloc(j->num_tasks, 1);
  if (h->purged == NULL) {
    pthread_mutex_unlock(&table_lock);
    return LAPI_FAIL(LAPI_ERR_MEMORY_EXHAUSTED,
                     "no memory for a handle of %u tasks", j->num_tasks);
  }
  int rc = lapi_dispatch_start();
  if (rc != LAPI_SUCCESS) {
    pthread_mutex_unlock(&table_lock);
    return LAPI_FAIL(rc, "the dispatcher thread could not be started");
  }
  slot_setup(h, lapi_info, j);
  unsigned t;
  for (t = 0; t < lapi_tp_count; t++) {
    rc = lapi_tp_all[t]->init(h);
    if (rc != LAPI_SUCCESS)
      break;
  }
  if (rc != LAPI_SUCCESS) {
    transports_fini(h, t);
    if (table_live == 0)
      lapi_dispatch_stop();
    pthread_mutex_unlock(&table_lock);
    return LAPI_FAIL(rc, "transport %s failed to start",
                     lapi_tp_all[t]->name);
  }
  table_live++;
  if (i + 1 > table_limit)
    __atomic_store_n(&table_limit, i + 1, __ATOMIC_RELEASE);
  __atomic_store_n(&h->state, LAPI_H_ACTIVE, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&table_lock);

  *hndl = i;
  LAPI_LOG(LAPI_LOG_INFO, "handle %u: task %u of %u, %s mode", i,
           h->task_id, h->num_tasks,
           lapi_hndl_interrupt(h) ? "interrupt" : "polling");
  return LAPI_SUCCESS;
}

/* Nothing queued for the handle, nothing it sent still in flight. */
static int quiet(void *arg)
{
  struct lapi_hndl *h = arg;
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
  lapi_job_barrier();
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
  if (--table_live == 0)
    lapi_dispatch_stop();
  __atomic_store_n(&h->terminating, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&table_lock);
  LAPI_LOG(LAPI_LOG_INFO, "handle %u terminated", hndl);
  return LAPI_SUCCESS;
}

int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *lapi_info)
    __attribute__((weak, alias("PLAPI_Init")));
int LAPI_Term(lapi_handle_t hndl) __attribute__((weak, alias("PLAPI_Term")));
