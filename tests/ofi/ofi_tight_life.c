/*
 * ofi_tight_life.c - a thread that polls the CQ in a tight loop while
 * the endpoint is closed and opened again (LAPI_Term, LAPI_Init) keeps
 * no registration of the life gone by (ofi_progress.c, ofi_tp_tight).
 *
 * White box (lapi_static), polling mode, every task alike:
 *  - two threads of ours start polling (the tp tight op,
 *    LAPI_TIGHT_START, as lapi_wait_tight does) and stay registered,
 *    their waits unfinished;
 *  - the main thread calls LAPI_Term and LAPI_Init (a new endpoint life)
 *    and waits until no registration of the new life is left (its own
 *    waits in there leave theirs to linger, ended 2 ms later);
 *  - the first thread's wait ends as a polling-mode wait does
 *    (LAPI_TIGHT_PAUSE: it would leave its registration to linger) and
 *    its next waits start again (LAPI_TIGHT_START) a few times: each
 *    time the transport must count exactly one registration, ours.
 *    It counted none: the pause left the slot marked with the old life
 *    and every START adopted it without the lock, counted nowhere
 *    (peers rang us, the progress thread slept long and later ended the
 *    "stale" slot);
 *  - then the second thread's wait, still on, brings something (its
 *    loop calls LAPI_TIGHT_START again) and must be counted too, then
 *    stops (LAPI_TIGHT_STOP).
 * No timing: the main thread makes no LAPI call while the other checks.
 */
#include "ofi_test.h"

#include <pthread.h>

#include "am/lapi_am.h"
#include "transport/ofi/ofi.h"

#define CYCLES 4
#define DEADLINE_S 30 /* each step takes ms; a hang ends with a message */

static int polling;    /* atomic: threads registered (old life) */
static int reopened;   /* atomic: the main thread opened the new life */
static int second_go;  /* atomic: the first thread is done */
static struct lapi_hndl *hnew; /* the new handle (set before reopened) */

/* Waits for *flag, at most DEADLINE_S; 0 if it never came. */
static int await_flag(const int *flag)
{
  double until = ot_now_s() + DEADLINE_S;
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && ot_now_s() < until)
    usleep(1000);
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/* Registered in the old life; 0 if the new one never came. */
static int poll_across(struct lapi_hndl *h, const int *go)
{
  int on = ofi_tp_tight(h, LAPI_TIGHT_START);
  OT_CHECK(on == 1, "the tight START before LAPI_Term returned %d", on);
  __atomic_add_fetch(&polling, 1, __ATOMIC_RELEASE);
  if (!await_flag(go)) {
    OT_CHECK(0, "the main thread did not reopen LAPI within %d s",
             DEADLINE_S);
    return 0;
  }
  return 1;
}

/* The second thread: its wait goes on in the new life. */
static void *poller_on(void *arg)
{
  if (!poll_across(arg, &second_go))
    return NULL;
  int on = ofi_tp_tight(hnew, LAPI_TIGHT_START); /* a turn brought work */
  int reg = ofi_tight_registered();
  OT_CHECK(on == 1 && reg == 1, "a wait polling across LAPI_Term + "
           "LAPI_Init: START again returned %d, %d registrations counted "
           "(want 1: ours; 0: it kept the old life's)", on, reg);
  ofi_tp_tight(hnew, LAPI_TIGHT_STOP);
  reg = ofi_tight_registered();
  OT_CHECK(reg == 0, "%d registrations counted after the second STOP", reg);
  return NULL;
}

/* The first thread: its wait ends, the next ones start. */
static void *poller(void *arg)
{
  if (!poll_across(arg, &reopened))
    return NULL;
  int on;
  for (int c = 0; c < CYCLES; c++) {
    ofi_tp_tight(hnew, LAPI_TIGHT_PAUSE); /* a polling-mode wait ended */
    on = ofi_tp_tight(hnew, LAPI_TIGHT_START); /* the next one starts */
    int reg = ofi_tight_registered();
    OT_CHECK(on == 1 && reg == 1, "cycle %d after LAPI_Term + LAPI_Init: "
             "START returned %d, %d registrations counted (want 1: ours; "
             "0: it adopted a slot of the old endpoint life)", c, on, reg);
  }
  ofi_tp_tight(hnew, LAPI_TIGHT_STOP);
  int reg = ofi_tight_registered();
  OT_CHECK(reg == 0, "%d registrations counted after our STOP", reg);
  return NULL;
}

static void open_polling(void)
{
  OT_OK(LAPI_Senv(ot.h, INTERRUPT_SET, 0));
  OT_OK(LAPI_Gfence(ot.h));
}

int main(void)
{
  ot_init(NULL, 120);
  open_polling();
  pthread_t th, th2;
  pthread_create(&th, NULL, poller, lapi_hndl_get(ot.h));
  pthread_create(&th2, NULL, poller_on, lapi_hndl_get(ot.h));
  double until = ot_now_s() + DEADLINE_S;
  while (__atomic_load_n(&polling, __ATOMIC_ACQUIRE) < 2 &&
         ot_now_s() < until)
    usleep(1000);
  OT_CHECK(__atomic_load_n(&polling, __ATOMIC_ACQUIRE) == 2,
           "the polling threads did not start within %d s", DEADLINE_S);
  OT_OK(LAPI_Term(ot.h));
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  int rc = LAPI_Init(&ot.h, &info);
  if (rc != LAPI_SUCCESS) {
    fprintf(stderr, "task %d: LAPI_Init again returned %d\n", ot.me, rc);
    _exit(1);
  }
  open_polling();
  /* Our own waits' registrations (left to linger) end 2 ms later; the
   * poller's of the old life is counted nowhere. */
  int reg = -1;
  until = ot_now_s() + DEADLINE_S;
  while ((reg = ofi_tight_registered()) != 0 && ot_now_s() < until)
    usleep(1000); /* no LAPI call: the progress thread ends them */
  OT_CHECK(reg == 0, "%d registrations of the new life left after %d s "
           "(the poller's of the old one must not count)", reg, DEADLINE_S);
  hnew = lapi_hndl_get(ot.h);
  __atomic_store_n(&reopened, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  __atomic_store_n(&second_go, 1, __ATOMIC_RELEASE);
  pthread_join(th2, NULL);
  return ot_finish("ofi_tight_life");
}
