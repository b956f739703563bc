/*
 * ofi_term_survivors.c - the survivors of a broken job close in step.
 *
 * Three CGs; task 2 leaves without LAPI_Term.  Task 0 then calls
 * LAPI_Term at once; task 1 first sleeps a second, sends task 0 a small
 * Amsend, and calls LAPI_Term.  Before the leave barrier (boot.h), task
 * 0's Term closed at once (its last barrier failed on task 2 gone), and
 * task 1's message to the closed endpoint waited to be sent until
 * TIMEOUT (20 s here) while task 1's Term flushed it (over shm and
 * tcp;ofi_rxm alike).  Now task 0 closes only once task 1 has flushed
 * too: both Terms must return within a few seconds.  (The message
 * reaches task 0 after its handle ended, which refuses it: an error
 * report at task 1, as for any message to a terminated handle.)
 */
#include "ofi_test.h"

#define TERM_MAX_S 8.0 /* far below the job's TIMEOUT (lapirun --timeout) */

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n != 3) {
    fprintf(stderr, "ofi_term_survivors: run with lapirun -n 3\n");
    return 2;
  }
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  lapi_long_t pids[3];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)getpid(), pids));
  OT_OK(LAPI_Gfence(ot.h));
  ot_victim_leaves(2, pids);
  if (ot.me == 1) {
    usleep(1000000);
    static char msg[64] = "sent after task 0 began LAPI_Term";
    OT_OK(LAPI_Amsend(ot.h, 0, (void *)1, NULL, 0, msg, sizeof msg, NULL,
                      NULL, NULL));
  }
  double t0 = ot_now_s();
  OT_OK(LAPI_Term(ot.h));
  double took = ot_now_s() - t0;
  printf("ofi_term_survivors task %d: LAPI_Term took %.2f s\n", ot.me,
         took);
  OT_CHECK(took < TERM_MAX_S, "LAPI_Term took %.1f s (a survivor closed "
           "before the other had sent what it owed)", took);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_term_survivors task %d of 3: %s\n", ot.me,
         bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
