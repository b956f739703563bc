/*
 * lapi_cpe.c - CPE-task mode: who the caller of a LAPI function is, and the
 * collectives and waits of tasks that are emulated CPEs.
 *
 * A process is one core group (CG).  In process mode the process is one
 * task (its CG rank).  In CPE-task mode every CPE of the spawned group that
 * calls LAPI_Init is a task:
 *     task = rank * tasks_per_cg + CRTS_tid,  NUM_TASKS = CGs * tasks_per_cg
 * tasks_per_cg comes from the launcher (lapirun -c N), or without one from
 * the size of the current spawn.  The first LAPI_Init of a process decides
 * the mode (on a CPE: CPE-task mode), and it stays until the last handle is
 * terminated.
 *
 * Handle values are per task: the first LAPI_Init of every task returns 0,
 * and handle value k of one task talks to handle value k of the others.
 * Which task's handles a call means is the calling thread's context: a CPE
 * thread is its own task; the dispatcher acts for the task whose work item
 * it runs (lapi_ctx_enter/leave around every item); in process mode every
 * thread is the process's task.
 *
 * The tasks of a CG meet in barriers and all-gathers here (a futex barrier
 * of libcrts); across CGs one task per CG takes part in the bootstrap's
 * collectives on behalf of its CG.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am/lapi_am.h"
#include "crts/crts_engine.h"
#include "transport/boot/boot.h"

static int mode;               /* enum lapi_cpe_mode, atomic */
static uint mode_first;        /* cg_first of the CPE tasks, atomic */
static __thread int ctx_local = -1; /* task the thread acts for, -1: own */

/* ------------------------------------------------------------- context */

void lapi_cpe_mode_set(int m, uint cg_first)
{
  __atomic_store_n(&mode_first, cg_first, __ATOMIC_RELAXED);
  __atomic_store_n(&mode, m, __ATOMIC_RELEASE);
}

int lapi_cpe_mode(void)
{
  return __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
}

int lapi_ctx_local(void)
{
  if (ctx_local >= 0)
    return ctx_local;
  if (__atomic_load_n(&mode, __ATOMIC_RELAXED) != LAPI_MODE_CPE)
    return 0;
  return crts_engine_cpe_tid(); /* -1: not a task (the MPE, a pthread) */
}

int lapi_ctx_enter(const struct lapi_hndl *h)
{
  int prev = ctx_local;
  ctx_local = (int)(h->task_id - h->cg_first);
  return prev;
}

void lapi_ctx_leave(int prev)
{
  ctx_local = prev;
}

uint lapi_ctx_task(void)
{
  int local = lapi_ctx_local();
  if (lapi_cpe_mode() == LAPI_MODE_CPE && local >= 0)
    return __atomic_load_n(&mode_first, __ATOMIC_RELAXED) + (uint)local;
  return lapi_job()->task_id;
}

/* ---------------------------------------------------------- job shape */

/* Tasks per CG given by a launcher, or 0 (none: use the spawn). */
static int launcher_tasks_per_cg(void)
{
  struct lapi_boot *b = lapi_boot_get();
  if (b == NULL || strcmp(b->kind, "singleton") == 0)
    return 0;
  return b->tasks_per_cg;
}

int lapi_cpe_view(struct lapi_task_view *v)
{
  const struct lapi_job *j = lapi_job();
  int tid = crts_engine_cpe_tid();
  if (tid < 0) {
    v->task_id = j->task_id;
    v->num_tasks = j->num_tasks;
    v->cg_first = j->cg_first;
    v->cg_tasks = j->cg_tasks;
    v->cpe = -1;
    return LAPI_SUCCESS;
  }
  if (!crts_engine_cpe_spawned())
    return LAPI_FAIL_IN("PLAPI_Init", LAPI_ERR_SHM_SETUP,
                        "CPE %d was started by CRTS_athread_create: only the "
                        "CPEs of a CRTS_athread_spawn group are LAPI tasks",
                        tid);
  int launched = launcher_tasks_per_cg();
  int tpc = launched > 0 ? launched : crts_engine_group_size();
  uint64_t want = tpc >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << tpc) - 1;
  if (tid >= tpc)
    return LAPI_FAIL_IN("PLAPI_Init", LAPI_ERR_SHM_SETUP,
                        "CPE %d is not a task: the job has %d tasks per core "
                        "group (lapirun -c %d); spawn exactly that many CPEs "
                        "(CRTS_NUM_CPES=%d)", tid, tpc, tpc, tpc);
  if ((crts_engine_group_mask() & want) != want)
    return LAPI_FAIL_IN("PLAPI_Init", LAPI_ERR_SHM_SETUP,
                        "the job has %d tasks per core group but CPEs 0..%d "
                        "are not all in the spawned group (%d CPEs): set "
                        "CRTS_NUM_CPES=%d", tpc, tpc - 1,
                        crts_engine_group_size(), tpc);
  /* The process view names the CG: its rank and the number of CGs. */
  uint rank = j->task_id, ncg = j->num_tasks;
  v->cpe = tid;
  v->cg_first = rank * (uint)tpc;
  v->cg_tasks = (uint)tpc;
  v->task_id = v->cg_first + (uint)tid;
  v->num_tasks = ncg * (uint)tpc;
  return LAPI_SUCCESS;
}

/* --------------------------------------------------------- collectives */

static struct {
  struct crts_barrier bar;   /* the CPE tasks of this CG */
  lapi_long_t vals[2][CRTS_MAX_SPE_NUM];
  lapi_long_t *job[2];       /* [NUM_TASKS] across CGs */
  int rc[2];                 /* what the CG's representative got */
  unsigned seq[CRTS_MAX_SPE_NUM]; /* collectives per local task */
} coll;

static void cg_barrier(const struct lapi_hndl *h)
{
  crts_engine_barrier(&coll.bar, h->cg_tasks);
}

void lapi_cpe_barrier_cg(uint count)
{
  crts_engine_barrier(&coll.bar, count);
}

/*
 * Collectives of CPE tasks: every task of the CG calls, in the same order.
 * Results of the representative (local task 0) are published in a slot of
 * two, by parity of the call count: call k+2 cannot write a slot before
 * every task passed the first barrier of call k+1, that is, finished
 * reading call k.
 */
int lapi_coll_barrier(struct lapi_hndl *h)
{
  if (h->cpe < 0)
    return lapi_job_barrier();
  cg_barrier(h);
  if (h->num_tasks == h->cg_tasks)
    return LAPI_SUCCESS;
  /* One task per CG meets the other CGs; the rest wait for it. */
  unsigned local = h->task_id - h->cg_first;
  unsigned par = coll.seq[local]++ & 1;
  if (local == 0)
    coll.rc[par] = lapi_job_barrier();
  cg_barrier(h);
  return coll.rc[par];
}

/* Gather every CG's block of cg_tasks values (one task per CG calls). */
static int job_gather(struct lapi_hndl *h, const lapi_long_t *block,
                      lapi_long_t *all)
{
  struct lapi_boot *b = lapi_boot_get();
  size_t len = h->cg_tasks * sizeof *block;
  if (b == NULL || b->allgather(b, block, len, all) != 0) {
    /* The bootstrap printed why. */
    memset(all, 0, h->num_tasks * sizeof *all);
    memcpy(all + h->cg_first, block, len);
    return LAPI_ERR_TIMEOUT;
  }
  return LAPI_SUCCESS;
}

int lapi_coll_allgather64(struct lapi_hndl *h, lapi_long_t mine,
                          lapi_long_t *all)
{
  if (h->cpe < 0)
    return lapi_job_allgather64(mine, all);
  unsigned local = h->task_id - h->cg_first;
  unsigned par = coll.seq[local]++ & 1;
  lapi_long_t *vals = coll.vals[par];
  vals[local] = mine;
  cg_barrier(h);
  if (h->num_tasks == h->cg_tasks) {
    memcpy(all, vals, h->cg_tasks * sizeof *all);
    return LAPI_SUCCESS;
  }
  if (local == 0) {
    if (coll.job[par] == NULL)
      coll.job[par] = calloc(h->num_tasks, sizeof *all);
    coll.rc[par] = coll.job[par] ? job_gather(h, vals, coll.job[par])
                                 : LAPI_ERR_MEMORY_EXHAUSTED;
  }
  cg_barrier(h);
  int rc = coll.rc[par];
  if (rc == LAPI_SUCCESS)
    memcpy(all, coll.job[par], h->num_tasks * sizeof *all);
  return rc;
}

/* --------------------------------------------------------------- waits */

/*
 * Long spins: a task whose answer comes within LAPI_CPE_SPIN_US (default
 * 100 us) keeps polling and is not put to sleep and woken again (a futex
 * wake costs the MPE a system call and the task about 6 us here).  Only as
 * many tasks as there are cores may spin that long at once; the others
 * poll a few times and sleep, so that 64 waiting tasks on 2 cores leave
 * the cores to the MPE, which does the work they wait for.
 */
static int long_spinners; /* atomic */
static int spin_us = -1, spin_cores;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;

static void spin_settings(void)
{
  cpu_set_t set;
  spin_cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                          : 1;
  spin_us = 100;
  const char *e = getenv("LAPI_CPE_SPIN_US");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (*end == '\0' && v >= 0 && v <= 1000000)
      spin_us = (int)v;
    else
      fprintf(stderr, "lapi: LAPI_CPE_SPIN_US=%s is not a count of "
              "microseconds; using %d\n", e, spin_us);
  }
}

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void lapi_spin_start(struct lapi_spin *s)
{
  s->cpe = crts_engine_cpe_tid() >= 0;
  s->until_ns = 0;
  if (!s->cpe) {
    s->left = lapi_spin_limit();
    return;
  }
  pthread_once(&spin_once, spin_settings);
  s->left = crts_engine_spin_limit();
  if (spin_us == 0)
    return;
  if (__atomic_add_fetch(&long_spinners, 1, __ATOMIC_SEQ_CST) <= spin_cores)
    s->until_ns = now_ns() + (int64_t)spin_us * 1000;
  else
    __atomic_sub_fetch(&long_spinners, 1, __ATOMIC_SEQ_CST);
}

int lapi_spin_relax(struct lapi_spin *s)
{
  if (s->until_ns) {
    if (now_ns() >= s->until_ns)
      return 0;
  } else if (s->left-- <= 0) {
    return 0;
  }
  if (s->cpe)
    crts_engine_relax(); /* a yield when the threads outnumber the cores */
  else
    lapi_cpu_relax();
  return 1;
}

void lapi_spin_end(struct lapi_spin *s)
{
  if (s->until_ns) {
    __atomic_sub_fetch(&long_spinners, 1, __ATOMIC_SEQ_CST);
    s->until_ns = 0;
  }
}

/*
 * The dispatcher's spin window: how many empty polls before it sleeps.
 * Serving CPE tasks on oversubscribed cores, a poll yields (the task that
 * will post the next request needs the core); otherwise it pauses.
 */
int lapi_mpe_spins(void)
{
  if (lapi_cpe_mode() == LAPI_MODE_CPE && crts_engine_initialized())
    return 4 * crts_engine_spin_limit();
  return lapi_spin_limit();
}

void lapi_mpe_relax(void)
{
  if (lapi_cpe_mode() == LAPI_MODE_CPE && crts_engine_initialized())
    crts_engine_relax();
  else
    lapi_cpu_relax();
}

/* --------------------------------------------------- counter sleepers */

static struct {
  lapi_cntr_t *c;   /* atomic; NULL: not waiting */
  int want;         /* atomic */
} __attribute__((aligned(64))) sleeper[CRTS_MAX_SPE_NUM];
static uint64_t sleeping; /* bit t: CPE t is registered, atomic */

int lapi_cpe_cntr_sleep(lapi_cntr_t *c, int want)
{
  int tid = crts_engine_cpe_tid();
  if (tid < 0)
    return 0;
  __atomic_store_n(&sleeper[tid].want, want, __ATOMIC_RELAXED);
  __atomic_store_n(&sleeper[tid].c, c, __ATOMIC_RELEASE);
  __atomic_or_fetch(&sleeping, (uint64_t)1 << tid, __ATOMIC_SEQ_CST);
  return 1;
}

void lapi_cpe_cntr_awake(void)
{
  int tid = crts_engine_cpe_tid();
  __atomic_and_fetch(&sleeping, ~((uint64_t)1 << tid), __ATOMIC_SEQ_CST);
  __atomic_store_n(&sleeper[tid].c, NULL, __ATOMIC_RELEASE);
}

int lapi_cpe_cntr_due(lapi_cntr_t *c, int value)
{
  uint64_t m = __atomic_load_n(&sleeping, __ATOMIC_SEQ_CST);
  while (m) {
    int t = __builtin_ctzll(m);
    m &= m - 1;
    if (__atomic_load_n(&sleeper[t].c, __ATOMIC_ACQUIRE) == c &&
        value >= __atomic_load_n(&sleeper[t].want, __ATOMIC_RELAXED))
      return 1;
  }
  return 0;
}

/* ----------------------------------------------------------- statistics */

void lapi_cpe_print_engine(void)
{
  if (!crts_engine_initialized())
    return;
  struct crts_engine_stats mpe, cpes;
  crts_engine_stats_mpe(&mpe);
  crts_engine_stats_cpes(&cpes);
  fprintf(stderr, "lapi:   %-12s %8s %14s %8s %14s\n", "engine", "MPE ops",
          "MPE bytes", "CPE ops", "CPE bytes");
  for (int k = 0; k < CRTS_STAT_KINDS; k++)
    fprintf(stderr, "lapi:   %-12s %8llu %14llu %8llu %14llu\n",
            crts_engine_kind_name((enum crts_stat_kind)k),
            (unsigned long long)mpe.ops[k], (unsigned long long)mpe.bytes[k],
            (unsigned long long)cpes.ops[k],
            (unsigned long long)cpes.bytes[k]);
}
