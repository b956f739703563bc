/*
 * ofi_killed.c - a core group dies in the middle of a job.
 *
 * Started by lapirun with 3 or more CGs.  After a first exchange that
 * works, the last task leaves abruptly (_exit(0): no LAPI_Term, nothing
 * said to anyone; exit code 0 so that lapirun lets the others run on).
 * The survivors, with TIMEOUT set to 3 s:
 *  - send it active messages (eager and rendezvous), puts, gets and an
 *    rmw, and wait for their completion counters: each wait must end
 *    with LAPI_ERR_TIMEOUT instead of hanging;
 *  - send it messages that get no FIN and LAPI_Fence: the fence ends;
 *  - must have heard of it through their error handler, naming the task;
 *  - get an error code from new operations to it;
 *  - still talk to each other;
 *  - terminate with LAPI_Term.
 * The alarm of ot_init turns any hang into a failure.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include "ofi_test.h"

static lapi_cntr_t tgt_cntr;

/* Entries of /dev/shm named "<pid>:..." (libfabric shm's regions). */
static int shm_region_count(pid_t pid)
{
  char prefix[32];
  int plen = snprintf(prefix, sizeof prefix, "%ld:", (long)pid);
  DIR *d = opendir("/dev/shm");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    n += strncmp(e->d_name, prefix, (size_t)plen) == 0;
  if (d)
    closedir(d);
  return n;
}

int main(void)
{
  ot_init(ot_errh_watch, 100);
  if (ot.n < 3 || ot.n > 64) {
    fprintf(stderr, "ofi_killed needs 3 to 64 CGs\n");
    return 2;
  }
  int victim = ot.n - 1;
  ot_watch = victim;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, 3));
  OT_OK(LAPI_Addr_set(ot.h, (void *)ot_hdr_inbox, 1));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **cntrs = ot_addrs(&tgt_cntr);
  void **boxes = ot_addrs(ot_inbox);

  /* A round that works. */
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  int word = ot.me;
  OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt, (void *)1, NULL, 0, &word,
                    sizeof word, cntrs[ot.tgt], &org, &cmpl));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
  OT_OK(LAPI_Gfence(ot.h));

  lapi_long_t pids[64];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)getpid(), pids));
  ot_victim_leaves(victim, pids);

  /* Operations to the victim: none can complete.  Those without a FIN
   * first make LAPI_Fence wait until the victim is declared gone. */
  lapi_cntr_t gorg;
  double t0 = ot_now_s();
  int issued = ot_issue_to_gone(victim, 20, cntrs, boxes, &org, &cmpl,
                                &gorg);
  double fenced = ot_fence_on_gone(victim, boxes);
  OT_CHECK(fenced < 40, "the fence took %.1f s", fenced);
  /* lapirun tells the survivors at once that the victim is gone; a slow
   * survivor (a sanitizer's, under load) may hear it before its first
   * call above, and then refuses them all, as it must new ones.  Then
   * there is nothing to wait for (a wait for 0 ends at once); the waits
   * on operations outstanding at the loss are also ofi_netdown's, where
   * nothing announces it. */
  if (issued == 0)
    printf("ofi_killed task %d: the victim was declared gone before the "
           "operations to it were issued; all were refused\n", ot.me);
  int rc = LAPI_Waitcntr(ot.h, &cmpl, issued, NULL);
  double waited = ot_now_s() - t0;
  OT_CHECK(rc == (issued ? LAPI_ERR_TIMEOUT : LAPI_SUCCESS),
           "Waitcntr on %d operations to a dead task returned %d", issued,
           rc);
  OT_CHECK(waited < 40, "the wait took %.1f s", waited);
  /* Not one of them (the eager ones are kept for the counts: a loss
   * must fail them, not count them landed). */
  int done_to_dead = -1;
  LAPI_Getcntr(ot.h, &cmpl, &done_to_dead);
  OT_CHECK(done_to_dead == 0, "cmpl_cntr moved %d times for a dead task",
           done_to_dead);
  /* Their memory is free again, eager or not: org_cntr counts each. */
  rc = LAPI_Waitcntr(ot.h, &org, issued, NULL);
  OT_CHECK(rc == LAPI_SUCCESS, "org_cntr did not reach the %d operations "
           "that failed (Waitcntr returned %d)", issued, rc);
  rc = LAPI_Waitcntr(ot.h, &gorg, 2, NULL);
  OT_CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr on a get from a dead task "
           "returned %d", rc);
  OT_CHECK(ot_await_watch_error(3) > 0,
           "the error handler never named task %d", victim);
  rc = LAPI_Amsend(ot.h, (uint)victim, (void *)1, NULL, 0, &word,
                   sizeof word, NULL, NULL, NULL);
  OT_CHECK(rc != LAPI_SUCCESS, "a new Amsend to the dead task succeeded");

  /* The survivors still talk: a ring over tasks 0..victim-1.  Each
   * survivor noticed the loss on its own clock: a longer TIMEOUT keeps
   * the ring's waits from giving up while a slower one catches up. */
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, 60));
  int to = (ot.me + 1) % victim;
  LAPI_Setcntr(ot.h, &cmpl, 0); /* tgt_cntr is 0: the first wait took 1 */
  /* not from ot_inbox, which the neighbour's message lands in meanwhile */
  static unsigned char ring_msg[5000];
  OT_OK(LAPI_Amsend(ot.h, (uint)to, (void *)1, NULL, 0, ring_msg,
                    sizeof ring_msg, cntrs[to], NULL, &cmpl));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));

  /* On shm the victim's 16 MiB region outlived it; lapirun removes it
   * once it has reaped the victim (ofi_shm_sweep.h). */
  const char *prov = getenv("FI_PROVIDER");
  if (prov && strcmp(prov, "shm") == 0) {
    int left = 1;
    for (int i = 0; i < 500 && left; i++) {
      left = shm_region_count((pid_t)pids[victim]);
      if (left)
        usleep(10000);
    }
    OT_CHECK(left == 0, "the dead task's shm region is still in /dev/shm");
  }

  OT_OK(LAPI_Term(ot.h));
  free(cntrs);
  free(boxes);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_killed task %d of %d: %s (waited %.1f s)\n", ot.me, ot.n,
         bad ? "FAIL" : "PASS", waited);
  return bad ? 1 : 0;
}
