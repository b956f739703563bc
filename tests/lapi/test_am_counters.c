/*
 * test_am_counters.c - counter semantics (reference "Counter semantics").
 *
 *   org_cntr, tgt_cntr and cmpl_cntr reach exactly 1 per message
 *   tgt_cntr / cmpl_cntr move only after the completion handler returned,
 *   with the data in place; org_cntr means the origin memory (data, uhdr,
 *   vector description) may be reused at once
 *   LAPI_Waitcntr waits for >= val and subtracts val (cur may be NULL);
 *   Getcntr/Setcntr; Nopoll_wait; Setcntr_wstatus sets the counter
 *   NULL counters are skipped; zero-byte messages count and run handlers
 *   1000 messages and one Waitcntr for 1000; counters shared by threads
 *
 * Messages go to tgt = (me + 1) % n; the target counter handed to LAPI is
 * the target task's address from LAPI_Address_init.  Facts about the
 * target that only the target can see are checked where the test thread
 * is that target (always with one task).
 */
#include "lapi_test_util.h"

TestSuite(am_counters, .timeout = LT_TIMEOUT);

static lapi_cntr_t recv_cntr;        /* my target counter */
static int hdr_runs, cmpl_runs;

/* A plain Amsend handler: copy into the buffer named by uhdr word 0. */
static unsigned char sink[1 << 20];
static int in_cmpl;                  /* a completion handler is running */
static int cmpl_returned;            /* completion handlers that finished */
static lapi_cntr_t *watch_tgt;       /* checked inside the handler */
static lapi_cntr_t *watch_cmpl;
static uint64_t sink_seed;
static size_t sink_len;
static int cmpl_saw_data;

static void plain_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)param;
  lt_store(&in_cmpl, 1);
  /* the counters move only after this handler returns */
  int v = -1;
  if (watch_tgt) {
    LT_CHECK_OK(LAPI_Getcntr(*hndl, watch_tgt, &v));
    LT_CHECK_EQ(v, 0);
  }
  if (watch_cmpl) {
    LT_CHECK_OK(LAPI_Getcntr(*hndl, watch_cmpl, &v));
    LT_CHECK_EQ(v, 0);
  }
  if (lt_find_diff(sink, sink_len, sink_seed, 0) < 0)
    lt_store(&cmpl_saw_data, 1);
  /* linger: an early counter update would now be seen by the waiter */
  for (int i = 0; i < 200; i++)
    sched_yield();
  lt_inc(&cmpl_runs);
  lt_store(&in_cmpl, 0);
  lt_inc(&cmpl_returned);
}

static void *plain_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len;
  lt_inc(&hdr_runs);
  *comp_h = plain_cmpl;
  *uinfo = NULL;
  return *msg_len ? sink : NULL;
}

static void *nocmpl_hdr(lapi_handle_t *, void *, uint *, ulong *,
                        compl_hndlr_t **, void **);

static void reset(void)
{
  lt_store(&hdr_runs, 0);
  lt_store(&cmpl_runs, 0);
  lt_store(&cmpl_returned, 0);
  lt_store(&cmpl_saw_data, 0);
  lt_store(&in_cmpl, 0);
  watch_tgt = watch_cmpl = NULL;
}

/* -------------------------------------------------------- basic counts */

Test(am_counters, each_counter_once_per_message)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  static unsigned char data[4096];
  sink_seed = 77 + j.src;
  sink_len = sizeof data;
  lt_fill(data, sizeof data, 77 + (uint)j.me);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)plain_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, sizeof data, tc, &org,
                    &cmpl));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  LT_OK(LAPI_Fence(j.h));
  LT_OK(LAPI_Gfence(j.h));
  /* nothing counted twice */
  cr_assert_eq(lt_get(&j, &org), 0);
  cr_assert_eq(lt_get(&j, &cmpl), 0);
  cr_assert_eq(lt_get(&j, &recv_cntr), 0);
  cr_assert_eq(lt_load(&hdr_runs), 1);
  cr_assert_eq(lt_load(&cmpl_runs), 1);
  cr_assert_eq(lt_find_diff(sink, sizeof data, sink_seed, 0), -1);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* tgt_cntr and cmpl_cntr: after the completion handler returned, with the
 * data in place.  The handler itself sees both counters still at 0. */
Test(am_counters, tgt_and_cmpl_after_completion_handler)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  static unsigned char data[65536];
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)plain_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  watch_tgt = &recv_cntr;
  watch_cmpl = j.src == (uint)j.me ? &cmpl : NULL;
  for (int round = 0; round < 20; round++) {
    sink_seed = 1000 + (uint64_t)round * 16 + j.src;
    sink_len = sizeof data;
    lt_fill(data, sizeof data, 1000 + (uint64_t)round * 16 + (uint)j.me);
    lt_store(&cmpl_saw_data, 0);
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, sizeof data, tc, &org,
                      &cmpl));
    if (round % 2 == 0) {
      cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
      cr_assert_eq(lt_load(&cmpl_returned), round + 1,
                   "round %d: tgt_cntr moved before the completion handler "
                   "returned", round);
      cr_assert_eq(lt_load(&in_cmpl), 0);
      cr_assert_eq(lt_find_diff(sink, sizeof data, sink_seed, 0), -1,
                   "round %d: tgt_cntr moved before the data landed", round);
      cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    } else {
      cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
      if (j.tgt == (uint)j.me) {
        cr_assert_eq(lt_load(&cmpl_returned), round + 1,
                     "round %d: cmpl_cntr moved before the completion "
                     "handler returned", round);
        cr_assert_eq(lt_find_diff(sink, sizeof data, sink_seed, 0), -1,
                     "round %d: cmpl_cntr moved before the data landed",
                     round);
      }
      cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    }
    cr_assert_eq(lt_load(&cmpl_saw_data), 1,
                 "round %d: the completion handler ran before the data had "
                 "landed", round);
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    LT_OK(LAPI_Gfence(j.h)); /* every task checked this round */
  }
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* Without a completion handler tgt_cntr means "the data landed". */
static void *nocmpl_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                        ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lt_inc(&hdr_runs);
  *comp_h = NULL;
  return *msg_len ? sink : NULL;
}

Test(am_counters, tgt_cntr_without_completion_handler)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  static unsigned char data[100000];
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)nocmpl_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  for (int round = 0; round < 10; round++) {
    lt_fill(data, sizeof data, 500 + (uint64_t)round * 16 + (uint)j.me);
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, sizeof data, tc, NULL,
                      &cmpl));
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    cr_assert_eq(lt_find_diff(sink, sizeof data,
                              500 + (uint64_t)round * 16 + j.src, 0), -1,
                 "round %d: tgt_cntr moved before the data landed", round);
    cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    LT_OK(LAPI_Gfence(j.h)); /* everyone checked before data is reused */
  }
  cr_assert_eq(lt_load(&hdr_runs), 10);
  lt_close(&j);
}

/* org_cntr: once it moved, the data, the uhdr and the vector description
 * may be overwritten without changing what the target receives. */
static uint32_t got_uhdr[4];
static lapi_vec_t vtgt;
static void *vtinfo[4];
static ulong vtlen[4];

static lapi_vec_t *reuse_vhdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                              ulong *len_vec, compl_hndlr_t **comp_h,
                              void **uinfo)
{
  (void)hndl, (void)uinfo;
  lt_inc(&hdr_runs);
  LT_CHECK_EQ(*uhdr_len, sizeof got_uhdr);
  memcpy(got_uhdr, uhdr, sizeof got_uhdr);
  vtgt.vec_type = LAPI_GEN_IOVECTOR;
  vtgt.num_vecs = 2;
  vtgt.info = vtinfo;
  vtgt.len = vtlen;
  vtlen[0] = len_vec[0];
  vtlen[1] = len_vec[1];
  vtinfo[0] = sink;
  vtinfo[1] = sink + len_vec[0];
  *comp_h = NULL;
  return &vtgt;
}

struct scribble {
  struct lt_job *j;
  lapi_cntr_t *org;
  unsigned char *buf;
  size_t len;
};

static void *scribbler(void *p)
{
  struct scribble *s = p;
  int v = 0;
  for (unsigned k = 1; v < 1; k++) {
    LT_CHECK_OK(LAPI_Getcntr(s->j->h, s->org, &v));
    if (k % 1024 == 0)
      sched_yield(); /* one core: let the dispatcher run */
  }
  /* from the end backwards: a copy still running forwards meets it */
  for (size_t end = s->len; end > 0;) {
    size_t n = end < 4096 ? end : 4096;
    end -= n;
    memset(s->buf + end, 0x11, n);
  }
  return NULL;
}

Test(am_counters, origin_reusable_after_org_cntr)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  enum { HALF = 300000 };
  static unsigned char data[2 * HALF];
  lapi_cntr_t org;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)plain_hdr);
  void *vh = lt_at_tgt(&j, (void *)reuse_vhdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);

  /* Amsend: data */
  lt_fill(data, sizeof data, 40 + (uint)j.me);
  sink_seed = 40 + j.src, sink_len = sizeof data;
  /* a thread that pounces on the buffer the moment org_cntr moves, much
   * sooner than a Waitcntr wakes up */
  struct scribble sc = {&j, &org, data, sizeof data};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, scribbler, &sc), 0);
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, sizeof data, tc, &org,
                    NULL));
  pthread_join(th, NULL);
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_find_diff(sink, sizeof data, 40 + j.src, 0), -1,
               "Amsend: the target got bytes written after org_cntr moved");
  LT_OK(LAPI_Gfence(j.h));

  /* Amsendv: data, uhdr, the vector and its arrays */
  lt_fill(data, sizeof data, 50 + (uint)j.me);
  uint32_t uhdr[4] = {1, 2, 3, (uint32_t)j.me};
  void *info[2] = {data + HALF, data};
  ulong len[2] = {HALF, HALF};
  lapi_vec_t v = {LAPI_GEN_IOVECTOR, 2, info, len};
  LT_OK(LAPI_Amsendv(j.h, j.tgt, vh, uhdr, sizeof uhdr, &v, tc, &org, NULL));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  memset(data, 0x22, sizeof data);
  memset(uhdr, 0x33, sizeof uhdr);
  info[0] = info[1] = NULL;
  len[0] = len[1] = 7;
  memset(&v, 0x44, sizeof v);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(got_uhdr[0], 1);
  cr_assert_eq(got_uhdr[3], j.src);
  cr_assert_eq(lt_find_diff(sink, HALF, 50 + j.src, HALF), -1,
               "Amsendv: segment 0 changed after org_cntr");
  cr_assert_eq(lt_find_diff(sink + HALF, HALF, 50 + j.src, 0), -1,
               "Amsendv: segment 1 changed after org_cntr");
  LT_OK(LAPI_Gfence(j.h));

  /* Put */
  static unsigned char put_dst[2 * HALF];
  unsigned char *remote = lt_at_tgt(&j, put_dst);
  lt_fill(data, sizeof data, 60 + (uint)j.me);
  LT_OK(LAPI_Put(j.h, j.tgt, sizeof data, remote, data, tc, &org, NULL));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  memset(data, 0x55, sizeof data);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_find_diff(put_dst, sizeof data, 60 + j.src, 0), -1,
               "Put: the target got bytes written after org_cntr moved");
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* The same with 16 MiB: the copy takes long enough for the scribbler to
 * meet it if org_cntr moved before the data was copied out. */
static unsigned char *huge_sink;

static void *huge_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)msg_len, (void)uinfo;
  *comp_h = NULL;
  return huge_sink;
}

Test(am_counters, org_cntr_only_after_the_data_is_out)
{
  enum { HUGE = 16 << 20 };
  struct lt_job j;
  lt_open(&j);
  unsigned char *data = malloc(HUGE);
  huge_sink = malloc(HUGE);
  cr_assert(data && huge_sink);
  lapi_cntr_t org;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)huge_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  for (int round = 0; round < 3; round++) {
    memset(data, 0x5A, HUGE);
    memset(huge_sink, 0, HUGE);
    LT_OK(LAPI_Gfence(j.h));
    struct scribble sc = {&j, &org, data, HUGE};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, scribbler, &sc), 0);
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, HUGE, tc, &org, NULL));
    pthread_join(th, NULL);
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    for (size_t k = 0; k < HUGE; k++)
      if (huge_sink[k] != 0x5A)
        cr_assert_fail("round %d: target byte %zu is 0x%02x: the origin "
                       "buffer was still read after org_cntr moved", round,
                       k, huge_sink[k]);
  }
  LT_OK(LAPI_Gfence(j.h));
  free(data);
  free(huge_sink);
  lt_close(&j);
}

/* ------------------------------------------------------------ Waitcntr */

Test(am_counters, waitcntr_subtracts)
{
  struct lt_job j;
  lt_open(&j);
  lapi_cntr_t c;
  int cur = -1;
  LT_OK(LAPI_Setcntr(j.h, &c, 5));
  LT_OK(LAPI_Waitcntr(j.h, &c, 3, &cur));
  cr_assert_eq(cur, 2, "set 5, wait 3: cur is %d", cur);
  cr_assert_eq(lt_get(&j, &c), 2);
  LT_OK(LAPI_Waitcntr(j.h, &c, 2, NULL)); /* cur may be NULL */
  cr_assert_eq(lt_get(&j, &c), 0);
  LT_OK(LAPI_Setcntr(j.h, &c, 4));
  LT_OK(LAPI_Waitcntr(j.h, &c, 0, &cur)); /* nothing to wait for */
  cr_assert_eq(cur, 4);
  LT_OK(LAPI_Waitcntr(j.h, &c, 4, &cur)); /* exactly the value */
  cr_assert_eq(cur, 0);
  LT_OK(LAPI_Nopoll_wait(j.h, &c, 0, &cur));
  cr_assert_eq(cur, 0);
  LT_OK(LAPI_Setcntr(j.h, &c, 9));
  LT_OK(LAPI_Nopoll_wait(j.h, &c, 6, &cur));
  cr_assert_eq(cur, 3);
  LT_OK(LAPI_Nopoll_wait(j.h, &c, 3, NULL));
  cr_assert_eq(lt_get(&j, &c), 0);
  lt_close(&j);
}

Test(am_counters, getcntr_setcntr)
{
  struct lt_job j;
  lt_open(&j);
  lapi_cntr_t c[3];
  memset(c, 0xA5, sizeof c); /* garbage: Setcntr must fully reset it */
  const int vals[] = {0, 1, 7, 123456, INT_MAX - 3, 3};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    for (int k = 0; k < 3; k++)
      LT_OK(LAPI_Setcntr(j.h, &c[k], vals[i] + k));
    for (int k = 0; k < 3; k++)
      cr_assert_eq(lt_get(&j, &c[k]), vals[i] + k);
  }
  /* a zero-initialised counter reads 0 */
  static lapi_cntr_t zero;
  cr_assert_eq(lt_get(&j, &zero), 0);
  /* a garbage counter made usable by Setcntr: waited on, then bumped */
  static lapi_cntr_t g;
  memset(&g, 0x5A, sizeof g);
  LT_OK(LAPI_Setcntr(j.h, &g, 0));
  lapi_cntr_t *gt = lt_cntr_at_tgt(&j, &g);
  LT_OK(LAPI_Amsend(j.h, j.tgt, (void *)lt_at_tgt(&j, (void *)nocmpl_hdr),
                    NULL, 0, NULL, 0, gt, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &g, 1), 0);
  lt_close(&j);
}

/* Waitcntr that has to wait: the increments come from messages. */
Test(am_counters, waitcntr_waits_for_increments)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)nocmpl_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  for (int i = 0; i < 10; i++)
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, NULL, 0, tc, NULL, &cmpl));
  int left = lt_wait(&j, &recv_cntr, 7);
  cr_assert(left >= 0 && left <= 3, "waited for 7 of 10: %d left", left);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 3), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 10), 0);
  lt_close(&j);
}

Test(am_counters, nopoll_wait_in_interrupt_mode)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)plain_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  static unsigned char data[256];
  lt_fill(data, sizeof data, 9 + (uint)j.me);
  sink_seed = 9 + j.src, sink_len = sizeof data;
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, sizeof data, tc, NULL,
                    &cmpl));
  int cur = -1;
  LT_OK(LAPI_Nopoll_wait(j.h, &recv_cntr, 1, &cur));
  cr_assert_eq(cur, 0);
  LT_OK(LAPI_Nopoll_wait(j.h, &cmpl, 1, &cur));
  cr_assert_eq(cur, 0);
  cr_assert_eq(lt_find_diff(sink, sizeof data, sink_seed, 0), -1);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* IBM: "This subroutine sets cntr to 0" and attaches the destination
 * list and status array to it (read back by LAPI_Nopoll_wait). */
Test(am_counters, setcntr_wstatus_sets_the_counter_to_zero)
{
  struct lt_job j;
  lt_open(&j);
  lapi_cntr_t c;
  LT_OK(LAPI_Setcntr(j.h, &c, 5));
  uint dest[1] = {j.tgt};
  int status[1] = {-1};
  LT_OK(LAPI_Setcntr_wstatus(j.h, &c, 1, dest, status));
  cr_assert_eq(lt_get(&j, &c), 0);
  LT_OK(LAPI_Setcntr(j.h, &c, 2));
  LT_OK(LAPI_Setcntr_wstatus(j.h, &c, 0, NULL, NULL));
  cr_assert_eq(lt_get(&j, &c), 0);
  lt_close(&j);
}

/* --------------------------------------------------- NULL counters */

Test(am_counters, null_counters_are_skipped)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  static lapi_cntr_t recv[8];
  lapi_cntr_t org[8], cmpl[8];
  for (int m = 0; m < 8; m++) {
    LT_OK(LAPI_Setcntr(j.h, &recv[m], 0));
    LT_OK(LAPI_Setcntr(j.h, &org[m], 0));
    LT_OK(LAPI_Setcntr(j.h, &cmpl[m], 0));
  }
  void *hh = lt_at_tgt(&j, (void *)plain_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, recv);
  static unsigned char data[8][64];
  sink_len = 0;
  for (int m = 0; m < 8; m++) {
    lt_fill(data[m], 64, (uint64_t)m);
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data[m], 64,
                      (m & 1) ? &tc[m] : NULL, (m & 2) ? &org[m] : NULL,
                      (m & 4) ? &cmpl[m] : NULL));
    /* each message completes on its own: its completion handler runs */
    lt_poll_until(&j, &cmpl_returned, m + 1);
    if (m & 2)
      cr_assert_eq(lt_wait(&j, &org[m], 1), 0);
    if (m & 4)
      cr_assert_eq(lt_wait(&j, &cmpl[m], 1), 0);
    LT_OK(LAPI_Gfence(j.h));
    if (m & 1)
      cr_assert_eq(lt_wait(&j, &recv[m], 1), 0);
  }
  LT_OK(LAPI_Gfence(j.h));
  for (int m = 0; m < 8; m++) {
    cr_assert_eq(lt_get(&j, &recv[m]), 0, "message %d: tgt_cntr", m);
    cr_assert_eq(lt_get(&j, &org[m]), 0, "message %d: org_cntr", m);
    cr_assert_eq(lt_get(&j, &cmpl[m]), 0, "message %d: cmpl_cntr", m);
  }
  cr_assert_eq(lt_load(&hdr_runs), 8);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* ------------------------------------------------- zero-byte messages */

static lapi_vec_t empty_tvec;
static ulong zero_msg_len = 99;
static void *zero_pkt_ptr;

static void *zero_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lt_inc(&hdr_runs);
  zero_msg_len = *msg_len;
  zero_pkt_ptr = ((lapi_return_info_t *)msg_len)->udata_one_pkt_ptr;
  *comp_h = plain_cmpl;
  return NULL;
}

static lapi_vec_t *zero_vhdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                             ulong *len_vec, compl_hndlr_t **comp_h,
                             void **uinfo)
{
  (void)hndl, (void)uhdr_len, (void)len_vec, (void)uinfo;
  lt_inc(&hdr_runs);
  empty_tvec.vec_type = (lapi_vectype_t)((uint32_t *)uhdr)[0];
  empty_tvec.num_vecs = 0;
  static void *info[3] = {sink, NULL, NULL};
  static ulong len[1] = {0};
  empty_tvec.info = info;
  empty_tvec.len = empty_tvec.vec_type == LAPI_GEN_STRIDED_XFER ? NULL : len;
  *comp_h = plain_cmpl;
  return &empty_tvec;
}

Test(am_counters, zero_byte_messages_count)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  memset(sink, LT_GUARD, 64);
  sink_len = 0;
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)zero_hdr);
  void *vh = lt_at_tgt(&j, (void *)zero_vhdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  static unsigned char some[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int sent = 0;

  /* Amsend with no data, with a NULL and a non-NULL pointer */
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, NULL, 0, tc, &org, &cmpl));
  sent++;
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, some, 0, tc, &org, &cmpl));
  sent++;
  cr_assert_eq(lt_wait(&j, &recv_cntr, 2), 0);
  cr_assert_eq(lt_wait(&j, &org, 2), 0);
  cr_assert_eq(zero_msg_len, 0);

  /* Amsendv with an empty vector of every type */
  for (uint32_t t = 0; t < 3; t++) {
    void *info[3] = {some, (void *)(uintptr_t)4, (void *)(uintptr_t)4};
    ulong len[1] = {0};
    lapi_vec_t v = {(lapi_vectype_t)t, 0, info,
                    t == LAPI_GEN_STRIDED_XFER ? NULL : len};
    LT_OK(LAPI_Amsendv(j.h, j.tgt, vh, &t, sizeof t, &v, tc, &org, &cmpl));
    sent++;
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
  }
  /* Amsendv with segments that are all empty (uhdr and vector stay
   * valid until org_cntr moved) */
  void *ginfo[3] = {NULL, some, NULL};
  ulong glen[3] = {0, 0, 0};
  lapi_vec_t gv = {LAPI_GEN_GENERIC, 3, ginfo, glen};
  uint32_t gt = LAPI_GEN_GENERIC;
  LT_OK(LAPI_Amsendv(j.h, j.tgt, vh, &gt, sizeof gt, &gv, tc, &org, &cmpl));
  sent++;
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, sent), 0);
  cr_assert_eq(lt_load(&hdr_runs), sent);
  cr_assert_eq(lt_load(&cmpl_runs), sent,
               "zero-byte messages: %d completion handlers for %d messages",
               lt_load(&cmpl_runs), sent);
  cr_assert_eq(lt_find_nonguard(sink, 64), -1);

  /* Put and Get of 0 bytes */
  static unsigned char area[16];
  memset(area, LT_GUARD, sizeof area);
  unsigned char *remote = lt_at_tgt(&j, area);
  LT_OK(LAPI_Put(j.h, j.tgt, 0, remote, some, tc, &org, &cmpl));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  unsigned char local[8];
  memset(local, LT_GUARD, sizeof local);
  LT_OK(LAPI_Get(j.h, j.tgt, 0, remote, local, tc, &org));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_find_nonguard(local, sizeof local), -1);
  cr_assert_eq(lt_find_nonguard(area, sizeof area), -1);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* ------------------------------------------------------ many messages */

#define MANY 1000
static uint32_t slot[MANY];
static int slot_hits[MANY];

static void *many_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uinfo;
  lt_inc(&hdr_runs);
  LT_CHECK_EQ(*uhdr_len, 4);
  LT_CHECK_EQ(*msg_len, 4);
  uint32_t i = *(uint32_t *)uhdr;
  LT_CHECK(i < MANY);
  if (i >= MANY)
    return NULL;
  lt_inc(&slot_hits[i]);
  *comp_h = NULL;
  return &slot[i];
}

Test(am_counters, thousand_amsends_one_waitcntr)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)many_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  static uint32_t idx[MANY], val[MANY];
  for (uint32_t i = 0; i < MANY; i++) {
    idx[i] = i;
    val[i] = 0xA0000000u + i * 3 + (uint32_t)j.me;
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, &idx[i], 4, &val[i], 4, tc, &org,
                      &cmpl));
  }
  cr_assert_eq(lt_wait(&j, &org, MANY), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, MANY), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, MANY), 0);
  for (uint32_t i = 0; i < MANY; i++) {
    cr_assert_eq(slot_hits[i], 1, "message %u delivered %d times", i,
                 slot_hits[i]);
    cr_assert_eq(slot[i], 0xA0000000u + i * 3 + j.src, "slot %u", i);
  }
  cr_assert_eq(lt_load(&hdr_runs), MANY);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* ------------------------------------------------------------ threads */

#define THREADS 4
#define PER_THREAD 250

struct sender_arg {
  struct lt_job *j;
  void *hh;
  lapi_cntr_t *tc, *org, *cmpl;
  int id;
  lapi_cntr_t own;    /* a counter only this thread uses */
};

static uint32_t tidx[THREADS * PER_THREAD], tval[THREADS * PER_THREAD];

static void *sender(void *p)
{
  struct sender_arg *a = p;
  for (int k = 0; k < PER_THREAD; k++) {
    uint32_t i = (uint32_t)(a->id * PER_THREAD + k);
    tidx[i] = i;
    tval[i] = 0xB0000000u + i * 3 + (uint32_t)a->j->me;
    LT_CHECK_OK(LAPI_Amsend(a->j->h, a->j->tgt, a->hh, &tidx[i], 4, &tval[i],
                            4, a->tc, a->org, a->cmpl));
    /* a private counter, set and read while the others are busy */
    LT_CHECK_OK(LAPI_Setcntr(a->j->h, &a->own, k));
    int v = -1;
    LT_CHECK_OK(LAPI_Getcntr(a->j->h, &a->own, &v));
    LT_CHECK_EQ(v, k);
  }
  return NULL;
}

Test(am_counters, counters_shared_by_sending_threads)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)many_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  pthread_t th[THREADS];
  static struct sender_arg a[THREADS];
  for (int t = 0; t < THREADS; t++) {
    a[t] = (struct sender_arg){&j, hh, tc, &org, &cmpl, t, {0, 0, NULL}};
    cr_assert_eq(pthread_create(&th[t], NULL, sender, &a[t]), 0);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  cr_assert_eq(lt_wait(&j, &org, MANY), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, MANY), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, MANY), 0);
  for (uint32_t i = 0; i < MANY; i++) {
    cr_assert_eq(slot_hits[i], 1, "message %u delivered %d times", i,
                 slot_hits[i]);
    cr_assert_eq(slot[i], 0xB0000000u + i * 3 + j.src);
  }
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

struct waiter_arg {
  struct lt_job *j;
  lapi_cntr_t *c;
  int got;
};

static void *waiter(void *p)
{
  struct waiter_arg *a = p;
  for (int k = 0; k < PER_THREAD / 50; k++) {
    LT_CHECK_OK(LAPI_Waitcntr(a->j->h, a->c, 50, NULL));
    a->got += 50;
  }
  return NULL;
}

/* Several threads wait on one counter at once: every increment is
 * consumed exactly once, nobody is left hanging. */
Test(am_counters, several_waiters_on_one_counter)
{
  struct lt_job j;
  lt_open(&j);
  reset();
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)many_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  pthread_t th[THREADS];
  static struct waiter_arg w[THREADS];
  for (int t = 0; t < THREADS; t++) {
    w[t] = (struct waiter_arg){&j, &recv_cntr, 0};
    cr_assert_eq(pthread_create(&th[t], NULL, waiter, &w[t]), 0);
  }
  static uint32_t idx[MANY], val[MANY];
  for (uint32_t i = 0; i < MANY; i++) {
    idx[i] = i;
    val[i] = i;
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, &idx[i], 4, &val[i], 4, tc, NULL,
                      &cmpl));
  }
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    cr_assert_eq(w[t].got, PER_THREAD);
  }
  cr_assert_eq(lt_get(&j, &recv_cntr), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, MANY), 0);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}
