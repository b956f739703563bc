/*
 * ofi_lane_corrupt.c - a corrupt shared-memory lane ends its sender's
 * part in the job with errors, never with a hang or a wrong delivery.
 *
 * Two CGs over shm with the lane (ofi_lane.c), white box (lapi_static: the
 * test hook and the counts), TIMEOUT 3 s.  First 20 Amsends from task 0
 * to task 1 arrive as usual.  Then task 0 sets the hook: its next packet
 * into the lane carries a length past what the record publishes, and it
 * sends one more Amsend with a cmpl_cntr.  Task 1 must take the ring for
 * corrupt: it counts a malformed packet, its error handler names task 0,
 * and the message's header handler never runs.  Task 0 hears nothing
 * more from task 1 (whose packets from it are no longer used): its
 * LAPI_Waitcntr on the cmpl_cntr must return an error within a few
 * TIMEOUTs, its error handler must name task 1, and LAPI_Term must end
 * on both.  Where the lane is off (no doorbell) it exits 77: skipped.
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define TIMEOUT_S 3
#define WARM 20

static int landed; /* atomic: Amsends whose header handler ran */
static unsigned char inbox[64];

static void *count_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  __atomic_add_fetch(&landed, 1, __ATOMIC_SEQ_CST);
  *comp_h = NULL;
  *uinfo = NULL;
  return inbox;
}

int main(void)
{
  ot_init(ot_errh_watch, 120);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_lane_corrupt needs 2 CGs\n");
    return 2;
  }
  pthread_mutex_lock(&ofi.lock);
  int lane = ofi.lane;
  pthread_mutex_unlock(&ofi.lock);
  if (!lane) {
    if (ot.me == 0)
      printf("ofi_lane_corrupt: no shared-memory lane here: SKIP\n");
    return ot_finish("ofi_lane_corrupt") == 0 ? 77 : 1;
  }
  ot_watch = 1 - ot.me;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Addr_set(ot.h, (void *)count_hdr, 1));
  static unsigned char src[sizeof inbox];
  memset(src, 7, sizeof src);
  lapi_cntr_t tgt;
  LAPI_Setcntr(ot.h, &tgt, 0);
  void **tgts = ot_addrs(&tgt);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    for (int i = 0; i < WARM; i++)
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, sizeof src,
                        tgts[1], NULL, NULL));
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt, WARM, NULL));
  }
  /* before the fence: task 0 spoils the lane once it is through */
  pthread_mutex_lock(&ofi.lock);
  uint64_t bad_before = ofi.st.dropped[OFI_BAD_LEN];
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(__atomic_load_n(&ot_errs_from_watch, __ATOMIC_SEQ_CST) == 0,
           "an error before the lane was spoiled");
  OT_OK(LAPI_Gfence(ot.h));

  double t0 = ot_now_s(), waited = 0;
  if (ot.me == 0) {
    lapi_cntr_t cmpl;
    LAPI_Setcntr(ot.h, &cmpl, 0);
    pthread_mutex_lock(&ofi.lock);
    ofi_lane_corrupt_next = 1;
    pthread_mutex_unlock(&ofi.lock);
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, sizeof src,
                      tgts[1], NULL, &cmpl));
    pthread_mutex_lock(&ofi.lock);
    int hook_left = ofi_lane_corrupt_next;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(hook_left == 0, "the Amsend did not go through the lane");
    int rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
    OT_CHECK(rc != LAPI_SUCCESS, "Waitcntr on the cmpl_cntr of a message "
             "its target dropped returned success");
  }
  OT_CHECK(ot_await_watch_error(4 * TIMEOUT_S) > 0,
           "the error handler never named task %d", ot_watch);
  waited = ot_now_s() - t0;
  OT_CHECK(waited < 4 * TIMEOUT_S + 4, "the error came after %.1f s",
           waited);
  if (ot.me == 1) {
    pthread_mutex_lock(&ofi.lock);
    uint64_t bad = ofi.st.dropped[OFI_BAD_LEN] - bad_before;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(bad >= 1, "the corrupt record was not counted as malformed");
    int n = __atomic_load_n(&landed, __ATOMIC_SEQ_CST);
    OT_CHECK(n == WARM, "%d Amsends landed, want the %d before the "
             "corrupt one", n, WARM);
  }
  free(tgts);
  return ot_finish_fault("ofi_lane_corrupt", waited, 4 * TIMEOUT_S);
}
