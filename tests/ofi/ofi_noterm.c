/*
 * ofi_noterm.c - a core group leaves without LAPI_Term, with exit code 0.
 *
 *   ofi_noterm exit | _exit [polling]
 *
 * Started by lapirun with 2 CGs.  After a first exchange that works,
 * task 1 leaves: exit(0) (atexit handlers run, the bootstrap says
 * goodbye) or _exit(0) (nothing said to anyone).  Task 0 has nothing
 * outstanding toward it and waits for a message from it that never
 * comes: before lapirun reported such a leave (GONE through the
 * exchange), that LAPI_Waitcntr waited forever.  Now, with TIMEOUT 3 s:
 *  - its error handler names task 1 with LAPI_ERR_TGT_PURGED;
 *  - the wait ends with LAPI_ERR_TIMEOUT (within TIMEOUT once the peer
 *    is declared gone);
 *  - LAPI_Gfence fails, new operations to task 1 fail;
 *  - LAPI_Term works.
 * lapirun then exits with 70 and names the rank (ctest checks both
 * through tests/ofi/expect_status.sh).  "polling" runs task 0 in polling
 * mode (LAPI_Senv INTERRUPT_SET 0): the wait drives progress itself.
 * The alarm of ot_init turns a hang into a failure.
 */
#include <errno.h>

#include "ofi_test.h"

static lapi_cntr_t tgt_cntr;
static int purged_heard; /* atomic: the error handler's code was right */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  if (*src == 1 && *code == LAPI_ERR_TGT_PURGED)
    __atomic_add_fetch(&purged_heard, 1, __ATOMIC_SEQ_CST);
  ot_errh_watch(h, code, type, task, src);
}

int main(int argc, char **argv)
{
  int hard = argc > 1 && strcmp(argv[1], "_exit") == 0;
  int polling = argc > 2 && strcmp(argv[2], "polling") == 0;
  ot_init(errh, 60);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_noterm needs 2 CGs\n");
    return 2;
  }
  ot_watch = 1;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, 3));
  if (polling)
    OT_OK(LAPI_Senv(ot.h, INTERRUPT_SET, 0));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **cntrs = ot_addrs(&tgt_cntr);

  /* A round that works: each sends the other one message. */
  lapi_cntr_t cmpl;
  LAPI_Setcntr(ot.h, &cmpl, 0);
  int word = ot.me;
  OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt, (void *)1, NULL, 0, &word,
                    sizeof word, cntrs[ot.tgt], NULL, &cmpl));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
  OT_OK(LAPI_Gfence(ot.h));

  if (ot.me == 1) {
    fflush(stdout);
    if (hard)
      _exit(0); /* gone, without a word */
    exit(0);    /* gone, atexit handlers run: still no LAPI_Term */
  }

  /* Task 0: the second message from task 1 never comes. */
  double t0 = ot_now_s();
  int cur = -1;
  int rc = LAPI_Waitcntr(ot.h, &tgt_cntr, 2, &cur);
  double waited = ot_now_s() - t0;
  OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr for the leaver's message "
           "returned %d", rc);
  /* Declared gone within about a second, then TIMEOUT (3 s) of waiting;
   * bounded loosely: a loaded machine is slow, never wrong. */
  OT_CHECK(waited < 40, "the wait took %.1f s", waited);
  OT_CHECK(ot_await_watch_error(30) >= 1, "the error handler never named "
           "task 1");
  OT_CHECK(__atomic_load_n(&purged_heard, __ATOMIC_SEQ_CST) == 1,
           "LAPI_ERR_TGT_PURGED naming task 1 heard %d times (once)",
           __atomic_load_n(&purged_heard, __ATOMIC_SEQ_CST));
  rc = LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, &word, sizeof word,
                   cntrs[1], NULL, NULL);
  OT_CHECK(rc != LAPI_SUCCESS, "an Amsend to the leaver returned %d", rc);
  rc = LAPI_Gfence(ot.h);
  OT_CHECK(rc != LAPI_SUCCESS, "LAPI_Gfence with the leaver returned %d",
           rc);
  free(cntrs);
  OT_OK(LAPI_Term(ot.h));
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_noterm task 0: waited %.1f s: %s\n", waited,
         bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
