/*
 * test_core_rma.c - one-sided calls through the loopback: Put, Get,
 * Putv, Getv, Rmw, Rmw64 (every op), their LAPI_Xfer forms with
 * completion handlers, argument checks, Address/Address_init, Addr_set
 * ranges and the statistics.
 */
#include <stdint.h>

#include "core_util.h"

Test(core_rma, put_get_bytes_and_counters)
{
  lapi_handle_t h = core_init();
  char src[300], dst[300];
  for (int i = 0; i < 300; i++)
    src[i] = (char)(i * 13 + 5);
  memset(dst, 0, sizeof dst);
  lapi_cntr_t t = {0}, o = {0}, c = {0};
  cr_assert_eq(LAPI_Put(h, 0, 300, dst, src, &t, &o, &c), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(core_cntr(h, &t), 1);
  cr_assert_eq(core_cntr(h, &o), 1);
  cr_assert_eq(memcmp(src, dst, 300), 0);

  char back[300];
  memset(back, 0, sizeof back);
  cr_assert_eq(LAPI_Get(h, 0, 300, dst, back, &t, &o), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &o, 2, NULL), LAPI_SUCCESS);
  cr_assert_eq(core_cntr(h, &t), 2);
  cr_assert_eq(memcmp(back, src, 300), 0);

  /* Zero bytes with NULL addresses: legal, and counted. */
  cr_assert_eq(LAPI_Put(h, 0, 0, NULL, NULL, &t, NULL, NULL), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &t, 3, NULL), LAPI_SUCCESS);
  LAPI_Term(h);
}

Test(core_rma, putv_getv_vectors)
{
  lapi_handle_t h = core_init();
  char a[10] = "ABCDEFGHIJ", b[10];
  memset(b, '.', sizeof b);
  lapi_vec_t org = {LAPI_GEN_IOVECTOR, 2, (void *[]){a, a + 6},
                    (ulong[]){3, 4}};
  lapi_vec_t tgt = {LAPI_GEN_IOVECTOR, 2, (void *[]){b + 5, b},
                    (ulong[]){3, 4}};
  lapi_cntr_t c = {0};
  cr_assert_eq(LAPI_Putv(h, 0, &tgt, &org, NULL, NULL, &c), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(memcmp(b, "GHIJ.ABC..", 10), 0);

  /* Getv: tgt_vec (remote source) into org_vec (here), strided. */
  char src[16], dst[16];
  for (int i = 0; i < 16; i++)
    src[i] = (char)('a' + i);
  memset(dst, '-', sizeof dst);
  lapi_vec_t tv = {LAPI_GEN_STRIDED_XFER, 2,
                   (void *[]){src, (void *)3, (void *)8}, NULL};
  lapi_vec_t ov = {LAPI_GEN_STRIDED_XFER, 2,
                   (void *[]){dst, (void *)3, (void *)4}, NULL};
  lapi_cntr_t o = {0};
  cr_assert_eq(LAPI_Getv(h, 0, &tv, &ov, NULL, &o), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &o, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(memcmp(dst, "abc-ijk-", 8), 0);

  cr_assert_eq(LAPI_Putv(h, 0, NULL, &org, NULL, NULL, NULL),
               LAPI_ERR_TGT_VEC_NULL);
  cr_assert_eq(LAPI_Putv(h, 0, &tgt, NULL, NULL, NULL, NULL),
               LAPI_ERR_ORG_VEC_NULL);
  lapi_vec_t shorter = {LAPI_GEN_IOVECTOR, 2, (void *[]){b, b + 5},
                        (ulong[]){3, 3}};
  memset(b, '.', sizeof b);
  cr_assert_eq(LAPI_Putv(h, 0, &shorter, &org, NULL, NULL, NULL),
               LAPI_ERR_VEC_LEN_DIFF);
  cr_assert_eq(LAPI_Getv(h, 0, &tv, &org, NULL, NULL),
               LAPI_ERR_VEC_TYPE_DIFF);
  cr_assert_eq(b[0], '.', "a refused Putv writes nothing");
  LAPI_Term(h);
}

Test(core_rma, rmw_every_op_32_and_64)
{
  lapi_handle_t h = core_init();
  lapi_cntr_t o = {0};
  int v = 10, in = 5, prev = -1;
  cr_assert_eq(LAPI_Rmw(h, FETCH_AND_ADD, 0, &v, &in, &prev, &o),
               LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &o, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(prev, 10);
  cr_assert_eq(v, 15);
  in = 0x31; /* overlaps v's low bit: OR and ADD differ */
  LAPI_Rmw(h, FETCH_AND_OR, 0, &v, &in, &prev, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(prev, 15);
  cr_assert_eq(v, 0x3f);
  in = 7;
  LAPI_Rmw(h, SWAP, 0, &v, &in, &prev, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(prev, 0x3f);
  cr_assert_eq(v, 7);
  int cas[2] = {7, 100};
  LAPI_Rmw(h, COMPARE_AND_SWAP, 0, &v, cas, &prev, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(prev, TRUE);
  cr_assert_eq(v, 100);
  LAPI_Rmw(h, COMPARE_AND_SWAP, 0, &v, cas, &prev, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(prev, FALSE);
  cr_assert_eq(v, 100);
  cr_assert_eq(LAPI_Rmw(h, FETCH_AND_ADD, 0, &v, cas, NULL, &o),
               LAPI_SUCCESS, "prev_tgt_val may be NULL");
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(v, 107);

  long long w = 1LL << 40, in64 = 3, p64 = 0;
  cr_assert_eq(LAPI_Rmw64(h, FETCH_AND_ADD, 0, &w, &in64, &p64, &o),
               LAPI_SUCCESS);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(p64, 1LL << 40);
  cr_assert_eq(w, (1LL << 40) + 3);
  long long cas64[2] = {(1LL << 40) + 3, -1};
  LAPI_Rmw64(h, COMPARE_AND_SWAP, 0, &w, cas64, &p64, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(p64, TRUE);
  cr_assert_eq(w, -1);
  in64 = 1LL << 41;
  LAPI_Rmw64(h, SWAP, 0, &w, &in64, &p64, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(p64, -1);
  cr_assert_eq(w, 1LL << 41);
  in64 = (1LL << 41) | (1LL << 33);
  LAPI_Rmw64(h, FETCH_AND_OR, 0, &w, &in64, &p64, &o);
  LAPI_Waitcntr(h, &o, 1, NULL);
  cr_assert_eq(p64, 1LL << 41);
  cr_assert_eq(w, (1LL << 41) | (1LL << 33));

  v = 1;
  cr_assert_eq(LAPI_Rmw(h, (RMW_ops_t)4, 0, &v, &in, &prev, &o),
               LAPI_ERR_RMW_OP);
  cr_assert_eq(LAPI_Rmw(h, SWAP, 1, &v, &in, &prev, &o), LAPI_ERR_TGT);
  cr_assert_eq(LAPI_Rmw(h, SWAP, 0, NULL, &in, &prev, &o),
               LAPI_ERR_TGT_VAR_NULL);
  cr_assert_eq(LAPI_Rmw(h, SWAP, 0, &v, NULL, &prev, &o),
               LAPI_ERR_IN_VAL_NULL);
  cr_assert_eq(LAPI_Rmw64(h, SWAP, 0, NULL, &in64, &p64, &o),
               LAPI_ERR_TGT_VAR_NULL);
  cr_assert_eq(v, 1, "refused Rmw calls leave the variable alone");
  cr_assert_eq(core_cntr(h, &o), 0);
  LAPI_Term(h);
}

Test(core_rma, put_get_argument_checks)
{
  lapi_handle_t h = core_init();
  char a[4] = "abc", b[4] = "xyz";
  lapi_cntr_t c = {0};
  cr_assert_eq(LAPI_Put(h, 1, 4, b, a, NULL, NULL, &c), LAPI_ERR_TGT);
  cr_assert_eq(LAPI_Put(h, 0, 4, NULL, a, NULL, NULL, &c),
               LAPI_ERR_TGT_ADDR_NULL);
  cr_assert_eq(LAPI_Put(h, 0, 4, b, NULL, NULL, NULL, &c),
               LAPI_ERR_ORG_ADDR_NULL);
  cr_assert_eq(LAPI_Put(h, 0, (ulong)LAPI_MAX_MSG_SZ + 1, b, a, NULL, NULL,
                        &c), LAPI_ERR_DATA_LEN);
  cr_assert_eq(LAPI_Get(h, 0, 4, NULL, a, NULL, &c), LAPI_ERR_TGT_ADDR_NULL);
  cr_assert_eq(LAPI_Get(h, 0, 4, b, NULL, NULL, &c), LAPI_ERR_ORG_ADDR_NULL);
  cr_assert_eq(LAPI_Get(LAPI_VOID_HANDLE, 0, 4, b, a, NULL, &c),
               LAPI_ERR_HNDL_INVALID);
  LAPI_Purge_totask(h, 0);
  cr_assert_eq(LAPI_Put(h, 0, 4, b, a, NULL, NULL, &c), LAPI_ERR_TGT_PURGED);
  cr_assert_str_eq(b, "xyz");
  cr_assert_eq(c.cntr, 0);
  LAPI_Term(h);
}

/* Xfer PUT/GET/RMW and their handlers (run in MPE context, before
 * org_cntr moves). */
static int sh_calls, ch_calls;
static lapi_cntr_t xo;
static int org_at_handler = -1;

static void put_done(lapi_handle_t *h, void *p, lapi_sh_info_t *info)
{
  (void)h, (void)info;
  CORE_CHECK(p == &sh_calls);
  org_at_handler = xo.cntr;
  sh_calls++;
}

static void get_done(lapi_handle_t *h, void *p)
{
  (void)h;
  CORE_CHECK(p == &ch_calls);
  org_at_handler = xo.cntr;
  ch_calls++;
}

Test(core_rma, xfer_put_get_rmw)
{
  lapi_handle_t h = core_init();
  LAPI_Setcntr(h, &xo, 0);
  char a[6] = "hello", b[6] = {0}, back[6] = {0};
  lapi_xfer_t x;
  memset(&x, 0, sizeof x);
  x.Put.Xfer_type = LAPI_PUT_XFER;
  x.Put.tgt_addr = (lapi_long_t)(uintptr_t)b;
  x.Put.org_addr = a;
  x.Put.len = 6;
  x.Put.shdlr = put_done;
  x.Put.sinfo = &sh_calls;
  x.Put.org_cntr = &xo;
  cr_assert_eq(LAPI_Xfer(h, &x), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &xo, 1, NULL), LAPI_SUCCESS);
  cr_assert_str_eq(b, "hello");
  cr_assert_eq(sh_calls, 1);
  cr_assert_eq(org_at_handler, 0);

  memset(&x, 0, sizeof x);
  x.Get.Xfer_type = LAPI_GET_XFER;
  x.Get.tgt_addr = (lapi_long_t)(uintptr_t)b;
  x.Get.org_addr = back;
  x.Get.len = 6;
  x.Get.chndlr = get_done;
  x.Get.cinfo = &ch_calls;
  x.Get.org_cntr = &xo;
  cr_assert_eq(LAPI_Xfer(h, &x), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &xo, 1, NULL), LAPI_SUCCESS);
  cr_assert_str_eq(back, "hello");
  cr_assert_eq(ch_calls, 1);

  long long var = 40, in = 2, prev = 0;
  memset(&x, 0, sizeof x);
  x.Rmw.Xfer_type = LAPI_RMW_XFER;
  x.Rmw.op = FETCH_AND_ADD;
  x.Rmw.size = 64;
  x.Rmw.tgt_var = (lapi_long_t)(uintptr_t)&var;
  x.Rmw.in_val = &in;
  x.Rmw.prev_tgt_val = &prev;
  x.Rmw.org_cntr = &xo;
  cr_assert_eq(LAPI_Xfer(h, &x), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &xo, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(prev, 40);
  cr_assert_eq(var, 42);
  x.Rmw.size = 16;
  cr_assert_eq(LAPI_Xfer(h, &x), LAPI_ERR_OP_SZ);
  cr_assert_eq(var, 42);
  LAPI_Term(h);
  CORE_ASSERT_NO_FAILURE();
}

Test(core_rma, addresses_and_address_table)
{
  lapi_handle_t h = core_init();
  int x;
  ulong a = 0;
  cr_assert_eq(LAPI_Address(&x, &a), LAPI_SUCCESS);
  cr_assert_eq(a, (ulong)(uintptr_t)&x);
  cr_assert_eq(LAPI_Address(NULL, &a), LAPI_ERR_ORG_ADDR_NULL);
  cr_assert_eq(LAPI_Address(&x, NULL), LAPI_ERR_TGT_ADDR_NULL);

  void *tab[1] = {NULL};
  cr_assert_eq(LAPI_Address_init(h, &x, tab), LAPI_SUCCESS);
  cr_assert_eq(tab[0], &x);
  cr_assert_eq(LAPI_Address_init(h, &x, NULL), LAPI_ERR_ADDR_TBL_NULL);
  lapi_long_t tab64[1] = {0};
  cr_assert_eq(LAPI_Address_init64(h, 0x123456789abcULL, tab64),
               LAPI_SUCCESS);
  cr_assert_eq(tab64[0], 0x123456789abcULL);
  cr_assert_eq(LAPI_Address_init64(h, 1, NULL), LAPI_ERR_ADDR_TBL_NULL);

  void *got = NULL;
  cr_assert_eq(LAPI_Addr_set(h, &x, 1), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Addr_set(h, &x, 255), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Addr_set(h, &x, 0), LAPI_ERR_ADDR_HNDL_RANGE);
  cr_assert_eq(LAPI_Addr_set(h, &x, 256), LAPI_ERR_ADDR_HNDL_RANGE);
  cr_assert_eq(LAPI_Addr_set(h, &x, -1), LAPI_ERR_ADDR_HNDL_RANGE);
  cr_assert_eq(LAPI_Addr_get(h, &got, 255), LAPI_SUCCESS);
  cr_assert_eq(got, &x);
  cr_assert_eq(LAPI_Addr_get(h, NULL, 1), LAPI_ERR_RET_PTR_NULL);
  cr_assert_eq(LAPI_Addr_get(h, &got, 256), LAPI_ERR_ADDR_HNDL_RANGE);
  LAPI_Term(h);
}

Test(core_rma, statistics_count_loopback_traffic)
{
  lapi_handle_t h = core_init();
  char a[100] = {0}, b[100];
  lapi_cntr_t c = {0};
  for (int i = 0; i < 3; i++)
    LAPI_Put(h, 0, 100, b, a, NULL, NULL, &c);
  LAPI_Waitcntr(h, &c, 3, NULL);
  lapi_statistics_t all, self, shm;
  cr_assert_eq(LAPI_Qenv(h, QUERY_STATISTICS, (int *)(void *)&all),
               LAPI_SUCCESS);
  cr_assert_eq(LAPI_Qenv(h, QUERY_LOCAL_SEND_STATISTICS,
                         (int *)(void *)&self), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Qenv(h, QUERY_SHM_STATISTICS, (int *)(void *)&shm),
               LAPI_SUCCESS);
  cr_assert_eq(all.Tot_pkt_sent_cnt, 3);
  cr_assert_eq(all.Tot_data_sent, 300);
  cr_assert_eq(all.Tot_pkt_recv_cnt, 3);
  cr_assert_eq(all.Tot_data_recv, 300);
  cr_assert_eq(self.Tot_data_sent, 300);
  cr_assert_eq(shm.Tot_pkt_sent_cnt, 0);
  cr_assert_eq(all.Tot_retrans_pkt_cnt, 0);
  LAPI_Term(h);
}
