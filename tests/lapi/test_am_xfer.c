/*
 * test_am_xfer.c - LAPI_Xfer for every supported transfer (AM, AMV, PUT,
 * GET, PUTV, GETV, RMW 32/64) with its counters and its send-completion or
 * origin completion handler, LAPI_ERR_XFER_CMD for DGSP, RDMA and the
 * other unsupported kinds; LAPI_Probe and LAPI_Msgpoll;
 * LAPI_Purge_totask / LAPI_Resume_totask; the asynchronous error handler
 * of lapi_info_t (AM_ERR) when a header handler returns a target vector
 * that does not match the origin's, with nothing written.
 */
#include "lapi_test_util.h"

TestSuite(am_xfer, .timeout = LT_TIMEOUT);

static lapi_cntr_t recv_cntr;
static unsigned char sink[8192];
static int hdr_runs, cmpl_runs;

static void plain_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl, (void)param;
  lt_inc(&cmpl_runs);
}

static void *am_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uinfo;
  LT_CHECK_EQ(*uhdr_len, 8);
  LT_CHECK_EQ(((uint32_t *)uhdr)[0], 0xabcd0000u);
  lt_inc(&hdr_runs);
  *comp_h = plain_cmpl;
  return *msg_len ? sink : NULL;
}

static lapi_vec_t amv_tvec;
static void *amv_tinfo[2];
static ulong amv_tlen[2];

static lapi_vec_t *amv_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                           ulong *len_vec, compl_hndlr_t **comp_h,
                           void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lt_inc(&hdr_runs);
  amv_tinfo[0] = sink + 100;
  amv_tinfo[1] = sink + 10;
  amv_tlen[0] = len_vec[0];
  amv_tlen[1] = len_vec[1];
  amv_tvec = (lapi_vec_t){LAPI_GEN_IOVECTOR, 2, amv_tinfo, amv_tlen};
  *comp_h = plain_cmpl;
  return &amv_tvec;
}

/* send completion handlers (origin side) */
static int shdlr_runs;
static uint shdlr_src, shdlr_reason;
static void *shdlr_param;

static void on_sent(lapi_handle_t *hndl, void *param, lapi_sh_info_t *info)
{
  (void)hndl;
  shdlr_param = param;
  shdlr_src = info ? info->src : 0xffffffffu;
  shdlr_reason = info ? info->reason : 0xffffffffu;
  lt_inc(&shdlr_runs);
}

/* origin completion handlers of GET/GETV: the data is there already */
static int chndlr_runs, chndlr_saw_data;
static const unsigned char *chk_buf;
static size_t chk_len;
static uint64_t chk_seed, chk_from;

static void on_arrived(lapi_handle_t *hndl, void *param)
{
  (void)hndl;
  LT_CHECK(param == (void *)&chndlr_runs);
  if (lt_find_diff(chk_buf, chk_len, chk_seed, chk_from) < 0)
    lt_store(&chndlr_saw_data, 1);
  lt_inc(&chndlr_runs);
}

#define LL(p) ((lapi_long_t)(uintptr_t)(p))

static void check_sent(int n, void *param, uint tgt)
{
  cr_assert_eq(lt_load(&shdlr_runs), n, "send completion handler ran %d "
               "times, expected %d", lt_load(&shdlr_runs), n);
  cr_assert_eq(shdlr_param, param);
  cr_assert_eq(shdlr_reason, LAPI_SUCCESS);
  cr_assert_eq(shdlr_src, tgt, "lapi_sh_info_t.src %u, target %u",
               shdlr_src, tgt);
}

Test(am_xfer, every_supported_transfer)
{
  struct lt_job j;
  lt_open(&j);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  lapi_long_t hh = LL(lt_at_tgt(&j, (void *)am_hdr));
  lapi_long_t vh = LL(lt_at_tgt(&j, (void *)amv_hdr));
  lapi_long_t tc = LL(lt_at_tgt(&j, &recv_cntr));
  unsigned char *rsink = lt_at_tgt(&j, sink);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  static unsigned char data[4096];
  uint32_t uhdr[2] = {0xabcd0000u, 0};
  lapi_xfer_t x;
  int sent = 0;

  /* AM */
  lt_fill(data, sizeof data, 10 + (uint)j.me);
  memset(sink, LT_GUARD, sizeof sink);
  LT_OK(LAPI_Gfence(j.h));
  memset(&x, 0, sizeof x);
  x.Am.Xfer_type = LAPI_AM_XFER;
  x.Am.tgt = j.tgt;
  x.Am.hdr_hdl = hh;
  x.Am.uhdr = uhdr;
  x.Am.uhdr_len = sizeof uhdr;
  x.Am.udata = data;
  x.Am.udata_len = 1000;
  x.Am.shdlr = on_sent;
  x.Am.sinfo = &x;
  x.Am.tgt_cntr = tc;
  x.Am.org_cntr = &org;
  x.Am.cmpl_cntr = &cmpl;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  lt_poll_until(&j, &shdlr_runs, ++sent);
  check_sent(sent, &x, j.tgt);
  cr_assert_eq(lt_find_diff(sink, 1000, 10 + j.src, 0), -1);
  cr_assert_eq(lt_find_nonguard(sink + 1000, 64), -1);
  cr_assert_eq(lt_load(&cmpl_runs), 1);
  LT_OK(LAPI_Gfence(j.h));

  /* AMV */
  memset(sink, LT_GUARD, sizeof sink);
  LT_OK(LAPI_Gfence(j.h));
  void *oi[2] = {data + 50, data};
  ulong ol[2] = {30, 40};
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, 2, oi, ol};
  memset(&x, 0, sizeof x);
  x.Amv.Xfer_type = LAPI_AMV_XFER;
  x.Amv.tgt = j.tgt;
  x.Amv.hdr_hdl = vh;
  x.Amv.uhdr = uhdr;
  x.Amv.uhdr_len = sizeof uhdr;
  x.Amv.shdlr = on_sent;
  x.Amv.sinfo = &ov;
  x.Amv.org_vec = &ov;
  x.Amv.tgt_cntr = tc;
  x.Amv.org_cntr = &org;
  x.Amv.cmpl_cntr = &cmpl;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  lt_poll_until(&j, &shdlr_runs, ++sent);
  check_sent(sent, &ov, j.tgt);
  cr_assert_eq(lt_find_diff(sink + 100, 30, 10 + j.src, 50), -1);
  cr_assert_eq(lt_find_diff(sink + 10, 40, 10 + j.src, 0), -1);
  cr_assert_eq(lt_find_nonguard(sink, 10), -1);
  cr_assert_eq(lt_find_nonguard(sink + 50, 50), -1);
  cr_assert_eq(lt_find_nonguard(sink + 130, 100), -1);
  cr_assert_eq(lt_load(&cmpl_runs), 2);
  LT_OK(LAPI_Gfence(j.h));

  /* PUT */
  memset(sink, LT_GUARD, sizeof sink);
  LT_OK(LAPI_Gfence(j.h));
  memset(&x, 0, sizeof x);
  x.Put.Xfer_type = LAPI_PUT_XFER;
  x.Put.tgt = j.tgt;
  x.Put.tgt_addr = LL(rsink + 8);
  x.Put.org_addr = data;
  x.Put.len = 300;
  x.Put.shdlr = on_sent;
  x.Put.sinfo = data;
  x.Put.tgt_cntr = tc;
  x.Put.org_cntr = &org;
  x.Put.cmpl_cntr = &cmpl;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  lt_poll_until(&j, &shdlr_runs, ++sent);
  check_sent(sent, data, j.tgt);
  cr_assert_eq(lt_find_diff(sink + 8, 300, 10 + j.src, 0), -1);
  cr_assert_eq(lt_find_nonguard(sink, 8), -1);
  cr_assert_eq(lt_find_nonguard(sink + 308, 100), -1);
  LT_OK(LAPI_Gfence(j.h));

  /* GET (my sink holds my pattern; I read my target's) */
  lt_fill(sink, sizeof sink, 20 + (uint)j.me);
  static unsigned char got[512];
  memset(got, LT_GUARD, sizeof got);
  LT_OK(LAPI_Gfence(j.h));
  chk_buf = got + 4, chk_len = 200, chk_seed = 20 + j.tgt, chk_from = 64;
  memset(&x, 0, sizeof x);
  x.Get.Xfer_type = LAPI_GET_XFER;
  x.Get.tgt = j.tgt;
  x.Get.tgt_addr = LL(rsink + 64);
  x.Get.org_addr = got + 4;
  x.Get.len = 200;
  x.Get.tgt_cntr = tc;
  x.Get.org_cntr = &org;
  x.Get.chndlr = on_arrived;
  x.Get.cinfo = &chndlr_runs;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  lt_poll_until(&j, &chndlr_runs, 1);
  cr_assert_eq(lt_load(&chndlr_saw_data), 1,
               "GET: the origin completion handler ran before the data");
  cr_assert_eq(lt_find_diff(got + 4, 200, 20 + j.tgt, 64), -1);
  cr_assert_eq(lt_find_nonguard(got, 4), -1);
  cr_assert_eq(lt_find_nonguard(got + 204, 100), -1);
  LT_OK(LAPI_Gfence(j.h));

  /* PUTV and GETV: vectors of this task's own memory (to self) */
  uint self = (uint)j.me;
  static unsigned char a[256], b[256];
  lt_fill(a, sizeof a, 30);
  memset(b, LT_GUARD, sizeof b);
  void *si[2] = {a + 10, a + 100};
  void *di[2] = {b + 200, b + 20};
  ulong vl[2] = {16, 32};
  lapi_vec_t sv = {LAPI_GEN_IOVECTOR, 2, si, vl};
  lapi_vec_t dv = {LAPI_GEN_IOVECTOR, 2, di, vl};
  lapi_cntr_t self_tc;
  LT_OK(LAPI_Setcntr(j.h, &self_tc, 0));
  memset(&x, 0, sizeof x);
  x.Putv.Xfer_type = LAPI_PUTV_XFER;
  x.Putv.tgt = self;
  x.Putv.shdlr = on_sent;
  x.Putv.sinfo = &sv;
  x.Putv.org_vec = &sv;
  x.Putv.tgt_vec = &dv;
  x.Putv.tgt_cntr = LL(&self_tc);
  x.Putv.org_cntr = &org;
  x.Putv.cmpl_cntr = &cmpl;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &self_tc, 1), 0);
  lt_poll_until(&j, &shdlr_runs, ++sent);
  check_sent(sent, &sv, self);
  cr_assert_eq(lt_find_diff(b + 200, 16, 30, 10), -1);
  cr_assert_eq(lt_find_diff(b + 20, 32, 30, 100), -1);
  cr_assert_eq(lt_find_nonguard(b, 20), -1);
  cr_assert_eq(lt_find_nonguard(b + 52, 148), -1);
  cr_assert_eq(lt_find_nonguard(b + 216, 40), -1);

  memset(b, LT_GUARD, sizeof b);
  chk_buf = b + 200, chk_len = 16, chk_seed = 30, chk_from = 10;
  memset(&x, 0, sizeof x);
  x.Getv.Xfer_type = LAPI_GETV_XFER;
  x.Getv.tgt = self;
  x.Getv.org_vec = &dv;
  x.Getv.tgt_vec = &sv;
  x.Getv.tgt_cntr = LL(&self_tc);
  x.Getv.org_cntr = &org;
  x.Getv.chndlr = on_arrived;
  x.Getv.cinfo = &chndlr_runs;
  lt_store(&chndlr_saw_data, 0);
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &self_tc, 1), 0);
  lt_poll_until(&j, &chndlr_runs, 2);
  cr_assert_eq(lt_load(&chndlr_saw_data), 1,
               "GETV: the origin completion handler ran before the data");
  cr_assert_eq(lt_find_diff(b + 200, 16, 30, 10), -1);
  cr_assert_eq(lt_find_diff(b + 20, 32, 30, 100), -1);
  cr_assert_eq(lt_find_nonguard(b + 52, 148), -1);

  /* RMW, 32 and 64 bits */
  static int v32 = 100;
  static long long v64 = 0x100000000LL;
  int *r32 = lt_at_tgt(&j, &v32);
  long long *r64 = lt_at_tgt(&j, &v64);
  int in32 = 5, prev32 = -1;
  memset(&x, 0, sizeof x);
  x.Rmw.Xfer_type = LAPI_RMW_XFER;
  x.Rmw.op = FETCH_AND_ADD;
  x.Rmw.tgt = j.tgt;
  x.Rmw.size = 32;
  x.Rmw.tgt_var = LL(r32);
  x.Rmw.in_val = &in32;
  x.Rmw.prev_tgt_val = &prev32;
  x.Rmw.org_cntr = &org;
  x.Rmw.shdlr = on_sent;
  x.Rmw.sinfo = &prev32;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(prev32, 100);
  lt_poll_until(&j, &shdlr_runs, ++sent);
  check_sent(sent, &prev32, j.tgt);
  long long in64[2] = {0x100000000LL, 7}, prev64 = -1;
  memset(&x, 0, sizeof x);
  x.Rmw.Xfer_type = LAPI_RMW_XFER;
  x.Rmw.op = COMPARE_AND_SWAP;
  x.Rmw.tgt = j.tgt;
  x.Rmw.size = 64;
  x.Rmw.tgt_var = LL(r64);
  x.Rmw.in_val = in64;
  x.Rmw.prev_tgt_val = &prev64;
  x.Rmw.org_cntr = &org;
  LT_OK(LAPI_Xfer(j.h, &x));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(prev64, TRUE);
  LT_OK(LAPI_Gfence(j.h));
  cr_assert_eq(v32, 105);
  cr_assert_eq(v64, 7);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

Test(am_xfer, unsupported_kinds_are_refused)
{
  struct lt_job j;
  lt_open(&j);
  lt_store(&hdr_runs, 0);
  const int kinds[] = {LAPI_DGSP_XFER, LAPI_RDMA_XFER, LAPI_AM_LW_XFER,
                       LAPI_AMX_XFER, LAPI_MC_XFER, LAPI_LAST_XFER, 99, -1};
  lapi_cntr_t org;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  static unsigned char d[64];
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    lapi_xfer_t x;
    memset(&x, 0, sizeof x);
    /* a plausible AM-shaped body, so only the kind is wrong */
    x.Am.Xfer_type = (lapi_xfer_type_t)kinds[i];
    x.Am.tgt = j.tgt;
    x.Am.hdr_hdl = LL(am_hdr);
    x.Am.udata = d;
    x.Am.udata_len = sizeof d;
    x.Am.org_cntr = &org;
    cr_assert_eq(LAPI_Xfer(j.h, &x), LAPI_ERR_XFER_CMD, "Xfer_type %d",
                 kinds[i]);
  }
  LT_OK(LAPI_Gfence(j.h));
  cr_assert_eq(lt_get(&j, &org), 0);
  cr_assert_eq(lt_load(&hdr_runs), 0);
  lt_close(&j);
}

/* ------------------------------------------------------ Probe, Msgpoll */

Test(am_xfer, probe_and_msgpoll)
{
  struct lt_job j;
  lt_open(&j);
  lt_store(&hdr_runs, 0);
  lt_store(&cmpl_runs, 0);
  LT_OK(LAPI_Probe(j.h)); /* interrupt mode: allowed, harmless */
  lapi_msg_info_t info;
  memset(&info, 0, sizeof info);
  LT_OK(LAPI_Msgpoll(j.h, 5, &info));
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)am_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
  LT_OK(LAPI_Gfence(j.h));
  uint32_t uhdr[2] = {0xabcd0000u, 1};
  static unsigned char d[100];
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, uhdr, sizeof uhdr, d, sizeof d, tc, NULL,
                    NULL));
  lapi_msg_state_t seen = 0;
  int calls = 0;
  while (lt_load(&cmpl_runs) < 1) {
    memset(&info, 0, sizeof info);
    LT_OK(LAPI_Msgpoll(j.h, 1000, &info));
    seen |= info.status;
    calls++;
  }
  cr_assert(seen & LAPI_RECV_COMPLETE, "after %d LAPI_Msgpoll calls the "
            "message was received but status never had "
            "LAPI_RECV_COMPLETE (0x%x)", calls, seen);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  /* Probe dispatches in polling mode */
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, uhdr, sizeof uhdr, d, sizeof d, tc, NULL,
                    NULL));
  while (lt_load(&cmpl_runs) < 2)
    LT_OK(LAPI_Probe(j.h));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* ----------------------------------------------- Purge / Resume_totask */

Test(am_xfer, purge_then_resume)
{
  struct lt_job j;
  lt_open(&j);
  lt_store(&hdr_runs, 0);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)am_hdr);
  void *vh = lt_at_tgt(&j, (void *)amv_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  static int var;
  int *rvar = lt_at_tgt(&j, &var);
  static unsigned char remote_buf[64];
  unsigned char *rbuf = lt_at_tgt(&j, remote_buf);
  memset(remote_buf, LT_GUARD, sizeof remote_buf);
  LT_OK(LAPI_Gfence(j.h));
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  uint32_t uhdr[2] = {0xabcd0000u, 2};
  static unsigned char d[64];
  unsigned char local[64];
  memset(local, LT_GUARD, sizeof local);
  void *oi[2] = {d, d + 8};
  ulong ol[2] = {4, 4};
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, 2, oi, ol};
  int in = 1, prev = -5;

  LT_OK(LAPI_Purge_totask(j.h, j.tgt));
  const int P = LAPI_ERR_TGT_PURGED;
  cr_assert_eq(LAPI_Amsend(j.h, j.tgt, hh, uhdr, sizeof uhdr, d, sizeof d,
                           tc, &org, &cmpl), P);
  cr_assert_eq(LAPI_Amsendv(j.h, j.tgt, vh, uhdr, sizeof uhdr, &ov, tc, &org,
                            &cmpl), P);
  cr_assert_eq(LAPI_Put(j.h, j.tgt, 8, rbuf, d, tc, &org, &cmpl), P);
  cr_assert_eq(LAPI_Get(j.h, j.tgt, 8, rbuf, local, tc, &org), P);
  cr_assert_eq(LAPI_Rmw(j.h, FETCH_AND_ADD, j.tgt, rvar, &in, &prev, &org),
               P);
  /* other targets are not purged (with one task there are none) */
  LT_OK(LAPI_Resume_totask(j.h, j.tgt));
  LT_OK(LAPI_Amsend(j.h, j.tgt, hh, uhdr, sizeof uhdr, d, sizeof d, tc, &org,
                    &cmpl));
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  LT_OK(LAPI_Gfence(j.h));
  /* nothing of the refused calls happened */
  cr_assert_eq(lt_load(&hdr_runs), 1);
  cr_assert_eq(lt_get(&j, &org), 0);
  cr_assert_eq(lt_get(&j, &cmpl), 0);
  cr_assert_eq(lt_get(&j, &recv_cntr), 0);
  cr_assert_eq(var, 0);
  cr_assert_eq(prev, -5);
  cr_assert_eq(lt_find_nonguard(local, sizeof local), -1);
  cr_assert_eq(lt_find_nonguard(remote_buf, sizeof remote_buf), -1);
  /* purge and resume check their task */
  cr_assert_eq(LAPI_Purge_totask(j.h, (uint)j.n), LAPI_ERR_TGT);
  cr_assert_eq(LAPI_Resume_totask(j.h, (uint)j.n), LAPI_ERR_TGT);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}

/* --------------------------------------- asynchronous error handler */

static int err_calls;
static int err_code, err_task, err_src;
static lapi_err_t err_kind;
static lapi_handle_t err_hndl;

static void on_error(lapi_handle_t *hndl, int *error_code,
                     lapi_err_t *err_type, int *task_id, int *src)
{
  err_hndl = hndl ? *hndl : LAPI_VOID_HANDLE;
  err_code = error_code ? *error_code : -1;
  err_kind = err_type ? *err_type : (lapi_err_t)-1;
  err_task = task_id ? *task_id : -1;
  err_src = src ? *src : -1;
  lt_inc(&err_calls);
}

/* The target vector a bad-vector case returns (uhdr word 0 = case). */
enum bad {
  B_NUM_DIFF, B_LEN_DIFF, B_TYPE_DIFF, B_TGT_TYPE, B_TGT_ADDR,
  B_STR_BLOCK, B_STR_NUM, B_STR_STRIDE, B_STR_BASE, B_COUNT
};

static const int bad_code[B_COUNT] = {
  LAPI_ERR_VEC_NUM_DIFF, LAPI_ERR_VEC_LEN_DIFF, LAPI_ERR_VEC_TYPE_DIFF,
  LAPI_ERR_TGT_VEC_TYPE, LAPI_ERR_TGT_VEC_ADDR, LAPI_ERR_VEC_LEN_DIFF,
  LAPI_ERR_VEC_NUM_DIFF, LAPI_ERR_TGT_STRIDE, LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL,
};

static unsigned char tarea[512];
static lapi_vec_t bad_vec;
static void *bad_info[4];
static ulong bad_len[4];
static int bad_cmpl_runs;

static void bad_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl, (void)param;
  lt_inc(&bad_cmpl_runs);
}

static lapi_vec_t *bad_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                           ulong *len_vec, compl_hndlr_t **comp_h,
                           void **uinfo)
{
  (void)hndl, (void)uhdr_len, (void)len_vec, (void)uinfo;
  lt_inc(&hdr_runs);
  enum bad c = (enum bad)((uint32_t *)uhdr)[0];
  /* origin: IOVECTOR {8, 8}, or STRIDED 3 blocks of 5 at pitch 8 */
  bad_vec.info = bad_info;
  bad_vec.len = bad_len;
  bad_info[0] = tarea;
  bad_info[1] = tarea + 64;
  bad_info[2] = tarea + 128;
  bad_len[0] = bad_len[1] = bad_len[2] = 8;
  switch (c) {
  case B_NUM_DIFF:
    bad_vec.vec_type = LAPI_GEN_IOVECTOR, bad_vec.num_vecs = 3;
    break;
  case B_LEN_DIFF:
    bad_vec.vec_type = LAPI_GEN_IOVECTOR, bad_vec.num_vecs = 2;
    bad_len[1] = 9;
    break;
  case B_TYPE_DIFF:
    bad_vec.vec_type = LAPI_GEN_GENERIC, bad_vec.num_vecs = 2;
    break;
  case B_TGT_TYPE:
    bad_vec.vec_type = (lapi_vectype_t)77, bad_vec.num_vecs = 2;
    break;
  case B_TGT_ADDR:
    bad_vec.vec_type = LAPI_GEN_IOVECTOR, bad_vec.num_vecs = 2;
    bad_info[1] = NULL;
    break;
  case B_STR_BLOCK:
  case B_STR_NUM:
  case B_STR_STRIDE:
  case B_STR_BASE:
    bad_vec.vec_type = LAPI_GEN_STRIDED_XFER;
    bad_vec.num_vecs = c == B_STR_NUM ? 2 : 3;
    bad_vec.len = NULL;
    bad_info[0] = c == B_STR_BASE ? NULL : tarea;
    bad_info[1] = (void *)(uintptr_t)(c == B_STR_BLOCK ? 4 : 5);
    bad_info[2] = (void *)(uintptr_t)(c == B_STR_STRIDE ? 3 : 8);
    break;
  default:
    break;
  }
  *comp_h = bad_cmpl;
  return &bad_vec;
}

Test(am_xfer, bad_target_vector_goes_to_the_error_handler)
{
  struct lt_job j;
  lt_open_err(&j, on_error);
  lt_store(&hdr_runs, 0);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hh = lt_at_tgt(&j, (void *)bad_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  static unsigned char d[64];
  lt_fill(d, sizeof d, 5);
  memset(tarea, LT_GUARD, sizeof tarea);
  LT_OK(LAPI_Gfence(j.h));
  void *ii[2] = {d, d + 16};
  ulong il[2] = {8, 8};
  lapi_vec_t iov = {LAPI_GEN_IOVECTOR, 2, ii, il};
  void *si[3] = {d, (void *)(uintptr_t)5, (void *)(uintptr_t)8};
  lapi_vec_t str = {LAPI_GEN_STRIDED_XFER, 3, si, NULL};
  lapi_cntr_t org, cmpl;
  for (int c = 0; c < B_COUNT; c++) {
    LT_OK(LAPI_Setcntr(j.h, &org, 0));
    LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
    uint32_t uhdr[1] = {(uint32_t)c};
    lapi_vec_t *ov = c >= B_STR_BLOCK ? &str : &iov;
    LT_OK(LAPI_Amsendv(j.h, j.tgt, hh, uhdr, sizeof uhdr, ov, tc, &org,
                       &cmpl));
    /* the failure arrives through the error handler ... */
    lt_poll_until(&j, &err_calls, c + 1);
    cr_assert_eq(err_code, bad_code[c], "case %d: error handler got code %d, "
                 "expected %d", c, err_code, bad_code[c]);
    cr_assert_eq(err_kind, AM_ERR, "case %d: err_type %d", c, err_kind);
    cr_assert_eq(err_hndl, j.h);
    cr_assert_eq(err_src, (int)j.src, "case %d: src %d", c, err_src);
    /* ... the origin buffers are released ... */
    cr_assert_eq(lt_wait(&j, &org, 1), 0, "case %d: org_cntr", c);
    LT_OK(LAPI_Gfence(j.h));
    /* ... and the message is dropped: no byte written, no completion */
    long w = lt_find_nonguard(tarea, sizeof tarea);
    cr_assert_eq(w, -1, "case %d: target byte %ld written", c, w);
    cr_assert_eq(lt_load(&bad_cmpl_runs), 0,
                 "case %d: completion handler of a dropped message ran", c);
    cr_assert_eq(lt_get(&j, &cmpl), 0, "case %d: cmpl_cntr moved", c);
    cr_assert_eq(lt_get(&j, &recv_cntr), 0, "case %d: tgt_cntr moved", c);
  }
  cr_assert_eq(lt_load(&err_calls), B_COUNT);
  cr_assert_eq(lt_load(&hdr_runs), B_COUNT);
  /* the handle still works */
  void *xh = lt_at_tgt(&j, (void *)am_hdr);
  uint32_t ok_uhdr[2] = {0xabcd0000u, 0};
  LT_OK(LAPI_Amsend(j.h, j.tgt, xh, ok_uhdr, sizeof ok_uhdr, d, 8, tc, NULL,
                    NULL));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(err_task, j.me, "task_id %d in the error handler", err_task);
  LT_ASSERT_HANDLERS_OK();
  lt_close(&j);
}
