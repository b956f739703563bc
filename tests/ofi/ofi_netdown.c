/*
 * ofi_netdown.c - the network between two core groups goes away.
 *
 * Started by tests/ofi/netns.sh: two CGs in two network namespaces joined
 * by a veth pair (the interface is lapi0 in both), over tcp;ofi_rxm.
 * After a first exchange that works, task 1 takes its end of the pair
 * down.  Nobody dies: both processes keep running, and neither can reach
 * the other.  Each side, with TIMEOUT set to 3 s:
 *  - sends the other active messages (eager and rendezvous), a put, a get
 *    and an rmw, and waits for their counters: each wait must end with
 *    LAPI_ERR_TIMEOUT within a bounded time instead of hanging;
 *  - sends it messages that get no FIN and calls LAPI_Fence: it ends;
 *  - must have heard of it through its error handler, naming the peer;
 *  - gets an error code from a new operation to the peer.
 * Then task 1 brings its link back (the bootstrap's own connection to
 * lapirun runs over it too) and both terminate with LAPI_Term.  The alarm
 * of ot_init turns any hang into a failure.
 */
#include <time.h>

#include "ofi_test.h"

#define TIMEOUT_S 3

static lapi_cntr_t tgt_cntr;
static int link_set(const char *state)
{
  const char *dev = getenv("LAPI_TEST_IFACE");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "ip link set %s %s", dev ? dev : "lapi0", state);
  return system(cmd);
}

int main(void)
{
  ot_init(ot_errh_watch, 120);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_netdown needs 2 CGs\n");
    return 2;
  }
  int peer = 1 - ot.me;
  ot_watch = peer;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **cntrs = ot_addrs(&tgt_cntr);
  void **boxes = ot_addrs(ot_inbox);

  /* A round that works. */
  lapi_cntr_t org, cmpl, gorg;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  LAPI_Setcntr(ot.h, &gorg, 0);
  int word = ot.me;
  OT_OK(LAPI_Amsend(ot.h, (uint)peer, (void *)1, NULL, 0, &word,
                    sizeof word, cntrs[peer], &org, &cmpl));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
  OT_OK(LAPI_Gfence(ot.h));

  /* The network goes away; task 0 gives it a moment to be gone. */
  if (ot.me == 1) {
    int rc = link_set("down");
    OT_CHECK(rc == 0, "ip link set down failed (%d)", rc);
  } else {
    usleep(500000);
  }

  double t0 = ot_now_s();
  int issued = ot_issue_to_gone(peer, 8, cntrs, boxes, &org, &cmpl, &gorg);
  /* Messages without a FIN over the dead link: LAPI_Fence ends. */
  double fenced = ot_fence_on_gone(peer, boxes);
  OT_CHECK(fenced < 8 * TIMEOUT_S, "the fence took %.1f s", fenced);
  int rc = LAPI_Waitcntr(ot.h, &cmpl, issued, NULL);
  double waited = ot_now_s() - t0;
  OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr on operations over a network "
           "that went away returned %d", rc);
  /* Silence for TIMEOUT declares the peer gone, then the wait has its
   * TIMEOUT too: a bound with room for a loaded machine. */
  OT_CHECK(waited < 8 * TIMEOUT_S, "the wait took %.1f s", waited);
  rc = LAPI_Waitcntr(ot.h, &gorg, 2, NULL);
  OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr on a get and an rmw returned "
           "%d", rc);
  OT_CHECK(ot_await_watch_error(3) > 0,
           "the error handler never named task %d", peer);
  rc = LAPI_Amsend(ot.h, (uint)peer, (void *)1, NULL, 0, &word,
                   sizeof word, NULL, NULL, NULL);
  OT_CHECK(rc != LAPI_SUCCESS, "a new Amsend to the unreachable task "
           "succeeded");

  /* The bootstrap's barrier of LAPI_Term runs through lapirun, whose
   * exchange is reached over the same link. */
  if (ot.me == 1) {
    int up = link_set("up");
    OT_CHECK(up == 0, "ip link set up failed (%d)", up);
  }
  OT_OK(LAPI_Term(ot.h));
  free(cntrs);
  free(boxes);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_netdown task %d of %d (waited %.1f s): %s\n", ot.me, ot.n,
         waited, bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}
