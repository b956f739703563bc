/*
 * ofi_lost_nofin.c - a message sent without a FIN and lost on the way
 * fails at its origin instead of hanging; one its target holds long
 * does not.
 *
 * Two tasks, white box (links lapi_static to set the test hook and read
 * the counts).  TIMEOUT is 3 s: a no-FIN message whose acknowledgement
 * did not come for the ping interval (1 s) is asked about (ASK quoting
 * its number, ofi_ask.c), and the target answers from its window.
 *  1. Held: task 0 sends task 1 an eager Amsend with a cmpl_cntr (kept:
 *     finished by the target's counts, no FIN); task 1's completion
 *     handler returns only once task 1 heard an ASK about it.  The
 *     message completes, no error handler runs.
 *  2. Lost: task 0 turns the test hook on (ofi_dropnofin_at,
 *     LAPI_OFI_TEST_DROP_NOFIN): its next no-FIN message is never
 *     posted, as if a connection closed under it (over tcp;ofi_rxm, PINGs
 *     would keep passing on a new one).  With OFI_LOST_NOFIN_OP=cntr the
 *     message is an eager Amsend with a cmpl_cntr, whose LAPI_Waitcntr
 *     must return an error; with =fence it has no counter at all and
 *     LAPI_Fence must return.  Either way within 2 x TIMEOUT (plus room
 *     for a loaded machine), the error handler names task 1, and
 *     LAPI_Term ends on both tasks.  Without the ASK both waits hang
 *     (the alarm of ot_init fails the test).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"
#include "ofi_held.h"

#define TIMEOUT_S 3
#define SMALL 64 /* below every eager limit */

int main(void)
{
  ot_init(ot_errh_watch, 120);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_lost_nofin needs 2 CGs\n");
    return 2;
  }
  const char *op = getenv("OFI_LOST_NOFIN_OP");
  int by_fence = op && strcmp(op, "fence") == 0;
  ot_watch = 1 - ot.me;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  held_len = SMALL;
  held_box = ot_inbox;
  OT_OK(LAPI_Addr_set(ot.h, (void *)held_hdr, 1));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 2));
  pthread_mutex_lock(&ofi.lock);
  int kept = ofi.cmpl_by_count && ofi.tpc == 1 && !ofi.fin_always;
  pthread_mutex_unlock(&ofi.lock);
  if (!kept) {
    if (ot.me == 0)
      printf("ofi_lost_nofin: messages are not kept here: SKIP\n");
    return ot_finish("ofi_lost_nofin") == 0 ? 77 : 1;
  }
  static unsigned char src[SMALL];
  memset(src, 5, sizeof src);
  lapi_cntr_t cmpl;

  /* Part 1: held past the ping interval: asked, never failed. */
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    LAPI_Setcntr(ot.h, &cmpl, 0);
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, SMALL, NULL, NULL,
                      &cmpl));
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1)
    OT_CHECK(held_asks() > 0, "no ASK about the held message");
  OT_CHECK(__atomic_load_n(&ot_errs_from_watch, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran for a message held, not lost");

  /* Part 2: lost. */
  double t0 = ot_now_s(), waited = 0;
  if (ot.me == 0) {
    pthread_mutex_lock(&ofi.lock);
    ofi_dropnofin_at = 1;
    pthread_mutex_unlock(&ofi.lock);
    if (by_fence) {
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)2, NULL, 0, src, SMALL, NULL, NULL,
                        NULL));
      OT_OK(LAPI_Fence(ot.h));
    } else {
      LAPI_Setcntr(ot.h, &cmpl, 0);
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)2, NULL, 0, src, SMALL, NULL, NULL,
                        &cmpl));
      int rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
      OT_CHECK(rc != LAPI_SUCCESS, "Waitcntr on the cmpl_cntr of a lost "
               "message returned success");
      fprintf(stderr, "task 0: Waitcntr returned %d\n", rc);
      OT_OK(LAPI_Fence(ot.h));
    }
    OT_CHECK(ot_await_watch_error(4 * TIMEOUT_S) > 0,
             "the error handler never named task 1");
    waited = ot_now_s() - t0;
    fprintf(stderr, "task 0: the lost message failed after %.1f s\n",
            waited);
    OT_CHECK(waited < 2 * TIMEOUT_S + 4, "task 0 waited %.1f s", waited);
    pthread_mutex_lock(&ofi.lock);
    int hook_left = ofi_dropnofin_at;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(hook_left == 0, "the test hook dropped nothing");
  }
  double t1 = ot_now_s();
  OT_OK(LAPI_Term(ot.h));
  double term = ot_now_s() - t1;
  OT_CHECK(term < 4 * TIMEOUT_S, "LAPI_Term took %.1f s", term);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_lost_nofin task %d of %d (%s, failed after %.1f s, "
         "LAPI_Term %.1f s): %s\n", ot.me, ot.n, by_fence ? "fence" : "cntr",
         waited, term, bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}
