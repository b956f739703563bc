/*
 * ofi_ask.c - ASK and UNKNOWN (src/transport/ofi/ofi_ask.c): a transfer
 * that waits long is asked about without harm, and malformed or
 * misplaced packets of both types are dropped and counted.
 *
 * Two tasks, white box (links lapi_static for the counts and to build
 * packets).  TIMEOUT is 4 s, so a transfer is asked about after waiting
 * about 1 s (the ping interval).
 *  1. Task 0 sends task 1 a rendezvous Amsend whose completion handler
 *     returns only once task 1 heard an ASK about it, so task 0 waits
 *     for its FIN until it asked; task 1 holds it and answers nothing,
 *     the message completes, no error handler runs.  An ASK that crosses
 *     the FIN may be answered UNKNOWN: it must then arrive after the FIN
 *     (counted stale at task 0, no failure).
 *  2. Task 1 sends task 0 by hand: ASKs whose `what`, ask number (not
 *     0 but for DATA), handle key or length are wrong, an UNKNOWN whose `what` is wrong (each a
 *     bad packet), an UNKNOWN quoting a transfer never asked about
 *     (stale), and valid ASKs about a transfer and an RMW task 0 never
 *     had: task 0 answers UNKNOWN to each, which task 1 counts as stale.
 *     The same for ASKs about no-FIN messages (OFI_ASK_NOFIN, numbered
 *     by seq): an ask number, a number beyond 32 bits or past the first one
 *     task 0 has not completed are bad packets; one about the next number task 1 has not sent is
 *     answered UNKNOWN (stale at task 1, which never asked); an UNKNOWN
 *     about one task 0 never asked about is stale.  And for ASK DATA (a
 *     sink asking its source, numbered): an ASK or UNKNOWN DATA without
 *     its number is a bad packet; a numbered one from a sink task 0
 *     never had is answered UNKNOWN, echoing the number (stale at task
 *     1, which has no such sink); an UNKNOWN DATA nobody asked for is
 *     stale.
 *  3. Both tasks put an invalid copy after every packet they send
 *     (ofi_mangle_every = 1, ofi_fault.c) while task 1 sends 10 ASKs and
 *     task 0 answers them (about transfers, no-FIN messages and pulls
 *     in turn: SINK, NOFIN, DATA): every
 *     copy (each class that fits ASK and UNKNOWN) is dropped as its
 *     class.
 *  4. Task 0 owes task 1 a packet (every buffer allocation fails: the
 *     NOMEM hook by hand; the packet an UNKNOWN NOFIN nobody asked for)
 *     when task 1's ASKs SINK, GET and RMW about transfers task 0 never
 *     had come: each UNKNOWN is owed behind that packet (asks_owed), and
 *     all four arrive once task 0 has buffers again (stale at task 1,
 *     which asked nothing).  An answerer that dropped those ASKs would
 *     leave task 1 waiting for the UNKNOWNs in vain.
 *  5. Task 1 puts BIG bytes to task 0 (a FIN answers it) while task 0
 *     owes every packet: the FIN is owed when task 1, told so by a sign,
 *     asks about the put (ASK SINK, by hand).  Task 0 owes its UNKNOWN
 *     behind the FIN, then works the owed list once by hand with every
 *     allocation but the one just ahead of the UNKNOWN's (the FIN's)
 *     succeeding: the FIN is owed again, and the UNKNOWN must be too.
 *     Then it pays: the FIN arrives first, the put completes with no
 *     error, the UNKNOWN counts stale at task 1.  An UNKNOWN that
 *     overtook the FIN would declare task 0 gone.
 *  6. As 5 (task 0 owes the FIN of task 1's put), but the UNKNOWNs of
 *     task 1's 1st and 3rd ASK find no record to be owed in (the
 *     OWED_NOMEM hook, ofi_owednomem_at set by hand before each): each
 *     is dropped (unknowns_dropped, printed), task 1 is not failed, no
 *     error handler runs; the 2nd ASK's UNKNOWN is owed behind the FIN
 *     and still stands after the 3rd is dropped (an older UNKNOWN is
 *     voided only by a newer one queued).  Then task 0 pays: the put
 *     completes, exactly one UNKNOWN (the 2nd's) comes, stale.  Task 1
 *     asks by hand only: its TIMEOUT is 4000 s for this part, so that
 *     its watchdog asks nothing of its own (every ASK is counted).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"
#include "ofi_held.h"

#define TIMEOUT_S 4
#define BIG (1 << 20)   /* above every eager limit: a FIN answers it */
/* Part 3: the 8 classes that fit an UNKNOWN, and some to spare. */
#define ASKS 10

static unsigned char *am_box;
static int errors; /* atomic */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)type;
  (void)task;
  fprintf(stderr, "task %d: error handler: code %d from %d\n", ot.me, *code,
          *src);
  __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
}

struct counts {
  uint64_t bad, stale, asks, unknowns, asks_held, asks_owed, dropped;
  uint64_t inj[OFI_BAD_N], drop[OFI_BAD_N];
};

static void counts(struct counts *c)
{
  ofi_fault_counts(c->inj, c->drop);
  pthread_mutex_lock(&ofi.lock);
  c->bad = ofi.st.bad_pkts;
  c->stale = ofi.st.stale_pkts;
  c->asks = ofi.st.asks;
  c->unknowns = ofi.st.unknowns;
  c->asks_held = ofi.st.asks_held;
  c->asks_owed = ofi.st.asks_owed;
  c->dropped = ofi.st.unknowns_dropped;
  pthread_mutex_unlock(&ofi.lock);
}

/* Task 1 to task 0: an ASK-shaped packet of type, with these fields and
 * extra bytes beyond the struct (its length field says so). */
static void send_ask(int type, uint32_t what, uint32_t ask_no, uint16_t hndl,
                     uint64_t id, size_t extra)
{
  unsigned char pkt[sizeof(struct ofi_ask) + 16] __attribute__((aligned(8)));
  memset(pkt, 0, sizeof pkt);
  struct ofi_ask *a = (struct ofi_ask *)pkt;
  pthread_mutex_lock(&ofi.lock);
  ofi_hdr_init(&a->h, type, hndl, id, sizeof *a + extra);
  a->what = what;
  a->ask_no = ask_no;
  ofi_send_small(0, pkt, sizeof *a + extra);
  pthread_mutex_unlock(&ofi.lock);
}

/* Waits (probing, the alarm bounds it) until done(c) holds. */
static void await_counts(struct counts *c, int (*done)(const struct counts *))
{
  for (counts(c); !done(c); counts(c)) {
    LAPI_Probe(ot.h);
    usleep(1000);
  }
}

static struct counts base;

static int part2_task0(const struct counts *c)
{
  return c->bad >= base.bad + 10 && c->stale >= base.stale + 3 &&
         c->unknowns >= base.unknowns + 4;
}

static int part2_task1(const struct counts *c)
{
  return c->stale >= base.stale + 4;
}

/* The number task 1's next no-FIN message to task 0 would take (every
 * earlier one was acknowledged: after a fence). */
static uint32_t next_nofin(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint32_t n = ofi.peers[0].nf_next;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

/* An id no live transfer of task 0 has: a slot far beyond any table. */
#define DEAD_ID ((uint64_t)1 << 32 | 0xfffff000u)

/* Parts 4 and 5: how long a task waits for the other's step (each
 * comes within ms; this many seconds mean it never will). */
#define STEP_S (4 * TIMEOUT_S)

/* Waits (probing) at most STEP_S for *count (an ofi.st field) to reach
 * want; its value then. */
static uint64_t await_stat(const uint64_t *count, uint64_t want)
{
  double until = ot_now_s() + STEP_S;
  uint64_t v;
  for (;;) {
    pthread_mutex_lock(&ofi.lock);
    v = *count;
    pthread_mutex_unlock(&ofi.lock);
    if (v >= want || ot_now_s() > until)
      return v;
    LAPI_Probe(ot.h);
    usleep(1000);
  }
}

/* Task 0: from now on every packet buffer allocation fails (on 1) or
 * none does (0). */
static void nomem(int on)
{
  pthread_mutex_lock(&ofi.lock);
  ofi_nomem_every = on;
  pthread_mutex_unlock(&ofi.lock);
}

/* Part 4 at task 0: owes task 1 a packet while its three ASKs come. */
static void part4_owing(const struct counts *b)
{
  pthread_mutex_lock(&ofi.lock);
  ofi_nomem_every = 1;
  struct ofi_ask u; /* about a no-FIN message never asked about */
  ofi_hdr_init(&u.h, OFI_M_UNKNOWN, 0, 7, sizeof u);
  u.what = OFI_ASK_NOFIN;
  u.ask_no = 0;
  ofi_send_small(1, &u, sizeof u); /* owed: no buffer */
  int owed = (int)ofi.peers[1].owed;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(owed >= 1, "part 4: the packet to task 1 was not owed");
  ot_sign_give("ask4.owing");
  uint64_t asked = await_stat(&ofi.st.asks_owed, b->asks_owed + 3);
  pthread_mutex_lock(&ofi.lock);
  owed = (int)ofi.peers[1].owed;
  ofi_nomem_every = 0;
  ofi_send_retry(); /* paid: the packet, then the UNKNOWNs */
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(asked == b->asks_owed + 3, "part 4: %llu of task 1's 3 ASKs "
           "found us owing within %d s", (unsigned long long)(asked -
           b->asks_owed), STEP_S);
  OT_CHECK(owed >= 4, "part 4: %d packets owed to task 1 after its 3 "
           "ASKs: their UNKNOWNs were not owed behind the packet", owed);
}

/* Part 4 at task 1: asks about 3 transfers task 0 never had once it
 * owes us a packet: their UNKNOWNs must come (behind it; counted
 * here, not ordered: part 5 checks the order). */
static void part4_ask(const struct counts *b)
{
  int owing = ot_sign_take("ask4.owing", STEP_S);
  OT_CHECK(owing, "part 4: task 0 did not sign within %d s that it owes "
           "us a packet", STEP_S);
  send_ask(OFI_M_ASK, OFI_ASK_SINK, 0, 0, DEAD_ID + 1, 0);
  send_ask(OFI_M_ASK, OFI_ASK_GET, 0, 0, DEAD_ID + 2, 0);
  send_ask(OFI_M_ASK, OFI_ASK_RMW, 0, 0, DEAD_ID + 3, 0);
  uint64_t stale = await_stat(&ofi.st.stale_pkts, b->stale + 4);
  OT_CHECK(stale == b->stale + 4, "part 4: %llu of 4 stale packets (the "
           "owed one and the UNKNOWNs to an ASK SINK, GET and RMW) came "
           "from the owing task 0 within %d s",
           (unsigned long long)(stale - b->stale), STEP_S);
}

/* Part 5: task 0 fails exactly the allocation just ahead of the last
 * owed packet's in its next pass over the owed list (all of them to
 * task 1, one allocation each), under ofi.lock: no other thread takes a
 * buffer between. */
#define NOMEM_SPAN 1000
static void fail_one_before_last(int owed)
{
  ofi_nomem_every = NOMEM_SPAN;
  while (!ofi_nomem_now())
    ; /* the hook's count now a multiple of the span */
  for (int i = 0; i < NOMEM_SPAN - (owed - 1); i++)
    (void)ofi_nomem_now(); /* the owed-1'th allocation from here fails */
}

/* A sink of task 1's transfer is left at task 0 (0: its FIN went, is
 * held for a list, or is owed). */
static int sink_of_task1(void)
{
  for (uint32_t s = 0; s < ofi.xcap; s++) {
    const struct ofi_xfer *x = ofi.xtab[s];
    if (x && x->peer == 1 && x->role == OFI_R_SINK)
      return 1;
  }
  return 0;
}

/* Task 0, every packet owed: waits at most STEP_S for task 1's put to
 * land (tgt 1) with its FIN owed (no sink left, none held); 1 if so. */
static int await_fin_owed(lapi_cntr_t *tgt)
{
  double until = ot_now_s() + STEP_S;
  int fin_owed = 0;
  while (!fin_owed && ot_now_s() < until) {
    LAPI_Probe(ot.h);
    int landed = ot_cntr(tgt) == 1;
    pthread_mutex_lock(&ofi.lock);
    fin_owed = landed && !sink_of_task1() && ofi.peers[1].nfins == 0 &&
               ofi.peers[1].owed > 0;
    pthread_mutex_unlock(&ofi.lock);
    if (!fin_owed)
      usleep(1000);
  }
  return fin_owed;
}

/* Part 5 at task 0: owes the FIN of task 1's put when task 1 asks. */
static void part5_answer(const struct counts *b, lapi_cntr_t *tgt)
{
  nomem(1);
  ot_sign_give("ask5.owing");
  int fin_owed = await_fin_owed(tgt);
  OT_CHECK(fin_owed, "part 5: task 1's put did not land here with its "
           "FIN owed within %d s", STEP_S);
  if (!fin_owed) {
    nomem(0);
    return;
  }
  ot_sign_give("ask5.finowed");
  uint64_t asked = await_stat(&ofi.st.asks_owed, b->asks_owed + 1);
  OT_CHECK(asked > b->asks_owed, "part 5: task 1's ASK about its put did "
           "not find us owing within %d s", STEP_S);
  pthread_mutex_lock(&ofi.lock);
  int owed = (int)ofi.peers[1].owed;
  if (owed >= 2) {
    fail_one_before_last(owed);
    ofi_send_retry(); /* the FIN owed again: so must the UNKNOWN be */
  }
  int owed_again = (int)ofi.peers[1].owed;
  ofi_nomem_every = 0;
  ofi_send_retry(); /* paid: the FIN, then the UNKNOWN */
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(owed >= 2, "part 5: %d packets owed to task 1 after its ASK: "
           "the UNKNOWN was not owed behind the FIN", owed);
  OT_CHECK(owed != 2 || owed_again == 2, "part 5: of the FIN and the "
           "UNKNOWN, %d stayed owed when the FIN found no buffer",
           owed_again);
  /* More than the FIN and the UNKNOWN (a PONG on a slow machine): the
   * FIN may not be the one failed, and the order is checked loosely. */
  printf("ofi_ask task 0: part 5: %d packets owed to task 1 when it "
         "asked, %d after the pass that failed one\n", owed, owed_again);
}

/* Task 1: asks task 0 now (ASK SINK) about our put waiting for its FIN,
 * as the watchdog would after an interval; 1 if it did. */
static int ask_about_put(void)
{
  int asked = 0;
  pthread_mutex_lock(&ofi.lock);
  for (uint32_t s = 0; s < ofi.xcap; s++) {
    struct ofi_xfer *x = ofi.xtab[s];
    if (x && x->peer == 0 && x->role == OFI_R_SOURCE && x->holds_credit) {
      x->watch_ms = 1; /* waited long: asked now */
      ofi_ask_watch(ofi_now_ms(), 1);
      asked = x->asked;
      break;
    }
  }
  pthread_mutex_unlock(&ofi.lock);
  return asked;
}

/* Part 5 at task 1: puts to task 0, asks once its FIN is owed. */
static void part5_ask(const struct counts *b, void *remote, void **tgts)
{
  int owing = ot_sign_take("ask5.owing", STEP_S);
  OT_CHECK(owing, "part 5: task 0 did not sign within %d s that it owes "
           "every packet", STEP_S);
  lapi_cntr_t cmpl;
  OT_OK(LAPI_Setcntr(ot.h, &cmpl, 0));
  memset(am_box, 6, BIG);
  OT_OK(LAPI_Put(ot.h, 0, BIG, remote, am_box, tgts[0], NULL, &cmpl));
  int owed = ot_sign_take("ask5.finowed", STEP_S);
  OT_CHECK(owed, "part 5: task 0 did not sign within %d s that the FIN of "
           "our put is owed", STEP_S);
  int asked = owed && ask_about_put();
  OT_CHECK(!owed || asked, "part 5: no put of ours to task 0 waits for "
           "its FIN, or it was not asked about");
  int rc = LAPI_Waitcntr(ot.h, &cmpl, 1, NULL);
  OT_CHECK(rc == LAPI_SUCCESS, "part 5: the put whose FIN was owed when "
           "we asked ended with %d", rc);
  uint64_t stale = await_stat(&ofi.st.stale_pkts, b->stale + 1);
  OT_CHECK(!asked || stale > b->stale, "part 5: no UNKNOWN to our ASK came "
           "(stale, after the FIN) within %d s", STEP_S);
}

/* Part 6: the UNKNOWNs task 0 owes task 1 now, as its counts say:
 * unknowns (standing), dropped (for want of a record); asks_owed. */
struct standing {
  uint64_t unknowns, dropped, asks_owed;
  int owed;   /* packets owed to task 1 */
  int failed; /* task 1 failed (or about to be) here */
};

static void standing(struct standing *s)
{
  pthread_mutex_lock(&ofi.lock);
  s->unknowns = ofi.st.unknowns;
  s->dropped = ofi.st.unknowns_dropped;
  s->asks_owed = ofi.st.asks_owed;
  s->owed = (int)ofi.peers[1].owed;
  s->failed = ofi.peers[1].failed || ofi.peers[1].fail_pending;
  pthread_mutex_unlock(&ofi.lock);
}

/* Part 6 at task 0: owes the FIN of task 1's put while task 1 asks about
 * it three times; the first and the third UNKNOWN find no owed record
 * (the OWED_NOMEM hook, armed by hand before each).  0 if a step failed
 * (the rest is left: task 1 waits for a sign in vain, bounded). */
static int part6_answer(const struct counts *b, lapi_cntr_t *tgt)
{
  struct standing s;
  uint64_t dropped0 = b->dropped;
  nomem(1);
  ot_sign_give("ask6.owing");
  if (!await_fin_owed(tgt)) {
    OT_CHECK(0, "part 6: task 1's put did not land here with its FIN owed "
             "within %d s", STEP_S);
    return 0;
  }
  pthread_mutex_lock(&ofi.lock);
  int owed0 = (int)ofi.peers[1].owed;
  ofi_owednomem_at = 1; /* the next UNKNOWN owed finds no record */
  pthread_mutex_unlock(&ofi.lock);
  ot_sign_give("ask6.armed");
  /* 1st ASK: its UNKNOWN dropped; nothing owed more, task 1 not failed. */
  await_stat(&ofi.st.unknowns_dropped, dropped0 + 1);
  standing(&s);
  OT_CHECK(s.dropped == dropped0 + 1, "part 6: %llu UNKNOWNs dropped "
           "within %d s after task 1's 1st ASK, want 1",
           (unsigned long long)(s.dropped - dropped0), STEP_S);
  OT_CHECK(!s.failed, "part 6: task 1 failed for an UNKNOWN dropped");
  OT_CHECK(s.unknowns == b->unknowns && s.owed == owed0 &&
               s.asks_owed == b->asks_owed + 1,
           "part 6: after the 1st ASK %llu UNKNOWNs stand (want 0), %d "
           "packets owed (want %d), %llu ASKs found us owing (want 1)",
           (unsigned long long)(s.unknowns - b->unknowns), s.owed, owed0,
           (unsigned long long)(s.asks_owed - b->asks_owed));
  if (s.dropped != dropped0 + 1 || s.failed)
    return 0;
  ot_sign_give("ask6.dropped");
  /* 2nd ASK: its UNKNOWN is owed behind the FIN. */
  await_stat(&ofi.st.asks_owed, b->asks_owed + 2);
  standing(&s);
  OT_CHECK(s.asks_owed == b->asks_owed + 2 && s.unknowns == b->unknowns + 1 &&
               s.owed == owed0 + 1 && s.dropped == dropped0 + 1,
           "part 6: after the 2nd ASK (within %d s) %llu ASKs found us "
           "owing (want 2), %llu UNKNOWNs stand (want 1), %d packets owed "
           "(want %d), %llu dropped (want 1)", STEP_S,
           (unsigned long long)(s.asks_owed - b->asks_owed),
           (unsigned long long)(s.unknowns - b->unknowns), s.owed,
           owed0 + 1, (unsigned long long)(s.dropped - dropped0));
  if (s.asks_owed != b->asks_owed + 2)
    return 0;
  pthread_mutex_lock(&ofi.lock);
  ofi_owednomem_at = 1;
  pthread_mutex_unlock(&ofi.lock);
  ot_sign_give("ask6.armed2");
  /* 3rd ASK: dropped; the 2nd's UNKNOWN still stands (voided only by a
   * newer one queued). */
  await_stat(&ofi.st.unknowns_dropped, dropped0 + 2);
  standing(&s);
  printf("ofi_ask task 0: part 6: %llu UNKNOWNs dropped (no owed record), "
         "%llu standing, %d packets owed to task 1\n",
         (unsigned long long)(s.dropped - dropped0),
         (unsigned long long)(s.unknowns - b->unknowns), s.owed);
  OT_CHECK(s.dropped == dropped0 + 2, "part 6: %llu UNKNOWNs dropped "
           "within %d s after task 1's 3rd ASK, want 2",
           (unsigned long long)(s.dropped - dropped0), STEP_S);
  OT_CHECK(!s.failed, "part 6: task 1 failed for an UNKNOWN dropped");
  OT_CHECK(s.unknowns == b->unknowns + 1 && s.owed == owed0 + 1,
           "part 6: after the 3rd ASK's UNKNOWN was dropped %llu UNKNOWNs "
           "stand (want 1: the 2nd's), %d packets owed (want %d)",
           (unsigned long long)(s.unknowns - b->unknowns), s.owed,
           owed0 + 1);
  pthread_mutex_lock(&ofi.lock);
  ofi_nomem_every = 0;
  ofi_send_retry(); /* paid: the FIN, then the 2nd ASK's UNKNOWN */
  pthread_mutex_unlock(&ofi.lock);
  return 1;
}

/* Part 6 at task 1: puts to task 0 and asks about the put at each of its
 * signs; waits for the put's end and one UNKNOWN (stale: after the FIN). */
static void part6_ask(const struct counts *b, void *remote, void **tgts)
{
  lapi_cntr_t cmpl;
  OT_OK(LAPI_Setcntr(ot.h, &cmpl, 0));
  int step = ot_sign_take("ask6.owing", STEP_S);
  OT_CHECK(step, "part 6: task 0 did not sign within %d s that it owes "
           "every packet", STEP_S);
  if (!step)
    return;
  memset(am_box, 7, BIG);
  OT_OK(LAPI_Put(ot.h, 0, BIG, remote, am_box, tgts[0], NULL, &cmpl));
  static const char *const signs[] = {"ask6.armed", "ask6.dropped",
                                      "ask6.armed2"};
  for (int i = 0; i < 3; i++) {
    step = ot_sign_take(signs[i], STEP_S);
    OT_CHECK(step, "part 6: no sign %s from task 0 within %d s", signs[i],
             STEP_S);
    if (!step)
      return;
    OT_CHECK(ask_about_put(), "part 6: our put to task 0 was not asked "
             "about (ASK %d)", i + 1);
  }
  double until = ot_now_s() + STEP_S;
  while (ot_cntr(&cmpl) < 1 && ot_now_s() < until) {
    LAPI_Probe(ot.h);
    usleep(1000);
  }
  OT_CHECK(ot_cntr(&cmpl) == 1, "part 6: the put asked about 3 times did "
           "not complete within %d s", STEP_S);
  uint64_t stale = await_stat(&ofi.st.stale_pkts, b->stale + 1);
  pthread_mutex_lock(&ofi.lock);
  uint64_t asks = ofi.st.asks;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(asks == b->asks + 3, "part 6: %llu ASKs sent, want 3",
           (unsigned long long)(asks - b->asks));
  OT_CHECK(stale == b->stale + 1, "part 6: %llu UNKNOWNs came (stale, after "
           "the FIN) within %d s, want 1 (the 2nd ASK's)",
           (unsigned long long)(stale - b->stale), STEP_S);
}

int main(void)
{
  ot_init(errh, 100);
  if (ot.n != 2) {
    fprintf(stderr, "ofi_ask needs 2 CGs\n");
    return 2;
  }
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  am_box = calloc(1, BIG);
  held_len = BIG;
  held_box = am_box;
  unsigned char *src = malloc(BIG);
  memset(src, 5, BIG);
  OT_OK(LAPI_Addr_set(ot.h, (void *)held_hdr, 1));
  /* Part 1: a transfer held long at its target. */
  struct counts c0, c1;
  counts(&c0);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    lapi_cntr_t org, cmpl;
    OT_OK(LAPI_Setcntr(ot.h, &org, 0));
    OT_OK(LAPI_Setcntr(ot.h, &cmpl, 0));
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, BIG, NULL, &org,
                      &cmpl));
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  }
  OT_OK(LAPI_Gfence(ot.h));
  counts(&c1);
  if (ot.me == 0)
    OT_CHECK(c1.asks > c0.asks, "no ASK about the held Amsend");
  else
    OT_CHECK(c1.asks_held > c0.asks_held, "no ASK heard while held");
  uint64_t unknowns = ot_job_sum(c1.unknowns - c0.unknowns);
  uint64_t stale = ot_job_sum(c1.stale - c0.stale);
  OT_CHECK(stale == unknowns, "%llu UNKNOWNs crossed the FIN, %llu stale "
           "packets", (unsigned long long)unknowns,
           (unsigned long long)stale);
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran");
  if (ot.me == 1)
    OT_CHECK(am_box[0] == 5 && am_box[BIG - 1] == 5, "Amsend bytes");
  printf("ofi_ask task %d: %llu ASKs sent in part 1\n", ot.me,
         (unsigned long long)(c1.asks - c0.asks));

  /* Part 2: malformed and misplaced ASK and UNKNOWN, task 1 to task 0.
   * The snapshot before the barrier: task 1 may leave it, and its
   * packets arrive, before task 0 leaves it. */
  counts(&base);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    send_ask(OFI_M_ASK, OFI_ASK_DATA + 1, 0, 0, DEAD_ID, 0); /* what */
    send_ask(OFI_M_ASK, OFI_ASK_SINK, 1, 0, DEAD_ID, 0);   /* a number */
    send_ask(OFI_M_ASK, OFI_ASK_GET, 0, 1, DEAD_ID, 0);    /* handle */
    send_ask(OFI_M_ASK, OFI_ASK_SINK, 0, 0, DEAD_ID, 8);   /* length */
    send_ask(OFI_M_UNKNOWN, 0, 0, 0, DEAD_ID, 0);          /* what */
    send_ask(OFI_M_UNKNOWN, OFI_ASK_GET, 0, 0, DEAD_ID, 0); /* stale */
    send_ask(OFI_M_ASK, OFI_ASK_SINK, 0, 0, DEAD_ID, 0);   /* valid */
    send_ask(OFI_M_ASK, OFI_ASK_RMW, 0, 0, DEAD_ID, 0);    /* valid */
    send_ask(OFI_M_ASK, OFI_ASK_DATA, 0, 0, DEAD_ID, 0);   /* no number */
    send_ask(OFI_M_UNKNOWN, OFI_ASK_DATA, 0, 0, DEAD_ID, 0); /* no number */
    send_ask(OFI_M_UNKNOWN, OFI_ASK_DATA, 1, 0, DEAD_ID, 0); /* stale */
    send_ask(OFI_M_ASK, OFI_ASK_DATA, 1, 0, DEAD_ID, 0);   /* valid */
    uint32_t nf = next_nofin();
    send_ask(OFI_M_ASK, OFI_ASK_NOFIN, 1, 0, nf, 0);       /* a number */
    send_ask(OFI_M_ASK, OFI_ASK_NOFIN, 0, 0, DEAD_ID, 0);  /* 32 bits */
    send_ask(OFI_M_ASK, OFI_ASK_NOFIN, 0, 0, nf + 1, 0);   /* past */
    send_ask(OFI_M_UNKNOWN, OFI_ASK_NOFIN, 0, 0, 7, 0);    /* stale */
    send_ask(OFI_M_ASK, OFI_ASK_NOFIN, 0, 0, nf, 0);       /* valid */
    await_counts(&c1, part2_task1);
  } else
    await_counts(&c1, part2_task0);
  OT_OK(LAPI_Gfence(ot.h));
  counts(&c1);
  if (ot.me == 0) {
    OT_CHECK(c1.bad - base.bad == 10, "%llu bad packets, want 10",
             (unsigned long long)(c1.bad - base.bad));
    OT_CHECK(c1.stale - base.stale == 3, "%llu stale packets, want 3",
             (unsigned long long)(c1.stale - base.stale));
    OT_CHECK(c1.unknowns - base.unknowns == 4, "%llu UNKNOWNs, want 4",
             (unsigned long long)(c1.unknowns - base.unknowns));
  } else
    OT_CHECK(c1.stale - base.stale == 4, "%llu stale packets, want 4 (the "
             "UNKNOWNs)", (unsigned long long)(c1.stale - base.stale));
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran");

  /* Part 3: an invalid copy after every packet, ASKs and answers.
   * Copies begin after a barrier, and the ASKs after a second one:
   * LAPI_Gfence sends packets of its own, so a copy made before the
   * first could reach the peer before its snapshot (while it still
   * counted part 2: one bad packet too many there, and here a copy that
   * no drop matched), and ASKs sent before the second could be answered
   * before the answerer made copies. */
  counts(&base);
  OT_OK(LAPI_Gfence(ot.h));
  pthread_mutex_lock(&ofi.lock);
  ofi_mangle_every = 1;
  pthread_mutex_unlock(&ofi.lock);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    uint32_t nf = next_nofin();
    for (int i = 0; i < ASKS; i++)
      if (i % 3 == 1)
        send_ask(OFI_M_ASK, OFI_ASK_NOFIN, 0, 0, nf, 0);
      else if (i % 3 == 2)
        send_ask(OFI_M_ASK, OFI_ASK_DATA, (uint32_t)i, 0,
                 DEAD_ID + (uint64_t)i, 0);
      else
        send_ask(OFI_M_ASK, OFI_ASK_SINK, 0, 0, DEAD_ID + (uint64_t)i, 0);
    counts(&c1);
    while (c1.stale < base.stale + ASKS) { /* the answers, stale here */
      LAPI_Probe(ot.h);
      usleep(1000);
      counts(&c1);
    }
  } else {
    counts(&c1);
    while (c1.unknowns < base.unknowns + ASKS) { /* answered with copies */
      LAPI_Probe(ot.h);
      usleep(1000);
      counts(&c1);
    }
  }
  ofi_fault_mangle_stop();
  OT_OK(LAPI_Gfence(ot.h));
  /* Copies still on the way: until the job's drops match its copies. */
  int settled = 0;
  for (int tries = 0; tries < 2000 && !settled; tries++) {
    counts(&c1);
    settled = 1;
    for (int k = OFI_BAD_OTHER + 1; k < OFI_BAD_N; k++) {
      uint64_t inj = ot_job_sum(c1.inj[k] - base.inj[k]);
      uint64_t drop = ot_job_sum(c1.drop[k] - base.drop[k]);
      if (k == OFI_BAD_STALE ? drop < inj : drop != inj)
        settled = 0;
    }
    if (!settled) {
      LAPI_Probe(ot.h);
      usleep(1000);
    }
  }
  OT_CHECK(settled, "the invalid copies and the drops never matched");
  for (int k = OFI_BAD_MAGIC; k <= OFI_BAD_STALE; k++) {
    uint64_t inj = ot_job_sum(c1.inj[k] - base.inj[k]);
    OT_CHECK(inj > 0, "no invalid copy of class %d was sent", k);
  }
  if (ot.me == 0)
    OT_CHECK(c1.unknowns - base.unknowns == ASKS, "%llu UNKNOWNs, want %d",
             (unsigned long long)(c1.unknowns - base.unknowns), ASKS);
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran");

  /* Part 4: ASKs SINK, GET and RMW to a task owing the asker a packet.
   * Each step waits for the other task's sign or count, none for a
   * time. */
  counts(&base);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0)
    part4_owing(&base);
  else
    part4_ask(&base);
  OT_OK(LAPI_Gfence(ot.h));
  counts(&c1);
  if (ot.me == 0)
    OT_CHECK(c1.unknowns - base.unknowns == 3, "part 4: %llu UNKNOWNs, "
             "want 3", (unsigned long long)(c1.unknowns - base.unknowns));
  else
    OT_CHECK(c1.stale - base.stale == 4, "part 4: %llu stale packets, "
             "want 4", (unsigned long long)(c1.stale - base.stale));
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "part 4: the error handler ran");

  /* Part 5: a FIN owed when its transfer is asked about. */
  static lapi_cntr_t tgt;
  OT_OK(LAPI_Setcntr(ot.h, &tgt, 0));
  void **tgts = ot_addrs(&tgt);
  void **boxes = ot_addrs(am_box);
  counts(&base);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0)
    part5_answer(&base, &tgt);
  else
    part5_ask(&base, boxes[0], tgts);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0)
    OT_CHECK(am_box[0] == 6 && am_box[BIG - 1] == 6, "part 5: put bytes");
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "part 5: the error handler ran (an UNKNOWN overtook the FIN)");

  /* Part 6: UNKNOWNs that find no owed record are dropped, the asker asks
   * again.  Task 1's watchdog must not ask on its own (the test counts
   * every ASK): its ping interval is made far longer than the part. */
  OT_OK(LAPI_Setcntr(ot.h, &tgt, 0));
  if (ot.me == 1)
    OT_OK(LAPI_Senv(ot.h, TIMEOUT, 4000));
  counts(&base);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    if (!part6_answer(&base, &tgt)) { /* a step failed: pay, end */
      pthread_mutex_lock(&ofi.lock);
      ofi_owednomem_at = 0;
      ofi_nomem_every = 0;
      pthread_mutex_unlock(&ofi.lock);
    }
  } else
    part6_ask(&base, boxes[0], tgts);
  /* Before the barrier, which waits for the put: if task 0 failed us,
   * we find it silent within TIMEOUT. */
  OT_OK(LAPI_Senv(ot.h, TIMEOUT, TIMEOUT_S));
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0)
    OT_CHECK(am_box[0] == 7 && am_box[BIG - 1] == 7 && ot_cntr(&tgt) == 1,
             "part 6: put bytes or tgt_cntr (%d)", ot_cntr(&tgt));
  OT_CHECK(__atomic_load_n(&errors, __ATOMIC_SEQ_CST) == 0,
           "part 6: the error handler ran (a peer failed for an UNKNOWN "
           "dropped)");
  free(tgts);
  free(boxes);
  free(src);
  return ot_finish("ofi_ask");
}
