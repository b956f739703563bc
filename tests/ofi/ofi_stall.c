/*
 * ofi_stall.c - an RMA offer the peer cannot use: an error, never a hang.
 *
 * After a round that works, task 0 turns the bad key hook on in itself
 * (ofi_badkey_every, LAPI_OFI_TEST_BAD_KEY): the RTS of its next put
 * (256 KiB, by RMA) names a region task 1 cannot read.
 *  - tcp;ofi_rxm: task 1's read carries a wrong key; task 0's provider
 *    logs "invalid rma iov received" and stops serving that connection,
 *    and no completion, good or bad, ever comes to either side.  Only the
 *    silence watch can notice: within a bounded time (TIMEOUT is 3 s
 *    here) task 0's LAPI_Waitcntr on the put's cmpl_cntr must return
 *    LAPI_ERR_TIMEOUT, both error handlers must name the other task, and
 *    both LAPI_Term must end.
 *    (Seen: task 1's read completes with FI_ECANCELED and its FIN(error)
 *    is lost with the connection, while PINGs pass on a new one; task 1
 *    declares task 0 gone, so task 0 hears silence.)
 *  - shm (CMA): the read fails at once (EFAULT): task 1's error handler
 *    hears LAPI_ERR_RECV_INCOMP, task 0's org_cntr moves (its buffer is
 *    free), tgt_cntr never moves; nobody waits for TIMEOUT.  shm without
 *    CMA checks no keys (the read succeeds): skipped.
 * With OFI_STALL_OP=get the same for a 256 KiB LAPI_Get, whose target
 * writes task 0's buffer (OFI_GET_WRITE) offered with the wrong key.
 * Over tcp;ofi_rxm the write completes at task 1 and its FIN is lost
 * unreported while PINGs pass: task 0 asks task 1 about the get (ASK,
 * ofi_ask.c), task 1 holds nothing and answers UNKNOWN, task 0 declares
 * it gone: its error handler runs and its LAPI_Waitcntr returns
 * LAPI_ERR_TIMEOUT within about TIMEOUT (it hung before).
 * The alarm of ot_init turns any hang into a failure; the bounds below
 * leave room for a loaded machine, nothing depends on timing otherwise.
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define TIMEOUT_S 3
#define BIG (256 * 1024)

static lapi_cntr_t tgt_cntr;
static int heard_code; /* atomic: the last error code naming the peer */

static void on_error(lapi_handle_t *h, int *code, lapi_err_t *type,
                     int *task, int *src)
{
  ot_errh_watch(h, code, type, task, src);
  if (*src == ot_watch)
    __atomic_store_n(&heard_code, *code, __ATOMIC_SEQ_CST);
}

/* 1 once this task answered an ASK with UNKNOWN, 0 after limit_s. */
static int await_unknown(double limit_s)
{
  double t0 = ot_now_s();
  for (;;) {
    pthread_mutex_lock(&ofi.lock);
    uint64_t n = ofi.st.unknowns;
    pthread_mutex_unlock(&ofi.lock);
    if (n > 0)
      return 1;
    if (ot_now_s() - t0 > limit_s)
      return 0;
    usleep(10000);
  }
}

int main(void)
{
  ot_init(on_error, 120);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_stall needs 2 CGs\n");
    return 2;
  }
  int peer = 1 - ot.me;
  ot_watch = peer;
  const char *op = getenv("OFI_STALL_OP"); /* "get": a get, not a put */
  int by_get = op && strcmp(op, "get") == 0;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **cntrs = ot_addrs(&tgt_cntr);
  void **boxes = ot_addrs(ot_inbox);
  pthread_mutex_lock(&ofi.lock);
  int cma = ofi.cma, rma = ofi.has_rma;
  /* shm's own RMA (LAPI_OFI_CMA=0) does not check keys: a wrong one
   * reads the right memory, nothing fails (libfabric 1.17). */
  int keys_checked = cma || strcmp(ofi.prov, "shm") != 0;
  pthread_mutex_unlock(&ofi.lock);

  /* A round that works, by RMA too. */
  static unsigned char big[BIG];
  memset(big, 7, sizeof big);
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  OT_OK(LAPI_Put(ot.h, (uint)peer, BIG, boxes[peer], big, cntrs[peer], &org,
                 &cmpl));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
  OT_OK(LAPI_Gfence(ot.h));
  if ((!cma && !rma) || !keys_checked) {
    if (ot.me == 0)
      printf("ofi_stall: no RMA here, or its keys are not checked: "
             "SKIP\n");
    return ot_finish("ofi_stall") == 0 ? 77 : 1;
  }

  double t0 = ot_now_s(), waited = 0;
  if (ot.me == 0) {
    pthread_mutex_lock(&ofi.lock);
    ofi_badkey_every = 1;
    pthread_mutex_unlock(&ofi.lock);
    LAPI_Setcntr(ot.h, &org, 0);
    LAPI_Setcntr(ot.h, &cmpl, 0);
    if (by_get) {
      /* The GET offers our buffer, which task 1 writes (OFI_GET_WRITE):
       * its write fails or is never served; org_cntr never moves. */
      static unsigned char back[BIG];
      OT_OK(LAPI_Get(ot.h, 1, BIG, boxes[1], back, NULL, &cmpl));
      if (!cma) {
        int rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
        OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr on the org_cntr of a "
                 "get whose buffer the peer cannot write returned %d", rc);
      }
    } else {
      OT_OK(LAPI_Put(ot.h, 1, BIG, boxes[1], big, cntrs[1], &org, &cmpl));
      /* The buffer is free again whatever failed. */
      int rc = LAPI_Waitcntr(ot.h, &org, 1, NULL);
      OT_CHECK(rc == LAPI_SUCCESS || rc == LAPI_ERR_TIMEOUT,
               "Waitcntr on org_cntr returned %d", rc);
      if (!cma) {
        rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
        OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr on the cmpl_cntr of a "
                 "put the peer cannot read returned %d", rc);
      }
    }
    OT_CHECK(ot_await_watch_error(8 * TIMEOUT_S) > 0,
             "the error handler never named task 1");
    waited = ot_now_s() - t0;
    fprintf(stderr, "task 0: error %d after %.1f s\n",
            __atomic_load_n(&heard_code, __ATOMIC_SEQ_CST), waited);
    int v = ot_cntr(&cmpl);
    OT_CHECK(v == 0, "cmpl_cntr %d after an operation that failed", v);
  } else {
    /* Task 1 hears of a put through its error handler: at once, from
     * its failed read.  A get's write over tcp completed here: task 1
     * only answers task 0's ASK about the get with UNKNOWN (ofi_ask.c). */
    if (!by_get)
      OT_CHECK(ot_await_watch_error(8 * TIMEOUT_S) > 0,
               "the error handler never named task 0");
    else if (!cma)
      OT_CHECK(await_unknown(8 * TIMEOUT_S),
               "task 0's ASK about its get was never answered UNKNOWN");
    waited = ot_now_s() - t0;
    int code = __atomic_load_n(&heard_code, __ATOMIC_SEQ_CST);
    fprintf(stderr, "task 1: error %d after %.1f s\n", code, waited);
    if (!by_get)
      OT_CHECK(code == LAPI_ERR_RECV_INCOMP, "error %d, want "
               "LAPI_ERR_RECV_INCOMP (%d)", code, LAPI_ERR_RECV_INCOMP);
    int v = ot_cntr(&tgt_cntr);
    /* the first put's 1 was taken by its Waitcntr */
    OT_CHECK(v == 0, "tgt_cntr %d after a put that failed", v);
  }
  OT_CHECK(waited < 8 * TIMEOUT_S, "task %d heard of the failure after "
           "%.1f s", ot.me, waited);
  double t1 = ot_now_s();
  OT_OK(LAPI_Term(ot.h));
  double term = ot_now_s() - t1;
  OT_CHECK(term < 8 * TIMEOUT_S, "LAPI_Term took %.1f s", term);
  free(cntrs);
  free(boxes);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_stall task %d of %d (%s, heard after %.1f s, LAPI_Term "
         "%.1f s): %s\n", ot.me, ot.n, cma ? "CMA" : "RMA", waited, term,
         bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}
