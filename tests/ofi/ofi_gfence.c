/*
 * ofi_gfence.c - LAPI_Gfence between core groups: the barrier over the
 * network (src/transport/ofi/ofi_barrier.c).
 *
 * ofi_gfence [ROUNDS]: on two handles at once, ROUNDS rounds of: every
 * task puts the round's number into its own slot of every other task's
 * table (no counter: only the fence says it landed), one task of the
 * round (a different one each time) first sleeps up to 2 ms so the
 * others enter early and run ahead into the next barrier's rounds, then
 * LAPI_Gfence; after it every slot of the round must hold the round's
 * number.  Two tables by the round's parity: a task one round ahead
 * writes the other.  The handles' barriers alternate, so their numbers
 * and packets must stay apart.  A barrier that let anybody through early
 * leaves an old number in a slot; one that loses a packet hangs (the
 * alarm).  Then ROUNDS x 8 Gfences back to back, a task now and then
 * a little late.
 *
 * ofi_gfence killed: with 3 or more CGs, the last task leaves without a
 * word before a Gfence.  Every survivor's Gfence must fail (LAPI
 * error, within TIMEOUT and bounds, not a hang), the next one at once,
 * and LAPI_Term must still work.
 *
 * Before the rounds each task runs (ofi_test_arrival) two BARRIERs
 * marked FAIL as if from the next task, naming barriers two before and
 * two after its own: no CG is ever that far from another, so they are
 * stale (counted) and must break nothing: the rounds' Gfences succeed.
 *
 * White box: every Gfence of the rounds must have sent one BARRIER per
 * round of the dissemination (ceil(log2 N)), so a barrier that fell back
 * to the job's exchange (correct, 100x slower) fails the test too.
 */
#include <signal.h>
#include <sys/types.h>

#include "ofi_test.h"
#include "transport/ofi/ofi.h"

#define MAX_TASKS 64

static uint32_t table[2][2][MAX_TASKS]; /* [handle][parity][task] */

static uint64_t barrier_rounds_sent(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t n = ofi.st.barrier_rounds;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

static void rounds(long n_rounds)
{
  lapi_handle_t h2;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  OT_OK(LAPI_Init(&h2, &info));
  lapi_handle_t hs[2] = {ot.h, h2};
  void **tabs[2];
  for (int k = 0; k < 2; k++) {
    tabs[k] = calloc((size_t)ot.n, sizeof *tabs[k]);
    OT_OK(LAPI_Address_init(hs[k], table[k], tabs[k]));
  }
  uint64_t sent0 = barrier_rounds_sent();
  long gfences = 0;
  for (long r = 1; r <= n_rounds; r++) {
    int par = (int)(r & 1);
    uint32_t v = (uint32_t)r;
    for (int k = 0; k < 2; k++) {
      for (int t = 0; t < ot.n; t++) {
        if (t == ot.me)
          continue;
        uint32_t *dst = (uint32_t *)tabs[k][t] + par * MAX_TASKS + ot.me;
        OT_OK(LAPI_Put(hs[k], (uint)t, sizeof v, dst, &v, NULL, NULL,
                       NULL));
      }
    }
    if (r % ot.n == ot.me)
      usleep((useconds_t)(r * 7919 % 2000)); /* late: the others run ahead */
    for (int k = 0; k < 2; k++) {
      OT_OK(LAPI_Gfence(hs[k]));
      gfences++;
      for (int t = 0; t < ot.n; t++) {
        uint32_t got = __atomic_load_n(&table[k][par][t], __ATOMIC_ACQUIRE);
        OT_CHECK(t == ot.me || got == v,
                 "handle %d, round %ld: task %d's put says %u after the "
                 "Gfence", k, r, t, got);
      }
    }
    if (__atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST) > 10)
      break;
  }
  /* Back to back, a task now and then a little late: a CG that leaves a
   * barrier sends the next one's first round at once, often before its
   * partner has finished this one (kept apart by parity, or the partner
   * would take it for this one's, or clear it away and wait for ever). */
  for (long i = 0; i < n_rounds * 8; i++) {
    if ((i * 31 + ot.me * 17) % 53 == 0)
      usleep((useconds_t)(i % 200));
    OT_OK(LAPI_Gfence(i % 5 == 4 ? h2 : ot.h));
    gfences++;
  }
  unsigned per = 0;
  while ((1u << per) < (unsigned)ot.n)
    per++;
  uint64_t sent = barrier_rounds_sent() - sent0;
  OT_CHECK(sent == (uint64_t)gfences * per, "%ld Gfences of %d CGs sent %llu "
           "BARRIER rounds, want %ld (did they go through the exchange?)",
           gfences, ot.n, (unsigned long long)sent, gfences * (long)per);
  OT_OK(LAPI_Term(h2));
  for (int k = 0; k < 2; k++)
    free(tabs[k]);
}

/* FAILs of barriers no CG can be in, as if from the next task. */
static void stale_fails(void)
{
  if (ot.n < 2)
    return;
  OT_OK(LAPI_Gfence(ot.h));
  pthread_mutex_lock(&ofi.lock);
  uint32_t seq = ofi.bar[ot.h].seq;
  uint64_t stale0 = ofi.st.stale_pkts;
  uint32_t acked = ofi.peers[ot.tgt].nf_acked;
  pthread_mutex_unlock(&ofi.lock);
  for (int k = 0; k < 2; k++) {
    struct ofi_hdr hd;
    uint32_t s = k ? seq + 2 : seq - 2;
    ofi_hdr_init(&hd, OFI_M_BARRIER, lapi_hndl_key(0, ot.h),
                 (uint64_t)s << 8 | 0x80, sizeof hd);
    hd.src = (uint32_t)ot.tgt;
    hd.ack_done = hd.ack_seq = acked;
    OT_CHECK(ofi_test_arrival(&hd, sizeof hd, 0) == 0, "a forged FAIL "
             "could not be run");
  }
  pthread_mutex_lock(&ofi.lock);
  uint64_t stale = ofi.st.stale_pkts - stale0;
  uint broken = ofi.bar[ot.h].broken;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(stale == 2 && broken == 0, "FAILs of barriers %u and %u (ours "
           "%u): %llu counted stale, barrier broken by %u: want 2 and "
           "none", seq - 2, seq + 2, seq, (unsigned long long)stale,
           broken);
}

static void killed(void)
{
  if (ot.n < 3 || ot.n > MAX_TASKS) {
    fprintf(stderr, "ofi_gfence killed needs 3 to %d CGs\n", MAX_TASKS);
    exit(2);
  }
  int victim = ot.n - 1;
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, 3));
  OT_OK(LAPI_Gfence(ot.h)); /* one that works */
  lapi_long_t pids[MAX_TASKS];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)getpid(), pids));
  ot_victim_leaves(victim, pids);
  double t0 = ot_now_s();
  int rc = LAPI_Gfence(ot.h);
  double took = ot_now_s() - t0;
  OT_CHECK(rc != LAPI_SUCCESS, "LAPI_Gfence with task %d gone succeeded",
           victim);
  OT_CHECK(took < 40, "the failed Gfence took %.1f s", took);
  t0 = ot_now_s();
  rc = LAPI_Gfence(ot.h);
  OT_CHECK(rc != LAPI_SUCCESS, "a second Gfence after the loss succeeded");
  OT_CHECK(ot_now_s() - t0 < 1, "the second Gfence took %.1f s, not at once",
           ot_now_s() - t0);
  OT_OK(LAPI_Term(ot.h));
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("ofi_gfence killed task %d of %d: %s (failed after %.1f s)\n", ot.me,
         ot.n, bad ? "FAIL" : "PASS", took);
  exit(bad ? 1 : 0);
}

static void quiet_errh(lapi_handle_t *h, int *code, lapi_err_t *type,
                       int *task, int *src)
{
  (void)h, (void)code, (void)type, (void)task, (void)src; /* expected */
}

int main(int argc, char **argv)
{
  int kill_mode = argc > 1 && strcmp(argv[1], "killed") == 0;
  ot_init(kill_mode ? quiet_errh : NULL, 100);
  if (ot.n > MAX_TASKS) {
    fprintf(stderr, "ofi_gfence: at most %d CGs\n", MAX_TASKS);
    return 2;
  }
  if (kill_mode)
    killed();
  stale_fails();
  rounds(argc > 1 ? atol(argv[1]) : 400);
  return ot_finish("ofi_gfence");
}
