/*
 * test_ssig.c - CPE -> MPE signals (CRTS_sig_user_init, CRTS_ssig_host)
 * and the MPE service thread that runs their handlers.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "crts_cg.h"
#include "crts_mpe_service.h"
#include "crts_test_util.h"

#define PER_CPE 3

struct sig_msg {
  int value;
  int answer;     /* written by the handler */
  int on_cpe;     /* crts_self != NULL inside the handler */
  int ssig_rc;    /* CRTS_ssig_host called from inside the handler */
  pthread_t runner;
};

static struct sig_msg msgs[64][PER_CPE];
static _Atomic int handled, inside, overlapped;

static void *count_handler(void *content)
{
  struct sig_msg *m = content;
  if (atomic_fetch_add(&inside, 1) != 0)
    atomic_store(&overlapped, 1);
  m->answer = m->value * 2 + 1;
  m->on_cpe = crts_self != NULL;
  m->runner = pthread_self();
  m->ssig_rc = CRTS_ssig_host(m); /* not a CPE here: refused */
  sched_yield();                  /* let other signals pile up */
  atomic_fetch_add(&handled, 1);
  atomic_fetch_sub(&inside, 1);
  return NULL;
}

static void signal_kernel(void *arg)
{
  (void)arg;
  for (int k = 0; k < PER_CPE; k++) {
    struct sig_msg *m = &msgs[CRTS_tid][k];
    m->value = CRTS_tid * 100 + k;
    m->answer = -1;
    CPE_CHECK(CRTS_ssig_host(m) == 0);
    /* The handler ran to the end before the call returned. */
    CPE_CHECK(m->answer == m->value * 2 + 1);
    CPE_CHECK(m->on_cpe == 0);
    CPE_CHECK(m->ssig_rc != 0);
    CPE_CHECK(!pthread_equal(m->runner, pthread_self()));
  }
}

Test(ssig, every_cpe_signals_and_the_handler_sees_each_content)
{
  cr_assert_eq(CRTS_init(), 0);
  CRTS_sig_user_init(count_handler);
  crts_test_run(signal_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(atomic_load(&handled), 64 * PER_CPE);
  cr_assert_eq(atomic_load(&overlapped), 0, "handlers ran at the same time");
  pthread_t runner = msgs[0][0].runner;
  cr_assert(!pthread_equal(runner, pthread_self()),
            "the handler must not run on the thread that spawned");
  for (int t = 0; t < 64; t++)
    for (int k = 0; k < PER_CPE; k++) {
      cr_assert_eq(msgs[t][k].answer, (t * 100 + k) * 2 + 1);
      cr_assert(pthread_equal(msgs[t][k].runner, runner),
                "one service thread runs every handler");
    }
  /* A second spawn reuses the same service thread. */
  crts_test_run(signal_kernel, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(atomic_load(&handled), 2 * 64 * PER_CPE);
  cr_assert(pthread_equal(msgs[63][2].runner, runner));
}

/* ------------------------------------------------------------- errors */

static _Atomic int results[64][4];
static __thread_local int ldm_word;
static int main_word;

static void error_kernel(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  atomic_store(&results[t][0], CRTS_ssig_host(&main_word));
  atomic_store(&results[t][1], CRTS_ssig_host(NULL));
  atomic_store(&results[t][2], CRTS_ssig_host(&ldm_word));
  atomic_store(&results[t][3], 1);
}

Test(ssig, no_handler_installed_fails)
{
  crts_test_run(error_kernel, NULL);
  for (int t = 0; t < 64; t++) {
    cr_assert_neq(results[t][0], 0, "CPE %d: no handler, yet success", t);
    cr_assert_neq(results[t][1], 0);
    cr_assert_neq(results[t][2], 0);
    cr_assert_eq(results[t][3], 1);
  }
}

static _Atomic int calls_h1, calls_h2;

static void *h1(void *content)
{
  (void)content;
  atomic_fetch_add(&calls_h1, 1);
  return NULL;
}

static void *h2(void *content)
{
  (void)content;
  atomic_fetch_add(&calls_h2, 1);
  return NULL;
}

Test(ssig, bad_content_and_mpe_caller_fail)
{
  cr_assert_eq(CRTS_init(), 0);
  CRTS_sig_user_init(h1);
  cr_assert_neq(CRTS_ssig_host(&main_word), 0, "the MPE cannot signal itself");
  crts_test_run(error_kernel, NULL);
  for (int t = 0; t < 64; t++) {
    cr_assert_eq(results[t][0], 0, "CPE %d: a valid signal failed", t);
    cr_assert_neq(results[t][1], 0, "NULL content accepted");
    cr_assert_neq(results[t][2], 0, "LDM content accepted");
  }
  cr_assert_eq(atomic_load(&calls_h1), 64, "only the valid signals ran");
}

static void install_from_cpe(void *arg)
{
  (void)arg;
  CRTS_sig_user_init(h2); /* an MPE call: ignored on a CPE */
  CPE_CHECK(CRTS_ssig_host(&main_word) == 0);
}

static void one_signal(void *arg)
{
  (void)arg;
  CPE_CHECK(CRTS_ssig_host(&main_word) == 0);
}

Test(ssig, handler_replacement_rules)
{
  cr_assert_eq(CRTS_init(), 0);
  CRTS_sig_user_init(h1);
  CRTS_sig_user_init(NULL); /* refused: h1 stays */
  crts_test_run(one_signal, NULL);
  cr_assert_eq(atomic_load(&calls_h1), 64);
  crts_test_run(install_from_cpe, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(atomic_load(&calls_h1), 128);
  cr_assert_eq(atomic_load(&calls_h2), 0);
  CRTS_sig_user_init(h2);
  crts_test_run(one_signal, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(atomic_load(&calls_h1), 128);
  cr_assert_eq(atomic_load(&calls_h2), 64);
}

/* ------------------------------------------------ the service itself */

#define NJOBS 500

struct order_job {
  struct crts_mpe_job job;
  int index;
};

static struct order_job jobs[NJOBS];
static int order[NJOBS + 1];
static int nrun;
static _Atomic int off_main;

static void record(struct crts_mpe_job *job)
{
  struct order_job *o = (struct order_job *)job;
  order[nrun++] = o->index;
  if (crts_self == NULL && crts_mpe_service_is_self())
    atomic_fetch_add(&off_main, 1);
}

Test(ssig, service_runs_jobs_in_posting_order)
{
  cr_assert_eq(crts_mpe_service_start("test"), 0);
  cr_assert_eq(crts_mpe_service_start("test"), 0, "starting twice is fine");
  cr_assert(crts_mpe_service_running());
  cr_assert_not(crts_mpe_service_is_self());
  for (int i = 0; i < NJOBS; i++) {
    jobs[i].job.run = record;
    jobs[i].index = i;
    crts_mpe_service_post(&jobs[i].job);
    if (i % 50 == 0)
      sched_yield();
  }
  /* A call queued behind the posts returns after all of them ran. */
  struct order_job last = { .job.run = record, .index = NJOBS };
  crts_mpe_service_call(&last.job);
  cr_assert_eq(nrun, NJOBS + 1);
  for (int i = 0; i < NJOBS; i++)
    cr_assert_eq(order[i], i, "job %d ran at place %d", order[i], i);
  cr_assert_eq(atomic_load(&off_main), NJOBS + 1);
}
