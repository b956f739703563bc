/*
 * ofi_direct.c - small Amsends in polling mode, delivered by the thread
 * that polls them in (src/transport/ofi/ofi_direct.c) or through the
 * handle's queue, must behave the same.
 *
 * Every task pairs with its ring neighbours.  Phase 1 ping-pongs small
 * Amsends (user header and data checked in the header handler and after
 * the wait), every third with a completion handler, every fifth answered
 * by a header handler that returns NULL (data discarded, tgt_cntr still
 * moves), every seventh dropped once with LAPI_DROP_PKT and delivered
 * when it comes again.  Phase 2 sends a burst of 400 to the neighbour
 * without waiting in between (most find the thread's slot busy and take
 * the queue).  At the end the transport's count of direct deliveries is
 * checked: above zero for the tasks of phase 1, or zero with
 * LAPI_OFI_DIRECT=0 in the environment.  With OFI_DIRECT_INTERRUPT=1 the
 * handle stays in interrupt mode: the waiter delivers what it reads
 * while the dispatcher runs the rest, and the same checks hold.
 * Phases 3 and 4 check that the polling registrations that waits leave
 * behind all end once nobody waits: two threads' at once, and 70
 * short-lived threads' one after another (more than the transport has
 * slots for).  Phase 1's handlers also look at the handle's count of
 * polling waiters (lapi_wait_tight): in polling mode no wait counts
 * itself (nothing reads the count there), in interrupt mode the waiter
 * that delivers what it reads does (posts skip the dispatcher's doorbell
 * for it).
 */
#include "ofi_test.h"

#include <pthread.h>

#include "am/lapi_am.h"
#include "transport/ofi/ofi.h"

#define ROUNDS 1500
#define BURST 400
#define DATA 24
#define BIG 3000 /* every 4th round of phase 1: a SHORT of ~3 KiB */

/* Phase 1's message length in round r. */
static size_t pp_len(int r) { return r % 4 == 2 ? BIG : DATA; }

static char got_data[BURST][DATA]; /* phase 2: each message's slot */
static char pp_buf[BIG];        /* phase 1 landing buffer */
static int cmpl_runs;           /* atomic */
static int dropped[ROUNDS + 1]; /* phase 1: rounds dropped once */
static int phase2;
static int counted_runs, uncounted_runs; /* atomic: phase 1's handlers */

static void on_cmpl(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  OT_CHECK((intptr_t)uinfo % 3 == 0, "completion uinfo %ld",
           (long)(intptr_t)uinfo);
  __atomic_add_fetch(&cmpl_runs, 1, __ATOMIC_SEQ_CST);
}

static void *hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                 ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  struct ot_uh u;
  OT_CHECK(*uhdr_len == sizeof u, "uhdr_len %u", *uhdr_len);
  memcpy(&u, uhdr, sizeof u);
  OT_CHECK(u.from == ot.src || u.from == ot.tgt, "from %d", u.from);
  OT_CHECK(*msg_len == (phase2 ? DATA : pp_len(u.round)), "msg_len %lu "
           "in round %d", *msg_len, u.round);
  *comp_h = NULL;
  *uinfo = NULL;
  if (phase2) {
    OT_CHECK(u.round >= 0 && u.round < BURST, "burst round %d", u.round);
    return u.round >= 0 && u.round < BURST ? (void *)got_data[u.round]
                                           : NULL;
  }
  struct lapi_hndl *hs = lapi_hndl_get(*h);
  OT_CHECK(hs != NULL, "handle %u in its own header handler", *h);
  if (hs)
    __atomic_add_fetch(__atomic_load_n(&hs->tight_waiters, __ATOMIC_SEQ_CST)
                           ? &counted_runs
                           : &uncounted_runs,
                       1, __ATOMIC_SEQ_CST);
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  if (u.round % 7 == 6 && u.round <= ROUNDS && !dropped[u.round]) {
    dropped[u.round] = 1; /* handlers of a handle run one at a time */
    ri->ctl_flags = LAPI_DROP_PKT;
    return NULL;
  }
  if (u.round % 3 == 0) {
    *comp_h = on_cmpl;
    *uinfo = (void *)(intptr_t)u.round;
  }
  return u.round % 5 == 4 ? NULL : pp_buf;
}

/* The origin's memory stays untouched until org_cntr says it may be
 * reused (a message that waits for a credit is packed later): one user
 * header and buffer per message of a burst, waited for at the end. */
static struct ot_uh out_uh[BURST];
static char out_data[BURST][BIG];

/* Phase 3: the counters two threads of a task wait on. */
#define TWIN_WAITS 300
static lapi_cntr_t twin[2];
static void **twins[2];

static void *twin_wait(void *arg)
{
  long k = (long)arg;
  for (int i = 0; i < TWIN_WAITS; i++)
    OT_OK(LAPI_Waitcntr(ot.h, &twin[k], 1, NULL));
  return NULL;
}

static void send_one(int to, int round, lapi_cntr_t *tgt_cntr,
                     lapi_cntr_t *org_cntr)
{
  int k = round % BURST;
  ot_send_numbered(to, round, &out_uh[k], out_data[k], DATA, tgt_cntr,
                   org_cntr);
}

/* Phase 1's message of round r. */
static void send_pp(int to, int round, lapi_cntr_t *tgt_cntr,
                    lapi_cntr_t *org_cntr)
{
  ot_send_numbered(to, round, &out_uh[0], out_data[0], pp_len(round),
                   tgt_cntr, org_cntr);
}

/* Phase 4: one short-lived thread after another, more of them than the
 * transport keeps registration slots for (LINGER_SLOTS, 64): each says
 * it is ready, then waits for the partner's answer. */
#define ONE_WAIT_THREADS 70
static int one_wait_partner;

static void *one_wait(void *arg)
{
  int r = (int)(long)arg;
  send_one(one_wait_partner, r % BURST, twins[1][one_wait_partner], NULL);
  OT_OK(LAPI_Waitcntr(ot.h, &twin[0], 1, NULL));
  return NULL;
}

static void registrations_end(const char *after)
{
  int reg = -1;
  for (int ms = 0; ms < 2000 && (reg = ofi_tight_registered()) != 0; ms += 10)
    usleep(10000); /* no LAPI call meanwhile: the progress thread ends
                      what was left */
  OT_CHECK(reg == 0, "%d polling registrations left with nobody waiting "
           "after %s", reg, after);
}

int main(void)
{
  ot_init(NULL, 120);
  const char *intr = getenv("OFI_DIRECT_INTERRUPT");
  const int interrupt = intr && strcmp(intr, "1") == 0;
  const char *off = getenv("LAPI_OFI_DIRECT");
  const int direct_off = off && strcmp(off, "0") == 0;
  if (!interrupt)
    OT_OK(LAPI_Senv(ot.h, INTERRUPT_SET, 0));
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr, 1));
  lapi_cntr_t tc, oc;
  OT_OK(LAPI_Setcntr(ot.h, &tc, 0));
  OT_OK(LAPI_Setcntr(ot.h, &oc, 0));
  void **tcs = ot_addrs(&tc);
  OT_OK(LAPI_Gfence(ot.h));

  /* Phase 1: even tasks start, odd ones answer (pairs 0-1, 2-3, ...;
   * an odd-sized job leaves the last task out). */
  int partner = ot.me % 2 ? ot.me - 1 : ot.me + 1;
  int expect_cmpl = 0;
  if (partner < ot.n) {
    for (int r = 1; r <= ROUNDS; r++) {
      if (ot.me % 2 == 0) {
        send_pp(partner, r, tcs[partner], &oc);
        OT_OK(LAPI_Waitcntr(ot.h, &oc, 1, NULL));
      }
      OT_OK(LAPI_Waitcntr(ot.h, &tc, 1, NULL));
      if (r % 5 != 4) {
        OT_CHECK(ot_numbered_ok(pp_buf, pp_len(r), r, partner),
                 "round %d data", r);
      }
      memset(pp_buf, 0, sizeof pp_buf);
      expect_cmpl += r % 3 == 0;
      if (ot.me % 2 == 1) {
        send_pp(partner, r, tcs[partner], &oc);
        OT_OK(LAPI_Waitcntr(ot.h, &oc, 1, NULL));
      }
    }
  }
  if (partner < ot.n) {
    /* Right after the last wait: a direct delivery's statistics may be
     * owed to the next holder of the transport's lock, and the query
     * must settle them. */
    lapi_statistics_t st;
    memset(&st, 0, sizeof st);
    OT_OK(LAPI_Qenv(ot.h, QUERY_STATISTICS, (int *)(void *)&st));
    /* Rounds r % 5 == 4 are discarded (0 bytes). */
    unsigned long long want_bytes = 0;
    for (int r = 1; r <= ROUNDS; r++)
      want_bytes += r % 5 == 4 ? 0 : pp_len(r);
    OT_CHECK(st.Tot_pkt_recv_cnt >= ROUNDS && st.Tot_data_recv >= want_bytes,
             "statistics after the ping-pong: %llu messages, %llu bytes "
             "received, want >= %d and >= %llu",
             (unsigned long long)st.Tot_pkt_recv_cnt,
             (unsigned long long)st.Tot_data_recv, ROUNDS, want_bytes);
  }
  OT_CHECK(__atomic_load_n(&cmpl_runs, __ATOMIC_SEQ_CST) == expect_cmpl,
           "completion handlers %d, want %d", cmpl_runs, expect_cmpl);
  if (!interrupt)
    OT_CHECK(counted_runs == 0, "%d of %d handlers saw a polling waiter "
             "counted in polling mode", counted_runs,
             counted_runs + uncounted_runs);
  else if (partner < ot.n && !direct_off)
    OT_CHECK(counted_runs > 0, "no handler saw its waiter counted in "
             "interrupt mode (%d runs)", uncounted_runs);
  OT_OK(LAPI_Gfence(ot.h));

  /* Phase 2: a burst around the ring, then one wait for all of it. */
  phase2 = 1;
  OT_OK(LAPI_Gfence(ot.h));
  for (int r = 0; r < BURST; r++)
    send_one(ot.tgt, r, tcs[ot.tgt], &oc);
  OT_OK(LAPI_Waitcntr(ot.h, &tc, BURST, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &oc, BURST, NULL));
  for (int r = 0; r < BURST; r++) {
    OT_CHECK(ot_numbered_ok(got_data[r], DATA, r, ot.src),
             "burst message %d", r);
  }
  int left = -1;
  OT_OK(LAPI_Getcntr(ot.h, &tc, &left));
  OT_CHECK(left == 0, "tgt_cntr %d after every wait", left);

  pthread_mutex_lock(&ofi.lock);
  unsigned long long direct = ofi.st.direct;
  size_t largest = ofi.st.direct_largest;
  pthread_mutex_unlock(&ofi.lock);
  if (direct_off) {
    OT_CHECK(direct == 0, "%llu direct deliveries though turned off",
             direct);
  } else if (partner < ot.n) { /* the ping-pong: our wait reads each one */
    OT_CHECK(direct > 0, "no direct delivery in %s mode",
             interrupt ? "interrupt" : "polling");
    /* ~3 KiB SHORTs too (a slot holds every SHORT of shm) */
    OT_CHECK(largest > BIG, "the longest packet delivered directly had "
             "%zu bytes, want a %d-byte message's", largest, BIG);
  }
  fprintf(stderr, "task %d: %llu messages delivered directly\n", ot.me,
          direct);
  free(tcs);

  /* Phase 3: two threads of each odd task wait, each on its own
   * counter, while the even partner sends to both in turn: each wait
   * that ends leaves its registration behind (polling mode), often two
   * at once.  Once nobody waits, every one of them must end, or peers
   * would never ring this process again. */
  OT_OK(LAPI_Gfence(ot.h));
  for (int k = 0; k < 2; k++) {
    OT_OK(LAPI_Setcntr(ot.h, &twin[k], 0));
    twins[k] = ot_addrs(&twin[k]);
  }
  if (partner < ot.n && ot.me % 2 == 1) {
    pthread_t th[2];
    for (long k = 0; k < 2; k++)
      pthread_create(&th[k], NULL, twin_wait, (void *)k);
    for (int k = 0; k < 2; k++)
      pthread_join(th[k], NULL);
  } else if (partner < ot.n) {
    for (int r = 0; r < 2 * TWIN_WAITS; r++) {
      send_one(partner, r % BURST, twins[r % 2][partner], &oc);
      OT_OK(LAPI_Waitcntr(ot.h, &oc, 1, NULL));
    }
  }
  registrations_end("two threads' waits");

  /* Phase 4: the threads past the slots end their registrations when
   * their waits end; the others' are left, then ended for them. */
  OT_OK(LAPI_Gfence(ot.h));
  for (int k = 0; k < 2; k++)
    OT_OK(LAPI_Setcntr(ot.h, &twin[k], 0));
  OT_OK(LAPI_Gfence(ot.h));
  one_wait_partner = partner;
  if (partner < ot.n && ot.me % 2 == 1) {
    for (long r = 0; r < ONE_WAIT_THREADS; r++) {
      pthread_t th;
      pthread_create(&th, NULL, one_wait, (void *)r);
      pthread_join(th, NULL);
    }
  } else if (partner < ot.n) {
    for (int r = 0; r < ONE_WAIT_THREADS; r++) {
      OT_OK(LAPI_Waitcntr(ot.h, &twin[1], 1, NULL));
      send_one(partner, r % BURST, twins[0][partner], NULL);
    }
  }
  OT_OK(LAPI_Gfence(ot.h));
  registrations_end("short-lived threads' waits");
  for (int k = 0; k < 2; k++)
    free(twins[k]);
  return ot_finish("ofi_direct");
}
