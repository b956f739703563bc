/*
 * test_ssync.c - CPE barriers: every group of the manual, with a full mesh,
 * with partial rows (CRTS_NUM_CPES=12) and with ended CPEs; the pairwise
 * barrier; calls that must return at once instead of deadlocking.
 *
 * Each round every member writes the round number into its slot, passes
 * the barrier, and checks that every member of its instance (computed here
 * from the manual's definition) already wrote that round; a second barrier
 * keeps the next round's writes away from the checks.  Without the barrier,
 * or with wrong members or a wrong count, some CPE reads a stale slot.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "crts_test_util.h"

#define ROUNDS 200

struct group {
  const char *name;
  void (*sync)(void);       /* what even CPEs call */
  void (*sync_odd)(void);   /* what odd CPEs call (an alias), or NULL */
  int (*key)(int tid);      /* equal keys: same instance */
};

static int key_2spe(int t) { return t / 2; }
static int key_cluster(int t) { return (t / 16) * 4 + (t % 8) / 2; }
static int key_2spc(int t) { return key_cluster(t) / 2; }
static int key_row(int t) { return t / 8; }
static int key_col(int t) { return t % 8; }
static int key_16(int t) { return t / 16; }
static int key_32(int t) { return t / 32; }
static int key_all(int t) { (void)t; return 0; }

/* Left half calls col_left, right half col_right: each is still a column. */
static void col_halves(void)
{
  if (CRTS_cid < 4)
    CRTS_ssync_col_left();
  else
    CRTS_ssync_col_right();
}

static const struct group groups[] = {
  {"2spe", CRTS_ssync_2spe, NULL, key_2spe},
  {"1spc", CRTS_ssync_1spc, NULL, key_cluster},
  {"sldm", CRTS_ssync_sldm, NULL, key_cluster},
  {"row", CRTS_ssync_row, NULL, key_row},
  {"8spe", CRTS_ssync_8spe, NULL, key_row},
  {"8spe+row", CRTS_ssync_8spe, CRTS_ssync_row, key_row},
  {"col", CRTS_ssync_col, NULL, key_col},
  {"col_left/right", col_halves, NULL, key_col},
  {"2spc", CRTS_ssync_2spc, NULL, key_2spc},
  {"16spe", CRTS_ssync_16spe, NULL, key_16},
  {"4spc", CRTS_ssync_4spc, NULL, key_16},
  {"16spe+4spc", CRTS_ssync_16spe, CRTS_ssync_4spc, key_16},
  {"32spe", CRTS_ssync_32spe, NULL, key_32},
  {"8spc", CRTS_ssync_8spc, NULL, key_32},
  {"32spe+8spc", CRTS_ssync_32spe, CRTS_ssync_8spc, key_32},
  {"array", CRTS_ssync_array, NULL, key_all},
};
#define NGROUPS ((int)(sizeof groups / sizeof groups[0]))

static int slot[64];
static uint64_t present; /* CPEs of the spawn, as the test expects them */

static void group_rounds(void *arg)
{
  const struct group *g = arg;
  int me = CRTS_tid;
  int key = g->key(me);
  void (*sync)(void) = (me & 1) && g->sync_odd ? g->sync_odd : g->sync;
  int bad = 0;
  for (int r = 1; r <= ROUNDS; r++) {
    /* Skew the members so that a missing wait shows. */
    if ((me * 7 + r) % 5 == 0)
      sched_yield();
    slot[me] = r;
    sync();
    for (int t = 0; t < 64; t++) {
      if (!((present >> t) & 1) || g->key(t) != key || slot[t] == r)
        continue;
      if (!bad++)
        crts_test_fail("%s: CPE %d round %d saw CPE %d at round %d",
                       g->name, me, r, t, slot[t]);
    }
    sync();
  }
}

static void run_group(const struct group *g)
{
  for (int t = 0; t < 64; t++)
    slot[t] = 0;
  crts_test_run(group_rounds, (void *)g);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < 64; t++)
    cr_assert_eq(slot[t], (present >> t) & 1 ? ROUNDS : 0,
                 "%s: CPE %d slot %d", g->name, t, slot[t]);
}

static void run_all_groups(void)
{
  for (int i = 0; i < NGROUPS; i++)
    run_group(&groups[i]);
}

static void full_mesh(void)
{
  setenv("CRTS_NUM_CPES", "64", 1);
  present = ~(uint64_t)0;
}

#define GROUP_TEST(id, index)                                                \
  Test(ssync, id, .init = full_mesh, .timeout = 60)                          \
  {                                                                          \
    run_group(&groups[index]);                                               \
  }

GROUP_TEST(two_spe, 0)
GROUP_TEST(one_spc, 1)
GROUP_TEST(sldm, 2)
GROUP_TEST(row, 3)
GROUP_TEST(eight_spe, 4)
GROUP_TEST(eight_spe_meets_row, 5)
GROUP_TEST(col, 6)
GROUP_TEST(col_left_and_right, 7)
GROUP_TEST(two_spc, 8)
GROUP_TEST(sixteen_spe, 9)
GROUP_TEST(four_spc, 10)
GROUP_TEST(sixteen_spe_meets_four_spc, 11)
GROUP_TEST(thirty_two_spe, 12)
GROUP_TEST(eight_spc, 13)
GROUP_TEST(thirty_two_spe_meets_eight_spc, 14)
GROUP_TEST(array, 15)

Test(ssync, partial_rows_wait_only_for_present_cpes, .timeout = 120)
{
  setenv("CRTS_NUM_CPES", "12", 1);
  present = 0xfff;
  run_all_groups();
}

Test(ssync, ended_cpes_are_not_waited_for, .timeout = 120)
{
  setenv("CRTS_NUM_CPES", "64", 1);
  cr_assert_eq(CRTS_init(), 0);
  int ended[] = {1, 5, 17, 40, 63};
  present = ~(uint64_t)0;
  for (int i = 0; i < 5; i++) {
    cr_assert_eq(CRTS_athread_end(ended[i]), 0);
    present &= ~((uint64_t)1 << ended[i]);
  }
  run_all_groups();
}

/* ------------------------------------------------------------------ peer */

static const int peer_masks[] = {1, 8, 63, 9, 34};

static void peer_rounds(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  int bad = 0;
  for (int r = 1; r <= ROUNDS; r++) {
    int partner = me ^ peer_masks[r % 5];
    if ((me * 3 + r) % 4 == 0)
      sched_yield();
    slot[me] = r;
    CRTS_ssync_peer(partner);
    if (slot[partner] != r && !bad++)
      crts_test_fail("peer: CPE %d round %d saw CPE %d at round %d", me, r,
                     partner, slot[partner]);
    CRTS_ssync_peer(partner);
  }
}

Test(ssync, peer_pairs, .init = full_mesh, .timeout = 60)
{
  crts_test_run(peer_rounds, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < 64; t++)
    cr_assert_eq(slot[t], ROUNDS);
}

/* ---------------------------------------------- calls that cannot wait */

static _Atomic int returned;

static void bad_calls(void *arg)
{
  (void)arg;
  CRTS_ssync_peer(CRTS_tid);          /* itself */
  CRTS_ssync_peer(-1);
  CRTS_ssync_peer(8);                 /* outside CRTS_NUM_CPES=8 */
  CRTS_ssync_peer(1000);
  if (CRTS_cid >= 4)
    CRTS_ssync_col_left();
  else
    CRTS_ssync_col_right();
  atomic_fetch_add(&returned, 1);
}

Test(ssync, bad_calls_return_at_once, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  crts_test_run(bad_calls, NULL);
  cr_assert_eq(atomic_load(&returned), 8);
  /* From the MPE every CPE barrier is refused. */
  CRTS_ssync_row();
  CRTS_ssync_array();
  CRTS_ssync_peer(1);
  CRTS_ssync_master_spe();
  CRTS_ssync_master_array();
  CRTS_ssync_node();
}

static void peer_with_ended(void *arg)
{
  (void)arg;
  if (CRTS_tid == 0)
    CRTS_ssync_peer(3); /* ended: not in the group */
  atomic_fetch_add(&returned, 1);
}

Test(ssync, peer_with_cpe_outside_group_returns, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "4", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_end(3), 0);
  crts_test_run(peer_with_ended, NULL);
  cr_assert_eq(atomic_load(&returned), 3);
}

/* Created threads: no group barrier, but pairs and the MPE still work. */
static void created_pair(void *arg)
{
  int partner = *(int *)arg;
  CRTS_ssync_row(); /* refused: not a spawned group */
  for (int r = 1; r <= ROUNDS; r++) {
    slot[CRTS_tid] = r;
    CRTS_ssync_peer(partner);
    CPE_CHECK(slot[partner] == r);
    CRTS_ssync_peer(partner);
  }
}

Test(ssync, created_threads_pair_up, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  cr_assert_eq(CRTS_init(), 0);
  static int p2 = 6, p6 = 2;
  cr_assert_eq(CRTS_athread_create(2, (void (*)(void))created_pair, &p2), 0);
  cr_assert_eq(CRTS_athread_create(6, (void (*)(void))created_pair, &p6), 0);
  cr_assert_eq(CRTS_athread_wait(2), 0);
  cr_assert_eq(CRTS_athread_wait(6), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(slot[2], ROUNDS);
  cr_assert_eq(slot[6], ROUNDS);
}

Test(ssync, refusal_is_one_clear_line, .init = cr_redirect_stderr,
     .timeout = 30)
{
  setenv("CRTS_VERBOSE", "1", 1);
  setenv("CRTS_NUM_CPES", "4", 1);
  cr_assert_eq(CRTS_init(), 0);
  CRTS_ssync_col();
  fflush(stderr);
  cr_assert_stderr_eq_str("crts: MPE: CRTS_ssync_col: must be called on a "
                          "CPE (inside a spawned function); ignored\n");
}
