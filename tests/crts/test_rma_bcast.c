/*
 * test_rma_bcast.c - RMA broadcast and multicast: who receives (and who is
 * left untouched) for bcast, row/col bcast and row/col mcast with several
 * masks, reply words on every side, statistics, and the _coll forms with
 * changing roots.  Every check compares bytes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define W 64 /* ints per block */
#define SENTINEL 0x5a5a5a5a

static __thread_local int src[W];
static __thread_local int dst[W];
static __thread_local crts_rply_t r_rply;
static __thread_local crts_rply_t l_rply;

static struct crts_barrier test_bar;
static void sync_all(void)
{
  crts_barrier_wait(&test_bar, (uint32_t)crts_cg.group_size, 0);
}

static int pattern(int from, int round, int i)
{
  return from * 100003 + round * 7919 + i + 1;
}

static void fill(int *p, int from, int round)
{
  for (int i = 0; i < W; i++)
    p[i] = pattern(from, round, i);
}

static int holds(const int *p, int from, int round)
{
  for (int i = 0; i < W; i++)
    if (p[i] != pattern(from, round, i))
      return 0;
  return 1;
}

static int untouched(const int *p)
{
  for (int i = 0; i < W; i++)
    if (p[i] != SENTINEL)
      return 0;
  return 1;
}

/* ------------------------------------------- non-collective receivers */

enum op {
  BCAST, IBCAST, ROW_BCAST, ROW_IBCAST, COL_BCAST, COL_IBCAST,
  ROW_MCAST, ROW_IMCAST, COL_MCAST, COL_IMCAST
};

struct mc_case {
  enum op op;
  int sender;
  unsigned char mask;
};

static const struct mc_case cases[] = {
  { BCAST, 5, 0 },         { IBCAST, 63, 0 },       { ROW_BCAST, 19, 0 },
  { ROW_IBCAST, 7, 0 },    { COL_BCAST, 42, 0 },    { COL_IBCAST, 56, 0 },
  { ROW_MCAST, 27, 0x00 }, { ROW_MCAST, 27, 0xa5 }, { ROW_IMCAST, 27, 0x08 },
  { ROW_MCAST, 0, 0xff },  { ROW_IMCAST, 60, 0x01 }, { COL_MCAST, 27, 0x42 },
  { COL_IMCAST, 9, 0x00 }, { COL_MCAST, 63, 0xff }, { COL_IMCAST, 18, 0x05 },
  { BCAST, 0, 0 },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* Does CPE t receive in case k?  Worked out independently of the library. */
static int receives(const struct mc_case *k, int t)
{
  int row = t / 8, col = t % 8, srow = k->sender / 8, scol = k->sender % 8;
  if (t >= crts_cg.group_size)
    return 0;
  if (t == k->sender)
    return 1;
  switch (k->op) {
  case BCAST: case IBCAST: return 1;
  case ROW_BCAST: case ROW_IBCAST: return row == srow;
  case COL_BCAST: case COL_IBCAST: return col == scol;
  case ROW_MCAST: case ROW_IMCAST: return (k->mask >> row) & 1;
  case COL_MCAST: case COL_IMCAST: return (k->mask >> col) & 1;
  }
  return 0;
}

static int is_nonblocking(enum op op)
{
  return op == IBCAST || op == ROW_IBCAST || op == COL_IBCAST ||
         op == ROW_IMCAST || op == COL_IMCAST;
}

static int issue(const struct mc_case *k)
{
  int len = W * 4;
  switch (k->op) {
  case BCAST: return CRTS_rma_bcast(dst, src, len, &r_rply);
  case IBCAST: return CRTS_rma_ibcast(dst, src, &l_rply, len, &r_rply);
  case ROW_BCAST: return CRTS_rma_row_bcast(dst, src, len, &r_rply);
  case ROW_IBCAST: return CRTS_rma_row_ibcast(dst, src, len, &l_rply, &r_rply);
  case COL_BCAST: return CRTS_rma_col_bcast(dst, src, len, &r_rply);
  case COL_IBCAST: return CRTS_rma_col_ibcast(dst, src, len, &l_rply, &r_rply);
  case ROW_MCAST: return CRTS_rma_row_mcast(dst, src, len, k->mask, &r_rply);
  case ROW_IMCAST:
    return CRTS_rma_row_imcast(dst, src, len, &l_rply, k->mask, &r_rply);
  case COL_MCAST: return CRTS_rma_col_mcast(dst, src, len, k->mask, &r_rply);
  case COL_IMCAST:
    return CRTS_rma_col_imcast(dst, src, len, &l_rply, k->mask, &r_rply);
  }
  return -1;
}

static void run_cases(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  struct crts_cpe *self = crts_self;
  for (int c = 0; c < NCASES; c++) {
    const struct mc_case *k = &cases[c];
    if (k->sender >= crts_cg.group_size)
      continue;
    for (int i = 0; i < W; i++)
      dst[i] = SENTINEL;
    r_rply = 0;
    l_rply = 0;
    fill(src, me, c); /* only the sender's src may arrive anywhere */
    sync_all();
    if (me == k->sender) {
      int n = 0;
      for (int t = 0; t < 64; t++)
        n += receives(k, t);
      uint64_t ops0 = self->stat_ops[CRTS_STAT_RMA];
      uint64_t bytes0 = self->stat_bytes[CRTS_STAT_RMA];
      CPE_CHECK(issue(k) == 0);
      CPE_CHECK(l_rply == (is_nonblocking(k->op) ? 1 : 0));
      CPE_CHECK(self->stat_ops[CRTS_STAT_RMA] - ops0 == (uint64_t)n);
      CPE_CHECK(self->stat_bytes[CRTS_STAT_RMA] - bytes0 ==
                (uint64_t)n * W * 4);
    }
    if (receives(k, me)) {
      CPE_CHECK(CRTS_rma_wait_value(&r_rply, 1) == 0);
      CPE_CHECK(holds(dst, k->sender, c));
    }
    sync_all();
    if (!receives(k, me)) {
      if (!untouched(dst) || r_rply != 0)
        crts_test_fail("case %d: CPE %d got data or a reply it should not",
                       c, me);
    } else {
      CPE_CHECK(r_rply == 1);
    }
    sync_all();
  }
}

Test(rma_bcast, receivers_of_every_form_and_mask)
{
  crts_test_run(run_cases, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(rma_bcast, receivers_in_a_group_of_20)
{
  setenv("CRTS_NUM_CPES", "20", 1);
  crts_test_run(run_cases, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------- cumulative replies */

static void repeated_bcast(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  r_rply = 0;
  l_rply = 0;
  sync_all();
  for (int round = 1; round <= 3; round++) {
    if (me == 33) {
      fill(src, me, round);
      CPE_CHECK(CRTS_rma_ibcast(dst, src, &l_rply, W * 4, &r_rply) == 0);
      CPE_CHECK(CRTS_rma_wait_value(&l_rply, round) == 0);
      CPE_CHECK(l_rply == round);
    }
    CPE_CHECK(CRTS_rma_wait_value(&r_rply, round) == 0);
    CPE_CHECK(holds(dst, 33, round));
    CPE_CHECK(r_rply == round);
    sync_all(); /* the next round may overwrite dst */
  }
}

Test(rma_bcast, reply_words_count_1_2_3)
{
  crts_test_run(repeated_bcast, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ---------------------------------------------------------- collectives */

static void collectives(void *arg)
{
  (void)arg;
  int me = CRTS_tid, round = 0;
  static const int roots[] = { 0, 17, 63, 17, 5 };
  /* Back-to-back calls: the library's own barriers must keep them apart. */
  for (int k = 0; k < 5; k++) {
    fill(src, me, ++round);
    CPE_CHECK(CRTS_rma_bcast_coll(dst, src, W * 4, roots[k]) == 0);
    CPE_CHECK(holds(dst, roots[k], round));
  }
  for (int root = 0; root < 8; root++) {
    fill(src, me, ++round);
    CPE_CHECK(CRTS_rma_row_bcast_coll(dst, src, W * 4, root) == 0);
    CPE_CHECK(holds(dst, CRTS_rid * 8 + root, round));
    fill(src, me, ++round);
    CPE_CHECK(CRTS_rma_col_bcast_coll(dst, src, W * 4, 7 - root) == 0);
    CPE_CHECK(holds(dst, (7 - root) * 8 + CRTS_cid, round));
  }
  /* In place: the root's dst is its src. */
  fill(dst, me, ++round);
  CPE_CHECK(CRTS_rma_bcast_coll(dst, dst, W * 4, 40) == 0);
  CPE_CHECK(holds(dst, 40, round));
  /* Rows with different roots at once (each row is its own collective). */
  fill(src, me, ++round);
  CPE_CHECK(CRTS_rma_row_bcast_coll(dst, src, W * 4, CRTS_rid) == 0);
  CPE_CHECK(holds(dst, CRTS_rid * 8 + CRTS_rid, round));
  /* Every receiver counts its own receive. */
  CPE_CHECK(crts_self->stat_ops[CRTS_STAT_RMA] == 5 + 16 + 1 + 1);
}

Test(rma_bcast, collectives_with_changing_roots)
{
  crts_test_run(collectives, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

static void collectives_20(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  fill(src, me, 1);
  CPE_CHECK(CRTS_rma_bcast_coll(dst, src, W * 4, 19) == 0);
  CPE_CHECK(holds(dst, 19, 1));
  /* Row 2 holds CPEs 16..19 only; columns 4..7 hold rows 0 and 1 only. */
  fill(src, me, 2);
  CPE_CHECK(CRTS_rma_row_bcast_coll(dst, src, W * 4, 3) == 0);
  CPE_CHECK(holds(dst, CRTS_rid * 8 + 3, 2));
  fill(src, me, 3);
  CPE_CHECK(CRTS_rma_col_bcast_coll(dst, src, W * 4, 1) == 0);
  CPE_CHECK(holds(dst, 8 + CRTS_cid, 3));
}

Test(rma_bcast, collectives_in_a_group_of_20)
{
  setenv("CRTS_NUM_CPES", "20", 1);
  crts_test_run(collectives_20, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}
