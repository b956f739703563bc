/*
 * ofi_lost_data.c - a chunk of a pulled transfer lost on the way fails
 * the transfer at both ends instead of hanging.
 *
 * Two tasks, white box (links lapi_static to set the test hook).  Run
 * with LAPI_OFI_NO_RMA=1 and LAPI_OFI_CMA=0: every rendezvous is pulled
 * in packed chunks (PULL / DATA).  TIMEOUT is 3 s.
 *  1. A pulled Amsend of BIG bytes completes, no error handler runs
 *     (whatever ASK DATA a slow machine sends about it is harmless).
 *  1b. A pulled Amsend of MID bytes from a source deaf (task 0 holds
 *     ofi.lock from before its RTS leaves: amsend_held) until task 1,
 *     holding its own lock once it sees its PULLs out, has asked (ASK
 *     DATA, by hand, the watchdog kept out) and signed so (a file in
 *     /tmp).  Task 0 then answers the PULLs and the ASK (its UNKNOWN
 *     counted) and signs so; task 1, still holding its lock (what task
 *     0 sent waits unread), asks again, and only then reads.  The
 *     message completes, no error handler runs (with the mark of the
 *     newest ASK both did); the UNKNOWN echoing the older ask number to
 *     a live sink is counted stale.  Ordered by the signs alone: with
 *     sleeps instead (until session 13), a source that took its lock
 *     late on a loaded machine answered the first ASK before the second
 *     was made (1 run in 7 failed pinned to one core beside a CPU hog).
 *  2. Task 0 turns the hook on (ofi_dropdata_at, LAPI_OFI_TEST_DROP_DATA):
 *     the second DATA it sends is never posted, as if a connection lost
 *     it.  Task 1, the sink, asks task 0 about its pulls (ASK DATA,
 *     ofi_ask.c) once they stood for the ping interval (1 s); the
 *     UNKNOWN that comes back after every answer to them finds a chunk
 *     missing, and task 1 declares task 0 gone.  Task 0's Waitcntr on
 *     the cmpl_cntr must return an error, both error handlers name the
 *     other task, task 1's tgt_cntr never moves (no completion of a
 *     message with a hole), and LAPI_Term ends on both.  Without the
 *     ASK both waits hung (the alarm of ot_init fails the test).
 *  3. (OFI_LOST_DATA_OP=owed, instead of part 2) The first ASK DATA
 *     comes to a source that owes the sink a packet (task 0 counts one
 *     owed to task 1 by hand) and is not answered at once (asks_owed;
 *     its UNKNOWN is owed behind the owed packets); a
 *     DATA after it, the transfer's last, is lost (the hook).  Task 0
 *     holds its lock from before its RTS leaves (amsend_held) until
 *     task 1, holding its own once it sees PULLs out, has asked (a file
 *     in /tmp says so): no PULL is answered before the ask, so its mark
 *     is the first window's end (small chunks and a window of 2 in
 *     ctest's environment) and the lost DATA lies past it.  (Taking the
 *     lock just after the Amsend raced task 0's progress thread: on a
 *     loaded machine every PULL was answered first.)  The sink's next
 *     ASK, answered, carries the mark of everything pulled: the chunk is
 *     found lost and both ends fail as in part 2.  With the mark of the
 *     first unanswered ask kept (before LOF7 numbered the asks) it
 *     stayed frozen below the lost chunk and both waits hung.
 *  4. (OFI_LOST_DATA_OP=getdesc, instead of part 2) Task 1 gets from
 *     task 0 with a description too long to ride in the GET (ctest's
 *     small buffers): task 0, the GET's target, pulls it, and the first
 *     DATA task 1 sends is lost (the hook).  Task 0 asks about its pulls
 *     as a sink does; task 1's Waitcntr on the org_cntr returns an
 *     error.  Without that ASK both waited (task 1's ASK GET is held by
 *     the target) and hung.
 *  5. (OFI_LOST_DATA_OP=owing, instead of part 2) As part 2, but task 0
 *     owes task 1 a packet all along (counted by hand) until an
 *     UNKNOWN has answered an ASK DATA that found it owing.  That
 *     UNKNOWN is owed behind everything owed to the sink and sent once
 *     that has left (here at once: nothing real is owed).  Until
 *     session 13 every such ASK was dropped (the sink asked again each
 *     interval, and nothing was ever answered while the source owed):
 *     task 0 fails its check after 6 TIMEOUTs.
 *  6. (OFI_LOST_DATA_OP=owedfirst, instead of part 2) Nothing lost, but
 *     task 0 owes every packet (every buffer allocation fails, the
 *     LAPI_OFI_TEST_NOMEM hook by hand) from just after its RTS left
 *     (amsend_held) until task 1, which asks as soon as it sees PULLs
 *     out (as in part 3), has asked: the DATA answering those PULLs are owed when the ASK
 *     comes, and so is its UNKNOWN, behind them.  The message must
 *     complete with no error handler run: an UNKNOWN that overtook the
 *     DATA would fail a live source.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define TIMEOUT_S 3
#define BIG 300000 /* several chunks of the default 64 KiB */
#define MID (1 << 20) /* ot_inbox: 16 chunks, more than a window */

static lapi_cntr_t tgt_cntr;

/* Task 0: an Amsend of a pulled message whose RTS leaves while we hold
 * ofi.lock, so that none of the sink's PULLs is answered before we
 * unlock however the threads are scheduled (holding the lock right after
 * the call raced our progress thread: on a loaded or one-core machine it
 * could answer every PULL first).  The RTS is owed (every packet buffer
 * "fails", the LAPI_OFI_TEST_NOMEM hook) until we send it by hand under
 * the lock.  Returns with ofi.lock held. */
static void amsend_held(const void *buf, size_t len, void **cntrs,
                        lapi_cntr_t *org, lapi_cntr_t *cmpl)
{
  pthread_mutex_lock(&ofi.lock);
  ofi_nomem_every = 1;
  pthread_mutex_unlock(&ofi.lock);
  OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, (void *)buf, len,
                    cntrs[1], org, cmpl));
  pthread_mutex_lock(&ofi.lock);
  ofi_nomem_every = 0;
  ofi_send_retry(); /* the RTS (and whatever else was owed) */
}

/* Part 3's bound on each side's wait for the other: the PULLs go out
 * and the ask is made within ms of the Amsend, so a few TIMEOUTs mean it
 * will not happen (an RTS never sent, a sink that never pulled). */
#define OWED_WAIT_S (4 * TIMEOUT_S)

/* Task 1: our sink of task 0's pulled transfer once it has PULLs out,
 * returned with ofi.lock held (NULL, unlocked, if none within
 * OWED_WAIT_S: the PULLs go out within ms of the Amsend, so no RTS came
 * or nothing was pulled). */
static struct ofi_xfer *pulls_out_locked(void)
{
  double until = ot_now_s() + OWED_WAIT_S;
  for (;;) {
    pthread_mutex_lock(&ofi.lock);
    for (uint32_t s = 0; s < ofi.xcap; s++) {
      struct ofi_xfer *y = ofi.xtab[s];
      if (y && y->role == OFI_R_SINK && y->peer == 0 && !y->desc_phase &&
          y->inflight > 0)
        return y;
    }
    pthread_mutex_unlock(&ofi.lock);
    if (ot_now_s() > until)
      return NULL;
    usleep(100);
  }
}

/* Task 1, part 3 (and 6, sign 0): once its first PULLs stand (task 0
 * holds its lock, or owes every answer: none answered), asks task 0 at
 * once and signs to it. */
static void owed_sink_ask(int sign)
{
  struct ofi_xfer *x = pulls_out_locked();
  if (x == NULL) {
    /* no sign: task 0 gives up waiting for it (OWED_WAIT_S) too */
    OT_CHECK(x != NULL, "part 3: no pulled transfer from task 0 with "
             "PULLs out within %d s of the Amsend (no RTS came, or "
             "nothing was pulled): nothing asked", OWED_WAIT_S);
    return;
  }
  /* (None answered: task 0 held its lock since before its RTS left.) */
  OT_CHECK(x->issued < x->want, "part 3: %llu of %llu bytes pulled before "
           "the first ask", (unsigned long long)x->issued,
           (unsigned long long)x->want);
  x->watch_ms = 1; /* waited long: asked now */
  ofi_ask_watch(ofi_now_ms(), 1);
  uint32_t asked = x->data_ask_no;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(asked == 1, "part 3: ask number %u, want 1", (unsigned)asked);
  if (sign)
    ot_sign_give("asked");
}

/* Task 0, parts 3 and 5: a packet to task 1 counted owed by hand (+1:
 * as if it found no buffer, so an ASK DATA finds us owing; -1: paid,
 * the next ASK is answered), and from now on the drop_at-th DATA lost
 * (the LAPI_OFI_TEST_DROP_DATA hook).  Returns ofi.st.asks_owed then. */
static uint64_t owe_by_hand(int delta, int drop_at)
{
  pthread_mutex_lock(&ofi.lock);
  ofi.peers[1].owed += delta;
  if (delta > 0)
    ofi_dropdata_at = drop_at;
  uint64_t owed = ofi.st.asks_owed;
  pthread_mutex_unlock(&ofi.lock);
  return owed;
}

/* One of the transport's counts (ofi.st), read under its lock. */
static uint64_t stat_now(const uint64_t *count)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t v = *count;
  pthread_mutex_unlock(&ofi.lock);
  return v;
}

/* Task 0, part 3: the Amsend whose first ASK DATA finds a packet owed. */
static int owed_source(const unsigned char *mid, size_t len, void **cntrs)
{
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  uint64_t owed0 =
      owe_by_hand(1, (int)((len + ofi.chunk - 1) / ofi.chunk)); /* last */
  amsend_held(mid, len, cntrs, &org, &cmpl); /* no PULL answered until
                                                task 1 asked */
  /* the sink's bound, and then some */
  int sign_seen = ot_sign_take("asked", OWED_WAIT_S + 2);
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(sign_seen, "part 3: task 1 did not sign within %d s that it "
           "asked about its PULLs", OWED_WAIT_S + 2);
  uint64_t owed_asks = owed0;
  double until = ot_now_s() + 4 * TIMEOUT_S;
  while (owed_asks == owed0 && ot_now_s() < until) {
    usleep(1000); /* the ASK comes, its UNKNOWN owed */
    owed_asks = stat_now(&ofi.st.asks_owed);
  }
  OT_CHECK(owed_asks != owed0, "no ASK DATA reached the owing source "
           "within %d s", 4 * TIMEOUT_S);
  owe_by_hand(-1, 0);
  return LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
}

/* Task 0, part 5: owes task 1 a packet (by hand) while the sink asks;
 * its second DATA is lost.  The cmpl_cntr's wait result. */
static int owing_source(const unsigned char *buf, size_t len, void **cntrs)
{
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  uint64_t unknowns0 = stat_now(&ofi.st.unknowns);
  uint64_t owed0 = owe_by_hand(1, 2);
  OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, (void *)buf, len,
                    cntrs[1], &org, &cmpl));
  uint64_t owing = 0, answered = 0;
  double until = ot_now_s() + 6 * TIMEOUT_S; /* asked after 1 s */
  while ((owing == 0 || answered == 0) && ot_now_s() < until) {
    usleep(1000);
    owing = stat_now(&ofi.st.asks_owed) - owed0;
    answered = stat_now(&ofi.st.unknowns) - unknowns0;
  }
  OT_CHECK(owing > 0 && answered > 0, "part 5: no UNKNOWN answered an "
           "ASK DATA that found a packet owed to task 1 within %d s (%llu "
           "asks found it owing)", 6 * TIMEOUT_S,
           (unsigned long long)owing);
  owe_by_hand(-1, 0);
  return LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
}

/* Part 6 at task 0: owes the answers to the first PULLs, and to the
 * ASK, then pays. */
static void owedfirst_source(const unsigned char *buf, size_t len,
                             void **cntrs)
{
  lapi_cntr_t cmpl;
  LAPI_Setcntr(ot.h, &cmpl, 0);
  pthread_mutex_lock(&ofi.lock);
  uint64_t owed0 = ofi.st.asks_owed;
  pthread_mutex_unlock(&ofi.lock);
  /* Held from before the RTS leaves until every packet is owed: no PULL
   * is answered first however the threads are scheduled (set after the
   * Amsend returned, our progress thread could answer them all, and
   * "only N packets owed" failed on a loaded machine). */
  amsend_held(buf, len, cntrs, NULL, &cmpl);
  ofi_nomem_every = 1; /* every packet from now on is owed */
  pthread_mutex_unlock(&ofi.lock);
  uint64_t owing = 0;
  int owed_then = 0;
  double until = ot_now_s() + 4 * TIMEOUT_S;
  while (owing == 0 && ot_now_s() < until) {
    usleep(200);
    pthread_mutex_lock(&ofi.lock);
    owing = ofi.st.asks_owed - owed0;
    if (owing) {
      owed_then = ofi.peers[1].owed;
      /* paid from the next pass on, every other buffer still failing:
       * what is owed again goes behind, and the UNKNOWN with it */
      ofi_nomem_every = 2;
    }
    pthread_mutex_unlock(&ofi.lock);
  }
  if (owing == 0) {
    pthread_mutex_lock(&ofi.lock);
    ofi_nomem_every = 0; /* (failed below) */
    pthread_mutex_unlock(&ofi.lock);
  }
  OT_CHECK(owing > 0, "part 6: no ASK DATA came within %d s while we owed "
           "task 1 its DATA", 4 * TIMEOUT_S);
  OT_CHECK(owing == 0 || owed_then > 1, "part 6: only %d packets owed to "
           "task 1 when its ASK came: the test proves nothing", owed_then);
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  pthread_mutex_lock(&ofi.lock);
  ofi_nomem_every = 0;
  pthread_mutex_unlock(&ofi.lock);
}

/* Part 4 at task 1: a Getv of GETV_N 8-byte pieces whose first DATA
 * (the target's pull of the description) is lost. */
#define GETV_N 4096
static void getdesc_origin(unsigned char *remote)
{
  static void *t_info[GETV_N], *o_info[GETV_N];
  static ulong lens[GETV_N];
  static unsigned char dst[GETV_N * 8];
  for (int i = 0; i < GETV_N; i++) {
    t_info[i] = remote + 16 * i;
    o_info[i] = dst + 8 * i;
    lens[i] = 8;
  }
  lapi_vec_t tv = {LAPI_GEN_IOVECTOR, GETV_N, t_info, lens};
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, GETV_N, o_info, lens};
  lapi_cntr_t org;
  LAPI_Setcntr(ot.h, &org, 0);
  pthread_mutex_lock(&ofi.lock);
  ofi_dropdata_at = 1;
  pthread_mutex_unlock(&ofi.lock);
  OT_OK(LAPI_Getv(ot.h, 0, &tv, &ov, NULL, &org));
  int rc = LAPI_Waitcntr(ot.h, &org, 1, NULL);
  OT_CHECK(rc != LAPI_SUCCESS, "Waitcntr on the org_cntr of a Getv whose "
           "description was lost returned success");
  pthread_mutex_lock(&ofi.lock);
  int hook_left = ofi_dropdata_at;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(hook_left == 0, "the test hook dropped nothing");
}

/* Part 2 or 3 at the source: its wait failed, and the hook dropped. */
static void source_failed(int rc)
{
  OT_CHECK(rc != LAPI_SUCCESS, "Waitcntr on the cmpl_cntr of a transfer "
           "that lost a chunk returned success");
  fprintf(stderr, "task 0: Waitcntr returned %d\n", rc);
  pthread_mutex_lock(&ofi.lock);
  int hook_left = ofi_dropdata_at;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(hook_left == 0, "the test hook dropped nothing");
}

int main(void)
{
  ot_init(ot_errh_watch, 120);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_lost_data needs 2 CGs\n");
    return 2;
  }
  ot_watch = 1 - ot.me;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **cntrs = ot_addrs(&tgt_cntr);
  static unsigned char src[BIG];
  memset(src, 9, sizeof src);
  lapi_cntr_t org, cmpl;

  /* Part 1: pulled and complete. */
  if (ot.me == 0) {
    LAPI_Setcntr(ot.h, &cmpl, 0);
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, BIG, cntrs[1],
                      NULL, &cmpl));
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
    OT_CHECK(ot_inbox[0] == 9 && ot_inbox[BIG - 1] == 9,
             "the pulled message's bytes are wrong");
  }
  OT_OK(LAPI_Gfence(ot.h));
  OT_CHECK(__atomic_load_n(&ot_errs_from_watch, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran for a complete transfer");

  /* Part 1b: a source that reads nothing for a while (a long handler, a
   * polling task computing) while the sink asked again: the UNKNOWN to
   * the older ASK comes after the newer one left.  Each step waits for
   * the other task's sign, none for a time (sleeps here failed on a
   * loaded machine: a source that took its lock late answered the first
   * ASK before the second was made). */
  static unsigned char mid[MID];
  memset(mid, 7, sizeof mid);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    LAPI_Setcntr(ot.h, &cmpl, 0);
    uint64_t unknowns0 = stat_now(&ofi.st.unknowns);
    amsend_held(mid, MID, cntrs, NULL, &cmpl); /* deaf to PULLs, ASKs */
    int asked = ot_sign_take("asked", OWED_WAIT_S + 2);
    pthread_mutex_unlock(&ofi.lock); /* the PULLs and the ASK answered */
    OT_CHECK(asked, "part 1b: task 1 did not sign within %d s that it "
             "asked about its PULLs", OWED_WAIT_S + 2);
    uint64_t answered = 0;
    double until = ot_now_s() + OWED_WAIT_S;
    while (asked && answered == 0 && ot_now_s() < until) {
      usleep(1000);
      answered = stat_now(&ofi.st.unknowns) - unknowns0;
    }
    OT_CHECK(!asked || answered > 0, "part 1b: task 1's ASK DATA got no "
             "UNKNOWN from us within %d s", OWED_WAIT_S);
    ot_sign_give("answered");
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  } else {
    int64_t fake = ofi_now_ms() + 1000000; /* the watchdog stays out */
    pthread_mutex_lock(&ofi.lock);
    uint64_t stale0 = ofi.st.stale_pkts;
    pthread_mutex_unlock(&ofi.lock);
    struct ofi_xfer *x = pulls_out_locked(); /* none answered: task 0 is
                                                deaf */
    int seen = x != NULL;
    OT_CHECK(seen, "part 1b: no PULLs out within %d s of the Amsend",
             OWED_WAIT_S);
    if (seen) { /* held from here: what task 0 sends waits unread */
      ofi_ask_watch(fake, 1); /* (sets watch_ms if not set yet) */
      ofi_ask_watch(fake + 1, 1); /* ASK 1 */
      uint32_t first = x->data_ask_no;
      ot_sign_give("asked");
      int answered = ot_sign_take("answered", 2 * OWED_WAIT_S + 2);
      OT_CHECK(answered, "part 1b: task 0 did not sign that it answered "
               "our ASK DATA");
      ofi_ask_watch(fake + 2, 1); /* ASK 2: before the UNKNOWN is read */
      OT_CHECK(x->data_ask_no != first, "part 1b: no second ASK DATA "
               "(ask number still %u)", (unsigned)first);
      pthread_mutex_unlock(&ofi.lock);
    }
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
    OT_CHECK(ot_inbox[0] == 7 && ot_inbox[MID - 1] == 7,
             "the pulled message's bytes are wrong");
    /* The first ASK's UNKNOWN came after the second ASK left: the sink
     * was live, its newest ask number 2. */
    pthread_mutex_lock(&ofi.lock);
    uint64_t stale = ofi.st.stale_pkts - stale0;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(!seen || stale >= 1, "the UNKNOWN of the older ask was not "
             "counted stale");
  }
  OT_OK(LAPI_Gfence(ot.h));
  OT_CHECK(__atomic_load_n(&ot_errs_from_watch, __ATOMIC_SEQ_CST) == 0,
           "a transfer pulled from a slow source was declared lost");

  const char *op = getenv("OFI_LOST_DATA_OP");
  if (op && strcmp(op, "owedfirst") == 0) {
    /* Part 6: nothing lost; answers owed when the ASK came. */
    memset(mid, 5, sizeof mid); /* not part 1b's bytes */
    if (ot.me == 0) {
      owedfirst_source(mid, MID, cntrs);
    } else {
      owed_sink_ask(0);
      OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
      OT_CHECK(ot_inbox[0] == 5 && ot_inbox[MID - 1] == 5,
               "part 6: the pulled message's bytes are wrong");
    }
    OT_OK(LAPI_Gfence(ot.h));
    OT_CHECK(__atomic_load_n(&ot_errs_from_watch, __ATOMIC_SEQ_CST) == 0,
             "part 6: a live source whose answers were owed when the sink "
             "asked was declared lost");
    free(cntrs);
    return ot_finish("ofi_lost_data (owedfirst)");
  }
  /* Part 2: its second chunk lost (part 3: its last, past an ask an
   * owing source dropped). */
  int owed = op && strcmp(op, "owed") == 0;
  int getdesc = op && strcmp(op, "getdesc") == 0;
  int owing = op && strcmp(op, "owing") == 0;
  void **srcs = getdesc ? ot_addrs(src) : NULL;
  double t0 = ot_now_s(), waited = 0;
  if (getdesc && ot.me == 1) {
    getdesc_origin(srcs[0]);
  } else if (getdesc) {
    /* the GET's target: its error handler names task 1 */
  } else if (owed && ot.me == 0) {
    int rc = owed_source(mid, MID, cntrs);
    source_failed(rc);
  } else if (owed) {
    owed_sink_ask(1);
  } else if (owing && ot.me == 0) {
    source_failed(owing_source(src, BIG, cntrs));
  } else if (owing) {
    /* the sink: its ASK DATA find the source owing */
  } else if (ot.me == 0) {
    pthread_mutex_lock(&ofi.lock);
    ofi_dropdata_at = 2;
    pthread_mutex_unlock(&ofi.lock);
    LAPI_Setcntr(ot.h, &org, 0);
    LAPI_Setcntr(ot.h, &cmpl, 0);
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, BIG, cntrs[1], &org,
                      &cmpl));
    int rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
    source_failed(rc);
  }
  OT_CHECK(ot_await_watch_error(6 * TIMEOUT_S) > 0,
           "the error handler never named task %d", 1 - ot.me);
  waited = ot_now_s() - t0;
  fprintf(stderr, "task %d: the lost chunk failed the transfer after "
          "%.1f s\n", ot.me, waited);
  if (ot.me == 1) {
    int got = ot_cntr(&tgt_cntr);
    OT_CHECK(got == 0, "tgt_cntr is %d: a message with a hole completed",
             got); /* (part 1's Waitcntr took its 1) */
  }
  free(cntrs);
  free(srcs);
  return ot_finish_fault("ofi_lost_data", waited, 4 * TIMEOUT_S);
}
