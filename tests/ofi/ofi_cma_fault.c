/*
 * ofi_cma_fault.c - an RMA read by cross-memory attach that fails.
 *
 * Run over shm with LAPI_OFI_TEST_CMA_FAULT=1 (ofi_cma.c: the last remote
 * piece of every CMA read is moved to an unmapped address).  Task 0 puts
 * four 64 KiB pieces into task 1 with LAPI_Putv: task 1's single read of
 * them copies the first three (a partial read that must be continued)
 * and then fails with EFAULT.  The put must fail as a failed RMA read
 * does: task 1's error handler hears LAPI_ERR_RECV_INCOMP, its tgt_cntr
 * does not move, task 0's org_cntr still moves (the buffer is free
 * again) and no task hangs; the three pieces before the bad one arrived.
 * Then a contiguous 128 KiB LAPI_Amsend, whose read runs in the item of
 * its header handler (ofi_sink.c): it fails the same way, and its
 * completion handler never runs.  Last a contiguous 128 KiB LAPI_Get,
 * whose target writes the data into the origin's buffer by CMA
 * (OFI_GET_WRITE): the write fails, the origin's error handler hears
 * LAPI_ERR_RECV_INCOMP, and neither org_cntr nor tgt_cntr moves.  Last
 * a LAPI_Xfer put with a send handler whose read fails: the handler
 * hears LAPI_ERR_RECV_INCOMP, org_cntr moves, tgt_cntr does not.
 * White box (lapi_static): where CMA cannot work it exits 77 (skipped).
 * Run in both modes: in polling mode (LAPI_INTERRUPT=0) error handlers
 * and header handlers run only when the application dispatches, so the
 * waits below probe (LAPI_Probe) rather than only sleep; the alarm of
 * ot_init bounds them, never a count of tries.
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define PIECE 65536
#define NP 4

static int recv_incomp; /* atomic: LAPI_ERR_RECV_INCOMP heard */
static unsigned char src[NP][2 * PIECE], dst[NP][2 * PIECE];
static lapi_cntr_t tgt_cntr;
static unsigned char am_src[2 * PIECE], am_dst[2 * PIECE];
static int am_done; /* atomic: the AM's completion handler ran */

static void *am_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  OT_CHECK(*msg_len == sizeof am_src, "AM msg_len %lu", *msg_len);
  *comp_h = ot_cmpl_count;
  *uinfo = &am_done;
  return am_dst;
}

static void on_error(lapi_handle_t *h, int *code, lapi_err_t *type,
                     int *task, int *src_task)
{
  (void)h;
  (void)type;
  (void)task;
  (void)src_task;
  if (*code == LAPI_ERR_RECV_INCOMP)
    __atomic_add_fetch(&recv_incomp, 1, __ATOMIC_SEQ_CST);
}

static int put_reason = -1; /* atomic: the Xfer put's send handler */

static void put_shdlr(lapi_handle_t *h, void *info, lapi_sh_info_t *si)
{
  (void)h;
  (void)info;
  __atomic_store_n(&put_reason, (int)si->reason, __ATOMIC_SEQ_CST);
}

/* Until the error handler heard LAPI_ERR_RECV_INCOMP want times. */
int main(void)
{
  ot_init(on_error, 60);
  pthread_mutex_lock(&ofi.lock);
  int on = ofi.cma; /* the same in every task */
  pthread_mutex_unlock(&ofi.lock);
  if (!on) {
    if (ot.me == 0)
      printf("ofi_cma_fault: cross-memory attach is not usable here: "
             "SKIP\n");
    return ot_finish("ofi_cma_fault") == 0 ? 77 : 1;
  }
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  for (int k = 0; k < NP; k++)
    for (int i = 0; i < PIECE; i++)
      src[k][i] = (unsigned char)(k * 31 + i * 7 + 1);
  if (ot.me == 0) {
    void *o_info[NP], *t_info[NP];
    ulong o_len[NP], t_len[NP];
    unsigned char(*tdst)[2 * PIECE] = dsts[1];
    for (int k = 0; k < NP; k++) {
      o_info[k] = src[k];
      t_info[k] = tdst[k];
      o_len[k] = t_len[k] = PIECE;
    }
    lapi_vec_t ov = {LAPI_GEN_IOVECTOR, NP, o_info, o_len};
    lapi_vec_t tv = {LAPI_GEN_IOVECTOR, NP, t_info, t_len};
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Putv(ot.h, 1, &tv, &ov, cntrs[1], &org, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    /* the error handler runs in MPE context */
    ot_await_count(&recv_incomp, 1, 30);
    OT_CHECK(__atomic_load_n(&recv_incomp, __ATOMIC_SEQ_CST) == 1,
             "LAPI_ERR_RECV_INCOMP heard %d times, want once",
             __atomic_load_n(&recv_incomp, __ATOMIC_SEQ_CST));
    int v = ot_cntr(&tgt_cntr);
    OT_CHECK(v == 0, "tgt_cntr %d after a failed put", v);
    for (int k = 0; k < NP - 1; k++)
      OT_CHECK(memcmp(dst[k], src[k], PIECE) == 0,
               "piece %d before the bad one did not arrive", k);
  }
  /* The Amsend: read in its header handler's item, fails there. */
  OT_OK(LAPI_Addr_set(ot.h, (void *)am_hdr, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    memset(am_src, 5, sizeof am_src);
    lapi_cntr_t cmpl;
    LAPI_Setcntr(ot.h, &cmpl, 0);
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, am_src, sizeof am_src,
                      cntrs[1], NULL, &cmpl));
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    ot_await_count(&recv_incomp, 2, 30);
    OT_CHECK(__atomic_load_n(&recv_incomp, __ATOMIC_SEQ_CST) == 2,
             "LAPI_ERR_RECV_INCOMP heard %d times after the Amsend, "
             "want twice", __atomic_load_n(&recv_incomp, __ATOMIC_SEQ_CST));
    OT_CHECK(__atomic_load_n(&am_done, __ATOMIC_SEQ_CST) == 0,
             "the failed Amsend's completion handler ran");
    int v = ot_cntr(&tgt_cntr);
    OT_CHECK(v == 0, "tgt_cntr %d after a failed Amsend", v);
  }
  /* The Get: task 1 takes task 0's am_src; task 0's write fails. */
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **srcs = ot_addrs(am_src);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Get(ot.h, 0, sizeof am_src, srcs[0], am_dst, cntrs[0], &org));
    ot_await_count(&recv_incomp, 3, 30);
    OT_CHECK(__atomic_load_n(&recv_incomp, __ATOMIC_SEQ_CST) == 3,
             "LAPI_ERR_RECV_INCOMP heard %d times after the Get, want 3",
             __atomic_load_n(&recv_incomp, __ATOMIC_SEQ_CST));
    int v = ot_cntr(&org);
    OT_CHECK(v == 0, "org_cntr %d after a failed get", v);
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    int v = ot_cntr(&tgt_cntr);
    OT_CHECK(v == 0, "tgt_cntr %d after a failed get", v);
  }
  /* A LAPI_Xfer put with a send handler: task 1's read fails; task 0's
   * handler hears the failure (in the item the put reserved for its
   * handlers: lapi_am_notify_fail), its org_cntr moves, tgt_cntr not. */
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    lapi_xfer_t x = ot_xfer_put(1, dsts[1], am_src, sizeof am_src,
                                put_shdlr, cntrs[1], &org);
    OT_OK(LAPI_Xfer(ot.h, &x));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    while (__atomic_load_n(&put_reason, __ATOMIC_SEQ_CST) == -1) {
      LAPI_Probe(ot.h);
      usleep(1000); /* one core: leave it to the dispatcher */
    }
    OT_CHECK(__atomic_load_n(&put_reason, __ATOMIC_SEQ_CST) ==
                 LAPI_ERR_RECV_INCOMP,
             "the failed put's send handler heard reason %d",
             __atomic_load_n(&put_reason, __ATOMIC_SEQ_CST));
  } else {
    ot_await_count(&recv_incomp, 4, 30);
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    int v = ot_cntr(&tgt_cntr);
    OT_CHECK(v == 0, "tgt_cntr %d after a failed Xfer put", v);
  }
  free(srcs);
  free(dsts);
  free(cntrs);
  return ot_finish("ofi_cma_fault");
}
