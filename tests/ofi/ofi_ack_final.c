/*
 * ofi_ack_final.c - LAPI_Term tells every peer the acknowledgement
 * counts it has not heard (ofi_ack_final in ofi_ack.c).
 *
 * A kept message (an eager Amsend with a cmpl_cntr, sent without a FIN
 * and finished at its origin by the target's counts) completed at its
 * target, whose counts go out only when asked or every 32 messages.  If
 * the target closes before the origin's ACK_REQ arrives, nothing else
 * will ever tell the origin: its LAPI_Waitcntr waited until the closed
 * peer was declared gone (LAPI_ERR_TIMEOUT, the message counted failed)
 * although the message was long delivered.  A job that lost a task lets
 * that happen (LAPI_Term's barrier fails at once instead of holding the
 * target until the origin is done); ofi_killed_tcp_np3 hit it 1 run in
 * 12.  Here the order is forced:
 *   - three tasks; the last leaves abruptly (_exit(0), no LAPI_Term) so
 *     that LAPI_Term's barrier fails at once for the others;
 *   - task 0 answers no ACK_REQ and no ASK about a no-FIN message (test
 *     hook ofi_deaf_acks, LAPI_OFI_TEST_DEAF_ACKS), as if each came
 *     after it closed;
 *   - task 1 sends task 0 one kept Amsend and waits for its cmpl_cntr;
 *   - task 0 waits for its tgt_cntr and for the message's end to be
 *     counted, checks that task 1 has not heard that count, and calls
 *     LAPI_Term at once.
 * Task 1's wait must end with LAPI_SUCCESS and no error about task 0:
 * only the final ACK of task 0's LAPI_Term can end it so.  Without that
 * ACK it ended with LAPI_ERR_TIMEOUT (413) after TIMEOUT (8.1 s), in 10
 * runs of 10 over shm and tcp.  Nothing here waits for a time in a
 * healthy run.  White box (lapi_static).
 */
#include <signal.h>
#include <sys/types.h>

#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define TIMEOUT_S 8
#define SMALL 64 /* below every eager limit */
/* The end is counted right after tgt_cntr moves (microseconds; a loaded
 * machine may hold the thread a few ms): far beyond that it never will. */
#define COUNTED_WAIT_S 10

static lapi_cntr_t tgt_cntr;

/* Task 0: the count of task 1's no-FIN messages ended here, and the
 * count last told to task 1. */
static void counts_of_1(uint32_t *done, uint32_t *told)
{
  pthread_mutex_lock(&ofi.lock);
  *done = ofi.peers[1].in_done;
  *told = ofi.peers[1].told_done;
  pthread_mutex_unlock(&ofi.lock);
}

int main(void)
{
  ot_init(ot_errh_watch, 120);
  if (ot.n != 3) {
    fprintf(stderr, "ofi_ack_final needs 3 CGs\n");
    return 2;
  }
  int victim = ot.n - 1;
  ot_watch = 0; /* task 1 must not hear of task 0's end as a fault */
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **cntrs = ot_addrs(&tgt_cntr);
  lapi_long_t pids[3];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)getpid(), pids));
  pthread_mutex_lock(&ofi.lock);
  int kept = ofi.cmpl_by_count && ofi.tpc == 1 && !ofi.fin_always;
  if (ot.me == 0)
    ofi_deaf_acks = 1;
  pthread_mutex_unlock(&ofi.lock);
  OT_OK(LAPI_Gfence(ot.h));
  ot_victim_leaves(victim, pids); /* Term's barrier fails from now on */

  if (ot.me == 1) {
    static unsigned char src[SMALL];
    memset(src, 7, sizeof src);
    lapi_cntr_t cmpl;
    LAPI_Setcntr(ot.h, &cmpl, 0);
    double t0 = ot_now_s();
    OT_OK(LAPI_Amsend(ot.h, 0, (void *)1, NULL, 0, src, SMALL, cntrs[0],
                      NULL, &cmpl));
    int rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
    double waited = ot_now_s() - t0;
    OT_CHECK(rc == LAPI_SUCCESS, "Waitcntr on the cmpl_cntr of a message "
             "task 0 completed before it closed returned %d after %.1f s",
             rc, waited);
    OT_CHECK(__atomic_load_n(&ot_errs_from_watch, __ATOMIC_SEQ_CST) == 0,
             "the error handler named task 0, which closed cleanly");
    fprintf(stderr, "task 1: the %s message's wait ended after %.2f s\n",
            kept ? "kept" : "FIN'd", waited);
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
    /* The item's end is counted just after tgt_cntr moves (ofi_sink.c,
     * item_end): wait for it, so that LAPI_Term's final ACK is the one
     * that must carry it. */
    uint32_t done = 0, told = 0;
    double until = ot_now_s() + COUNTED_WAIT_S;
    for (counts_of_1(&done, &told); kept && done == 0 && ot_now_s() < until;
         counts_of_1(&done, &told))
      usleep(1000);
    OT_CHECK(!kept || done != 0, "the end of task 1's kept message was "
             "not counted within %d s of its tgt_cntr moving",
             COUNTED_WAIT_S);
    OT_CHECK(!kept || told != done, "task 1 heard the count before "
             "LAPI_Term (told %u, done %u): the test proves nothing",
             (unsigned)told, (unsigned)done);
  }
  OT_OK(LAPI_Term(ot.h));
  free(cntrs);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_ack_final task %d of %d (%s): %s\n", ot.me, ot.n,
         kept ? "kept" : "not kept", bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}
