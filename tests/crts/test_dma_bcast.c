/*
 * test_dma_bcast.c - DMA broadcasts to the array, a row and a column
 * (non-blocking and collective, plain and strided), who receives and whose
 * reply word counts, partial groups, statistics and CRTS_memcpy_sldm.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define BUFW 256
#define SENTINEL 0xA5

static __thread_local uint32_t buf[BUFW];
static __thread_local crts_rply_t rply;
static uint32_t bsrc[8][BUFW];

/* Test-only meeting point of the whole group. */
static struct crts_barrier tbar;
static void sync_all(void)
{
  crts_barrier_wait(&tbar, (uint32_t)crts_cg.group_size, 0);
}

static uint32_t pattern(int a, int i)
{
  return (uint32_t)a * 0x01000193u + (uint32_t)i * 0x9E3779B9u + 1u;
}

static void fill_sources(void)
{
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < BUFW; i++)
      bsrc[k][i] = pattern(k, i);
}

static int all_bytes(const void *p, size_t n, unsigned char v)
{
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != v)
      return 0;
  return 1;
}

/* buf holds words src[w] for w = j/bw*(bw+gw) + j%bw, j < n (gw 0: flat). */
static int holds_strided(const uint32_t *src, int n, int bw, int gw)
{
  for (int j = 0; j < n; j++) {
    int w = gw ? j / bw * (bw + gw) + j % bw : j;
    if (buf[j] != src[w])
      return 0;
  }
  return all_bytes(&buf[n], sizeof buf - (size_t)n * 4, SENTINEL);
}

/* ------------------------------------------------------------- array */

static void array_ibcast(void *arg)
{
  (void)arg;
  static const int roots[] = { 0, 37, 63, 12 };
  rply = 0;
  memset(buf, SENTINEL, sizeof buf);
  sync_all();
  for (int k = 0; k < 4; k++) {
    int words = 64 + 16 * k;
    if (CRTS_tid == roots[k]) {
      int rc = k == 3 ? CRTS_dma_ibcast_stride(buf, bsrc[k], words * 4, 8, 8,
                                               &rply)
                      : CRTS_dma_ibcast(buf, bsrc[k], words * 4, &rply);
      CPE_CHECK(rc == 0);
    }
    /* Every CPE waits on its own word: one broadcast, +1 each. */
    CPE_CHECK(CRTS_dma_wait_value(&rply, k + 1) == 0);
    CPE_CHECK(rply == k + 1);
    CPE_CHECK(holds_strided(bsrc[k], words, 2, k == 3 ? 2 : 0));
    sync_all();
  }
}

Test(dma_bcast, ibcast_reaches_all_64_ldms)
{
  fill_sources();
  crts_test_run(array_ibcast, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* -------------------------------------------------------- row and col */

/* One CPE broadcasts to its line; the others must stay untouched. */
static void line_ibcast(int col)
{
  int me_line = col ? CRTS_cid : CRTS_rid;
  int me_pos = col ? CRTS_rid : CRTS_cid;
  rply = 0;
  memset(buf, SENTINEL, sizeof buf);
  sync_all();
  /* Phase A: only CPE 29 (row 3, column 5) issues. */
  if (CRTS_tid == 29) {
    int rc = col ? CRTS_dma_col_ibcast(buf, bsrc[0], 128, &rply)
                 : CRTS_dma_row_ibcast(buf, bsrc[0], 128, &rply);
    CPE_CHECK(rc == 0);
  }
  int receiver = me_line == (col ? 5 : 3);
  if (receiver)
    CPE_CHECK(CRTS_dma_wait_value(&rply, 1) == 0);
  sync_all();
  if (receiver) {
    CPE_CHECK(rply == 1);
    CPE_CHECK(holds_strided(bsrc[0], 32, 1, 0));
  } else {
    CPE_CHECK(rply == 0);
    CPE_CHECK(all_bytes(buf, sizeof buf, SENTINEL));
  }
  sync_all();
  /* Phase B: every line at once, each from its own source, strided. */
  if (me_pos == me_line) {
    int rc = col ? CRTS_dma_col_ibcast_stride(buf, bsrc[me_line], 64, 4, 4,
                                              &rply)
                 : CRTS_dma_row_ibcast_stride(buf, bsrc[me_line], 64, 4, 4,
                                              &rply);
    CPE_CHECK(rc == 0);
  }
  int want = receiver ? 2 : 1;
  CPE_CHECK(CRTS_dma_wait_value(&rply, want) == 0);
  CPE_CHECK(rply == want);
  for (int j = 0; j < 16; j++)
    CPE_CHECK(buf[j] == bsrc[me_line][2 * j]);
  sync_all();
  CPE_CHECK(rply == want);
}

static void row_ibcast(void *arg)
{
  (void)arg;
  line_ibcast(0);
}

static void col_ibcast(void *arg)
{
  (void)arg;
  line_ibcast(1);
}

Test(dma_bcast, row_ibcast_reaches_only_the_row)
{
  fill_sources();
  crts_test_run(row_ibcast, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(dma_bcast, col_ibcast_reaches_only_the_column)
{
  fill_sources();
  crts_test_run(col_ibcast, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* -------------------------------------------------------- collective */

static uint32_t coll_word[2];
static __thread_local uint32_t word_tmp;

static void collectives(void *arg)
{
  (void)arg;
  int rid = CRTS_rid, cid = CRTS_cid;
  for (int r = 0; r < 24; r++) {
    /*
     * A different CPE writes the source right before the call: everyone
     * must see it, so nobody may load before all have entered.  Two words
     * alternate so that the next writer cannot overtake a slow reader.
     */
    if (CRTS_tid == r * 7 % 64) {
      word_tmp = pattern(100, r);
      CPE_CHECK(CRTS_dma_put(&coll_word[r % 2], &word_tmp, 4) == 0);
    }
    memset(buf, SENTINEL, sizeof buf);
    CPE_CHECK(CRTS_dma_bcast_coll(buf, &coll_word[r % 2], 4) == 0);
    CPE_CHECK(buf[0] == pattern(100, r));
    CPE_CHECK(all_bytes(&buf[1], sizeof buf - 4, SENTINEL));

    memset(buf, SENTINEL, sizeof buf);
    CPE_CHECK(CRTS_dma_bcast_stride_coll(buf, bsrc[r % 8], 20, 4, 4) == 0);
    CPE_CHECK(holds_strided(bsrc[r % 8], 5, 1, 1));
  }
  /* Rows (and then columns) make different numbers of calls: each line
     meets only its own members. */
  for (int r = 0; r <= rid * 2; r++) {
    memset(buf, SENTINEL, sizeof buf);
    CPE_CHECK(CRTS_dma_row_bcast_coll(buf, bsrc[rid], 256) == 0);
    CPE_CHECK(holds_strided(bsrc[rid], 64, 1, 0));
    memset(buf, SENTINEL, sizeof buf);
    CPE_CHECK(CRTS_dma_row_bcast_stride_coll(buf, bsrc[(rid + r) % 8], 32, 8,
                                             8) == 0);
    CPE_CHECK(holds_strided(bsrc[(rid + r) % 8], 8, 2, 2));
  }
  sync_all();
  for (int r = 0; r <= cid * 2; r++) {
    memset(buf, SENTINEL, sizeof buf);
    CPE_CHECK(CRTS_dma_col_bcast_coll(buf, bsrc[cid], 1024) == 0);
    CPE_CHECK(holds_strided(bsrc[cid], 256, 1, 0));
    memset(buf, SENTINEL, sizeof buf);
    CPE_CHECK(CRTS_dma_col_bcast_stride_coll(buf, bsrc[(cid + r) % 8], 48, 12,
                                             4) == 0);
    CPE_CHECK(holds_strided(bsrc[(cid + r) % 8], 12, 3, 1));
  }
}

Test(dma_bcast, collective_forms_give_every_caller_the_data)
{
  fill_sources();
  crts_test_run(collectives, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ----------------------------------------------------------- partial */

static void partial_group(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  struct crts_cpe *me = crts_self;
  rply = 0;
  memset(buf, SENTINEL, sizeof buf);
  /* 20 CPEs: rows 0-1 full, row 2 = CPEs 16..19; columns of 3 or 2. */
  CPE_CHECK(CRTS_dma_bcast_coll(buf, bsrc[1], 64) == 0);
  CPE_CHECK(holds_strided(bsrc[1], 16, 1, 0));
  CPE_CHECK(CRTS_dma_row_bcast_coll(buf, bsrc[CRTS_rid], 64) == 0);
  CPE_CHECK(holds_strided(bsrc[CRTS_rid], 16, 1, 0));
  CPE_CHECK(CRTS_dma_col_bcast_coll(buf, bsrc[CRTS_cid], 64) == 0);
  CPE_CHECK(holds_strided(bsrc[CRTS_cid], 16, 1, 0));
  memset(buf, SENTINEL, sizeof buf);
  sync_all();
  uint64_t bytes = me->stat_bytes[CRTS_STAT_DMA_GET];
  if (t == 18)
    CPE_CHECK(CRTS_dma_row_ibcast(buf, bsrc[2], 32, &rply) == 0);
  if (t == 5)
    CPE_CHECK(CRTS_dma_col_ibcast(buf, bsrc[3], 32, &rply) == 0);
  sync_all();
  if (t == 18)
    CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_GET] == bytes + 32 * 4);
  if (t == 5)
    CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_GET] == bytes + 32 * 2);
  if (t >= 16) {
    CPE_CHECK(rply == 1);
    CPE_CHECK(holds_strided(bsrc[2], 8, 1, 0));
  } else if (t == 5 || t == 13) {
    CPE_CHECK(rply == 1);
    CPE_CHECK(holds_strided(bsrc[3], 8, 1, 0));
  } else {
    CPE_CHECK(rply == 0);
    CPE_CHECK(all_bytes(buf, sizeof buf, SENTINEL));
  }
}

Test(dma_bcast, partial_group_limits_receivers_and_collectives)
{
  setenv("CRTS_NUM_CPES", "20", 1);
  fill_sources();
  crts_test_run(partial_group, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* -------------------------------------------------------- statistics */

static void bcast_stats(void *arg)
{
  (void)arg;
  struct crts_cpe *me = crts_self;
  uint64_t ops = me->stat_ops[CRTS_STAT_DMA_GET];
  uint64_t bytes = me->stat_bytes[CRTS_STAT_DMA_GET];
  rply = 0;
  sync_all();
  if (CRTS_tid == 9) {
    CPE_CHECK(CRTS_dma_ibcast(buf, bsrc[0], 40, &rply) == 0);
    CPE_CHECK(CRTS_dma_row_ibcast_stride(buf, bsrc[0], 40, 8, 4, &rply) == 0);
  }
  CPE_CHECK(CRTS_dma_wait_value(&rply, 1) == 0);
  sync_all();
  CPE_CHECK(CRTS_dma_col_bcast_coll(buf, bsrc[0], 24) == 0);
  /* The issuer counts one operation carrying every receiver's bytes. */
  uint64_t want_ops = ops + 1 + (CRTS_tid == 9 ? 2 : 0);
  uint64_t want_bytes = bytes + 24 + (CRTS_tid == 9 ? 40 * 64 + 40 * 8 : 0);
  CPE_CHECK(me->stat_ops[CRTS_STAT_DMA_GET] == want_ops);
  CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_GET] == want_bytes);
}

Test(dma_bcast, statistics_count_every_receivers_bytes)
{
  fill_sources();
  crts_test_run(bcast_stats, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------------------ sldm */

#define SLDM_LEN 1000 /* 250 words: parts of 63, 63, 62, 62 */
static __thread_local_share uint32_t shared[BUFW];
static uint32_t sldm_src[16][BUFW], sldm_out[16][BUFW];

static void fill_sldm(void)
{
  for (int c = 0; c < 16; c++)
    for (int i = 0; i < BUFW; i++) {
      sldm_src[c][i] = pattern(200 + c, i);
      sldm_out[c][i] = 0xDEADBEEF;
    }
}

/* Member (spc_tid order) whose replica provides word i of n members. */
static int part_owner(int i, int words, int n)
{
  int per = words / n, extra = words % n, start = 0;
  for (int k = 0; k < n; k++) {
    int cnt = per + (k < extra);
    if (i < start + cnt)
      return k;
    start += cnt;
  }
  return -1;
}

/* Members of the caller's cluster in the group, and the caller's rank. */
static int cluster_members(int *rank)
{
  int base = CRTS_spcn / 4 * 16 + CRTS_spcn % 4 * 2;
  static const int offs[4] = { 0, 1, 8, 9 }; /* spc_tid order */
  int n = 0;
  for (int k = 0; k < 4; k++) {
    if (base + offs[k] == CRTS_tid)
      *rank = n;
    n += crts_in_group(base + offs[k]);
  }
  return n;
}

static void sldm_both_ways(void *arg)
{
  (void)arg;
  int c = CRTS_spcn, rank = -1, n = cluster_members(&rank);
  struct crts_cpe *me = crts_self;
  uint64_t g = me->stat_bytes[CRTS_STAT_DMA_GET];
  uint64_t p = me->stat_bytes[CRTS_STAT_DMA_PUT];
  memset(shared, 0, sizeof shared);
  CPE_CHECK(CRTS_memcpy_sldm(shared, sldm_src[c], SLDM_LEN, MEM_TO_LDM) == 0);
  /* Every CPE of the cluster reads the whole shared data. */
  CPE_CHECK(memcmp(shared, sldm_src[c], SLDM_LEN) == 0);
  CPE_CHECK(shared[SLDM_LEN / 4] == 0);
  CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_GET] == g + SLDM_LEN);
  /* Each replica marks its words: main memory shows who wrote what. */
  for (int i = 0; i < BUFW; i++)
    shared[i] = (uint32_t)rank << 16 | (uint32_t)i;
  CPE_CHECK(CRTS_memcpy_sldm(sldm_out[c], shared, SLDM_LEN, LDM_TO_MEM) == 0);
  int mine = 0;
  for (int i = 0; i < SLDM_LEN / 4; i++)
    mine += part_owner(i, SLDM_LEN / 4, n) == rank;
  CPE_CHECK(me->stat_bytes[CRTS_STAT_DMA_PUT] == p + (uint64_t)mine * 4);
}

/* Main memory of cluster c holds each word once, from its part's owner. */
static void check_sldm_out(int c, int members)
{
  for (int i = 0; i < BUFW; i++) {
    uint32_t want = i < SLDM_LEN / 4
                        ? (uint32_t)part_owner(i, SLDM_LEN / 4, members) << 16 |
                              (uint32_t)i
                        : 0xDEADBEEF;
    cr_assert_eq(sldm_out[c][i], want, "cluster %d word %d: %#x != %#x", c, i,
                 sldm_out[c][i], want);
  }
}

Test(dma_bcast, memcpy_sldm_loads_every_replica_and_stores_once)
{
  fill_sldm();
  crts_test_run(sldm_both_ways, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int c = 0; c < 16; c++)
    check_sldm_out(c, 4);
}

Test(dma_bcast, memcpy_sldm_in_partial_clusters)
{
  /* CPEs 16, 17 (cluster 4) and 18, 19 (cluster 5) have 2 members. */
  setenv("CRTS_NUM_CPES", "20", 1);
  fill_sldm();
  crts_test_run(sldm_both_ways, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int c = 0; c < 6; c++)
    check_sldm_out(c, c >= 4 ? 2 : 4);
  for (int c = 6; c < 16; c++)
    cr_assert_eq(sldm_out[c][0], 0xDEADBEEF, "cluster %d has no CPE", c);
}

/* Cluster 0 disagrees on len, cluster 1 names no direction: all fail. */
static void sldm_mismatch(void *arg)
{
  (void)arg;
  int c = CRTS_spcn;
  memset(shared, SENTINEL, sizeof shared);
  int len = c == 0 && CRTS_tid == 9 ? SLDM_LEN - 4 : SLDM_LEN;
  int dir = c == 1 ? 7 : MEM_TO_LDM;
  int rc = CRTS_memcpy_sldm(shared, sldm_src[c], len, dir);
  if (c <= 1) {
    CPE_CHECK(rc != 0);
    CPE_CHECK(all_bytes(shared, sizeof shared, SENTINEL));
  } else {
    CPE_CHECK(rc == 0);
    CPE_CHECK(memcmp(shared, sldm_src[c], SLDM_LEN) == 0);
  }
  /* The same for a store: nothing reaches main memory. */
  void *mem = c == 0 && CRTS_tid == 8 ? (void *)sldm_out[15] : sldm_out[c];
  rc = CRTS_memcpy_sldm(mem, shared, SLDM_LEN, c == 1 ? -1 : LDM_TO_MEM);
  CPE_CHECK(c <= 1 ? rc != 0 : rc == 0);
}

Test(dma_bcast, memcpy_sldm_mismatch_fails_the_whole_cluster)
{
  setenv("CRTS_VERBOSE", "0", 1);
  fill_sldm();
  crts_test_run(sldm_mismatch, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < BUFW; i++)
      cr_assert_eq(sldm_out[c][i], 0xDEADBEEF, "cluster %d word %d", c, i);
  cr_assert_eq(sldm_out[2][0], sldm_src[2][0]);
}
