/*
 * ofi_idle_cpu.c - a job that waits does not burn a CPU.
 *
 * Every task pairs with the next (0-1, 2-3, ...).  After first contact
 * (a Put each way, so connections are up: over net a connected job's
 * wait fd stays readable and its progress thread once looped ~1 M times
 * a second), the even task waits in LAPI_Waitcntr for a Put that its
 * partner sends only after IDLE_S seconds, and the odd one sleeps out of
 * LAPI meanwhile.  The CPU time of each process over those seconds must
 * stay under a quarter of them: an idle job uses a few ms, a spinning
 * thread about all of them (less only on a CPU shared with others, which
 * is why the bound is far from both).  The Put must still arrive, and
 * its data and counters are checked.
 */
#include "ofi_test.h"

#define IDLE_S 1.5
#define MAX_SHARE 0.25

static double cpu_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n % 2) {
    fprintf(stderr, "ofi_idle_cpu needs an even number of CGs\n");
    return 2;
  }
  int partner = ot.me ^ 1;
  static int box, word;
  lapi_cntr_t tgt, org;
  LAPI_Setcntr(ot.h, &tgt, 0);
  void **boxes = ot_addrs(&box);
  void **cntrs = ot_addrs(&tgt);

  /* first contact both ways */
  word = 100 + ot.me;
  LAPI_Setcntr(ot.h, &org, 0);
  OT_OK(LAPI_Put(ot.h, (uint)partner, sizeof word, boxes[partner], &word,
                 cntrs[partner], &org, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &tgt, 1, NULL));
  OT_CHECK(box == 100 + partner, "first Put brought %d, want %d", box,
           100 + partner);
  OT_OK(LAPI_Gfence(ot.h));

  double t0 = ot_now_s(), c0 = cpu_s();
  if (ot.me % 2 == 0) {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt, 1, NULL));
    OT_CHECK(box == 200 + partner, "late Put brought %d, want %d", box,
             200 + partner);
  } else {
    struct timespec nap = {(time_t)IDLE_S,
                           (long)((IDLE_S - (int)IDLE_S) * 1e9)};
    while (nanosleep(&nap, &nap) != 0)
      ;
    word = 200 + ot.me;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Put(ot.h, (uint)partner, sizeof word, boxes[partner], &word,
                   cntrs[partner], &org, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  }
  double wall = ot_now_s() - t0, cpu = cpu_s() - c0;
  fprintf(stderr, "ofi_idle_cpu task %d: %.0f ms of CPU in %.0f ms (%s)\n",
          ot.me, cpu * 1e3, wall * 1e3,
          ot.me % 2 ? "asleep out of LAPI" : "in LAPI_Waitcntr");
  OT_CHECK(wall >= IDLE_S * 0.9, "the wait ended after %.3f s, before the "
           "Put was sent", wall);
  OT_CHECK(cpu < MAX_SHARE * wall, "%.0f ms of CPU in %.0f ms of waiting: "
           "a thread spins", cpu * 1e3, wall * 1e3);
  free(boxes);
  free(cntrs);
  return ot_finish("ofi_idle_cpu");
}
