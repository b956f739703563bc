/*
 * ofi_quiet.c - a peer we needed nothing from for longer than TIMEOUT is
 * not gone for that: the silence watch counts from when we began to wait
 * for it (src/transport/ofi/ofi_progress.c, watchdog).
 *
 * TIMEOUT is 2 s (LAPI_Senv).  Every task sends to the next one (a ring)
 * and hears from the previous one:
 *  1. Warm-up: for 0.8 s each task streams Amsends to the next and waits
 *     for each; the last one's completion handler at the target takes
 *     0.6 s, so at least two of the watchdog's passes (every 250 ms)
 *     find the origin waiting for that peer and note since when.  A
 *     watch that kept that start across the quiet (no pass runs while
 *     nothing is in flight) would count the quiet as silence too.
 *  2. Quiet: nobody calls LAPI for TIMEOUT + 2 s (a compute phase).
 *  3. Each task sends the next one an Amsend of 1 MiB (rendezvous: a
 *     FIN answers it), one of 64 B with cmpl_cntr (eager, acknowledged by
 *     count), a Put of 64 KiB, a Get of 1 MiB and an Rmw, and waits for all of them and for
 *     what the previous task sends it.  Each must succeed, with the right
 *     bytes, and no error handler may run.  Before the fix the first pass
 *     of the watchdog after the quiet measured the silence from the
 *     warm-up's last packet and declared the live peer gone
 *     (LAPI_ERR_TIMEOUT, "no answer for 4 s").
 *  4. The same once more after a second quiet, now that the watchdog has
 *     seen (in 3) these peers waited for and answered.
 */
#include "ofi_test.h"

#define TIMEOUT_S 2
#define BIG (1 << 20)
#define SMALL 64
#define PUT_LEN 65536

static unsigned char *inbox;  /* where the big Amsends land (BIG) */
static unsigned char *smallbox; /* where the small ones land (SMALL) */
static unsigned char *putbox; /* where the previous task puts (PUT_LEN) */
static unsigned char *getsrc; /* what the next task gets (BIG) */
static int errors;            /* atomic */
static lapi_cntr_t quiet_tgt; /* what the previous task sends us */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)type;
  (void)task;
  fprintf(stderr, "task %d: error handler: code %d from task %d\n", ot.me,
          *code, *src);
  __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
}

/* The warm-up's last message: its origin waits that long for it. */
static void slow_done(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  (void)uinfo;
  usleep(600000);
}

/* Header handler 1: by length, the big or the small box; a user header
 * asks for the slow completion handler. */
static void *to_inbox(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  *comp_h = *uhdr_len ? slow_done : NULL;
  *uinfo = NULL;
  return *msg_len == BIG ? inbox : smallbox;
}

/* Amsends to the next task for secs seconds, each waited for. */
static void warm_up(double secs, void **tcntrs, unsigned char *src)
{
  lapi_cntr_t cmpl;
  OT_OK(LAPI_Setcntr(ot.h, &cmpl, 0));
  double until = ot_now_s() + secs;
  int sent = 0;
  while (ot_now_s() < until) {
    OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt, (void *)1, NULL, 0, src, SMALL,
                      tcntrs[ot.tgt], NULL, &cmpl));
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
    sent++;
  }
  int slow = 1;
  OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt, (void *)1, &slow, sizeof slow, src,
                    SMALL, tcntrs[ot.tgt], NULL, &cmpl));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  sent++;
  /* the previous task's are counted on our tgt_cntr; it sent as many
   * as its clock allowed: the count comes through the job */
  void **counts = ot_addrs((void *)(uintptr_t)sent);
  int from_src = (int)(uintptr_t)counts[ot.src];
  free(counts);
  OT_OK(LAPI_Waitcntr(ot.h, &quiet_tgt, from_src, NULL));
}

/* Step 3: every kind of transfer to the next task after a quiet. */
static void after_quiet(int round, void **tcntrs, void **putboxes,
                        void **getsrcs, void **rmwwords,
                        unsigned char *big, unsigned char *small)
{
  double t0 = ot_now_s();
  uint32_t seed = (uint32_t)(round * 16 + ot.me);
  ot_fill(big, BIG, seed);
  ot_fill(small, SMALL, seed + 1);
  lapi_cntr_t cmpl, org;
  OT_OK(LAPI_Setcntr(ot.h, &cmpl, 0));
  OT_OK(LAPI_Setcntr(ot.h, &org, 0));
  static unsigned char got[BIG];
  static int one = 1, prev;
  uint tgt = (uint)ot.tgt;
  OT_OK(LAPI_Amsend(ot.h, tgt, (void *)1, NULL, 0, big, BIG, tcntrs[tgt],
                    NULL, &cmpl));
  OT_OK(LAPI_Amsend(ot.h, tgt, (void *)1, NULL, 0, small, SMALL,
                    tcntrs[tgt], NULL, &cmpl));
  OT_OK(LAPI_Put(ot.h, tgt, PUT_LEN, putboxes[tgt], big, tcntrs[tgt], NULL,
                 &cmpl));
  OT_OK(LAPI_Get(ot.h, tgt, BIG, getsrcs[tgt], got, NULL, &org));
  OT_OK(LAPI_Rmw(ot.h, FETCH_AND_ADD, tgt, rmwwords[tgt], &one, &prev,
                 &org));
  int rc = LAPI_Waitcntr(ot.h, &cmpl, 3, NULL);
  OT_CHECK(rc == LAPI_SUCCESS, "round %d: the Amsends and the Put to task "
           "%d after a quiet of %d s ended with %d", round, ot.tgt,
           TIMEOUT_S + 2, rc);
  rc = LAPI_Waitcntr(ot.h, &org, 2, NULL);
  OT_CHECK(rc == LAPI_SUCCESS, "round %d: the Get and the Rmw from task %d "
           "after the quiet ended with %d", round, ot.tgt, rc);
  OT_CHECK(ot_verify(got, BIG, 999) == BIG, "round %d: the Get's bytes "
           "(first wrong at %zu)", round, ot_verify(got, BIG, 999));
  /* what the previous task sent us: two Amsends and the Put */
  rc = LAPI_Waitcntr(ot.h, &quiet_tgt, 3, NULL);
  OT_CHECK(rc == LAPI_SUCCESS, "round %d: waiting for task %d's transfers "
           "ended with %d", round, ot.src, rc);
  uint32_t src_seed = (uint32_t)(round * 16 + ot.src);
  OT_CHECK(ot_verify(inbox, BIG, src_seed) == BIG,
           "round %d: the big Amsend's bytes from task %d", round, ot.src);
  OT_CHECK(ot_verify(smallbox, SMALL, src_seed + 1) == SMALL,
           "round %d: the small Amsend's bytes from task %d", round, ot.src);
  OT_CHECK(ot_verify(putbox, PUT_LEN, src_seed) == PUT_LEN,
           "round %d: the Put's bytes from task %d", round, ot.src);
  printf("ofi_quiet task %d: round %d done %.2f s after the quiet\n", ot.me,
         round, ot_now_s() - t0);
}

int main(void)
{
  ot_init(errh, 100);
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  inbox = calloc(1, BIG);
  smallbox = calloc(1, SMALL);
  putbox = calloc(1, PUT_LEN);
  getsrc = malloc(BIG);
  unsigned char *big = malloc(BIG), *small = malloc(SMALL);
  static int rmw_word;
  if (!inbox || !smallbox || !putbox || !getsrc || !big || !small) {
    fprintf(stderr, "ofi_quiet: out of memory\n");
    return 2;
  }
  ot_fill(getsrc, BIG, 999);
  OT_OK(LAPI_Addr_set(ot.h, (void *)to_inbox, 1));
  OT_OK(LAPI_Setcntr(ot.h, &quiet_tgt, 0));
  void **tcntrs = ot_addrs(&quiet_tgt);
  void **putboxes = ot_addrs(putbox);
  void **getsrcs = ot_addrs(getsrc);
  void **rmwwords = ot_addrs(&rmw_word);
  OT_OK(LAPI_Gfence(ot.h));

  warm_up(0.8, tcntrs, small);
  for (int round = 1; round <= 2; round++) {
    OT_OK(LAPI_Gfence(ot.h));
    sleep(TIMEOUT_S + 2); /* the quiet: no LAPI call */
    after_quiet(round, tcntrs, putboxes, getsrcs, rmwwords, big, small);
  }
  OT_OK(LAPI_Gfence(ot.h));
  OT_CHECK(__atomic_load_n(&rmw_word, __ATOMIC_SEQ_CST) == 2,
           "the previous task's Rmws: the word is %d, want 2", rmw_word);
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran: a live peer was declared gone");
  free(tcntrs);
  free(putboxes);
  free(getsrcs);
  free(rmwwords);
  free(big);
  free(small);
  return ot_finish("ofi_quiet");
}
