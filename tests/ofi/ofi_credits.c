/*
 * ofi_credits.c - an origin never has more unfinished requests at a
 * target than LAPI_OFI_CREDITS (docs/PROTOCOL.md, "Flow control"): the
 * rest wait at the origin, their memory in place and their org_cntr
 * unmoved, and start as credits come back.
 *
 * Task 0 sends task 1 MSGS small Amsends with org_cntr alone (no-FIN
 * SHORTs, each of which needs a credit).  The first header handler to
 * run at task 1 sleeps STALL_S; handlers of a handle run one at a time,
 * so no message ends there meanwhile and no credit comes back.  Task 0
 * watches its org_cntr for most of the stall: it may pass CREDITS (the
 * ctest sets LAPI_OFI_CREDITS) only by the messages that ended before
 * the stall began (LAPI orders no messages: a few may overtake the one
 * that stalls), which task 1 counts and tells at the end.  Then every
 * message must land once, with its own bytes, and org_cntr reach MSGS.
 * Fails if the origin sends without a credit (the counter runs past
 * that bound, to MSGS) or loses or duplicates a message waiting for one.
 */
#include "ofi_test.h"

#define MSGS 200
#define LEN 48
#define CREDITS 16 /* LAPI_OFI_CREDITS, set by the ctest */
#define STALL_S 1.5

static unsigned char inbox[MSGS][LEN];
static int landed[MSGS]; /* atomic */
static int handled;      /* atomic: header handlers run */
static int stalled;      /* atomic: the stall began */
static int before_stall; /* handlers that ran before it */
static lapi_cntr_t tgt;

struct uh {
  int seq;
};

static void *to_inbox(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  const struct uh *u = uhdr;
  *comp_h = NULL;
  *uinfo = NULL;
  OT_CHECK(u->seq >= 0 && u->seq < MSGS && *msg_len == LEN,
           "message %d of %lu bytes", u->seq, (unsigned long)*msg_len);
  if (u->seq < 0 || u->seq >= MSGS)
    return NULL;
  if (__atomic_exchange_n(&stalled, 1, __ATOMIC_SEQ_CST) == 0) {
    before_stall = __atomic_load_n(&handled, __ATOMIC_SEQ_CST);
    usleep((useconds_t)(STALL_S * 1e6));
  }
  __atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&landed[u->seq], 1, __ATOMIC_SEQ_CST);
  return inbox[u->seq];
}

int main(void)
{
  const char *env = getenv("LAPI_OFI_CREDITS");
  if (env == NULL || atoi(env) != CREDITS) {
    fprintf(stderr, "ofi_credits: run with LAPI_OFI_CREDITS=%d\n", CREDITS);
    return 2;
  }
  ot_init(NULL, 60);
  int most = 0;
  OT_OK(LAPI_Addr_set(ot.h, (void *)to_inbox, 1));
  OT_OK(LAPI_Setcntr(ot.h, &tgt, 0));
  void **tcntrs = ot_addrs(&tgt);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    static unsigned char data[MSGS][LEN];
    lapi_cntr_t org;
    OT_OK(LAPI_Setcntr(ot.h, &org, 0));
    double t0 = ot_now_s();
    for (int i = 0; i < MSGS; i++) {
      struct uh u = {i};
      ot_fill(data[i], LEN, (uint32_t)i);
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, &u, sizeof u, data[i], LEN,
                        tcntrs[1], &org, NULL));
    }
    /* While the first handler sleeps: nothing ends, no credit returns. */
    while (ot_now_s() - t0 < STALL_S * 0.7) {
      OT_OK(LAPI_Probe(ot.h));
      int v = ot_cntr(&org);
      most = v > most ? v : most;
      usleep(1000);
    }
    OT_CHECK(most >= 1, "org_cntr never moved: nothing was sent");
    OT_OK(LAPI_Waitcntr(ot.h, &org, MSGS, NULL));
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt, MSGS, NULL));
    for (int i = 0; i < MSGS; i++) {
      int n = __atomic_load_n(&landed[i], __ATOMIC_SEQ_CST);
      OT_CHECK(n == 1, "message %d landed %d times", i, n);
      OT_CHECK(ot_verify(inbox[i], LEN, (uint32_t)i) == LEN,
               "message %d: wrong bytes", i);
    }
  }
  lapi_long_t said[2];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)before_stall, said));
  if (ot.me == 0) {
    int before = (int)said[1];
    printf("ofi_credits: org_cntr at most %d of %d during the stall "
           "(credits %d, %d ended before it)\n", most, MSGS, CREDITS,
           before);
    OT_CHECK(most <= CREDITS + before, "org_cntr reached %d with %d "
             "credits and %d messages ended: sent without a credit", most,
             CREDITS, before);
  }
  free(tcntrs);
  return ot_finish("ofi_credits");
}
