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
#include "am/lapi_cpe.h"
#include "am/lapi_setting.h"
#include "crts/crts_engine.h"
#include "transport/boot/boot.h"

static int mode;               /* enum lapi_cpe_mode, atomic */
static uint mode_first;        /* cg_first of the CPE tasks, atomic */
/* task the thread acts for, -1: own (initial-exec: read per item) */
static __thread int ctx_local __attribute__((tls_model("initial-exec"))) = -1;

static void served_local(int tid);

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
  int served_task = ctx_local;
  ctx_local = prev;
  if (served_task >= 0 && served_task < CRTS_MAX_SPE_NUM &&
      __atomic_load_n(&mode, __ATOMIC_RELAXED) == LAPI_MODE_CPE)
    served_local(served_task);
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

static void seen_asleep(void);

static void cg_barrier(const struct lapi_hndl *h)
{
  seen_asleep(); /* it may sleep, and wake up on any core */
  crts_engine_barrier(&coll.bar, h->cg_tasks);
}

void lapi_cpe_barrier_cg(uint count)
{
  seen_asleep();
  crts_engine_barrier(&coll.bar, count);
}

/*
 * Collectives of CPE tasks: every task of the CG calls, in the same order.
 * Results of the representative (local task 0) are published in a slot of
 * two, by parity of the call count: call k+2 cannot write a slot before
 * every task passed the first barrier of call k+1, that is, finished
 * reading call k.
 */
static int coll_barrier_by(struct lapi_hndl *h,
                           int (*cgs_barrier)(struct lapi_hndl *))
{
  if (h->cpe < 0)
    return cgs_barrier(h);
  cg_barrier(h);
  if (h->num_tasks == h->cg_tasks)
    return LAPI_SUCCESS;
  /* One task per CG meets the other CGs; the rest wait for it. */
  unsigned local = h->task_id - h->cg_first;
  unsigned par = coll.seq[local]++ & 1;
  if (local == 0)
    coll.rc[par] = cgs_barrier(h);
  cg_barrier(h);
  return coll.rc[par];
}

int lapi_coll_barrier(struct lapi_hndl *h)
{
  return coll_barrier_by(h, lapi_job_barrier);
}

int lapi_coll_gfence(struct lapi_hndl *h)
{
  return coll_barrier_by(h, lapi_net_barrier);
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
    return lapi_job_allgather64(h, mine, all);
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
  spin_us = lapi_setting_int("LAPI_CPE_SPIN_US", 100, 1000000,
                             "a count of microseconds", NULL);
}

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---------------------------------------------- who needs the cores */

/*
 * CPE tasks and the dispatcher poll while they wait, and on a core shared
 * with a thread that has work each poll must yield the core.  But a yield
 * costs 0.2-0.4 us even when nobody takes the core, and one that switches
 * to a thread which only polls too costs two context switches (0.6-1 us
 * each here) and keeps the yielder off its core when its answer comes.
 * So the threads say where they run: every CPE task its core and whether
 * it polls a wait (`seen`), the dispatcher its core while it polls; and
 * whoever completes work for a task (moves a counter it may wait on, runs
 * an item for it) marks that wait served.  The dispatcher keeps its core
 * -- pauses instead of yielding -- while every task known on its core
 * polls a wait that is not served; a polling task keeps its core while it
 * is alone there (the dispatcher known to poll on another core, no other
 * task on it: two tasks on a core do better taking turns, as the one
 * whose wait ends is then often running already).  A task that sleeps,
 * or was never seen, may wake up anywhere: then everybody yields.  A wait
 * ended by someone who does not mark it (a barrier, another core group) is
 * found after at most KEEP_CORE_NS, when the thread yields anyway; with
 * more than KEEP_CORE_TASKS tasks, or several core groups, nobody keeps
 * its core.  LAPI_CPE_KEEP_CORE=0 turns it off.
 */
#define KEEP_CORE_TASKS 8
#define KEEP_CORE_NS 3000 /* also bounds what a stale `seen` costs */
#define KEEP_CORE_MAX_NS 200000 /* even while requests keep coming */
#define MPE_FRESH_NS 3000    /* the dispatcher said where it polls lately */
#define MPE_PAUSE_NS 250     /* one pausing poll of the dispatcher */

/* seen word: core + 1 (0: unknown), POLLING, ANY (the wait polls the
 * transports: LAPI_Fence and the like, which any completion may end),
 * the task's wait number. */
#define SEEN_CORE_MASK 0xffffu
#define SEEN_POLLING 0x10000u
#define SEEN_ANY 0x20000u
#define SEEN_WAIT_SHIFT 18

/* A task's line, written by the task; the waits served, written by who
 * serves them (apart: a mark must not take the task's line away). */
static struct {
  unsigned seen;   /* atomic */
} __attribute__((aligned(64))) cores_of[CRTS_MAX_SPE_NUM];
static unsigned served_wait[CRTS_MAX_SPE_NUM]; /* atomic */

static struct {
  unsigned core;   /* atomic: core + 1 of the polling dispatcher */
  int64_t at_ns;   /* atomic: when it said so last */
} __attribute__((aligned(64))) mpe_seen;

/* A stretch of pauses: since the last progress, since its start. */
struct keep {
  int64_t since, first;
};

/* What only the task itself reads and writes (no TLS lookups). */
static struct {
  unsigned wait;   /* its wait number */
  struct keep keep;
  int64_t moved_ns; /* when it left the dispatcher's core last */
} __attribute__((aligned(64))) own[CRTS_MAX_SPE_NUM];

static struct keep mpe_keep; /* the dispatcher thread's */
static int keep_enabled = -1; /* LAPI_CPE_KEEP_CORE, atomic */

static unsigned core_bits(void)
{
  int c = sched_getcpu();
  return c >= 0 && c < (int)SEEN_CORE_MASK ? (unsigned)c + 1 : 0;
}

static void seen_polling(int tid)
{
  unsigned wait = ++own[tid].wait;
  /* Seq_cst, as the counter the task checks next: a thread that moved
   * it before this store is found by the check, one after it sees the
   * new wait (served_local). */
  __atomic_store_n(&cores_of[tid].seen,
                   core_bits() | SEEN_POLLING | wait << SEEN_WAIT_SHIFT,
                   __ATOMIC_SEQ_CST);
}

/* The task goes to sleep: it may wake up on any core. */
static void seen_asleep_tid(int tid)
{
  __atomic_store_n(&cores_of[tid].seen, 0, __ATOMIC_RELEASE);
  own[tid].keep.since = own[tid].keep.first = 0;
}

static void seen_asleep(void)
{
  int tid = crts_engine_cpe_tid();
  if (tid >= 0)
    seen_asleep_tid(tid);
}

void lapi_cpe_running(void)
{
  int tid = crts_engine_cpe_tid();
  if (tid < 0)
    return;
  /* Running, not polling; a store only when that is news (after a wait,
   * or a move), so a stream of pushes leaves the line shared. */
  unsigned w = core_bits() | own[tid].wait << SEEN_WAIT_SHIFT;
  if (__atomic_load_n(&cores_of[tid].seen, __ATOMIC_RELAXED) != w)
    __atomic_store_n(&cores_of[tid].seen, w, __ATOMIC_RELEASE);
}

void lapi_cpe_polls_any(void)
{
  int tid = crts_engine_cpe_tid();
  if (tid < 0)
    return;
  unsigned w = __atomic_load_n(&cores_of[tid].seen, __ATOMIC_RELAXED);
  if ((w & SEEN_POLLING) && !(w & SEEN_ANY))
    __atomic_store_n(&cores_of[tid].seen, w | SEEN_ANY, __ATOMIC_SEQ_CST);
}

static void served_local(int tid)
{
  unsigned w = __atomic_load_n(&cores_of[tid].seen, __ATOMIC_SEQ_CST);
  unsigned wait = w >> SEEN_WAIT_SHIFT;
  if (__atomic_load_n(&served_wait[tid], __ATOMIC_RELAXED) != wait)
    __atomic_store_n(&served_wait[tid], wait, __ATOMIC_RELAXED);
}

void lapi_cpe_served(const struct lapi_hndl *h)
{
  if (h->cpe >= 0 && h->cpe < CRTS_MAX_SPE_NUM)
    served_local(h->cpe);
}

void lapi_cpe_landed(const struct lapi_hndl *h)
{
  if (h->cpe < 0 || h->cpe >= CRTS_MAX_SPE_NUM ||
      __atomic_load_n(&h->outstanding, __ATOMIC_SEQ_CST) != 0)
    return;
  if (__atomic_load_n(&cores_of[h->cpe].seen, __ATOMIC_SEQ_CST) & SEEN_ANY)
    served_local(h->cpe);
}

static int keep_allowed(void)
{
  int on = __atomic_load_n(&keep_enabled, __ATOMIC_RELAXED);
  if (on < 0) {
    const char *e = getenv("LAPI_CPE_KEEP_CORE");
    on = !(e && strcmp(e, "0") == 0);
    __atomic_store_n(&keep_enabled, on, __ATOMIC_RELAXED);
  }
  return on;
}

void lapi_cpe_settings_read(void)
{
  pthread_once(&spin_once, spin_settings);
  (void)keep_allowed();
}

/*
 * May the calling thread (CPE self, or -1: the dispatcher) pause on its
 * core, core + 1 being mine: does no other thread on it have work?  A
 * task: is it alone there?
 */
static int nobody_else_here(int self, unsigned mine, int64_t now)
{
  int n = crts_engine_group_size();
  if (n <= 0 || n > KEEP_CORE_TASKS || lapi_job()->num_tasks != 1 ||
      mine == 0)
    return 0;
  if (self >= 0) {
    unsigned mc = __atomic_load_n(&mpe_seen.core, __ATOMIC_RELAXED);
    int64_t at = __atomic_load_n(&mpe_seen.at_ns, __ATOMIC_RELAXED);
    if (mc == 0 || mc == mine || now - at > MPE_FRESH_NS)
      return 0;
  }
  for (int t = 0; t < n; t++) {
    if (t == self)
      continue;
    unsigned w = __atomic_load_n(&cores_of[t].seen, __ATOMIC_SEQ_CST);
    unsigned core = w & SEEN_CORE_MASK;
    if (core == 0)
      return 0; /* asleep or never seen: it may wake up here */
    if (core != mine)
      continue;
    /* A task keeps its core from pollers only: two tasks that share a
     * core take turns by yielding, so that the one whose wait ends is
     * often running already (keeping it would cost a switch each time). */
    if (self >= 0 || !(w & SEEN_POLLING) ||
        __atomic_load_n(&served_wait[t], __ATOMIC_RELAXED) ==
            w >> SEEN_WAIT_SHIFT)
      return 0;
  }
  return 1;
}

/* nobody_else_here, for at most KEEP_CORE_NS without progress and
 * KEEP_CORE_MAX_NS in all: then yield once (a thread we do not know of
 * may wait for the core) and keep it again. */
static int keep_core(struct keep *k, int self, unsigned mine, int64_t now)
{
  if (!keep_allowed() || !nobody_else_here(self, mine, now)) {
    k->since = k->first = 0;
    return 0;
  }
  if (k->first == 0)
    k->first = now;
  if (k->since == 0)
    k->since = now;
  if (now - k->since < KEEP_CORE_NS && now - k->first < KEEP_CORE_MAX_NS)
    return 1;
  k->since = k->first = 0;
  return 0;
}

/*
 * A task that polls on the dispatcher's core moves to another core (the
 * kernel keeps it there until it sleeps or the load balancer moves it):
 * on the chip the MPE has a core of its own, and here too the answers
 * come fastest when it has one.  Two tasks that wait on each other then
 * take turns on their core while the dispatcher serves them from its own
 * (one switch per message, overlapping the dispatcher's work), instead
 * of the dispatcher and a task handing one core back and forth (two
 * switches, nothing overlaps).  Only when the tasks are as many as the
 * cores (one thread too many: some core is shared, better by tasks than
 * by the dispatcher), only to a core where another task polls, at most
 * every MOVE_EVERY_NS per task; a move keeps
 * the task's allowed cores (it is a hint, not a pinning: the load
 * balancer takes the task back when the dispatcher's core goes idle).
 */
#define MOVE_EVERY_NS 10000000

static void leave_mpe_core(int tid, unsigned mine, int64_t now)
{
  unsigned mc = __atomic_load_n(&mpe_seen.core, __ATOMIC_RELAXED);
  int64_t at = __atomic_load_n(&mpe_seen.at_ns, __ATOMIC_RELAXED);
  int n = crts_engine_group_size();
  if (mc != mine || now - at > MPE_FRESH_NS || spin_cores < 2 ||
      n != spin_cores || lapi_job()->num_tasks != 1 ||
      now - own[tid].moved_ns < MOVE_EVERY_NS)
    return;
  /* Only to a core where another task polls too: a core none of ours
   * runs on may be busy with another program's thread. */
  unsigned to = 0;
  for (int t = 0; t < n && to == 0; t++) {
    unsigned w = __atomic_load_n(&cores_of[t].seen, __ATOMIC_SEQ_CST);
    unsigned core = w & SEEN_CORE_MASK;
    if (t != tid && (w & SEEN_POLLING) && core != 0 && core != mc)
      to = core;
  }
  cpu_set_t allowed, one;
  if (to == 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
      !CPU_ISSET((int)to - 1, &allowed))
    return;
  own[tid].moved_ns = now;
  CPU_ZERO(&one);
  CPU_SET((int)to - 1, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    return;
  if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) {
    /* The cores allowed changed meanwhile (a cpuset): never stay pinned
     * to one core; ask for every core, which the kernel cuts down to
     * what is allowed now. */
    CPU_ZERO(&allowed);
    for (int c = 0; c < CPU_SETSIZE; c++)
      CPU_SET(c, &allowed);
    if (sched_setaffinity(0, sizeof allowed, &allowed) != 0)
      LAPI_LOG(LAPI_LOG_ASYNC, "CPE task %d stays on core %u: its allowed "
               "cores could not be restored", tid, to - 1);
  }
}

static void task_relax(void)
{
  int tid = crts_engine_cpe_tid();
  unsigned mine = core_bits();
  int64_t now = now_ns();
  if (keep_allowed())
    leave_mpe_core(tid, mine, now);
  mine = core_bits();
  unsigned w = __atomic_load_n(&cores_of[tid].seen, __ATOMIC_RELAXED);
  if ((w & SEEN_CORE_MASK) != mine) /* it moved */
    __atomic_store_n(&cores_of[tid].seen, (w & ~SEEN_CORE_MASK) | mine,
                     __ATOMIC_SEQ_CST);
  if (keep_core(&own[tid].keep, tid, mine, now))
    lapi_cpu_relax();
  else
    crts_engine_relax(); /* a yield when the threads outnumber the cores */
}


/* The spin ran out: the task sleeps next, nobody knows on which core it
 * will wake up. */
static int spin_over(struct lapi_spin *s)
{
  if (s->cpe) {
    int tid = crts_engine_cpe_tid();
    seen_asleep_tid(tid);
  }
  return 0;
}

void lapi_spin_start(struct lapi_spin *s)
{
  int tid = crts_engine_cpe_tid();
  s->cpe = tid >= 0;
  s->until_ns = 0;
  if (!s->cpe) {
    s->left = lapi_spin_limit();
    return;
  }
  seen_polling(tid);
  pthread_once(&spin_once, spin_settings);
  s->left = crts_engine_spin_limit();
  if (spin_us == 0)
    return;
  /* With no more tasks than cores every task may spin long: no count
   * (its line would travel between the cores at every wait). */
  if (crts_engine_group_size() <= spin_cores) {
    s->until_ns = now_ns() + (int64_t)spin_us * 1000;
    s->left = -1; /* not counted */
  } else if (__atomic_add_fetch(&long_spinners, 1, __ATOMIC_SEQ_CST) <=
             spin_cores) {
    s->until_ns = now_ns() + (int64_t)spin_us * 1000;
  } else {
    __atomic_sub_fetch(&long_spinners, 1, __ATOMIC_SEQ_CST);
  }
}

int lapi_spin_relax(struct lapi_spin *s)
{
  if (s->until_ns) {
    if (now_ns() >= s->until_ns)
      return spin_over(s);
  } else if (s->left-- <= 0) {
    return spin_over(s);
  }
  if (s->until_ns)
    task_relax(); /* a long spin: pause or yield (who needs the cores) */
  else if (s->cpe)
    crts_engine_relax(); /* a yield when the threads outnumber the cores */
  else
    lapi_cpu_relax();
  return 1;
}

void lapi_spin_end(struct lapi_spin *s)
{
  if (s->cpe) {
    /* No store here: the task answers next, and its `seen` still says
     * "polling" with a wait that was served, which tells the dispatcher
     * what "running" would (yield to it); its next push corrects it. */
    int tid = crts_engine_cpe_tid();
    own[tid].keep.since = own[tid].keep.first = 0;
  }
  if (s->until_ns) {
    if (s->left != -1) /* counted */
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
  if (lapi_cpe_mode() != LAPI_MODE_CPE || !crts_engine_initialized()) {
    lapi_cpu_relax();
    return;
  }
  int64_t t0 = now_ns();
  unsigned mine = core_bits();
  /* Where it polls, for the tasks' keep_core; stores only on news. */
  if (__atomic_load_n(&mpe_seen.core, __ATOMIC_RELAXED) != mine)
    __atomic_store_n(&mpe_seen.core, mine, __ATOMIC_RELAXED);
  if (t0 - __atomic_load_n(&mpe_seen.at_ns, __ATOMIC_RELAXED) >
      MPE_FRESH_NS / 3)
    __atomic_store_n(&mpe_seen.at_ns, t0, __ATOMIC_RELAXED);
  if (!keep_core(&mpe_keep, -1, mine, t0)) {
    crts_engine_relax();
    return;
  }
  /* A short pause poll (the clock is slower than a pause); the caller
   * then looks at everything.  A request is progress: the stretch
   * without progress starts again, the whole stretch goes on. */
  for (unsigned i = 1; !crts_tp_queued(); i++) {
    if (i % 4 == 0 && now_ns() - t0 >= MPE_PAUSE_NS)
      return;
    lapi_cpu_relax();
  }
  mpe_keep.since = 0;
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
