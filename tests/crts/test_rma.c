/*
 * test_rma.c - point-to-point RMA: put/iput/get/iget around a ring and
 * between all pairs, reply-word counting on both sides, wait_value, len 0,
 * statistics, fences and CRTS_sldm_get.  Every check compares bytes.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define WORDS 256 /* 1 KiB blocks */

static __thread_local int inbox[WORDS];
static __thread_local int outbox[WORDS];
static __thread_local int slots[CRTS_MAX_SPE_NUM][4];
static __thread_local crts_rply_t r_rply;
static __thread_local crts_rply_t l_rply;

/* Barrier of the whole spawned group (the tests do not depend on ssync). */
static struct crts_barrier test_bar;
static void sync_all(void)
{
  crts_barrier_wait(&test_bar, (uint32_t)crts_cg.group_size, 0);
}

static int pattern(int from, int round, int i)
{
  return from * 100003 + round * 7919 + i + 1;
}

static void fill(int *p, int n, int from, int round)
{
  for (int i = 0; i < n; i++)
    p[i] = pattern(from, round, i);
}

/* 1 if p[0..n) holds the block `from` sent in `round`. */
static int holds(const int *p, int n, int from, int round)
{
  for (int i = 0; i < n; i++)
    if (p[i] != pattern(from, round, i))
      return 0;
  return 1;
}

static void reset_words(void)
{
  r_rply = 0;
  l_rply = 0;
  memset(inbox, 0, sizeof inbox);
}

/* ------------------------------------------------------------ ring put */

static void put_ring(void *arg)
{
  (void)arg;
  int n = crts_cg.group_size, me = CRTS_tid;
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  reset_words();
  sync_all();
  for (int round = 1; round <= 6; round++) {
    fill(outbox, WORDS, me, round);
    if (round <= 3) {
      /* iput: l_rply counts the local side, 1, 2, 3. */
      CPE_CHECK(CRTS_rma_iput(outbox, &l_rply, sizeof outbox, next, inbox,
                              &r_rply) == 0);
      CPE_CHECK(CRTS_rma_wait_value(&l_rply, round) == 0);
    } else {
      CPE_CHECK(CRTS_rma_put(outbox, sizeof outbox, next, inbox, &r_rply) ==
                0);
    }
    CPE_CHECK(CRTS_rma_wait_value(&r_rply, round) == 0);
    CPE_CHECK(holds(inbox, WORDS, prev, round));
    CPE_CHECK(r_rply == round);
    CPE_CHECK(l_rply == (round <= 3 ? round : 3));
    sync_all(); /* prev must not overwrite inbox before it was checked */
  }
}

Test(rma, put_ring_of_64)
{
  crts_test_run(put_ring, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(rma, put_ring_of_20)
{
  setenv("CRTS_NUM_CPES", "20", 1);
  crts_test_run(put_ring, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(crts_cg.group_size, 20);
}

/* ------------------------------------------------------------ ring get */

static void get_ring(void *arg)
{
  (void)arg;
  int n = crts_cg.group_size, me = CRTS_tid;
  int prev = (me + n - 1) % n;
  reset_words();
  sync_all();
  for (int round = 1; round <= 5; round++) {
    fill(outbox, WORDS, me, round);
    sync_all(); /* every outbox is ready */
    if (round <= 3) {
      CPE_CHECK(CRTS_rma_iget(inbox, &l_rply, sizeof inbox, prev, outbox,
                              &r_rply) == 0);
      CPE_CHECK(CRTS_rma_wait_value(&l_rply, round) == 0);
    } else {
      CPE_CHECK(CRTS_rma_get(inbox, sizeof inbox, prev, outbox, &r_rply) ==
                0);
    }
    CPE_CHECK(holds(inbox, WORDS, prev, round));
    /* r_rply rises on the source once the next CPE has taken its data. */
    CPE_CHECK(CRTS_rma_wait_value(&r_rply, round) == 0);
    sync_all();
    CPE_CHECK(r_rply == round);
    CPE_CHECK(l_rply == (round <= 3 ? round : 3));
  }
}

Test(rma, get_ring_counts_both_sides)
{
  crts_test_run(get_ring, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ----------------------------------------------------------- all pairs */

static void all_pairs(void *arg)
{
  (void)arg;
  int n = crts_cg.group_size, me = CRTS_tid;
  r_rply = 0;
  memset(slots, 0, sizeof slots);
  int mine[4];
  sync_all();
  /* Everyone puts its 16-byte block into slot[me] of every CPE. */
  for (int k = 0; k < n; k++) {
    int t = (me + k) % n;
    fill(mine, 4, me, t);
    memcpy(outbox, mine, sizeof mine);
    CPE_CHECK(CRTS_rma_put(outbox, sizeof mine, t, slots[me], &r_rply) == 0);
  }
  CPE_CHECK(CRTS_rma_wait_value(&r_rply, n) == 0);
  for (int s = 0; s < n; s++)
    CPE_CHECK(holds(slots[s], 4, s, me));
  sync_all();
  CPE_CHECK(r_rply == n);

  /* Everyone gets slot[t] back from every CPE t: each source counts n. */
  r_rply = 0;
  memset(inbox, 0, sizeof inbox);
  sync_all();
  for (int k = 0; k < n; k++) {
    int t = (me + n - k) % n;
    CPE_CHECK(CRTS_rma_get(&inbox[4 * t], 16, t, slots[me], &r_rply) == 0);
  }
  for (int t = 0; t < n; t++)
    CPE_CHECK(holds(&inbox[4 * t], 4, me, t));
  CPE_CHECK(CRTS_rma_wait_value(&r_rply, n) == 0);
  sync_all();
  CPE_CHECK(r_rply == n);
}

Test(rma, put_and_get_between_all_pairs)
{
  crts_test_run(all_pairs, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------- wait_value waits */

static _Atomic int entered;
static _Atomic int issued;

static void waiter_and_late_putter(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  reset_words();
  sync_all();
  if (me == 0) {
    CPE_CHECK(CRTS_rma_wait_value(&r_rply, 0) == 0); /* nothing to wait for */
    atomic_store(&entered, 1);
    CPE_CHECK(CRTS_rma_wait_value(&r_rply, 3) == 0);
    /* Only the third put, issued after we started waiting, releases us. */
    CPE_CHECK(atomic_load(&issued) == 3);
    CPE_CHECK(holds(inbox, 8, 1, 3));
    CPE_CHECK(r_rply == 3);
  } else if (me == 1) {
    while (!atomic_load(&entered))
      sched_yield();
    for (int round = 1; round <= 3; round++) {
      usleep(10000); /* let CPE 0 fall asleep in its wait */
      fill(outbox, 8, 1, round);
      atomic_store(&issued, round);
      CPE_CHECK(CRTS_rma_put(outbox, 32, 0, inbox, &r_rply) == 0);
    }
  }
}

Test(rma, wait_value_waits_for_a_later_put)
{
  crts_test_run(waiter_and_late_putter, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------- len 0, self, other slices */

static void odd_shapes(void *arg)
{
  (void)arg;
  int n = crts_cg.group_size, me = CRTS_tid;
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  reset_words();
  sync_all();
  /* len 0 moves nothing but still counts on both sides. */
  fill(outbox, WORDS, me, 1);
  CPE_CHECK(CRTS_rma_iput(outbox, &l_rply, 0, next, inbox, &r_rply) == 0);
  CPE_CHECK(CRTS_rma_wait_value(&r_rply, 1) == 0);
  CPE_CHECK(l_rply == 1);
  CPE_CHECK(inbox[0] == 0 && inbox[WORDS - 1] == 0);
  sync_all();

  /* An r_addr given in some other CPE's slice names the same location. */
  void *elsewhere = crts_ldm_translate(inbox, (me + 5) % n);
  CPE_CHECK(CRTS_rma_put(outbox, 64, next, elsewhere, &r_rply) == 0);
  CPE_CHECK(CRTS_rma_wait_value(&r_rply, 2) == 0);
  CPE_CHECK(holds(inbox, 16, prev, 1));
  sync_all();

  /* Put and get to oneself, including an overlapping move. */
  fill(outbox, WORDS, me, 2);
  CPE_CHECK(CRTS_rma_put(outbox, 128, me, inbox, &r_rply) == 0);
  CPE_CHECK(r_rply == 3);
  CPE_CHECK(holds(inbox, 32, me, 2));
  CPE_CHECK(CRTS_rma_get(&outbox[1], 64, me, &outbox[0], NULL) == 0);
  CPE_CHECK(outbox[1] == pattern(me, 2, 0) && outbox[16] == pattern(me, 2, 15));
  CPE_CHECK(CRTS_rma_barrier() == 0);
  CPE_CHECK(CRTS_rma_all_barrier() == 0);
}

Test(rma, len_zero_self_and_foreign_slice_addresses)
{
  crts_test_run(odd_shapes, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------------------ stats */

static void count_stats(void *arg)
{
  (void)arg;
  int n = crts_cg.group_size, me = CRTS_tid;
  struct crts_cpe *self = crts_self;
  uint64_t ops0 = atomic_load(&self->stat_ops[CRTS_STAT_RMA]);
  uint64_t bytes0 = atomic_load(&self->stat_bytes[CRTS_STAT_RMA]);
  reset_words();
  sync_all();
  CPE_CHECK(CRTS_rma_put(outbox, 256, (me + 1) % n, inbox, NULL) == 0);
  /* Not into inbox: the put of CPE me - 1 may be writing there. */
  CPE_CHECK(CRTS_rma_get(slots, 128, (me + 2) % n, outbox, NULL) == 0);
  CPE_CHECK(CRTS_rma_put(outbox, 0, (me + 3) % n, inbox, NULL) == 0);
  CPE_CHECK(atomic_load(&self->stat_ops[CRTS_STAT_RMA]) - ops0 == 3);
  CPE_CHECK(atomic_load(&self->stat_bytes[CRTS_STAT_RMA]) - bytes0 == 384);
  /* A failed call counts nothing. */
  CPE_CHECK(CRTS_rma_put(outbox, 6, (me + 1) % n, inbox, NULL) != 0);
  CPE_CHECK(atomic_load(&self->stat_ops[CRTS_STAT_RMA]) - ops0 == 3);
  sync_all();
}

Test(rma, statistics_count_ops_and_bytes)
{
  crts_test_run(count_stats, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  uint64_t ops = 0, bytes = 0;
  for (int i = 0; i < 64; i++) {
    ops += crts_cg.cpe[i].stat_ops[CRTS_STAT_RMA];
    bytes += crts_cg.cpe[i].stat_bytes[CRTS_STAT_RMA];
  }
  cr_assert_eq(ops, 64 * 3);
  cr_assert_eq(bytes, 64 * 384);
}

/* ------------------------------------------------------------- sldm */

static __thread_local int shared_block[4][8];

static void sldm(void *arg)
{
  (void)arg;
  int me = CRTS_tid, q = CRTS_spc_tid % 4;
  /* Members of my cluster in spc_tid order: rows r, r+1 x columns c, c+1. */
  int r = CRTS_rid & ~1, c = CRTS_cid & ~1, member[4];
  for (int k = 0; k < 4; k++)
    member[k] = (r + k / 2) * 8 + c + k % 2;
  CPE_CHECK(member[q] == me);
  int peer = member[(q + 1) % 4], leader = member[0];
  fill(outbox, 8, me, 7);
  memset(inbox, 0, sizeof inbox);
  memset(shared_block, 0, sizeof shared_block);
  sync_all();
  /* Read a peer's quarter into my own LDM. */
  CPE_CHECK(CRTS_sldm_get(inbox, crts_ldm_translate(outbox, peer), 32) == 0);
  CPE_CHECK(holds(inbox, 8, peer, 7));
  /* Write my block into my row of the leader's quarter ... */
  CPE_CHECK(CRTS_sldm_get(crts_ldm_translate(shared_block[q], leader), outbox,
                          32) == 0);
  /* ... and on return every member's block is there. */
  int(*at_leader)[8] = crts_ldm_translate(shared_block, leader);
  for (int k = 0; k < 4; k++)
    CPE_CHECK(holds(at_leader[k], 8, member[k], 7));
  CPE_CHECK(crts_self->stat_ops[CRTS_STAT_RMA] >= 2);
}

Test(rma, sldm_get_moves_within_the_cluster)
{
  crts_test_run(sldm, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}
