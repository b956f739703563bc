/*
 * test_cpe_stats.c - which engine moved the bytes of a transfer between
 * CPE tasks: RMA for LDM to LDM, DMA get for main memory to LDM, DMA put
 * for LDM (or main memory) to main memory, one strided DMA for a strided
 * main-memory side with a dense LDM side, and the MPE for what the 4-byte
 * rule keeps off the engines.  Task 0 issues one transfer at a time while
 * task 1 only waits, and compares the MPE engine counters
 * (crts_engine_stats_mpe) before and after each.
 */
#include "cpe_test_util.h"

static __thread_local _Alignas(64) unsigned char lbuf[4096];
static __thread_local lapi_cntr_t org_c, cmpl_c, tgt_c;
static __thread_local void *tab[64];
static unsigned char *mem_of[2], *lbuf_of[2]; /* for the handlers */
static _Alignas(64) char inbox_mem[2][2048];
static lapi_vec_t amv_vec;
static void *amv_info[4];
static ulong amv_len[4];

/* Expected change of the MPE counters: ops and bytes per kind. */
struct delta {
  uint64_t ops[CRTS_STAT_KINDS], bytes[CRTS_STAT_KINDS];
};

static void expect(const struct crts_engine_stats *a,
                   const struct crts_engine_stats *b, const struct delta *d,
                   const char *what)
{
  for (int k = 0; k < CRTS_STAT_KINDS; k++) {
    uint64_t ops = b->ops[k] - a->ops[k], bytes = b->bytes[k] - a->bytes[k];
    if (ops != d->ops[k] || bytes != d->bytes[k])
      ct_fail("%s: %s moved %llu ops / %llu bytes, expected %llu / %llu",
              what, crts_engine_kind_name((enum crts_stat_kind)k),
              (unsigned long long)ops, (unsigned long long)bytes,
              (unsigned long long)d->ops[k], (unsigned long long)d->bytes[k]);
  }
}

/* A put from task 0 to task 1, measured. */
static void put(struct ct_task *t, void *dst, void *src, size_t len,
                const struct delta *d, const char *what)
{
  struct crts_engine_stats a, b;
  crts_engine_stats_mpe(&a);
  ct_fill(src, len, (uint32_t)len);
  CT_OK(LAPI_Put(t->h, 1, len, dst, src, NULL, &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  crts_engine_stats_mpe(&b);
  expect(&a, &b, d, what);
  /* The bytes are there too (the same location on task 1 for LDM). */
  const unsigned char *p = crts_engine_ldm_owner(dst) == 0
                               ? crts_engine_ldm_translate(dst, 1)
                               : dst;
  for (size_t i = 0; i < len; i++)
    if (p[i] != ct_byte((uint32_t)len, i)) {
      ct_fail("%s: byte %zu differs", what, i);
      break;
    }
}

static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  /* Two main-memory segments land in task 1's LDM (same lengths). */
  amv_info[0] = lbuf_of[1];
  amv_info[1] = lbuf_of[1] + 1024;
  amv_len[0] = len_vec[0];
  amv_len[1] = len_vec[1];
  amv_vec.vec_type = LAPI_GEN_IOVECTOR;
  amv_vec.num_vecs = 2;
  amv_vec.info = amv_info;
  amv_vec.len = amv_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return &amv_vec;
}

static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return lbuf_of[1] + 2048;
}

static void measure(struct ct_task *t)
{
  unsigned char *mem = mem_of[0], *mem1 = mem_of[1];
  struct delta d;
#define KIND(k, o, b)                                                        \
  do {                                                                       \
    d.ops[CRTS_STAT_##k] = (o);                                              \
    d.bytes[CRTS_STAT_##k] = (b);                                            \
  } while (0)

  memset(&d, 0, sizeof d);
  KIND(RMA, 1, 1024);
  put(t, lbuf + 1024, lbuf, 1024, &d, "LDM -> LDM put");

  memset(&d, 0, sizeof d);
  KIND(DMA_GET, 1, 1024);
  put(t, lbuf + 1024, mem, 1024, &d, "memory -> LDM put");

  memset(&d, 0, sizeof d);
  KIND(DMA_PUT, 1, 1024);
  put(t, mem1, lbuf, 1024, &d, "LDM -> memory put");

  memset(&d, 0, sizeof d);
  KIND(DMA_PUT, 1, 1024);
  put(t, mem1 + 1024, mem, 1024, &d, "memory -> memory put");

  /* Same misalignment on both sides: a 3-byte head by the MPE. */
  memset(&d, 0, sizeof d);
  KIND(MPE_COPY, 1, 3);
  KIND(RMA, 1, 1020);
  put(t, lbuf + 1025, lbuf + 1, 1023, &d, "LDM+1 -> LDM+1 put");

  /* Head and tail. */
  memset(&d, 0, sizeof d);
  KIND(MPE_COPY, 2, 3 + 2);
  KIND(DMA_GET, 1, 100);
  put(t, lbuf + 2049, mem + 1, 105, &d, "memory+1 -> LDM+1, 105 bytes");

  /* Skewed sides: no word can go to an engine. */
  memset(&d, 0, sizeof d);
  KIND(MPE_COPY, 1, 200);
  put(t, lbuf + 1026, lbuf + 1, 200, &d, "LDM+1 -> LDM+2 put");

  /* Strided main memory (pitch 256) <- dense LDM: one strided DMA put. */
  struct crts_engine_stats a, b;
  void *oi[3] = {lbuf, (void *)(uintptr_t)64, (void *)(uintptr_t)64};
  void *ti[3] = {mem1, (void *)(uintptr_t)64, (void *)(uintptr_t)256};
  lapi_vec_t ov = {LAPI_GEN_STRIDED_XFER, 8, oi, NULL};
  lapi_vec_t tv = {LAPI_GEN_STRIDED_XFER, 8, ti, NULL};
  crts_engine_stats_mpe(&a);
  CT_OK(LAPI_Putv(t->h, 1, &tv, &ov, NULL, &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  crts_engine_stats_mpe(&b);
  memset(&d, 0, sizeof d);
  KIND(DMA_PUT, 1, 512);
  expect(&a, &b, &d, "strided Putv LDM -> memory");
  ct_wait(t, &org_c, 1);

  /* ... and back with Getv: one strided DMA get. */
  crts_engine_stats_mpe(&a);
  CT_OK(LAPI_Getv(t->h, 1, &tv, &ov, NULL, &org_c));
  ct_wait(t, &org_c, 1);
  crts_engine_stats_mpe(&b);
  memset(&d, 0, sizeof d);
  KIND(DMA_GET, 1, 512);
  expect(&a, &b, &d, "strided Getv memory -> LDM");

  /* LDM strided on both sides: one RMA per block. */
  void *li[3] = {lbuf + 2048, (void *)(uintptr_t)64, (void *)(uintptr_t)128};
  lapi_vec_t lv = {LAPI_GEN_STRIDED_XFER, 8, li, NULL};
  crts_engine_stats_mpe(&a);
  CT_OK(LAPI_Putv(t->h, 1, &lv, &ov, NULL, &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  crts_engine_stats_mpe(&b);
  memset(&d, 0, sizeof d);
  KIND(RMA, 8, 512); /* RMA is never strided: one per block */
  expect(&a, &b, &d, "strided Putv LDM -> strided LDM");

  /* Amsendv of two main-memory segments into LDM: two DMA gets. */
  void *si[2] = {mem, mem + 512};
  ulong sl[2] = {256, 128};
  lapi_vec_t sv = {LAPI_GEN_IOVECTOR, 2, si, sl};
  crts_engine_stats_mpe(&a);
  CT_OK(LAPI_Amsendv(t->h, 1, (void *)amv_header, NULL, 0, &sv, NULL,
                     &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  crts_engine_stats_mpe(&b);
  memset(&d, 0, sizeof d);
  KIND(DMA_GET, 2, 384);
  expect(&a, &b, &d, "Amsendv memory -> LDM");

  /* Amsend LDM -> LDM: one RMA. */
  crts_engine_stats_mpe(&a);
  CT_OK(LAPI_Amsend(t->h, 1, (void *)am_header, NULL, 0, lbuf, 512, NULL,
                    &org_c, &cmpl_c));
  ct_wait(t, &cmpl_c, 1);
  ct_wait(t, &org_c, 1);
  crts_engine_stats_mpe(&b);
  memset(&d, 0, sizeof d);
  KIND(RMA, 1, 512);
  expect(&a, &b, &d, "Amsend LDM -> LDM");
#undef KIND
}

static void stats_task(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open(&t);
  mem_of[t.me] = (unsigned char *)inbox_mem[t.me];
  lbuf_of[t.me] = lbuf;
  ct_zero(&t, &org_c);
  ct_zero(&t, &cmpl_c);
  ct_zero(&t, &tgt_c);
  CT_OK(LAPI_Address_init(t.h, &tgt_c, tab));
  struct crts_engine_stats c0, c1;
  crts_engine_stats_cpes(&c0);
  lapi_statistics_t s0, s1;
  CT_OK(LAPI_Qenv(t.h, QUERY_SHM_STATISTICS, (int *)(void *)&s0));
  CT_OK(LAPI_Gfence(t.h)); /* both took s0 before anything moves */
  if (t.me == 0)
    measure(&t);
  CT_OK(LAPI_Gfence(t.h));
  CT_OK(LAPI_Qenv(t.h, QUERY_SHM_STATISTICS, (int *)(void *)&s1));
  crts_engine_stats_cpes(&c1);
  /* The CPEs issued no DMA or RMA themselves: the MPE did it all. */
  for (int k = 0; k < CRTS_STAT_KINDS; k++)
    CT_CHECK_EQ(c1.ops[k], c0.ops[k]);
  /* 7 puts, Putv, Getv, Putv, Amsendv, Amsend through crts. */
  if (t.me == 0)
    CT_CHECK_EQ(s1.Tot_pkt_sent_cnt - s0.Tot_pkt_sent_cnt, 12);
  else /* puts, Putvs and AMs are counted where they land */
    CT_CHECK_EQ(s1.Tot_pkt_recv_cnt - s0.Tot_pkt_recv_cnt, 11);
  ct_close(&t);
}

Test(cpe_stats, engine_per_path, .timeout = CT_TIMEOUT)
{
  ct_run(2, stats_task, NULL);
  CT_ASSERT_NO_FAILURE();
}

/* ------------------------------------------------ moved by the origin */

/* A large contiguous put (>= LAPI_CPE_DIRECT_MIN, 16 KiB by default) that
 * a CPE's own engines can do (one side is its own LDM) is moved by the
 * origin CPE: it shows in the CPEs' statistics under the kind the MPE
 * would have used, not in the MPE's.  One from main memory into the
 * peer's LDM, or an unaligned one, still goes to the MPE. */
#define BIG_PUT 65536
static __thread_local _Alignas(64) unsigned char big[BIG_PUT];

static void direct_task(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open(&t);
  ct_zero(&t, &org_c);
  ct_zero(&t, &cmpl_c);
  CT_OK(LAPI_Gfence(t.h));
  if (t.me == 0) {
    struct crts_engine_stats c0, c1, m0, m1;
    crts_engine_stats_cpes(&c0);
    crts_engine_stats_mpe(&m0);
    ct_fill(big, BIG_PUT, 7);
    CT_OK(LAPI_Put(t.h, 1, BIG_PUT, big, big, NULL, &org_c, &cmpl_c));
    ct_wait(&t, &cmpl_c, 1);
    ct_wait(&t, &org_c, 1);
    crts_engine_stats_cpes(&c1);
    crts_engine_stats_mpe(&m1);
    for (int k = 0; k < CRTS_STAT_KINDS; k++) {
      uint64_t want_ops = k == CRTS_STAT_RMA, want_bytes = want_ops * BIG_PUT;
      CT_CHECK_EQ(c1.ops[k] - c0.ops[k], want_ops);
      CT_CHECK_EQ(c1.bytes[k] - c0.bytes[k], want_bytes);
      CT_CHECK_EQ(m1.ops[k] - m0.ops[k], 0);
    }
    const unsigned char *there = crts_engine_ldm_translate(big, 1);
    for (size_t i = 0; i < BIG_PUT; i++)
      if (there[i] != ct_byte(7, i)) {
        ct_fail("64 KiB LDM -> LDM put: byte %zu differs", i);
        break;
      }

    /* Main memory into the peer's LDM: no command of CPE 0's own engines
     * does that (its DMA reaches its own LDM only), so the MPE moves it
     * with a DMA get. */
    static _Alignas(64) unsigned char mem_src[BIG_PUT];
    ct_fill(mem_src, BIG_PUT, 9);
    crts_engine_stats_cpes(&c0);
    crts_engine_stats_mpe(&m0);
    CT_OK(LAPI_Put(t.h, 1, BIG_PUT, big, mem_src, NULL, &org_c, &cmpl_c));
    ct_wait(&t, &cmpl_c, 1);
    ct_wait(&t, &org_c, 1);
    crts_engine_stats_cpes(&c1);
    crts_engine_stats_mpe(&m1);
    for (int k = 0; k < CRTS_STAT_KINDS; k++)
      CT_CHECK_EQ(c1.ops[k] - c0.ops[k], 0);
    CT_CHECK_EQ(m1.ops[CRTS_STAT_DMA_GET] - m0.ops[CRTS_STAT_DMA_GET], 1);
    CT_CHECK_EQ(m1.bytes[CRTS_STAT_DMA_GET] - m0.bytes[CRTS_STAT_DMA_GET],
                BIG_PUT);
    for (size_t i = 0; i < BIG_PUT; i++)
      if (there[i] != ct_byte(9, i)) {
        ct_fail("64 KiB memory -> peer LDM put: byte %zu differs", i);
        break;
      }

    /* Unaligned: the MPE moves it (a head by copy, the rest by RMA). */
    crts_engine_stats_cpes(&c0);
    crts_engine_stats_mpe(&m0);
    CT_OK(LAPI_Put(t.h, 1, BIG_PUT - 8, big + 1, big + 1, NULL, &org_c,
                   &cmpl_c));
    ct_wait(&t, &cmpl_c, 1);
    ct_wait(&t, &org_c, 1);
    crts_engine_stats_cpes(&c1);
    crts_engine_stats_mpe(&m1);
    uint64_t mpe_bytes = 0;
    for (int k = 0; k < CRTS_STAT_KINDS; k++) {
      CT_CHECK_EQ(c1.ops[k] - c0.ops[k], 0);
      mpe_bytes += m1.bytes[k] - m0.bytes[k];
    }
    CT_CHECK_EQ(mpe_bytes, BIG_PUT - 8);
    CT_CHECK(m1.ops[CRTS_STAT_MPE_COPY] > m0.ops[CRTS_STAT_MPE_COPY]);
  }
  CT_OK(LAPI_Gfence(t.h));
  ct_close(&t);
}

Test(cpe_stats, large_put_by_origin, .timeout = CT_TIMEOUT)
{
  ct_run(2, direct_task, NULL);
  CT_ASSERT_NO_FAILURE();
}
