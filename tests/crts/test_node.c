/*
 * test_node.c - the node scope: several core-group processes of one job
 * (CRTS_JOB_KEY, CRTS_NODE_CGS, CRTS_CGN) share CRTS_sync_node, the node
 * locks, CRTS_ssync_node and CRTS_smutex_*_node; without a key a process is
 * a node of one core group.
 *
 * Each multi-process test forks children that set the node variables and
 * call CRTS_init themselves; they check what they see in a shared anonymous
 * mapping made by the parent, leave the node and exit with the number of
 * failures.  Every child runs under alarm(), so a broken barrier kills it
 * instead of hanging the test; the parent asserts on the exit statuses.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crts_node.h"
#include "crts_test_util.h"

#define NCG 3
#define NCPE 4
#define ROUNDS 40
#define CHILD_SECONDS 30

struct area {
  _Atomic int go;
  int phase[NCG];
  int mpe_count;
  int cpe_slot[NCG][NCPE];
  int cpe_count;
  int64_t user_lock __attribute__((aligned(8)));
  int user_count;
  _Atomic int attached;
  _Atomic int release;
};

static struct area *area;
static int child_failures;
static char job_key[64];

static int child_cgn = -1;

#define CHILD_CHECK(cond)                                                    \
  do {                                                                       \
    if (!(cond) && child_failures++ < 3) {                                   \
      fprintf(stderr, "CG %d: %s:%d: %s\n", child_cgn, __FILE__,             \
              __LINE__, #cond);                                              \
    }                                                                        \
  } while (0)

static void make_area(void)
{
  area = mmap(NULL, sizeof *area, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(area, MAP_FAILED);
  static int serial;
  snprintf(job_key, sizeof job_key, "test-node-%d-%d", (int)getpid(),
           serial++);
}

/* Child: become core group cgn of the job of ncg groups. */
static void child_setup(int cgn, int ncg)
{
  alarm(CHILD_SECONDS);
  child_cgn = cgn;
  char buf[16];
  setenv("CRTS_JOB_KEY", job_key, 1);
  snprintf(buf, sizeof buf, "%d", ncg);
  setenv("CRTS_NODE_CGS", buf, 1);
  snprintf(buf, sizeof buf, "%d", cgn);
  setenv("CRTS_CGN", buf, 1);
  snprintf(buf, sizeof buf, "%d", NCPE);
  setenv("CRTS_NUM_CPES", buf, 1);
  if (CRTS_init() != 0) {
    fprintf(stderr, "CG %d: CRTS_init failed\n", cgn);
    _exit(100);
  }
}

static void child_exit(void)
{
  crts_node_detach();
  child_failures += crts_test_failures();
  if (crts_test_failures())
    fprintf(stderr, "CG %d: %s\n", child_cgn,
            crts_test_first_failure());
  _exit(child_failures > 99 ? 99 : child_failures);
}

static int object_left; /* the shared object outlived the children */

/* Remove the job's shared object if it is still there; 1 if it was. */
static int remove_object(void)
{
  char name[96];
  snprintf(name, sizeof name, "/crts-%s", job_key);
  int fd = shm_open(name, O_RDONLY, 0);
  if (fd < 0)
    return 0;
  close(fd);
  shm_unlink(name);
  return 1;
}

/*
 * Fork n children running fn(cgn), wait for all of them, remove what a
 * failed run may leave in /dev/shm, then assert every one exited with 0.
 */
static void run_children(int n, void (*fn)(int cgn))
{
  pid_t pid[16];
  int status[16];
  int forked = 0;
  for (; forked < n; forked++) {
    pid[forked] = fork();
    if (pid[forked] < 0)
      break;
    if (pid[forked] == 0) {
      fn(forked);
      child_exit();
    }
  }
  for (int i = 0; i < forked; i++)
    while (waitpid(pid[i], &status[i], 0) < 0 && errno == EINTR)
      ;
  object_left = remove_object();
  cr_assert_eq(forked, n, "fork failed");
  for (int i = 0; i < n; i++) {
    cr_assert(WIFEXITED(status[i]), "CG %d died of signal %d%s", i,
              WTERMSIG(status[i]),
              WTERMSIG(status[i]) == SIGALRM ? " (timed out: a wait hung)"
                                             : "");
    cr_assert_eq(WEXITSTATUS(status[i]), 0, "CG %d: exit status %d", i,
                 WEXITSTATUS(status[i]));
  }
}

/* After the last process left, the shared object is gone. */
static void assert_object_removed(void)
{
  cr_assert_eq(object_left, 0, "/crts-%s still existed after every process "
               "left", job_key);
}

/* ------------------------------------------------------------ CPE side */

static void cpe_node_rounds(void *arg)
{
  int cgn = *(int *)arg;
  int me = CRTS_tid;
  int bad = 0;
  for (int r = 1; r <= ROUNDS; r++) {
    if ((me + r + cgn) % 3 == 0)
      sched_yield();
    area->cpe_slot[cgn][me] = r;
    CRTS_ssync_node();
    for (int g = 0; g < NCG; g++)
      for (int t = 0; t < NCPE; t++)
        if (area->cpe_slot[g][t] != r && !bad++)
          crts_test_fail("ssync_node: CG %d CPE %d round %d saw CG %d CPE "
                         "%d at %d", cgn, me, r, g, t, area->cpe_slot[g][t]);
    CRTS_ssync_node();
  }
}

static void cpe_node_lock(void *arg)
{
  (void)arg;
  for (int i = 0; i < ROUNDS; i++) {
    CPE_CHECK(CRTS_smutex_lock_node() == 0);
    int v = area->cpe_count;
    if (i % 2 == 0)
      sched_yield();
    area->cpe_count = v + 1;
    CPE_CHECK(CRTS_smutex_unlock_node() == 0);
  }
}

/* ------------------------------------------------------------ the job */

static void job_child(int cgn)
{
  child_setup(cgn, NCG);

  /* MPE barrier: every CG's phase is visible after it. */
  for (int r = 1; r <= ROUNDS; r++) {
    if ((r + cgn) % 3 == 0)
      sched_yield();
    area->phase[cgn] = r;
    CRTS_sync_node();
    for (int g = 0; g < NCG; g++)
      CHILD_CHECK(area->phase[g] == r);
    CRTS_sync_node();
  }

  /* Node lock: no update lost across processes. */
  for (int i = 0; i < ROUNDS; i++) {
    CHILD_CHECK(CRTS_mutex_lock_node() == 0);
    int v = area->mpe_count;
    sched_yield();
    area->mpe_count = v + 1;
    CHILD_CHECK(CRTS_mutex_unlock_node() == 0);
  }
  CRTS_sync_node();
  CHILD_CHECK(area->mpe_count == NCG * ROUNDS);

  /* trylock: busy while another CG holds it, free afterwards. */
  for (int h = 0; h < NCG; h++) {
    if (cgn == h)
      CHILD_CHECK(CRTS_mutex_lock_node() == 0);
    CRTS_sync_node();
    if (cgn != h) {
      CHILD_CHECK(CRTS_mutex_trylock_node() == 1);
      CHILD_CHECK(CRTS_mutex_unlock_node() != 0); /* not ours */
    } else {
      CHILD_CHECK(CRTS_mutex_lock_node() != 0);   /* not recursive */
    }
    CRTS_sync_node();
    if (cgn == h)
      CHILD_CHECK(CRTS_mutex_unlock_node() == 0);
    CRTS_sync_node();
    if (cgn == (h + 1) % NCG) {
      CHILD_CHECK(CRTS_mutex_trylock_node() == 0);
      CHILD_CHECK(CRTS_mutex_unlock_node() == 0);
    }
    CRTS_sync_node();
  }

  /* A user lock word in memory shared by the processes is a node lock. */
  for (int i = 0; i < ROUNDS; i++) {
    CHILD_CHECK(CRTS_mutex_lock(&area->user_lock) == 0);
    int v = area->user_count;
    sched_yield();
    area->user_count = v + 1;
    CHILD_CHECK(CRTS_mutex_unlock(&area->user_lock) == 0);
  }
  CRTS_sync_node();
  CHILD_CHECK(area->user_count == NCG * ROUNDS);

  /* CPE barrier and CPE lock over the CPEs of all CGs. */
  static int my_cgn;
  my_cgn = cgn;
  CHILD_CHECK(CRTS_athread_spawn((void (*)(void))cpe_node_rounds, &my_cgn) ==
              0);
  CHILD_CHECK(CRTS_athread_join() == 0);
  CHILD_CHECK(CRTS_athread_spawn((void (*)(void))cpe_node_lock, NULL) == 0);
  CHILD_CHECK(CRTS_athread_join() == 0);
  CRTS_sync_node();
  CHILD_CHECK(area->cpe_count == NCG * NCPE * ROUNDS);
  CRTS_sync_node(); /* nobody leaves before everyone checked */
}

Test(node, three_core_groups_share_the_node, .timeout = 90)
{
  make_area();
  run_children(NCG, job_child);
  cr_assert_eq(area->mpe_count, NCG * ROUNDS);
  cr_assert_eq(area->user_count, NCG * ROUNDS);
  cr_assert_eq(area->cpe_count, NCG * NCPE * ROUNDS);
  for (int g = 0; g < NCG; g++)
    for (int t = 0; t < NCPE; t++)
      cr_assert_eq(area->cpe_slot[g][t], ROUNDS);
  assert_object_removed();
}

/* Many processes starting at once create and size the object once. */
#define CROWD 6

static void crowd_child(int cgn)
{
  alarm(CHILD_SECONDS);
  while (!atomic_load(&area->go))
    sched_yield();
  child_setup(cgn, CROWD);
  for (int r = 1; r <= 10; r++) {
    CHILD_CHECK(CRTS_mutex_lock_node() == 0);
    area->mpe_count++;
    CHILD_CHECK(CRTS_mutex_unlock_node() == 0);
    CRTS_sync_node();
    CHILD_CHECK(area->mpe_count == CROWD * r);
    CRTS_sync_node();
  }
}

Test(node, processes_starting_together_attach_once, .timeout = 90)
{
  make_area();
  pid_t starter = fork();
  cr_assert_geq(starter, 0);
  if (starter == 0) {
    usleep(20000); /* let every child reach the start line */
    atomic_store(&area->go, 1);
    _exit(0);
  }
  run_children(CROWD, crowd_child);
  waitpid(starter, NULL, 0);
  cr_assert_eq(area->mpe_count, CROWD * 10);
  assert_object_removed();
}

/* A process whose CRTS_NODE_CGS disagrees with the job's is refused. */
static void mismatch_child(int cgn)
{
  if (cgn == 0) {
    child_setup(0, 2);
    CHILD_CHECK(CRTS_mutex_lock_node() == 0);
    CHILD_CHECK(CRTS_mutex_unlock_node() == 0);
    atomic_store(&area->attached, 1);
    while (!atomic_load(&area->release))
      sched_yield();
  } else {
    while (!atomic_load(&area->attached))
      sched_yield();
    child_setup(1, 3);
    CHILD_CHECK(CRTS_mutex_lock_node() == -1);
    CHILD_CHECK(CRTS_mutex_trylock_node() == -1);
    CRTS_sync_node(); /* refused: returns at once */
    atomic_store(&area->release, 1);
  }
}

Test(node, mismatched_settings_are_refused, .timeout = 60)
{
  make_area();
  setenv("CRTS_VERBOSE", "0", 1);
  run_children(2, mismatch_child);
  assert_object_removed();
}

Test(node, bad_key_is_refused, .timeout = 30)
{
  setenv("CRTS_VERBOSE", "0", 1);
  setenv("CRTS_JOB_KEY", "a/b", 1);
  setenv("CRTS_NUM_CPES", "2", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_mutex_lock_node(), -1);
  CRTS_sync_node(); /* refused: returns at once */
}

Test(node, node_cgs_out_of_range_is_refused, .timeout = 30)
{
  setenv("CRTS_VERBOSE", "0", 1);
  setenv("CRTS_JOB_KEY", "unused-key", 1);
  setenv("CRTS_NODE_CGS", "0", 1);
  setenv("CRTS_NUM_CPES", "2", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_mutex_trylock_node(), -1);
}

/* ------------------------------------------------ one process, no key */

static int solo_slot[16];
static int solo_count;

static void solo_cpe(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  for (int r = 1; r <= ROUNDS; r++) {
    if ((me + r) % 3 == 0)
      sched_yield();
    solo_slot[me] = r;
    CRTS_ssync_node();
    for (int t = 0; t < 16; t++)
      CPE_CHECK(solo_slot[t] == r);
    CRTS_ssync_node();
    CPE_CHECK(CRTS_smutex_lock_node() == 0);
    int v = solo_count;
    sched_yield();
    solo_count = v + 1;
    CPE_CHECK(CRTS_smutex_unlock_node() == 0);
  }
}

Test(node, without_key_a_process_is_a_node_of_one_cg, .timeout = 30)
{
  alarm(20);
  unsetenv("CRTS_JOB_KEY");
  setenv("CRTS_NODE_CGS", "3", 1); /* ignored without a key (reported) */
  setenv("CRTS_VERBOSE", "0", 1);
  setenv("CRTS_NUM_CPES", "16", 1);
  cr_assert_eq(CRTS_init(), 0);
  for (int i = 0; i < 100; i++)
    CRTS_sync_node(); /* alone: returns at once */
  cr_assert_eq(CRTS_mutex_lock_node(), 0);
  cr_assert_eq(CRTS_mutex_trylock_node(), 1);
  cr_assert_neq(CRTS_mutex_lock_node(), 0, "not recursive");
  cr_assert_eq(CRTS_mutex_unlock_node(), 0);
  cr_assert_neq(CRTS_mutex_unlock_node(), 0, "not held");
  cr_assert_eq(CRTS_mutex_trylock_node(), 0);
  cr_assert_eq(CRTS_mutex_unlock_node(), 0);
  crts_test_run(solo_cpe, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(solo_count, 16 * ROUNDS);
  alarm(0);
}

Test(node, node_calls_need_crts_init)
{
  setenv("CRTS_VERBOSE", "0", 1);
  cr_assert_eq(CRTS_mutex_lock_node(), -1);
  cr_assert_eq(CRTS_mutex_trylock_node(), -1);
  cr_assert_eq(CRTS_mutex_unlock_node(), -1);
  CRTS_sync_node();
}
