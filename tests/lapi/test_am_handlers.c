/*
 * test_am_handlers.c - where and how header and completion handlers run.
 *
 *   interrupt mode (the default): handlers run on a LAPI thread, never on
 *   the sending thread, without any LAPI call from the application
 *   polling mode (LAPI_Senv(INTERRUPT_SET, 0) or LAPI_INTERRUPT_OFF):
 *   handlers run only inside the application's polling calls (Probe,
 *   Waitcntr, Msgpoll), on the polling thread, never inside the send
 *   lapi_return_info_t: msg_len, src, udata_one_pkt_ptr, LAPI_BURY_MSG;
 *   returning NULL discards; uhdr and uhdr_len are delivered
 *   completion handlers that send, and that wait for what they sent
 *   LAPI_Addr_set / LAPI_Addr_get: indexes as hdr_hdl in Amsend, Amsendv
 *   and Xfer; ADDR_HNDL_RANGE; a handler address works too; two handles
 *   keep separate tables and a message reaches its own handle's handlers
 *
 * Messages go to tgt = (me + 1) % n (see lapi_test_util.h).
 */
#include "lapi_test_util.h"

TestSuite(am_handlers, .timeout = LT_TIMEOUT);

static lapi_cntr_t recv_cntr;
static int hdr_runs, cmpl_runs;
static pthread_t hdr_thread, cmpl_thread;
static pthread_t main_thread;
static int in_poll;          /* the test thread is inside a polling call */
static int polling_mode;     /* handlers must see in_poll == 1 */
static unsigned char sink[(1 << 20) + 64];

static void where_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl, (void)param;
  cmpl_thread = pthread_self();
  if (lt_load(&polling_mode)) {
    LT_CHECK(pthread_equal(pthread_self(), main_thread));
    LT_CHECK_EQ(lt_load(&in_poll), 1);
  }
  lt_inc(&cmpl_runs);
}

static void *where_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  hdr_thread = pthread_self();
  if (lt_load(&polling_mode)) {
    LT_CHECK(pthread_equal(pthread_self(), main_thread));
    LT_CHECK_EQ(lt_load(&in_poll), 1);
  }
  lt_inc(&hdr_runs);
  *comp_h = where_cmpl;
  return *msg_len ? sink : NULL;
}

static void start(struct lt_job *j)
{
  main_thread = pthread_self();
  lt_store(&hdr_runs, 0);
  lt_store(&cmpl_runs, 0);
  LT_OK(LAPI_Setcntr(j->h, &recv_cntr, 0));
}

/* --------------------------------------------------- interrupt mode */

struct send_arg {
  struct lt_job *j;
  void *hh;
  lapi_cntr_t *tc;
  pthread_t self;
};

static unsigned char payload[512];

static void *send_from_thread(void *p)
{
  struct send_arg *a = p;
  a->self = pthread_self();
  LT_CHECK_OK(LAPI_Amsend(a->j->h, a->j->tgt, a->hh, NULL, 0, payload,
                          sizeof payload, a->tc, NULL, NULL));
  return NULL;
}

Test(am_handlers, interrupt_mode_runs_handlers_on_the_dispatcher)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  int mode = -1;
  LT_OK(LAPI_Qenv(j.h, INTERRUPT_SET, &mode));
  cr_assert_eq(mode, 1, "interrupt mode is the default; INTERRUPT_SET = %d",
               mode);
  void *hh = lt_at_tgt(&j, (void *)where_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);

  /* sent and waited for by the test thread */
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, payload, sizeof payload, tc,
                    NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert(!pthread_equal(hdr_thread, main_thread),
            "the header handler ran on the sending (test) thread");
  cr_assert(!pthread_equal(cmpl_thread, main_thread),
            "the completion handler ran on the sending (test) thread");
  cr_assert(pthread_equal(hdr_thread, cmpl_thread),
            "header and completion handler ran on different threads "
            "(one dispatcher per process expected)");
  pthread_t dispatcher = hdr_thread;
  LT_OK(LAPI_Gfence(j.h));

  /* sent by another thread: not on that one either */
  struct send_arg a = {&j, hh, tc, 0};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, send_from_thread, &a), 0);
  pthread_join(th, NULL);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert(!pthread_equal(hdr_thread, a.self));
  cr_assert(!pthread_equal(cmpl_thread, a.self));
  cr_assert(!pthread_equal(hdr_thread, main_thread));
  cr_assert(pthread_equal(hdr_thread, dispatcher),
            "handlers of one handle ran on two different threads");
  LT_OK(LAPI_Gfence(j.h));

  /* progress without any LAPI call of the application */
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, payload, sizeof payload, tc,
                    NULL, NULL));
  while (lt_load(&cmpl_runs) < 3)
    sched_yield();
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_load(&hdr_runs), 3);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* ------------------------------------------------------ polling mode */

static void polling_checks(struct lt_job *j)
{
  int mode = -1;
  LT_OK(LAPI_Qenv(j->h, INTERRUPT_SET, &mode));
  cr_assert_eq(mode, 0);
  void *hh = lt_at_tgt(j, (void *)where_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(j, &recv_cntr);
  lt_store(&polling_mode, 1);
  LT_OK(LAPI_Gfence(j->h));
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j->h, &cmpl, 0));

  /* 1. LAPI_Probe */
  LT_OK(LAPI_Amsend(j->h, j->tgt, hh, NULL, 0, payload, sizeof payload, tc,
                    NULL, &cmpl));
  cr_assert_eq(lt_load(&hdr_runs), 0, "a handler ran inside LAPI_Amsend");
  lt_yield_a_lot();
  cr_assert_eq(lt_load(&hdr_runs), 0,
               "a handler ran while the application was not polling");
  lt_store(&in_poll, 1);
  while (lt_load(&cmpl_runs) < 1)
    LT_OK(LAPI_Probe(j->h));
  lt_store(&in_poll, 0);

  /* 2. LAPI_Waitcntr makes progress */
  LT_OK(LAPI_Amsend(j->h, j->tgt, hh, NULL, 0, payload, sizeof payload, tc,
                    NULL, &cmpl));
  lt_yield_a_lot();
  cr_assert_eq(lt_load(&hdr_runs), 1,
               "a handler ran while the application was not polling");
  lt_store(&in_poll, 1);
  cr_assert_eq(lt_wait(j, &recv_cntr, 2), 0);
  cr_assert_eq(lt_wait(j, &cmpl, 2), 0);
  lt_store(&in_poll, 0);
  cr_assert_eq(lt_load(&cmpl_runs), 2);

  /* 3. sent by another thread: runs only when the test thread polls */
  struct send_arg a = {j, hh, tc, 0};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, send_from_thread, &a), 0);
  pthread_join(th, NULL);
  lt_yield_a_lot();
  cr_assert_eq(lt_load(&hdr_runs), 2,
               "a handler ran on the sending thread or with nobody polling");
  lt_store(&in_poll, 1);
  /* 4. LAPI_Msgpoll makes progress too */
  lapi_msg_info_t info;
  while (lt_load(&cmpl_runs) < 3) {
    memset(&info, 0, sizeof info);
    LT_OK(LAPI_Msgpoll(j->h, 10, &info));
  }
  lt_store(&in_poll, 0);
  cr_assert_eq(lt_wait(j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_load(&hdr_runs), 3);
  LT_ASSERT_HANDLERS_OK();
  lt_store(&in_poll, 1); /* Gfence and Term may still dispatch */
}

Test(am_handlers, polling_mode_runs_handlers_only_when_polled)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
  polling_checks(&j);
  lt_close(&j);
}

Test(am_handlers, interrupt_off_at_init_means_polling)
{
  struct lt_job j;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.protocol = LAPI_INTERRUPT_OFF;
  lt_open_info(&j, &info);
  start(&j);
  polling_checks(&j);
  lt_close(&j);
}

/* Two handles, one polling and one in interrupt mode: the dispatcher
 * serves only the second; polling the first runs only its own handlers. */
static int mixed_runs[2];
static pthread_t mixed_thread[2];

static void *mixed_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr_len, (void)msg_len, (void)uinfo;
  int which = (int)*(uint32_t *)uhdr;
  mixed_thread[which] = pthread_self();
  lt_inc(&mixed_runs[which]);
  *comp_h = NULL;
  return NULL;
}

Test(am_handlers, polling_and_interrupt_handles_side_by_side)
{
  struct lt_job p, q; /* p polls, q interrupt mode */
  lt_open(&p);
  lt_open(&q);
  main_thread = pthread_self();
  LT_OK(LAPI_Senv(p.h, INTERRUPT_SET, 0));
  static lapi_cntr_t rp, rq;
  LT_OK(LAPI_Setcntr(p.h, &rp, 0));
  LT_OK(LAPI_Setcntr(q.h, &rq, 0));
  void *hp = lt_at_tgt(&p, (void *)mixed_hdr);
  lapi_cntr_t *tp = lt_cntr_at_tgt(&p, &rp);
  void *hq = lt_at_tgt(&q, (void *)mixed_hdr);
  lapi_cntr_t *tq = lt_cntr_at_tgt(&q, &rq);
  LT_OK(LAPI_Gfence(p.h));
  LT_OK(LAPI_Gfence(q.h));
  static uint32_t zero = 0, one = 1;
  LT_OK(LAPI_Amsend(p.h, p.tgt, hp, &zero, 4, NULL, 0, tp, NULL, NULL));
  LT_OK(LAPI_Amsend(q.h, q.tgt, hq, &one, 4, NULL, 0, tq, NULL, NULL));
  /* q's message is served with nobody polling; p's waits */
  while (lt_load(&mixed_runs[1]) < 1)
    sched_yield();
  cr_assert(!pthread_equal(mixed_thread[1], main_thread));
  lt_yield_a_lot();
  cr_assert_eq(lt_load(&mixed_runs[0]), 0,
               "the dispatcher ran a handler of a polling-mode handle");
  /* polling p runs p's handler here; q's next message stays with the
   * dispatcher */
  LT_OK(LAPI_Amsend(q.h, q.tgt, hq, &one, 4, NULL, 0, tq, NULL, NULL));
  cr_assert_eq(lt_wait(&p, &rp, 1), 0);
  cr_assert(pthread_equal(mixed_thread[0], main_thread));
  cr_assert_eq(lt_wait(&q, &rq, 2), 0);
  cr_assert(!pthread_equal(mixed_thread[1], main_thread),
            "polling one handle ran an interrupt-mode handle's handler");
  lt_close(&q);
  lt_close(&p);
}

/* Back to interrupt mode after polling: the dispatcher serves it again. */
Test(am_handlers, polling_then_interrupt_again)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  void *hh = lt_at_tgt(&j, (void *)where_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, payload, 8, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert(pthread_equal(hdr_thread, main_thread));
  LT_OK(LAPI_Gfence(j.h));
  LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 1));
  LT_OK(LAPI_Gfence(j.h));
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, payload, 8, tc, NULL, NULL));
  while (lt_load(&cmpl_runs) < 2)
    sched_yield(); /* no LAPI call: the dispatcher must do it */
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert(!pthread_equal(hdr_thread, main_thread));
  lt_close(&j);
}

/* Messages queued in polling mode are served by the dispatcher as soon
 * as the handle is back in interrupt mode, with no polling call. */
Test(am_handlers, queued_in_polling_served_after_interrupt_on)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  void *hh = lt_at_tgt(&j, (void *)where_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
  LT_OK(LAPI_Gfence(j.h));
  for (int i = 0; i < 3; i++)
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, payload, 8, tc, NULL, NULL));
  lt_yield_a_lot();
  cr_assert_eq(lt_load(&hdr_runs), 0);
  LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 1));
  while (lt_load(&cmpl_runs) < 3)
    sched_yield(); /* no LAPI call: the dispatcher must pick them up */
  cr_assert(!pthread_equal(hdr_thread, main_thread));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 3), 0);
  lt_close(&j);
}

/* No handler of a handle runs after its LAPI_Term returned, even with
 * messages in flight when Term was called (in both modes). */
static void term_in_flight(int polling)
{
  for (int round = 0; round < 50; round++) {
    struct lt_job j;
    lt_open(&j);
    start(&j);
    if (polling)
      LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
    for (int i = 0; i < 8; i++)
      LT_OK(LAPI_Amsend(j.h, (uint)j.me, (void *)where_hdr, NULL, 0,
                        payload, sizeof payload, NULL, NULL, NULL));
    LT_OK(LAPI_Term(j.h));
    int h0 = lt_load(&hdr_runs), c0 = lt_load(&cmpl_runs);
    lt_yield_a_lot();
    cr_assert_eq(lt_load(&hdr_runs), h0, "round %d: a header handler ran "
                 "after LAPI_Term returned", round);
    cr_assert_eq(lt_load(&cmpl_runs), c0, "round %d: a completion handler "
                 "ran after LAPI_Term returned", round);
    cr_assert_eq(h0, c0, "round %d: %d header handlers but %d completion "
                 "handlers", round, h0, c0);
    /* the handle is gone */
    cr_assert_eq(LAPI_Probe(j.h), LAPI_ERR_HNDL_INVALID);
  }
}

Test(am_handlers, no_handler_after_term) { term_in_flight(0); }
Test(am_handlers, no_handler_after_term_polling) { term_in_flight(1); }

/* ------------------------------------------------ lapi_return_info_t */

static lapi_return_info_t seen_ri;
static int seen_pkt_ok;      /* udata_one_pkt_ptr NULL or the data */
static uint64_t expect_seed;
static int ri_mode;          /* 0 deliver, 1 bury, 2 return NULL */

static void *ri_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  seen_ri = *ri;
  int ok = 1;
  if (ri->udata_one_pkt_ptr)
    ok = lt_find_diff(ri->udata_one_pkt_ptr, ri->msg_len, expect_seed, 0) < 0;
  lt_store(&seen_pkt_ok, ok);
  lt_inc(&hdr_runs);
  *comp_h = NULL;
  switch (lt_load(&ri_mode)) {
  case 1:
    ri->ctl_flags = LAPI_BURY_MSG;
    return sink;
  case 2:
    return NULL;
  }
  return sink;
}

static unsigned char big[1 << 20];

Test(am_handlers, return_info_fields)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  void *hh = lt_at_tgt(&j, (void *)ri_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  const ulong sizes[] = {0, 1, 3, 100, 4096, 65536, sizeof big};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    lt_fill(big, sizeof big, 300 + i * 16 + (uint)j.me);
    expect_seed = 300 + i * 16 + j.src;
    memset(sink, LT_GUARD, sizes[i] + 1);
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, sizes[i] ? big : NULL,
                      sizes[i], tc, NULL, &cmpl));
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    cr_assert_eq(seen_ri.msg_len, sizes[i], "msg_len %lu, sent %lu",
                 seen_ri.msg_len, sizes[i]);
    cr_assert_eq(seen_ri.src, (int)j.src, "src %d, origin %u", seen_ri.src,
                 j.src);
    cr_assert_eq(lt_load(&seen_pkt_ok), 1,
                 "%lu bytes: udata_one_pkt_ptr is set but does not hold the "
                 "data", sizes[i]);
    cr_assert_eq(lt_find_diff(sink, sizes[i], expect_seed, 0), -1);
    cr_assert_eq(sink[sizes[i]], LT_GUARD, "a byte past msg_len written");
    cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    LT_OK(LAPI_Gfence(j.h));
  }
  lt_close(&j);
}

/* LAPI_BURY_MSG and a NULL return: the data is dropped, the message is
 * complete (every counter moves). */
static void discard(int mode)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  lt_store(&ri_mode, mode);
  void *hh = lt_at_tgt(&j, (void *)ri_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  memset(sink, LT_GUARD, sizeof sink);
  const ulong sizes[] = {1, 64, 100000};
  for (size_t i = 0; i < 3; i++) {
    lt_fill(big, sizes[i], 7);
    expect_seed = 7;
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, big, sizes[i], tc, &org,
                      &cmpl));
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    LT_OK(LAPI_Gfence(j.h));
  }
  cr_assert_eq(lt_load(&hdr_runs), 3);
  long d = lt_find_nonguard(sink, sizeof sink);
  cr_assert_eq(d, -1, "%s: byte %ld of the returned buffer was written",
               mode == 1 ? "LAPI_BURY_MSG" : "NULL return", d);
  lt_close(&j);
}

Test(am_handlers, bury_msg_drops_the_data) { discard(1); }
Test(am_handlers, null_return_drops_the_data) { discard(2); }

/* ret_flags = LAPI_LOCAL_STATE: a promise about the completion handler;
 * the message is delivered and completed as usual. */
static int local_cmpl_saw_data;

static void local_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl;
  if (lt_find_diff(sink, 256, (uint64_t)(uintptr_t)param, 0) < 0)
    lt_store(&local_cmpl_saw_data, 1);
  lt_inc(&cmpl_runs);
}

static void *local_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr_len;
  ((lapi_return_info_t *)msg_len)->ret_flags = LAPI_LOCAL_STATE;
  lt_inc(&hdr_runs);
  *comp_h = local_cmpl;
  *uinfo = (void *)(uintptr_t)*(uint32_t *)uhdr;
  return sink;
}

Test(am_handlers, local_state_still_delivers)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  void *hh = lt_at_tgt(&j, (void *)local_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  uint32_t seed = 600 + j.src, myseed = 600 + (uint32_t)j.me;
  lt_fill(big, 256, myseed);
  memset(sink, LT_GUARD, 512);
  LT_OK(LAPI_Gfence(j.h));
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, &myseed, 4, big, 256, tc, &org, &cmpl));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_load(&cmpl_runs), 1);
  cr_assert_eq(lt_load(&local_cmpl_saw_data), 1);
  cr_assert_eq(lt_find_diff(sink, 256, seed, 0), -1);
  cr_assert_eq(lt_find_nonguard(sink + 256, 256), -1);
  lt_close(&j);
}

/* ------------------------------------------------------------- uhdr */

static unsigned char got_uhdr[4096];
static uint got_uhdr_len;
static int got_null_uhdr;

static void *uhdr_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)msg_len, (void)uinfo;
  got_uhdr_len = *uhdr_len;
  LT_CHECK(*uhdr_len <= sizeof got_uhdr);
  if (*uhdr_len && uhdr && *uhdr_len <= sizeof got_uhdr)
    memcpy(got_uhdr, uhdr, *uhdr_len);
  got_null_uhdr = uhdr == NULL;
  lt_inc(&hdr_runs);
  *comp_h = NULL;
  return NULL;
}

static lapi_vec_t empty_vec;

static lapi_vec_t *uhdr_vhdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                             ulong *len_vec, compl_hndlr_t **comp_h,
                             void **uinfo)
{
  (void)len_vec;
  ulong zero = 0;
  uhdr_hdr(hndl, uhdr, uhdr_len, &zero, comp_h, uinfo);
  static void *info[1];
  static ulong len[1];
  empty_vec = (lapi_vec_t){LAPI_GEN_GENERIC, 0, info, len};
  return &empty_vec;
}

Test(am_handlers, uhdr_contents_and_length)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  int max_uhdr = 0;
  LT_OK(LAPI_Qenv(j.h, MAX_UHDR_SZ, &max_uhdr));
  cr_assert_geq(max_uhdr, 4);
  if (max_uhdr > (int)sizeof got_uhdr)
    max_uhdr = (int)sizeof got_uhdr & ~3;
  void *hh = lt_at_tgt(&j, (void *)uhdr_hdr);
  void *vh = lt_at_tgt(&j, (void *)uhdr_vhdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  static unsigned char uh[4096];
  const uint lens[] = {0, 4, 8, 12, 64, (uint)max_uhdr};
  void *info[1] = {NULL};
  ulong len[1] = {0};
  lapi_vec_t v = {LAPI_GEN_GENERIC, 0, info, len};
  for (int vec = 0; vec < 2; vec++)
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
      uint64_t seed = 900 + i * 4 + (uint64_t)vec * 2;
      lt_fill(uh, lens[i], seed + (uint)j.me);
      memset(got_uhdr, LT_GUARD, sizeof got_uhdr);
      void *u = lens[i] ? uh : NULL;
      if (vec)
        LT_OK(LAPI_Amsendv(j.h, j.tgt, vh, u, lens[i], &v, tc, NULL, NULL));
      else
        LT_OK(LAPI_Amsend(j.h, j.tgt, hh, u, lens[i], NULL, 0, tc, NULL,
                          NULL));
      cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
      cr_assert_eq(got_uhdr_len, lens[i], "%s: uhdr_len %u delivered as %u",
                   vec ? "Amsendv" : "Amsend", lens[i], got_uhdr_len);
      long d = lt_find_diff(got_uhdr, lens[i], seed + j.src, 0);
      cr_assert_eq(d, -1, "%s: uhdr byte %ld of %u differs",
                   vec ? "Amsendv" : "Amsend", d, lens[i]);
      if (lens[i])
        cr_assert(!got_null_uhdr);
      LT_OK(LAPI_Gfence(j.h));
    }
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* ------------------------------------------- completion handlers send */

#define HOPS 10

static struct {
  lapi_handle_t h;
  uint tgt;
  void *hdr_at_tgt;
  lapi_cntr_t *tc;
  lapi_cntr_t org;     /* origin counter of the hops this task sends */
  int wait_inside;     /* the completion handler waits for its send */
} chain;
static uint32_t hop_uhdr[HOPS + 1];

static void *chain_hdr(lapi_handle_t *, void *, uint *, ulong *,
                       compl_hndlr_t **, void **);

static void chain_cmpl(lapi_handle_t *hndl, void *param)
{
  uint32_t hop = (uint32_t)(uintptr_t)param;
  lt_inc(&cmpl_runs);
  if (hop >= HOPS)
    return;
  /* forward: a LAPI call from inside a completion handler */
  hop_uhdr[hop + 1] = hop + 1;
  lapi_cntr_t done;
  LT_CHECK_OK(LAPI_Setcntr(*hndl, &done, 0));
  LT_CHECK_OK(LAPI_Amsend(*hndl, chain.tgt, chain.hdr_at_tgt,
                          &hop_uhdr[hop + 1], 4, NULL, 0, chain.tc,
                          &chain.org, chain.wait_inside ? &done : NULL));
  if (chain.wait_inside) {
    /* and wait for it right here: LAPI must keep dispatching */
    int cur = -1;
    LT_CHECK_OK(LAPI_Waitcntr(*hndl, &done, 1, &cur));
    LT_CHECK_EQ(cur, 0);
  }
}

static void *chain_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)msg_len;
  LT_CHECK_EQ(*uhdr_len, 4);
  lt_inc(&hdr_runs);
  *comp_h = chain_cmpl;
  *uinfo = (void *)(uintptr_t)*(uint32_t *)uhdr;
  return NULL;
}

static void run_chain(int polling, int wait_inside)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  if (polling)
    LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
  chain.h = j.h;
  chain.tgt = j.tgt;
  chain.hdr_at_tgt = lt_at_tgt(&j, (void *)chain_hdr);
  chain.tc = lt_cntr_at_tgt(&j, &recv_cntr);
  chain.wait_inside = wait_inside;
  LT_OK(LAPI_Setcntr(j.h, &chain.org, 0));
  LT_OK(LAPI_Gfence(j.h));
  /* every task starts a chain; each task receives HOPS messages */
  hop_uhdr[1] = 1;
  LT_OK(LAPI_Amsend(j.h, j.tgt, chain.hdr_at_tgt, &hop_uhdr[1], 4, NULL, 0,
                    chain.tc, &chain.org, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, HOPS), 0);
  LT_OK(LAPI_Gfence(j.h));
  while (lt_get(&j, &chain.org) < HOPS)
    LT_OK(LAPI_Probe(j.h));
  cr_assert_eq(lt_load(&hdr_runs), HOPS);
  cr_assert_eq(lt_load(&cmpl_runs), HOPS);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

Test(am_handlers, completion_handler_sends) { run_chain(0, 0); }
Test(am_handlers, completion_handler_sends_and_waits) { run_chain(0, 1); }
Test(am_handlers, polling_completion_handler_sends_and_waits)
{
  run_chain(1, 1);
}

/* ----------------------------------------------- Addr_set / Addr_get */

static int idx_hits[3];
static lapi_handle_t idx_hndl;

static void *idx_hdr_a(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr, (void)uhdr_len, (void)uinfo;
  idx_hndl = *hndl;
  lt_inc(&idx_hits[0]);
  *comp_h = NULL;
  return *msg_len ? sink : NULL;
}

static void *idx_hdr_b(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr, (void)uhdr_len, (void)uinfo;
  idx_hndl = *hndl;
  lt_inc(&idx_hits[1]);
  *comp_h = NULL;
  return *msg_len ? sink + 4096 : NULL;
}

static lapi_vec_t idx_vec;
static void *idx_vinfo[1];
static ulong idx_vlen[1];

static lapi_vec_t *idx_vhdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                            ulong *len_vec, compl_hndlr_t **comp_h,
                            void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lt_inc(&idx_hits[2]);
  idx_vinfo[0] = sink + 8192;
  idx_vlen[0] = len_vec[0];
  idx_vec = (lapi_vec_t){LAPI_GEN_IOVECTOR, 1, idx_vinfo, idx_vlen};
  *comp_h = NULL;
  return &idx_vec;
}

#define IDX(i) ((void *)(uintptr_t)(i))

Test(am_handlers, addr_set_indexes_as_header_handlers)
{
  struct lt_job j;
  lt_open(&j);
  start(&j);
  int sz = 0;
  LT_OK(LAPI_Qenv(j.h, LOC_ADDRTBL_SZ, &sz));
  cr_assert_geq(sz, 3, "LOC_ADDRTBL_SZ %d leaves no room", sz);
  int first = 1, mid = sz / 2, last = sz - 1;
  LT_OK(LAPI_Addr_set(j.h, (void *)idx_hdr_a, first));
  LT_OK(LAPI_Addr_set(j.h, (void *)idx_hdr_b, mid));
  LT_OK(LAPI_Addr_set(j.h, (void *)idx_vhdr, last));
  void *got = NULL;
  LT_OK(LAPI_Addr_get(j.h, &got, first));
  cr_assert_eq(got, (void *)idx_hdr_a);
  LT_OK(LAPI_Addr_get(j.h, &got, mid));
  cr_assert_eq(got, (void *)idx_hdr_b);
  LT_OK(LAPI_Addr_get(j.h, &got, last));
  cr_assert_eq(got, (void *)idx_vhdr);
  LT_OK(LAPI_Gfence(j.h)); /* every task registered before anyone sends */
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  static unsigned char d[64];
  lt_fill(d, sizeof d, 31 + (uint)j.me);
  memset(sink, LT_GUARD, 3 * 4096 + 64);

  /* Amsend with an index */
  LT_OK(LAPI_Amsend(j.h, j.tgt, IDX(first), NULL, 0, d, 16, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  LT_OK(LAPI_Amsend(j.h, j.tgt, IDX(mid), NULL, 0, d, 16, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(idx_hits[0], 1);
  cr_assert_eq(idx_hits[1], 1);
  cr_assert_eq(idx_hndl, j.h);
  cr_assert_eq(lt_find_diff(sink, 16, 31 + j.src, 0), -1);
  cr_assert_eq(lt_find_diff(sink + 4096, 16, 31 + j.src, 0), -1);

  /* Amsendv with an index */
  void *info[1] = {d};
  ulong len[1] = {24};
  lapi_vec_t v = {LAPI_GEN_IOVECTOR, 1, info, len};
  LT_OK(LAPI_Amsendv(j.h, j.tgt, IDX(last), NULL, 0, &v, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(idx_hits[2], 1);
  cr_assert_eq(lt_find_diff(sink + 8192, 24, 31 + j.src, 0), -1);

  /* LAPI_Xfer AM and AMV with an index in hdr_hdl */
  lapi_xfer_t x;
  memset(&x, 0, sizeof x);
  x.Am.Xfer_type = LAPI_AM_XFER;
  x.Am.tgt = j.tgt;
  x.Am.hdr_hdl = (lapi_long_t)mid;
  x.Am.udata = d;
  x.Am.udata_len = 8;
  x.Am.tgt_cntr = (lapi_long_t)(uintptr_t)tc;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(idx_hits[1], 2);
  memset(&x, 0, sizeof x);
  x.Amv.Xfer_type = LAPI_AMV_XFER;
  x.Amv.tgt = j.tgt;
  x.Amv.hdr_hdl = (lapi_long_t)last;
  x.Amv.org_vec = &v;
  x.Amv.tgt_cntr = (lapi_long_t)(uintptr_t)tc;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(idx_hits[2], 2);
  LT_OK(LAPI_Gfence(j.h));

  /* re-registering an index replaces the handler */
  LT_OK(LAPI_Addr_set(j.h, (void *)idx_hdr_b, first));
  LT_OK(LAPI_Addr_get(j.h, &got, first));
  cr_assert_eq(got, (void *)idx_hdr_b);
  LT_OK(LAPI_Gfence(j.h));
  LT_OK(LAPI_Amsend(j.h, j.tgt, IDX(first), NULL, 0, d, 16, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(idx_hits[0], 1);
  cr_assert_eq(idx_hits[1], 3);

  /* and a plain handler address still works next to the table */
  void *ha = lt_at_tgt(&j, (void *)idx_hdr_a);
  LT_OK(LAPI_Amsend(j.h, j.tgt, ha, NULL, 0, d, 16, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(idx_hits[0], 2);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

Test(am_handlers, addr_set_range)
{
  struct lt_job j;
  lt_open(&j);
  int sz = 0;
  LT_OK(LAPI_Qenv(j.h, LOC_ADDRTBL_SZ, &sz));
  const int bad[] = {0, -1, sz, sz + 1, INT_MAX, INT_MIN};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(LAPI_Addr_set(j.h, (void *)idx_hdr_a, bad[i]),
                 LAPI_ERR_ADDR_HNDL_RANGE, "Addr_set index %d", bad[i]);
    void *got = (void *)&got;
    cr_assert_eq(LAPI_Addr_get(j.h, &got, bad[i]), LAPI_ERR_ADDR_HNDL_RANGE,
                 "Addr_get index %d", bad[i]);
    cr_assert_eq(got, (void *)&got, "Addr_get wrote on failure");
  }
  /* every valid index holds what was stored */
  for (int i = 1; i < sz; i++)
    LT_OK(LAPI_Addr_set(j.h, (void *)((uintptr_t)sink + (uintptr_t)i), i));
  for (int i = 1; i < sz; i++) {
    void *got = NULL;
    LT_OK(LAPI_Addr_get(j.h, &got, i));
    cr_assert_eq(got, (void *)((uintptr_t)sink + (uintptr_t)i), "index %d",
                 i);
  }
  lt_close(&j);
}

/* Two handles: separate tables; a message reaches the handlers and the
 * counters of the handle it was sent on. */
Test(am_handlers, two_handles_keep_their_handlers)
{
  struct lt_job a, b;
  lt_open(&a);
  lt_open(&b);
  cr_assert_neq(a.h, b.h);
  main_thread = pthread_self();
  LT_OK(LAPI_Addr_set(a.h, (void *)idx_hdr_a, 5));
  LT_OK(LAPI_Addr_set(b.h, (void *)idx_hdr_b, 5));
  void *got = NULL;
  LT_OK(LAPI_Addr_get(a.h, &got, 5));
  cr_assert_eq(got, (void *)idx_hdr_a);
  LT_OK(LAPI_Addr_get(b.h, &got, 5));
  cr_assert_eq(got, (void *)idx_hdr_b);
  static lapi_cntr_t ra, rb;
  LT_OK(LAPI_Setcntr(a.h, &ra, 0));
  LT_OK(LAPI_Setcntr(b.h, &rb, 0));
  lapi_cntr_t *ta = lt_cntr_at_tgt(&a, &ra);
  lapi_cntr_t *tb = lt_cntr_at_tgt(&b, &rb);
  static unsigned char d[8];
  LT_OK(LAPI_Amsend(b.h, b.tgt, IDX(5), NULL, 0, d, 8, tb, NULL, NULL));
  cr_assert_eq(lt_wait(&b, &rb, 1), 0);
  cr_assert_eq(idx_hits[1], 1);
  cr_assert_eq(idx_hits[0], 0);
  cr_assert_eq(idx_hndl, b.h, "handler of handle %u got *hndl %u", b.h,
               idx_hndl);
  LT_OK(LAPI_Amsend(a.h, a.tgt, IDX(5), NULL, 0, d, 8, ta, NULL, NULL));
  cr_assert_eq(lt_wait(&a, &ra, 1), 0);
  cr_assert_eq(idx_hits[0], 1);
  cr_assert_eq(idx_hits[1], 1);
  cr_assert_eq(idx_hndl, a.h);
  lt_close(&b);
  /* a still works after b is gone */
  LT_OK(LAPI_Amsend(a.h, a.tgt, IDX(5), NULL, 0, d, 8, ta, NULL, NULL));
  cr_assert_eq(lt_wait(&a, &ra, 1), 0);
  cr_assert_eq(idx_hits[0], 2);
  lt_close(&a);
}
