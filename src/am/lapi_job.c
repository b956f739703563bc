/*
 * lapi_job.c - the bootstrap seam: who this process is in the job.
 *
 * Every task id and task count in the LAPI core comes from lapi_job().
 * A process started without a launcher is a job of one task (task 0 of
 * 1, alone in its core group), and the collectives are trivial.  The
 * launcher (lapirun, PMIx) and CPE-task mode of later issues replace
 * job_boot() and the two collectives; nothing else needs to change.
 */
#include <pthread.h>
#include <string.h>

#include "am/lapi_am.h"

static struct lapi_job job;
static pthread_once_t job_once = PTHREAD_ONCE_INIT;

static void job_boot(void)
{
  job.task_id = 0;
  job.num_tasks = 1;
  job.cg_first = 0;
  job.cg_tasks = 1;
}

const struct lapi_job *lapi_job(void)
{
  pthread_once(&job_once, job_boot);
  return &job;
}

void lapi_job_allgather64(lapi_long_t mine, lapi_long_t *all)
{
  const struct lapi_job *j = lapi_job();
  /* One task: the table is just our own entry. */
  all[j->task_id] = mine;
}

void lapi_job_barrier(void)
{
  (void)lapi_job();
}
