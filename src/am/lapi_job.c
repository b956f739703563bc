/*
 * lapi_job.c - the bootstrap seam: who this process is in the job.
 *
 * Every task id and task count in the LAPI core comes from lapi_job(),
 * filled once from the process-wide bootstrap (src/transport/boot): a
 * process started without a launcher is a job of one task; under lapirun
 * or PMIx each core group (process) is one task, task id = CG rank
 * (process mode; CPE-task mode is a later issue).  A CG that cannot join
 * its job stays task 0 of 1 with boot_rc set, so nothing indexes past a
 * table, and LAPI_Init fails with that code.
 */
#include <pthread.h>
#include <string.h>

#include "am/lapi_am.h"
#include "transport/boot/boot_impl.h"
#include "transport/boot/boot_proto.h"

_Static_assert(sizeof(lapi_long_t) == sizeof(int64_t),
               "the all-gather moves lapi_long_t as 8 bytes");

static struct lapi_job job;
static struct lapi_boot *job_bootstrap;
static pthread_once_t job_once = PTHREAD_ONCE_INIT;

static void job_boot(void)
{
  job.task_id = 0;
  job.num_tasks = 1;
  job.cg_first = 0;
  job.cg_tasks = 1;
  job.timeout = lapi_boot_timeout();
  job.boot_rc = LAPI_SUCCESS;
  struct lapi_boot *b = lapi_boot_get();
  if (b == NULL) {
    job.boot_rc = LAPI_ERR_TIMEOUT;
    return;
  }
  job_bootstrap = b;
  job.task_id = (uint)b->rank;
  job.num_tasks = (uint)b->size;
  job.cg_first = (uint)b->rank;
  job.cg_tasks = 1;
}

const struct lapi_job *lapi_job(void)
{
  pthread_once(&job_once, job_boot);
  return &job;
}

/*
 * A collective blocks in the bootstrap; a task in polling mode runs its
 * handle's work meanwhile (a peer may wait for one of its messages before
 * it joins: without this both would wait for ever).  Every bootstrap of
 * more than one CG waits in the job's exchange (lapirun's, or rank 0's
 * under PMIx), which calls lapi_progress between its polls
 * (boot_set_wait_idle).
 */
static int coll_progress(void *h)
{
  return lapi_progress(h);
}

static int coll_polls(const struct lapi_hndl *h)
{
  return h && h->cpe < 0 && lapi_may_dispatch(h);
}

/* The bootstrap's allgather (mine != NULL) or barrier; 0 or -1. */
static int coll_run(struct lapi_hndl *h, const void *mine, size_t len,
                    void *all)
{
  int polls = coll_polls(h);
  if (polls)
    boot_set_wait_idle(coll_progress, h);
  int rc = mine ? job_bootstrap->allgather(job_bootstrap, mine, len, all)
                : job_bootstrap->barrier(job_bootstrap);
  if (polls)
    boot_set_wait_idle(NULL, NULL);
  return rc;
}

int lapi_job_allgather64(struct lapi_hndl *h, lapi_long_t mine,
                         lapi_long_t *all)
{
  const struct lapi_job *j = lapi_job();
  if (j->num_tasks == 1 || job_bootstrap == NULL) {
    all[j->task_id] = mine;
    return j->boot_rc;
  }
  int64_t v = (int64_t)mine;
  if (coll_run(h, &v, sizeof v, all) != 0) {
    memset(all, 0, j->num_tasks * sizeof *all);
    all[j->task_id] = mine;
    return LAPI_ERR_TIMEOUT;
  }
  return LAPI_SUCCESS;
}

int lapi_job_barrier(struct lapi_hndl *h)
{
  const struct lapi_job *j = lapi_job();
  if (j->num_tasks == 1 || job_bootstrap == NULL)
    return j->boot_rc;
  return coll_run(h, NULL, 0, NULL) ? LAPI_ERR_TIMEOUT : LAPI_SUCCESS;
}
