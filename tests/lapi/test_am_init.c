/*
 * test_am_init.c - instances and environment: LAPI_Init/LAPI_Term rules,
 * several handles, Term then Init again, calls on terminated or never
 * initialised handles; LAPI_Qenv for every query and LAPI_Senv for the
 * settable ones; LAPI_Address, LAPI_Address_init(64); LAPI_Util
 * LAPI_GET_THREAD_FUNC; LAPI_Msg_string without a handle.
 */
#include <errno.h>
#include <time.h>

#include "lapi_test_util.h"

TestSuite(am_init, .timeout = LT_TIMEOUT);

/* ------------------------------------------------------- Init / Term */

Test(am_init, init_rules)
{
  lapi_handle_t h = 0x5A5A5A5Au;
  cr_assert_eq(LAPI_Init(&h, NULL), LAPI_ERR_INFO_NULL);
  cr_assert_eq(h, 0x5A5A5A5Au, "LAPI_Init wrote the handle on failure");
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.info6 = 1; /* reserved */
  cr_assert_eq(LAPI_Init(&h, &info), LAPI_ERR_INFO_NONZERO);
  cr_assert_eq(h, 0x5A5A5A5Au);
  /* nothing was left initialised by the failures: a clean init works */
  memset(&info, 0, sizeof info);
  LT_OK(LAPI_Init(&h, &info));
  int id = -1;
  LT_OK(LAPI_Qenv(h, TASK_ID, &id));
  LT_OK(LAPI_Term(h));
}

Test(am_init, several_handles_are_independent)
{
  struct lt_job j[3];
  for (int i = 0; i < 3; i++)
    lt_open(&j[i]);
  cr_assert_neq(j[0].h, j[1].h);
  cr_assert_neq(j[0].h, j[2].h);
  cr_assert_neq(j[1].h, j[2].h);
  /* settings are per instance */
  LT_OK(LAPI_Senv(j[1].h, INTERRUPT_SET, 0));
  int v0 = -1, v1 = -1, v2 = -1;
  LT_OK(LAPI_Qenv(j[0].h, INTERRUPT_SET, &v0));
  LT_OK(LAPI_Qenv(j[1].h, INTERRUPT_SET, &v1));
  LT_OK(LAPI_Qenv(j[2].h, INTERRUPT_SET, &v2));
  cr_assert_eq(v0, 1);
  cr_assert_eq(v1, 0);
  cr_assert_eq(v2, 1);
  /* ending one leaves the others working */
  lt_close(&j[1]);
  cr_assert_eq(LAPI_Qenv(j[1].h, TASK_ID, &v1), LAPI_ERR_HNDL_INVALID);
  LT_OK(LAPI_Qenv(j[0].h, TASK_ID, &v0));
  LT_OK(LAPI_Qenv(j[2].h, TASK_ID, &v2));
  lt_close(&j[0]);
  lt_close(&j[2]);
}

static int term_hdr_runs;
static void *count_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)msg_len, (void)uinfo;
  lt_inc(&term_hdr_runs);
  *comp_h = NULL;
  return NULL;
}

Test(am_init, term_then_init_again)
{
  for (int round = 0; round < 5; round++) {
    struct lt_job j;
    lt_open(&j);
    static lapi_cntr_t rc;
    LT_OK(LAPI_Setcntr(j.h, &rc, 0));
    void *hh = lt_at_tgt(&j, (void *)count_hdr);
    lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &rc);
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, NULL, 0, tc, NULL, NULL));
    cr_assert_eq(lt_wait(&j, &rc, 1), 0);
    cr_assert_eq(lt_load(&term_hdr_runs), round + 1);
    lt_close(&j);
  }
}

/* Every call on a handle that was terminated, or never initialised. */
static void all_calls_invalid(lapi_handle_t h)
{
  int v = 0;
  lapi_cntr_t c;
  memset(&c, 0, sizeof c);
  int x = 1, in = 1;
  long long x64 = 1, in64 = 1;
  unsigned char buf[8];
  void *tab[4];
  lapi_long_t tab64[4];
  void *info[1] = {buf};
  ulong len[1] = {8};
  lapi_vec_t vec = {LAPI_GEN_IOVECTOR, 1, info, len};
  lapi_xfer_t xf;
  memset(&xf, 0, sizeof xf);
  xf.Put.Xfer_type = LAPI_PUT_XFER;
  xf.Put.tgt_addr = (lapi_long_t)(uintptr_t)buf;
  xf.Put.org_addr = buf;
  xf.Put.len = 8;
  lapi_util_t ut;
  memset(&ut, 0, sizeof ut);
  ut.Util_type = LAPI_GET_THREAD_FUNC;
  lapi_msg_info_t mi;
  void *got;
  const int H = LAPI_ERR_HNDL_INVALID;
#define INVALID(call) cr_assert_eq((call), H, "%s on handle %u", #call, h)
  INVALID(LAPI_Qenv(h, TASK_ID, &v));
  INVALID(LAPI_Senv(h, INTERRUPT_SET, 1));
  INVALID(LAPI_Setcntr(h, &c, 1));
  INVALID(LAPI_Getcntr(h, &c, &v));
  INVALID(LAPI_Waitcntr(h, &c, 0, &v));
  INVALID(LAPI_Nopoll_wait(h, &c, 0, &v));
  INVALID(LAPI_Setcntr_wstatus(h, &c, 0, NULL, NULL));
  INVALID(LAPI_Probe(h));
  INVALID(LAPI_Msgpoll(h, 1, &mi));
  INVALID(LAPI_Amsend(h, 0, (void *)count_hdr, NULL, 0, buf, 8, NULL, NULL,
                      NULL));
  INVALID(LAPI_Amsendv(h, 0, (void *)count_hdr, NULL, 0, &vec, NULL, NULL,
                       NULL));
  INVALID(LAPI_Put(h, 0, 8, buf, buf, NULL, NULL, NULL));
  INVALID(LAPI_Get(h, 0, 8, buf, buf, NULL, NULL));
  INVALID(LAPI_Putv(h, 0, &vec, &vec, NULL, NULL, NULL));
  INVALID(LAPI_Getv(h, 0, &vec, &vec, NULL, NULL));
  INVALID(LAPI_Rmw(h, FETCH_AND_ADD, 0, &x, &in, NULL, NULL));
  INVALID(LAPI_Rmw64(h, FETCH_AND_ADD, 0, &x64, &in64, NULL, NULL));
  INVALID(LAPI_Fence(h));
  INVALID(LAPI_Gfence(h));
  INVALID(LAPI_Address_init(h, buf, tab));
  INVALID(LAPI_Address_init64(h, (lapi_long_t)(uintptr_t)buf, tab64));
  INVALID(LAPI_Addr_set(h, (void *)count_hdr, 1));
  INVALID(LAPI_Addr_get(h, &got, 1));
  INVALID(LAPI_Purge_totask(h, 0));
  INVALID(LAPI_Resume_totask(h, 0));
  INVALID(LAPI_Xfer(h, &xf));
  INVALID(LAPI_Util(h, &ut));
  INVALID(LAPI_Term(h));
#undef INVALID
  cr_assert_eq(c.cntr, 0, "a counter changed");
  cr_assert_eq(x, 1);
  cr_assert_eq(x64, 1);
}

Test(am_init, calls_on_a_terminated_handle)
{
  struct lt_job j, keep;
  lt_open(&keep); /* another live instance must not make h valid */
  lt_open(&j);
  lt_close(&j);
  all_calls_invalid(j.h);
  lt_close(&keep);
  all_calls_invalid(keep.h);
  cr_assert_eq(lt_load(&term_hdr_runs), 0);
}

Test(am_init, calls_on_never_initialised_handles)
{
  struct lt_job j;
  lt_open(&j);
  const lapi_handle_t bad[] = {LAPI_VOID_HANDLE, j.h + 1, 127, 128, 1000,
                               0x7fffffffu};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    all_calls_invalid(bad[i]);
  lt_close(&j);
  cr_assert_eq(lt_load(&term_hdr_runs), 0);
}

Test(am_init, all_handles_in_use)
{
  enum { CAP = 1024 };
  static lapi_handle_t hs[CAP];
  int n = 0, rc = LAPI_SUCCESS;
  lapi_info_t info;
  while (n < CAP) {
    memset(&info, 0, sizeof info);
    rc = LAPI_Init(&hs[n], &info);
    if (rc != LAPI_SUCCESS)
      break;
    n++;
  }
  cr_assert_eq(rc, LAPI_ERR_ALL_HNDL_IN_USE,
               "LAPI_Init number %d returned %d", n + 1, rc);
  cr_assert_geq(n, 2, "only %d instance(s) per process", n);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < i; k++)
      cr_assert_neq(hs[i], hs[k]);
  for (int i = 0; i < n; i++)
    LT_OK(LAPI_Term(hs[i]));
  /* all free again */
  lapi_handle_t h;
  memset(&info, 0, sizeof info);
  LT_OK(LAPI_Init(&h, &info));
  LT_OK(LAPI_Term(h));
}

/* ---------------------------------------------------------------- Qenv */

union qbuf {
  int i[1024];
  lapi_statistics_t s;
};

static int qenv(lapi_handle_t h, lapi_query_t q)
{
  int v = INT_MIN;
  LT_OK(LAPI_Qenv(h, q, &v));
  return v;
}

Test(am_init, qenv_every_query)
{
  struct lt_job j;
  lt_open(&j);
  lapi_handle_t h = j.h;
  int me = qenv(h, TASK_ID), n = qenv(h, NUM_TASKS);
  cr_assert_geq(n, 1);
  cr_assert(me >= 0 && me < n);
  if (n == 1)
    cr_assert_eq(me, 0);
  int uh = qenv(h, MAX_UHDR_SZ);
  cr_assert(uh >= 4 && uh % 4 == 0, "MAX_UHDR_SZ %d", uh);
  cr_assert_gt(qenv(h, MAX_DATA_SZ), 0);
  int chk = qenv(h, ERROR_CHK);
  cr_assert(chk == 0 || chk == 1, "ERROR_CHK %d", chk);
  int tmin = qenv(h, MIN_TIMEOUT), tmax = qenv(h, MAX_TIMEOUT);
  int t = qenv(h, TIMEOUT);
  cr_assert(tmin >= 0 && tmin <= t && t <= tmax,
            "TIMEOUT %d not in [%d, %d]", t, tmin, tmax);
  cr_assert_eq(qenv(h, INTERRUPT_SET), 1);
  cr_assert_geq(qenv(h, MAX_PORTS), 1);
  cr_assert_gt(qenv(h, MAX_PKT_SZ), 0);
  cr_assert_geq(qenv(h, NUM_REX_BUFS), 0);
  cr_assert_geq(qenv(h, REX_BUF_SZ), 0);
  cr_assert_geq(qenv(h, LOC_ADDRTBL_SZ), 2);
  cr_assert_eq(qenv(h, EPOCH_NUM), 0); /* as given (zeroed info) */
  cr_assert_geq(qenv(h, USE_THRESH), 0);
  cr_assert_geq(qenv(h, RCV_FIFO_SIZE), 0);
  cr_assert_geq(qenv(h, MAX_ATOM_SIZE), 0);
  cr_assert_geq(qenv(h, BUF_CP_SIZE), 0);
  cr_assert_geq(qenv(h, MAX_PKTS_OUT), 1);
  cr_assert_geq(qenv(h, ACK_THRESHOLD), 0);
  int shm = qenv(h, QUERY_SHM_ENABLED);
  cr_assert(shm == 0 || shm == 1);
  int sn = qenv(h, QUERY_SHM_NUM_TASKS);
  cr_assert(sn >= 1 && sn <= n, "QUERY_SHM_NUM_TASKS %d of %d", sn, n);
  static union qbuf b;
  for (size_t i = 0; i < 1024; i++)
    b.i[i] = -7;
  LT_OK(LAPI_Qenv(h, QUERY_SHM_TASKS, b.i));
  int found_me = 0;
  for (int i = 0; i < sn; i++) {
    cr_assert(b.i[i] >= 0 && b.i[i] < n, "QUERY_SHM_TASKS[%d] = %d", i,
              b.i[i]);
    found_me += b.i[i] == me;
  }
  cr_assert_eq(found_me, 1, "my task is not in QUERY_SHM_TASKS once");
  cr_assert_eq(b.i[sn], -7, "QUERY_SHM_TASKS wrote past its %d entries", sn);
  LT_OK(LAPI_Qenv(h, QUERY_STATISTICS, (int *)&b.s));
  LT_OK(LAPI_Qenv(h, PRINT_STATISTICS, b.i));
  LT_OK(LAPI_Qenv(h, QUERY_SHM_STATISTICS, (int *)&b.s));
  LT_OK(LAPI_Qenv(h, QUERY_LOCAL_SEND_STATISTICS, (int *)&b.s));
  int bulk = qenv(h, BULK_XFER);
  cr_assert(bulk == 0 || bulk == 1);
  for (lapi_query_t q = BULK_MIN_MSG_SIZE; q <= RC_QP_INIT_SETUP; q++)
    cr_assert_geq(qenv(h, q), 0, "query %d", q);
  /* not queries */
  int v = 12345;
  cr_assert_eq(LAPI_Qenv(h, LAST_QUERY, &v), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(LAPI_Qenv(h, (lapi_query_t)-1, &v), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(LAPI_Qenv(h, (lapi_query_t)1000, &v), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(v, 12345);
  for (int q = 0; q < LAST_QUERY; q++)
    cr_assert_eq(LAPI_Qenv(h, (lapi_query_t)q, NULL), LAPI_ERR_RET_PTR_NULL,
                 "query %d with NULL ret_val", q);
  lt_close(&j);
}

Test(am_init, epoch_num_is_reported)
{
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.epoch_num = 7;
  struct lt_job j;
  lt_open_info(&j, &info);
  cr_assert_eq(qenv(j.h, EPOCH_NUM), 7);
  lt_close(&j);
}

static void *stat_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  static unsigned char sink[4096];
  *comp_h = NULL;
  return *msg_len <= sizeof sink ? sink : NULL;
}

/* The statistics count what was sent (in one of the three kinds). */
Test(am_init, statistics_count_traffic)
{
  struct lt_job j;
  lt_open(&j);
  static lapi_cntr_t rc;
  LT_OK(LAPI_Setcntr(j.h, &rc, 0));
  void *hh = lt_at_tgt(&j, (void *)stat_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &rc);
  static unsigned char data[3000];
  for (int i = 0; i < 3; i++)
    LT_OK(LAPI_Amsend(j.h, j.tgt, hh, NULL, 0, data, 1000, tc, NULL, NULL));
  cr_assert_eq(lt_wait(&j, &rc, 3), 0);
  LT_OK(LAPI_Gfence(j.h));
  lapi_statistics_t s[3];
  memset(s, 0, sizeof s);
  LT_OK(LAPI_Qenv(j.h, QUERY_STATISTICS, (int *)&s[0]));
  LT_OK(LAPI_Qenv(j.h, QUERY_SHM_STATISTICS, (int *)&s[1]));
  LT_OK(LAPI_Qenv(j.h, QUERY_LOCAL_SEND_STATISTICS, (int *)&s[2]));
  lapi_long_t sent = 0;
  for (int i = 0; i < 3; i++)
    sent = s[i].Tot_data_sent > sent ? s[i].Tot_data_sent : sent;
  cr_assert_geq(sent, 3000, "no statistics kind counted the 3000 bytes "
                "sent (%llu, %llu, %llu)", s[0].Tot_data_sent,
                s[1].Tot_data_sent, s[2].Tot_data_sent);
  lt_close(&j);
}

/* ---------------------------------------------------------------- Senv */

Test(am_init, senv_settable_and_not)
{
  struct lt_job j;
  lt_open(&j);
  lapi_handle_t h = j.h;
  LT_OK(LAPI_Senv(h, ERROR_CHK, 0));
  cr_assert_eq(qenv(h, ERROR_CHK), 0);
  LT_OK(LAPI_Senv(h, ERROR_CHK, 1));
  cr_assert_eq(qenv(h, ERROR_CHK), 1);
  int tmin = qenv(h, MIN_TIMEOUT), tmax = qenv(h, MAX_TIMEOUT);
  LT_OK(LAPI_Senv(h, TIMEOUT, tmax));
  cr_assert_eq(qenv(h, TIMEOUT), tmax);
  LT_OK(LAPI_Senv(h, TIMEOUT, tmin));
  cr_assert_eq(qenv(h, TIMEOUT), tmin);
  LT_OK(LAPI_Senv(h, INTERRUPT_SET, 0));
  cr_assert_eq(qenv(h, INTERRUPT_SET), 0);
  LT_OK(LAPI_Senv(h, INTERRUPT_SET, 1));
  cr_assert_eq(qenv(h, INTERRUPT_SET), 1);
  int ack = qenv(h, ACK_THRESHOLD);
  LT_OK(LAPI_Senv(h, ACK_THRESHOLD, ack));
  cr_assert_eq(qenv(h, ACK_THRESHOLD), ack);
  if (ack > 1) {
    LT_OK(LAPI_Senv(h, ACK_THRESHOLD, 1));
    cr_assert_eq(qenv(h, ACK_THRESHOLD), 1);
  }
  /* ACK_THRESHOLD goes up to MAX_PKTS_OUT, not beyond */
  int pkts_out = qenv(h, MAX_PKTS_OUT);
  LT_OK(LAPI_Senv(h, ACK_THRESHOLD, pkts_out));
  cr_assert_eq(qenv(h, ACK_THRESHOLD), pkts_out);
  cr_assert_eq(LAPI_Senv(h, ACK_THRESHOLD, pkts_out + 1), LAPI_ERR_SET_VAL);
  cr_assert_eq(LAPI_Senv(h, ACK_THRESHOLD, 0), LAPI_ERR_SET_VAL);
  cr_assert_eq(qenv(h, ACK_THRESHOLD), pkts_out);
  cr_assert_eq(LAPI_Senv(h, ERROR_CHK, 2), LAPI_ERR_SET_VAL);
  cr_assert_eq(LAPI_Senv(h, INTERRUPT_SET, 2), LAPI_ERR_SET_VAL);
  /* bad values: refused, the setting unchanged */
  LT_OK(LAPI_Senv(h, TIMEOUT, tmin));
  if (tmin > 0)
    cr_assert_eq(LAPI_Senv(h, TIMEOUT, tmin - 1), LAPI_ERR_SET_VAL);
  if (tmax < INT_MAX)
    cr_assert_eq(LAPI_Senv(h, TIMEOUT, tmax + 1), LAPI_ERR_SET_VAL);
  cr_assert_eq(LAPI_Senv(h, TIMEOUT, -1), LAPI_ERR_SET_VAL);
  cr_assert_eq(qenv(h, TIMEOUT), tmin);
  cr_assert_eq(LAPI_Senv(h, ERROR_CHK, -1), LAPI_ERR_SET_VAL);
  cr_assert_eq(LAPI_Senv(h, INTERRUPT_SET, -1), LAPI_ERR_SET_VAL);
  cr_assert_eq(LAPI_Senv(h, ACK_THRESHOLD, -1), LAPI_ERR_SET_VAL);
  cr_assert_eq(qenv(h, ERROR_CHK), 1);
  cr_assert_eq(qenv(h, INTERRUPT_SET), 1);
  /* everything else is read-only */
  for (int q = 0; q < LAST_QUERY; q++) {
    if (q == ERROR_CHK || q == TIMEOUT || q == INTERRUPT_SET ||
        q == ACK_THRESHOLD)
      continue;
    static union qbuf qb; /* some queries fill a struct or an array */
    int qrc = LAPI_Qenv(h, (lapi_query_t)q, qb.i);
    int before = qb.i[0];
    cr_assert_eq(LAPI_Senv(h, (lapi_query_t)q, 1), LAPI_ERR_QUERY_TYPE,
                 "LAPI_Senv(query %d) accepted", q);
    if (qrc == LAPI_SUCCESS && q != QUERY_SHM_TASKS && q < QUERY_STATISTICS)
      cr_assert_eq(qenv(h, (lapi_query_t)q), before, "query %d changed", q);
  }
  cr_assert_eq(LAPI_Senv(h, LAST_QUERY, 1), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(LAPI_Senv(h, (lapi_query_t)-1, 1), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(qenv(h, TASK_ID), j.me);
  lt_close(&j);
}

/* ------------------------------------------------------------ Address */

Test(am_init, address_and_address_init)
{
  int x;
  ulong a = 0;
  LT_OK(LAPI_Address(&x, &a));
  cr_assert_eq(a, (ulong)(uintptr_t)&x);
  /* IBM's page: my_addr NULL -> ORG_ADDR_NULL, ret_addr NULL ->
   * TGT_ADDR_NULL (the table-driven error test checks both) */

  struct lt_job j;
  lt_open(&j);
  void **tab = calloc((size_t)j.n + 1, sizeof *tab);
  lapi_long_t *tab64 = calloc((size_t)j.n + 1, sizeof *tab64);
  cr_assert(tab && tab64);
  for (int i = 0; i <= j.n; i++) {
    tab[i] = (void *)(uintptr_t)0xdead;
    tab64[i] = 0xdeadULL;
  }
  static char mine;
  LT_OK(LAPI_Address_init(j.h, &mine, tab));
  cr_assert_eq(tab[j.me], (void *)&mine);
  for (int i = 0; i < j.n; i++)
    cr_assert_neq(tab[i], (void *)(uintptr_t)0xdead, "entry %d not set", i);
  cr_assert_eq(tab[j.n], (void *)(uintptr_t)0xdead, "wrote past NUM_TASKS");
  lapi_long_t my64 = 0x123456789abcdef0ULL + (lapi_long_t)j.me;
  LT_OK(LAPI_Address_init64(j.h, my64, tab64));
  for (int i = 0; i < j.n; i++)
    cr_assert_eq(tab64[i], 0x123456789abcdef0ULL + (lapi_long_t)i,
                 "entry %d", i);
  cr_assert_eq(tab64[j.n], 0xdeadULL);
  free(tab);
  free(tab64);
  lt_close(&j);
}

/* ----------------------------------------------------------- LAPI_Util */

struct cond_arg {
  lapi_handle_t h;
  lapi_thread_func_t *f;
  lapi_cond_t *cond;
  int *flag;
};

static void *signaller(void *p)
{
  struct cond_arg *a = p;
  LT_CHECK_EQ(a->f->mutex_lock(a->h), 0);
  *a->flag = 1;
  LT_CHECK_EQ(a->f->cond_signal(a->h, a->cond), 0);
  LT_CHECK_EQ(a->f->mutex_unlock(a->h), 0);
  return NULL;
}

static void *try_from_other(void *p)
{
  struct cond_arg *a = p;
  /* the lock is held by the test thread */
  LT_CHECK_EQ(a->f->mutex_trylock(a->h), EBUSY);
  return NULL;
}

Test(am_init, util_get_thread_func)
{
  struct lt_job j;
  lt_open(&j);
  lapi_util_t u;
  memset(&u, 0, sizeof u);
  u.ThreadFunc.Util_type = LAPI_GET_THREAD_FUNC;
  LT_OK(LAPI_Util(j.h, &u));
  lapi_thread_func_t *f = &u.ThreadFunc;
  cr_assert(f->mutex_lock && f->mutex_unlock && f->mutex_trylock &&
            f->mutex_getowner && f->cond_wait && f->cond_timedwait &&
            f->cond_signal && f->cond_init && f->cond_destroy);
  pthread_t owner;
  cr_assert_eq(f->mutex_getowner(j.h, &owner), 0);
  cr_assert(pthread_equal(owner, LAPI_NULL_THREAD_ID), "free lock has owner");
  cr_assert_eq(f->mutex_lock(j.h), 0);
  cr_assert_eq(f->mutex_getowner(j.h, &owner), 0);
  cr_assert(pthread_equal(owner, pthread_self()));
  lapi_cond_t cond;
  int flag = 0;
  struct cond_arg a = {j.h, f, &cond, &flag};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, try_from_other, &a), 0);
  pthread_join(th, NULL);
  cr_assert_eq(f->mutex_unlock(j.h), 0);
  cr_assert_eq(f->mutex_trylock(j.h), 0);
  cr_assert_eq(f->mutex_unlock(j.h), 0);

  /* a condition with the handle's lock */
  cr_assert_eq(f->cond_init(j.h, &cond), 0);
  cr_assert_eq(f->mutex_lock(j.h), 0);
  struct timespec past = {0, 0}; /* long gone: returns at once */
  cr_assert_eq(f->cond_timedwait(j.h, &cond, &past), ETIMEDOUT);
  cr_assert_eq(pthread_create(&th, NULL, signaller, &a), 0);
  while (!flag)
    cr_assert_eq(f->cond_wait(j.h, &cond), 0);
  cr_assert_eq(f->mutex_unlock(j.h), 0);
  pthread_join(th, NULL);
  cr_assert_eq(f->cond_destroy(j.h, &cond), 0);
  LT_ASSERT_HANDLERS_OK();

  /* the unsupported commands */
  for (int t = 0; t <= LAPI_LAST_UTIL; t++) {
    if (t == LAPI_GET_THREAD_FUNC)
      continue;
    memset(&u, 0, sizeof u);
    u.Util_type = (lapi_util_type_t)t;
    cr_assert_eq(LAPI_Util(j.h, &u), LAPI_ERR_UTIL_CMD, "Util_type %d", t);
  }
  lt_close(&j);
}

/* ------------------------------------------------------ Msg_string */

Test(am_init, msg_string_needs_no_handle)
{
  char buf[LAPI_MAX_ERR_STRING];
  for (int code = LAPI_ERR_FIRSTCODE; code <= LAPI_ERR_LASTCODE; code++) {
    memset(buf, 0, sizeof buf);
    LT_OK(LAPI_Msg_string(code, buf));
    size_t n = strnlen(buf, sizeof buf);
    cr_assert(n > 0 && n < sizeof buf, "code %d", code);
  }
  LT_OK(LAPI_Msg_string(LAPI_SUCCESS, buf));
  cr_assert_gt(strlen(buf), 0);
}
